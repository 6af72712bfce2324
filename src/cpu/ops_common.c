/* Gather/blend between strided tensors of any supported type and packed double arrays,
 * plus argument checks shared by the tensor-op API files. */
#include <stdlib.h>
#include "ops_common.h"

double *fdnn_ops_gather(const fdnn_tensor *t, const void *data)
{
    int64_t n = fdnn_tensor_elems(t);
    double *out = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!out) return NULL;
    const int nd = t->nb_dims;
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) {
        int idx[CUDNN_DIM_MAX];
        fdnn_ops_unravel(t->dim, nd, i, idx);
        out[i] = fdnn_load(data, t->dtype, fdnn_ops_offset(t, idx));
    }
    return out;
}

void fdnn_ops_blend(const fdnn_tensor *t, void *data, const double *res, double alpha, double beta)
{
    int64_t n = fdnn_tensor_elems(t);
    const int nd = t->nb_dims;
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) {
        int idx[CUDNN_DIM_MAX];
        fdnn_ops_unravel(t->dim, nd, i, idx);
        int64_t o = fdnn_ops_offset(t, idx);
        double v = alpha * res[i];
        if (beta != 0) v += beta * fdnn_load(data, t->dtype, o);
        fdnn_store(data, t->dtype, o, v);
    }
}

cudnnStatus_t fdnn_ops_cpu_handle(cudnnHandle_t h)
{
    FDNN_CHECK(fdnn_check_handle(h, "handle"));
    if (h->backend == FDNN_BACKEND_CUDA)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s is not implemented on the CUDA backend yet", fdnn_current_api());
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_ops_float_type(const fdnn_tensor *t, const char *name)
{
    switch (t->dtype) {
    case CUDNN_DATA_FLOAT:
    case CUDNN_DATA_DOUBLE:
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16: return CUDNN_STATUS_SUCCESS;
    default:
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s has data type %s; this function supports FLOAT, DOUBLE, HALF and BFLOAT16",
                         name, fdnn_dtype_name(t->dtype));
    }
}

cudnnStatus_t fdnn_ops_same_dims(const fdnn_tensor *a, const char *an, const fdnn_tensor *b, const char *bn)
{
    if (a->nb_dims != b->nb_dims)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has %d dims but %s has %d; they must match", an, a->nb_dims, bn, b->nb_dims);
    for (int i = 0; i < a->nb_dims; i++)
        if (a->dim[i] != b->dim[i])
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dim %d of %s (%d) differs from that of %s (%d)", i, an, a->dim[i], bn, b->dim[i]);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_ops_same_type(const fdnn_tensor *a, const char *an, const fdnn_tensor *b, const char *bn)
{
    if (a->dtype != b->dtype)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has data type %s but %s has %s; they must match", an, fdnn_dtype_name(a->dtype), bn,
                         fdnn_dtype_name(b->dtype));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_ops_broadcastable(const fdnn_tensor *b, const char *bn, const fdnn_tensor *c, const char *cn)
{
    if (b->nb_dims != c->nb_dims)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has %d dims but %s has %d; cuDNN broadcasting needs equal rank", bn, b->nb_dims, cn, c->nb_dims);
    for (int i = 0; i < b->nb_dims; i++)
        if (b->dim[i] != c->dim[i] && b->dim[i] != 1)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dim %d of %s is %d; it must equal that of %s (%d) or be 1", i, bn, b->dim[i], cn, c->dim[i]);
    return CUDNN_STATUS_SUCCESS;
}

int fdnn_ops_same_layout(const fdnn_tensor *a, const fdnn_tensor *b)
{
    if (a->nb_dims != b->nb_dims) return 0;
    for (int i = 0; i < a->nb_dims; i++)
        if (a->dim[i] != b->dim[i] || a->stride[i] != b->stride[i]) return 0;
    return 1;
}

/* res[i over c] = a[broadcast index of i] for a broadcastable to c (both packed logical order). */
void fdnn_ops_broadcast(const fdnn_tensor *a, const double *pa, const fdnn_tensor *c, double *res)
{
    int64_t n = fdnn_tensor_elems(c);
    int nd = c->nb_dims;
    int64_t ast[CUDNN_DIM_MAX], s = 1;
    for (int i = nd - 1; i >= 0; i--) { ast[i] = a->dim[i] == 1 ? 0 : s; s *= a->dim[i]; }
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) {
        int idx[CUDNN_DIM_MAX];
        fdnn_ops_unravel(c->dim, nd, i, idx);
        int64_t o = 0;
        for (int d = 0; d < nd; d++) o += idx[d] * ast[d];
        res[i] = pa[o];
    }
}

