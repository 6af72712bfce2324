/* Backend-neutral memory and timing for code that must work on either backend's pointers
 * (Find* allocating scratch and timing implementations, test-free zero fills). On the CPU
 * backend memory is host memory and timers read the monotonic clock; on the CUDA backend
 * memory is device memory and timers are CUDA events on the handle's stream. */
#ifndef FDNN_BACKEND_UTIL_H
#define FDNN_BACKEND_UTIL_H
#include "fdnn.h"

void *fdnn_mem_alloc(cudnnHandle_t h, size_t bytes);       /* NULL on failure */
void fdnn_mem_free(cudnnHandle_t h, void *p);
cudnnStatus_t fdnn_mem_zero(cudnnHandle_t h, void *p, size_t bytes);
cudnnStatus_t fdnn_mem_copy(cudnnHandle_t h, void *dst, const void *src, size_t bytes); /* same-backend copy */
cudnnStatus_t fdnn_sync(cudnnHandle_t h);                  /* wait for the handle's stream */

typedef struct fdnn_timer {
    double t0;      /* CPU: seconds */
    void *ev[2];    /* CUDA: start/stop events */
} fdnn_timer;
cudnnStatus_t fdnn_timer_start(cudnnHandle_t h, fdnn_timer *t);
/* Stops, waits, returns elapsed milliseconds (and destroys the events). */
double fdnn_timer_stop_ms(cudnnHandle_t h, fdnn_timer *t);
#endif
