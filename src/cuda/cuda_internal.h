/* CUDA backend private state and the extern "C" launchers of its kernels. Only files in
 * src/cuda and the dispatch lists include this. */
#ifndef FDNN_CUDA_INTERNAL_H
#define FDNN_CUDA_INTERNAL_H
#include <cuda_runtime_api.h>
#include "../core/fdnn.h"

typedef struct fdnn_cuda_state {
    int device;
    int cc;                       /* compute capability, e.g. 90 */
    struct cudaDeviceProp prop;
    void *cublas;                 /* cublasHandle_t, created on first use (cublas_loader.c) */
} fdnn_cuda_state;

static inline cudaStream_t fdnn_cuda_stream(cudnnHandle_t h) { return (cudaStream_t)h->stream; }
#endif
