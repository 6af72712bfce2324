/* igemm_lab: correctness and speed of the mma.sync implicit-GEMM forward convolution
 * (src/cuda/conv_fwd_mma.cuh) and, on an H200 with an sm_90a build, of the warpgroup-MMA one
 * (src/cuda/conv_fwd_wgmma.cuh, every tile configuration, on the layers with C % 64 == 0) on
 * their own, outside the library. `--only LAYER CFG` runs one benchmark layer with one
 * configuration (for Nsight Compute).
 * The halo kernel (src/cuda/conv_fwd_halo.cuh, stride 1, K <= 64) runs as eight more
 * configurations (block shapes, one worker order, and windows copied by TMA with and without TMA
 * stores of y: halo_plan_cfg) wherever its plan fits. LAB_MAXK=64 in the environment keeps only the benchmark layers with K <= 64.
 *   - small odd-shaped cases (stride, padding, dilation, both modes, beta != 0, partial tiles),
 *     every tile configuration: checked only;
 *   - the benchmark layers (N,C,H,W,K,R,S,stride,pad), HALF and BFLOAT16: checked and timed
 *     (20 launches after 3 warm-ups, cudaEvents), next to cuBLAS on the GEMM of the same size
 *     (what im2col + cuBLAS would cost without the im2col) and an 8192^3 fp16 cuBLAS GEMM (peak).
 * Every output is compared with a naive GPU kernel (float accumulation): PASS when
 * max|y - ref| / max|ref| < 1e-2. Exit status 1 if anything fails.
 * Usage: igemm_lab [--quick | --sweep]   (--quick: checks only, no timing; --sweep: also every tile
 *        configuration of each benchmark layer, timed) */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <type_traits>
#include <cublas_v2.h>
#include "../../src/cuda/conv_fwd_halo.cuh"
#include "lab_util.cuh"

using namespace fdnn_mma;

struct Layer {
    int n, c, h, w, k, r, s, str, pad, dil, flip;
    float beta;
    int cin_real; /* channels with data (the rest zero), for the C=3 -> 8 first layer */
};

template <typename T> __device__ float tf(T v);
template <> __device__ float tf(__half v) { return __half2float(v); }
template <> __device__ float tf(__nv_bfloat16 v) { return __bfloat162float(v); }
template <> __device__ float tf(float v) { return v; }
template <typename T> __device__ T fromf(float v);
template <> __device__ __half fromf(float v) { return __float2half_rn(v); }
template <> __device__ __nv_bfloat16 fromf(float v) { return __float2bfloat16_rn(v); }
template <> __device__ float fromf(float v) { return v; } /* the fill's values are exact in TF32 */

/* deterministic pseudo-random values in [-1, 1], multiples of 1/64 (exact in both types);
 * channels >= creal are 0 */
template <typename T>
__global__ void fill_kernel(T *p, long long n, int c, int creal, unsigned seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned v = (unsigned)(i * 2654435761u) ^ seed;
        v ^= v >> 13; v *= 0x5bd1e995u; v ^= v >> 15;
        const float f = (int)(v % 129) / 64.0f - 1.0f;
        p[i] = fromf<T>((int)(i % c) < creal ? f : 0.0f);
    }
}

/* one thread per output element; y_ref[m][k] in float (alpha = 1, plus beta * y_old) */
template <typename T>
__global__ void ref_kernel(const T *x, const T *w, const T *yold, float *yref, MmaConvParams P)
{
    const long long total = (long long)P.m * P.k;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
        const int k = (int)(e % P.k);
        const long long m = e / P.k;
        const int q = (int)(m % P.q), p = (int)((m / P.q) % P.p), n = (int)(m / ((long long)P.q * P.p));
        float acc = 0.f;
        for (int r = 0; r < P.r; r++) {
            const int hh = p * P.sh - P.ph + r * P.dh;
            if (hh < 0 || hh >= P.h) continue;
            for (int s = 0; s < P.s; s++) {
                const int ww = q * P.sw - P.pw + s * P.dw;
                if (ww < 0 || ww >= P.w_) continue;
                const int rf = P.flip ? P.r - 1 - r : r, sf = P.flip ? P.s - 1 - s : s;
                const T *xp = x + (((long long)n * P.h + hh) * P.w_ + ww) * P.c;
                const T *wp = w + (((long long)k * P.r + rf) * P.s + sf) * P.c;
                for (int c = 0; c < P.c; c++) acc += tf(xp[c]) * tf(wp[c]);
            }
        }
        yref[e] = P.alpha * acc + (P.beta != 0.f ? P.beta * tf(yold[e]) : 0.f);
    }
}

/* max |y - ref| and max |ref| (as ordered ints of non-negative floats, via atomicMax);
 * NaN in y counts as +inf error */
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

/* configurations 0 .. MMA_NCONFIGS-1: the mma.sync kernel; MMA_NCONFIGS + i: wgmma configuration i;
 * HALO_CFG + 0 .. 7: the halo kernel (conv_fwd_halo.cuh) in four block shapes, one worker order and three TMA modes; TAIL_CFG: 128x256 tiles over
 * the rows before a split and 128x128 ones after it (fdnn_wg::wg_launch_split), at the library's
 * split (wg_tail_split) where it makes one, else at half of M, so that every shape runs both launches */
constexpr int HALO_CFG = MMA_NCONFIGS + fdnn_wg::WG_NCONFIGS, HALO_NCFG = 8, TAIL_CFG = HALO_CFG + HALO_NCFG;
static const char *cfg_name(int c)
{
    static const char *const names[TAIL_CFG + 1] = {"128x128", "128x64", "64x64", "256x64", "256x128",
        "wg128x256", "wg256x128", "wg128x128", "wg256x64", "wg128x64", "wg128x128/2", "wg128x64/2", "wg128x64/3", "halo3x128", "halo2x128", "halo2x256", "halo2x128/1", "halo3x128bm", "halo-tma", "halo-tmast", "halo2x128/1t", "wg-tail"};
    return (unsigned)c <= (unsigned)TAIL_CFG ? names[c] : "?";
}
/* HALO_CFG + 0: 3 warpgroups x 128-pixel tiles (the library's); + 1: 2 x 128; + 2: 2 x 256; + 3: 2 x 128
 * with one window per warpgroup (the library's where the first does not fit); + 4: the first with
 * the workers numbered block-major (NWG * block + wg, the order before the twenty-fourth session);
 * + 5: the first with its windows copied by TMA; + 6: the same with TMA stores of y where they
 * apply (16-bit, K == 64, beta == 0; else as + 5); + 7: the fourth with TMA loads and stores */
static bool halo_plan_cfg(const MmaConvParams &P, int elem, int sms, fdnn_halo::HaloPlan &H, int cfg)
{
    const int v = cfg - HALO_CFG;
    if (!fdnn_halo::halo_plan(P, elem, sms, H, v == 0 || v == 4 || v == 5 || v == 6 ? 3 : 2, v == 2 ? 256 : 128, v == 3 || v == 7 ? 1 : 2))
        return false;
    if (v == 4) H.wgmajor = 0; /* the block-major worker order, for comparison */
    if (v >= 5) H.tma = fdnn_halo::halo_tma_want(P, H, elem, v == 5 ? 1 : 2); /* the launch falls back to 0 where no map encodes */
    return v < 5 || H.tma > 0;
}
static int g_wgmma = 0; /* sm_90a code in this build and a compute capability 9.0 device */
static int g_sms = 132;

/* TAIL_CFG's split row: the library's, else half of M in whole 128-row tiles (0: none) */
static int tail_split(const MmaConvParams &P)
{
    const int ms = fdnn_wg::wg_tail_split(P, g_sms);
    if (ms > 0) return ms;
    const int half = P.m / 2 / 128 * 128;
    return half < P.m ? half : 0;
}

/* hp: the halo configurations' plan (made once per layer by run_layer) */
template <typename T>
static cudaError_t launch(const MmaConvParams &P, int cfg, const fdnn_halo::HaloPlan &hp)
{
    if (cfg == TAIL_CFG) {
        const int ms = tail_split(P);
        if (ms <= 0) return fdnn_wg::wg_launch<T>(P, fdnn_wg::WG_128x256, 0);
        return fdnn_wg::wg_launch_split<T>(P, ms, fdnn_wg::WG_128x256, fdnn_wg::WG_128x128, 0);
    }
    if (cfg >= HALO_CFG) return fdnn_halo::halo_launch_shape<T>(P, hp, 0);
    if (cfg >= MMA_NCONFIGS) return fdnn_wg::wg_launch<T>(P, (fdnn_wg::WgConfig)(cfg - MMA_NCONFIGS), 0);
    return mma_launch<T>(P, (MmaConfig)cfg, 0);
}

template <typename T>
static int run_layer(const Layer &L, int timed, int force_cfg, cublasHandle_t cb, int sms, void *scratch, size_t scratch_bytes)
{
    MmaConvParams P = {};
    P.n = L.n; P.h = L.h; P.w_ = L.w; P.c = L.c; P.k = L.k; P.r = L.r; P.s = L.s;
    P.sh = P.sw = L.str; P.ph = P.pw = L.pad; P.dh = P.dw = L.dil; P.flip = L.flip;
    P.p = (L.h + 2 * L.pad - L.dil * (L.r - 1) - 1) / L.str + 1;
    P.q = (L.w + 2 * L.pad - L.dil * (L.s - 1) - 1) / L.str + 1;
    P.alpha = 1.0f; P.beta = L.beta;
    P.m = P.n * P.p * P.q;
    P.kg = L.r * L.s * L.c;
    const int cfg = force_cfg >= 0 ? force_cfg : (int)mma_pick(P, sms);
    fdnn_halo::HaloPlan hp = {};
    if (cfg >= HALO_CFG && cfg < TAIL_CFG && !halo_plan_cfg(P, (int)sizeof(T), sms, hp, cfg)) return 1; /* not the halo kernel's problem: skipped */
    const long long nx = (long long)L.n * L.h * L.w * L.c, nw = (long long)L.k * P.kg, ny = (long long)P.m * L.k;
    T *x, *w, *y, *y0;
    float *ref;
    unsigned *dev_max;
    CK(cudaMalloc(&x, nx * sizeof(T)));
    CK(cudaMalloc(&w, nw * sizeof(T)));
    CK(cudaMalloc(&y, ny * sizeof(T)));
    CK(cudaMalloc(&y0, ny * sizeof(T)));
    CK(cudaMalloc(&ref, ny * sizeof(float)));
    CK(cudaMalloc(&dev_max, 2 * sizeof(unsigned)));
    fill_kernel<T><<<1024, 256>>>(x, nx, L.c, L.cin_real, 1u);
    fill_kernel<T><<<1024, 256>>>(w, nw, L.c, L.cin_real, 2u);
    fill_kernel<T><<<1024, 256>>>(y0, ny, L.k, L.k, 3u);
    CK(cudaGetLastError());
    P.x = x; P.w = w; P.y = y;
    /* y starts as y0 (beta != 0) or NaN (beta == 0: must not be read) */
    if (L.beta != 0.f) CK(cudaMemcpy(y, y0, ny * sizeof(T), cudaMemcpyDeviceToDevice));
    else CK(cudaMemset(y, 0xff, ny * sizeof(T)));
    ref_kernel<T><<<4096, 256>>>(x, w, y0, ref, P);
    CK(cudaGetLastError());
    /* the library's split-K plan (float partials + an ordered reduction); none for the halo kernel */
    MmaSplit sp = mma_split(P.m, P.k, P.kg, (int)sizeof(T));
    if (cfg >= HALO_CFG) sp.splits = 1; /* the halo kernel and the head / tail launches: unsplit */
    float *ws = nullptr;
    if (sp.splits > 1) {
        CK(cudaMalloc(&ws, mma_split_bytes(sp, P.m, P.k)));
        P.splits = sp.splits;
        P.kt_per = sp.kt_per;
        P.ws = ws;
    }
    CK(launch<T>(P, cfg, hp));
    CK(cudaDeviceSynchronize());
    CK(cudaMemset(dev_max, 0, 2 * sizeof(unsigned)));
    cmp_kernel<T><<<1024, 256>>>(y, ref, ny, dev_max, dev_max + 1);
    unsigned hm[2];
    CK(cudaMemcpy(hm, dev_max, sizeof hm, cudaMemcpyDeviceToHost));
    float err, mref;
    memcpy(&err, &hm[0], 4);
    memcpy(&mref, &hm[1], 4);
    const float rel = mref > 0 ? err / mref : INFINITY;
    const int pass = rel < 1e-2f && mref > 0;
    const char *tn = std::is_same<T, __half>::value ? "fp16" : std::is_same<T, float>::value ? "tf32" : "bf16";
    printf("%-4s N%-3d C%-3d %3dx%-3d K%-3d %dx%d s%d p%d d%d %-4s b%-3.1f %-7s relerr %.1e %s", tn, L.n, L.c, L.h, L.w, L.k, L.r, L.s,
           L.str, L.pad, L.dil, L.flip ? "conv" : "xcor", L.beta, cfg_name(cfg), rel, pass ? "PASS" : "FAIL");
    if (sp.splits > 1) printf(" split-K %d x %d slices", sp.splits, sp.kt_per);
    if (cfg == TAIL_CFG) printf(" [rows from %d on 128x128 tiles]", tail_split(P));
    if (cfg >= HALO_CFG && cfg < TAIL_CFG)
        printf(" [%dx%d pitch %d, %d rows, %d tiles, %.0f%% useful, grid %d%s]", hp.bp, hp.bq, hp.pitch, hp.hr, hp.tiles,
               100 * fdnn_halo::halo_efficiency(P, hp), hp.grid, hp.tma == 2 ? ", TMA in and out" : hp.tma ? ", TMA in" : "");
    if (timed) {
        const double flops = 2.0 * P.m * (double)P.k * P.kg;
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        for (int i = 0; i < 3; i++) CK(launch<T>(P, cfg, hp));
        CK(cudaEventRecord(e0));
        for (int i = 0; i < 20; i++) CK(launch<T>(P, cfg, hp));
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        ms /= 20;
        /* cuBLAS on the same GEMM sizes (y^T[K, M] = W[K, Kg] * col^T[Kg, M]), column data
         * taken from scratch: the GEMM part of im2col + cuBLAS */
        float gms = -1;
        const size_t col_bytes = (size_t)P.m * P.kg * sizeof(T);
        if (col_bytes <= scratch_bytes && sizeof(T) == 2) {
            const float one = 1.f, zero = 0.f;
            const cudaDataType dt = std::is_same<T, __half>::value ? CUDA_R_16F : CUDA_R_16BF;
            for (int i = 0; i < 23; i++) {
                if (i == 3) CK(cudaEventRecord(e0));
                cublasGemmEx(cb, CUBLAS_OP_T, CUBLAS_OP_N, P.k, P.m, P.kg, &one, w, dt, P.kg, scratch, dt, P.kg, &zero, y, dt, P.k,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            }
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaEventElapsedTime(&gms, e0, e1));
            gms /= 20;
        }
        printf("  %8.3f ms %6.1f TFLOP/s | cuBLAS same GEMM %6.1f TFLOP/s", ms, flops / ms * 1e-9, gms > 0 ? flops / gms * 1e-9 : 0.0);
        CK(cudaEventDestroy(e0));
        CK(cudaEventDestroy(e1));
    }
    printf("\n");
    cudaFree(x); cudaFree(w); cudaFree(y); cudaFree(y0); cudaFree(ref); cudaFree(dev_max);
    if (ws) cudaFree(ws);
    return pass;
}

int main(int argc, char **argv)
{
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    const int sweep = argc > 1 && !strcmp(argv[1], "--sweep"); /* every tile configuration of every benchmark layer, timed */
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("igemm_lab: no CUDA device, skipped\n");
        return 77; /* ctest's skip code (gpu/igemm_lab) */
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("igemm_lab on %s (sm_%d%d, %d SMs); PASS = max|y-ref|/max|ref| < 1e-2\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount);
    if (prop.major < 8) { printf("needs compute capability 8.0+\n"); return 1; }
#ifdef FDNN_HAVE_SM90A
    g_wgmma = prop.major == 9 && prop.minor == 0;
#endif
    const int ncfg = MMA_NCONFIGS + (g_wgmma ? fdnn_wg::WG_NCONFIGS + HALO_NCFG + 1 : 0);
    g_sms = prop.multiProcessorCount;
    printf("wgmma kernels: %s\n", g_wgmma ? "yes" : "no (not an sm_90a build on a 9.0 device)");
    cublasHandle_t cb;
    if (cublasCreate(&cb) != CUBLAS_STATUS_SUCCESS) { printf("cublasCreate failed\n"); return 2; }
    int fails = 0, total = 0;

    const Layer big[] = {
        {32, 64, 224, 224, 64, 3, 3, 1, 1, 1, 0, 0.0f, 64},
        {128, 64, 56, 56, 64, 3, 3, 1, 1, 1, 0, 0.0f, 64},
        {128, 256, 56, 56, 64, 1, 1, 1, 0, 1, 0, 0.0f, 256},
        {128, 128, 28, 28, 128, 3, 3, 1, 1, 1, 0, 0.0f, 128},
        {32, 8, 224, 224, 64, 7, 7, 2, 3, 1, 0, 0.0f, 3}, /* C = 3 padded to 8 (zeros); FLOPs count C = 8 */
        {32, 512, 7, 7, 512, 3, 3, 1, 1, 1, 0, 0.0f, 512}, /* 52 tiles: split-K */
        {32, 256, 14, 14, 256, 3, 3, 1, 1, 1, 0, 0.0f, 256},
        {128, 256, 14, 14, 256, 3, 3, 1, 1, 1, 0, 0.0f, 256},
        {32, 64, 56, 56, 64, 3, 3, 1, 1, 1, 0, 0.0f, 64},
        {32, 64, 56, 56, 256, 1, 1, 1, 0, 1, 0, 0.0f, 64},
        {32, 2048, 7, 7, 512, 1, 1, 1, 0, 1, 0, 0.0f, 2048},
    };
    /* --only LAYER CFG: that benchmark layer with that configuration, fp16, timed (for profilers) */
    if (argc > 3 && !strcmp(argv[1], "--only")) {
        const int li = atoi(argv[2]), cfg = atoi(argv[3]);
        if (li < 0 || li >= (int)(sizeof big / sizeof big[0]) || cfg < 0 || cfg >= ncfg) { printf("bad --only\n"); return 2; }
        const int ok = run_layer<__half>(big[li], 1, cfg, cb, prop.multiProcessorCount, nullptr, 0);
        cublasDestroy(cb);
        return ok ? 0 : 1;
    }
    printf("-- correctness, odd shapes, every tile configuration (forced)\n");
    const Layer small[] = {
        /* n  c   h   w   k  r s str pad dil flip beta creal */
        {3, 24, 17, 19, 40, 3, 3, 2, 1, 2, 1, 0.5f, 24},
        {2, 8, 9, 7, 8, 1, 1, 1, 0, 1, 0, 0.0f, 8},
        {5, 72, 13, 11, 136, 3, 5, 1, 2, 1, 0, 0.0f, 72},
        {1, 16, 30, 30, 24, 5, 5, 3, 4, 1, 1, -1.0f, 16},
        {4, 136, 7, 9, 200, 3, 3, 1, 1, 3, 0, 0.25f, 136},
        {2, 8, 23, 23, 16, 7, 7, 2, 3, 1, 1, 0.0f, 3},
        {2, 256, 7, 7, 136, 3, 3, 1, 1, 1, 0, 0.5f, 256}, /* 2 tiles, 72 slices: split-K (partial K tile, beta) */
        {3, 128, 6, 5, 64, 3, 3, 1, 1, 2, 1, 0.0f, 128},  /* split-K with K <= 64 */
        /* C % 64 == 0 (the wgmma kernels' requirement): strides, dilation, both modes, partial tiles */
        {3, 64, 11, 13, 72, 3, 3, 2, 1, 1, 1, 0.5f, 64},
        {2, 192, 9, 9, 200, 5, 5, 1, 2, 2, 0, -1.0f, 192},
        {1, 64, 20, 20, 64, 1, 1, 1, 0, 1, 0, 0.0f, 64},
        {5, 128, 15, 17, 264, 3, 3, 1, 1, 1, 1, 0.0f, 128},
        /* the halo kernel's problems (stride 1, K <= 64): odd sizes, dilation, both modes, beta,
         * K < 64, two 64-channel planes, a row wider than a tile, 1x3 and 3x1 filters */
        {3, 64, 17, 23, 64, 3, 3, 1, 1, 1, 0, 0.5f, 64},
        {2, 64, 9, 41, 48, 3, 3, 1, 2, 2, 1, -1.0f, 64},
        {4, 128, 7, 9, 64, 1, 1, 1, 0, 1, 0, 0.0f, 128},
        {2, 64, 5, 300, 16, 3, 3, 1, 1, 1, 0, 0.0f, 64},
        {3, 128, 12, 10, 40, 2, 2, 1, 0, 1, 1, 0.0f, 128},
        {1, 64, 11, 3, 64, 1, 3, 1, 1, 1, 0, 0.0f, 64},
        {2, 64, 40, 3, 48, 3, 3, 1, 1, 1, 0, 0.5f, 64}, /* pitch 5: a partial virtual row past bp, blended once */
        {2, 64, 26, 5, 64, 3, 3, 1, 1, 1, 1, -1.0f, 64},
    };
    for (const Layer &L : small)
        for (int cfg = 0; cfg < (L.c % 64 ? MMA_NCONFIGS : ncfg); cfg++) {
            fails += !run_layer<__half>(L, 0, cfg, cb, prop.multiProcessorCount, nullptr, 0);
            fails += !run_layer<__nv_bfloat16>(L, 0, cfg, cb, prop.multiProcessorCount, nullptr, 0);
            total += 2;
        }
    /* FLOAT through TF32: the mma.sync kernel (C % 4 == 0) and, C % 32 == 0, the wgmma one */
    for (const Layer &L : small)
        for (int cfg = 0; cfg < (L.c % 32 ? MMA_NCONFIGS : ncfg); cfg++) {
            fails += !run_layer<float>(L, 0, cfg, cb, prop.multiProcessorCount, nullptr, 0);
            total++;
        }

    size_t scratch_bytes = 0;
    void *scratch = nullptr;
    if (!quick) {
        scratch_bytes = (size_t)4 << 30; /* column matrices up to 4 GiB for the "same GEMM" column */
        if (cudaMalloc(&scratch, scratch_bytes) != cudaSuccess) { cudaGetLastError(); scratch = nullptr; scratch_bytes = 0; }
        else CK(cudaMemset(scratch, 0, scratch_bytes));
        /* peak reference: 8192^3 fp16 GEMM, float accumulation */
        const int n = 8192;
        void *a, *b, *c;
        CK(cudaMalloc(&a, (size_t)n * n * 2)); CK(cudaMalloc(&b, (size_t)n * n * 2)); CK(cudaMalloc(&c, (size_t)n * n * 2));
        fill_kernel<__half><<<1024, 256>>>((__half *)a, (long long)n * n, 1, 1, 5u);
        fill_kernel<__half><<<1024, 256>>>((__half *)b, (long long)n * n, 1, 1, 6u);
        const float one = 1.f, zero = 0.f;
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
        for (int i = 0; i < 23; i++) {
            if (i == 3) CK(cudaEventRecord(e0));
            cublasGemmEx(cb, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16F, n, b, CUDA_R_16F, n, &zero, c, CUDA_R_16F, n,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        }
        CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        printf("-- peak reference: cuBLAS fp16 GEMM 8192^3: %.1f TFLOP/s\n", 2.0 * n * n * (double)n / (ms / 20) * 1e-9);
        cudaFree(a); cudaFree(b); cudaFree(c);
    }
    printf("-- benchmark layers (tile picked by the library heuristic)%s\n", quick ? ", checks only" : "");
    const int maxk = getenv("LAB_MAXK") ? atoi(getenv("LAB_MAXK")) : 1 << 30; /* LAB_MAXK=64: the small-K layers only */
    for (const Layer &L : big) {
        if (L.k > maxk) continue;
        if (sweep)
            for (int cfg = 0; cfg < MMA_NCONFIGS; cfg++) {
                fails += !run_layer<__half>(L, 1, cfg, cb, prop.multiProcessorCount, nullptr, 0);
                total++;
            }
        /* every wgmma configuration, timed (fp16; bf16 on the first) */
        for (int cfg = MMA_NCONFIGS; cfg < (L.c % 64 ? MMA_NCONFIGS : ncfg); cfg++) {
            fails += !run_layer<__half>(L, !quick, cfg, cb, prop.multiProcessorCount, nullptr, 0);
            total++;
            if (cfg == MMA_NCONFIGS) {
                fails += !run_layer<__nv_bfloat16>(L, !quick, cfg, cb, prop.multiProcessorCount, nullptr, 0);
                total++;
            }
        }
        fails += !run_layer<__half>(L, !quick, -1, cb, prop.multiProcessorCount, scratch, scratch_bytes);
        fails += !run_layer<__nv_bfloat16>(L, !quick, -1, cb, prop.multiProcessorCount, scratch, scratch_bytes);
        total += 2;
        /* TF32: the mma.sync kernel, then every wgmma configuration (C % 32 == 0) */
        fails += !run_layer<float>(L, !quick, -1, cb, prop.multiProcessorCount, nullptr, 0);
        total++;
        for (int cfg = MMA_NCONFIGS; cfg < (L.c % 32 ? MMA_NCONFIGS : ncfg); cfg++) {
            fails += !run_layer<float>(L, !quick, cfg, cb, prop.multiProcessorCount, nullptr, 0);
            total++;
        }
    }
    if (scratch) cudaFree(scratch);
    cublasDestroy(cb);
    printf("igemm_lab: %d of %d cases PASS%s\n", total - fails, total, fails ? "  <-- FAILURES" : "");
    return fails ? 1 : 0;
}
