/* CUDA element-wise tensor operations used by the API layer on CUDA handles. */
#ifndef FDNN_CUDA_OPS_H
#define FDNN_CUDA_OPS_H
#include <stdio.h>
#include <cuda_runtime_api.h>
#include "cudnn.h"
#ifdef __cplusplus
extern "C" {
#endif
#include "../core/fdnn.h"

/* C = alpha*A + beta*C with cuDNN broadcasting (every dim of A equals C's or is 1), 3..8
 * dims, any strides; A and C of the same type (FLOAT, DOUBLE, HALF, BFLOAT16). beta == 0
 * never reads C. Computed in double, rounded once. Runs on the handle's stream. Expects
 * descriptors already validated by the caller; re-checks rank/type/broadcast (BAD_PARAM). */
cudnnStatus_t fdnn_cuda_add_tensor(cudnnHandle_t h, double alpha, const struct cudnnTensorStruct *a, const void *A,
                                   double beta, const struct cudnnTensorStruct *c, void *C);

#ifdef __cplusplus
}
#endif
#endif
