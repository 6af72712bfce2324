/*
 * FreeDNN - open implementation of the cuDNN 8.9 C API.
 * freednn.h: FreeDNN-specific extensions on top of the cuDNN 8.9 API.
 * Not part of cuDNN 8.9; portable code should test FREEDNN_VERSION first.
 */

#ifndef FREEDNN_H_
#define FREEDNN_H_

#include <stddef.h>

#include "cudnn.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* Copies the calling thread's most recent error message into message
 * (at most max_size bytes, NUL-terminated) and clears it.  An empty string
 * means no error has been recorded.  Same signature as in cuDNN 9. */
void CUDNNWINAPI cudnnGetLastErrorString(char *message, size_t max_size);

/* Name of the execution backend bound to handle: "cpu" or "cuda". */
const char *freednnGetBackendName(cudnnHandle_t handle);

#if defined(__cplusplus)
}
#endif

#endif /* FREEDNN_H_ */
