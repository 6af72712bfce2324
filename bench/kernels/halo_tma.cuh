/* Lab variant of the halo forward kernel (src/cuda/conv_fwd_halo.cuh; three warpgroups, 128-pixel
 * tiles, two windows each) whose windows arrive by TMA instead of per-thread cp.async copies: a
 * 4-D tensor map over x (NHWC, innermost first: C, W, H, N) with a {64, pitch, bp + (R-1)*dh, 1}
 * box lands a tile's window exactly in the kernel's layout (row j = window pixel (j / pitch,
 * j % pitch), 128-byte swizzle on the absolute shared address), and the box's out-of-bounds fill
 * gives the padding zeros. One thread per warpgroup arms a per-buffer mbarrier and issues the
 * copy; the warpgroup waits on the mbarrier's phase. Window rows past the box (at most the last
 * few of a window) keep stale data: they feed only virtual columns qq >= bq, which are dropped.
 * Why: Nsight Compute put about 1870 instructions per warp and tile in the cp.async kernel, 36 of
 * them wgmmas, with the window-copy loop a large share. 16-bit types only (one 64-channel plane
 * per box).
 * Status: written and compiled (sm_90a, 168 registers, no spills) in the twenty-fourth session,
 * when no more device time was left: it has not run yet. igemm_lab takes it only with LAB_TMA=1
 * (e.g. `LAB_TMA=1 igemm_lab --quick`, then `LAB_TMA=1 igemm_lab --only 1 18` against `--only 1 13`). */
#ifndef FDNN_LAB_HALO_TMA_CUH
#define FDNN_LAB_HALO_TMA_CUH
#include <cuda.h>
#include <cudaTypedefs.h>
#include "../../src/cuda/conv_fwd_halo.cuh"

namespace halo_tma {
using fdnn_mma::MmaConvParams;
using fdnn_halo::HaloPlan;
using fdnn_halo::wg_bar;
using fdnn_halo::STAGE_ROW;
using fdnn_ptx::cp_async16;
using fdnn_ptx::cp_async_commit;
using fdnn_ptx::cp_async_wait;

__device__ __forceinline__ void mbar_init(uint32_t a, int n) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(a), "r"(n) : "memory"); }
__device__ __forceinline__ void mbar_expect(uint32_t a, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(a), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t a, uint32_t parity)
{
    asm volatile("{\n.reg .pred p;\nLAB_WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra LAB_WAIT;\n}\n" ::"r"(a), "r"(parity)
                 : "memory");
}
__device__ __forceinline__ void tma_load4(uint32_t dst, const CUtensorMap *map, uint32_t mbar, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
                 "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(mbar)
                 : "memory");
}

template <typename T, int FR, int FS, int PL>
__global__ void __launch_bounds__(384, 1) halo_tma_kernel(const MmaConvParams P, const HaloPlan H, const __grid_constant__ CUtensorMap xmap)
{
    constexpr int NWG = 3, TN = 128, NBUF = 2;
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
    /* tile tl's window into buffer b of this warpgroup: one thread arms the buffer's mbarrier with
     * the byte count and issues one TMA box per 128-byte channel plane; the tensor map's bounds
     * supply the zero padding, its 128-byte swizzle is the window's */
    const uint32_t mbar = smem + H.filt_bytes + NWG * NBUF * H.stage_bytes + wg * 16;
    const int rows_box = H.bp + (P.r - 1) * P.dh;
    const uint32_t win_bytes = (uint32_t)(H.planes * rows_box * H.pitch * 128);
    auto load_window = [&](int tl, int b) {
        if (t != 0) return;
        int n, p0, q0;
        tile_origin(tl, n, p0, q0);
        fdnn_wg::fence_proxy_async(); /* the generic-proxy staging in this buffer is done (barrier before) */
        mbar_expect(mbar + 8 * b, win_bytes);
        for (int pl = 0; pl < H.planes; pl++)
            tma_load4(ring + b * H.stage_bytes + pl * plane_bytes, &xmap, mbar + 8 * b, pl * 64, q0 - P.pw, p0 - P.ph, n);
    };
    if (t == 0) {
        mbar_init(mbar, 1);
        mbar_init(mbar + 8, 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    int tile = blockIdx.x + gridDim.x * wg;
    if (tile < H.tiles) load_window(tile, 0);
    cp_async_commit();
    cp_async_wait<0>(); /* the filter (everyone's part) */
    fdnn_wg::fence_proxy_async();
    __syncthreads();
    int phases = 0; /* bit b: the parity of buffer b's next fill */

    float *const stage_f = (float *)(smem_raw + (ring - raw)); /* generic address of stage 0 */
    /* the first pixel this thread writes in the float epilogue, (row, column) of the tile */
    const int fp0 = (t >> 2) / H.pitch, fq0 = (t >> 2) - fp0 * H.pitch;
    const float alpha = P.alpha, beta = P.beta;
    int st = 0;
    for (bool first = true; tile < H.tiles; tile += workers, st = NBUF == 2 ? st ^ 1 : 0, first = false) {
        const uint32_t cur = ring + st * H.stage_bytes;
        (void)first;
        if (tile + workers < H.tiles) load_window(tile + workers, st ^ 1);
        mbar_wait(mbar + 8 * st, (phases >> st) & 1);
        phases ^= 1 << st;

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
            fdnn_wg::fence_proxy_async();
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
            fdnn_wg::fence_proxy_async();
            wg_bar(wg); /* the staging rows are read before they are rewritten (or refilled) */
        }
    }
#else
    (void)P;
    (void)H;
    (void)xmap;
    __trap(); /* not sm_90a code: the host never launches it here */
#endif
}


/* the tensor map of x for plan H (16-bit NHWC, C % 64 == 0); false where the driver lacks TMA */
static bool make_xmap(CUtensorMap *m, const MmaConvParams &P, const HaloPlan &H)
{
    static PFN_cuTensorMapEncodeTiled_v12000 enc = nullptr;
    if (!enc) {
        void *f = nullptr;
        cudaDriverEntryPointQueryResult q;
#if CUDART_VERSION >= 12050
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess) return false;
#else
        if (cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &f, cudaEnableDefault, &q) != cudaSuccess) return false;
#endif
        enc = (PFN_cuTensorMapEncodeTiled_v12000)f;
        if (!enc) return false;
    }
    const cuuint64_t dims[4] = {(cuuint64_t)P.c, (cuuint64_t)P.w_, (cuuint64_t)P.h, (cuuint64_t)P.n};
    const cuuint64_t strides[3] = {(cuuint64_t)P.c * 2, (cuuint64_t)P.w_ * P.c * 2, (cuuint64_t)P.h * P.w_ * P.c * 2};
    const cuuint32_t box[4] = {64, (cuuint32_t)H.pitch, (cuuint32_t)(H.bp + (P.r - 1) * P.dh), 1};
    const cuuint32_t es[4] = {1, 1, 1, 1};
    if (box[1] > 256 || box[2] > 256) return false;
    return enc(m, CU_TENSOR_MAP_DATA_TYPE_UINT16, 4, (void *)P.x, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* H: halo_plan's three-warpgroup plan */
template <typename T>
static cudaError_t tma_launch(const MmaConvParams &P, const HaloPlan &H, cudaStream_t st)
{
    if constexpr (sizeof(T) != 2) {
        return cudaErrorNotSupported;
    } else {
        if (H.nwg != 3 || H.tn != 128 || H.nbuf != 2) return cudaErrorInvalidValue;
        CUtensorMap m;
        if (!make_xmap(&m, P, H)) return cudaErrorNotSupported;
        const int smem = H.smem_bytes + 64;
        auto go = [&](auto kern, unsigned long long *o) {
            cudaError_t e = fdnn_ptx::opt_in_smem(kern, fdnn_halo::SMEM_LIMIT, o);
            if (e != cudaSuccess) return e;
            kern<<<H.grid, 384, smem, st>>>(P, H, m);
            return cudaGetLastError();
        };
        static unsigned long long o1 = 0, o2 = 0;
        if (P.r == 3 && P.s == 3 && H.planes == 1) return go(halo_tma_kernel<T, 3, 3, 1>, &o1);
        return go(halo_tma_kernel<T, 0, 0, 0>, &o2);
    }
}

} /* namespace halo_tma */
#endif
