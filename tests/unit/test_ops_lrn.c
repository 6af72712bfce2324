/* LRN descriptor limits, cudnnLRNCrossChannelForward/Backward and cudnnDivisiveNormalization
 * Forward/Backward: 4-D and 5-D, FLOAT/DOUBLE/HALF/BFLOAT16, layouts,
 * alpha/beta with NaN prefill, window sizes 1..16, means NULL or given; backward results are
 * checked against central finite differences of the reference forward. */
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
    th_fill_uniform(x, (size_t)cnt, -2, 2);
    th_fill_uniform(m, (size_t)cnt, -0.5, 0.5);
    th_fill_uniform(dy, (size_t)cnt, -1, 1);
    prior_fill(y0, cnt, beta);
    tt_fill(h, &X, x, 0);
    tt_fill(h, &M, m, 0);
    tt_fill(h, &Y, y0, 7);
    tt_fill(h, &DY, dy, 0);
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

int main(void)
{
    th_seed(0x124);
    cudnnHandle_t h = th_create_handle();
    for (int t = 0; t < 4; t++)
        for (int div = 0; div < 2; div++)
            for (int it = 0; it < 8; it++) one_case(h, float_types[t], div, it);
    desc_and_errors(h);
    cudnnDestroy(h);
    return th_finish();
}
