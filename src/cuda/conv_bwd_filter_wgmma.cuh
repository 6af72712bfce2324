/* Hopper (sm_90a) tensor-core implicit-GEMM backward-filter convolution for HALF / BFLOAT16:
 * the problem, GEMM view, split-K workspace and reduction of conv_bwd_filter_mma.cuh
 * (BwdfParams, bwdf_reduce_kernel), with the products issued as warpgroup MMAs
 * (wgmma.mma_async m64nNk16, f32 accumulators) reading both operands from shared memory.
 *
 * GEMM view:  dW[K, RSC] = dY^T[K, NPQ] * Xcol[NPQ, RSC]; both operands are reduction-major in
 * memory (a row of dy is K output channels of one pixel, a row of Xcol R*S*C filter columns of
 * one pixel), so both are given to wgmma MN-major (the instruction's transpose flags set).
 *
 * Shared layout of one operand of a slice (BK = 64 npq rows): the canonical MN-major layout with
 * the 128-byte swizzle: "atoms" of 64 consecutive m (or n) values (128 bytes) by the 64 rows,
 * row r of an atom at r*128 bytes, its 16-byte chunk c at chunk c ^ (r % 8); atoms 8192 bytes
 * apart. A descriptor holds the start, the stride between atoms along M/N (leading byte offset,
 * 8192) and between groups of 8 rows along the reduction (stride byte offset, 1024); the k16 step
 * j of a slice starts 2048*j bytes further.
 *
 * Copies: thread t takes 16-byte chunk t % 8 of every atom of rows t/8 and t/8 + 32 of the
 * slice (eight neighbouring threads copy 128 contiguous bytes of one row of each atom). A row is
 * one output pixel npq = (n, p, q): the A chunk is dy[npq][m .. m+7], the B chunk the 8 channels
 * x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c .. c+7] of the filter column (r, s, c) the thread's
 * chunk holds (C % 8 == 0: a chunk never straddles two taps). Each thread keeps, per row, the
 * pixel's window corner and offset and steps them by BK rows per slice; per column chunk the tap
 * offsets, so a chunk is two bounds tests and an add. Zero-filled: rows past the split, A columns
 * past K, B columns past RSC and pixels outside the image.
 *
 * Tiling: 256 threads = two warpgroups; a block computes a BM x BN tile of dW (BM 64 or 128
 * output channels, BN 128 or 256 filter columns); with BM = 128 each warpgroup takes 64 rows by
 * all BN columns, with BM = 64 each takes the 64 rows by BN/2 columns. Pipeline as in
 * conv_fwd_wgmma.cuh: STAGES-deep cp.async ring, one slice of MMAs in flight while the copies
 * of slice kt+STAGES-2 are issued. Split-K over npq (blockIdx.z) into ws[s][K][RSC] floats,
 * summed in a fixed order by bwdf_reduce_kernel: deterministic. Compiled for sm_90a only (a trap
 * elsewhere); the host launches it only on a compute capability 9.0 device of an sm_90a build. */
#ifndef FDNN_CUDA_CONV_BWD_FILTER_WGMMA_CUH
#define FDNN_CUDA_CONV_BWD_FILTER_WGMMA_CUH
#include "conv_bwd_filter_mma.cuh"
#include "conv_fwd_wgmma.cuh"

namespace fdnn_bwdf_wg {

using fdnn_bwdf::BwdfParams;
using fdnn_ptx::cp_async16;
using fdnn_ptx::cp_async_commit;
using fdnn_ptx::cp_async_wait;

constexpr int BK = 64;        /* npq rows per slice: four k16 steps */
constexpr int THREADS = 256;  /* two warpgroups */
constexpr int ATOM = 8192;    /* bytes of one 64-wide, 64-row swizzle atom */
constexpr int MIN_SPLIT_ROWS = 512;

/* MN-major shared-memory matrix descriptor, 128-byte swizzle: atoms along M/N 8192 bytes apart
 * (leading byte offset), 8-row groups along the reduction 1024 bytes apart (stride byte offset) */
__device__ __forceinline__ uint64_t desc_mn(uint32_t saddr)
{
    return (uint64_t)((saddr & 0x3FFFF) >> 4) | ((uint64_t)(ATOM >> 4) << 16) | ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)1 << 62);
}

/* The copies of one slice (BKR npq rows) of both operands into a ring stage, for the Hopper
 * kernels: thread (lr, lc) copies 16-byte chunk lc of every 128-byte atom row of slice rows lr +
 * 32 i (i < ROWS; eight neighbouring threads copy 128 contiguous bytes of one row of an atom).
 * A row is one output pixel npq = (n, p, q): A atom j's chunk is dy[npq][m0 + AW j + EPC lc ..],
 * B atom j's the EPC channels x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c ..] of the filter column
 * (r, s, c) = n0 + AW j + EPC lc (C % EPC == 0: a chunk never straddles two taps); AW = 128 bytes
 * of elements, EPC = 16 bytes. Each thread keeps, per row, the pixel's window corner and offset
 * and steps them by BKR rows per slice (P.step_* of bwdf_set_step(P, BKR)); per column chunk the
 * tap offsets, so a chunk is two bounds tests and an add. Zero-filled: rows past the split, A
 * columns past K, B columns past RSC and pixels outside the image. load(sa, sb) writes A atom j
 * of row i at sa + j A_ATOM + 4096 i, B likewise from sb (the caller adds its own swizzled
 * offset of (lr, lc) to both). */
template <typename T, int ROWS, int A_AT, int B_AT, int A_ATOM, int B_ATOM, int BKR>
struct WgbCopy {
    static constexpr int EPC = 16 / (int)sizeof(T), AW = 128 / (int)sizeof(T);
    static constexpr int FAR = -(1 << 29); /* a window corner / tap offset that no bounds test passes */
    int b_hoff[B_AT], b_woff[B_AT];
    long long b_off[B_AT];
    bool a_ok[A_AT];
    /* row i of the next slice: npq v[i] = (rn, rp, rq), window corner (h0, w0) (h0 = FAR past the
     * split), x offset of the corner pixel, and the dy row */
    int v[ROWS], rn[ROWS], rp[ROWS], rq[ROWS], h0[ROWS], w0[ROWS];
    long long pix[ROWS];
    const T *a_src[ROWS];
    int row_end;

    __device__ __forceinline__ void row_setup(const BwdfParams &P, int i)
    {
        h0[i] = v[i] < row_end ? rp[i] * P.sh - P.ph : FAR;
        w0[i] = rq[i] * P.sw - P.pw;
        pix[i] = (((long long)rn[i] * P.h + (rp[i] * P.sh - P.ph)) * P.w_ + w0[i]) * P.c;
    }

    __device__ __forceinline__ WgbCopy(const BwdfParams &P, int lc, int lr, int m0, int n0, int row_begin, int row_end_) : row_end(row_end_)
    {
#pragma unroll
        for (int j = 0; j < B_AT; j++) {
            const int nn = n0 + j * AW + lc * EPC;
            if (nn < P.rsc) {
                const int tap = nn / P.c, cc = nn - tap * P.c;
                const int r = tap / P.s, s = tap - r * P.s;
                b_hoff[j] = r * P.dh;
                b_woff[j] = s * P.dw;
                b_off[j] = ((long long)b_hoff[j] * P.w_ + b_woff[j]) * P.c + cc;
            } else {
                b_hoff[j] = FAR;
                b_woff[j] = 0;
                b_off[j] = 0;
            }
        }
#pragma unroll
        for (int j = 0; j < A_AT; j++) a_ok[j] = m0 + j * AW + lc * EPC < P.k; /* K % EPC == 0 */
        const int pq = P.p * P.q;
#pragma unroll
        for (int i = 0; i < ROWS; i++) {
            v[i] = row_begin + lr + 32 * i;
            rn[i] = v[i] / pq;
            const int rem = v[i] - rn[i] * pq;
            rp[i] = rem / P.q;
            rq[i] = rem - rp[i] * P.q;
            a_src[i] = (const T *)P.dy + (long long)v[i] * P.k + m0 + lc * EPC;
            row_setup(P, i);
        }
    }

    __device__ __forceinline__ void load(const BwdfParams &P, uint32_t sa, uint32_t sb)
    {
        const T *__restrict__ x = (const T *)P.x;
        const unsigned H = (unsigned)P.h, W = (unsigned)P.w_;
#pragma unroll
        for (int i = 0; i < ROWS; i++) {
            const bool rok = v[i] < row_end;
#pragma unroll
            for (int j = 0; j < A_AT; j++) {
                const bool ok = rok & a_ok[j];
                cp_async16(sa + j * A_ATOM + i * 4096, ok ? (const void *)(a_src[i] + j * AW) : P.dy, ok ? 16 : 0);
            }
#pragma unroll
            for (int j = 0; j < B_AT; j++) {
                const bool ok = ((unsigned)(h0[i] + b_hoff[j]) < H) & ((unsigned)(w0[i] + b_woff[j]) < W);
                cp_async16(sb + j * B_ATOM + i * 4096, ok ? (const void *)(x + pix[i] + b_off[j]) : (const void *)x, ok ? 16 : 0);
            }
            /* step the row by BKR */
            v[i] += BKR;
            a_src[i] += (long long)BKR * P.k;
            fdnn_bwdf::bwdf_step_row(P, rn[i], rp[i], rq[i]);
            row_setup(P, i);
        }
    }
};

/* Stores a warpgroup's m64nNW accumulators: acc[4 jj + 2 h + e] is row m_base + h * m_step,
 * columns n_base + 8 jj + e (n_base = the first column + 2 * (lane % 4); a column pair is one
 * tap), into the split's float partials (several splits) or dw (alpha/beta, bwdf_store_pair). */
template <typename T, int NW>
__device__ __forceinline__ void wgb_epilogue(const BwdfParams &P, const float *acc, int split, int n_base, int m_base, int m_step)
{
    const bool partial = P.splits > 1;
#pragma unroll
    for (int jj = 0; jj < NW / 8; jj++) {
        const int nn = n_base + jj * 8;
        if (nn >= P.rsc) continue;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int m = m_base + h * m_step;
            if (m >= P.k) continue;
            const float v0 = acc[4 * jj + 2 * h], v1 = acc[4 * jj + 2 * h + 1];
            if (partial) *(float2 *)(P.ws + ((long long)split * P.k + m) * P.rsc + nn) = make_float2(v0, v1);
            else fdnn_bwdf::bwdf_store_pair<T>(P, m, nn, v0, v1);
        }
    }
}

template <int BM, int BN, int STAGES>
struct WgbTile {
    static constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024; /* + room to align the ring to 1024 */
};

template <typename T, int BM, int BN, int STAGES, int MINB>
__global__ void __launch_bounds__(THREADS, MINB) conv_bwd_filter_wgmma_kernel(const BwdfParams P)
{
#if FDNN_WGMMA_DEVICE
    static_assert((BM == 64 || BM == 128) && BN % 64 == 0 && BN <= 256 && STAGES >= 3, "tile");
    constexpr int WG_M = BM / 64;                    /* warpgroups along M */
    /* BM = 64: the warpgroups split the columns in halves of whole atoms (a wgmma operand must
     * start at an atom: one starting 64 bytes into the rows gives wrong products), or, when BN/2
     * is not a multiple of 64, the k steps of each slice (KSPLIT: each takes all BN columns and
     * two of the four k16 steps; the epilogue adds the two accumulators) */
    constexpr bool KSPLIT = WG_M == 1 && BN % 128 != 0;
    constexpr int WG_N = KSPLIT ? 1 : 2 / WG_M;      /* warpgroups along N */
    constexpr int NW = BN / WG_N;                    /* columns of one warpgroup: the wgmma N */
    constexpr int NACC = NW / 2;                     /* accumulator floats per thread */
    constexpr int A_AT = BM / 64, B_AT = BN / 64;  /* atoms per operand */
    constexpr int ROWS = BK / 32;                  /* slice rows a thread copies */
    typedef WgbTile<BM, BN, STAGES> Tile;

    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const uint32_t smem = ((uint32_t)__cvta_generic_to_shared(smem_raw) + 1023u) & ~1023u;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wg = warp >> 2, wl = warp & 3;
    const int wm = WG_M == 2 ? wg : 0, wn = WG_N == 2 ? wg : 0;
    const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM, split = blockIdx.z;
    const fdnn_bwdf::BwdfRange rows = fdnn_bwdf::bwdf_range(P, split, BK);
    const int row_begin = rows.begin, row_end = rows.end, ktiles = rows.ktiles;
    const int lc = tid & 7, lr = tid >> 3;
    const uint32_t dst0 = fdnn_wg::swz128(lr, lc); /* row lr + 32 i: 4096 i bytes further */

    WgbCopy<T, ROWS, A_AT, B_AT, ATOM, ATOM, BK> copy(P, lc, lr, m0, n0, row_begin, row_end);
    int ld_stage = 0;
    auto load_stage = [&]() {
        const uint32_t sa = smem + ld_stage * Tile::STAGE_BYTES + dst0;
        copy.load(P, sa, sa + Tile::A_BYTES);
        ld_stage = ld_stage + 1 == STAGES ? 0 : ld_stage + 1;
    };

    float acc[NACC];
#pragma unroll
    for (int j = 0; j < NACC; j++) acc[j] = 0.f;

#pragma unroll
    for (int st = 0; st < STAGES - 2; st++) {
        if (st < ktiles) load_stage();
        cp_async_commit();
    }

    const uint64_t d_ring = desc_mn(smem);
    /* the warpgroup's first column's atom; with KSPLIT its first k step (no branch around the
     * wgmmas: a divergent path makes the compiler serialize them) */
    constexpr int KSTEPS = KSPLIT ? 2 : 4;
    const uint32_t k_wg = KSPLIT ? wg * 2 * 2048 : 0;
    const uint32_t b_wg = Tile::A_BYTES + wn * (NW / 64) * ATOM + k_wg;
    static_assert(NW % 64 == 0, "a warpgroup's columns are whole atoms");
    int rd_stage = 0;
    for (int kt = 0; kt < ktiles; kt++) {
        cp_async_wait<STAGES - 3>(); /* this thread's copies of slice kt have landed */
        fdnn_wg::fence_proxy_async();
        __syncthreads();             /* everyone's have; every warpgroup has retired slice kt-2 */
        const uint64_t da = d_ring + (uint64_t)((rd_stage * Tile::STAGE_BYTES + wm * ATOM + k_wg) >> 4);
        const uint64_t db = d_ring + (uint64_t)((rd_stage * Tile::STAGE_BYTES + b_wg) >> 4);
        rd_stage = rd_stage + 1 == STAGES ? 0 : rd_stage + 1;
        fdnn_wg::fence_regs<NACC>(acc);
        fdnn_wg::wg_fence();
#pragma unroll
        for (int j = 0; j < KSTEPS; j++) /* k step j: rows 16 j .. 16 j + 15, 2048 bytes further */
            fdnn_wg::WgOps<T>::template mma<NW, true>(acc, da + j * (2048 >> 4), db + j * (2048 >> 4));
        fdnn_wg::wg_commit();
        if (kt + STAGES - 2 < ktiles) load_stage();
        cp_async_commit();
        fdnn_wg::wg_wait<1>();
        fdnn_wg::fence_regs<NACC>(acc);
    }
    fdnn_wg::wg_wait<0>();
    fdnn_wg::fence_regs<NACC>(acc);
    cp_async_wait<0>();
    if constexpr (KSPLIT) {
        /* warpgroup 1 hands its partial sums to warpgroup 0 through the drained ring (float j of
         * thread t at j * 128 + t: conflict-free), which adds them and stores the tile alone */
        float *xch = (float *)(smem_raw + (smem - (uint32_t)__cvta_generic_to_shared(smem_raw)));
        static_assert(NACC * 128 * 4 <= STAGES * Tile::STAGE_BYTES, "the exchange must fit in the ring");
        __syncthreads(); /* both warpgroups are done with the ring */
        if (wg == 1) {
#pragma unroll
            for (int j = 0; j < NACC; j++) xch[j * 128 + (tid & 127)] = acc[j];
        }
        __syncthreads();
        if (wg == 1) return;
#pragma unroll
        for (int j = 0; j < NACC; j++) acc[j] += xch[j * 128 + tid];
    }

    /* epilogue: row 16 wl + lane/4 + 8 h of the warpgroup's 64 (RSC % 8 == 0: a column pair is
     * in or out) */
    wgb_epilogue<T, NW>(P, acc, split, n0 + wn * NW + (lane & 3) * 2, m0 + wm * 64 + wl * 16 + (lane >> 2), 8);
#else
    (void)P;
    __trap(); /* not sm_90a code: the host never launches it here */
#endif
}

/* tile configurations: BM (output channels) x BN (filter columns), ring depth, blocks per SM */
enum WgbConfig { WGB_128x128 = 0, WGB_128x128_2 = 1, WGB_64x256 = 2, WGB_64x128_2 = 3, WGB_128x256 = 4, WGB_64x192 = 5, WGB_128x192 = 6,
                 WGB_64x192_2 = 7, WGB_128x64_2 = 8, WGB_64x64_2 = 9, WGB_64x64_3 = 10 };
constexpr int WGB_NCONFIGS = 11;
static inline int wgb_bm(WgbConfig c)
{
    return c == WGB_64x256 || c == WGB_64x128_2 || c == WGB_64x192 || c == WGB_64x192_2 || c == WGB_64x64_2 || c == WGB_64x64_3 ? 64 : 128;
}
static inline int wgb_bn(WgbConfig c)
{
    return c == WGB_64x256 || c == WGB_128x256                         ? 256
           : c == WGB_64x192 || c == WGB_128x192 || c == WGB_64x192_2 ? 192
           : c == WGB_128x64_2 || c == WGB_64x64_2 || c == WGB_64x64_3 ? 64
                                                                        : 128;
}
/* blocks per SM of a configuration (its launch bound) */
static inline int wgb_minb(WgbConfig c)
{
    return c == WGB_64x64_3 ? 3 : c == WGB_128x128_2 || c == WGB_64x128_2 || c == WGB_64x192_2 || c == WGB_128x64_2 || c == WGB_64x64_2 ? 2 : 1;
}

/* The launch plan, a function of the problem only (workspace() and run() agree on it).
 * Tile (bwdf_lab --sweep on the H200, fp16, TFLOP/s): 64x256 when K <= 64 (3x3 64->64 224x224
 * batch 32: 340 against at most 329 for the others; 56x56 batch 128: 304); else 128 rows by 192
 * columns (3x3 128->128 28x28: 292 against 254 for 128x128) unless 192-column tiles waste more
 * of R*S*C than their better operand reuse (15%) pays for: then 128x128 (1x1 256->512: 243
 * against 215).
 * Splits: the count with the least modelled time: waves of blocks (132 SMs times the blocks per
 * SM; a wave that is barely started costs a whole one) times the slices a block reduces plus a
 * pipeline fill of two, plus, with more than one split, a reduction pass over the float partial
 * sums (at 3 TB/s) and its launch; each split at least MIN_SPLIT_ROWS rows. force_* for the lab. */
constexpr int PLAN_SMS = 132;
static inline int wgb_pick(int k, int rsc)
{
    const long long cols256 = (rsc + 255LL) / 256 * 256;
    if (k <= 64) return (rsc + 191LL) / 192 * 192 <= cols256 ? WGB_64x192 : WGB_64x256;
    const long long cols192 = (rsc + 191LL) / 192 * 192, cols128 = (rsc + 127LL) / 128 * 128;
    return cols192 * 100 <= cols128 * 115 ? WGB_128x192 : WGB_128x128;
}
/* the split count and chunk of the plan for bm x bn tiles, minb blocks per SM, slices of bk rows
 * that take t_slice microseconds on one SM (the model above); force_splits > 0 takes that count */
static inline void wg_split_plan(fdnn_bwdf::BwdfPlan &pl, int npq, int k, int rsc, int bm, int bn, int minb, int bk, double t_slice,
                                 int force_splits)
{
    const long long tiles = (long long)((k + bm - 1) / bm) * ((rsc + bn - 1) / bn);
    const long long slots = (long long)PLAN_SMS * minb, slices = ((long long)npq + bk - 1) / bk;
    long long want = 1;
    if (force_splits > 0) want = force_splits;
    else {
        const double red_us = 2.0 * (double)k * rsc * 4 / 3e6; /* read + write of one split's partials */
        long long most = npq / MIN_SPLIT_ROWS;
        if (most > 4 * slots) most = 4 * slots;
        auto model = [&](long long sp) {
            const long long waves = (tiles * sp + slots - 1) / slots;
            return (double)waves * ((double)((slices + sp - 1) / sp) + 2) * t_slice + (sp > 1 ? 3 + red_us * sp : 0);
        };
        /* at most 48 candidates (this runs on every call, the workspace query included): every
         * split count up to 32, then for each count w <= 16 of waves the most splits that fit in w
         * waves, lowered to the fewest splits that give a block the same number of slices (no
         * more waves, less reduction: never worse). Against the walk over every split count up to
         * `most` (528 on the seed layer: 2.05 us of host time per plan against 0.13): the same plan on every
         * bench/layers_gpu.txt layer, and over 20,000 random problems (N*P*Q up to 2e6, K up to
         * 2048, R*S*C up to 18432) the same in 98.6%, never more than 2.2% longer in modelled time. */
        double best = model(1);
        for (long long sp = 2; sp <= most && sp <= 32; sp++) {
            const double t = model(sp);
            if (t < best) {
                best = t;
                want = sp;
            }
        }
        for (long long w = 1; w <= 16; w++) {
            long long sp = w * slots / tiles;
            if (sp > most) sp = most;
            if (sp <= 32) continue;
            const long long per = (slices + sp - 1) / sp; /* slices per block */
            sp = (slices + per - 1) / per;
            const double t = model(sp);
            if (t < best || (t == best && sp < want)) {
                best = t;
                want = sp;
            }
            if (w * slots / tiles >= most) break;
        }
    }
    if (want < 1) want = 1;
    if (want > 65535) want = 65535;
    long long chunk = ((long long)npq + want - 1) / want;
    chunk = (chunk + bk - 1) / bk * bk;
    pl.chunk = (int)chunk;
    pl.splits = npq > 0 ? (int)(((long long)npq + chunk - 1) / chunk) : 1;
}
static inline fdnn_bwdf::BwdfPlan wgb_plan(int npq, int k, int rsc, int force_splits = 0, int force_cfg = -1)
{
    fdnn_bwdf::BwdfPlan pl;
    const WgbConfig c = (WgbConfig)(force_cfg >= 0 ? force_cfg : wgb_pick(k, rsc));
    pl.cfg = (fdnn_bwdf::BwdfConfig)c;
    const int bm = wgb_bm(c), bn = wgb_bn(c), minb = wgb_minb(c);
    /* microseconds: a slice on one SM at ~2.6 TFLOP/s per SM (shared by minb blocks) */
    wg_split_plan(pl, npq, k, rsc, bm, bn, minb, BK, 2.0 * bm * bn * BK * minb / 2.6e6, force_splits);
    return pl;
}

template <typename T, int BM, int BN, int STAGES, int MINB>
static cudaError_t wgb_launch_cfg(const BwdfParams &P, cudaStream_t st)
{
    static unsigned long long opted = 0;
    return fdnn_bwdf::bwdf_tile_launch<BM, BN>(conv_bwd_filter_wgmma_kernel<T, BM, BN, STAGES, MINB>, THREADS,
                                               WgbTile<BM, BN, STAGES>::SMEM_BYTES, &opted, P, st);
}

/* T = __half or __nv_bfloat16; P.chunk / P.splits from wgb_plan (P.chunk a multiple of BK),
 * P.ws (16-byte aligned) of fdnn_bwdf::bwdf_workspace_bytes when splits > 1; the same
 * requirements as fdnn_bwdf::bwdf_launch, and an sm_90a build on a 9.0 device (the caller checks) */
template <typename T>
static cudaError_t wgb_launch(BwdfParams P, WgbConfig cfg, cudaStream_t st)
{
    return fdnn_bwdf::bwdf_run<T>(P, BK, st, [&](const BwdfParams &Q) {
        cudaError_t e = cudaErrorInvalidValue;
        switch (cfg) {
        case WGB_128x128: e = wgb_launch_cfg<T, 128, 128, 4, 1>(Q, st); break;
        case WGB_64x256: e = wgb_launch_cfg<T, 64, 256, 4, 1>(Q, st); break;
        case WGB_128x192: e = wgb_launch_cfg<T, 128, 192, 4, 1>(Q, st); break;
        case WGB_64x192: e = wgb_launch_cfg<T, 64, 192, 4, 1>(Q, st); break;
#ifdef FDNN_BWDF_WG_LAB /* the configurations only bwdf_lab compares (not compiled into the library) */
        case WGB_128x128_2: e = wgb_launch_cfg<T, 128, 128, 3, 2>(Q, st); break;
        case WGB_64x128_2: e = wgb_launch_cfg<T, 64, 128, 4, 2>(Q, st); break;
        case WGB_128x256: e = wgb_launch_cfg<T, 128, 256, 4, 1>(Q, st); break;
        case WGB_64x192_2: e = wgb_launch_cfg<T, 64, 192, 3, 2>(Q, st); break; /* spills (96 accumulators, 128 registers) */
        case WGB_128x64_2: e = wgb_launch_cfg<T, 128, 64, 4, 2>(Q, st); break;
        case WGB_64x64_2: e = wgb_launch_cfg<T, 64, 64, 6, 2>(Q, st); break;
        case WGB_64x64_3: e = wgb_launch_cfg<T, 64, 64, 4, 3>(Q, st); break;
#endif
        default: break;
        }
        return e;
    });
}

} /* namespace fdnn_bwdf_wg */
#endif
