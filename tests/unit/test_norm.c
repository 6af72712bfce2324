/* The v8 cudnnNormalization* family: derive, inference (with NORM_ACTIVATION and
 * NORM_ADD_ACTIVATION), training, backward and the size queries, against tests/ref/norm_ref.c,
 * over every data type, NCHW/NHWC/strided 4-D and 5-D layouts, both modes, alpha/beta, NULL pairs,
 * a separate mean/var descriptor, finite-difference gradients, groupCnt and the error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"
#include "norm_ref.h"

#include "test_norm_util.h"
/* ---------------------------------------------------------------- derive */
static void test_derive(void)
{
    for (int ti = 0; ti < 4; ti++)
        for (int nd = 4; nd <= 5; nd++)
            for (int mode = 0; mode < 2; mode++) {
                int dim[5] = {3, 5, 4, 6, 2};
                tns x;
                tns_make(&x, types[ti], nd, dim, 1);
                cudnnTensorDescriptor_t d, m;
                TH_OK(cudnnCreateTensorDescriptor(&d));
                TH_OK(cudnnCreateTensorDescriptor(&m));
                TH_OK(cudnnDeriveNormTensorDescriptor(d, m, x.d, (cudnnNormMode_t)mode, 1));
                for (int k = 0; k < 2; k++) {
                    cudnnDataType_t t;
                    int nb, gd[8], gs[8];
                    TH_OK(cudnnGetTensorNdDescriptor(k ? m : d, 8, &t, &nb, gd, gs));
                    TH_CHECK(t == ptype(types[ti]), "derived type %d for x type %d", (int)t, (int)types[ti]);
                    TH_CHECK(nb == nd, "derived nbDims %d want %d", nb, nd);
                    int ok = gd[0] == 1 && gd[1] == 5;
                    for (int i = 2; i < nd; i++) ok &= gd[i] == (mode == 0 ? dim[i] : 1);
                    TH_CHECK(ok, "derived dims wrong for mode %d nd %d", mode, nd);
                }
                TH_STATUS(cudnnDeriveNormTensorDescriptor(d, m, x.d, (cudnnNormMode_t)2, 1), CUDNN_STATUS_BAD_PARAM);
                TH_STATUS(cudnnDeriveNormTensorDescriptor(d, m, x.d, CUDNN_NORM_PER_CHANNEL, 2), CUDNN_STATUS_NOT_SUPPORTED);
                TH_STATUS(cudnnDeriveNormTensorDescriptor(d, m, x.d, CUDNN_NORM_PER_CHANNEL, 0), CUDNN_STATUS_BAD_PARAM);
                TH_STATUS(cudnnDeriveNormTensorDescriptor(NULL, m, x.d, CUDNN_NORM_PER_CHANNEL, 1), CUDNN_STATUS_BAD_PARAM);
                TH_STATUS(cudnnDeriveNormTensorDescriptor(d, NULL, x.d, CUDNN_NORM_PER_CHANNEL, 1), CUDNN_STATUS_BAD_PARAM);
                TH_STATUS(cudnnDeriveNormTensorDescriptor(d, m, NULL, CUDNN_NORM_PER_CHANNEL, 1), CUDNN_STATUS_BAD_PARAM);
                cudnnDestroyTensorDescriptor(d);
                cudnnDestroyTensorDescriptor(m);
                cudnnDestroyTensorDescriptor(x.d);
            }
}

/* ------------------------------------------------- forward + backward sweep */
static void random_shape(int nd, int *dim)
{
    dim[0] = th_randint(2, 5);
    dim[1] = th_randint(1, 6);
    for (int i = 2; i < nd; i++) dim[i] = th_randint(1, 6);
}

static int g_same_layout; /* y, dy and dx in x's layout (the CPU backend's FLOAT fast path) */

static void sweep_one(cudnnDataType_t t, int layout, int nd, int mode, int ops, int algo)
{
    int dim[5];
    random_shape(nd, dim);
    int per_act = mode == 0; /* CUDNN_NORM_PER_ACTIVATION */
    int use_ex = 1;
    int64_t S = 1;
    for (int i = 2; i < nd; i++) S *= dim[i];
    int N = dim[0], C = dim[1];
    int64_t P = per_act ? C * S : C, T = (int64_t)N * C * S;
    if (per_act && N < 2) return;
    tns x, y, z, pd;
    tns_make(&x, t, nd, dim, layout);
    tns_make(&y, t, nd, dim, g_same_layout ? layout : (layout + 1) % 3); /* y in a different layout than x */
    tns_make(&z, t, nd, dim, layout);
    int pdim[5] = {1, C, 1, 1, 1};
    for (int i = 2; i < nd; i++) pdim[i] = per_act ? dim[i] : 1;
    tns_make(&pd, ptype(t), nd, pdim, 0);
    char what[160];
    snprintf(what, sizeof what, "%s layout %d nd %d mode %d ops %d algo %d", th_dtype_name(t), layout, nd, mode, ops, algo);
    tns mvd; /* a separate (padded) mean/var descriptor */
    tns_make(&mvd, ptype(t), nd, pdim, 2);

    double *hx = dalloc(T), *hz = dalloc(T), *hy0 = dalloc(T), *hsc = dalloc(P), *hbi = dalloc(P), *hrm = dalloc(P), *hrv = dalloc(P);
    fill_q(hx, T, -4, 4);
    fill_q(hz, T, -2, 2);
    fill_q(hy0, T, -2, 2);
    fill_q(hsc, P, 0.25, 2);
    for (int64_t q = 0; q < P; q++) hsc[q] *= th_randint(0, 1) ? 1 : -1;
    fill_q(hbi, P, -2, 2);
    fill_q(hrm, P, -1, 1);
    fill_q(hrv, P, 0.25, 2);
    int act_mode = ops == 0 ? REF_ACT_NONE : (th_randint(0, 1) ? REF_ACT_RELU : REF_ACT_ELU);
    double coef = 1.0;
    cudnnActivationDescriptor_t act = ops ? make_act((cudnnActivationMode_t)act_mode, coef) : NULL;
    double eps = 1e-3, factor = th_randint(1, 4) / 8.0;
    double alpha = th_randint(0, 1) ? 1.0 : 0.5, beta = th_randint(0, 1) ? 0.0 : 0.75;
    char al[8], be[8];
    scal(t, alpha, al);
    scal(t, beta, be);

    void *dx_ = tns_buf(&x, hx, 0), *dz = tns_buf(&z, hz, 0), *dy = tns_buf(&y, beta != 0 ? hy0 : NULL, NAN);
    void *dsc = tns_buf(&pd, hsc, 0), *dbi = tns_buf(&pd, hbi, 0), *drm = tns_buf(&mvd, hrm, 0), *drv = tns_buf(&mvd, hrv, 0);
    void *dsm = tns_buf(&mvd, NULL, NAN), *dsv = tns_buf(&mvd, NULL, NAN);
    size_t rsz = 0, wsz = 1;
    void *reserve = NULL;
    TH_OK(cudnnGetNormalizationTrainingReserveSpaceSize(H, (cudnnNormMode_t)mode, (cudnnNormOps_t)ops, (cudnnNormAlgo_t)algo, act, x.d, &rsz, 1));
    TH_OK(cudnnGetNormalizationForwardTrainingWorkspaceSize(H, (cudnnNormMode_t)mode, (cudnnNormOps_t)ops, (cudnnNormAlgo_t)algo, x.d,
                                                            ops == 2 ? z.d : NULL, y.d, pd.d, act, mvd.d, &wsz, 1));
    if (rsz) reserve = th_alloc(H, rsz);
    TH_OK(cudnnNormalizationForwardTraining(H, (cudnnNormMode_t)mode, (cudnnNormOps_t)ops, (cudnnNormAlgo_t)algo, al, be, x.d, dx_, pd.d, dsc,
                                            dbi, factor, mvd.d, drm, drv, eps, dsm, dsv, act, z.d, ops == 2 ? dz : NULL, y.d, dy, NULL, wsz,
                                            reserve, rsz, 1));
    /* reference; inputs converted through the type first (they are exact by construction) */
    double *ry = dalloc(T), *rpre = dalloc(T), *rm = dalloc(P), *rvb = dalloc(P), *rvu = dalloc(P), *rinv = dalloc(P);
    ref_norm_train(N, C, (int)S, per_act, hx, hsc, hbi, ops == 2 ? hz : NULL, act_mode, coef, eps, ry, rpre, rm, rvb, rvu, rinv);
    for (int64_t e = 0; e < T; e++) ry[e] = alpha * ry[e] + (beta != 0 ? beta * hy0[e] : 0);
    double *got = dalloc(T), *gp = dalloc(P);
    double tol = th_tolerance("bn", t), ptol = th_tolerance("bn", ptype(t));
    tns_get(&y, dy, got);
    char w2[200];
    snprintf(w2, sizeof w2, "fwd y %s", what);
    cmp(w2, got, ry, (size_t)T, tol * 4);
    check_train_stats(&mvd, what, dsm, dsv, drm, drv, rm, rinv, rvu, hrm, hrv, factor, ptol);

    /* inference with the running stats we uploaded originally, same ops/z/activation */
    {
        void *drm0 = tns_buf(&mvd, hrm, 0), *drv0 = tns_buf(&mvd, hrv, 0), *dyi = tns_buf(&y, beta != 0 ? hy0 : NULL, NAN);
        TH_OK(cudnnNormalizationForwardInference(H, (cudnnNormMode_t)mode, (cudnnNormOps_t)ops, (cudnnNormAlgo_t)algo, al, be, x.d, dx_, pd.d,
                                                 dsc, dbi, mvd.d, drm0, drv0, z.d, ops == 2 ? dz : NULL, act, y.d, dyi, eps, 1));
        ref_norm_infer(N, C, (int)S, per_act, hx, hsc, hbi, hrm, hrv, ops == 2 ? hz : NULL, act_mode, coef, eps, ry);
        for (int64_t e = 0; e < T; e++) ry[e] = alpha * ry[e] + (beta != 0 ? beta * hy0[e] : 0);
        tns_get(&y, dyi, got);
        snprintf(w2, sizeof w2, "inference y %s", what);
        cmp(w2, got, ry, (size_t)T, tol * 4);
        th_free(H, drm0), th_free(H, drv0), th_free(H, dyi);
    }

    /* backward: dy random, with saved stats (or NULL to recompute) */
    double *hdy = dalloc(T), *hdx0 = dalloc(T), *hds0 = dalloc(P), *hdb0 = dalloc(P);
    fill_q(hdy, T, -2, 2);
    fill_q(hdx0, T, -2, 2);
    fill_q(hds0, P, -2, 2);
    fill_q(hdb0, P, -2, 2);
    double aD = th_randint(0, 1) ? 1.0 : 2.0, bD = th_randint(0, 1) ? 0.0 : 0.5;
    double aP = th_randint(0, 1) ? 1.0 : 0.5, bP = th_randint(0, 1) ? 0.0 : 1.0;
    char aDs[8], bDs[8], aPs[8], bPs[8];
    scal(t, aD, aDs), scal(t, bD, bDs), scal(t, aP, aPs), scal(t, bP, bPs);
    tns dyt, dxt;
    tns_make(&dyt, t, nd, dim, g_same_layout ? layout : (layout + 2) % 3);
    tns_make(&dxt, t, nd, dim, layout);
    void *ddy = tns_buf(&dyt, hdy, 0), *ddx = tns_buf(&dxt, bD != 0 ? hdx0 : NULL, NAN), *ddz = tns_buf(&z, NULL, NAN);
    void *dds = tns_buf(&pd, bP != 0 ? hds0 : NULL, NAN), *ddb = tns_buf(&pd, bP != 0 ? hdb0 : NULL, NAN);
    int use_saved = th_randint(0, 1);
    size_t bw = 1;
    TH_OK(cudnnGetNormalizationBackwardWorkspaceSize(H, (cudnnNormMode_t)mode, (cudnnNormOps_t)ops, (cudnnNormAlgo_t)algo, x.d, y.d, dyt.d,
                                                     ops == 2 ? z.d : NULL, dxt.d, pd.d, act, mvd.d, &bw, 1));
    TH_OK(cudnnNormalizationBackward(H, (cudnnNormMode_t)mode, (cudnnNormOps_t)ops, (cudnnNormAlgo_t)algo, aDs, bDs, aPs, bPs, x.d, dx_, y.d, dy,
                                     dyt.d, ddy, z.d, ops == 2 ? ddz : NULL, dxt.d, ddx, pd.d, dsc, dbi, dds, ddb, eps, mvd.d,
                                     use_saved ? dsm : NULL, use_saved ? dsv : NULL, act, NULL, bw, reserve, rsz, 1));
    (void)use_ex;
    double *g = dalloc(T), *rdx = dalloc(T), *rds = dalloc(P), *rdb = dalloc(P);
    for (int64_t e = 0; e < T; e++) g[e] = ops ? hdy[e] * ref_act_deriv(act_mode, coef, rpre[e]) : hdy[e];
    ref_norm_bwd(N, C, (int)S, per_act, hx, g, hsc, rm, rinv, rdx, rds, rdb);
    for (int64_t e = 0; e < T; e++) rdx[e] = aD * rdx[e] + (bD != 0 ? bD * hdx0[e] : 0);
    for (int64_t q = 0; q < P; q++) {
        rds[q] = aP * rds[q] + (bP != 0 ? bP * hds0[q] : 0);
        rdb[q] = aP * rdb[q] + (bP != 0 ? bP * hdb0[q] : 0);
    }
    /* saved stats were stored in the param type: half/bf16 x keep float stats, so dx tolerance follows x */
    tns_get(&dxt, ddx, got);
    snprintf(w2, sizeof w2, "bwd dx %s saved %d", what, use_saved);
    double gtol = t == CUDNN_DATA_FLOAT ? 1e-4 : tol * 4;
    cmp(w2, got, rdx, (size_t)T, gtol);
    tns_get(&pd, dds, gp);
    snprintf(w2, sizeof w2, "bwd dscale %s", what);
    cmp(w2, gp, rds, (size_t)P, t == CUDNN_DATA_DOUBLE ? 1e-12 : 1e-4);
    tns_get(&pd, ddb, gp);
    snprintf(w2, sizeof w2, "bwd dbias %s", what);
    cmp(w2, gp, rdb, (size_t)P, t == CUDNN_DATA_DOUBLE ? 1e-12 : 1e-4);
    if (ops == 2) {
        tns_get(&z, ddz, got);
        snprintf(w2, sizeof w2, "bwd dz %s", what);
        cmp(w2, got, g, (size_t)T, tol);
    }

    th_free(H, dx_), th_free(H, dz), th_free(H, dy), th_free(H, dsc), th_free(H, dbi), th_free(H, drm), th_free(H, drv);
    th_free(H, dsm), th_free(H, dsv), th_free(H, ddy), th_free(H, ddx), th_free(H, ddz), th_free(H, dds), th_free(H, ddb);
    if (reserve) th_free(H, reserve);
    free(hx), free(hz), free(hy0), free(hsc), free(hbi), free(hrm), free(hrv), free(ry), free(rpre), free(rm), free(rvb), free(rvu);
    free(rinv), free(got), free(gp), free(hdy), free(hdx0), free(hds0), free(hdb0), free(g), free(rdx), free(rds), free(rdb);
    if (act) cudnnDestroyActivationDescriptor(act);
    cudnnDestroyTensorDescriptor(x.d), cudnnDestroyTensorDescriptor(y.d), cudnnDestroyTensorDescriptor(z.d);
    cudnnDestroyTensorDescriptor(pd.d), cudnnDestroyTensorDescriptor(dyt.d), cudnnDestroyTensorDescriptor(dxt.d);
    cudnnDestroyTensorDescriptor(mvd.d);
}

static void test_sweep(void)
{
    for (int ti = 0; ti < 4; ti++)
        for (int layout = 0; layout < 3; layout++)
            for (int nd = 4; nd <= 5; nd++)
                for (int mode = 0; mode < 2; mode++)
                    for (int ops = 0; ops < 3; ops++) sweep_one(types[ti], layout, nd, mode, ops, th_randint(0, 1));
}

/* FLOAT with every data tensor in one N x C x S layout (NCHW, NHWC, both with gaps): the CPU
 * backend's fast path, both modes and all ops (inference with the activation too), the padded
 * mean/variance descriptor included. */
static void test_fast_paths(void)
{
    static const int layouts[4] = {0, 1, 3, 4};
    g_same_layout = 1;
    for (int li = 0; li < 4; li++)
        for (int nd = 4; nd <= 5; nd++)
            for (int mode = 0; mode < 2; mode++)
                for (int ops = 0; ops < 3; ops++)
                    for (int rep = 0; rep < 2; rep++) sweep_one(CUDNN_DATA_FLOAT, layouts[li], nd, mode, ops, th_randint(0, 1));
    g_same_layout = 0;
}

/* ------------------------------------------- finite differences (DOUBLE) */
/* L = sum(w * y) with y from ForwardTrainingEx; dL/dx, dL/dscale, dL/dbias, dL/dz from BackwardEx. */
static double fd_loss(int mode, int ops, cudnnActivationDescriptor_t act, tns *x, tns *pd, const double *hx, const double *hz,
                      const double *hsc, const double *hbi, const double *w)
{
    double one = 1, zero = 0;
    void *dx_ = tns_buf(x, hx, 0), *dz = tns_buf(x, hz, 0), *dy = tns_buf(x, NULL, 0), *dsc = tns_buf(pd, hsc, 0), *dbi = tns_buf(pd, hbi, 0);
    size_t rsz = 0;
    TH_OK(cudnnGetNormalizationTrainingReserveSpaceSize(H, (cudnnNormMode_t)mode, (cudnnNormOps_t)ops, CUDNN_NORM_ALGO_STANDARD, act, x->d, &rsz, 1));
    void *res = rsz ? th_alloc(H, rsz) : NULL;
    TH_OK(cudnnNormalizationForwardTraining(H, (cudnnNormMode_t)mode, (cudnnNormOps_t)ops, CUDNN_NORM_ALGO_STANDARD, &one, &zero, x->d, dx_, pd->d,
                                            dsc, dbi, 0, pd->d, NULL, NULL, 1e-2, NULL, NULL, act, x->d, dz, x->d, dy, NULL, 0, res, rsz, 1));
    double *y = dalloc(x->n), L = 0;
    tns_get(x, dy, y);
    for (int64_t e = 0; e < x->n; e++) L += w[e] * y[e];
    free(y);
    th_free(H, dx_), th_free(H, dz), th_free(H, dy), th_free(H, dsc), th_free(H, dbi);
    if (res) th_free(H, res);
    return L;
}

static void test_fd(void)
{
    for (int mode = 0; mode < 2; mode += 1)
        for (int ops = 0; ops < 3; ops++) {
            int nd = 4, dim[5] = {3, 2, 2, 3, 1};
            tns x, pd;
            tns_make(&x, CUDNN_DATA_DOUBLE, nd, dim, 1);
            int pdim[4] = {1, 2, mode == 0 ? 2 : 1, mode == 0 ? 3 : 1};
            tns_make(&pd, CUDNN_DATA_DOUBLE, nd, pdim, 0);
            int64_t T = x.n, P = pd.n;
            double *hx = dalloc(T), *hz = dalloc(T), *w = dalloc(T), *sc = dalloc(P), *bi = dalloc(P);
            th_fill_uniform(hx, T, -2, 2), th_fill_uniform(hz, T, -1, 1), th_fill_uniform(w, T, -1, 1);
            th_fill_uniform(sc, P, 0.5, 1.5), th_fill_uniform(bi, P, -0.5, 0.5);
            cudnnActivationDescriptor_t act = ops ? make_act(ops == 1 ? CUDNN_ACTIVATION_TANH : CUDNN_ACTIVATION_SIGMOID, 0) : NULL;
            /* analytic */
            double one = 1, zero = 0;
            void *dx_ = tns_buf(&x, hx, 0), *dz = tns_buf(&x, hz, 0), *dy = tns_buf(&x, NULL, 0), *dsc = tns_buf(&pd, sc, 0), *dbi = tns_buf(&pd, bi, 0);
            size_t rsz = 0;
            TH_OK(cudnnGetNormalizationTrainingReserveSpaceSize(H, (cudnnNormMode_t)mode, (cudnnNormOps_t)ops, CUDNN_NORM_ALGO_STANDARD, act, x.d, &rsz, 1));
            void *res = rsz ? th_alloc(H, rsz) : NULL;
            void *sm = tns_buf(&pd, NULL, 0), *sv = tns_buf(&pd, NULL, 0);
            TH_OK(cudnnNormalizationForwardTraining(H, (cudnnNormMode_t)mode, (cudnnNormOps_t)ops, CUDNN_NORM_ALGO_STANDARD, &one, &zero, x.d, dx_,
                                                    pd.d, dsc, dbi, 0, pd.d, NULL, NULL, 1e-2, sm, sv, act, x.d, dz, x.d, dy, NULL, 0, res, rsz, 1));
            void *dw = tns_buf(&x, w, 0), *gx = tns_buf(&x, NULL, 0), *gz = tns_buf(&x, NULL, 0), *gs = tns_buf(&pd, NULL, 0), *gb = tns_buf(&pd, NULL, 0);
            TH_OK(cudnnNormalizationBackward(H, (cudnnNormMode_t)mode, (cudnnNormOps_t)ops, CUDNN_NORM_ALGO_STANDARD, &one, &zero, &one, &zero, x.d,
                                             dx_, x.d, dy, x.d, dw, x.d, gz, x.d, gx, pd.d, dsc, dbi, gs, gb, 1e-2, pd.d, sm, sv, act, NULL, 0, res,
                                             rsz, 1));
            double *ax = dalloc(T), *az = dalloc(T), *as = dalloc(P), *ab = dalloc(P);
            tns_get(&x, gx, ax), tns_get(&x, gz, az), tns_get(&pd, gs, as), tns_get(&pd, gb, ab);
            double *nx = dalloc(T), *nz = dalloc(T), *ns = dalloc(P), *nb = dalloc(P), h = 1e-6;
            for (int64_t e = 0; e < T; e++) {
                double s0 = hx[e];
                hx[e] = s0 + h;
                double lp = fd_loss(mode, ops, act, &x, &pd, hx, hz, sc, bi, w);
                hx[e] = s0 - h;
                double lm = fd_loss(mode, ops, act, &x, &pd, hx, hz, sc, bi, w);
                hx[e] = s0;
                nx[e] = (lp - lm) / (2 * h);
                if (ops == 2) {
                    s0 = hz[e];
                    hz[e] = s0 + h;
                    lp = fd_loss(mode, ops, act, &x, &pd, hx, hz, sc, bi, w);
                    hz[e] = s0 - h;
                    lm = fd_loss(mode, ops, act, &x, &pd, hx, hz, sc, bi, w);
                    hz[e] = s0;
                    nz[e] = (lp - lm) / (2 * h);
                }
            }
            for (int64_t q = 0; q < P; q++) {
                double s0 = sc[q];
                sc[q] = s0 + h;
                double lp = fd_loss(mode, ops, act, &x, &pd, hx, hz, sc, bi, w);
                sc[q] = s0 - h;
                double lm = fd_loss(mode, ops, act, &x, &pd, hx, hz, sc, bi, w);
                sc[q] = s0;
                ns[q] = (lp - lm) / (2 * h);
                s0 = bi[q];
                bi[q] = s0 + h;
                lp = fd_loss(mode, ops, act, &x, &pd, hx, hz, sc, bi, w);
                bi[q] = s0 - h;
                lm = fd_loss(mode, ops, act, &x, &pd, hx, hz, sc, bi, w);
                bi[q] = s0;
                nb[q] = (lp - lm) / (2 * h);
            }
            char wh[80];
            snprintf(wh, sizeof wh, "FD dx mode %d ops %d", mode, ops);
            th_compare(wh, ax, nx, (size_t)T, 1e-6);
            snprintf(wh, sizeof wh, "FD dscale mode %d ops %d", mode, ops);
            th_compare(wh, as, ns, (size_t)P, 1e-6);
            snprintf(wh, sizeof wh, "FD dbias mode %d ops %d", mode, ops);
            th_compare(wh, ab, nb, (size_t)P, 1e-6);
            if (ops == 2) {
                snprintf(wh, sizeof wh, "FD dz mode %d", mode);
                th_compare(wh, az, nz, (size_t)T, 1e-6);
            }
            th_free(H, dx_), th_free(H, dz), th_free(H, dy), th_free(H, dsc), th_free(H, dbi), th_free(H, sm), th_free(H, sv);
            th_free(H, dw), th_free(H, gx), th_free(H, gz), th_free(H, gs), th_free(H, gb);
            if (res) th_free(H, res);
            free(hx), free(hz), free(w), free(sc), free(bi), free(ax), free(az), free(as), free(ab), free(nx), free(nz), free(ns), free(nb);
            if (act) cudnnDestroyActivationDescriptor(act);
            cudnnDestroyTensorDescriptor(x.d), cudnnDestroyTensorDescriptor(pd.d);
        }
}

/* ------------------------------------------------------------ error paths */
static void test_errors(void)
{
    int dim[4] = {2, 3, 4, 5}, pdim[4] = {1, 3, 1, 1}, pbad[4] = {1, 3, 4, 5};
    tns x, y, pd, pbadd;
    tns_make(&x, CUDNN_DATA_FLOAT, 4, dim, 0);
    tns_make(&y, CUDNN_DATA_FLOAT, 4, dim, 1);
    tns_make(&pd, CUDNN_DATA_FLOAT, 4, pdim, 0);
    tns_make(&pbadd, CUDNN_DATA_FLOAT, 4, pbad, 0);
    double *hx = dalloc(x.n), hp[3] = {1, 2, 0.5};
    fill_q(hx, x.n, -3, 3);
    void *dx_ = tns_buf(&x, hx, 0), *dy = tns_buf(&y, NULL, 7), *sc = tns_buf(&pd, hp, 0), *bi = tns_buf(&pd, hp, 0);
    void *rm = tns_buf(&pd, hp, 0), *rv = tns_buf(&pd, hp, 0), *sm = tns_buf(&pd, NULL, 9), *sv = tns_buf(&pd, NULL, 9);
    size_t yb = sizeof(float) * y.span;
    void *ybefore = malloc(yb);
    th_download(H, ybefore, dy, yb);
    float one = 1, zero = 0;
    cudnnNormMode_t M = CUDNN_NORM_PER_CHANNEL;
    cudnnNormOps_t O = CUDNN_NORM_OPS_NORM;
    cudnnNormAlgo_t A = CUDNN_NORM_ALGO_STANDARD;
#define TR(mode, algo, mvdesc, rmp, rvp, eps, smp, svp, g, want)                                                                          \
    do {                                                                                                                                  \
        TH_STATUS(cudnnNormalizationForwardTraining(H, mode, O, algo, &one, &zero, x.d, dx_, pd.d, sc, bi, 0.5, mvdesc, rmp, rvp, eps, smp, \
                                                    svp, NULL, NULL, NULL, y.d, dy, NULL, 0, NULL, 0, g),                                   \
                  want);                                                                                                                  \
        TH_CHECK(same_bytes(&y, dy, ybefore), "y changed on error");                                                                     \
    } while (0)
    TR(M, A, pd.d, rm, rv, 1e-5, sm, sv, 2, CUDNN_STATUS_NOT_SUPPORTED); /* groupCnt != 1 */
    TR(M, A, pd.d, rm, rv, 1e-5, sm, sv, 0, CUDNN_STATUS_BAD_PARAM);
    TR((cudnnNormMode_t)2, A, pd.d, rm, rv, 1e-5, sm, sv, 1, CUDNN_STATUS_BAD_PARAM);
    TR(M, (cudnnNormAlgo_t)5, pd.d, rm, rv, 1e-5, sm, sv, 1, CUDNN_STATUS_BAD_PARAM);
    TR(M, A, pbadd.d, rm, rv, 1e-5, sm, sv, 1, CUDNN_STATUS_BAD_PARAM); /* mean/var desc of the other mode */
    TR(M, A, NULL, rm, rv, 1e-5, sm, sv, 1, CUDNN_STATUS_BAD_PARAM);
    TR(M, A, pd.d, rm, NULL, 1e-5, sm, sv, 1, CUDNN_STATUS_BAD_PARAM);
    TR(M, A, pd.d, rm, rv, 1e-5, NULL, sv, 1, CUDNN_STATUS_BAD_PARAM);
    TR(M, A, pd.d, rm, rv, -1.0, sm, sv, 1, CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnNormalizationForwardInference(H, M, O, A, &one, &zero, x.d, dx_, pd.d, sc, bi, pd.d, rm, rv, NULL, NULL, NULL, y.d, dy, 1e-5, 3),
              CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnNormalizationForwardInference(H, M, CUDNN_NORM_OPS_NORM_ACTIVATION, A, &one, &zero, x.d, dx_, pd.d, sc, bi, pd.d, rm, rv, NULL,
                                                 NULL, NULL, y.d, dy, 1e-5, 1), CUDNN_STATUS_BAD_PARAM); /* activation missing */
    TH_STATUS(cudnnNormalizationForwardInference(H, M, (cudnnNormOps_t)3, A, &one, &zero, x.d, dx_, pd.d, sc, bi, pd.d, rm, rv, NULL, NULL, NULL,
                                                 y.d, dy, 1e-5, 1), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(same_bytes(&y, dy, ybefore), "y changed on error");
    void *ddx = tns_buf(&y, NULL, 7), *ds = tns_buf(&pd, NULL, 5), *db = tns_buf(&pd, NULL, 5);
    TH_STATUS(cudnnNormalizationBackward(H, M, O, A, &one, &zero, &one, &zero, x.d, dx_, NULL, NULL, x.d, dx_, NULL, NULL, y.d, ddx, pd.d, sc, bi,
                                         ds, db, 1e-5, pd.d, NULL, NULL, NULL, NULL, 0, NULL, 0, 2), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnNormalizationBackward(H, M, O, A, &one, &zero, &one, &zero, x.d, dx_, NULL, NULL, x.d, dx_, NULL, NULL, y.d, ddx, pd.d, sc, bi,
                                         ds, db, 1e-5, pbadd.d, NULL, NULL, NULL, NULL, 0, NULL, 0, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnNormalizationBackward(H, M, O, A, &one, &zero, &one, &zero, x.d, dx_, NULL, NULL, x.d, dx_, NULL, NULL, y.d, ddx, pd.d, sc, bi,
                                         ds, db, 1e-5, pd.d, sm, NULL, NULL, NULL, 0, NULL, 0, 1), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(same_bytes(&y, ddx, ybefore), "dx changed on error");
    size_t sz = 5;
    TH_STATUS(cudnnGetNormalizationTrainingReserveSpaceSize(H, M, O, A, NULL, x.d, &sz, 2), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnGetNormalizationTrainingReserveSpaceSize(H, M, O, A, NULL, x.d, NULL, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetNormalizationForwardTrainingWorkspaceSize(H, M, CUDNN_NORM_OPS_NORM_ADD_ACTIVATION, A, x.d, NULL, y.d, pd.d, NULL, pd.d, &sz, 1),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetNormalizationBackwardWorkspaceSize(H, M, O, A, x.d, y.d, x.d, NULL, y.d, pd.d, NULL, pd.d, &sz, 4), CUDNN_STATUS_NOT_SUPPORTED);
    TH_CHECK(sz == 5, "size written on error");
    TH_OK(cudnnGetNormalizationBackwardWorkspaceSize(H, M, O, A, x.d, y.d, x.d, NULL, y.d, pd.d, NULL, pd.d, &sz, 1));
    TH_CHECK(sz == 0, "backward workspace %zu", sz);
    th_free(H, dx_), th_free(H, dy), th_free(H, sc), th_free(H, bi), th_free(H, rm), th_free(H, rv), th_free(H, sm), th_free(H, sv);
    th_free(H, ddx), th_free(H, ds), th_free(H, db);
    free(ybefore), free(hx);
    cudnnDestroyTensorDescriptor(x.d), cudnnDestroyTensorDescriptor(y.d), cudnnDestroyTensorDescriptor(pd.d), cudnnDestroyTensorDescriptor(pbadd.d);
}

int main(void)
{
    th_seed(424242);
    H = th_create_handle();
    test_derive();
    test_sweep();
    test_fd();
    test_errors();
    test_fast_paths();
    cudnnDestroy(H);
    return th_finish();
}
