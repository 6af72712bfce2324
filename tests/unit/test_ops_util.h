/* Test helpers shared by the tests/unit/test_ops_*.c programs: strided tensors of any layout
 * and data type whose logical (N, C, spatial row-major) contents are exchanged as doubles.
 * Layouts: OL_NCHW, OL_NHWC (packed), OL_PADDED (NCHW with gaps between every dim),
 * OL_PADDED_NHWC, OL_VECT (NCHW_VECT_C, 4-D only, for the int8x4/x32 types), OL_GAPS and
 * OL_GAPS_NHWC (gaps only between channel planes / pixels and between images: the spatial dims
 * still collapse into one stride). Gaps are filled with a sentinel and checked unchanged after
 * every output read. */
#ifndef TEST_OPS_UTIL_H
#define TEST_OPS_UTIL_H
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"

enum { OL_NCHW = 0, OL_NHWC = 1, OL_PADDED = 2, OL_PADDED_NHWC = 3, OL_VECT = 4, OL_GAPS = 5, OL_GAPS_NHWC = 6 };
static const char *ol_name[] = {"NCHW", "NHWC", "padded", "padded-NHWC", "VECT_C", "NCHW+gaps", "NHWC+gaps"};

typedef struct {
    cudnnTensorDescriptor_t d;
    cudnnDataType_t dt, st; /* descriptor type, scalar storage type */
    int nd, dim[8], stride[8];
    int64_t n, span;        /* logical elements, scalars spanned */
    int64_t *off;           /* logical index -> scalar offset */
    double *shadow;         /* last uploaded strided contents (doubles) */
    void *dev;
    size_t bytes;
} tt;

static inline cudnnDataType_t tt_scalar_type(cudnnDataType_t t)
{
    if (t == CUDNN_DATA_INT8x4 || t == CUDNN_DATA_INT8x32) return CUDNN_DATA_INT8;
    if (t == CUDNN_DATA_UINT8x4) return CUDNN_DATA_UINT8;
    return t;
}

static inline void tt_make(cudnnHandle_t h, tt *t, cudnnDataType_t dt, int nd, const int *dim, int layout)
{
    memset(t, 0, sizeof *t);
    t->dt = dt;
    t->st = tt_scalar_type(dt);
    t->nd = nd;
    memcpy(t->dim, dim, sizeof(int) * (size_t)nd);
    t->n = 1;
    for (int i = 0; i < nd; i++) t->n *= dim[i];
    TH_OK(cudnnCreateTensorDescriptor(&t->d));
    int vect = 1;
    if (layout == OL_VECT) {
        vect = dt == CUDNN_DATA_INT8x32 ? 32 : 4;
        TH_OK(cudnnSetTensorNdDescriptorEx(t->d, CUDNN_TENSOR_NCHW_VECT_C, dt, nd, dim));
        int64_t s = 1;
        for (int i = nd - 1; i >= 0; i--) { t->stride[i] = (int)s; s *= (i == 1 ? dim[1] / vect : dim[i]); }
    } else {
        int order[8], k = 0, gap = (layout == OL_PADDED || layout == OL_PADDED_NHWC), ncs_gap = layout == OL_GAPS || layout == OL_GAPS_NHWC;
        if (layout == OL_NHWC || layout == OL_PADDED_NHWC || layout == OL_GAPS_NHWC) {
            order[k++] = 1;
            for (int i = nd - 1; i >= 2; i--) order[k++] = i;
            order[k++] = 0;
        } else {
            for (int i = nd - 1; i >= 0; i--) order[k++] = i;
        }
        int64_t s = 1;
        for (int j = 0; j < nd; j++) {
            t->stride[order[j]] = (int)s;
            s *= dim[order[j]] + gap;
            if (ncs_gap && (order[j] == 1 || order[j] == 2)) s += order[j] == 1 ? 3 : 5; /* after dim 1 (C) and dim 2 (outermost spatial) */
        }
        TH_OK(cudnnSetTensorNdDescriptor(t->d, dt, nd, dim, t->stride));
    }
    t->off = malloc(sizeof(int64_t) * (size_t)t->n);
    t->span = 1;
    for (int64_t i = 0; i < t->n; i++) {
        int64_t r = i, o = 0;
        int c = 0;
        for (int d = nd - 1; d >= 0; d--) {
            int x = (int)(r % dim[d]);
            r /= dim[d];
            if (d == 1) c = x;
            o += (int64_t)(d == 1 && vect > 1 ? x / vect : x) * t->stride[d];
        }
        t->off[i] = vect > 1 ? o * vect + c % vect : o;
        if (t->off[i] + 1 > t->span) t->span = t->off[i] + 1;
    }
    if (vect > 1) t->span = (t->span + vect - 1) / vect * vect;
    t->bytes = (size_t)t->span * th_dtype_size(t->st);
    t->shadow = malloc(sizeof(double) * (size_t)t->span);
    t->dev = th_alloc(h, t->bytes);
}

static inline void tt_free(cudnnHandle_t h, tt *t)
{
    cudnnDestroyTensorDescriptor(t->d);
    free(t->off);
    free(t->shadow);
    th_free(h, t->dev);
}

/* Upload logical values (gaps get `gap`); logical values are rounded in place to the type. */
static inline void tt_fill(cudnnHandle_t h, tt *t, double *logical, double gap)
{
    for (int64_t i = 0; i < t->span; i++) t->shadow[i] = gap;
    for (int64_t i = 0; i < t->n; i++) t->shadow[t->off[i]] = logical[i];
    void *raw = malloc(t->bytes);
    th_from_double(t->shadow, t->st, raw, (size_t)t->span);
    th_to_double(raw, t->st, t->shadow, (size_t)t->span);
    for (int64_t i = 0; i < t->n; i++) logical[i] = t->shadow[t->off[i]];
    th_upload(h, t->dev, raw, t->bytes);
    free(raw);
}

/* Download into logical order; returns 0 (and records a failure) if a gap changed. */
static inline int tt_read(cudnnHandle_t h, tt *t, double *logical)
{
    void *raw = malloc(t->bytes);
    double *now = malloc(sizeof(double) * (size_t)t->span);
    th_sync(h);
    th_download(h, raw, t->dev, t->bytes);
    th_to_double(raw, t->st, now, (size_t)t->span);
    char *mark = calloc((size_t)t->span, 1);
    for (int64_t i = 0; i < t->n; i++) {
        logical[i] = now[t->off[i]];
        mark[t->off[i]] = 1;
    }
    int ok = 1;
    for (int64_t i = 0; i < t->span && ok; i++)
        if (!mark[i] && !(now[i] == t->shadow[i] || (isnan(now[i]) && isnan(t->shadow[i])))) ok = 0;
    TH_CHECK(ok, "a gap between strided elements was written");
    free(raw);
    free(now);
    free(mark);
    return ok;
}

/* Bytes of the whole device buffer, for "output unchanged on error" checks. */
static inline int tt_unchanged(cudnnHandle_t h, tt *t)
{
    double *l = malloc(sizeof(double) * (size_t)t->n);
    int gaps = tt_read(h, t, l);
    int same = 1;
    for (int64_t i = 0; i < t->n; i++) {
        double s = t->shadow[t->off[i]];
        if (!(l[i] == s || (isnan(l[i]) && isnan(s)))) same = 0;
    }
    free(l);
    return gaps && same;
}

/* Random integers in [lo, hi] with at least one nonzero (so a reference is never all zero). */
static inline void fill_nz(double *v, int64_t n, int lo, int hi)
{
    th_fill_int(v, (size_t)n, lo, hi);
    int nz = 0;
    for (int64_t i = 0; i < n; i++) nz |= v[i] != 0;
    if (!nz) v[0] = hi != 0 ? hi : lo;
}

static inline double *dalloc(int64_t n) { return malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)); }

/* Scaling factors as cuDNN reads them: double for DOUBLE tensors, float otherwise. */
typedef union { float f; double d; } scal;
static inline scal mkscal(double v, cudnnDataType_t t)
{
    scal s;
    memset(&s, 0, sizeof s);
    if (t == CUDNN_DATA_DOUBLE) s.d = v;
    else s.f = (float)v;
    return s;
}

static const cudnnDataType_t float_types[4] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};

/* Output prior: NaN when beta == 0 (proves it is not read), else random integers. */
static inline void prior_fill_t(double *v, int64_t n, double beta, cudnnDataType_t t)
{
    int is_int = t != CUDNN_DATA_FLOAT && t != CUDNN_DATA_DOUBLE && t != CUDNN_DATA_HALF && t != CUDNN_DATA_BFLOAT16;
    if (beta == 0) for (int64_t i = 0; i < n; i++) v[i] = is_int ? 99 : NAN; /* integers cannot hold NaN */
    else th_fill_int(v, (size_t)n, -4, 4);
}
#define prior_fill(v, n, beta) prior_fill_t(v, n, beta, CUDNN_DATA_FLOAT)

/* Dims for the CPU backend's FLOAT fast paths of the whole-tensor ops (src/cpu/tensor_fast.c): 4-D, or 5-D when
 * iter % 3 == 2, of sizes that are multiples of nothing in particular; every fourth iter more than the 65536
 * elements below which those ops run on one thread. Returns the rank. */
static inline int fast_dims(int iter, int *dim)
{
    const int nd = iter % 3 == 2 ? 5 : 4, big = iter % 4 == 3;
    dim[0] = th_randint(big ? 2 : 1, 3);
    dim[1] = big ? th_randint(24, 40) : th_randint(1, 40);
    for (int i = 2; i < nd; i++) dim[i] = big ? th_randint(nd == 5 ? 12 : 40, nd == 5 ? 15 : 61) : th_randint(1, 9);
    return nd;
}

/* The dims of an operand broadcast over dim, of kind k: 0 dim itself, 1 per channel (1xCx1x1), 2 per image
 * and channel (NxCx1x1), 3 a single value, 4 per position (1x1xHxW), 5 per image and position (Nx1xHxW), 6 the
 * same for every image (1xCxHxW): the FAST_BCAST_KINDS kinds the fast paths take; FAST_BCAST_PARTIAL constant
 * over the last dim only, which they leave to the general path */
#define FAST_BCAST_KINDS 7
#define FAST_BCAST_PARTIAL 7
static inline void fast_bcast_dims(int nd, const int *dim, int k, int *bdim)
{
    static const char keep[FAST_BCAST_KINDS][3] = {{1, 1, 1}, {0, 1, 0}, {1, 1, 0}, {0, 0, 0}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}}; /* N, C, spatial */
    for (int i = 0; i < nd; i++) bdim[i] = (k == FAST_BCAST_PARTIAL ? i < nd - 1 : keep[k][i < 2 ? i : 2]) ? dim[i] : 1;
}

/* A layout of the fast paths: NCHW-like (nhwc 0) or NHWC-like, packed or with gaps between channels and images */
static inline int fast_layout(int nhwc, int gaps) { return nhwc ? (gaps ? OL_GAPS_NHWC : OL_NHWC) : (gaps ? OL_GAPS : OL_NCHW); }

/* A random scaling factor, exact in float: +-[0.25, 2) */
static inline double fast_scale(void) { return (double)(float)th_uniform(0.25, 2) * (th_randint(0, 1) ? -1 : 1); }
#endif

#ifndef TEST_OPS_FD
#define TEST_OPS_FD
/* Central finite differences of a scalar loss L(x) over n inputs (x restored afterwards). */
typedef double (*fd_loss)(void *ctx, const double *x);
static inline void fd_grad(int64_t n, double *x, fd_loss L, void *ctx, double eps, double *g)
{
    for (int64_t i = 0; i < n; i++) {
        double s = x[i];
        x[i] = s + eps;
        double lp = L(ctx, x);
        x[i] = s - eps;
        double lm = L(ctx, x);
        x[i] = s;
        g[i] = (lp - lm) / (2 * eps);
    }
}
#endif
