/* Compatibility probe for the non-convolution operations: activation, softmax, pooling,
 * op/reduce/scale/set/transform tensor, LRN, batch normalization, the v8 RNN forward and
 * CTC loss. Same contract as conv_compat.c: only calls present in both cuDNN 8.9 and 9.x,
 * device memory, deterministic integer-ish inputs, one line per case (see compat_util.h).
 * Case names start with the dtype (f32_/f16_) so compare.py picks the tolerance; the op
 * name follows (f32_act_..., f32_softmax_..., f32_rnn_...). */
#include "compat_util.h"

static cudnnHandle_t H;
static const float ONE = 1, ZERO = 0;

static cudnnTensorDescriptor_t t4(cudnnTensorFormat_t f, cudnnDataType_t dt, int n, int c, int h, int w)
{
    cudnnTensorDescriptor_t d;
    cudnnCreateTensorDescriptor(&d);
    cudnnSetTensor4dDescriptor(d, f, dt, n, c, h, w);
    return d;
}
static cudnnTensorDescriptor_t t3(cudnnDataType_t dt, int a, int b, int c)
{ /* fully packed 3-d tensor */
    cudnnTensorDescriptor_t d;
    int dims[3] = {a, b, c}, str[3] = {b * c, c, 1};
    cudnnCreateTensorDescriptor(&d);
    cudnnSetTensorNdDescriptor(d, dt, 3, dims, str);
    return d;
}
static const char *dtn(cudnnDataType_t dt) { return dt == CUDNN_DATA_HALF ? "f16" : "f32"; }

/* ---------------------------------------------------------------- activation */
static void activation(cudnnDataType_t dt, cudnnTensorFormat_t fmt)
{
    static const struct { const char *name; cudnnActivationMode_t m; double coef; } modes[] = {
        {"relu", CUDNN_ACTIVATION_RELU, 0}, {"sigmoid", CUDNN_ACTIVATION_SIGMOID, 0},
        {"tanh", CUDNN_ACTIVATION_TANH, 0}, {"clipped_relu", CUDNN_ACTIVATION_CLIPPED_RELU, 1.5},
        {"elu", CUDNN_ACTIVATION_ELU, 0.5}, {"swish", CUDNN_ACTIVATION_SWISH, 0},
    };
    int n = 2, c = 5, hh = 6, w = 7;
    size_t cnt = (size_t)n * c * hh * w;
    cudnnTensorDescriptor_t d = t4(fmt, dt, n, c, hh, w);
    /* x in {-1.75, ..., 2.25}: away from the kinks at 0 and the clip at 1.5 */
    void *x = dev_fill_so(cnt, dt, 11, 1, 0.25), *dy = dev_fill(cnt, dt, 12);
    void *y = dev_alloc(cnt * esize(dt)), *dx = dev_alloc(cnt * esize(dt));
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s_act_%s_%s", dtn(dt), modes[i].name, fmt == CUDNN_TENSOR_NHWC ? "nhwc" : "nchw");
        cudnnActivationDescriptor_t ad;
        cudnnCreateActivationDescriptor(&ad);
        cudnnSetActivationDescriptor(ad, modes[i].m, CUDNN_NOT_PROPAGATE_NAN, modes[i].coef);
        if (modes[i].m == CUDNN_ACTIVATION_SWISH) cudnnSetActivationDescriptorSwishBeta(ad, 1.5);
        cudnnStatus_t st = cudnnActivationForward(H, ad, &ONE, d, x, &ZERO, d, y);
        report(name, "fwd", st, y, cnt, dt);
        st = cudnnActivationBackward(H, ad, &ONE, d, y, d, dy, d, x, &ZERO, d, dx);
        report(name, "bwd", st, dx, cnt, dt);
        cudnnDestroyActivationDescriptor(ad);
    }
    /* alpha/beta blending: y = 2 * relu(x) + 0.5 * y_old */
    {
        char name[64];
        snprintf(name, sizeof name, "%s_act_relu_alpha_beta", dtn(dt));
        cudnnActivationDescriptor_t ad;
        cudnnCreateActivationDescriptor(&ad);
        cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0);
        float a = 2, b = 0.5f;
        void *yo = dev_fill(cnt, dt, 13);
        report(name, "fwd", cudnnActivationForward(H, ad, &a, d, x, &b, d, yo), yo, cnt, dt);
        cudaFree(yo);
        cudnnDestroyActivationDescriptor(ad);
    }
    cudaFree(x); cudaFree(dy); cudaFree(y); cudaFree(dx);
    cudnnDestroyTensorDescriptor(d);
}

/* ---------------------------------------------------------------- softmax */
static void softmax(cudnnDataType_t dt)
{
    static const struct { const char *name; cudnnSoftmaxAlgorithm_t a; cudnnSoftmaxMode_t m; } modes[] = {
        {"accurate_instance", CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE},
        {"accurate_channel", CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL},
        {"log_instance", CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_INSTANCE},
        {"log_channel", CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL},
    };
    int n = 3, c = 6, hh = 4, w = 5;
    size_t cnt = (size_t)n * c * hh * w;
    cudnnTensorDescriptor_t d = t4(CUDNN_TENSOR_NCHW, dt, n, c, hh, w);
    void *x = dev_fill(cnt, dt, 21), *dy = dev_fill(cnt, dt, 22);
    void *y = dev_alloc(cnt * esize(dt)), *dx = dev_alloc(cnt * esize(dt));
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s_softmax_%s", dtn(dt), modes[i].name);
        cudnnStatus_t st = cudnnSoftmaxForward(H, modes[i].a, modes[i].m, &ONE, d, x, &ZERO, d, y);
        report(name, "fwd", st, y, cnt, dt);
        /* backward takes the forward output y (not x) */
        st = cudnnSoftmaxBackward(H, modes[i].a, modes[i].m, &ONE, d, y, d, dy, &ZERO, d, dx);
        report(name, "bwd", st, dx, cnt, dt);
    }
    cudaFree(x); cudaFree(dy); cudaFree(y); cudaFree(dx);
    cudnnDestroyTensorDescriptor(d);
}

/* ---------------------------------------------------------------- pooling */
static void pooling(const char *tag, cudnnDataType_t dt, cudnnTensorFormat_t fmt, int win, int pad, int stride)
{
    static const struct { const char *name; cudnnPoolingMode_t m; } modes[] = {
        {"max", CUDNN_POOLING_MAX},
        {"avg_incl", CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING},
        {"avg_excl", CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING},
    };
    int n = 2, c = 3, hh = 9, w = 8;
    size_t nx = (size_t)n * c * hh * w;
    cudnnTensorDescriptor_t xd = t4(fmt, dt, n, c, hh, w);
    /* distinct x: no ties, so max pooling's backward routing is unambiguous */
    void *x = dev_fill_distinct(nx, dt, dt == CUDNN_DATA_HALF ? 0.125 : 0.25);
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s_pool_%s_%s", dtn(dt), modes[i].name, tag);
        cudnnPoolingDescriptor_t pd;
        cudnnCreatePoolingDescriptor(&pd);
        cudnnSetPooling2dDescriptor(pd, modes[i].m, CUDNN_NOT_PROPAGATE_NAN, win, win, pad, pad, stride, stride);
        int on = 0, oc = 0, oh = 0, ow = 0;
        cudnnGetPooling2dForwardOutputDim(pd, xd, &on, &oc, &oh, &ow);
        cudnnTensorDescriptor_t yd = t4(fmt, dt, on, oc, oh, ow);
        size_t ny = (size_t)on * oc * oh * ow;
        void *y = dev_alloc(ny * esize(dt)), *dy = dev_fill(ny, dt, 31), *dx = dev_alloc(nx * esize(dt));
        cudnnStatus_t st = cudnnPoolingForward(H, pd, &ONE, xd, x, &ZERO, yd, y);
        report(name, "fwd", st, y, ny, dt);
        st = cudnnPoolingBackward(H, pd, &ONE, yd, y, yd, dy, xd, x, &ZERO, xd, dx);
        report(name, "bwd", st, dx, nx, dt);
        cudaFree(y); cudaFree(dy); cudaFree(dx);
        cudnnDestroyTensorDescriptor(yd);
        cudnnDestroyPoolingDescriptor(pd);
    }
    cudaFree(x);
    cudnnDestroyTensorDescriptor(xd);
}

/* ---------------------------------------------------------------- op tensor */
static void op_tensor(void)
{
    static const struct { const char *name; cudnnOpTensorOp_t op; } ops[] = {
        {"add", CUDNN_OP_TENSOR_ADD}, {"mul", CUDNN_OP_TENSOR_MUL}, {"min", CUDNN_OP_TENSOR_MIN},
        {"max", CUDNN_OP_TENSOR_MAX}, {"sqrt", CUDNN_OP_TENSOR_SQRT},
    };
    /* B shapes broadcast onto C = 2x4x5x6 */
    static const struct { const char *name; int n, c, h, w; } bs[] = {
        {"full", 2, 4, 5, 6}, {"bc_c", 1, 4, 1, 1}, {"bc_hw", 1, 1, 5, 6}, {"bc_scalar", 1, 1, 1, 1},
    };
    int n = 2, c = 4, hh = 5, w = 6;
    size_t cnt = (size_t)n * c * hh * w;
    cudnnTensorDescriptor_t cd = t4(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, hh, w);
    void *a = dev_fill(cnt, CUDNN_DATA_FLOAT, 41);
    void *apos = dev_fill_so(cnt, CUDNN_DATA_FLOAT, 42, 2, 4); /* 0..8 for sqrt */
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t b = 0; b < sizeof bs / sizeof bs[0]; b++) {
            if (ops[o].op == CUDNN_OP_TENSOR_SQRT && b > 1) continue; /* B is ignored there */
            char name[96];
            snprintf(name, sizeof name, "f32_optensor_%s_%s", ops[o].name, bs[b].name);
            cudnnOpTensorDescriptor_t od;
            cudnnCreateOpTensorDescriptor(&od);
            cudnnSetOpTensorDescriptor(od, ops[o].op, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN);
            cudnnTensorDescriptor_t bd = t4(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, bs[b].n, bs[b].c, bs[b].h, bs[b].w);
            void *B = dev_fill((size_t)bs[b].n * bs[b].c * bs[b].h * bs[b].w, CUDNN_DATA_FLOAT, 43 + (unsigned)b);
            void *C = dev_fill(cnt, CUDNN_DATA_FLOAT, 44);
            float a1 = 1, a2 = 2, beta = b == 0 ? 0.0f : 0.5f; /* beta != 0 reads the old C */
            cudnnStatus_t st = cudnnOpTensor(H, od, &a1, cd, ops[o].op == CUDNN_OP_TENSOR_SQRT ? apos : a, &a2, bd, B,
                                             &beta, cd, C);
            report(name, "c", st, C, cnt, CUDNN_DATA_FLOAT);
            cudaFree(B); cudaFree(C);
            cudnnDestroyTensorDescriptor(bd);
            cudnnDestroyOpTensorDescriptor(od);
        }
    cudaFree(a); cudaFree(apos);
    cudnnDestroyTensorDescriptor(cd);
}

/* ---------------------------------------------------------------- reduce tensor */
static void reduce_tensor(void)
{
    static const struct { const char *name; cudnnReduceTensorOp_t op; int idx; int cn, cc, ch, cw; } cs[] = {
        {"add_hw", CUDNN_REDUCE_TENSOR_ADD, 0, 2, 3, 1, 1},
        {"add_all", CUDNN_REDUCE_TENSOR_ADD, 0, 1, 1, 1, 1},
        {"max_c_idx", CUDNN_REDUCE_TENSOR_MAX, 1, 2, 1, 5, 7},
        {"max_hw_idx", CUDNN_REDUCE_TENSOR_MAX, 1, 2, 3, 1, 1},
        {"avg_n", CUDNN_REDUCE_TENSOR_AVG, 0, 1, 3, 5, 7},
        {"norm2_w", CUDNN_REDUCE_TENSOR_NORM2, 0, 2, 3, 5, 1},
    };
    int n = 2, c = 3, hh = 5, w = 7;
    size_t na = (size_t)n * c * hh * w;
    cudnnTensorDescriptor_t ad = t4(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, hh, w);
    void *A = dev_fill_distinct(na, CUDNN_DATA_FLOAT, 0.5); /* distinct: max indices are unique */
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        char name[96];
        snprintf(name, sizeof name, "f32_reduce_%s", cs[i].name);
        cudnnReduceTensorDescriptor_t rd;
        cudnnCreateReduceTensorDescriptor(&rd);
        cudnnSetReduceTensorDescriptor(rd, cs[i].op, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                       cs[i].idx ? CUDNN_REDUCE_TENSOR_FLATTENED_INDICES : CUDNN_REDUCE_TENSOR_NO_INDICES,
                                       CUDNN_32BIT_INDICES);
        cudnnTensorDescriptor_t cd = t4(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, cs[i].cn, cs[i].cc, cs[i].ch, cs[i].cw);
        size_t nc = (size_t)cs[i].cn * cs[i].cc * cs[i].ch * cs[i].cw, isz = 0, wsz = 0;
        cudnnGetReductionIndicesSize(H, rd, ad, cd, &isz);
        cudnnGetReductionWorkspaceSize(H, rd, ad, cd, &wsz);
        void *C = dev_alloc(nc * 4), *ind = dev_alloc(isz), *ws = dev_alloc(wsz);
        cudnnStatus_t st = cudnnReduceTensor(H, rd, cs[i].idx ? ind : NULL, cs[i].idx ? isz : 0, ws, wsz, &ONE, ad, A,
                                             &ZERO, cd, C);
        report(name, "c", st, C, nc, CUDNN_DATA_FLOAT);
        if (cs[i].idx) report(name, "indices", st, ind, nc, CUDNN_DATA_INT32);
        cudaFree(C); cudaFree(ind); cudaFree(ws);
        cudnnDestroyTensorDescriptor(cd);
        cudnnDestroyReduceTensorDescriptor(rd);
    }
    cudaFree(A);
    cudnnDestroyTensorDescriptor(ad);
}

/* ---------------------------------------------------------------- scale / set / transform */
static void tensor_misc(cudnnDataType_t dt)
{
    int n = 2, c = 3, hh = 4, w = 5;
    size_t cnt = (size_t)n * c * hh * w;
    cudnnTensorDescriptor_t nchw = t4(CUDNN_TENSOR_NCHW, dt, n, c, hh, w), nhwc = t4(CUDNN_TENSOR_NHWC, dt, n, c, hh, w);
    char name[64];
    void *x = dev_fill(cnt, dt, 51), *y = dev_fill(cnt, dt, 52);
    float s = -1.5f, v = 3.25f, a = 2, b = 0.5f;
    snprintf(name, sizeof name, "%s_scale_tensor", dtn(dt));
    report(name, "y", cudnnScaleTensor(H, nchw, x, &s), x, cnt, dt);
    snprintf(name, sizeof name, "%s_set_tensor_nhwc", dtn(dt));
    /* cudnnSetTensor's value: NVIDIA documents the tensor's own type, but its library reads a
     * float for HALF (a half set the tensor to ~0 on the H200), so the probe passes a float */
    report(name, "y", cudnnSetTensor(H, nhwc, y, &v), y, cnt, dt);
    cudaFree(x); cudaFree(y);
    x = dev_fill(cnt, dt, 53);
    y = dev_fill(cnt, dt, 54);
    snprintf(name, sizeof name, "%s_transform_nchw_to_nhwc", dtn(dt));
    report(name, "y", cudnnTransformTensor(H, &ONE, nchw, x, &ZERO, nhwc, y), y, cnt, dt);
    cudaFree(y);
    y = dev_fill(cnt, dt, 55);
    snprintf(name, sizeof name, "%s_transform_nhwc_to_nchw_ab", dtn(dt));
    report(name, "y", cudnnTransformTensor(H, &a, nhwc, x, &b, nchw, y), y, cnt, dt);
    cudaFree(x); cudaFree(y);
    cudnnDestroyTensorDescriptor(nchw);
    cudnnDestroyTensorDescriptor(nhwc);
}

/* ---------------------------------------------------------------- LRN */
static void lrn(cudnnDataType_t dt, unsigned lrnN, double la, double lb, double lk)
{
    int n = 2, c = 7, hh = 3, w = 4;
    size_t cnt = (size_t)n * c * hh * w;
    cudnnTensorDescriptor_t d = t4(CUDNN_TENSOR_NCHW, dt, n, c, hh, w);
    cudnnLRNDescriptor_t ld;
    cudnnCreateLRNDescriptor(&ld);
    cudnnSetLRNDescriptor(ld, lrnN, la, lb, lk);
    void *x = dev_fill(cnt, dt, 61), *dy = dev_fill(cnt, dt, 62), *y = dev_alloc(cnt * esize(dt)),
         *dx = dev_alloc(cnt * esize(dt));
    char name[96];
    snprintf(name, sizeof name, "%s_lrn_n%u_a%g_b%g_k%g", dtn(dt), lrnN, la, lb, lk);
    cudnnStatus_t st = cudnnLRNCrossChannelForward(H, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &ONE, d, x, &ZERO, d, y);
    report(name, "fwd", st, y, cnt, dt);
    st = cudnnLRNCrossChannelBackward(H, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &ONE, d, y, d, dy, d, x, &ZERO, d, dx);
    report(name, "bwd", st, dx, cnt, dt);
    cudaFree(x); cudaFree(dy); cudaFree(y); cudaFree(dx);
    cudnnDestroyLRNDescriptor(ld);
    cudnnDestroyTensorDescriptor(d);
}

/* ---------------------------------------------------------------- batch normalization */
static void batchnorm(cudnnDataType_t dt, cudnnTensorFormat_t fmt, cudnnBatchNormMode_t mode)
{
    int n = 4, c = 3, hh = 5, w = 6;
    size_t cnt = (size_t)n * c * hh * w;
    char name[96];
    snprintf(name, sizeof name, "%s_bn_%s_%s", dtn(dt), mode == CUDNN_BATCHNORM_SPATIAL ? "spatial" : "per_act",
             fmt == CUDNN_TENSOR_NHWC ? "nhwc" : "nchw");
    cudnnTensorDescriptor_t xd = t4(fmt, dt, n, c, hh, w), bd;
    cudnnCreateTensorDescriptor(&bd);
    cudnnDeriveBNTensorDescriptor(bd, xd, mode);
    /* parameter tensors: derived desc type (FLOAT for HALF/FLOAT data), packed */
    cudnnDataType_t pt;
    int nd = 0, dims[8], str[8];
    cudnnGetTensorNdDescriptor(bd, 8, &pt, &nd, dims, str);
    size_t np = 1;
    for (int i = 0; i < nd; i++) np *= (size_t)dims[i];
    void *x = dev_fill(cnt, dt, 71), *dy = dev_fill(cnt, dt, 72), *y = dev_alloc(cnt * esize(dt)),
         *dx = dev_alloc(cnt * esize(dt));
    void *scale = dev_fill_so(np, pt, 73, 0.5, 1.0), *bias = dev_fill(np, pt, 74);
    void *rmean = dev_fill_so(np, pt, 75, 0.5, 0), *rvar = dev_fill_so(np, pt, 76, 0.25, 1.0);
    void *smean = dev_alloc(np * 4), *sinv = dev_alloc(np * 4);
    void *dscale = dev_alloc(np * 4), *dbias = dev_alloc(np * 4);
    double eps = 1e-3;
    cudnnStatus_t st = cudnnBatchNormalizationForwardTraining(H, mode, &ONE, &ZERO, xd, x, xd, y, bd, scale, bias, 0.25,
                                                              rmean, rvar, eps, smean, sinv);
    report(name, "train_y", st, y, cnt, dt);
    report(name, "train_running_mean", st, rmean, np, pt);
    report(name, "train_running_var", st, rvar, np, pt);
    report(name, "train_saved_mean", st, smean, np, pt);
    report(name, "train_saved_invvar", st, sinv, np, pt);
    st = cudnnBatchNormalizationBackward(H, mode, &ONE, &ZERO, &ONE, &ZERO, xd, x, xd, dy, xd, dx, bd, scale, dscale,
                                         dbias, eps, smean, sinv);
    report(name, "bwd_dx", st, dx, cnt, dt);
    report(name, "bwd_dscale", st, dscale, np, pt);
    report(name, "bwd_dbias", st, dbias, np, pt);
    /* inference with the updated running statistics */
    st = cudnnBatchNormalizationForwardInference(H, mode, &ONE, &ZERO, xd, x, xd, y, bd, scale, bias, rmean, rvar, eps);
    report(name, "infer_y", st, y, cnt, dt);
    cudaFree(x); cudaFree(dy); cudaFree(y); cudaFree(dx); cudaFree(scale); cudaFree(bias);
    cudaFree(rmean); cudaFree(rvar); cudaFree(smean); cudaFree(sinv); cudaFree(dscale); cudaFree(dbias);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(bd);
}

/* ---------------------------------------------------------------- RNN (v8 API) */
static void rnn(const char *tag, cudnnRNNMode_t cell, int layers, int in, int hid, int T, int N,
                cudnnRNNDataLayout_t layout, const int *seqlens)
{
    char name[96];
    snprintf(name, sizeof name, "f32_rnn_%s", tag);
    cudnnDropoutDescriptor_t dd;
    size_t dsz = 0;
    cudnnCreateDropoutDescriptor(&dd);
    cudnnDropoutGetStatesSize(H, &dsz);
    void *dstates = dev_alloc(dsz);
    cudnnSetDropoutDescriptor(dd, H, 0.0f, dstates, dsz, 1234);
    cudnnRNNDescriptor_t rd;
    cudnnCreateRNNDescriptor(&rd);
    unsigned aux = layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED ? CUDNN_RNN_PADDED_IO_DISABLED : CUDNN_RNN_PADDED_IO_ENABLED;
    cudnnStatus_t st = cudnnSetRNNDescriptor_v8(rd, CUDNN_RNN_ALGO_STANDARD, cell, CUDNN_RNN_DOUBLE_BIAS,
                                                CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT,
                                                CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, in, hid, hid, layers, dd, aux);
    report(name, "set_descriptor", st, NULL, 0, CUDNN_DATA_FLOAT);
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnCreateRNNDataDescriptor(&xd);
    cudnnCreateRNNDataDescriptor(&yd);
    float pad = 0;
    cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, layout, T, N, in, seqlens, &pad);
    cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, layout, T, N, hid, seqlens, &pad);
    cudnnTensorDescriptor_t hd = t3(CUDNN_DATA_FLOAT, layers, N, hid);
    size_t wsz = 0, work = 0, reserve = 0;
    cudnnGetRNNWeightSpaceSize(H, rd, &wsz);
    cudnnGetRNNTempSpaceSizes(H, rd, CUDNN_FWD_MODE_INFERENCE, xd, &work, &reserve);
    void *wsp = dev_alloc(wsz);
    cudaMemset(wsp, 0, wsz);
    /* fill every matrix and bias through the pointers cuDNN hands out, with values that depend on
     * (layer, linLayerID, row, col): a different weight layout gives different results */
    int nlin = cell == CUDNN_LSTM ? 8 : cell == CUDNN_GRU ? 6 : 2;
    cudnnTensorDescriptor_t md, bdsc;
    cudnnCreateTensorDescriptor(&md);
    cudnnCreateTensorDescriptor(&bdsc);
    cudnnStatus_t wst = CUDNN_STATUS_SUCCESS;
    for (int l = 0; l < layers; l++)
        for (int id = 0; id < nlin; id++) {
            void *ma = NULL, *ba = NULL;
            cudnnStatus_t s2 = cudnnGetRNNWeightParams(H, rd, l, wsz, wsp, id, md, &ma, bdsc, &ba);
            if (s2 != CUDNN_STATUS_SUCCESS) { wst = s2; continue; }
            cudnnDataType_t t;
            int nd = 0, dims[4] = {0, 0, 0, 0}, str[4];
            if (ma) {
                cudnnGetTensorNdDescriptor(md, 4, &t, &nd, dims, str);
                /* documented as 3-d {1, rows, cols}; take the last two dims to be safe */
                int rows = nd >= 2 ? dims[nd - 2] : 1, cols = nd >= 1 ? dims[nd - 1] : 0;
                float *hm = malloc((size_t)rows * cols * 4 + 4);
                for (int r = 0; r < rows; r++)
                    for (int cc = 0; cc < cols; cc++)
                        hm[(size_t)r * cols + cc] = (float)(((l * 7 + id * 3 + r * 5 + cc * 11) % 9) - 4) * 0.0625f;
                cudaMemcpy(ma, hm, (size_t)rows * cols * 4, cudaMemcpyHostToDevice);
                free(hm);
            }
            if (ba) {
                cudnnGetTensorNdDescriptor(bdsc, 4, &t, &nd, dims, str);
                int rows = 1;
                for (int k = 0; k < nd; k++) rows *= dims[k];
                float *hb = malloc((size_t)rows * 4 + 4);
                for (int r = 0; r < rows; r++) hb[r] = (float)(((l + id * 2 + r * 3) % 5) - 2) * 0.125f;
                cudaMemcpy(ba, hb, (size_t)rows * 4, cudaMemcpyHostToDevice);
                free(hb);
            }
        }
    report(name, "weight_params", wst, NULL, 0, CUDNN_DATA_FLOAT);
    size_t nxv = (size_t)T * N * in, nyv = (size_t)T * N * hid, nh = (size_t)layers * N * hid;
    /* x: quarter-integers; padded positions (beyond a sequence's length) hold data too, it must be ignored */
    void *x = dev_fill_so(nxv, CUDNN_DATA_FLOAT, 81, 0.25, 0), *hx = dev_fill_so(nh, CUDNN_DATA_FLOAT, 82, 0.25, 0),
         *cx = dev_fill_so(nh, CUDNN_DATA_FLOAT, 83, 0.25, 0);
    void *y = dev_fill(nyv, CUDNN_DATA_FLOAT, 84), *hy = dev_alloc(nh * 4), *cy = dev_alloc(nh * 4);
    void *wk = dev_alloc(work), *rs = reserve ? dev_alloc(reserve) : NULL;
    void *dseq = dev_upload(seqlens, (size_t)N * sizeof(int));
    st = cudnnRNNForward(H, rd, CUDNN_FWD_MODE_INFERENCE, dseq, xd, x, yd, y, hd, hx, hy,
                         cell == CUDNN_LSTM ? hd : NULL, cell == CUDNN_LSTM ? cx : NULL, cell == CUDNN_LSTM ? cy : NULL,
                         wsz, wsp, work, wk, reserve, rs);
    report(name, "y", st, y, nyv, CUDNN_DATA_FLOAT);
    report(name, "hy", st, hy, nh, CUDNN_DATA_FLOAT);
    if (cell == CUDNN_LSTM) report(name, "cy", st, cy, nh, CUDNN_DATA_FLOAT);
    cudaFree(x); cudaFree(hx); cudaFree(cx); cudaFree(y); cudaFree(hy); cudaFree(cy);
    cudaFree(wk); if (rs) cudaFree(rs); cudaFree(dseq); cudaFree(wsp); cudaFree(dstates);
    cudnnDestroyTensorDescriptor(md);
    cudnnDestroyTensorDescriptor(bdsc);
    cudnnDestroyTensorDescriptor(hd);
    cudnnDestroyRNNDataDescriptor(xd);
    cudnnDestroyRNNDataDescriptor(yd);
    cudnnDestroyRNNDescriptor(rd);
    cudnnDestroyDropoutDescriptor(dd);
}

/* ---------------------------------------------------------------- CTC loss */
static void ctc(void)
{
    enum { T = 6, N = 3, A = 5 }; /* label 0 is the blank */
    /* probabilities: softmax over the alphabet of integer logits, computed on the host */
    float probs[T * N * A];
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            double e[A], s = 0;
            for (int a = 0; a < A; a++) s += e[a] = exp((double)(((t * 3 + n * 5 + a * 7) % 5) - 2) * 0.5);
            for (int a = 0; a < A; a++) probs[(t * N + n) * A + a] = (float)(e[a] / s);
        }
    int labels[] = {1, 2, /* n=0 */ 3, 3, 4, /* n=1: a repeat needs a blank between */ 2 /* n=2 */};
    int label_lengths[N] = {2, 3, 1}, input_lengths[N] = {6, 5, 4};
    cudnnTensorDescriptor_t pd = t3(CUDNN_DATA_FLOAT, T, N, A);
    cudnnCTCLossDescriptor_t cd;
    cudnnCreateCTCLossDescriptor(&cd);
    cudnnSetCTCLossDescriptor(cd, CUDNN_DATA_FLOAT);
    void *dprobs = dev_upload(probs, sizeof probs), *costs = dev_alloc(N * 4), *grads = dev_alloc(sizeof probs);
    size_t wsz = 0;
    cudnnStatus_t st = cudnnGetCTCLossWorkspaceSize(H, pd, pd, labels, label_lengths, input_lengths,
                                                    CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, cd, &wsz);
    report("f32_ctc_loss", "workspace_size", st, NULL, 0, CUDNN_DATA_FLOAT);
    void *ws = dev_alloc(wsz);
    st = cudnnCTCLoss(H, pd, dprobs, labels, label_lengths, input_lengths, costs, pd, grads,
                      CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, cd, ws, wsz);
    report("f32_ctc_loss", "costs", st, costs, N, CUDNN_DATA_FLOAT);
    report("f32_ctc_loss", "gradients", st, grads, (size_t)T * N * A, CUDNN_DATA_FLOAT);
    /* the same labels through CUDNN_LOSS_NORMALIZATION_SOFTMAX: the input is then the logits and
     * the library applies the softmax itself */
    {
        float logits[T * N * A];
        for (int t = 0; t < T; t++)
            for (int n = 0; n < N; n++)
                for (int a = 0; a < A; a++) logits[(t * N + n) * A + a] = (float)(((t * 3 + n * 5 + a * 7) % 5) - 2) * 0.5f;
        cudnnCTCLossDescriptor_t cs;
        cudnnCreateCTCLossDescriptor(&cs);
        cudnnSetCTCLossDescriptorEx(cs, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_NOT_PROPAGATE_NAN);
        void *dl = dev_upload(logits, sizeof logits);
        size_t wsz2 = 0;
        st = cudnnGetCTCLossWorkspaceSize(H, pd, pd, labels, label_lengths, input_lengths, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, cs, &wsz2);
        void *ws2 = dev_alloc(wsz2 ? wsz2 : 1);
        cudaMemset(grads, 0, sizeof probs);
        if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnCTCLoss(H, pd, dl, labels, label_lengths, input_lengths, costs, pd, grads, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, cs, ws2,
                              wsz2);
        report("f32_ctc_loss_softmax", "costs", st, costs, N, CUDNN_DATA_FLOAT);
        report("f32_ctc_loss_softmax", "gradients", st, grads, (size_t)T * N * A, CUDNN_DATA_FLOAT);
        cudaFree(dl); cudaFree(ws2);
        cudnnDestroyCTCLossDescriptor(cs);
    }
    cudaFree(dprobs); cudaFree(costs); cudaFree(grads); cudaFree(ws);
    cudnnDestroyCTCLossDescriptor(cd);
    cudnnDestroyTensorDescriptor(pd);
}

int main(void)
{
    cudnnStatus_t st = cudnnCreate(&H);
    printf("library %zu create %s\n", cudnnGetVersion(), cudnnGetErrorString(st));
    if (st != CUDNN_STATUS_SUCCESS) return 1;

    activation(CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW);
    activation(CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC);
    activation(CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW);
    softmax(CUDNN_DATA_FLOAT);
    softmax(CUDNN_DATA_HALF);
    pooling("w3_p1_s2_nchw", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, 1, 2);
    pooling("w2_p0_s2_nchw", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 2, 0, 2);
    pooling("w3_p1_s1_nhwc", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 3, 1, 1);
    pooling("w3_p1_s2_nhwc", CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, 3, 1, 2);
    op_tensor();
    reduce_tensor();
    tensor_misc(CUDNN_DATA_FLOAT);
    tensor_misc(CUDNN_DATA_HALF);
    lrn(CUDNN_DATA_FLOAT, 5, 1.0, 0.75, 2.0);
    lrn(CUDNN_DATA_FLOAT, 3, 0.5, 0.5, 1.0);
    batchnorm(CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CUDNN_BATCHNORM_SPATIAL);
    batchnorm(CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CUDNN_BATCHNORM_PER_ACTIVATION);
    batchnorm(CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, CUDNN_BATCHNORM_SPATIAL);
    batchnorm(CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, CUDNN_BATCHNORM_SPATIAL);

    static const int eq4[4] = {5, 5, 5, 5}, var4[4] = {5, 3, 4, 1};
    rnn("lstm_l1_packed", CUDNN_LSTM, 1, 6, 4, 5, 4, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, eq4);
    rnn("lstm_l2_packed", CUDNN_LSTM, 2, 6, 5, 5, 4, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, eq4);
    rnn("lstm_l2_batch_major_varlen", CUDNN_LSTM, 2, 3, 4, 5, 4, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, var4);
    rnn("gru_l1_packed", CUDNN_GRU, 1, 6, 4, 5, 4, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, eq4);
    rnn("gru_l2_seq_major_varlen", CUDNN_GRU, 2, 5, 3, 5, 4, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, var4);
    ctc();

    cudnnDestroy(H);
    return 0;
}
