/* cudnnAddTensor: C = alpha*A + beta*C with A broadcast by size-1 dims, every data type and
 * layout, 3..5 dims, NaN prefill for beta = 0, error paths; then FLOAT tensors of the shapes and
 * layouts the CPU backend's fast path takes (in place, threaded sizes) and cases next to them that
 * it leaves to the general path. Runs on both backends. */
#include "test_ops_util.h"
#include "ops_ref.h"

static const cudnnDataType_t add_types[5] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_INT8};

static void one_case(cudnnHandle_t h, cudnnDataType_t dt, int iter)
{
    int nd = th_randint(3, 5), cdim[8], adim[8];
    for (int i = 0; i < nd; i++) {
        cdim[i] = th_randint(1, 5);
        adim[i] = th_randint(0, 2) == 0 ? 1 : cdim[i];
    }
    if (iter % 4 == 0) { for (int i = 0; i < nd; i++) adim[i] = i == 1 ? cdim[1] : 1; } /* bias */
    int la = th_randint(0, 3), lc = th_randint(0, 3);
    int is_int = dt == CUDNN_DATA_INT8;
    static const double ab[4][2] = {{1, 0}, {0.5, 0}, {2, 1}, {-1.5, 0.5}};
    double alpha = ab[iter % 4][0], beta = ab[iter % 4][1];
    if (is_int) { alpha = iter % 2 ? 2 : 1; beta = iter % 3 ? 1 : 0; }
    tt A, C;
    tt_make(h, &A, dt, nd, adim, la);
    tt_make(h, &C, dt, nd, cdim, lc);
    double *a = dalloc(A.n), *c0 = dalloc(C.n), *got = dalloc(C.n), *want = dalloc(C.n);
    fill_nz(a, A.n, -3, 3);
    prior_fill_t(c0, C.n, beta, dt);
    tt_fill(h, &A, a, 0);
    tt_fill(h, &C, c0, 77);
    scal sa = mkscal(alpha, dt), sb = mkscal(beta, dt);
    TH_OK(cudnnAddTensor(h, &sa, A.d, A.dev, &sb, C.d, C.dev));
    tt_read(h, &C, got);
    ref_broadcast(nd, adim, cdim, a, want);
    for (int64_t i = 0; i < C.n; i++) want[i] = alpha * want[i] + (beta != 0 ? beta * c0[i] : 0);
    char what[160];
    snprintf(what, sizeof what, "AddTensor %s nd=%d A:%s C:%s alpha=%g beta=%g", th_dtype_name(dt), nd, ol_name[la], ol_name[lc], alpha, beta);
    th_compare(what, got, want, (size_t)C.n, th_tolerance("add", dt));
    free(a); free(c0); free(got); free(want);
    tt_free(h, &A);
    tt_free(h, &C);
}

/* The CPU backend's FLOAT fast path (src/cpu/tensor_fast.c) at fast_dims shapes: A and C NCHW-like or NHWC-like,
 * each packed or with gaps, A of every broadcast kind, random alpha and beta (beta = 0 over a NaN-filled C), A
 * being C itself. fall picks cases the general path must take instead, with the same results: 1 A constant
 * over the last dim only, 2 HALF tensors. */
static void add_fast_case(cudnnHandle_t h, int iter, int fall)
{
    int cdim[8], adim[8];
    const int nd = fast_dims(iter, cdim), k = fall == 1 ? FAST_BCAST_PARTIAL : iter / 4 % FAST_BCAST_KINDS;
    if (fall == 1) cdim[nd - 1] += cdim[nd - 1] == 1, cdim[nd - 2] += cdim[nd - 2] == 1; /* A then really partial */
    fast_bcast_dims(nd, cdim, k, adim);
    const int nhwc = th_randint(0, 1), inplace = k == 0 && iter / 2 % 2, lc = fast_layout(nhwc, th_randint(0, 1));
    const int la = inplace ? lc : fast_layout(nhwc, th_randint(0, 1));
    const cudnnDataType_t dt = fall == 2 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    const double alpha = fast_scale(), beta = iter % 5 == 1 ? 0 : fast_scale();
    tt A, C;
    tt_make(h, &A, dt, nd, adim, la);
    tt_make(h, &C, dt, nd, cdim, lc);
    double *a = dalloc(A.n), *c0 = dalloc(C.n), *got = dalloc(C.n), *want = dalloc(C.n);
    th_fill_uniform(a, (size_t)A.n, -4, 4);
    tt_fill(h, &A, a, 0);
    prior_fill(c0, C.n, beta);
    if (inplace) memcpy(c0, a, sizeof(double) * (size_t)C.n);
    tt_fill(h, &C, c0, 77);
    scal sa = mkscal(alpha, dt), sb = mkscal(beta, dt);
    TH_OK(cudnnAddTensor(h, &sa, A.d, inplace ? C.dev : A.dev, &sb, C.d, C.dev));
    tt_read(h, &C, got);
    ref_broadcast(nd, adim, cdim, a, want);
    for (int64_t i = 0; i < C.n; i++) want[i] = alpha * want[i] + (beta != 0 ? beta * c0[i] : 0);
    char what[200];
    snprintf(what, sizeof what, "AddTensor fast-path shapes %s nd=%d %dx%dx..(%lld) A kind %d A:%s C:%s in place %d alpha=%g beta=%g",
             th_dtype_name(dt), nd, cdim[0], cdim[1], (long long)C.n, k, ol_name[la], ol_name[lc], inplace, alpha, beta);
    th_compare(what, got, want, (size_t)C.n, th_tolerance("add", dt));
    free(a); free(c0); free(got); free(want);
    tt_free(h, &A);
    tt_free(h, &C);
}

static void errors(cudnnHandle_t h)
{
    int d4[4] = {2, 3, 4, 5}, bad[4] = {2, 2, 4, 5}, d3[3] = {2, 3, 4}, d6[6] = {1, 2, 1, 2, 1, 2};
    tt A, C, B, A3, A6, C6, Ah;
    tt_make(h, &A, CUDNN_DATA_FLOAT, 4, d4, OL_NCHW);
    tt_make(h, &C, CUDNN_DATA_FLOAT, 4, d4, OL_NCHW);
    tt_make(h, &B, CUDNN_DATA_FLOAT, 4, bad, OL_NCHW);
    tt_make(h, &A3, CUDNN_DATA_FLOAT, 3, d3, OL_NCHW);
    tt_make(h, &A6, CUDNN_DATA_FLOAT, 6, d6, OL_NCHW);
    tt_make(h, &C6, CUDNN_DATA_FLOAT, 6, d6, OL_NCHW);
    tt_make(h, &Ah, CUDNN_DATA_HALF, 4, d4, OL_NCHW);
    double *v = dalloc(C.n);
    th_fill_int(v, (size_t)C.n, -3, 3);
    tt_fill(h, &A, v, 0);
    tt_fill(h, &C, v, 0);
    float one = 1, zero = 0;
    TH_STATUS(cudnnAddTensor(h, &one, B.d, B.dev, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM);   /* dim 1: 2 vs 3 */
    TH_STATUS(cudnnAddTensor(h, &one, A3.d, A3.dev, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM); /* rank */
    TH_STATUS(cudnnAddTensor(h, &one, Ah.d, Ah.dev, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM); /* type */
    TH_STATUS(cudnnAddTensor(h, &one, A6.d, A6.dev, &zero, C6.d, C6.dev), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnAddTensor(h, NULL, A.d, A.dev, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnAddTensor(h, &one, A.d, NULL, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnAddTensor(h, &one, A.d, A.dev, &zero, C.d, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnAddTensor(h, &one, NULL, A.dev, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnAddTensor(NULL, &one, A.d, A.dev, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(tt_unchanged(h, &C), "C changed by a failed cudnnAddTensor");
    free(v);
    tt_free(h, &A); tt_free(h, &C); tt_free(h, &B); tt_free(h, &A3); tt_free(h, &A6); tt_free(h, &C6); tt_free(h, &Ah);
}

int main(void)
{
    th_seed(0xadd7e5);
    cudnnHandle_t h = th_create_handle();
    for (int t = 0; t < 5; t++)
        for (int it = 0; it < 24; it++) one_case(h, add_types[t], it);
    errors(h);
    for (int it = 0; it < 28; it++) add_fast_case(h, it, 0);
    for (int fall = 1; fall <= 2; fall++)
        for (int it = 0; it < 8; it++) add_fast_case(h, it, fall);
    cudnnDestroy(h);
    return th_finish();
}
