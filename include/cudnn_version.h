/*
 * FreeDNN - open implementation of the cuDNN 8.9 C API.
 * cudnn_version.h: API level implemented (cuDNN 8.9.7) and FreeDNN's own version.
 */

#ifndef CUDNN_VERSION_H_
#define CUDNN_VERSION_H_

/* cuDNN API level.  Build systems grep for these three lines. */
#define CUDNN_MAJOR 8
#define CUDNN_MINOR 9
#define CUDNN_PATCHLEVEL 7

/* cuDNN 8 encoding: 8.9.7 -> 8907. */
#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)

/* Version of the FreeDNN implementation itself. */
#define FREEDNN_VERSION_MAJOR 0
#define FREEDNN_VERSION_MINOR 1
#define FREEDNN_VERSION_PATCH 0
#define FREEDNN_VERSION (FREEDNN_VERSION_MAJOR * 10000 + FREEDNN_VERSION_MINOR * 100 + FREEDNN_VERSION_PATCH)
#define FREEDNN_VERSION_STRING "0.1.0"

#endif /* CUDNN_VERSION_H_ */
