/* Shared helpers of the CPU tensor ops (add/op/reduce/transform, activation, softmax,
 * pooling, LRN): every op gathers its strided inputs into packed logical-order (N, C, D,
 * H, W row-major) double arrays, computes in double, and blends the result into the
 * strided output as y = alpha*result + beta*y (y not read when beta == 0). */
#ifndef FDNN_CPU_OPS_COMMON_H
#define FDNN_CPU_OPS_COMMON_H
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "../core/fdnn.h"

typedef struct cudnnTensorStruct fdnn_tensor;

/* Element offset (in scalars of the tensor's type) of the logical index idx[nb_dims].
 * NCHW_VECT_C tensors count strides in vectors; the channel's lane is innermost. */
static inline int64_t fdnn_ops_offset(const fdnn_tensor *t, const int *idx)
{
    int64_t o = 0;
    if (t->vect > 1) {
        for (int i = 0; i < t->nb_dims; i++) o += (int64_t)(i == 1 ? idx[i] / t->vect : idx[i]) * t->stride[i];
        return o * t->vect + idx[1] % t->vect;
    }
    for (int i = 0; i < t->nb_dims; i++) o += (int64_t)idx[i] * t->stride[i];
    return o;
}

/* Logical linear index -> multi-index over dims[nd]. */
static inline void fdnn_ops_unravel(const int *dim, int nd, int64_t lin, int *idx)
{
    for (int i = nd - 1; i >= 0; i--) {
        idx[i] = (int)(lin % dim[i]);
        lin /= dim[i];
    }
}

/* 1 when the elements lie in logical order without gaps (row-major strides over the dims
 * longer than 1, no vector lanes): logical index i is then element offset i */
int fdnn_ops_packed(const fdnn_tensor *t);
/* 1 when the elements fill offsets [0, elements) exactly, in some order of the dims (NCHW, NHWC,
 * any permutation; no gaps, no vector lanes) */
int fdnn_ops_dense(const fdnn_tensor *t);
/* 1 when a and b (equal dims) are both dense with equal strides: an elementwise op may then run over
 * the raw offsets 0 .. elements-1 of both */
int fdnn_ops_flat(const fdnn_tensor *a, const fdnn_tensor *b);
/* A tensor seen as N x C x S, S the product of the spatial dims: element (n, c, s) at
 * n*sn + c*sc + s*ss. fdnn_ops_ncs fills it and returns 1 when the spatial dims collapse into one
 * stride (NCHW, NHWC, NCDHW, NDHWC, packed or with gaps between images or channels), else 0. */
typedef struct { int64_t n, c, s, sn, sc, ss; } fdnn_ncs;
int fdnn_ops_ncs(const fdnn_tensor *t, fdnn_ncs *v);
/* 1 when the na bytes at a and the nb bytes at b share no byte */
static inline int fdnn_ops_bytes_apart(const void *a, int64_t na, const void *b, int64_t nb)
{
    const char *p = a, *q = b;
    return p + na <= q || q + nb <= p;
}
/* 1 when the memory of tensor x at px and that of tensor y at py share no byte (each from offset 0 to its span) */
int fdnn_ops_apart(const fdnn_tensor *x, const void *px, const fdnn_tensor *y, const void *py);
/* The spatial transformer's normalised coordinate of pixel i of n (-1 the first pixel's centre, +1 the last's),
 * for both CPU paths (spatial_tf_cpu.c, stf_fast.c) */
static inline double fdnn_stf_coord(int i, int n) { return n > 1 ? -1.0 + 2.0 * i / (n - 1) : 0.0; }
/* [*lo, *hi): the calling OpenMP thread's contiguous share of n items (all of them outside a parallel region) */
static inline void fdnn_ops_share(int64_t n, int64_t *lo, int64_t *hi)
{
#ifdef _OPENMP
    const int nt = omp_get_num_threads(), me = omp_get_thread_num();
#else
    const int nt = 1, me = 0;
#endif
    *lo = n * me / nt;
    *hi = n * (me + 1) / nt;
}

/* The most OpenMP threads a parallel region may have (1 without OpenMP), and the calling thread's number in its
 * region (0 outside one): for per-thread scratch areas */
static inline int fdnn_ops_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}
static inline int fdnn_ops_team(void) /* the calling thread's team size (1 outside a parallel region) */
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}
static inline int fdnn_ops_thread(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* cudnnOpTensor's op (a cudnnOpTensorOp_t) on the scaled operands x = alpha1*a, y = alpha2*b: SQRT and NOT
 * (1 - x) ignore y; MIN/MAX give NaN for a NaN operand when prop (PROPAGATE_NAN), else the other operand. */
static inline double fdnn_ops_tensor_op(int op, int prop, double x, double y)
{
    switch (op) {
    case CUDNN_OP_TENSOR_ADD: return x + y;
    case CUDNN_OP_TENSOR_MUL: return x * y;
    case CUDNN_OP_TENSOR_MIN:
        if (isnan(x) || isnan(y)) return prop ? NAN : (isnan(x) ? y : x);
        return x < y ? x : y;
    case CUDNN_OP_TENSOR_MAX:
        if (isnan(x) || isnan(y)) return prop ? NAN : (isnan(x) ? y : x);
        return x > y ? x : y;
    case CUDNN_OP_TENSOR_SQRT: return sqrt(x);
    default: return 1.0 - x;
    }
}

/* Packed logical-order doubles of the tensor's elements (malloc'd; NULL when out of memory). */
double *fdnn_ops_gather(const fdnn_tensor *t, const void *data);
/* The same into out[elements] (packed FLOAT tensors by a plain loop, other strides by an
 * odometer over the dims instead of a division per element). */
void fdnn_ops_gather_into(const fdnn_tensor *t, const void *data, double *out);
/* data = alpha*res + beta*data over every logical element (data not read when beta == 0). */
void fdnn_ops_blend(const fdnn_tensor *t, void *data, const double *res, double alpha, double beta);

/* res[i over c] = pa[broadcast index] for a (each dim equal to c's or 1), both packed. */
void fdnn_ops_broadcast(const fdnn_tensor *a, const double *pa, const fdnn_tensor *c, double *res);

/* Validation helpers used by the API files (each returns SUCCESS or an FDNN_FAIL status). */
cudnnStatus_t fdnn_ops_cpu_handle(cudnnHandle_t h);  /* live handle on the CPU backend */
cudnnStatus_t fdnn_ops_float_type(const fdnn_tensor *t, const char *name); /* FLOAT/DOUBLE/HALF/BFLOAT16 */
cudnnStatus_t fdnn_ops_same_dims(const fdnn_tensor *a, const char *an, const fdnn_tensor *b, const char *bn);
cudnnStatus_t fdnn_ops_same_type(const fdnn_tensor *a, const char *an, const fdnn_tensor *b, const char *bn);
/* Each dim of b equals a's or is 1, same rank. */
cudnnStatus_t fdnn_ops_broadcastable(const fdnn_tensor *b, const char *bn, const fdnn_tensor *c, const char *cn);
int fdnn_ops_same_layout(const fdnn_tensor *a, const fdnn_tensor *b); /* same dims and strides */
#endif
