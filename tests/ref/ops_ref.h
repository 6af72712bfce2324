/* Independent reference for the tensor ops (add/op/reduce tensor, activation, softmax,
 * pooling, LRN, divisive normalisation). Plain loops over packed logical-order arrays
 * (N, C, spatial row-major) of doubles. Enum values are restated here, not included. */
#ifndef FDNN_TEST_OPS_REF_H
#define FDNN_TEST_OPS_REF_H
#include <stdint.h>

enum { RA_SIGMOID = 0, RA_RELU = 1, RA_TANH = 2, RA_CLIPPED = 3, RA_ELU = 4, RA_IDENTITY = 5, RA_SWISH = 6 };
enum { RS_FAST = 0, RS_ACCURATE = 1, RS_LOG = 2 };
enum { RS_INSTANCE = 0, RS_CHANNEL = 1 };
enum { RP_MAX = 0, RP_AVG_INCL = 1, RP_AVG_EXCL = 2, RP_MAX_DET = 3 };
enum { RO_ADD = 0, RO_MUL = 1, RO_MIN = 2, RO_MAX = 3, RO_SQRT = 4, RO_NOT = 5 };
enum { RR_ADD = 0, RR_MUL = 1, RR_MIN = 2, RR_MAX = 3, RR_AMAX = 4, RR_AVG = 5, RR_NORM1 = 6, RR_NORM2 = 7, RR_MUL_NO_ZEROS = 8 };

/* c[i] = a[broadcast of i]; a's dims each equal c's or 1 */
void ref_broadcast(int nd, const int *adim, const int *cdim, const double *a, double *c);
double ref_op(int op, int propagate_nan, double a, double b);

double ref_act(int mode, double coef, double swish_beta, int propagate_nan, double x);
double ref_act_grad(int mode, double coef, double swish_beta, double x); /* d act / dx */

/* S = product of spatial dims */
void ref_softmax_fwd(int algo, int mode, int N, int C, int64_t S, const double *x, double *y);
void ref_softmax_bwd(int algo, int mode, int N, int C, int64_t S, const double *y, const double *dy, double *dx);
/* The same from its closed form, linear in the row length (for long rows): dx = y*(dy - sum(dy*y)), LOG
 * dx = dy - exp(y)*sum(dy); *s (NULL: not wanted) each group's sum, in group order */
void ref_softmax_bwd_closed(int algo, int mode, int N, int C, int64_t S, const double *y, const double *dy, double *dx, double *s);

/* ns spatial dims (2 or 3); planes = N*C */
void ref_pool_out_dims(int ns, const int *in, const int *win, const int *pad, const int *str, int *out);
void ref_pool_fwd(int mode, int propagate_nan, int ns, int64_t planes, const int *in, const int *out, const int *win, const int *pad,
                  const int *str, const double *x, double *y);
void ref_pool_bwd(int mode, int ns, int64_t planes, const int *in, const int *out, const int *win, const int *pad, const int *str,
                  const double *x, const double *dy, double *dx);

/* LRN across channels: y = x / (k + alpha/n * sum_{c-(n-1)/2 .. c+n-1-(n-1)/2} x^2)^beta */
void ref_lrn_fwd(int N, int C, int64_t S, unsigned n, double alpha, double beta, double k, const double *x, double *y);
/* Divisive normalisation as NVIDIA cuDNN computes it (measured on an H200, cuDNN 9.19; see docs/ops.md):
 * y[o] = x[o] / (k + alpha/n^ns * sum_{q in spatial window of o, clipped} (x[q] - m[o])^2)^beta, m NULL = 0 */
void ref_divnorm_fwd(int ns, int64_t planes, const int *sp, unsigned n, double alpha, double beta, double k, const double *x,
                     const double *m, double *y);

/* Reduce a (dims adim) to c (dims cdim, each 1 or equal). Writes values and, for MIN/MAX/AMAX,
 * the flattened index (within the reduced dims, row-major) of the first extreme element. */
void ref_reduce(int op, int propagate_nan, int nd, const int *adim, const int *cdim, const double *a, double *c, int64_t *idx);


/* Tensor-transform FOLD of pad(src) (see docs/ops.md), written as a scatter from every padded
 * source position; dest dims ddim must be the folded dims; unhit dest elements are zero. */
void ref_fold(int nb, const int *sdim, const int *pad_before, const int *pad_after, const unsigned *fold, const double *src, const int *ddim,
              double *dst);
#endif
