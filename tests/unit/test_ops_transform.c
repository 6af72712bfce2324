/* Tensor-transform descriptors, cudnnInitTransformDest, cudnnTransformTensorEx (layout change,
 * padding, fold and unfold) and cudnnTransformFilter on the CPU and CUDA backends, against an
 * independent scatter-form reference, plus round trips and error paths; cudnnTransformTensor on
 * the FLOAT layouts and sizes of the CPU backend's fast path (NCHW <-> NHWC transposes) and cases
 * next to them that it leaves to the general path. */
#include "test_ops_util.h"
#include "ops_ref.h"

static const cudnnDataType_t ttypes[5] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_INT8};

static void one_case(cudnnHandle_t h, cudnnDataType_t dt, int iter)
{
    int nb = th_randint(3, 5), sdim[8], pb[8], pa[8], ddim[8];
    unsigned fold[8];
    for (int i = 0; i < nb; i++) {
        sdim[i] = th_randint(1, 4);
        pb[i] = iter % 3 == 0 ? 0 : th_randint(0, 2);
        pa[i] = iter % 3 == 0 ? 0 : th_randint(0, 1);
        if (i >= 2) fold[i - 2] = iter % 2 ? (unsigned)th_randint(1, 3) : 1;
    }
    int lfmt = th_randint(0, 1), ls = th_randint(0, 3);
    cudnnTensorTransformDescriptor_t td;
    TH_OK(cudnnCreateTensorTransformDescriptor(&td));
    TH_OK(cudnnSetTensorTransformDescriptor(td, (uint32_t)nb, lfmt ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, pb, pa, fold, CUDNN_TRANSFORM_FOLD));
    /* expected dest dims */
    int64_t F = 1;
    for (int i = 2; i < nb; i++) F *= fold[i - 2];
    for (int i = 0; i < nb; i++) ddim[i] = sdim[i] + pb[i] + pa[i];
    for (int i = 2; i < nb; i++) ddim[i] = (ddim[i] + (int)fold[i - 2] - 1) / (int)fold[i - 2];
    ddim[1] *= (int)F;
    tt S, D, B;
    tt_make(h, &S, dt, nb, sdim, ls);
    tt_make(h, &D, dt, nb, ddim, lfmt ? OL_NHWC : OL_NCHW);
    /* cudnnInitTransformDest must describe exactly that packed tensor */
    cudnnTensorDescriptor_t init;
    TH_OK(cudnnCreateTensorDescriptor(&init));
    size_t bytes = 0;
    TH_OK(cudnnInitTransformDest(td, S.d, init, &bytes));
    cudnnDataType_t gdt;
    int gnb, gd[8], gs[8];
    TH_OK(cudnnGetTensorNdDescriptor(init, 8, &gdt, &gnb, gd, gs));
    int same = gdt == dt && gnb == nb;
    for (int i = 0; i < nb && same; i++) same = gd[i] == ddim[i] && gs[i] == D.stride[i];
    TH_CHECK(same, "cudnnInitTransformDest dims/strides (nb=%d, fmt=%d)", nb, lfmt);
    TH_CHECK(bytes == D.bytes, "cudnnInitTransformDest size %zu, want %zu", bytes, D.bytes);
    cudnnDestroyTensorDescriptor(init);
    static const double ab[4][2] = {{1, 0}, {2, 0}, {1, 1}, {-1, 0.5}};
    double alpha = ab[iter % 4][0], beta = ab[iter % 4][1];
    if (dt == CUDNN_DATA_INT8) beta = beta == 0.5 ? 1 : beta;
    double *s = dalloc(S.n), *d0 = dalloc(D.n), *got = dalloc(D.n), *want = dalloc(D.n), *back = dalloc(S.n);
    fill_nz(s, S.n, -20, 20);
    prior_fill_t(d0, D.n, beta, dt);
    tt_fill(h, &S, s, 0);
    tt_fill(h, &D, d0, 4);
    scal sa = mkscal(alpha, dt), sb = mkscal(beta, dt);
    TH_OK(cudnnTransformTensorEx(h, td, &sa, S.d, S.dev, &sb, D.d, D.dev));
    tt_read(h, &D, got);
    ref_fold(nb, sdim, pb, pa, fold, s, ddim, want);
    for (int64_t i = 0; i < D.n; i++) want[i] = alpha * want[i] + (beta != 0 ? beta * d0[i] : 0);
    char what[200];
    snprintf(what, sizeof what, "TransformTensorEx FOLD %s nb=%d %s->%s alpha=%g beta=%g", th_dtype_name(dt), nb, ol_name[ls], lfmt ? "NHWC" : "NCHW",
             alpha, beta);
    th_compare(what, got, want, (size_t)D.n, th_tolerance("transform", dt));
    /* UNFOLD with the same parameters inverts FOLD */
    double one_d = 1, zero_d = 0;
    float one_f = 1, zero_f = 0;
    const void *one = dt == CUDNN_DATA_DOUBLE ? (const void *)&one_d : (const void *)&one_f;
    const void *zero = dt == CUDNN_DATA_DOUBLE ? (const void *)&zero_d : (const void *)&zero_f;
    TH_OK(cudnnTransformTensorEx(h, td, one, S.d, S.dev, zero, D.d, D.dev));
    cudnnTensorTransformDescriptor_t ud;
    TH_OK(cudnnCreateTensorTransformDescriptor(&ud));
    TH_OK(cudnnSetTensorTransformDescriptor(ud, (uint32_t)nb, CUDNN_TENSOR_NCHW, pb, pa, fold, CUDNN_TRANSFORM_UNFOLD));
    tt_make(h, &B, dt, nb, sdim, th_randint(0, 3));
    for (int64_t i = 0; i < B.n; i++) back[i] = dt == CUDNN_DATA_INT8 ? 99 : NAN;
    tt_fill(h, &B, back, 4);
    TH_OK(cudnnTransformTensorEx(h, ud, one, D.d, D.dev, zero, B.d, B.dev));
    tt_read(h, &B, back);
    snprintf(what, sizeof what, "TransformTensorEx UNFOLD(FOLD(x)) == x %s nb=%d", th_dtype_name(dt), nb);
    th_compare(what, back, s, (size_t)S.n, 0);
    free(s); free(d0); free(got); free(want); free(back);
    tt_free(h, &S); tt_free(h, &D); tt_free(h, &B);
    cudnnDestroyTensorTransformDescriptor(td);
    cudnnDestroyTensorTransformDescriptor(ud);
}

static void vect_case(cudnnHandle_t h)
{
    int dim[4] = {2, 8, 3, 2};
    cudnnTensorTransformDescriptor_t td;
    TH_OK(cudnnCreateTensorTransformDescriptor(&td));
    TH_OK(cudnnSetTensorTransformDescriptor(td, 4, CUDNN_TENSOR_NCHW_VECT_C, NULL, NULL, NULL, CUDNN_TRANSFORM_FOLD));
    tt S, D;
    tt_make(h, &S, CUDNN_DATA_INT8, 4, dim, OL_NHWC);
    tt_make(h, &D, CUDNN_DATA_INT8x4, 4, dim, OL_VECT);
    cudnnTensorDescriptor_t init;
    TH_OK(cudnnCreateTensorDescriptor(&init));
    size_t bytes;
    TH_OK(cudnnInitTransformDest(td, S.d, init, &bytes));
    cudnnDataType_t gdt;
    int gnb, gd[8], gs[8];
    TH_OK(cudnnGetTensorNdDescriptor(init, 8, &gdt, &gnb, gd, gs));
    TH_CHECK(gdt == CUDNN_DATA_INT8x4 && gnb == 4 && gd[1] == 8 && bytes == D.bytes, "InitTransformDest to NCHW_VECT_C");
    double *s = dalloc(S.n), *got = dalloc(D.n);
    fill_nz(s, S.n, -100, 100);
    tt_fill(h, &S, s, 0);
    float one = 1, zero = 0;
    TH_OK(cudnnTransformTensorEx(h, td, &one, S.d, S.dev, &zero, init, D.dev));
    tt_read(h, &D, got);
    th_compare("TransformTensorEx INT8 NHWC -> INT8x4 NCHW_VECT_C", got, s, (size_t)S.n, 0);
    free(s); free(got);
    cudnnDestroyTensorDescriptor(init);
    tt_free(h, &S); tt_free(h, &D);
    cudnnDestroyTensorTransformDescriptor(td);
}

static void filter_case(cudnnHandle_t h, cudnnDataType_t dt)
{
    int K = th_randint(1, 4), C = th_randint(1, 4), R = th_randint(1, 3), Sx = th_randint(1, 3);
    int pb[4] = {0, 0, 1, 0}, pa[4] = {0, 0, 0, 1};
    cudnnTensorTransformDescriptor_t td;
    TH_OK(cudnnCreateTensorTransformDescriptor(&td));
    TH_OK(cudnnSetTensorTransformDescriptor(td, 4, CUDNN_TENSOR_NHWC, pb, pa, NULL, CUDNN_TRANSFORM_FOLD));
    cudnnFilterDescriptor_t fs, fd;
    TH_OK(cudnnCreateFilterDescriptor(&fs));
    TH_OK(cudnnCreateFilterDescriptor(&fd));
    TH_OK(cudnnSetFilter4dDescriptor(fs, dt, CUDNN_TENSOR_NCHW, K, C, R, Sx));
    TH_OK(cudnnSetFilter4dDescriptor(fd, dt, CUDNN_TENSOR_NHWC, K, C, R + 1, Sx + 1));
    int sdim[4] = {K, C, R, Sx}, ddim[4] = {K, C, R + 1, Sx + 1};
    int64_t sn = (int64_t)K * C * R * Sx, dn = (int64_t)K * C * (R + 1) * (Sx + 1);
    /* KCRS source, KRSC destination; go through tt for conversions */
    tt S, D;
    tt_make(h, &S, dt, 4, sdim, OL_NCHW);
    tt_make(h, &D, dt, 4, ddim, OL_NHWC);
    double *s = dalloc(sn), *d0 = dalloc(dn), *got = dalloc(dn), *want = dalloc(dn);
    fill_nz(s, sn, -9, 9);
    prior_fill_t(d0, dn, 0, dt);
    tt_fill(h, &S, s, 0);
    tt_fill(h, &D, d0, 0);
    scal sa = mkscal(2, dt), sb = mkscal(0, dt);
    TH_OK(cudnnTransformFilter(h, td, &sa, fs, S.dev, &sb, fd, D.dev));
    tt_read(h, &D, got);
    unsigned f1[2] = {1, 1};
    ref_fold(4, sdim, pb, pa, f1, s, ddim, want);
    for (int64_t i = 0; i < dn; i++) want[i] *= 2;
    char what[100];
    snprintf(what, sizeof what, "TransformFilter KCRS -> padded KRSC %s", th_dtype_name(dt));
    th_compare(what, got, want, (size_t)dn, th_tolerance("transform", dt));
    /* wrong destination dims */
    TH_OK(cudnnSetFilter4dDescriptor(fd, dt, CUDNN_TENSOR_NHWC, K, C, R, Sx));
    TH_STATUS(cudnnTransformFilter(h, td, &sa, fs, S.dev, &sb, fd, D.dev), CUDNN_STATUS_BAD_PARAM);
    free(s); free(d0); free(got); free(want);
    tt_free(h, &S); tt_free(h, &D);
    cudnnDestroyFilterDescriptor(fs);
    cudnnDestroyFilterDescriptor(fd);
    cudnnDestroyTensorTransformDescriptor(td);
}

/* cudnnTransformTensor, y = alpha*x + beta*y, on FLOAT tensors where the CPU backend's fast path
 * (src/cpu/tensor_fast.c) applies: NCHW-like <-> NHWC-like (its tiled transpose; 3 cases in 4) or within one family,
 * each tensor packed or with gaps, 4-D and 5-D fast_dims shapes with C and the spatial size as drawn, multiples of
 * 8 and 64, or ragged, random alpha and beta (beta = 0 over a NaN-filled y). fall picks cases the general path must
 * take instead, with the same results: 1 HALF tensors, 2 y with gaps between every dim. */
static void transform_fast_case(cudnnHandle_t h, int iter, int fall)
{
    int dim[8];
    const int nd = fast_dims(iter, dim), shape = iter / 4 % 3;
    if (shape == 1) { /* C a multiple of 8, the spatial size one of 64 */
        dim[1] = 8 * th_randint(1, 5);
        dim[nd - 1] = 8;
        dim[nd - 2] = 8 * th_randint(1, 2);
    } else if (shape == 2) { /* neither a multiple of 8 */
        dim[1] = 8 * th_randint(1, 4) + th_randint(1, 7);
        dim[nd - 1] |= 1;
        dim[nd - 2] |= 1;
    }
    const int fx = th_randint(0, 1), fy = iter % 4 == 1 ? fx : !fx;
    const int lx = fast_layout(fx, th_randint(0, 1)), ly = fall == 2 ? OL_PADDED : fast_layout(fy, th_randint(0, 1));
    const cudnnDataType_t dt = fall == 1 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    const double alpha = fast_scale(), beta = iter % 5 < 2 ? 0 : fast_scale();
    tt X, Y;
    tt_make(h, &X, dt, nd, dim, lx);
    tt_make(h, &Y, dt, nd, dim, ly);
    double *x = dalloc(X.n), *y0 = dalloc(Y.n), *got = dalloc(Y.n), *want = dalloc(Y.n);
    th_fill_uniform(x, (size_t)X.n, -4, 4);
    prior_fill(y0, Y.n, beta);
    tt_fill(h, &X, x, 0);
    tt_fill(h, &Y, y0, 11);
    scal sa = mkscal(alpha, dt), sb = mkscal(beta, dt);
    TH_OK(cudnnTransformTensor(h, &sa, X.d, X.dev, &sb, Y.d, Y.dev));
    tt_read(h, &Y, got);
    for (int64_t i = 0; i < Y.n; i++) want[i] = alpha * x[i] + (beta != 0 ? beta * y0[i] : 0);
    char what[200];
    snprintf(what, sizeof what, "TransformTensor %s %s -> %s nd=%d %dx%dx..(%lld) alpha=%g beta=%g", th_dtype_name(dt), ol_name[lx], ol_name[ly],
             nd, dim[0], dim[1], (long long)Y.n, alpha, beta);
    th_compare(what, got, want, (size_t)Y.n, th_tolerance("transform", dt));
    free(x); free(y0); free(got); free(want);
    tt_free(h, &X); tt_free(h, &Y);
}

static void desc_and_errors(cudnnHandle_t h)
{
    cudnnTensorTransformDescriptor_t td;
    TH_OK(cudnnCreateTensorTransformDescriptor(&td));
    int32_t pb[5] = {0, 1, 2, 0, 1}, pa[5] = {1, 0, 0, 2, 0}, neg[5] = {0, -1, 0, 0, 0}, gpb[5], gpa[5];
    uint32_t fold[3] = {1, 2, 3}, bad[3] = {1, 0, 1}, gf[3];
    cudnnTensorFormat_t fmt;
    cudnnFoldingDirection_t dir;
    TH_STATUS(cudnnGetTensorTransformDescriptor(td, 5, &fmt, gpb, gpa, gf, &dir), CUDNN_STATUS_BAD_PARAM); /* unset */
    TH_STATUS(cudnnSetTensorTransformDescriptor(td, 2, CUDNN_TENSOR_NCHW, NULL, NULL, NULL, CUDNN_TRANSFORM_FOLD), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetTensorTransformDescriptor(td, 9, CUDNN_TENSOR_NCHW, NULL, NULL, NULL, CUDNN_TRANSFORM_FOLD), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetTensorTransformDescriptor(td, 5, (cudnnTensorFormat_t)3, pb, pa, fold, CUDNN_TRANSFORM_FOLD), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetTensorTransformDescriptor(td, 5, CUDNN_TENSOR_NCHW, neg, pa, fold, CUDNN_TRANSFORM_FOLD), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetTensorTransformDescriptor(td, 5, CUDNN_TENSOR_NCHW, pb, pa, bad, CUDNN_TRANSFORM_FOLD), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetTensorTransformDescriptor(td, 5, CUDNN_TENSOR_NCHW, pb, pa, fold, (cudnnFoldingDirection_t)2), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetTensorTransformDescriptor(td, 5, CUDNN_TENSOR_NHWC, pb, pa, fold, CUDNN_TRANSFORM_UNFOLD));
    TH_OK(cudnnGetTensorTransformDescriptor(td, 5, &fmt, gpb, gpa, gf, &dir));
    int same = fmt == CUDNN_TENSOR_NHWC && dir == CUDNN_TRANSFORM_UNFOLD;
    for (int i = 0; i < 5; i++) same &= gpb[i] == pb[i] && gpa[i] == pa[i];
    for (int i = 0; i < 3; i++) same &= gf[i] == fold[i];
    TH_CHECK(same, "transform descriptor round trip");
    TH_STATUS(cudnnGetTensorTransformDescriptor(td, 4, &fmt, gpb, gpa, gf, &dir), CUDNN_STATUS_BAD_PARAM);
    /* UNFOLD needs C divisible by the fold product (6) */
    int d5[5] = {1, 4, 2, 2, 2};
    tt S;
    tt_make(h, &S, CUDNN_DATA_FLOAT, 5, d5, OL_NCHW);
    cudnnTensorDescriptor_t init;
    TH_OK(cudnnCreateTensorDescriptor(&init));
    size_t bytes = 0;
    TH_STATUS(cudnnInitTransformDest(td, S.d, init, &bytes), CUDNN_STATUS_BAD_PARAM);
    int d4[4] = {1, 6, 2, 2};
    tt S4, D4;
    tt_make(h, &S4, CUDNN_DATA_FLOAT, 4, d4, OL_NCHW);
    tt_make(h, &D4, CUDNN_DATA_FLOAT, 4, d4, OL_NCHW);
    TH_STATUS(cudnnInitTransformDest(td, S4.d, init, &bytes), CUDNN_STATUS_BAD_PARAM); /* rank differs from nbDims */
    TH_OK(cudnnSetTensorTransformDescriptor(td, 4, CUDNN_TENSOR_NCHW, NULL, NULL, NULL, CUDNN_TRANSFORM_FOLD));
    TH_STATUS(cudnnInitTransformDest(td, S4.d, init, NULL), CUDNN_STATUS_BAD_PARAM);
    double *v = dalloc(D4.n);
    fill_nz(v, D4.n, -3, 3);
    tt_fill(h, &D4, v, 0);
    float one = 1, zero = 0;
    TH_STATUS(cudnnTransformTensorEx(h, td, &one, S.d, S.dev, &zero, D4.d, D4.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnTransformTensorEx(h, NULL, &one, S4.d, S4.dev, &zero, D4.d, D4.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnTransformTensorEx(h, td, &one, S4.d, NULL, &zero, D4.d, D4.dev), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(tt_unchanged(h, &D4), "dest changed by a failed cudnnTransformTensorEx");
    free(v);
    cudnnDestroyTensorDescriptor(init);
    tt_free(h, &S); tt_free(h, &S4); tt_free(h, &D4);
    TH_OK(cudnnDestroyTensorTransformDescriptor(td));
    TH_OK(cudnnDestroyTensorTransformDescriptor(NULL));
}

/* The fold's channel order as NVIDIA's cuDNN 9.19 produced it on an H200 (tests/compat probe):
 * x = 0..47 as 1x2x4x6 NCHW, folds {2, 2} and {2, 3}; the destination channel is
 * phase * C + c with phase = h_phase * f_w + w_phase. Pinned here independently of ref_fold. */
static void fold_nvidia_order(cudnnHandle_t h)
{
    static const double want22[48] = {0, 2, 4, 12, 14, 16, 24, 26, 28, 36, 38, 40, 1, 3, 5, 13, 15, 17, 25, 27, 29, 37, 39, 41,
                                      6, 8, 10, 18, 20, 22, 30, 32, 34, 42, 44, 46, 7, 9, 11, 19, 21, 23, 31, 33, 35, 43, 45, 47};
    static const double want23[48] = {0, 3, 12, 15, 24, 27, 36, 39, 1, 4, 13, 16, 25, 28, 37, 40, 2, 5, 14, 17, 26, 29, 38, 41,
                                      6, 9, 18, 21, 30, 33, 42, 45, 7, 10, 19, 22, 31, 34, 43, 46, 8, 11, 20, 23, 32, 35, 44, 47};
    int sdim[4] = {1, 2, 4, 6}, pz[4] = {0, 0, 0, 0};
    for (int v = 0; v < 2; v++) {
        unsigned fold[2] = {2, v ? 3u : 2u};
        int ddim[4] = {1, v ? 12 : 8, 2, v ? 2 : 3};
        tt S, D;
        tt_make(h, &S, CUDNN_DATA_FLOAT, 4, sdim, OL_NCHW);
        tt_make(h, &D, CUDNN_DATA_FLOAT, 4, ddim, OL_NCHW);
        double x[48], got[48];
        for (int i = 0; i < 48; i++) x[i] = i;
        tt_fill(h, &S, x, 0);
        cudnnTensorTransformDescriptor_t td;
        TH_OK(cudnnCreateTensorTransformDescriptor(&td));
        TH_OK(cudnnSetTensorTransformDescriptor(td, 4, CUDNN_TENSOR_NCHW, pz, pz, fold, CUDNN_TRANSFORM_FOLD));
        float one = 1, zero = 0;
        TH_OK(cudnnTransformTensorEx(h, td, &one, S.d, S.dev, &zero, D.d, D.dev));
        tt_read(h, &D, got);
        th_compare(v ? "fold 2x3 channel order = NVIDIA's" : "fold 2x2 channel order = NVIDIA's", got, v ? want23 : want22, 48,
                   th_tolerance("transform", CUDNN_DATA_FLOAT));
        cudnnDestroyTensorTransformDescriptor(td);
        tt_free(h, &S);
        tt_free(h, &D);
    }
}

int main(void)
{
    th_seed(0x7f0);
    cudnnHandle_t h = th_create_handle();
    for (int t = 0; t < 5; t++)
        for (int it = 0; it < 12; it++) one_case(h, ttypes[t], it);
    vect_case(h);
    fold_nvidia_order(h);
    for (int t = 0; t < 5; t++) filter_case(h, ttypes[t]);
    desc_and_errors(h);
    for (int it = 0; it < 24; it++) transform_fast_case(h, it, 0);
    for (int fall = 1; fall <= 2; fall++)
        for (int it = 0; it < 8; it++) transform_fast_case(h, it, fall);
    cudnnDestroy(h);
    return th_finish();
}
