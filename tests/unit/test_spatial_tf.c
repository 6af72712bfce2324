/* Spatial transformer: descriptor, grid generator forward/backward and bilinear sampler
 * forward/backward against tests/ref/norm_ref.c, every type, strided/NHWC x and y, alpha/beta,
 * finite-difference gradients of the reference as the backward reference, and the error paths.
 * Then the CPU backend's FLOAT fast path (fast_sampler, fast_grid, fast_declined). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"
#include "norm_ref.h"

#include "test_norm_util.h"


/* packed buffer of n values of type t on the device, values rounded through t in place */
static void *pbuf(cudnnDataType_t t, double *v, int64_t n)
{
    size_t sz = th_dtype_size(t);
    void *h = malloc(sz * n);
    th_from_double(v, t, h, n);
    th_to_double(h, t, v, n);
    void *d = th_alloc(H, sz * n);
    th_upload(H, d, h, sz * n);
    free(h);
    return d;
}

static void pget(cudnnDataType_t t, const void *d, double *v, int64_t n)
{
    size_t sz = th_dtype_size(t);
    void *h = malloc(sz * n);
    th_download(H, h, d, sz * n);
    th_to_double(h, t, v, n);
    free(h);
}

static cudnnSpatialTransformerDescriptor_t make_st(cudnnDataType_t t, const int *dim)
{
    cudnnSpatialTransformerDescriptor_t st;
    TH_OK(cudnnCreateSpatialTransformerDescriptor(&st));
    TH_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, t, 4, dim));
    return st;
}

static void test_grid(cudnnDataType_t t)
{
    int dim[4] = {th_randint(1, 3), th_randint(1, 3), th_randint(1, 6), th_randint(1, 6)};
    int N = dim[0], Ho = dim[2], Wo = dim[3];
    cudnnSpatialTransformerDescriptor_t st = make_st(t, dim);
    double *th = dalloc(6 * N), *g = dalloc((int64_t)N * Ho * Wo * 2), *rg = dalloc((int64_t)N * Ho * Wo * 2);
    for (int i = 0; i < 6 * N; i++) th[i] = th_randint(-8, 8) / 4.0;
    void *dth = pbuf(t, th, 6 * N);
    int64_t ng = (int64_t)N * Ho * Wo * 2;
    void *dg = th_alloc(H, th_dtype_size(t) * ng);
    TH_OK(cudnnSpatialTfGridGeneratorForward(H, st, dth, dg));
    pget(t, dg, g, ng);
    ref_stf_grid(N, Ho, Wo, th, rg);
    char w[80];
    snprintf(w, sizeof w, "grid fwd %s", th_dtype_name(t));
    th_compare(w, g, rg, (size_t)ng, th_tolerance("stf", t));
    /* backward: dtheta = J^T dgrid; reference by finite differences of the reference grid (linear) */
    double *dgv = dalloc(ng), *dtheta = dalloc(6 * N), *rdt = dalloc(6 * N), *gp = dalloc(ng);
    for (int64_t i = 0; i < ng; i++) dgv[i] = th_randint(-4, 4) / 2.0;
    void *ddg = pbuf(t, dgv, ng), *ddt = th_alloc(H, th_dtype_size(t) * 6 * N);
    TH_OK(cudnnSpatialTfGridGeneratorBackward(H, st, ddg, ddt));
    pget(t, ddt, dtheta, 6 * N);
    for (int k = 0; k < 6 * N; k++) {
        double s0 = th[k], lp = 0, lm = 0;
        th[k] = s0 + 0.5;
        ref_stf_grid(N, Ho, Wo, th, gp);
        for (int64_t i = 0; i < ng; i++) lp += dgv[i] * gp[i];
        th[k] = s0 - 0.5;
        ref_stf_grid(N, Ho, Wo, th, gp);
        for (int64_t i = 0; i < ng; i++) lm += dgv[i] * gp[i];
        th[k] = s0;
        rdt[k] = lp - lm;
    }
    snprintf(w, sizeof w, "grid bwd %s", th_dtype_name(t));
    th_compare(w, dtheta, rdt, (size_t)(6 * N), th_tolerance("stf", t) * 4);
    th_free(H, dth), th_free(H, dg), th_free(H, ddg), th_free(H, ddt);
    free(th), free(g), free(rg), free(dgv), free(dtheta), free(rdt), free(gp);
    cudnnDestroySpatialTransformerDescriptor(st);
}

/* grid coordinate whose pixel position has a fractional part in [0.15, 0.85] after rounding to t */
static double pick_coord(cudnnDataType_t t, int n, int inside)
{
    for (;;) {
        double p = inside ? th_uniform(0, n - 1) : th_uniform(-1.7, n + 0.7);
        double g = 2 * p / (n - 1) - 1, r;
        char buf[8];
        th_from_double(&g, t, buf, 1);
        th_to_double(buf, t, &r, 1);
        double pr = (r + 1) * (n - 1) / 2, f = pr - floor(pr);
        if (f > 0.15 && f < 0.85) return r;
    }
}

static void test_sampler(cudnnDataType_t t, int layout)
{
    int N = th_randint(1, 3), C = th_randint(1, 3), Hi = th_randint(2, 6), Wi = th_randint(2, 6), Ho = th_randint(1, 5), Wo = th_randint(1, 5);
    int sdim[4] = {N, C, Ho, Wo}, xdim[4] = {N, C, Hi, Wi};
    cudnnSpatialTransformerDescriptor_t st = make_st(t, sdim);
    tns x, y, dxt;
    tns_make(&x, t, 4, xdim, layout);
    tns_make(&y, t, 4, sdim, (layout + 1) % 3);
    tns_make(&dxt, t, 4, xdim, (layout + 2) % 3);
    int64_t ng = (int64_t)N * Ho * Wo * 2;
    double *hx = dalloc(x.n), *grid = dalloc(ng), *y0 = dalloc(y.n), *got = dalloc(y.n), *ry = dalloc(y.n);
    for (int64_t e = 0; e < x.n; e++) hx[e] = th_randint(1, 8) / 2.0 * (th_randint(0, 1) ? 1 : -1);
    /* mostly inside, some partly or fully outside (zero padding) */
    for (int64_t i = 0; i < ng; i += 2) {
        int in = i == 0 || th_randint(0, 3) > 0;
        grid[i] = pick_coord(t, Wi, in), grid[i + 1] = pick_coord(t, Hi, in);
    }
    for (int64_t e = 0; e < y.n; e++) y0[e] = th_randint(-4, 4);
    double alpha = th_randint(0, 1) ? 1 : 0.5, beta = th_randint(0, 1) ? 0 : 0.5;
    char al[8], be[8];
    scal(t, alpha, al), scal(t, beta, be);
    void *dx_ = tns_buf(&x, hx, 0), *dg = pbuf(t, grid, ng), *dy = tns_buf(&y, beta != 0 ? y0 : NULL, NAN);
    TH_OK(cudnnSpatialTfSamplerForward(H, st, al, x.d, dx_, dg, be, y.d, dy));
    tns_get(&y, dy, got);
    ref_stf_sample(N, C, Hi, Wi, Ho, Wo, hx, grid, ry);
    for (int64_t e = 0; e < y.n; e++) ry[e] = alpha * ry[e] + (beta != 0 ? beta * y0[e] : 0);
    char w[100];
    snprintf(w, sizeof w, "sampler fwd %s layout %d", th_dtype_name(t), layout);
    th_compare(w, got, ry, (size_t)y.n, th_tolerance("stf", t) * 2);

    /* backward: L = sum(dy * sample(x, grid)); references are finite differences of the reference */
    double *hdy = dalloc(y.n), *dx0 = dalloc(x.n), *dg0 = dalloc(ng);
    for (int64_t e = 0; e < y.n; e++) hdy[e] = th_randint(1, 4) / 2.0 * (th_randint(0, 1) ? 1 : -1);
    for (int64_t e = 0; e < x.n; e++) dx0[e] = th_randint(-4, 4);
    for (int64_t i = 0; i < ng; i++) dg0[i] = th_randint(-4, 4);
    double aD = th_randint(0, 1) ? 1 : 2, bD = th_randint(0, 1) ? 0 : 0.5, aG = th_randint(0, 1) ? 1 : 0.5, bG = th_randint(0, 1) ? 0 : 1;
    char aDs[8], bDs[8], aGs[8], bGs[8];
    scal(t, aD, aDs), scal(t, bD, bDs), scal(t, aG, aGs), scal(t, bG, bGs);
    tns dyt;
    tns_make(&dyt, t, 4, sdim, layout);
    double *dg0r = dalloc(ng);
    memcpy(dg0r, dg0, sizeof(double) * ng);
    void *ddy = tns_buf(&dyt, hdy, 0), *ddx = tns_buf(&dxt, bD != 0 ? dx0 : NULL, NAN), *ddg;
    if (bG != 0) ddg = pbuf(t, dg0r, ng);
    else {
        for (int64_t i = 0; i < ng; i++) dg0r[i] = NAN;
        ddg = pbuf(t, dg0r, ng);
    }
    TH_OK(cudnnSpatialTfSamplerBackward(H, st, aDs, x.d, dx_, bDs, dxt.d, ddx, aGs, dyt.d, ddy, dg, bGs, ddg));
    double *gx = dalloc(x.n), *rgx = dalloc(x.n), *gg = dalloc(ng), *rgg = dalloc(ng), *tmp = dalloc(y.n);
#define LOSS(out) do { ref_stf_sample(N, C, Hi, Wi, Ho, Wo, hx, grid, tmp); out = 0; for (int64_t e_ = 0; e_ < y.n; e_++) out += hdy[e_] * tmp[e_]; } while (0)
    for (int64_t e = 0; e < x.n; e++) {
        double s0 = hx[e], lp, lm;
        hx[e] = s0 + 0.5;
        LOSS(lp);
        hx[e] = s0 - 0.5;
        LOSS(lm);
        hx[e] = s0;
        rgx[e] = aD * (lp - lm) + (bD != 0 ? bD * dx0[e] : 0); /* linear in x: exact */
    }
    double h = 1e-6;
    for (int64_t i = 0; i < ng; i++) {
        double s0 = grid[i], lp, lm;
        grid[i] = s0 + h;
        LOSS(lp);
        grid[i] = s0 - h;
        LOSS(lm);
        grid[i] = s0;
        rgg[i] = aG * (lp - lm) / (2 * h) + (bG != 0 ? bG * dg0[i] : 0);
    }
    tns_get(&dxt, ddx, gx);
    pget(t, ddg, gg, ng);
    snprintf(w, sizeof w, "sampler bwd dx %s layout %d", th_dtype_name(t), layout);
    th_compare(w, gx, rgx, (size_t)x.n, t == CUDNN_DATA_DOUBLE ? 1e-12 : th_tolerance("stf", t) * 4);
    snprintf(w, sizeof w, "sampler bwd dgrid %s layout %d", th_dtype_name(t), layout);
    th_compare(w, gg, rgg, (size_t)ng, t == CUDNN_DATA_DOUBLE ? 1e-7 : th_tolerance("stf", t) * 4);
    th_free(H, dx_), th_free(H, dg), th_free(H, dy), th_free(H, ddy), th_free(H, ddx), th_free(H, ddg);
    free(hx), free(grid), free(y0), free(got), free(ry), free(hdy), free(dx0), free(dg0), free(dg0r), free(gx), free(rgx), free(gg), free(rgg), free(tmp);
    cudnnDestroyTensorDescriptor(x.d), cudnnDestroyTensorDescriptor(y.d), cudnnDestroyTensorDescriptor(dxt.d), cudnnDestroyTensorDescriptor(dyt.d);
    cudnnDestroySpatialTransformerDescriptor(st);
}

static void test_errors(void)
{
    cudnnSpatialTransformerDescriptor_t st;
    int dim[4] = {2, 3, 4, 5}, bad[4] = {2, 0, 4, 5}, dim5[5] = {2, 3, 4, 5, 6};
    TH_STATUS(cudnnCreateSpatialTransformerDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnCreateSpatialTransformerDescriptor(&st));
    void *b1 = th_alloc(H, 4096), *b2 = th_alloc(H, 4096);
    float one = 1, zero = 0;
    TH_STATUS(cudnnSpatialTfGridGeneratorForward(H, st, b1, b2), CUDNN_STATUS_BAD_PARAM); /* never set */
    TH_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, (cudnnSamplerType_t)1, CUDNN_DATA_FLOAT, 4, dim), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 5, dim5), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_INT8, 4, dim), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, bad), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetSpatialTransformerNdDescriptor(NULL, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, dim), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, dim));
    TH_STATUS(cudnnSpatialTfGridGeneratorForward(NULL, st, b1, b2), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSpatialTfGridGeneratorForward(H, st, NULL, b2), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSpatialTfGridGeneratorBackward(H, st, b1, NULL), CUDNN_STATUS_BAD_PARAM);
    tns x, y, yd, yh, x3;
    int xdim[4] = {2, 3, 7, 7}, ydim_bad[4] = {2, 3, 4, 6}, d3[3] = {2, 3, 4};
    tns_make(&x, CUDNN_DATA_FLOAT, 4, xdim, 0);
    tns_make(&y, CUDNN_DATA_FLOAT, 4, dim, 0);
    tns_make(&yd, CUDNN_DATA_FLOAT, 4, ydim_bad, 0);
    tns_make(&yh, CUDNN_DATA_HALF, 4, dim, 0);
    tns_make(&x3, CUDNN_DATA_FLOAT, 3, d3, 0);
    void *dy = tns_buf(&y, NULL, 3);
    size_t yb = sizeof(float) * y.span;
    char *before = malloc(yb);
    th_download(H, before, dy, yb);
    TH_STATUS(cudnnSpatialTfSamplerForward(H, st, &one, x.d, b1, b2, &zero, yd.d, dy), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSpatialTfSamplerForward(H, st, &one, x.d, b1, b2, &zero, yh.d, dy), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSpatialTfSamplerForward(H, st, &one, x3.d, b1, b2, &zero, y.d, dy), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSpatialTfSamplerForward(H, st, &one, x.d, b1, NULL, &zero, y.d, dy), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSpatialTfSamplerForward(H, st, NULL, x.d, b1, b2, &zero, y.d, dy), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(same_bytes(&y, dy, before), "y changed on error");
    TH_STATUS(cudnnSpatialTfSamplerBackward(H, st, &one, x.d, b1, &zero, y.d, dy, &one, y.d, b1, b2, &zero, b2), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSpatialTfSamplerBackward(H, st, &one, x.d, b1, &zero, x.d, b1, &one, yd.d, dy, b2, &zero, b2), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSpatialTfSamplerBackward(H, st, &one, x.d, b1, &zero, x.d, b1, NULL, y.d, dy, b2, &zero, b2), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(same_bytes(&y, dy, before), "y changed on error");
    TH_OK(cudnnDestroySpatialTransformerDescriptor(st));
    TH_OK(cudnnDestroySpatialTransformerDescriptor(NULL));
    th_free(H, b1), th_free(H, b2), th_free(H, dy);
    free(before);
    cudnnDestroyTensorDescriptor(x.d), cudnnDestroyTensorDescriptor(y.d), cudnnDestroyTensorDescriptor(yd.d), cudnnDestroyTensorDescriptor(yh.d);
    cudnnDestroyTensorDescriptor(x3.d);
}

/* A random scaling factor, exact in float: +-[0.25, 2) */
static double fast_scale(void) { return (double)(float)th_uniform(0.25, 2) * (th_randint(0, 1) ? -1 : 1); }

/* The CPU backend's FLOAT sampler fast path (src/cpu/stf_fast.c): x, y, dx and dy each NCHW or NHWC, packed or with
 * gaps (layouts 0, 1, 3, 4), channel counts that are no multiple of 8, an affine grid sampling partly outside the
 * image, alpha/beta blends (beta 0 over NaN) for dx and dgrid, every other case above the 65536 outputs where
 * it goes parallel; special: NaN and inf in x, in and out of the pixels sampled, and NaN or far-off grid
 * coordinates. Run with FREEDNN_CPU_FAST_PATH=2 (a declined call fails): the forward against the reference
 * (inputs without NaN), the backward (and the forward with NaN) against the general path
 * (FREEDNN_CPU_FAST_PATH=0) on the same inputs. */
static void fast_sampler(int iter)
{
    static const int lays[4] = {0, 1, 3, 4};
    const int big = iter % 2, special = iter % 5 == 4;
    const int N = big ? th_randint(2, 3) : th_randint(1, 3), C = big ? (th_randint(21, 33) | 1) : th_randint(1, 11);
    const int Hi = th_randint(2, big ? 40 : 9), Wi = th_randint(2, big ? 40 : 9), Ho = big ? th_randint(60, 80) : th_randint(1, 9),
              Wo = big ? th_randint(60, 80) : th_randint(1, 9);
    int sdim[4] = {N, C, Ho, Wo}, xdim[4] = {N, C, Hi, Wi};
    const int lx = lays[th_randint(0, 3)], ly = lays[th_randint(0, 3)], ldx = lays[th_randint(0, 3)], ldy = lays[th_randint(0, 3)];
    cudnnSpatialTransformerDescriptor_t st = make_st(CUDNN_DATA_FLOAT, sdim);
    tns x, y, dxt, dyt;
    tns_make(&x, CUDNN_DATA_FLOAT, 4, xdim, lx);
    tns_make(&y, CUDNN_DATA_FLOAT, 4, sdim, ly);
    tns_make(&dxt, CUDNN_DATA_FLOAT, 4, xdim, ldx);
    tns_make(&dyt, CUDNN_DATA_FLOAT, 4, sdim, ldy);
    const int64_t ng = (int64_t)N * Ho * Wo * 2;
    double *hx = dalloc(x.n), *grid = dalloc(ng), *theta = dalloc(6 * N), *hdy = dalloc(y.n), *y0 = dalloc(y.n), *dx0 = dalloc(x.n), *dg0 = dalloc(ng);
    double *got = dalloc(y.n > x.n ? (y.n > ng ? y.n : ng) : (x.n > ng ? x.n : ng)), *want = dalloc(y.n > x.n ? (y.n > ng ? y.n : ng) : (x.n > ng ? x.n : ng));
    fill_q(hx, x.n, -2, 2);
    fill_q(hdy, y.n, -1, 1);
    for (int n = 0; n < N; n++) { /* a rotation, scaling by 0.8 to 1.3 and a shift: some pixels sample outside */
        const double a = th_uniform(-0.6, 0.6), sc = th_uniform(0.8, 1.3);
        double *t = theta + 6 * n;
        t[0] = sc * cos(a), t[1] = -sc * sin(a), t[2] = th_uniform(-0.3, 0.3), t[3] = sc * sin(a), t[4] = sc * cos(a), t[5] = th_uniform(-0.3, 0.3);
    }
    ref_stf_grid(N, Ho, Wo, theta, grid);
    for (int64_t i = 0; i < ng; i++) grid[i] = (float)grid[i];
    if (special) {
        for (int k = 0; k < 6; k++) hx[th_randint(0, (int)x.n - 1)] = k % 2 ? NAN : INFINITY;
        grid[2 * th_randint(0, (int)(ng / 2) - 1)] = NAN;
        grid[2 * th_randint(0, (int)(ng / 2) - 1) + 1] = 1e30;
        grid[2 * th_randint(0, (int)(ng / 2) - 1)] = -3e9;
    }
    const double alpha = th_randint(0, 1) ? 1 : fast_scale(), beta = iter % 3 ? 0 : fast_scale();
    const double aD = fast_scale(), bD = iter % 4 < 2 ? 0 : fast_scale(), aG = fast_scale(), bG = iter % 4 == 1 || iter % 4 == 3 ? fast_scale() : 0;
    for (int64_t i = 0; i < y.n; i++) y0[i] = beta != 0 ? th_randint(-4, 4) : NAN;
    for (int64_t i = 0; i < x.n; i++) dx0[i] = bD != 0 ? th_randint(-4, 4) : NAN;
    for (int64_t i = 0; i < ng; i++) dg0[i] = bG != 0 ? th_randint(-4, 4) : NAN;
    char al[8], be[8], aDs[8], bDs[8], aGs[8], bGs[8];
    scal(CUDNN_DATA_FLOAT, alpha, al), scal(CUDNN_DATA_FLOAT, beta, be), scal(CUDNN_DATA_FLOAT, aD, aDs), scal(CUDNN_DATA_FLOAT, bD, bDs);
    scal(CUDNN_DATA_FLOAT, aG, aGs), scal(CUDNN_DATA_FLOAT, bG, bGs);
    void *dxp = tns_buf(&x, hx, 0), *dgp = pbuf(CUDNN_DATA_FLOAT, grid, ng), *ddy = tns_buf(&dyt, hdy, 0);
    char what[200];
    snprintf(what, sizeof what, "fast sampler %dx%dx%dx%d -> %dx%d layouts x %d y %d dx %d dy %d alpha %g beta %g%s", N, C, Hi, Wi, Ho, Wo, lx, ly, ldx,
             ldy, alpha, beta, special ? " NaN/inf" : "");
    /* forward: fast, then (special) the general path or the reference */
    void *yf = tns_buf(&y, y0, 0), *yg = tns_buf(&y, y0, 0);
    th_cpu_fast_path("2");
    TH_OK(cudnnSpatialTfSamplerForward(H, st, al, x.d, dxp, dgp, be, y.d, yf));
    th_cpu_fast_path("0");
    TH_OK(cudnnSpatialTfSamplerForward(H, st, al, x.d, dxp, dgp, be, y.d, yg));
    th_cpu_fast_path(NULL);
    tns_get(&y, yf, got);
    if (special) {
        tns_get(&y, yg, want);
        th_compare_nonfinite(what, got, want, (size_t)y.n, 1e-6);
    } else {
        ref_stf_sample(N, C, Hi, Wi, Ho, Wo, hx, grid, want);
        for (int64_t i = 0; i < y.n; i++) want[i] = alpha * want[i] + (beta != 0 ? beta * y0[i] : 0);
        cmp(what, got, want, (size_t)y.n, th_tolerance("stf", CUDNN_DATA_FLOAT) * 2);
    }
    /* backward: fast and general on the same inputs */
    void *dxf = tns_buf(&dxt, dx0, 0), *dxg = tns_buf(&dxt, dx0, 0), *dgf = pbuf(CUDNN_DATA_FLOAT, dg0, ng), *dgg = pbuf(CUDNN_DATA_FLOAT, dg0, ng);
    th_cpu_fast_path("2");
    TH_OK(cudnnSpatialTfSamplerBackward(H, st, aDs, x.d, dxp, bDs, dxt.d, dxf, aGs, dyt.d, ddy, dgp, bGs, dgf));
    th_cpu_fast_path("0");
    TH_OK(cudnnSpatialTfSamplerBackward(H, st, aDs, x.d, dxp, bDs, dxt.d, dxg, aGs, dyt.d, ddy, dgp, bGs, dgg));
    th_cpu_fast_path(NULL);
    char w2[240];
    tns_get(&dxt, dxf, got);
    tns_get(&dxt, dxg, want);
    snprintf(w2, sizeof w2, "%s: dx vs the general path", what);
    th_compare_nonfinite(w2, got, want, (size_t)x.n, 1e-6);
    pget(CUDNN_DATA_FLOAT, dgf, got, ng);
    pget(CUDNN_DATA_FLOAT, dgg, want, ng);
    snprintf(w2, sizeof w2, "%s: dgrid vs the general path", what);
    th_compare_nonfinite(w2, got, want, (size_t)ng, 1e-6);
    void *bufs[] = {dxp, dgp, ddy, yf, yg, dxf, dxg, dgf, dgg};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) th_free(H, bufs[i]);
    free(hx), free(grid), free(theta), free(hdy), free(y0), free(dx0), free(dg0), free(got), free(want);
    cudnnDestroyTensorDescriptor(x.d), cudnnDestroyTensorDescriptor(y.d), cudnnDestroyTensorDescriptor(dxt.d), cudnnDestroyTensorDescriptor(dyt.d);
    cudnnDestroySpatialTransformerDescriptor(st);
}

/* The FLOAT grid generator's fast path on a grid above the 65536 points where it goes parallel */
static void fast_grid(void)
{
    int dim[4] = {3, 2, 97, 131};
    const int N = dim[0], Ho = dim[2], Wo = dim[3];
    const int64_t ng = (int64_t)N * Ho * Wo * 2;
    cudnnSpatialTransformerDescriptor_t st = make_st(CUDNN_DATA_FLOAT, dim);
    double *th = dalloc(6 * N), *g = dalloc(ng), *rg = dalloc(ng), *dgv = dalloc(ng), *dt = dalloc(6 * N), *rdt = dalloc(6 * N);
    for (int i = 0; i < 6 * N; i++) th[i] = th_randint(-8, 8) / 4.0;
    fill_q(dgv, ng, -1, 1);
    void *dth = pbuf(CUDNN_DATA_FLOAT, th, 6 * N), *dg = th_alloc(H, 4 * ng), *ddg = pbuf(CUDNN_DATA_FLOAT, dgv, ng), *ddt = th_alloc(H, 4 * 6 * N);
    th_cpu_fast_path("2");
    TH_OK(cudnnSpatialTfGridGeneratorForward(H, st, dth, dg));
    TH_OK(cudnnSpatialTfGridGeneratorBackward(H, st, ddg, ddt));
    th_cpu_fast_path(NULL);
    pget(CUDNN_DATA_FLOAT, dg, g, ng);
    ref_stf_grid(N, Ho, Wo, th, rg);
    cmp("fast grid fwd", g, rg, (size_t)ng, th_tolerance("stf", CUDNN_DATA_FLOAT));
    pget(CUDNN_DATA_FLOAT, ddt, dt, 6 * N);
    for (int n = 0; n < N; n++) { /* dtheta = sum over the grid of dgrid times (xs, ys, 1) */
        double *d = rdt + 6 * n;
        for (int k = 0; k < 6; k++) d[k] = 0;
        for (int h = 0; h < Ho; h++)
            for (int w = 0; w < Wo; w++) {
                const double xs = -1.0 + 2.0 * w / (Wo - 1), ys = -1.0 + 2.0 * h / (Ho - 1), *gv = dgv + (((int64_t)n * Ho + h) * Wo + w) * 2;
                d[0] += gv[0] * xs, d[1] += gv[0] * ys, d[2] += gv[0], d[3] += gv[1] * xs, d[4] += gv[1] * ys, d[5] += gv[1];
            }
    }
    cmp("fast grid bwd", dt, rdt, (size_t)(6 * N), 1e-5);
    th_free(H, dth), th_free(H, dg), th_free(H, ddg), th_free(H, ddt);
    free(th), free(g), free(rg), free(dgv), free(dt), free(rdt);
    cudnnDestroySpatialTransformerDescriptor(st);
}

/* What the fast path leaves to the general path fails under FREEDNN_CPU_FAST_PATH=2: a padded layout, another
 * type, y overlapping x or the grid, dgrid overlapping the grid, dx overlapping dgrid */
static void fast_declined(void)
{
    int sdim[4] = {2, 3, 5, 6}, xdim[4] = {2, 3, 4, 4};
    cudnnSpatialTransformerDescriptor_t st = make_st(CUDNN_DATA_FLOAT, sdim), sd = make_st(CUDNN_DATA_DOUBLE, sdim);
    tns x, y, yp, xd, yd;
    tns_make(&x, CUDNN_DATA_FLOAT, 4, xdim, 0);
    tns_make(&y, CUDNN_DATA_FLOAT, 4, sdim, 0);
    tns_make(&yp, CUDNN_DATA_FLOAT, 4, sdim, 2);
    tns_make(&xd, CUDNN_DATA_DOUBLE, 4, xdim, 0);
    tns_make(&yd, CUDNN_DATA_DOUBLE, 4, sdim, 0);
    const int64_t ng = 2 * 5 * 6 * 2;
    double *grid = dalloc(ng);
    fill_q(grid, ng, -1, 1);
    void *b1 = th_alloc(H, 8 * 4096), *b2 = th_alloc(H, 8 * 4096), *dg = pbuf(CUDNN_DATA_FLOAT, grid, ng), *dgd = pbuf(CUDNN_DATA_DOUBLE, grid, ng);
    float one = 1, zero = 0;
    double oned = 1, zerod = 0;
    th_cpu_fast_path("2");
    TH_STATUS(cudnnSpatialTfSamplerForward(H, st, &one, x.d, b1, dg, &zero, yp.d, b2), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSpatialTfSamplerForward(H, sd, &oned, xd.d, b1, dgd, &zerod, yd.d, b2), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSpatialTfGridGeneratorForward(H, sd, b1, b2), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSpatialTfSamplerForward(H, st, &one, x.d, b1, dg, &zero, y.d, (char *)b1 + 64), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSpatialTfSamplerForward(H, st, &one, x.d, b1, dg, &zero, y.d, dg), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSpatialTfSamplerBackward(H, st, &one, x.d, b1, &zero, x.d, b2, &one, y.d, b1, dg, &zero, dg), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSpatialTfSamplerBackward(H, st, &one, x.d, b1, &zero, x.d, b2, &one, yp.d, b1, dg, &zero, (char *)b2 + 4096),
              CUDNN_STATUS_NOT_SUPPORTED);
    th_cpu_fast_path(NULL);
    th_free(H, b1), th_free(H, b2), th_free(H, dg), th_free(H, dgd);
    free(grid);
    tns *all[5] = {&x, &y, &yp, &xd, &yd};
    for (int i = 0; i < 5; i++) cudnnDestroyTensorDescriptor(all[i]->d);
    cudnnDestroySpatialTransformerDescriptor(st), cudnnDestroySpatialTransformerDescriptor(sd);
}

int main(void)
{
    th_seed(99991);
    H = th_create_handle();
    for (int ti = 0; ti < 4; ti++)
        for (int rep = 0; rep < 4; rep++) {
            test_grid(types[ti]);
            for (int layout = 0; layout < 3; layout++) test_sampler(types[ti], layout);
        }
    test_errors();
    if (!th_is_gpu(H)) { /* the CPU backend's FLOAT fast path and its FREEDNN_CPU_FAST_PATH */
        th_seed(99992);
        for (int it = 0; it < 20; it++) fast_sampler(it);
        fast_grid();
        fast_declined();
    }
    cudnnDestroy(H);
    return th_finish();
}
