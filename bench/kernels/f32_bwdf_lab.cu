/* f32_bwdf_lab: the FLOAT (fp32, plain FMA, no tensor cores) split-K backward-filter kernel of
 * src/cuda/conv_bwd_filter_f32.cuh on its own, for packed NHWC x [N,H,W,C] / dy [N,P,Q,K] and a
 * KRSC dw, in six variants (table `variants`).
 *
 * src/cuda/conv_bwd_filter_f32.cu is its library form (the v 64x128 t8x8 variant for C % 4 == 0,
 * g 64x64 t8x4 otherwise). Run on one H200 (132 SMs, CUDA 13.0, nvcc -arch=sm_90a -O3): 118 of 118
 * variant x case checks PASS (largest normalized error 1.8e-7), compute-sanitizer memcheck /
 * racecheck / synccheck / initcheck clean on --small; whole run ~1.5 s.
 * Measured there (ms, best variant; cuDNN 9 / FreeDNN now): seed 3.09 (v 64x128; 5.73 / 8.69),
 * conv1 0.338 (g 64x64; 0.44 / 1.02), 64_56 0.232 (v 64x64 t8x4; 0.385 / 0.545), b128 64_56
 * 0.803 (v 64x128; 1.455 / 2.18), 128_28 0.189 (v 64x128; 0.39 / 0.224), 256_14 0.186
 * (v 64x128; 0.296 / 0.184), 512_7 0.200 (v 64x128; 0.222 / 0.196). One run only, not a sweep.
 *
 * Math: dw[k][r][s][c] = alpha * sum_{n,p,q} dy[n,p,q,k] * x[n, p*sh-ph+r*dh, q*sw-pw+s*dw, c]
 * (zero outside the image) + beta * dw_old (beta == 0: dw_old is never read; it may be NaN).
 * GEMM view: dW[K x RSC] = dY^T[K x NPQ] * Xcol[NPQ x RSC], reduction over NPQ = N*P*Q (up to
 * 1.6 million), column j of Xcol = (r, s, c) flattened as (r*S + s)*C + c, i.e. the KRSC order.
 *
 * Kernel fdnn_f32bw::conv_bwd_filter_f32_kernel<BM, BN, TM, TN, NT, MINB, VEC>: block tile BM (over K) x BN (over RSC), NT
 * threads each a TM x TN register block made of (TM/4) x (TN/4) groups of 4 x 4: thread (tx, ty)
 * owns rows g*(BM/(TM/4)) + ty*4 + 0..3 and columns g*(BN/(TN/4)) + tx*4 + 0..3, so a warp's
 * 16-byte shared reads are either broadcasts or contiguous (at most 256 bytes for 16 distinct
 * float4: the 2-wavefront minimum; no bank conflicts).
 *   - The reduction goes in slices of BK = 16 npq rows. Both operands are reduction-major in
 *     memory (dy[npq][k..k+3] and, for C % 4 == 0, x's 4 channels of one tap are contiguous
 *     float4), so the shared tiles As[BK][BM], Bs[BK][BN] are stored without a transpose, no
 *     padding: every 16-byte shared store of a warp covers contiguous bytes (conflict-free).
 *   - Double-buffered shared tiles; global loads (__ldg, float4 for dy and, VEC, for x) of slice
 *     t+1 go to registers before the FMAs of slice t and to the other shared buffer after them:
 *     one __syncthreads per slice.
 *   - In-bounds test of an Xcol element = f(npq row, tap). Each thread's Xcol column (tap r,s,
 *     channel c; VEC: a channel quad) is fixed for the block: its (r*dh, s*dw, x offset) are
 *     precomputed once. The npq rows are decoded once per slice into a small shared table
 *     Ri[2][BK] = {h0 = p*sh-ph, w0 = q*sw-pw, ((n*H + h0)*W + w0)*C}: 16 lanes of one warp (a
 *     different warp each slice) decode slice t+2 during slice t (written to the Ri buffer that
 *     slice t's loads used, which the barrier of slice t-1 has freed; read by slice t+2's loads
 *     after the barrier of slice t). A loader then reads its row's entry (a broadcast LDS.128)
 *     instead of keeping per-row state in registers or dividing per element. Rows past the
 *     block's range get h0 = -2^29 (fails the test) and load dy as 0.
 *   - VEC (C % 4 == 0): x loads are float4 (4 channels of one tap); thread tid loads Bs rows
 *     tid/(BN/4) + i*(NT/(BN/4)), column quad tid % (BN/4). Generic (any C, used for C % 4 != 0,
 *     e.g. conv1 with C = 3): scalar x loads, column tid % BN (consecutive lanes = consecutive
 *     (r,s,c): contiguous in x within one filter row when dw = 1), rows tid/BN + i*(NT/BN).
 *     Columns >= RSC and out-of-image taps load 0.
 *   - dy loads: float4 (K % 4 == 0 is required; checked on the host), thread tid loads As rows
 *     tid/(BM/4) + i*(NT/(BM/4)), k quad tid % (BM/4); quads >= K load 0 (partial K tiles).
 *   - Split-K: gridDim.z = splits; block z reduces npq rows [z*chunk, min((z+1)*chunk, NPQ)),
 *     chunk a multiple of BK (after rounding, splits = ceil(NPQ / chunk), so no split is empty).
 *     splits > 1: partial sums (no alpha) go to a float workspace [splits][K][RSC] and
 *     bwdf_f32_reduce_kernel sums the splits in a fixed order (4 interleaved accumulators, combined as
 *     (a0+a1)+(a2+a3): deterministic) and applies alpha / beta. splits == 1: the kernel applies
 *     alpha / beta itself. Stores are float4 when RSC % 4 == 0, scalar otherwise.
 *   - splits: blocks per SM from cudaOccupancyMaxActiveBlocksPerMultiprocessor, wave = that x
 *     SMs; if the tile grid alone is under 2 waves, the split count with 2..4 waves whose last
 *     wave is fullest (the fewest splits on a tie), at most NPQ/256 (>= ~256 rows per split).
 *
 * Variants (table `variants`): v* = VEC (C % 4 == 0 only), g* = generic C.
 *   v 64x128 t8x8, v 128x64 t8x8 (128 threads, 8x8 each), v 64x64 t8x4, v 64x64 t4x8,
 *   g 64x64 t8x4, g 64x128 t8x8.
 *
 * Check: one reference block per checked output (256 threads striding over NPQ, accumulating the
 * sum and the sum of |terms| in double, reduced in shared memory); every output when K*RSC <=
 * 4096, else 2048 spread evenly (first and last included). PASS when for every checked output
 * |got - (alpha*ref + beta*old)| <= 2e-5 * (|alpha|*sumabs + |beta*old|) + 1e-30; the printed
 * error is the largest |got - expected| / (|alpha|*sumabs + |beta*old|). beta == 0 cases marked
 * NaN start from a NaN-filled dw. Timed (big cases, not with --quick): 20 launches after 3
 * warm-ups (cudaEvents), split reduction included; TFLOP/s = 2*NPQ*K*RSC / time.
 * Usage: f32_bwdf_lab [--quick] [--small] [--splits N]: --quick: no timing; --small: the small
 * cases only (for compute-sanitizer); --splits N: force N splits on the big cases.
 * Exit: 0 all PASS, 1 a failure, 2 a CUDA error, 77 no GPU. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <cuda_runtime.h>
#include "../../src/cuda/conv_bwd_filter_f32.cuh"
#include "lab_util.cuh"

using fdnn_f32bw::BK;
using Prob = fdnn_f32bw::BwdfF32;

static int g_nsm = 132;

struct Variant {
    const char *name;
    int bm, bn, vec;
    void (*launch)(const Prob &);
    int (*occ)(); /* resident blocks per SM */
};
template <int BM, int BN, int TM, int TN, int NT, int MINB, bool VEC> static void launch_v(const Prob &P)
{
    dim3 grid((unsigned)((P.rsc + BN - 1) / BN), (unsigned)((P.k + BM - 1) / BM), (unsigned)P.splits);
    fdnn_f32bw::conv_bwd_filter_f32_kernel<BM, BN, TM, TN, NT, MINB, VEC><<<grid, NT>>>(P);
    if (P.splits > 1) {
        const int n4 = P.k * P.rsc / 4;
        int blocks = (n4 + 255) / 256;
        if (blocks > g_nsm * 8) blocks = g_nsm * 8;
        fdnn_f32bw::bwdf_f32_reduce_kernel<<<blocks, 256>>>((const float4 *)P.ws, (float4 *)P.out, n4, P.splits, P.alpha, P.beta);
    }
}
template <int BM, int BN, int TM, int TN, int NT, int MINB, bool VEC> static int occ_v()
{
    int b = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, fdnn_f32bw::conv_bwd_filter_f32_kernel<BM, BN, TM, TN, NT, MINB, VEC>, NT, 0));
    return b > 0 ? b : 1;
}
#define VARIANT(name, BM, BN, TM, TN, NT, MINB, VEC) \
    {name, BM, BN, VEC, launch_v<BM, BN, TM, TN, NT, MINB, VEC>, occ_v<BM, BN, TM, TN, NT, MINB, VEC>}
static const Variant variants[] = {
    VARIANT("v 64x128 t8x8", 64, 128, 8, 8, 128, 3, true),
    VARIANT("v 128x64 t8x8", 128, 64, 8, 8, 128, 3, true),
    VARIANT("v 64x64 t8x4", 64, 64, 8, 4, 128, 4, true),
    VARIANT("v 64x64 t4x8", 64, 64, 4, 8, 128, 4, true),
    VARIANT("g 64x64 t8x4", 64, 64, 8, 4, 128, 4, false),
    VARIANT("g 64x128 t8x8", 64, 128, 8, 8, 128, 3, false),
};
constexpr int NV = sizeof(variants) / sizeof(variants[0]);

/* splits and chunk of variant v (the library's rule at this GPU's SM count); forced > 0: that many */
static void plan_splits(const Variant &V, Prob &P, int forced)
{
    fdnn_f32bw::split_plan(V.bm, V.bn, V.occ(), g_nsm, P.npq, P.k, P.rsc, forced, &P.splits, &P.chunk);
}

/* reference: one block per checked output idx[b]; double sum and sum of |terms| */
__global__ void ref_kernel(const Prob P, const int *idx, double *ref, double *refabs)
{
    __shared__ double ss[256], sa[256];
    const int e = idx[blockIdx.x];
    const int k = e / P.rsc, j = e - k * P.rsc;
    const int tap = j / P.c, c = j - tap * P.c, r = tap / P.s, s = tap - r * P.s;
    double sum = 0, sabs = 0;
    for (int m = threadIdx.x; m < P.npq; m += blockDim.x) {
        const int qq = m % P.q, t = m / P.q, pp = t % P.p, nn = t / P.p;
        const int hh = pp * P.sh - P.ph + r * P.dh, ww = qq * P.sw - P.pw + s * P.dw;
        if (hh < 0 || hh >= P.h || ww < 0 || ww >= P.w_) continue;
        const double v = (double)P.dy[(size_t)m * P.k + k] * (double)P.x[(((size_t)nn * P.h + hh) * P.w_ + ww) * P.c + c];
        sum += v;
        sabs += fabs(v);
    }
    ss[threadIdx.x] = sum;
    sa[threadIdx.x] = sabs;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if ((int)threadIdx.x < h) {
            ss[threadIdx.x] += ss[threadIdx.x + h];
            sa[threadIdx.x] += sa[threadIdx.x + h];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        ref[blockIdx.x] = ss[0];
        refabs[blockIdx.x] = sa[0];
    }
}

struct Layer {
    const char *name;
    int n, c, h, w, k, r, s, sh, sw, ph, pw, dh, dw;
    float alpha, beta;
    int nanfill;         /* beta == 0: dw starts as NaN */
    int splits;          /* forced split count (0: plan_splits) */
    double t_nv, t_fdnn; /* ms to beat (NVIDIA cuDNN 9, FreeDNN now); 0: untimed case */
};

/* one case: every applicable variant checked (and timed when `timed`); adds to *total, returns fails */
static int run_case(const Layer &L, int timed, int force_splits, int *total)
{
    Prob P = {};
    P.n = L.n; P.c = L.c; P.h = L.h; P.w_ = L.w; P.k = L.k; P.r = L.r; P.s = L.s;
    P.sh = L.sh; P.sw = L.sw; P.ph = L.ph; P.pw = L.pw; P.dh = L.dh; P.dw = L.dw;
    P.p = (L.h + 2 * L.ph - L.dh * (L.r - 1) - 1) / L.sh + 1;
    P.q = (L.w + 2 * L.pw - L.dw * (L.s - 1) - 1) / L.sw + 1;
    P.npq = L.n * P.p * P.q;
    P.rsc = L.r * L.s * L.c;
    P.alpha = L.alpha; P.beta = L.beta;
    const long long nx = (long long)L.n * L.h * L.w * L.c, ndy = (long long)P.npq * L.k, ndw = (long long)L.k * P.rsc;
    const double flops = 2.0 * P.npq * (double)L.k * P.rsc;
    printf("%-12s N%-3d C%-3d %3dx%-3d K%-3d %dx%d s%d,%d p%d,%d d%d,%d a%g b%g%s  NPQ %d RSC %d (%.2f GFLOP)", L.name, L.n, L.c,
           L.h, L.w, L.k, L.r, L.s, L.sh, L.sw, L.ph, L.pw, L.dh, L.dw, L.alpha, L.beta, L.nanfill ? " (dw NaN)" : "", P.npq,
           P.rsc, flops * 1e-9);
    if (L.t_nv > 0) printf("  to beat: cuDNN %.3f ms, FreeDNN %.3f ms", L.t_nv, L.t_fdnn);
    printf("\n");
    /* the kernels index x and dy with 32-bit ints (offsets past the end stay far below 2^31) */
    if (L.k % 4 || P.p <= 0 || P.q <= 0 || nx >= (1LL << 30) || ndy >= (1LL << 30)) {
        printf("  unsupported shape (K %% 4 != 0 or 32-bit index range), FAIL\n");
        *total += 1;
        return 1;
    }

    /* plans first: the workspace is allocated once, at the largest size needed */
    Prob plans[NV];
    long long wsmax = 0;
    for (int v = 0; v < NV; v++) {
        plans[v] = P;
        if (variants[v].vec && L.c % 4) continue;
        plan_splits(variants[v], plans[v], L.splits > 0 ? L.splits : force_splits);
        if (plans[v].splits > 1 && (long long)plans[v].splits * ndw > wsmax) wsmax = (long long)plans[v].splits * ndw;
    }

    float *x, *dy, *dw, *dw0, *ws = nullptr;
    CK(cudaMalloc(&x, nx * 4));
    CK(cudaMalloc(&dy, ndy * 4));
    CK(cudaMalloc(&dw, ndw * 4));
    CK(cudaMalloc(&dw0, ndw * 4));
    if (wsmax > 0) CK(cudaMalloc(&ws, wsmax * 4));
    fill_float_kernel<<<1024, 256>>>(x, nx, 1u);
    fill_float_kernel<<<1024, 256>>>(dy, ndy, 2u);
    if (L.nanfill)
        CK(cudaMemset(dw0, 0xff, ndw * 4)); /* 0xffffffff: a NaN */
    else
        fill_float_kernel<<<1024, 256>>>(dw0, ndw, 3u);
    CK(cudaGetLastError());
    P.x = x; P.dy = dy;

    /* checked outputs: all, or 2048 spread evenly (first and last included) */
    const int nchk = ndw <= 4096 ? (int)ndw : 2048;
    int *hidx = (int *)malloc(nchk * sizeof(int));
    for (int i = 0; i < nchk; i++) hidx[i] = ndw <= 4096 ? i : (int)((long long)i * (ndw - 1) / (nchk - 1));
    int *didx;
    double *dref, *dabs;
    CK(cudaMalloc(&didx, nchk * sizeof(int)));
    CK(cudaMalloc(&dref, nchk * 8));
    CK(cudaMalloc(&dabs, nchk * 8));
    CK(cudaMemcpy(didx, hidx, nchk * sizeof(int), cudaMemcpyHostToDevice));
    ref_kernel<<<nchk, 256>>>(P, didx, dref, dabs);
    CK(cudaGetLastError());
    double *href = (double *)malloc(nchk * 8), *habs = (double *)malloc(nchk * 8);
    float *hold = (float *)malloc(ndw * 4), *hdw = (float *)malloc(ndw * 4);
    CK(cudaMemcpy(href, dref, nchk * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(habs, dabs, nchk * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hold, dw0, ndw * 4, cudaMemcpyDeviceToHost));

    int fails = 0;
    for (int v = 0; v < NV; v++) {
        const Variant &V = variants[v];
        if (V.vec && L.c % 4) continue;
        Prob Q = plans[v];
        Q.x = x; Q.dy = dy; Q.out = dw; Q.ws = ws;
        CK(cudaMemcpy(dw, dw0, ndw * 4, cudaMemcpyDeviceToDevice));
        V.launch(Q);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(hdw, dw, ndw * 4, cudaMemcpyDeviceToHost));
        double maxe = 0;
        int pass = 1;
        for (int i = 0; i < nchk; i++) {
            const int e = hidx[i];
            const double bo = L.beta != 0.f ? (double)L.beta * hold[e] : 0.0;
            const double expct = (double)L.alpha * href[i] + bo;
            const double den = fabs((double)L.alpha) * habs[i] + fabs(bo);
            const double d = fabs((double)hdw[e] - expct);
            if (!(d <= 2e-5 * den + 1e-30)) pass = 0;
            const double ne = d == d ? d / (den + 1e-300) : INFINITY; /* NaN result: inf */
            if (ne > maxe) maxe = ne;
        }
        fails += !pass;
        *total += 1;
        const long long blocks = (long long)((P.rsc + V.bn - 1) / V.bn) * ((P.k + V.bm - 1) / V.bm) * Q.splits;
        printf("  %-14s splits %4d chunk %7d blocks %6lld occ %d  err %.1e %s", V.name, Q.splits, Q.chunk, blocks, V.occ(), maxe,
               pass ? "PASS" : "FAIL");
        if (timed) {
            cudaEvent_t e0, e1;
            CK(cudaEventCreate(&e0));
            CK(cudaEventCreate(&e1));
            for (int i = 0; i < 3; i++) V.launch(Q);
            CK(cudaEventRecord(e0));
            for (int i = 0; i < 20; i++) V.launch(Q);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            ms /= 20;
            printf("  %8.3f ms %6.2f TFLOP/s  (speed-up x%.2f vs cuDNN, x%.2f vs FreeDNN)", ms, flops / ms * 1e-9, L.t_nv / ms, L.t_fdnn / ms);
            CK(cudaEventDestroy(e0));
            CK(cudaEventDestroy(e1));
        }
        printf("\n");
    }
    free(hidx); free(href); free(habs); free(hold); free(hdw);
    cudaFree(didx); cudaFree(dref); cudaFree(dabs);
    cudaFree(x); cudaFree(dy); cudaFree(dw); cudaFree(dw0);
    if (ws) cudaFree(ws);
    return fails;
}

int main(int argc, char **argv)
{
    int quick = 0, small_only = 0, force_splits = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--small"))
            small_only = 1;
        else if (!strcmp(argv[i], "--splits") && i + 1 < argc)
            force_splits = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: f32_bwdf_lab [--quick] [--small] [--splits N]\n");
            return 2;
        }
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("f32_bwdf_lab: no CUDA device, skipped\n");
        return 77;
    }
    CK(cudaDeviceGetAttribute(&g_nsm, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("f32_bwdf_lab on %s (%d SMs)\n", prop.name, g_nsm);

    int fails = 0, total = 0;
    const Layer small[] = {
        /* name          n   c   h   w   k  r  s sh sw ph pw dh dw alpha beta nan splits */
        {"partialKRSC", 2, 12, 9, 9, 68, 3, 3, 1, 1, 1, 1, 1, 1, 1.f, 0.f, 0, 0, 0, 0},
        {"partial-split", 4, 12, 15, 13, 68, 3, 3, 1, 1, 1, 1, 1, 1, 1.f, 0.f, 1, 5, 0, 0},
        {"stride2", 3, 16, 13, 11, 32, 3, 3, 2, 2, 1, 1, 1, 1, 2.f, -1.f, 0, 3, 0, 0},
        {"stride3", 2, 8, 30, 31, 40, 3, 3, 3, 3, 0, 0, 1, 1, 1.f, 0.5f, 0, 0, 0, 0},
        {"stride3-split", 5, 8, 30, 31, 40, 3, 3, 3, 3, 0, 0, 1, 1, 1.f, 0.5f, 0, 4, 0, 0},
        {"s2x1-dil", 2, 8, 12, 14, 16, 3, 3, 2, 1, 2, 1, 1, 2, 1.f, 0.f, 1, 2, 0, 0},
        {"dil2-5x3", 1, 20, 17, 19, 36, 5, 3, 1, 1, 4, 2, 2, 2, 2.f, -1.f, 0, 2, 0, 0},
        {"C3-7x7s2", 2, 3, 37, 29, 64, 7, 7, 2, 2, 3, 3, 1, 1, 1.f, 0.f, 1, 0, 0, 0},
        {"C3-7x7s2-1", 2, 3, 37, 29, 64, 7, 7, 2, 2, 3, 3, 1, 1, 1.f, 0.5f, 0, 1, 0, 0},
        {"C16-1x1s2", 2, 16, 9, 7, 8, 1, 1, 2, 2, 0, 0, 1, 1, 1.f, 0.f, 1, 1, 0, 0},
        {"C16-3x3", 2, 16, 9, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1.f, 0.5f, 0, 0, 0, 0},
        {"PQ1", 37, 8, 3, 3, 12, 3, 3, 1, 1, 0, 0, 1, 1, 1.f, 0.f, 1, 2, 0, 0},
        {"C5-3x2", 3, 5, 20, 18, 20, 3, 2, 1, 1, 1, 0, 1, 1, 2.f, -1.f, 0, 0, 0, 0},
        {"C1", 2, 1, 11, 11, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1.f, 0.f, 1, 0, 0, 0},
        {"C32-auto", 4, 32, 20, 20, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1.f, 0.f, 1, 0, 0, 0},
        {"K260", 2, 8, 10, 10, 260, 3, 3, 1, 1, 1, 1, 1, 1, 1.f, 0.5f, 0, 2, 0, 0},
    };
    for (const Layer &L : small) fails += run_case(L, 0, 0, &total);
    const Layer big[] = {
        {"seed", 32, 64, 224, 224, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1.f, 0.f, 0, 0, 5.73, 8.69},
        {"conv1", 32, 3, 224, 224, 64, 7, 7, 2, 2, 3, 3, 1, 1, 1.f, 0.f, 0, 0, 0.44, 1.02},
        {"64_56", 32, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1.f, 0.f, 0, 0, 0.385, 0.545},
        {"b128 64_56", 128, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1.f, 0.f, 0, 0, 1.455, 2.18},
        {"128_28", 32, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1.f, 0.f, 0, 0, 0.39, 0.224},
        {"256_14", 32, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1.f, 0.f, 0, 0, 0.296, 0.184},
        {"512_7", 32, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1.f, 0.f, 0, 0, 0.222, 0.196},
    };
    if (!small_only)
        for (const Layer &L : big) fails += run_case(L, !quick, force_splits, &total);
    printf("f32_bwdf_lab: %d of %d cases PASS%s\n", total - fails, total, fails ? "  <-- FAILURES" : "");
    return fails ? 1 : 0;
}
