/* The CUDA backend's entry points seen from the host C code. When FreeDNN is built without
 * CUDA (FDNN_HAVE_CUDA undefined) these collapse to inline "not available" versions, so the
 * rest of the library needs no #ifdefs. */
#ifndef FDNN_CUDA_BACKEND_H
#define FDNN_CUDA_BACKEND_H
#include <stdio.h>
#include "../core/fdnn.h"

#ifdef FDNN_HAVE_CUDA
/* 1 if a CUDA device is usable; otherwise 0 and the reason ("no CUDA device", "driver too
 * old", ...) in why. */
int fdnn_cuda_usable(char *why, size_t why_n);
cudnnStatus_t fdnn_cuda_handle_init(cudnnHandle_t h);
void fdnn_cuda_handle_free(cudnnHandle_t h);
cudnnStatus_t fdnn_cuda_set_stream(cudnnHandle_t h, cudaStream_t s);
int fdnn_cuda_runtime_version(void);
/* Maps the last CUDA error of this thread to a status and records its text. */
cudnnStatus_t fdnn_cuda_check(int cuda_err, const char *what);
#else
static inline int fdnn_cuda_usable(char *why, size_t why_n)
{
    snprintf(why, why_n, "FreeDNN was built without the CUDA backend (FREEDNN_CUDA=OFF or no CUDA toolkit)");
    return 0;
}
static inline cudnnStatus_t fdnn_cuda_handle_init(cudnnHandle_t h) { (void)h; return CUDNN_STATUS_NOT_SUPPORTED; }
static inline void fdnn_cuda_handle_free(cudnnHandle_t h) { (void)h; }
static inline cudnnStatus_t fdnn_cuda_set_stream(cudnnHandle_t h, cudaStream_t s) { (void)h; (void)s; return CUDNN_STATUS_SUCCESS; }
static inline int fdnn_cuda_runtime_version(void) { return 0; }
#endif
#endif
