/* Pooling: 2-D/N-D descriptors and output-dim queries, cudnnPoolingForward
 * and Backward for MAX, MAX_DETERMINISTIC and both AVERAGE modes, 2-D and 3-D, FLOAT/DOUBLE/
 * HALF/BFLOAT16, layouts, padding, NaN option, alpha/beta with NaN prefill, finite-difference
 * gradient checks (double), error paths. */
#include "test_ops_util.h"
#include "ops_ref.h"

static void one_case(cudnnHandle_t h, cudnnDataType_t dt, int mode, int ns, int iter)
{
    int in[3], win[3], pad[3], str[3], out[3], xd[5], yd[5];
    for (int i = 0; i < ns; i++) {
        win[i] = th_randint(1, 3);
        pad[i] = th_randint(0, win[i] - 1);
        str[i] = th_randint(1, 2);
        in[i] = th_randint(win[i], ns == 3 ? 4 : 6);
    }
    ref_pool_out_dims(ns, in, win, pad, str, out);
    xd[0] = yd[0] = th_randint(1, 2);
    xd[1] = yd[1] = th_randint(1, 3);
    for (int i = 0; i < ns; i++) { xd[i + 2] = in[i]; yd[i + 2] = out[i]; }
    int nd = ns + 2, prop = iter % 2;
    static const double ab[4][2] = {{1, 0}, {0.5, 0}, {2, 1}, {-1.5, 0.5}};
    double alpha = ab[iter % 4][0], beta = ab[iter % 4][1];
    cudnnPoolingDescriptor_t pd;
    TH_OK(cudnnCreatePoolingDescriptor(&pd));
    cudnnNanPropagation_t np = prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN;
    if (ns == 2 && iter % 3 == 0) TH_OK(cudnnSetPooling2dDescriptor(pd, (cudnnPoolingMode_t)mode, np, win[0], win[1], pad[0], pad[1], str[0], str[1]));
    else TH_OK(cudnnSetPoolingNdDescriptor(pd, (cudnnPoolingMode_t)mode, np, ns, win, pad, str));
    int qd[5];
    TH_STATUS(cudnnGetPoolingNdForwardOutputDim(pd, NULL, nd, qd), CUDNN_STATUS_BAD_PARAM);
    tt X, Y, DY, DX;
    int lx = th_randint(0, 3), ly = th_randint(0, 3);
    tt_make(h, &X, dt, nd, xd, lx);
    tt_make(h, &Y, dt, nd, yd, ly);
    tt_make(h, &DY, dt, nd, yd, th_randint(0, 3));
    tt_make(h, &DX, dt, nd, xd, th_randint(0, 3));
    TH_OK(cudnnGetPoolingNdForwardOutputDim(pd, X.d, nd, qd));
    int same = 1;
    for (int i = 0; i < nd; i++) same &= qd[i] == yd[i];
    TH_CHECK(same, "cudnnGetPoolingNdForwardOutputDim");
    int64_t planes = (int64_t)xd[0] * xd[1];
    double *x = dalloc(X.n), *y0 = dalloc(Y.n), *got = dalloc(Y.n), *want = dalloc(Y.n), *dy = dalloc(Y.n), *dx0 = dalloc(X.n),
           *gdx = dalloc(X.n), *wdx = dalloc(X.n);
    fill_nz(x, X.n, -8, 8);
    int is_max = mode == RP_MAX || mode == RP_MAX_DET;
    if (is_max && X.n > 3) x[X.n / 3] = NAN;
    prior_fill(y0, Y.n, beta);
    tt_fill(h, &X, x, 0);
    tt_fill(h, &Y, y0, 3);
    scal sa = mkscal(alpha, dt), sb = mkscal(beta, dt);
    TH_OK(cudnnPoolingForward(h, pd, &sa, X.d, X.dev, &sb, Y.d, Y.dev));
    tt_read(h, &Y, got);
    ref_pool_fwd(mode, prop, ns, planes, in, out, win, pad, str, x, want);
    for (int64_t i = 0; i < Y.n; i++) want[i] = alpha * want[i] + (beta != 0 ? beta * y0[i] : 0);
    char what[200];
    snprintf(what, sizeof what, "PoolingForward mode=%d %dD %s %s->%s win=%d pad=%d str=%d alpha=%g beta=%g nan=%d", mode, ns,
             th_dtype_name(dt), ol_name[lx], ol_name[ly], win[0], pad[0], str[0], alpha, beta, prop);
    th_compare(what, got, want, (size_t)Y.n, th_tolerance("pool", dt));
    /* backward (NaN-free x) */
    if (is_max && X.n > 3) x[X.n / 3] = 1;
    tt_fill(h, &X, x, 0);
    ref_pool_fwd(mode, 0, ns, planes, in, out, win, pad, str, x, want);
    tt_fill(h, &Y, want, 3);
    fill_nz(dy, Y.n, -4, 4);
    prior_fill(dx0, X.n, beta);
    tt_fill(h, &DY, dy, 0);
    tt_fill(h, &DX, dx0, 2);
    TH_OK(cudnnPoolingBackward(h, pd, &sa, Y.d, Y.dev, DY.d, DY.dev, X.d, X.dev, &sb, DX.d, DX.dev));
    tt_read(h, &DX, gdx);
    ref_pool_bwd(mode, ns, planes, in, out, win, pad, str, x, dy, wdx);
    int nz = 0;
    for (int64_t i = 0; i < X.n; i++) {
        wdx[i] = alpha * wdx[i] + (beta != 0 ? beta * dx0[i] : 0);
        nz |= wdx[i] != 0;
    }
    snprintf(what, sizeof what, "PoolingBackward mode=%d %dD %s alpha=%g beta=%g", mode, ns, th_dtype_name(dt), alpha, beta);
    if (nz) th_compare(what, gdx, wdx, (size_t)X.n, 2 * th_tolerance("pool", dt));
    free(x); free(y0); free(got); free(want); free(dy); free(dx0); free(gdx); free(wdx);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
    cudnnDestroyPoolingDescriptor(pd);
}

typedef struct { int mode, ns; int64_t planes, ny; const int *in, *out, *win, *pad, *str; const double *dy; double *tmp; } pl_ctx;
static double pool_loss(void *c, const double *x)
{
    pl_ctx *k = c;
    ref_pool_fwd(k->mode, 0, k->ns, k->planes, k->in, k->out, k->win, k->pad, k->str, x, k->tmp);
    double s = 0;
    for (int64_t i = 0; i < k->ny; i++) s += k->dy[i] * k->tmp[i];
    return s;
}

static void grad_check(cudnnHandle_t h, int mode, int ns)
{
    int in[3] = {4, 5, 3}, win[3] = {2, 3, 2}, pad[3] = {1, 1, 0}, str[3] = {2, 1, 1}, out[3];
    ref_pool_out_dims(ns, in, win, pad, str, out);
    int xd[5] = {2, 2}, yd[5] = {2, 2};
    for (int i = 0; i < ns; i++) { xd[i + 2] = in[i]; yd[i + 2] = out[i]; }
    cudnnPoolingDescriptor_t pd;
    TH_OK(cudnnCreatePoolingDescriptor(&pd));
    TH_OK(cudnnSetPoolingNdDescriptor(pd, (cudnnPoolingMode_t)mode, CUDNN_NOT_PROPAGATE_NAN, ns, win, pad, str));
    tt X, Y, DY, DX;
    tt_make(h, &X, CUDNN_DATA_DOUBLE, ns + 2, xd, OL_NHWC);
    tt_make(h, &Y, CUDNN_DATA_DOUBLE, ns + 2, yd, OL_NCHW);
    tt_make(h, &DY, CUDNN_DATA_DOUBLE, ns + 2, yd, OL_PADDED);
    tt_make(h, &DX, CUDNN_DATA_DOUBLE, ns + 2, xd, OL_PADDED_NHWC);
    double *x = dalloc(X.n), *y = dalloc(Y.n), *dy = dalloc(Y.n), *dx = dalloc(X.n), *fd = dalloc(X.n);
    /* distinct values (well separated) so max has no ties within eps */
    for (int64_t i = 0; i < X.n; i++) x[i] = (double)((i * 37) % X.n) * 0.1 - 1.0;
    th_fill_uniform(dy, (size_t)Y.n, -1, 1);
    for (int64_t i = 0; i < Y.n; i++) y[i] = NAN;
    double one = 1, zero = 0;
    tt_fill(h, &X, x, 0);
    tt_fill(h, &Y, y, 0);
    tt_fill(h, &DY, dy, 0);
    tt_fill(h, &DX, x, 0);
    TH_OK(cudnnPoolingForward(h, pd, &one, X.d, X.dev, &zero, Y.d, Y.dev));
    TH_OK(cudnnPoolingBackward(h, pd, &one, Y.d, Y.dev, DY.d, DY.dev, X.d, X.dev, &zero, DX.d, DX.dev));
    tt_read(h, &DX, dx);
    int64_t planes = 4;
    pl_ctx k = {mode, ns, planes, Y.n, in, out, win, pad, str, dy, dalloc(Y.n)};
    fd_grad(X.n, x, pool_loss, &k, 1e-4, fd);
    char what[80];
    snprintf(what, sizeof what, "PoolingBackward mode=%d %dD vs finite differences", mode, ns);
    th_compare(what, dx, fd, (size_t)X.n, 1e-8);
    free(k.tmp); free(x); free(y); free(dy); free(dx); free(fd);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
    cudnnDestroyPoolingDescriptor(pd);
}

static void desc_and_errors(cudnnHandle_t h)
{
    cudnnPoolingDescriptor_t pd;
    TH_OK(cudnnCreatePoolingDescriptor(&pd));
    cudnnPoolingMode_t m; cudnnNanPropagation_t np;
    int wh, ww, vp, hp, vs, hs, nb, wa[3], pa[3], sa[3];
    TH_STATUS(cudnnGetPooling2dDescriptor(pd, &m, &np, &wh, &ww, &vp, &hp, &vs, &hs), CUDNN_STATUS_BAD_PARAM); /* unset */
    TH_STATUS(cudnnSetPooling2dDescriptor(pd, (cudnnPoolingMode_t)4, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 1, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, (cudnnNanPropagation_t)3, 2, 2, 0, 0, 1, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 0, 2, 0, 0, 1, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, -1, 0, 1, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 1, 0), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, CUDNN_PROPAGATE_NAN, 3, 2, 1, 0, 2, 1));
    TH_OK(cudnnGetPooling2dDescriptor(pd, &m, &np, &wh, &ww, &vp, &hp, &vs, &hs));
    TH_CHECK(m == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING && np == CUDNN_PROPAGATE_NAN && wh == 3 && ww == 2 && vp == 1 && hp == 0 &&
                 vs == 2 && hs == 1, "2-D pooling descriptor round trip");
    TH_OK(cudnnGetPoolingNdDescriptor(pd, 3, &m, &np, &nb, wa, pa, sa));
    TH_CHECK(nb == 2 && wa[0] == 3 && wa[1] == 2 && pa[0] == 1 && sa[0] == 2, "2-D descriptor read as N-D");
    int xd[4] = {2, 3, 7, 5}, n, c, hh, w;
    tt X, Y, Yb, X5, Yh;
    tt_make(h, &X, CUDNN_DATA_FLOAT, 4, xd, OL_NCHW);
    TH_OK(cudnnGetPooling2dForwardOutputDim(pd, X.d, &n, &c, &hh, &w));
    TH_CHECK(n == 2 && c == 3 && hh == 1 + (7 + 2 - 3) / 2 && w == 1 + (5 - 2) / 1, "cudnnGetPooling2dForwardOutputDim");
    TH_STATUS(cudnnGetPoolingNdForwardOutputDim(pd, X.d, 5, wa), CUDNN_STATUS_BAD_PARAM);
    int yd[4] = {2, 3, hh, w}, ybad[4] = {2, 3, hh + 1, w}, x5[5] = {1, 2, 3, 4, 5};
    tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, yd, OL_NHWC);
    tt_make(h, &Yb, CUDNN_DATA_FLOAT, 4, ybad, OL_NCHW);
    tt_make(h, &Yh, CUDNN_DATA_HALF, 4, yd, OL_NCHW);
    tt_make(h, &X5, CUDNN_DATA_FLOAT, 5, x5, OL_NCHW);
    double *v = dalloc(Yb.n);
    fill_nz(v, Yb.n, -3, 3);
    tt_fill(h, &Y, v, 0);
    float one = 1, zero = 0;
    TH_STATUS(cudnnPoolingForward(h, pd, &one, X.d, X.dev, &zero, Yb.d, Yb.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnPoolingForward(h, pd, &one, X.d, X.dev, &zero, Yh.d, Yh.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnPoolingForward(h, pd, &one, X5.d, X5.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM); /* 3-D tensor, 2-D pooling */
    TH_STATUS(cudnnPoolingForward(h, pd, &one, X.d, NULL, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnPoolingForward(h, NULL, &one, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnPoolingBackward(h, pd, &one, Y.d, Y.dev, Yb.d, Yb.dev, X.d, X.dev, &zero, X.d, X.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnPoolingBackward(h, pd, &one, Y.d, Y.dev, Y.d, Y.dev, X.d, X.dev, &zero, X.d, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(tt_unchanged(h, &Y), "y changed by a failed pooling call");
    int win3[3] = {2, 2, 2}, pad3[3] = {0, 0, 0}, str3[3] = {1, 1, 1};
    TH_STATUS(cudnnSetPoolingNdDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 7, win3, pad3, str3), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetPoolingNdDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, NULL, pad3, str3), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetPoolingNdDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, win3, pad3, str3));
    TH_STATUS(cudnnGetPooling2dDescriptor(pd, &m, &np, &wh, &ww, &vp, &hp, &vs, &hs), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetPooling2dForwardOutputDim(pd, X5.d, &n, &c, &hh, &w), CUDNN_STATUS_BAD_PARAM);
    int o5[5];
    TH_OK(cudnnGetPoolingNdForwardOutputDim(pd, X5.d, 5, o5));
    TH_CHECK(o5[0] == 1 && o5[1] == 2 && o5[2] == 2 && o5[3] == 3 && o5[4] == 4, "3-D pooling output dims");
    free(v);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &Yb); tt_free(h, &Yh); tt_free(h, &X5);
    TH_OK(cudnnDestroyPoolingDescriptor(pd));
    TH_OK(cudnnDestroyPoolingDescriptor(NULL));
}

/* large enough for the parallel paths: 3x3 stride-2 max pooling of 4x16x40x40 */
static void big_case(cudnnHandle_t h)
{
    int in[2] = {40, 40}, win[2] = {3, 3}, pad[2] = {1, 1}, str[2] = {2, 2}, out[2];
    ref_pool_out_dims(2, in, win, pad, str, out);
    int xd[4] = {4, 16, 40, 40}, yd[4] = {4, 16, out[0], out[1]};
    cudnnPoolingDescriptor_t pd;
    TH_OK(cudnnCreatePoolingDescriptor(&pd));
    TH_OK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, 3, 1, 1, 2, 2));
    tt X, Y, DX;
    tt_make(h, &X, CUDNN_DATA_FLOAT, 4, xd, OL_NHWC);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, yd, OL_NCHW);
    tt_make(h, &DX, CUDNN_DATA_FLOAT, 4, xd, OL_NCHW);
    double *x = dalloc(X.n), *y = dalloc(Y.n), *want = dalloc(Y.n), *dx = dalloc(X.n), *wdx = dalloc(X.n);
    fill_nz(x, X.n, -50, 50);
    tt_fill(h, &X, x, 0);
    for (int64_t i = 0; i < Y.n; i++) y[i] = NAN;
    tt_fill(h, &Y, y, 0);
    float one = 1, zero = 0;
    TH_OK(cudnnPoolingForward(h, pd, &one, X.d, X.dev, &zero, Y.d, Y.dev));
    tt_read(h, &Y, y);
    ref_pool_fwd(RP_MAX, 0, 2, 64, in, out, win, pad, str, x, want);
    th_compare("PoolingForward MAX large", y, want, (size_t)Y.n, 0);
    TH_OK(cudnnPoolingBackward(h, pd, &one, Y.d, Y.dev, Y.d, Y.dev, X.d, X.dev, &zero, DX.d, DX.dev));
    tt_read(h, &DX, dx);
    ref_pool_bwd(RP_MAX, 2, 64, in, out, win, pad, str, x, want, wdx);
    th_compare("PoolingBackward MAX large", dx, wdx, (size_t)X.n, 0);
    /* determinism: a second run gives the same bits */
    double *dx2 = dalloc(X.n);
    TH_OK(cudnnPoolingBackward(h, pd, &one, Y.d, Y.dev, Y.d, Y.dev, X.d, X.dev, &zero, DX.d, DX.dev));
    tt_read(h, &DX, dx2);
    TH_CHECK(memcmp(dx, dx2, sizeof(double) * (size_t)X.n) == 0, "PoolingBackward MAX large: two runs differ");
    free(dx2);
    free(x); free(y); free(want); free(dx); free(wdx);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DX);
    cudnnDestroyPoolingDescriptor(pd);
}

/* Max backward with overlapping windows and more dy elements than the GPU's 4 MiB handle scratch
 * holds argmax bytes for: the map is built and consumed in chunks of images. Integer x (ties). */
static void chunk_case(cudnnHandle_t h)
{
    int in[2] = {1500, 1450}, win[2] = {3, 3}, pad[2] = {1, 1}, str[2] = {1, 1}, out[2];
    ref_pool_out_dims(2, in, win, pad, str, out);
    int xd[4] = {2, 1, in[0], in[1]}, yd[4] = {2, 1, out[0], out[1]};
    cudnnPoolingDescriptor_t pd;
    TH_OK(cudnnCreatePoolingDescriptor(&pd));
    TH_OK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, 3, 1, 1, 1, 1));
    tt X, DY, DX;
    tt_make(h, &X, CUDNN_DATA_FLOAT, 4, xd, OL_NCHW);
    tt_make(h, &DY, CUDNN_DATA_FLOAT, 4, yd, OL_NCHW);
    tt_make(h, &DX, CUDNN_DATA_FLOAT, 4, xd, OL_NCHW);
    double *x = dalloc(X.n), *dy = dalloc(DY.n), *dx = dalloc(X.n), *wdx = dalloc(X.n);
    fill_nz(x, X.n, -20, 20);
    fill_nz(dy, DY.n, -4, 4);
    tt_fill(h, &X, x, 0);
    tt_fill(h, &DY, dy, 0);
    float one = 1, zero = 0;
    TH_OK(cudnnPoolingBackward(h, pd, &one, DY.d, DY.dev, DY.d, DY.dev, X.d, X.dev, &zero, DX.d, DX.dev));
    tt_read(h, &DX, dx);
    ref_pool_bwd(RP_MAX, 2, 2, in, out, win, pad, str, x, dy, wdx);
    th_compare("PoolingBackward MAX chunked argmax map", dx, wdx, (size_t)X.n, 0);
    free(x); free(dy); free(dx); free(wdx);
    tt_free(h, &X); tt_free(h, &DY); tt_free(h, &DX);
    cudnnDestroyPoolingDescriptor(pd);
}

/* Every tensor packed NHWC with C a multiple of 8 (the GPU's channel-vector path) or C odd,
 * windows 2x2, 3x3 (compile-time paths) and 3x2; small-integer x so windows have ties (the first
 * maximum in row-major window order must win, forward and backward); one NaN in x for the max
 * forward (propagated with PROPAGATE_NAN, skipped without). */
static int g_lay = OL_NHWC; /* nhwc_case's layout (OL_NCHW: the GPU's packed NCHW paths) */
static int g_big; /* nhwc_case: planes of >= 512 pixels (the GPU's NCHW plane-in-shared-memory kernels), pad = it % 2 in both
                   * dims and beta = 0.5 when it & 2 (it = 1: 3x3 stride 2 pad 1 beta 0; it = 7: the same with beta 0.5) */
static int g_k3; /* nhwc_case: 3x3 / stride 2 / pad 1 with an even W (beta = 0.5 when it & 2) */
static int g_k2; /* nhwc_case: 2x2 / stride 2 / pad 0 over 8x12 and 10x16 (the GPU's NCHW forward and max backward with two
                  * windows per thread: H, W even, W % 4 == 0), 9x12 (odd H) and 8x14 (W % 4 == 2), which keep one */
static void nhwc_case(cudnnHandle_t h, cudnnDataType_t dt, int mode, int it)
{
    static const int wins[3][2] = {{2, 2}, {3, 3}, {3, 2}};
    const int *wn = wins[it % 3];
    int win[2] = {wn[0], wn[1]}, pad[2] = {it % 2, (it / 2) % 2}, str[2] = {2, 1 + it % 2}, in[2] = {9, 7}, out[2];
    if (g_lay == OL_NCHW && (it / 3) % 2) in[1] = 8; /* W % 4 == 0: the GPU's 4-wide NCHW average backward */
    if (g_big) in[0] = 24, in[1] = 23 + (it / 3) % 2, pad[0] = pad[1] = it % 2;
    if (g_k3) { /* 3x3 stride 2 pad 1, even W: the GPU's paired NCHW kernels (odd H; outputs per row below and above a warp) */
        win[0] = win[1] = 3, pad[0] = pad[1] = 1, str[0] = str[1] = 2;
        /* W % 4 == 2: one output per thread; W % 4 == 0: two; it = 4 (channels-last only): odd H and W */
        static const int hw[5][2] = {{16, 82}, {25, 40}, {16, 82}, {9, 136}, {13, 27}};
        in[0] = hw[it % 5][0], in[1] = hw[it % 5][1];
    }
    if (g_k2) {
        static const int hw[4][2] = {{8, 12}, {10, 16}, {9, 12}, {8, 14}};
        win[0] = win[1] = 2, pad[0] = pad[1] = 0, str[0] = str[1] = 2, in[0] = hw[it % 4][0], in[1] = hw[it % 4][1];
    }
    if (pad[0] >= win[0]) pad[0] = win[0] - 1;
    if (pad[1] >= win[1]) pad[1] = win[1] - 1;
    ref_pool_out_dims(2, in, win, pad, str, out);
    const int C = it % 4 == 3 ? 5 : 16;
    int xd[4] = {2, C, in[0], in[1]}, yd[4] = {2, C, out[0], out[1]};
    const int prop = it % 2, is_max = mode == RP_MAX || mode == RP_MAX_DET;
    double alpha = it % 2 ? 0.5 : 1.0, beta = (g_big || g_k3 ? (it & 2) != 0 : it % 3 == 1) ? 0.5 : 0.0;
    cudnnPoolingDescriptor_t pd;
    TH_OK(cudnnCreatePoolingDescriptor(&pd));
    TH_OK(cudnnSetPooling2dDescriptor(pd, (cudnnPoolingMode_t)mode, prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN, win[0], win[1],
                                      pad[0], pad[1], str[0], str[1]));
    tt X, Y, DY, DX;
    tt_make(h, &X, dt, 4, xd, g_lay);
    tt_make(h, &Y, dt, 4, yd, g_lay);
    tt_make(h, &DY, dt, 4, yd, g_lay);
    tt_make(h, &DX, dt, 4, xd, g_lay);
    const int64_t planes = 2LL * C;
    double *x = dalloc(X.n), *y0 = dalloc(Y.n), *got = dalloc(Y.n), *want = dalloc(Y.n), *dy = dalloc(Y.n), *dx0 = dalloc(X.n),
           *gdx = dalloc(X.n), *wdx = dalloc(X.n);
    fill_nz(x, X.n, -2, 2); /* many ties */
    if (is_max) x[X.n / 2] = NAN; /* propagated, or skipped without PROPAGATE_NAN */
    prior_fill(y0, Y.n, beta);
    tt_fill(h, &X, x, 0);
    tt_fill(h, &Y, y0, 3);
    scal sa = mkscal(alpha, dt), sb = mkscal(beta, dt);
    TH_OK(cudnnPoolingForward(h, pd, &sa, X.d, X.dev, &sb, Y.d, Y.dev));
    tt_read(h, &Y, got);
    ref_pool_fwd(mode, prop, 2, planes, in, out, win, pad, str, x, want);
    for (int64_t i = 0; i < Y.n; i++) want[i] = alpha * want[i] + (beta != 0 ? beta * y0[i] : 0);
    char what[200];
    snprintf(what, sizeof what, "PoolingForward layout %d mode=%d %s C=%d win=%dx%d pad=%d,%d str=%d,%d nan=%d", g_lay, mode, th_dtype_name(dt), C,
             win[0], win[1], pad[0], pad[1], str[0], str[1], prop);
    th_compare(what, got, want, (size_t)Y.n, th_tolerance("pool", dt));
    if (is_max) x[X.n / 2] = 1;
    tt_fill(h, &X, x, 0);
    ref_pool_fwd(mode, 0, 2, planes, in, out, win, pad, str, x, want);
    tt_fill(h, &Y, want, 3);
    fill_nz(dy, Y.n, -4, 4);
    prior_fill(dx0, X.n, beta);
    tt_fill(h, &DY, dy, 0);
    tt_fill(h, &DX, dx0, 2);
    TH_OK(cudnnPoolingBackward(h, pd, &sa, Y.d, Y.dev, DY.d, DY.dev, X.d, X.dev, &sb, DX.d, DX.dev));
    tt_read(h, &DX, gdx);
    ref_pool_bwd(mode, 2, planes, in, out, win, pad, str, x, dy, wdx);
    for (int64_t i = 0; i < X.n; i++) wdx[i] = alpha * wdx[i] + (beta != 0 ? beta * dx0[i] : 0);
    snprintf(what, sizeof what, "PoolingBackward layout %d mode=%d %s C=%d win=%dx%d pad=%d,%d str=%d,%d", g_lay, mode, th_dtype_name(dt), C, win[0],
             win[1], pad[0], pad[1], str[0], str[1]);
    th_compare(what, gdx, wdx, (size_t)X.n, 2 * th_tolerance("pool", dt));
    free(x); free(y0); free(got); free(want); free(dy); free(dx0); free(gdx); free(wdx);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
    cudnnDestroyPoolingDescriptor(pd);
}

/* FLOAT max pooling over special values, C = 70 (more channels than one channel block of the CPU's
 * channels-last loops, forward and backward): -inf, +inf and NaN scattered, one plane all NaN and one
 * all -inf. Forward under both NaN options, compared exactly (a max is exact); backward with the NaNs
 * made -inf (the reference routes dy to the first maximum, -inf windows included). */
static void specials_case(cudnnHandle_t h, int lay, int prop, int cfg)
{
    /* cfg 0: overlapping rows; 1, 2: windows that do not overlap (the CPU's direct backward), 2 with gaps and padding */
    static const int cf[3][8] = {{2, 2, 1, 0, 1, 2, 5, 6}, {2, 2, 0, 0, 2, 2, 6, 9}, {2, 3, 1, 1, 3, 4, 7, 13}};
    const int *q = cf[cfg];
    int win[2] = {q[0], q[1]}, pad[2] = {q[2], q[3]}, str[2] = {q[4], q[5]}, in[2] = {q[6], q[7]}, out[2];
    ref_pool_out_dims(2, in, win, pad, str, out);
    const int C = 70;
    int xd[4] = {1, C, in[0], in[1]}, yd[4] = {1, C, out[0], out[1]};
    cudnnPoolingDescriptor_t pd;
    TH_OK(cudnnCreatePoolingDescriptor(&pd));
    TH_OK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN, win[0], win[1], pad[0], pad[1],
                                      str[0], str[1]));
    tt X, Y, DY, DX;
    tt_make(h, &X, CUDNN_DATA_FLOAT, 4, xd, lay);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, yd, lay);
    tt_make(h, &DY, CUDNN_DATA_FLOAT, 4, yd, lay);
    tt_make(h, &DX, CUDNN_DATA_FLOAT, 4, xd, lay);
    double *x = dalloc(X.n), *got = dalloc(Y.n), *want = dalloc(Y.n), *dy = dalloc(Y.n), *gdx = dalloc(X.n), *wdx = dalloc(X.n);
    fill_nz(x, X.n, -2, 2);
    const int64_t plane = (int64_t)in[0] * in[1];
    for (int64_t i = 0; i < X.n; i++) {
        const int64_t c = i / plane;
        x[i] = c == 3 ? NAN : c == 4 ? -INFINITY : i % 7 == 0 ? -INFINITY : i % 11 == 3 ? INFINITY : i % 13 == 5 ? NAN : x[i];
    }
    tt_fill(h, &X, x, 0);
    float one = 1, zero = 0;
    TH_OK(cudnnPoolingForward(h, pd, &one, X.d, X.dev, &zero, Y.d, Y.dev));
    tt_read(h, &Y, got);
    ref_pool_fwd(RP_MAX, prop, 2, C, in, out, win, pad, str, x, want);
    int64_t bad = -1;
    for (int64_t i = 0; i < Y.n && bad < 0; i++)
        if (!(got[i] == want[i] || (isnan(got[i]) && isnan(want[i])))) bad = i;
    TH_CHECK(bad < 0, "PoolingForward MAX over -inf/+inf/NaN, layout %d prop %d config %d: index %lld got %g want %g", lay, prop, cfg, (long long)bad,
             bad >= 0 ? got[bad] : 0.0, bad >= 0 ? want[bad] : 0.0);
    for (int64_t i = 0; i < X.n; i++) x[i] = isnan(x[i]) ? -INFINITY : x[i];
    tt_fill(h, &X, x, 0);
    ref_pool_fwd(RP_MAX, 0, 2, C, in, out, win, pad, str, x, want);
    tt_fill(h, &Y, want, 0);
    fill_nz(dy, Y.n, -4, 4);
    tt_fill(h, &DY, dy, 0);
    TH_OK(cudnnPoolingBackward(h, pd, &one, Y.d, Y.dev, DY.d, DY.dev, X.d, X.dev, &zero, DX.d, DX.dev));
    tt_read(h, &DX, gdx);
    ref_pool_bwd(RP_MAX, 2, C, in, out, win, pad, str, x, dy, wdx);
    char what[120];
    snprintf(what, sizeof what, "PoolingBackward MAX over -inf/+inf, C = 70, layout %d, config %d", lay, cfg);
    th_compare(what, gdx, wdx, (size_t)X.n, 2 * th_tolerance("pool", CUDNN_DATA_FLOAT));
    free(x); free(got); free(want); free(dy); free(gdx); free(wdx);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
    cudnnDestroyPoolingDescriptor(pd);
}

/* HALF / BFLOAT16 max forward, 3x3 windows with stride 2, channels-last with C % 8 == 0 (the GPU folds
 * those in packed 16-bit pairs): NaN, -inf and +inf planes and sprinkles, both NaN options, alpha 1 / beta 0
 * (stored as folded) and alpha 0.5 / beta 0.5; exact comparison, NaN matching NaN. cfg: odd sizes with
 * padding 1, even sizes without padding, padding 2. */
static void h2_case(cudnnHandle_t h, cudnnDataType_t dt, int prop, int cfg)
{
    static const int cf[3][3] = {{1, 9, 11}, {0, 10, 8}, {2, 7, 6}}; /* pad, H, W */
    const int C = cfg == 1 ? 32 : 24, N = 2, pad = cf[cfg][0];
    int win[2] = {3, 3}, pd2[2] = {pad, pad}, str[2] = {2, 2}, in[2] = {cf[cfg][1], cf[cfg][2]}, out[2];
    ref_pool_out_dims(2, in, win, pd2, str, out);
    int xd[4] = {N, C, in[0], in[1]}, yd[4] = {N, C, out[0], out[1]};
    cudnnPoolingDescriptor_t pd;
    TH_OK(cudnnCreatePoolingDescriptor(&pd));
    TH_OK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN, 3, 3, pad, pad, 2, 2));
    tt X, Y;
    tt_make(h, &X, dt, 4, xd, OL_NHWC);
    tt_make(h, &Y, dt, 4, yd, OL_NHWC);
    double *x = dalloc(X.n), *got = dalloc(Y.n), *want = dalloc(Y.n), *y0 = dalloc(Y.n);
    fill_nz(x, X.n, -8, 8);
    const int64_t plane = (int64_t)in[0] * in[1];
    for (int64_t i = 0; i < X.n; i++) {
        const int64_t c = i / plane % C;
        x[i] = c == 3 ? NAN : c == 4 ? -INFINITY : c == 5 ? (i % 2 ? INFINITY : -INFINITY)
             : i % 7 == 0 ? -INFINITY : i % 11 == 3 ? INFINITY : i % 13 == 5 ? NAN : x[i];
    }
    tt_fill(h, &X, x, 0);
    for (int ab = 0; ab < 2; ab++) {
        const double alpha = ab ? 0.5 : 1.0, beta = ab ? 0.5 : 0.0;
        prior_fill_t(y0, Y.n, beta, dt);
        tt_fill(h, &Y, y0, 3);
        scal sa = mkscal(alpha, dt), sb = mkscal(beta, dt);
        TH_OK(cudnnPoolingForward(h, pd, &sa, X.d, X.dev, &sb, Y.d, Y.dev));
        tt_read(h, &Y, got);
        ref_pool_fwd(RP_MAX, prop, 2, N * C, in, out, win, pd2, str, x, want);
        int64_t bad = -1;
        for (int64_t i = 0; i < Y.n && bad < 0; i++) {
            const double w = alpha * want[i] + (beta != 0 ? beta * y0[i] : 0);
            if (!(got[i] == w || (isnan(got[i]) && isnan(w)))) bad = i, want[i] = w;
        }
        TH_CHECK(bad < 0, "PoolingForward MAX 3x3/2 pad %d NHWC %s C=%d prop %d alpha %g beta %g: index %lld got %g want %g", pad, th_dtype_name(dt),
                 C, prop, alpha, beta, (long long)bad, bad >= 0 ? got[bad] : 0.0, bad >= 0 ? want[bad] : 0.0);
    }
    free(x); free(got); free(want); free(y0);
    tt_free(h, &X); tt_free(h, &Y);
    cudnnDestroyPoolingDescriptor(pd);
}

/* FLOAT forward and backward over windows that do not overlap (the CPU's direct backward): 2x2 / 2 over rows
 * longer than its 2048-output blocks (NCHW) and 70 channels (two channel blocks, 32-output blocks: NHWC), 3x2 /
 * 4x3 with padding (gap rows and columns, a tail past the last window), 1x1 / 2, 3-D 2x2x2 / 2, and padding as
 * wide as the window (windows wholly in padding give 0); every mode, the four layouts the fast path takes,
 * integer data (ties: dy goes to the first maximum), beta 0 over NaN and beta 0.5 */
static void direct_case(cudnnHandle_t h, int c)
{
    /* ns, then per dim (D, H, W; a 2-D case leaves D out) window, pad, stride, input size */
    static const int cf[6][13] = {{2, 2, 0, 2, 3, 2, 0, 2, 4203}, {2, 3, 1, 4, 11, 2, 0, 3, 141}, {2, 1, 0, 2, 5, 1, 0, 2, 9},
                                  {3, 2, 0, 2, 5, 2, 0, 2, 4, 2, 0, 2, 6}, {2, 2, 1, 2, 6, 2, 1, 2, 7}, {2, 1, 1, 1, 4, 2, 2, 3, 7}};
    static const int modes[3] = {RP_MAX, RP_AVG_INCL, RP_AVG_EXCL};
    static const int lays[4] = {OL_NCHW, OL_NHWC, OL_GAPS, OL_GAPS_NHWC};
    const int *q = cf[c % 6], ns = q[0], mode = modes[c / 24 % 3], lay = lays[c / 6 % 4];
    int win[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, str[3] = {1, 1, 1}, in[3] = {1, 1, 1}, out[3];
    for (int i = 0; i < ns; i++) win[i] = q[1 + 4 * i], pad[i] = q[2 + 4 * i], str[i] = q[3 + 4 * i], in[i] = q[4 + 4 * i];
    ref_pool_out_dims(ns, in, win, pad, str, out);
    const int C = (lay == OL_NHWC || lay == OL_GAPS_NHWC) && in[ns - 1] < 1000 ? 70 : 3, nd = ns + 2;
    int xd[5] = {2, C}, yd[5] = {2, C};
    for (int i = 0; i < ns; i++) xd[2 + i] = in[i], yd[2 + i] = out[i];
    const double alpha = c / 7 % 2 ? 2.0 : 1.0, beta = c / 3 % 2 ? 0.5 : 0.0;
    cudnnPoolingDescriptor_t pd;
    TH_OK(cudnnCreatePoolingDescriptor(&pd));
    TH_OK(cudnnSetPoolingNdDescriptor(pd, (cudnnPoolingMode_t)mode, CUDNN_NOT_PROPAGATE_NAN, ns, win, pad, str));
    tt X, Y, DY, DX;
    tt_make(h, &X, CUDNN_DATA_FLOAT, nd, xd, lay);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, nd, yd, lay);
    /* dy in the other layout in every fifth case (a strided row under NCHW x and dx) */
    tt_make(h, &DY, CUDNN_DATA_FLOAT, nd, yd, c % 5 == 0 ? (lay == OL_NCHW || lay == OL_GAPS ? OL_NHWC : OL_NCHW) : lay);
    tt_make(h, &DX, CUDNN_DATA_FLOAT, nd, xd, lay);
    double *x = dalloc(X.n), *y = dalloc(Y.n), *dy = dalloc(Y.n), *dx0 = dalloc(X.n), *gdx = dalloc(X.n), *wdx = dalloc(X.n), *y0 = dalloc(Y.n),
           *gy = dalloc(Y.n);
    fill_nz(x, X.n, -3, 3);
    fill_nz(dy, Y.n, -4, 4);
    prior_fill(dx0, X.n, beta);
    prior_fill(y0, Y.n, beta);
    tt_fill(h, &X, x, 0);
    tt_fill(h, &Y, y0, 0);
    scal sa = mkscal(alpha, CUDNN_DATA_FLOAT), sb = mkscal(beta, CUDNN_DATA_FLOAT);
    char what[200];
    TH_OK(cudnnPoolingForward(h, pd, &sa, X.d, X.dev, &sb, Y.d, Y.dev));
    tt_read(h, &Y, gy);
    ref_pool_fwd(mode, 0, ns, 2LL * C, in, out, win, pad, str, x, y);
    for (int64_t i = 0; i < Y.n; i++) y0[i] = alpha * y[i] + (beta != 0 ? beta * y0[i] : 0);
    snprintf(what, sizeof what, "PoolingForward (no overlap) mode=%d %dD %s C=%d win=%d,%d pad=%d,%d str=%d,%d in=%d,%d alpha=%g beta=%g", mode, ns,
             ol_name[lay], C, win[ns - 2], win[ns - 1], pad[ns - 2], pad[ns - 1], str[ns - 2], str[ns - 1], in[ns - 2], in[ns - 1], alpha, beta);
    th_compare(what, gy, y0, (size_t)Y.n, th_tolerance("pool", CUDNN_DATA_FLOAT));
    tt_fill(h, &Y, y, 0);
    tt_fill(h, &DY, dy, 0);
    tt_fill(h, &DX, dx0, 2);
    TH_OK(cudnnPoolingBackward(h, pd, &sa, Y.d, Y.dev, DY.d, DY.dev, X.d, X.dev, &sb, DX.d, DX.dev));
    tt_read(h, &DX, gdx);
    ref_pool_bwd(mode, ns, 2LL * C, in, out, win, pad, str, x, dy, wdx);
    for (int64_t i = 0; i < X.n; i++) wdx[i] = alpha * wdx[i] + (beta != 0 ? beta * dx0[i] : 0);
    snprintf(what, sizeof what, "PoolingBackward (no overlap) mode=%d %dD %s C=%d win=%d,%d pad=%d,%d str=%d,%d in=%d,%d alpha=%g beta=%g", mode, ns,
             ol_name[lay], C, win[ns - 2], win[ns - 1], pad[ns - 2], pad[ns - 1], str[ns - 2], str[ns - 1], in[ns - 2], in[ns - 1], alpha, beta);
    th_compare(what, gdx, wdx, (size_t)X.n, 2 * th_tolerance("pool", CUDNN_DATA_FLOAT));
    free(x); free(y); free(dy); free(dx0); free(gdx); free(wdx); free(y0); free(gy);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
    cudnnDestroyPoolingDescriptor(pd);
}

/* FLOAT backward over OVERLAPPING windows (the CPU's direct path for them, required here through
 * FREEDNN_CPU_FAST_PATH=2: a declined call fails; it declines channels-last x and dx with a dy that is not, which
 * then take the gradient buffer): 3x3 / 2 without and with padding, 3x3 / 1, 2x2 / 1, 5x5 / 2 pad 2,
 * asymmetric windows and strides (one dim overlapping, the other with gaps), windows larger than the input with
 * padding, one image of one channel over 3 rows of 2000 (fewer rows than some thread counts have threads, 1-row
 * shares), N * C = 2, 3-D with stride 1 and 2 in D; every mode, the four layouts the path takes (70 channels
 * channels-last: two channel blocks), integer data (ties: dy goes to the first maximum), dy in the other layout in
 * every fifth case, beta 0 over NaN and beta 0.5. Half the max cases put NaN and +-inf into x, under both NaN options:
 * NOT_PROPAGATE skips NaN (as the reference does); PROPAGATE sends dy to a window's first NaN, checked against the
 * reference over x with NaN made +inf and +inf made 1e300 (the first of those is then the first maximum). */
static void overlap_case(cudnnHandle_t h, int c)
{
    /* ns, N, C (0: 70 channels-last, 3 otherwise), then per dim (D, H, W; a 2-D case leaves D out) window, pad, stride, input size */
    static const int cf[11][15] = {{2, 2, 0, 3, 0, 2, 9, 3, 0, 2, 13},
                                   {2, 2, 0, 3, 1, 2, 11, 3, 1, 2, 14},
                                   {2, 1, 0, 3, 0, 1, 7, 3, 1, 1, 10},
                                   {2, 2, 0, 2, 0, 1, 6, 2, 0, 1, 9},
                                   {2, 1, 0, 5, 2, 2, 12, 5, 2, 2, 11},
                                   {2, 2, 0, 4, 1, 3, 13, 3, 0, 2, 12},
                                   {2, 2, 0, 3, 1, 2, 10, 2, 0, 3, 11},
                                   {2, 2, 0, 5, 2, 1, 3, 6, 3, 2, 4},
                                   {2, 1, 1, 3, 1, 2, 3, 3, 1, 2, 2000},
                                   {3, 1, 2, 2, 0, 1, 4, 3, 1, 2, 6, 2, 0, 2, 5},
                                   {3, 2, 0, 3, 1, 2, 5, 3, 0, 2, 7, 3, 1, 2, 6}};
    static const int modes[4] = {RP_MAX, RP_AVG_INCL, RP_AVG_EXCL, RP_MAX_DET};
    static const int lays[4] = {OL_NCHW, OL_NHWC, OL_GAPS, OL_GAPS_NHWC};
    const int *q = cf[c % 11], ns = q[0], mode = modes[c / 44 % 4], lay = lays[c / 11 % 4];
    const int is_max = mode == RP_MAX || mode == RP_MAX_DET, special = is_max && c / 2 % 2, prop = special && c / 13 % 2;
    int win[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, str[3] = {1, 1, 1}, in[3] = {1, 1, 1}, out[3];
    for (int i = 0; i < ns; i++) win[i] = q[3 + 4 * i], pad[i] = q[4 + 4 * i], str[i] = q[5 + 4 * i], in[i] = q[6 + 4 * i];
    ref_pool_out_dims(ns, in, win, pad, str, out);
    const int N = q[1], C = q[2] ? q[2] : lay == OL_NHWC || lay == OL_GAPS_NHWC ? 70 : 3, nd = ns + 2;
    int xd[5] = {N, C}, yd[5] = {N, C};
    for (int i = 0; i < ns; i++) xd[2 + i] = in[i], yd[2 + i] = out[i];
    const double alpha = c / 7 % 2 ? 2.0 : 1.0, beta = c / 3 % 2 ? 0.5 : 0.0;
    cudnnPoolingDescriptor_t pd;
    TH_OK(cudnnCreatePoolingDescriptor(&pd));
    TH_OK(cudnnSetPoolingNdDescriptor(pd, (cudnnPoolingMode_t)mode, prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN, ns, win, pad, str));
    tt X, Y, DY, DX;
    tt_make(h, &X, CUDNN_DATA_FLOAT, nd, xd, lay);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, nd, yd, lay);
    tt_make(h, &DY, CUDNN_DATA_FLOAT, nd, yd, c % 5 == 0 ? (lay == OL_NCHW || lay == OL_GAPS ? OL_NHWC : OL_NCHW) : lay);
    tt_make(h, &DX, CUDNN_DATA_FLOAT, nd, xd, lay);
    double *x = dalloc(X.n), *xr = dalloc(X.n), *y = dalloc(Y.n), *dy = dalloc(Y.n), *dx0 = dalloc(X.n), *gdx = dalloc(X.n), *wdx = dalloc(X.n);
    fill_nz(x, X.n, -3, 3);
    for (int64_t i = 0; i < X.n; i++) {
        if (special) x[i] = i % 7 == 2 ? NAN : i % 11 == 4 ? INFINITY : i % 5 == 1 ? -INFINITY : x[i];
        xr[i] = !prop ? x[i] : isnan(x[i]) ? INFINITY : isinf(x[i]) && x[i] > 0 ? 1e300 : x[i];
    }
    fill_nz(dy, Y.n, -4, 4);
    prior_fill(dx0, X.n, beta);
    tt_fill(h, &X, x, 0);
    ref_pool_fwd(mode, 0, ns, (int64_t)N * C, in, out, win, pad, str, xr, y); /* y: only its shape matters backward */
    for (int64_t i = 0; i < Y.n; i++) y[i] = isfinite(y[i]) ? y[i] : 0;
    tt_fill(h, &Y, y, 0);
    tt_fill(h, &DY, dy, 0);
    tt_fill(h, &DX, dx0, 2);
    scal sa = mkscal(alpha, CUDNN_DATA_FLOAT), sb = mkscal(beta, CUDNN_DATA_FLOAT);
    const int nhwc = lay == OL_NHWC || lay == OL_GAPS_NHWC;
    th_cpu_fast_path(nhwc && c % 5 == 0 ? NULL : "2");
    TH_OK(cudnnPoolingBackward(h, pd, &sa, Y.d, Y.dev, DY.d, DY.dev, X.d, X.dev, &sb, DX.d, DX.dev));
    th_cpu_fast_path(NULL);
    tt_read(h, &DX, gdx);
    ref_pool_bwd(mode, ns, (int64_t)N * C, in, out, win, pad, str, xr, dy, wdx);
    for (int64_t i = 0; i < X.n; i++) wdx[i] = alpha * wdx[i] + (beta != 0 ? beta * dx0[i] : 0);
    char what[240];
    snprintf(what, sizeof what, "PoolingBackward (overlap) mode=%d %dD %s N=%d C=%d win=%d,%d pad=%d,%d str=%d,%d in=%d,%d alpha=%g beta=%g special=%d prop=%d",
             mode, ns, ol_name[lay], N, C, win[ns - 2], win[ns - 1], pad[ns - 2], pad[ns - 1], str[ns - 2], str[ns - 1], in[ns - 2], in[ns - 1], alpha,
             beta, special, prop);
    th_compare(what, gdx, wdx, (size_t)X.n, 2 * th_tolerance("pool", CUDNN_DATA_FLOAT));
    free(x); free(xr); free(y); free(dy); free(dx0); free(gdx); free(wdx);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
    cudnnDestroyPoolingDescriptor(pd);
}

/* The order of the sum over overlapping windows (the CPU's direct path for them): max 3x3 / 1 pad 1 over zeros
 * with one 1 per plane, so that the 9 windows around it all send their dy there; three of them carry 1e30, -1e30
 * and 1 (variant 0: along one output row, 1: down one output column, 2: 3-D, along D), the rest 0. In double,
 * summed in raster order, the 1 survives; summed in any other order it is lost to 1e30. */
static void order_case(cudnnHandle_t h, int lay, int variant)
{
    const int ns = variant == 2 ? 3 : 2, C = lay == OL_NHWC ? 70 : 3, nd = ns + 2;
    int win[3] = {3, 3, 3}, pad[3] = {1, 1, 1}, str[3] = {1, 1, 1}, in[3] = {5, 7, 4}, out[3];
    ref_pool_out_dims(ns, in, win, pad, str, out);
    int xd[5] = {1, C}, yd[5] = {1, C};
    for (int i = 0; i < ns; i++) xd[2 + i] = in[i], yd[2 + i] = out[i];
    cudnnPoolingDescriptor_t pd;
    TH_OK(cudnnCreatePoolingDescriptor(&pd));
    TH_OK(cudnnSetPoolingNdDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, ns, win, pad, str));
    tt X, Y, DY, DX;
    tt_make(h, &X, CUDNN_DATA_FLOAT, nd, xd, lay);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, nd, yd, lay);
    tt_make(h, &DY, CUDNN_DATA_FLOAT, nd, yd, lay);
    tt_make(h, &DX, CUDNN_DATA_FLOAT, nd, xd, lay);
    double *x = dalloc(X.n), *y = dalloc(Y.n), *dy = dalloc(Y.n), *gdx = dalloc(X.n), *wdx = dalloc(X.n);
    const int64_t isz = X.n / C, osz = Y.n / C;
    /* the 1 at (2, 3) (2-D) or (2, 2, 3) (3-D); the output at (a, b) (2-D) or (a, b, d) covers it for a, b in its range */
    const int64_t at = ns == 2 ? 2 * in[1] + 3 : (2 * in[1] + 2) * in[2] + 3;
    for (int64_t i = 0; i < X.n; i++) x[i] = i % isz == at ? 1 : 0;
    int64_t o3[3];
    for (int k = 0; k < 3; k++) {
        if (variant == 0) o3[k] = 1 * out[1] + 2 + k;                  /* (1, 2 + k) */
        else if (variant == 1) o3[k] = (1 + k) * out[1] + 2;           /* (1 + k, 2) */
        else o3[k] = ((1 + k) * out[1] + 1) * out[2] + 2;              /* (1 + k, 1, 2) */
    }
    for (int64_t i = 0; i < Y.n; i++) {
        const int64_t o = i % osz;
        dy[i] = o == o3[0] ? 1e30 : o == o3[1] ? -1e30 : o == o3[2] ? 1 : 0;
    }
    ref_pool_fwd(RP_MAX, 0, ns, C, in, out, win, pad, str, x, y);
    tt_fill(h, &X, x, 0);
    tt_fill(h, &Y, y, 0);
    tt_fill(h, &DY, dy, 0);
    tt_fill(h, &DX, wdx, 2);
    float one = 1, zero = 0;
    th_cpu_fast_path("2");
    TH_OK(cudnnPoolingBackward(h, pd, &one, Y.d, Y.dev, DY.d, DY.dev, X.d, X.dev, &zero, DX.d, DX.dev));
    th_cpu_fast_path(NULL);
    tt_read(h, &DX, gdx);
    ref_pool_bwd(RP_MAX, ns, C, in, out, win, pad, str, x, dy, wdx);
    char what[120];
    snprintf(what, sizeof what, "PoolingBackward (overlap) sum order, layout %s variant %d", ol_name[lay], variant);
    th_compare(what, gdx, wdx, (size_t)X.n, th_tolerance("pool", CUDNN_DATA_FLOAT));
    free(x); free(y); free(dy); free(gdx); free(wdx);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
    cudnnDestroyPoolingDescriptor(pd);
}

int main(void)
{
    th_seed(0x9001);
    cudnnHandle_t h = th_create_handle();
    static const int pmodes[4] = {RP_MAX, RP_AVG_INCL, RP_AVG_EXCL, RP_MAX_DET};
    for (int t = 0; t < 4; t++)
        for (int m = 0; m < 4; m++)
            for (int ns = 2; ns <= 3; ns++)
                for (int it = 0; it < 6; it++) one_case(h, float_types[t], pmodes[m], ns, it);
    for (int m = 0; m < 4; m++)
        for (int ns = 2; ns <= 3; ns++) grad_check(h, pmodes[m], ns);
    for (int t = 0; t < 4; t++)
        for (int m = 0; m < 4; m++)
            for (int it = 0; it < 6; it++) nhwc_case(h, float_types[t], pmodes[m], it);
    g_lay = OL_NCHW;
    for (int t = 0; t < 4; t += 2)
        for (int m = 0; m < 4; m++)
            for (int it = 0; it < 6; it++) nhwc_case(h, float_types[t], pmodes[m], it);
    g_big = 1;
    for (int t = 0; t < 4; t++)
        for (int m = 0; m < 4; m++)
            for (int it = 0; it < 8; it++) nhwc_case(h, float_types[t], pmodes[m], it);
    g_big = 0;
    g_k3 = 1;
    for (int t = 0; t < 4; t++)
        for (int m = 0; m < 4; m++)
            for (int it = 0; it < 4; it++) nhwc_case(h, float_types[t], pmodes[m], it);
    g_lay = OL_NHWC; /* the same 3x3 / stride 2 shapes channels-last (the GPU's pool2d_k3s2_nhwc and per-cell backward), and odd H, W */
    for (int t = 0; t < 4; t++)
        for (int m = 0; m < 4; m++)
            for (int it = 0; it < 5; it++) nhwc_case(h, float_types[t], pmodes[m], it);
    g_k3 = 0;
    g_k2 = 1, g_lay = OL_NCHW;
    for (int t = 0; t < 4; t++)
        for (int m = 0; m < 4; m++)
            for (int it = 0; it < 8; it++) nhwc_case(h, float_types[t], pmodes[m], it);
    g_k2 = 0, g_lay = OL_NHWC;
    for (int cfg = 0; cfg < 3; cfg++)
        for (int prop = 0; prop < 2; prop++) specials_case(h, OL_NHWC, prop, cfg), specials_case(h, OL_NCHW, prop, cfg);
    for (int t = 2; t < 4; t++)
        for (int prop = 0; prop < 2; prop++)
            for (int cfg = 0; cfg < 3; cfg++) h2_case(h, float_types[t], prop, cfg);
    for (int c = 0; c < 72; c++) direct_case(h, c); /* every shape, layout and mode */
    for (int c = 0; c < 176; c++) overlap_case(h, c); /* every shape, layout and mode */
    for (int v = 0; v < 3; v++) order_case(h, OL_NCHW, v), order_case(h, OL_NHWC, v);
    desc_and_errors(h);
    big_case(h);
    chunk_case(h);
    cudnnDestroy(h);
    return th_finish();
}
