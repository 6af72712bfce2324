/* Convolution problem description and implementation lists.
 * The API layer (src/api/conv_api.c) turns descriptors into an fdnn_conv_problem; each backend
 * registers an ordered list of implementations; the first applicable one wins, and the
 * Find / Get_v7 / workspace queries read the same lists. Relies on src/core/fdnn.h. */
#ifndef FDNN_DISPATCH_CONV_H
#define FDNN_DISPATCH_CONV_H

#include "../core/fdnn.h"

typedef enum { FDNN_CONV_FWD = 0, FDNN_CONV_BWD_DATA = 1, FDNN_CONV_BWD_FILTER = 2 } fdnn_conv_dir;

/* Normalised convolution: always described as x (input activations), w (filter), y (output
 * activations) regardless of direction; dims padded to 3 spatial dims (D, H, W) with unit
 * sizes for 2-D problems (the D axis then has stride 0 in the strides arrays below). */
/* fdnn_conv_build_problem zeroes the padding bytes: the plan cache compares problems bytewise. */
typedef struct fdnn_conv_problem {
    fdnn_conv_dir dir;
    int nb_spatial;                 /* 2 or 3 (as described by the caller) */
    int n, c, k, g;                 /* batch, input channels, output channels, groups */
    int in[3], out[3], flt[3];      /* D, H, W / P extents / T, R, S filter extents */
    int pad[3], stride[3], dil[3];
    int cross_correlation;          /* 1: CUDNN_CROSS_CORRELATION, 0: CUDNN_CONVOLUTION (flip) */
    /* strides in elements, order N, C, D, H, W; for NCHW_VECT_C the C stride is that of the
     * vector and vect > 1 */
    int64_t xs[5], ys[5];
    int x_vect, y_vect;
    int w_nhwc;                     /* filter stored K,R,S,C (NHWC) instead of K,C,R,S */
    int w_vect;
    int64_t ws[5];                  /* filter strides K, C(per group), T, R, S (vector units like xs) */
    cudnnDataType_t xtype, wtype, ytype, compute_type;
    cudnnMathType_t math_type;
} fdnn_conv_problem;

/* Buffers of one call: x, w, y as in the problem; which one is written depends on dir
 * (FWD writes y, BWD_DATA writes x, BWD_FILTER writes w). alpha/beta already converted. */
typedef struct fdnn_conv_args {
    const void *x, *w, *y;
    void *out;
    void *workspace;
    size_t workspace_size;
    double alpha, beta;
} fdnn_conv_args;

typedef struct fdnn_conv_impl {
    const char *name;       /* stable name, e.g. "conv_fwd__im2col_gemm" */
    int algo;               /* the cuDNN algorithm enum value of its direction it implements */
    int deterministic;      /* 1 if bitwise reproducible */
    cudnnMathType_t math;   /* math actually used: FMA for plain fp32, TENSOR_OP for tensor cores */
    /* 1 if it can run p; else 0 and a reason in why */
    int (*applicable)(const fdnn_conv_problem *p, char *why, size_t why_n);
    size_t (*workspace)(const fdnn_conv_problem *p);
    cudnnStatus_t (*run)(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a);
} fdnn_conv_impl;

/* The ordered implementation list of a backend and direction (NULL-terminated). Each backend
 * owns its list: src/cpu/conv_list_cpu.c defines fdnn_cpu_conv_impls, src/cuda/conv_list_cuda.c
 * (only built with CUDA) defines fdnn_cuda_conv_impls; fdnn_conv_impls picks by backend. */
const fdnn_conv_impl *const *fdnn_conv_impls(int backend, fdnn_conv_dir dir);
const fdnn_conv_impl *const *fdnn_cpu_conv_impls(fdnn_conv_dir dir);
#ifdef FDNN_HAVE_CUDA
const fdnn_conv_impl *const *fdnn_cuda_conv_impls(fdnn_conv_dir dir);
/* impl->run on the handle's stream; a call repeated with the same problem, implementation,
 * buffers, scalars, stream and GEMM workspace cap is replayed from a CUDA graph captured on its
 * second occurrence (src/cuda/conv_replay.c). */
cudnnStatus_t fdnn_cuda_conv_run_replayed(cudnnHandle_t h, const struct fdnn_conv_problem *p, const struct fdnn_conv_impl *impl,
                                          const struct fdnn_conv_args *a);
#endif

/* Pick the implementation for a forced cuDNN algorithm enum: SUCCESS and *out, or
 * NOT_SUPPORTED with a message naming the algorithms this backend implements. Successful
 * choices are cached on the handle (keyed by the problem's bytes and algo), so a repeated
 * call skips the list walk and the applicable() checks. */
cudnnStatus_t fdnn_conv_select(cudnnHandle_t h, const fdnn_conv_problem *p, int algo,
                               const fdnn_conv_impl **out);

/* Runs impl for one API call. On the CUDA backend a call repeated with the same problem,
 * buffers, scalars and stream replays a CUDA graph captured from it (src/cuda/conv_replay.c),
 * which costs less host time than its launches; elsewhere this is impl->run. */
cudnnStatus_t fdnn_conv_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_impl *impl, const fdnn_conv_args *a);

/* Upper bound of a direction's algorithm count (cuDNN 8.9 has at most 8). */
#define FDNN_CONV_MAX_ALGOS 16

/* The heuristic order of Get*_v7/Find: in list order, the first applicable implementation
 * of each algorithm < algo_count; writes them to out (room for FDNN_CONV_MAX_ALGOS) and
 * returns their count. Cached on the handle like fdnn_conv_select. */
int fdnn_conv_heuristic_impls(cudnnHandle_t h, const fdnn_conv_problem *p, int algo_count, const fdnn_conv_impl **out);

/* Output dims of a forward convolution (validates the descriptor trio); src/api/conv_desc.c */
cudnnStatus_t fdnn_conv_output_dims(const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *x,
                                    const struct cudnnFilterStruct *w, int nb, int *out);

/* Validates the descriptors of one direction (the roles: x input activations / dx, w filter /
 * dw, y output activations / dy) and fills *p. BAD_PARAM for malformed combinations (dims not
 * matching the output-dim formula, differing x/w types, overlapping strides of the written
 * tensor), NOT_SUPPORTED for valid but unsupported ones (dtype configuration, 1-D/4-D+). */
cudnnStatus_t fdnn_conv_build_problem(fdnn_conv_dir dir, const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                                      const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *y,
                                      fdnn_conv_problem *p);

/* 1 if a written tensor's strides let two index tuples share one memory element. */
int fdnn_tensor_overlaps(const struct cudnnTensorStruct *t);

/* Scalar-element offsets (index for fdnn_load/fdnn_store) of x/y elements and filter taps.
 * For NCHW_VECT_C data the vector is innermost: offset = vector offset * vect + c % vect. */
static inline int64_t fdnn_conv_off(const int64_t *s, int vect, int n, int c, int d, int hh, int ww)
{
    if (vect == 1) return n * s[0] + c * s[1] + d * s[2] + hh * s[3] + ww * s[4];
    return (n * s[0] + (c / vect) * s[1] + d * s[2] + hh * s[3] + ww * s[4]) * vect + c % vect;
}

/* Flop count of the direct convolution (2*N*K*C/G*prod(out)*prod(flt)). */
double fdnn_conv_flops(const fdnn_conv_problem *p);

#endif
