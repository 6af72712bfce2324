/* Tensor-core implicit-GEMM backward-filter convolution for HALF / BFLOAT16 (float accumulation)
 * on packed NHWC x / dy and a KRSC filter gradient, sm_80+ (inline PTX mma.sync m16n8k16,
 * ldmatrix.trans, cp.async). Self-contained (no FreeDNN headers) so that bench/kernels/bwdf_lab.cu
 * can include it; src/cuda/conv_bwd_filter_mma.cu wraps it for the library.
 *
 * GEMM view (groups == 1):  dW[K, RSC] = dY^T[K, NPQ] * Xcol[NPQ, RSC]
 *   rows    m   = output channel k                (dW is row-major [K][R*S*C])
 *   columns n   = (r, s, c), c fastest            (C % 8 == 0: 8 consecutive n are 8 channels of
 *                                                  one tap, one 16-byte vector)
 *   reduction npq = (n, p, q)  NPQ = N*P*Q
 *   dY^T[k, npq] = dy[npq][k]
 *   Xcol[npq, (r,s,c)] = x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c]   (0 outside the image)
 *   CUDNN_CONVOLUTION (flip) writes column (r, s, c) to filter tap (R-1-r, S-1-s).
 * Both operands are reduction-major in memory: a slice of 32 npq rows is copied (cp.async, 16
 * bytes = 8 consecutive m or n values, zero-filled outside the image / past the split / past K or
 * RSC) into shared memory as [npq][m] and [npq][n] rows, and ldmatrix .trans turns those into the
 * row-major A (m x npq) and column-major B (npq x n) fragments of mma.m16n8k16. Shared rows are
 * BM*2 or BN*2 bytes (>= 128); 16-byte chunk c of row r is stored at chunk c ^ (r & 7), so the 8
 * row addresses of every ldmatrix phase (8 consecutive npq rows, one chunk column) fall in 8
 * distinct 16-byte bank groups. STAGES-deep cp.async ring as in conv_fwd_mma.cuh.
 * Split-K: blockIdx.z = split s takes npq rows [s*chunk, min((s+1)*chunk, NPQ)) (chunk a multiple
 * of 32, fixed by the problem: bwdf_plan). With one split the epilogue writes dw directly
 * (alpha/beta in float; beta == 0 never reads dw); with several, every split writes its float
 * partial tile to ws[s][K][RSC] and bwdf_reduce_kernel sums the splits in a fixed order,
 * applies alpha/beta and converts. Deterministic: every sum has a fixed order. */
#ifndef FDNN_CUDA_CONV_BWD_FILTER_MMA_CUH
#define FDNN_CUDA_CONV_BWD_FILTER_MMA_CUH
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "conv_mma_ptx.cuh"

namespace fdnn_bwdf {

/* Problem of the kernel; all tensors dense: x [N][H][W][C], dy [N][P][Q][K], dw [K][R][S][C]. */
struct BwdfParams {
    const void *x, *dy;
    void *out;          /* dw */
    float *ws;          /* [splits][K][RSC] float partial sums; unused with one split */
    int n, h, w_, c, k, r, s, p, q;
    int sh, sw, ph, pw, dh, dw; /* strides, padding, dilations */
    int flip;           /* 1: CUDNN_CONVOLUTION (filter tap (R-1-r, S-1-s)) */
    float alpha, beta;
    int npq;            /* N*P*Q, < 2^31 */
    int rsc;            /* R*S*C, < 2^31 */
    int chunk;          /* npq rows per split, a multiple of BK */
    int splits;
    int step_n, step_p, step_q; /* BK = step_n*P*Q + step_p*Q + step_q, step_p < P, step_q < Q */
};

constexpr int BK = 32;        /* reduction slice (npq rows) */
constexpr int NTHREADS = 256; /* 8 warps */
constexpr int STAGES = 4;
constexpr int TARGET_BLOCKS = 264;  /* ~2 waves of 132 SMs (H100/H200) */
constexpr int MIN_SPLIT_ROWS = 512; /* npq rows a split takes at least (16 slices) */

/* the element-type operations (mma, 2-element load/store) and the PTX copies */
template <typename T> using BwdfType = fdnn_ptx::MmaOps<T>;
using fdnn_ptx::cp_async16;
using fdnn_ptx::cp_async_commit;
using fdnn_ptx::cp_async_wait;
using fdnn_ptx::ldmatrix_x4_trans;

/* steps an npq row (n, p, q) by one slice (P.step_*, set by bwdf_set_step): one carry per digit
 * suffices (step_q < Q, step_p < P) */
__device__ __forceinline__ void bwdf_step_row(const BwdfParams &P, int &n, int &p, int &q)
{
    q += P.step_q;
    p += P.step_p;
    n += P.step_n;
    if (q >= P.q) { q -= P.q; p++; }
    if (p >= P.p) { p -= P.p; n++; }
}

/* the npq rows [begin, end) a split reduces (P.chunk rows from split * P.chunk, the last split
 * shorter) and its number of slices of bk rows */
struct BwdfRange {
    int begin, end, ktiles;
};
__device__ __forceinline__ BwdfRange bwdf_range(const BwdfParams &P, int split, int bk)
{
    BwdfRange r;
    r.begin = split * P.chunk;
    r.end = min(r.begin + P.chunk, P.npq);
    r.ktiles = r.end > r.begin ? (r.end - r.begin + bk - 1) / bk : 0;
    return r;
}

/* byte offset of 16-byte chunk `chunk` of row `row` in a swizzled tile of ROWB-byte rows
 * (ROWB >= 128: the XOR of the chunk's low three bits stays inside the row). The row pattern
 * depends on how the tile is read: SPAN = 4 (ldmatrix, 8 rows of one chunk column per phase):
 * row & 7; the TF32 kernel's vector loads read 8 lanes = 4 rows (t) x 2 chunks (g) per phase,
 * the two chunks SPAN apart (SPAN = 1 or 2), so the pattern puts the row's low two bits on the
 * chunk bits the lanes' own offsets do not use: {0,2,4,6} (SPAN 1) or {0,1,4,5} (SPAN 2) for
 * rows 0-3, and row bit 2 on the remaining bit. */
template <int ROWB, int SPAN = 4>
__device__ __forceinline__ uint32_t bw_swz(int row, int chunk)
{
    static_assert(SPAN == 1 || SPAN == 2 || SPAN == 4, "span");
    const int pat = SPAN == 4 ? (row & 7)
                  : SPAN == 2 ? ((row & 1) | ((row & 2) << 1) | ((row & 4) >> 1))
                              : (((row & 3) << 1) | ((row >> 2) & 1));
    return (uint32_t)(row * ROWB + ((chunk ^ pat) << 4));
}

/* The copies of one reduction slice (BKR npq rows) of both operands into a ring stage of a
 * BM x BN tile, NT threads: A row = dy[npq][m0 .. m0+BM), B row = the filter columns n0 ..
 * n0+BN of Xcol for that npq; 16-byte chunks of EPC = 16 / sizeof(T) channels (K % EPC == 0 and
 * C % EPC == 0: a chunk is wholly inside or outside K / RSC and never straddles two taps), chunk
 * c of row r at bw_swz<ROWB, SPAN>(r, c). Thread tid copies chunk column tid % CPR of rows
 * tid / CPR + i * RSTEP, the same for every slice: slices are loaded in order 0, 1, 2, ..., so
 * the row state (n, p, q) just steps forward by BKR rows (P.step_*, bwdf_set_step). Zero-filled:
 * rows past the split, A columns past K, B columns past RSC and pixels outside the image. */
template <typename T, int BM, int BN, int NT, int BKR, int ASPAN, int BSPAN>
struct BwdfCopy {
    static constexpr int EPC = 16 / (int)sizeof(T);
    static constexpr int A_ROWB = BM * (int)sizeof(T), B_ROWB = BN * (int)sizeof(T); /* bytes of one npq row */
    static constexpr int A_BYTES = BKR * A_ROWB, B_BYTES = BKR * B_ROWB;
    static constexpr int A_CPR = BM / EPC, B_CPR = BN / EPC;                         /* chunks per shared row */
    static constexpr int A_IT = BKR * A_CPR / NT, B_IT = BKR * B_CPR / NT;            /* chunks per thread */
    static constexpr int A_RSTEP = NT / A_CPR, B_RSTEP = NT / B_CPR;                  /* row distance of a thread's chunks */
    static_assert(A_ROWB >= 128 && B_ROWB >= 128, "rows of at least 128 bytes (swizzle)");
    static_assert(A_IT >= 1 && B_IT >= 1 && NT % A_CPR == 0 && NT % B_CPR == 0, "copy assignment");

    int a_col, a_row0, b_col, b_row0, b_c, b_hoff, b_woff;
    int next_row, row_end; /* first npq row of the next slice to load; end of the split */
    bool a_col_ok, b_col_ok;
    const T *a_src;
    int b_n[B_IT], b_p[B_IT], b_q[B_IT]; /* (n, p, q) of each B row of the next slice */

    __device__ __forceinline__ BwdfCopy(const BwdfParams &P, int tid, int m0, int n0, int row_begin, int row_end_)
        : a_col(tid % A_CPR), a_row0(tid / A_CPR), b_col(tid % B_CPR), b_row0(tid / B_CPR), b_c(0), b_hoff(0), b_woff(0),
          next_row(row_begin), row_end(row_end_)
    {
        a_col_ok = m0 + a_col * EPC < P.k;
        a_src = (const T *)P.dy + (long long)(row_begin + a_row0) * P.k + m0 + a_col * EPC;
        const int bn = n0 + b_col * EPC;
        b_col_ok = bn < P.rsc;
        if (b_col_ok) {
            const int tap = bn / P.c;
            b_c = bn - tap * P.c;
            const int r = tap / P.s, s = tap - r * P.s;
            b_hoff = r * P.dh - P.ph;
            b_woff = s * P.dw - P.pw;
        }
#pragma unroll
        for (int i = 0; i < B_IT; i++) {
            const int v = row_begin + b_row0 + i * B_RSTEP;
            const int pq = P.p * P.q;
            b_n[i] = v / pq;
            const int rem = v - b_n[i] * pq;
            b_p[i] = rem / P.q;
            b_q[i] = rem - b_p[i] * P.q;
        }
    }

    /* issues the copies of the next slice into the stage whose A tile is at sa, B tile at sb */
    __device__ __forceinline__ void load(const BwdfParams &P, uint32_t sa, uint32_t sb)
    {
        const T *__restrict__ x = (const T *)P.x;
#pragma unroll
        for (int i = 0; i < A_IT; i++) {
            const int row = a_row0 + i * A_RSTEP;
            const bool ok = a_col_ok && next_row + row < row_end;
            cp_async16(sa + bw_swz<A_ROWB, ASPAN>(row, a_col), ok ? (const void *)(a_src + (long long)i * A_RSTEP * P.k) : P.dy,
                       ok ? 16 : 0);
        }
        a_src += (long long)BKR * P.k;
#pragma unroll
        for (int i = 0; i < B_IT; i++) {
            const int row = b_row0 + i * B_RSTEP;
            const int hh = b_p[i] * P.sh + b_hoff, ww = b_q[i] * P.sw + b_woff;
            const bool ok = b_col_ok && next_row + row < row_end && (unsigned)hh < (unsigned)P.h && (unsigned)ww < (unsigned)P.w_;
            const T *src = ok ? x + (((long long)b_n[i] * P.h + hh) * P.w_ + ww) * P.c + b_c : x;
            cp_async16(sb + bw_swz<B_ROWB, BSPAN>(row, b_col), src, ok ? 16 : 0);
            bwdf_step_row(P, b_n[i], b_p[i], b_q[i]); /* by BKR rows */
        }
        next_row += BKR;
    }
};

template <int BM, int BN>
struct BwdfTile {
    static constexpr int A_ROWB = BM * 2, B_ROWB = BN * 2; /* bytes of one npq row */
    static constexpr int A_BYTES = BK * A_ROWB, B_BYTES = BK * B_ROWB;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES;
};

template <typename T, int BM, int BN, int WARPS_M, int WARPS_N>
__global__ void __launch_bounds__(NTHREADS)
conv_bwd_filter_mma_kernel(const BwdfParams P)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    static_assert(WARPS_M * WARPS_N * 32 == NTHREADS, "8 warps");
    static_assert(BM >= 64 && BN >= 64, "rows of at least 128 bytes (swizzle)");
    constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* warp tile */
    constexpr int MI = WM / 16, NI = WN / 8;             /* mma tiles per warp */
    static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tile must be a multiple of 16x16");
    typedef BwdfTile<BM, BN> Tile;

    extern __shared__ __align__(128) unsigned char smem_raw[];
    const uint32_t smem = (uint32_t)__cvta_generic_to_shared(smem_raw);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM, split = blockIdx.z;
    const fdnn_bwdf::BwdfRange rows = fdnn_bwdf::bwdf_range(P, split, BK);
    const int row_begin = rows.begin, row_end = rows.end, ktiles = rows.ktiles;

    BwdfCopy<T, BM, BN, NTHREADS, BK, 4, 4> copy(P, tid, m0, n0, row_begin, row_end);
    auto load_next = [&](int st) {
        const uint32_t sa = smem + st * Tile::STAGE_BYTES;
        copy.load(P, sa, sa + Tile::A_BYTES);
    };

    float acc[MI][NI][4];
    fdnn_ptx::zero_acc<MI * NI * 4>(&acc[0][0][0]);
    fdnn_ptx::ring_prologue<STAGES - 1>(ktiles, load_next); /* slices 0 .. STAGES-2 in flight */

    for (int kt = 0; kt < ktiles; kt++) {
        cp_async_wait<STAGES - 2>(); /* this thread's copies of slice kt have landed */
        __syncthreads();             /* everyone's have, and everyone is done with slice kt-1 */
        {
            const int nk = kt + STAGES - 1; /* refill the stage that slice kt-1 used */
            if (nk < ktiles) load_next(nk % STAGES);
            cp_async_commit();
        }
        const uint32_t sa = smem + (kt % STAGES) * Tile::STAGE_BYTES, sb = sa + Tile::A_BYTES;
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            uint32_t af[MI][4], bf[NI][2];
#pragma unroll
            for (int i = 0; i < MI; i++) {
                /* A fragment registers: (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15),
                 * (m 8-15, k 8-15); shared rows are k (npq), columns m, so matrix i = lane/8 is
                 * read from rows k = (lane&7) + 8*(lane/16), columns m = 8*((lane/8)&1) */
                const int krow = kk * 16 + (lane & 7) + ((lane >> 4) << 3);
                const int mcol = wm * WM + i * 16 + (((lane >> 3) & 1) << 3);
                ldmatrix_x4_trans(af[i], sa + bw_swz<Tile::A_ROWB>(krow, mcol >> 3));
            }
#pragma unroll
            for (int j = 0; j < NI; j += 2) {
                /* B fragment registers of n-tiles j, j+1: (k 0-7, n 0-7), (k 8-15, n 0-7),
                 * (k 0-7, n 8-15), (k 8-15, n 8-15): rows k = (lane&7) + 8*((lane/8)&1),
                 * columns n = 8*(lane/16) */
                const int krow = kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3);
                const int ncol = wn * WN + j * 8 + ((lane >> 4) << 3);
                uint32_t t[4];
                ldmatrix_x4_trans(t, sb + bw_swz<Tile::B_ROWB>(krow, ncol >> 3));
                bf[j][0] = t[0];
                bf[j][1] = t[1];
                bf[j + 1][0] = t[2];
                bf[j + 1][1] = t[3];
            }
#pragma unroll
            for (int i = 0; i < MI; i++)
#pragma unroll
                for (int j = 0; j < NI; j++) BwdfType<T>::mma(acc[i][j], af[i], bf[j]);
        }
    }
    cp_async_wait<0>(); /* no copy may still target shared memory when the block exits */

    /* epilogue: acc[i][j] holds rows g, g+8 and columns 2*(lane%4), +1 of its 16x8 tile */
    const float alpha = P.alpha, beta = P.beta;
    const bool partial = P.splits > 1;
    T *dw = (T *)P.out;
#pragma unroll
    for (int j = 0; j < NI; j++) {
        const int nn = n0 + wn * WN + j * 8 + (lane & 3) * 2;
        if (nn >= P.rsc) continue; /* RSC % 8 == 0: nn+1 < RSC too, and of the same tap */
        long long dcol = nn;       /* column of dw (flipped tap for CUDNN_CONVOLUTION) */
        if (!partial && P.flip) {
            const int tap = nn / P.c, cc = nn - tap * P.c;
            const int r = tap / P.s, s = tap - r * P.s;
            dcol = ((long long)(P.r - 1 - r) * P.s + (P.s - 1 - s)) * P.c + cc;
        }
#pragma unroll
        for (int i = 0; i < MI; i++) {
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int m = m0 + wm * WM + i * 16 + (lane >> 2) + half * 8;
                if (m >= P.k) continue;
                const float v0 = acc[i][j][half * 2], v1 = acc[i][j][half * 2 + 1];
                if (partial) {
                    *(float2 *)(P.ws + ((long long)split * P.k + m) * P.rsc + nn) = make_float2(v0, v1);
                } else {
                    T *dst = dw + (long long)m * P.rsc + dcol;
                    float o0 = alpha * v0, o1 = alpha * v1;
                    if (beta != 0.f) {
                        const float2 old = BwdfType<T>::load2(dst);
                        o0 += beta * old.x;
                        o1 += beta * old.y;
                    }
                    BwdfType<T>::store2(dst, o0, o1);
                }
            }
        }
    }
#endif
}

/* dw row m, GEMM columns nn, nn+1 (flipped tap for CUDNN_CONVOLUTION) = alpha * (s0, s1) + beta *
 * dw (beta == 0: dw not read); the two columns are of one tap (RSC % 8 == 0) */
template <typename T>
__device__ __forceinline__ void bwdf_store_pair(const BwdfParams &P, int m, int nn, float s0, float s1)
{
    long long dcol = nn;
    if (P.flip) {
        const int tap = nn / P.c, cc = nn - tap * P.c;
        const int r = tap / P.s, s = tap - r * P.s;
        dcol = ((long long)(P.r - 1 - r) * P.s + (P.s - 1 - s)) * P.c + cc;
    }
    T *dst = (T *)P.out + (long long)m * P.rsc + dcol;
    float o0 = P.alpha * s0, o1 = P.alpha * s1;
    if (P.beta != 0.f) {
        const float2 old = BwdfType<T>::load2(dst);
        o0 += P.beta * old.x;
        o1 += P.beta * old.y;
    }
    BwdfType<T>::store2(dst, o0, o1);
}

/* dw = alpha * sum_s ws[s] + beta * dw (beta == 0: dw not read). A block takes 32 groups of four
 * consecutive columns (one per lane, coalesced float4 reads); warp w sums the splits w, w+8,
 * w+16, ... in that order, then warp 0 adds the eight warps' sums in order 0..7, applies
 * alpha/beta and converts: a fixed order, so deterministic, and with many splits (a long
 * reduction over few filter elements, e.g. 1x1 64->64 at 56x56: 131 splits of 4096 floats) the
 * loads of one element are spread over eight warps instead of one thread's serial loop.
 * K*RSC % 4 == 0 (RSC % 8 == 0), the four columns are of one tap. */
template <typename T>
__global__ void __launch_bounds__(256) bwdf_reduce_kernel(const BwdfParams P)
{
    __shared__ float4 part[8][32];
    const long long plane = (long long)P.k * P.rsc, quads = plane / 4;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (long long g = blockIdx.x; g * 32 < quads; g += gridDim.x) {
        const long long qd = g * 32 + lane;
        float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
        if (qd < quads)
            for (int sp = w; sp < P.splits; sp += 8) {
                const float4 v = ((const float4 *)(P.ws + sp * plane))[qd];
                sum.x += v.x;
                sum.y += v.y;
                sum.z += v.z;
                sum.w += v.w;
            }
        part[w][lane] = sum;
        __syncthreads();
        if (w == 0 && qd < quads) {
            float4 t = part[0][lane];
            for (int i = 1; i < 8; i++) {
                const float4 v = part[i][lane];
                t.x += v.x;
                t.y += v.y;
                t.z += v.z;
                t.w += v.w;
            }
            const int m = (int)(qd * 4 / P.rsc), nn = (int)(qd * 4 - (long long)m * P.rsc);
            bwdf_store_pair<T>(P, m, nn, t.x, t.y);
            bwdf_store_pair<T>(P, m, nn + 2, t.z, t.w);
        }
        __syncthreads();
    }
}
/* The same sum with one thread per two columns, the splits summed in order 0, 1, ...: faster
 * when the splits are few (3x3 256->256 14x14, 5 splits of 590k floats: the kernel above spends
 * most of its warps idle; 251 against 281 TFLOP/s for the whole convolution). */
template <typename T>
__global__ void bwdf_reduce_pairs_kernel(const BwdfParams P)
{
    const long long pairs = (long long)P.k * P.rsc / 2, plane = (long long)P.k * P.rsc;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < pairs; e += (long long)gridDim.x * blockDim.x) {
        const long long idx = e * 2;
        float s0 = 0.f, s1 = 0.f;
        for (int s = 0; s < P.splits; s++) {
            const float2 v = *(const float2 *)(P.ws + s * plane + idx);
            s0 += v.x;
            s1 += v.y;
        }
        const int m = (int)(idx / P.rsc), nn = (int)(idx - (long long)m * P.rsc);
        bwdf_store_pair<T>(P, m, nn, s0, s1);
    }
}
/* the reduction of P.splits > 1 partial sums into dw: the eight-warp sum from 16 splits on */
template <typename T>
static cudaError_t bwdf_reduce(const BwdfParams &P, cudaStream_t st)
{
    if (P.splits >= 16) {
        const long long groups = ((long long)P.k * P.rsc / 4 + 31) / 32;
        bwdf_reduce_kernel<T><<<(unsigned)(groups < 8192 ? groups : 8192), 256, 0, st>>>(P);
    } else {
        const long long blocks = ((long long)P.k * P.rsc / 2 + 255) / 256;
        bwdf_reduce_pairs_kernel<T><<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, st>>>(P);
    }
    return cudaGetLastError();
}

/* The tile configurations: BM (output channels) x BN (R*S*C columns). */
enum BwdfConfig { BWDF_128x128 = 0, BWDF_128x64 = 1, BWDF_64x128 = 2, BWDF_64x64 = 3, BWDF_64x256 = 4, BWDF_128x256 = 5 };
constexpr int BWDF_NCONFIGS = 6;

static inline int bwdf_bm(BwdfConfig c) { return c == BWDF_128x128 || c == BWDF_128x64 || c == BWDF_128x256 ? 128 : 64; }
static inline int bwdf_bn(BwdfConfig c)
{
    return c == BWDF_64x256 || c == BWDF_128x256 ? 256 : c == BWDF_128x128 || c == BWDF_64x128 ? 128 : 64;
}

/* The launch plan, a function of the problem only (workspace() and run() agree on it):
 * 64x256 tiles when K <= 64, R*S*C >= 256 and N*P*Q >= 2^18 (bwdf_lab --sweep on the H200:
 * 1.37-1.47x the 64x128 tile on the two largest K = 64 layers, 0.87x on a 2^17-row one), else
 * 64-row tiles when K <= 64, 64-column tiles when R*S*C <= 64, else 128; the reduction is
 * split so that tiles * splits approaches TARGET_BLOCKS, each split taking at least
 * MIN_SPLIT_ROWS npq rows (a multiple of BK); force_splits > 0 asks for that many (the lab). */
struct BwdfPlan {
    BwdfConfig cfg; /* from bwdf_plan; a plan of fdnn_bwdf_wg::wgb_plan holds a WgbConfig here */
    int splits, chunk;
};
static inline BwdfPlan bwdf_plan(int npq, int k, int rsc, int force_splits = 0, int force_cfg = -1)
{
    BwdfPlan pl;
    if (force_cfg >= 0) pl.cfg = (BwdfConfig)force_cfg;
    else if (k <= 64 && rsc >= 256 && npq >= 262144) pl.cfg = BWDF_64x256; /* long reductions: 32x64 warp tiles */
    else pl.cfg = k <= 64 ? (rsc <= 64 ? BWDF_64x64 : BWDF_64x128) : (rsc <= 64 ? BWDF_128x64 : BWDF_128x128);
    const long long tiles = (long long)((k + bwdf_bm(pl.cfg) - 1) / bwdf_bm(pl.cfg)) * ((rsc + bwdf_bn(pl.cfg) - 1) / bwdf_bn(pl.cfg));
    long long want;
    if (force_splits > 0) want = force_splits;
    else {
        want = (TARGET_BLOCKS + tiles - 1) / tiles;
        const long long most = npq / MIN_SPLIT_ROWS;
        if (want > most) want = most;
    }
    if (want < 1) want = 1;
    if (want > 65535) want = 65535;
    long long chunk = ((long long)npq + want - 1) / want;
    chunk = (chunk + BK - 1) / BK * BK;
    if (chunk < BK) chunk = BK;
    pl.chunk = (int)chunk;
    pl.splits = npq > 0 ? (int)(((long long)npq + chunk - 1) / chunk) : 1; /* no empty split */
    return pl;
}
/* bytes of float partial sums the plan needs (0 with one split) */
static inline size_t bwdf_workspace_bytes(const BwdfPlan &pl, int k, int rsc)
{
    return pl.splits > 1 ? (size_t)pl.splits * (size_t)k * (size_t)rsc * sizeof(float) : 0;
}

/* the (n, p, q) step of bk rows (BK for the mma.sync kernel) */
static inline void bwdf_set_step(BwdfParams &P, int bk = BK)
{
    const int pq = P.p * P.q;
    P.step_n = bk / pq;
    const int rem = bk - P.step_n * pq;
    P.step_p = rem / P.q;
    P.step_q = rem - P.step_p * P.q;
}

/* launches a backward-filter tile kernel on the (R*S*C / BN, K / BM, splits) grid; more than 48 KiB
 * of dynamic shared memory needs an opt-in, made once per device (*opted: the kernel's own mask) */
template <int BM, int BN, typename Kern>
static cudaError_t bwdf_tile_launch(Kern kern, int threads, int smem_bytes, unsigned long long *opted, const BwdfParams &P, cudaStream_t st)
{
    if (smem_bytes > 48 * 1024) {
        const cudaError_t e = fdnn_ptx::opt_in_smem(kern, smem_bytes, opted);
        if (e != cudaSuccess) return e;
    }
    dim3 grid((unsigned)((P.rsc + BN - 1) / BN), (unsigned)((P.k + BM - 1) / BM), (unsigned)P.splits);
    kern<<<grid, threads, smem_bytes, st>>>(P);
    return cudaGetLastError();
}

template <typename T, int BM, int BN, int WARPS_M, int WARPS_N>
static cudaError_t bwdf_launch_cfg(const BwdfParams &P, cudaStream_t st)
{
    static unsigned long long opted = 0;
    return bwdf_tile_launch<BM, BN>(conv_bwd_filter_mma_kernel<T, BM, BN, WARPS_M, WARPS_N>, NTHREADS, BwdfTile<BM, BN>::SMEM_BYTES,
                                    &opted, P, st);
}

/* The frame every backward-filter launch shares: nothing for an empty dw, the (n, p, q) step of
 * bk rows (bwdf_set_step), the tile kernel (launch(P)), then, with several splits, the reduction
 * of their partial sums into dw. */
template <typename T, typename Launch>
static cudaError_t bwdf_run(BwdfParams P, int bk, cudaStream_t st, Launch launch)
{
    if (P.k == 0 || P.rsc == 0) return cudaSuccess;
    bwdf_set_step(P, bk);
    const cudaError_t e = launch(P);
    if (e != cudaSuccess || P.splits <= 1) return e;
    return bwdf_reduce<T>(P, st);
}

/* T = __half or __nv_bfloat16. P.chunk / P.splits from bwdf_plan, P.ws (16-byte aligned) of
 * bwdf_workspace_bytes when splits > 1. The caller has checked the requirements (C % 8, K % 8,
 * 16-byte aligned x / dy / dw, NPQ and RSC below 2^31, K below 65535 * 64). */
template <typename T>
static cudaError_t bwdf_launch(BwdfParams P, BwdfConfig cfg, cudaStream_t st)
{
    return bwdf_run<T>(P, BK, st, [&](const BwdfParams &Q) {
        cudaError_t e = cudaErrorInvalidValue;
        switch (cfg) {
        case BWDF_128x128: e = bwdf_launch_cfg<T, 128, 128, 2, 4>(Q, st); break;
        case BWDF_128x64: e = bwdf_launch_cfg<T, 128, 64, 4, 2>(Q, st); break;
        case BWDF_64x128: e = bwdf_launch_cfg<T, 64, 128, 2, 4>(Q, st); break;
        case BWDF_64x64: e = bwdf_launch_cfg<T, 64, 64, 2, 4>(Q, st); break;
        case BWDF_64x256: e = bwdf_launch_cfg<T, 64, 256, 2, 4>(Q, st); break;   /* 32x64 warp tiles */
        case BWDF_128x256: e = bwdf_launch_cfg<T, 128, 256, 2, 4>(Q, st); break; /* 64x64 warp tiles */
        }
        return e;
    });
}

} /* namespace fdnn_bwdf */
#endif
