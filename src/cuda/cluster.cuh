/* What the thread-block-cluster kernels share (batch-norm bn_cluster_kernel in norm_engine.cu,
 * softmax sm_inst_cluster in ops_softmax.cu; sm_90): the unit a thread moves (a 16-byte vector
 * or one element), a deterministic reduction of a few values over the block and then over the
 * cluster's blocks in rank order, and on the host the once-per-kernel opt-in, the launch
 * configuration and the test for a launch the driver refused (the caller then takes its older
 * path). */
#ifndef FDNN_CUDA_CLUSTER_CUH
#define FDNN_CUDA_CLUSTER_CUH
#include <math.h>
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include "ew_dense.cuh"

namespace fdnn_cl {

/* A thread's unit of a row or channel: 16 bytes of T when VEC, else one element. */
template <typename T, bool VEC> struct Unit { typedef fdnn_ewd::V16<T> type; };
template <typename T> struct Unit<T, false> {
    struct type {
        T e[1];
    };
};

/* The reduction operators: sum, and the max that keeps a NaN. */
struct Sum {
    template <typename F> static __device__ __forceinline__ F id() { return F(0); }
    template <typename F> static __device__ __forceinline__ F op(F a, F b) { return a + b; }
};
struct MaxNaN {
    template <typename F> static __device__ __forceinline__ F id() { return F(-INFINITY); }
    template <typename F> static __device__ __forceinline__ F op(F a, F b) { return (a != a || b != b) ? (a != a ? a : b) : (a > b ? a : b); }
};

/* v[0..NV) reduced over the 1-D block in a fixed order (a shuffle tree per warp, then warp 0
 * over the warps); the results are valid in thread 0. sh: 32 * NV values. */
template <class OP, int NV, typename F> __device__ __forceinline__ void block_reduce(F (&v)[NV], F *sh)
{
    const unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
#pragma unroll
    for (int k = 16; k > 0; k >>= 1)
#pragma unroll
        for (int i = 0; i < NV; i++) v[i] = OP::op(v[i], __shfl_down_sync(0xffffffffu, v[i], k));
    if (lane == 0)
#pragma unroll
        for (int i = 0; i < NV; i++) sh[32 * i + w] = v[i];
    __syncthreads();
    if (w == 0) {
#pragma unroll
        for (int i = 0; i < NV; i++) v[i] = lane < blockDim.x / 32 ? sh[32 * i + lane] : OP::template id<F>();
#pragma unroll
        for (int k = 16; k > 0; k >>= 1)
#pragma unroll
            for (int i = 0; i < NV; i++) v[i] = OP::op(v[i], __shfl_down_sync(0xffffffffu, v[i], k));
    }
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
/* v[0..NV) reduced over the whole cluster: block_reduce, the block's results to slot (NV values
 * of this round's own, not reused in the kernel), a cluster barrier (which also guarantees that
 * every block has started, so its shared memory exists), then thread 0 of every block combines
 * all ranks' slots in rank order: the same, deterministic result in every block. Valid in
 * thread 0; every thread of the cluster must call it. */
template <class OP, int NV, typename F> __device__ void cluster_reduce(F (&v)[NV], F *sh, F *slot)
{
    cooperative_groups::cluster_group cl = cooperative_groups::this_cluster();
    block_reduce<OP>(v, sh);
    if (threadIdx.x == 0)
#pragma unroll
        for (int i = 0; i < NV; i++) slot[i] = v[i];
    cl.sync();
    if (threadIdx.x == 0) {
#pragma unroll
        for (int i = 0; i < NV; i++) v[i] = OP::template id<F>();
        for (unsigned r = 0; r < cl.num_blocks(); r++) {
            const F *o = cl.map_shared_rank(slot, (int)r);
#pragma unroll
            for (int i = 0; i < NV; i++) v[i] = OP::op(v[i], o[i]);
        }
    }
}
#endif

/* Once per kernel and device: the kernel must hold sm_90 code (a PTX-only build for an older
 * architecture, JIT-compiled, would have an empty body: cudaErrorNotSupported), then its dynamic
 * shared memory limit is raised to smem_bytes and, with nonportable, clusters of more than 8
 * blocks are allowed. ready: the kernel's bit set of devices already done. */
template <typename Kern> static inline cudaError_t ready(Kern kern, int smem_bytes, bool nonportable, unsigned long long *done)
{
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return e;
    const unsigned long long bit = dev >= 0 && dev < 64 ? 1ULL << dev : 0;
    if (bit && (__atomic_load_n(done, __ATOMIC_ACQUIRE) & bit)) return cudaSuccess;
    cudaFuncAttributes fa;
    e = cudaFuncGetAttributes(&fa, kern);
    if (e == cudaSuccess && fa.ptxVersion < 90) e = cudaErrorNotSupported;
    if (e == cudaSuccess) e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
    if (e == cudaSuccess && nonportable) e = cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (e == cudaSuccess && bit) __atomic_fetch_or(done, bit, __ATOMIC_RELEASE);
    return e;
}

/* A launch of `clusters` clusters of k blocks of `threads` threads with smem bytes of dynamic
 * shared memory each on stream s; at must outlive the launch call. */
static inline cudaLaunchConfig_t config(cudaLaunchAttribute *at, unsigned k, unsigned clusters, unsigned threads, size_t smem, cudaStream_t s)
{
    *at = cudaLaunchAttribute{};
    at->id = cudaLaunchAttributeClusterDimension;
    at->val.clusterDim.x = k, at->val.clusterDim.y = 1, at->val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(clusters * k);
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    return cfg;
}

/* The launch errors that mean the cluster launch was refused here (no GPC with k free SMs, shares
 * too large, no cluster support) rather than failed: cleared, and the caller runs its older path. */
static inline bool refused(cudaError_t e)
{
    if (e != cudaErrorInvalidClusterSize && e != cudaErrorLaunchOutOfResources && e != cudaErrorInvalidConfiguration &&
        e != cudaErrorNotSupported)
        return false;
    (void)cudaGetLastError();
    return true;
}

} /* namespace fdnn_cl */
#endif
