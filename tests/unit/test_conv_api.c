/* Convolution API behaviour: algorithm counts, Get*_v7 lists, Find / FindEx, workspace
 * queries, every documented error path (status + output untouched), the fused
 * bias-activation forward (z aliasing y), the bias gradient and cudnnIm2Col. */
#include "test_conv_util.h"

static int skipped;

/* the fixed FLOAT problem most checks use: n2 c4 k6, 7x7, 3x3, pad 1 */
static void base_case(tcase *t, cudnnDataType_t xt)
{
    memset(t, 0, sizeof *t);
    t->nsp = 2;
    t->n = 2; t->c = 4; t->k = 6; t->g = 1;
    for (int i = 0; i < 3; i++) {
        t->in[i] = t->out[i] = t->flt[i] = t->stride[i] = t->dil[i] = 1;
        t->pad[i] = 0;
    }
    for (int i = 1; i < 3; i++) { t->in[i] = 7; t->flt[i] = 3; t->pad[i] = 1; t->out[i] = 7; }
    t->mode = CUDNN_CROSS_CORRELATION;
    t->xt = t->yt = xt;
    t->ct = xt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : xt == CUDNN_DATA_INT8 ? CUDNN_DATA_INT32 : CUDNN_DATA_FLOAT;
}

static int same(const double *a, const double *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])))) return 0;
    return 1;
}

static void test_counts(cudnnHandle_t h)
{
    int c = 0;
    TH_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &c));
    TH_CHECK(c == 8, "fwd max count %d", c);
    TH_OK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &c));
    TH_CHECK(c == 6, "bwd data max count %d", c);
    TH_OK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &c));
    TH_CHECK(c == 7, "bwd filter max count %d", c);
    TH_STATUS(cudnnGetConvolutionForwardAlgorithmMaxCount(NULL, &c), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetConvolutionForwardAlgorithmMaxCount(h, NULL), CUDNN_STATUS_BAD_PARAM);
}

/* generic checks of a perf list given as parallel arrays */
static void check_list(cudnnHandle_t h, const char *what, int n, int count, const int *algo, const cudnnStatus_t *st, const float *time,
                       const size_t *mem, const size_t *ws_query, int timed)
{
    TH_CHECK(n == count, "%s: %d entries, want %d (every algorithm once)", what, n, count);
    int seen[16] = {0}, okn = 0;
    for (int i = 0; i < n; i++) {
        TH_CHECK(algo[i] >= 0 && algo[i] < count && !seen[algo[i]], "%s: entry %d algo %d duplicate or out of range", what, i, algo[i]);
        if (algo[i] >= 0 && algo[i] < count) seen[algo[i]] = 1;
        if (st[i] == CUDNN_STATUS_SUCCESS) {
            TH_CHECK(okn == i, "%s: SUCCESS entry %d after a failed one", what, i);
            okn++;
            TH_CHECK(mem[i] == ws_query[i], "%s: algo %d memory %zu != workspace query %zu", what, algo[i], mem[i], ws_query[i]);
            if (timed) TH_CHECK(time[i] >= 0 && (i == 0 || time[i] >= time[i - 1]), "%s: entry %d time %g not sorted", what, i, time[i]);
        } else if (timed)
            TH_CHECK(time[i] < 0, "%s: failed entry %d has a time", what, i);
    }
    TH_CHECK(okn >= 1 || th_is_gpu(h), "%s: no SUCCESS entry", what);
    /* 2 portable algorithms, plus the direct AVX-512 one on CPUs that have it */
    if (!th_is_gpu(h)) TH_CHECK(okn == 2 || okn == 3, "%s: CPU backend should offer 2 or 3 algorithms here, got %d", what, okn);
}

static void test_queries(cudnnHandle_t h)
{
    tcase t;
    base_case(&t, CUDNN_DATA_FLOAT);
    if (!tc_setup(&t)) return;
    int n, algo[16];
    cudnnStatus_t st[16];
    float tm[16];
    size_t mem[16], wq[16];
    /* forward: get, find, findex */
    for (int mode = 0; mode < 3; mode++) {
        cudnnConvolutionFwdAlgoPerf_t p[16];
        memset(p, 0xab, sizeof p);
        if (mode == 0) TH_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, t.xd, t.wd, t.cd, t.yd, 16, &n, p));
        else if (mode == 1) TH_OK(cudnnFindConvolutionForwardAlgorithm(h, t.xd, t.wd, t.cd, t.yd, 16, &n, p));
        else {
            void *x = th_alloc(h, t.xspan * 4), *w = th_alloc(h, t.wspan * 4), *y = th_alloc(h, t.yspan * 4);
            size_t big = 1 << 20;
            void *ws = th_alloc(h, big);
            TH_OK(cudnnFindConvolutionForwardAlgorithmEx(h, t.xd, x, t.wd, w, t.cd, t.yd, y, 16, &n, p, ws, big));
            /* no workspace: the GEMM entry cannot run */
            cudnnConvolutionFwdAlgoPerf_t q[16];
            int m = 0;
            TH_OK(cudnnFindConvolutionForwardAlgorithmEx(h, t.xd, x, t.wd, w, t.cd, t.yd, y, 16, &m, q, NULL, 0));
            int okq = 0;
            for (int i = 0; i < m; i++) {
                okq += q[i].status == CUDNN_STATUS_SUCCESS;
                if (q[i].status == CUDNN_STATUS_SUCCESS) TH_CHECK(q[i].memory == 0, "FindEx without workspace ran algo %d needing %zu", q[i].algo, q[i].memory);
            }
            if (!th_is_gpu(h)) TH_CHECK(okq == 1, "FindEx without workspace: %d runnable, want 1", okq);
            TH_STATUS(cudnnFindConvolutionForwardAlgorithmEx(h, t.xd, x, t.wd, w, t.cd, t.yd, y, 0, &m, q, ws, big), CUDNN_STATUS_BAD_PARAM);
            TH_STATUS(cudnnFindConvolutionForwardAlgorithmEx(h, t.xd, NULL, t.wd, w, t.cd, t.yd, y, 4, &m, q, ws, big), CUDNN_STATUS_BAD_PARAM);
            th_free(h, x); th_free(h, w); th_free(h, y); th_free(h, ws);
        }
        for (int i = 0; i < n; i++) {
            algo[i] = p[i].algo; st[i] = p[i].status; tm[i] = p[i].time; mem[i] = p[i].memory; wq[i] = 0;
            if (st[i] == CUDNN_STATUS_SUCCESS) {
                TH_OK(cudnnGetConvolutionForwardWorkspaceSize(h, t.xd, t.wd, t.cd, t.yd, p[i].algo, &wq[i]));
                TH_CHECK(p[i].determinism == CUDNN_DETERMINISTIC || p[i].determinism == CUDNN_NON_DETERMINISTIC, "determinism field");
                if (!th_is_gpu(h)) TH_CHECK(p[i].determinism == CUDNN_DETERMINISTIC && p[i].mathType == CUDNN_FMA_MATH, "CPU entries are deterministic FMA");
            }
        }
        check_list(h, mode == 0 ? "fwd get_v7" : mode == 1 ? "fwd find" : "fwd findEx", n, 8, algo, st, tm, mem, wq, mode != 0);
        if (mode == 0 && !th_is_gpu(h))
            TH_CHECK((p[0].algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM && p[1].algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) ||
                         (p[0].algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM && p[1].algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM &&
                          p[2].algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) ||
                         /* shapes where GEMM beats the direct kernel (src/cpu/conv_gemm_pref.c) */
                         (p[0].algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM && p[1].algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM &&
                          p[2].algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM),
                     "CPU heuristic order (IMPLICIT_PRECOMP_GEMM,) GEMM, (IMPLICIT_PRECOMP_GEMM,) IMPLICIT_GEMM");
    }
    /* backward data */
    for (int mode = 0; mode < 3; mode++) {
        cudnnConvolutionBwdDataAlgoPerf_t p[16];
        if (mode == 0) TH_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, t.wd, t.yd, t.cd, t.xd, 16, &n, p));
        else if (mode == 1) TH_OK(cudnnFindConvolutionBackwardDataAlgorithm(h, t.wd, t.yd, t.cd, t.xd, 16, &n, p));
        else {
            void *x = th_alloc(h, t.xspan * 4), *w = th_alloc(h, t.wspan * 4), *y = th_alloc(h, t.yspan * 4);
            size_t big = 1 << 20;
            void *ws = th_alloc(h, big);
            TH_OK(cudnnFindConvolutionBackwardDataAlgorithmEx(h, t.wd, w, t.yd, y, t.cd, t.xd, x, 16, &n, p, ws, big));
            th_free(h, x); th_free(h, w); th_free(h, y); th_free(h, ws);
        }
        for (int i = 0; i < n; i++) {
            algo[i] = p[i].algo; st[i] = p[i].status; tm[i] = p[i].time; mem[i] = p[i].memory; wq[i] = 0;
            if (st[i] == CUDNN_STATUS_SUCCESS) TH_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, t.wd, t.yd, t.cd, t.xd, p[i].algo, &wq[i]));
        }
        check_list(h, mode == 0 ? "bwd-data get_v7" : mode == 1 ? "bwd-data find" : "bwd-data findEx", n, 6, algo, st, tm, mem, wq, mode != 0);
    }
    /* backward filter */
    for (int mode = 0; mode < 3; mode++) {
        cudnnConvolutionBwdFilterAlgoPerf_t p[16];
        if (mode == 0) TH_OK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, t.xd, t.yd, t.cd, t.wd, 16, &n, p));
        else if (mode == 1) TH_OK(cudnnFindConvolutionBackwardFilterAlgorithm(h, t.xd, t.yd, t.cd, t.wd, 16, &n, p));
        else {
            void *x = th_alloc(h, t.xspan * 4), *w = th_alloc(h, t.wspan * 4), *y = th_alloc(h, t.yspan * 4);
            size_t big = 1 << 20;
            void *ws = th_alloc(h, big);
            TH_OK(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, t.xd, x, t.yd, y, t.cd, t.wd, w, 16, &n, p, ws, big));
            th_free(h, x); th_free(h, w); th_free(h, y); th_free(h, ws);
        }
        for (int i = 0; i < n; i++) {
            algo[i] = p[i].algo; st[i] = p[i].status; tm[i] = p[i].time; mem[i] = p[i].memory; wq[i] = 0;
            if (st[i] == CUDNN_STATUS_SUCCESS) TH_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, t.xd, t.yd, t.cd, t.wd, p[i].algo, &wq[i]));
        }
        check_list(h, mode == 0 ? "bwd-filter get_v7" : mode == 1 ? "bwd-filter find" : "bwd-filter findEx", n, 7, algo, st, tm, mem, wq, mode != 0);
    }
    /* truncated list and bad arguments */
    cudnnConvolutionFwdAlgoPerf_t p[16];
    TH_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, t.xd, t.wd, t.cd, t.yd, 1, &n, p));
    TH_CHECK(n == 1, "requested 1, returned %d", n);
    TH_STATUS(cudnnGetConvolutionForwardAlgorithm_v7(h, t.xd, t.wd, t.cd, t.yd, 0, &n, p), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetConvolutionForwardAlgorithm_v7(h, t.xd, t.wd, t.cd, t.yd, 4, NULL, p), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetConvolutionForwardAlgorithm_v7(h, t.xd, t.wd, t.cd, t.yd, 4, &n, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnFindConvolutionForwardAlgorithm(h, t.xd, t.wd, t.cd, t.yd, 4, &n, NULL), CUDNN_STATUS_BAD_PARAM);
    size_t sz;
    TH_STATUS(cudnnGetConvolutionForwardWorkspaceSize(h, t.xd, t.wd, t.cd, t.yd, (cudnnConvolutionFwdAlgo_t)42, &sz), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetConvolutionForwardWorkspaceSize(h, t.xd, t.wd, t.cd, t.yd, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL), CUDNN_STATUS_BAD_PARAM);
    if (!th_is_gpu(h)) {
        TH_STATUS(cudnnGetConvolutionForwardWorkspaceSize(h, t.xd, t.wd, t.cd, t.yd, CUDNN_CONVOLUTION_FWD_ALGO_FFT, &sz), CUDNN_STATUS_NOT_SUPPORTED);
        char msg[512];
        cudnnGetLastErrorString(msg, sizeof msg);
        TH_CHECK(strstr(msg, "conv_fwd__im2col_gemm") != NULL, "NOT_SUPPORTED message names the implemented algorithms: %s", msg);
        /* exact workspace of the column buffer: C*R*S x P floats */
        TH_OK(cudnnGetConvolutionForwardWorkspaceSize(h, t.xd, t.wd, t.cd, t.yd, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, &sz));
        TH_CHECK(sz == (size_t)4 * 9 * 49 * 4, "GEMM workspace %zu", sz);
        TH_OK(cudnnGetConvolutionForwardWorkspaceSize(h, t.xd, t.wd, t.cd, t.yd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, &sz));
        TH_CHECK(sz == 0, "direct workspace %zu", sz);
    }
    tc_destroy(&t);
    /* 1x1 stride-1 unpadded NCHW: GEMM without a column buffer */
    base_case(&t, CUDNN_DATA_FLOAT);
    for (int i = 1; i < 3; i++) { t.flt[i] = 1; t.pad[i] = 0; }
    if (tc_setup(&t) && !th_is_gpu(h)) {
        TH_OK(cudnnGetConvolutionForwardWorkspaceSize(h, t.xd, t.wd, t.cd, t.yd, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, &sz));
        TH_CHECK(sz == 0, "1x1 GEMM workspace %zu, want 0", sz);
    }
    tc_destroy(&t);
}

/* forward call with descriptors possibly replaced; checks status and that y is unchanged */
static void expect_fwd(cudnnHandle_t h, tcase *t, const char *what, cudnnStatus_t want, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd,
                       cudnnTensorDescriptor_t yd, int algo, size_t wsz, int null_what)
{
    tbuf x, w, y;
    tb_init(h, &x, t->xt, t->xspan);
    tb_init(h, &w, t->xt, t->wspan);
    tb_init(h, &y, t->yt, t->yspan + 64);
    tb_fill(&x, -3, 3); tb_fill(&w, -3, 3); tb_fill(&y, -3, 3);
    tb_upload(h, &x); tb_upload(h, &w); tb_upload(h, &y);
    void *ws = th_alloc(h, wsz + 1);
    float a = 1, b = 0;
    cudnnStatus_t st = cudnnConvolutionForward(null_what == 9 ? NULL : h, null_what == 1 ? NULL : &a, xd, null_what == 2 ? NULL : x.d, wd,
                                               null_what == 3 ? NULL : w.d, t->cd, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz,
                                               null_what == 4 ? NULL : &b, yd, null_what == 5 ? NULL : y.d);
    char m[256];
    snprintf(m, sizeof m, "%s", what);
    th_check_status(st, want, m, __FILE__, __LINE__);
    double *got = malloc(sizeof(double) * (size_t)y.n);
    tb_download(h, &y, got);
    TH_CHECK(same(got, y.h, y.n), "%s: output modified on error", what);
    free(got);
    th_free(h, ws);
    tb_free(h, &x); tb_free(h, &w); tb_free(h, &y);
}

static void test_errors(cudnnHandle_t h)
{
    tcase t;
    base_case(&t, CUDNN_DATA_FLOAT);
    if (!tc_setup(&t)) return;
    size_t need = 0;
    TH_OK(cudnnGetConvolutionForwardWorkspaceSize(h, t.xd, t.wd, t.cd, t.yd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, &need));
    int A0 = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    expect_fwd(h, &t, "NULL handle", CUDNN_STATUS_BAD_PARAM, t.xd, t.wd, t.yd, A0, need, 9);
    expect_fwd(h, &t, "NULL alpha", CUDNN_STATUS_BAD_PARAM, t.xd, t.wd, t.yd, A0, need, 1);
    expect_fwd(h, &t, "NULL x", CUDNN_STATUS_BAD_PARAM, t.xd, t.wd, t.yd, A0, need, 2);
    expect_fwd(h, &t, "NULL w", CUDNN_STATUS_BAD_PARAM, t.xd, t.wd, t.yd, A0, need, 3);
    expect_fwd(h, &t, "NULL beta", CUDNN_STATUS_BAD_PARAM, t.xd, t.wd, t.yd, A0, need, 4);
    expect_fwd(h, &t, "NULL y", CUDNN_STATUS_BAD_PARAM, t.xd, t.wd, t.yd, A0, need, 5);
    expect_fwd(h, &t, "NULL xDesc", CUDNN_STATUS_BAD_PARAM, NULL, t.wd, t.yd, A0, need, 0);
    expect_fwd(h, &t, "algo out of range", CUDNN_STATUS_BAD_PARAM, t.xd, t.wd, t.yd, 99, need, 0);
    if (!th_is_gpu(h)) {
        expect_fwd(h, &t, "FFT not implemented on CPU", CUDNN_STATUS_NOT_SUPPORTED, t.xd, t.wd, t.yd, CUDNN_CONVOLUTION_FWD_ALGO_FFT, need, 0);
        size_t g = 0;
        TH_OK(cudnnGetConvolutionForwardWorkspaceSize(h, t.xd, t.wd, t.cd, t.yd, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, &g));
        expect_fwd(h, &t, "workspace too small", CUDNN_STATUS_BAD_PARAM, t.xd, t.wd, t.yd, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, g - 1, 0);
    }
    cudnnTensorDescriptor_t bad;
    cudnnCreateTensorDescriptor(&bad);
    /* wrong output height */
    TH_OK(cudnnSetTensor4dDescriptor(bad, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 6, 8, 7));
    expect_fwd(h, &t, "y dims mismatch", CUDNN_STATUS_BAD_PARAM, t.xd, t.wd, bad, A0, need, 0);
    /* wrong output channels */
    TH_OK(cudnnSetTensor4dDescriptor(bad, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 5, 7, 7));
    expect_fwd(h, &t, "y channels mismatch", CUDNN_STATUS_BAD_PARAM, t.xd, t.wd, bad, A0, need, 0);
    /* overlapping output strides: H stride smaller than W extent */
    TH_OK(cudnnSetTensor4dDescriptorEx(bad, CUDNN_DATA_FLOAT, 2, 6, 7, 7, 6 * 49, 49, 3, 1));
    expect_fwd(h, &t, "overlapping y strides", CUDNN_STATUS_BAD_PARAM, t.xd, t.wd, bad, A0, need, 0);
    /* y type differs */
    TH_OK(cudnnSetTensor4dDescriptor(bad, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, 2, 6, 7, 7));
    expect_fwd(h, &t, "y type differs", CUDNN_STATUS_NOT_SUPPORTED, t.xd, t.wd, bad, A0, need, 0);
    /* input channel mismatch vs filter */
    TH_OK(cudnnSetTensor4dDescriptor(bad, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 5, 7, 7));
    expect_fwd(h, &t, "x channels mismatch", CUDNN_STATUS_BAD_PARAM, bad, t.wd, t.yd, A0, need, 0);
    /* 3-D x with a 2-D problem */
    int d5[5] = {2, 4, 1, 7, 7}, s5[5] = {196, 49, 49, 7, 1};
    TH_OK(cudnnSetTensorNdDescriptor(bad, CUDNN_DATA_FLOAT, 5, d5, s5));
    expect_fwd(h, &t, "rank mismatch", CUDNN_STATUS_BAD_PARAM, bad, t.wd, t.yd, A0, need, 0);
    /* filter of another type */
    cudnnFilterDescriptor_t wbad;
    cudnnCreateFilterDescriptor(&wbad);
    TH_OK(cudnnSetFilter4dDescriptor(wbad, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NCHW, 6, 4, 3, 3));
    expect_fwd(h, &t, "x/w type mismatch", CUDNN_STATUS_BAD_PARAM, t.xd, wbad, t.yd, A0, need, 0);
    cudnnDestroyFilterDescriptor(wbad);
    /* compute type DOUBLE with FLOAT data */
    TH_OK(cudnnSetConvolution2dDescriptor(t.cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_DOUBLE));
    expect_fwd(h, &t, "compute type mismatch", CUDNN_STATUS_NOT_SUPPORTED, t.xd, t.wd, t.yd, A0, need, 0);
    TH_OK(cudnnSetConvolution2dDescriptor(t.cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    /* groups that do not divide */
    TH_OK(cudnnSetConvolutionGroupCount(t.cd, 4));
    expect_fwd(h, &t, "group/filter C mismatch", CUDNN_STATUS_BAD_PARAM, t.xd, t.wd, t.yd, A0, need, 0);
    TH_OK(cudnnSetConvolutionGroupCount(t.cd, 1));
    cudnnDestroyTensorDescriptor(bad);

    /* backward data: overlapping dx, INT8 */
    {
        tbuf x, w, y;
        tb_init(h, &x, CUDNN_DATA_FLOAT, t.xspan);
        tb_init(h, &w, CUDNN_DATA_FLOAT, t.wspan);
        tb_init(h, &y, CUDNN_DATA_FLOAT, t.yspan);
        tb_fill(&x, -3, 3); tb_fill(&w, -3, 3); tb_fill(&y, -3, 3);
        tb_upload(h, &x); tb_upload(h, &w); tb_upload(h, &y);
        float a = 1, b = 0;
        cudnnTensorDescriptor_t ov;
        cudnnCreateTensorDescriptor(&ov);
        TH_OK(cudnnSetTensor4dDescriptorEx(ov, CUDNN_DATA_FLOAT, 2, 4, 7, 7, 49, 7, 7, 1)); /* C and H share stride */
        TH_STATUS(cudnnConvolutionBackwardData(h, &a, t.wd, w.d, t.yd, y.d, t.cd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, NULL, 0, &b, ov, x.d),
                  CUDNN_STATUS_BAD_PARAM);
        TH_STATUS(cudnnConvolutionBackwardData(h, &a, t.wd, w.d, t.yd, NULL, t.cd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, NULL, 0, &b, t.xd, x.d),
                  CUDNN_STATUS_BAD_PARAM);
        TH_STATUS(cudnnConvolutionBackwardFilter(h, &a, t.xd, x.d, t.yd, y.d, t.cd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, NULL, 0, &b, t.wd, NULL),
                  CUDNN_STATUS_BAD_PARAM);
        TH_STATUS(cudnnConvolutionBackwardFilter(h, &a, t.xd, x.d, t.yd, y.d, t.cd, (cudnnConvolutionBwdFilterAlgo_t)7, NULL, 0, &b, t.wd, w.d),
                  CUDNN_STATUS_BAD_PARAM);
        double *got = malloc(sizeof(double) * (size_t)x.n);
        tb_download(h, &x, got);
        TH_CHECK(same(got, x.h, x.n), "dx modified on error");
        free(got);
        got = malloc(sizeof(double) * (size_t)w.n);
        tb_download(h, &w, got);
        TH_CHECK(same(got, w.h, w.n), "dw modified on error");
        free(got);
        cudnnDestroyTensorDescriptor(ov);
        tb_free(h, &x); tb_free(h, &w); tb_free(h, &y);
    }
    tc_destroy(&t);
    /* INT8 backward is not a cuDNN configuration */
    base_case(&t, CUDNN_DATA_INT8);
    if (tc_setup(&t)) {
        size_t sz;
        TH_STATUS(cudnnGetConvolutionBackwardDataWorkspaceSize(h, t.wd, t.yd, t.cd, t.xd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, &sz),
                  CUDNN_STATUS_NOT_SUPPORTED);
        int n;
        cudnnConvolutionBwdFilterAlgoPerf_t p[8];
        TH_STATUS(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, t.xd, t.yd, t.cd, t.wd, 8, &n, p), CUDNN_STATUS_NOT_SUPPORTED);
    }
    tc_destroy(&t);
}

/* y = act(alpha1 conv + alpha2 z + bias) */
static void test_bias_act(cudnnHandle_t h)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_FLOAT};
    for (int it = 0; it < 8; it++) {
        tcase t;
        base_case(&t, types[it % 4]);
        t.mode = it & 1 ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
        if (it == 3) { t.xt = CUDNN_DATA_INT8; t.yt = CUDNN_DATA_FLOAT; t.ct = CUDNN_DATA_INT32; }
        if (!tc_setup(&t)) continue;
        int relu = it % 3 != 2, alias = it % 2 == 0;
        double a1 = it % 2 ? 2 : 1, a2 = it >= 4 ? 0.5 : (it == 1 ? 0 : 1);
        tbuf x, w, y, z, bias;
        tb_init(h, &x, t.xt, t.xspan);
        tb_init(h, &w, t.xt, t.wspan);
        tb_init(h, &y, t.yt, t.yspan);
        tb_init(h, &z, t.yt, t.yspan);
        cudnnDataType_t bt = t.yt == CUDNN_DATA_HALF ? CUDNN_DATA_FLOAT : t.yt;
        tb_init(h, &bias, bt, t.k);
        tb_fill(&x, -3, 3); tb_fill(&w, -3, 3); tb_fill(&bias, -20, 20);
        tb_fill(&z, -4, 4);
        if (alias) memcpy(y.h, z.h, sizeof(double) * (size_t)y.n);
        else tb_fill_poison(&y);
        tb_upload(h, &x); tb_upload(h, &w); tb_upload(h, &y); tb_upload(h, &z); tb_upload(h, &bias);
        cudnnTensorDescriptor_t bd;
        cudnnActivationDescriptor_t ad;
        cudnnCreateTensorDescriptor(&bd);
        cudnnCreateActivationDescriptor(&ad);
        TH_OK(cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, bt, 1, t.k, 1, 1));
        TH_OK(cudnnSetActivationDescriptor(ad, relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY, CUDNN_PROPAGATE_NAN, 0));
        int algo = it % 2 ? CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM : CUDNN_CONVOLUTION_FWD_ALGO_GEMM;
        if (t.xt != CUDNN_DATA_FLOAT && t.xt != CUDNN_DATA_DOUBLE) algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
        size_t wsz = 0;
        cudnnStatus_t st = cudnnGetConvolutionForwardWorkspaceSize(h, t.xd, t.wd, t.cd, t.yd, (cudnnConvolutionFwdAlgo_t)algo, &wsz);
        void *ws = th_alloc(h, wsz + 1);
        float f1 = (float)a1, f2 = (float)a2;
        double d1 = a1, d2 = a2;
        const void *p1 = t.xt == CUDNN_DATA_DOUBLE ? (const void *)&d1 : (const void *)&f1;
        const void *p2 = t.xt == CUDNN_DATA_DOUBLE ? (const void *)&d2 : (const void *)&f2;
        if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnConvolutionBiasActivationForward(h, p1, t.xd, x.d, t.wd, w.d, t.cd, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz, p2, t.yd,
                                                       alias ? y.d : z.d, bd, bias.d, ad, t.yd, y.d);
        if (st == CUDNN_STATUS_NOT_SUPPORTED && th_is_gpu(h)) skipped++;
        else if (TH_OK(st)) {
            ref_conv r = tc_ref(&t);
            double *want = malloc(sizeof(double) * (size_t)y.n), *got = malloc(sizeof(double) * (size_t)y.n);
            memcpy(want, y.h, sizeof(double) * (size_t)y.n);
            ref_conv_fwd(&r, x.h, &t.xl, w.h, &t.wl, want, &t.yl, a1, 0);
            for (int n = 0; n < t.n; n++)
                for (int k = 0; k < t.k; k++)
                    for (int i = 0; i < 49; i++) {
                        int64_t o = ref_conv_off(&t.yl, n, k, 0, i / 7, i % 7);
                        double v = want[o] + a2 * z.h[o] + bias.h[k];
                        want[o] = relu && v < 0 ? 0 : v;
                    }
            tb_download(h, &y, got);
            int d5[5] = {t.n, t.k, 1, 7, 7};
            char what[128];
            snprintf(what, sizeof what, "bias-act %s %s alias=%d algo %d", th_dtype_name(t.xt), relu ? "relu" : "identity", alias, algo);
            double *prior = malloc(sizeof(double) * (size_t)y.n);
            memcpy(prior, y.h, sizeof(double) * (size_t)y.n);
            tc_compare_tensor(what, t.yt, got, want, prior, y.n, &t.yl, d5, th_tolerance("conv", t.yt));
            free(want); free(got); free(prior);
        }
        if (it == 0) {
            /* errors: activation mode, bias shape, z shape; y untouched */
            double *before = malloc(sizeof(double) * (size_t)y.n), *after = malloc(sizeof(double) * (size_t)y.n);
            tb_download(h, &y, before);
            cudnnActivationDescriptor_t sig;
            cudnnCreateActivationDescriptor(&sig);
            TH_OK(cudnnSetActivationDescriptor(sig, CUDNN_ACTIVATION_SIGMOID, CUDNN_PROPAGATE_NAN, 0));
            TH_STATUS(cudnnConvolutionBiasActivationForward(h, p1, t.xd, x.d, t.wd, w.d, t.cd, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz, p2, t.yd,
                                                            y.d, bd, bias.d, sig, t.yd, y.d),
                      CUDNN_STATUS_NOT_SUPPORTED);
            cudnnTensorDescriptor_t bb;
            cudnnCreateTensorDescriptor(&bb);
            TH_OK(cudnnSetTensor4dDescriptor(bb, CUDNN_TENSOR_NCHW, bt, 1, t.k, 2, 1));
            TH_STATUS(cudnnConvolutionBiasActivationForward(h, p1, t.xd, x.d, t.wd, w.d, t.cd, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz, p2, t.yd,
                                                            y.d, bb, bias.d, ad, t.yd, y.d),
                      CUDNN_STATUS_BAD_PARAM);
            TH_OK(cudnnSetTensor4dDescriptor(bb, CUDNN_TENSOR_NCHW, t.yt, 2, t.k, 7, 6));
            TH_STATUS(cudnnConvolutionBiasActivationForward(h, p1, t.xd, x.d, t.wd, w.d, t.cd, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz, p2, bb,
                                                            y.d, bd, bias.d, ad, t.yd, y.d),
                      CUDNN_STATUS_BAD_PARAM);
            TH_STATUS(cudnnConvolutionBiasActivationForward(h, p1, t.xd, x.d, t.wd, w.d, t.cd, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz, NULL, t.yd,
                                                            y.d, bd, bias.d, ad, t.yd, y.d),
                      CUDNN_STATUS_BAD_PARAM);
            tb_download(h, &y, after);
            TH_CHECK(same(before, after, y.n), "bias-act: y modified on error");
            cudnnDestroyTensorDescriptor(bb);
            cudnnDestroyActivationDescriptor(sig);
            free(before); free(after);
        }
        th_free(h, ws);
        cudnnDestroyTensorDescriptor(bd);
        cudnnDestroyActivationDescriptor(ad);
        tb_free(h, &x); tb_free(h, &w); tb_free(h, &y); tb_free(h, &z); tb_free(h, &bias);
        tc_destroy(&t);
    }
}

static void test_bwd_bias(cudnnHandle_t h)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
    for (int it = 0; it < 8; it++) {
        cudnnDataType_t dt = types[it % 4];
        int nsp = it >= 4 ? 3 : 2;
        int d5[5] = {th_randint(1, 3), th_randint(1, 6), nsp == 3 ? th_randint(1, 3) : 1, th_randint(1, 5), th_randint(1, 5)};
        ref_conv_layout yl, bl;
        int st[5], bst[5], dims[5], bdims[5] = {1, d5[1], 1, 1, 1};
        int64_t span = tc_layout(nsp, d5, th_randint(0, 3), 1, st, &yl);
        int64_t bspan = tc_layout(nsp, bdims, LAY_NCHW_GAPS, 1, bst, &bl);
        dims[0] = d5[0]; dims[1] = d5[1];
        for (int i = 0; i < nsp; i++) dims[2 + i] = d5[5 - nsp + i];
        cudnnTensorDescriptor_t yd, bd;
        cudnnCreateTensorDescriptor(&yd);
        cudnnCreateTensorDescriptor(&bd);
        TH_OK(cudnnSetTensorNdDescriptor(yd, dt, nsp + 2, dims, st));
        int bd_dims[5] = {1, d5[1], 1, 1, 1};
        TH_OK(cudnnSetTensorNdDescriptor(bd, dt, nsp + 2, bd_dims, bst));
        tbuf dy, db;
        tb_init(h, &dy, dt, span);
        tb_init(h, &db, dt, bspan);
        /* positive values: a channel sum of mixed signs can be 0 for every channel of a tiny
         * random shape, and an all-zero reference proves nothing */
        tb_fill(&dy, 1, 4);
        double alpha = it & 1 ? 2 : 1, beta = it & 2 ? -1 : 0;
        if (beta == 0) tb_fill_poison(&db);
        else tb_fill(&db, -3, 3);
        tb_upload(h, &dy); tb_upload(h, &db);
        float af = (float)alpha, bf = (float)beta;
        const void *pa = dt == CUDNN_DATA_DOUBLE ? (const void *)&alpha : (const void *)&af;
        const void *pb = dt == CUDNN_DATA_DOUBLE ? (const void *)&beta : (const void *)&bf;
        cudnnStatus_t s = cudnnConvolutionBackwardBias(h, pa, yd, dy.d, pb, bd, db.d);
        if (s == CUDNN_STATUS_NOT_SUPPORTED && th_is_gpu(h)) skipped++;
        else if (TH_OK(s)) {
            double *want = malloc(sizeof(double) * (size_t)db.n), *got = malloc(sizeof(double) * (size_t)db.n);
            memcpy(want, db.h, sizeof(double) * (size_t)db.n);
            int sp[3] = {d5[2], d5[3], d5[4]};
            ref_conv_bwd_bias(d5[0], d5[1], sp, dy.h, &yl, want, bl.s[1], alpha, beta);
            tb_download(h, &db, got);
            int bd5[5] = {1, d5[1], 1, 1, 1};
            tc_compare_tensor("bwd bias", dt, got, want, db.h, db.n, &bl, bd5, th_tolerance("conv", dt));
            free(want); free(got);
        }
        if (it == 0) {
            cudnnTensorDescriptor_t bad;
            cudnnCreateTensorDescriptor(&bad);
            int bb[5] = {1, d5[1] + 1, 1, 1, 1}, bs[5] = {d5[1] + 1, 1, 1, 1, 1};
            TH_OK(cudnnSetTensorNdDescriptor(bad, dt, nsp + 2, bb, bs));
            TH_STATUS(cudnnConvolutionBackwardBias(h, pa, yd, dy.d, pb, bad, db.d), CUDNN_STATUS_BAD_PARAM);
            int ok[5] = {1, d5[1], 1, 1, 1}, os[5] = {d5[1], 1, 1, 1, 1};
            TH_OK(cudnnSetTensorNdDescriptor(bad, CUDNN_DATA_DOUBLE, nsp + 2, ok, os));
            TH_STATUS(cudnnConvolutionBackwardBias(h, pa, yd, dy.d, pb, bad, db.d), CUDNN_STATUS_BAD_PARAM);
            TH_STATUS(cudnnConvolutionBackwardBias(h, NULL, yd, dy.d, pb, bd, db.d), CUDNN_STATUS_BAD_PARAM);
            TH_STATUS(cudnnConvolutionBackwardBias(h, pa, yd, NULL, pb, bd, db.d), CUDNN_STATUS_BAD_PARAM);
            TH_STATUS(cudnnConvolutionBackwardBias(NULL, pa, yd, dy.d, pb, bd, db.d), CUDNN_STATUS_BAD_PARAM);
            cudnnDestroyTensorDescriptor(bad);
        }
        cudnnDestroyTensorDescriptor(yd);
        cudnnDestroyTensorDescriptor(bd);
        tb_free(h, &dy); tb_free(h, &db);
    }
}

/* the column matrix times the filter must equal the convolution */
static void test_im2col(cudnnHandle_t h)
{
    for (int it = 0; it < 4; it++) {
        tcase t;
        tc_random_shape(&t, 1);
        t.g = 1;
        t.c = th_randint(1, 4);
        t.k = th_randint(1, 3);
        t.xt = t.yt = CUDNN_DATA_FLOAT;
        t.ct = CUDNN_DATA_FLOAT;
        t.w_nhwc = 0;
        if (!tc_setup(&t)) continue;
        int64_t P = (int64_t)t.out[0] * t.out[1] * t.out[2], rows = (int64_t)t.c * t.flt[0] * t.flt[1] * t.flt[2];
        tbuf x, col;
        tb_init(h, &x, CUDNN_DATA_FLOAT, t.xspan);
        tb_init(h, &col, CUDNN_DATA_FLOAT, t.n * rows * P);
        tb_fill(&x, -3, 3);
        tb_upload(h, &x);
        cudnnStatus_t s = cudnnIm2Col(h, t.xd, x.d, t.wd, t.cd, col.d);
        if (s == CUDNN_STATUS_NOT_SUPPORTED && th_is_gpu(h)) skipped++;
        else if (TH_OK(s)) {
            double *got = malloc(sizeof(double) * (size_t)col.n);
            tb_download(h, &col, got);
            double *w = malloc(sizeof(double) * (size_t)t.wspan), *want = malloc(sizeof(double) * (size_t)t.yspan);
            double *viacol = malloc(sizeof(double) * (size_t)t.yspan);
            th_fill_int(w, (size_t)t.wspan, -3, 3);
            for (int64_t i = 0; i < t.yspan; i++) want[i] = viacol[i] = 0;
            ref_conv r = tc_ref(&t);
            ref_conv_fwd(&r, x.h, &t.xl, w, &t.wl, want, &t.yl, 1, 0);
            for (int n = 0; n < t.n; n++)
                for (int k = 0; k < t.k; k++)
                    for (int64_t p = 0; p < P; p++) {
                        double s2 = 0;
                        for (int64_t q = 0; q < rows; q++) s2 += w[k * rows + q] * got[(n * rows + q) * P + p];
                        int od = (int)(p / (t.out[1] * t.out[2])), oh = (int)(p / t.out[2] % t.out[1]), ow = (int)(p % t.out[2]);
                        viacol[ref_conv_off(&t.yl, n, k, od, oh, ow)] = s2;
                    }
            int d5[5] = {t.n, t.k, t.out[0], t.out[1], t.out[2]};
            tc_compare_tensor("im2col x filter == conv", CUDNN_DATA_FLOAT, viacol, want, viacol, t.yspan, &t.yl, d5, 1e-9);
            free(got); free(w); free(want); free(viacol);
        }
        TH_STATUS(cudnnIm2Col(h, t.xd, x.d, t.wd, t.cd, NULL), CUDNN_STATUS_BAD_PARAM);
        tb_free(h, &x); tb_free(h, &col);
        tc_destroy(&t);
    }
}

/* CUDA backend: dense NHWC HALF/BFLOAT16 problems with C and K multiples of 8 go first to the
 * mma.sync implicit GEMM (IMPLICIT_PRECOMP_GEMM, TENSOR_OP, no workspace); with C % 8 != 0 the
 * cuBLAS im2col GEMM leads. The CUDA backend needs compute capability 8.0+, so the mma entry
 * always applies there. Numerics of these problems are in test_conv. */
static void test_gpu_order(cudnnHandle_t h)
{
    if (!th_is_gpu(h)) return;
    static const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
    for (int ti = 0; ti < 2; ti++)
        for (int c8 = 0; c8 < 2; c8++) {
            tcase t;
            base_case(&t, types[ti]);
            t.c = c8 ? 16 : 12;
            t.k = 24;
            t.xlay = t.ylay = LAY_NHWC;
            t.w_nhwc = 1;
            if (!tc_setup(&t)) continue;
            cudnnConvolutionFwdAlgoPerf_t pf[8];
            int n = 0;
            if (TH_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, t.xd, t.wd, t.cd, t.yd, 8, &n, pf)) && n > 0) {
                TH_CHECK(pf[0].status == CUDNN_STATUS_SUCCESS, "%s C=%d: first v7 entry not runnable", th_dtype_name(types[ti]), t.c);
                if (c8)
                    TH_CHECK(pf[0].algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM && pf[0].mathType == CUDNN_TENSOR_OP_MATH &&
                                 pf[0].memory == 0,
                             "%s NHWC C=16 K=24: first v7 entry algo %d math %d memory %zu, want the mma implicit GEMM (1, TENSOR_OP, 0)",
                             th_dtype_name(types[ti]), (int)pf[0].algo, (int)pf[0].mathType, pf[0].memory);
                else { /* C % 8 != 0: the mma implicit GEMM on x and w padded to 16 channels in the workspace */
                    size_t need = 0;
                    TH_OK(cudnnGetConvolutionForwardWorkspaceSize(h, t.xd, t.wd, t.cd, t.yd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                                                  &need));
                    TH_CHECK(pf[0].algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM && pf[0].mathType == CUDNN_TENSOR_OP_MATH &&
                                 pf[0].memory > 0 && pf[0].memory == need,
                             "%s NHWC C=12 K=24: first v7 entry algo %d math %d memory %zu (workspace query %zu), want the mma implicit GEMM "
                             "(1, TENSOR_OP, padded x + w bytes)",
                             th_dtype_name(types[ti]), (int)pf[0].algo, (int)pf[0].mathType, pf[0].memory, need);
                    /* one byte short of that workspace: BAD_PARAM, never a silent fallback */
                    if (need > 0) {
                        tbuf x, w, y;
                        tb_init(h, &x, t.xt, t.xspan);
                        tb_init(h, &w, t.xt, t.wspan);
                        tb_init(h, &y, t.yt, t.yspan);
                        tb_fill(&x, -3, 3);
                        tb_fill(&w, -3, 3);
                        tb_fill(&y, -3, 3);
                        tb_upload(h, &x);
                        tb_upload(h, &w);
                        tb_upload(h, &y);
                        void *ws = th_alloc(h, need);
                        const float one = 1.0f, zero = 0.0f;
                        TH_STATUS(cudnnConvolutionForward(h, &one, t.xd, x.d, t.wd, w.d, t.cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                                          ws, need - 1, &zero, t.yd, y.d),
                                  CUDNN_STATUS_BAD_PARAM);
                        size_t needf = 0;
                        TH_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, t.xd, t.yd, t.cd, t.wd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, &needf));
                        TH_CHECK(needf > 0, "%s NHWC C=12 K=24: backward filter ALGO_1 workspace 0, want the padded x + dw bytes",
                                 th_dtype_name(types[ti]));
                        if (needf > 0) {
                            void *wsf = th_alloc(h, needf);
                            TH_STATUS(cudnnConvolutionBackwardFilter(h, &one, t.xd, x.d, t.yd, y.d, t.cd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, wsf,
                                                                     needf - 1, &zero, t.wd, w.d),
                                      CUDNN_STATUS_BAD_PARAM);
                            th_free(h, wsf);
                        }
                        th_free(h, ws);
                        tb_free(h, &x);
                        tb_free(h, &w);
                        tb_free(h, &y);
                    }
                }
            }
            /* backward filter: the mma implicit GEMM (ALGO_1, TENSOR_OP, deterministic; one split
             * here, so no workspace) ahead of im2col + cuBLAS (which needs a column buffer) */
            cudnnConvolutionBwdFilterAlgoPerf_t pw[8];
            n = 0;
            if (c8 && TH_OK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, t.xd, t.yd, t.cd, t.wd, 8, &n, pw)) && n > 0)
                TH_CHECK(pw[0].status == CUDNN_STATUS_SUCCESS && pw[0].algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 &&
                             pw[0].mathType == CUDNN_TENSOR_OP_MATH && pw[0].memory == 0 && pw[0].determinism == CUDNN_DETERMINISTIC,
                         "%s NHWC C=16 K=24: first bwd-filter v7 entry status %d algo %d math %d memory %zu determinism %d, want the mma "
                         "implicit GEMM (1, TENSOR_OP, 0, deterministic)",
                         th_dtype_name(types[ti]), (int)pw[0].status, (int)pw[0].algo, (int)pw[0].mathType, pw[0].memory,
                         (int)pw[0].determinism);
            tc_destroy(&t);
        }
}

int main(void)
{
    th_seed(777);
    cudnnHandle_t h = th_create_handle();
    test_counts(h);
    test_queries(h);
    test_errors(h);
    test_bias_act(h);
    test_bwd_bias(h);
    test_im2col(h);
    test_gpu_order(h);
    printf("skipped (NOT_SUPPORTED on this GPU backend): %d\n", skipped);
    cudnnDestroy(h);
    return th_finish();
}
