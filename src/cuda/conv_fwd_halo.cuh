/* Hopper (sm_90a) forward convolution for small K (K <= 64) with stride 1: the "halo" kernel.
 * Same problem and epilogue semantics as conv_fwd_wgmma.cuh (MmaConvParams; HALF / BFLOAT16 with
 * C % 64 == 0, FLOAT as TF32 with C % 32 == 0), different GEMM orientation and data reuse.
 *
 * Why: with K <= 64 the implicit GEMM y[M, K] = Xcol[M, RSC] * W[RSC, K] has one 64-column block,
 * so a tile that loads Xcol slice by slice copies every input pixel R*S times (once per filter
 * tap) and each wgmma m64n64k16 reads as many operand bytes as it does math (that kernel: 294
 * TFLOP/s on 3x3 64->64 at 224x224, against 901 for a dense fp16 GEMM on the H200). Here the roles turn: D[K, pixels] = W[K, RSC] * Xcol^T, one m64n128k16 wgmma per
 * k step with the filter as the 64-row A operand and 128 output pixels as the N operand, and the
 * input comes in once per tile as a halo:
 *
 *   A tile is bp output rows of bq columns of one image. Its input window, (bp + (R-1)*dh) rows of
 *   pitch = bq + (S-1)*dw pixels, is stored as consecutive 128-byte shared rows (one pixel's
 *   64-channel slice each; C/64 such planes), row j = input pixel (j / pitch, j % pitch) of the
 *   window. Number the tile's output pixels "virtually" the same way, v = pp*pitch + qq (columns
 *   qq >= bq and rows past bp are computed and dropped). Then the input of output v under tap
 *   (r, s) is window row v + r*dh*pitch + s*dw: every tap's operand is the same 128 rows, shifted.
 *   So the B operand of tap (r, s) is a descriptor whose start is that many rows further, and the
 *   window is copied once for all R*S taps (about 1.5 rows per output pixel instead of R*S).
 *
 * The shift is a whole number of 128-byte rows but not of the 8-row (1024-byte) swizzle pattern.
 * That is fine: the wgmma unit applies the 128-byte swizzle (chunk c of a row at c ^ (address bits
 * 7-9)) to the absolute shared address, which is how the window was written, so the descriptor's
 * base-offset field stays 0 (igemm_lab tried the pattern's phase there: wrong products). The filter,
 * R*S*(C/64) tiles of 64 rows (output channels; rows past K are zero), stays in shared memory for
 * the whole kernel.
 *
 * Work split: a persistent grid, one block of NWG (3) warpgroups per SM; each warpgroup is its own
 * worker (tiles w, w + workers, ...; worker w = block + grid * warpgroup, so that the tiles of a
 * last partial round go to different SMs, one per SM, instead of all NWG warpgroups of the first
 * few SMs: 3x3 64->64 56x56 at batch 128, 3584 tiles over 396 workers, 0.0825 -> 0.080 ms on an
 * H100) with a two-stage ring of windows (NBUF = 2): it copies tile
 * i+1's window (cp.async) while its wgmmas run on tile i, and the warpgroups drift apart so that
 * one's epilogue overlaps the others' MMAs. Where the filter is 144 KiB (3x3 over two planes: TF32
 * with 64 channels, 16-bit types with 128) six windows do not fit; then NWG = 2 warpgroups keep one
 * window each (NBUF = 1) and copy the next tile's window after the epilogue, while the other
 * warpgroup's MMAs run. Warpgroups synchronise with named barriers only (bar.sync 1 + wg,
 * 128). The epilogue reuses the finished window: for 16-bit T with beta == 0, alpha * D rounded to
 * T and transposed to [pixel][channel] rows by stmatrix.trans; otherwise alpha * D as floats, half
 * the output channels at a time, blended with beta * y in float (one rounding). Either way each
 * thread then writes whole 8-channel vectors of y.
 *
 * TMA (HaloPlan::tma, FREEDNN_CUDA_HALO_TMA in the library): 1 copies each window as one TMA box
 * per channel plane from a 4-D tensor map over x, {plane, pitch, bp + (R-1)*dh, 1}, which lands in
 * the window layout with the same 128-byte swizzle and whose out-of-bounds zeros are the padding;
 * one thread per warpgroup arms the buffer's mbarrier and issues it, the warpgroup waits on the
 * barrier's phase. 2 also stores 16-bit y (K == 64, beta == 0) by TMA: stmatrix puts each real
 * pixel at its place in a dense bp x bq box (rowmap), one bulk store writes the box and drops
 * what lies past y's edges. Nsight Compute had put about 1870 instructions per warp and tile in
 * the cp.async kernel, 36 of them wgmmas, the rest mostly the window copies and y stores; igemm_lab
 * on an H100, fp16 3x3 64->64: 56x56 at batch 128 0.080 ms (cp.async) -> 0.061 (TMA windows) ->
 * 0.051 (TMA windows and stores), 224x224 at batch 32 0.282 -> 0.178 ms. */
#ifndef FDNN_CUDA_CONV_FWD_HALO_CUH
#define FDNN_CUDA_CONV_FWD_HALO_CUH
#include <cuda.h>          /* CUtensorMap and its enums (types only: the encoder comes through the runtime) */
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeTiled */
#include "conv_fwd_wgmma.cuh"

namespace fdnn_halo {

using fdnn_mma::MmaConvParams;
using fdnn_ptx::cp_async16;
using fdnn_ptx::cp_async_commit;
using fdnn_ptx::cp_async_wait;

constexpr int SMEM_LIMIT = 227 * 1024;
constexpr int STAGE_ROW = 36;       /* floats per staged pixel: 32 channels + 4 against bank conflicts */
constexpr int TMA_EXTRA = 512;      /* shared bytes past the windows: the TMA mbarriers (16 a warpgroup) and row map */

/* A problem's tiling; halo_plan fills it */
struct HaloPlan {
    int bq, bp, pitch; /* output columns and rows per tile; window row pitch (pixels) */
    int nqb, npb;      /* tiles across a row of the output, down a column */
    int hr;            /* window rows per plane (multiple of 8) */
    int planes;        /* 128-byte channel slices: C / (128 / sizeof(T)) */
    int tiles;         /* N * npb * nqb */
    int filt_bytes, stage_bytes, smem_bytes, grid;
    int nwg, tn;       /* warpgroups per block (workers per SM); virtual pixels per tile (the wgmma N) */
    int nbuf;          /* windows per warpgroup: 2 (the next tile's copy overlaps this one's MMAs) or 1 */
    int wgmajor;       /* worker order: 1 (halo_plan's) w = block + grid * wg; 0 w = NWG * block + wg */
    int tma;           /* 0: windows copied by cp.async; 1: by TMA; 2: by TMA, and 16-bit y (K == 64, beta == 0)
                        * stored by TMA too (halo_tma_maps) */
};

__device__ __forceinline__ void wg_bar(int wg) { asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wg) : "memory"); }

/* alpha * the accumulators of 8x8 blocks (j, 0), (j, 1), (j + 1, 0), (j + 1, 1) (acc[4j + 2h + e]:
 * output channel 16*warp + lane/4 + 8h, virtual pixel 8j + 2*(lane%4) + e) rounded to 16-bit T and
 * stored transposed by one stmatrix.x4.trans: lane L gives the shared address of row L%8 (a
 * pixel's 8 channels) of block L/8 */
template <typename T> __device__ __forceinline__ void stmatrix_blocks(const float *acc, int j, float alpha, uint32_t addr)
{
    uint32_t rg[4];
#pragma unroll
    for (int b = 0; b < 4; b++) {
        const int a = 4 * (j + (b >> 1)) + 2 * (b & 1);
        rg[b] = fdnn_wg::pack2<T>(alpha * acc[a], alpha * acc[a + 1]);
    }
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(rg[0]), "r"(rg[1]), "r"(rg[2]),
                 "r"(rg[3])
                 : "memory");
}

/* TMA and mbarrier primitives (sm_90) */
__device__ __forceinline__ void mbar_init(uint32_t a, int n)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(a), "r"(n) : "memory");
}
__device__ __forceinline__ void mbar_expect(uint32_t a, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(a), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t a, uint32_t parity)
{
    asm volatile("{\n.reg .pred p;\nHALO_WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra HALO_WAIT;\n}\n" ::"r"(a),
                 "r"(parity)
                 : "memory");
}
/* box (c0, c1, c2, c3) of tensor map m into shared dst; completes transaction bytes on mbarrier bar */
__device__ __forceinline__ void tma_load4(uint32_t dst, const CUtensorMap *m, uint32_t bar, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
                 "l"((unsigned long long)m), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
                 : "memory");
}
/* shared src to box (c0, c1, c2, c3) of tensor map m (elements outside the tensor are dropped), as one bulk group */
__device__ __forceinline__ void tma_store4(const CUtensorMap *m, uint32_t src, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];\n"
                 "cp.async.bulk.commit_group;\n" ::"l"((unsigned long long)m),
                 "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src)
                 : "memory");
}
/* this thread's bulk stores have read their shared source (READ) or are complete */
template <bool READ> __device__ __forceinline__ void bulk_wait()
{
    if (READ) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    else asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

/* TMA: windows copied by TMA through xmap (else by cp.async); then H.tma == 2 also stores y through
 * ymap (16-bit T, K == 64, beta == 0, TN == 128) */
template <typename T, int NWG, int TN, int NBUF, int FR, int FS, int PL, bool TMA>
__global__ void __launch_bounds__(NWG * 128, 1) conv_fwd_halo_kernel(const MmaConvParams P, const HaloPlan H, const __grid_constant__ CUtensorMap xmap,
                                                                     const __grid_constant__ CUtensorMap ymap)
{
#if FDNN_WGMMA_DEVICE
    constexpr int THREADS = NWG * 128;
    constexpr int EPC = 16 / (int)sizeof(T); /* elements per 16-byte chunk */
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const uint32_t raw = (uint32_t)__cvta_generic_to_shared(smem_raw);
    const uint32_t smem = (raw + 1023u) & ~1023u;
    const int tid = threadIdx.x, wg = tid >> 7, t = tid & 127, lane = tid & 31, wl = (tid >> 5) & 3;
    const int lc = tid & 7; /* the 16-byte chunk of a 128-byte row this thread copies */
    const int taps = P.r * P.s, nf = taps * H.planes;

    /* the filter, once: tile f = (tap, plane), rows = output channels (zero past K) */
    for (int idx = tid >> 3; idx < nf * 64; idx += THREADS / 8) {
        const int f = idx >> 6, row = idx & 63, pl = f % H.planes, tap = f / H.planes;
        int r = tap / P.s, s = tap - r * P.s;
        if (P.flip) {
            r = P.r - 1 - r;
            s = P.s - 1 - s;
        }
        const bool ok = row < P.k;
        const char *src = (const char *)P.w + ((((long long)(ok ? row : 0) * P.r + r) * P.s + s) * P.c + pl * (128 / (int)sizeof(T)) + lc * EPC) * (long long)sizeof(T);
        cp_async16(smem + f * 8192 + fdnn_wg::swz128(row, lc), src, ok ? 16 : 0);
    }

    const uint32_t ring = smem + H.filt_bytes + wg * NBUF * H.stage_bytes;
    const int workers = NWG * gridDim.x;
    const long long img = (long long)P.h * P.w_ * P.c * (long long)sizeof(T);
    const int plane_bytes = H.hr * 128;
    /* tile tl: its image n and output corner (p0, q0) */
    auto tile_origin = [&](int tl, int &n, int &p0, int &q0) {
        const int qb = tl % H.nqb, rest = tl / H.nqb;
        n = rest / H.npb;
        p0 = (rest - n * H.npb) * H.bp;
        q0 = qb * H.bq;
    };
    /* t/8 as (row, column) of a pitch-wide grid: this thread's first window row, and the first
     * pixel it writes in the 16-bit epilogue; both step by 16 */
    const int hh0 = (t >> 3) / H.pitch, ww0 = (t >> 3) - hh0 * H.pitch;
    const long long pix_bytes = (long long)P.c * sizeof(T);
    /* copy tile tl's window into dst: this thread copies chunk lc of rows t/8 + 16 i of each plane */
    auto load_window = [&](int tl, uint32_t dst) {
        int n, p0, q0;
        tile_origin(tl, n, p0, q0);
        const int ih0 = p0 - P.ph, iw0 = q0 - P.pw;
        const char *xn = (const char *)P.x + n * img + lc * 16;
        int hh = hh0, ww = ww0;
        for (int j = t >> 3; j < H.hr; j += 16) {
            const int ih = ih0 + hh, iw = iw0 + ww;
            const bool ok = ((unsigned)ih < (unsigned)P.h) & ((unsigned)iw < (unsigned)P.w_);
            const char *src = ok ? xn + (ih * P.w_ + iw) * pix_bytes : (const char *)P.x;
            const uint32_t d = dst + fdnn_wg::swz128(j, lc);
            for (int pl = 0; pl < H.planes; pl++) cp_async16(d + pl * plane_bytes, src + pl * 128, ok ? 16 : 0);
            for (ww += 16; ww >= H.pitch; ww -= H.pitch) hh++;
        }
    };

    /* TMA: window buffer b's mbarrier, and the box: the tile's bp + (R-1)*dh input rows of pitch
     * pixels, one box per channel plane, landing as window rows 0 .. box rows * pitch - 1 in the
     * same 128-byte swizzle; the tensor map's out-of-bounds zeros are the padding. Later window
     * rows keep stale data: they feed only virtual pixels past the tile's rows, which are dropped. */
    const uint32_t extra = smem + H.filt_bytes + NWG * NBUF * H.stage_bytes;
    const uint32_t mbar = extra + wg * 16;
    auto tma_window = [&](int tl, int b) { /* one thread of the warpgroup */
        int n, p0, q0;
        tile_origin(tl, n, p0, q0);
        if (H.tma == 2) bulk_wait<true>(); /* the output stores out of this buffer have read it */
        mbar_expect(mbar + 8 * b, (uint32_t)(H.planes * (H.bp + (P.r - 1) * P.dh) * H.pitch * 128));
        for (int pl = 0; pl < H.planes; pl++)
            tma_load4(ring + b * H.stage_bytes + pl * plane_bytes, &xmap, mbar + 8 * b, pl * (128 / (int)sizeof(T)), q0 - P.pw, p0 - P.ph, n);
    };
    /* H.tma == 2: the staging row of each virtual pixel, so that the tile's bp x bq real pixels lie
     * as the dense box the y store takes (rows 0 .. bp*bq - 1) and the others after them */
    unsigned short *const rowmap = (unsigned short *)(smem_raw + (extra + 64 - raw));
    if (TMA && H.tma == 2)
        for (int v = tid; v < TN; v += THREADS) {
            const int pp = v / H.pitch, qq = v - pp * H.pitch, real = H.bp * H.bq;
            rowmap[v] = (unsigned short)(pp >= H.bp ? v : qq < H.bq ? pp * H.bq + qq : real + pp * (H.pitch - H.bq) + qq - H.bq);
        }

    int tile = H.wgmajor ? blockIdx.x + gridDim.x * wg : NWG * blockIdx.x + wg;
    if (TMA) {
        if (t == 0) {
            mbar_init(mbar, 1);
            mbar_init(mbar + 8, 1);
            asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
            if (tile < H.tiles) tma_window(tile, 0);
        }
    } else if (tile < H.tiles) {
        load_window(tile, ring);
    }
    cp_async_commit();
    cp_async_wait<0>(); /* the filter (everyone's part) and this thread's first window */
    fdnn_wg::fence_proxy_async();
    __syncthreads();
    uint32_t phase = 0; /* TMA: bit b, the parity of window buffer b's next fill */

    float *const stage_f = (float *)(smem_raw + (ring - raw)); /* generic address of stage 0 */
    /* the first pixel this thread writes in the float epilogue, (row, column) of the tile */
    const int fp0 = (t >> 2) / H.pitch, fq0 = (t >> 2) - fp0 * H.pitch;
    const float alpha = P.alpha, beta = P.beta;
    int st = 0;
    for (bool first = true; tile < H.tiles; tile += workers, st = NBUF == 2 ? st ^ 1 : 0, first = false) {
        const uint32_t cur = ring + st * H.stage_bytes;
        if (TMA) {
            if (t == 0) {
                if (NBUF == 1 && !first) tma_window(tile, 0);
                if (NBUF == 2 && tile + workers < H.tiles) tma_window(tile + workers, st ^ 1);
            }
            mbar_wait(mbar + 8 * st, (phase >> st) & 1);
            phase ^= 1u << st;
        } else if (NBUF == 2) {
            if (tile + workers < H.tiles) load_window(tile + workers, ring + (st ^ 1) * H.stage_bytes);
            cp_async_commit();
            cp_async_wait<1>(); /* this thread's copies of the current window */
        } else {
            /* one window: the previous tile's epilogue has finished with it (its last wg_bar) */
            if (!first) load_window(tile, cur);
            cp_async_commit();
            cp_async_wait<0>();
        }
        if (!TMA) {
            fdnn_wg::fence_proxy_async();
            wg_bar(wg); /* everyone's in this warpgroup */
        }

        float acc[TN / 2];
#pragma unroll
        for (int i = 0; i < TN / 2; i++) acc[i] = 0.f;
        fdnn_wg::fence_regs<TN / 2>(acc);
        fdnn_wg::wg_fence();
        const uint64_t dfil = fdnn_wg::desc128(smem);
#pragma unroll
        for (int r = 0; r < (FR ? FR : P.r); r++)
#pragma unroll
            for (int s = 0; s < (FS ? FS : P.s); s++) {
                const uint32_t b0 = cur + (uint32_t)(r * P.dh * H.pitch + s * P.dw) * 128u;
                const int f0 = (r * P.s + s) * H.planes;
#pragma unroll
                for (int pl = 0; pl < (PL ? PL : H.planes); pl++) {
                    const uint64_t db = fdnn_wg::desc128(b0 + pl * plane_bytes);
                    const uint64_t da = dfil + (uint64_t)(((f0 + pl) * 8192) >> 4);
#pragma unroll
                    for (int j = 0; j < 4; j++) fdnn_wg::WgOps<T>::template mma<TN>(acc, da + j * 2, db + j * 2);
                }
            }
        fdnn_wg::wg_commit();
        fdnn_wg::wg_wait<0>();
        fdnn_wg::fence_regs<TN / 2>(acc);
        wg_bar(wg); /* the whole warpgroup's wgmmas have read the window: it becomes the staging area */

        int n, p0, q0;
        tile_origin(tile, n, p0, q0);
        T *const yt = (T *)P.y + (long long)n * P.p * P.q * P.k;
        /* acc[4j + 2h + e] is output channel 16*wl + lane/4 + 8h, virtual pixel 8j + 2*(lane%4) + e */
        if (TMA && sizeof(T) == 2 && H.tma == 2) {
            /* the same stmatrix.trans blocks, each lane's row at its pixel's place in the box
             * (rowmap), 128 bytes a pixel in the 128-byte swizzle; then one TMA store of the
             * box, which drops what lies past y's edges */
            const int c = 2 * wl + ((lane >> 3) & 1), v0 = 8 * (lane >> 4) + (lane & 7);
#pragma unroll
            for (int j = 0; j < TN / 8; j += 2) {
                const int d = rowmap[v0 + 8 * j];
                stmatrix_blocks<T>(acc, j, alpha, cur + (uint32_t)(d * 128 + ((c ^ (d & 7)) << 4)));
            }
            fdnn_wg::fence_proxy_async();
            wg_bar(wg);
            if (t == 0) tma_store4(&ymap, cur, 0, q0, p0, n);
            continue;
        }
        if (sizeof(T) == 2 && beta == 0.f) {
            /* 16-bit output, no blend: alpha * D rounded to T and transposed into [pixel][channel]
             * rows (144 bytes apart) by stmatrix.trans, 8x8 blocks (j, h), four per instruction;
             * then each thread writes whole 16-byte vectors (8 channels) of y */
            const uint32_t sbase = cur + (uint32_t)((lane & 7) * 144 + 32 * wl);
#pragma unroll
            for (int j = 0; j < TN / 8; j += 2) stmatrix_blocks<T>(acc, j, alpha, sbase + (uint32_t)((8 * j + 8 * (lane >> 4)) * 144 + 16 * ((lane >> 3) & 1)));
            wg_bar(wg);
            const unsigned char *srow = smem_raw + (cur - raw);
            const int cv = t & 7;
            int pp = hh0, qq = ww0;
            for (int v = t >> 3; v < TN; v += 16) {
                const int p = p0 + pp, q = q0 + qq;
                if (qq < H.bq && pp < H.bp && p < P.p && q < P.q && cv * 8 < P.k)
                    *(uint4 *)(yt + ((long long)p * P.q + q) * P.k + cv * 8) = *(const uint4 *)(srow + v * 144 + cv * 16);
                for (qq += 16; qq >= H.pitch; qq -= H.pitch) pp++;
            }
            if (TMA) fdnn_wg::fence_proxy_async(); /* ... by TMA, another proxy */
            wg_bar(wg); /* the staging rows are read before the window is refilled */
            continue;
        }
        /* otherwise alpha * D staged as floats, half the channels at a time, blended with beta * y
         * in float (beta == 0 never reads y): one rounding to T */
        float *const stg = stage_f + st * (H.stage_bytes / 4);
#pragma unroll
        for (int half = 0; half < 2; half++) {
            if ((wl >> 1) == half) {
#pragma unroll
                for (int j = 0; j < TN / 8; j++)
#pragma unroll
                    for (int h = 0; h < 2; h++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const int v = 8 * j + 2 * (lane & 3) + e, kl = 16 * (wl & 1) + (lane >> 2) + 8 * h;
                            stg[v * STAGE_ROW + kl] = alpha * acc[4 * j + 2 * h + e];
                        }
            }
            wg_bar(wg);
            const int cv = t & 3, kk = half * 32 + cv * 8;
            int pp = fp0, qq = fq0;
            for (int v = t >> 2; v < TN; v += 32) { /* 4 vectors of 8 channels per pixel */
                const int p = p0 + pp, q = q0 + qq;
                if (qq < H.bq && pp < H.bp && p < P.p && q < P.q && kk < P.k)
                    fdnn_wg::store8<T>(stg + v * STAGE_ROW + cv * 8, yt + ((long long)p * P.q + q) * P.k + kk, beta);
                for (qq += 32; qq >= H.pitch; qq -= H.pitch) pp++;
            }
            if (TMA) fdnn_wg::fence_proxy_async();
            wg_bar(wg); /* the staging rows are read before they are rewritten (or refilled) */
        }
    }
    cp_async_wait<0>();
    if (TMA && H.tma == 2 && t == 0) bulk_wait<false>(); /* the last stores, before the block's shared memory goes */
#else
    (void)P;
    (void)H;
    (void)xmap;
    (void)ymap;
    __trap(); /* not sm_90a code: the host never launches it here */
#endif
}

/* Tiling for P (stride 1; T's 128-byte slices whole: C % (128 / elem) == 0; K <= 64, K % 8 == 0;
 * no split) with nwg warpgroups per block, tn-pixel tiles and nbuf windows per warpgroup: the
 * column block bq whose tiles cost least (rounds of nwg * sms workers, each tile the MMAs of tn
 * virtual pixels plus a small charge for its window), among those whose filter and nbuf * nwg
 * windows fit in shared memory. False when nothing fits or the problem is not the kernel's. */
static inline bool halo_plan(const MmaConvParams &P, int elem, int sms, HaloPlan &H, int nwg = 3, int tn = 128, int nbuf = 2)
{
    if (P.sh != 1 || P.sw != 1 || P.k > 64 || P.k % 8 || P.splits > 1 || P.m == 0) return false;
    const int se = 128 / elem; /* elements per 128-byte slice */
    if (P.c % se) return false;
    const int planes = P.c / se;
    const long long filt = (long long)P.r * P.s * planes * 8192;
    if (filt > SMEM_LIMIT) return false;
    double best = -1;
    for (int bq = 1; bq <= P.q; bq++) {
        const int pitch = bq + (P.s - 1) * P.dw;
        if (pitch > tn) break;
        const int bp = tn / pitch;
        const long long hr = ((long long)tn + (long long)(P.r - 1) * P.dh * pitch + (P.s - 1) * P.dw + 7) & ~7LL;
        long long stage = planes * hr * 128;
        if (stage < tn * STAGE_ROW * 4) stage = tn * STAGE_ROW * 4;
        stage = (stage + 1023) & ~1023LL;
        const long long smem = filt + (long long)nbuf * nwg * stage + 1024 + TMA_EXTRA;
        if (smem > SMEM_LIMIT) continue;
        const long long nqb = (P.q + bq - 1) / bq, npb = (P.p + bp - 1) / bp, tiles = (long long)P.n * nqb * npb;
        if (tiles >= (1LL << 31)) continue;
        const long long rounds = (tiles + (long long)nwg * sms - 1) / ((long long)nwg * sms);
        const double cost = (double)rounds * ((double)tn * P.r * P.s * planes + (double)hr * planes / 4);
        if (best < 0 || cost < best) {
            best = cost;
            H.bq = bq;
            H.bp = bp;
            H.pitch = pitch;
            H.nqb = (int)nqb;
            H.npb = (int)npb;
            H.hr = (int)hr;
            H.planes = planes;
            H.tiles = (int)tiles;
            H.filt_bytes = (int)filt;
            H.stage_bytes = (int)stage;
            H.smem_bytes = (int)smem;
            H.grid = (int)((tiles + nwg - 1) / nwg < sms ? (tiles + nwg - 1) / nwg : sms);
            H.nwg = nwg;
            H.tn = tn;
            H.nbuf = nbuf;
            H.wgmajor = 1;
            H.tma = 0;
        }
    }
    return best >= 0;
}

/* the share of computed pixels that are real outputs (the rest are window columns and rows past
 * the image) */
static inline double halo_efficiency(const MmaConvParams &P, const HaloPlan &H)
{
    return (double)P.m / ((double)H.tiles * H.tn);
}

/* The tensor maps of plan H's TMA copies (H.tma): xm, a 4-D map over x (C, W, H, N innermost
 * first) whose box is one channel plane (128 bytes) of a window, {plane, pitch, bp + (R-1)*dh, 1},
 * 128-byte swizzle, zeros outside; with H.tma == 2 also ym over y (K, Q, P, N), box {64, bq, bp, 1},
 * the same swizzle. False where the driver has no encoder or it refuses the map (x or y not
 * 16-byte aligned, a box side past 256): the caller then uses the cp.async copies. */
static inline bool halo_tma_maps(const MmaConvParams &P, const HaloPlan &H, int elem, CUtensorMap *xm, CUtensorMap *ym)
{
    static const PFN_cuTensorMapEncodeTiled_v12000 enc = []() -> PFN_cuTensorMapEncodeTiled_v12000 {
        void *f = nullptr;
        cudaDriverEntryPointQueryResult q;
#if CUDART_VERSION >= 12050
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess) f = nullptr;
#else
        if (cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &f, cudaEnableDefault, &q) != cudaSuccess) f = nullptr;
#endif
        if (!f || q != cudaDriverEntryPointSuccess) {
            cudaGetLastError();
            return nullptr;
        }
        return (PFN_cuTensorMapEncodeTiled_v12000)f;
    }();
    if (!enc) return false;
    const CUtensorMapDataType dt = elem == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16 : CU_TENSOR_MAP_DATA_TYPE_UINT32;
    const cuuint32_t es[4] = {1, 1, 1, 1};
    const cuuint64_t xd[4] = {(cuuint64_t)P.c, (cuuint64_t)P.w_, (cuuint64_t)P.h, (cuuint64_t)P.n};
    const cuuint64_t xs[3] = {xd[0] * elem, xd[0] * xd[1] * elem, xd[0] * xd[1] * xd[2] * elem};
    const cuuint32_t xb[4] = {(cuuint32_t)(128 / elem), (cuuint32_t)H.pitch, (cuuint32_t)(H.bp + (P.r - 1) * P.dh), 1};
    if (xb[1] > 256 || xb[2] > 256) return false;
    if (enc(xm, dt, 4, (void *)P.x, xd, xs, xb, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        return false;
    if (H.tma != 2) return true;
    const cuuint64_t yd[4] = {(cuuint64_t)P.k, (cuuint64_t)P.q, (cuuint64_t)P.p, (cuuint64_t)P.n};
    const cuuint64_t ys[3] = {yd[0] * elem, yd[0] * yd[1] * elem, yd[0] * yd[1] * yd[2] * elem};
    const cuuint32_t yb[4] = {(cuuint32_t)(128 / elem), (cuuint32_t)H.bq, (cuuint32_t)H.bp, 1};
    return enc(ym, dt, 4, P.y, yd, ys, yb, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* the TMA mode plan H can have when asked for mode want: TMA copies need 128-pixel tiles; TMA
 * stores (2) also 16-bit T, K == 64 and beta == 0 (else 1) */
static inline int halo_tma_want(const MmaConvParams &P, const HaloPlan &H, int elem, int want)
{
    if (H.tn != 128) return 0;
    return want == 2 && !(elem == 2 && P.k == 64 && P.beta == 0.f) ? 1 : want;
}

template <typename T, int NWG, int TN, int NBUF, int FR, int FS, int PL, bool TMA>
static cudaError_t halo_launch_t(const MmaConvParams &P, const HaloPlan &H, const CUtensorMap &xm, const CUtensorMap &ym, cudaStream_t st)
{
    static unsigned long long opted = 0;
    cudaError_t e = fdnn_ptx::opt_in_smem(conv_fwd_halo_kernel<T, NWG, TN, NBUF, FR, FS, PL, TMA>, SMEM_LIMIT, &opted);
    if (e != cudaSuccess) return e;
    conv_fwd_halo_kernel<T, NWG, TN, NBUF, FR, FS, PL, TMA><<<H.grid, NWG * 128, H.smem_bytes, st>>>(P, H, xm, ym);
    return cudaGetLastError();
}

/* the kernel for H.tma (set by halo_tma_want: 128-pixel tiles only) where its maps encode, else
 * the cp.async one */
template <typename T, int NWG, int TN, int NBUF, int FR, int FS, int PL>
static cudaError_t halo_launch_k(const MmaConvParams &P, const HaloPlan &H, cudaStream_t st)
{
    CUtensorMap xm = {}, ym = {};
    HaloPlan h = H;
    if constexpr (TN == 128)
        if (h.tma && halo_tma_maps(P, h, (int)sizeof(T), &xm, &ym)) return halo_launch_t<T, NWG, TN, NBUF, FR, FS, PL, true>(P, h, xm, ym, st);
    h.tma = 0;
    return halo_launch_t<T, NWG, TN, NBUF, FR, FS, PL, false>(P, h, xm, ym, st);
}

/* 3x3 filters over one or two channel planes get the kernel with the tap loop unrolled */
template <typename T, int NWG, int TN, int NBUF>
static cudaError_t halo_launch_n(const MmaConvParams &P, const HaloPlan &H, cudaStream_t st)
{
    if (P.r == 3 && P.s == 3 && H.planes == 1) return halo_launch_k<T, NWG, TN, NBUF, 3, 3, 1>(P, H, st);
    if (P.r == 3 && P.s == 3 && H.planes == 2) return halo_launch_k<T, NWG, TN, NBUF, 3, 3, 2>(P, H, st);
    return halo_launch_k<T, NWG, TN, NBUF, 0, 0, 0>(P, H, st);
}

/* The library's shapes: 3 warpgroups with two 128-pixel windows each (halo_plan's default), or,
 * where the filter leaves too little shared memory for that (TF32 over 64 channels, 16-bit types
 * over 128: a 144 KiB filter), 2 warpgroups with one window each (halo_pick chooses) */
template <typename T>
static cudaError_t halo_launch(const MmaConvParams &P, const HaloPlan &H, cudaStream_t st)
{
    if (H.nbuf == 1) return halo_launch_n<T, 2, 128, 1>(P, H, st);
    return halo_launch_n<T, 3, 128, 2>(P, H, st);
}

/* any plan's shape: (3 warpgroups, 128-pixel tiles), (2, 128) or (2, 256), two windows each, or
 * (2, 128) with one; igemm_lab compares them (fp16, 3x3 64->64, TFLOP/s: 224x224 at batch 32
 * 417 / 344 / 375; 56x56 at batch 128 362 / 322 / 304) */
template <typename T>
static cudaError_t halo_launch_shape(const MmaConvParams &P, const HaloPlan &H, cudaStream_t st)
{
    if (H.nwg == 2 && H.nbuf == 1) return halo_launch_n<T, 2, 128, 1>(P, H, st);
    if (H.nwg == 2) return H.tn == 256 ? halo_launch_n<T, 2, 256, 2>(P, H, st) : halo_launch_n<T, 2, 128, 2>(P, H, st);
    return halo_launch_n<T, 3, 128, 2>(P, H, st);
}

} /* namespace fdnn_halo */
#endif
