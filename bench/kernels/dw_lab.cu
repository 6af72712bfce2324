/* Depthwise 3x3 convolution timings through the public cuDNN API of FreeDNN (host code only; the
 * kernels are the library's src/cuda/conv_depthwise.cu). Layers: N=32, C = 144/192/384,
 * H = W = 56/28/14, stride 1 and 2, padding 1, NHWC x/y, KRSC filter, groups = C, HALF (FLOAT
 * compute) and FLOAT. Each direction runs with the algorithm its depthwise entry reports
 * (forward IMPLICIT_GEMM, backward data ALGO_0, backward filter ALGO_0; the heuristic's first
 * choice is printed next to it) and is timed with CUDA events around 20 calls after one warm-up.
 * GB/s counts the bytes of x + w + y once. Correctness is checked by tests/unit/test_conv.c; the
 * lab checks (through the INFO log callback on the warm-up call) that a __depthwise
 * implementation ran, and fails otherwise.
 *   dw_lab [iters]        exit status 1 when any call fails */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "cudnn.h"
#include "freednn.h" /* cudnnGetLastErrorString */

static int failures = 0, runs = 0;

/* the implementation the library reports for a call ("... runs as <name>", INFO log) */
static char ran[128];
static void grab_impl(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    (void)sev, (void)udata, (void)dbg;
    const char *p = msg ? strstr(msg, " runs as ") : NULL;
    if (p) snprintf(ran, sizeof ran, "%s", p + 9);
}

#define CK(x)                                                                                       \
    do {                                                                                            \
        cudnnStatus_t s_ = (x);                                                                     \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                           \
            char m_[512];                                                                           \
            cudnnGetLastErrorString(m_, sizeof m_);                                                 \
            printf("  FAIL %s: %s (%s)\n", #x, cudnnGetErrorString(s_), m_);                       \
            failures++;                                                                             \
            goto done;                                                                              \
        }                                                                                           \
    } while (0)

static const char *dir_name[3] = {"fwd", "bwd-data", "bwd-filter"};

static void layer(cudnnHandle_t h, cudnnDataType_t dt, int N, int C, int H, int stride, int iters)
{
    const int esz = dt == CUDNN_DATA_HALF ? 2 : 4;
    const int P = (H + 2 - 3) / stride + 1;
    const size_t nx = (size_t)N * C * H * H, nw = (size_t)C * 9, ny = (size_t)N * C * P * P;
    const double bytes = (double)(nx + nw + ny) * esz;
    cudnnTensorDescriptor_t xd = NULL, yd = NULL;
    cudnnFilterDescriptor_t wd = NULL;
    cudnnConvolutionDescriptor_t cd = NULL;
    void *x = NULL, *w = NULL, *y = NULL, *ws = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    float one = 1, zero = 0;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    CK(cudnnCreateTensorDescriptor(&xd));
    CK(cudnnCreateTensorDescriptor(&yd));
    CK(cudnnCreateFilterDescriptor(&wd));
    CK(cudnnCreateConvolutionDescriptor(&cd));
    CK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NHWC, dt, N, C, H, H));
    CK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NHWC, dt, N, C, P, P));
    CK(cudnnSetFilter4dDescriptor(wd, dt, CUDNN_TENSOR_NHWC, C, 1, 3, 3));
    CK(cudnnSetConvolution2dDescriptor(cd, 1, 1, stride, stride, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CK(cudnnSetConvolutionGroupCount(cd, C));
    if (cudaMalloc(&x, nx * esz) != cudaSuccess || cudaMalloc(&w, nw * esz) != cudaSuccess || cudaMalloc(&y, ny * esz) != cudaSuccess) {
        printf("  FAIL cudaMalloc\n");
        failures++;
        goto done;
    }
    /* small values: 0x3c00 is 1.0 in HALF; for FLOAT the byte pattern 0x3c gives ~0.0115 */
    cudaMemset(x, 0x3c, nx * esz);
    cudaMemset(w, 0x3c, nw * esz);
    cudaMemset(y, 0x3c, ny * esz);
    for (int dir = 0; dir < 3; dir++) {
        int algo = 0, top = -1, cnt = 0;
        size_t wsz = 0;
        if (dir == 0) {
            cudnnConvolutionFwdAlgoPerf_t pf[8];
            CK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, 8, &cnt, pf));
            if (cnt > 0) top = pf[0].algo;
            algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
            CK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, (cudnnConvolutionFwdAlgo_t)algo, &wsz));
        } else if (dir == 1) {
            cudnnConvolutionBwdDataAlgoPerf_t pd[8];
            CK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, wd, yd, cd, xd, 8, &cnt, pd));
            if (cnt > 0) top = pd[0].algo;
            algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
            CK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, wd, yd, cd, xd, (cudnnConvolutionBwdDataAlgo_t)algo, &wsz));
        } else {
            cudnnConvolutionBwdFilterAlgoPerf_t pw[8];
            CK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, xd, yd, cd, wd, 8, &cnt, pw));
            if (cnt > 0) top = pw[0].algo;
            algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0;
            CK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, xd, yd, cd, wd, (cudnnConvolutionBwdFilterAlgo_t)algo, &wsz));
        }
        if (ws) cudaFree(ws);
        ws = NULL;
        if (wsz && cudaMalloc(&ws, wsz) != cudaSuccess) {
            printf("  FAIL cudaMalloc workspace %zu\n", wsz);
            failures++;
            goto done;
        }
        float ms = 0;
        ran[0] = 0;
        for (int it = -1; it < iters; it++) {
            /* the warm-up call (it == -1) runs with the INFO callback on to learn the implementation */
            if (it <= 0) CK(cudnnSetCallback(it < 0 ? CUDNN_SEV_INFO_EN : 0, NULL, it < 0 ? grab_impl : NULL));
            if (it == 0) cudaEventRecord(e0, 0);
            if (dir == 0)
                CK(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz, &zero, yd, y));
            else if (dir == 1)
                CK(cudnnConvolutionBackwardData(h, &one, wd, w, yd, y, cd, (cudnnConvolutionBwdDataAlgo_t)algo, ws, wsz, &zero, xd, x));
            else
                CK(cudnnConvolutionBackwardFilter(h, &one, xd, x, yd, y, cd, (cudnnConvolutionBwdFilterAlgo_t)algo, ws, wsz, &zero, wd, w));
        }
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        {
            const cudaError_t ce = cudaGetLastError();
            if (ce != cudaSuccess) {
                printf("  FAIL CUDA error %s\n", cudaGetErrorString(ce));
                failures++;
                goto done;
            }
        }
        runs++;
        if (!strstr(ran, "__depthwise")) {
            printf("  FAIL: %s did not run a depthwise implementation (ran \"%s\")\n", dir_name[dir], ran);
            failures++;
        }
        const double per = ms / iters;
        printf("%-5s N=%d C=%-3d H=W=%-2d s%d %-10s algo %d (heuristic top %d) %-32s ws %8zu B  %9.4f ms  %7.1f GB/s\n",
               dt == CUDNN_DATA_HALF ? "fp16" : "fp32", N, C, H, stride, dir_name[dir], algo, top, ran, wsz, per,
               bytes / (per * 1e-3) / 1e9);
    }
done:
    if (ws) cudaFree(ws);
    if (x) cudaFree(x);
    if (w) cudaFree(w);
    if (y) cudaFree(y);
    if (xd) cudnnDestroyTensorDescriptor(xd);
    if (yd) cudnnDestroyTensorDescriptor(yd);
    if (wd) cudnnDestroyFilterDescriptor(wd);
    if (cd) cudnnDestroyConvolutionDescriptor(cd);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 20;
    if (iters < 1) iters = 20;
    cudnnHandle_t h;
    if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) {
        printf("dw_lab: FAIL cudnnCreate\n");
        return 1;
    }
    static const int Cs[] = {144, 192, 384}, Hs[] = {56, 28, 14};
    static const cudnnDataType_t Ts[] = {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT};
    printf("dw_lab: depthwise 3x3 pad 1, NHWC, %d calls per timing (time per call, GB/s of x+w+y)\n", iters);
    for (int t = 0; t < 2; t++)
        for (int ci = 0; ci < 3; ci++)
            for (int hi = 0; hi < 3; hi++)
                for (int s = 1; s <= 2; s++) layer(h, Ts[t], 32, Cs[ci], Hs[hi], s, iters);
    cudnnDestroy(h);
    printf("dw_lab: %d timings, %d failures: %s\n", runs, failures, failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
