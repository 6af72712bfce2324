/* LRN descriptor limits, cudnnLRNCrossChannelForward/Backward and cudnnDivisiveNormalization
 * Forward/Backward: 4-D and 5-D, FLOAT/DOUBLE/HALF/BFLOAT16, layouts,
 * alpha/beta with NaN prefill, window sizes 1..16, means NULL or given; backward results are
 * checked against central finite differences of the reference forward. Then the CPU backend's FLOAT
 * fast path (fast_case, fast_specials): its layouts, in place, threaded sizes, extreme values. */
#include "test_ops_util.h"
#include "ops_ref.h"

typedef struct { int div, nd; const int *dim; unsigned n; double a, b, k; const double *m, *dy; double *tmp; int64_t cnt; double *x; } ln_ctx;
static void ln_fwd(const ln_ctx *c, const double *x, double *y)
{
    int64_t S = 1;
    for (int i = 2; i < c->nd; i++) S *= c->dim[i];
    if (c->div) ref_divnorm_fwd(c->nd - 2, (int64_t)c->dim[0] * c->dim[1], c->dim + 2, c->n, c->a, c->b, c->k, x, c->m, y);
    else ref_lrn_fwd(c->dim[0], c->dim[1], S, c->n, c->a, c->b, c->k, x, y);
}
static double ln_loss(void *p, const double *x)
{
    ln_ctx *c = p;
    ln_fwd(c, x, c->tmp);
    double s = 0;
    for (int64_t i = 0; i < c->cnt; i++) s += c->dy[i] * c->tmp[i];
    return s;
}

/* the same loss as a function of the means (x fixed) */
static double ln_loss_m(void *p, const double *m)
{
    ln_ctx *c = p;
    const double *keep = c->m;
    c->m = m;
    double s = ln_loss(p, c->x);
    c->m = keep;
    return s;
}

/* Random x in [-2, 2], means in [-0.5, 0.5], dy in [-1, 1], uploaded (and rounded to the tensors' type) */
static void ln_inputs(cudnnHandle_t h, tt *X, tt *M, tt *DY, double *x, double *m, double *dy)
{
    th_fill_uniform(x, (size_t)X->n, -2, 2);
    th_fill_uniform(m, (size_t)X->n, -0.5, 0.5);
    th_fill_uniform(dy, (size_t)X->n, -1, 1);
    tt_fill(h, X, x, 0);
    tt_fill(h, M, m, 0);
    tt_fill(h, DY, dy, 0);
}

static void one_case(cudnnHandle_t h, cudnnDataType_t dt, int div, int iter)
{
    int nd = th_randint(4, 5), dim[5];
    for (int i = 0; i < nd; i++) dim[i] = th_randint(1, nd == 5 ? 3 : 4);
    dim[1] = th_randint(1, 7);
    unsigned n = (unsigned)(iter % 3 == 0 ? th_randint(1, 16) : th_randint(1, 5));
    double la = th_uniform(0.1, 2.0), lb = th_uniform(0.3, 1.2), lk = th_uniform(0.5, 3.0);
    static const double ab[4][2] = {{1, 0}, {0.5, 0}, {2, 1}, {-1.5, 0.5}};
    double alpha = ab[iter % 4][0], beta = ab[iter % 4][1];
    int use_means = div && iter % 2;
    cudnnLRNDescriptor_t ld;
    TH_OK(cudnnCreateLRNDescriptor(&ld));
    TH_OK(cudnnSetLRNDescriptor(ld, n, la, lb, lk));
    tt X, Y, DY, DX, M, T1, T2, DM;
    int lx = th_randint(0, 3), ly = th_randint(0, 3);
    tt_make(h, &X, dt, nd, dim, lx);
    tt_make(h, &Y, dt, nd, dim, ly);
    tt_make(h, &DY, dt, nd, dim, div ? lx : th_randint(0, 3)); /* divisive: dy shares xDesc */
    int ldx = th_randint(0, 3);
    tt_make(h, &DX, dt, nd, dim, ldx);
    tt_make(h, &M, dt, nd, dim, lx);
    tt_make(h, &T1, dt, nd, dim, lx);
    tt_make(h, &T2, dt, nd, dim, lx);
    tt_make(h, &DM, dt, nd, dim, ldx); /* dMeans shares dx's descriptor (dXdMeansDesc) */
    int64_t cnt = X.n;
    double *x = dalloc(cnt), *m = dalloc(cnt), *y0 = dalloc(cnt), *got = dalloc(cnt), *want = dalloc(cnt), *dy = dalloc(cnt), *dx0 = dalloc(cnt),
           *fd = dalloc(cnt), *tmp = dalloc(cnt), *gdm = dalloc(cnt);
    ln_inputs(h, &X, &M, &DY, x, m, dy);
    prior_fill(y0, cnt, beta);
    tt_fill(h, &Y, y0, 7);
    ln_ctx c = {div, nd, dim, n, la, lb, lk, use_means ? m : NULL, dy, tmp, cnt, x};
    scal sa = mkscal(alpha, dt), sb = mkscal(beta, dt);
    if (div) TH_OK(cudnnDivisiveNormalizationForward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &sa, X.d, X.dev, use_means ? M.dev : NULL, T1.dev, T2.dev, &sb, Y.d, Y.dev));
    else TH_OK(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &sa, X.d, X.dev, &sb, Y.d, Y.dev));
    tt_read(h, &Y, got);
    ln_fwd(&c, x, want);
    for (int64_t i = 0; i < cnt; i++) want[i] = alpha * want[i] + (beta != 0 ? beta * y0[i] : 0);
    char what[200];
    snprintf(what, sizeof what, "%s forward %s %dD %s->%s n=%u alpha=%g beta=%g means=%d", div ? "DivisiveNormalization" : "LRNCrossChannel",
             th_dtype_name(dt), nd, ol_name[lx], ol_name[ly], n, alpha, beta, use_means);
    th_compare(what, got, want, (size_t)cnt, 2 * th_tolerance("lrn", dt));
    /* backward: reference gradient by central differences of the reference forward */
    ln_fwd(&c, x, want);
    tt_fill(h, &Y, want, 7);
    fd_grad(cnt, x, ln_loss, &c, 1e-6, fd);
    prior_fill(dx0, cnt, beta);
    tt_fill(h, &DX, dx0, 3);
    if (div) {
        tt_fill(h, &DM, dx0, 3);
        TH_OK(cudnnDivisiveNormalizationBackward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &sa, X.d, X.dev, use_means ? M.dev : NULL, DY.dev, T1.dev,
                                                 T2.dev, &sb, DX.d, DX.dev, DM.dev));
    } else {
        TH_OK(cudnnLRNCrossChannelBackward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &sa, Y.d, Y.dev, DY.d, DY.dev, X.d, X.dev, &sb, DX.d, DX.dev));
    }
    tt_read(h, &DX, got);
    for (int64_t i = 0; i < cnt; i++) want[i] = alpha * fd[i] + (beta != 0 ? beta * dx0[i] : 0);
    snprintf(what, sizeof what, "%s backward vs finite differences %s %dD n=%u alpha=%g beta=%g", div ? "DivisiveNormalization" : "LRNCrossChannel",
             th_dtype_name(dt), nd, n, alpha, beta);
    double tol = dt == CUDNN_DATA_DOUBLE ? 1e-7 : 4 * th_tolerance("lrn", dt);
    th_compare(what, got, want, (size_t)cnt, tol);
    if (div) {
        tt_read(h, &DM, gdm);
        /* dMeans vs central differences in the means (at zero when means is NULL) */
        double *mv = dalloc(cnt);
        for (int64_t i = 0; i < cnt; i++) mv[i] = use_means ? m[i] : 0.0;
        fd_grad(cnt, mv, ln_loss_m, &c, 1e-6, fd);
        free(mv);
        for (int64_t i = 0; i < cnt; i++) want[i] = alpha * fd[i] + (beta != 0 ? beta * dx0[i] : 0);
        snprintf(what, sizeof what, "DivisiveNormalization dMeans vs finite differences %s %dD n=%u means=%d", th_dtype_name(dt), nd, n, use_means);
        th_compare(what, gdm, want, (size_t)cnt, tol);
    }
    free(x); free(m); free(y0); free(got); free(want); free(dy); free(dx0); free(fd); free(tmp); free(gdm);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX); tt_free(h, &M); tt_free(h, &T1); tt_free(h, &T2); tt_free(h, &DM);
    cudnnDestroyLRNDescriptor(ld);
}

static void desc_and_errors(cudnnHandle_t h)
{
    cudnnLRNDescriptor_t ld;
    TH_OK(cudnnCreateLRNDescriptor(&ld));
    unsigned n; double a, b, k;
    TH_OK(cudnnGetLRNDescriptor(ld, &n, &a, &b, &k));
    TH_CHECK(n == 5 && a == 1e-4 && b == 0.75 && k == 2.0, "LRN descriptor defaults");
    TH_STATUS(cudnnSetLRNDescriptor(ld, CUDNN_LRN_MIN_N - 1, 1, 0.75, 2), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetLRNDescriptor(ld, CUDNN_LRN_MAX_N + 1, 1, 0.75, 2), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetLRNDescriptor(ld, 3, 1, CUDNN_LRN_MIN_BETA / 2, 2), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetLRNDescriptor(ld, 3, 1, 0.75, CUDNN_LRN_MIN_K / 2), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetLRNDescriptor(ld, CUDNN_LRN_MAX_N, 0.5, CUDNN_LRN_MIN_BETA, CUDNN_LRN_MIN_K));
    TH_OK(cudnnGetLRNDescriptor(ld, &n, &a, &b, &k));
    TH_CHECK(n == CUDNN_LRN_MAX_N && a == 0.5 && b == CUDNN_LRN_MIN_BETA && k == CUDNN_LRN_MIN_K, "LRN descriptor round trip");
    TH_STATUS(cudnnGetLRNDescriptor(ld, NULL, &a, &b, &k), CUDNN_STATUS_BAD_PARAM);
    int d[4] = {2, 3, 4, 5}, e[4] = {2, 3, 4, 4}, d3[3] = {2, 3, 4};
    tt X, Y, Z, Yh, X3;
    tt_make(h, &X, CUDNN_DATA_FLOAT, 4, d, OL_NCHW);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, d, OL_NHWC);
    tt_make(h, &Z, CUDNN_DATA_FLOAT, 4, e, OL_NCHW);
    tt_make(h, &Yh, CUDNN_DATA_HALF, 4, d, OL_NCHW);
    tt_make(h, &X3, CUDNN_DATA_FLOAT, 3, d3, OL_NCHW);
    double *v = dalloc(Y.n);
    fill_nz(v, Y.n, -3, 3);
    tt_fill(h, &Y, v, 0);
    float one = 1, zero = 0;
    TH_STATUS(cudnnLRNCrossChannelForward(h, ld, (cudnnLRNMode_t)1, &one, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, X.d, X.dev, &zero, Z.d, Z.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, X.d, X.dev, &zero, Yh.d, Yh.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, X3.d, X3.dev, &zero, X3.d, X3.dev), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnLRNCrossChannelForward(h, NULL, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, X.d, NULL, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnLRNCrossChannelBackward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, X.d, X.dev, Z.d, Z.dev, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDivisiveNormalizationForward(h, ld, (cudnnDivNormMode_t)1, &one, X.d, X.dev, NULL, X.dev, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDivisiveNormalizationForward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, X.d, X.dev, NULL, NULL, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDivisiveNormalizationForward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, X.d, X.dev, NULL, X.dev, X.dev, &zero, Z.d, Z.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDivisiveNormalizationBackward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, X.d, X.dev, NULL, NULL, X.dev, X.dev, &zero, Y.d, Y.dev, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(tt_unchanged(h, &Y), "y changed by a failed LRN call");
    free(v);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &Z); tt_free(h, &Yh); tt_free(h, &X3);
    TH_OK(cudnnDestroyLRNDescriptor(ld));
    TH_OK(cudnnDestroyLRNDescriptor(NULL));
}

/* One backward call (LRN or divisive) of the fast_case problem c into dx (and dm), mode the FREEDNN_CPU_FAST_PATH */
typedef struct {
    cudnnHandle_t h;
    cudnnLRNDescriptor_t ld;
    int div, use_means;
    tt *X, *Y, *DY, *M, *T;
    scal sa, sb;
} fc_ctx;
static cudnnStatus_t fc_bwd(const fc_ctx *c, tt *DX, tt *DM, const void *dy)
{
    if (c->div)
        return cudnnDivisiveNormalizationBackward(c->h, c->ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &c->sa, c->X->d, c->X->dev, c->use_means ? c->M->dev : NULL,
                                                  dy, c->T->dev, c->T->dev, &c->sb, DX->d, DX->dev, DM ? DM->dev : NULL);
    return cudnnLRNCrossChannelBackward(c->h, c->ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &c->sa, c->Y->d, c->Y->dev, c->DY->d, dy, c->X->d, c->X->dev, &c->sb,
                                        DX->d, DX->dev);
}

/* The CPU backend's FLOAT fast path (src/cpu/lrn_fast.c). Every tensor NCHW-like or NHWC-like, packed or with gaps,
 * each in its own layout (divisive: dy in x's, dMeans in dx's), 4-D and 5-D, channel counts that are no multiple of
 * 8, n from 1 to 16 (divisive: up to 7 on the threaded sizes, whose general path is O(n^3)), beta 0.75 (its square
 * root form) and others, alpha/beta (beta 0 over NaN), means NULL or given, in place y = x, dx = dy and dMeans =
 * means (or x); every
 * fourth case above the 65536 elements where the fast path goes parallel. Called with FREEDNN_CPU_FAST_PATH=2, so
 * that a call the fast path declines fails; the forward against the reference, the backward (dx, dMeans) against
 * the general path (FREEDNN_CPU_FAST_PATH=0: gathered doubles, itself checked against finite differences above)
 * on the same inputs. */
static void fast_case(cudnnHandle_t h, int div, int iter)
{
    const int nd = iter % 3 == 2 ? 5 : 4, big = iter % 4 == 3;
    int dim[5];
    dim[0] = big ? th_randint(2, 3) : th_randint(1, 2);
    dim[1] = big ? (th_randint(33, 49) | 1) : th_randint(1, 23);
    for (int i = 2; i < nd; i++) dim[i] = big ? th_randint(nd == 5 ? 11 : 34, nd == 5 ? 14 : 48) : th_randint(1, 9);
    const unsigned n = (unsigned)(div && big ? th_randint(1, nd == 5 ? 4 : 7) : iter % 5 == 0 ? 16 : th_randint(1, 16));
    const double la = th_uniform(0.1, 2.0), lb = iter % 2 ? 0.75 : th_uniform(0.3, 1.2), lk = th_uniform(0.5, 3.0);
    const double alpha = iter % 3 == 0 ? 1 : fast_scale(), beta = iter % 4 < 2 ? 0 : fast_scale();
    const int use_means = div && th_randint(0, 1), inplace = iter % 5 == 1;
    const int lx = fast_layout(th_randint(0, 1), th_randint(0, 1)), ly = inplace ? lx : fast_layout(th_randint(0, 1), th_randint(0, 1));
    const int ldy = div ? lx : fast_layout(th_randint(0, 1), th_randint(0, 1));
    const int ldx = inplace ? ldy : fast_layout(th_randint(0, 1), th_randint(0, 1));
    cudnnLRNDescriptor_t ld;
    TH_OK(cudnnCreateLRNDescriptor(&ld));
    TH_OK(cudnnSetLRNDescriptor(ld, n, la, lb, lk));
    tt X, Y, DY, M, T, DX, DM, DXg, DMg;
    tt_make(h, &X, CUDNN_DATA_FLOAT, nd, dim, lx);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, nd, dim, ly);
    tt_make(h, &DY, CUDNN_DATA_FLOAT, nd, dim, ldy);
    tt_make(h, &M, CUDNN_DATA_FLOAT, nd, dim, lx);
    tt_make(h, &T, CUDNN_DATA_FLOAT, nd, dim, lx);
    tt_make(h, &DX, CUDNN_DATA_FLOAT, nd, dim, ldx);
    tt_make(h, &DM, CUDNN_DATA_FLOAT, nd, dim, ldx);
    tt_make(h, &DXg, CUDNN_DATA_FLOAT, nd, dim, ldx);
    tt_make(h, &DMg, CUDNN_DATA_FLOAT, nd, dim, ldx);
    const int64_t cnt = X.n;
    double *x = dalloc(cnt), *m = dalloc(cnt), *dy = dalloc(cnt), *y0 = dalloc(cnt), *got = dalloc(cnt), *want = dalloc(cnt), *p0 = dalloc(cnt);
    ln_inputs(h, &X, &M, &DY, x, m, dy);
    prior_fill(y0, cnt, beta);
    const scal sa = mkscal(alpha, CUDNN_DATA_FLOAT), sb = mkscal(beta, CUDNN_DATA_FLOAT);
    char what[240];
    snprintf(what, sizeof what, "%s fast %dD %dx%dx%dx%d n=%u lrnBeta=%g alpha=%g beta=%g means=%d %s->%s dy %s dx %s%s", div ? "DivNorm" : "LRN", nd,
             dim[0], dim[1], dim[2], dim[3], n, lb, alpha, beta, use_means, ol_name[lx], ol_name[ly], ol_name[ldy], ol_name[ldx], inplace ? " in place" : "");
    /* forward (in place: y is x's buffer, its prior x itself) */
    tt *out = inplace ? &X : &Y;
    if (!inplace) tt_fill(h, &Y, y0, 7);
    th_cpu_fast_path("2");
    if (div)
        TH_OK(cudnnDivisiveNormalizationForward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &sa, X.d, X.dev, use_means ? M.dev : NULL, T.dev, T.dev, &sb, out->d,
                                                out->dev));
    else TH_OK(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &sa, X.d, X.dev, &sb, out->d, out->dev));
    th_cpu_fast_path(NULL);
    tt_read(h, out, got);
    if (div) ref_divnorm_fwd(nd - 2, (int64_t)dim[0] * dim[1], dim + 2, n, la, lb, lk, x, use_means ? m : NULL, want);
    else {
        int64_t S = 1;
        for (int i = 2; i < nd; i++) S *= dim[i];
        ref_lrn_fwd(dim[0], dim[1], S, n, la, lb, lk, x, want);
    }
    const double *prior = inplace ? x : y0;
    for (int64_t i = 0; i < cnt; i++) want[i] = alpha * want[i] + (beta != 0 ? beta * prior[i] : 0);
    th_compare(what, got, want, (size_t)cnt, 2 * th_tolerance("lrn", CUDNN_DATA_FLOAT));
    if (inplace) tt_fill(h, &X, x, 0);
    /* backward, fast (in place: dx = dy, dMeans = means, or x without means) and general on the same inputs */
    fc_ctx c = {h, ld, div, use_means, &X, &Y, &DY, &M, &T, sa, sb};
    prior_fill(p0, cnt, beta);
    tt *dxf = inplace ? &DY : &DX, *dmf = !inplace ? &DM : use_means ? &M : &X;
    if (!inplace) tt_fill(h, &DX, p0, 3), tt_fill(h, &DM, p0, 3);
    tt_fill(h, &DXg, inplace ? dy : p0, 3);
    tt_fill(h, &DMg, !inplace ? p0 : use_means ? m : x, 3);
    th_cpu_fast_path("0"); /* first: in place, the fast call overwrites dy */
    TH_OK(fc_bwd(&c, &DXg, div ? &DMg : NULL, DY.dev));
    th_cpu_fast_path("2");
    TH_OK(fc_bwd(&c, dxf, div ? dmf : NULL, DY.dev));
    th_cpu_fast_path(NULL);
    tt_read(h, dxf, got);
    tt_read(h, &DXg, want);
    char w2[280];
    snprintf(w2, sizeof w2, "%s: backward dx vs the general path", what);
    th_compare(w2, got, want, (size_t)cnt, 4 * th_tolerance("lrn", CUDNN_DATA_FLOAT));
    if (div) {
        tt_read(h, dmf, got);
        tt_read(h, &DMg, want);
        snprintf(w2, sizeof w2, "%s: backward dMeans vs the general path", what);
        th_compare(w2, got, want, (size_t)cnt, 4 * th_tolerance("lrn", CUDNN_DATA_FLOAT));
    }
    free(x); free(m); free(dy); free(y0); free(got); free(want); free(p0);
    tt *all[9] = {&X, &Y, &DY, &M, &T, &DX, &DM, &DXg, &DMg};
    for (int i = 0; i < 9; i++) tt_free(h, all[i]);
    cudnnDestroyLRNDescriptor(ld);
}

/* Fast path against the general path where the fast path's float powers stop: a negative lrnAlpha (D <= 0: NaN,
 * or a finite power for an integer beta), x so large that D leaves float's range, NaN and inf in x; and the
 * tensors it leaves to the general path (padded layout, DOUBLE, y overlapping x otherwise than in place), which
 * fail under FREEDNN_CPU_FAST_PATH=2 */
static void fast_specials(cudnnHandle_t h)
{
    int dim[4] = {2, 11, 5, 7};
    tt X, Y, Yg, P, D;
    tt_make(h, &X, CUDNN_DATA_FLOAT, 4, dim, OL_NCHW);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, dim, OL_NHWC);
    tt_make(h, &Yg, CUDNN_DATA_FLOAT, 4, dim, OL_NHWC);
    tt_make(h, &P, CUDNN_DATA_FLOAT, 4, dim, OL_PADDED);
    tt_make(h, &D, CUDNN_DATA_DOUBLE, 4, dim, OL_NCHW);
    const int64_t cnt = X.n;
    double *x = dalloc(cnt), *got = dalloc(cnt), *want = dalloc(cnt);
    const float one = 1, zero = 0;
    static const double cases[5][2] = {{-3, 0.6}, {-3, 1.0}, {1, 0.75}, {1, 0.4}, {2, 2.5}}; /* lrnAlpha, lrnBeta */
    for (int k = 0; k < 5; k++)
        for (int div = 0; div < 2; div++) {
            cudnnLRNDescriptor_t ld;
            TH_OK(cudnnCreateLRNDescriptor(&ld));
            TH_OK(cudnnSetLRNDescriptor(ld, 5, cases[k][0], cases[k][1], 1.0));
            th_fill_uniform(x, (size_t)cnt, -3, 3);
            if (k >= 2) x[7] = 3e19, x[40] = -1e30, x[100] = 2e38; /* squares past float's range */
            if (k >= 3) x[200] = NAN, x[300] = INFINITY;
            tt_fill(h, &X, x, 0);
            for (int pass = 0; pass < 2; pass++) {
                tt *o = pass ? &Yg : &Y;
                th_cpu_fast_path(pass ? "0" : "2");
                if (div) TH_OK(cudnnDivisiveNormalizationForward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, X.d, X.dev, NULL, X.dev, X.dev, &zero, o->d, o->dev));
                else TH_OK(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, X.d, X.dev, &zero, o->d, o->dev));
            }
            th_cpu_fast_path(NULL);
            tt_read(h, &Y, got);
            tt_read(h, &Yg, want);
            char what[120];
            snprintf(what, sizeof what, "%s fast vs general, lrnAlpha %g lrnBeta %g, case %d", div ? "DivNorm" : "LRN", cases[k][0], cases[k][1], k);
            th_compare_nonfinite(what, got, want, (size_t)cnt, 1e-6);
            cudnnDestroyLRNDescriptor(ld);
        }
    cudnnLRNDescriptor_t ld;
    TH_OK(cudnnCreateLRNDescriptor(&ld));
    th_cpu_fast_path("2");
    TH_STATUS(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, X.d, X.dev, &zero, P.d, P.dev), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnLRNCrossChannelBackward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, X.d, X.dev, X.d, X.dev, X.d, X.dev, &zero, P.d, P.dev),
              CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnDivisiveNormalizationForward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, P.d, P.dev, NULL, X.dev, X.dev, &zero, P.d, P.dev),
              CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnDivisiveNormalizationBackward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, X.d, X.dev, NULL, X.dev, Y.dev, Y.dev, &zero, P.d, P.dev,
                                                 NULL),
              CUDNN_STATUS_NOT_SUPPORTED);
    double one_d = 1, zero_d = 0;
    TH_STATUS(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one_d, D.d, D.dev, &zero_d, D.d, D.dev), CUDNN_STATUS_NOT_SUPPORTED);
    /* y overlapping x in another layout: X's buffer seen as NHWC */
    TH_STATUS(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, X.d, X.dev, &zero, Y.d, X.dev), CUDNN_STATUS_NOT_SUPPORTED);
    /* dMeans overlapping dx */
    TH_STATUS(cudnnDivisiveNormalizationBackward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, X.d, X.dev, NULL, X.dev, Y.dev, Y.dev, &zero, Y.d, Y.dev,
                                                 Y.dev),
              CUDNN_STATUS_NOT_SUPPORTED);
    th_cpu_fast_path(NULL);
    cudnnDestroyLRNDescriptor(ld);
    free(x); free(got); free(want);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &Yg); tt_free(h, &P); tt_free(h, &D);
}

/* Divisive normalization with means where the fast path's expanded window sums cancel: each plane's upper half
 * near +off, lower half near -off (so its mean, the fast path's shift, is near 0), means = x, k at its minimum.
 * Fast vs general, forward and backward, within float precision */
static void fast_cancellation(cudnnHandle_t h)
{
    int dim[4] = {1, 3, 24, 20};
    tt X, Y, Yg, DX, DXg, DM, DMg;
    tt *all[7] = {&X, &Y, &Yg, &DX, &DXg, &DM, &DMg};
    for (int i = 0; i < 7; i++) tt_make(h, all[i], CUDNN_DATA_FLOAT, 4, dim, i == 0 ? OL_NCHW : OL_NHWC);
    const int64_t cnt = X.n;
    double *x = dalloc(cnt), *got = dalloc(cnt), *want = dalloc(cnt);
    const float one = 1, zero = 0;
    cudnnLRNDescriptor_t ld;
    TH_OK(cudnnCreateLRNDescriptor(&ld));
    TH_OK(cudnnSetLRNDescriptor(ld, 5, 1.0, 0.75, CUDNN_LRN_MIN_K));
    for (int k = 0; k < 3; k++) {
        const double off = k == 0 ? 1e2 : k == 1 ? 1e3 : 1e4;
        for (int64_t i = 0; i < cnt; i++) x[i] = (float)((i / dim[3] % dim[2] < dim[2] / 2 ? off : -off) + th_uniform(0, 1e-3));
        tt_fill(h, &X, x, 0);
        for (int pass = 0; pass < 2; pass++) {
            th_cpu_fast_path(pass ? "0" : "2");
            TH_OK(cudnnDivisiveNormalizationForward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, X.d, X.dev, X.dev, X.dev, X.dev, &zero, pass ? Yg.d : Y.d,
                                                    pass ? Yg.dev : Y.dev));
            TH_OK(cudnnDivisiveNormalizationBackward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, X.d, X.dev, X.dev, X.dev, X.dev, X.dev, &zero,
                                                     DX.d, pass ? DXg.dev : DX.dev, pass ? DMg.dev : DM.dev));
        }
        th_cpu_fast_path(NULL);
        tt *pairs[3][2] = {{&Y, &Yg}, {&DX, &DXg}, {&DM, &DMg}};
        static const char *names[3] = {"y", "dx", "dMeans"};
        for (int j = 0; j < 3; j++) {
            tt_read(h, pairs[j][0], got);
            tt_read(h, pairs[j][1], want);
            char what[120];
            snprintf(what, sizeof what, "DivNorm fast vs general, means = x near +-%g, k %g: %s", off, CUDNN_LRN_MIN_K, names[j]);
            th_compare(what, got, want, (size_t)cnt, 1e-6);
        }
    }
    cudnnDestroyLRNDescriptor(ld);
    free(x); free(got); free(want);
    for (int i = 0; i < 7; i++) tt_free(h, all[i]);
}

int main(void)
{
    th_seed(0x124);
    cudnnHandle_t h = th_create_handle();
    for (int t = 0; t < 4; t++)
        for (int div = 0; div < 2; div++)
            for (int it = 0; it < 8; it++) one_case(h, float_types[t], div, it);
    desc_and_errors(h);
    if (!th_is_gpu(h)) { /* the CPU backend's fast path and its FREEDNN_CPU_FAST_PATH */
        th_seed(0x125);
        for (int div = 0; div < 2; div++)
            for (int it = 0; it < 24; it++) fast_case(h, div, it);
        fast_specials(h);
        fast_cancellation(h);
    }
    cudnnDestroy(h);
    return th_finish();
}
