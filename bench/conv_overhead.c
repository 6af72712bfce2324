/* Host cost of a repeated convolution call: times many cudnnConvolutionForward calls on a tiny
 * problem (N=1 C=8 H=W=4 K=8 3x3, pad 1: almost no arithmetic, so the time is the library's
 * per-call overhead plus a launch) and many cudnnGetConvolutionForwardWorkspaceSize calls, and
 * prints nanoseconds per call. Runs on whichever backend FREEDNN_BACKEND selects.
 *
 *   conv_overhead [calls] [algo] [null]   (default 100000 calls, algo IMPLICIT_GEMM = 0)
 *
 * "null" shrinks the problem to N=C=K=H=W=1 with a 1x1 filter, so that on the CPU backend the
 * kernel's arithmetic no longer hides the dispatch cost.
 *
 * Both wall time and the calling thread's CPU time are printed: on a loaded machine the CPU
 * time is the stable number (run with OMP_NUM_THREADS=1 on the CPU backend to include all work).
 * On the CUDA backend the calls are issued in batches of 256 with a synchronisation between
 * batches that is not timed, so the launch queue never fills and the number is host time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "th.h"

#define CHECK(x)                                                                                          \
    do {                                                                                                  \
        cudnnStatus_t s_ = (x);                                                                           \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                                 \
            char m_[512];                                                                                 \
            cudnnGetLastErrorString(m_, sizeof m_);                                                       \
            fprintf(stderr, "conv_overhead: %s failed: %s (%s)\n", #x, cudnnGetErrorString(s_), m_);       \
            exit(1);                                                                                      \
        }                                                                                                 \
    } while (0)

static double clk_ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}
static double now_ns(void) { return clk_ns(CLOCK_MONOTONIC); }
static double cpu_ns(void) { return clk_ns(CLOCK_THREAD_CPUTIME_ID); }

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 100000;
    int algo = argc > 2 ? atoi(argv[2]) : (int)CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    if (calls < 1) calls = 1;
    const int null = argc > 3 && strcmp(argv[3], "null") == 0;
    const int N = 1, C = null ? 1 : 8, H = null ? 1 : 4, W = null ? 1 : 4, K = null ? 1 : 8, R = null ? 1 : 3, S = null ? 1 : 3;
    const int pad = null ? 0 : 1;
    cudnnHandle_t h = th_create_handle();
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CHECK(cudnnCreateTensorDescriptor(&xd));
    CHECK(cudnnCreateTensorDescriptor(&yd));
    CHECK(cudnnCreateFilterDescriptor(&wd));
    CHECK(cudnnCreateConvolutionDescriptor(&cd));
    CHECK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
    CHECK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S));
    CHECK(cudnnSetConvolution2dDescriptor(cd, pad, pad, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    int on, oc, oh, ow;
    CHECK(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &oc, &oh, &ow));
    CHECK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, oc, oh, ow));

    size_t xn = (size_t)N * C * H * W, wn = (size_t)K * C * R * S, yn = (size_t)on * oc * oh * ow;
    float *hx = malloc(xn * 4), *hw = malloc(wn * 4), *hy = malloc(yn * 4);
    for (size_t i = 0; i < xn; i++) hx[i] = (float)(i % 5) - 2.0f;
    for (size_t i = 0; i < wn; i++) hw[i] = (float)(i % 3) - 1.0f;
    void *x = th_alloc(h, xn * 4), *w = th_alloc(h, wn * 4), *y = th_alloc(h, yn * 4);
    th_upload(h, x, hx, xn * 4);
    th_upload(h, w, hw, wn * 4);
    size_t wsz = 0;
    CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, (cudnnConvolutionFwdAlgo_t)algo, &wsz));
    void *ws = wsz ? th_alloc(h, wsz) : NULL;
    const float one = 1.0f, zero = 0.0f;
    const int gpu = th_is_gpu(h);
    const long batch = gpu ? 256 : calls;

    /* warm-up: first-call costs (plan cache miss, lazy initialisation) are not what we measure */
    for (int i = 0; i < 100; i++)
        CHECK(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz, &zero, yd, y));
    th_sync(h);

    double fwd = 0, fwd_cpu = 0;
    for (long done = 0; done < calls;) {
        long m = calls - done < batch ? calls - done : batch;
        double t0 = now_ns(), c0 = cpu_ns();
        for (long i = 0; i < m; i++)
            CHECK(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz, &zero, yd, y));
        fwd += now_ns() - t0;
        fwd_cpu += cpu_ns() - c0;
        th_sync(h);
        done += m;
    }

    double t0 = now_ns(), c0 = cpu_ns();
    size_t acc = 0;
    for (long i = 0; i < calls; i++) {
        size_t s = 0;
        CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, (cudnnConvolutionFwdAlgo_t)algo, &s));
        acc += s;
    }
    double wsq = now_ns() - t0, wsq_cpu = cpu_ns() - c0;

    th_download(h, hy, y, yn * 4);
    double sum = 0;
    for (size_t i = 0; i < yn; i++) sum += hy[i];
    printf("conv_overhead: backend %s, algo %d, %s problem, %ld calls (checksum %.0f, ws %zu)\n", freednnGetBackendName(h), algo,
           null ? "null (1x1x1x1, 1x1 filter)" : "tiny (N1 C8 4x4 K8 3x3)", calls, sum, acc / (size_t)calls);
    /* wall: elapsed time; cpu: CPU time of the calling thread (not inflated when a loaded
     * machine preempts us; excludes other OpenMP threads' work) */
    printf("cudnnConvolutionForward                 %8.0f ns/call wall %8.0f ns/call cpu%s\n", fwd / (double)calls,
           fwd_cpu / (double)calls, gpu ? " (host time, launch included)" : "");
    printf("cudnnGetConvolutionForwardWorkspaceSize %8.0f ns/call wall %8.0f ns/call cpu\n", wsq / (double)calls, wsq_cpu / (double)calls);

    if (ws) th_free(h, ws);
    th_free(h, x);
    th_free(h, w);
    th_free(h, y);
    free(hx);
    free(hw);
    free(hy);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
    cudnnDestroy(h);
    return 0;
}
