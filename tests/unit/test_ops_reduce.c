/* cudnnReduceTensor (+ descriptor, indices/workspace size queries): all
 * nine ops, random reduced-dim sets over 3..6-D tensors, FLOAT/DOUBLE/HALF/BFLOAT16 (and
 * HALF/BFLOAT16 -> FLOAT), layouts, alpha/beta with NaN prefill, FLATTENED 32-bit indices,
 * NaN propagation, error paths; the CPU FLOAT fast path's patterns (fast_case). */
#include "test_ops_util.h"
#include "ops_ref.h"

typedef struct { cudnnDataType_t a, c, comp; } rcombo;
static const rcombo rcombos[] = {
    {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},    {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE},
    {CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_FLOAT},      {CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT},
    {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},     {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},
};

/* A device indices buffer of isz bytes (NULL for 0) filled with -1, and its host copy in *host */
static int32_t *idx_buffer(cudnnHandle_t h, size_t isz, int32_t **host)
{
    if (!isz) return NULL;
    int32_t *idx = th_alloc(h, isz);
    *host = malloc(isz);
    memset(*host, 0xff, isz);
    th_upload(h, idx, *host, isz);
    return idx;
}

static void one_case(cudnnHandle_t h, const rcombo *cb, int op, int iter)
{
    int nd = th_randint(3, 6), adim[8], cdim[8];
    for (int i = 0; i < nd; i++) {
        adim[i] = th_randint(1, nd > 4 ? 3 : 4);
        cdim[i] = th_randint(0, 1) ? 1 : adim[i];
    }
    if (iter % 3 == 0) for (int i = 0; i < nd; i++) cdim[i] = 1; /* full reduction */
    int la = th_randint(0, 3), lc = th_randint(0, 3), prop = iter % 2;
    int with_idx = (op == RR_MIN || op == RR_MAX || op == RR_AMAX);
    static const double ab[4][2] = {{1, 0}, {0.5, 0}, {2, 1}, {-1.5, 0.5}};
    double alpha = ab[iter % 4][0], beta = ab[iter % 4][1];
    cudnnReduceTensorDescriptor_t rd;
    TH_OK(cudnnCreateReduceTensorDescriptor(&rd));
    TH_OK(cudnnSetReduceTensorDescriptor(rd, (cudnnReduceTensorOp_t)op, cb->comp, prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN,
                                         CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES));
    tt A, C;
    tt_make(h, &A, cb->a, nd, adim, la);
    tt_make(h, &C, cb->c, nd, cdim, lc);
    size_t isz = 1234, wsz = 1234;
    TH_OK(cudnnGetReductionIndicesSize(h, rd, A.d, C.d, &isz));
    TH_OK(cudnnGetReductionWorkspaceSize(h, rd, A.d, C.d, &wsz));
    TH_CHECK(isz == (with_idx ? (size_t)C.n * 4 : 0), "indices size %zu for op %d", isz, op);
    TH_CHECK(wsz == 0, "workspace size");
    double *a = dalloc(A.n), *c0 = dalloc(C.n), *got = dalloc(C.n), *want = dalloc(C.n);
    int64_t *widx = malloc(sizeof(int64_t) * (size_t)C.n);
    if (op == RR_MUL || op == RR_MUL_NO_ZEROS) {
        for (int64_t i = 0; i < A.n; i++) a[i] = th_randint(0, 5) == 0 ? (op == RR_MUL_NO_ZEROS ? 0 : 1) : th_uniform(0.8, 1.25) * (th_randint(0, 1) ? 1 : -1);
    } else {
        fill_nz(a, A.n, -9, 9);
    }
    if (with_idx && A.n > 4 && cb->a != CUDNN_DATA_DOUBLE) { a[1] = NAN; a[A.n - 2] = NAN; }
    prior_fill(c0, C.n, beta);
    tt_fill(h, &A, a, 0);
    tt_fill(h, &C, c0, 6);
    int32_t *hidx = NULL, *idx = with_idx ? idx_buffer(h, isz, &hidx) : NULL;
    scal sa = mkscal(alpha, cb->c), sb = mkscal(beta, cb->c);
    TH_OK(cudnnReduceTensor(h, rd, idx, isz, NULL, 0, &sa, A.d, A.dev, &sb, C.d, C.dev));
    tt_read(h, &C, got);
    ref_reduce(op, prop, nd, adim, cdim, a, want, widx);
    for (int64_t i = 0; i < C.n; i++) want[i] = alpha * want[i] + (beta != 0 ? beta * c0[i] : 0);
    char what[200];
    snprintf(what, sizeof what, "ReduceTensor op=%d %s->%s nd=%d %s->%s alpha=%g beta=%g nan=%d", op, th_dtype_name(cb->a),
             th_dtype_name(cb->c), nd, ol_name[la], ol_name[lc], alpha, beta, prop);
    double tol = fmax(th_tolerance("reduce", cb->a), th_tolerance("reduce", cb->c));
    int allnan = 1;
    for (int64_t i = 0; i < C.n; i++) allnan &= isnan(want[i]) || want[i] == 0;
    if (allnan) {
        int same = 1;
        for (int64_t i = 0; i < C.n; i++) same &= (isnan(got[i]) && isnan(want[i])) || got[i] == want[i];
        TH_CHECK(same, "%s (NaN/zero results)", what);
    } else {
        th_compare(what, got, want, (size_t)C.n, tol);
    }
    if (idx) {
        th_sync(h);
        th_download(h, hidx, idx, isz);
        int same = 1;
        for (int64_t i = 0; i < C.n; i++) same &= hidx[i] == widx[i];
        TH_CHECK(same, "%s: flattened indices", what);
        th_free(h, idx);
        free(hidx);
    }
    free(a); free(c0); free(got); free(want); free(widx);
    tt_free(h, &A); tt_free(h, &C);
    cudnnDestroyReduceTensorDescriptor(rd);
}

static void desc_and_errors(cudnnHandle_t h)
{
    cudnnReduceTensorDescriptor_t rd;
    TH_OK(cudnnCreateReduceTensorDescriptor(&rd));
    cudnnReduceTensorOp_t op; cudnnDataType_t ct; cudnnNanPropagation_t np; cudnnReduceTensorIndices_t ri; cudnnIndicesType_t it;
    TH_STATUS(cudnnGetReduceTensorDescriptor(rd, &op, &ct, &np, &ri, &it), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetReduceTensorDescriptor(rd, (cudnnReduceTensorOp_t)9, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_INT8, CUDNN_NOT_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, (cudnnNanPropagation_t)2, CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN, (cudnnReduceTensorIndices_t)2, CUDNN_32BIT_INDICES), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES, (cudnnIndicesType_t)4), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_AMAX, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_64BIT_INDICES));
    TH_OK(cudnnGetReduceTensorDescriptor(rd, &op, &ct, &np, &ri, &it));
    TH_CHECK(op == CUDNN_REDUCE_TENSOR_AMAX && ct == CUDNN_DATA_FLOAT && np == CUDNN_PROPAGATE_NAN && ri == CUDNN_REDUCE_TENSOR_FLATTENED_INDICES &&
                 it == CUDNN_64BIT_INDICES, "reduce descriptor round trip");
    int ad[4] = {2, 3, 4, 5}, cd[4] = {2, 1, 4, 1}, bad[4] = {2, 2, 4, 1};
    tt A, C, Cb, Ch;
    tt_make(h, &A, CUDNN_DATA_FLOAT, 4, ad, OL_NCHW);
    tt_make(h, &C, CUDNN_DATA_FLOAT, 4, cd, OL_NHWC);
    tt_make(h, &Cb, CUDNN_DATA_FLOAT, 4, bad, OL_NCHW);
    tt_make(h, &Ch, CUDNN_DATA_HALF, 4, cd, OL_NCHW);
    double *v = dalloc(A.n);
    fill_nz(v, A.n, -3, 3);
    tt_fill(h, &A, v, 0);
    tt_fill(h, &C, v, 0);
    size_t sz;
    float one = 1, zero = 0;
    int32_t ix[8];
    TH_STATUS(cudnnGetReductionIndicesSize(h, rd, A.d, C.d, &sz), CUDNN_STATUS_NOT_SUPPORTED); /* 64-bit indices */
    TH_STATUS(cudnnReduceTensor(h, rd, ix, sizeof ix, NULL, 0, &one, A.d, A.dev, &zero, C.d, C.dev), CUDNN_STATUS_NOT_SUPPORTED);
    TH_OK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_AMAX, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES));
    TH_STATUS(cudnnReduceTensor(h, rd, ix, 4, NULL, 0, &one, A.d, A.dev, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM); /* too small */
    TH_STATUS(cudnnReduceTensor(h, rd, NULL, 32, NULL, 0, &one, A.d, A.dev, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnReduceTensor(h, rd, ix, sizeof ix, NULL, 0, &one, A.d, A.dev, &zero, Cb.d, Cb.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnReduceTensor(h, rd, ix, sizeof ix, NULL, 0, &one, A.d, A.dev, &zero, Ch.d, Ch.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnReduceTensor(h, rd, ix, sizeof ix, NULL, 0, &one, A.d, NULL, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetReductionWorkspaceSize(h, rd, A.d, C.d, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(tt_unchanged(h, &C), "C changed by a failed cudnnReduceTensor");
    TH_OK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES));
    TH_OK(cudnnGetReductionIndicesSize(h, rd, A.d, C.d, &sz));
    TH_CHECK(sz == 0, "no indices for ADD");
    free(v);
    tt_free(h, &A); tt_free(h, &C); tt_free(h, &Cb); tt_free(h, &Ch);
    TH_OK(cudnnDestroyReduceTensorDescriptor(rd));
}

/* Long reductions (14000 elements per output: the CUDA backend's block-per-output tree path)
 * with many ties and a planted NaN: values, first-occurrence indices, and bitwise-identical
 * results over two runs (determinism). */
static void big_case(cudnnHandle_t h)
{
    int ad[4] = {3, 7, 40, 50}, cd[4] = {3, 1, 1, 1};
    static const int ops[4] = {RR_ADD, RR_MAX, RR_NORM2, RR_AMAX};
    tt A, C;
    tt_make(h, &A, CUDNN_DATA_FLOAT, 4, ad, OL_NHWC);
    tt_make(h, &C, CUDNN_DATA_FLOAT, 4, cd, OL_NCHW);
    double *a = dalloc(A.n), *got = dalloc(C.n), *got2 = dalloc(C.n), *want = dalloc(C.n);
    int64_t widx[3];
    int32_t hidx[3], hidx2[3];
    int32_t *idx = th_alloc(h, sizeof hidx);
    for (int k = 0; k < 4; k++) {
        const int op = ops[k], prop = op == RR_AMAX;
        if (op == RR_ADD || op == RR_NORM2) th_fill_uniform(a, (size_t)A.n, -1, 1);
        else fill_nz(a, A.n, -20, 20);
        if (prop) a[A.n / 3 + 1234] = NAN; /* inside output 1's slice */
        tt_fill(h, &A, a, 0);
        cudnnReduceTensorDescriptor_t rd;
        TH_OK(cudnnCreateReduceTensorDescriptor(&rd));
        TH_OK(cudnnSetReduceTensorDescriptor(rd, (cudnnReduceTensorOp_t)op, CUDNN_DATA_FLOAT, prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN,
                                             CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES));
        size_t isz = 0;
        TH_OK(cudnnGetReductionIndicesSize(h, rd, A.d, C.d, &isz));
        float one = 1, zero = 0;
        TH_OK(cudnnReduceTensor(h, rd, isz ? idx : NULL, isz, NULL, 0, &one, A.d, A.dev, &zero, C.d, C.dev));
        tt_read(h, &C, got);
        if (isz) th_download(h, hidx, idx, isz);
        TH_OK(cudnnReduceTensor(h, rd, isz ? idx : NULL, isz, NULL, 0, &one, A.d, A.dev, &zero, C.d, C.dev));
        tt_read(h, &C, got2);
        if (isz) th_download(h, hidx2, idx, isz);
        ref_reduce(op, prop, 4, ad, cd, a, want, widx);
        char what[120];
        snprintf(what, sizeof what, "ReduceTensor large op=%d", op);
        int same = 1, nanok = 1;
        for (int i = 0; i < 3; i++) {
            same &= memcmp(&got[i], &got2[i], sizeof(double)) == 0 && (!isz || hidx[i] == hidx2[i]);
            if (isnan(want[i])) { nanok &= isnan(got[i]); got[i] = want[i] = 1; }
        }
        TH_CHECK(nanok, "%s: NaN result", what);
        th_compare(what, got, want, 3, th_tolerance("reduce", CUDNN_DATA_FLOAT));
        TH_CHECK(same, "%s: two runs differ", what);
        if (isz) {
            int ok = 1;
            for (int i = 0; i < 3; i++) ok &= hidx[i] == widx[i];
            TH_CHECK(ok, "%s: indices %d %d %d, want %lld %lld %lld", what, hidx[0], hidx[1], hidx[2], (long long)widx[0], (long long)widx[1],
                     (long long)widx[2]);
        }
        cudnnDestroyReduceTensorDescriptor(rd);
    }
    th_free(h, idx);
    free(a); free(got); free(got2); free(want);
    tt_free(h, &A); tt_free(h, &C);
}

/* The CPU backend's FLOAT fast path (src/cpu/reduce_fast.c): dense NCHW or NHWC A (4-D or 5-D, every fourth iter
 * above the 65536 elements where it goes parallel) into a packed NCHW or NHWC C, reduced over the spatial dims
 * (NxCx1x1), N and the spatial dims (1xCx1x1), everything, or a random subset; integer data (ties: the first
 * extreme wins) with NaN/+-inf planted (nan_mode 1), most elements NaN (2, all-NaN groups under both NaN options),
 * FLATTENED indices, beta == 0 over a NaN prior and beta != 0. Inputs are float-exact, so the double reference
 * differs only by summation order. */
static void fast_case(cudnnHandle_t h, int op, int iter, const int *nhwc_dims)
{
    int adim[8], cdim[8];
    int nd = fast_dims(iter, adim), pat = th_randint(0, 4), la = th_randint(0, 1), nan_mode = iter % 3;
    const int lc = th_randint(0, 1), prop = th_randint(0, 1), with_idx = op == RR_MIN || op == RR_MAX || op == RR_AMAX;
    if (nhwc_dims) { /* NHWC A reduced to NxCx1x1 without NaN or inf: C innermost, outputs side by side */
        nd = 4, pat = 0, la = 1, nan_mode = 0;
        for (int i = 0; i < 4; i++) adim[i] = nhwc_dims[i];
    }
    for (int i = 0; i < nd; i++) {
        int keep = pat == 0 ? i < 2 : pat == 1 ? i == 1 : pat == 2 ? 0 : th_randint(0, 1);
        cdim[i] = keep ? adim[i] : 1;
    }
    const double alpha = fast_scale(), beta = iter % 2 ? fast_scale() : 0;
    cudnnReduceTensorDescriptor_t rd;
    TH_OK(cudnnCreateReduceTensorDescriptor(&rd));
    TH_OK(cudnnSetReduceTensorDescriptor(rd, (cudnnReduceTensorOp_t)op, CUDNN_DATA_FLOAT, prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN,
                                         CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES));
    tt A, C;
    tt_make(h, &A, CUDNN_DATA_FLOAT, nd, adim, la);
    tt_make(h, &C, CUDNN_DATA_FLOAT, nd, cdim, lc);
    size_t isz = 0;
    TH_OK(cudnnGetReductionIndicesSize(h, rd, A.d, C.d, &isz));
    double *a = dalloc(A.n), *c0 = dalloc(C.n), *got = dalloc(C.n), *want = dalloc(C.n);
    int64_t *widx = malloc(sizeof(int64_t) * (size_t)C.n);
    if (op == RR_MUL || op == RR_MUL_NO_ZEROS) { /* mostly +-1, so that long products stay in float's range */
        for (int64_t i = 0; i < A.n; i++) {
            const int k = th_randint(0, 60);
            a[i] = k == 0 ? 0 : k == 1 ? (float)th_uniform(0.8, 1.25) : (th_randint(0, 1) ? 1 : -1);
        }
    } else {
        fill_nz(a, A.n, -9, 9);
    }
    static const double specials[3] = {NAN, INFINITY, -INFINITY};
    if (nan_mode == 1)
        for (int k = 0; k < 1 + (int)(A.n / 50); k++) a[th_randint(0, (int)A.n - 1)] = specials[th_randint(0, 2)];
    if (nan_mode == 2)
        for (int64_t i = 0; i < A.n; i++) a[i] = th_randint(0, 9) ? NAN : a[i];
    prior_fill(c0, C.n, beta);
    tt_fill(h, &A, a, 0);
    tt_fill(h, &C, c0, 0);
    int32_t *hidx = NULL, *idx = idx_buffer(h, isz, &hidx);
    scal sa = mkscal(alpha, CUDNN_DATA_FLOAT), sb = mkscal(beta, CUDNN_DATA_FLOAT);
    TH_OK(cudnnReduceTensor(h, rd, idx, isz, NULL, 0, &sa, A.d, A.dev, &sb, C.d, C.dev));
    tt_read(h, &C, got);
    ref_reduce(op, prop, nd, adim, cdim, a, want, widx);
    for (int64_t i = 0; i < C.n; i++) want[i] = alpha * want[i] + (beta != 0 ? beta * c0[i] : 0);
    char what[200];
    snprintf(what, sizeof what, "ReduceTensor fast op=%d nd=%d %dx%dx%dx%d.. pat=%d %s->%s alpha=%g beta=%g nan=%d mode=%d", op, nd, adim[0], adim[1],
             adim[2], adim[3], pat, ol_name[la], ol_name[lc], alpha, beta, prop, nan_mode);
    int special = 1; /* NaN and infinite results must match exactly; the rest within the tolerance */
    for (int64_t i = 0; i < C.n; i++) {
        if (isnan(want[i]) || isinf(want[i]) || isnan(got[i]) || isinf(got[i])) {
            special &= (isnan(want[i]) && isnan(got[i])) || want[i] == got[i];
            got[i] = want[i] = 0;
        }
    }
    TH_CHECK(special, "%s: NaN/inf results", what);
    int finite = 0;
    for (int64_t i = 0; i < C.n; i++) finite |= want[i] != 0;
    if (finite) th_compare(what, got, want, (size_t)C.n, th_tolerance("reduce", CUDNN_DATA_FLOAT));
    for (int64_t i = 0; i < C.n && !finite; i++) finite |= got[i] != 0 ? 2 : 0;
    TH_CHECK(finite != 2, "%s: nonzero results where all are NaN, inf or zero", what);
    TH_CHECK(isz == (with_idx ? (size_t)C.n * 4 : 0), "%s: indices size %zu", what, isz);
    if (idx) {
        th_download(h, hidx, idx, isz);
        int64_t bad = -1;
        for (int64_t i = 0; i < C.n && bad < 0; i++)
            if (hidx[i] != widx[i]) bad = i;
        TH_CHECK(bad < 0, "%s: flattened index %lld is %d, want %lld", what, (long long)bad, bad < 0 ? 0 : hidx[bad], bad < 0 ? 0LL : (long long)widx[bad]);
        th_free(h, idx);
        free(hidx);
    }
    free(a); free(c0); free(got); free(want); free(widx);
    tt_free(h, &A); tt_free(h, &C);
    cudnnDestroyReduceTensorDescriptor(rd);
}

int main(void)
{
    th_seed(0x7ed);
    cudnnHandle_t h = th_create_handle();
    for (int c = 0; c < (int)(sizeof rcombos / sizeof rcombos[0]); c++)
        for (int op = 0; op <= RR_MUL_NO_ZEROS; op++)
            for (int it = 0; it < 6; it++) one_case(h, &rcombos[c], op, it);
    for (int op = 0; op <= RR_MUL_NO_ZEROS; op++)
        for (int it = 0; it < 12; it++) fast_case(h, op, it, NULL);
    /* MIN/MAX/AMAX over long reduced runs with C innermost (src/cpu/reduce_fast.c rd_cols_arg): 3000 elements a
     * column, more than 256 columns (a block and a tail), one image with few columns (split into pieces) */
    static const int col_dims[4][4] = {{2, 37, 50, 60}, {1, 300, 24, 25}, {3, 8, 61, 59}, {1, 5, 200, 210}};
    for (int op = RR_MIN; op <= RR_AMAX; op++)
        for (int k = 0; k < 4; k++) fast_case(h, op, k, col_dims[k]);
    desc_and_errors(h);
    big_case(h);
    cudnnDestroy(h);
    return th_finish();
}
