/* CUDA backend host glue: device discovery with a clear reason when no device is usable,
 * per-handle device state, stream binding and CUDA-error-to-status mapping. Kernels live in
 * the .cu files of this directory and are launched through extern "C" functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "cuda_backend.h"
#include "cuda_internal.h"
#include "cublas_loader.h"

int fdnn_cuda_usable(char *why, size_t why_n)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        const char *reason;
        switch (e) {
        case cudaErrorNoDevice: reason = "no CUDA device is present"; break;
        case cudaErrorInsufficientDriver: reason = "the NVIDIA driver is older than the CUDA runtime FreeDNN was built with"; break;
        case cudaErrorInitializationError: reason = "the CUDA driver failed to initialise (is the NVIDIA driver loaded?)"; break;
        default: reason = "CUDA is not usable"; break;
        }
        snprintf(why, why_n, "%s (%s)", reason, cudaGetErrorString(e));
        cudaGetLastError();
        return 0;
    }
    if (n == 0) {
        snprintf(why, why_n, "no CUDA device is present");
        return 0;
    }
    return 1;
}

int fdnn_cuda_runtime_version(void) { return CUDART_VERSION; }

cudnnStatus_t fdnn_cuda_check(int err, const char *what)
{
    cudaError_t e = (cudaError_t)err;
    if (e == cudaSuccess) return CUDNN_STATUS_SUCCESS;
    cudaGetLastError(); /* clear a sticky-free error so later calls start clean */
    cudnnStatus_t st = CUDNN_STATUS_EXECUTION_FAILED;
    if (e == cudaErrorMemoryAllocation) st = CUDNN_STATUS_ALLOC_FAILED;
    else if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorUnsupportedPtxVersion) st = CUDNN_STATUS_ARCH_MISMATCH;
    else if (e == cudaErrorInvalidValue) st = CUDNN_STATUS_BAD_PARAM;
    if (e == cudaErrorNoKernelImageForDevice)
        return FDNN_FAIL(st, "%s: this GPU's architecture has no FreeDNN kernel image (%s); rebuild with its sm_XX in FREEDNN_CUDA_ARCHS",
                         what, cudaGetErrorString(e));
    return FDNN_FAIL(st, "%s: CUDA error %d: %s", what, (int)e, cudaGetErrorString(e));
}

cudnnStatus_t fdnn_cuda_handle_init(cudnnHandle_t h)
{
    fdnn_cuda_state *s = calloc(1, sizeof *s);
    if (!s) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&s->prop, dev);
    if (e == cudaSuccess) e = cudaFree(NULL); /* create the primary context now, not inside a timed call */
    if (e != cudaSuccess) {
        free(s);
        cudnnStatus_t st = fdnn_cuda_check(e, "initialising the CUDA device");
        return st == CUDNN_STATUS_ALLOC_FAILED ? st : CUDNN_STATUS_NOT_INITIALIZED;
    }
    s->device = dev;
    s->cc = s->prop.major * 10 + s->prop.minor;
    if (cudaMalloc(&s->scratch, FDNN_CUDA_SCRATCH_BYTES) == cudaSuccess) s->scratch_bytes = FDNN_CUDA_SCRATCH_BYTES;
    else {
        s->scratch = NULL; /* the fast paths that need it are skipped */
        (void)cudaGetLastError();
    }
    if (cudaMalloc((void **)&s->sync, FDNN_CUDA_SYNC_WORDS * sizeof(unsigned)) != cudaSuccess ||
        cudaMemset(s->sync, 0, FDNN_CUDA_SYNC_WORDS * sizeof(unsigned)) != cudaSuccess || cudaStreamSynchronize(0) != cudaSuccess) {
        if (s->sync) cudaFree(s->sync);
        s->sync = NULL; /* the single-kernel two-pass paths are skipped */
        (void)cudaGetLastError();
    }
    h->device = dev;
    h->cuda = s;
    return CUDNN_STATUS_SUCCESS;
}

void fdnn_cuda_handle_free(cudnnHandle_t h)
{
    fdnn_cuda_state *s = h->cuda;
    if (!s) return;
    fdnn_cuda_conv_replay_free(s);
    fdnn_cublas_handle_free(s->cublas);
    if (s->scratch) cudaFree(s->scratch);
    if (s->sync) cudaFree(s->sync);
    free(s);
    h->cuda = NULL;
}

cudnnStatus_t fdnn_cuda_set_stream(cudnnHandle_t h, cudaStream_t stream)
{
    (void)h;
    if (stream != NULL) {
        cudaError_t e = cudaStreamQuery(stream);
        if (e != cudaSuccess && e != cudaErrorNotReady)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "streamId is not a valid CUDA stream (%s)", cudaGetErrorString(e));
    }
    return CUDNN_STATUS_SUCCESS;
}
