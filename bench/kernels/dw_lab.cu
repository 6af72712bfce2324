/* Depthwise 3x3 convolution timings through the public cuDNN API of FreeDNN (host code only; the
 * kernels are the library's src/cuda/conv_depthwise.cu). Layers: N=32, C = 144/192/384,
 * H = W = 56/28/14, stride 1 and 2, padding 1, NHWC x/y, KRSC filter, groups = C, HALF (FLOAT
 * compute) and FLOAT. Each direction runs with the algorithm its depthwise entry reports
 * (forward IMPLICIT_GEMM, backward data ALGO_0, backward filter ALGO_0; the heuristic's first
 * choice is printed next to it) and is timed with CUDA events around 20 calls after one warm-up.
 * GB/s counts the bytes of x + w + y once. The warm-up call of every direction runs on fresh
 * random integer data in [-2, 2] and its result is checked against the lab's own reference (one
 * GPU thread per output element, double accumulation): the sums are integers, exact in float
 * accumulation, so FLOAT must match to 1e-6 relative and HALF to its output rounding (1e-3
 * relative); the lab also checks (through the INFO log callback) that a __depthwise
 * implementation ran. Any mismatch or failed call prints FAIL.
 *   dw_lab [iters] [variant] [direction]    exit status 1 when any check or call fails
 * direction: 0 forward, 1 backward data, 2 backward filter (default: all three). The tiled
 * backward filter's shape can be swept with FREEDNN_CUDA_DW_BWT="cv,rows,bx" (see conv_depthwise.cu).
 * variant: 0 = the library's default kernels (3x3: row-tiled forward / stride-1 backward data,
 * tiled backward filter), 1 = its general kernels for every direction (FREEDNN_CUDA_DW_OLD=1,
 * the kernels before the 3x3 forms), to time the two on the same build. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <cuda_fp16.h>
#include "cudnn.h"
#include "freednn.h" /* cudnnGetLastErrorString */

static int failures = 0, runs = 0, checks = 0;

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

/* ---- lab reference: 3x3, pad 1, stride st, cross-correlation, NHWC x/y (N,H,W,C), KRSC w (C,3,3) ---- */
__device__ __forceinline__ double ldd(const float *p) { return (double)*p; }
__device__ __forceinline__ double ldd(const __half *p) { return (double)__half2float(*p); }

template <typename T>
__global__ void ref_kernel(int dir, int N, int C, int H, int P, int st, const T *x, const T *w, const T *y, double *out)
{
    const long long total = dir == 0 ? (long long)N * P * P * C : dir == 1 ? (long long)N * H * H * C : (long long)C * 9;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        double acc = 0;
        if (dir == 0) { /* out = y[n][p][q][c] */
            const int c = (int)(i % C), q = (int)(i / C % P), p = (int)(i / C / P % P), n = (int)(i / C / P / P);
            for (int r = 0; r < 3; r++)
                for (int s = 0; s < 3; s++) {
                    const int ih = p * st - 1 + r, iw = q * st - 1 + s;
                    if (ih < 0 || ih >= H || iw < 0 || iw >= H) continue;
                    acc += ldd(x + (((long long)n * H + ih) * H + iw) * C + c) * ldd(w + c * 9 + r * 3 + s);
                }
        } else if (dir == 1) { /* out = dx[n][h][w][c] */
            const int c = (int)(i % C), iw = (int)(i / C % H), ih = (int)(i / C / H % H), n = (int)(i / C / H / H);
            for (int r = 0; r < 3; r++)
                for (int s = 0; s < 3; s++) {
                    const int ph = ih + 1 - r, pw = iw + 1 - s;
                    if (ph < 0 || pw < 0 || ph % st || pw % st || ph / st >= P || pw / st >= P) continue;
                    acc += ldd(y + (((long long)n * P + ph / st) * P + pw / st) * C + c) * ldd(w + c * 9 + r * 3 + s);
                }
        } else { /* out = dw[c][r][s] */
            const int c = (int)(i / 9), r = (int)(i % 9) / 3, s = (int)(i % 3);
            for (int n = 0; n < N; n++)
                for (int p = 0; p < P; p++)
                    for (int q = 0; q < P; q++) {
                        const int ih = p * st - 1 + r, iw = q * st - 1 + s;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= H) continue;
                        acc += ldd(y + (((long long)n * P + p) * P + q) * C + c) * ldd(x + (((long long)n * H + ih) * H + iw) * C + c);
                    }
        }
        out[i] = acc;
    }
}

/* random integers in [-2, 2] (fixed LCG) as dtype dt into the device buffer d of n elements */
static int fill_random(void *d, size_t n, cudnnDataType_t dt, unsigned seed)
{
    const size_t esz = dt == CUDNN_DATA_HALF ? 2 : 4;
    void *hbuf = malloc(n * esz);
    if (!hbuf) return 0;
    unsigned st = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        st = st * 1664525u + 1013904223u;
        const float v = (float)((int)((st >> 16) % 5u) - 2);
        if (dt == CUDNN_DATA_HALF) ((__half *)hbuf)[i] = __float2half(v);
        else ((float *)hbuf)[i] = v;
    }
    const int ok = cudaMemcpy(d, hbuf, n * esz, cudaMemcpyHostToDevice) == cudaSuccess;
    free(hbuf);
    return ok;
}

/* compares the n-element output got (device, dtype dt) with the reference (device doubles) */
static int check_output(const void *got, const double *ref, size_t n, cudnnDataType_t dt, double *maxerr)
{
    const size_t esz = dt == CUDNN_DATA_HALF ? 2 : 4;
    void *hg = malloc(n * esz);
    double *hr = (double *)malloc(n * sizeof(double));
    int ok = hg && hr && cudaMemcpy(hg, got, n * esz, cudaMemcpyDeviceToHost) == cudaSuccess &&
             cudaMemcpy(hr, ref, n * sizeof(double), cudaMemcpyDeviceToHost) == cudaSuccess;
    const double rel = dt == CUDNN_DATA_HALF ? 1e-3 : 1e-6;
    double worst = 0, maxref = 0;
    for (size_t i = 0; ok && i < n; i++) {
        const double g = dt == CUDNN_DATA_HALF ? (double)__half2float(((const __half *)hg)[i]) : (double)((const float *)hg)[i];
        const double e = fabs(g - hr[i]);
        if (!(e <= rel * fabs(hr[i]) + 1e-6)) ok = 0; /* NaN fails too */
        if (!(e <= worst)) worst = e;
        if (fabs(hr[i]) > maxref) maxref = fabs(hr[i]);
    }
    if (maxref == 0) ok = 0; /* an all-zero reference proves nothing */
    *maxerr = worst;
    free(hg);
    free(hr);
    return ok;
}

static int only_dir = -1; /* -1: all three directions */

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
    double *ref = NULL;
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
        if (only_dir >= 0 && dir != only_dir) continue;
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
        /* fresh inputs for the checked warm-up call */
        if (!fill_random(x, nx, dt, 1 + dir) || !fill_random(w, nw, dt, 11 + dir) || !fill_random(y, ny, dt, 21 + dir)) {
            printf("  FAIL filling the inputs\n");
            failures++;
            goto done;
        }
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
            if (it < 0) { /* check the warm-up result against the lab reference */
                const size_t nout = dir == 0 ? ny : dir == 1 ? nx : nw;
                double maxerr = 0;
                int ok = cudaMalloc(&ref, nout * sizeof(double)) == cudaSuccess;
                if (ok) {
                    const unsigned blocks = (unsigned)(dir == 2 ? (nout + 63) / 64 : (nout + 255) / 256 < 65535 * 16 ? (nout + 255) / 256 : 65535 * 16);
                    if (dt == CUDNN_DATA_HALF)
                        ref_kernel<__half><<<blocks, dir == 2 ? 64 : 256>>>(dir, N, C, H, P, stride, (const __half *)x, (const __half *)w,
                                                                          (const __half *)y, ref);
                    else
                        ref_kernel<float><<<blocks, dir == 2 ? 64 : 256>>>(dir, N, C, H, P, stride, (const float *)x, (const float *)w,
                                                                         (const float *)y, ref);
                    ok = cudaDeviceSynchronize() == cudaSuccess;
                }
                if (ok) ok = check_output(dir == 0 ? y : dir == 1 ? x : w, ref, nout, dt, &maxerr);
                if (ref) cudaFree(ref);
                ref = NULL;
                checks++;
                if (!ok) {
                    printf("  FAIL %s: result differs from the lab reference (max abs error %g)\n", dir_name[dir], maxerr);
                    failures++;
                }
            }
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
    if (ref) cudaFree(ref);
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
    const int variant = argc > 2 ? atoi(argv[2]) : 0;
    if (argc > 3) only_dir = atoi(argv[3]);
    if (only_dir > 2) only_dir = -1;
    if (variant == 1) setenv("FREEDNN_CUDA_DW_OLD", "1", 1);
    else if (variant != 0) {
        printf("dw_lab: FAIL unknown variant %d (0 = default kernels, 1 = general kernels)\n", variant);
        return 1;
    }
    cudnnHandle_t h;
    if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) {
        printf("dw_lab: FAIL cudnnCreate\n");
        return 1;
    }
    static const int Cs[] = {144, 192, 384}, Hs[] = {56, 28, 14};
    static const cudnnDataType_t Ts[] = {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT};
    printf("dw_lab: depthwise 3x3 pad 1, NHWC, %d calls per timing (time per call, GB/s of x+w+y), variant %d (%s kernels)\n",
           iters, variant, variant ? "general" : "default 3x3");
    for (int t = 0; t < 2; t++)
        for (int ci = 0; ci < 3; ci++)
            for (int hi = 0; hi < 3; hi++)
                for (int s = 1; s <= 2; s++) layer(h, Ts[t], 32, Cs[ci], Hs[hi], s, iters);
    cudnnDestroy(h);
    printf("dw_lab: %d timings, %d reference checks, %d failures: %s\n", runs, checks, failures, failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
