/* Gather/blend between strided tensors of any supported type and packed double arrays,
 * plus argument checks shared by the tensor-op API files. */
#include <stdlib.h>
#include "ops_fast.h"

int fdnn_ops_packed(const fdnn_tensor *t)
{
    if (t->vect > 1) return 0;
    int64_t s = 1;
    for (int i = t->nb_dims - 1; i >= 0; i--) {
        if (t->dim[i] != 1 && t->stride[i] != s) return 0;
        s *= t->dim[i];
    }
    return 1;
}

int fdnn_ops_dense(const fdnn_tensor *t)
{
    if (t->vect > 1) return 0;
    /* the dims longer than 1, by increasing stride, must each step over all the earlier ones */
    int used[CUDNN_DIM_MAX] = {0};
    int64_t s = 1;
    for (;;) {
        int best = -1;
        for (int i = 0; i < t->nb_dims; i++)
            if (!used[i] && t->dim[i] > 1 && (best < 0 || t->stride[i] < t->stride[best])) best = i;
        if (best < 0) return 1;
        if (t->stride[best] != s) return 0;
        used[best] = 1;
        s *= t->dim[best];
    }
}

int fdnn_ops_flat(const fdnn_tensor *a, const fdnn_tensor *b)
{
    if (a->nb_dims != b->nb_dims || !fdnn_ops_dense(a) || !fdnn_ops_dense(b)) return 0;
    for (int i = 0; i < a->nb_dims; i++)
        if (a->dim[i] != b->dim[i] || (a->dim[i] > 1 && a->stride[i] != b->stride[i])) return 0;
    return 1;
}

int fdnn_ops_apart(const fdnn_tensor *x, const void *px, const fdnn_tensor *y, const void *py)
{
    return fdnn_ops_bytes_apart(px, fdnn_tensor_span(x) * (int64_t)fdnn_dtype_size(x->dtype), py, fdnn_tensor_span(y) * (int64_t)fdnn_dtype_size(y->dtype));
}

int fdnn_ops_ncs(const fdnn_tensor *t, fdnn_ncs *v)
{
    if (t->vect > 1 || t->nb_dims < 2) return 0;
    v->n = t->dim[0];
    v->c = t->dim[1];
    v->sn = t->stride[0];
    v->sc = t->stride[1];
    v->s = 1;
    v->ss = 1;
    int64_t next = -1; /* the stride the next spatial dim longer than 1 must have, walking outwards */
    for (int i = t->nb_dims - 1; i >= 2; i--) {
        if (t->dim[i] == 1) continue;
        if (next < 0) v->ss = t->stride[i];
        else if (t->stride[i] != next) return 0;
        next = (int64_t)t->stride[i] * t->dim[i];
        v->s *= t->dim[i];
    }
    return 1;
}

/* element offsets of the logical indices [lo, lo + cnt): i itself for a packed tensor, else by an
 * odometer over the dims (no division per element), or index by index where vector lanes make the
 * offset non-linear */
static void block_offsets(const fdnn_tensor *t, int packed, int64_t lo, int64_t cnt, int64_t *off)
{
    const int nd = t->nb_dims;
    int idx[CUDNN_DIM_MAX] = {0};
    if (packed) {
        for (int64_t k = 0; k < cnt; k++) off[k] = lo + k;
        return;
    }
    if (t->vect > 1) {
        for (int64_t k = 0; k < cnt; k++) {
            fdnn_ops_unravel(t->dim, nd, lo + k, idx);
            off[k] = fdnn_ops_offset(t, idx);
        }
        return;
    }
    fdnn_ops_unravel(t->dim, nd, lo, idx);
    int64_t o = fdnn_ops_offset(t, idx);
    for (int64_t k = 0; k < cnt; k++) {
        off[k] = o;
        for (int d = nd - 1; d >= 0; d--) { /* next index: the innermost dim first, carrying outwards */
            o += t->stride[d];
            if (++idx[d] < t->dim[d]) break;
            o -= (int64_t)t->dim[d] * t->stride[d];
            idx[d] = 0;
        }
    }
}

enum { WALK_BLOCK = 1024 }; /* offsets computed per block of logical indices */

/* fn(ctx, t, b, cnt, off) over blocks of the tensor's logical indices, off[] their element offsets: each
 * OpenMP thread walks its contiguous share */
typedef void (*walk_fn)(void *ctx, const fdnn_tensor *t, int64_t b, int64_t cnt, const int64_t *off);
static void walk_blocks(const fdnn_tensor *t, int packed, walk_fn fn, void *ctx)
{
    const int64_t n = fdnn_tensor_elems(t);
#pragma omp parallel if (n > 65536)
    {
        int64_t lo, hi, off[WALK_BLOCK];
        fdnn_ops_share(n, &lo, &hi);
        for (int64_t b = lo; b < hi; b += WALK_BLOCK) {
            const int64_t cnt = hi - b < WALK_BLOCK ? hi - b : WALK_BLOCK;
            block_offsets(t, packed, b, cnt, off);
            fn(ctx, t, b, cnt, off);
        }
    }
}

struct gather_ctx {
    const void *data;
    double *out;
};

static void gather_block(void *ctx, const fdnn_tensor *t, int64_t b, int64_t cnt, const int64_t *off)
{
    const struct gather_ctx *c = ctx;
    double *out = c->out + b;
    if (t->dtype == CUDNN_DATA_FLOAT)
        for (int64_t k = 0; k < cnt; k++) out[k] = ((const float *)c->data)[off[k]];
    else
        for (int64_t k = 0; k < cnt; k++) out[k] = fdnn_load(c->data, t->dtype, off[k]);
}

struct blend_ctx {
    void *data;
    const double *res;
    double alpha, beta;
};

static void blend_block(void *ctx, const fdnn_tensor *t, int64_t b, int64_t cnt, const int64_t *off)
{
    const struct blend_ctx *c = ctx;
    for (int64_t k = 0; k < cnt; k++) {
        double v = c->alpha * c->res[b + k];
        if (c->beta != 0) v += c->beta * fdnn_load(c->data, t->dtype, off[k]);
        fdnn_store(c->data, t->dtype, off[k], v);
    }
}

double *fdnn_ops_gather(const fdnn_tensor *t, const void *data)
{
    int64_t n = fdnn_tensor_elems(t);
    double *out = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (out) fdnn_ops_gather_into(t, data, out);
    return out;
}

void fdnn_ops_gather_into(const fdnn_tensor *t, const void *data, double *out)
{
    const int64_t n = fdnn_tensor_elems(t);
    const int packed = fdnn_ops_packed(t);
    if (packed && t->dtype == CUDNN_DATA_FLOAT) {
        const float *f = data;
#pragma omp parallel for simd schedule(static) if (n > 65536)
        for (int64_t i = 0; i < n; i++) out[i] = f[i];
        return;
    }
    struct gather_ctx c = {data, out};
    walk_blocks(t, packed, gather_block, &c);
}

void fdnn_ops_blend(const fdnn_tensor *t, void *data, const double *res, double alpha, double beta)
{
    const int64_t n = fdnn_tensor_elems(t);
    const int packed = fdnn_ops_packed(t);
    if (packed && t->dtype == CUDNN_DATA_FLOAT) {
        float *f = data;
        if (beta != 0) {
#pragma omp parallel for simd schedule(static) if (n > 65536)
            for (int64_t i = 0; i < n; i++) f[i] = (float)(alpha * res[i] + beta * (double)f[i]);
        } else {
#pragma omp parallel for simd schedule(static) if (n > 65536)
            for (int64_t i = 0; i < n; i++) f[i] = (float)(alpha * res[i]);
        }
        return;
    }
    struct blend_ctx c = {data, res, alpha, beta};
    walk_blocks(t, packed, blend_block, &c);
}

int fdnn_ops_fast_mode(void)
{
    const char *v = fdnn_getenv("FREEDNN_CPU_FAST_PATH");
    return v && v[0] == '0' && !v[1] ? 0 : v && v[0] == '2' && !v[1] ? 2 : 1;
}

cudnnStatus_t fdnn_ops_fast_missed(int mode)
{
    if (mode != 2) return CUDNN_STATUS_SUCCESS;
    return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "FREEDNN_CPU_FAST_PATH=2 and the CPU FLOAT fast path does not take these tensors");
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

