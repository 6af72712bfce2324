/* Convolution dispatch: the per-backend implementation lists, forced-algorithm selection,
 * and the one function that turns descriptors into a validated fdnn_conv_problem. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conv.h"
#include "plan_cache.h"

const fdnn_conv_impl *const *fdnn_conv_impls(int backend, fdnn_conv_dir dir)
{
#ifdef FDNN_HAVE_CUDA
    if (backend == FDNN_BACKEND_CUDA) return fdnn_cuda_conv_impls(dir);
#endif
    if (backend == FDNN_BACKEND_CPU) return fdnn_cpu_conv_impls(dir);
    static const fdnn_conv_impl *const none[] = {NULL};
    return none;
}

cudnnStatus_t fdnn_conv_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_impl *impl, const fdnn_conv_args *a)
{
#ifdef FDNN_HAVE_CUDA
    if (h->backend == FDNN_BACKEND_CUDA) return fdnn_cuda_conv_run_replayed(h, p, impl, a);
#endif
    return impl->run(h, p, a);
}

/* Plan cache keys (src/dispatch/plan_cache.h): the problem's bytes (fdnn_conv_build_problem
 * leaves no padding garbage) plus what is asked of it. Selection depends only on the problem
 * (applicable() sees nothing else) and on the handle's fixed backend/device, so value keys
 * never need invalidation. Workspace sizes are not cached: they are O(1) arithmetic, and one
 * CUDA entry's size follows an environment variable tests change at run time. */
enum { KEY_SELECT = 0, KEY_HEURISTIC = 1 };
typedef struct conv_key {
    fdnn_conv_problem p;
    int32_t kind; /* KEY_* */
    int32_t algo; /* forced algorithm (KEY_SELECT), -1 otherwise */
} conv_key;

static void make_key(conv_key *k, const fdnn_conv_problem *p, int kind, int algo)
{
    memset(k, 0, sizeof *k);
    memcpy(&k->p, p, sizeof *p);
    k->kind = kind;
    k->algo = algo;
}

/* The list walk of fdnn_conv_select without the cache; the message naming what is
 * implemented is only built when nothing applies. */
static cudnnStatus_t select_uncached(cudnnHandle_t h, const fdnn_conv_problem *p, int algo, const fdnn_conv_impl **out)
{
    const fdnn_conv_impl *const *list = fdnn_conv_impls(h->backend, p->dir);
    char why[400] = "";
    int have_algo = 0;
    for (int i = 0; list[i]; i++) {
        const fdnn_conv_impl *im = list[i];
        if (im->algo != algo) continue;
        have_algo = 1;
        char w[200] = "";
        if (im->applicable(p, w, sizeof w)) {
            *out = im;
            return CUDNN_STATUS_SUCCESS;
        }
        if (!why[0]) snprintf(why, sizeof why, "%s: %s", im->name, w);
    }
    char names[512] = "";
    size_t o = 0;
    for (int i = 0; list[i]; i++)
        if (o < sizeof names)
            o += (size_t)snprintf(names + o, sizeof names - o, "%s%s (algo %d)", i ? ", " : "", list[i]->name, list[i]->algo);
    static const char *const dn[] = {"forward", "backward-data", "backward-filter"};
    if (have_algo)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s algorithm %d cannot run this problem on the %s backend (%s); implemented: %s",
                         dn[p->dir], algo, h->backend == FDNN_BACKEND_CUDA ? "CUDA" : "CPU", why, names[0] ? names : "none");
    return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s algorithm %d is not implemented on the %s backend; implemented: %s", dn[p->dir], algo,
                     h->backend == FDNN_BACKEND_CUDA ? "CUDA" : "CPU", names[0] ? names : "none");
}

cudnnStatus_t fdnn_conv_select(cudnnHandle_t h, const fdnn_conv_problem *p, int algo, const fdnn_conv_impl **out)
{
    conv_key k;
    make_key(&k, p, KEY_SELECT, algo);
    const fdnn_conv_impl *hit = fdnn_plan_lookup(h, &k, sizeof k);
    if (hit) {
        *out = hit;
        return CUDNN_STATUS_SUCCESS;
    }
    FDNN_CHECK(select_uncached(h, p, algo, out));
    /* failures are not cached (they are rare and carry a message); a failed insert only
     * means the next call walks the list again */
    (void)fdnn_plan_insert(h, &k, sizeof k, (void *)(uintptr_t)*out, NULL);
    return CUDNN_STATUS_SUCCESS;
}

/* Cached value of a heuristic query: the implementations in list order, first applicable one
 * of each algorithm. */
typedef struct heur_plan {
    int n;
    const fdnn_conv_impl *impl[FDNN_CONV_MAX_ALGOS];
} heur_plan;

int fdnn_conv_heuristic_impls(cudnnHandle_t h, const fdnn_conv_problem *p, int algo_count, const fdnn_conv_impl **out)
{
    conv_key k;
    make_key(&k, p, KEY_HEURISTIC, -1);
    const heur_plan *hp = fdnn_plan_lookup(h, &k, sizeof k);
    if (!hp) {
        heur_plan fresh = {0, {NULL}};
        const fdnn_conv_impl *const *list = fdnn_conv_impls(h->backend, p->dir);
        int taken[FDNN_CONV_MAX_ALGOS] = {0};
        for (int i = 0; list[i]; i++) {
            const fdnn_conv_impl *im = list[i];
            char why[128];
            if (im->algo < 0 || im->algo >= algo_count || im->algo >= FDNN_CONV_MAX_ALGOS || taken[im->algo] ||
                !im->applicable(p, why, sizeof why))
                continue;
            taken[im->algo] = 1;
            fresh.impl[fresh.n++] = im;
        }
        heur_plan *copy = malloc(sizeof *copy);
        if (copy) {
            *copy = fresh;
            if (fdnn_plan_insert(h, &k, sizeof k, copy, free) != CUDNN_STATUS_SUCCESS) free(copy);
        }
        memcpy(out, fresh.impl, sizeof(out[0]) * (size_t)fresh.n);
        return fresh.n;
    }
    memcpy(out, hp->impl, sizeof(out[0]) * (size_t)hp->n);
    return hp->n;
}

double fdnn_conv_flops(const fdnn_conv_problem *p)
{
    double f = 2.0 * p->n * p->k * (double)(p->c / p->g);
    for (int i = 0; i < 3; i++) f *= (double)p->out[i] * p->flt[i];
    return f;
}

int fdnn_tensor_overlaps(const struct cudnnTensorStruct *t)
{
    /* sort the non-unit dims by stride; each must start past the extent of the previous */
    int idx[CUDNN_DIM_MAX], m = 0;
    int64_t dim[CUDNN_DIM_MAX];
    for (int i = 0; i < t->nb_dims; i++) {
        int64_t d = t->dim[i];
        if (i == 1 && t->vect > 1) d /= t->vect;
        if (d > 1) { idx[m] = i; dim[i] = d; m++; }
    }
    for (int a = 1; a < m; a++)
        for (int b = a; b > 0 && t->stride[idx[b]] < t->stride[idx[b - 1]]; b--) {
            int tmp = idx[b]; idx[b] = idx[b - 1]; idx[b - 1] = tmp;
        }
    int64_t extent = 1;
    for (int a = 0; a < m; a++) {
        int64_t s = t->stride[idx[a]];
        if (s < extent) return 1;
        extent = s * dim[idx[a]];
    }
    return 0;
}

static int is_int8_family(cudnnDataType_t t)
{
    return t == CUDNN_DATA_INT8 || t == CUDNN_DATA_INT8x4 || t == CUDNN_DATA_INT8x32 || t == CUDNN_DATA_UINT8 || t == CUDNN_DATA_UINT8x4;
}

/* The data-type configurations cuDNN documents for cudnnConvolutionForward & co. */
static cudnnStatus_t check_types(fdnn_conv_dir dir, cudnnDataType_t xt, cudnnDataType_t wt, cudnnDataType_t yt, cudnnDataType_t ct,
                                 const char *xn, const char *wn, const char *yn)
{
    if (xt != wt && !(xt == CUDNN_DATA_UINT8x4 && wt == CUDNN_DATA_INT8x4) && !(xt == CUDNN_DATA_UINT8 && wt == CUDNN_DATA_INT8))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has type %s but %s has type %s; they must match", xn, fdnn_dtype_name(xt), wn,
                         fdnn_dtype_name(wt));
    switch (xt) {
    case CUDNN_DATA_FLOAT:
    case CUDNN_DATA_DOUBLE:
        if (yt != xt || ct != xt) break;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_DATA_HALF:
        if (yt != xt || (ct != CUDNN_DATA_HALF && ct != CUDNN_DATA_FLOAT)) break;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_DATA_BFLOAT16:
        if (yt != xt || (ct != CUDNN_DATA_BFLOAT16 && ct != CUDNN_DATA_FLOAT)) break;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_INT8x4:
    case CUDNN_DATA_INT8x32:
        if (dir != FDNN_CONV_FWD)
            return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s type %s: integer convolutions exist only in the forward direction", xn,
                             fdnn_dtype_name(xt));
        if (ct != CUDNN_DATA_INT32)
            return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s type %s needs computeType INT32, convDesc has %s", xn, fdnn_dtype_name(xt),
                             fdnn_dtype_name(ct));
        if (yt != xt && yt != CUDNN_DATA_FLOAT) break;
        return CUDNN_STATUS_SUCCESS;
    default: break;
    }
    return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                     "data type configuration %s=%s %s=%s %s=%s computeType=%s is not one cuDNN supports for convolutions (FLOAT, DOUBLE, "
                     "HALF, BFLOAT16 with matching output; INT8/INT8x4/INT8x32 forward with INT32 compute and same-type or FLOAT output)",
                     xn, fdnn_dtype_name(xt), wn, fdnn_dtype_name(wt), yn, fdnn_dtype_name(yt), fdnn_dtype_name(ct));
}

static void tensor_strides(const struct cudnnTensorStruct *t, int64_t s[5])
{
    s[0] = t->stride[0];
    s[1] = t->stride[1];
    if (t->nb_dims == 4) {
        s[2] = 0;
        s[3] = t->stride[2];
        s[4] = t->stride[3];
    } else {
        s[2] = t->stride[2];
        s[3] = t->stride[3];
        s[4] = t->stride[4];
    }
}

cudnnStatus_t fdnn_conv_build_problem(fdnn_conv_dir dir, const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                                      const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *y, fdnn_conv_problem *p)
{
    const char *xn = dir == FDNN_CONV_BWD_DATA ? "dxDesc" : "xDesc";
    const char *wn = dir == FDNN_CONV_BWD_FILTER ? "dwDesc" : "wDesc";
    const char *yn = dir == FDNN_CONV_FWD ? "yDesc" : "dyDesc";
    FDNN_CHECK(fdnn_check_tensor(x, xn));
    FDNN_CHECK(fdnn_check_filter(w, wn));
    FDNN_CHECK(fdnn_check_conv(c, "convDesc"));
    FDNN_CHECK(fdnn_check_tensor(y, yn));
    if (x->nb_dims != y->nb_dims || x->nb_dims != w->nb_dims)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has %d dims, %s %d and %s %d; they must be equal", xn, x->nb_dims, wn, w->nb_dims, yn,
                         y->nb_dims);
    if (x->nb_dims - 2 != c->nb_spatial)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has %d spatial dims but convDesc describes %d", xn, x->nb_dims - 2, c->nb_spatial);
    if (x->nb_dims != 4 && x->nb_dims != 5)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "only 2-D and 3-D convolutions (4-D/5-D tensors) are supported, got %d-D tensors",
                         x->nb_dims);
    int od[CUDNN_DIM_MAX];
    FDNN_CHECK(fdnn_conv_output_dims(c, x, w, x->nb_dims, od));
    for (int i = 0; i < x->nb_dims; i++)
        if (y->dim[i] != od[i])
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s dim %d is %d but the convolution of %s with %s gives %d", yn, i, y->dim[i], xn, wn,
                             od[i]);
    FDNN_CHECK(check_types(dir, x->dtype, w->dtype, y->dtype, c->compute_type, xn, wn, yn));
    if (x->vect != w->vect)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s (%s) and %s (%s) must both use NCHW_VECT_C with the same vector length or neither", xn,
                         fdnn_dtype_name(x->dtype), wn, fdnn_dtype_name(w->dtype));
    if (x->vect > 1 && y->vect > 1 && y->vect != x->vect)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s and %s have different vector lengths", xn, yn);
    if (x->vect > 1 && (w->dim[1] % x->vect) != 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "per-group channels %d of %s are not a multiple of the vector length %d", w->dim[1], wn, x->vect);
    const struct cudnnTensorStruct *outt = dir == FDNN_CONV_BWD_DATA ? x : y;
    if (dir != FDNN_CONV_BWD_FILTER && fdnn_tensor_overlaps(outt))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has overlapping strides; an output tensor may not", dir == FDNN_CONV_BWD_DATA ? xn : yn);
    (void)is_int8_family;

    fdnn_conv_problem q;
    memset(&q, 0, sizeof q);
    q.dir = dir;
    q.nb_spatial = c->nb_spatial;
    q.n = x->dim[0];
    q.c = x->dim[1];
    q.k = w->dim[0];
    q.g = c->group_count;
    int off = 3 - c->nb_spatial;
    for (int i = 0; i < 3; i++) {
        q.in[i] = q.out[i] = q.flt[i] = 1;
        q.pad[i] = 0;
        q.stride[i] = q.dil[i] = 1;
    }
    for (int i = 0; i < c->nb_spatial; i++) {
        q.in[off + i] = x->dim[2 + i];
        q.out[off + i] = y->dim[2 + i];
        q.flt[off + i] = w->dim[2 + i];
        q.pad[off + i] = c->pad[i];
        q.stride[off + i] = c->stride[i];
        q.dil[off + i] = c->dilation[i];
    }
    q.cross_correlation = c->mode == CUDNN_CROSS_CORRELATION;
    tensor_strides(x, q.xs);
    tensor_strides(y, q.ys);
    q.x_vect = x->vect;
    q.y_vect = y->vect;
    q.w_vect = w->vect;
    q.w_nhwc = w->format == CUDNN_TENSOR_NHWC;
    /* packed filter strides, in vector units along C for VECT_C */
    int cg = w->dim[1] / w->vect, T = q.flt[0], R = q.flt[1], S = q.flt[2];
    if (q.w_nhwc) {
        q.ws[1] = 1;
        q.ws[4] = cg;
        q.ws[3] = (int64_t)cg * S;
        q.ws[2] = (int64_t)cg * S * R;
        q.ws[0] = (int64_t)cg * S * R * T;
    } else {
        q.ws[4] = 1;
        q.ws[3] = S;
        q.ws[2] = (int64_t)S * R;
        q.ws[1] = (int64_t)S * R * T;
        q.ws[0] = (int64_t)S * R * T * cg;
    }
    q.xtype = x->dtype;
    q.wtype = w->dtype;
    q.ytype = y->dtype;
    q.compute_type = c->compute_type;
    q.math_type = c->math_type;
    memcpy(p, &q, sizeof q); /* with its zeroed padding: the plan cache keys on these bytes */
    return CUDNN_STATUS_SUCCESS;
}
