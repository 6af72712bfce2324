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

/* ---- tensor ops with the CPU backend's semantics (src/cuda/ops_*.cu). Each expects the
 * caller (the API layer) to have validated descriptors, types and pointers; data pointers
 * are device memory; everything runs on the handle's stream; beta == 0 never reads the
 * output; math in double, rounded once like fdnn_store. */
struct cudnnPoolingStruct;
struct cudnnLRNStruct;
struct cudnnTensorTransformStruct;

/* y[all] = value (already in y's type). */
cudnnStatus_t fdnn_cuda_set_tensor(cudnnHandle_t h, const struct cudnnTensorStruct *y, void *Y, double value);
/* y = alpha*y. */
cudnnStatus_t fdnn_cuda_scale_tensor(cudnnHandle_t h, const struct cudnnTensorStruct *y, void *Y, double alpha);
/* y = alpha*x + beta*y, any layouts, types per cudnnTransformTensor (NCHW_VECT_C included). */
cudnnStatus_t fdnn_cuda_transform_tensor(cudnnHandle_t h, double alpha, const struct cudnnTensorStruct *x, const void *X, double beta,
                                         const struct cudnnTensorStruct *y, void *Y);
/* C = alpha*A + beta*C, A broadcast (dims equal C's or 1), any element types (INT8 included). */
cudnnStatus_t fdnn_cuda_add_broadcast(cudnnHandle_t h, double alpha, const struct cudnnTensorStruct *a, const void *A, double beta,
                                      const struct cudnnTensorStruct *c, void *C);
/* C = op(alpha1*A, alpha2*B) + beta*C; b == NULL for the unary ops (SQRT, NOT); B broadcast. */
cudnnStatus_t fdnn_cuda_op_tensor(cudnnHandle_t h, int op, int propagate_nan, double alpha1, const struct cudnnTensorStruct *a,
                                  const void *A, double alpha2, const struct cudnnTensorStruct *b, const void *B, double beta,
                                  const struct cudnnTensorStruct *c, void *C);
cudnnStatus_t fdnn_cuda_activation_fwd(cudnnHandle_t h, int mode, double coef, double swish_beta, int propagate_nan, double alpha,
                                       const struct cudnnTensorStruct *x, const void *X, double beta, const struct cudnnTensorStruct *y,
                                       void *Y);
cudnnStatus_t fdnn_cuda_activation_bwd(cudnnHandle_t h, int mode, double coef, double swish_beta, double alpha,
                                       const struct cudnnTensorStruct *y, const void *Y, const struct cudnnTensorStruct *dy,
                                       const void *DY, const struct cudnnTensorStruct *x, const void *X, double beta,
                                       const struct cudnnTensorStruct *dx, void *DX);
cudnnStatus_t fdnn_cuda_softmax_fwd(cudnnHandle_t h, int algo, int mode, double alpha, const struct cudnnTensorStruct *x, const void *X,
                                    double beta, const struct cudnnTensorStruct *y, void *Y);
cudnnStatus_t fdnn_cuda_softmax_bwd(cudnnHandle_t h, int algo, int mode, double alpha, const struct cudnnTensorStruct *y, const void *Y,
                                    const struct cudnnTensorStruct *dy, const void *DY, double beta, const struct cudnnTensorStruct *dx,
                                    void *DX);
cudnnStatus_t fdnn_cuda_pooling_fwd(cudnnHandle_t h, const struct cudnnPoolingStruct *pd, double alpha, const struct cudnnTensorStruct *x,
                                    const void *X, double beta, const struct cudnnTensorStruct *y, void *Y);
/* dx from dy and x (the argmax is recomputed from x exactly as the forward picks it). */
cudnnStatus_t fdnn_cuda_pooling_bwd(cudnnHandle_t h, const struct cudnnPoolingStruct *pd, double alpha, const struct cudnnTensorStruct *dy,
                                    const void *DY, const struct cudnnTensorStruct *x, const void *X, double beta,
                                    const struct cudnnTensorStruct *dx, void *DX);
/* Reduction of A into C (dims of C equal A's or 1); indices (device, int32 per C element,
 * packed logical order) written for MIN/MAX/AMAX when non-NULL. Needs no workspace. */
cudnnStatus_t fdnn_cuda_reduce_tensor(cudnnHandle_t h, int op, int propagate_nan, int *indices, double alpha,
                                      const struct cudnnTensorStruct *a, const void *A, double beta, const struct cudnnTensorStruct *c,
                                      void *C);
/* LRN (divnorm == 0: window over C) or divisive normalisation (window over the spatial dims);
 * means may be NULL (zero; formula in ops_lrn.cu). Backward writes dx and, when dMeans != NULL, dMeans;
 * temp/temp2 (xDesc-sized device buffers, divisive normalisation) give it a two-pass path;
 * NULL falls back to recomputing neighbours' window sums. */
cudnnStatus_t fdnn_cuda_norm_fwd(cudnnHandle_t h, const struct cudnnLRNStruct *d, int divnorm, double alpha,
                                 const struct cudnnTensorStruct *x, const void *X, const void *means, double beta,
                                 const struct cudnnTensorStruct *y, void *Y);
cudnnStatus_t fdnn_cuda_norm_bwd(cudnnHandle_t h, const struct cudnnLRNStruct *d, int divnorm, double alpha,
                                 const struct cudnnTensorStruct *x, const void *X, const void *means, const struct cudnnTensorStruct *dy,
                                 const void *DY, double beta, const struct cudnnTensorStruct *dx, void *DX, void *dMeans, void *temp,
                                 void *temp2);
/* dest = alpha*T(src) + beta*dest, T the fold/pad transform of d (cudnnTransformTensorEx and,
 * with filters viewed as tensors, cudnnTransformFilter); dims already validated. */
cudnnStatus_t fdnn_cuda_transform_ex(cudnnHandle_t h, const struct cudnnTensorTransformStruct *d, double alpha,
                                     const struct cudnnTensorStruct *s, const void *S, double beta, const struct cudnnTensorStruct *t,
                                     void *D);

#ifdef __cplusplus
}
#endif
#endif
