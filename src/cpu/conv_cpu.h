/* CPU convolution implementations (one file each, listed in conv_list_cpu.c), the CPU GEMM
 * and the CPU-only helpers behind cudnnConvolutionBiasActivationForward, BackwardBias and
 * Im2Col. */
#ifndef FDNN_CPU_CONV_H
#define FDNN_CPU_CONV_H
#include "../dispatch/conv.h"

extern const fdnn_conv_impl fdnn_conv_fwd__direct_ref, fdnn_conv_bwd_data__direct_ref, fdnn_conv_bwd_filter__direct_ref;
extern const fdnn_conv_impl fdnn_conv_fwd__im2col_gemm, fdnn_conv_bwd_data__im2col_gemm, fdnn_conv_bwd_filter__im2col_gemm;

/* Helpers shared by the GEMM-based implementations (conv_gemm_common.c). */
/* out[off] = alpha*acc + beta*out[off] in double, rounded once to t; beta == 0 does not read
 * out (the output epilogue of the direct reference kernels). */
static inline void fdnn_cpu_conv_blend(const fdnn_conv_args *a, cudnnDataType_t t, int64_t off, double acc)
{
    double v = a->alpha * acc;
    if (a->beta != 0) v += a->beta * fdnn_load(a->out, t, off);
    fdnn_store(a->out, t, off, v);
}

int fdnn_cpu_conv_gemm_applicable(const fdnn_conv_problem *p, char *why, size_t n);

/* 1 if the convolution is 1x1, stride 1, unpadded, so x itself is the column matrix */
int fdnn_cpu_conv_is_unit(const fdnn_conv_problem *p);
/* The shape every depthwise kernel set needs (FLOAT, groups == C == K > 1, 2-D, not vectorised);
 * 0 with the reason in why, naming the "who" kernels (conv_depthwise_nhwc.c) */
int fdnn_dw_shape_ok(const fdnn_conv_problem *p, const char *who, char *why, size_t n);
/* 1 if the spatial dims of a tensor with strides s are packed (D,H,W contiguous, W innermost) */
int fdnn_cpu_spatial_packed(const fdnn_conv_problem *p, const int64_t *s, const int *dims);
/* Column matrix of image n, group g: rows (c, t, r, s) of the group's channels, columns the
 * output positions; taps are flipped for CONVOLUTION mode. Any x strides and dtype (-> T). */
void fdnn_cpu_im2col_f(const fdnn_conv_problem *p, const float *x, int n, int g, float *col);
void fdnn_cpu_im2col_d(const fdnn_conv_problem *p, const double *x, int n, int g, double *col);
size_t fdnn_cpu_col_elems(const fdnn_conv_problem *p);

/* AVX-512 conversions of contiguous runs (cvt_avx512.c; only with FDNN_HAVE_AVX512 and after
 * fdnn_cpu_has_avx512()): HALF (half != 0) or BFLOAT16 to float, and float to them (nearest even) */
void fdnn_avx512_widen16(const uint16_t *s, int half, size_t n, float *d);
void fdnn_avx512_narrow16(const float *s, int half, size_t n, uint16_t *d);
/* The same with AVX2 + F16C (cvt_avx2.c; FDNN_HAVE_AVX2, after fdnn_cpu_has_avx2()) */
void fdnn_avx2_widen16(const uint16_t *s, int half, size_t n, float *d);
void fdnn_avx2_narrow16(const float *s, int half, size_t n, uint16_t *d);

/* Fused epilogue of cudnnConvolutionBiasActivationForward on the CPU: runs impl into a
 * private accumulator, then y = act(acc + alpha2*z + bias) (z may alias y). */
typedef struct fdnn_bias_act_args {
    double alpha1, alpha2;
    const void *z;
    int64_t zs[5];
    const void *bias;
    int64_t bias_stride; /* between channels */
    cudnnDataType_t btype;
    cudnnActivationMode_t mode;
    double coef;
    int propagate_nan;
} fdnn_bias_act_args;
cudnnStatus_t fdnn_cpu_conv_bias_act(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_impl *impl, const fdnn_conv_args *a,
                                     const fdnn_bias_act_args *e);

/* db[k] = alpha * sum over n and spatial of dy + beta * db[k] (strides in elements). */
void fdnn_cpu_conv_bwd_bias(cudnnDataType_t t, int n, int k, int sp, const int64_t *dys, const int *dims, const void *dy,
                            int64_t db_stride, void *db, double alpha, double beta);

/* cudnnIm2Col on the CPU: column buffer of type p->xtype, per image (C*T*R*S) x (P*Q). */
void fdnn_cpu_im2col_api(const fdnn_conv_problem *p, const void *x, void *col);

/* Row-major GEMM: C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C; beta == 0 never
 * reads C. OpenBLAS when built with FDNN_HAVE_CBLAS, else our own blocked OpenMP kernel. */
void fdnn_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                float beta, float *c, int64_t ldc);
void fdnn_dgemm(int trans_a, int trans_b, int m, int n, int k, double alpha, const double *a, int64_t lda, const double *b,
                int64_t ldb, double beta, double *c, int64_t ldc);
/* 1 when fdnn_sgemm runs on our streamed-B kernels instead of BLAS, because BLAS is absent or
 * runs kernels older than the CPU (gemm.c); the GEMM-or-direct choice (conv_gemm_pref.c) differs */
int fdnn_cpu_blas_weak(void);
/* OpenMP threads a parallel region would get (1 without OpenMP) */
int fdnn_cpu_threads(void);
/* our own kernel, always built (tests compare it against OpenBLAS) */
void fdnn_sgemm_own(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int64_t lda, const float *b,
                    int64_t ldb, float beta, float *c, int64_t ldc);
void fdnn_dgemm_own(int trans_a, int trans_b, int m, int n, int k, double alpha, const double *a, int64_t lda, const double *b,
                    int64_t ldb, double beta, double *c, int64_t ldc);
#endif
