/* Programmatic dependent launch (sm_90 and newer): a kernel launched with the stream
 * serialization attribute may start while the kernel before it on the stream is still running;
 * it must call fdnn_pdl_wait() before it reads anything that kernel writes (or writes anything
 * that kernel reads), and fdnn_pdl_wait returns only once that kernel has completed and its
 * memory is visible. fdnn_pdl_trigger() in the earlier kernel lets the later one be scheduled
 * before the earlier one's blocks exit (it says nothing about memory).
 *
 * Used between kernels of one call that run back to back (batch-norm statistics -> finalize ->
 * apply), so that a kernel's launch and its independent prologue overlap the previous kernel's
 * tail. Safe by construction only where every launched instance was compiled with the wait
 * instruction: fdnn_pdl_ok checks the kernel's binary (a kernel JIT-compiled from older PTX has
 * no wait, so the attribute would let it race) and the device, and FREEDNN_PDL=0 turns it off. */
#ifndef FDNN_CUDA_PDL_CUH
#define FDNN_CUDA_PDL_CUH
#include <cuda_runtime.h>
#include "../core/fdnn.h"

__device__ __forceinline__ void fdnn_pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void fdnn_pdl_trigger()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* true when kernel K may be launched with the attribute on device dev (the current device) of
 * compute capability cc (e.g. 90): FREEDNN_PDL is not 0, cc >= 90, and the binary of K that runs
 * on it was built for sm_90 or newer (so it has the wait). Asked once per kernel and device. */
template <auto K> bool fdnn_pdl_ok(int dev, int cc)
{
    static signed char ok[64];
    if (cc < 90 || dev < 0 || dev >= 64) return false;
    if (ok[dev] == 0) {
        cudaFuncAttributes a;
        if (!fdnn_env_int("FREEDNN_PDL", 1)) ok[dev] = -1;
        else if (cudaFuncGetAttributes(&a, (const void *)K) != cudaSuccess) ok[dev] = -1, (void)cudaGetLastError();
        else ok[dev] = a.binaryVersion >= 90 && a.ptxVersion >= 90 ? 1 : -1;
    }
    return ok[dev] == 1;
}

/* Launches k<<<g, b, shm, s>>>(args...), with the programmatic stream serialization attribute
 * when pdl is set. A launch the attribute makes fail (an old driver) is repeated without it. */
template <typename... P, typename... Args>
cudaError_t fdnn_launch_pdl(bool pdl, void (*k)(P...), dim3 g, dim3 b, size_t shm, cudaStream_t s, Args... args)
{
    if (pdl) {
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.gridDim = g, cfg.blockDim = b, cfg.dynamicSmemBytes = shm, cfg.stream = s;
        cfg.attrs = at, cfg.numAttrs = 1;
        const cudaError_t e = cudaLaunchKernelEx(&cfg, k, ((P)args)...);
        if (e == cudaSuccess) return e;
        (void)cudaGetLastError();
    }
    k<<<g, b, shm, s>>>(((P)args)...);
    return cudaGetLastError();
}
#endif
