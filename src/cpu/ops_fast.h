/* Fast paths of the CPU tensor ops that work straight on FLOAT tensors, without the packed double
 * copies of ops_common.h. Each returns 1 when it did the call, 0 when the tensors are outside what it
 * serves (another type, strides it does not take) and the caller must take its general path. */
#ifndef FDNN_CPU_OPS_FAST_H
#define FDNN_CPU_OPS_FAST_H
#include "ops_common.h"

/* softmax (src/cpu/softmax_cpu.c): tensors seen by fdnn_ops_ncs; INSTANCE also needs every tensor dense
 * per image and in one layout */
int fdnn_cpu_softmax_fwd_f32(int algo, int mode, double a, const fdnn_tensor *xd, const void *x, double b, const fdnn_tensor *yd, void *y);
int fdnn_cpu_softmax_bwd_f32(int algo, int mode, double a, const fdnn_tensor *yd, const void *y, const fdnn_tensor *dyd, const void *dy,
                             double b, const fdnn_tensor *dxd, void *dx);

/* pooling (src/cpu/pool_cpu.c): FLOAT tensors of any strides whose rank matches the descriptor. Backward
 * sets *alloc_failed (and returns 1, dx untouched) when its per-thread gradient buffer cannot be had. */
struct cudnnPoolingStruct;
int fdnn_cpu_pool_fwd_f32(const struct cudnnPoolingStruct *d, double a, const fdnn_tensor *xd, const void *x, double b, const fdnn_tensor *yd,
                          void *y);
int fdnn_cpu_pool_bwd_f32(const struct cudnnPoolingStruct *d, double a, const fdnn_tensor *dyd, const void *dy, const fdnn_tensor *xd,
                          const void *x, double b, const fdnn_tensor *dxd, void *dx, int *alloc_failed);
#endif
