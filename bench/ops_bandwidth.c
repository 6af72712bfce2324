/* Memory-bound ops on the GPU: achieved GB/s of batch norm (forward training and inference),
 * softmax, pooling, activation and dropout on large tensors, next to the device-to-device copy
 * bandwidth measured in the same run. Bytes counted: the minimum the op must move, each tensor
 * it needs read or written once (e.g. batch-norm backward: x, dy read, dx written; max-pooling
 * backward: x, y, dy read, dx written; average-pooling backward: dy read, dx written).
 * Columns: time per call, GB/s, % of the device copy.
 *   ops_bandwidth [N C H W [half]]   (default 32 256 56 56, FLOAT, NCHW and NHWC; half: HALF data,
 *   FLOAT batch-norm parameters, the bytes counted at 2 an element)
 * The same source built against NVIDIA's cuDNN (OPS_BW_NVIDIA, target ops_bandwidth_nvidia)
 * gives its figures for the same calls, side by side. */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "cudnn.h"
#ifdef OPS_BW_NVIDIA
#define LIB_NAME "NVIDIA cuDNN"
#else
#include "freednn.h"
#define LIB_NAME "FreeDNN"
#endif

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudnnStatus_t s_ = (x);                                                                 \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                       \
            char m_[512];                                                                       \
            cudnnGetLastErrorString(m_, sizeof m_);                                             \
            printf("  %-34s %s (%s)\n", name, cudnnGetErrorString(s_), m_);                     \
            return;                                                                             \
        }                                                                                       \
    } while (0)

static cudaEvent_t e0, e1;
static int iters = 20;
static cudnnDataType_t DT = CUDNN_DATA_FLOAT; /* of x, y, dy, dx */
static size_t ES = 4;                         /* its bytes */

static void report(const char *name, double bytes, float ms, double copy_gbs)
{
    double gbs = bytes / (ms / iters * 1e-3) / 1e9;
    printf("  %-36s %7.3f ms %7.1f GB/s %5.1f%%\n", name, ms / iters, gbs, 100 * gbs / copy_gbs);
}

/* Runs CALL once (checked), then iters times between two events, and prints the row. */
#define TIME(label, bytes, CALL)                                                                \
    do {                                                                                        \
        float ms_;                                                                              \
        name = (label);                                                                         \
        CK(CALL);                                                                               \
        cudaEventRecord(e0, 0);                                                                 \
        for (int i_ = 0; i_ < iters; i_++) (void)(CALL);                                        \
        cudaEventRecord(e1, 0);                                                                 \
        cudaEventSynchronize(e1);                                                               \
        cudaEventElapsedTime(&ms_, e0, e1);                                                     \
        report(name, (bytes), ms_, k->copy);                                                    \
    } while (0)

typedef struct {
    cudnnHandle_t h;
    cudnnTensorDescriptor_t x, bn;
    void *a, *b, *d, *scale, *bias, *mean, *var, *smean, *sinv, *dscale, *dbias, *reserve;
    size_t n, c;
    double copy;
} ctx;

static void run_all(ctx *k, const char *layout)
{
    const char *name = "";
    float one = 1, zero = 0;
    double T = (double)k->n * ES;
    printf(" layout %s\n", layout);
    TIME("bn fwd training (SPATIAL)", 2 * T,
         cudnnBatchNormalizationForwardTraining(k->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, k->x, k->a, k->x, k->b, k->bn, k->scale,
                                                k->bias, 0.1, k->mean, k->var, 1e-5, k->smean, k->sinv));
    TIME("bn fwd training beta=1", 3 * T,
         cudnnBatchNormalizationForwardTraining(k->h, CUDNN_BATCHNORM_SPATIAL, &one, &one, k->x, k->a, k->x, k->b, k->bn, k->scale,
                                                k->bias, 0.1, k->mean, k->var, 1e-5, k->smean, k->sinv));
    TIME("bn fwd inference", 2 * T,
         cudnnBatchNormalizationForwardInference(k->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, k->x, k->a, k->x, k->b, k->bn, k->scale,
                                                 k->bias, k->mean, k->var, 1e-5));
    /* x, dy read, dx written */
    TIME("bn bwd (SPATIAL, saved stats)", 3 * T,
         cudnnBatchNormalizationBackward(k->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, k->x, k->a, k->x, k->d, k->x, k->b,
                                         k->bn, k->scale, k->dscale, k->dbias, 1e-5, k->smean, k->sinv));

    cudnnActivationDescriptor_t act;
    cudnnCreateActivationDescriptor(&act);
    cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0);
    TIME("activation fwd (RELU)", 2 * T, cudnnActivationForward(k->h, act, &one, k->x, k->a, &zero, k->x, k->b));
    /* RELU backward needs x (or y), dy; writes dx */
    TIME("activation bwd (RELU)", 3 * T,
         cudnnActivationBackward(k->h, act, &one, k->x, k->a, k->x, k->d, k->x, k->a, &zero, k->x, k->b));
    cudnnDestroyActivationDescriptor(act);

    TIME("softmax fwd (ACCURATE, CHANNEL)", 2 * T,
         cudnnSoftmaxForward(k->h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, k->x, k->a, &zero, k->x, k->b));
    TIME("softmax fwd (ACCURATE, INSTANCE)", 2 * T,
         cudnnSoftmaxForward(k->h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one, k->x, k->a, &zero, k->x, k->b));
    TIME("softmax bwd (ACCURATE, CHANNEL)", 3 * T,
         cudnnSoftmaxBackward(k->h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, k->x, k->a, k->x, k->d, &zero, k->x, k->b));
    TIME("softmax bwd (ACCURATE, INSTANCE)", 3 * T,
         cudnnSoftmaxBackward(k->h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one, k->x, k->a, k->x, k->d, &zero, k->x,
                              k->b));

    int nn, cc, hh, ww, s0, s1, s2, s3;
    cudnnDataType_t dt;
    cudnnGetTensor4dDescriptor(k->x, &dt, &nn, &cc, &hh, &ww, &s0, &s1, &s2, &s3);
    const cudnnTensorFormat_t fmt = s1 == 1 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    struct {
        const char *fwd, *bwd;
        cudnnPoolingMode_t mode;
        int win, pad, str;
    } pools[] = {{"max pooling fwd 2x2/2", "max pooling bwd 2x2/2", CUDNN_POOLING_MAX, 2, 0, 2},
                 {"max pooling fwd 3x3/2 pad 1", "max pooling bwd 3x3/2 pad 1", CUDNN_POOLING_MAX, 3, 1, 2},
                 {"avg pooling fwd 3x3/2 pad 1", "avg pooling bwd 3x3/2 pad 1", CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, 3, 1, 2}};
    for (int q = 0; q < 3; q++) {
        cudnnPoolingDescriptor_t pd;
        cudnnTensorDescriptor_t yd;
        int dn, dc, dh, dw;
        cudnnCreatePoolingDescriptor(&pd);
        cudnnCreateTensorDescriptor(&yd);
        cudnnSetPooling2dDescriptor(pd, pools[q].mode, CUDNN_NOT_PROPAGATE_NAN, pools[q].win, pools[q].win, pools[q].pad, pools[q].pad,
                                    pools[q].str, pools[q].str);
        cudnnGetPooling2dForwardOutputDim(pd, k->x, &dn, &dc, &dh, &dw);
        cudnnSetTensor4dDescriptor(yd, fmt, DT, dn, dc, dh, dw);
        const double Y = (double)dn * dc * dh * dw * ES;
        if (q != 2) TIME(pools[q].fwd, T + Y, cudnnPoolingForward(k->h, pd, &one, k->x, k->a, &zero, yd, k->b));
        /* the y of max pooling lives in b (just written), dy in d; dx goes to reserve. Minimum:
         * max reads x, y, dy and writes dx; average reads dy and writes dx. */
        TIME(pools[q].bwd, pools[q].mode == CUDNN_POOLING_MAX ? 2 * T + 2 * Y : T + Y,
             cudnnPoolingBackward(k->h, pd, &one, yd, k->b, yd, k->d, k->x, k->a, &zero, k->x, k->reserve));
        cudnnDestroyPoolingDescriptor(pd);
        cudnnDestroyTensorDescriptor(yd);
    }

    cudnnDropoutDescriptor_t dd;
    size_t ssz = 0, rsz = 0;
    void *states = NULL;
    cudnnCreateDropoutDescriptor(&dd);
    cudnnDropoutGetStatesSize(k->h, &ssz);
    cudaMalloc(&states, ssz ? ssz : 1);
    cudnnSetDropoutDescriptor(dd, k->h, 0.5f, states, ssz, 1234);
    cudnnDropoutGetReserveSpaceSize(k->x, &rsz);
    if (rsz <= k->n * 8) TIME("dropout fwd (p=0.5)", 2 * T + (double)rsz, cudnnDropoutForward(k->h, dd, k->x, k->a, k->x, k->b, k->reserve, rsz));
    cudnnDestroyDropoutDescriptor(dd);
    cudaFree(states);
}

int main(int argc, char **argv)
{
    int N = 32, C = 256, H = 56, W = 56;
    if (argc >= 5) {
        N = atoi(argv[1]);
        C = atoi(argv[2]);
        H = atoi(argv[3]);
        W = atoi(argv[4]);
    }
    if (argc >= 6 && argv[5][0] == 'h') DT = CUDNN_DATA_HALF, ES = 2;
    ctx k = {0};
    if (cudnnCreate(&k.h) != CUDNN_STATUS_SUCCESS) {
        printf("cudnnCreate failed\n");
        return 77;
    }
#ifndef OPS_BW_NVIDIA
    if (!freednnGetBackendName(k.h) || freednnGetBackendName(k.h)[0] != 'c' || freednnGetBackendName(k.h)[1] != 'u') {
        printf("needs the CUDA backend\n");
        return 77;
    }
#endif
    k.n = (size_t)N * C * H * W;
    k.c = (size_t)C;
    cudaMalloc(&k.a, k.n * 4);
    cudaMalloc(&k.b, k.n * 4);
    cudaMalloc(&k.d, k.n * 4);
    cudaMalloc(&k.reserve, k.n * 8);
    {   /* x: a ramp of small integers (so the reductions and maxima see varied values); dy: ones.
         * HALF: uploaded as FLOAT into b, then converted by cudnnTransformTensor */
        cudnnTensorDescriptor_t fd, hd;
        cudnnCreateTensorDescriptor(&fd);
        cudnnCreateTensorDescriptor(&hd);
        cudnnSetTensor4dDescriptor(fd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W);
        cudnnSetTensor4dDescriptor(hd, CUDNN_TENSOR_NCHW, DT, N, C, H, W);
        float *hbuf = malloc(k.n * 4), f1 = 1, f0 = 0;
        for (int t = 0; t < 2; t++) {
            for (size_t i = 0; i < k.n; i++) hbuf[i] = t == 0 ? (float)(int)(i % 13) - 6.0f : 1.0f;
            void *dst = t == 0 ? k.a : k.d;
            if (DT == CUDNN_DATA_FLOAT) {
                cudaMemcpy(dst, hbuf, k.n * 4, cudaMemcpyHostToDevice);
            } else {
                cudaMemcpy(k.b, hbuf, k.n * 4, cudaMemcpyHostToDevice);
                if (cudnnTransformTensor(k.h, &f1, fd, k.b, &f0, hd, dst) != CUDNN_STATUS_SUCCESS) printf("conversion to HALF failed\n");
            }
        }
        free(hbuf);
        cudnnDestroyTensorDescriptor(fd);
        cudnnDestroyTensorDescriptor(hd);
    }
    void **pp[] = {&k.scale, &k.bias, &k.mean, &k.var, &k.smean, &k.sinv, &k.dscale, &k.dbias};
    for (int i = 0; i < 8; i++) {
        cudaMalloc(pp[i], k.c * 4);
        cudaMemset(*pp[i], 0, k.c * 4);
    }
    {   /* saved inverse std-dev and running variance of 1 (the backward and inference read them) */
        float *ones = malloc(k.c * 4);
        for (size_t i = 0; i < k.c; i++) ones[i] = 1.0f;
        cudaMemcpy(k.var, ones, k.c * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(k.sinv, ones, k.c * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(k.scale, ones, k.c * 4, cudaMemcpyHostToDevice);
        free(ones);
    }
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float ms;
    cudaMemcpy(k.b, k.a, k.n * ES, cudaMemcpyDeviceToDevice);
    cudaEventRecord(e0, 0);
    for (int i = 0; i < iters; i++) cudaMemcpyAsync(k.b, k.a, k.n * ES, cudaMemcpyDeviceToDevice, 0);
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    k.copy = 2.0 * k.n * ES / (ms / iters * 1e-3) / 1e9;
    printf(LIB_NAME " ops bandwidth: %s %dx%dx%dx%d (%.1f MB per tensor); device copy %.1f GB/s (read+write)\n",
           DT == CUDNN_DATA_FLOAT ? "FLOAT" : "HALF", N, C, H, W, k.n * ES / 1e6, k.copy);
    cudnnCreateTensorDescriptor(&k.x);
    cudnnCreateTensorDescriptor(&k.bn);
    cudnnTensorFormat_t fmts[2] = {CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NHWC};
    for (int f = 0; f < 2; f++) {
        cudnnSetTensor4dDescriptor(k.x, fmts[f], DT, N, C, H, W);
        cudnnDeriveBNTensorDescriptor(k.bn, k.x, CUDNN_BATCHNORM_SPATIAL);
        run_all(&k, f ? "NHWC" : "NCHW");
    }
    cudnnDestroy(k.h);
    return 0;
}
