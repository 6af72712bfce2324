/* Backend-neutral memory and timing (see backend_util.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend_util.h"
#ifdef FDNN_HAVE_CUDA
#include <cuda_runtime_api.h>
#include "../cuda/cuda_backend.h"
#define IS_CUDA(h) ((h)->backend == FDNN_BACKEND_CUDA)
#else
#define IS_CUDA(h) 0
#endif

void *fdnn_mem_alloc(cudnnHandle_t h, size_t bytes)
{
    if (bytes == 0) bytes = 1;
#ifdef FDNN_HAVE_CUDA
    if (IS_CUDA(h)) {
        void *p = NULL;
        if (cudaMalloc(&p, bytes) != cudaSuccess) {
            cudaGetLastError();
            return NULL;
        }
        return p;
    }
#endif
    (void)h;
    return malloc(bytes);
}

void fdnn_mem_free(cudnnHandle_t h, void *p)
{
#ifdef FDNN_HAVE_CUDA
    if (IS_CUDA(h)) {
        cudaFree(p);
        return;
    }
#endif
    (void)h;
    free(p);
}

cudnnStatus_t fdnn_mem_zero(cudnnHandle_t h, void *p, size_t bytes)
{
#ifdef FDNN_HAVE_CUDA
    if (IS_CUDA(h)) return fdnn_cuda_check(cudaMemsetAsync(p, 0, bytes, (cudaStream_t)h->stream), "cudaMemsetAsync");
#endif
    (void)h;
    memset(p, 0, bytes);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_mem_copy(cudnnHandle_t h, void *dst, const void *src, size_t bytes)
{
#ifdef FDNN_HAVE_CUDA
    if (IS_CUDA(h))
        return fdnn_cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)h->stream), "cudaMemcpyAsync");
#endif
    (void)h;
    memmove(dst, src, bytes);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_sync(cudnnHandle_t h)
{
#ifdef FDNN_HAVE_CUDA
    if (IS_CUDA(h)) return fdnn_cuda_check(cudaStreamSynchronize((cudaStream_t)h->stream), "cudaStreamSynchronize");
#endif
    (void)h;
    return CUDNN_STATUS_SUCCESS;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

cudnnStatus_t fdnn_timer_start(cudnnHandle_t h, fdnn_timer *t)
{
    memset(t, 0, sizeof *t);
#ifdef FDNN_HAVE_CUDA
    if (IS_CUDA(h)) {
        cudaEvent_t a, b;
        if (cudaEventCreate(&a) != cudaSuccess) return fdnn_cuda_check(cudaGetLastError(), "cudaEventCreate");
        if (cudaEventCreate(&b) != cudaSuccess) {
            cudaEventDestroy(a);
            return fdnn_cuda_check(cudaGetLastError(), "cudaEventCreate");
        }
        t->ev[0] = a;
        t->ev[1] = b;
        return fdnn_cuda_check(cudaEventRecord(a, (cudaStream_t)h->stream), "cudaEventRecord");
    }
#endif
    (void)h;
    t->t0 = now_s();
    return CUDNN_STATUS_SUCCESS;
}

double fdnn_timer_stop_ms(cudnnHandle_t h, fdnn_timer *t)
{
#ifdef FDNN_HAVE_CUDA
    if (IS_CUDA(h)) {
        float ms = -1;
        cudaEventRecord((cudaEvent_t)t->ev[1], (cudaStream_t)h->stream);
        cudaEventSynchronize((cudaEvent_t)t->ev[1]);
        cudaEventElapsedTime(&ms, (cudaEvent_t)t->ev[0], (cudaEvent_t)t->ev[1]);
        cudaEventDestroy((cudaEvent_t)t->ev[0]);
        cudaEventDestroy((cudaEvent_t)t->ev[1]);
        return ms;
    }
#endif
    (void)h;
    return (now_s() - t->t0) * 1e3;
}
