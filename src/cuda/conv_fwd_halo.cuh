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
 * thread then writes whole 8-channel vectors of y. */
#ifndef FDNN_CUDA_CONV_FWD_HALO_CUH
#define FDNN_CUDA_CONV_FWD_HALO_CUH
#include "conv_fwd_wgmma.cuh"

namespace fdnn_halo {

using fdnn_mma::MmaConvParams;
using fdnn_ptx::cp_async16;
using fdnn_ptx::cp_async_commit;
using fdnn_ptx::cp_async_wait;

constexpr int SMEM_LIMIT = 227 * 1024;
constexpr int STAGE_ROW = 36;       /* floats per staged pixel: 32 channels + 4 against bank conflicts */

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
};

__device__ __forceinline__ void wg_bar(int wg) { asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wg) : "memory"); }

template <typename T, int NWG, int TN, int NBUF, int FR, int FS, int PL>
__global__ void __launch_bounds__(NWG * 128, 1) conv_fwd_halo_kernel(const MmaConvParams P, const HaloPlan H)
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

    int tile = H.wgmajor ? blockIdx.x + gridDim.x * wg : NWG * blockIdx.x + wg;
    if (tile < H.tiles) load_window(tile, ring);
    cp_async_commit();
    cp_async_wait<0>(); /* the filter (everyone's part) and this thread's first window */
    fdnn_wg::fence_proxy_async();
    __syncthreads();

    float *const stage_f = (float *)(smem_raw + (ring - raw)); /* generic address of stage 0 */
    /* the first pixel this thread writes in the float epilogue, (row, column) of the tile */
    const int fp0 = (t >> 2) / H.pitch, fq0 = (t >> 2) - fp0 * H.pitch;
    const float alpha = P.alpha, beta = P.beta;
    int st = 0;
    for (bool first = true; tile < H.tiles; tile += workers, st = NBUF == 2 ? st ^ 1 : 0, first = false) {
        const uint32_t cur = ring + st * H.stage_bytes;
        if (NBUF == 2) {
            if (tile + workers < H.tiles) load_window(tile + workers, ring + (st ^ 1) * H.stage_bytes);
            cp_async_commit();
            cp_async_wait<1>(); /* this thread's copies of the current window */
        } else {
            /* one window: the previous tile's epilogue has finished with it (its last wg_bar) */
            if (!first) load_window(tile, cur);
            cp_async_commit();
            cp_async_wait<0>();
        }
        fdnn_wg::fence_proxy_async();
        wg_bar(wg); /* everyone's in this warpgroup */

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
        if (sizeof(T) == 2 && beta == 0.f) {
            /* 16-bit output, no blend: alpha * D rounded to T and transposed into [pixel][channel]
             * rows (144 bytes apart) by stmatrix.trans, 8x8 blocks (j, h), four per instruction;
             * then each thread writes whole 16-byte vectors (8 channels) of y */
            const uint32_t sbase = cur + (uint32_t)((lane & 7) * 144 + 32 * wl);
#pragma unroll
            for (int j = 0; j < TN / 8; j += 2) {
                uint32_t rg[4];
#pragma unroll
                for (int b = 0; b < 4; b++) {
                    const int a = 4 * (j + (b >> 1)) + 2 * (b & 1);
                    rg[b] = fdnn_wg::pack2<T>(alpha * acc[a], alpha * acc[a + 1]);
                }
                /* lane L addresses row L%8 of block L/8: (j, 0), (j, 1), (j+1, 0), (j+1, 1) */
                const uint32_t addr = sbase + (uint32_t)((8 * j + 8 * (lane >> 4)) * 144 + 16 * ((lane >> 3) & 1));
                asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(rg[0]), "r"(rg[1]),
                             "r"(rg[2]), "r"(rg[3])
                             : "memory");
            }
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
            wg_bar(wg); /* the staging rows are read before they are rewritten (or refilled) */
        }
    }
    cp_async_wait<0>();
#else
    (void)P;
    (void)H;
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
        const long long smem = filt + (long long)nbuf * nwg * stage + 1024;
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

template <typename T, int NWG, int TN, int NBUF, int FR, int FS, int PL>
static cudaError_t halo_launch_k(const MmaConvParams &P, const HaloPlan &H, cudaStream_t st)
{
    static unsigned long long opted = 0;
    cudaError_t e = fdnn_ptx::opt_in_smem(conv_fwd_halo_kernel<T, NWG, TN, NBUF, FR, FS, PL>, SMEM_LIMIT, &opted);
    if (e != cudaSuccess) return e;
    conv_fwd_halo_kernel<T, NWG, TN, NBUF, FR, FS, PL><<<H.grid, NWG * 128, H.smem_bytes, st>>>(P, H);
    return cudaGetLastError();
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
