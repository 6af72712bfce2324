/* CUDA convolution implementations: the extern "C" launchers behind the entries of
 * fdnn_cuda_conv_impls (src/cuda/conv_list_cuda.c). Each run function launches on the
 * handle's stream only, allocates nothing and never synchronises, so calls are capturable
 * into CUDA graphs. Included by C (the list) and by the .cu files. */
#ifndef FDNN_CUDA_CONV_H
#define FDNN_CUDA_CONV_H
#include <stdarg.h>
#include <stdio.h>
#include <cuda_runtime_api.h>
#include "cudnn.h"
#ifdef __cplusplus
extern "C" {
#endif
#include "../core/fdnn.h"
#include "../dispatch/conv.h"
#include "cuda_backend.h"

/* The Hopper warpgroup-MMA kernels (conv_fwd_wgmma.cuh, conv_bwd_filter_wgmma.cuh) may run: the
 * library carries sm_90a code (FDNN_HAVE_SM90A, from FREEDNN_CUDA_ARCHS), the device is compute
 * capability 9.0 and FREEDNN_CUDA_WGMMA is not 0 (read once). Each entry adds its shape rules. */
struct fdnn_cuda_state;
int fdnn_cuda_wgmma_on(const struct fdnn_cuda_state *cs);
/* One thread per output element (fwd, bwd-data) / one block per filter element with a fixed
 * tree reduction (bwd-filter). Every dtype configuration, layout, 2-D/3-D, groups. */
cudnnStatus_t fdnn_cuda_conv_direct_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a);
/* Tiled shared-memory implicit GEMM on CUDA cores, forward: FLOAT, DOUBLE, HALF/BFLOAT16 (float
 * accumulation), INT8 (int32 accumulation, INT8 or FLOAT output). */
cudnnStatus_t fdnn_cuda_conv_fwd_simt_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a);
/* FLOAT implicit GEMM on CUDA cores, forward (conv_fwd_f32.cu): packed NHWC x/y, KRSC filter,
 * groups 1, 2-D (or 3-D with D = T = 1), FLOAT without TENSOR_OP math, K % 4 == 0, K <= 128,
 * R*S > 1 (applicable() checks all of it). Workspace only for C % 4 != 0 (x and w with C padded
 * to a multiple of 4); run() hands tensors that are not 16-byte aligned to the SIMT kernel. */
int fdnn_cuda_conv_fwd_f32_applicable(const fdnn_conv_problem *p, char *why, size_t why_n);
/* the rules both FLOAT implicit GEMMs share: FLOAT x/w/y without TENSOR_OP math, groups 1, 2-D
 * (or D = T = 1), packed NHWC x and y, KRSC filter, K % 4 == 0, R*S > 1 */
int fdnn_cuda_conv_f32_nhwc_ok(const fdnn_conv_problem *p, char *why, size_t why_n);
size_t fdnn_cuda_conv_fwd_f32_workspace(const fdnn_conv_problem *p);
cudnnStatus_t fdnn_cuda_conv_fwd_f32_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a);
/* FLOAT split-K implicit GEMM on CUDA cores, backward filter (conv_bwd_filter_f32.cu): packed
 * NHWC x/dy, KRSC dw, groups 1, 2-D (or 3-D with D = T = 1), FLOAT without TENSOR_OP math,
 * K % 4 == 0, R*S > 1, x/dy/dw below 2^30 elements. Workspace: the splits' float partial sums
 * (a function of the problem alone). Tensors that are not 16-byte aligned go to the direct kernel. */
int fdnn_cuda_conv_bwd_filter_f32_applicable(const fdnn_conv_problem *p, char *why, size_t why_n);
size_t fdnn_cuda_conv_bwd_filter_f32_workspace(const fdnn_conv_problem *p);
cudnnStatus_t fdnn_cuda_conv_bwd_filter_f32_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a);
/* Tensor-core (WMMA) implicit GEMM, forward, float accumulation: HALF and BFLOAT16 (16x16x16),
 * FLOAT as TF32 (16x16x8). Needs compute capability 8.0+. */
cudnnStatus_t fdnn_cuda_conv_fwd_tc_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a);
/* Tensor-core implicit GEMM with mma.sync/ldmatrix/cp.async (conv_fwd_mma.cu), forward, for
 * packed NHWC x/y, KRSC filter, groups 1, same-type HALF/BFLOAT16, K % 8 == 0,
 * 2-D (or 3-D with D = T = 1). applicable() checks the shape and layout (the list adds math type
 * and compute capability 8.0+); run() falls back to the WMMA kernel for tensors that are not
 * 16-byte aligned. C % 8 != 0: x and w are copied to workspace() bytes with C padded to a
 * multiple of 8; a small tile grid with a long reduction adds split-K float partial sums. */
int fdnn_cuda_conv_fwd_mma_applicable(const fdnn_conv_problem *p, char *why, size_t why_n);
size_t fdnn_cuda_conv_fwd_mma_workspace(const fdnn_conv_problem *p);
int fdnn_cuda_conv_fwd_mma_aligned(const fdnn_conv_args *a);
/* applicable() and C % 8 == 0 (no padding workspace) and not FMA math (FLOAT: TENSOR_OP math)
 * and the current device is 8.0+ (for callers outside the list, which then provide
 * fdnn_cuda_conv_fwd_mma_split_workspace bytes) */
int fdnn_cuda_conv_fwd_mma_usable(const fdnn_conv_problem *p);
/* bytes of split-K partial sums the mma kernel needs for p as it is (C % 8 == 0 or FLOAT), 0 without split */
size_t fdnn_cuda_conv_fwd_mma_split_workspace(const fdnn_conv_problem *p);
/* Compute-capability major of the current device (queried once per device; conv_list_cuda.c);
 * *dev gets the device index. 0 on error. */
int fdnn_cuda_device_cc_major(int *dev);
cudnnStatus_t fdnn_cuda_conv_fwd_mma_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a);
/* Tensor-core implicit GEMM backward filter with mma.sync/cp.async (conv_bwd_filter_mma.cu):
 * packed NHWC x/dy, KRSC dw, groups 1, same-type HALF/BFLOAT16 (K % 8 == 0) or FLOAT through TF32
 * (K % 4 == 0), 2-D (or 3-D with D = T = 1); C not a multiple of 8 (FLOAT: 4) pads x and dw
 * through the workspace. The N*P*Q reduction is split over blocks by a rule
 * of the problem alone; the float partial sums of the splits need workspace() bytes (0 with one
 * split) and are summed in fixed order (deterministic). applicable() checks shape and layout (the
 * list adds math type and compute capability 8.0+); run() falls back to the direct kernel for
 * tensors or a workspace that are not 16-byte aligned. */
int fdnn_cuda_conv_bwd_filter_mma_applicable(const fdnn_conv_problem *p, char *why, size_t why_n);
size_t fdnn_cuda_conv_bwd_filter_mma_workspace(const fdnn_conv_problem *p);
cudnnStatus_t fdnn_cuda_conv_bwd_filter_mma_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a);
/* Backward data / backward filter as tiled implicit GEMMs on CUDA cores (FLOAT, DOUBLE, HALF,
 * BFLOAT16). Backward filter splits the reduction into fixed slices whose partial sums need
 * fdnn_cuda_conv_bwd_filter_simt_workspace(p) bytes (0 when no split is used). */
cudnnStatus_t fdnn_cuda_conv_bwd_simt_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a);
size_t fdnn_cuda_conv_bwd_filter_simt_workspace(const fdnn_conv_problem *p);

/* Explicit GEMM through cuBLAS (conv_gemm_cublas.cu), all three directions: im2col (or none for
 * 1x1/stride 1/pad 0) + cublasGemmEx on tensor cores; col2im gather for backward data. Only for
 * packed NHWC x/y, KRSC filter, groups 1, HALF/BFLOAT16/FLOAT; applicable() says why not. */
int fdnn_cuda_conv_gemm_applicable(const fdnn_conv_problem *p, char *why, size_t why_n);
/* 1 for 1x1 / stride 1 / pad 0 problems, which the GEMM entries run on x (dy) in place, without
 * a column buffer */
int fdnn_cuda_conv_gemm_in_place(const fdnn_conv_problem *p);
size_t fdnn_cuda_conv_gemm_workspace(const fdnn_conv_problem *p);
/* The GEMM entries' workspace cap, FREEDNN_CUDA_GEMM_WS_LIMIT (read on every call), which their
 * plans depend on: the graph replay table (conv_replay.c) keys on it. */
size_t fdnn_cuda_gemm_ws_limit(void);
cudnnStatus_t fdnn_cuda_conv_gemm_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a);
/* Backward data of stride-1 problems (padding <= dilation*(filter-1) per dim) as the forward
 * im2col + GEMM of dy with the K/C-swapped (and, for cross-correlation, flipped) filter, which
 * a small kernel writes into the workspace; same layout/type rules as above. */
int fdnn_cuda_conv_bwd_data_fwd_gemm_applicable(const fdnn_conv_problem *p, char *why, size_t why_n);
size_t fdnn_cuda_conv_bwd_data_fwd_gemm_workspace(const fdnn_conv_problem *p);
cudnnStatus_t fdnn_cuda_conv_bwd_data_fwd_gemm_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a);

/* INT8 forward (conv_int8.cu): the NCHW_VECT_C layouts INT8x4/INT8x32 (x and w vectorised, y of
 * x's type or FLOAT), int32 accumulation with __dp4a; and the fused bias + activation epilogue of
 * cudnnConvolutionBiasActivationForward for every INT8-family problem, rounded once as the CPU
 * backend does (y = act((float)(alpha1*conv) + bias + alpha2*z)). zs: z's N,C,D,H,W strides. */
cudnnStatus_t fdnn_cuda_conv_int8_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a);
cudnnStatus_t fdnn_cuda_conv_int8_bias_act(cudnnHandle_t h, const fdnn_conv_problem *p, const void *x, const void *w, double alpha1,
                                           double alpha2, const void *z, const int64_t zs[5], const void *bias, cudnnDataType_t btype,
                                           int64_t bias_stride, int relu, int prop_nan, void *y);
/* Depthwise kernels (conv_depthwise.cu), all three directions: groups == C, K = m*C, 2-D (or 3-D
 * with D = T = 1), any layout/strides/padding/dilation, FLOAT/DOUBLE/HALF/BFLOAT16. Backward
 * filter splits the N*P*Q reduction into a problem-determined number of slices whose partial
 * sums need fdnn_cuda_conv_depthwise_workspace(p) bytes (0 for the other directions and when
 * there is one slice). Shape checks are in the list's applicable(). */
size_t fdnn_cuda_conv_depthwise_workspace(const fdnn_conv_problem *p);
cudnnStatus_t fdnn_cuda_conv_depthwise_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a);

/* Helpers of the applicable() functions of the .cu entries: fdnn_conv_why writes the reason into
 * why (when given) and returns 0; fdnn_conv_packed_cl says whether strides s (N, C, D, H, W)
 * describe a dense N, D, H, W, C tensor of those extents (extent-1 dims ignored). */
static inline int fdnn_conv_why(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline int fdnn_conv_why(char *why, size_t n, const char *fmt, ...)
{
    if (why && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
    return 0;
}
static inline int fdnn_conv_packed_cl(const int64_t *s, int n, int c, const int *sp)
{
    const int idx[5] = {1, 4, 3, 2, 0};
    const int ext[5] = {c, sp[2], sp[1], sp[0], n};
    int64_t e = 1;
    for (int i = 0; i < 5; i++) {
        if (ext[i] > 1 && s[idx[i]] != e) return 0;
        e *= ext[i];
    }
    return 1;
}

/* Limits of the tiled kernels, checked by the list's applicable() functions. */
enum { FDNN_CUDA_CONV_MAX_GROUPS = 65535 };

#ifdef __cplusplus
}
#endif
#endif
