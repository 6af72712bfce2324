/* Compatibility probe for the non-convolution operations: activation, softmax, pooling
 * (2-D and 3-D), op/reduce/scale/set/transform tensor (also through a transform descriptor),
 * add tensor, LRN, divisive normalization, batch normalization (also the fused Ex forms),
 * cudnnNormalization*, the spatial transformer, dropout (library-independent properties
 * only, also its getter and restore), the descriptor getters of these families, the v8 RNN
 * forward and CTC loss. Same contract as conv_compat.c: only calls present in both cuDNN 8.9 and 9.x,
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

/* ReLU (no NaN propagation, coefficient 0): the activation of the alpha/beta case and of the
 * fused batch norm / normalization cases */
static cudnnActivationDescriptor_t relu_desc(void)
{
    cudnnActivationDescriptor_t ad;
    cudnnCreateActivationDescriptor(&ad);
    cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0);
    return ad;
}
static cudnnLRNDescriptor_t lrn_desc(unsigned lrnN, double la, double lb, double lk)
{
    cudnnLRNDescriptor_t ld;
    cudnnCreateLRNDescriptor(&ld);
    cudnnSetLRNDescriptor(ld, lrnN, la, lb, lk);
    return ld;
}

/* the pooling modes every 2-D and 3-D pooling case runs, in this order */
static const struct { const char *name; cudnnPoolingMode_t m; } POOL_MODES[] = {
    {"max", CUDNN_POOLING_MAX},
    {"avg_incl", CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING},
    {"avg_excl", CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING},
};

/* The outputs of a training forward of batch norm, batch norm Ex and cudnnNormalization*: y (cnt
 * of dt), then the running and saved statistics (ns of st_dt each), in this order. */
static void report_train(const char *name, cudnnStatus_t st, const void *y, size_t cnt, cudnnDataType_t dt, const void *rmean,
                         const void *rvar, const void *smean, const void *sinv, size_t ns, cudnnDataType_t st_dt)
{
    report(name, "train_y", st, y, cnt, dt);
    report(name, "train_running_mean", st, rmean, ns, st_dt);
    report(name, "train_running_var", st, rvar, ns, st_dt);
    report(name, "train_saved_mean", st, smean, ns, st_dt);
    report(name, "train_saved_invvar", st, sinv, ns, st_dt);
}
/* The outputs of their backward: dx, dz (only when add: the ADD_ACTIVATION forms), then the
 * parameter gradients (np of pt each). */
static void report_norm_bwd(const char *name, cudnnStatus_t st, const void *dx, int add, const void *dz, size_t cnt, cudnnDataType_t dt,
                            const void *dscale, const void *dbias, size_t np, cudnnDataType_t pt)
{
    report(name, "bwd_dx", st, dx, cnt, dt);
    if (add) report(name, "bwd_dz", st, dz, cnt, dt);
    report(name, "bwd_dscale", st, dscale, np, pt);
    report(name, "bwd_dbias", st, dbias, np, pt);
}

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
        cudnnActivationDescriptor_t ad = relu_desc();
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
    int n = 2, c = 3, hh = 9, w = 8;
    size_t nx = (size_t)n * c * hh * w;
    cudnnTensorDescriptor_t xd = t4(fmt, dt, n, c, hh, w);
    /* distinct x: no ties, so max pooling's backward routing is unambiguous */
    void *x = dev_fill_distinct(nx, dt, dt == CUDNN_DATA_HALF ? 0.125 : 0.25);
    for (size_t i = 0; i < sizeof POOL_MODES / sizeof POOL_MODES[0]; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s_pool_%s_%s", dtn(dt), POOL_MODES[i].name, tag);
        cudnnPoolingDescriptor_t pd;
        cudnnCreatePoolingDescriptor(&pd);
        cudnnSetPooling2dDescriptor(pd, POOL_MODES[i].m, CUDNN_NOT_PROPAGATE_NAN, win, win, pad, pad, stride, stride);
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
    cudnnLRNDescriptor_t ld = lrn_desc(lrnN, la, lb, lk);
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
    report_train(name, st, y, cnt, dt, rmean, rvar, smean, sinv, np, pt);
    st = cudnnBatchNormalizationBackward(H, mode, &ONE, &ZERO, &ONE, &ZERO, xd, x, xd, dy, xd, dx, bd, scale, dscale,
                                         dbias, eps, smean, sinv);
    report_norm_bwd(name, st, dx, 0, NULL, cnt, dt, dscale, dbias, np, pt);
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
    /* NVIDIA's library leaves the gradient at t >= inputLengths[n] untouched, FreeDNN writes 0 there */
    cudaMemset(grads, 0, sizeof probs);
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

/* ---------------------------------------------------------------- helpers for the cases below */
static cudnnTensorDescriptor_t tnd(cudnnTensorFormat_t f, cudnnDataType_t dt, int nb, const int *dims)
{ /* packed Nd tensor in NCHW-like or NHWC-like order */
    cudnnTensorDescriptor_t d;
    cudnnCreateTensorDescriptor(&d);
    cudnnSetTensorNdDescriptorEx(d, f, dt, nb, dims);
    return d;
}
static size_t tensor_count(cudnnTensorDescriptor_t d)
{
    cudnnDataType_t t;
    int nd = 0, dims[8], str[8];
    size_t n = 1;
    if (cudnnGetTensorNdDescriptor(d, 8, &t, &nd, dims, str) != CUDNN_STATUS_SUCCESS) return 0;
    for (int i = 0; i < nd; i++) n *= (size_t)dims[i];
    return n;
}
static const char *fmtn(cudnnTensorFormat_t f) { return f == CUDNN_TENSOR_NHWC ? "nhwc" : "nchw"; }

/* ---------------------------------------------------------------- batch norm Ex (fused ops) */
static void batchnorm_ex(cudnnDataType_t dt, cudnnTensorFormat_t fmt, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops)
{
    int n = 2, c = 8, hh = 4, w = 5; /* C a multiple of 4, as the fused NHWC half kernels want */
    size_t cnt = (size_t)n * c * hh * w;
    char name[96];
    snprintf(name, sizeof name, "%s_bn_ex_%s_%s_%s", dtn(dt),
             mode == CUDNN_BATCHNORM_SPATIAL_PERSISTENT ? "persistent" : mode == CUDNN_BATCHNORM_SPATIAL ? "spatial" : "per_act",
             ops == CUDNN_BATCHNORM_OPS_BN ? "bn" : ops == CUDNN_BATCHNORM_OPS_BN_ACTIVATION ? "bn_relu" : "bn_add_relu", fmtn(fmt));
    cudnnTensorDescriptor_t xd = t4(fmt, dt, n, c, hh, w), bd;
    cudnnCreateTensorDescriptor(&bd);
    cudnnDeriveBNTensorDescriptor(bd, xd, mode);
    cudnnDataType_t pt;
    int nd = 0, dims[8], str[8];
    cudnnGetTensorNdDescriptor(bd, 8, &pt, &nd, dims, str);
    size_t np = tensor_count(bd);
    int add = ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
    cudnnActivationDescriptor_t ad = ops != CUDNN_BATCHNORM_OPS_BN ? relu_desc() : NULL;
    cudnnTensorDescriptor_t zd = add ? xd : NULL;
    void *x = dev_fill(cnt, dt, 171), *z = add ? dev_fill(cnt, dt, 172) : NULL, *dy = dev_fill(cnt, dt, 173);
    void *y = dev_zero(cnt * esize(dt)), *dx = dev_zero(cnt * esize(dt)), *dz = add ? dev_zero(cnt * esize(dt)) : NULL;
    void *scale = dev_fill_so(np, pt, 174, 0.5, 1.0), *bias = dev_fill_so(np, pt, 175, 0.5, 0);
    void *rmean = dev_fill_so(np, pt, 176, 0.5, 0), *rvar = dev_fill_so(np, pt, 177, 0.25, 1.0);
    void *smean = dev_zero(np * esize(pt)), *sinv = dev_zero(np * esize(pt));
    void *dscale = dev_zero(np * esize(pt)), *dbias = dev_zero(np * esize(pt));
    double eps = 1e-3;
    size_t fws = 0, bws = 0, rsz = 0;
    cudnnStatus_t st = cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(H, mode, ops, xd, zd, xd, bd, ad, &fws);
    report(name, "fwd_workspace_size", st, NULL, 0, dt);
    st = cudnnGetBatchNormalizationTrainingExReserveSpaceSize(H, mode, ops, ad, xd, &rsz);
    report(name, "reserve_size", st, NULL, 0, dt);
    st = cudnnGetBatchNormalizationBackwardExWorkspaceSize(H, mode, ops, xd, xd, xd, zd, xd, bd, ad, &bws);
    report(name, "bwd_workspace_size", st, NULL, 0, dt);
    void *fw = dev_zero(fws), *bw = dev_zero(bws), *rs = dev_zero(rsz);
    st = cudnnBatchNormalizationForwardTrainingEx(H, mode, ops, &ONE, &ZERO, xd, x, zd, z, xd, y, bd, scale, bias, 0.25,
                                                  rmean, rvar, eps, smean, sinv, ad, fw, fws, rs, rsz);
    report_train(name, st, y, cnt, dt, rmean, rvar, smean, sinv, np, pt);
    /* backward takes the forward output y (for the activation's mask) and the same reserve space */
    st = cudnnBatchNormalizationBackwardEx(H, mode, ops, &ONE, &ZERO, &ONE, &ZERO, xd, x, xd, y, xd, dy, zd, dz, xd, dx, bd,
                                           scale, bias, dscale, dbias, eps, smean, sinv, ad, bw, bws, rs, rsz);
    report_norm_bwd(name, st, dx, add, dz, cnt, dt, dscale, dbias, np, pt);
    cudaFree(x); cudaFree(dy); cudaFree(y); cudaFree(dx);
    if (add) { cudaFree(z); cudaFree(dz); }
    cudaFree(scale); cudaFree(bias); cudaFree(rmean); cudaFree(rvar); cudaFree(smean); cudaFree(sinv);
    cudaFree(dscale); cudaFree(dbias); cudaFree(fw); cudaFree(bw); cudaFree(rs);
    if (ad) cudnnDestroyActivationDescriptor(ad);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(bd);
}

/* ---------------------------------------------------------------- cudnnNormalization* (PER_CHANNEL) */
static void normalization(cudnnDataType_t dt, cudnnTensorFormat_t fmt, cudnnNormAlgo_t algo, cudnnNormOps_t ops)
{
    int n = 2, c = 8, hh = 4, w = 5;
    size_t cnt = (size_t)n * c * hh * w;
    char name[96];
    snprintf(name, sizeof name, "%s_norm_per_channel_%s_%s_%s", dtn(dt), algo == CUDNN_NORM_ALGO_PERSIST ? "persist" : "standard",
             ops == CUDNN_NORM_OPS_NORM ? "norm" : ops == CUDNN_NORM_OPS_NORM_ACTIVATION ? "norm_relu" : "norm_add_relu", fmtn(fmt));
    cudnnNormMode_t mode = CUDNN_NORM_PER_CHANNEL;
    cudnnTensorDescriptor_t xd = t4(fmt, dt, n, c, hh, w), sbd, mvd;
    cudnnCreateTensorDescriptor(&sbd);
    cudnnCreateTensorDescriptor(&mvd);
    cudnnStatus_t st = cudnnDeriveNormTensorDescriptor(sbd, mvd, xd, mode, 1);
    report(name, "derive", st, NULL, 0, dt);
    cudnnDataType_t pt = CUDNN_DATA_FLOAT, mt = CUDNN_DATA_FLOAT;
    int nd = 0, dims[8], str[8];
    cudnnGetTensorNdDescriptor(sbd, 8, &pt, &nd, dims, str);
    cudnnGetTensorNdDescriptor(mvd, 8, &mt, &nd, dims, str);
    size_t np = tensor_count(sbd), nm = tensor_count(mvd);
    int add = ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION;
    cudnnActivationDescriptor_t ad = ops != CUDNN_NORM_OPS_NORM ? relu_desc() : NULL;
    cudnnTensorDescriptor_t zd = add ? xd : NULL;
    void *x = dev_fill(cnt, dt, 181), *z = add ? dev_fill(cnt, dt, 182) : NULL, *dy = dev_fill(cnt, dt, 183);
    void *y = dev_zero(cnt * esize(dt)), *dx = dev_zero(cnt * esize(dt)), *dz = add ? dev_zero(cnt * esize(dt)) : NULL;
    void *scale = dev_fill_so(np, pt, 184, 0.5, 1.0), *bias = dev_fill_so(np, pt, 185, 0.5, 0);
    void *rmean = dev_fill_so(nm, mt, 186, 0.5, 0), *rvar = dev_fill_so(nm, mt, 187, 0.25, 1.0);
    void *smean = dev_zero(nm * esize(mt)), *sinv = dev_zero(nm * esize(mt));
    void *dscale = dev_zero(np * esize(pt)), *dbias = dev_zero(np * esize(pt));
    double eps = 1e-3;
    size_t fws = 0, bws = 0, rsz = 0;
    st = cudnnGetNormalizationForwardTrainingWorkspaceSize(H, mode, ops, algo, xd, zd, xd, sbd, ad, mvd, &fws, 1);
    report(name, "fwd_workspace_size", st, NULL, 0, dt);
    st = cudnnGetNormalizationTrainingReserveSpaceSize(H, mode, ops, algo, ad, xd, &rsz, 1);
    report(name, "reserve_size", st, NULL, 0, dt);
    st = cudnnGetNormalizationBackwardWorkspaceSize(H, mode, ops, algo, xd, xd, xd, zd, xd, sbd, ad, mvd, &bws, 1);
    report(name, "bwd_workspace_size", st, NULL, 0, dt);
    void *fw = dev_zero(fws), *bw = dev_zero(bws), *rs = dev_zero(rsz);
    st = cudnnNormalizationForwardTraining(H, mode, ops, algo, &ONE, &ZERO, xd, x, sbd, scale, bias, 0.25, mvd, rmean, rvar, eps,
                                           smean, sinv, ad, zd, z, xd, y, fw, fws, rs, rsz, 1);
    report_train(name, st, y, cnt, dt, rmean, rvar, smean, sinv, nm, mt);
    st = cudnnNormalizationBackward(H, mode, ops, algo, &ONE, &ZERO, &ONE, &ZERO, xd, x, xd, y, xd, dy, zd, dz, xd, dx, sbd, scale,
                                    bias, dscale, dbias, eps, mvd, smean, sinv, ad, bw, bws, rs, rsz, 1);
    report_norm_bwd(name, st, dx, add, dz, cnt, dt, dscale, dbias, np, pt);
    /* inference with the updated running statistics (z is used by NORM_ADD_ACTIVATION only) */
    void *yi = dev_zero(cnt * esize(dt));
    st = cudnnNormalizationForwardInference(H, mode, ops, algo, &ONE, &ZERO, xd, x, sbd, scale, bias, mvd, rmean, rvar, zd, z, ad,
                                            xd, yi, eps, 1);
    report(name, "infer_y", st, yi, cnt, dt);
    cudaFree(x); cudaFree(dy); cudaFree(y); cudaFree(dx); cudaFree(yi);
    if (add) { cudaFree(z); cudaFree(dz); }
    cudaFree(scale); cudaFree(bias); cudaFree(rmean); cudaFree(rvar); cudaFree(smean); cudaFree(sinv);
    cudaFree(dscale); cudaFree(dbias); cudaFree(fw); cudaFree(bw); cudaFree(rs);
    if (ad) cudnnDestroyActivationDescriptor(ad);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(sbd);
    cudnnDestroyTensorDescriptor(mvd);
}

/* ---------------------------------------------------------------- divisive normalization */
static void divnorm(cudnnDataType_t dt, int with_means, unsigned lrnN, double la, double lb, double lk)
{
    int n = 2, c = 3, hh = 6, w = 7;
    size_t cnt = (size_t)n * c * hh * w, bytes = cnt * esize(dt);
    char name[96];
    snprintf(name, sizeof name, "%s_divnorm_%s_n%u_a%g_b%g_k%g", dtn(dt), with_means ? "means" : "nomeans", lrnN, la, lb, lk);
    cudnnTensorDescriptor_t d = t4(CUDNN_TENSOR_NCHW, dt, n, c, hh, w);
    cudnnLRNDescriptor_t ld = lrn_desc(lrnN, la, lb, lk);
    void *x = dev_fill(cnt, dt, 191), *means = with_means ? dev_fill_so(cnt, dt, 192, 0.5, 0) : NULL, *dy = dev_fill(cnt, dt, 193);
    void *t1 = dev_zero(bytes), *t2 = dev_zero(bytes), *y = dev_zero(bytes), *dx = dev_zero(bytes);
    void *dmeans = with_means ? dev_zero(bytes) : NULL;
    cudnnStatus_t st = cudnnDivisiveNormalizationForward(H, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &ONE, d, x, means, t1, t2, &ZERO, d, y);
    report(name, "fwd", st, y, cnt, dt);
    cudaMemset(t1, 0, bytes);
    cudaMemset(t2, 0, bytes);
    st = cudnnDivisiveNormalizationBackward(H, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &ONE, d, x, means, dy, t1, t2, &ZERO, d, dx, dmeans);
    report(name, "bwd_dx", st, dx, cnt, dt);
    if (with_means) report(name, "bwd_dmeans", st, dmeans, cnt, dt);
    cudaFree(x); cudaFree(dy); cudaFree(t1); cudaFree(t2); cudaFree(y); cudaFree(dx);
    if (with_means) { cudaFree(means); cudaFree(dmeans); }
    cudnnDestroyLRNDescriptor(ld);
    cudnnDestroyTensorDescriptor(d);
}

/* ---------------------------------------------------------------- spatial transformer (bilinear) */
static void spatial_tf(cudnnDataType_t dt)
{
    enum { N = 2, C = 3, HI = 6, WI = 7, HO = 5, WO = 6 };
    /* two affine maps (dyadic, so exact in half too), chosen so that every sampling point lies
     * inside the image and at least 1/32 pixel away from a pixel row or column under both
     * the align-corners and the half-pixel convention: bilinear weights and the grid
     * gradient are then unambiguous */
    static const double theta_h[N * 6] = {0.6875, 0.0625, 0.03125, 0.09375, 0.4375, -0.09375,
                                          0.6875, 0.0625, 0.03125, -0.09375, 0.4375, 0.09375};
    char name[64];
    snprintf(name, sizeof name, "%s_stf_bilinear", dtn(dt));
    cudnnSpatialTransformerDescriptor_t sd;
    cudnnCreateSpatialTransformerDescriptor(&sd);
    int odims[4] = {N, C, HO, WO};
    cudnnStatus_t st = cudnnSetSpatialTransformerNdDescriptor(sd, CUDNN_SAMPLER_BILINEAR, dt, 4, odims);
    report(name, "set_descriptor", st, NULL, 0, dt);
    unsigned char th[N * 6 * 8];
    for (int i = 0; i < N * 6; i++) put(th, dt, (size_t)i, theta_h[i]);
    size_t ngrid = (size_t)N * HO * WO * 2, nx = (size_t)N * C * HI * WI, ny = (size_t)N * C * HO * WO;
    void *theta = dev_upload(th, (size_t)N * 6 * esize(dt)), *grid = dev_zero(ngrid * esize(dt));
    st = cudnnSpatialTfGridGeneratorForward(H, sd, theta, grid);
    report(name, "grid", st, grid, ngrid, dt);
    cudnnTensorDescriptor_t xd = t4(CUDNN_TENSOR_NCHW, dt, N, C, HI, WI), yd = t4(CUDNN_TENSOR_NCHW, dt, N, C, HO, WO);
    void *x = dev_fill(nx, dt, 201), *y = dev_zero(ny * esize(dt)), *dy = dev_fill(ny, dt, 202);
    void *dx = dev_zero(nx * esize(dt)), *dgrid = dev_zero(ngrid * esize(dt)), *dtheta = dev_zero((size_t)N * 6 * esize(dt));
    st = cudnnSpatialTfSamplerForward(H, sd, &ONE, xd, x, grid, &ZERO, yd, y);
    report(name, "sampler_fwd", st, y, ny, dt);
    st = cudnnSpatialTfSamplerBackward(H, sd, &ONE, xd, x, &ZERO, xd, dx, &ONE, yd, dy, grid, &ZERO, dgrid);
    report(name, "sampler_bwd_dx", st, dx, nx, dt);
    report(name, "sampler_bwd_dgrid", st, dgrid, ngrid, dt);
    st = cudnnSpatialTfGridGeneratorBackward(H, sd, dgrid, dtheta);
    report(name, "grid_bwd_dtheta", st, dtheta, (size_t)N * 6, dt);
    /* alpha/beta on the sampler: y = 2 * sample + 0.5 * y_old */
    {
        float a = 2, b = 0.5f;
        void *yo = dev_fill(ny, dt, 203);
        st = cudnnSpatialTfSamplerForward(H, sd, &a, xd, x, grid, &b, yd, yo);
        report(name, "sampler_fwd_alpha_beta", st, yo, ny, dt);
        cudaFree(yo);
    }
    cudaFree(theta); cudaFree(grid); cudaFree(x); cudaFree(y); cudaFree(dy); cudaFree(dx); cudaFree(dgrid); cudaFree(dtheta);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroySpatialTransformerDescriptor(sd);
}

/* ---------------------------------------------------------------- cudnnTransformTensorEx */
static void transform_ex(const char *tag, cudnnDataType_t dt, cudnnTensorFormat_t dst_fmt, const int *src_dims, const int *pad_before,
                         const int *pad_after, const unsigned *fold)
{
    char name[96];
    snprintf(name, sizeof name, "%s_transform_ex_%s", dtn(dt), tag);
    cudnnTensorDescriptor_t sd = tnd(CUDNN_TENSOR_NCHW, dt, 4, src_dims), dd;
    cudnnCreateTensorDescriptor(&dd);
    cudnnTensorTransformDescriptor_t td;
    cudnnCreateTensorTransformDescriptor(&td);
    int32_t pb[4], pa[4];
    uint32_t fo[2] = {1, 1};
    for (int i = 0; i < 4; i++) { pb[i] = pad_before ? pad_before[i] : 0; pa[i] = pad_after ? pad_after[i] : 0; }
    if (fold) { fo[0] = fold[0]; fo[1] = fold[1]; }
    cudnnStatus_t st = cudnnSetTensorTransformDescriptor(td, 4, dst_fmt, pb, pa, fo, CUDNN_TRANSFORM_FOLD);
    report(name, "set_descriptor", st, NULL, 0, dt);
    size_t dbytes = 0;
    st = cudnnInitTransformDest(td, sd, dd, &dbytes);
    /* the destination's dims and strides as InitTransformDest derived them, and its size */
    cudnnDataType_t t;
    int nd = 0, dims[8] = {0}, str[8] = {0};
    if (st == CUDNN_STATUS_SUCCESS) cudnnGetTensorNdDescriptor(dd, 8, &t, &nd, dims, str);
    float meta[9];
    for (int i = 0; i < 4; i++) { meta[i] = (float)dims[i]; meta[4 + i] = (float)str[i]; }
    meta[8] = (float)dbytes;
    report_host(name, "init_dest_dims_strides_bytes", st, meta, 9);
    size_t ns = (size_t)src_dims[0] * src_dims[1] * src_dims[2] * src_dims[3];
    size_t nd_el = st == CUDNN_STATUS_SUCCESS ? dbytes / esize(dt) : 0;
    void *x = dev_fill(ns, dt, 211), *y = dev_zero(nd_el * esize(dt));
    if (st == CUDNN_STATUS_SUCCESS) {
        st = cudnnTransformTensorEx(H, td, &ONE, sd, x, &ZERO, dd, y);
        report(name, "y", st, y, nd_el, dt);
    }
    cudaFree(x); cudaFree(y);
    cudnnDestroyTensorTransformDescriptor(td);
    cudnnDestroyTensorDescriptor(sd);
    cudnnDestroyTensorDescriptor(dd);
}

/* ---------------------------------------------------------------- 3-D pooling through the Nd descriptor */
static void pooling3d(const char *tag, cudnnDataType_t dt, cudnnTensorFormat_t fmt, const int *win, const int *pad, const int *stride)
{
    int xdims[5] = {2, 3, 5, 6, 5};
    size_t nx = 2 * 3 * 5 * 6 * 5;
    cudnnTensorDescriptor_t xd = tnd(fmt, dt, 5, xdims);
    void *x = dev_fill_distinct(nx, dt, dt == CUDNN_DATA_HALF ? 0.125 : 0.25);
    for (size_t i = 0; i < sizeof POOL_MODES / sizeof POOL_MODES[0]; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s_pool3d_%s_%s", dtn(dt), POOL_MODES[i].name, tag);
        cudnnPoolingDescriptor_t pd;
        cudnnCreatePoolingDescriptor(&pd);
        cudnnStatus_t st = cudnnSetPoolingNdDescriptor(pd, POOL_MODES[i].m, CUDNN_NOT_PROPAGATE_NAN, 3, win, pad, stride);
        int od[5] = {0, 0, 0, 0, 0};
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnGetPoolingNdForwardOutputDim(pd, xd, 5, od);
        float odf[5];
        for (int k = 0; k < 5; k++) odf[k] = (float)od[k];
        report_host(name, "output_dim", st, odf, 5);
        if (st == CUDNN_STATUS_SUCCESS) {
            cudnnTensorDescriptor_t yd = tnd(fmt, dt, 5, od);
            size_t ny = (size_t)od[0] * od[1] * od[2] * od[3] * od[4];
            void *y = dev_zero(ny * esize(dt)), *dy = dev_fill(ny, dt, 221), *dx = dev_zero(nx * esize(dt));
            st = cudnnPoolingForward(H, pd, &ONE, xd, x, &ZERO, yd, y);
            report(name, "fwd", st, y, ny, dt);
            st = cudnnPoolingBackward(H, pd, &ONE, yd, y, yd, dy, xd, x, &ZERO, xd, dx);
            report(name, "bwd", st, dx, nx, dt);
            cudaFree(y); cudaFree(dy); cudaFree(dx);
            cudnnDestroyTensorDescriptor(yd);
        }
        cudnnDestroyPoolingDescriptor(pd);
    }
    cudaFree(x);
    cudnnDestroyTensorDescriptor(xd);
}

/* ---------------------------------------------------------------- cudnnAddTensor broadcasting */
static void add_tensor(const char *tag, cudnnDataType_t dt, cudnnTensorFormat_t fmt, int nb, const int *cdims, const int *bdims)
{
    char name[96];
    snprintf(name, sizeof name, "%s_add_tensor_%s", dtn(dt), tag);
    cudnnTensorDescriptor_t cd = tnd(fmt, dt, nb, cdims), bd = tnd(fmt, dt, nb, bdims);
    size_t nc = 1, nbv = 1;
    for (int i = 0; i < nb; i++) { nc *= (size_t)cdims[i]; nbv *= (size_t)bdims[i]; }
    void *b = dev_fill(nbv, dt, 231), *cc = dev_fill(nc, dt, 232);
    float a = 2, be = 0.5f; /* C = 2 * bias + 0.5 * C */
    report(name, "c", cudnnAddTensor(H, &a, bd, b, &be, cd, cc), cc, nc, dt);
    cudaFree(b); cudaFree(cc);
    cudnnDestroyTensorDescriptor(cd);
    cudnnDestroyTensorDescriptor(bd);
}

/* ---------------------------------------------------------------- dropout
 * The two libraries draw different random masks, so y itself cannot be compared. What must
 * agree is computed on the host from y = dropout(x) and dx = dropout_backward(dy = y):
 * the kept fraction rounded to 0.05 (n is large enough that it sits several standard
 * deviations inside its bin), y/x on kept elements (1/(1-p)), dx/x there (1/(1-p)^2), and
 * whether backward used forward's mask (dx == 0 exactly where y == 0). x has no zeros. */
static void dropout(cudnnDataType_t dt, float p)
{
    enum { N = 4, C = 16, HW = 16 }; /* 16384 elements */
    size_t cnt = (size_t)N * C * HW * HW, bytes = cnt * esize(dt);
    char name[64];
    snprintf(name, sizeof name, "%s_dropout_p%g", dtn(dt), p);
    cudnnTensorDescriptor_t d = t4(CUDNN_TENSOR_NCHW, dt, N, C, HW, HW);
    cudnnDropoutDescriptor_t dd;
    cudnnCreateDropoutDescriptor(&dd);
    size_t ssz = 0, rsz = 0;
    cudnnDropoutGetStatesSize(H, &ssz);
    void *states = dev_zero(ssz);
    cudnnStatus_t st = cudnnSetDropoutDescriptor(dd, H, p, states, ssz, 20240501ull);
    report(name, "set_descriptor", st, NULL, 0, dt);
    cudnnStatus_t st2 = cudnnDropoutGetReserveSpaceSize(d, &rsz); /* size is library-specific: not reported */
    report(name, "reserve_size", st2, NULL, 0, dt);
    void *x = dev_fill_so(cnt, dt, 241, 1, 0.5), *y = dev_zero(bytes), *dx = dev_zero(bytes), *rs = dev_zero(rsz);
    cudnnStatus_t sf = cudnnDropoutForward(H, dd, d, x, d, y, rs, rsz);
    cudnnStatus_t sb = sf == CUDNN_STATUS_SUCCESS ? cudnnDropoutBackward(H, dd, d, y, d, dx, rs, rsz) : sf;
    report(name, "fwd", sf, NULL, 0, dt);
    report(name, "bwd", sb, NULL, 0, dt);
    if (sf == CUDNN_STATUS_SUCCESS && sb == CUDNN_STATUS_SUCCESS) {
        unsigned char *hx = malloc(bytes), *hy = malloc(bytes), *hdx = malloc(bytes);
        cudaDeviceSynchronize();
        cudaMemcpy(hx, x, bytes, cudaMemcpyDeviceToHost);
        cudaMemcpy(hy, y, bytes, cudaMemcpyDeviceToHost);
        cudaMemcpy(hdx, dx, bytes, cudaMemcpyDeviceToHost);
        size_t kept = 0, mask_mismatch = 0;
        double rmin = INFINITY, rmax = -INFINITY, gmin = INFINITY, gmax = -INFINITY;
        for (size_t i = 0; i < cnt; i++) {
            double xv = get(hx, dt, i), yv = get(hy, dt, i), gv = get(hdx, dt, i);
            mask_mismatch += (yv == 0) != (gv == 0);
            if (yv == 0) continue;
            kept++;
            rmin = fmin(rmin, yv / xv); rmax = fmax(rmax, yv / xv);
            gmin = fmin(gmin, gv / xv); gmax = fmax(gmax, gv / xv);
        }
        float v[6] = {(float)(round((double)kept / (double)cnt / 0.05) * 0.05), (float)rmin, (float)rmax, (float)gmin, (float)gmax,
                      (float)mask_mismatch};
        report_host(name, "kept_fraction_yx_min_max_dxx_min_max_mask_mismatch", CUDNN_STATUS_SUCCESS, v, 6);
        free(hx); free(hy); free(hdx);
    }
    cudaFree(x); cudaFree(y); cudaFree(dx); cudaFree(rs); cudaFree(states);
    cudnnDestroyDropoutDescriptor(dd);
    cudnnDestroyTensorDescriptor(d);
}

/* ---------------------------------------------------------------- descriptor getters
 * What each family's descriptor getter returns after its setter, as numbers (enum values,
 * sizes, strides, coefficients): the two libraries must agree value for value. */
static void desc_getters(void)
{
    cudnnStatus_t st;
    {   /* tensor: 4-d with explicit strides, its size in bytes */
        cudnnTensorDescriptor_t d;
        cudnnCreateTensorDescriptor(&d);
        st = cudnnSetTensor4dDescriptorEx(d, CUDNN_DATA_FLOAT, 2, 3, 4, 5, 100, 30, 6, 1);
        cudnnDataType_t dt = CUDNN_DATA_DOUBLE;
        int v[8] = {0};
        size_t bytes = 0;
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnGetTensor4dDescriptor(d, &dt, v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6, v + 7);
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnGetTensorSizeInBytes(d, &bytes);
        const float h[10] = {(float)dt, (float)v[0], (float)v[1], (float)v[2], (float)v[3], (float)v[4], (float)v[5], (float)v[6], (float)v[7],
                             (float)bytes};
        report_host("desc_tensor4d_ex", "get", st, h, 10);
        cudnnDestroyTensorDescriptor(d);
    }
    {   /* activation: mode, NaN option, coefficient; swish beta */
        cudnnActivationDescriptor_t a;
        cudnnCreateActivationDescriptor(&a);
        st = cudnnSetActivationDescriptor(a, CUDNN_ACTIVATION_CLIPPED_RELU, CUDNN_PROPAGATE_NAN, 6.5);
        cudnnActivationMode_t m = CUDNN_ACTIVATION_IDENTITY;
        cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN;
        double coef = 0, beta = 0;
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnGetActivationDescriptor(a, &m, &nan, &coef);
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnSetActivationDescriptorSwishBeta(a, 1.75);
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnGetActivationDescriptorSwishBeta(a, &beta);
        const float h[4] = {(float)m, (float)nan, (float)coef, (float)beta};
        report_host("desc_activation", "get", st, h, 4);
        cudnnDestroyActivationDescriptor(a);
    }
    {   /* op tensor and reduce tensor */
        cudnnOpTensorDescriptor_t o;
        cudnnCreateOpTensorDescriptor(&o);
        st = cudnnSetOpTensorDescriptor(o, CUDNN_OP_TENSOR_MAX, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN);
        cudnnOpTensorOp_t op = CUDNN_OP_TENSOR_ADD;
        cudnnDataType_t dt = CUDNN_DATA_DOUBLE;
        cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN;
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnGetOpTensorDescriptor(o, &op, &dt, &nan);
        const float h[3] = {(float)op, (float)dt, (float)nan};
        report_host("desc_op_tensor", "get", st, h, 3);
        cudnnDestroyOpTensorDescriptor(o);
        cudnnReduceTensorDescriptor_t r;
        cudnnCreateReduceTensorDescriptor(&r);
        st = cudnnSetReduceTensorDescriptor(r, CUDNN_REDUCE_TENSOR_AMAX, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN,
                                            CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES);
        cudnnReduceTensorOp_t rop = CUDNN_REDUCE_TENSOR_ADD;
        cudnnReduceTensorIndices_t ri = CUDNN_REDUCE_TENSOR_NO_INDICES;
        cudnnIndicesType_t it = CUDNN_64BIT_INDICES;
        dt = CUDNN_DATA_DOUBLE;
        nan = CUDNN_NOT_PROPAGATE_NAN;
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnGetReduceTensorDescriptor(r, &rop, &dt, &nan, &ri, &it);
        const float g[5] = {(float)rop, (float)dt, (float)nan, (float)ri, (float)it};
        report_host("desc_reduce_tensor", "get", st, g, 5);
        cudnnDestroyReduceTensorDescriptor(r);
    }
    {   /* pooling 2-d, then N-d (3 dims) read back through both getters */
        cudnnPoolingDescriptor_t p;
        cudnnCreatePoolingDescriptor(&p);
        st = cudnnSetPooling2dDescriptor(p, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, CUDNN_PROPAGATE_NAN, 3, 2, 1, 0, 2, 1);
        cudnnPoolingMode_t m = CUDNN_POOLING_MAX;
        cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN;
        int v[6] = {0};
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnGetPooling2dDescriptor(p, &m, &nan, v, v + 1, v + 2, v + 3, v + 4, v + 5);
        const float h[8] = {(float)m, (float)nan, (float)v[0], (float)v[1], (float)v[2], (float)v[3], (float)v[4], (float)v[5]};
        report_host("desc_pooling2d", "get", st, h, 8);
        static const int win[3] = {2, 3, 4}, pad[3] = {1, 0, 2}, str[3] = {2, 2, 1};
        st = cudnnSetPoolingNdDescriptor(p, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_NOT_PROPAGATE_NAN, 3, win, pad, str);
        int nd = 0, w[3] = {0}, pd[3] = {0}, sd[3] = {0};
        m = CUDNN_POOLING_MAX;
        nan = CUDNN_PROPAGATE_NAN;
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnGetPoolingNdDescriptor(p, 3, &m, &nan, &nd, w, pd, sd);
        const float g[12] = {(float)m, (float)nan, (float)nd, (float)w[0], (float)w[1], (float)w[2], (float)pd[0], (float)pd[1], (float)pd[2],
                             (float)sd[0], (float)sd[1], (float)sd[2]};
        report_host("desc_pooling_nd", "get", st, g, 12);
        cudnnDestroyPoolingDescriptor(p);
    }
    {   /* LRN: the defaults a new descriptor holds, then set values */
        cudnnLRNDescriptor_t l;
        cudnnCreateLRNDescriptor(&l);
        unsigned n0 = 0, n1 = 0;
        double a0 = 0, b0 = 0, k0 = 0, a1 = 0, b1 = 0, k1 = 0;
        st = cudnnGetLRNDescriptor(l, &n0, &a0, &b0, &k0);
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnSetLRNDescriptor(l, 7, 2.5e-4, 0.5, 1.5);
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnGetLRNDescriptor(l, &n1, &a1, &b1, &k1);
        const float h[8] = {(float)n0, (float)a0, (float)b0, (float)k0, (float)n1, (float)a1, (float)b1, (float)k1};
        report_host("desc_lrn", "get", st, h, 8);
        cudnnDestroyLRNDescriptor(l);
    }
    {   /* tensor transform: format, paddings, folds, direction */
        cudnnTensorTransformDescriptor_t t;
        cudnnCreateTensorTransformDescriptor(&t);
        static const int32_t pb[4] = {0, 1, 2, 0}, pa[4] = {0, 0, 1, 3};
        static const uint32_t fold[2] = {2, 3};
        st = cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NHWC, pb, pa, fold, CUDNN_TRANSFORM_FOLD);
        cudnnTensorFormat_t fmt = CUDNN_TENSOR_NCHW;
        int32_t gb[4] = {0}, ga[4] = {0};
        uint32_t gf[2] = {0};
        cudnnFoldingDirection_t dir = CUDNN_TRANSFORM_UNFOLD;
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnGetTensorTransformDescriptor(t, 4, &fmt, gb, ga, gf, &dir);
        const float h[12] = {(float)fmt, (float)gb[0], (float)gb[1], (float)gb[2], (float)gb[3], (float)ga[0], (float)ga[1], (float)ga[2],
                             (float)ga[3], (float)gf[0], (float)gf[1], (float)dir};
        report_host("desc_tensor_transform", "get", st, h, 12);
        cudnnDestroyTensorTransformDescriptor(t);
    }
}

/* cudnnGetDropoutDescriptor and cudnnRestoreDropoutDescriptor: the getter returns the rate,
 * states pointer and seed of a set descriptor; a second descriptor restored over the same states
 * (after a forward through the first) drops elements at the set rate. Whether the restored
 * descriptor repeats the first one's mask is library-specific (docs/compat.md: NVIDIA's forward
 * advances its states, FreeDNN's mask is a function of the seed), so it is not compared. */
static void dropout_restore(void)
{
    enum { N = 4, C = 16, HW = 16 }; /* 16384 elements: the kept fraction of 0.5 is 6 standard deviations inside its bin */
    const size_t cnt = (size_t)N * C * HW * HW, bytes = cnt * 4;
    const float p = 0.5f;
    const unsigned long long seed = 777;
    cudnnTensorDescriptor_t d = t4(CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, HW, HW);
    cudnnDropoutDescriptor_t d1, d2;
    cudnnCreateDropoutDescriptor(&d1);
    cudnnCreateDropoutDescriptor(&d2);
    size_t ssz = 0, rsz = 0;
    cudnnDropoutGetStatesSize(H, &ssz);
    cudnnDropoutGetReserveSpaceSize(d, &rsz);
    void *states = dev_zero(ssz), *x = dev_fill_so(cnt, CUDNN_DATA_FLOAT, 99, 1, 0.5), *y = dev_zero(bytes), *r = dev_zero(rsz);
    cudnnStatus_t st = cudnnSetDropoutDescriptor(d1, H, p, states, ssz, seed);
    float gp = 0;
    void *gs = NULL;
    unsigned long long gseed = 0;
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnGetDropoutDescriptor(d1, H, &gp, &gs, &gseed);
    const float g[3] = {gp, (float)(gs == states), (float)gseed};
    report_host("f32_dropout_desc", "get", st, g, 3);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnDropoutForward(H, d1, d, x, d, y, r, rsz);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnRestoreDropoutDescriptor(d2, H, p, states, ssz, seed);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnDropoutForward(H, d2, d, x, d, y, r, rsz);
    float v[3] = {0, 0, 0};
    if (st == CUDNN_STATUS_SUCCESS) {
        float *hx = malloc(bytes), *hy = malloc(bytes);
        cudaDeviceSynchronize();
        cudaMemcpy(hx, x, bytes, cudaMemcpyDeviceToHost);
        cudaMemcpy(hy, y, bytes, cudaMemcpyDeviceToHost);
        size_t kept = 0;
        double rmin = INFINITY, rmax = -INFINITY;
        for (size_t i = 0; i < cnt; i++) {
            if (hy[i] == 0) continue;
            kept++;
            rmin = fmin(rmin, hy[i] / hx[i]);
            rmax = fmax(rmax, hy[i] / hx[i]);
        }
        v[0] = (float)(round((double)kept / (double)cnt / 0.05) * 0.05);
        v[1] = (float)rmin;
        v[2] = (float)rmax;
        free(hx);
        free(hy);
    }
    report_host("f32_dropout_restore", "kept_fraction_yx_min_max", st, v, 3);
    cudaFree(states); cudaFree(x); cudaFree(y); cudaFree(r);
    cudnnDestroyDropoutDescriptor(d1);
    cudnnDestroyDropoutDescriptor(d2);
    cudnnDestroyTensorDescriptor(d);
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

    /* fused batch norm (Ex): NHWC half is the fused kernels' home; FLOAT NCHW / NHWC plain BN */
    batchnorm_ex(CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN);
    batchnorm_ex(CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN_ACTIVATION);
    batchnorm_ex(CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION);
    batchnorm_ex(CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN);
    batchnorm_ex(CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ACTIVATION);
    batchnorm_ex(CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN);
    batchnorm_ex(CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN);
    batchnorm_ex(CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ACTIVATION);
    normalization(CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CUDNN_NORM_ALGO_STANDARD, CUDNN_NORM_OPS_NORM);
    normalization(CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, CUDNN_NORM_ALGO_STANDARD, CUDNN_NORM_OPS_NORM);
    normalization(CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, CUDNN_NORM_ALGO_PERSIST, CUDNN_NORM_OPS_NORM);
    normalization(CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, CUDNN_NORM_ALGO_PERSIST, CUDNN_NORM_OPS_NORM_ACTIVATION);
    normalization(CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, CUDNN_NORM_ALGO_PERSIST, CUDNN_NORM_OPS_NORM_ADD_ACTIVATION);
    divnorm(CUDNN_DATA_FLOAT, 0, 5, 1.0, 0.75, 2.0);
    divnorm(CUDNN_DATA_FLOAT, 1, 3, 0.5, 0.5, 1.0);
    divnorm(CUDNN_DATA_HALF, 0, 5, 1.0, 0.75, 2.0);
    spatial_tf(CUDNN_DATA_FLOAT);
    spatial_tf(CUDNN_DATA_HALF);
    {
        static const int s4[4] = {2, 3, 4, 5}, s8[4] = {2, 3, 4, 6};
        static const int padc[4] = {0, 0, 0, 0}, padc_after[4] = {0, 1, 0, 0};
        static const int padhw_before[4] = {0, 0, 1, 2}, padhw_after[4] = {0, 0, 2, 1};
        static const unsigned fold22[2] = {2, 2};
        transform_ex("nchw_to_nhwc", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, s4, NULL, NULL, NULL);
        transform_ex("nchw_to_nhwc", CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, s4, NULL, NULL, NULL);
        transform_ex("nchw_to_nhwc_pad_c", CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, s4, padc, padc_after, NULL);
        transform_ex("nchw_to_nhwc_pad_c", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, s4, padc, padc_after, NULL);
        transform_ex("nchw_pad_hw", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s4, padhw_before, padhw_after, NULL);
        transform_ex("nchw_fold_2x2", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s8, NULL, NULL, fold22);
        /* unequal folds: tell whether NVIDIA's phase index runs H-major or W-major (the 2x2
         * case showed phase-major channels, c_out = phase*C + c, but cannot tell that) */
        static const unsigned fold23[2] = {2, 3};
        transform_ex("nchw_fold_2x3", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s8, NULL, NULL, fold23);
    }
    {
        static const int w333[3] = {3, 3, 3}, p111[3] = {1, 1, 1}, s222[3] = {2, 2, 2};
        static const int w232[3] = {2, 3, 2}, p010[3] = {0, 1, 0}, s212[3] = {2, 1, 2};
        pooling3d("w333_p111_s222_ncdhw", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, w333, p111, s222);
        pooling3d("w232_p010_s212_ncdhw", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, w232, p010, s212);
        pooling3d("w333_p111_s222_ndhwc", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, w333, p111, s222);
        pooling3d("w333_p111_s222_ndhwc", CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, w333, p111, s222);
    }
    {
        static const int c4[4] = {2, 4, 5, 6}, b_c[4] = {1, 4, 1, 1}, b_hw[4] = {1, 1, 5, 6}, b_1[4] = {1, 1, 1, 1};
        static const int b_nc[4] = {2, 4, 1, 1};
        static const int c5[5] = {2, 3, 4, 5, 3}, b5_c[5] = {1, 3, 1, 1, 1};
        add_tensor("bias_c_nchw", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, c4, b_c);
        add_tensor("bias_c_nhwc", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 4, c4, b_c);
        add_tensor("bias_c_nhwc", CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, 4, c4, b_c);
        add_tensor("bias_hw_nchw", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, c4, b_hw);
        add_tensor("bias_nc_nchw", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, c4, b_nc);
        add_tensor("bias_scalar_nchw", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, c4, b_1);
        add_tensor("full_nchw", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, c4, c4);
        add_tensor("bias_c_ncdhw", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, c5, b5_c);
    }
    dropout(CUDNN_DATA_FLOAT, 0.5f);
    dropout(CUDNN_DATA_FLOAT, 0.25f);
    dropout(CUDNN_DATA_HALF, 0.5f);
    dropout_restore();
    desc_getters();

    cudnnDestroy(H);
    return 0;
}
