/* Shared helpers of the convolution tests (test_conv.c, test_conv_api.c): random problem
 * generation over the whole supported space, descriptors, backend-aware buffers with a
 * double mirror, and comparison against tests/ref/conv_ref.c. Header-only (static). */
#ifndef TEST_CONV_UTIL_H
#define TEST_CONV_UTIL_H
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"
#include "conv_ref.h"

enum { LAY_NCHW = 0, LAY_NHWC = 1, LAY_NCHW_GAPS = 2, LAY_NHWC_GAPS = 3 };

typedef struct tcase {
    int nsp, n, c, k, g;
    int in[3], out[3], flt[3], pad[3], stride[3], dil[3];
    int mode;
    cudnnDataType_t xt, yt, ct;
    int xlay, ylay, w_nhwc, vect, yvect;
    int math; /* cudnnMathType_t for the convolution descriptor; 0 = CUDNN_DEFAULT_MATH */
    ref_conv_layout xl, yl, wl;
    int64_t xspan, yspan, wspan; /* in scalars */
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
} tcase;

static inline int tc_vect_of(cudnnDataType_t t) { return t == CUDNN_DATA_INT8x4 ? 4 : t == CUDNN_DATA_INT8x32 ? 32 : 1; }

/* strides (in descriptor order N, C, spatial...) and the ref layout of a tensor */
static inline int64_t tc_layout(int nsp, const int *d5, int lay, int vect, int *st, ref_conv_layout *l)
{
    /* d5 = n, c, d, h, w (d = 1 for 2-D) */
    int64_t s5[5];
    int cdim = vect > 1 ? d5[1] / vect : d5[1];
    int gaps = lay == LAY_NCHW_GAPS || lay == LAY_NHWC_GAPS;
    int nhwc = lay == LAY_NHWC || lay == LAY_NHWC_GAPS;
    int order_nchw[5] = {4, 3, 2, 1, 0}, order_nhwc[5] = {1, 4, 3, 2, 0};
    const int *ord = nhwc ? order_nhwc : order_nchw;
    int64_t s = 1;
    for (int i = 0; i < 5; i++) {
        int a = ord[i];
        int dim = a == 1 ? cdim : d5[a];
        if (a == 2 && nsp == 2) { s5[2] = 0; continue; }
        s5[a] = s;
        s = s * dim + (gaps ? th_randint(0, 2) : 0);
    }
    l->vect = vect;
    for (int i = 0; i < 5; i++) l->s[i] = s5[i];
    st[0] = (int)s5[0];
    st[1] = (int)s5[1];
    if (nsp == 2) { st[2] = (int)s5[3]; st[3] = (int)s5[4]; }
    else { st[2] = (int)s5[2]; st[3] = (int)s5[3]; st[4] = (int)s5[4]; }
    int64_t span = 1;
    for (int i = 0; i < 5; i++) span += (int64_t)((i == 1 ? cdim : d5[i]) - 1) * s5[i];
    return span * (vect > 1 ? vect : 1);
}

/* Creates the descriptors and layouts for an already-filled shape; returns 0 on failure */
static inline int tc_setup(tcase *t)
{
    int nb = t->nsp + 2, off = 3 - t->nsp;
    int xd5[5] = {t->n, t->c, t->in[0], t->in[1], t->in[2]}, yd5[5] = {t->n, t->k, t->out[0], t->out[1], t->out[2]};
    int xdim[5], ydim[5], xst[5], yst[5], wdim[5];
    xdim[0] = t->n; xdim[1] = t->c; ydim[0] = t->n; ydim[1] = t->k;
    wdim[0] = t->k; wdim[1] = t->c / t->g;
    int pad[3], str[3], dil[3];
    for (int i = 0; i < t->nsp; i++) {
        xdim[2 + i] = t->in[off + i];
        ydim[2 + i] = t->out[off + i];
        wdim[2 + i] = t->flt[off + i];
        pad[i] = t->pad[off + i]; str[i] = t->stride[off + i]; dil[i] = t->dil[off + i];
    }
    t->vect = tc_vect_of(t->xt);
    t->yvect = tc_vect_of(t->yt);
    t->xspan = tc_layout(t->nsp, xd5, t->vect > 1 ? LAY_NCHW : t->xlay, t->vect, xst, &t->xl);
    t->yspan = tc_layout(t->nsp, yd5, t->yvect > 1 ? LAY_NCHW : t->ylay, t->yvect, yst, &t->yl);
    int cg = t->c / t->g, T = t->flt[0], R = t->flt[1], S = t->flt[2];
    t->wl.vect = t->vect;
    if (t->vect > 1) {
        int cv = cg / t->vect;
        t->wl.s[4] = 1; t->wl.s[3] = S; t->wl.s[2] = (int64_t)R * S; t->wl.s[1] = (int64_t)T * R * S; t->wl.s[0] = (int64_t)cv * T * R * S;
    } else if (t->w_nhwc) {
        t->wl.s[1] = 1; t->wl.s[4] = cg; t->wl.s[3] = (int64_t)cg * S; t->wl.s[2] = (int64_t)cg * S * R; t->wl.s[0] = (int64_t)cg * S * R * T;
    } else {
        t->wl.s[4] = 1; t->wl.s[3] = S; t->wl.s[2] = (int64_t)R * S; t->wl.s[1] = (int64_t)T * R * S; t->wl.s[0] = (int64_t)cg * T * R * S;
    }
    t->wspan = (int64_t)t->k * cg * T * R * S;
    int ok = 1;
    ok &= cudnnCreateTensorDescriptor(&t->xd) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnCreateTensorDescriptor(&t->yd) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnCreateFilterDescriptor(&t->wd) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnCreateConvolutionDescriptor(&t->cd) == CUDNN_STATUS_SUCCESS;
    if (t->vect > 1) ok &= TH_OK(cudnnSetTensorNdDescriptorEx(t->xd, CUDNN_TENSOR_NCHW_VECT_C, t->xt, nb, xdim));
    else ok &= TH_OK(cudnnSetTensorNdDescriptor(t->xd, t->xt, nb, xdim, xst));
    if (t->yvect > 1) ok &= TH_OK(cudnnSetTensorNdDescriptorEx(t->yd, CUDNN_TENSOR_NCHW_VECT_C, t->yt, nb, ydim));
    else ok &= TH_OK(cudnnSetTensorNdDescriptor(t->yd, t->yt, nb, ydim, yst));
    ok &= TH_OK(cudnnSetFilterNdDescriptor(t->wd, t->xt,
                                           t->vect > 1 ? CUDNN_TENSOR_NCHW_VECT_C : t->w_nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, nb,
                                           wdim));
    ok &= TH_OK(cudnnSetConvolutionNdDescriptor(t->cd, t->nsp, pad, str, dil, (cudnnConvolutionMode_t)t->mode, t->ct));
    ok &= TH_OK(cudnnSetConvolutionGroupCount(t->cd, t->g));
    if (t->math) ok &= TH_OK(cudnnSetConvolutionMathType(t->cd, (cudnnMathType_t)t->math));
    return ok;
}

static inline void tc_destroy(tcase *t)
{
    cudnnDestroyTensorDescriptor(t->xd);
    cudnnDestroyTensorDescriptor(t->yd);
    cudnnDestroyFilterDescriptor(t->wd);
    cudnnDestroyConvolutionDescriptor(t->cd);
}

static inline ref_conv tc_ref(const tcase *t)
{
    ref_conv r;
    r.n = t->n; r.c = t->c; r.k = t->k; r.g = t->g;
    for (int i = 0; i < 3; i++) {
        r.in[i] = t->in[i]; r.out[i] = t->out[i]; r.flt[i] = t->flt[i];
        r.pad[i] = t->pad[i]; r.stride[i] = t->stride[i]; r.dil[i] = t->dil[i];
    }
    r.flip = t->mode == CUDNN_CONVOLUTION;
    return r;
}

/* Random shape over the whole space; dtype chosen by the caller. small: keep it tiny. */
static inline void tc_random_shape(tcase *t, int allow_3d)
{
    memset(t, 0, sizeof *t);
    t->nsp = allow_3d && th_randint(0, 3) == 0 ? 3 : 2;
    int gk = th_randint(0, 3);
    int cg = th_randint(1, 4), kg = th_randint(1, 3);
    t->g = gk == 0 ? th_randint(2, 3) : 1;
    if (gk == 1) { t->g = th_randint(2, 5); cg = 1; kg = th_randint(1, 2); } /* depthwise (multiplier kg) */
    t->n = th_randint(1, 3);
    t->c = cg * t->g;
    t->k = kg * t->g;
    for (int i = 0; i < 3; i++) {
        t->in[i] = t->out[i] = t->flt[i] = t->stride[i] = t->dil[i] = 1;
        t->pad[i] = 0;
    }
    for (int i = 3 - t->nsp; i < 3; i++) {
        t->in[i] = th_randint(1, t->nsp == 3 ? 5 : 9);
        t->flt[i] = th_randint(1, 3);
        t->dil[i] = th_randint(0, 3) == 0 ? 2 : 1;
        t->stride[i] = th_randint(1, 3);
        int eff = (t->flt[i] - 1) * t->dil[i] + 1;
        t->pad[i] = th_randint(0, eff - 1 < 2 ? eff - 1 : 2);
        while (t->in[i] < eff) t->in[i]++; /* every output then reads at least one input */
        t->out[i] = ref_conv_out_dim(t->in[i], t->pad[i], t->flt[i], t->dil[i], t->stride[i]);
    }
    t->mode = th_randint(0, 1) ? CUDNN_CROSS_CORRELATION : CUDNN_CONVOLUTION;
    t->xlay = th_randint(0, 3);
    t->ylay = th_randint(0, 3);
    t->w_nhwc = th_randint(0, 2) == 0;
}

/* ------------------------------------------------------------------ buffers */
typedef struct tbuf {
    cudnnDataType_t t;
    int64_t n;      /* scalars */
    double *h;      /* host mirror (values exactly representable in t) */
    void *d;        /* backend buffer */
} tbuf;

static inline size_t tb_bytes(const tbuf *b) { return (size_t)b->n * th_dtype_size(b->t); }

static inline void tb_init(cudnnHandle_t h, tbuf *b, cudnnDataType_t t, int64_t n)
{
    b->t = t;
    b->n = n;
    b->h = calloc((size_t)n, sizeof(double));
    b->d = th_alloc(h, tb_bytes(b) ? tb_bytes(b) : 1);
}

/* round the mirror to the type, then upload */
static inline void tb_upload(cudnnHandle_t h, tbuf *b)
{
    void *tmp = malloc(tb_bytes(b) + 1);
    th_from_double(b->h, b->t, tmp, (size_t)b->n);
    th_to_double(tmp, b->t, b->h, (size_t)b->n);
    th_upload(h, b->d, tmp, tb_bytes(b));
    free(tmp);
}

static inline void tb_download(cudnnHandle_t h, const tbuf *b, double *out)
{
    void *tmp = malloc(tb_bytes(b) + 1);
    th_download(h, tmp, b->d, tb_bytes(b));
    th_to_double(tmp, b->t, out, (size_t)b->n);
    free(tmp);
}

static inline void tb_free(cudnnHandle_t h, tbuf *b)
{
    th_free(h, b->d);
    free(b->h);
}

static inline int tc_is_int(cudnnDataType_t t) { return t == CUDNN_DATA_INT8 || t == CUDNN_DATA_INT8x4 || t == CUDNN_DATA_INT8x32; }

/* fill with small integers; the "prior output" fill is NaN (or 77 for integers) when the
 * result must not read it */
static inline void tb_fill(tbuf *b, int lo, int hi)
{
    th_fill_int(b->h, (size_t)b->n, lo, hi);
    for (int64_t i = 0; i < b->n; i++)
        if (b->h[i] == 0) b->h[i] = hi; /* no zeros: a 1x1 single-channel case must not give an all-zero result */
}
static inline void tb_fill_poison(tbuf *b)
{
    for (int64_t i = 0; i < b->n; i++) b->h[i] = tc_is_int(b->t) ? 77 : NAN;
}

/* Compare the logical elements of a 5-D (n, c, d, h, w) tensor, and check every element
 * outside them kept its prior value. want is rounded to the type first. */
static inline int tc_compare_tensor(const char *what, cudnnDataType_t t, const double *got, double *want, const double *prior, int64_t span,
                             const ref_conv_layout *l, const int *d5, double tol)
{
    int64_t cnt = (int64_t)d5[0] * d5[1] * d5[2] * d5[3] * d5[4];
    double *g = malloc(sizeof(double) * (size_t)cnt), *w = malloc(sizeof(double) * (size_t)cnt);
    char *mark = calloc((size_t)span, 1);
    void *tmp = malloc((size_t)span * 8 + 8);
    th_from_double(want, t, tmp, (size_t)span);
    th_to_double(tmp, t, want, (size_t)span);
    int64_t m = 0;
    for (int a = 0; a < d5[0]; a++)
        for (int c = 0; c < d5[1]; c++)
            for (int d = 0; d < d5[2]; d++)
                for (int h = 0; h < d5[3]; h++)
                    for (int x = 0; x < d5[4]; x++) {
                        int64_t o = ref_conv_off(l, a, c, d, h, x);
                        mark[o] = 1;
                        g[m] = got[o];
                        w[m] = want[o];
                        m++;
                    }
    /* A tiny random problem (say one output element) can have an exactly zero reference; then
     * the result must be exactly zero too, instead of the case counting as unprovable. */
    int nonzero = 0;
    for (int64_t i = 0; i < m; i++) nonzero |= w[i] != 0;
    int ok;
    if (nonzero || m > 8) {
        ok = th_compare(what, g, w, (size_t)m, tol);
    } else {
        int64_t bad = 0;
        for (int64_t i = 0; i < m; i++) bad += g[i] != 0;
        ok = TH_CHECK(bad == 0, "%s: reference is exactly zero but %lld results are not", what, (long long)bad);
    }
    int64_t touched = 0;
    for (int64_t i = 0; i < span; i++)
        if (!mark[i] && !(got[i] == prior[i] || (isnan(got[i]) && isnan(prior[i])))) touched++;
    ok &= TH_CHECK(touched == 0, "%s: %lld elements outside the tensor were modified", what, (long long)touched);
    free(g); free(w); free(mark); free(tmp);
    return ok;
}

static inline const char *tc_str(const tcase *t, char *buf, size_t n)
{
    snprintf(buf, n, "%dD n%d c%d k%d g%d in[%d,%d,%d] f[%d,%d,%d] pad[%d,%d,%d] st[%d,%d,%d] dil[%d,%d,%d] %s x=%s y=%s lay%d/%d w%s",
             t->nsp, t->n, t->c, t->k, t->g, t->in[0], t->in[1], t->in[2], t->flt[0], t->flt[1], t->flt[2], t->pad[0], t->pad[1], t->pad[2],
             t->stride[0], t->stride[1], t->stride[2], t->dil[0], t->dil[1], t->dil[2], t->mode == CUDNN_CONVOLUTION ? "conv" : "xcorr",
             th_dtype_name(t->xt), th_dtype_name(t->yt), t->xlay, t->ylay, t->w_nhwc ? "KRSC" : "KCRS");
    return buf;
}
#endif
