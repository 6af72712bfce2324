/* cudnnActivationForward/Backward: SIGMOID, RELU, TANH, CLIPPED_RELU, ELU,
 * SWISH in FLOAT/DOUBLE/HALF/BFLOAT16 over 3..8-D tensors with independent x/y layouts,
 * alpha/beta with NaN prefill, NaN propagation, finite-difference gradient checks (double),
 * IDENTITY rejected (NOT_SUPPORTED) and the error paths; on the CPU, the FLOAT fast path of every mode against the
 * reference and the double path over special values, alpha/beta, in place and non-multiple-of-8 sizes. */
#include "test_ops_util.h"
#include "ops_ref.h"

static const int modes[6] = {RA_SIGMOID, RA_RELU, RA_TANH, RA_CLIPPED, RA_ELU, RA_SWISH};

/* same >= 0: all four tensors in layout `same` (the GPU's dense flat path) */
static void fwd_bwd_case(cudnnHandle_t h, cudnnDataType_t dt, int mode, int iter, int same)
{
    int nd = th_randint(3, 8), dim[8];
    for (int i = 0; i < nd; i++) dim[i] = th_randint(1, nd > 5 ? 2 : 5);
    int lx = same >= 0 ? same : th_randint(0, 3), ly = same >= 0 ? same : th_randint(0, 3);
    static const double ab[4][2] = {{1, 0}, {0.5, 0}, {2, 1}, {-1.5, 0.5}};
    double alpha = ab[iter % 4][0], beta = ab[iter % 4][1];
    double coef = mode == RA_ELU ? 0.7 : 2.5, sb = 1.3;
    int prop = iter % 2;
    cudnnActivationDescriptor_t ad;
    TH_OK(cudnnCreateActivationDescriptor(&ad));
    TH_OK(cudnnSetActivationDescriptor(ad, (cudnnActivationMode_t)mode, prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN, coef));
    TH_OK(cudnnSetActivationDescriptorSwishBeta(ad, sb));
    tt X, Y, DY, DX;
    tt_make(h, &X, dt, nd, dim, lx);
    tt_make(h, &Y, dt, nd, dim, ly);
    tt_make(h, &DY, dt, nd, dim, same >= 0 ? same : th_randint(0, 3));
    tt_make(h, &DX, dt, nd, dim, same >= 0 ? same : th_randint(0, 3));
    int64_t n = X.n;
    double *x = dalloc(n), *y0 = dalloc(n), *got = dalloc(n), *want = dalloc(n), *dy = dalloc(n), *dx0 = dalloc(n), *yv = dalloc(n);
    th_fill_uniform(x, (size_t)n, -3, 3);
    x[0] = 1.25; /* never an all-zero reference */
    if (n > 2 && (mode == RA_RELU || mode == RA_CLIPPED)) x[n - 1] = NAN;
    prior_fill(y0, n, beta);
    tt_fill(h, &X, x, 0);
    tt_fill(h, &Y, y0, 9);
    scal sa = mkscal(alpha, dt), sbt = mkscal(beta, dt);
    TH_OK(cudnnActivationForward(h, ad, &sa, X.d, X.dev, &sbt, Y.d, Y.dev));
    tt_read(h, &Y, got);
    for (int64_t i = 0; i < n; i++) want[i] = alpha * ref_act(mode, coef, sb, prop, x[i]) + (beta != 0 ? beta * y0[i] : 0);
    char what[200];
    snprintf(what, sizeof what, "ActivationForward mode=%d %s nd=%d %s->%s alpha=%g beta=%g nan=%d", mode, th_dtype_name(dt), nd, ol_name[lx],
             ol_name[ly], alpha, beta, prop);
    th_compare(what, got, want, (size_t)n, th_tolerance("act", dt));
    /* backward: y = act(x) (alpha 1, beta 0), NaN-free x */
    if (n > 2 && (mode == RA_RELU || mode == RA_CLIPPED)) x[n - 1] = 0.5;
    tt_fill(h, &X, x, 0);
    for (int64_t i = 0; i < n; i++) yv[i] = ref_act(mode, coef, sb, 1, x[i]);
    tt_fill(h, &Y, yv, 9);
    fill_nz(dy, n, -3, 3);
    prior_fill(dx0, n, beta);
    tt_fill(h, &DY, dy, 0);
    tt_fill(h, &DX, dx0, 8);
    TH_OK(cudnnActivationBackward(h, ad, &sa, Y.d, Y.dev, DY.d, DY.dev, X.d, X.dev, &sbt, DX.d, DX.dev));
    tt_read(h, &DX, got);
    for (int64_t i = 0; i < n; i++) want[i] = alpha * dy[i] * ref_act_grad(mode, coef, sb, x[i]) + (beta != 0 ? beta * dx0[i] : 0);
    snprintf(what, sizeof what, "ActivationBackward mode=%d %s nd=%d alpha=%g beta=%g", mode, th_dtype_name(dt), nd, alpha, beta);
    /* y is rounded to the type before the library forms the derivative from it: allow 2 roundings */
    th_compare(what, got, want, (size_t)n, 4 * th_tolerance("act", dt));
    free(x); free(y0); free(got); free(want); free(dy); free(dx0); free(yv);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
    cudnnDestroyActivationDescriptor(ad);
}

typedef struct { int mode; double coef, sb; const double *dy; int64_t n; } act_ctx;
static double act_loss(void *c, const double *x)
{
    act_ctx *k = c;
    double s = 0;
    for (int64_t i = 0; i < k->n; i++) s += k->dy[i] * ref_act(k->mode, k->coef, k->sb, 1, x[i]);
    return s;
}

static void grad_check(cudnnHandle_t h, int mode)
{
    int dim[4] = {2, 3, 3, 4};
    tt X, Y, DY, DX;
    tt_make(h, &X, CUDNN_DATA_DOUBLE, 4, dim, OL_NCHW);
    tt_make(h, &Y, CUDNN_DATA_DOUBLE, 4, dim, OL_NHWC);
    tt_make(h, &DY, CUDNN_DATA_DOUBLE, 4, dim, OL_PADDED);
    tt_make(h, &DX, CUDNN_DATA_DOUBLE, 4, dim, OL_NHWC);
    int64_t n = X.n;
    double *x = dalloc(n), *y = dalloc(n), *dy = dalloc(n), *dx = dalloc(n), *fd = dalloc(n);
    act_ctx k = {mode, mode == RA_ELU ? 0.7 : 2.5, 1.3, dy, n};
    for (int64_t i = 0; i < n; i++) {
        do x[i] = th_uniform(-3, 3);
        while (fabs(x[i]) < 0.05 || fabs(x[i] - k.coef) < 0.05);
    }
    th_fill_uniform(dy, (size_t)n, -1, 1);
    cudnnActivationDescriptor_t ad;
    TH_OK(cudnnCreateActivationDescriptor(&ad));
    TH_OK(cudnnSetActivationDescriptor(ad, (cudnnActivationMode_t)mode, CUDNN_PROPAGATE_NAN, k.coef));
    TH_OK(cudnnSetActivationDescriptorSwishBeta(ad, k.sb));
    double one = 1, zero = 0;
    tt_fill(h, &X, x, 0);
    for (int64_t i = 0; i < n; i++) y[i] = NAN;
    tt_fill(h, &Y, y, 0);
    TH_OK(cudnnActivationForward(h, ad, &one, X.d, X.dev, &zero, Y.d, Y.dev));
    tt_read(h, &Y, y);
    tt_fill(h, &DY, dy, 0);
    tt_fill(h, &DX, y, 0);
    TH_OK(cudnnActivationBackward(h, ad, &one, Y.d, Y.dev, DY.d, DY.dev, X.d, X.dev, &zero, DX.d, DX.dev));
    tt_read(h, &DX, dx);
    fd_grad(n, x, act_loss, &k, 1e-6, fd);
    char what[80];
    snprintf(what, sizeof what, "ActivationBackward mode=%d vs finite differences", mode);
    th_compare(what, dx, fd, (size_t)n, 1e-6);
    free(x); free(y); free(dy); free(dx); free(fd);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
    cudnnDestroyActivationDescriptor(ad);
}

static void errors(cudnnHandle_t h)
{
    int d[4] = {2, 3, 4, 5}, e[4] = {2, 3, 4, 4};
    tt X, Y, Yh, Z, I8;
    tt_make(h, &X, CUDNN_DATA_FLOAT, 4, d, OL_NCHW);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, d, OL_NHWC);
    tt_make(h, &Yh, CUDNN_DATA_HALF, 4, d, OL_NCHW);
    tt_make(h, &Z, CUDNN_DATA_FLOAT, 4, e, OL_NCHW);
    tt_make(h, &I8, CUDNN_DATA_INT8, 4, d, OL_NCHW);
    double *v = dalloc(Y.n);
    fill_nz(v, Y.n, -3, 3);
    tt_fill(h, &X, v, 0);
    tt_fill(h, &Y, v, 0);
    cudnnActivationDescriptor_t ad, unset;
    TH_OK(cudnnCreateActivationDescriptor(&ad));
    TH_OK(cudnnCreateActivationDescriptor(&unset));
    TH_OK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0));
    float one = 1, zero = 0;
    TH_STATUS(cudnnActivationForward(h, ad, &one, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnActivationBackward(h, ad, &one, Y.d, Y.dev, Y.d, Y.dev, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_NOT_SUPPORTED);
    TH_OK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
    TH_STATUS(cudnnActivationForward(h, unset, &one, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnActivationForward(h, ad, &one, X.d, X.dev, &zero, Z.d, Z.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnActivationForward(h, ad, &one, X.d, X.dev, &zero, Yh.d, Yh.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnActivationForward(h, ad, &one, I8.d, I8.dev, &zero, I8.d, I8.dev), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnActivationForward(h, ad, &one, X.d, Y.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM); /* in place, strides differ */
    TH_STATUS(cudnnActivationForward(h, ad, NULL, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnActivationForward(h, ad, &one, X.d, NULL, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnActivationForward(NULL, ad, &one, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnActivationBackward(h, ad, &one, Y.d, Y.dev, Z.d, Z.dev, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnActivationBackward(h, ad, &one, Y.d, Y.dev, Y.d, Y.dev, X.d, NULL, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(tt_unchanged(h, &Y), "y changed by a failed activation call");
    free(v);
    cudnnDestroyActivationDescriptor(ad);
    cudnnDestroyActivationDescriptor(unset);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &Yh); tt_free(h, &Z); tt_free(h, &I8);
}

/* a tensor large enough for the parallel paths */
static void big_case(cudnnHandle_t h)
{
    int dim[4] = {4, 16, 40, 41};
    tt X, Y;
    tt_make(h, &X, CUDNN_DATA_FLOAT, 4, dim, OL_NHWC);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, dim, OL_PADDED);
    double *x = dalloc(X.n), *got = dalloc(X.n), *want = dalloc(X.n);
    th_fill_uniform(x, (size_t)X.n, -3, 3);
    tt_fill(h, &X, x, 0);
    for (int64_t i = 0; i < X.n; i++) got[i] = NAN;
    tt_fill(h, &Y, got, 1);
    cudnnActivationDescriptor_t ad;
    TH_OK(cudnnCreateActivationDescriptor(&ad));
    TH_OK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_TANH, CUDNN_PROPAGATE_NAN, 0));
    float one = 1, zero = 0;
    TH_OK(cudnnActivationForward(h, ad, &one, X.d, X.dev, &zero, Y.d, Y.dev));
    tt_read(h, &Y, got);
    for (int64_t i = 0; i < X.n; i++) want[i] = tanh(x[i]);
    th_compare("ActivationForward TANH large NHWC->padded", got, want, (size_t)X.n, th_tolerance("act", CUDNN_DATA_FLOAT));
    /* NHWC -> NHWC: the GPU's dense vectorised path */
    tt Y2;
    tt_make(h, &Y2, CUDNN_DATA_FLOAT, 4, dim, OL_NHWC);
    for (int64_t i = 0; i < X.n; i++) got[i] = NAN;
    tt_fill(h, &Y2, got, 1);
    TH_OK(cudnnActivationForward(h, ad, &one, X.d, X.dev, &zero, Y2.d, Y2.dev));
    tt_read(h, &Y2, got);
    th_compare("ActivationForward TANH large NHWC->NHWC", got, want, (size_t)X.n, th_tolerance("act", CUDNN_DATA_FLOAT));
    free(x); free(got); free(want);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &Y2);
    cudnnDestroyActivationDescriptor(ad);
}

/* RELU (NOT_PROPAGATE_NAN) forward and backward with beta 0 over a dense tensor large enough for the parallel
 * blocks (a partial last one), alpha 0.5 and 1, out of place and in place; NaN, +-inf and -0 in x and dy.
 * Exact: a float product of alpha and a float is exact before its one rounding. */
static void relu_big_case(cudnnHandle_t h, int lay)
{
    int dim[4] = {3, 24, 37, 41};
    tt X, DY, Y;
    tt_make(h, &X, CUDNN_DATA_FLOAT, 4, dim, lay);
    tt_make(h, &DY, CUDNN_DATA_FLOAT, 4, dim, lay);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, dim, lay);
    const int64_t n = X.n;
    double *x = dalloc(n), *dy = dalloc(n), *got = dalloc(n), *want = dalloc(n), *nanv = dalloc(n);
    th_fill_uniform(x, (size_t)n, -3, 3);
    th_fill_uniform(dy, (size_t)n, -3, 3);
    for (int64_t i = 0; i < n; i++) {
        x[i] = i % 97 == 5 ? NAN : i % 89 == 7 ? INFINITY : i % 83 == 11 ? -INFINITY : i % 79 == 13 ? -0.0 : i % 73 == 17 ? 0.0 : x[i];
        dy[i] = i % 71 == 3 ? NAN : i % 67 == 9 ? INFINITY : dy[i];
        nanv[i] = NAN;
    }
    tt_fill(h, &X, x, 0);
    tt_fill(h, &DY, dy, 0);
    cudnnActivationDescriptor_t ad;
    TH_OK(cudnnCreateActivationDescriptor(&ad));
    TH_OK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
    float zero = 0;
    for (int k = 0; k < 4; k++) {
        const float alpha = k % 2 ? 0.5f : 1.0f;
        const int bwd = k >= 2;
        for (int64_t i = 0; i < n; i++) {
            const double v = bwd ? dy[i] : x[i];
            want[i] = (double)(alpha * (float)(x[i] > 0 ? v : 0.0));
        }
        tt_fill(h, &Y, nanv, 0);
        if (bwd) TH_OK(cudnnActivationBackward(h, ad, &alpha, X.d, X.dev, DY.d, DY.dev, X.d, X.dev, &zero, Y.d, Y.dev));
        else TH_OK(cudnnActivationForward(h, ad, &alpha, X.d, X.dev, &zero, Y.d, Y.dev));
        tt_read(h, &Y, got);
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0; i++)
            if (!(got[i] == want[i] && signbit(got[i]) == signbit(want[i])) && !(isnan(got[i]) && isnan(want[i]))) bad = i;
        TH_CHECK(bad < 0, "RELU %s large, layout %d, alpha %g: index %lld got %g want %g", bwd ? "backward" : "forward", lay, alpha, (long long)bad,
                 bad >= 0 ? got[bad] : 0.0, bad >= 0 ? want[bad] : 0.0);
    }
    /* in place: y = x, then dx = dy */
    tt_fill(h, &Y, x, 0);
    float half = 0.5f;
    TH_OK(cudnnActivationForward(h, ad, &half, Y.d, Y.dev, &zero, Y.d, Y.dev));
    tt_read(h, &Y, got);
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++) {
        const double w = (double)(0.5f * (float)(x[i] > 0 ? x[i] : 0.0));
        if (!(got[i] == w || (isnan(got[i]) && isnan(w)))) bad = i;
    }
    TH_CHECK(bad < 0, "RELU forward in place, layout %d: index %lld", lay, (long long)bad);
    tt_fill(h, &DY, dy, 0);
    TH_OK(cudnnActivationBackward(h, ad, &half, X.d, X.dev, DY.d, DY.dev, X.d, X.dev, &zero, DY.d, DY.dev));
    tt_read(h, &DY, got);
    bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++) {
        const double w = (double)(0.5f * (float)(x[i] > 0 ? dy[i] : 0.0));
        if (!(got[i] == w || (isnan(got[i]) && isnan(w)))) bad = i;
    }
    TH_CHECK(bad < 0, "RELU backward in place (dx = dy), layout %d: index %lld", lay, (long long)bad);
    free(x); free(dy); free(got); free(want); free(nanv);
    tt_free(h, &X); tt_free(h, &DY); tt_free(h, &Y);
    cudnnDestroyActivationDescriptor(ad);
}

/* The CPU FLOAT fast path (src/cpu/act_fast.c) for one mode, direction, layout and alpha/beta: required
 * (FREEDNN_CPU_FAST_PATH=2) and checked element by element against the reference (within 16 float ulps of the
 * magnitude of the terms: |alpha act| + |beta y|, for swish's backward |alpha dy| (s + |z s (1 - s)|), plus 8
 * subnormal steps; th_tolerance("act") allows 1e-5 of the largest output), then against the double path (FREEDNN_CPU_FAST_PATH=0):
 * the same NaN / infinity / zero classes, zero signs included, wherever x (or dy) is special. x mixes uniform
 * values, tiny to huge powers of two, the saturation and exp over/underflow points and specials (NaN, +-inf,
 * +-0, subnormals, +-3e38, the clip ceiling and its neighbours); beta 0 with NaN in y; in place (y = x, dx = dy). */
typedef struct { int mode; double coef, sb; int prop; } act_cfg;

static double act_grad_ref(const act_cfg *c, double x, double y)
{
    switch (c->mode) { /* the y-based derivatives from the y given, as the API defines them */
    case RA_SIGMOID: return y * (1 - y);
    case RA_TANH: return 1 - y * y;
    case RA_ELU: return x > 0 ? 1 : y + c->coef;
    default: return ref_act_grad(c->mode, c->coef, c->sb, x);
    }
}

static int act_special(double v) { return v == 0 || !isfinite(v); }

/* 0 unless got and want differ in class: NaN, an infinity, a zero and its sign, or finite nonzero */
static int act_class_differs(double g, double w)
{
    if (isnan(g) || isnan(w)) return isnan(g) != isnan(w);
    if (isinf(g) || isinf(w) || g == 0 || w == 0) return !(g == w && signbit(g) == signbit(w));
    return 0;
}

static void act_fast_case(cudnnHandle_t h, const act_cfg *c, int bwd, int lay, double alpha, double beta, int inplace, const int *dim)
{
    tt X, Y, DY, O; /* O: the output (y forward, dx backward) */
    tt_make(h, &X, CUDNN_DATA_FLOAT, 4, dim, lay);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, dim, lay);
    tt_make(h, &DY, CUDNN_DATA_FLOAT, 4, dim, lay);
    tt_make(h, &O, CUDNN_DATA_FLOAT, 4, dim, lay);
    const int64_t n = X.n;
    double *x = dalloc(n), *y = dalloc(n), *dy = dalloc(n), *prior = dalloc(n), *want = dalloc(n), *mag = dalloc(n), *fast = dalloc(n),
           *slow = dalloc(n);
    const double sat[] = {0.34657359, 1.2785 / c->sb, 9, 17.328680, 43.5, 87.336544, 88.722839, 103.97208, 92 / c->sb, c->coef};
    const double spec[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-40, -1e-40, 1e-30, -1e-30, 3e38, -3e38, 1e30, -1e30,
                           (float)c->coef, nextafterf((float)c->coef, 0), nextafterf((float)c->coef, 1e9f), -87.5, 90};
    const int nspec = (int)(sizeof spec / sizeof *spec);
    for (int64_t i = 0; i < n; i++) {
        const int k = (int)(i % 16);
        double v = k < 6 ? th_uniform(-6, 6) : k < 9 ? ldexp(1.0, th_randint(-40, 7)) * th_uniform(1, 2)
                 : k == 9 ? th_uniform(-120, 120) : k == 10 ? sat[th_randint(0, 9)] * (1 + th_uniform(-1e-3, 1e-3)) : th_uniform(-3, 3);
        if (th_randint(0, 1)) v = -v;
        x[i] = i % 37 == 3 ? spec[(i / 37) % nspec] : (double)(float)v;
        dy[i] = i % 41 == 5 ? spec[(i / 41) % 5] : (double)(float)(th_uniform(0.1, 3) * (th_randint(0, 1) ? -1 : 1));
        y[i] = (double)(float)ref_act(c->mode, c->coef, c->sb, 1, x[i]);
        prior[i] = beta != 0 ? (double)(float)th_uniform(-2, 2) : NAN;
    }
    if (inplace) memcpy(prior, bwd ? dy : x, sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        double v, m;
        if (bwd) {
            const double g = act_grad_ref(c, x[i], y[i]);
            v = (c->mode == RA_RELU || c->mode == RA_CLIPPED) ? (g != 0 ? dy[i] : 0.0) : dy[i] * g;
            m = fabs(alpha * v);
            if (c->mode == RA_SWISH) {
                const double s = 1 / (1 + exp(-c->sb * x[i]));
                m = fabs(alpha * dy[i]) * (s + fabs(c->sb * x[i] * s * (1 - s)));
            }
        } else {
            v = ref_act(c->mode, c->coef, c->sb, c->prop, x[i]);
            m = fabs(alpha * v);
        }
        want[i] = alpha * v + (beta != 0 ? beta * prior[i] : 0);
        if (fabs(want[i]) >= 0x1.ffffffp127) want[i] = copysign(INFINITY, want[i]); /* rounds to float's infinity */
        mag[i] = m + (beta != 0 ? fabs(beta * prior[i]) : 0);
    }
    cudnnActivationDescriptor_t ad;
    TH_OK(cudnnCreateActivationDescriptor(&ad));
    TH_OK(cudnnSetActivationDescriptor(ad, (cudnnActivationMode_t)c->mode, c->prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN, c->coef));
    TH_OK(cudnnSetActivationDescriptorSwishBeta(ad, c->sb));
    const float a = (float)alpha, b = (float)beta;
    for (int pass = 0; pass < 2; pass++) {
        th_cpu_fast_path(pass ? "0" : "2");
        tt_fill(h, &X, x, 0);
        tt_fill(h, &Y, y, 0);
        tt_fill(h, &DY, dy, 0);
        tt_fill(h, &O, prior, 0);
        if (bwd) TH_OK(cudnnActivationBackward(h, ad, &a, Y.d, Y.dev, DY.d, DY.dev, X.d, X.dev, &b, O.d, inplace ? DY.dev : O.dev));
        else TH_OK(cudnnActivationForward(h, ad, &a, X.d, X.dev, &b, O.d, inplace ? X.dev : O.dev));
        tt_read(h, inplace ? (bwd ? &DY : &X) : &O, pass ? slow : fast);
    }
    th_cpu_fast_path(NULL);
    int64_t bad = -1, cls = -1;
    for (int64_t i = 0; i < n && bad < 0; i++) {
        const double g = fast[i], w = want[i];
        /* swish: z = sb x is rounded to float, which costs up to about |z| ulp in e^z */
        const double ulps = 16 + (c->mode == RA_SWISH ? 2 * fabs(c->sb * x[i]) : 0);
        const int ok = isnan(w) ? isnan(g) : isinf(w) ? g == w : isfinite(g) && fabs(g - w) <= ulps * 0x1p-24 * mag[i] + 0x1p-146;
        if (!ok) bad = i;
    }
    for (int64_t i = 0; i < n && cls < 0; i++)
        if ((act_special(x[i]) || (bwd && act_special(dy[i]))) && act_class_differs(fast[i], slow[i])) cls = i;
    TH_CHECK(bad < 0, "activation fast path mode=%d coef=%g sb=%g prop=%d %s %s n=%lld alpha=%g beta=%g%s: index %lld x=%.9g dy=%.9g got %.9g want %.9g",
             c->mode, c->coef, c->sb, c->prop, bwd ? "bwd" : "fwd", ol_name[lay], (long long)n, alpha, beta, inplace ? " in place" : "",
             (long long)bad, bad >= 0 ? x[bad] : 0.0, bad >= 0 ? dy[bad] : 0.0, bad >= 0 ? fast[bad] : 0.0, bad >= 0 ? want[bad] : 0.0);
    TH_CHECK(cls < 0, "activation fast vs double path mode=%d %s %s alpha=%g beta=%g%s: index %lld x=%.9g dy=%.9g fast %.9g double %.9g", c->mode,
             bwd ? "bwd" : "fwd", ol_name[lay], alpha, beta, inplace ? " in place" : "", (long long)cls, cls >= 0 ? x[cls] : 0.0,
             cls >= 0 ? dy[cls] : 0.0, cls >= 0 ? fast[cls] : 0.0, cls >= 0 ? slow[cls] : 0.0);
    free(x), free(y), free(dy), free(prior), free(want), free(mag), free(fast), free(slow);
    tt_free(h, &X), tt_free(h, &Y), tt_free(h, &DY), tt_free(h, &O);
    cudnnDestroyActivationDescriptor(ad);
}

static void act_fast_cases(cudnnHandle_t h)
{
    static const act_cfg cfg[] = {{RA_SIGMOID, 0, 1, 1},   {RA_TANH, 0, 1, 1},    {RA_ELU, 0.7, 1, 1},     {RA_SWISH, 0, 1.3, 1}, {RA_SWISH, 0, 0.5, 0},
                                  {RA_CLIPPED, 0.7, 1, 0}, {RA_CLIPPED, 0.7, 1, 1}, {RA_RELU, 0, 1, 1}, {RA_RELU, 0, 1, 0}};
    static const double ab[4][2] = {{1, 0}, {0.5, 0}, {2, 0.5}, {-1.5, -1}};
    const int big[4] = {3, 23, 37, 41}, small[4] = {1, 3, 1, 5}; /* 104673 elements: 7 blocks of 16384, the last 6369 (8k + 1) */
    for (size_t m = 0; m < sizeof cfg / sizeof *cfg; m++)
        for (int bwd = 0; bwd < 2; bwd++)
            for (int lay = OL_NCHW; lay <= OL_NHWC; lay++) {
                for (int k = 0; k < 4; k++) act_fast_case(h, &cfg[m], bwd, lay, ab[k][0], ab[k][1], 0, big);
                act_fast_case(h, &cfg[m], bwd, lay, 0.5, lay ? 0.25 : 0, 1, big);
                act_fast_case(h, &cfg[m], bwd, lay, -2, lay ? 0 : 1, 0, small);
            }
}

int main(void)
{
    th_seed(0xac7);
    cudnnHandle_t h = th_create_handle();
    for (int t = 0; t < 4; t++)
        for (int m = 0; m < 6; m++)
            for (int it = 0; it < 6; it++) fwd_bwd_case(h, float_types[t], modes[m], it, -1), fwd_bwd_case(h, float_types[t], modes[m], it, it % 2);
    for (int m = 0; m < 6; m++) grad_check(h, modes[m]);
    errors(h);
    big_case(h);
    relu_big_case(h, OL_NCHW), relu_big_case(h, OL_NHWC);
    if (!th_is_gpu(h)) act_fast_cases(h);
    cudnnDestroy(h);
    return th_finish();
}
