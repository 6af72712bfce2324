/* Memory-bound ops on the GPU: achieved GB/s of batch norm (forward training and inference),
 * softmax, pooling, activation and dropout on large tensors, next to the device-to-device copy
 * bandwidth measured in the same run. Bytes counted: each tensor read or written once.
 *   ops_bandwidth [N C H W]   (default 32 256 56 56, FLOAT, NCHW and NHWC) */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "cudnn.h"
#include "freednn.h"

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

static void report(const char *name, double bytes, float ms, double copy_gbs)
{
    double gbs = bytes / (ms / iters * 1e-3) / 1e9;
    printf("  %-34s %8.3f ms  %8.1f GB/s  %5.1f%% of copy\n", name, ms / iters, gbs, 100 * gbs / copy_gbs);
}

typedef struct {
    cudnnHandle_t h;
    cudnnTensorDescriptor_t x, bn;
    void *a, *b, *scale, *bias, *mean, *var, *smean, *sinv, *reserve;
    size_t n, c;
    double copy;
} ctx;

static void run_all(ctx *k, const char *layout)
{
    const char *name = "";
    float one = 1, zero = 0, ms;
    double T = (double)k->n * 4;
    printf(" layout %s\n", layout);
    name = "batchnorm fwd training (SPATIAL)";
    CK(cudnnBatchNormalizationForwardTraining(k->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, k->x, k->a, k->x, k->b, k->bn, k->scale,
                                              k->bias, 0.1, k->mean, k->var, 1e-5, k->smean, k->sinv));
    cudaEventRecord(e0, 0);
    for (int i = 0; i < iters; i++)
        cudnnBatchNormalizationForwardTraining(k->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, k->x, k->a, k->x, k->b, k->bn, k->scale,
                                               k->bias, 0.1, k->mean, k->var, 1e-5, k->smean, k->sinv);
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    report(name, 2 * T, ms, k->copy);
    name = "batchnorm fwd inference";
    CK(cudnnBatchNormalizationForwardInference(k->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, k->x, k->a, k->x, k->b, k->bn, k->scale,
                                               k->bias, k->mean, k->var, 1e-5));
    cudaEventRecord(e0, 0);
    for (int i = 0; i < iters; i++)
        cudnnBatchNormalizationForwardInference(k->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, k->x, k->a, k->x, k->b, k->bn, k->scale,
                                                k->bias, k->mean, k->var, 1e-5);
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    report(name, 2 * T, ms, k->copy);

    cudnnActivationDescriptor_t act;
    cudnnCreateActivationDescriptor(&act);
    cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0);
    name = "activation fwd (RELU)";
    CK(cudnnActivationForward(k->h, act, &one, k->x, k->a, &zero, k->x, k->b));
    cudaEventRecord(e0, 0);
    for (int i = 0; i < iters; i++) cudnnActivationForward(k->h, act, &one, k->x, k->a, &zero, k->x, k->b);
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    report(name, 2 * T, ms, k->copy);
    cudnnDestroyActivationDescriptor(act);

    name = "softmax fwd (ACCURATE, CHANNEL)";
    CK(cudnnSoftmaxForward(k->h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, k->x, k->a, &zero, k->x, k->b));
    cudaEventRecord(e0, 0);
    for (int i = 0; i < iters; i++)
        cudnnSoftmaxForward(k->h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, k->x, k->a, &zero, k->x, k->b);
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    report(name, 2 * T, ms, k->copy);

    cudnnPoolingDescriptor_t pd;
    cudnnTensorDescriptor_t yd;
    cudnnCreatePoolingDescriptor(&pd);
    cudnnCreateTensorDescriptor(&yd);
    cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2);
    int dn, dc, dh, dw, nn, cc, hh, ww, s0, s1, s2, s3;
    cudnnDataType_t dt;
    cudnnGetTensor4dDescriptor(k->x, &dt, &nn, &cc, &hh, &ww, &s0, &s1, &s2, &s3);
    cudnnGetPooling2dForwardOutputDim(pd, k->x, &dn, &dc, &dh, &dw);
    cudnnSetTensor4dDescriptor(yd, s1 == 1 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, dn, dc, dh, dw);
    name = "max pooling fwd 2x2/2";
    CK(cudnnPoolingForward(k->h, pd, &one, k->x, k->a, &zero, yd, k->b));
    cudaEventRecord(e0, 0);
    for (int i = 0; i < iters; i++) cudnnPoolingForward(k->h, pd, &one, k->x, k->a, &zero, yd, k->b);
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    report(name, 1.25 * T, ms, k->copy);
    cudnnDestroyPoolingDescriptor(pd);
    cudnnDestroyTensorDescriptor(yd);

    cudnnDropoutDescriptor_t dd;
    size_t ssz = 0, rsz = 0;
    void *states = NULL;
    cudnnCreateDropoutDescriptor(&dd);
    cudnnDropoutGetStatesSize(k->h, &ssz);
    cudaMalloc(&states, ssz ? ssz : 1);
    cudnnSetDropoutDescriptor(dd, k->h, 0.5f, states, ssz, 1234);
    cudnnDropoutGetReserveSpaceSize(k->x, &rsz);
    name = "dropout fwd (p=0.5)";
    if (rsz <= k->n * 8) {
        CK(cudnnDropoutForward(k->h, dd, k->x, k->a, k->x, k->b, k->reserve, rsz));
        cudaEventRecord(e0, 0);
        for (int i = 0; i < iters; i++) cudnnDropoutForward(k->h, dd, k->x, k->a, k->x, k->b, k->reserve, rsz);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        report(name, 2 * T + (double)rsz, ms, k->copy);
    }
    cudnnDestroyDropoutDescriptor(dd);
    cudaFree(states);
}

int main(int argc, char **argv)
{
    int N = 32, C = 256, H = 56, W = 56;
    if (argc == 5) {
        N = atoi(argv[1]);
        C = atoi(argv[2]);
        H = atoi(argv[3]);
        W = atoi(argv[4]);
    }
    ctx k = {0};
    if (cudnnCreate(&k.h) != CUDNN_STATUS_SUCCESS || !freednnGetBackendName(k.h) || freednnGetBackendName(k.h)[0] != 'c' ||
        freednnGetBackendName(k.h)[1] != 'u') {
        printf("needs the CUDA backend\n");
        return 77;
    }
    k.n = (size_t)N * C * H * W;
    k.c = (size_t)C;
    cudaMalloc(&k.a, k.n * 4);
    cudaMalloc(&k.b, k.n * 4);
    cudaMalloc(&k.reserve, k.n * 8);
    cudaMemset(k.a, 0, k.n * 4);
    void **pp[] = {&k.scale, &k.bias, &k.mean, &k.var, &k.smean, &k.sinv};
    for (int i = 0; i < 6; i++) {
        cudaMalloc(pp[i], k.c * 4);
        cudaMemset(*pp[i], 0, k.c * 4);
    }
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float ms;
    cudaMemcpy(k.b, k.a, k.n * 4, cudaMemcpyDeviceToDevice);
    cudaEventRecord(e0, 0);
    for (int i = 0; i < iters; i++) cudaMemcpyAsync(k.b, k.a, k.n * 4, cudaMemcpyDeviceToDevice, 0);
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    k.copy = 2.0 * k.n * 4 / (ms / iters * 1e-3) / 1e9;
    printf("FreeDNN ops bandwidth: FLOAT %dx%dx%dx%d (%.1f MB per tensor); device copy %.1f GB/s (read+write)\n", N, C, H, W,
           k.n * 4 / 1e6, k.copy);
    cudnnCreateTensorDescriptor(&k.x);
    cudnnCreateTensorDescriptor(&k.bn);
    cudnnTensorFormat_t fmts[2] = {CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NHWC};
    for (int f = 0; f < 2; f++) {
        cudnnSetTensor4dDescriptor(k.x, fmts[f], CUDNN_DATA_FLOAT, N, C, H, W);
        cudnnDeriveBNTensorDescriptor(k.bn, k.x, CUDNN_BATCHNORM_SPATIAL);
        run_all(&k, f ? "NHWC" : "NCHW");
    }
    cudnnDestroy(k.h);
    return 0;
}
