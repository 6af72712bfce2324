/* Fast paths of the CPU tensor ops that work straight on FLOAT tensors, without the packed double
 * copies of ops_common.h. Each returns 1 when it did the call, 0 when the tensors are outside what it
 * serves (another type, strides it does not take) and the caller must take its general path. */
#ifndef FDNN_CPU_OPS_FAST_H
#define FDNN_CPU_OPS_FAST_H
#include "ops_common.h"

/* The fast paths' loop functions are built twice on x86-64 (GCC), for AVX2 and for the baseline, the loader
 * picking one by the CPU's features (an ifunc) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FDNN_CLONES __attribute__((target_clones("avx2", "default")))
/* ... and for AVX-512F too (16 lanes, 32 registers, FMA contraction: results may differ from the AVX2 build's
 * in the last bits) */
#define FDNN_CLONES512 __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FDNN_CLONES
#define FDNN_CLONES512
#endif

/* softmax (src/cpu/softmax_cpu.c): tensors seen by fdnn_ops_ncs; INSTANCE also needs every tensor dense
 * per image and in one layout */
int fdnn_cpu_softmax_fwd_f32(int algo, int mode, double a, const fdnn_tensor *xd, const void *x, double b, const fdnn_tensor *yd, void *y);
int fdnn_cpu_softmax_bwd_f32(int algo, int mode, double a, const fdnn_tensor *yd, const void *y, const fdnn_tensor *dyd, const void *dy,
                             double b, const fdnn_tensor *dxd, void *dx);

/* pooling (src/cpu/pool_cpu.c): FLOAT tensors of any strides whose rank matches the descriptor. Backward
 * sets *alloc_failed (and returns 1, dx untouched) when its per-thread scratch or gradient buffer cannot be had;
 * direct_only: return 0 where only the gradient-buffer path would take the tensors (FREEDNN_CPU_FAST_PATH=2). */
struct cudnnPoolingStruct;
int fdnn_cpu_pool_fwd_f32(const struct cudnnPoolingStruct *d, double a, const fdnn_tensor *xd, const void *x, double b, const fdnn_tensor *yd,
                          void *y);
int fdnn_cpu_pool_bwd_f32(const struct cudnnPoolingStruct *d, double a, const fdnn_tensor *dyd, const void *dy, const fdnn_tensor *xd,
                          const void *x, double b, const fdnn_tensor *dxd, void *dx, int direct_only, int *alloc_failed);

/* whole-tensor ops (src/cpu/tensor_fast.c) on FLOAT tensors. fdnn_cpu_op_f32: c = op(a1*a, a2*b) + beta*c (c not
 * read when beta == 0), op a cudnnOpTensorOp_t as cudnnOpTensor computes it or FDNN_OP_COPY (c = a1*a + beta*c,
 * cudnnAddTensor's), a and b (bd NULL: none) broadcast to c by size-1 dims: the tensors dense in one layout, or
 * all NCHW-like or all NHWC-like (fdnn_ops_ncs) with each of N, C and the spatial dims (together) of a and b c's
 * or 1; an input may be c itself in c's layout, else must not overlap it. fdnn_cpu_transform_f32: y = a*x + beta*y
 * (equal dims), the layouts fdnn_cpu_op_f32 takes or one NCHW-like and the other NHWC-like, y not overlapping x.
 * fdnn_cpu_set_f32: every element of a dense y = v. */
#define FDNN_OP_COPY (-1)
int fdnn_cpu_op_f32(int op, int prop, double a1, const fdnn_tensor *ad, const void *a, double a2, const fdnn_tensor *bd, const void *b, double beta,
                    const fdnn_tensor *cd, void *c);
int fdnn_cpu_transform_f32(double a, const fdnn_tensor *xd, const void *x, double b, const fdnn_tensor *yd, void *y);
int fdnn_cpu_set_f32(const fdnn_tensor *yd, void *y, double v);
/* RELU over n dense floats (src/cpu/tensor_fast.c): y[i] = a * v[i] where gate[i] > 0, else a * +0 (forward: v =
 * gate = x; backward: v = dy, gate = x). y may be v or gate itself. */
void fdnn_cpu_relu_f32(const float *v, const float *gate, float *y, int64_t n, float a);

/* cudnnActivationForward / Backward (src/cpu/act_fast.c) on FLOAT tensors dense in one layout (x, y, dy, dx all
 * fdnn_ops_flat), every mode but IDENTITY, in float lanes: RELU NOT_PROPAGATE_NAN with beta 0 through
 * fdnn_cpu_relu_f32, the rest within a few ulps of src/api/activation.c's double path (bounds in act_fast.c), NaN,
 * infinities and signed zeros as it gives them. y not read when beta == 0; in place (x == y, dy == dx) allowed. */
int fdnn_cpu_act_fwd_f32(int mode, double coef, double sb, int prop, double a, const fdnn_tensor *xd, const void *x, double b,
                         const fdnn_tensor *yd, void *y);
int fdnn_cpu_act_bwd_f32(int mode, double coef, double sb, double a, const fdnn_tensor *yd, const void *y, const fdnn_tensor *dyd, const void *dy,
                         const fdnn_tensor *xd, const void *x, double b, const fdnn_tensor *dxd, void *dx);

/* cudnnReduceTensor (src/cpu/reduce_fast.c) on a dense (any dim order, no gaps) FLOAT A into a dense FLOAT C not
 * overlapping it, compute type FLOAT: op a cudnnReduceTensorOp_t, prop PROPAGATE_NAN, c = alpha*reduce(a) + beta*c
 * (c not read when beta == 0), idx (NULL: none) the MIN/MAX/AMAX flattened indices in C's packed order, all as
 * the general path in src/api/reduce.c computes them */
int fdnn_cpu_reduce_f32(int op, int prop, double alpha, const fdnn_tensor *ad, const void *a, double beta, const fdnn_tensor *cd, void *c,
                        int32_t *idx);

/* LRN cross-channel and divisive normalization (src/cpu/lrn_fast.c), forward and backward: FLOAT tensors seen by
 * fdnn_ops_ncs (each with its own strides); an output may be an input itself (same pointer and view) but must
 * not otherwise overlap one; dmeans (NULL: not wanted) must not overlap dx. As src/api/lrn.c's general path. */
struct cudnnLRNStruct;
int fdnn_cpu_lrn_fwd_f32(const struct cudnnLRNStruct *d, double a, const fdnn_tensor *xd, const void *x, double b, const fdnn_tensor *yd, void *y);
int fdnn_cpu_lrn_bwd_f32(const struct cudnnLRNStruct *d, double a, const fdnn_tensor *dyd, const void *dy, const fdnn_tensor *xd, const void *x,
                         double b, const fdnn_tensor *dxd, void *dx);
int fdnn_cpu_divnorm_fwd_f32(const struct cudnnLRNStruct *d, double a, const fdnn_tensor *xd, const void *x, const void *means, double b,
                             const fdnn_tensor *yd, void *y);
int fdnn_cpu_divnorm_bwd_f32(const struct cudnnLRNStruct *d, double a, const fdnn_tensor *xd, const void *x, const void *means, const void *dy,
                             double b, const fdnn_tensor *dxd, void *dx, void *dmeans);

/* The spatial transformer (src/cpu/stf_fast.c) on FLOAT: the grid generator, and the sampler with x, y, dx, dy
 * seen by fdnn_ops_ncs, no output overlapping an input or another output. As src/cpu/spatial_tf_cpu.c computes. */
struct cudnnSpatialTransformerStruct;
int fdnn_cpu_stf_grid_fwd_f32(const struct cudnnSpatialTransformerStruct *st, const void *theta, void *grid);
int fdnn_cpu_stf_grid_bwd_f32(const struct cudnnSpatialTransformerStruct *st, const void *dgrid, void *dtheta);
int fdnn_cpu_stf_sampler_fwd_f32(const struct cudnnSpatialTransformerStruct *st, double a, const fdnn_tensor *xd, const void *x, const void *grid,
                                 double b, const fdnn_tensor *yd, void *y);
int fdnn_cpu_stf_sampler_bwd_f32(const struct cudnnSpatialTransformerStruct *st, double a, const fdnn_tensor *xd, const void *x, double b,
                                 const fdnn_tensor *dxd, void *dx, double a_dg, const fdnn_tensor *dyd, const void *dy, const void *grid,
                                 double b_dg, void *dgrid);

/* FREEDNN_CPU_FAST_PATH, read at every call by the activation, softmax, LRN, divisive-normalization,
 * spatial-transformer and pooling backward APIs: 0
 * turns their FLOAT fast paths off (the general path runs), 2 makes them required (a call they do not take
 * fails with CUDNN_STATUS_NOT_SUPPORTED, so that a test can tell which path ran); unset or anything else: on.
 * fdnn_ops_fast_missed(mode) is the status after a fast path declined: that failure under 2, else SUCCESS. */
int fdnn_ops_fast_mode(void);
cudnnStatus_t fdnn_ops_fast_missed(int mode);
#endif
