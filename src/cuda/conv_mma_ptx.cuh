/* The PTX building blocks the tensor-core convolution kernels share (conv_fwd_mma.cuh,
 * conv_bwd_filter_mma.cuh), written once: the mma.sync wrappers and 2-element epilogue
 * loads/stores per element type (MmaOps<T>), cp.async with its commit / wait, ldmatrix (plain and
 * transposed), and on the host the 16-byte alignment test and the opt-in to more than 48 KiB of
 * dynamic shared memory. Self-contained (no FreeDNN headers) so that the bench labs
 * (bench/kernels/igemm_lab.cu, bwdf_lab.cu) can include the kernels outside the library. */
#ifndef FDNN_CUDA_CONV_MMA_PTX_CUH
#define FDNN_CUDA_CONV_MMA_PTX_CUH
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

namespace fdnn_ptx {

/* One mma.sync D += A * B with f32 accumulators: SHAPE ("m16n8k16", "m16n8k8") and the A/B type
 * ("f16", "bf16", "tf32") spliced into the instruction; d: 4 floats, a: 4 and b: 2 registers. */
#define FDNN_MMA_SYNC(SHAPE, TY, d, a, b)                                                                              \
    asm volatile("mma.sync.aligned." SHAPE ".row.col.f32." TY "." TY ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n" \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3])                                                \
                 : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "r"((b)[0]), "r"((b)[1]))

/* Per element type: prep() turns raw fragment registers into mma operands (a no-op for the
 * 16-bit types), mma() is one D += A * B of m16n8k16 (16-bit) or m16n8k8 (TF32), load2/store2
 * read/write two adjacent elements as floats (the epilogue's alpha/beta blend). */
template <typename T> struct MmaOps;
template <> struct MmaOps<__half> {
    static __device__ __forceinline__ void prep(uint32_t *, int) {}
    static __device__ __forceinline__ void mma(float *d, const uint32_t *a, const uint32_t *b)
    {
        FDNN_MMA_SYNC("m16n8k16", "f16", d, a, b);
    }
    static __device__ __forceinline__ float2 load2(const __half *p) { return __half22float2(*(const __half2 *)p); }
    static __device__ __forceinline__ void store2(__half *p, float a, float b) { *(__half2 *)p = __floats2half2_rn(a, b); }
};
template <> struct MmaOps<__nv_bfloat16> {
    static __device__ __forceinline__ void prep(uint32_t *, int) {}
    static __device__ __forceinline__ void mma(float *d, const uint32_t *a, const uint32_t *b)
    {
        FDNN_MMA_SYNC("m16n8k16", "bf16", d, a, b);
    }
    static __device__ __forceinline__ float2 load2(const __nv_bfloat16 *p)
    {
        return __bfloat1622float2(*(const __nv_bfloat162 *)p);
    }
    static __device__ __forceinline__ void store2(__nv_bfloat16 *p, float a, float b)
    {
        *(__nv_bfloat162 *)p = __floats2bfloat162_rn(a, b);
    }
};

/* a float rounded to TF32 (nearest, ties away, as cuBLAS does for its TF32 modes), as the 32-bit
 * register a tf32 MMA operand takes */
__device__ __forceinline__ uint32_t to_tf32(float f)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(f));
    return r;
}

/* FLOAT through TF32: fragments hold raw floats; prep() rounds them to TF32 before m16n8k8
 * consumes them. */
template <> struct MmaOps<float> {
    static __device__ __forceinline__ void prep(uint32_t *r, int n)
    {
        for (int i = 0; i < n; i++) r[i] = to_tf32(__uint_as_float(r[i]));
    }
    static __device__ __forceinline__ void mma(float *d, const uint32_t *a, const uint32_t *b)
    {
        FDNN_MMA_SYNC("m16n8k8", "tf32", d, a, b);
    }
    static __device__ __forceinline__ float2 load2(const float *p) { return *(const float2 *)p; }
    static __device__ __forceinline__ void store2(float *p, float a, float b) { *(float2 *)p = make_float2(a, b); }
};

/* N accumulator floats set to zero (an array of any shape, passed by its first element) */
template <int N>
__device__ __forceinline__ void zero_acc(float *a)
{
#pragma unroll
    for (int i = 0; i < N; i++) a[i] = 0.f;
}

/* 16-byte global -> shared copy; bytes = 0 writes 16 zero bytes and reads nothing. */
__device__ __forceinline__ void cp_async16(uint32_t smem, const void *gmem, int bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

/* the prologue of a cp.async ring: slices 0 .. S-1 issued (load(st) for st < ktiles), one commit
 * group each, empty past the end so that the group count a later wait counts on stays fixed */
template <int S, typename Load>
__device__ __forceinline__ void ring_prologue(int ktiles, Load load)
{
#pragma unroll
    for (int st = 0; st < S; st++) {
        if (st < ktiles) load(st);
        cp_async_commit();
    }
}

/* four 8x8 b16 matrices: lanes 8i..8i+7 give the 8 row addresses of matrix i; thread t receives,
 * of each matrix, the 32-bit word (row t/4, elements 2*(t%4), +1) */
__device__ __forceinline__ void ldmatrix_x4(uint32_t *r, uint32_t smem)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem));
}

/* four transposed 8x8 b16 matrices: lanes 8i..8i+7 give the 8 row addresses of matrix i; thread t
 * receives, of each matrix, the elements (row 2*(t%4), col t/4) and (row 2*(t%4)+1, col t/4) */
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t *r, uint32_t smem)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem));
}

/* the 16-byte copies and vector stores need 16-byte aligned tensors */
static inline bool aligned16(const void *v) { return ((uintptr_t)v & 15) == 0; }

/* Raises kern's dynamic shared memory limit to smem_bytes (needed above 48 KiB), once per kernel
 * and device: *opted is the caller's bit mask for this kernel (a function-local static of the
 * kernel's launch function), one bit per device 0..63, set atomically after a successful call;
 * devices 64 and up call cudaFuncSetAttribute every time (about a microsecond of host time).
 * Two threads may both make the (idempotent) call before the bit is set; that is harmless. */
template <typename Kern>
static inline cudaError_t opt_in_smem(Kern kern, int smem_bytes, unsigned long long *opted)
{
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return e;
    const bool tracked = dev >= 0 && dev < 64;
    const unsigned long long bit = tracked ? 1ULL << dev : 0;
    if (!tracked || !(__atomic_load_n(opted, __ATOMIC_ACQUIRE) & bit)) {
        e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
        if (e != cudaSuccess) return e;
        if (tracked) __atomic_fetch_or(opted, bit, __ATOMIC_RELEASE);
    }
    return cudaSuccess;
}

} /* namespace fdnn_ptx */
#endif
