/* Shared helpers of the normalization-family tests (batch norm, cudnnNormalization*, dropout,
 * spatial transformer): a strided tensor with a descriptor, backend-aware buffers holding
 * logical values, comparisons. Each test program defines nothing of these itself. */
#ifndef FDNN_TEST_NORM_UTIL_H
#define FDNN_TEST_NORM_UTIL_H
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"

static cudnnHandle_t H; /* the handle of the test program */

typedef struct {
    cudnnTensorDescriptor_t d;
    cudnnDataType_t t;
    int nd, dim[5], stride[5];
    int64_t n, span;
} tns;

/* layout 0: packed NCHW, 1: NHWC (channels last), 2: padded strides, 3: NCHW with gaps between
 * channels and between images, 4: NHWC with gaps between pixels and between images (3 and 4 keep the
 * spatial dims in one stride: an N x C x S view) */
static inline void tns_make(tns *a, cudnnDataType_t t, int nd, const int *dim, int layout)
{
    a->t = t;
    a->nd = nd;
    memcpy(a->dim, dim, sizeof(int) * nd);
    int64_t s = 1;
    if (layout == 1 || layout == 4) {
        a->stride[1] = 1;
        s = dim[1] + (layout == 4 ? 2 : 0);
        for (int i = nd - 1; i >= 2; i--) a->stride[i] = (int)s, s *= dim[i];
        a->stride[0] = (int)s + (layout == 4 ? 7 : 0);
    } else if (layout == 3) {
        for (int i = nd - 1; i >= 2; i--) a->stride[i] = (int)s, s *= dim[i];
        a->stride[1] = (int)s + 3;
        a->stride[0] = (int)((s + 3) * dim[1] + 5);
    } else {
        for (int i = nd - 1; i >= 0; i--) {
            a->stride[i] = (int)s;
            s = s * dim[i] + (layout == 2 ? (i % 2) + 1 : 0);
        }
    }
    a->n = 1;
    a->span = 1;
    for (int i = 0; i < nd; i++) a->n *= dim[i], a->span += (int64_t)(dim[i] - 1) * a->stride[i];
    TH_OK(cudnnCreateTensorDescriptor(&a->d));
    TH_OK(cudnnSetTensorNdDescriptor(a->d, t, nd, a->dim, a->stride));
}

static inline int64_t tns_off(const tns *a, int64_t e)
{
    int64_t o = 0;
    for (int i = a->nd - 1; i >= 0; i--) o += (e % a->dim[i]) * a->stride[i], e /= a->dim[i];
    return o;
}

/* Device buffer holding logical values v (may be NULL: all fill); gaps hold `fill`. */
static inline void *tns_buf(const tns *a, const double *v, double fill)
{
    size_t sz = th_dtype_size(a->t);
    char *h = malloc(sz * a->span);
    for (int64_t i = 0; i < a->span; i++) th_from_double(&fill, a->t, h + i * sz, 1);
    if (v)
        for (int64_t e = 0; e < a->n; e++) th_from_double(&v[e], a->t, h + tns_off(a, e) * sz, 1);
    void *d = th_alloc(H, sz * a->span);
    th_upload(H, d, h, sz * a->span);
    free(h);
    return d;
}

static inline void tns_get(const tns *a, const void *d, double *v)
{
    size_t sz = th_dtype_size(a->t);
    char *h = malloc(sz * a->span);
    th_download(H, h, d, sz * a->span);
    for (int64_t e = 0; e < a->n; e++) th_to_double(h + tns_off(a, e) * sz, a->t, &v[e], 1);
    free(h);
}

/* raw bytes, for "unchanged" checks */
static inline int same_bytes(const tns *a, const void *d, const void *before)
{
    size_t bytes = th_dtype_size(a->t) * a->span;
    char *h = malloc(bytes);
    th_download(H, h, d, bytes);
    int r = memcmp(h, before, bytes) == 0;
    free(h);
    return r;
}

/* th_compare, except that an all-zero reference (a degenerate random case, e.g. every
 * member clipped by RELU) demands an all-zero result instead of being rejected */
static inline int cmp(const char *what, const double *got, const double *want, size_t n, double tol)
{
    int nz = 0;
    for (size_t i = 0; i < n; i++) nz |= want[i] != 0;
    if (nz) return th_compare(what, got, want, n, tol);
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fabs(got[i]) > m ? fabs(got[i]) : m;
    return TH_CHECK(m <= tol, "%s: reference is zero but got max |%g|", what, m);
}

static inline double *dalloc(int64_t n) { return calloc((size_t)n, sizeof(double)); }

/* Saved mean / inverse std and the updated running mean / unbiased variance of a training call
 * against the reference (rm: batch mean, rinv: 1/sqrt(biased var + eps), rvu: unbiased var;
 * hrm/hrv: the running values uploaded before the call). pd describes the parameter tensors. */
static inline void check_train_stats(const tns *pd, const char *what, const void *dsm, const void *dsv, const void *drm, const void *drv,
                                     const double *rm, const double *rinv, const double *rvu, const double *hrm, const double *hrv,
                                     double factor, double ptol)
{
    const int64_t P = pd->n;
    double *gp = dalloc(P), *want = dalloc(P);
    char w2[200];
    tns_get(pd, dsm, gp);
    snprintf(w2, sizeof w2, "saved mean %s", what);
    for (int64_t q = 0; q < P; q++) want[q] = rm[q] + 1000; /* shift so an all-zero mean still proves something */
    for (int64_t q = 0; q < P; q++) gp[q] += 1000;
    cmp(w2, gp, want, (size_t)P, ptol);
    tns_get(pd, dsv, gp);
    snprintf(w2, sizeof w2, "saved invstd %s", what);
    cmp(w2, gp, rinv, (size_t)P, ptol);
    tns_get(pd, drm, gp);
    for (int64_t q = 0; q < P; q++) want[q] = hrm[q] * (1 - factor) + rm[q] * factor;
    snprintf(w2, sizeof w2, "running mean %s", what);
    cmp(w2, gp, want, (size_t)P, ptol);
    tns_get(pd, drv, gp);
    for (int64_t q = 0; q < P; q++) want[q] = hrv[q] * (1 - factor) + rvu[q] * factor;
    snprintf(w2, sizeof w2, "running var (unbiased) %s", what);
    cmp(w2, gp, want, (size_t)P, ptol);
    free(gp), free(want);
}

/* values exactly representable in every type: k/4 in [lo, hi] */
static inline void fill_q(double *v, int64_t n, double lo, double hi)
{
    for (int64_t i = 0; i < n; i++) v[i] = th_randint((int)(lo * 4), (int)(hi * 4)) / 4.0;
}

static const cudnnDataType_t types[] __attribute__((unused)) = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
static inline cudnnDataType_t ptype(cudnnDataType_t t) { return (t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16) ? CUDNN_DATA_FLOAT : t; }

static inline void scal(cudnnDataType_t t, double v, void *out)
{
    if (t == CUDNN_DATA_DOUBLE) *(double *)out = v;
    else *(float *)out = (float)v;
}

static inline cudnnActivationDescriptor_t make_act(cudnnActivationMode_t m, double coef)
{
    cudnnActivationDescriptor_t a;
    TH_OK(cudnnCreateActivationDescriptor(&a));
    TH_OK(cudnnSetActivationDescriptor(a, m, CUDNN_NOT_PROPAGATE_NAN, coef));
    return a;
}

#endif
