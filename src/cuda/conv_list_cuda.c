/* The CUDA backend's convolution implementation lists, fastest applicable first:
 *   all three:   depthwise kernels (groups == C, K = m*C; 2-D) first, under the direct kernels'
 *                enums (fwd IMPLICIT_GEMM, bwd data/filter ALGO_0);
 *   forward and bwd filter next: mma.sync tensor-core implicit GEMMs (conv_fwd_mma.cu,
 *                conv_bwd_filter_mma.cu; bwd filter as ALGO_1 with split-K workspace) for packed
 *                NHWC x/y, KRSC filter, groups 1, HALF/BFLOAT16 with K a multiple of 8, 2-D (C not a
 *                multiple of 8 is padded with zero channels through the workspace); the bwd filter
 *                also for FLOAT through TF32 (TENSOR_OP* math; K and padded C multiples of 4);
 *   all three:   then cuBLAS explicit GEMM (im2col / col2im, tensor cores) for packed NHWC x/y, KRSC
 *                filter, groups 1, HALF/BFLOAT16/FLOAT (fwd GEMM, bwd data/filter ALGO_1); bwd data
 *                first tries the stride-1 form that runs the forward im2col GEMM on dy;
 *   forward:     INT8x4/INT8x32 (NCHW_VECT_C) through the __dp4a kernel of conv_int8.cu (reported as
 *                IMPLICIT_PRECOMP_GEMM and IMPLICIT_GEMM; no other entry takes vector layouts),
 *                tensor-core implicit GEMM (HALF/BFLOAT16; FLOAT as TF32 when the math type is
 *                TENSOR_OP*), SIMT implicit GEMM (FLOAT/DOUBLE/INT8, and HALF/BFLOAT16 when tensor
 *                cores are not allowed),
 *                direct (everything);
 *   bwd data:    SIMT implicit GEMM (ALGO_1), direct (ALGO_0);
 *   bwd filter:  SIMT implicit GEMM with a fixed split of the reduction (ALGO_1), direct (ALGO_0).
 * applicable() states precisely why an implementation cannot run a problem; only the tiled,
 * mma and depthwise backward-filter kernels use workspace (its split-reduction partial sums),
 * and the mma entries (both directions) when they pad C to a multiple of 8. Kernels are in the .cu files of this directory (see conv_cuda.h). */
#include <stdio.h>
#include "conv_cuda.h"

static size_t no_workspace(const fdnn_conv_problem *p)
{
    (void)p;
    return 0;
}

/* Shape limits common to all CUDA kernels but the INT8 vector one: plain (non-vectorised)
 * layouts, <= 3 spatial dims, per-image extents and indices fitting in int. */
static int common_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->nb_spatial < 2 || p->nb_spatial > 3)
        return fdnn_conv_why(why, why_n, "only 2-D and 3-D convolutions are implemented on CUDA (got %d spatial dims)", p->nb_spatial);
    if (p->x_vect > 1 || p->y_vect > 1 || p->w_vect > 1)
        return fdnn_conv_why(why, why_n, "vectorised NCHW_VECT_C layouts (INT8x4/INT8x32) run on the conv_fwd__int8_vect entries");
    if (p->g < 1 || p->c % p->g || p->k % p->g)
        return fdnn_conv_why(why, why_n, "groups %d must divide C=%d and K=%d", p->g, p->c, p->k);
    return 1;
}

/* The INT8 vector kernel (conv_int8.cu): forward, x/w INT8x4 or INT8x32 (NCHW_VECT_C), y of x's
 * type (NCHW_VECT_C) or FLOAT (any strides); the dispatcher has already checked that the group's
 * channels are a multiple of the vector. */
static int int8_vect_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->dir != FDNN_CONV_FWD) return fdnn_conv_why(why, why_n, "INT8 convolutions exist only in the forward direction");
    if (p->nb_spatial < 2 || p->nb_spatial > 3)
        return fdnn_conv_why(why, why_n, "only 2-D and 3-D convolutions are implemented on CUDA (got %d spatial dims)", p->nb_spatial);
    if (p->x_vect <= 1 || p->w_vect != p->x_vect)
        return fdnn_conv_why(why, why_n, "this entry handles the vectorised INT8x4/INT8x32 layouts (x=%s)", fdnn_dtype_name(p->xtype));
    if ((p->xtype != CUDNN_DATA_INT8x4 && p->xtype != CUDNN_DATA_INT8x32) || p->wtype != p->xtype)
        return fdnn_conv_why(why, why_n, "x=%s w=%s: only INT8x4 and INT8x32 are implemented", fdnn_dtype_name(p->xtype), fdnn_dtype_name(p->wtype));
    if (!(p->ytype == p->xtype || (p->ytype == CUDNN_DATA_FLOAT && p->y_vect == 1)))
        return fdnn_conv_why(why, why_n, "y=%s: the output must be %s or FLOAT", fdnn_dtype_name(p->ytype), fdnn_dtype_name(p->xtype));
    if (p->g < 1 || p->c % p->g || p->k % p->g || (p->c / p->g) % p->x_vect)
        return fdnn_conv_why(why, why_n, "groups %d must divide C=%d and K=%d into multiples of the vector %d", p->g, p->c, p->k, p->x_vect);
    return 1;
}
static cudnnStatus_t run_int8(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    return fdnn_cuda_conv_int8_run(h, p, a);
}
/* cuDNN runs INT8x4/INT8x32 through IMPLICIT_PRECOMP_GEMM; the same kernel also answers
 * IMPLICIT_GEMM so a caller forcing either gets a result. */
static const fdnn_conv_impl fwd_int8_vect = {"conv_fwd__int8_vect_dp4a", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1,
                                             CUDNN_DEFAULT_MATH, int8_vect_ok, no_workspace, run_int8};
static const fdnn_conv_impl fwd_int8_vect_ig = {"conv_fwd__int8_vect_direct", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 1,
                                                CUDNN_DEFAULT_MATH, int8_vect_ok, no_workspace, run_int8};

static int is_lowp(cudnnDataType_t t) { return t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16; }

/* Data types the direct kernels implement for a direction. lowp selects the HALF/BFLOAT16 entry
 * (reported with DEFAULT math) versus the FLOAT/DOUBLE/INT8 one (FMA math). */
static int direct_types_ok(const fdnn_conv_problem *p, int lowp, char *why, size_t why_n)
{
    const int same = p->xtype == p->wtype && p->xtype == p->ytype;
    if (lowp) {
        if (same && is_lowp(p->xtype)) return 1;
        return fdnn_conv_why(why, why_n, "this entry handles HALF and BFLOAT16 (x=%s w=%s y=%s)", fdnn_dtype_name(p->xtype),
                    fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
    }
    if (same && (p->xtype == CUDNN_DATA_FLOAT || p->xtype == CUDNN_DATA_DOUBLE)) return 1;
    if (p->xtype == CUDNN_DATA_INT8 && p->wtype == CUDNN_DATA_INT8 &&
        (p->ytype == CUDNN_DATA_INT8 || p->ytype == CUDNN_DATA_FLOAT)) {
        if (p->dir != FDNN_CONV_FWD) return fdnn_conv_why(why, why_n, "INT8 is only supported for the forward convolution");
        return 1;
    }
    return fdnn_conv_why(why, why_n, "this entry handles FLOAT, DOUBLE and INT8 (x/w INT8, y INT8 or FLOAT; forward only); got x=%s w=%s y=%s",
                fdnn_dtype_name(p->xtype), fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
}

static int direct_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    return common_ok(p, why, why_n) && direct_types_ok(p, 0, why, why_n);
}
static int direct_lowp_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    return common_ok(p, why, why_n) && direct_types_ok(p, 1, why, why_n);
}

/* The tiled kernels put groups in gridDim.z and their GEMM dimensions must fit in int. */
static int tiled_shape_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (!common_ok(p, why, why_n)) return 0;
    if (p->g > FDNN_CUDA_CONV_MAX_GROUPS)
        return fdnn_conv_why(why, why_n, "group count %d exceeds %d", p->g, (int)FDNN_CUDA_CONV_MAX_GROUPS);
    /* With one or two channels per group (depthwise) a 64-wide GEMM tile is almost all
     * padding; the direct kernels do that work without the waste (measured on the H200:
     * depthwise 3x3 fp16 went from 3-11 ms through the tiles). */
    if (p->g > 1 && (p->c / p->g < 4 || p->k / p->g < 4))
        return fdnn_conv_why(why, why_n, "%d input and %d output channels per group: too few for a GEMM tile, use the direct kernel",
                    p->c / p->g, p->k / p->g);
    const long long flt = (long long)p->flt[0] * p->flt[1] * p->flt[2];
    const long long npq = (long long)p->n * p->out[0] * p->out[1] * p->out[2];
    const long long ndhw = (long long)p->n * p->in[0] * p->in[1] * p->in[2];
    const long long lim = (1LL << 31) - 256;
    if (npq >= lim || ndhw >= lim || (long long)(p->c / p->g) * flt >= lim || (long long)(p->k / p->g) * flt >= lim)
        return fdnn_conv_why(why, why_n, "GEMM dimensions (N*P=%lld, N*D*H*W=%lld, C/g*TRS, K/g*TRS) must stay below 2^31", npq, ndhw);
    return 1;
}

static int fwd_tiled_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->dir != FDNN_CONV_FWD) return fdnn_conv_why(why, why_n, "forward only");
    return tiled_shape_ok(p, why, why_n);
}

/* Backward tiled kernels: same-type FLOAT/DOUBLE (lowp = 0) or HALF/BFLOAT16 (lowp = 1). */
static int bwd_simt_types_ok(const fdnn_conv_problem *p, int lowp, char *why, size_t why_n)
{
    if (p->dir == FDNN_CONV_FWD) return fdnn_conv_why(why, why_n, "backward directions only");
    if (!tiled_shape_ok(p, why, why_n)) return 0;
    const int same = p->xtype == p->wtype && p->xtype == p->ytype;
    if (lowp ? (same && is_lowp(p->xtype)) : (same && (p->xtype == CUDNN_DATA_FLOAT || p->xtype == CUDNN_DATA_DOUBLE))) return 1;
    return fdnn_conv_why(why, why_n, "this entry handles %s (got x=%s w=%s y=%s)", lowp ? "HALF and BFLOAT16" : "FLOAT and DOUBLE",
                fdnn_dtype_name(p->xtype), fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
}
static int bwd_simt_ok(const fdnn_conv_problem *p, char *why, size_t why_n) { return bwd_simt_types_ok(p, 0, why, why_n); }
static int bwd_simt_lowp_ok(const fdnn_conv_problem *p, char *why, size_t why_n) { return bwd_simt_types_ok(p, 1, why, why_n); }

static size_t bwd_simt_workspace(const fdnn_conv_problem *p)
{
    return p->dir == FDNN_CONV_BWD_FILTER ? fdnn_cuda_conv_bwd_filter_simt_workspace(p) : 0;
}

/* Forward SIMT implicit GEMM: FLOAT/DOUBLE/INT8 (lowp = 0, FMA math) or HALF/BFLOAT16 with float
 * accumulation (lowp = 1, DEFAULT math; used when tensor cores are not allowed). */
static int simt_types_ok(const fdnn_conv_problem *p, int lowp, char *why, size_t why_n)
{
    if (!fwd_tiled_ok(p, why, why_n)) return 0;
    const int same = p->xtype == p->wtype && p->xtype == p->ytype;
    if (lowp) {
        if (same && is_lowp(p->xtype)) return 1;
        return fdnn_conv_why(why, why_n, "this entry handles HALF and BFLOAT16 (got x=%s w=%s y=%s)", fdnn_dtype_name(p->xtype),
                    fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
    }
    if (same && (p->xtype == CUDNN_DATA_FLOAT || p->xtype == CUDNN_DATA_DOUBLE)) return 1;
    if (p->xtype == CUDNN_DATA_INT8 && p->wtype == CUDNN_DATA_INT8 && (p->ytype == CUDNN_DATA_INT8 || p->ytype == CUDNN_DATA_FLOAT))
        return 1;
    return fdnn_conv_why(why, why_n, "this entry handles FLOAT, DOUBLE and INT8 (x/w INT8, y INT8 or FLOAT); got x=%s w=%s y=%s",
                fdnn_dtype_name(p->xtype), fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
}
static int simt_ok(const fdnn_conv_problem *p, char *why, size_t why_n) { return simt_types_ok(p, 0, why, why_n); }
static int simt_lowp_ok(const fdnn_conv_problem *p, char *why, size_t why_n) { return simt_types_ok(p, 1, why, why_n); }

/* Compute-capability major of the current device, queried once per device (the attribute
 * query is a driver call; cudaGetDevice only reads the runtime's thread state). 0 on error. */
#define CC_CACHE_DEVICES 64
int fdnn_cuda_device_cc_major(int *dev_out)
{
    static int cached[CC_CACHE_DEVICES]; /* 0: not queried yet */
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    *dev_out = dev;
    const int slot = dev >= 0 && dev < CC_CACHE_DEVICES;
    if (slot && (major = __atomic_load_n(&cached[dev], __ATOMIC_RELAXED)) > 0) return major;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess || major <= 0) {
        cudaGetLastError();
        return 0;
    }
    if (slot) __atomic_store_n(&cached[dev], major, __ATOMIC_RELAXED);
    return major;
}

static int device_has_tc(char *why, size_t why_n)
{
    int dev = 0, major = fdnn_cuda_device_cc_major(&dev);
    if (major <= 0) return fdnn_conv_why(why, why_n, "cannot query the current CUDA device's compute capability");
    if (major < 8)
        return fdnn_conv_why(why, why_n, "the tensor-core kernels need compute capability 8.0 or newer (device %d has %d.x)", dev, major);
    return 1;
}

static int tc_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (!fwd_tiled_ok(p, why, why_n)) return 0;
    if (!(p->xtype == p->wtype && p->xtype == p->ytype && is_lowp(p->xtype)))
        return fdnn_conv_why(why, why_n, "the tensor-core implicit GEMM handles HALF and BFLOAT16 (got x=%s w=%s y=%s)", fdnn_dtype_name(p->xtype),
                    fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
    if (p->math_type == CUDNN_FMA_MATH)
        return fdnn_conv_why(why, why_n, "math type CUDNN_FMA_MATH forbids tensor cores");
    return device_has_tc(why, why_n);
}

/* mma.sync implicit GEMM: the tensor-core rules above (HALF/BFLOAT16, not FMA math, compute
 * capability 8.0+) plus its own layout/shape rules */
static int mma_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    return fdnn_cuda_conv_fwd_mma_applicable(p, why, why_n) && tc_ok(p, why, why_n);
}

/* mma.sync backward filter: HALF/BFLOAT16 (its applicable() also takes FLOAT, for the TF32 entry
 * below), not FMA math, compute capability 8.0+ */
static int bwd_filter_mma_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (!fdnn_cuda_conv_bwd_filter_mma_applicable(p, why, why_n)) return 0;
    if (!is_lowp(p->xtype)) return fdnn_conv_why(why, why_n, "this entry handles HALF and BFLOAT16 (got %s)", fdnn_dtype_name(p->xtype));
    if (p->math_type == CUDNN_FMA_MATH) return fdnn_conv_why(why, why_n, "math type CUDNN_FMA_MATH forbids tensor cores");
    return device_has_tc(why, why_n);
}
/* FLOAT goes through TF32 tensor cores only when the caller asked for tensor ops explicitly
 * (TENSOR_OP or TENSOR_OP_ALLOW_CONVERSION); DEFAULT math keeps full FP32. */
static int tf32_math_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->math_type == CUDNN_TENSOR_OP_MATH || p->math_type == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return 1;
    return fdnn_conv_why(why, why_n, "TF32 is used for FLOAT only with math type CUDNN_TENSOR_OP_MATH or CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION");
}

/* the same on FLOAT through TF32 (conv_bwd_filter_tf32.cuh, conv_bwd_filter_wgmma_tf32.cuh), with
 * TF32's math-type rule. Two kinds of problem are left to the cuBLAS GEMM entry after it, which
 * ran them faster on the H200: short reductions with many filters (N*P*Q <= 2048, K >= 512: 3x3
 * and 1x1 layers on 7x7 images at batch 32; 0.068 against 0.091 ms, 0.025 against 0.034 ms) and
 * 1x1 / stride 1 / pad 0, where cuBLAS multiplies x in place without a column copy (1x1 64->64
 * and 64->256 at 56x56: 0.021 against 0.026 ms, 0.044 against 0.050 ms). */
static int bwd_filter_mma_tf32_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (!fdnn_cuda_conv_bwd_filter_mma_applicable(p, why, why_n)) return 0;
    if (p->xtype != CUDNN_DATA_FLOAT) return fdnn_conv_why(why, why_n, "this entry handles FLOAT (got %s)", fdnn_dtype_name(p->xtype));
    if (!tf32_math_ok(p, why, why_n)) return 0;
    const long long npq = (long long)p->n * p->out[0] * p->out[1] * p->out[2];
    if (npq <= 2048 && p->k >= 512)
        return fdnn_conv_why(why, why_n, "N*P*Q = %lld rows with K = %d filters: the cuBLAS GEMM entry is faster on such short reductions", npq, p->k);
    if (fdnn_cuda_conv_gemm_in_place(p)) return fdnn_conv_why(why, why_n, "1x1, stride 1, pad 0: the cuBLAS GEMM entry multiplies x in place and is faster");
    return device_has_tc(why, why_n);
}

/* FLOAT through the TF32 tensor-core implicit GEMM: the tiled forward's rules, FLOAT, TF32 math */
static int tf32_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (!fwd_tiled_ok(p, why, why_n)) return 0;
    if (!(p->xtype == CUDNN_DATA_FLOAT && p->wtype == CUDNN_DATA_FLOAT && p->ytype == CUDNN_DATA_FLOAT))
        return fdnn_conv_why(why, why_n, "the TF32 implicit GEMM handles FLOAT (got x=%s w=%s y=%s)", fdnn_dtype_name(p->xtype),
                    fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
    if (!tf32_math_ok(p, why, why_n)) return 0;
    return device_has_tc(why, why_n);
}

static cudnnStatus_t run_direct(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    return fdnn_cuda_conv_direct_run(h, p, a);
}
static cudnnStatus_t run_simt(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    return fdnn_cuda_conv_fwd_simt_run(h, p, a);
}
static cudnnStatus_t run_bwd_simt(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    return fdnn_cuda_conv_bwd_simt_run(h, p, a);
}
static cudnnStatus_t run_tc(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    return fdnn_cuda_conv_fwd_tc_run(h, p, a);
}

static cudnnStatus_t run_mma(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    return fdnn_cuda_conv_fwd_mma_run(h, p, a);
}

static const fdnn_conv_impl fwd_mma = {"conv_fwd__implicit_gemm_mma", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1,
                                       CUDNN_TENSOR_OP_MATH, mma_ok, fdnn_cuda_conv_fwd_mma_workspace, run_mma};
/* the same kernel on FLOAT through TF32 (m16n8k8): the TF32 rules of tf32_ok plus its own shape
 * rules (K % 8 == 0, packed NHWC; C % 4 != 0 padded through the workspace) */
static int mma_tf32_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->xtype != CUDNN_DATA_FLOAT) return fdnn_conv_why(why, why_n, "the TF32 mma implicit GEMM handles FLOAT (got %s)", fdnn_dtype_name(p->xtype));
    return fdnn_cuda_conv_fwd_mma_applicable(p, why, why_n) && tf32_ok(p, why, why_n);
}
static const fdnn_conv_impl fwd_mma_tf32 = {"conv_fwd__implicit_gemm_mma_tf32", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1,
                                            CUDNN_TENSOR_OP_MATH, mma_tf32_ok, fdnn_cuda_conv_fwd_mma_workspace, run_mma};
static cudnnStatus_t run_bwd_filter_mma(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    return fdnn_cuda_conv_bwd_filter_mma_run(h, p, a);
}
static const fdnn_conv_impl bwd_filter_mma = {"conv_bwd_filter__implicit_gemm_mma", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, 1,
                                              CUDNN_TENSOR_OP_MATH, bwd_filter_mma_ok, fdnn_cuda_conv_bwd_filter_mma_workspace,
                                              run_bwd_filter_mma};
static const fdnn_conv_impl bwd_filter_mma_tf32 = {"conv_bwd_filter__implicit_gemm_mma_tf32", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, 1,
                                                   CUDNN_TENSOR_OP_MATH, bwd_filter_mma_tf32_ok, fdnn_cuda_conv_bwd_filter_mma_workspace,
                                                   run_bwd_filter_mma};
static const fdnn_conv_impl fwd_tc = {"conv_fwd__implicit_gemm_tc", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1,
                                      CUDNN_TENSOR_OP_MATH, tc_ok, no_workspace, run_tc};
static const fdnn_conv_impl fwd_tf32 = {"conv_fwd__implicit_gemm_tf32", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1,
                                        CUDNN_TENSOR_OP_MATH, tf32_ok, no_workspace, run_tc};
/* FLOAT FMA implicit GEMM (conv_fwd_f32.cu): ahead of im2col + cuBLAS on the 3x3-type problems
 * with at most 128 output channels, where it is about twice as fast on the H200 */
static const fdnn_conv_impl fwd_f32 = {"conv_fwd__implicit_gemm_f32", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1, CUDNN_FMA_MATH,
                                       fdnn_cuda_conv_fwd_f32_applicable, fdnn_cuda_conv_fwd_f32_workspace, fdnn_cuda_conv_fwd_f32_run};
/* FLOAT FMA split-K implicit GEMM backward filter (conv_bwd_filter_f32.cu): ahead of im2col +
 * cuBLAS for every filter larger than 1x1 */
static const fdnn_conv_impl bwd_filter_f32 = {"conv_bwd_filter__implicit_gemm_f32", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, 1,
                                              CUDNN_FMA_MATH, fdnn_cuda_conv_bwd_filter_f32_applicable,
                                              fdnn_cuda_conv_bwd_filter_f32_workspace, fdnn_cuda_conv_bwd_filter_f32_run};
static const fdnn_conv_impl fwd_simt = {"conv_fwd__implicit_gemm_simt", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1,
                                        CUDNN_FMA_MATH, simt_ok, no_workspace, run_simt};
static const fdnn_conv_impl fwd_simt_lowp = {"conv_fwd__implicit_gemm_simt_lowp", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                             1, CUDNN_DEFAULT_MATH, simt_lowp_ok, no_workspace, run_simt};
static const fdnn_conv_impl fwd_direct = {"conv_fwd__direct", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 1, CUDNN_FMA_MATH,
                                          direct_ok, no_workspace, run_direct};
static const fdnn_conv_impl fwd_direct_lowp = {"conv_fwd__direct_lowp", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 1,
                                               CUDNN_DEFAULT_MATH, direct_lowp_ok, no_workspace, run_direct};
static const fdnn_conv_impl bwd_data_direct = {"conv_bwd_data__direct", CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, 1, CUDNN_FMA_MATH,
                                               direct_ok, no_workspace, run_direct};
static const fdnn_conv_impl bwd_data_direct_lowp = {"conv_bwd_data__direct_lowp", CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, 1,
                                                    CUDNN_DEFAULT_MATH, direct_lowp_ok, no_workspace, run_direct};
static const fdnn_conv_impl bwd_filter_direct = {"conv_bwd_filter__direct", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, 1,
                                                 CUDNN_FMA_MATH, direct_ok, no_workspace, run_direct};
static const fdnn_conv_impl bwd_filter_direct_lowp = {"conv_bwd_filter__direct_lowp", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, 1,
                                                      CUDNN_DEFAULT_MATH, direct_lowp_ok, no_workspace, run_direct};

static const fdnn_conv_impl bwd_data_simt = {"conv_bwd_data__implicit_gemm_simt", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1,
                                             CUDNN_FMA_MATH, bwd_simt_ok, no_workspace, run_bwd_simt};
static const fdnn_conv_impl bwd_data_simt_lowp = {"conv_bwd_data__implicit_gemm_simt_lowp", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1,
                                                  CUDNN_DEFAULT_MATH, bwd_simt_lowp_ok, no_workspace, run_bwd_simt};
static const fdnn_conv_impl bwd_filter_simt = {"conv_bwd_filter__implicit_gemm_simt", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, 1,
                                               CUDNN_FMA_MATH, bwd_simt_ok, bwd_simt_workspace, run_bwd_simt};
static const fdnn_conv_impl bwd_filter_simt_lowp = {"conv_bwd_filter__implicit_gemm_simt_lowp", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1,
                                                    1, CUDNN_DEFAULT_MATH, bwd_simt_lowp_ok, bwd_simt_workspace, run_bwd_simt};

/* Depthwise kernels (conv_depthwise.cu): first in every list for groups == C problems (one input
 * channel per group, K = m*C), which the tiled GEMMs refuse and the direct kernels run slowly.
 * They share the direct kernels' algorithm enums, so a forced IMPLICIT_GEMM / ALGO_0 on a
 * depthwise problem runs them and the direct kernels stay reachable for everything else. */
static int depthwise_ok(const fdnn_conv_problem *p, int lowp, char *why, size_t why_n)
{
    if (p->x_vect > 1 || p->y_vect > 1 || p->w_vect > 1)
        return fdnn_conv_why(why, why_n, "vectorised NCHW_VECT_C layouts are not handled by the depthwise kernels");
    if (p->g != p->c || p->c < 1 || p->k % p->c)
        return fdnn_conv_why(why, why_n, "not depthwise: needs groups == C and K a multiple of C (got C=%d K=%d groups=%d)", p->c, p->k, p->g);
    if (p->nb_spatial != 2 && !(p->nb_spatial == 3 && p->in[0] == 1 && p->flt[0] == 1 && p->out[0] == 1 && p->pad[0] == 0))
        return fdnn_conv_why(why, why_n, "the depthwise kernels are 2-D (3-D only with D = T = 1 and no D padding; got %d spatial dims, D=%d T=%d)",
                    p->nb_spatial, p->in[0], p->flt[0]);
    if ((long long)p->flt[1] * p->flt[2] > 9LL * 65535)
        return fdnn_conv_why(why, why_n, "a %d x %d filter is too large for the depthwise kernels", p->flt[1], p->flt[2]);
    const int same = p->xtype == p->wtype && p->xtype == p->ytype;
    if (lowp ? (same && is_lowp(p->xtype)) : (same && (p->xtype == CUDNN_DATA_FLOAT || p->xtype == CUDNN_DATA_DOUBLE))) return 1;
    return fdnn_conv_why(why, why_n, "this depthwise entry handles %s (got x=%s w=%s y=%s)", lowp ? "HALF and BFLOAT16" : "FLOAT and DOUBLE",
                fdnn_dtype_name(p->xtype), fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
}
static int dw_ok(const fdnn_conv_problem *p, char *why, size_t why_n) { return depthwise_ok(p, 0, why, why_n); }
static int dw_lowp_ok(const fdnn_conv_problem *p, char *why, size_t why_n) { return depthwise_ok(p, 1, why, why_n); }
static cudnnStatus_t run_dw(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    return fdnn_cuda_conv_depthwise_run(h, p, a);
}
static const fdnn_conv_impl fwd_dw = {"conv_fwd__depthwise", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 1, CUDNN_FMA_MATH, dw_ok,
                                      fdnn_cuda_conv_depthwise_workspace, run_dw};
static const fdnn_conv_impl fwd_dw_lowp = {"conv_fwd__depthwise_lowp", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 1, CUDNN_DEFAULT_MATH,
                                           dw_lowp_ok, fdnn_cuda_conv_depthwise_workspace, run_dw};
static const fdnn_conv_impl bwd_data_dw = {"conv_bwd_data__depthwise", CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, 1, CUDNN_FMA_MATH, dw_ok,
                                           fdnn_cuda_conv_depthwise_workspace, run_dw};
static const fdnn_conv_impl bwd_data_dw_lowp = {"conv_bwd_data__depthwise_lowp", CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, 1,
                                                CUDNN_DEFAULT_MATH, dw_lowp_ok, fdnn_cuda_conv_depthwise_workspace, run_dw};
static const fdnn_conv_impl bwd_filter_dw = {"conv_bwd_filter__depthwise", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, 1, CUDNN_FMA_MATH,
                                             dw_ok, fdnn_cuda_conv_depthwise_workspace, run_dw};
static const fdnn_conv_impl bwd_filter_dw_lowp = {"conv_bwd_filter__depthwise_lowp", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, 1,
                                                  CUDNN_DEFAULT_MATH, dw_lowp_ok, fdnn_cuda_conv_depthwise_workspace, run_dw};

/* cuBLAS explicit GEMM (conv_gemm_cublas.cu): first, for the dense channels-last problems it
 * handles. The TENSOR_OP entry serves HALF/BFLOAT16 and TF32 FLOAT, the FMA one pure FP32. */
static int gemm_tc_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->xtype == CUDNN_DATA_FLOAT && p->math_type != CUDNN_TENSOR_OP_MATH && p->math_type != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
        return fdnn_conv_why(why, why_n, "FLOAT uses TF32 tensor cores only with math type TENSOR_OP(_ALLOW_CONVERSION); see the FMA entry");
    return fdnn_cuda_conv_gemm_applicable(p, why, why_n);
}
static int gemm_fp32_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->xtype != CUDNN_DATA_FLOAT || p->math_type == CUDNN_TENSOR_OP_MATH || p->math_type == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
        return fdnn_conv_why(why, why_n, "this entry is pure FP32 (FLOAT without TENSOR_OP math)");
    return fdnn_cuda_conv_gemm_applicable(p, why, why_n);
}
/* backward data of stride-1 problems as a forward GEMM with a transformed filter: ahead of the
 * col2im entries (which keep strides > 1 and padding beyond dilation*(filter-1)) */
static int fwd_gemm_tc_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->xtype == CUDNN_DATA_FLOAT && p->math_type != CUDNN_TENSOR_OP_MATH && p->math_type != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
        return fdnn_conv_why(why, why_n, "FLOAT uses TF32 tensor cores only with math type TENSOR_OP(_ALLOW_CONVERSION); see the FMA entry");
    return fdnn_cuda_conv_bwd_data_fwd_gemm_applicable(p, why, why_n);
}
static int fwd_gemm_fp32_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->xtype != CUDNN_DATA_FLOAT || p->math_type == CUDNN_TENSOR_OP_MATH || p->math_type == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
        return fdnn_conv_why(why, why_n, "this entry is pure FP32 (FLOAT without TENSOR_OP math)");
    return fdnn_cuda_conv_bwd_data_fwd_gemm_applicable(p, why, why_n);
}
static cudnnStatus_t run_bwd_data_fwd_gemm(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    return fdnn_cuda_conv_bwd_data_fwd_gemm_run(h, p, a);
}
static cudnnStatus_t run_gemm(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    return fdnn_cuda_conv_gemm_run(h, p, a);
}
static const fdnn_conv_impl fwd_gemm_tc = {"conv_fwd__im2col_cublas", CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 1, CUDNN_TENSOR_OP_MATH,
                                           gemm_tc_ok, fdnn_cuda_conv_gemm_workspace, run_gemm};
static const fdnn_conv_impl fwd_gemm_fp32 = {"conv_fwd__im2col_cublas_fp32", CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 1, CUDNN_FMA_MATH,
                                             gemm_fp32_ok, fdnn_cuda_conv_gemm_workspace, run_gemm};
static const fdnn_conv_impl bwd_data_fwd_gemm_tc = {"conv_bwd_data__fwd_gemm_cublas", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1,
                                                    CUDNN_TENSOR_OP_MATH, fwd_gemm_tc_ok, fdnn_cuda_conv_bwd_data_fwd_gemm_workspace,
                                                    run_bwd_data_fwd_gemm};
static const fdnn_conv_impl bwd_data_fwd_gemm_fp32 = {"conv_bwd_data__fwd_gemm_cublas_fp32", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1,
                                                      CUDNN_FMA_MATH, fwd_gemm_fp32_ok, fdnn_cuda_conv_bwd_data_fwd_gemm_workspace,
                                                      run_bwd_data_fwd_gemm};
static const fdnn_conv_impl bwd_data_gemm_tc = {"conv_bwd_data__cublas_col2im", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1,
                                                CUDNN_TENSOR_OP_MATH, gemm_tc_ok, fdnn_cuda_conv_gemm_workspace, run_gemm};
static const fdnn_conv_impl bwd_data_gemm_fp32 = {"conv_bwd_data__cublas_col2im_fp32", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1,
                                                  CUDNN_FMA_MATH, gemm_fp32_ok, fdnn_cuda_conv_gemm_workspace, run_gemm};
static const fdnn_conv_impl bwd_filter_gemm_tc = {"conv_bwd_filter__im2col_cublas", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, 1,
                                                  CUDNN_TENSOR_OP_MATH, gemm_tc_ok, fdnn_cuda_conv_gemm_workspace, run_gemm};
static const fdnn_conv_impl bwd_filter_gemm_fp32 = {"conv_bwd_filter__im2col_cublas_fp32", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, 1,
                                                    CUDNN_FMA_MATH, gemm_fp32_ok, fdnn_cuda_conv_gemm_workspace, run_gemm};

static const fdnn_conv_impl *const fwd_list[] = {&fwd_int8_vect, &fwd_int8_vect_ig, &fwd_dw, &fwd_dw_lowp, &fwd_mma, &fwd_mma_tf32, &fwd_f32, &fwd_gemm_tc, &fwd_gemm_fp32, &fwd_tc, &fwd_tf32, &fwd_simt, &fwd_simt_lowp, &fwd_direct, &fwd_direct_lowp, NULL};
static const fdnn_conv_impl *const bwd_data_list[] = {&bwd_data_dw, &bwd_data_dw_lowp, &bwd_data_fwd_gemm_tc, &bwd_data_fwd_gemm_fp32, &bwd_data_gemm_tc, &bwd_data_gemm_fp32, &bwd_data_simt, &bwd_data_simt_lowp, &bwd_data_direct, &bwd_data_direct_lowp, NULL};
static const fdnn_conv_impl *const bwd_filter_list[] = {&bwd_filter_dw, &bwd_filter_dw_lowp, &bwd_filter_mma, &bwd_filter_mma_tf32, &bwd_filter_f32, &bwd_filter_gemm_tc, &bwd_filter_gemm_fp32, &bwd_filter_simt, &bwd_filter_simt_lowp, &bwd_filter_direct, &bwd_filter_direct_lowp, NULL};

const fdnn_conv_impl *const *fdnn_cuda_conv_impls(fdnn_conv_dir dir)
{
    switch (dir) {
    case FDNN_CONV_FWD: return fwd_list;
    case FDNN_CONV_BWD_DATA: return bwd_data_list;
    case FDNN_CONV_BWD_FILTER: return bwd_filter_list;
    }
    return NULL;
}
