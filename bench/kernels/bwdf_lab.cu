/* bwdf_lab: correctness and speed of the tensor-core implicit-GEMM backward-filter convolutions
 * (src/cuda/conv_bwd_filter_mma.cuh, its TF32 form conv_bwd_filter_tf32.cuh and the Hopper
 * kernel conv_bwd_filter_wgmma.cuh) on their own, outside the library.
 *   - small odd-shaped cases (stride 2/3, padding, dilation, both modes, alpha/beta with beta 0 /
 *     0.5 / -1, partial tiles, forced tile configurations and split counts, P*Q below 32):
 *     checked only;
 *   - the benchmark layers (N,C,H,W,K,RxS,stride,pad), HALF, BFLOAT16 and FLOAT (TF32), with the
 *     library's plan:
 *     checked, timed (20 launches after 3 warm-ups, cudaEvents; split reduction included) and
 *     checked to give bitwise the same dw on every launch (deterministic).
 * Every dw is compared with a naive GPU kernel (float accumulation): PASS when
 * max|dw - ref| / max|ref| < 1e-2. beta == 0 cases start from a NaN-filled dw (must not be read).
 * Exit status 1 if anything fails.
 * Usage: bwdf_lab [--quick | --small | --sweep | --sweep-tf32]   (--quick: no timing; --small: the
 * odd shapes only, for compute-sanitizer; --sweep: every tile configuration of every benchmark
 * layer, timed; --sweep-tf32: the same for FLOAT only, no small cases). BWDF_LAB_LAYER=i:
 * benchmark layer i in FLOAT only (a profiler run). */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <type_traits>
#define FDNN_BWDF_WG_LAB 1 /* every wgmma tile configuration */
#include "../../src/cuda/conv_bwd_filter_wgmma.cuh"
#include "../../src/cuda/conv_bwd_filter_wgmma_tf32.cuh"
#include "lab_util.cuh"

using namespace fdnn_bwdf;

struct Layer {
    int n, c, h, w, k, r, s, str, pad, dil, flip;
    float alpha, beta;
    int splits; /* forced split count (0: the library's plan) */
    int cfg;    /* forced tile configuration (-1: the library's plan) */
};

template <typename T> __device__ float tf(T v);
template <> __device__ float tf(__half v) { return __half2float(v); }
template <> __device__ float tf(__nv_bfloat16 v) { return __bfloat162float(v); }
template <> __device__ float tf(float v) { return v; }
template <typename T> __device__ T fromf(float v);
template <> __device__ __half fromf(float v) { return __float2half_rn(v); }
template <> __device__ __nv_bfloat16 fromf(float v) { return __float2bfloat16_rn(v); }
template <> __device__ float fromf(float v) { return v; }

/* deterministic pseudo-random values in [-1, 1], multiples of 1/64 (exact in every type, TF32
 * included) */
template <typename T>
__global__ void fill_kernel(T *p, long long n, unsigned seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned v = (unsigned)(i * 2654435761u) ^ seed;
        v ^= v >> 13; v *= 0x5bd1e995u; v ^= v >> 15;
        p[i] = fromf<T>((int)(v % 129) / 64.0f - 1.0f);
    }
}

constexpr int REF_SEG = 2048; /* npq rows per reference block row */

/* naive reference, one thread per stored dw element (k, r', s', c) and per segment of npq rows:
 * acc[e] += sum over the segment of dy[npq][k] * x[n, p*st-pad+r*dil, q*st-pad+s*dil, c], with
 * (r, s) = (R-1-r', S-1-s') for CUDNN_CONVOLUTION */
template <typename T>
__global__ void ref_kernel(const T *x, const T *dy, float *acc, BwdfParams P)
{
    const long long total = (long long)P.k * P.rsc;
    const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= total) return;
    const int c = (int)(e % P.c);
    const long long t = e / P.c;
    const int ss = (int)(t % P.s), rr = (int)((t / P.s) % P.r), k = (int)(t / ((long long)P.s * P.r));
    const int r = P.flip ? P.r - 1 - rr : rr, s = P.flip ? P.s - 1 - ss : ss;
    const int b = blockIdx.y * REF_SEG, end = min(b + REF_SEG, P.npq);
    float sum = 0.f;
    for (int m = b; m < end; m++) {
        const int q = m % P.q, p = (m / P.q) % P.p, n = m / (P.q * P.p);
        const int hh = p * P.sh - P.ph + r * P.dh, ww = q * P.sw - P.pw + s * P.dw;
        if (hh < 0 || hh >= P.h || ww < 0 || ww >= P.w_) continue;
        sum += tf(dy[(long long)m * P.k + k]) * tf(x[(((long long)n * P.h + hh) * P.w_ + ww) * P.c + c]);
    }
    atomicAdd(acc + e, sum);
}
template <typename T>
__global__ void ref_finish(float *acc, const T *dwold, long long total, float alpha, float beta)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        acc[i] = alpha * acc[i] + (beta != 0.f ? beta * tf(dwold[i]) : 0.f);
}

/* max |dw - ref| and max |ref| (as ordered ints of non-negative floats); NaN counts as +inf */
template <typename T>
__global__ void cmp_kernel(const T *y, const float *ref, long long n, unsigned *maxerr, unsigned *maxref)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float d = fabsf(tf(y[i]) - ref[i]);
        if (!(d == d)) d = INFINITY;
        atomicMax(maxerr, __float_as_uint(d));
        atomicMax(maxref, __float_as_uint(fabsf(ref[i])));
    }
}

/* configurations 0-5: the mma.sync kernel (FLOAT: its TF32 form); 6-16: the wgmma kernel
 * (sm_90a build, 9.0 device; FLOAT: 6-9 are the TF32 wgmma kernel's configurations) */
static const char *tf32_cfg_name(int c)
{
    static const char *const names[fdnn_bwdf_wg::TWG_NCONFIGS] = {"twg64x256", "twg128x128", "twg128x256", "twg64x128"};
    return c >= BWDF_NCONFIGS && c < BWDF_NCONFIGS + fdnn_bwdf_wg::TWG_NCONFIGS ? names[c - BWDF_NCONFIGS] : nullptr;
}
static const char *cfg_name(int c, bool tf32 = false)
{
    if (tf32 && tf32_cfg_name(c)) return tf32_cfg_name(c);
    static const char *const names[BWDF_NCONFIGS + fdnn_bwdf_wg::WGB_NCONFIGS] = {
        "128x128", "128x64", "64x128", "64x64", "64x256", "128x256", "wg128x128", "wg128x128/2", "wg64x256", "wg64x128/2", "wg128x256", "wg64x192", "wg128x192", "wg64x192/2", "wg128x64/2", "wg64x64/2", "wg64x64/3"};
    return (unsigned)c < (unsigned)(BWDF_NCONFIGS + fdnn_bwdf_wg::WGB_NCONFIGS) ? names[c] : "?";
}
static int g_wgmma = 0; /* the wgmma kernel can run here */

/* the plan of a case: a forced configuration, else the library's choice (wgmma where it runs) */
static BwdfPlan plan_of(const Layer &L, int npq, int rsc, int &cfg, bool tf32)
{
    const int wg = L.cfg >= BWDF_NCONFIGS || (L.cfg < 0 && g_wgmma);
    const int fc = L.cfg >= 0 ? L.cfg - BWDF_NCONFIGS : -1;
    BwdfPlan pl = !wg ? bwdf_plan(npq, L.k, rsc, L.splits, L.cfg)
                  : tf32 ? fdnn_bwdf_wg::twg_plan(npq, L.k, rsc, L.splits, fc)
                         : fdnn_bwdf_wg::wgb_plan(npq, L.k, rsc, L.splits, fc);
    cfg = wg ? BWDF_NCONFIGS + (int)pl.cfg : (int)pl.cfg;
    return pl;
}
template <typename T>
static cudaError_t launch(const BwdfParams &P, int cfg)
{
    if constexpr (std::is_same<T, float>::value) {
        if (cfg >= BWDF_NCONFIGS) return fdnn_bwdf_wg::twg_launch(P, (fdnn_bwdf_wg::TwgConfig)(cfg - BWDF_NCONFIGS), 0);
        return bwdf_tf32_launch(P, (BwdfConfig)cfg, 0);
    } else {
        if (cfg >= BWDF_NCONFIGS) return fdnn_bwdf_wg::wgb_launch<T>(P, (fdnn_bwdf_wg::WgbConfig)(cfg - BWDF_NCONFIGS), 0);
        return bwdf_launch<T>(P, (BwdfConfig)cfg, 0);
    }
}

template <typename T>
static int run_layer(const Layer &L, int timed)
{
    BwdfParams P = {};
    P.n = L.n; P.h = L.h; P.w_ = L.w; P.c = L.c; P.k = L.k; P.r = L.r; P.s = L.s;
    P.sh = P.sw = L.str; P.ph = P.pw = L.pad; P.dh = P.dw = L.dil; P.flip = L.flip;
    P.p = (L.h + 2 * L.pad - L.dil * (L.r - 1) - 1) / L.str + 1;
    P.q = (L.w + 2 * L.pad - L.dil * (L.s - 1) - 1) / L.str + 1;
    if (P.p < 1 || P.q < 1) { printf("bad case (empty output)\n"); return 0; }
    P.alpha = L.alpha; P.beta = L.beta;
    P.npq = P.n * P.p * P.q;
    P.rsc = L.r * L.s * L.c;
    int cfg;
    const BwdfPlan pl = plan_of(L, P.npq, P.rsc, cfg, std::is_same<T, float>::value);
    P.chunk = pl.chunk;
    P.splits = pl.splits;
    const size_t wsb = bwdf_workspace_bytes(pl, P.k, P.rsc);
    const long long nx = (long long)L.n * L.h * L.w * L.c, ndy = (long long)P.npq * L.k, nw = (long long)L.k * P.rsc;
    T *x, *dy, *dw, *dw0;
    float *ref, *ws = nullptr;
    unsigned *dev_max;
    CK(cudaMalloc(&x, nx * sizeof(T)));
    CK(cudaMalloc(&dy, ndy * sizeof(T)));
    CK(cudaMalloc(&dw, nw * sizeof(T)));
    CK(cudaMalloc(&dw0, nw * sizeof(T)));
    CK(cudaMalloc(&ref, nw * sizeof(float)));
    CK(cudaMalloc(&dev_max, 2 * sizeof(unsigned)));
    if (wsb) CK(cudaMalloc(&ws, wsb));
    fill_kernel<T><<<1024, 256>>>(x, nx, 1u);
    fill_kernel<T><<<1024, 256>>>(dy, ndy, 2u);
    fill_kernel<T><<<1024, 256>>>(dw0, nw, 3u);
    CK(cudaGetLastError());
    P.x = x; P.dy = dy; P.out = dw; P.ws = ws;
    if (L.beta != 0.f) CK(cudaMemcpy(dw, dw0, nw * sizeof(T), cudaMemcpyDeviceToDevice));
    else CK(cudaMemset(dw, 0xff, nw * sizeof(T))); /* NaN: beta == 0 must not read dw */
    CK(cudaMemset(ref, 0, nw * sizeof(float)));
    dim3 rg((unsigned)((nw + 255) / 256), (unsigned)((P.npq + REF_SEG - 1) / REF_SEG));
    ref_kernel<T><<<rg, 256>>>(x, dy, ref, P);
    ref_finish<T><<<1024, 256>>>(ref, dw0, nw, P.alpha, P.beta);
    CK(cudaGetLastError());
    CK(launch<T>(P, cfg));
    CK(cudaDeviceSynchronize());
    CK(cudaMemset(dev_max, 0, 2 * sizeof(unsigned)));
    cmp_kernel<T><<<1024, 256>>>(dw, ref, nw, dev_max, dev_max + 1);
    unsigned hm[2];
    CK(cudaMemcpy(hm, dev_max, sizeof hm, cudaMemcpyDeviceToHost));
    float err, mref;
    memcpy(&err, &hm[0], 4);
    memcpy(&mref, &hm[1], 4);
    const float rel = mref > 0 ? err / mref : INFINITY;
    int pass = rel < 1e-2f && mref > 0;
    const char *tn = std::is_same<T, __half>::value ? "fp16" : std::is_same<T, float>::value ? "tf32" : "bf16";
    printf("%-4s N%-3d C%-3d %3dx%-3d K%-3d %dx%d s%d p%d d%d %-4s a%-3g b%-4g %-11s split %3d x %6d rows  relerr %.1e %s", tn, L.n,
           L.c, L.h, L.w, L.k, L.r, L.s, L.str, L.pad, L.dil, L.flip ? "conv" : "xcor", L.alpha, L.beta, cfg_name(cfg, std::is_same<T, float>::value), pl.splits,
           pl.chunk, rel, pass ? "PASS" : "FAIL");
    if (timed) {
        std::vector<unsigned char> first((size_t)nw * sizeof(T)), again((size_t)nw * sizeof(T));
        CK(cudaMemcpy(first.data(), dw, first.size(), cudaMemcpyDeviceToHost));
        const double flops = 2.0 * P.npq * (double)P.k * P.rsc;
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        for (int i = 0; i < 3; i++) CK(launch<T>(P, cfg));
        CK(cudaEventRecord(e0));
        for (int i = 0; i < 20; i++) CK(launch<T>(P, cfg));
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        ms /= 20;
        CK(cudaMemcpy(again.data(), dw, again.size(), cudaMemcpyDeviceToHost));
        const int same = memcmp(first.data(), again.data(), first.size()) == 0; /* beta == 0: every launch writes the same dw */
        if (!same) pass = 0;
        printf("  %8.3f ms %6.1f TFLOP/s ws %6.1f MB %s", ms, flops / ms * 1e-9, wsb / 1e6, same ? "repeat-identical" : "REPEAT DIFFERS FAIL");
        CK(cudaEventDestroy(e0));
        CK(cudaEventDestroy(e1));
    }
    printf("\n");
    cudaFree(x); cudaFree(dy); cudaFree(dw); cudaFree(dw0); cudaFree(ref); cudaFree(dev_max);
    if (ws) cudaFree(ws);
    return pass;
}

int main(int argc, char **argv)
{
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    const int sweep = argc > 1 && !strcmp(argv[1], "--sweep"); /* every tile configuration of every benchmark layer, timed */
    const int sweep_tf32 = argc > 1 && !strcmp(argv[1], "--sweep-tf32"); /* the same, FLOAT on the TF32 kernels only */
    const int small_only = argc > 1 && !strcmp(argv[1], "--small");      /* the odd shapes only (compute-sanitizer) */
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("bwdf_lab: no CUDA device, skipped\n");
        return 77; /* ctest's skip code (gpu/bwdf_lab) */
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("bwdf_lab on %s (sm_%d%d, %d SMs); PASS = max|dw-ref|/max|ref| < 1e-2; split = splits x npq rows per split\n", prop.name,
           prop.major, prop.minor, prop.multiProcessorCount);
    if (prop.major < 8) { printf("needs compute capability 8.0+\n"); return 1; }
#ifdef FDNN_HAVE_SM90A
    g_wgmma = prop.major == 9 && prop.minor == 0;
#endif
    const int ncfg = BWDF_NCONFIGS + (g_wgmma ? fdnn_bwdf_wg::WGB_NCONFIGS : 0);
    int fails = 0, total = 0;

    printf("-- correctness, odd shapes (cfg 0-5 = mma.sync 128x128, 128x64, 64x128, 64x64, 64x256, 128x256; 6-16 = wgmma 128x128, 128x128 two per SM, 64x256, 64x128 two per SM, 128x256, 64x192, 128x192, 64x192 two per SM, 128x64 two per SM, 64x64 two and three per SM; -1 and split 0 = the library's plan)\n");
    const Layer small[] = {
        /* n   c   h   w   k   r  s str pad dil flip alpha beta splits cfg */
        {2, 8, 9, 7, 8, 1, 1, 1, 0, 1, 0, 1.f, 0.0f, 0, -1},
        {3, 24, 17, 19, 40, 3, 3, 2, 1, 2, 1, 1.f, 0.5f, 0, -1},
        {5, 72, 13, 11, 136, 3, 5, 1, 2, 1, 0, 1.f, 0.0f, 3, 0},
        {1, 16, 30, 30, 24, 5, 5, 3, 4, 1, 1, 2.f, -1.0f, 0, -1},
        {4, 136, 7, 9, 200, 3, 3, 1, 1, 3, 0, 1.f, 0.5f, 2, 1},
        {2, 8, 23, 23, 16, 7, 7, 2, 3, 1, 1, 1.f, 0.0f, 1, 2},
        {8, 64, 20, 20, 64, 3, 3, 1, 1, 1, 0, 1.f, 0.0f, 1, 2},
        {8, 64, 20, 20, 64, 3, 3, 1, 1, 1, 1, 0.5f, 0.5f, 7, 3},
        {16, 32, 33, 31, 96, 3, 3, 2, 0, 1, 0, 1.f, -1.0f, 0, -1},
        {4, 256, 9, 9, 8, 1, 1, 1, 0, 1, 0, 1.f, 0.0f, 5, 1},
        {3, 8, 50, 50, 24, 3, 3, 3, 2, 2, 1, 1.f, 0.0f, 0, -1},
        {2, 48, 15, 15, 200, 2, 2, 2, 0, 1, 0, 1.f, 0.5f, 4, 0},
        {64, 16, 12, 12, 16, 3, 3, 1, 1, 1, 1, 1.f, 0.0f, 0, -1},
        {40, 8, 3, 3, 16, 3, 3, 1, 1, 1, 0, 1.f, 0.0f, 3, 3},  /* P*Q = 9 < 32: the (n,p,q) step crosses images */
        {7, 16, 5, 4, 32, 2, 3, 1, 0, 1, 1, 1.f, -1.0f, 2, 2}, /* P*Q = 8 */
        {5, 72, 13, 11, 136, 3, 5, 1, 2, 1, 0, 1.f, 0.0f, 3, 4},  /* 64x256: partial row and column tiles */
        {4, 136, 7, 9, 200, 3, 3, 1, 1, 3, 1, 1.f, 0.5f, 1, 5},   /* 128x256, one split, flip, beta */
        {8, 64, 20, 20, 64, 3, 3, 1, 1, 1, 0, 0.5f, -1.0f, 5, 5}, /* 128x256, K = 64 < BM */
        {3, 24, 17, 19, 40, 3, 3, 2, 1, 2, 1, 1.f, 0.0f, 0, 4},
    };
    /* BWDF_LAB_LAYER=i (a profiler run): only benchmark layer i, FLOAT only, no small cases */
    const char *only_s = getenv("BWDF_LAB_LAYER");
    const int only = only_s ? atoi(only_s) : -1;
    int idx = 0;
    for (const Layer &L : small) {
        if (only >= 0 || sweep_tf32) break;
        fails += !run_layer<__half>(L, 0);
        fails += !run_layer<__nv_bfloat16>(L, 0);
        total += 2;
        if (L.cfg < BWDF_NCONFIGS) {
            fails += !run_layer<float>(L, 0);
            total++;
        }
        if (g_wgmma) { /* each case on every TF32 wgmma configuration */
            for (int c = 0; c < fdnn_bwdf_wg::TWG_NCONFIGS; c++) {
                Layer F = L;
                F.cfg = BWDF_NCONFIGS + c;
                fails += !run_layer<float>(F, 0);
                total++;
            }
        }
        if (g_wgmma) { /* each case once more on a wgmma configuration, in turn */
            Layer F = L;
            F.cfg = BWDF_NCONFIGS + idx % fdnn_bwdf_wg::WGB_NCONFIGS;
            fails += !run_layer<__half>(F, 0);
            fails += !run_layer<__nv_bfloat16>(F, 0);
            total += 2;
        }
        idx++;
    }

    const Layer big[] = {
        {32, 64, 56, 56, 64, 3, 3, 1, 1, 1, 0, 1.f, 0.f, 0, -1},
        {32, 64, 224, 224, 64, 3, 3, 1, 1, 1, 0, 1.f, 0.f, 0, -1},
        {128, 64, 56, 56, 64, 3, 3, 1, 1, 1, 0, 1.f, 0.f, 0, -1},
        {32, 128, 28, 28, 128, 3, 3, 1, 1, 1, 0, 1.f, 0.f, 0, -1},
        {32, 256, 14, 14, 256, 3, 3, 1, 1, 1, 0, 1.f, 0.f, 0, -1},
        {32, 512, 7, 7, 512, 3, 3, 1, 1, 1, 0, 1.f, 0.f, 0, -1},
        {32, 64, 56, 56, 256, 1, 1, 1, 0, 1, 0, 1.f, 0.f, 0, -1},
        {32, 256, 56, 56, 512, 1, 1, 2, 0, 1, 0, 1.f, 0.f, 0, -1},
        {128, 256, 14, 14, 256, 3, 3, 1, 1, 1, 0, 1.f, 0.f, 0, -1},
        {32, 64, 56, 56, 64, 1, 1, 1, 0, 1, 0, 1.f, 0.f, 0, -1},
        {32, 2048, 7, 7, 512, 1, 1, 1, 0, 1, 0, 1.f, 0.f, 0, -1},
        {32, 8, 224, 224, 64, 7, 7, 2, 3, 1, 0, 1.f, 0.f, 0, -1}, /* conv1, C = 3 padded to 8 */
    };
    printf("-- benchmark layers (library plan)%s\n", quick ? ", checks only" : "");
    int li = -1;
    for (const Layer &L : big) {
        if (small_only) break;
        li++;
        if (sweep_tf32) {
            for (int cfg = 0; cfg < BWDF_NCONFIGS + (g_wgmma ? fdnn_bwdf_wg::TWG_NCONFIGS : 0); cfg++) {
                Layer F = L;
                F.cfg = cfg;
                fails += !run_layer<float>(F, 1);
                total++;
            }
            continue;
        }
        if (only >= 0) {
            if (li == only) {
                fails += !run_layer<float>(L, 1);
                total++;
            }
            continue;
        }
        if (sweep)
            for (int cfg = 0; cfg < ncfg; cfg++) {
                Layer F = L;
                F.cfg = cfg;
                fails += !run_layer<__half>(F, 1);
                total++;
                if (cfg < BWDF_NCONFIGS + (g_wgmma ? fdnn_bwdf_wg::TWG_NCONFIGS : 0)) {
                    fails += !run_layer<float>(F, 1);
                    total++;
                }
            }
        fails += !run_layer<__half>(L, !quick);
        fails += !run_layer<__nv_bfloat16>(L, !quick);
        fails += !run_layer<float>(L, !quick);
        total += 3;
    }
    printf("bwdf_lab: %d of %d cases PASS%s\n", total - fails, total, fails ? "  <-- FAILURES" : "");
    return fails ? 1 : 0;
}
