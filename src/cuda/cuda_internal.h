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
    /* Device scratch owned by the handle, allocated once in cudnnCreate (never inside a call,
     * so CUDA graph capture keeps working). Kernels use it only in stream order on the handle's
     * stream, for per-call intermediates (batch-norm per-channel coefficients and partial sums,
     * softmax INSTANCE chunk partials, the max-pooling backward argmax byte map); a call must
     * fall back to a path without scratch (or chunk its work) when it does not fit. */
    void *scratch;
    size_t scratch_bytes;
    /* FDNN_CUDA_SYNC_WORDS zeroed counters for the single-kernel two-pass ops (pipe2.cuh); each
     * such kernel leaves them zero when it ends. NULL when the allocation failed. */
    unsigned *sync;
    /* Recent convolution calls and their captured CUDA graphs (conv_replay.c); host memory,
     * allocated on the first convolution. */
    struct fdnn_cuda_replay *replay;
} fdnn_cuda_state;

#define FDNN_CUDA_SCRATCH_BYTES ((size_t)4 << 20)
#define FDNN_CUDA_SYNC_WORDS 65536u

/* Destroys the replay table's graphs and capture stream (conv_replay.c). */
void fdnn_cuda_conv_replay_free(fdnn_cuda_state *s);

static inline cudaStream_t fdnn_cuda_stream(cudnnHandle_t h) { return (cudaStream_t)h->stream; }
/* The device's SM count, for sizing grids and waves; 132 (H100/H200) when the handle has no
 * CUDA state (the figure only shapes a launch, it never decides correctness). */
static inline int fdnn_cuda_sm_count(cudnnHandle_t h)
{
    const fdnn_cuda_state *cs = h ? (const fdnn_cuda_state *)h->cuda : 0;
    const int n = cs ? cs->prop.multiProcessorCount : 0;
    return n > 0 ? n : 132;
}
#endif
