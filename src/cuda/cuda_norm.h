/* CUDA launchers of the normalization family (batch norm / cudnnNormalization*), dropout and
 * the spatial transformer, callable from the C API files (src/api/batchnorm.c, normalization.c,
 * dropout.c, spatial_tf.c) when the handle is a CUDA handle. Every pointer is device memory,
 * every kernel runs on the handle's stream, nothing allocates or synchronises. Semantics are
 * those of the CPU engine (src/cpu/norm_cpu.c, dropout_cpu.c, spatial_tf_cpu.c); see
 * docs/ops-norm.md, section "CUDA backend". */
#ifndef FDNN_CUDA_NORM_H
#define FDNN_CUDA_NORM_H
#ifdef __cplusplus
#include <cuda_runtime.h> /* before the C headers, which would pull it in inside extern "C" */
extern "C" {
#endif
#include "../core/norm_desc.h"

cudnnStatus_t fdnn_cuda_norm_infer(cudnnHandle_t h, const fdnn_norm_prob *p);
cudnnStatus_t fdnn_cuda_norm_train(cudnnHandle_t h, const fdnn_norm_prob *p);
cudnnStatus_t fdnn_cuda_norm_backward(cudnnHandle_t h, const fdnn_norm_prob *p);

cudnnStatus_t fdnn_cuda_dropout_fwd(cudnnHandle_t h, const struct cudnnTensorStruct *xd, const void *x, const struct cudnnTensorStruct *yd,
                                    void *y, float p, unsigned long long seed, uint8_t *mask);
cudnnStatus_t fdnn_cuda_dropout_bwd(cudnnHandle_t h, const struct cudnnTensorStruct *dyd, const void *dy, const struct cudnnTensorStruct *dxd,
                                    void *dx, float p, const uint8_t *mask);

cudnnStatus_t fdnn_cuda_stf_grid_fwd(cudnnHandle_t h, const struct cudnnSpatialTransformerStruct *st, const void *theta, void *grid);
cudnnStatus_t fdnn_cuda_stf_grid_bwd(cudnnHandle_t h, const struct cudnnSpatialTransformerStruct *st, const void *dgrid, void *dtheta);
cudnnStatus_t fdnn_cuda_stf_sampler_fwd(cudnnHandle_t h, const struct cudnnSpatialTransformerStruct *st, double alpha,
                                        const struct cudnnTensorStruct *xd, const void *x, const void *grid, double beta,
                                        const struct cudnnTensorStruct *yd, void *y);
cudnnStatus_t fdnn_cuda_stf_sampler_bwd(cudnnHandle_t h, const struct cudnnSpatialTransformerStruct *st, double alpha,
                                        const struct cudnnTensorStruct *xd, const void *x, double beta, const struct cudnnTensorStruct *dxd,
                                        void *dx, double alphaDg, const struct cudnnTensorStruct *dyd, const void *dy, const void *grid,
                                        double betaDg, void *dgrid);
#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
/* Device-side helpers shared by the .cu files of this family: element conversion between the
 * storage type and the accumulation type (float, double for DOUBLE). */
#include <cuda_fp16.h>
#include <cuda_bf16.h>
namespace fdnn_nrm {
template <typename A> __device__ __forceinline__ A to_acc(float v) { return (A)v; }
template <typename A> __device__ __forceinline__ A to_acc(double v) { return (A)v; }
template <typename A> __device__ __forceinline__ A to_acc(__half v) { return (A)__half2float(v); }
template <typename A> __device__ __forceinline__ A to_acc(__nv_bfloat16 v) { return (A)__bfloat162float(v); }
template <typename T> struct conv;
template <> struct conv<float> { template <typename A> static __device__ __forceinline__ float from(A v) { return (float)v; } };
template <> struct conv<double> { template <typename A> static __device__ __forceinline__ double from(A v) { return (double)v; } };
template <> struct conv<__half> { template <typename A> static __device__ __forceinline__ __half from(A v) { return __float2half_rn((float)v); } };
template <> struct conv<__nv_bfloat16> {
    template <typename A> static __device__ __forceinline__ __nv_bfloat16 from(A v) { return __float2bfloat16_rn((float)v); }
};
template <typename T> struct acc_of { typedef float type; };
template <> struct acc_of<double> { typedef double type; };
} // namespace fdnn_nrm
#endif
#endif
