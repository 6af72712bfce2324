/* f32_igemm_lab: the FLOAT (FMA math, no tensor cores) forward implicit-GEMM kernel of
 * src/cuda/conv_fwd_f32.cuh (design described there and in conv_fwd_f32.cu) on its own, for
 * packed NHWC x / y and a KRSC filter with C % 16 == 0 and K % 4 == 0, in several tile shapes
 * (table `variants`: BM x BN tile, TM x TN per thread, NT threads).
 *
 * Checked against a naive GPU kernel (double accumulation) on the first 2^20 outputs (all of the
 * small cases): PASS when max|y - ref| / max|ref| < 1e-5. Timed: 20 launches after 3 warm-ups
 * (cudaEvents). Usage: f32_igemm_lab [--quick] (--quick: no timing; the GPU test).
 * On the H200 the 128x64 tile with 8x8 per thread and 128 threads is the fastest on the 64- and
 * 128-channel 3x3 layers (35-36 TFLOP/s; NVIDIA cuDNN 36); with 256 channels on 14x14 the grid is
 * too small for it (24 TFLOP/s, under the library's im2col + cuBLAS). The library runs that tile. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <cuda_runtime.h>
#include "../../src/cuda/conv_fwd_f32.cuh"
#include "lab_util.cuh"

using Prob = fdnn_f32fw::F32Conv;

struct Variant {
    const char *name;
    void (*launch)(const Prob &);
};
template <int BM, int BN, int TM, int TN, int NT, int MINB> static void launch_v(const Prob &P)
{
    dim3 grid((unsigned)((P.m + BM - 1) / BM), (unsigned)((P.k + BN - 1) / BN));
    fdnn_f32fw::conv_fwd_f32_kernel<BM, BN, TM, TN, NT, MINB, true><<<grid, NT>>>(P);
}
static const Variant variants[] = {
    {"128x64 t8x4 n256", launch_v<128, 64, 8, 4, 256, 2>},
    {"128x64 t8x8 n128", launch_v<128, 64, 8, 8, 128, 3>},
    {"256x64 t8x8 n256", launch_v<256, 64, 8, 8, 256, 1>},
    {"128x128 t8x8 n256", launch_v<128, 128, 8, 8, 256, 1>},
    {"64x64 t4x4 n256", launch_v<64, 64, 4, 4, 256, 2>},
    {"64x64 t8x4 n128", launch_v<64, 64, 8, 4, 128, 4>},
    {"128x32 t8x4 n128", launch_v<128, 32, 8, 4, 128, 4>},
};
constexpr int NV = sizeof(variants) / sizeof(variants[0]);

/* naive reference: one thread per output element, double accumulation */
__global__ void ref_kernel(const Prob P, const float *y0, double *ref, long long nchk)
{
    const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= nchk) return;
    const int kk = (int)(e % P.k);
    const long long m = e / P.k;
    const int qq = (int)(m % P.q), pp = (int)((m / P.q) % P.p), nn = (int)(m / ((long long)P.q * P.p));
    double s = 0;
    for (int r = 0; r < P.r; r++)
        for (int t = 0; t < P.s; t++) {
            const int hh = pp * P.sh - P.ph + r * P.dh, ww = qq * P.sw - P.pw + t * P.dw;
            if (hh < 0 || hh >= P.h || ww < 0 || ww >= P.w_) continue;
            const float *xp = P.x + (((long long)nn * P.h + hh) * P.w_ + ww) * P.c;
            const float *wp = P.w + (((long long)kk * P.r + r) * P.s + t) * P.c;
            for (int c = 0; c < P.c; c++) s += (double)xp[c] * wp[c];
        }
    ref[e] = P.alpha * s + (P.beta != 0.f ? (double)P.beta * y0[e] : 0.0);
}

struct Layer {
    int n, c, h, w, k, r, s, str, pad, dil;
    float alpha, beta;
};

/* one layer: every variant checked against the reference (beta as given), then timed with beta = 0;
 * returns the number of failing variants */
static int run_layer(const Layer &L, int timed)
{
    Prob P = {};
    P.n = L.n; P.c = L.c; P.h = L.h; P.w_ = L.w; P.k = L.k; P.r = L.r; P.s = L.s;
    P.sh = P.sw = L.str; P.ph = P.pw = L.pad; P.dh = P.dw = L.dil;
    P.p = (L.h + 2 * L.pad - L.dil * (L.r - 1) - 1) / L.str + 1;
    P.q = (L.w + 2 * L.pad - L.dil * (L.s - 1) - 1) / L.str + 1;
    P.m = P.n * P.p * P.q;
    P.alpha = L.alpha; P.beta = L.beta;
    const long long nx = (long long)L.n * L.h * L.w * L.c, nw = (long long)L.k * L.r * L.s * L.c, ny = (long long)P.m * L.k;
    float *x, *w, *y, *y0;
    double *ref;
    CK(cudaMalloc(&x, nx * 4));
    CK(cudaMalloc(&w, nw * 4));
    CK(cudaMalloc(&y, ny * 4));
    CK(cudaMalloc(&y0, ny * 4));
    const long long nchk = ny < (1LL << 20) ? ny : (1LL << 20); /* outputs checked */
    CK(cudaMalloc(&ref, nchk * 8));
    fill_float_kernel<<<1024, 256>>>(x, nx, 1u);
    fill_float_kernel<<<1024, 256>>>(w, nw, 2u);
    fill_float_kernel<<<1024, 256>>>(y0, ny, 3u);
    P.x = x; P.w = w; P.y = y;
    ref_kernel<<<(unsigned)((nchk + 255) / 256), 256>>>(P, y0, ref, nchk);
    double *hr = (double *)malloc(nchk * 8);
    float *hy = (float *)malloc(nchk * 4);
    CK(cudaMemcpy(hr, ref, nchk * 8, cudaMemcpyDeviceToHost));
    const double flops = 2.0 * P.m * (double)P.k * L.r * L.s * L.c;
    printf("N%-3d C%-4d %3dx%-3d K%-4d %dx%d s%d p%d d%d a%g b%g  (%.2f GFLOP)\n", L.n, L.c, L.h, L.w, L.k, L.r, L.s, L.str, L.pad,
           L.dil, L.alpha, L.beta, flops * 1e-9);
    int fails = 0;
    for (int v = 0; v < NV; v++) {
        CK(cudaMemcpy(y, y0, ny * 4, cudaMemcpyDeviceToDevice));
        P.beta = L.beta;
        variants[v].launch(P);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(hy, y, nchk * 4, cudaMemcpyDeviceToHost));
        double err = 0, mref = 0;
        for (long long i = 0; i < nchk; i++) {
            double d = fabs(hy[i] - hr[i]);
            if (!(d == d)) d = INFINITY;
            if (d > err) err = d;
            if (fabs(hr[i]) > mref) mref = fabs(hr[i]);
        }
        const double rel = mref > 0 ? err / mref : INFINITY;
        const int pass = rel < 1e-5;
        fails += !pass;
        printf("  %-20s relerr %.1e %s", variants[v].name, rel, pass ? "PASS" : "FAIL");
        if (timed) {
            P.beta = 0.f;
            cudaEvent_t e0, e1;
            CK(cudaEventCreate(&e0));
            CK(cudaEventCreate(&e1));
            for (int i = 0; i < 3; i++) variants[v].launch(P);
            CK(cudaEventRecord(e0));
            for (int i = 0; i < 20; i++) variants[v].launch(P);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            ms /= 20;
            printf("  %8.3f ms %6.1f TFLOP/s", ms, flops / ms * 1e-9);
            CK(cudaEventDestroy(e0));
            CK(cudaEventDestroy(e1));
        }
        printf("\n");
    }
    free(hy);
    free(hr);
    cudaFree(x); cudaFree(w); cudaFree(y); cudaFree(y0); cudaFree(ref);
    return fails;
}

int main(int argc, char **argv)
{
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("f32_igemm_lab: no CUDA device, skipped\n");
        return 77;
    }
    int fails = 0, total = 0;
    const Layer small[] = {
        /* n  c   h   w   k  r  s str pad dil alpha beta */
        {2, 16, 9, 7, 8, 3, 3, 1, 1, 1, 1.f, 0.f},
        {3, 32, 13, 11, 68, 3, 3, 2, 1, 1, 1.f, 0.5f},
        {1, 48, 17, 19, 132, 5, 3, 1, 2, 2, 2.f, -1.f},
        {4, 64, 6, 6, 64, 1, 1, 1, 0, 1, 1.f, 0.f},
        {2, 16, 30, 30, 200, 3, 3, 3, 0, 1, 0.5f, 1.f},
    };
    for (const Layer &L : small) {
        fails += run_layer(L, 0);
        total += NV;
    }
    const Layer big[] = {
        {32, 64, 224, 224, 64, 3, 3, 1, 1, 1, 1.f, 0.f},
        {128, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1.f, 0.f},
        {32, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1.f, 0.f},
        {32, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1.f, 0.f},
        {32, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1.f, 0.f},
    };
    for (const Layer &L : big) {
        fails += run_layer(L, !quick);
        total += NV;
    }
    printf("f32_igemm_lab: %d of %d layer x variant cases PASS%s\n", total - fails, total, fails ? "  <-- FAILURES" : "");
    return fails ? 1 : 0;
}
