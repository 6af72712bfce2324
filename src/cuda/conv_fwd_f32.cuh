/* The FLOAT (FMA math) forward implicit-GEMM kernel, shared by the library (conv_fwd_f32.cu,
 * which describes the design and runs the 128x64 tile with 8x8 per thread and 128 threads) and
 * its lab (bench/kernels/f32_igemm_lab.cu, which checks and times seven tile shapes, WHOLE).
 * Tile BM x BN, NT threads of TM x TN made of (TM/4) x (TN/4) groups of 4 x 4. Self-contained:
 * CUDA runtime and conv_f32_tile.cuh only. */
#pragma once
#include <cuda_runtime.h>
#include "conv_f32_tile.cuh"

namespace fdnn_f32fw {

struct F32Conv {
    const float *x, *w;
    float *y;
    int n, h, w_, c, k, r, s, p, q, sh, sw, ph, pw, dh, dw, flip;
    float alpha, beta;
    int m; /* N*P*Q */
};

constexpr int BK = 16; /* reduction elements per slice */

/* WHOLE: C % 16 == 0, a slice is 16 channels of one tap. Otherwise C % 4 == 0: the reduction
 * index kidx = tap*C + c runs over R*S*C in slices of 16 (the last one zero-filled past the end),
 * each thread's quad of 4 channels lying in one tap, decoded per slice. */
template <int BM, int BN, int TM, int TN, int NT, int MINB, bool WHOLE>
__global__ void __launch_bounds__(NT, MINB) conv_fwd_f32_kernel(const F32Conv P)
{
    constexpr int TXN = BN / TN, TYN = BM / TM;
    static_assert(TXN * TYN == NT && TM % 4 == 0 && TN % 4 == 0, "thread grid");
    constexpr int LA = BM * 4 / NT, LB = (BN * 4 + NT - 1) / NT; /* float4 loads per thread per slice */
    static_assert(LA >= 1 && LA * NT == BM * 4, "A loads");
    constexpr int LDA = BM + 4, LDB = BN + 4;
    __shared__ __align__(16) float As[2][BK][LDA];
    __shared__ __align__(16) float Bs[2][BK][LDB];
    const int tid = threadIdx.x, tx = tid % TXN, ty = tid / TXN;
    const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
    const int quad = tid % 4;  /* channel quad of this thread's loads */
    const int lrow = tid / 4;  /* its A rows lrow + 32 i, B rows lrow + 32 j */

    long long apix[LA];
    int ah0[LA], aw0[LA];
#pragma unroll
    for (int i = 0; i < LA; i++) {
        const int m = m0 + lrow + (NT / 4) * i;
        if (m < P.m) {
            const int qq = m % P.q, t = m / P.q, pp = t % P.p, nn = t / P.p;
            ah0[i] = pp * P.sh - P.ph;
            aw0[i] = qq * P.sw - P.pw;
            apix[i] = (((long long)nn * P.h + ah0[i]) * P.w_ + aw0[i]) * P.c;
        } else {
            ah0[i] = -(1 << 29); /* no bounds test passes */
            aw0[i] = 0;
            apix[i] = 0;
        }
    }
    const int taps = P.r * P.s;
    const float *wrow[LB];
    bool bok[LB];
#pragma unroll
    for (int j = 0; j < LB; j++) {
        const int kk = n0 + lrow + (NT / 4) * j;
        bok[j] = lrow + (NT / 4) * j < BN && kk < P.k;
        wrow[j] = P.w + (long long)(bok[j] ? kk : 0) * taps * P.c;
    }

    const int cslices = P.c / BK, kg = taps * P.c;
    const int nslices = WHOLE ? taps * cslices : (kg + BK - 1) / BK;
    float4 ra[LA], rb[LB];
    auto fetch = [&](int t) { /* slice t into registers */
        int tap, c;
        bool in = true;
        if (WHOLE) {
            tap = t / cslices;
            c = (t - tap * cslices) * BK + quad * 4;
        } else {
            const int kidx = t * BK + quad * 4;
            in = kidx < kg;
            tap = in ? kidx / P.c : 0;
            c = kidx - tap * P.c;
        }
        const int rr = tap / P.s, ss = tap - rr * P.s;
        const int dh = rr * P.dh, dw = ss * P.dw;
        const long long xoff = ((long long)dh * P.w_ + dw) * P.c + c;
#pragma unroll
        for (int i = 0; i < LA; i++) {
            const bool ok = in && (unsigned)(ah0[i] + dh) < (unsigned)P.h && (unsigned)(aw0[i] + dw) < (unsigned)P.w_;
            ra[i] = ok ? __ldg((const float4 *)(P.x + apix[i] + xoff)) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
        const int woff = (P.flip ? taps - 1 - tap : tap) * P.c + c;
#pragma unroll
        for (int j = 0; j < LB; j++)
            rb[j] = bok[j] && in ? __ldg((const float4 *)(wrow[j] + woff)) : make_float4(0.f, 0.f, 0.f, 0.f);
    };
    auto stash = [&](int buf) { /* registers -> shared, transposed */
#pragma unroll
        for (int i = 0; i < LA; i++) {
            const int r = lrow + (NT / 4) * i;
            As[buf][quad * 4 + 0][r] = ra[i].x;
            As[buf][quad * 4 + 1][r] = ra[i].y;
            As[buf][quad * 4 + 2][r] = ra[i].z;
            As[buf][quad * 4 + 3][r] = ra[i].w;
        }
#pragma unroll
        for (int j = 0; j < LB; j++) {
            const int r = lrow + (NT / 4) * j;
            if (r < BN) {
                Bs[buf][quad * 4 + 0][r] = rb[j].x;
                Bs[buf][quad * 4 + 1][r] = rb[j].y;
                Bs[buf][quad * 4 + 2][r] = rb[j].z;
                Bs[buf][quad * 4 + 3][r] = rb[j].w;
            }
        }
    };

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.f;

    fetch(0); /* nslices >= 1 */
    stash(0);
    __syncthreads();
    for (int t = 0; t < nslices; t++) {
        const int buf = t & 1;
        if (t + 1 < nslices) fetch(t + 1);
#pragma unroll
        for (int k = 0; k < BK; k++) fdnn_f32tile::outer_step<TM, TN, TYN, TXN>(acc, As[buf][k], Bs[buf][k], ty, tx);
        /* the other buffer was last read in slice t - 1, before this slice's barrier */
        if (t + 1 < nslices) stash(buf ^ 1);
        __syncthreads();
    }

#pragma unroll
    for (int gj = 0; gj < TN / 4; gj++) {
        const int col = n0 + gj * (TXN * 4) + tx * 4;
        if (col >= P.k) continue; /* K % 4 == 0: the four columns are all in or all out */
#pragma unroll
        for (int i = 0; i < TM; i++) {
            const int m = m0 + (i / 4) * (TYN * 4) + ty * 4 + (i % 4);
            if (m >= P.m) continue;
            float4 *dst = (float4 *)(P.y + (long long)m * P.k + col);
            float4 o = make_float4(P.alpha * acc[i][gj * 4 + 0], P.alpha * acc[i][gj * 4 + 1], P.alpha * acc[i][gj * 4 + 2],
                                   P.alpha * acc[i][gj * 4 + 3]);
            if (P.beta != 0.f) {
                const float4 old = *dst;
                o.x = fmaf(P.beta, old.x, o.x);
                o.y = fmaf(P.beta, old.y, o.y);
                o.z = fmaf(P.beta, old.z, o.z);
                o.w = fmaf(P.beta, old.w, o.w);
            }
            *dst = o;
        }
    }
}

} // namespace fdnn_f32fw
