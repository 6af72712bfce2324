/* Hopper (sm_90a) tensor-core implicit-GEMM forward convolution for HALF / BFLOAT16 with
 * C % 64 == 0 and FLOAT as TF32 with C % 32 == 0: the same problem, GEMM view, split-K plan and
 * epilogue as conv_fwd_mma.cuh (MmaConvParams), with the products issued as warpgroup MMAs
 * (wgmma.mma_async m64nNk16, or m64nNk8 for tf32, f32 accumulators) that read both operands
 * straight from shared memory, in place of mma.sync on ldmatrix fragments. Every byte offset is
 * the same for both element sizes: a slice is one 128-byte row (64 16-bit or 32 float elements)
 * and a k step 32 bytes. TF32 operands are the floats as stored (the tensor cores use their top
 * 19 bits, i.e. truncate), where the mma.sync kernel rounds them to nearest with cvt.rna first.
 *
 * Tiling: 256 threads = two warpgroups; a block computes a BM x BN tile of y, each warpgroup BM/2
 * rows (BM/128 wgmma row blocks of 64) by all BN columns (one m64nBNk16 instruction per row block
 * and k step). The reduction goes in slices of BK = 64 (32) channels of one filter tap (C % BK == 0,
 * so the tap and channel offset of a slice are the same for the whole block and step without
 * divisions). Thread t copies 16-byte chunk t % 8 of rows t/8 + 32 i of A and B (eight
 * neighbouring threads copy one whole 128-byte row) with cp.async into a STAGES-deep ring; A rows
 * outside the image or past M are zero-filled, B rows past K copy real filters (K-row % K), whose
 * columns are never stored. A row's bounds test and address take a few integer instructions per
 * slice, which matters: the same warps issue the copies and the MMAs, and a copy path three times
 * longer (per-chunk tap decoding, per-row predicates) held the kernel to half its speed.
 *
 * Shared layout: the canonical K-major layout with the 128-byte swizzle that wgmma's descriptors
 * describe: row r of a tile at r*128 bytes, its 16-byte chunk c at chunk c ^ (r % 8), tiles 1024-byte
 * aligned; a descriptor holds the start address, the 1024-byte stride between groups of 8 rows
 * and the swizzle mode, and the k16 step j of a slice starts 32*j bytes further.
 *
 * Pipeline, slice kt: wait for this thread's copies of kt, fence them to the async proxy, block
 * barrier (everyone's copies of kt have landed, and every warpgroup has retired the wgmma of
 * kt-2); issue the wgmmas of kt and commit them; issue the copies of slice kt+STAGES-2 into the
 * stage kt-2 used; wait until at most one wgmma group (kt's) is in flight. So one slice of MMAs
 * always overlaps the copies and the barrier of the next. Deterministic: fixed reduction order.
 * Compiled for sm_90a only (the body is a trap elsewhere); the host launches it only when
 * FDNN_HAVE_SM90A says the library carries sm_90a code and the device is compute capability 9.0. */
#ifndef FDNN_CUDA_CONV_FWD_WGMMA_CUH
#define FDNN_CUDA_CONV_FWD_WGMMA_CUH
#include "conv_fwd_mma.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FDNN_WGMMA_DEVICE 1
#else
#define FDNN_WGMMA_DEVICE 0
#endif

namespace fdnn_wg {

using fdnn_mma::MmaConvParams;
using fdnn_ptx::cp_async16;
using fdnn_ptx::cp_async_commit;
using fdnn_ptx::cp_async_wait;

constexpr int THREADS = 256;  /* two warpgroups */
/* a reduction slice is one 128-byte swizzled row: 64 half / bfloat16 or 32 float elements, taken
 * as 4 wgmma k steps of 32 bytes */
template <typename T> __host__ __device__ constexpr int slice_elems() { return 128 / (int)sizeof(T); }

/* One wgmma.mma_async D += A * B, m64nNk16 for 16-bit types, m64nNk8 for tf32 (KS: "k16" or
 * "k8"), A and B from shared memory through descriptors; TR is the transpose arguments
 * (", 0, 0": both K-major; ", 1, 1": both MN-major, 16-bit types only; empty for tf32, which
 * takes none and is K-major only). An m64nN instruction has N/2 accumulator registers per thread,
 * operands %0 .. %(N/2-1), then the two descriptors and the scale-d predicate. Inline asm needs
 * the operand list spelled out, so it is built from 16-register pieces: FDNN_WGR<c> names
 * operands 16c .. 16c+15, FDNN_WGC16(d, i) binds d[i .. i+15] to them. */
#define FDNN_WGR0 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define FDNN_WGR1 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define FDNN_WGR2 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
#define FDNN_WGR3 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define FDNN_WGR4 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79"
#define FDNN_WGR5 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define FDNN_WGR6 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111"
#define FDNN_WGR7 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define FDNN_WGC16(d, i) \
    "+f"(d[i + 0]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7]), "+f"(d[i + 8]), "+f"(d[i + 9]), "+f"(d[i + 10]), "+f"(d[i + 11]), "+f"(d[i + 12]), "+f"(d[i + 13]), "+f"(d[i + 14]), "+f"(d[i + 15])
/* SHAPE "m64nN", REGS its accumulator operand list, DESC / PRED the operand numbers after it */
#define FDNN_WGMMA_ASM(SHAPE, REGS, DESC, PRED, KS, TY, TR, da, db, ...) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " PRED ", 0;\n" \
                 "wgmma.mma_async.sync.aligned." SHAPE KS ".f32." TY "." TY " {" REGS "}, " DESC ", p, 1, 1" TR ";\n}\n" \
                 : __VA_ARGS__ : "l"(da), "l"(db), "n"(1))
/* the instruction for N = 64, 96, 128, 192 or 256 (a compile-time N) */
#define FDNN_WGMMA(N, KS, TY, TR, d, da, db) \
    do { \
        if constexpr (N == 64) \
            FDNN_WGMMA_ASM("m64n64", FDNN_WGR0 ", " FDNN_WGR1, "%32, %33", "%34", KS, TY, TR, da, db, FDNN_WGC16(d, 0), FDNN_WGC16(d, 16)); \
        else if constexpr (N == 96) \
            FDNN_WGMMA_ASM("m64n96", FDNN_WGR0 ", " FDNN_WGR1 ", " FDNN_WGR2, "%48, %49", "%50", KS, TY, TR, da, db, FDNN_WGC16(d, 0), \
                           FDNN_WGC16(d, 16), FDNN_WGC16(d, 32)); \
        else if constexpr (N == 128) \
            FDNN_WGMMA_ASM("m64n128", FDNN_WGR0 ", " FDNN_WGR1 ", " FDNN_WGR2 ", " FDNN_WGR3, "%64, %65", "%66", KS, TY, TR, da, db, \
                           FDNN_WGC16(d, 0), FDNN_WGC16(d, 16), FDNN_WGC16(d, 32), FDNN_WGC16(d, 48)); \
        else if constexpr (N == 192) \
            FDNN_WGMMA_ASM("m64n192", FDNN_WGR0 ", " FDNN_WGR1 ", " FDNN_WGR2 ", " FDNN_WGR3 ", " FDNN_WGR4 ", " FDNN_WGR5, "%96, %97", "%98", KS, \
                           TY, TR, da, db, FDNN_WGC16(d, 0), FDNN_WGC16(d, 16), FDNN_WGC16(d, 32), FDNN_WGC16(d, 48), FDNN_WGC16(d, 64), \
                           FDNN_WGC16(d, 80)); \
        else { \
            static_assert(N == 256, "wgmma N: 64, 96, 128, 192 or 256"); \
            FDNN_WGMMA_ASM("m64n256", \
                           FDNN_WGR0 ", " FDNN_WGR1 ", " FDNN_WGR2 ", " FDNN_WGR3 ", " FDNN_WGR4 ", " FDNN_WGR5 ", " FDNN_WGR6 ", " FDNN_WGR7, \
                           "%128, %129", "%130", KS, TY, TR, da, db, FDNN_WGC16(d, 0), FDNN_WGC16(d, 16), FDNN_WGC16(d, 32), \
                           FDNN_WGC16(d, 48), FDNN_WGC16(d, 64), FDNN_WGC16(d, 80), FDNN_WGC16(d, 96), FDNN_WGC16(d, 112)); \
        } \
    } while (0)

template <typename T> struct WgOps;
template <> struct WgOps<__half> {
    template <int N, bool MN = false> static __device__ __forceinline__ void mma(float *d, uint64_t da, uint64_t db)
    {
        if constexpr (MN) FDNN_WGMMA(N, "k16", "f16", ", 1, 1", d, da, db);
        else FDNN_WGMMA(N, "k16", "f16", ", 0, 0", d, da, db);
    }
};
template <> struct WgOps<__nv_bfloat16> {
    template <int N, bool MN = false> static __device__ __forceinline__ void mma(float *d, uint64_t da, uint64_t db)
    {
        if constexpr (MN) FDNN_WGMMA(N, "k16", "bf16", ", 1, 1", d, da, db);
        else FDNN_WGMMA(N, "k16", "bf16", ", 0, 0", d, da, db);
    }
};

/* FLOAT as TF32 (m64nNk8: the 32 bytes of a k step are 8 floats; the tensor cores read the top 19
 * bits of each float in shared memory); tf32 operands take no transpose arguments */
template <> struct WgOps<float> {
    template <int N> static __device__ __forceinline__ void mma(float *d, uint64_t da, uint64_t db) { FDNN_WGMMA(N, "k8", "tf32", "", d, da, db); }
};

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
/* generic-proxy writes (cp.async) made visible to the async proxy (wgmma operand reads) */
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
/* keeps the compiler from moving accumulator accesses across wgmma issue / wait points */
template <int N> __device__ __forceinline__ void fence_regs(float *d)
{
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+f"(d[i])::"memory");
}

/* two floats rounded to a packed pair of 16-bit T (the low half first) */
template <typename T> __device__ __forceinline__ uint32_t pack2(float a, float b);
template <> __device__ __forceinline__ uint32_t pack2<__half>(float a, float b)
{
    __half2 h = __floats2half2_rn(a, b);
    return *(uint32_t *)&h;
}
template <> __device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float a, float b)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *(uint32_t *)&h;
}
template <> __device__ __forceinline__ uint32_t pack2<float>(float, float) { return 0; } /* never called: 16-bit types only */

/* shared-memory matrix descriptor: K-major, 128-byte swizzle, 8-row groups 1024 bytes apart */
__device__ __forceinline__ uint64_t desc128(uint32_t saddr)
{
    return (uint64_t)((saddr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)1 << 62);
}
/* byte offset of 16-byte chunk c of row r in a 128-byte-swizzled tile */
__device__ __forceinline__ uint32_t swz128(int r, int c) { return (uint32_t)(r * 128 + ((c ^ (r & 7)) << 4)); }

/* one 8-channel vector of y: 8 floats staged in shared memory (alpha applied), plus beta * dst in
 * float when beta != 0 (beta == 0 never reads y), rounded once to T and written whole (16 bytes, or
 * 32 for float) */
template <typename T> __device__ __forceinline__ void store8(const float *src, T *dst, float beta)
{
    float f[8];
    *(float4 *)f = *(const float4 *)src;
    *(float4 *)(f + 4) = *(const float4 *)(src + 4);
    if (beta != 0.f) {
#pragma unroll
        for (int e = 0; e < 8; e += 2) {
            const float2 old = fdnn_ptx::MmaOps<T>::load2(dst + e);
            f[e] += beta * old.x;
            f[e + 1] += beta * old.y;
        }
    }
    uint4 out[sizeof(T) / 2];
    T *o = (T *)out;
#pragma unroll
    for (int e = 0; e < 8; e += 2) fdnn_ptx::MmaOps<T>::store2(o + e, f[e], f[e + 1]);
#pragma unroll
    for (int q = 0; q < (int)(sizeof(T) / 2); q++) ((uint4 *)dst)[q] = out[q];
}

template <int BM, int BN, int STAGES>
struct WgTile {
    static constexpr int A_BYTES = BM * 128, B_BYTES = BN * 128;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024; /* + room to align the ring to 1024 */
};

template <typename T, int BM, int BN, int STAGES, int MINB>
__global__ void __launch_bounds__(THREADS, MINB) conv_fwd_wgmma_kernel(const MmaConvParams P)
{
#if FDNN_WGMMA_DEVICE
    static_assert(BM % 128 == 0 && (BN == 64 || BN == 128 || BN == 256) && STAGES >= 3, "tile");
    constexpr int MT = BM / 128;       /* 64-row wgmma blocks per warpgroup */
    constexpr int A_ROWS = BM / 32, B_ROWS = BN / 32;
    constexpr int NACC = BN / 2;       /* accumulator floats per thread per 64-row block */
    constexpr int BK = slice_elems<T>(), EPC = 16 / (int)sizeof(T); /* elements per slice, per 16-byte chunk */
    typedef WgTile<BM, BN, STAGES> Tile;

    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const uint32_t smem = ((uint32_t)__cvta_generic_to_shared(smem_raw) + 1023u) & ~1023u;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wg = warp >> 2, wl = warp & 3;
    const int m0 = P.m_lo + blockIdx.x * BM, n0 = blockIdx.y * BN;
    /* copy assignment: 16-byte chunk lc (EPC channels) of rows lr + 32 i, so that 8 neighbouring
     * threads copy one whole 128-byte row (one request per 32-byte sector) */
    const int lc = tid & 7, lr = tid >> 3;
    const uint32_t dst0 = swz128(lr, lc); /* row lr + 32 i: 4096 i bytes further */

    /* A row i (output pixel m0 + lr + 32 i): byte offset of its window corner (n, h0, w0) plus this
     * thread's chunk; h0 = -2^30 past M (never in bounds) */
    long long a_off[A_ROWS];
    int a_h0[A_ROWS], a_w0[A_ROWS];
#pragma unroll
    for (int i = 0; i < A_ROWS; i++) {
        const int m = m0 + lr + i * 32;
        if (m < P.m) {
            int nn;
            fdnn_mma::out_origin(P, m, nn, a_h0[i], a_w0[i]);
            a_off[i] = (((((long long)nn * P.h + a_h0[i]) * P.w_) + a_w0[i]) * P.c + lc * EPC) * (long long)sizeof(T);
        } else {
            a_h0[i] = -(1 << 30);
            a_w0[i] = 0;
            a_off[i] = 0;
        }
    }
    /* B row i (output channel n0 + lr + 32 i; past K, channel (that) % K: the columns past K are
     * computed from copies of real filters and never stored): its filter plus this thread's chunk */
    const char *b_ptr[B_ROWS];
#pragma unroll
    for (int i = 0; i < B_ROWS; i++) {
        int kk = n0 + lr + i * 32;
        if (kk >= P.k) kk %= P.k;
        b_ptr[i] = (const char *)P.w + ((long long)kk * P.kg + lc * EPC) * (long long)sizeof(T);
    }

    const int kt_all = P.kg / BK; /* C % BK == 0: whole slices */
    const int kt0 = P.splits > 1 ? blockIdx.z * P.kt_per : 0;
    const int ktiles = P.splits > 1 ? max(0, min(kt_all - kt0, P.kt_per)) : kt_all;

    /* the next slice to load: one filter tap (r, s) and channels cb .. cb+BK-1, the same for the
     * whole block */
    int kg = kt0 * BK, r, s, cb;
    {
        const int tap = kg / P.c;
        cb = kg - tap * P.c;
        r = tap / P.s;
        s = tap - r * P.s;
    }
    const long long row_bytes = (long long)P.w_ * P.c * (long long)sizeof(T);
    const unsigned H = (unsigned)P.h, W = (unsigned)P.w_;
    const char *const xb0 = (const char *)P.x;
    int ld_stage = 0;
    /* copy the next slice into stage ld_stage, then step the slice and the stage on */
    auto load_stage = [&]() {
        const uint32_t sa = smem + ld_stage * Tile::STAGE_BYTES + dst0, sb = sa + Tile::A_BYTES;
        const int dy = r * P.dh, dx = s * P.dw;
        const char *xb = xb0 + (dy * row_bytes + ((long long)dx * P.c + cb) * (long long)sizeof(T));
#pragma unroll
        for (int i = 0; i < A_ROWS; i++) {
            const bool ok = ((unsigned)(a_h0[i] + dy) < H) & ((unsigned)(a_w0[i] + dx) < W);
            cp_async16(sa + i * 4096, ok ? xb + a_off[i] : xb0, ok ? 16 : 0);
        }
        const int woff = (P.flip ? ((P.r - 1 - r) * P.s + (P.s - 1 - s)) * P.c + cb : kg) * (int)sizeof(T);
#pragma unroll
        for (int i = 0; i < B_ROWS; i++) cp_async16(sb + i * 4096, b_ptr[i] + woff, 16);
        kg += BK;
        cb += BK;
        if (cb == P.c) {
            cb = 0;
            if (++s == P.s) {
                s = 0;
                ++r;
            }
        }
        ld_stage = ld_stage + 1 == STAGES ? 0 : ld_stage + 1;
    };

    float acc[MT][NACC];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NACC; j++) acc[i][j] = 0.f;

#pragma unroll
    for (int st = 0; st < STAGES - 2; st++) {
        if (st < ktiles) load_stage();
        cp_async_commit();
    }

    /* descriptors of the ring start; a byte offset off within the ring adds off / 16 (shared
     * addresses stay below 2^18, so the 14-bit address field never carries) */
    const uint64_t d_ring = desc128(smem);
    int rd_stage = 0;
    for (int kt = 0; kt < ktiles; kt++) {
        cp_async_wait<STAGES - 3>(); /* this thread's copies of slice kt have landed */
        fence_proxy_async();
        __syncthreads();             /* everyone's have; every warpgroup has retired slice kt-2 */
        const uint64_t da = d_ring + (uint64_t)((rd_stage * Tile::STAGE_BYTES + wg * MT * 8192) >> 4);
        const uint64_t db = d_ring + (uint64_t)((rd_stage * Tile::STAGE_BYTES + Tile::A_BYTES) >> 4);
        rd_stage = rd_stage + 1 == STAGES ? 0 : rd_stage + 1;
#pragma unroll
        for (int i = 0; i < MT; i++) fence_regs<NACC>(acc[i]);
        wg_fence();
#pragma unroll
        for (int j = 0; j < 4; j++) /* k step j: 32 bytes further along the rows */
#pragma unroll
            for (int i = 0; i < MT; i++) WgOps<T>::template mma<BN>(acc[i], da + i * (8192 >> 4) + j * 2, db + j * 2);
        wg_commit();
        {
            /* slice kt+STAGES-2, into the stage slice kt-2 used (the prologue left ld_stage there) */
            if (kt + STAGES - 2 < ktiles) load_stage();
            cp_async_commit();
        }
        wg_wait<1>();
#pragma unroll
        for (int i = 0; i < MT; i++) fence_regs<NACC>(acc[i]);
    }
    wg_wait<0>();
#pragma unroll
    for (int i = 0; i < MT; i++) fence_regs<NACC>(acc[i]);
    cp_async_wait<0>();

    /* epilogue: acc[i][4j + 2h + e] is row 16*wl + lane/4 + 8h of 64-row block (wg*MT + i), column
     * 8j + 2*(lane%4) + e. With split-K the float partials go straight to the workspace (the
     * reduction kernel applies alpha/beta). Otherwise alpha * acc is staged as floats in the
     * (drained) ring, rows padded by 16 bytes against bank conflicts, and written out as whole
     * 8-channel vectors, 16 bytes per thread along y's rows, blended with beta * y in float
     * (beta == 0 never reads y): one rounding to T, as conv_fwd_mma_kernel. */
    if (P.splits > 1) {
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int m = m0 + (wg * MT + i) * 64 + wl * 16 + (lane >> 2) + h * 8;
                if (m >= P.m) continue;
                float *part = P.ws + (long long)blockIdx.z * P.m * P.k + (long long)m * P.k;
#pragma unroll
                for (int j = 0; j < BN / 8; j++) {
                    const int kk = n0 + j * 8 + (lane & 3) * 2;
                    if (kk < P.k) *(float2 *)(part + kk) = make_float2(acc[i][4 * j + 2 * h], acc[i][4 * j + 2 * h + 1]);
                }
            }
        return;
    }
    constexpr int SROW = BN * 4 + 16; /* bytes per staged row */
    static_assert(BM * SROW <= STAGES * Tile::STAGE_BYTES, "the staged tile must fit in the ring");
    float *stile = (float *)(smem_raw + (smem - (uint32_t)__cvta_generic_to_shared(smem_raw)));
    const float alpha = P.alpha, beta = P.beta;
    __syncthreads(); /* both warpgroups are done with the ring */
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = (wg * MT + i) * 64 + wl * 16 + (lane >> 2) + h * 8;
            float *srow = stile + row * (SROW / 4);
#pragma unroll
            for (int j = 0; j < BN / 8; j++)
                *(float2 *)(srow + j * 8 + (lane & 3) * 2) = make_float2(alpha * acc[i][4 * j + 2 * h], alpha * acc[i][4 * j + 2 * h + 1]);
        }
    __syncthreads();
    constexpr int VPR = BN / 8; /* 8-channel vectors per row */
    for (int v = tid; v < BM * VPR; v += THREADS) {
        const int row = v / VPR, cv = v - row * VPR;
        const int m = m0 + row, kk = n0 + cv * 8;
        if (m >= P.m || kk >= P.k) continue; /* K % 8 == 0: the vector is all in or all out */
        store8<T>(stile + row * (SROW / 4) + cv * 8, (T *)P.y + (long long)m * P.k + kk, beta);
    }
#else
    (void)P;
    __trap(); /* not sm_90a code: the host never launches it here */
#endif
}

/* tile configurations */
enum WgConfig { WG_128x256 = 0, WG_256x128 = 1, WG_128x128 = 2, WG_256x64 = 3, WG_128x64 = 4, WG_128x128_2 = 5, WG_128x64_2 = 6,
                WG_128x64_3 = 7 };
constexpr int WG_NCONFIGS = 8;

template <typename T, int BM, int BN, int STAGES, int MINB = 1>
static cudaError_t wg_launch_cfg(const MmaConvParams &P, cudaStream_t st)
{
    static unsigned long long opted = 0;
    return fdnn_mma::tile_launch<T, BM, BN>(conv_fwd_wgmma_kernel<T, BM, BN, STAGES, MINB>, THREADS,
                                            WgTile<BM, BN, STAGES>::SMEM_BYTES, &opted, P, st);
}

/* Heuristic (igemm_lab on the H200, fp16 NHWC ResNet-50 layers, TFLOP/s): 128x64 tiles, three
 * blocks per SM, when K <= 64 (3x3 64->64: 224x224 at batch 32 294, 56x56 at batch 128 277,
 * against 277/268 with two blocks per SM and at most 259/246 for the other tiles); 256x128 when
 * K <= 128 and that grid covers the SMs (3x3 128->128, 28x28, batch 128: 431, 418 for 128x128
 * with two blocks per SM), else 128x128 with two blocks per SM; 128x256 when K is a multiple of
 * 256 (3x3 256->256, 14x14, batch 128: 518 against 479 for 128x128; the split-K 7x7 and 14x14
 * layers at batch 32: 265 against 207-243; wg_launch_auto then moves a thin last round to 128x128
 * tiles: 567), else 128x128 with two blocks per SM. */
static inline WgConfig wg_pick(const MmaConvParams &P, int num_sms)
{
    if (P.k <= 64) return WG_128x64_3;
    if (P.k <= 128) return ((long long)P.m + 255) / 256 >= num_sms ? WG_256x128 : WG_128x128_2;
    return P.k % 256 == 0 ? WG_128x256 : WG_128x128_2;
}

/* T = __half or __nv_bfloat16 (C % 64 == 0) or float as TF32 (C % 32 == 0); the same requirements and split-K plan as fdnn_mma::mma_launch,
 * and an sm_90a build on a compute capability 9.0 device (the caller checks) */
template <typename T>
static cudaError_t wg_launch(const MmaConvParams &P, WgConfig cfg, cudaStream_t st)
{
    if (P.m == 0 || P.k == 0) return cudaSuccess;
    switch (cfg) {
    case WG_128x256: return wg_launch_cfg<T, 128, 256, 4>(P, st);
    case WG_256x128: return wg_launch_cfg<T, 256, 128, 4>(P, st);
    case WG_128x128: return wg_launch_cfg<T, 128, 128, 6>(P, st);
    case WG_256x64: return wg_launch_cfg<T, 256, 64, 5>(P, st);
    case WG_128x64: return wg_launch_cfg<T, 128, 64, 8>(P, st);
    case WG_128x128_2: return wg_launch_cfg<T, 128, 128, 3, 2>(P, st); /* two blocks per SM */
    case WG_128x64_2: return wg_launch_cfg<T, 128, 64, 4, 2>(P, st);
    case WG_128x64_3: return wg_launch_cfg<T, 128, 64, 3, 3>(P, st); /* three blocks per SM */
    }
    return cudaErrorInvalidValue;
}

/* Wave tail of the 128x256 tiles: one block per SM, so T tiles take ceil(T / SMs) rounds, and a
 * last round less than half full leaves most SMs idle for a whole tile's time (3x3 256->256 at
 * 14x14, batch 128: 196 tiles on 132 SMs, the second round 64 tiles). Then the whole rounds stay
 * 128x256 tiles over rows [0, m_split) and the rows past m_split go to a second launch of 128x128
 * tiles (twice as many blocks, half the work each, so they fill about one round). Returns m_split,
 * or 0 where the plain grid is as good (at most one round, a last round at least half full, or
 * split-K). */
static inline int wg_tail_split(const MmaConvParams &P, int num_sms)
{
    if (P.splits > 1 || num_sms <= 0) return 0;
    const long long nn = (P.k + 255) / 256, mt = ((long long)P.m + 127) / 128, tiles = mt * nn;
    const long long full = tiles / num_sms, rem = tiles - full * num_sms;
    if (full < 1 || rem == 0 || 2 * rem > num_sms) return 0;
    const long long head = full * num_sms / nn * 128; /* whole 128-row tiles of every column block */
    return head > 0 && head < P.m ? (int)head : 0;
}

/* rows [0, m_split) on head tiles and [m_split, M) on tail tiles (unsplit problems) */
template <typename T>
static cudaError_t wg_launch_split(const MmaConvParams &P, int m_split, WgConfig head, WgConfig tail, cudaStream_t st)
{
    MmaConvParams H = P, L = P;
    H.m = m_split;
    L.m_lo = m_split;
    const cudaError_t e = wg_launch<T>(H, head, st);
    return e != cudaSuccess ? e : wg_launch<T>(L, tail, st);
}

/* the library's launch: wg_pick's tiles, with the wave tail of 128x256 grids on 128x128 tiles */
template <typename T>
static cudaError_t wg_launch_auto(const MmaConvParams &P, int num_sms, cudaStream_t st)
{
    const WgConfig wc = wg_pick(P, num_sms);
    const int m_split = wc == WG_128x256 ? wg_tail_split(P, num_sms) : 0;
    if (m_split > 0) return wg_launch_split<T>(P, m_split, WG_128x256, WG_128x128, st);
    return wg_launch<T>(P, wc, st);
}

} /* namespace fdnn_wg */
#endif
