/* Batch normalization: cudnnDeriveBNTensorDescriptor, ForwardInference, ForwardTraining(+Ex),
 * Backward(+Ex) and the Ex size queries, against tests/ref/norm_ref.c, over every data type,
 * NCHW/NHWC/strided 4-D and 5-D layouts, the three modes, alpha/beta, NULL pairs, running-stat
 * updates, finite-difference gradient checks and the error paths. */
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
            for (int mode = 0; mode < 3; mode++) {
                int dim[5] = {3, 5, 4, 6, 2};
                tns x;
                tns_make(&x, types[ti], nd, dim, 1);
                cudnnTensorDescriptor_t d;
                TH_OK(cudnnCreateTensorDescriptor(&d));
                TH_OK(cudnnDeriveBNTensorDescriptor(d, x.d, (cudnnBatchNormMode_t)mode));
                cudnnDataType_t t;
                int nb, gd[8], gs[8];
                TH_OK(cudnnGetTensorNdDescriptor(d, 8, &t, &nb, gd, gs));
                TH_CHECK(t == ptype(types[ti]), "derived type %d for x type %d", (int)t, (int)types[ti]);
                TH_CHECK(nb == nd, "derived nbDims %d want %d", nb, nd);
                int ok = gd[0] == 1 && gd[1] == 5;
                for (int i = 2; i < nd; i++) ok &= gd[i] == (mode == 0 ? dim[i] : 1);
                TH_CHECK(ok, "derived dims wrong for mode %d nd %d", mode, nd);
                TH_STATUS(cudnnDeriveBNTensorDescriptor(d, x.d, (cudnnBatchNormMode_t)3), CUDNN_STATUS_BAD_PARAM);
                TH_STATUS(cudnnDeriveBNTensorDescriptor(NULL, x.d, CUDNN_BATCHNORM_SPATIAL), CUDNN_STATUS_BAD_PARAM);
                TH_STATUS(cudnnDeriveBNTensorDescriptor(d, NULL, CUDNN_BATCHNORM_SPATIAL), CUDNN_STATUS_BAD_PARAM);
                cudnnDestroyTensorDescriptor(d);
                cudnnDestroyTensorDescriptor(x.d);
            }
    /* 3-D x cannot be derived */
    tns x3;
    int d3[3] = {2, 3, 4};
    tns_make(&x3, CUDNN_DATA_FLOAT, 3, d3, 0);
    cudnnTensorDescriptor_t d;
    TH_OK(cudnnCreateTensorDescriptor(&d));
    TH_STATUS(cudnnDeriveBNTensorDescriptor(d, x3.d, CUDNN_BATCHNORM_SPATIAL), CUDNN_STATUS_BAD_PARAM);
    cudnnDestroyTensorDescriptor(d);
    cudnnDestroyTensorDescriptor(x3.d);
}

/* ------------------------------------------------- forward + backward sweep */
static int big; /* one large case to exercise the threaded paths */
static void random_shape(int nd, int *dim)
{
    if (big == 3) { /* NCHW channels of 16 x 1088 members (16-byte multiples): 68 KB of FLOAT each */
        int d[5] = {16, 6, 32, 34, 2};
        memcpy(dim, d, sizeof(int) * nd);
        return;
    }
    if (big == 5) { /* NHWC, C a multiple of 128 bytes of FLOAT and HALF channels (whole 16-byte units per channel group) */
        int d[5] = {4, 128, 12, 10, 2};
        memcpy(dim, d, sizeof(int) * nd);
        return;
    }
    if (big == 2) { /* NCHW spatial size >= 128 but not a multiple of the 16-byte vector width; odd C for NHWC */
        int d[5] = {3, 7, 13, 11, 3};
        memcpy(dim, d, sizeof(int) * nd);
        return;
    }
    if (big == 4) { /* several rows per parameter block (N = 7: blocks of four rows and a tail), odd sizes */
        int d[5] = {7, 5, 9, 7, 2};
        memcpy(dim, d, sizeof(int) * nd);
        return;
    }
    if (big) {
        int d[5] = {8, 16, 32, 32, 2};
        memcpy(dim, d, sizeof(int) * nd);
        return;
    }
    dim[0] = th_randint(2, 5);
    dim[1] = th_randint(1, 6);
    for (int i = 2; i < nd; i++) dim[i] = th_randint(1, 6);
}

static int g_same_layout; /* y in x's layout (the GPU's dense inference/training paths) */
static int g_beta0;       /* beta = 0 (the GPU's cooperative training path needs it) */
static int g_fix;         /* 1: beta, betaDataDiff, betaParamDiff all nonzero; 2: only betaParamDiff nonzero; 0: random */
static int g_nostats;     /* forward training without running and saved statistics (backward then recomputes them) */
static int g_saved = -1;  /* backward with (1) or without (0) the saved statistics; -1: random */

static void sweep_one(cudnnDataType_t t, int layout, int nd, int mode, int ops, int use_ex)
{
    int dim[5];
    random_shape(nd, dim);
    int per_act = mode == 0;
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
    snprintf(what, sizeof what, "%s layout %d nd %d mode %d ops %d ex %d", th_dtype_name(t), layout, nd, mode, ops, use_ex);

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
    if (g_beta0) beta = 0.0;
    if (g_fix) beta = g_fix == 1 ? 0.75 : 0.0;
    char al[8], be[8];
    scal(t, alpha, al);
    scal(t, beta, be);

    void *dx_ = tns_buf(&x, hx, 0), *dz = tns_buf(&z, hz, 0), *dy = tns_buf(&y, beta != 0 ? hy0 : NULL, NAN);
    void *dsc = tns_buf(&pd, hsc, 0), *dbi = tns_buf(&pd, hbi, 0), *drm = tns_buf(&pd, hrm, 0), *drv = tns_buf(&pd, hrv, 0);
    void *dsm = tns_buf(&pd, NULL, NAN), *dsv = tns_buf(&pd, NULL, NAN);
    void *frm = g_nostats ? NULL : drm, *frv = g_nostats ? NULL : drv, *fsm = g_nostats ? NULL : dsm, *fsv = g_nostats ? NULL : dsv;
    size_t rsz = 0, wsz = 1;
    void *reserve = NULL;
    if (use_ex) {
        TH_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(H, (cudnnBatchNormMode_t)mode, (cudnnBatchNormOps_t)ops, act, x.d, &rsz));
        TH_OK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(H, (cudnnBatchNormMode_t)mode, (cudnnBatchNormOps_t)ops, x.d,
                                                                       ops == 2 ? z.d : NULL, y.d, pd.d, act, &wsz));
        if (rsz) reserve = th_alloc(H, rsz);
        TH_OK(cudnnBatchNormalizationForwardTrainingEx(H, (cudnnBatchNormMode_t)mode, (cudnnBatchNormOps_t)ops, al, be, x.d, dx_, z.d,
                                                      ops == 2 ? dz : NULL, y.d, dy, pd.d, dsc, dbi, factor, frm, frv, eps, fsm, fsv, act,
                                                      NULL, wsz, reserve, rsz));
    } else {
        TH_OK(cudnnBatchNormalizationForwardTraining(H, (cudnnBatchNormMode_t)mode, al, be, x.d, dx_, y.d, dy, pd.d, dsc, dbi, factor, frm,
                                                    frv, eps, fsm, fsv));
    }
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
    if (!g_nostats) check_train_stats(&pd, what, dsm, dsv, drm, drv, rm, rinv, rvu, hrm, hrv, factor, ptol);

    /* inference with the running stats we uploaded originally (ops NORM only via the BN API) */
    if (!use_ex) {
        void *drm0 = tns_buf(&pd, hrm, 0), *drv0 = tns_buf(&pd, hrv, 0), *dyi = tns_buf(&y, beta != 0 ? hy0 : NULL, NAN);
        TH_OK(cudnnBatchNormalizationForwardInference(H, (cudnnBatchNormMode_t)mode, al, be, x.d, dx_, y.d, dyi, pd.d, dsc, dbi, drm0, drv0, eps));
        ref_norm_infer(N, C, (int)S, per_act, hx, hsc, hbi, hrm, hrv, NULL, REF_ACT_NONE, 0, eps, ry);
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
    if (g_fix) bD = g_fix == 1 ? 0.5 : 0.0, bP = 1.0;
    char aDs[8], bDs[8], aPs[8], bPs[8];
    scal(t, aD, aDs), scal(t, bD, bDs), scal(t, aP, aPs), scal(t, bP, bPs);
    tns dyt, dxt;
    tns_make(&dyt, t, nd, dim, g_same_layout ? layout : (layout + 2) % 3); /* same layout: the GPU's dense backward path */
    tns_make(&dxt, t, nd, dim, layout);
    void *ddy = tns_buf(&dyt, hdy, 0), *ddx = tns_buf(&dxt, bD != 0 ? hdx0 : NULL, NAN), *ddz = tns_buf(&z, NULL, NAN);
    void *dds = tns_buf(&pd, bP != 0 ? hds0 : NULL, NAN), *ddb = tns_buf(&pd, bP != 0 ? hdb0 : NULL, NAN);
    int use_saved = th_randint(0, 1);
    if (g_saved >= 0) use_saved = g_saved;
    if (g_nostats) use_saved = 0;
    if (use_ex) {
        size_t bw = 1;
        TH_OK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(H, (cudnnBatchNormMode_t)mode, (cudnnBatchNormOps_t)ops, x.d, y.d, dyt.d,
                                                               ops == 2 ? z.d : NULL, dxt.d, pd.d, act, &bw));
        TH_OK(cudnnBatchNormalizationBackwardEx(H, (cudnnBatchNormMode_t)mode, (cudnnBatchNormOps_t)ops, aDs, bDs, aPs, bPs, x.d, dx_, y.d,
                                                dy, dyt.d, ddy, z.d, ops == 2 ? ddz : NULL, dxt.d, ddx, pd.d, dsc, dbi, dds, ddb, eps,
                                                use_saved ? dsm : NULL, use_saved ? dsv : NULL, act, NULL, bw, reserve, rsz));
    } else {
        TH_OK(cudnnBatchNormalizationBackward(H, (cudnnBatchNormMode_t)mode, aDs, bDs, aPs, bPs, x.d, dx_, dyt.d, ddy, dxt.d, ddx, pd.d, dsc,
                                              dds, ddb, eps, use_saved ? dsm : NULL, use_saved ? dsv : NULL));
    }
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
}

static void test_sweep(void)
{
    for (int ti = 0; ti < 4; ti++)
        for (int layout = 0; layout < 3; layout++)
            for (int nd = 4; nd <= 5; nd++)
                for (int mode = 0; mode < 3; mode++) {
                    sweep_one(types[ti], layout, nd, mode, 0, 0);
                    for (int ops = 0; ops < 3; ops++) sweep_one(types[ti], layout, nd, mode, ops, 1);
                }
    g_same_layout = 1;
    for (int ti = 0; ti < 4; ti++)
        for (int layout = 0; layout < 2; layout++)
            for (int nd = 4; nd <= 5; nd++) sweep_one(types[ti], layout, nd, 1, 0, 0);
    g_same_layout = 0;
}

/* Training forward and backward twice on the same inputs: y, the saved statistics, dx, dscale and
 * dbias must repeat bit for bit (every reduction has a fixed order). */
static void test_repeat(cudnnDataType_t t)
{
    int dim[4] = {16, 6, 32, 34};
    tns x, pd;
    tns_make(&x, t, 4, dim, 0);
    int pdim[4] = {1, 6, 1, 1};
    tns_make(&pd, ptype(t), 4, pdim, 0);
    double *hx = dalloc(x.n), *hdy = dalloc(x.n), *hp = dalloc(6);
    fill_q(hx, x.n, -4, 4);
    for (int64_t e = 0; e < x.n; e++) hx[e] += (e % 7) / 7.0; /* inexact values: the sums round, so a changed order would show */
    fill_q(hdy, x.n, -2, 2);
    fill_q(hp, 6, 0.25, 2);
    float one = 1, zero = 0;
    void *dx_ = tns_buf(&x, hx, 0), *ddy = tns_buf(&x, hdy, 0), *sc = tns_buf(&pd, hp, 0), *bi = tns_buf(&pd, hp, 0);
    void *y[2], *sm[2], *sv[2], *gx[2], *gs[2], *gb[2];
    for (int i = 0; i < 2; i++) {
        y[i] = tns_buf(&x, NULL, 0), sm[i] = tns_buf(&pd, NULL, 0), sv[i] = tns_buf(&pd, NULL, 0);
        gx[i] = tns_buf(&x, NULL, 0), gs[i] = tns_buf(&pd, NULL, 0), gb[i] = tns_buf(&pd, NULL, 0);
        TH_OK(cudnnBatchNormalizationForwardTraining(H, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x.d, dx_, x.d, y[i], pd.d, sc, bi, 0.5, NULL, NULL,
                                                    1e-5, sm[i], sv[i]));
        TH_OK(cudnnBatchNormalizationBackward(H, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, x.d, dx_, x.d, ddy, x.d, gx[i], pd.d, sc,
                                              gs[i], gb[i], 1e-5, NULL, NULL));
    }
    const tns *ty[6] = {&x, &pd, &pd, &x, &pd, &pd};
    void **bufs[6] = {y, sm, sv, gx, gs, gb};
    for (int k = 0; k < 6; k++) {
        size_t bytes = th_dtype_size(ty[k]->t) * ty[k]->span;
        void *h0 = malloc(bytes);
        th_download(H, h0, bufs[k][0], bytes);
        TH_CHECK(same_bytes(ty[k], bufs[k][1], h0), "%s output %d differs between two identical calls", th_dtype_name(t), k);
        free(h0);
        th_free(H, bufs[k][0]), th_free(H, bufs[k][1]);
    }
    th_free(H, dx_), th_free(H, ddy), th_free(H, sc), th_free(H, bi);
    free(hx), free(hdy), free(hp);
    cudnnDestroyTensorDescriptor(x.d), cudnnDestroyTensorDescriptor(pd.d);
}

/* The CUDA SPATIAL training forward and backward on packed NCHW FLOAT / HALF / BFLOAT16 (spatial
 * sizes >= 64): the cluster kernel (FREEDNN_BN_CLUSTER unset: its own cluster size; 1, 2, 8:
 * forced) and the partial-sum path it stands in front of (0). Forward with and without running and
 * saved statistics, beta 0 and nonzero; backward with and without the saved statistics,
 * betaParamDiff nonzero; 16-byte units (big 1, 3) and elements (big 2). The CPU backend ignores the
 * variable: one round there. */
static void test_nchw_paths(void)
{
    static const char *env[] = {NULL, "0", "1", "2", "8"};
    static const cudnnDataType_t ty[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
    static const int var[5][3] = {{1, 0, 1}, {2, 0, 1}, {2, 0, 0}, {1, 1, 0}, {2, 1, 0}}; /* g_fix, g_nostats, g_saved */
    const int rounds = th_is_gpu(H) ? 5 : 1;
    g_same_layout = 1;
    for (int r = 0; r < rounds; r++) {
        if (env[r]) setenv("FREEDNN_BN_CLUSTER", env[r], 1);
        else unsetenv("FREEDNN_BN_CLUSTER");
        for (int ti = 0; ti < 3; ti++) {
            for (big = 1; big <= 3; big++)
                for (int v = 0; v < 5; v++) {
                    g_fix = var[v][0], g_nostats = var[v][1], g_saved = var[v][2];
                    sweep_one(ty[ti], 0, big == 2 && ti == 1 ? 5 : 4, CUDNN_BATCHNORM_SPATIAL, 0, v == 1);
                }
            test_repeat(ty[ti]);
        }
    }
    unsetenv("FREEDNN_BN_CLUSTER");
    big = g_same_layout = g_fix = g_nostats = 0;
    g_saved = -1;
}

/* ------------------------------------------- finite differences (DOUBLE) */
/* L = sum(w * y) with y from ForwardTrainingEx; dL/dx, dL/dscale, dL/dbias, dL/dz from BackwardEx. */
static double fd_loss(int mode, int ops, cudnnActivationDescriptor_t act, tns *x, tns *pd, const double *hx, const double *hz,
                      const double *hsc, const double *hbi, const double *w)
{
    double one = 1, zero = 0;
    void *dx_ = tns_buf(x, hx, 0), *dz = tns_buf(x, hz, 0), *dy = tns_buf(x, NULL, 0), *dsc = tns_buf(pd, hsc, 0), *dbi = tns_buf(pd, hbi, 0);
    size_t rsz = 0;
    TH_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(H, (cudnnBatchNormMode_t)mode, (cudnnBatchNormOps_t)ops, act, x->d, &rsz));
    void *res = rsz ? th_alloc(H, rsz) : NULL;
    TH_OK(cudnnBatchNormalizationForwardTrainingEx(H, (cudnnBatchNormMode_t)mode, (cudnnBatchNormOps_t)ops, &one, &zero, x->d, dx_, x->d, dz,
                                                  x->d, dy, pd->d, dsc, dbi, 0, NULL, NULL, 1e-2, NULL, NULL, act, NULL, 0, res, rsz));
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
    for (int mode = 0; mode < 3; mode += 1)
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
            TH_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(H, (cudnnBatchNormMode_t)mode, (cudnnBatchNormOps_t)ops, act, x.d, &rsz));
            void *res = rsz ? th_alloc(H, rsz) : NULL;
            void *sm = tns_buf(&pd, NULL, 0), *sv = tns_buf(&pd, NULL, 0);
            TH_OK(cudnnBatchNormalizationForwardTrainingEx(H, (cudnnBatchNormMode_t)mode, (cudnnBatchNormOps_t)ops, &one, &zero, x.d, dx_, x.d,
                                                          dz, x.d, dy, pd.d, dsc, dbi, 0, NULL, NULL, 1e-2, sm, sv, act, NULL, 0, res, rsz));
            void *dw = tns_buf(&x, w, 0), *gx = tns_buf(&x, NULL, 0), *gz = tns_buf(&x, NULL, 0), *gs = tns_buf(&pd, NULL, 0), *gb = tns_buf(&pd, NULL, 0);
            TH_OK(cudnnBatchNormalizationBackwardEx(H, (cudnnBatchNormMode_t)mode, (cudnnBatchNormOps_t)ops, &one, &zero, &one, &zero, x.d, dx_,
                                                    x.d, dy, x.d, dw, x.d, gz, x.d, gx, pd.d, dsc, dbi, gs, gb, 1e-2, sm, sv, act, NULL, 0, res, rsz));
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

/* ---------------------------------------------------- CPU FLOAT fast path */
/* Every data tensor FLOAT in one N x C x S layout (NCHW, NHWC, and both with gaps: the CPU backend's
 * fast path), over every mode and op, random alpha/beta, training with and without the running and
 * saved statistics, backward with and without the saved ones: small random shapes, shapes with
 * several rows per parameter block (big 4), large SPATIAL ones (threads, partial-sum blocks). */
static void test_fast_paths(void)
{
    static const int layouts[4] = {0, 1, 3, 4};
    g_same_layout = 1;
    for (int li = 0; li < 4; li++)
        for (int nd = 4; nd <= 5; nd++)
            for (int mode = 0; mode < 3; mode++)
                for (int ops = 0; ops < 3; ops++)
                    for (int v = 0; v < 3; v++) {
                        big = v == 2 ? 4 : 0;
                        g_nostats = v == 1;
                        sweep_one(CUDNN_DATA_FLOAT, layouts[li], nd, mode, ops, ops != 0 || v == 1);
                    }
    g_nostats = 0;
    big = 1;
    for (int li = 0; li < 4; li++)
        for (int ops = 0; ops < 3; ops++) sweep_one(CUDNN_DATA_FLOAT, layouts[li], 4 + (ops == 1), 1 + (li % 2), ops, 1);
    big = g_same_layout = 0;
}

/* One FLOAT problem of dims dim with x and z in layout lx, y, dy, dx and dz in layout ly: training
 * forward (Ex, with ops), inference (ops NORM) and backward (Ex). in: x, z, y, dy, dx (T each), scale,
 * bias, running mean and variance, dscale, dbias (P each). out: y, inference y, dx, dz (T each),
 * running mean and variance, saved mean and inverse std, dscale, dbias (P each). */
static void fvg_run(const int *dim, int lx, int ly, int mode, int ops, double *const *in, double *out)
{
    tns x, y, pd;
    tns_make(&x, CUDNN_DATA_FLOAT, 4, dim, lx);
    tns_make(&y, CUDNN_DATA_FLOAT, 4, dim, ly);
    int pdim[4] = {1, dim[1], mode == 0 ? dim[2] : 1, mode == 0 ? dim[3] : 1};
    tns_make(&pd, CUDNN_DATA_FLOAT, 4, pdim, 0);
    const int64_t T = x.n, P = pd.n;
    const cudnnBatchNormMode_t m = (cudnnBatchNormMode_t)mode;
    const cudnnBatchNormOps_t o = (cudnnBatchNormOps_t)ops;
    cudnnActivationDescriptor_t act = ops ? make_act(CUDNN_ACTIVATION_ELU, 1.0) : NULL;
    const float alpha = 0.5f, beta = 0.75f, one = 1.f;
    void *dx_ = tns_buf(&x, in[0], 0), *dz = tns_buf(&x, in[1], 0), *dy = tns_buf(&y, in[2], 0), *dyi = tns_buf(&y, in[2], 0);
    void *ddy = tns_buf(&y, in[3], 0), *ddx = tns_buf(&y, in[4], 0), *ddz = tns_buf(&y, NULL, 0);
    void *sc = tns_buf(&pd, in[5], 0), *bi = tns_buf(&pd, in[6], 0), *rm = tns_buf(&pd, in[7], 0), *rv = tns_buf(&pd, in[8], 0);
    void *rm0 = tns_buf(&pd, in[7], 0), *rv0 = tns_buf(&pd, in[8], 0), *sm = tns_buf(&pd, NULL, 0), *sv = tns_buf(&pd, NULL, 0);
    void *ds = tns_buf(&pd, in[9], 0), *db = tns_buf(&pd, in[10], 0);
    size_t rsz = 0;
    TH_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(H, m, o, act, x.d, &rsz));
    void *res = rsz ? th_alloc(H, rsz) : NULL;
    TH_OK(cudnnBatchNormalizationForwardTrainingEx(H, m, o, &alpha, &beta, x.d, dx_, x.d, ops == 2 ? dz : NULL, y.d, dy, pd.d, sc, bi, 0.25, rm,
                                                  rv, 1e-3, sm, sv, act, NULL, 0, res, rsz));
    TH_OK(cudnnBatchNormalizationForwardInference(H, m, &alpha, &beta, x.d, dx_, y.d, dyi, pd.d, sc, bi, rm0, rv0, 1e-3));
    TH_OK(cudnnBatchNormalizationBackwardEx(H, m, o, &one, &beta, &alpha, &one, x.d, dx_, y.d, dy, y.d, ddy, y.d, ops == 2 ? ddz : NULL, y.d,
                                            ddx, pd.d, sc, bi, ds, db, 1e-3, sm, sv, act, NULL, 0, res, rsz));
    tns_get(&y, dy, out), tns_get(&y, dyi, out + T), tns_get(&y, ddx, out + 2 * T), tns_get(&y, ddz, out + 3 * T);
    void *pv[6] = {rm, rv, sm, sv, ds, db};
    for (int k = 0; k < 6; k++) tns_get(&pd, pv[k], out + 4 * T + k * P);
    void *bufs[] = {dx_, dz, dy, dyi, ddy, ddx, ddz, sc, bi, rm, rv, rm0, rv0, sm, sv, ds, db};
    for (size_t k = 0; k < sizeof bufs / sizeof *bufs; k++) th_free(H, bufs[k]);
    if (res) th_free(H, res);
    if (act) cudnnDestroyActivationDescriptor(act);
    cudnnDestroyTensorDescriptor(x.d), cudnnDestroyTensorDescriptor(y.d), cudnnDestroyTensorDescriptor(pd.d);
}

/* FLOAT problems too large for the reference (PER_ACTIVATION with over 16K parameters and 64K
 * elements: the threaded loops and parameter moves of the CPU fast path): every tensor in x's
 * layout (NCHW or NHWC) against y, dy, dx, dz padded (the CPU backend's general path), same inputs. */
static void test_fast_vs_general(void)
{
    const int dim[4] = {4, 8, 48, 48};
    const int64_t T = 4 * 8 * 48 * 48;
    static const char *const names[10] = {"y", "inference y", "dx", "dz", "running mean", "running var", "saved mean", "saved invstd",
                                          "dscale", "dbias"};
    for (int mode = 0; mode < 2; mode++) {
        const int64_t P = mode == 0 ? T / 4 : 8, len[10] = {T, T, T, T, P, P, P, P, P, P};
        double *in[11];
        for (int k = 0; k < 11; k++) {
            in[k] = dalloc(k < 5 ? T : P);
            fill_q(in[k], k < 5 ? T : P, k == 5 || k == 8 ? 0.25 : -2, 2);
        }
        for (int64_t e = 0; e < T; e++) in[0][e] += (e % 7) / 7.0; /* inexact values: the sums round */
        double *got[2] = {dalloc(4 * T + 6 * P), dalloc(4 * T + 6 * P)};
        for (int layout = 0; layout < 2; layout++)
            for (int ops = 0; ops < 3; ops++) {
                fvg_run(dim, layout, layout, mode, ops, in, got[0]);
                fvg_run(dim, layout, 2, mode, ops, in, got[1]);
                for (int k = 0, off = 0; k < 10; off += (int)len[k], k++) {
                    if (k == 3 && ops != 2) continue;
                    char what[120];
                    snprintf(what, sizeof what, "fast vs general %s: layout %d mode %d ops %d", names[k], layout, mode, ops);
                    th_compare(what, got[0] + off, got[1] + off, (size_t)len[k], 1e-5);
                }
            }
        for (int k = 0; k < 11; k++) free(in[k]);
        free(got[0]), free(got[1]);
    }
}

/* ------------------------------------------------------------ error paths */
static void test_errors(void)
{
    int dim[4] = {2, 3, 4, 5}, pdim[4] = {1, 3, 1, 1}, pbad[4] = {1, 4, 1, 1}, d3[3] = {2, 3, 4};
    tns x, y, pd, pbadd, phalf, xh, x3, xi, yother;
    tns_make(&x, CUDNN_DATA_FLOAT, 4, dim, 0);
    tns_make(&y, CUDNN_DATA_FLOAT, 4, dim, 1);
    tns_make(&pd, CUDNN_DATA_FLOAT, 4, pdim, 0);
    tns_make(&pbadd, CUDNN_DATA_FLOAT, 4, pbad, 0);
    tns_make(&xh, CUDNN_DATA_HALF, 4, dim, 0);
    tns_make(&phalf, CUDNN_DATA_HALF, 4, pdim, 0);
    tns_make(&x3, CUDNN_DATA_FLOAT, 3, d3, 0);
    tns_make(&xi, CUDNN_DATA_INT8, 4, dim, 0);
    int dim2[4] = {2, 3, 4, 6};
    tns_make(&yother, CUDNN_DATA_FLOAT, 4, dim2, 0);
    double *hx = dalloc(x.n), *hp = dalloc(3);
    fill_q(hx, x.n, -3, 3);
    hp[0] = 1, hp[1] = 2, hp[2] = 0.5;
    void *dx_ = tns_buf(&x, hx, 0), *dy = tns_buf(&y, NULL, 7), *sc = tns_buf(&pd, hp, 0), *bi = tns_buf(&pd, hp, 0);
    void *rm = tns_buf(&pd, hp, 0), *rv = tns_buf(&pd, hp, 0), *sm = tns_buf(&pd, NULL, 9), *sv = tns_buf(&pd, NULL, 9);
    size_t yb = sizeof(float) * y.span;
    void *ybefore = malloc(yb);
    th_download(H, ybefore, dy, yb);
    float one = 1, zero = 0;
    cudnnBatchNormMode_t M = CUDNN_BATCHNORM_SPATIAL;
#define TR(xd, yd, pdd, f, rmp, rvp, eps, smp, svp, want)                                                                                        \
    do {                                                                                                                                         \
        TH_STATUS(cudnnBatchNormalizationForwardTraining(H, M, &one, &zero, xd, dx_, yd, dy, pdd, sc, bi, f, rmp, rvp, eps, smp, svp), want); \
        TH_CHECK(same_bytes(&y, dy, ybefore), "y changed on error");                                                                             \
    } while (0)
    TR(x.d, y.d, pd.d, 0.5, rm, NULL, 1e-5, sm, sv, CUDNN_STATUS_BAD_PARAM);  /* running pair half NULL */
    TR(x.d, y.d, pd.d, 0.5, NULL, rv, 1e-5, sm, sv, CUDNN_STATUS_BAD_PARAM);
    TR(x.d, y.d, pd.d, 0.5, rm, rv, 1e-5, sm, NULL, CUDNN_STATUS_BAD_PARAM);  /* saved pair half NULL */
    TR(x.d, y.d, pd.d, 0.5, rm, rv, 1e-5, NULL, sv, CUDNN_STATUS_BAD_PARAM);
    TR(x.d, y.d, pd.d, 0.5, rm, rv, -1e-5, sm, sv, CUDNN_STATUS_BAD_PARAM);   /* epsilon < CUDNN_BN_MIN_EPSILON */
    TR(x.d, y.d, pd.d, 0.5, rm, rv, NAN, sm, sv, CUDNN_STATUS_BAD_PARAM);
    TR(x.d, y.d, pbadd.d, 0.5, rm, rv, 1e-5, sm, sv, CUDNN_STATUS_BAD_PARAM); /* param desc not derived shape */
    TR(x.d, yother.d, pd.d, 0.5, rm, rv, 1e-5, sm, sv, CUDNN_STATUS_BAD_PARAM); /* y dims differ */
    TR(x.d, NULL, pd.d, 0.5, rm, rv, 1e-5, sm, sv, CUDNN_STATUS_BAD_PARAM);
    TR(x3.d, y.d, pd.d, 0.5, rm, rv, 1e-5, sm, sv, CUDNN_STATUS_NOT_SUPPORTED); /* 3-D */
    TR(xi.d, y.d, pd.d, 0.5, rm, rv, 1e-5, sm, sv, CUDNN_STATUS_NOT_SUPPORTED); /* INT8 */
    TH_STATUS(cudnnBatchNormalizationForwardTraining(NULL, M, &one, &zero, x.d, dx_, y.d, dy, pd.d, sc, bi, 1, rm, rv, 1e-5, sm, sv),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnBatchNormalizationForwardTraining(H, (cudnnBatchNormMode_t)7, &one, &zero, x.d, dx_, y.d, dy, pd.d, sc, bi, 1, rm, rv, 1e-5,
                                                     sm, sv), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnBatchNormalizationForwardTraining(H, M, &one, &zero, x.d, dx_, y.d, dy, pd.d, NULL, bi, 1, rm, rv, 1e-5, sm, sv),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnBatchNormalizationForwardTraining(H, M, NULL, &zero, x.d, dx_, y.d, dy, pd.d, sc, bi, 1, rm, rv, 1e-5, sm, sv),
              CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(same_bytes(&y, dy, ybefore), "y changed on error");
    /* half x needs FLOAT params */
    void *dxh = tns_buf(&xh, hx, 0), *dyh = tns_buf(&xh, NULL, 0);
    TH_STATUS(cudnnBatchNormalizationForwardTraining(H, M, &one, &zero, xh.d, dxh, xh.d, dyh, phalf.d, sc, bi, 1, rm, rv, 1e-5, sm, sv),
              CUDNN_STATUS_BAD_PARAM);
    /* running/saved outputs untouched on error */
    double *g = dalloc(3);
    tns_get(&pd, rm, g);
    TH_CHECK(g[0] == 1 && g[1] == 2 && g[2] == 0.5, "running mean changed on error");
    tns_get(&pd, sm, g);
    TH_CHECK(g[0] == 9 && g[1] == 9, "saved mean changed on error");
    /* inference */
    TH_STATUS(cudnnBatchNormalizationForwardInference(H, M, &one, &zero, x.d, dx_, y.d, dy, pd.d, sc, bi, NULL, rv, 1e-5), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnBatchNormalizationForwardInference(H, M, &one, &zero, x.d, dx_, y.d, dy, pd.d, sc, bi, rm, rv, -1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnBatchNormalizationForwardInference(H, M, &one, &zero, x.d, dx_, y.d, dy, pbadd.d, sc, bi, rm, rv, 1e-5), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(same_bytes(&y, dy, ybefore), "y changed on error");
    /* backward */
    void *ddx = tns_buf(&y, NULL, 7), *ds = tns_buf(&pd, NULL, 5), *db = tns_buf(&pd, NULL, 5);
    TH_STATUS(cudnnBatchNormalizationBackward(H, M, &one, &zero, &one, &zero, x.d, dx_, x.d, dx_, y.d, ddx, pd.d, sc, ds, db, 1e-5, sm, NULL),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnBatchNormalizationBackward(H, M, &one, &zero, &one, &zero, x.d, dx_, x.d, dx_, y.d, ddx, pd.d, sc, ds, db, -1, NULL, NULL),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnBatchNormalizationBackward(H, M, &one, &zero, NULL, &zero, x.d, dx_, x.d, dx_, y.d, ddx, pd.d, sc, ds, db, 1e-5, NULL, NULL),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnBatchNormalizationBackward(H, M, &one, &zero, &one, &zero, x.d, dx_, yother.d, dx_, y.d, ddx, pd.d, sc, ds, db, 1e-5, NULL, NULL),
              CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(same_bytes(&y, ddx, ybefore), "dx changed on error");
    tns_get(&pd, ds, g);
    TH_CHECK(g[0] == 5 && g[2] == 5, "dscale changed on error");
    /* Ex: ops and activation and reserve */
    cudnnActivationDescriptor_t act = make_act(CUDNN_ACTIVATION_RELU, 0);
    size_t rs = 0, ws = 0;
    TH_STATUS(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(H, M, (cudnnBatchNormOps_t)3, act, x.d, &rs), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(H, M, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, NULL, x.d, &rs), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(H, M, CUDNN_BATCHNORM_OPS_BN, NULL, x.d, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(H, M, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, act, x.d, &rs));
    TH_CHECK(rs > 0, "activation needs a reserve");
    TH_STATUS(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(H, M, CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION, x.d, NULL, y.d, pd.d, act, &ws),
              CUDNN_STATUS_BAD_PARAM); /* zDesc needed */
    TH_STATUS(cudnnGetBatchNormalizationBackwardExWorkspaceSize(H, M, CUDNN_BATCHNORM_OPS_BN, x.d, y.d, x.d, NULL, yother.d, pd.d, NULL, &ws),
              CUDNN_STATUS_BAD_PARAM);
    void *res = th_alloc(H, rs);
    TH_STATUS(cudnnBatchNormalizationForwardTrainingEx(H, M, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, &one, &zero, x.d, dx_, NULL, NULL, y.d, dy, pd.d,
                                                       sc, bi, 1, rm, rv, 1e-5, sm, sv, act, NULL, 0, res, rs - 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnBatchNormalizationForwardTrainingEx(H, M, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, &one, &zero, x.d, dx_, NULL, NULL, y.d, dy, pd.d,
                                                       sc, bi, 1, rm, rv, 1e-5, sm, sv, NULL, NULL, 0, res, rs), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnBatchNormalizationForwardTrainingEx(H, M, CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION, &one, &zero, x.d, dx_, x.d, NULL, y.d, dy,
                                                       pd.d, sc, bi, 1, rm, rv, 1e-5, sm, sv, act, NULL, 0, res, rs), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnBatchNormalizationForwardTrainingEx(H, M, (cudnnBatchNormOps_t)-1, &one, &zero, x.d, dx_, NULL, NULL, y.d, dy, pd.d, sc, bi,
                                                       1, rm, rv, 1e-5, sm, sv, act, NULL, 0, res, rs), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(same_bytes(&y, dy, ybefore), "y changed on Ex error");
    TH_STATUS(cudnnBatchNormalizationBackwardEx(H, M, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, &one, &zero, &one, &zero, x.d, dx_, y.d, dy, x.d, dx_,
                                                NULL, NULL, y.d, ddx, pd.d, sc, bi, ds, db, 1e-5, NULL, NULL, act, NULL, 0, NULL, 0),
              CUDNN_STATUS_BAD_PARAM); /* reserve missing */
    TH_STATUS(cudnnBatchNormalizationBackwardEx(H, M, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, &one, &zero, &one, &zero, x.d, dx_, y.d, NULL, x.d, dx_,
                                                NULL, NULL, y.d, ddx, pd.d, sc, bi, ds, db, 1e-5, NULL, NULL, act, NULL, 0, res, rs),
              CUDNN_STATUS_BAD_PARAM); /* yData missing */
    TH_CHECK(same_bytes(&y, ddx, ybefore), "dx changed on Ex error");
    /* running stats: factor 1 replaces; NULL running and saved pairs allowed */
    TH_OK(cudnnBatchNormalizationForwardTraining(H, M, &one, &zero, x.d, dx_, y.d, dy, pd.d, sc, bi, 1.0, NULL, NULL, 0.0, NULL, NULL));
    TH_OK(cudnnBatchNormalizationForwardTraining(H, M, &one, &zero, x.d, dx_, y.d, dy, pd.d, sc, bi, 1.0, rm, rv, 1e-5, NULL, NULL));
    double *gm = dalloc(3), *gv = dalloc(3), *rmean = dalloc(3), *rvb = dalloc(3), *rvu = dalloc(3), *rinv = dalloc(3), *yy = dalloc(x.n);
    ref_norm_train(2, 3, 20, 0, hx, hp, hp, NULL, REF_ACT_NONE, 0, 1e-5, yy, NULL, rmean, rvb, rvu, rinv);
    tns_get(&pd, rm, gm);
    tns_get(&pd, rv, gv);
    for (int q = 0; q < 3; q++) rmean[q] += 10, gm[q] += 10;
    th_compare("factor 1 running mean", gm, rmean, 3, 1e-6);
    th_compare("factor 1 running var unbiased", gv, rvu, 3, 1e-6);
    free(gm), free(gv), free(rmean), free(rvb), free(rvu), free(rinv), free(yy);
    cudnnDestroyActivationDescriptor(act);
    th_free(H, res), th_free(H, dx_), th_free(H, dy), th_free(H, sc), th_free(H, bi), th_free(H, rm), th_free(H, rv), th_free(H, sm);
    th_free(H, sv), th_free(H, dxh), th_free(H, dyh), th_free(H, ddx), th_free(H, ds), th_free(H, db);
    free(ybefore), free(hx), free(hp), free(g);
    tns *all[] = {&x, &y, &pd, &pbadd, &phalf, &xh, &x3, &xi, &yother};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) cudnnDestroyTensorDescriptor(all[i]->d);
}

/* Training forward with y == x (in place): the same y, statistics and running averages as with
 * separate buffers, for packed NCHW and NHWC (the GPU's cooperative kernels read each channel's
 * first value as a shift; an in-place write must not reach it first). */
static void test_inplace(void)
{
    static const cudnnDataType_t ty[2] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF};
    for (int i = 0; i < 4; i++) {
        const cudnnDataType_t t = ty[i % 2];
        const int layout = i < 2 ? 1 : 0, dim[4] = {4, 128, 12, 10};
        const int64_t T = 4 * 128 * 12 * 10, P = 128;
        tns x, pd;
        tns_make(&x, t, 4, dim, layout);
        const int pdim[4] = {1, 128, 1, 1};
        tns_make(&pd, ptype(t), 4, pdim, 0);
        double *hx = dalloc(T), *hs = dalloc(P), *hb = dalloc(P), *r0 = dalloc(P), *r1 = dalloc(P);
        double *want = dalloc(T), *got = dalloc(T), *pw = dalloc(P), *pg = dalloc(P);
        fill_q(hx, T, -4, 4);
        for (int64_t e = 0; e < T; e++) hx[e] += 3.0; /* the shift matters: nonzero means */
        fill_q(hs, P, 0.25, 2);
        fill_q(hb, P, -2, 2);
        fill_q(r0, P, -1, 1);
        fill_q(r1, P, 0.25, 2);
        char al[8], be[8];
        scal(t, 1.0, al);
        scal(t, 0.0, be);
        void *dsc = tns_buf(&pd, hs, 0), *dbi = tns_buf(&pd, hb, 0);
        void *bufs[2][5]; /* x, y, running mean, running var, saved mean: separate, then in place */
        for (int k = 0; k < 2; k++) {
            bufs[k][0] = tns_buf(&x, hx, 0);
            bufs[k][1] = k ? bufs[k][0] : tns_buf(&x, NULL, NAN);
            bufs[k][2] = tns_buf(&pd, r0, 0), bufs[k][3] = tns_buf(&pd, r1, 0), bufs[k][4] = tns_buf(&pd, NULL, NAN);
            void *sv = tns_buf(&pd, NULL, NAN);
            TH_OK(cudnnBatchNormalizationForwardTraining(H, CUDNN_BATCHNORM_SPATIAL, al, be, x.d, bufs[k][0], x.d, bufs[k][1], pd.d, dsc, dbi,
                                                        0.25, bufs[k][2], bufs[k][3], 1e-3, bufs[k][4], sv));
            th_free(H, sv);
        }
        char w[96];
        snprintf(w, sizeof w, "in-place training y %s layout %d", th_dtype_name(t), layout);
        tns_get(&x, bufs[0][1], want);
        tns_get(&x, bufs[1][1], got);
        cmp(w, got, want, (size_t)T, t == CUDNN_DATA_FLOAT ? 1e-5 : 2e-3); /* kernels may differ in summation order only */
        for (int j = 2; j < 5; j++) {
            snprintf(w, sizeof w, "in-place training stat %d %s layout %d", j, th_dtype_name(t), layout);
            tns_get(&pd, bufs[0][j], pw);
            tns_get(&pd, bufs[1][j], pg);
            cmp(w, pg, pw, (size_t)P, 1e-5);
        }
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < 5; j++)
                if (!(k && j == 1)) th_free(H, bufs[k][j]);
        th_free(H, dsc), th_free(H, dbi);
        free(hx), free(hs), free(hb), free(r0), free(r1), free(want), free(got), free(pw), free(pg);
        cudnnDestroyTensorDescriptor(x.d), cudnnDestroyTensorDescriptor(pd.d);
    }
}

int main(void)
{
    th_seed(20261130);
    H = th_create_handle();
    test_derive();
    test_sweep();
    big = 1;
    sweep_one(CUDNN_DATA_FLOAT, 1, 4, CUDNN_BATCHNORM_SPATIAL, 2, 1);
    sweep_one(CUDNN_DATA_HALF, 2, 4, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, 0, 0);
    sweep_one(CUDNN_DATA_FLOAT, 0, 4, CUDNN_BATCHNORM_SPATIAL, 1, 1); /* packed NCHW, long rows (CUDA row mode) */
    g_same_layout = g_beta0 = 1; /* dense NCHW/NHWC, many member parts per channel on the GPU */
    sweep_one(CUDNN_DATA_FLOAT, 1, 4, CUDNN_BATCHNORM_SPATIAL, 0, 0);
    sweep_one(CUDNN_DATA_FLOAT, 0, 4, CUDNN_BATCHNORM_SPATIAL, 0, 0);
    sweep_one(CUDNN_DATA_HALF, 1, 4, CUDNN_BATCHNORM_SPATIAL, 0, 0);
    sweep_one(CUDNN_DATA_DOUBLE, 0, 5, CUDNN_BATCHNORM_SPATIAL, 0, 0);
    g_beta0 = 0; /* dense with any beta (the GPU's partial-sum training/backward path) */
    sweep_one(CUDNN_DATA_FLOAT, 1, 4, CUDNN_BATCHNORM_SPATIAL, 0, 0);
    sweep_one(CUDNN_DATA_BFLOAT16, 0, 4, CUDNN_BATCHNORM_SPATIAL, 0, 0);
    sweep_one(CUDNN_DATA_HALF, 1, 5, CUDNN_BATCHNORM_SPATIAL, 0, 0);
    big = 2; /* the GPU's dense paths without 16-byte vectors (per-element channel index) */
    sweep_one(CUDNN_DATA_FLOAT, 0, 4, CUDNN_BATCHNORM_SPATIAL, 0, 0);
    sweep_one(CUDNN_DATA_FLOAT, 1, 4, CUDNN_BATCHNORM_SPATIAL, 0, 0);
    sweep_one(CUDNN_DATA_HALF, 0, 5, CUDNN_BATCHNORM_SPATIAL, 0, 0);
    sweep_one(CUDNN_DATA_HALF, 1, 4, CUDNN_BATCHNORM_SPATIAL, 0, 0);
    g_beta0 = 1;
    sweep_one(CUDNN_DATA_DOUBLE, 1, 4, CUDNN_BATCHNORM_SPATIAL, 0, 0);
    sweep_one(CUDNN_DATA_BFLOAT16, 0, 4, CUDNN_BATCHNORM_SPATIAL, 0, 0);
    g_beta0 = 0;
    big = 5; /* NHWC, C = 128, each type, backward with and without the saved statistics, beta 0 and not */
    for (int i = 0; i < 6; i++) {
        static const cudnnDataType_t ty[3] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
        g_beta0 = i >= 3, g_saved = i % 2;
        sweep_one(ty[i % 3], 1, 4 + (i == 4), CUDNN_BATCHNORM_SPATIAL, 0, i == 2);
    }
    g_beta0 = 0, g_saved = -1;
    big = 0;
    for (int i = 0; i < 12; i++) /* small dense shapes: C == 1 and spatial size 1 included */
        sweep_one(i % 3 == 0 ? CUDNN_DATA_FLOAT : i % 3 == 1 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_DOUBLE, i % 2, 4 + (i % 4 == 3),
                  CUDNN_BATCHNORM_SPATIAL, 0, 0);
    g_same_layout = 0;
    test_nchw_paths();
    test_fd();
    test_errors();
    test_fast_paths();
    test_fast_vs_general();
    test_inplace();
    cudnnDestroy(H);
    return th_finish();
}
