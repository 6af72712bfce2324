/* Spatial transformer: descriptor, grid generator forward/backward and bilinear sampler
 * forward/backward against tests/ref/norm_ref.c, every type, strided/NHWC x and y, alpha/beta,
 * finite-difference gradients of the reference as the backward reference, and the error paths. */
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
    cudnnDestroy(H);
    return th_finish();
}
