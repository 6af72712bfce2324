/* Hopper (sm_90a) tensor-core implicit-GEMM backward-filter convolution for FLOAT through TF32:
 * the problem, GEMM view, copies, split-K workspace and reduction of conv_bwd_filter_mma.cuh
 * (BwdfParams, BwdfCopy, bwdf_reduce), with the products issued as warpgroup MMAs
 * (wgmma.mma_async m64nNk8.tf32, f32 accumulators).
 *
 * The obstacle: wgmma reads TF32 operands from shared memory K-major only (the transpose flags
 * are for 16-bit types), and both operands of the backward filter are reduction-major in memory
 * (a row of dy is the K channels of one pixel, a row of Xcol the R*S*C filter columns of one
 * pixel). So:
 *   - A = dY^T (M = output channels) comes from registers (the RS form of wgmma), loaded from
 *     the copied [npq][BM] rows with 8-byte loads. The A fragment of a warp's 16 rows is a0 =
 *     (g, t), a1 = (g+8, t), a2 = (g, t+4), a3 = (g+8, t+4) (g = lane/4, t = lane%4); the kernel
 *     numbers the rows so that MMA row g + 8h of warp slab w is channel 16w + 2g + h: a0/a1 and
 *     a2/a3 are then two adjacent floats of npq rows t and t+4.
 *   - B = Xcol (N = filter columns) is transposed in shared memory: the copied rows are read 16
 *     bytes at a time and written as 4-byte elements into a K-major tile [BN][32 npq] with the
 *     128-byte swizzle the wgmma descriptor describes (row n at n*128 bytes, 16-byte chunk c at
 *     c ^ (n % 8)); a warp's 32 lanes take 16 consecutive npq rows by 2 adjacent chunks, so its
 *     reads (8 rows of one chunk per phase) and its writes (32 distinct banks) are
 *     conflict-free, and every address is a per-thread constant plus 4096 bytes per unit.
 * Copies: WgbCopy (conv_bwd_filter_wgmma.cuh) with one slice row per thread: both operands are
 * staged as 128-byte atoms (32 floats wide, 32 rows, 4096 bytes), B's chunks swizzled with the
 * row % 8 (the transpose reads 8 rows of one chunk), A's with bw_swz's SPAN = 1 pattern (the
 * fragment loads read 4 rows of 2 chunks per phase).
 *   Both operands are rounded to TF32 (cvt.rna) on their way into registers / the K-major tile.
 *
 * Tiling: 256 threads = two warpgroups; a block computes a BM x BN tile of dW; with BM = 128 each
 * warpgroup takes 64 rows by all BN columns, with BM = 64 each takes the 64 rows by BN/2 columns.
 * The reduction goes in slices of 32 npq rows (four k8 steps).
 *
 * Pipeline, slice kt: issue the four wgmmas of kt (A fragments in registers, B in K-major buffer
 * kt % 2) and commit them; refill the ring stage slice kt used with slice kt+STAGES; wait for the
 * copies of kt+1, block barrier, transpose kt+1's B into the other K-major buffer and load its A
 * fragments into the other register set, fence the writes to the async proxy; wait for kt's
 * wgmmas; block barrier. So the copies, the transposes and the A loads of one slice overlap the
 * MMAs of the previous one. Deterministic: fixed reduction order; split-K partial sums are summed
 * in a fixed order by bwdf_reduce. Compiled for sm_90a only (a trap elsewhere). */
#ifndef FDNN_CUDA_CONV_BWD_FILTER_WGMMA_TF32_CUH
#define FDNN_CUDA_CONV_BWD_FILTER_WGMMA_TF32_CUH
#include "conv_bwd_filter_tf32.cuh"
#include "conv_bwd_filter_wgmma.cuh"

namespace fdnn_bwdf_wg {

constexpr int TBK = fdnn_bwdf::BK; /* npq rows per slice: four k8 steps of TF32 */

/* One wgmma m64nNk8 tf32 with A from four registers a[0..3] and B from shared memory (descriptor
 * db); operands: the N/2 accumulators, then a, then db and the scale-d predicate. */
#define FDNN_WGMMA_RS_ASM(SHAPE, REGS, AOPS, DESC, PRED, a, db, ...) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " PRED ", 0;\n" \
                 "wgmma.mma_async.sync.aligned." SHAPE "k8.f32.tf32.tf32 {" REGS "}, {" AOPS "}, " DESC ", p, 1, 1;\n}\n" \
                 : __VA_ARGS__ : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "n"(1))
template <int N>
__device__ __forceinline__ void tf32_rs_mma(float *d, const uint32_t *a, uint64_t db)
{
    if constexpr (N == 64)
        FDNN_WGMMA_RS_ASM("m64n64", FDNN_WGR0 ", " FDNN_WGR1, "%32, %33, %34, %35", "%36", "%37", a, db, FDNN_WGC16(d, 0), FDNN_WGC16(d, 16));
    else if constexpr (N == 128)
        FDNN_WGMMA_RS_ASM("m64n128", FDNN_WGR0 ", " FDNN_WGR1 ", " FDNN_WGR2 ", " FDNN_WGR3, "%64, %65, %66, %67", "%68", "%69", a, db,
                          FDNN_WGC16(d, 0), FDNN_WGC16(d, 16), FDNN_WGC16(d, 32), FDNN_WGC16(d, 48));
    else {
        static_assert(N == 256, "N: 64, 128 or 256");
        FDNN_WGMMA_RS_ASM("m64n256",
                          FDNN_WGR0 ", " FDNN_WGR1 ", " FDNN_WGR2 ", " FDNN_WGR3 ", " FDNN_WGR4 ", " FDNN_WGR5 ", " FDNN_WGR6 ", " FDNN_WGR7,
                          "%128, %129, %130, %131", "%132", "%133", a, db, FDNN_WGC16(d, 0), FDNN_WGC16(d, 16), FDNN_WGC16(d, 32),
                          FDNN_WGC16(d, 48), FDNN_WGC16(d, 64), FDNN_WGC16(d, 80), FDNN_WGC16(d, 96), FDNN_WGC16(d, 112));
    }
}

template <int BM, int BN, int STAGES>
struct TwgTile {
    static constexpr int A_AT = BM / 32, B_AT = BN / 32; /* 128-byte atoms per staged row */
    typedef WgbCopy<float, 1, A_AT, B_AT, 4096, 4096, TBK> Copy;
    static constexpr int A_BYTES = A_AT * 4096, B_BYTES = B_AT * 4096;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int BT_BYTES = BN * 128; /* one K-major B buffer: BN rows of 32 floats */
    static constexpr int SMEM_BYTES = 2 * BT_BYTES + STAGES * STAGE_BYTES + 1024; /* + room to align to 1024 */
};

template <int BM, int BN, int STAGES>
__global__ void __launch_bounds__(THREADS, 1) conv_bwd_filter_wgmma_tf32_kernel(const BwdfParams P)
{
#if FDNN_WGMMA_DEVICE
    static_assert((BM == 64 || BM == 128) && BN % 64 == 0 && BN <= 256 && STAGES >= 2, "tile");
    constexpr int WG_M = BM / 64, WG_N = 2 / WG_M; /* warpgroups along M and N */
    constexpr int NW = BN / WG_N, NACC = NW / 2;    /* columns of one warpgroup: the wgmma N */
    typedef TwgTile<BM, BN, STAGES> Tile;
    typedef typename Tile::Copy Copy;
    constexpr int TIT = BN / 32; /* transpose units (16 rows x 2 chunks) per warp and slice: one per B atom */

    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const uint32_t raw = (uint32_t)__cvta_generic_to_shared(smem_raw);
    const uint32_t pad = ((raw + 1023u) & ~1023u) - raw;
    unsigned char *const bt = smem_raw + pad;                   /* the two K-major B buffers */
    unsigned char *const ring = bt + 2 * Tile::BT_BYTES;       /* STAGES x [A rows][B rows] */
    const uint32_t ring_s = raw + pad + 2 * Tile::BT_BYTES;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wg = warp >> 2, wl = warp & 3, g = lane >> 2, t = lane & 3;
    const int wm = WG_M == 2 ? wg : 0, wn = WG_N == 2 ? wg : 0;
    const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM, split = blockIdx.z;
    const fdnn_bwdf::BwdfRange rows = fdnn_bwdf::bwdf_range(P, split, TBK);
    const int row_begin = rows.begin, row_end = rows.end, ktiles = rows.ktiles;

    /* copies: thread (lr, lc) = (tid / 8, tid % 8) takes slice row lr, chunk lc of every atom */
    const int lc = tid & 7, lr = tid >> 3;
    Copy copy(P, lc, lr, m0, n0, row_begin, row_end);
    const uint32_t a_dst = fdnn_bwdf::bw_swz<128, 1>(lr, lc); /* rows of one 128-byte atom */
    const uint32_t b_dst = fdnn_bwdf::bw_swz<128, 4>(lr, lc);
    auto load_slice = [&](int st) {
        const uint32_t sa = ring_s + st * Tile::STAGE_BYTES;
        copy.load(P, sa + a_dst, sa + Tile::A_BYTES + b_dst);
    };
    /* transpose unit i of this thread: slice row kq, chunk 8 i + c7 of the staged B rows (atom i,
     * chunk c7) -> K-major rows n = 32 i + 4 c7 + q, q < 4 */
    const int kq = 16 * (warp & 1) + (lane & 15), c7 = 2 * (warp >> 1) + (lane >> 4);
    const uint32_t t_src = fdnn_bwdf::bw_swz<128, 4>(kq, c7);
    uint32_t t_dst[4];
#pragma unroll
    for (int q = 0; q < 4; q++) t_dst[q] = (uint32_t)((4 * c7 + q) * 128 + (((kq >> 2) ^ (4 * (c7 & 1) + q)) << 4) + (kq & 3) * 4);
    /* B rows of ring stage st -> K-major buffer buf, rounded to TF32 */
    auto transpose = [&](int st, int buf) {
        const unsigned char *sb = ring + st * Tile::STAGE_BYTES + Tile::A_BYTES + t_src;
        unsigned char *dst = bt + buf * Tile::BT_BYTES;
#pragma unroll
        for (int i = 0; i < TIT; i++) {
            const float4 v = *(const float4 *)(sb + 4096 * i);
            *(uint32_t *)(dst + t_dst[0] + 4096 * i) = fdnn_ptx::to_tf32(v.x);
            *(uint32_t *)(dst + t_dst[1] + 4096 * i) = fdnn_ptx::to_tf32(v.y);
            *(uint32_t *)(dst + t_dst[2] + 4096 * i) = fdnn_ptx::to_tf32(v.z);
            *(uint32_t *)(dst + t_dst[3] + 4096 * i) = fdnn_ptx::to_tf32(v.w);
        }
    };
    /* A fragments of the four k8 steps of ring stage st: channels 16 wl + 2g, +1 of the
     * warpgroup's 64, slice rows 8j + t and 8j + t + 4 (atom acol / 32, chunk acol % 32 / 4) */
    const int acol = wm * 64 + wl * 16 + 2 * g;
    auto load_a = [&](int st, uint32_t (&af)[4][4]) {
        const unsigned char *sa = ring + st * Tile::STAGE_BYTES + (acol >> 5) * 4096 + (acol & 3) * 4;
        const int ch = (acol & 31) >> 2;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float2 v[2];
#pragma unroll
            for (int h = 0; h < 2; h++) v[h] = *(const float2 *)(sa + fdnn_bwdf::bw_swz<128, 1>(8 * j + t + 4 * h, ch));
            af[j][0] = fdnn_ptx::to_tf32(v[0].x);
            af[j][1] = fdnn_ptx::to_tf32(v[0].y);
            af[j][2] = fdnn_ptx::to_tf32(v[1].x);
            af[j][3] = fdnn_ptx::to_tf32(v[1].y);
        }
    };

    float acc[NACC];
    fdnn_ptx::zero_acc<NACC>(acc);
    uint32_t afr[4][4], anx[4][4];

    /* prologue: slices 0 .. STAGES-1 in flight; slice 0 transposed and its A fragments loaded */
    fdnn_ptx::ring_prologue<STAGES>(ktiles, load_slice);
    if (ktiles > 0) {
        fdnn_ptx::cp_async_wait<STAGES - 1>();
        __syncthreads();
        transpose(0, 0);
        load_a(0, afr);
        fdnn_wg::fence_proxy_async();
        __syncthreads();
    }

    /* the warpgroup's first B row (filter column) in a K-major buffer; k step j is 32 bytes on */
    const uint64_t d_bt = fdnn_wg::desc128(raw + pad + (uint32_t)(wn * NW * 128));
    for (int kt = 0; kt < ktiles; kt++) {
        const int buf = kt & 1;
        fdnn_wg::fence_regs<NACC>(acc);
        fdnn_wg::wg_fence();
#pragma unroll
        for (int j = 0; j < 4; j++) tf32_rs_mma<NW>(acc, afr[j], d_bt + (uint64_t)((buf * Tile::BT_BYTES + 32 * j) >> 4));
        fdnn_wg::wg_commit();
        /* ring stage kt % STAGES was read (transposed, A loaded) before the last barrier */
        if (kt + STAGES < ktiles) load_slice(kt % STAGES);
        fdnn_ptx::cp_async_commit();
        if (kt + 1 < ktiles) {
            fdnn_ptx::cp_async_wait<STAGES - 1>(); /* this thread's copies of slice kt+1 */
            __syncthreads();                       /* everyone's */
            const int st = (kt + 1) % STAGES;
            transpose(st, buf ^ 1); /* read by the wgmmas of kt-1, retired before the last barrier */
            load_a(st, anx);
            fdnn_wg::fence_proxy_async();
        }
        fdnn_wg::wg_wait<0>();
        fdnn_wg::fence_regs<NACC>(acc);
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int q = 0; q < 4; q++) {
                asm volatile("" ::"r"(afr[j][q]) : "memory"); /* kt's A registers stay untouched until its wgmmas retire */
                afr[j][q] = anx[j][q];
            }
        __syncthreads(); /* the K-major buffer of kt+1 is complete */
    }
    fdnn_ptx::cp_async_wait<0>();

    /* epilogue: MMA row g + 8 h of warp slab wl is channel 16 wl + 2g + h of the warpgroup's 64
     * (C % 4 == 0: a column pair is one tap) */
    wgb_epilogue<float, NW>(P, acc, split, n0 + wn * NW + 2 * t, m0 + acol, 1);
#else
    (void)P;
    __trap(); /* not sm_90a code: the host never launches it here */
#endif
}

/* tile configurations: BM (output channels) x BN (filter columns) */
enum TwgConfig { TWG_64x256 = 0, TWG_128x128 = 1, TWG_128x256 = 2, TWG_64x128 = 3 };
constexpr int TWG_NCONFIGS = 4;
static inline int twg_bm(TwgConfig c) { return c == TWG_64x256 || c == TWG_64x128 ? 64 : 128; }
static inline int twg_bn(TwgConfig c) { return c == TWG_64x256 || c == TWG_128x256 ? 256 : 128; }

/* The plan. Tile (bwdf_lab --sweep-tf32 on the H200, TFLOP/s): K <= 64: 64x256 (3x3 64->64 at
 * 224x224 batch 32: 94 against at most 79 for the others; conv1 88), or 64x128 when R*S*C <= 128
 * (1x1 64->64: 28.6 against 22.0); K > 64: 128x128 (3x3 128->128 28x28: 121 against 114 for
 * 128x256), or 128x256 when R*S*C >= 2304 (3x3 256->256 14x14 batch 128: 168 against 134; batch
 * 32: 123 against 108; 3x3 512->512 7x7: 88 against 83; the 1x1 2048->512 with 2048 columns
 * stays on 128x128: 95 against 71). Splits: wg_split_plan with a slice of 32 rows at ~1.3
 * TFLOP/s per SM (half the 16-bit rate). force_* for the lab. */
static inline TwgConfig twg_pick(int k, int rsc)
{
    if (k <= 64) return rsc <= 128 ? TWG_64x128 : TWG_64x256;
    return rsc >= 2304 ? TWG_128x256 : TWG_128x128;
}
static inline fdnn_bwdf::BwdfPlan twg_plan(int npq, int k, int rsc, int force_splits = 0, int force_cfg = -1)
{
    fdnn_bwdf::BwdfPlan pl;
    const TwgConfig c = (TwgConfig)(force_cfg >= 0 ? force_cfg : twg_pick(k, rsc));
    pl.cfg = (fdnn_bwdf::BwdfConfig)c;
    const int bm = twg_bm(c), bn = twg_bn(c);
    wg_split_plan(pl, npq, k, rsc, bm, bn, 1, TBK, 2.0 * bm * bn * TBK / 1.3e6, force_splits);
    return pl;
}

template <int BM, int BN, int STAGES>
static cudaError_t twg_launch_cfg(const BwdfParams &P, cudaStream_t st)
{
    static unsigned long long opted = 0;
    return fdnn_bwdf::bwdf_tile_launch<BM, BN>(conv_bwd_filter_wgmma_tf32_kernel<BM, BN, STAGES>, THREADS,
                                               TwgTile<BM, BN, STAGES>::SMEM_BYTES, &opted, P, st);
}

/* FLOAT (TF32); P.chunk / P.splits from twg_plan, P.ws of fdnn_bwdf::bwdf_workspace_bytes when
 * splits > 1; the requirements of fdnn_bwdf::bwdf_tf32_launch, and an sm_90a build on a 9.0
 * device (the caller checks) */
static cudaError_t twg_launch(BwdfParams P, TwgConfig cfg, cudaStream_t st)
{
    return fdnn_bwdf::bwdf_run<float>(P, TBK, st, [&](const BwdfParams &Q) {
        cudaError_t e = cudaErrorInvalidValue;
        switch (cfg) {
        case TWG_64x256: e = twg_launch_cfg<64, 256, 3>(Q, st); break;
        case TWG_128x128: e = twg_launch_cfg<128, 128, 4>(Q, st); break;
        case TWG_128x256: e = twg_launch_cfg<128, 256, 3>(Q, st); break;
        case TWG_64x128: e = twg_launch_cfg<64, 128, 4>(Q, st); break;
        }
        return e;
    });
}

} /* namespace fdnn_bwdf_wg */
#endif
