/* The per-handle convolution plan cache (src/dispatch/plan_cache.c, used by fdnn_conv_select
 * and the Get*_v7 heuristic list): a repeated call gives identical results; changing any
 * descriptor field between calls on the SAME descriptor objects and handle (stride, padding,
 * dilation, mode, data type, layout, groups, math type, batch, rank, algorithm) gives the new
 * problem's result, checked against tests/ref/conv_ref.c, never against the library itself;
 * failed selections are not remembered as successes; the cache stays bounded over many more
 * distinct problems than its limit (heap growth measured where glibc reports it); handles
 * with full caches are destroyed without leaks (run under ASan). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_conv_util.h"
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define HAVE_MALLINFO2 1
#endif

static int skipped = 0;
/* One set of descriptors, re-set in place for every problem: the cache must key on their
 * contents, not on their addresses. */
static cudnnTensorDescriptor_t XD, YD;
static cudnnFilterDescriptor_t WD;
static cudnnConvolutionDescriptor_t CD;

static const char *const DN[] = {"fwd", "bwd-data", "bwd-filter"};

/* Sets the shared descriptors to t (non-vectorised types) with math type math. */
static int set_descs(tcase *t, cudnnMathType_t math)
{
    int nb = t->nsp + 2, off = 3 - t->nsp;
    int xd5[5] = {t->n, t->c, t->in[0], t->in[1], t->in[2]}, yd5[5] = {t->n, t->k, t->out[0], t->out[1], t->out[2]};
    int xdim[5], ydim[5], xst[5], yst[5], wdim[5], pad[3], str[3], dil[3];
    xdim[0] = t->n; xdim[1] = t->c; ydim[0] = t->n; ydim[1] = t->k;
    wdim[0] = t->k; wdim[1] = t->c / t->g;
    for (int i = 0; i < t->nsp; i++) {
        xdim[2 + i] = t->in[off + i];
        ydim[2 + i] = t->out[off + i];
        wdim[2 + i] = t->flt[off + i];
        pad[i] = t->pad[off + i]; str[i] = t->stride[off + i]; dil[i] = t->dil[off + i];
    }
    t->vect = t->yvect = 1;
    t->xspan = tc_layout(t->nsp, xd5, t->xlay, 1, xst, &t->xl);
    t->yspan = tc_layout(t->nsp, yd5, t->ylay, 1, yst, &t->yl);
    int cg = t->c / t->g, T = t->flt[0], R = t->flt[1], S = t->flt[2];
    t->wl.vect = 1;
    if (t->w_nhwc) {
        t->wl.s[1] = 1; t->wl.s[4] = cg; t->wl.s[3] = (int64_t)cg * S; t->wl.s[2] = (int64_t)cg * S * R; t->wl.s[0] = (int64_t)cg * S * R * T;
    } else {
        t->wl.s[4] = 1; t->wl.s[3] = S; t->wl.s[2] = (int64_t)R * S; t->wl.s[1] = (int64_t)T * R * S; t->wl.s[0] = (int64_t)cg * T * R * S;
    }
    t->wspan = (int64_t)t->k * cg * T * R * S;
    t->xd = XD; t->yd = YD; t->wd = WD; t->cd = CD;
    int ok = TH_OK(cudnnSetTensorNdDescriptor(XD, t->xt, nb, xdim, xst));
    ok &= TH_OK(cudnnSetTensorNdDescriptor(YD, t->yt, nb, ydim, yst));
    ok &= TH_OK(cudnnSetFilterNdDescriptor(WD, t->xt, t->w_nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, nb, wdim));
    ok &= TH_OK(cudnnSetConvolutionNdDescriptor(CD, t->nsp, pad, str, dil, (cudnnConvolutionMode_t)t->mode, t->ct));
    ok &= TH_OK(cudnnSetConvolutionGroupCount(CD, t->g));
    ok &= TH_OK(cudnnSetConvolutionMathType(CD, math));
    return ok;
}

/* Runnable algorithms of the heuristic list (status SUCCESS), in its order. */
static int runnable_algos(cudnnHandle_t h, int dir, int *algos)
{
    int cnt = 0, n = 0;
    cudnnStatus_t st;
    if (dir == 0) {
        cudnnConvolutionFwdAlgoPerf_t pf[16];
        st = cudnnGetConvolutionForwardAlgorithm_v7(h, XD, WD, CD, YD, 16, &cnt, pf);
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < cnt; i++) if (pf[i].status == CUDNN_STATUS_SUCCESS) algos[n++] = pf[i].algo;
    } else if (dir == 1) {
        cudnnConvolutionBwdDataAlgoPerf_t pd[16];
        st = cudnnGetConvolutionBackwardDataAlgorithm_v7(h, WD, YD, CD, XD, 16, &cnt, pd);
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < cnt; i++) if (pd[i].status == CUDNN_STATUS_SUCCESS) algos[n++] = pd[i].algo;
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t pw[16];
        st = cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, XD, YD, CD, WD, 16, &cnt, pw);
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < cnt; i++) if (pw[i].status == CUDNN_STATUS_SUCCESS) algos[n++] = pw[i].algo;
    }
    if (st == CUDNN_STATUS_NOT_SUPPORTED && th_is_gpu(h)) return 0;
    TH_OK(st);
    return n;
}

static cudnnStatus_t ws_size(cudnnHandle_t h, int dir, int algo, size_t *wsz)
{
    if (dir == 0) return cudnnGetConvolutionForwardWorkspaceSize(h, XD, WD, CD, YD, (cudnnConvolutionFwdAlgo_t)algo, wsz);
    if (dir == 1) return cudnnGetConvolutionBackwardDataWorkspaceSize(h, WD, YD, CD, XD, (cudnnConvolutionBwdDataAlgo_t)algo, wsz);
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, XD, YD, CD, WD, (cudnnConvolutionBwdFilterAlgo_t)algo, wsz);
}

static cudnnStatus_t call(cudnnHandle_t h, int dir, int algo, tbuf *x, tbuf *w, tbuf *y, void *ws, size_t wsz)
{
    double ad = 1, bd = 0;
    float af = 1, bf = 0;
    const int dbl = x->t == CUDNN_DATA_DOUBLE;
    const void *pa = dbl ? (const void *)&ad : (const void *)&af, *pb = dbl ? (const void *)&bd : (const void *)&bf;
    if (dir == 0) return cudnnConvolutionForward(h, pa, XD, x->d, WD, w->d, CD, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz, pb, YD, y->d);
    if (dir == 1) return cudnnConvolutionBackwardData(h, pa, WD, w->d, YD, y->d, CD, (cudnnConvolutionBwdDataAlgo_t)algo, ws, wsz, pb, XD, x->d);
    return cudnnConvolutionBackwardFilter(h, pa, XD, x->d, YD, y->d, CD, (cudnnConvolutionBwdFilterAlgo_t)algo, ws, wsz, pb, WD, w->d);
}

/* Sets the descriptors to t, runs direction dir with algo (< 0: the first runnable one of the
 * heuristic list; -2: every runnable one) and compares with the reference; with repeat, runs
 * the identical call again and demands bitwise-identical output. */
static int run(cudnnHandle_t h, int dir, tcase *t, cudnnMathType_t math, int algo, int repeat, const char *label)
{
    char desc[512], what[700];
    tc_str(t, desc, sizeof desc);
    if (!set_descs(t, math)) return 0;
    int algos[16], nal = 0;
    if (algo < 0) {
        nal = runnable_algos(h, dir, algos);
        if (nal == 0) {
            if (th_is_gpu(h)) { skipped++; return 1; }
            return TH_CHECK(0, "%s %s: no runnable algorithm for %s", label, DN[dir], desc);
        }
        if (algo == -1) nal = 1;
    } else {
        algos[nal++] = algo;
    }
    tbuf x, w, y;
    tb_init(h, &x, t->xt, t->xspan);
    tb_init(h, &w, t->xt, t->wspan);
    tb_init(h, &y, t->yt, t->yspan);
    tbuf *outb = dir == 0 ? &y : dir == 1 ? &x : &w;
    if (dir != 1) tb_fill(&x, -2, 2);
    if (dir != 2) tb_fill(&w, -2, 2);
    if (dir != 0) tb_fill(&y, -2, 2);
    tb_fill_poison(outb);
    tb_upload(h, &x);
    tb_upload(h, &w);
    tb_upload(h, &y);
    size_t n = (size_t)outb->n;
    double *prior = malloc(sizeof(double) * n), *want = malloc(sizeof(double) * n), *got = malloc(sizeof(double) * n),
           *again = malloc(sizeof(double) * n);
    memcpy(prior, outb->h, sizeof(double) * n);
    ref_conv r = tc_ref(t);
    int d5x[5] = {t->n, t->c, t->in[0], t->in[1], t->in[2]}, d5y[5] = {t->n, t->k, t->out[0], t->out[1], t->out[2]};
    int d5w[5] = {t->k, t->c / t->g, t->flt[0], t->flt[1], t->flt[2]};
    int ok = 1;
    for (int ai = 0; ai < nal; ai++) {
        size_t wsz = 0;
        cudnnStatus_t st = ws_size(h, dir, algos[ai], &wsz);
        if (st == CUDNN_STATUS_NOT_SUPPORTED && th_is_gpu(h)) { skipped++; continue; }
        if (!TH_OK(st)) { ok = 0; continue; }
        void *ws = wsz ? th_alloc(h, wsz) : NULL;
        snprintf(what, sizeof what, "%s %s algo %d: %s", label, DN[dir], algos[ai], desc);
        for (int rep = 0; rep < (repeat ? 2 : 1); rep++) {
            memcpy(outb->h, prior, sizeof(double) * n);
            tb_upload(h, outb); /* NaN again: beta = 0 must not read it */
            st = call(h, dir, algos[ai], &x, &w, &y, ws, wsz);
            if (st == CUDNN_STATUS_NOT_SUPPORTED && th_is_gpu(h)) { skipped++; break; }
            if (!TH_OK(st)) { ok = 0; printf("  in %s\n", what); break; }
            tb_download(h, outb, rep ? again : got);
        }
        if (ws) th_free(h, ws);
        if (!ok) continue;
        /* reference on the host mirrors (the output mirror holds the poison, unread) */
        memcpy(want, prior, sizeof(double) * n);
        if (dir == 0) {
            ref_conv_fwd(&r, x.h, &t->xl, w.h, &t->wl, want, &t->yl, 1, 0);
            ok &= tc_compare_tensor(what, t->yt, got, want, prior, t->yspan, &t->yl, d5y, th_tolerance("conv", t->yt));
        } else if (dir == 1) {
            ref_conv_bwd_data(&r, want, &t->xl, w.h, &t->wl, y.h, &t->yl, 1, 0);
            ok &= tc_compare_tensor(what, t->xt, got, want, prior, t->xspan, &t->xl, d5x, th_tolerance("conv", t->xt));
        } else {
            ref_conv_bwd_filter(&r, x.h, &t->xl, want, &t->wl, y.h, &t->yl, 1, 0);
            ok &= tc_compare_tensor(what, t->xt, got, want, prior, t->wspan, &t->wl, d5w, th_tolerance("conv", t->xt));
        }
        if (repeat) {
            size_t diff = 0;
            for (size_t i = 0; i < n; i++)
                if (!(got[i] == again[i] || (isnan(got[i]) && isnan(again[i])))) diff++;
            ok &= TH_CHECK(diff == 0, "%s: the repeated call differs in %zu of %zu elements", what, diff, n);
        }
    }
    free(prior); free(want); free(got); free(again);
    tb_free(h, &x);
    tb_free(h, &w);
    tb_free(h, &y);
    return ok;
}

/* 2-D n2 c4 k6 in 7x6, 3x3 filter, pad 1, stride 1, FLOAT NCHW, cross-correlation */
static void base_case(tcase *t)
{
    memset(t, 0, sizeof *t);
    t->nsp = 2; t->n = 2; t->c = 4; t->k = 6; t->g = 1;
    for (int i = 0; i < 3; i++) {
        t->in[i] = t->flt[i] = t->stride[i] = t->dil[i] = 1;
        t->pad[i] = 0;
    }
    t->in[1] = 7; t->in[2] = 6;
    t->flt[1] = t->flt[2] = 3;
    t->pad[1] = t->pad[2] = 1;
    t->mode = CUDNN_CROSS_CORRELATION;
    t->xt = t->yt = t->ct = CUDNN_DATA_FLOAT;
    t->xlay = t->ylay = LAY_NCHW;
}

static void fix_out(tcase *t)
{
    for (int i = 0; i < 3; i++) t->out[i] = ref_conv_out_dim(t->in[i], t->pad[i], t->flt[i], t->dil[i], t->stride[i]);
}

enum { V_BASE, V_STRIDE, V_PAD0, V_PAD2, V_DIL, V_MODE, V_DOUBLE, V_HALF, V_HALF_HC, V_BF16, V_INT8, V_NHWC, V_WKRSC, V_GAPS, V_GROUPS,
       V_DEPTHWISE, V_BATCH, V_3D, V_COUNT };
static const char *const VN[] = {"base", "stride 2", "pad 0", "pad 2", "dilation 2", "convolution mode", "DOUBLE", "HALF",
                                 "HALF compute HALF", "BFLOAT16", "INT8", "NHWC x/y + KRSC", "KRSC filter", "strided (gaps)",
                                 "groups 2", "depthwise", "batch 3", "3-D"};

/* base with one field changed; returns 0 when the variant does not exist for dir */
static int variant(tcase *t, int v, int dir)
{
    base_case(t);
    switch (v) {
    case V_BASE: break;
    case V_STRIDE: t->stride[1] = t->stride[2] = 2; break;
    case V_PAD0: t->pad[1] = t->pad[2] = 0; break;
    case V_PAD2: t->pad[1] = t->pad[2] = 2; break;
    case V_DIL: t->dil[1] = t->dil[2] = 2; break;
    case V_MODE: t->mode = CUDNN_CONVOLUTION; break;
    case V_DOUBLE: t->xt = t->yt = t->ct = CUDNN_DATA_DOUBLE; break;
    case V_HALF: t->xt = t->yt = CUDNN_DATA_HALF; break;
    case V_HALF_HC: t->xt = t->yt = t->ct = CUDNN_DATA_HALF; break;
    case V_BF16: t->xt = t->yt = CUDNN_DATA_BFLOAT16; break;
    case V_INT8:
        if (dir != 0) return 0;
        t->xt = CUDNN_DATA_INT8; t->yt = CUDNN_DATA_FLOAT; t->ct = CUDNN_DATA_INT32;
        t->xlay = t->ylay = LAY_NHWC; t->w_nhwc = 1;
        break;
    case V_NHWC: t->xlay = t->ylay = LAY_NHWC; t->w_nhwc = 1; break;
    case V_WKRSC: t->w_nhwc = 1; break;
    case V_GAPS: t->xlay = LAY_NCHW_GAPS; t->ylay = LAY_NHWC_GAPS; break;
    case V_GROUPS: t->g = 2; break;
    case V_DEPTHWISE: t->g = t->c = t->k = 4; break;
    case V_BATCH: t->n = 3; break;
    case V_3D: t->nsp = 3; t->in[0] = 3; t->flt[0] = 2; break;
    }
    fix_out(t);
    return 1;
}

/* Every variant between two base calls, per direction, on one handle: a stale cached choice
 * for either shows as a wrong result or a failed call. */
static void test_changes(cudnnHandle_t h)
{
    static const cudnnMathType_t MT[] = {CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, CUDNN_FMA_MATH};
    for (int dir = 0; dir < 3; dir++) {
        tcase t;
        int fails = th_failed;
        for (int v = 0; v < V_COUNT; v++) {
            if (!variant(&t, v, dir)) continue;
            variant(&t, V_BASE, dir);
            run(h, dir, &t, CUDNN_DEFAULT_MATH, -1, 1, "base before");
            variant(&t, v, dir);
            run(h, dir, &t, CUDNN_DEFAULT_MATH, -1, 1, VN[v]);
            variant(&t, V_BASE, dir);
            run(h, dir, &t, CUDNN_DEFAULT_MATH, -1, 0, "base after");
            variant(&t, v, dir);
            run(h, dir, &t, CUDNN_DEFAULT_MATH, -1, 0, VN[v]); /* now a cache hit */
        }
        /* math type alone changes (FLOAT and HALF) */
        for (int ty = 0; ty < 2; ty++)
            for (int m = 0; m < 4; m++) {
                variant(&t, ty ? V_HALF : V_BASE, dir);
                run(h, dir, &t, MT[m], -1, 1, "math type");
                run(h, dir, &t, MT[(m + 1) % 4], -1, 0, "math type");
            }
        /* every runnable algorithm, alternating, for the base and NHWC problems */
        for (int v = 0; v < 2; v++) {
            variant(&t, v ? V_NHWC : V_BASE, dir);
            run(h, dir, &t, CUDNN_DEFAULT_MATH, -2, 1, "all algorithms");
            run(h, dir, &t, CUDNN_DEFAULT_MATH, -2, 0, "all algorithms again");
        }
        printf("%s: %d variants, math types and algorithms between base calls: %d failures\n", DN[dir], V_COUNT, th_failed - fails);
    }
}

/* An algorithm that cannot run keeps failing with the same status (a failure is never cached
 * as a choice), and the problem still runs with a good one afterwards. */
static void test_failures_not_cached(cudnnHandle_t h)
{
    tcase t;
    variant(&t, V_BASE, 0);
    TH_CHECK(set_descs(&t, CUDNN_DEFAULT_MATH), "descriptors");
    for (int rep = 0; rep < 3; rep++) {
        size_t wsz = 12345;
        TH_STATUS(ws_size(h, 0, CUDNN_CONVOLUTION_FWD_ALGO_FFT, &wsz), CUDNN_STATUS_NOT_SUPPORTED);
        TH_CHECK(wsz == 12345, "sizeInBytes written by a failing call");
        TH_STATUS(ws_size(h, 0, 99, &wsz), CUDNN_STATUS_BAD_PARAM);
    }
    run(h, 0, &t, CUDNN_DEFAULT_MATH, -1, 1, "after failures");
    /* a descriptor made invalid between calls is still rejected (validation is not skipped) */
    int xdim[4] = {2, 5, 7, 6}, xst[4] = {210, 42, 6, 1};
    TH_OK(cudnnSetTensorNdDescriptor(XD, CUDNN_DATA_FLOAT, 4, xdim, xst));
    size_t wsz = 0;
    TH_STATUS(ws_size(h, 0, 0, &wsz), CUDNN_STATUS_BAD_PARAM);
    run(h, 0, &t, CUDNN_DEFAULT_MATH, -1, 0, "after a bad descriptor");
}

#ifdef HAVE_MALLINFO2
static size_t heap_used(void) { return mallinfo2().uordblks; }
#endif

/* Far more distinct problems than the cache holds (1024): the heap stops growing, and
 * results stay right while entries are evicted. */
static void test_bounded(cudnnHandle_t h)
{
    const int total = 6000, mark = 1500;
    size_t at_mark = 0, at_end = 0;
    tcase t;
    int bad = 0;
    for (int i = 0; i < total; i++) {
        base_case(&t);
        t.flt[1] = t.flt[2] = 1;
        t.pad[1] = t.pad[2] = 0;
        t.in[1] = 1 + i / 80;
        t.in[2] = 1 + i % 80;
        fix_out(&t);
        if (i % 1000 == 998) {
            if (!run(h, i % 3, &t, CUDNN_DEFAULT_MATH, -1, 0, "during eviction")) bad++;
            continue;
        }
        if (!set_descs(&t, CUDNN_DEFAULT_MATH)) { bad++; break; }
        int algos[16];
        if (i % 7 == 0) runnable_algos(h, 0, algos);
        size_t wsz;
        cudnnStatus_t st = ws_size(h, 0, 0, &wsz);
        if (!(st == CUDNN_STATUS_SUCCESS || (st == CUDNN_STATUS_NOT_SUPPORTED && th_is_gpu(h)))) {
            TH_OK(st);
            bad++;
            break;
        }
#ifdef HAVE_MALLINFO2
        if (i == mark) at_mark = heap_used();
        if (i == total - 1) at_end = heap_used();
#endif
    }
    TH_CHECK(bad == 0, "%d distinct problems: %d failures", total, bad);
#ifdef HAVE_MALLINFO2
    if (at_mark == 0 || at_end == 0) {
        printf("bounded: the allocator reports no heap statistics (sanitizer build?); growth not measured\n");
    } else {
        /* unbounded: ~(total - mark) * (key + slot overhead) > 1.5 MB; bounded: at most one full cache */
        long long grow = (long long)at_end - (long long)at_mark;
        printf("bounded: heap in use %zu bytes after %d problems, %zu after %d (growth %lld)\n", at_mark, mark, at_end, total, grow);
        TH_CHECK(grow < 700 * 1024, "heap grew by %lld bytes over %d more distinct problems: the plan cache is not bounded", grow,
                 total - mark);
    }
#else
    (void)mark; (void)at_mark; (void)at_end;
    printf("bounded: no mallinfo2 on this C library; growth not measured\n");
#endif
}

/* Handles with full caches are destroyed; ASan (LeakSanitizer) reports anything left. */
static void test_handles(void)
{
    for (int k = 0; k < 3; k++) {
        cudnnHandle_t h2 = th_create_handle();
        tcase t;
        for (int i = 0; i < 40; i++) {
            base_case(&t);
            t.in[2] = 3 + i;
            fix_out(&t);
            if (!set_descs(&t, CUDNN_DEFAULT_MATH)) break;
            int algos[16];
            runnable_algos(h2, i % 3, algos);
            size_t wsz;
            ws_size(h2, i % 3, 0, &wsz);
        }
        variant(&t, V_GROUPS, k);
        run(h2, k, &t, CUDNN_DEFAULT_MATH, -1, 1, "second handle");
        TH_OK(cudnnDestroy(h2));
    }
}

int main(void)
{
    th_seed(20261130);
    cudnnHandle_t h = th_create_handle();
    TH_OK(cudnnCreateTensorDescriptor(&XD));
    TH_OK(cudnnCreateTensorDescriptor(&YD));
    TH_OK(cudnnCreateFilterDescriptor(&WD));
    TH_OK(cudnnCreateConvolutionDescriptor(&CD));
    test_changes(h);
    test_failures_not_cached(h);
    test_bounded(h);
    test_handles();
    cudnnDestroyTensorDescriptor(XD);
    cudnnDestroyTensorDescriptor(YD);
    cudnnDestroyFilterDescriptor(WD);
    cudnnDestroyConvolutionDescriptor(CD);
    TH_OK(cudnnDestroy(h));
    printf("skipped (NOT_SUPPORTED on this GPU backend): %d\n", skipped);
    return th_finish();
}
