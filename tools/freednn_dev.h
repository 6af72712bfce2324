/* Memory, conversion and timing helpers of the freednn tools: buffers in host memory for a
 * CPU handle and in device memory for a CUDA handle (CUDA runtime, only when built with
 * FREEDNN_HAVE_CUDA), dtype conversion from/to double, a wall clock and CUDA events. */
#ifndef FREEDNN_TOOLS_DEV_H
#define FREEDNN_TOOLS_DEV_H
#include <stddef.h>
#include <stdint.h>
#include "cudnn.h"

size_t fdt_dtype_size(cudnnDataType_t t);
void fdt_from_double(const double *src, cudnnDataType_t t, void *dst, size_t n);
void fdt_to_double(const void *src, cudnnDataType_t t, double *dst, size_t n);

/* on_device: 1 for device memory. Returns NULL on failure. */
void *fdt_alloc(int on_device, size_t bytes);
void fdt_free(int on_device, void *p);
int fdt_upload(int on_device, void *dst, const void *src, size_t bytes);
int fdt_download(int on_device, void *dst, const void *src, size_t bytes);
void fdt_sync(int on_device);
/* 1 if this build of the tools can use CUDA device memory */
int fdt_have_cuda(void);

double fdt_now(void);  /* seconds, CLOCK_MONOTONIC */

/* A non-blocking CUDA stream for a library handle (NULL without CUDA or on failure). */
void *fdt_stream_create(void);
void fdt_stream_destroy(void *stream);
void fdt_stream_sync(void *stream);

/* Per-iteration GPU timing: n start/stop event pairs recorded on stream, created before the
 * timed loop. */
typedef struct fdt_gpu_timer fdt_gpu_timer;
fdt_gpu_timer *fdt_gpu_timer_create(int n, void *stream);
void fdt_gpu_timer_start(fdt_gpu_timer *t, int i);
void fdt_gpu_timer_stop(fdt_gpu_timer *t, int i);
/* waits for the last event, writes n times in seconds */
void fdt_gpu_timer_read(fdt_gpu_timer *t, double *secs);
void fdt_gpu_timer_destroy(fdt_gpu_timer *t);

/* CUDA graph capture of the calls made on stream between begin and end (relaxed capture mode,
 * so a library that allocates memory on first use is not refused for that). fdt_graph_end
 * instantiates; 0 on success, else -1 with the CUDA error text in why (the capture is ended
 * and the stream usable again either way). */
int fdt_graph_begin(void *stream, char *why, size_t why_n);
int fdt_graph_end(void *stream, void **exec, char *why, size_t why_n);
int fdt_graph_launch(void *exec, void *stream);
void fdt_graph_destroy(void *exec);

#endif
