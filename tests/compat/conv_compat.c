/* Compatibility probe: runs a fixed list of convolutions (and cudnnAddTensor) through
 * whatever cuDNN it is linked with, using only calls present in both cuDNN 8.9 and 9.x,
 * on device memory, and prints one line per case: name, status NAME (compared by name,
 * since cuDNN 9 renumbered the codes), a checksum and sampled values. Built twice: against
 * FreeDNN and against NVIDIA's cuDNN; tests/compat/compare.py compares the two outputs. */
#include "compat_util.h"

typedef struct {
    const char *name;
    int n, c, h, w, k, r, s, pad, stride, dil, groups;
    cudnnDataType_t dt;
    cudnnTensorFormat_t fmt;
    cudnnMathType_t math;
} conv_case;

static const conv_case cases[] = {
    {"f32_nchw_3x3", 2, 8, 12, 12, 16, 3, 3, 1, 1, 1, 1, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CUDNN_FMA_MATH},
    {"f32_nchw_5x5_s2_d2", 2, 6, 17, 15, 4, 5, 5, 2, 2, 2, 1, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CUDNN_FMA_MATH},
    {"f32_nhwc_1x1", 4, 32, 7, 7, 64, 1, 1, 0, 1, 1, 1, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, CUDNN_FMA_MATH},
    {"f32_nchw_grouped", 2, 8, 9, 9, 12, 3, 3, 1, 1, 1, 4, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CUDNN_FMA_MATH},
    {"f32_nchw_depthwise", 2, 16, 10, 10, 16, 3, 3, 1, 1, 1, 16, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CUDNN_FMA_MATH},
    {"f16_nhwc_3x3", 2, 16, 10, 10, 32, 3, 3, 1, 1, 1, 1, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, CUDNN_TENSOR_OP_MATH},
    {"bf16_nhwc_3x3", 2, 16, 10, 10, 32, 3, 3, 1, 1, 1, 1, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NHWC, CUDNN_TENSOR_OP_MATH},
    {"f64_nchw_3x3", 1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NCHW, CUDNN_DEFAULT_MATH},
};

int main(void)
{
    cudnnHandle_t h;
    cudnnStatus_t st = cudnnCreate(&h);
    printf("library %zu create %s\n", cudnnGetVersion(), cudnnGetErrorString(st));
    if (st != CUDNN_STATUS_SUCCESS) return 1;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const conv_case *c = &cases[ci];
        cudnnTensorDescriptor_t xd, yd;
        cudnnFilterDescriptor_t wd;
        cudnnConvolutionDescriptor_t cd;
        cudnnCreateTensorDescriptor(&xd);
        cudnnCreateTensorDescriptor(&yd);
        cudnnCreateFilterDescriptor(&wd);
        cudnnCreateConvolutionDescriptor(&cd);
        cudnnDataType_t ct = c->dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
        cudnnSetTensor4dDescriptor(xd, c->fmt, c->dt, c->n, c->c, c->h, c->w);
        cudnnSetFilter4dDescriptor(wd, c->dt, c->fmt, c->k, c->c / c->groups, c->r, c->s);
        cudnnSetConvolution2dDescriptor(cd, c->pad, c->pad, c->stride, c->stride, c->dil, c->dil, CUDNN_CROSS_CORRELATION, ct);
        cudnnSetConvolutionGroupCount(cd, c->groups);
        cudnnSetConvolutionMathType(cd, c->math);
        int on, oc, oh, ow;
        cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &oc, &oh, &ow);
        cudnnSetTensor4dDescriptor(yd, c->fmt, c->dt, on, oc, oh, ow);
        size_t nx = (size_t)c->n * c->c * c->h * c->w, nw = (size_t)c->k * (c->c / c->groups) * c->r * c->s,
               ny = (size_t)on * oc * oh * ow;
        void *x = dev_fill(nx, c->dt, 1), *w = dev_fill(nw, c->dt, 2), *dy = dev_fill(ny, c->dt, 3);
        void *y = NULL, *dx = NULL, *dw = NULL, *ws = NULL;
        cudaMalloc(&y, ny * esize(c->dt));
        cudaMalloc(&dx, nx * esize(c->dt));
        cudaMalloc(&dw, nw * esize(c->dt));
        double one_d = 1, zero_d = 0;
        float one_f = 1, zero_f = 0;
        const void *one = c->dt == CUDNN_DATA_DOUBLE ? (const void *)&one_d : (const void *)&one_f;
        const void *zero = c->dt == CUDNN_DATA_DOUBLE ? (const void *)&zero_d : (const void *)&zero_f;

        int ret = 0;
        cudnnConvolutionFwdAlgoPerf_t fp[8];
        cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, 8, &ret, fp);
        cudnnConvolutionFwdAlgo_t fa = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
        for (int i = 0; i < ret; i++)
            if (fp[i].status == CUDNN_STATUS_SUCCESS) { fa = fp[i].algo; break; }
        size_t wsz = 0;
        cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, fa, &wsz);
        cudaMalloc(&ws, wsz ? wsz : 1);
        st = cudnnConvolutionForward(h, one, xd, x, wd, w, cd, fa, ws, wsz, zero, yd, y);
        report(c->name, "fwd", st, y, ny, c->dt);
        cudaFree(ws);

        cudnnConvolutionBwdDataAlgoPerf_t dp[8];
        cudnnGetConvolutionBackwardDataAlgorithm_v7(h, wd, yd, cd, xd, 8, &ret, dp);
        cudnnConvolutionBwdDataAlgo_t da = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
        for (int i = 0; i < ret; i++)
            if (dp[i].status == CUDNN_STATUS_SUCCESS) { da = dp[i].algo; break; }
        wsz = 0;
        cudnnGetConvolutionBackwardDataWorkspaceSize(h, wd, yd, cd, xd, da, &wsz);
        cudaMalloc(&ws, wsz ? wsz : 1);
        st = cudnnConvolutionBackwardData(h, one, wd, w, yd, dy, cd, da, ws, wsz, zero, xd, dx);
        report(c->name, "bwd_data", st, dx, nx, c->dt);
        cudaFree(ws);

        cudnnConvolutionBwdFilterAlgoPerf_t bp[8];
        cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, xd, yd, cd, wd, 8, &ret, bp);
        cudnnConvolutionBwdFilterAlgo_t ba = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
        for (int i = 0; i < ret; i++)
            if (bp[i].status == CUDNN_STATUS_SUCCESS) { ba = bp[i].algo; break; }
        wsz = 0;
        cudnnGetConvolutionBackwardFilterWorkspaceSize(h, xd, yd, cd, wd, ba, &wsz);
        cudaMalloc(&ws, wsz ? wsz : 1);
        st = cudnnConvolutionBackwardFilter(h, one, xd, x, yd, dy, cd, ba, ws, wsz, zero, wd, dw);
        report(c->name, "bwd_filter", st, dw, nw, c->dt);
        cudaFree(ws);

        /* cudnnAddTensor with a per-channel bias broadcast onto y */
        cudnnTensorDescriptor_t bd;
        cudnnCreateTensorDescriptor(&bd);
        cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, c->dt, 1, oc, 1, 1);
        void *b = dev_fill((size_t)oc, c->dt, 4);
        st = cudnnAddTensor(h, one, bd, b, one, yd, y);
        report(c->name, "add_tensor", st, y, ny, c->dt);
        cudnnDestroyTensorDescriptor(bd);
        cudaFree(b);

        cudaFree(x); cudaFree(w); cudaFree(dy); cudaFree(y); cudaFree(dx); cudaFree(dw);
        cudnnDestroyTensorDescriptor(xd);
        cudnnDestroyTensorDescriptor(yd);
        cudnnDestroyFilterDescriptor(wd);
        cudnnDestroyConvolutionDescriptor(cd);
    }
    cudnnDestroy(h);
    return 0;
}
