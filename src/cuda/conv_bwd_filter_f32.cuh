/* The FLOAT (FMA math) split-K backward-filter kernel, shared by the library
 * (conv_bwd_filter_f32.cu, which describes the design) and its lab (bench/kernels/f32_bwdf_lab.cu,
 * which checks and times its tile variants). Self-contained: CUDA runtime and conv_f32_tile.cuh only. */
#pragma once
#include <cuda_runtime.h>
#include "conv_f32_tile.cuh"

namespace fdnn_f32bw {

struct BwdfF32 {
    const float *x, *dy;
    float *out, *ws; /* dw (KRSC); split workspace [splits][K][RSC] (splits > 1) */
    int n, h, w_, c, k, r, s, p, q, sh, sw, ph, pw, dh, dw, flip; /* dh, dw: dilations */
    float alpha, beta;
    int npq, rsc; /* N*P*Q, R*S*C */
    int splits, chunk;
};

constexpr int BK = 16;          /* npq rows per slice */
constexpr int OOB = -(1 << 29); /* h offset that fails every bounds test (no overflow when two are added) */

template <int BM, int BN, int TM, int TN, int NT, int MINB, bool VEC>
__global__ void __launch_bounds__(NT, MINB) conv_bwd_filter_f32_kernel(const BwdfF32 P)
{
    constexpr int TXN = BN / TN, TYN = BM / TM, GN = TN / 4, NW = NT / 32;
    static_assert(TM % 4 == 0 && TN % 4 == 0 && TXN * TYN == NT, "thread grid");
    static_assert(NT % 32 == 0 && NT >= 2 * BK && BK <= 32, "row decode lanes");
    constexpr int AQ = BM / 4;            /* dy float4 per tile row */
    static_assert(NT % AQ == 0, "A loaders");
    constexpr int ARS = NT / AQ, LA = BK / ARS; /* a thread loads dy rows arow + i*ARS, i < LA */
    static_assert(LA * ARS == BK, "A loads");
    constexpr int BQ = VEC ? BN / 4 : BN; /* x loaders per tile row */
    static_assert(NT % BQ == 0, "B loaders");
    constexpr int BRS = NT / BQ, LB = BK / BRS; /* a thread loads Xcol rows brow + i*BRS, i < LB */
    static_assert(LB * BRS == BK, "B loads");
    constexpr int EB = VEC ? 4 : 1;       /* floats per x load */

    __shared__ __align__(16) float As[2][BK][BM];
    __shared__ __align__(16) float Bs[2][BK][BN];
    __shared__ __align__(16) int4 Ri[2][BK];

    const int tid = threadIdx.x, tx = tid % TXN, ty = tid / TXN;
    const int j0 = blockIdx.x * BN, k0 = blockIdx.y * BM, z = blockIdx.z;
    const int mstart = z * P.chunk;
    const int mend = min(mstart + P.chunk, P.npq);
    const int nsl = mend > mstart ? (mend - mstart + BK - 1) / BK : 0;

    /* dy loader: k quad fixed for the block */
    const int aquad = tid % AQ, arow = tid / AQ;
    const bool aok = k0 + aquad * 4 < P.k;
    const int acol = aok ? k0 + aquad * 4 : 0;

    /* x loader: Xcol column (tap r,s and channel c) fixed for the block */
    const int bcol = (tid % BQ) * EB, brow = tid / BQ;
    int bhr = OOB, bws = 0, boff = 0;
    {
        const int jb = j0 + bcol;
        if (jb < P.rsc) {
            const int tap0 = jb / P.c, c = jb - tap0 * P.c;
            const int tap = P.flip ? P.r * P.s - 1 - tap0 : tap0; /* CONVOLUTION: dw[r][s] pairs with x at the mirrored tap */
            const int r = tap / P.s, s = tap - r * P.s;
            bhr = r * P.dh;
            bws = s * P.dw;
            boff = (bhr * P.w_ + bws) * P.c + c;
        }
    }

    /* Ri[buf][row] for npq row mstart + t*BK + row */
    auto decode = [&](int t, int row, int buf) {
        const int m = mstart + t * BK + row;
        int4 v = make_int4(OOB, 0, 0, 0);
        if (m < mend) {
            const int qq = m % P.q, tq = m / P.q, pp = tq % P.p, nn = tq / P.p;
            const int h0 = pp * P.sh - P.ph, w0 = qq * P.sw - P.pw;
            v = make_int4(h0, w0, ((nn * P.h + h0) * P.w_ + w0) * P.c, 0);
        }
        Ri[buf][row] = v;
    };

    float4 ra[LA];
    float rb[LB * EB];
    auto fetch = [&](int t) {
        const int mb = mstart + t * BK, rem = mend - mb;
#pragma unroll
        for (int i = 0; i < LA; i++) {
            const int row = arow + i * ARS;
            ra[i] = (aok && row < rem) ? __ldg((const float4 *)(P.dy + ((mb + row) * P.k + acol)))
                                       : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int i = 0; i < LB; i++) {
            const int4 v = Ri[t & 1][brow + i * BRS];
            const bool ok = (unsigned)(v.x + bhr) < (unsigned)P.h && (unsigned)(v.y + bws) < (unsigned)P.w_;
            if constexpr (VEC) {
                const float4 g = ok ? __ldg((const float4 *)(P.x + (v.z + boff))) : make_float4(0.f, 0.f, 0.f, 0.f);
                rb[i * 4 + 0] = g.x;
                rb[i * 4 + 1] = g.y;
                rb[i * 4 + 2] = g.z;
                rb[i * 4 + 3] = g.w;
            } else {
                rb[i] = ok ? __ldg(P.x + (v.z + boff)) : 0.f;
            }
        }
    };
    auto stash = [&](int buf) {
#pragma unroll
        for (int i = 0; i < LA; i++) *(float4 *)&As[buf][arow + i * ARS][aquad * 4] = ra[i];
#pragma unroll
        for (int i = 0; i < LB; i++) {
            if constexpr (VEC)
                *(float4 *)&Bs[buf][brow + i * BRS][bcol] = make_float4(rb[i * 4 + 0], rb[i * 4 + 1], rb[i * 4 + 2], rb[i * 4 + 3]);
            else
                Bs[buf][brow + i * BRS][bcol] = rb[i];
        }
    };

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.f;

    /* prologue: row tables of slices 0 and 1, then slice 0 into buffer 0 */
    if (tid < 2 * BK) decode(tid / BK, tid % BK, tid / BK);
    __syncthreads();
    if (nsl > 0) {
        fetch(0);
        stash(0);
    }
    __syncthreads();
    const int warp = tid / 32, lane = tid % 32;
    for (int t = 0; t < nsl; t++) {
        const int buf = t & 1;
        if (t + 1 < nsl) fetch(t + 1);
        /* slice t+2's rows into Ri[buf] (slice t's table, last read before the previous barrier) */
        if (warp == t % NW && lane < BK) decode(t + 2, lane, buf);
#pragma unroll
        for (int kk = 0; kk < BK; kk++) fdnn_f32tile::outer_step<TM, TN, TYN, TXN>(acc, As[buf][kk], Bs[buf][kk], ty, tx);
        if (t + 1 < nsl) stash(buf ^ 1);
        __syncthreads();
    }

    /* epilogue: splits > 1: raw partial sums into the workspace slice z; else alpha / beta into dw */
    const bool split = P.splits > 1;
    float *out = split ? P.ws + (size_t)z * P.k * P.rsc : P.out;
    const bool v4 = (P.rsc & 3) == 0;
    const float alpha = split ? 1.f : P.alpha, beta = split ? 0.f : P.beta;
#pragma unroll
    for (int gj = 0; gj < GN; gj++) {
        const int col = j0 + gj * (TXN * 4) + tx * 4;
        if (col >= P.rsc) continue;
#pragma unroll
        for (int i = 0; i < TM; i++) {
            const int row = k0 + (i / 4) * (TYN * 4) + ty * 4 + (i % 4);
            if (row >= P.k) continue;
            float *dst = out + (size_t)row * P.rsc + col;
            float o[4];
#pragma unroll
            for (int e = 0; e < 4; e++) o[e] = alpha * acc[i][gj * 4 + e];
            if (v4) { /* col % 4 == 0 and RSC % 4 == 0: the quad is in range and 16-byte aligned */
                if (beta != 0.f) {
                    const float4 old = *(const float4 *)dst;
                    o[0] = fmaf(beta, old.x, o[0]);
                    o[1] = fmaf(beta, old.y, o[1]);
                    o[2] = fmaf(beta, old.z, o[2]);
                    o[3] = fmaf(beta, old.w, o[3]);
                }
                *(float4 *)dst = make_float4(o[0], o[1], o[2], o[3]);
            } else {
#pragma unroll
                for (int e = 0; e < 4; e++)
                    if (col + e < P.rsc) dst[e] = beta != 0.f ? fmaf(beta, dst[e], o[e]) : o[e];
            }
        }
    }
}

/* dw = alpha * sum_z ws[z] + beta * dw, n4 = K*RSC/4 float4 (K % 4 == 0); fixed summation order */
__global__ void bwdf_f32_reduce_kernel(const float4 *__restrict__ ws, float4 *dw, int n4, int splits, float alpha, float beta)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        float4 a[4];
#pragma unroll
        for (int u = 0; u < 4; u++) a[u] = make_float4(0.f, 0.f, 0.f, 0.f);
        int z = 0;
        for (; z + 4 <= splits; z += 4) {
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const float4 v = __ldg(ws + (size_t)(z + u) * n4 + i);
                a[u].x += v.x; a[u].y += v.y; a[u].z += v.z; a[u].w += v.w;
            }
        }
        for (; z < splits; z++) {
            const float4 v = __ldg(ws + (size_t)z * n4 + i);
            a[0].x += v.x; a[0].y += v.y; a[0].z += v.z; a[0].w += v.w;
        }
        float4 o;
        o.x = alpha * ((a[0].x + a[1].x) + (a[2].x + a[3].x));
        o.y = alpha * ((a[0].y + a[1].y) + (a[2].y + a[3].y));
        o.z = alpha * ((a[0].z + a[1].z) + (a[2].z + a[3].z));
        o.w = alpha * ((a[0].w + a[1].w) + (a[2].w + a[3].w));
        if (beta != 0.f) {
            const float4 old = dw[i];
            o.x = fmaf(beta, old.x, o.x);
            o.y = fmaf(beta, old.y, o.y);
            o.z = fmaf(beta, old.z, o.z);
            o.w = fmaf(beta, old.w, o.w);
        }
        dw[i] = o;
    }
}


/* splits and chunk (npq rows per split, a multiple of BK) of problem (npq, k, rsc) for tile bm x bn
 * with occ resident blocks per SM on sms SMs: when the tile grid is under 2 waves, the count with
 * 2..4 waves whose last wave is fullest (the fewest on a tie), at most npq / 256; forced > 0: that
 * many. Capped by the slices and by 65535; no split is empty. */
static inline void split_plan(int bm, int bn, int occ, int sms, long long npq, int k, long long rsc, int forced, int *splits, int *chunk)
{
    const long long tiles = ((rsc + bn - 1) / bn) * ((k + bm - 1) / bm);
    const long long wave = (long long)occ * sms;
    long long s = 1;
    if (forced > 0) {
        s = forced;
    } else if (tiles < 2 * wave) {
        const long long maxs = npq / 256 > 1 ? npq / 256 : 1;
        const long long lo = (2 * wave + tiles - 1) / tiles, hi = 4 * wave / tiles;
        if (lo >= maxs) {
            s = maxs;
        } else {
            double best = -1;
            for (long long c = lo; c <= hi && c <= maxs; c++) {
                const long long blocks = tiles * c, nw = (blocks + wave - 1) / wave;
                const double eff = (double)blocks / (double)(nw * wave); /* fill of the last wave */
                if (eff > best + 1e-3) {
                    best = eff;
                    s = c;
                }
            }
        }
    }
    const long long maxsl = (npq + BK - 1) / BK;
    if (s > maxsl) s = maxsl;
    if (s > 65535) s = 65535;
    if (s < 1) s = 1;
    long long ch = (npq + s - 1) / s;
    ch = (ch + BK - 1) / BK * BK;
    *chunk = (int)ch;
    *splits = (int)((npq + ch - 1) / ch); /* no empty split */
}

} // namespace fdnn_f32bw
