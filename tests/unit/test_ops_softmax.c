/* cudnnSoftmaxForward/Backward: FAST/ACCURATE/LOG x INSTANCE/CHANNEL in
 * FLOAT/DOUBLE/HALF/BFLOAT16, 3..5-D tensors in independent layouts, alpha/beta with NaN
 * prefill, backward against the written-out Jacobian and against finite differences. */
#include "test_ops_util.h"
#include "ops_ref.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* same >= 0: every tensor in layout `same` (OL_NCHW or OL_NHWC) with up to 70 channels (the
 * GPU's dense CHANNEL path: thread per row on NCHW, warp per row on NHWC) */
static const int *g_fix; /* fixed dims (g_fnd of them) instead of random ones: the GPU's large-row paths */
static int g_fnd;
static void one_case(cudnnHandle_t h, cudnnDataType_t dt, int algo, int mode, int iter, int same)
{
    int nd = th_randint(3, 5), dim[8];
    for (int i = 0; i < nd; i++) dim[i] = th_randint(1, 4);
    dim[1] = same >= 0 ? th_randint(2, 70) : th_randint(2, 6);
    if (g_fix) {
        nd = g_fnd;
        for (int i = 0; i < nd; i++) dim[i] = g_fix[i];
    }
    int64_t S = 1;
    for (int i = 2; i < nd; i++) S *= dim[i];
    static const double ab[4][2] = {{1, 0}, {0.5, 0}, {2, 1}, {-1.5, 0.5}};
    double alpha = ab[iter % 4][0], beta = ab[iter % 4][1];
    tt X, Y, DY, DX;
    int lx = same >= 0 ? same : th_randint(0, 3), ly = same >= 0 ? same : th_randint(0, 3);
    tt_make(h, &X, dt, nd, dim, lx);
    tt_make(h, &Y, dt, nd, dim, ly);
    tt_make(h, &DY, dt, nd, dim, same >= 0 ? same : th_randint(0, 3));
    tt_make(h, &DX, dt, nd, dim, same >= 0 ? same : th_randint(0, 3));
    int64_t n = X.n;
    double *x = dalloc(n), *y0 = dalloc(n), *got = dalloc(n), *want = dalloc(n), *yv = dalloc(n), *dy = dalloc(n), *dx0 = dalloc(n);
    th_fill_uniform(x, (size_t)n, -4, 4);
    prior_fill(y0, n, beta);
    if (beta != 0 && y0[0] == 0) y0[0] = 3; /* C = 1 LOG rows give 0: a prior of zeros would leave nothing to compare */
    tt_fill(h, &X, x, 0);
    tt_fill(h, &Y, y0, 5);
    scal sa = mkscal(alpha, dt), sb = mkscal(beta, dt);
    TH_OK(cudnnSoftmaxForward(h, (cudnnSoftmaxAlgorithm_t)algo, (cudnnSoftmaxMode_t)mode, &sa, X.d, X.dev, &sb, Y.d, Y.dev));
    tt_read(h, &Y, got);
    ref_softmax_fwd(algo, mode, dim[0], dim[1], S, x, yv);
    for (int64_t i = 0; i < n; i++) want[i] = alpha * yv[i] + (beta != 0 ? beta * y0[i] : 0);
    char what[200];
    snprintf(what, sizeof what, "SoftmaxForward algo=%d mode=%d %s nd=%d %s->%s alpha=%g beta=%g", algo, mode, th_dtype_name(dt), nd,
             ol_name[lx], ol_name[ly], alpha, beta);
    th_compare(what, got, want, (size_t)n, 2 * th_tolerance("softmax", dt));
    /* backward from the reference y (rounded to the type) */
    tt_fill(h, &Y, yv, 5);
    th_fill_uniform(dy, (size_t)n, -2, 2);
    prior_fill(dx0, n, beta);
    if (beta != 0 && dx0[0] == 0) dx0[0] = 3;
    tt_fill(h, &DY, dy, 0);
    tt_fill(h, &DX, dx0, 4);
    TH_OK(cudnnSoftmaxBackward(h, (cudnnSoftmaxAlgorithm_t)algo, (cudnnSoftmaxMode_t)mode, &sa, Y.d, Y.dev, DY.d, DY.dev, &sb, DX.d, DX.dev));
    tt_read(h, &DX, got);
    ref_softmax_bwd(algo, mode, dim[0], dim[1], S, yv, dy, want);
    for (int64_t i = 0; i < n; i++) want[i] = alpha * want[i] + (beta != 0 ? beta * dx0[i] : 0);
    snprintf(what, sizeof what, "SoftmaxBackward algo=%d mode=%d %s nd=%d alpha=%g beta=%g", algo, mode, th_dtype_name(dt), nd, alpha, beta);
    th_compare(what, got, want, (size_t)n, 4 * th_tolerance("softmax", dt));
    free(x); free(y0); free(got); free(want); free(yv); free(dy); free(dx0);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
}

typedef struct { int algo, mode, N, C; int64_t S, n; const double *dy; double *tmp; } sm_ctx;
static double sm_loss(void *c, const double *x)
{
    sm_ctx *k = c;
    ref_softmax_fwd(k->algo, k->mode, k->N, k->C, k->S, x, k->tmp);
    double s = 0;
    for (int64_t i = 0; i < k->n; i++) s += k->dy[i] * k->tmp[i];
    return s;
}

static void grad_check(cudnnHandle_t h, int algo, int mode)
{
    int dim[4] = {2, 4, 2, 3};
    tt X, Y, DY, DX;
    tt_make(h, &X, CUDNN_DATA_DOUBLE, 4, dim, OL_NHWC);
    tt_make(h, &Y, CUDNN_DATA_DOUBLE, 4, dim, OL_PADDED);
    tt_make(h, &DY, CUDNN_DATA_DOUBLE, 4, dim, OL_NCHW);
    tt_make(h, &DX, CUDNN_DATA_DOUBLE, 4, dim, OL_PADDED_NHWC);
    int64_t n = X.n;
    double *x = dalloc(n), *y = dalloc(n), *dy = dalloc(n), *dx = dalloc(n), *fd = dalloc(n), *tmp = dalloc(n);
    th_fill_uniform(x, (size_t)n, -2, 2);
    th_fill_uniform(dy, (size_t)n, -1, 1);
    for (int64_t i = 0; i < n; i++) y[i] = NAN;
    double one = 1, zero = 0;
    tt_fill(h, &X, x, 0);
    tt_fill(h, &Y, y, 0);
    tt_fill(h, &DY, dy, 0);
    tt_fill(h, &DX, y, 0);
    TH_OK(cudnnSoftmaxForward(h, (cudnnSoftmaxAlgorithm_t)algo, (cudnnSoftmaxMode_t)mode, &one, X.d, X.dev, &zero, Y.d, Y.dev));
    TH_OK(cudnnSoftmaxBackward(h, (cudnnSoftmaxAlgorithm_t)algo, (cudnnSoftmaxMode_t)mode, &one, Y.d, Y.dev, DY.d, DY.dev, &zero, DX.d, DX.dev));
    tt_read(h, &DX, dx);
    sm_ctx k = {algo, mode, dim[0], dim[1], dim[2] * dim[3], n, dy, tmp};
    fd_grad(n, x, sm_loss, &k, 1e-5, fd);
    char what[80];
    snprintf(what, sizeof what, "SoftmaxBackward algo=%d mode=%d vs finite differences", algo, mode);
    th_compare(what, dx, fd, (size_t)n, 1e-7);
    free(x); free(y); free(dy); free(dx); free(fd); free(tmp);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
}

/* FLOAT softmax over a wide range of inputs, element by element to a relative 2e-5 (the float exp of
 * each backend, subnormal results aside): CHANNEL with C = 2 over (t, 0) pairs, t from -110 to 85 (FAST:
 * e^t up to e^85; ACCURATE: e^-|t|), in NCHW and NHWC; INSTANCE over t from -110 to 0; and a NaN or
 * +inf in a group turning that whole group, and no other, into NaN (ACCURATE). */
static void wide_range(cudnnHandle_t h)
{
    enum { K = 1950 };
    for (int v = 0; v < 5; v++) {
        const int inst = v == 4, algo = v % 2 ? CUDNN_SOFTMAX_ACCURATE : CUDNN_SOFTMAX_FAST, lay = v / 2 % 2;
        int dim[4] = {1, inst ? 1 : 2, 1, K};
        tt X, Y;
        tt_make(h, &X, CUDNN_DATA_FLOAT, 4, dim, lay);
        tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, dim, lay);
        double *x = dalloc(X.n), *got = dalloc(X.n), *want = dalloc(X.n);
        for (int w = 0; w < K; w++) {
            x[w] = inst ? -110.0 * w / (K - 1) : -110.0 + 195.0 * w / (K - 1);
            if (!inst) x[K + w] = 0;
        }
        tt_fill(h, &X, x, 0);
        float one = 1, zero = 0;
        TH_OK(cudnnSoftmaxForward(h, (cudnnSoftmaxAlgorithm_t)algo, inst ? CUDNN_SOFTMAX_MODE_INSTANCE : CUDNN_SOFTMAX_MODE_CHANNEL, &one, X.d,
                                  X.dev, &zero, Y.d, Y.dev));
        tt_read(h, &Y, got);
        for (int64_t i = 0; i < X.n; i++) x[i] = (double)(float)x[i]; /* the inputs as the library saw them */
        ref_softmax_fwd(algo, inst ? RS_INSTANCE : RS_CHANNEL, 1, dim[1], K, x, want);
        int64_t bad = -1, checked = 0;
        for (int64_t i = 0; i < X.n && bad < 0; i++) {
            if (fabs(want[i]) < 1e-36) continue;
            checked++;
            if (!(fabs(got[i] - want[i]) <= 2e-5 * fabs(want[i]))) bad = i;
        }
        TH_CHECK(bad < 0 && checked > X.n / 2, "softmax algo=%d %s wide range: %lld values checked, first bad index %lld (got %.9g want %.9g)",
                 algo, inst ? "INSTANCE" : "CHANNEL", (long long)checked, (long long)bad, bad >= 0 ? got[bad] : 0.0, bad >= 0 ? want[bad] : 0.0);
        if (v == 1 || v == 3) { /* a NaN at position 7 and +inf at position 11: NaN there, the neighbours untouched */
            x[7] = NAN;
            x[K + 11] = INFINITY;
            tt_fill(h, &X, x, 0);
            TH_OK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, X.d, X.dev, &zero, Y.d, Y.dev));
            tt_read(h, &Y, got);
            TH_CHECK(isnan(got[7]) && isnan(got[K + 7]) && isnan(got[11]) && isnan(got[K + 11]) && !isnan(got[8]) && !isnan(got[K + 10]),
                     "softmax ACCURATE CHANNEL: a NaN or +inf input must make its group, and only it, NaN");
        }
        free(x); free(got); free(want);
        tt_free(h, &X); tt_free(h, &Y);
    }
}

/* The CPU FLOAT fast path (src/cpu/softmax_cpu.c), required (FREEDNN_CPU_FAST_PATH=2): every algorithm, both
 * modes, alpha/beta, in NCHW, NHWC and the gapped layouts it takes, with row lengths, channel counts and
 * position blocks that leave vector tails (1-element rows, C = 1..69, S up to 1100: two position blocks) */
static void cpu_fast_sizes(cudnnHandle_t h)
{
    static const int dims[][4] = {{2, 1, 1, 1}, {3, 1, 5, 1}, {2, 3, 1, 7}, {2, 8, 3, 3}, {1, 13, 7, 5}, {2, 17, 1, 1},
                                  {2, 64, 2, 9}, {1, 69, 5, 3}, {2, 5, 20, 55}, {1, 9, 37, 30}};
    static const int lays[4] = {OL_NCHW, OL_NHWC, OL_GAPS, OL_GAPS_NHWC};
    th_cpu_fast_path("2");
    for (int d = 0; d < (int)(sizeof dims / sizeof dims[0]); d++)
        for (int a = 0; a < 3; a++)
            for (int m = 0; m < 2; m++)
                for (int li = 0; li < (m == 0 ? 2 : 4); li++) {
                    g_fix = dims[d], g_fnd = 4;
                    /* 1-element groups (C = 1; INSTANCE of 1x1x1): beta != 0, else every output is 0 or alpha */
                    one_case(h, CUDNN_DATA_FLOAT, a, m, dims[d][1] == 1 ? 2 + (a + li) % 2 : d + a + li, lays[li]);
                }
    g_fix = NULL;
    th_cpu_fast_path(NULL);
}

/* The fast path's two exps (fdnn_expf_inrange where a group's shifted inputs all lie in [-87, 88], else
 * fdnn_expf) must agree bit for bit, so that where the range check splits a tensor cannot change a result: the
 * same inputs, shifted down to -86.5, once as they are and once with one of them -inf (that group, block or
 * chunk taking fdnn_expf; e^-86.5 adds nothing to a sum >= 1) give the same outputs elsewhere. Also NaN: one
 * NaN input in a group on the fast exp makes that group, and only it, NaN. */
static void cpu_fast_exp_agrees(cudnnHandle_t h)
{
    static const int dims[3][4] = {{2, 3, 23, 29}, {2, 64, 5, 7}, {1, 2, 1, 1301}};
    th_cpu_fast_path("2");
    for (int d = 0; d < 3; d++)
        for (int a = 0; a < 3; a++)
            for (int m = 0; m < 2; m++)
                for (int lay = 0; lay < 2; lay++)
                    for (int ab = 0; ab < 2; ab++) {
                        tt X, Y, DY, DX;
                        tt_make(h, &X, CUDNN_DATA_FLOAT, 4, dims[d], lay);
                        tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, dims[d], lay);
                        tt_make(h, &DY, CUDNN_DATA_FLOAT, 4, dims[d], lay);
                        tt_make(h, &DX, CUDNN_DATA_FLOAT, 4, dims[d], lay);
                        const int64_t n = X.n, j = n / 2 + 1; /* the element made -inf, NaN */
                        const int64_t C = dims[d][1], S = (int64_t)dims[d][2] * dims[d][3];
                        double *x = dalloc(n), *r0 = dalloc(n), *r1 = dalloc(n), *b0 = dalloc(n), *b1 = dalloc(n), *y0 = dalloc(n), *dy = dalloc(n);
                        th_fill_uniform(x, (size_t)n, a == CUDNN_SOFTMAX_FAST ? -20 : -46, a == CUDNN_SOFTMAX_FAST ? 87.5 : 40);
                        /* x[j]: 86.5 below its group's max (FAST: -86.5, the sum >= e^-20) */
                        double gmax = -INFINITY;
                        for (int64_t i = 0; i < (m == CUDNN_SOFTMAX_MODE_INSTANCE ? C * S : C); i++) {
                            const int64_t at = m == CUDNN_SOFTMAX_MODE_INSTANCE ? j / (C * S) * C * S + i : j / (C * S) * C * S + i * S + j % S;
                            if (at != j && x[at] > gmax) gmax = x[at];
                        }
                        x[j] = a == CUDNN_SOFTMAX_FAST ? -86.5 : gmax - 86.5;
                        for (int64_t i = 0; i < n; i++) x[i] = (float)x[i];
                        th_fill_uniform(dy, (size_t)n, -2, 2);
                        th_fill_uniform(y0, (size_t)n, -3, 3);
                        const float alpha = ab ? 2.f : 1.f, beta = ab ? 0.5f : 0.f;
                        for (int pass = 0; pass < 2; pass++) {
                            double *r = pass ? r1 : r0, *bb = pass ? b1 : b0, keep = x[j];
                            if (pass) x[j] = -INFINITY;
                            tt_fill(h, &X, x, 0);
                            tt_fill(h, &Y, y0, 0);
                            TH_OK(cudnnSoftmaxForward(h, (cudnnSoftmaxAlgorithm_t)a, (cudnnSoftmaxMode_t)m, &alpha, X.d, X.dev, &beta, Y.d, Y.dev));
                            tt_read(h, &Y, r);
                            /* backward: y = the inputs (LOG: log-probabilities in [-86.5, 0] and one -inf) */
                            for (int64_t i = 0; i < n; i++) bb[i] = -0.99 * fabs(x[i] - (a == CUDNN_SOFTMAX_FAST ? 0 : gmax));
                            tt_fill(h, &Y, bb, 0);
                            tt_fill(h, &DY, dy, 0);
                            tt_fill(h, &DX, y0, 0);
                            TH_OK(cudnnSoftmaxBackward(h, (cudnnSoftmaxAlgorithm_t)a, (cudnnSoftmaxMode_t)m, &alpha, Y.d, Y.dev, DY.d, DY.dev, &beta, DX.d,
                                                       DX.dev));
                            tt_read(h, &DX, bb);
                            x[j] = keep;
                        }
                        int64_t bad = -1, badb = -1;
                        for (int64_t i = 0; i < n; i++) {
                            if (i == j) continue;
                            if (bad < 0 && !(r0[i] == r1[i] && !isnan(r0[i]))) bad = i;
                            if (badb < 0 && !(b0[i] == b1[i] && !isnan(b0[i])) && a == CUDNN_SOFTMAX_LOG) badb = i;
                        }
                        if (isnan(r1[j]) || isnan(b1[j])) bad = j; /* the -inf input: 0 (LOG -inf) and a finite gradient */
                        TH_CHECK(bad < 0 && badb < 0, "softmax fast exp vs fdnn_expf: algo=%d mode=%d layout %d ab %d: forward differs at %lld, LOG backward at %lld",
                                 a, m, lay, ab, (long long)bad, (long long)badb);
                        /* one NaN (forward: x; LOG backward: y) in the fast exp's range */
                        x[j] = NAN;
                        tt_fill(h, &X, x, 0);
                        tt_fill(h, &Y, y0, 0);
                        TH_OK(cudnnSoftmaxForward(h, (cudnnSoftmaxAlgorithm_t)a, (cudnnSoftmaxMode_t)m, &alpha, X.d, X.dev, &beta, Y.d, Y.dev));
                        tt_read(h, &Y, r0);
                        int64_t nans = 0, want = m == CUDNN_SOFTMAX_MODE_INSTANCE ? n / dims[d][0] : dims[d][1];
                        for (int64_t i = 0; i < n; i++) nans += isnan(r0[i]);
                        (void)C;
                        TH_CHECK(isnan(r0[j]) && nans == want, "softmax algo=%d mode=%d layout %d: a NaN input made %lld outputs NaN, want its %lld", a, m,
                                 lay, (long long)nans, (long long)want);
                        free(x); free(r0); free(r1); free(b0); free(b1); free(y0); free(dy);
                        tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
                    }
    /* FAST with an input in (88, 88.72]: e^x is a finite float, but beyond fdnn_expf_inrange's range */
    {
        int d2[4] = {1, 2, 1, 1};
        tt X, Y;
        tt_make(h, &X, CUDNN_DATA_FLOAT, 4, d2, OL_NCHW);
        tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, d2, OL_NCHW);
        double xv[2] = {88.5, 0}, got[2];
        const float one = 1, zero = 0;
        tt_fill(h, &X, xv, 0);
        TH_OK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_MODE_CHANNEL, &one, X.d, X.dev, &zero, Y.d, Y.dev));
        tt_read(h, &Y, got);
        TH_CHECK(fabs(got[0] - 1) < 1e-5 && got[1] >= 0 && got[1] < 1e-38, "softmax FAST of (88.5, 0): got (%g, %g)", got[0], got[1]);
        tt_free(h, &X); tt_free(h, &Y);
    }
    /* ACCURATE and LOG with one input 95 below the max (e^-95 is subnormal: fdnn_expf's range), at channel 3 of
     * 9, two positions: INSTANCE, CHANNEL NCHW (positions side by side) and NHWC (rows) */
    for (int v = 0; v < 6; v++) {
        const int inst = v % 3 == 0, lay = v % 3 == 2 ? OL_NHWC : OL_NCHW, algo = v < 3 ? CUDNN_SOFTMAX_ACCURATE : CUDNN_SOFTMAX_LOG;
        int d2[4] = {1, 9, 1, 2};
        tt X, Y;
        tt_make(h, &X, CUDNN_DATA_FLOAT, 4, d2, lay);
        tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, d2, lay);
        static const double base[9] = {0, -1, -2, -95, -3, -0.5, -1.5, -2.5, -4};
        double xv[18], got[18], want[18];
        for (int i = 0; i < 18; i++) xv[i] = base[i / 2] - 0.25 * (i % 2);
        const float one = 1, zero = 0;
        tt_fill(h, &X, xv, 0);
        TH_OK(cudnnSoftmaxForward(h, (cudnnSoftmaxAlgorithm_t)algo, inst ? CUDNN_SOFTMAX_MODE_INSTANCE : CUDNN_SOFTMAX_MODE_CHANNEL, &one, X.d, X.dev, &zero,
                                  Y.d, Y.dev));
        tt_read(h, &Y, got);
        ref_softmax_fwd(algo, inst ? RS_INSTANCE : RS_CHANNEL, 1, 9, 2, xv, want);
        int ok = 1;
        for (int i = 0; i < 18; i++)
            ok &= algo == CUDNN_SOFTMAX_ACCURATE && i / 2 == 3 ? got[i] >= 0 && got[i] < 1e-38 : fabs(got[i] - want[i]) <= 1e-5 * fabs(want[i]);
        TH_CHECK(ok, "softmax algo=%d %s layout %d with an input 95 below the max: got %g %g, want %g %g", algo, inst ? "INSTANCE" : "CHANNEL", lay, got[0],
                 got[6], want[0], want[6]);
        tt_free(h, &X); tt_free(h, &Y);
    }
    th_cpu_fast_path(NULL);
}

/* ------------------------------------------------------------------ long INSTANCE rows (CPU FLOAT fast path) */

/* The OpenMP threads of the library's next parallel regions (tests/CMakeLists.txt builds this test with OpenMP
 * where the library has it); 0 without OpenMP */
static int sm_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 0;
#endif
}
static void sm_set_threads(int t)
{
#ifdef _OPENMP
    if (t > 0) omp_set_num_threads(t);
#else
    (void)t;
#endif
}

/* first i with want[i] NaN and got[i] not, or the other way round, or |got - want| > tol * bound[i]; -1: none */
static int64_t sm_first_bad(const double *got, const double *want, const double *bound, int64_t n, double tol)
{
    for (int64_t i = 0; i < n; i++)
        if (isnan(want[i]) ? !isnan(got[i]) : !(got[i] == want[i] || fabs(got[i] - want[i]) <= tol * bound[i])) return i;
    return -1;
}

/* One call of a long-row case on `threads` OpenMP threads into out (logical order): forward (x into y over the
 * prior y0) or backward (y, dy into dx over the prior y0); in place: y = x (forward), dx = dy (backward), the
 * output tensor first filled with that input */
typedef struct { tt *X, *Y, *DY, *DX; int algo; float alpha, beta; } sm_long;
static void sm_long_call(cudnnHandle_t h, const sm_long *c, int bwd, int in_place, double *x, double *y, double *dy, double *y0, int threads,
                         double *out)
{
    const int saved = sm_max_threads();
    sm_set_threads(threads);
    const cudnnSoftmaxAlgorithm_t a = (cudnnSoftmaxAlgorithm_t)c->algo;
    if (!bwd) {
        tt_fill(h, c->X, x, 0);
        tt_fill(h, c->Y, in_place ? x : y0, 0);
        TH_OK(cudnnSoftmaxForward(h, a, CUDNN_SOFTMAX_MODE_INSTANCE, &c->alpha, in_place ? c->Y->d : c->X->d, in_place ? c->Y->dev : c->X->dev,
                                  &c->beta, c->Y->d, c->Y->dev));
        tt_read(h, c->Y, out);
    } else {
        tt_fill(h, c->Y, y, 0);
        tt_fill(h, c->DY, dy, 0);
        tt_fill(h, c->DX, in_place ? dy : y0, 0);
        TH_OK(cudnnSoftmaxBackward(h, a, CUDNN_SOFTMAX_MODE_INSTANCE, &c->alpha, c->Y->d, c->Y->dev, in_place ? c->DX->d : c->DY->d,
                                   in_place ? c->DX->dev : c->DY->dev, &c->beta, c->DX->d, c->DX->dev));
        tt_read(h, c->DX, out);
    }
    sm_set_threads(saved);
}

/* The call on 1, 2 and 3 threads (the images whole on one thread, or shared chunk by chunk, src/cpu/softmax_cpu.c)
 * must give the same bytes; the first result in out. Then in place against out of place over the same prior. */
static void sm_long_threads(cudnnHandle_t h, const sm_long *c, int bwd, double *x, double *y, double *dy, double *y0, int64_t n, double *out,
                            const char *what)
{
    double *o2 = dalloc(n);
    sm_long_call(h, c, bwd, 0, x, y, dy, y0, 1, out);
    int same = 1;
    for (int t = 2; t <= 3; t++) {
        sm_long_call(h, c, bwd, 0, x, y, dy, y0, t, o2);
        same &= memcmp(out, o2, sizeof(double) * (size_t)n) == 0;
    }
    TH_CHECK(same, "%s: results differ between 1, 2 and 3 threads", what);
    double *o3 = dalloc(n);
    sm_long_call(h, c, bwd, 1, x, y, dy, y0, 0, o2);
    sm_long_call(h, c, bwd, 0, x, y, dy, bwd ? dy : x, 0, o3);
    TH_CHECK(memcmp(o2, o3, sizeof(double) * (size_t)n) == 0, "%s: in place differs from out of place", what);
    free(o2);
    free(o3);
}

/* Image i of a long-row case's inputs, kind 0: uniform in [-4, 4]; 1: also -100 at every 997th element from the
 * 5th and +6 at the last (a range that fdnn_expf_inrange does not cover: fdnn_expf for the whole row); 2: specials
 * by (i + 2N) % 4: a NaN at the last element, +inf mid-row, all -inf, or every third element -inf */
static void sm_long_inputs(double *x, int64_t L, int kind, int i, int N)
{
    th_fill_uniform(x, (size_t)L, -4, 4);
    if (kind == 1) {
        for (int64_t l = 5; l < L; l += 997) x[l] = -100;
        x[L - 1] = 6;
    } else if (kind == 2) {
        switch ((i + 2 * N) % 4) {
        case 0: x[L - 1] = NAN; break;
        case 1: x[L / 2] = INFINITY; break;
        case 2: for (int64_t l = 0; l < L; l++) x[l] = -INFINITY; break;
        default: for (int64_t l = 0; l < L; l += 3) x[l] = -INFINITY;
        }
    }
}

/* One long-row case: forward and backward against the reference (each element within 2e-6 of the bound on its
 * rounding errors), on 1, 2 and 3 threads, in place and not */
static void long_case(cudnnHandle_t h, const int *dim, int algo, int lay, int kind, int ab)
{
    const int N = dim[0], C = dim[1];
    const int64_t S = (int64_t)dim[2] * dim[3], L = C * S;
    tt X, Y, DY, DX;
    tt_make(h, &X, CUDNN_DATA_FLOAT, 4, dim, lay);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, dim, lay);
    tt_make(h, &DY, CUDNN_DATA_FLOAT, 4, dim, lay);
    tt_make(h, &DX, CUDNN_DATA_FLOAT, 4, dim, lay);
    const int64_t n = X.n;
    double *x = dalloc(n), *y0 = dalloc(n), *yv = dalloc(n), *dy = dalloc(n), *got = dalloc(n), *want = dalloc(n), *bound = dalloc(n);
    double *s = dalloc(N);
    const sm_long c = {&X, &Y, &DY, &DX, algo, ab ? -1.5f : 1.f, ab ? 0.5f : 0.f};
    for (int i = 0; i < N; i++) sm_long_inputs(x + i * L, L, kind, i, N);
    prior_fill(y0, n, c.beta);
    char what[160];
    snprintf(what, sizeof what, "softmax long INSTANCE fwd %dx%lld algo=%d layout %d kind %d beta %g", N, (long long)L, algo, lay, kind, c.beta);
    sm_long_threads(h, &c, 0, x, NULL, NULL, y0, n, got, what); /* x, y0 now rounded to float */
    ref_softmax_fwd(algo, RS_INSTANCE, N, C, S, x, yv);
    for (int i = 0; i < N && algo == CUDNN_SOFTMAX_FAST; i++) /* FAST, unshifted: e^+inf / +inf, 0 for the others */
        if (x[i * L + L / 2] == INFINITY)
            for (int64_t l = 0; l < L; l++) yv[i * L + l] = l == L / 2 ? NAN : 0;
    for (int64_t i = 0; i < n; i++) {
        const double pb = c.beta != 0 ? c.beta * y0[i] : 0, r = algo == CUDNN_SOFTMAX_LOG ? fabs(x[i]) + fabs(x[i] - yv[i]) : fabs(yv[i]);
        want[i] = c.alpha * yv[i] + pb; /* bound: LOG y = x - (max + log sum) */
        bound[i] = fabs(c.alpha) * r + fabs(pb) + 1e-30;
    }
    int64_t bad = sm_first_bad(got, want, bound, n, 2e-6);
    TH_CHECK(bad < 0, "%s: first bad index %lld: got %.9g want %.9g", what, (long long)bad, bad >= 0 ? got[bad] : 0.0, bad >= 0 ? want[bad] : 0.0);
    /* backward from the reference y (rounded to float) */
    th_fill_uniform(dy, (size_t)n, -2, 2);
    prior_fill(y0, n, c.beta);
    tt_fill(h, &Y, yv, 0);
    snprintf(what, sizeof what, "softmax long INSTANCE bwd %dx%lld algo=%d layout %d kind %d beta %g", N, (long long)L, algo, lay, kind, c.beta);
    sm_long_threads(h, &c, 1, NULL, yv, dy, y0, n, got, what);
    ref_softmax_bwd_closed(algo, RS_INSTANCE, N, C, S, yv, dy, want, s);
    for (int64_t i = 0; i < n; i++) {
        const double si = fabs(s[i / L]), r = algo == CUDNN_SOFTMAX_LOG ? fabs(dy[i]) + exp(yv[i]) * si : fabs(yv[i]) * (fabs(dy[i]) + si);
        const double pb = c.beta != 0 ? c.beta * y0[i] : 0;
        want[i] = c.alpha * want[i] + pb;
        bound[i] = fabs(c.alpha) * r + fabs(pb) + 1e-30;
    }
    bad = sm_first_bad(got, want, bound, n, 2e-6);
    TH_CHECK(bad < 0, "%s: first bad index %lld: got %.9g want %.9g", what, (long long)bad, bad >= 0 ? got[bad] : 0.0, bad >= 0 ? want[bad] : 0.0);
    free(x); free(y0); free(yv); free(dy); free(got); free(want); free(bound); free(s);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
}

/* The backward sum of a long row in order: products (dy*y, LOG dy) of 2^60 at the first element, -2^60 three
 * quarters in and 1 at the last, 0 elsewhere, sum to 1 only when added in that order (as the chunks' sums are);
 * then a sum of terms from 2^-10 to 2^60 of random signs, whose rounding changes with any regrouping, must give
 * the same bytes on 1, 2 and 3 threads */
static void long_order(cudnnHandle_t h)
{
    static const int dim[4] = {1, 7, 97, 101};
    const int64_t n = (int64_t)dim[1] * dim[2] * dim[3];
    tt Y, DY, DX;
    tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, dim, OL_NCHW);
    tt_make(h, &DY, CUDNN_DATA_FLOAT, 4, dim, OL_NCHW);
    tt_make(h, &DX, CUDNN_DATA_FLOAT, 4, dim, OL_NCHW);
    double *y = dalloc(n), *dy = dalloc(n), *y0 = dalloc(n), *got = dalloc(n), *want = dalloc(n), *bound = dalloc(n), s;
    for (int algo = CUDNN_SOFTMAX_ACCURATE; algo <= CUDNN_SOFTMAX_LOG; algo++) {
        const int log_sm = algo == CUDNN_SOFTMAX_LOG;
        const sm_long c = {NULL, &Y, &DY, &DX, algo, 1.f, 0.f};
        const int64_t at[3] = {0, 3 * n / 4, n - 1};
        for (int64_t i = 0; i < n; i++) y[i] = log_sm ? -0.75 : 0.5, dy[i] = 0;
        for (int k = 0; k < 3; k++) {
            const double v = k == 2 ? 1 : k == 0 ? 0x1p60 : -0x1p60;
            if (log_sm) dy[at[k]] = v;
            else y[at[k]] = k == 2 ? 1 : 0x1p30, dy[at[k]] = v / y[at[k]];
        }
        prior_fill(y0, n, 0);
        sm_long_threads(h, &c, 1, NULL, y, dy, y0, n, got, log_sm ? "softmax long INSTANCE LOG bwd, sum in order" : "softmax long INSTANCE bwd, sum in order");
        ref_softmax_bwd_closed(algo, RS_INSTANCE, 1, dim[1], n / dim[1], y, dy, want, &s);
        for (int64_t i = 0; i < n; i++) bound[i] = log_sm ? fabs(dy[i]) + exp(y[i]) : fabs(y[i]) * (fabs(dy[i]) + 1);
        const int64_t bad = sm_first_bad(got, want, bound, n, 2e-6);
        TH_CHECK(s == 1 && bad < 0, "softmax long INSTANCE algo=%d bwd: the sum (reference %g) in order: first bad index %lld: got %.9g want %.9g", algo, s,
                 (long long)bad, bad >= 0 ? got[bad] : 0.0, bad >= 0 ? want[bad] : 0.0);
        for (int64_t i = 0; i < n; i++) {
            y[i] = log_sm ? -0.75 : 1;
            dy[i] = ldexp(th_randint(0, 1) ? 1 : -1, th_randint(-10, 60));
        }
        sm_long_threads(h, &c, 1, NULL, y, dy, y0, n, got, log_sm ? "softmax long INSTANCE LOG bwd, wide sum" : "softmax long INSTANCE bwd, wide sum");
    }
    free(y); free(dy); free(y0); free(got); free(want); free(bound);
    tt_free(h, &Y); tt_free(h, &DY); tt_free(h, &DX);
}

/* INSTANCE rows long enough for the fast path's chunks (32768 elements and more): one image of 68579 (the
 * threads share it; the last chunk 995 long), three of 34239 (two whole, one shared on two threads; last chunk
 * 1471, not a multiple of 8), two of exactly 32768, in NCHW and NHWC, every algorithm, alpha/beta (beta 0 over
 * NaN), inputs whose range leaves fdnn_expf_inrange out, NaN, +inf and -inf */
static void cpu_long_instance(cudnnHandle_t h)
{
    static const int dims[3][4] = {{1, 7, 97, 101}, {3, 3, 101, 113}, {2, 16, 32, 64}};
    { /* the closed-form backward reference (linear in the row length) against the Jacobian one */
        double x[60], y[60], dy[60], j[60], cf[60];
        th_fill_uniform(x, 60, -3, 3);
        th_fill_uniform(dy, 60, -2, 2);
        for (int a = 0; a < 3; a++)
            for (int m = 0; m < 2; m++) {
                ref_softmax_fwd(a, m, 2, 5, 6, x, y);
                ref_softmax_bwd(a, m, 2, 5, 6, y, dy, j);
                ref_softmax_bwd_closed(a, m, 2, 5, 6, y, dy, cf, NULL);
                th_compare("softmax backward reference: closed form vs Jacobian", cf, j, 60, 1e-12);
            }
    }
    th_cpu_fast_path("2");
    for (int d = 0; d < 3; d++)
        for (int a = 0; a < 3; a++)
            for (int lay = 0; lay < 2; lay++)
                for (int kind = 0; kind < 3; kind++) long_case(h, dims[d], a, lay, kind, (d + a + lay + kind) % 2);
    long_order(h);
    th_cpu_fast_path(NULL);
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
    tt_fill(h, &Y, v, 0);
    float one = 1, zero = 0;
    TH_STATUS(cudnnSoftmaxForward(h, (cudnnSoftmaxAlgorithm_t)3, CUDNN_SOFTMAX_MODE_CHANNEL, &one, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_FAST, (cudnnSoftmaxMode_t)2, &one, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_MODE_CHANNEL, &one, X.d, X.dev, &zero, Z.d, Z.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_MODE_CHANNEL, &one, X.d, X.dev, &zero, Yh.d, Yh.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_MODE_CHANNEL, &one, I8.d, I8.dev, &zero, I8.d, I8.dev), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_MODE_CHANNEL, &one, X.d, NULL, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_MODE_CHANNEL, &one, X.d, X.dev, NULL, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSoftmaxBackward(h, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &one, X.d, X.dev, Z.d, Z.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSoftmaxBackward(h, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &one, X.d, X.dev, X.d, NULL, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSoftmaxBackward(NULL, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &one, X.d, X.dev, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(tt_unchanged(h, &Y), "y changed by a failed softmax call");
    free(v);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &Yh); tt_free(h, &Z); tt_free(h, &I8);
}

int main(void)
{
    th_seed(0x50f7);
    cudnnHandle_t h = th_create_handle();
    /* a forced-variant run (below): e varies the algorithms and scalars per variant */
    const char *cv = getenv("FREEDNN_SOFTMAX_CLUSTER");
    const int clu = cv != NULL, sl8 = getenv("FREEDNN_SOFTMAX_SL") != NULL || getenv("FREEDNN_SOFTMAX_PAIR") != NULL;
    const int e = clu ? (atoi(cv) == 0 ? 1 : atoi(cv) == 1 ? 2 : atoi(cv) == 2 ? 3 : 4) : sl8;
    for (int t = 0; t < 4 && !clu && !sl8; t++)
        for (int a = 0; a < 3; a++)
            for (int m = 0; m < 2; m++)
                for (int it = 0; it < 4; it++) one_case(h, float_types[t], a, m, it, -1), one_case(h, float_types[t], a, m, it, it % 2);
    /* large rows in one layout for x, y, dy, dx: INSTANCE rows of 4200 elements (chunked on the
     * GPU; one algorithm per type, the reference backward is quadratic in the row length), CHANNEL
     * with C = 256 (NHWC row in registers), 300, and C = 100 over 37 positions (NCHW slices) */
    /* (then an INSTANCE row of 4305 elements, not a multiple of the 16-byte vector width, and 5
     * rows of 4320: the GPU's single-kernel pipeline over several rows, see gpu/..._pipe16) */
    static const int big[6][4] = {{2, 3, 40, 35}, {2, 256, 3, 5}, {2, 300, 2, 3}, {2, 100, 37, 1}, {2, 3, 41, 35}, {5, 2, 48, 45}};
    /* The GPU reads FREEDNN_SOFTMAX_CLUSTER and FREEDNN_SOFTMAX_SL once per process, so the
     * forced variants are separate runs of this program (tests/CMakeLists.txt: gpu/..._cl0,
     * _cl1, _cl2, _cl16: the INSTANCE rows with the sm_90 cluster forward off or forced to that
     * many blocks; _sl8: the wide NCHW CHANNEL rows with 8 channel slices; _pair0, _pair2, _pair3,
     * _pair4: those rows with FREEDNN_SOFTMAX_PAIR set); such a run checks only
     * the rows its variable steers (the CPU backend ignores both). */
    if (!sl8)
        for (int b = 0; b < 6; b++) {
            const int inst = b == 0 || b >= 4;
            if (clu && !inst) continue;
            g_fix = big[b], g_fnd = b == 3 ? 3 : 4;
            for (int t = 0; t < 4; t++)
                for (int a = inst ? (t + e) % 3 : 0; a < (inst ? (t + e) % 3 + 1 : 3); a++)
                    one_case(h, float_types[t], a, !inst /* 0: INSTANCE */, t + a + e, (t + a + e) % 2);
        }
    /* NCHW CHANNEL with 129..256 and 257..512 channels (the GPU keeps them in registers over 16 and
     * 32 channel slices; with 8 slices, registers up to 256 channels, above that x read twice); then
     * an even number of positions, where the GPU gives HALF / BFLOAT16 two positions a thread
     * (FREEDNN_SOFTMAX_PAIR; 66 positions: a block of 64 rows and a part block) */
    static const int wide[9][4] = {{2, 256, 3, 5}, {3, 200, 7, 5}, {2, 400, 3, 7}, {2, 256, 4, 5}, {3, 200, 6, 5},
                                   {2, 400, 3, 6}, {1, 130, 2, 33}, {3, 48, 6, 3}, {2, 100, 2, 9}};
    if (!clu)
        for (int b = 0; b < 9; b++) {
            g_fix = wide[b], g_fnd = 4;
            for (int t = 0; t < 4; t++)
                for (int a = 0; a < 3; a++) one_case(h, float_types[t], a, 1, t + a + e, OL_NCHW);
        }
    /* NHWC CHANNEL rows of at most 16 16-byte vectors (the GPU gives each row a group of 8 or 16 lanes of a
     * warp), row counts that leave a warp's last groups without a row */
    static const int grp[4][4] = {{3, 64, 5, 7}, {2, 32, 9, 5}, {2, 128, 3, 11}, {1, 8, 7, 9}};
    if (!clu && !sl8)
        for (int b = 0; b < 4; b++) {
            g_fix = grp[b], g_fnd = 4;
            for (int t = 0; t < 4; t++)
                for (int a = 0; a < 3; a++) one_case(h, float_types[t], a, 1, t + a + b, OL_NHWC);
        }
    if (clu || sl8) {
        cudnnDestroy(h);
        return th_finish();
    }
    g_fix = NULL;
    for (int a = 0; a < 3; a++)
        for (int m = 0; m < 2; m++) grad_check(h, a, m);
    wide_range(h);
    if (!th_is_gpu(h)) {
        cpu_fast_sizes(h);
        cpu_fast_exp_agrees(h);
        cpu_long_instance(h);
    }
    errors(h);
    cudnnDestroy(h);
    return th_finish();
}
