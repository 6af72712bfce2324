/* CPU engine of batch normalization and cudnnNormalization* (one engine for both), with two paths.
 * Fast path: FLOAT tensors that share one N x C x S view (fdnn_ops_ncs: NCHW, NHWC, NCDHW, NDHWC,
 * with or without gaps between images or channels) are read and written in place, row by row of
 * contiguous elements, split across threads. General path: every other case (HALF, BFLOAT16,
 * DOUBLE, layouts that differ between the tensors, odd strides, NCHW_VECT_C) gathers the tensors
 * into double arrays in logical N,C,spatial order. Statistics accumulate in double on both paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../core/norm_desc.h"
#include "../core/activation_math.h"
#include "ops_common.h"
#include "ops_fast.h"

int64_t fdnn_logical_offset(const struct cudnnTensorStruct *t, int64_t e)
{
    int64_t off = 0;
    for (int d = t->nb_dims - 1; d >= 0; d--) {
        off += (e % t->dim[d]) * (int64_t)t->stride[d];
        e /= t->dim[d];
    }
    return off;
}

size_t fdnn_norm_reserve_size(int ops, int64_t nelem)
{
    return ops == FDNN_NORM_OPS_NORM ? 0 : (size_t)nelem * sizeof(double);
}

enum {
    LANES = 8,            /* partial sums along a row with one parameter: a fixed order that vectorizes */
    CHUNK_ELEMS = 16384,  /* elements per block of rows in the channels-last SPATIAL reductions */
    MAX_CHUNKS = 64,      /* at most this many such blocks (each with its own partial sums) */
    PAR_ELEMS = 65536,    /* threads above this many elements */
    PAR_PARAMS = 16384    /* threads above this many parameters */
};

/* Shape of the problem: N, C, S (spatial product), P (#params), M (#elements per param); the
 * elements as rows = N * C rows of S, dq = 1 where each spatial element has its own parameter. */
typedef struct { int64_t n, c, s, p, m, total, rows, dq; } shape;

static shape get_shape(const fdnn_norm_prob *p)
{
    shape s;
    s.n = p->x->dim[0];
    s.c = p->x->dim[1];
    s.s = 1;
    for (int d = 2; d < p->x->nb_dims; d++) s.s *= p->x->dim[d];
    s.total = s.n * s.c * s.s;
    s.p = p->per_activation ? s.c * s.s : s.c;
    s.m = p->per_activation ? s.n : s.n * s.s;
    s.rows = s.n * s.c;
    s.dq = p->per_activation ? 1 : 0;
    return s;
}

/* The general path walks the elements as rows r = n * C + c of S spatial elements (e = r * S + i, in
 * order, so every sum keeps its order); element i of row r has parameter q = q0 + dq * i. */
static inline int64_t row_q0(const shape *s, int64_t r)
{
    return s->dq ? (r % s->c) * s->s : r % s->c;
}

/* The fast path's view of the data tensors: N x C x S with one set of strides, walked as rows of len
 * contiguous elements: the S spatial elements of each (n, c) (ss == 1), or the C channels of each
 * (n, s) (chan_last, sc == 1). Per-parameter arrays are kept in slot order: (c, s) has slot
 * c * pc + s * ps (SPATIAL: c; PER_ACTIVATION: c * S + s, or s * C + c when channels are last, so
 * that the slots along a row are contiguous). dp is the slot step along a row (0 or 1). */
typedef struct {
    int64_t n, c, s, sn, sc, ss;
    int chan_last, dp;
    int64_t rows, len, np, m, pc, ps;
} fview;

/* Slot of logical parameter q (c * S + s, or c for SPATIAL) in v's order; q itself without a view. */
static inline int64_t slot_of(const fview *v, int64_t q)
{
    return v && v->ps ? (q / v->s) * v->pc + (q % v->s) * v->ps : q;
}

/* Moves the n parameters of tensor d between ptr and vals[] (slot order of v, logical order when v is
 * NULL): loads them when store is 0, else stores them. */
static void param_io(const struct cudnnTensorStruct *d, void *ptr, double *vals, int64_t n, const fview *v, int store)
{
    fdnn_ncs pv;
    if (!fdnn_ops_ncs(d, &pv)) {
        for (int64_t q = 0; q < n; q++) {
            const int64_t o = fdnn_logical_offset(d, q);
            if (store) fdnn_store(ptr, d->dtype, o, vals[slot_of(v, q)]);
            else vals[slot_of(v, q)] = fdnn_load(ptr, d->dtype, o);
        }
        return;
    }
    /* pv.n == 1 and pv.c * pv.s == n. Blocks of channels: one each, or, where the slots are the
     * transpose of the logical order (PER_ACTIVATION, channels last), 8 (a cache line of slots for
     * each spatial position, read from 8 sequential streams) */
    const int64_t pc = v ? v->pc : pv.s, ps = v ? v->ps : 1, cb = v && v->chan_last && v->ps ? 8 : 1;
#pragma omp parallel for schedule(static) if (n > PAR_PARAMS)
    for (int64_t b = 0; b < (pv.c + cb - 1) / cb; b++)
        for (int64_t s = 0; s < pv.s; s++)
            for (int64_t c = b * cb; c < (b + 1) * cb && c < pv.c; c++) {
                const int64_t o = c * pv.sc + s * pv.ss, k = c * pc + s * ps;
                if (d->dtype == CUDNN_DATA_FLOAT) {
                    if (store) ((float *)ptr)[o] = (float)vals[k];
                    else vals[k] = ((const float *)ptr)[o];
                } else if (store) {
                    fdnn_store(ptr, d->dtype, o, vals[k]);
                } else {
                    vals[k] = fdnn_load(ptr, d->dtype, o);
                }
            }
}

/* Parameter tensor d into out[] (slot order of v, logical order when v is NULL). */
static void load_param(const struct cudnnTensorStruct *d, const void *ptr, double *out, int64_t n, const fview *v)
{
    param_io(d, (void *)ptr, out, n, v, 0);
}

/* vals[] (slot order of v, logical order when v is NULL) into parameter tensor d. */
static void store_param(const struct cudnnTensorStruct *d, void *ptr, double *vals, int64_t n, const fview *v)
{
    param_io(d, ptr, vals, n, v, 1);
}

/* act(v) with the call's activation descriptor. */
static inline double act_fwd(const struct cudnnActivationStruct *a, double v)
{
    return fdnn_act_fwd(a->mode, a->coef, a->swish_beta, a->nan_opt == CUDNN_PROPAGATE_NAN, v);
}

/* dy * act'(pre): the gradient at the activation's input, from the stored pre-activation value. */
static inline double act_grad(const struct cudnnActivationStruct *a, double pre, double dy)
{
    return fdnn_act_bwd(a->mode, a->coef, a->swish_beta, pre, act_fwd(a, pre), dy);
}

/* --------------------------------------------------------------- general path */

/* y = alpha * act(scale*(x-mean)*invstd + bias (+ z)) + beta*y; pre-activation to reserve. */
static cudnnStatus_t apply(const fdnn_norm_prob *p, const shape *s, const double *mean, const double *invstd)
{
    double *x = malloc(sizeof(double) * (size_t)s->total);
    double *z = p->ops == FDNN_NORM_OPS_ADD_ACT ? malloc(sizeof(double) * (size_t)s->total) : NULL;
    double *sc = malloc(sizeof(double) * (size_t)s->p), *bi = malloc(sizeof(double) * (size_t)s->p);
    if (!x || !sc || !bi || (p->ops == FDNN_NORM_OPS_ADD_ACT && !z)) {
        free(x), free(z), free(sc), free(bi);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
    fdnn_ops_gather_into(p->x, p->xp, x);
    if (z) fdnn_ops_gather_into(p->z, p->zp, z);
    load_param(p->sb, p->scale, sc, s->p, NULL);
    load_param(p->sb, p->bias, bi, s->p, NULL);
    double *pre = p->reserve;
#pragma omp parallel for if (s->total > 65536)
    for (int64_t r = 0; r < s->rows; r++) {
        const int64_t q0 = row_q0(s, r);
        for (int64_t i = 0, e = r * s->s; i < s->s; i++, e++) {
            const int64_t q = q0 + s->dq * i;
            double v = sc[q] * (x[e] - mean[q]) * invstd[q] + bi[q];
            if (z) v += z[e];
            if (p->ops != FDNN_NORM_OPS_NORM) {
                if (pre) pre[e] = v;
                v = act_fwd(p->act, v);
            }
            x[e] = v;
        }
    }
    fdnn_ops_blend(p->y, p->yp, x, p->alpha, p->beta);
    free(x), free(z), free(sc), free(bi);
    return CUDNN_STATUS_SUCCESS;
}

/* Batch mean and biased variance per parameter (two passes). */
static cudnnStatus_t batch_stats(const fdnn_norm_prob *p, const shape *s, double *mean, double *var)
{
    double *x = malloc(sizeof(double) * (size_t)s->total);
    if (!x) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    fdnn_ops_gather_into(p->x, p->xp, x);
    memset(mean, 0, sizeof(double) * (size_t)s->p);
    memset(var, 0, sizeof(double) * (size_t)s->p);
    for (int64_t r = 0; r < s->rows; r++) {
        const int64_t q0 = row_q0(s, r);
        for (int64_t i = 0, e = r * s->s; i < s->s; i++, e++) mean[q0 + s->dq * i] += x[e];
    }
    for (int64_t q = 0; q < s->p; q++) mean[q] /= (double)s->m;
    for (int64_t r = 0; r < s->rows; r++) {
        const int64_t q0 = row_q0(s, r);
        for (int64_t i = 0, e = r * s->s; i < s->s; i++, e++) {
            const double d = x[e] - mean[q0 + s->dq * i];
            var[q0 + s->dq * i] += d * d;
        }
    }
    for (int64_t q = 0; q < s->p; q++) var[q] /= (double)s->m;
    free(x);
    return CUDNN_STATUS_SUCCESS;
}

/* dx (and dz) of the backward pass, and db = sum g, ds = sum g * (x - mean) * invstd per parameter. */
static cudnnStatus_t backward_general(const fdnn_norm_prob *p, const shape *s, const double *mean, const double *inv, const double *sc,
                                      double *db, double *ds)
{
    size_t tb = sizeof(double) * (size_t)s->total;
    double *x = malloc(tb), *g = malloc(tb);
    if (!x || !g) {
        free(x), free(g);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
    fdnn_ops_gather_into(p->x, p->xp, x);
    fdnn_ops_gather_into(p->dy, p->dyp, g);
    if (p->ops != FDNN_NORM_OPS_NORM) {
        /* back through the activation at the stored pre-activation value */
        const double *pre = p->reserve;
        for (int64_t e = 0; e < s->total; e++) g[e] = act_grad(p->act, pre[e], g[e]);
        if (p->ops == FDNN_NORM_OPS_ADD_ACT) fdnn_ops_blend(p->dz, p->dzp, g, 1.0, 0.0);
    }
    memset(db, 0, sizeof(double) * (size_t)s->p);
    memset(ds, 0, sizeof(double) * (size_t)s->p);
    for (int64_t r = 0; r < s->rows; r++) {
        const int64_t q0 = row_q0(s, r);
        for (int64_t i = 0, e = r * s->s; i < s->s; i++, e++) {
            const int64_t q = q0 + s->dq * i;
            db[q] += g[e];
            ds[q] += g[e] * (x[e] - mean[q]) * inv[q];
        }
    }
    double m = (double)s->m;
#pragma omp parallel for if (s->total > 65536)
    for (int64_t r = 0; r < s->rows; r++) {
        const int64_t q0 = row_q0(s, r);
        for (int64_t i = 0, e = r * s->s; i < s->s; i++, e++) {
            const int64_t q = q0 + s->dq * i;
            double xh = (x[e] - mean[q]) * inv[q];
            x[e] = sc[q] * inv[q] * (g[e] - db[q] / m - xh * ds[q] / m);
        }
    }
    fdnn_ops_blend(p->dx, p->dxp, x, p->alpha, p->beta);
    free(x), free(g);
    return CUDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------ FLOAT fast path */

/* 1 when a and b are the same N x C x S view (strides compared only along extents above 1). */
static int same_ncs(const fdnn_ncs *a, const fdnn_ncs *b)
{
    return a->n == b->n && a->c == b->c && a->s == b->s && (a->n == 1 || a->sn == b->sn) && (a->c == 1 || a->sc == b->sc) &&
           (a->s == 1 || a->ss == b->ss);
}

/* Fills v and returns 1 when every data tensor of p is FLOAT, all in one N x C x S view with unit
 * stride along S or along C; else 0 (the general path). */
static int fast_view(const fdnn_norm_prob *p, fview *v)
{
    const struct cudnnTensorStruct *t[5] = {p->y, p->z, p->dy, p->dx, p->dz};
    fdnn_ncs a, b;
    if (p->x->dtype != CUDNN_DATA_FLOAT || !fdnn_ops_ncs(p->x, &a)) return 0;
    for (int i = 0; i < 5; i++)
        if (t[i] && (t[i]->dtype != CUDNN_DATA_FLOAT || !fdnn_ops_ncs(t[i], &b) || !same_ncs(&a, &b))) return 0;
    const int unit_s = a.s == 1 || a.ss == 1, unit_c = a.c == 1 || a.sc == 1;
    if (!unit_s && !unit_c) return 0;
    v->n = a.n, v->c = a.c, v->s = a.s, v->sn = a.sn, v->sc = a.sc, v->ss = a.ss;
    v->chan_last = unit_c && (!unit_s || a.s == 1);
    v->rows = v->chan_last ? a.n * a.s : a.n * a.c;
    v->len = v->chan_last ? a.c : a.s;
    v->np = p->per_activation ? a.c * a.s : a.c;
    v->m = p->per_activation ? a.n : a.n * a.s;
    v->pc = p->per_activation && !v->chan_last ? a.s : 1;
    v->ps = p->per_activation ? (v->chan_last ? a.c : 1) : 0;
    v->dp = v->chan_last ? 1 : (int)v->ps;
    return 1;
}

/* Row r of v: element offset, slot of its first element, and the reserve index of its first element
 * and its step along the row (the reserve is in logical N,C,spatial order). */
typedef struct { int64_t off, slot, e, es; } frow;

static inline frow row_at(const fview *v, int64_t r)
{
    const int64_t outer = v->chan_last ? v->s : v->c, n = r / outer, i = r % outer;
    frow w;
    w.off = n * v->sn + i * (v->chan_last ? v->ss : v->sc);
    w.slot = i * (v->chan_last ? v->ps : v->pc);
    w.e = v->chan_last ? n * v->c * v->s + i : r * v->s;
    w.es = v->chan_last ? v->s : 1;
    return w;
}

/* What a reduction pass sums per slot: x (RED_SUM), (x - mean)^2 (RED_SQDEV), or the gradient g into
 * the first sums and g * (x - mean) into the second (RED_GRAD); g is dy, or dy through the
 * activation at the reserved pre-activation value when pre is set. */
enum { RED_SUM, RED_SQDEV, RED_GRAD };
typedef struct {
    int kind;
    const float *x, *dy;
    const double *mean, *pre;
    const struct cudnnActivationStruct *act;
} fred;

/* BODY for i = 0 .. len-1 with j = i % LANES: the lane of a row-with-one-parameter sum */
#define LANE_LOOP(len, BODY)                       \
    do {                                           \
        int64_t i0_ = 0;                           \
        for (; i0_ + LANES <= (len); i0_ += LANES) \
            for (int j = 0; j < LANES; j++) {      \
                const int64_t i = i0_ + j;         \
                BODY;                              \
            }                                      \
        for (int j = 0; i0_ + j < (len); j++) {    \
            const int64_t i = i0_ + j;             \
            BODY;                                  \
        }                                          \
    } while (0)

/* Adds the sums of k over the rows r0, r0 + step, ... (< r1), which all start at one slot, into acc0
 * (and acc1 for RED_GRAD) at their slots. dp == 1: rows taken four at a time where they can be, so
 * that each slot's running sum is loaded and stored once per four rows; dp == 0: LANES partial sums
 * per sum, folded at the end. acc0 and acc1 are the engine's own arrays (no alias of a tensor). */
FDNN_CLONES static void reduce_rows(const fview *v, const fred *k, int64_t r0, int64_t r1, int64_t step, double *acc0, double *acc1)
{
    if (r0 >= r1) return;
    double l0[LANES] = {0}, l1[LANES] = {0};
    const int64_t len = v->len, slot = row_at(v, r0).slot;
    const double *mu = k->mean ? k->mean + slot : NULL;
    double *restrict s0 = acc0 + slot, *restrict s1 = acc1 ? acc1 + slot : NULL;
    int64_t r = r0;
    if (v->dp && !k->pre)
        for (; r + 3 * step < r1; r += 4 * step) {
            const int64_t o0 = row_at(v, r).off, o1 = row_at(v, r + step).off, o2 = row_at(v, r + 2 * step).off,
                          o3 = row_at(v, r + 3 * step).off;
            const float *x0 = k->x + o0, *x1 = k->x + o1, *x2 = k->x + o2, *x3 = k->x + o3;
            if (k->kind == RED_SUM) {
                for (int64_t i = 0; i < len; i++) s0[i] += ((double)x0[i] + x1[i]) + ((double)x2[i] + x3[i]);
            } else if (k->kind == RED_SQDEV) {
                for (int64_t i = 0; i < len; i++) {
                    const double d0 = x0[i] - mu[i], d1 = x1[i] - mu[i], d2 = x2[i] - mu[i], d3 = x3[i] - mu[i];
                    s0[i] += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
                }
            } else {
                const float *g0 = k->dy + o0, *g1 = k->dy + o1, *g2 = k->dy + o2, *g3 = k->dy + o3;
                for (int64_t i = 0; i < len; i++) {
                    s0[i] += ((double)g0[i] + g1[i]) + ((double)g2[i] + g3[i]);
                    s1[i] += ((double)g0[i] * (x0[i] - mu[i]) + (double)g1[i] * (x1[i] - mu[i])) +
                             ((double)g2[i] * (x2[i] - mu[i]) + (double)g3[i] * (x3[i] - mu[i]));
                }
            }
        }
    for (; r < r1; r += step) {
        const frow w = row_at(v, r);
        const float *x = k->x + w.off, *g = k->dy ? k->dy + w.off : NULL;
        if (k->pre) { /* through the activation: one element at a time */
            for (int64_t i = 0; i < len; i++) {
                const double gv = act_grad(k->act, k->pre[w.e + i * w.es], g[i]), d = (double)x[i] - mu[v->dp * i];
                if (v->dp) s0[i] += gv, s1[i] += gv * d;
                else l0[i % LANES] += gv, l1[i % LANES] += gv * d;
            }
        } else if (v->dp) {
            if (k->kind == RED_SUM)
                for (int64_t i = 0; i < len; i++) s0[i] += x[i];
            else if (k->kind == RED_SQDEV)
                for (int64_t i = 0; i < len; i++) {
                    const double d = (double)x[i] - mu[i];
                    s0[i] += d * d;
                }
            else
                for (int64_t i = 0; i < len; i++) {
                    s0[i] += g[i];
                    s1[i] += (double)g[i] * ((double)x[i] - mu[i]);
                }
        } else {
            const double m0 = mu ? mu[0] : 0;
            if (k->kind == RED_SUM) LANE_LOOP(len, l0[j] += x[i]);
            else if (k->kind == RED_SQDEV) LANE_LOOP(len, const double d = (double)x[i] - m0; l0[j] += d * d);
            else LANE_LOOP(len, l0[j] += g[i]; l1[j] += (double)g[i] * ((double)x[i] - m0));
        }
    }
    if (!v->dp)
        for (int j = 0; j < LANES; j++) {
            s0[0] += l0[j];
            if (s1) s1[0] += l1[j];
        }
}

/* Sums of k per slot into acc0 (and acc1 for RED_GRAD), overwritten, in an order fixed by the shape
 * alone (not by the thread count): one thread walks all the rows of a range of slots in order; where
 * every row of the tensor shares the slots (channels-last SPATIAL), fixed blocks of rows sum into
 * partial sums of their own, added up in block order. */
static cudnnStatus_t reduce(const fview *v, const fred *k, double *acc0, double *acc1)
{
    const int big = v->rows * v->len > PAR_ELEMS;
    memset(acc0, 0, sizeof(double) * (size_t)v->np);
    if (acc1) memset(acc1, 0, sizeof(double) * (size_t)v->np);
    if (!v->chan_last || v->ps) {
        const int64_t groups = v->chan_last ? v->s : v->c; /* rows g, g + groups, ... share their slots */
#pragma omp parallel for schedule(static) if (big)
        for (int64_t g = 0; g < groups; g++) reduce_rows(v, k, g, v->rows, groups, acc0, acc1);
        return CUDNN_STATUS_SUCCESS;
    }
    int64_t nb = v->rows * v->len / CHUNK_ELEMS;
    nb = nb > MAX_CHUNKS ? MAX_CHUNKS : nb > v->rows ? v->rows : nb < 1 ? 1 : nb;
    const int64_t np = v->np, sums = acc1 ? 2 : 1;
    double *part = calloc((size_t)(nb * np * sums), sizeof(double));
    if (!part) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
#pragma omp parallel for schedule(static) if (big)
    for (int64_t b = 0; b < nb; b++)
        reduce_rows(v, k, v->rows * b / nb, v->rows * (b + 1) / nb, 1, part + b * np, acc1 ? part + (nb + b) * np : NULL);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t q = 0; q < np; q++) {
            acc0[q] += part[b * np + q];
            if (acc1) acc1[q] += part[(nb + b) * np + q];
        }
    free(part);
    return CUDNN_STATUS_SUCCESS;
}

/* Batch mean and biased variance per slot: a pass for the mean, a second for the squared deviations. */
static cudnnStatus_t fast_stats(const fdnn_norm_prob *p, const fview *v, double *mean, double *var)
{
    fred k = {RED_SUM, p->xp, NULL, NULL, NULL, NULL};
    cudnnStatus_t st = reduce(v, &k, mean, NULL);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    for (int64_t q = 0; q < v->np; q++) mean[q] /= (double)v->m;
    k.kind = RED_SQDEV;
    k.mean = mean;
    st = reduce(v, &k, var, NULL);
    for (int64_t q = 0; q < v->np; q++) var[q] /= (double)v->m;
    return st;
}

/* Row r of fast_rows_fwd (built for AVX2 and the baseline: the double arithmetic is the same in both) */
FDNN_CLONES static void fwd_row(const fdnn_norm_prob *p, const fview *v, const double *a, const double *b, int64_t r)
{
    const float *x = p->xp, *z = p->ops == FDNN_NORM_OPS_ADD_ACT ? p->zp : NULL;
    float *y = p->yp;
    double *pre = p->reserve;
    const double alpha = p->alpha, beta = p->beta;
    const int64_t len = v->len;
    const frow w = row_at(v, r);
    const float *xr = x + w.off;
    float *yr = y + w.off;
    const double *ar = a + w.slot, *br = b + w.slot;
    if (p->ops != FDNN_NORM_OPS_NORM) {
        for (int64_t i = 0; i < len; i++) {
            double t = ar[v->dp * i] * xr[i] + br[v->dp * i];
            if (z) t += z[w.off + i];
            if (pre) pre[w.e + i * w.es] = t;
            t = alpha * act_fwd(p->act, t);
            if (beta != 0) t += beta * yr[i];
            yr[i] = (float)t;
        }
    } else if (v->dp) {
        if (beta != 0)
            for (int64_t i = 0; i < len; i++) yr[i] = (float)(ar[i] * xr[i] + br[i] + beta * yr[i]);
        else
            for (int64_t i = 0; i < len; i++) yr[i] = (float)(ar[i] * xr[i] + br[i]);
    } else {
        const double a0 = ar[0], b0 = br[0];
        if (beta != 0)
            for (int64_t i = 0; i < len; i++) yr[i] = (float)(a0 * xr[i] + b0 + beta * yr[i]);
        else
            for (int64_t i = 0; i < len; i++) yr[i] = (float)(a0 * xr[i] + b0);
    }
}

/* y = alpha * act(a*x + b (+ z)) + beta*y row by row, the pre-activation value to the reserve; with
 * ops NORM, a and b come with alpha folded in and no activation follows. y is not read when beta == 0. */
static void fast_rows_fwd(const fdnn_norm_prob *p, const fview *v, const double *a, const double *b)
{
#pragma omp parallel for schedule(static) if (v->rows * v->len > PAR_ELEMS)
    for (int64_t r = 0; r < v->rows; r++) fwd_row(p, v, a, b, r);
}

/* The forward output from the statistics (slot order): a = scale * invstd, b = bias - mean * a. */
static cudnnStatus_t fast_apply(const fdnn_norm_prob *p, const fview *v, const double *mean, const double *invstd)
{
    double *a = malloc(sizeof(double) * (size_t)v->np), *b = malloc(sizeof(double) * (size_t)v->np);
    if (!a || !b) {
        free(a), free(b);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
    load_param(p->sb, p->scale, a, v->np, v);
    load_param(p->sb, p->bias, b, v->np, v);
    const double f = p->ops == FDNN_NORM_OPS_NORM ? p->alpha : 1.0;
    for (int64_t q = 0; q < v->np; q++) {
        a[q] *= invstd[q];
        b[q] = f * (b[q] - mean[q] * a[q]);
        a[q] *= f;
    }
    fast_rows_fwd(p, v, a, b);
    free(a), free(b);
    return CUDNN_STATUS_SUCCESS;
}

/* Row r of fast_rows_bwd (built for AVX2 and the baseline) */
FDNN_CLONES static void bwd_row(const fdnn_norm_prob *p, const fview *v, const double *A, const double *B, const double *C, int64_t r)
{
    const float *x = p->xp, *dy = p->dyp;
    float *dx = p->dxp, *dz = p->ops == FDNN_NORM_OPS_ADD_ACT ? p->dzp : NULL;
    const double *pre = p->ops != FDNN_NORM_OPS_NORM ? p->reserve : NULL, beta = p->beta;
    const int64_t len = v->len;
    const frow w = row_at(v, r);
    const float *xr = x + w.off, *gr = dy + w.off;
    float *dr = dx + w.off;
    const double *Ar = A + w.slot, *Br = B + w.slot, *Cr = C + w.slot;
    if (pre) {
        for (int64_t i = 0; i < len; i++) {
            const int64_t q = v->dp * i;
            const double gv = act_grad(p->act, pre[w.e + i * w.es], gr[i]);
            if (dz) dz[w.off + i] = (float)gv; /* after reading dy: dz may be dy's buffer */
            double t = Ar[q] * gv + Br[q] * xr[i] + Cr[q];
            if (beta != 0) t += beta * dr[i];
            dr[i] = (float)t;
        }
    } else if (v->dp) {
        if (beta != 0)
            for (int64_t i = 0; i < len; i++) dr[i] = (float)(Ar[i] * gr[i] + Br[i] * xr[i] + Cr[i] + beta * dr[i]);
        else
            for (int64_t i = 0; i < len; i++) dr[i] = (float)(Ar[i] * gr[i] + Br[i] * xr[i] + Cr[i]);
    } else {
        const double a0 = Ar[0], b0 = Br[0], c0 = Cr[0];
        if (beta != 0)
            for (int64_t i = 0; i < len; i++) dr[i] = (float)(a0 * gr[i] + b0 * xr[i] + c0 + beta * dr[i]);
        else
            for (int64_t i = 0; i < len; i++) dr[i] = (float)(a0 * gr[i] + b0 * xr[i] + c0);
    }
}

/* dx = A*g + B*x + C (+ beta*dx) row by row (alpha folded into A, B, C), g = dy or, through the
 * activation, also written to dz. dx is not read when beta == 0. */
static void fast_rows_bwd(const fdnn_norm_prob *p, const fview *v, const double *A, const double *B, const double *C)
{
#pragma omp parallel for schedule(static) if (v->rows * v->len > PAR_ELEMS)
    for (int64_t r = 0; r < v->rows; r++) bwd_row(p, v, A, B, C, r);
}

/* backward_general on the caller's FLOAT buffers (slot order): one pass for the sums, one for dx, where
 * dx = k*(g - db/m - (x - mean)*invstd*ds/m) with k = scale*invstd is A*g + B*x + C per slot. */
static cudnnStatus_t backward_fast(const fdnn_norm_prob *p, const fview *v, const double *mean, const double *inv, const double *sc,
                                   double *db, double *ds)
{
    fred k = {RED_GRAD, p->xp, p->dyp, mean, p->ops != FDNN_NORM_OPS_NORM ? p->reserve : NULL, p->act};
    cudnnStatus_t st = reduce(v, &k, db, ds);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    const size_t pb = sizeof(double) * (size_t)v->np;
    double *A = malloc(pb), *B = malloc(pb), *C = malloc(pb);
    if (!A || !B || !C) {
        free(A), free(B), free(C);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
    const double m = (double)v->m;
    for (int64_t q = 0; q < v->np; q++) {
        ds[q] *= inv[q];
        const double kq = p->alpha * sc[q] * inv[q], t = inv[q] * ds[q] / m;
        A[q] = kq;
        B[q] = -kq * t;
        C[q] = kq * (mean[q] * t - db[q] / m);
    }
    fast_rows_bwd(p, v, A, B, C);
    free(A), free(B), free(C);
    return CUDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------ entry points */

/* Inference (the estimated statistics) or training (the batch statistics; the saved statistics and
 * the running averages, with the unbiased variance, written where asked). */
static cudnnStatus_t forward(const fdnn_norm_prob *p, int training)
{
    shape s = get_shape(p);
    fview fv;
    const fview *v = fast_view(p, &fv) ? &fv : NULL;
    const size_t pb = sizeof(double) * (size_t)s.p;
    double *mean = malloc(pb), *var = malloc(pb), *inv = malloc(pb);
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    if (!mean || !var || !inv) {
        st = FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
        goto done;
    }
    if (training) {
        st = v ? fast_stats(p, v, mean, var) : batch_stats(p, &s, mean, var);
    } else {
        load_param(p->mv, p->est_mean, mean, s.p, v);
        load_param(p->mv, p->est_var, var, s.p, v);
    }
    if (st != CUDNN_STATUS_SUCCESS) goto done;
    for (int64_t q = 0; q < s.p; q++) inv[q] = 1.0 / sqrt(var[q] + p->eps);
    st = v ? fast_apply(p, v, mean, inv) : apply(p, &s, mean, inv);
    if (st != CUDNN_STATUS_SUCCESS || !training) goto done;
    if (p->save_mean) {
        store_param(p->mv, p->save_mean, mean, s.p, v);
        store_param(p->mv, p->save_invstd, inv, s.p, v);
    }
    if (p->run_mean) { /* inv, stored already, holds the old running values */
        double f = p->factor;
        double unb = s.m > 1 ? (double)s.m / (double)(s.m - 1) : 1.0;
        load_param(p->mv, p->run_mean, inv, s.p, v);
        for (int64_t q = 0; q < s.p; q++) inv[q] = inv[q] * (1.0 - f) + mean[q] * f;
        store_param(p->mv, p->run_mean, inv, s.p, v);
        load_param(p->mv, p->run_var, inv, s.p, v);
        for (int64_t q = 0; q < s.p; q++) inv[q] = inv[q] * (1.0 - f) + var[q] * unb * f;
        store_param(p->mv, p->run_var, inv, s.p, v);
    }
done:
    free(mean), free(var), free(inv);
    return st;
}

cudnnStatus_t fdnn_cpu_norm_infer(const fdnn_norm_prob *p)
{
    return forward(p, 0);
}

cudnnStatus_t fdnn_cpu_norm_train(const fdnn_norm_prob *p)
{
    return forward(p, 1);
}

cudnnStatus_t fdnn_cpu_norm_backward(const fdnn_norm_prob *p)
{
    shape s = get_shape(p);
    fview fv;
    const fview *v = fast_view(p, &fv) ? &fv : NULL;
    size_t pb = sizeof(double) * (size_t)s.p;
    double *mean = malloc(pb), *inv = malloc(pb), *sc = malloc(pb), *db = malloc(pb), *ds = malloc(pb);
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    if (!mean || !inv || !sc || !db || !ds) {
        st = FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
        goto done;
    }
    if (p->save_mean) {
        load_param(p->mv, p->save_mean, mean, s.p, v);
        load_param(p->mv, p->save_invstd, inv, s.p, v);
    } else {
        st = v ? fast_stats(p, v, mean, inv) : batch_stats(p, &s, mean, inv);
        if (st != CUDNN_STATUS_SUCCESS) goto done;
        for (int64_t q = 0; q < s.p; q++) inv[q] = 1.0 / sqrt(inv[q] + p->eps);
    }
    load_param(p->sb, p->scale, sc, s.p, v);
    st = v ? backward_fast(p, v, mean, inv, sc, db, ds) : backward_general(p, &s, mean, inv, sc, db, ds);
    if (st != CUDNN_STATUS_SUCCESS) goto done;
    /* parameter gradients: d = alphaP*d + betaP*d_old (the old values loaded into mean and inv, no longer needed) */
    for (int64_t q = 0; q < s.p; q++) ds[q] *= p->alpha_p, db[q] *= p->alpha_p;
    if (p->beta_p != 0) {
        load_param(p->sb, p->dscale, mean, s.p, v);
        load_param(p->sb, p->dbias, inv, s.p, v);
        for (int64_t q = 0; q < s.p; q++) ds[q] += p->beta_p * mean[q], db[q] += p->beta_p * inv[q];
    }
    store_param(p->sb, p->dscale, ds, s.p, v);
    store_param(p->sb, p->dbias, db, s.p, v);
done:
    free(mean), free(inv), free(sc), free(db), free(ds);
    return st;
}
