/* CPU engine of batch normalization and cudnnNormalization* (one code path for both).
 * Tensors are gathered into double arrays in logical N,C,spatial order, so every layout
 * and data type takes the same path; statistics accumulate in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../core/norm_desc.h"
#include "../core/activation_math.h"
#include "ops_common.h"

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

/* The loops below walk the elements as rows r = n * C + c of S spatial elements (e = r * S + i, in
 * order, so every sum keeps its order); element i of row r has parameter q = q0 + dq * i. */
static inline int64_t row_q0(const shape *s, int64_t r)
{
    return s->dq ? (r % s->c) * s->s : r % s->c;
}

static void load_param(const struct cudnnTensorStruct *d, const void *ptr, double *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++) out[i] = fdnn_load(ptr, d->dtype, fdnn_logical_offset(d, i));
}

static void store_param(const struct cudnnTensorStruct *d, void *ptr, const double *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++) fdnn_store(ptr, d->dtype, fdnn_logical_offset(d, i), v[i]);
}

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
    load_param(p->sb, p->scale, sc, s->p);
    load_param(p->sb, p->bias, bi, s->p);
    double *pre = p->reserve;
    const struct cudnnActivationStruct *a = p->act;
#pragma omp parallel for if (s->total > 65536)
    for (int64_t r = 0; r < s->rows; r++) {
        const int64_t q0 = row_q0(s, r);
        for (int64_t i = 0, e = r * s->s; i < s->s; i++, e++) {
            const int64_t q = q0 + s->dq * i;
            double v = sc[q] * (x[e] - mean[q]) * invstd[q] + bi[q];
            if (z) v += z[e];
            if (p->ops != FDNN_NORM_OPS_NORM) {
                if (pre) pre[e] = v;
                v = fdnn_act_fwd(a->mode, a->coef, a->swish_beta, a->nan_opt == CUDNN_PROPAGATE_NAN, v);
            }
            x[e] = v;
        }
    }
    fdnn_ops_blend(p->y, p->yp, x, p->alpha, p->beta);
    free(x), free(z), free(sc), free(bi);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_cpu_norm_infer(const fdnn_norm_prob *p)
{
    shape s = get_shape(p);
    double *mean = malloc(sizeof(double) * (size_t)s.p), *inv = malloc(sizeof(double) * (size_t)s.p);
    if (!mean || !inv) {
        free(mean), free(inv);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
    load_param(p->mv, p->est_mean, mean, s.p);
    load_param(p->mv, p->est_var, inv, s.p);
    for (int64_t i = 0; i < s.p; i++) inv[i] = 1.0 / sqrt(inv[i] + p->eps);
    cudnnStatus_t st = apply(p, &s, mean, inv);
    free(mean), free(inv);
    return st;
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

cudnnStatus_t fdnn_cpu_norm_train(const fdnn_norm_prob *p)
{
    shape s = get_shape(p);
    double *mean = malloc(sizeof(double) * (size_t)s.p), *var = malloc(sizeof(double) * (size_t)s.p);
    double *inv = malloc(sizeof(double) * (size_t)s.p), *tmp = malloc(sizeof(double) * (size_t)s.p);
    cudnnStatus_t st = CUDNN_STATUS_ALLOC_FAILED;
    if (!mean || !var || !inv || !tmp) {
        st = FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
        goto done;
    }
    st = batch_stats(p, &s, mean, var);
    if (st != CUDNN_STATUS_SUCCESS) goto done;
    for (int64_t q = 0; q < s.p; q++) inv[q] = 1.0 / sqrt(var[q] + p->eps);
    st = apply(p, &s, mean, inv);
    if (st != CUDNN_STATUS_SUCCESS) goto done;
    if (p->run_mean) {
        double f = p->factor;
        double unb = s.m > 1 ? (double)s.m / (double)(s.m - 1) : 1.0;
        load_param(p->mv, p->run_mean, tmp, s.p);
        for (int64_t q = 0; q < s.p; q++) tmp[q] = tmp[q] * (1.0 - f) + mean[q] * f;
        store_param(p->mv, p->run_mean, tmp, s.p);
        load_param(p->mv, p->run_var, tmp, s.p);
        for (int64_t q = 0; q < s.p; q++) tmp[q] = tmp[q] * (1.0 - f) + var[q] * unb * f;
        store_param(p->mv, p->run_var, tmp, s.p);
    }
    if (p->save_mean) {
        store_param(p->mv, p->save_mean, mean, s.p);
        store_param(p->mv, p->save_invstd, inv, s.p);
    }
done:
    free(mean), free(var), free(inv), free(tmp);
    return st;
}

cudnnStatus_t fdnn_cpu_norm_backward(const fdnn_norm_prob *p)
{
    shape s = get_shape(p);
    size_t tb = sizeof(double) * (size_t)s.total, pb = sizeof(double) * (size_t)s.p;
    double *x = malloc(tb), *g = malloc(tb);
    double *mean = malloc(pb), *inv = malloc(pb), *sc = malloc(pb), *db = calloc((size_t)s.p, sizeof(double)),
           *ds = calloc((size_t)s.p, sizeof(double));
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    if (!x || !g || !mean || !inv || !sc || !db || !ds) {
        st = FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
        goto done;
    }
    if (p->save_mean) {
        load_param(p->mv, p->save_mean, mean, s.p);
        load_param(p->mv, p->save_invstd, inv, s.p);
    } else {
        st = batch_stats(p, &s, mean, inv);
        if (st != CUDNN_STATUS_SUCCESS) goto done;
        for (int64_t q = 0; q < s.p; q++) inv[q] = 1.0 / sqrt(inv[q] + p->eps);
    }
    fdnn_ops_gather_into(p->x, p->xp, x);
    fdnn_ops_gather_into(p->dy, p->dyp, g);
    load_param(p->sb, p->scale, sc, s.p);
    if (p->ops != FDNN_NORM_OPS_NORM) {
        /* back through the activation at the stored pre-activation value */
        const double *pre = p->reserve;
        const struct cudnnActivationStruct *a = p->act;
        for (int64_t e = 0; e < s.total; e++) {
            double yv = fdnn_act_fwd(a->mode, a->coef, a->swish_beta, a->nan_opt == CUDNN_PROPAGATE_NAN, pre[e]);
            g[e] = fdnn_act_bwd(a->mode, a->coef, a->swish_beta, pre[e], yv, g[e]);
        }
        if (p->ops == FDNN_NORM_OPS_ADD_ACT) fdnn_ops_blend(p->dz, p->dzp, g, 1.0, 0.0);
    }
    for (int64_t r = 0; r < s.rows; r++) {
        const int64_t q0 = row_q0(&s, r);
        for (int64_t i = 0, e = r * s.s; i < s.s; i++, e++) {
            const int64_t q = q0 + s.dq * i;
            db[q] += g[e];
            ds[q] += g[e] * (x[e] - mean[q]) * inv[q];
        }
    }
    double m = (double)s.m;
#pragma omp parallel for if (s.total > 65536)
    for (int64_t r = 0; r < s.rows; r++) {
        const int64_t q0 = row_q0(&s, r);
        for (int64_t i = 0, e = r * s.s; i < s.s; i++, e++) {
            const int64_t q = q0 + s.dq * i;
            double xh = (x[e] - mean[q]) * inv[q];
            x[e] = sc[q] * inv[q] * (g[e] - db[q] / m - xh * ds[q] / m);
        }
    }
    fdnn_ops_blend(p->dx, p->dxp, x, p->alpha, p->beta);
    /* parameter gradients: d = alphaP*d + betaP*d_old */
    for (int64_t q = 0; q < s.p; q++) {
        int64_t o = fdnn_logical_offset(p->sb, q);
        double vs = p->alpha_p * ds[q], vb = p->alpha_p * db[q];
        if (p->beta_p != 0) {
            vs += p->beta_p * fdnn_load(p->dscale, p->sb->dtype, o);
            vb += p->beta_p * fdnn_load(p->dbias, p->sb->dtype, o);
        }
        fdnn_store(p->dscale, p->sb->dtype, o, vs);
        fdnn_store(p->dbias, p->sb->dtype, o, vb);
    }
done:
    free(x), free(g), free(mean), free(inv), free(sc), free(db), free(ds);
    return st;
}
