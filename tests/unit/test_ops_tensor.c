/* cudnnOpTensor (+ descriptor), cudnnSetTensor, cudnnScaleTensor, cudnnTransformTensor on the
 * CPU and CUDA backends: every op and type combination cuDNN lists, broadcasting of B, layouts via
 * strides, NaN prefill for beta = 0, NaN propagation of MIN/MAX, error paths; then FLOAT tensors of
 * the shapes and layouts the CPU backend's fast path takes (in place, threaded sizes) and the cases
 * next to them that it leaves to the general path. */
#include <time.h>
#include "test_ops_util.h"
#include "ops_ref.h"

typedef struct { cudnnDataType_t ab, c, comp; } combo;
static const combo combos[] = {
    {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},       {CUDNN_DATA_INT8, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},
    {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},        {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},
    {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE},    {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_FLOAT},
    {CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_FLOAT},         {CUDNN_DATA_INT8, CUDNN_DATA_INT8, CUDNN_DATA_FLOAT},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, CUDNN_DATA_FLOAT},        {CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT},
    {CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT},
};
#define NCOMBO ((int)(sizeof combos / sizeof combos[0]))

static void op_case(cudnnHandle_t h, const combo *cb, int op, int iter)
{
    int nd = th_randint(3, 5), cdim[8], bdim[8];
    for (int i = 0; i < nd; i++) {
        cdim[i] = th_randint(1, 4);
        bdim[i] = th_randint(0, 2) == 0 ? 1 : cdim[i];
    }
    int la = th_randint(0, 3), lb = th_randint(0, 3), lc = th_randint(0, 3);
    int int_out = cb->c == CUDNN_DATA_INT8 || cb->ab == CUDNN_DATA_INT8;
    static const double al[4][3] = {{1, 1, 0}, {0.5, 2, 0}, {2, -1, 1}, {-1.5, 0.5, 0.5}};
    double a1 = al[iter % 4][0], a2 = al[iter % 4][1], beta = al[iter % 4][2];
    if (int_out) { a1 = iter % 2 ? 2 : 1; a2 = iter % 3 ? -1 : 1; beta = iter % 2; }
    if (op == RO_SQRT) a1 = fabs(a1);
    int prop = iter % 2;
    cudnnOpTensorDescriptor_t od;
    TH_OK(cudnnCreateOpTensorDescriptor(&od));
    TH_OK(cudnnSetOpTensorDescriptor(od, (cudnnOpTensorOp_t)op, cb->comp, prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN));
    tt A, B, C;
    tt_make(h, &A, cb->ab, nd, cdim, la);
    tt_make(h, &B, cb->ab, nd, bdim, lb);
    tt_make(h, &C, cb->c, nd, cdim, lc);
    double *a = dalloc(A.n), *b = dalloc(B.n), *bb = dalloc(C.n), *c0 = dalloc(C.n), *got = dalloc(C.n), *want = dalloc(C.n);
    prior_fill_t(c0, C.n, beta, cb->c);
    for (int tries = 0;; tries++) {
        if (op == RO_SQRT) { th_fill_int(a, (size_t)A.n, 0, 16); a[0] = 9; }
        else fill_nz(a, A.n, -3, 3);
        fill_nz(b, B.n, -3, 3);
        /* NaN propagation of MIN/MAX on float inputs */
        if ((op == RO_MIN || op == RO_MAX) && cb->ab != CUDNN_DATA_INT8 && cb->c != CUDNN_DATA_INT8 && A.n > 1) a[A.n / 2] = NAN;
        ref_broadcast(nd, bdim, cdim, b, bb);
        int nz = 0;
        for (int64_t i = 0; i < C.n; i++) {
            want[i] = ref_op(op, prop, a1 * a[i], a2 * bb[i]) + (beta != 0 ? beta * c0[i] : 0);
            if (cb->c == CUDNN_DATA_INT8 && !isnan(want[i])) want[i] = fmax(-128, fmin(127, rint(want[i])));
            nz |= want[i] != 0;
        }
        if (nz || tries > 50) break;
    }
    tt_fill(h, &A, a, 0);
    tt_fill(h, &B, b, 0);
    tt_fill(h, &C, c0, 55);
    scal s1 = mkscal(a1, cb->c), s2 = mkscal(a2, cb->c), sb = mkscal(beta, cb->c);
    TH_OK(cudnnOpTensor(h, od, &s1, A.d, A.dev, &s2, B.d, B.dev, &sb, C.d, C.dev));
    tt_read(h, &C, got);
    char what[200];
    snprintf(what, sizeof what, "OpTensor op=%d %s->%s nd=%d %s/%s/%s a1=%g a2=%g beta=%g nan=%d", op, th_dtype_name(cb->ab),
             th_dtype_name(cb->c), nd, ol_name[la], ol_name[lb], ol_name[lc], a1, a2, beta, prop);
    th_compare(what, got, want, (size_t)C.n, fmax(th_tolerance("op", cb->ab), th_tolerance("op", cb->c)));
    free(a); free(b); free(bb); free(c0); free(got); free(want);
    tt_free(h, &A); tt_free(h, &B); tt_free(h, &C);
    cudnnDestroyOpTensorDescriptor(od);
}

/* The CPU backend's FLOAT fast path (src/cpu/tensor_fast.c) at fast_dims shapes: A, B and C NCHW-like or NHWC-like
 * (one family), each packed or with gaps, B of every broadcast kind, random alpha1/alpha2/beta (beta = 0 over a
 * NaN-filled C), in place (A is C; B is C), MIN/MAX with NaN in A and B under both NaN options. fall picks cases
 * the general path must take instead, with the same results: 1 A in the other family than C, 2 B constant over
 * the last dim only, 3 HALF A and B (compute type FLOAT) into a HALF or FLOAT C. */
static void op_fast_case(cudnnHandle_t h, int op, int iter, int fall)
{
    int dim[8], bdim[8];
    const int nd = fast_dims(iter, dim), k = fall == 2 ? FAST_BCAST_PARTIAL : iter / 4 % FAST_BCAST_KINDS;
    if (fall == 2) dim[nd - 1] += dim[nd - 1] == 1, dim[nd - 2] += dim[nd - 2] == 1; /* B then really partial */
    fast_bcast_dims(nd, dim, k, bdim);
    const int prop = (iter ^ iter / 8) % 2, nhwc = th_randint(0, 1);
    /* in place: 1 A is C, 2 B is C (B not broadcast) */
    const int inplace = fall == 1 || fall == 3 ? 0 : k == 0 ? iter % 3 : iter / 2 % 3 == 1;
    const int lc = fast_layout(nhwc, th_randint(0, 1)), la = inplace == 1 ? lc : fast_layout(fall == 1 ? !nhwc : nhwc, th_randint(0, 1));
    const int lb = inplace == 2 ? lc : fast_layout(nhwc, th_randint(0, 1));
    const cudnnDataType_t ab = fall == 3 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT, ct = fall == 3 && iter % 2 ? CUDNN_DATA_FLOAT : ab;
    double a1 = fast_scale(), a2 = fast_scale(), beta = iter % 5 == 1 ? 0 : fast_scale();
    if (op == RO_SQRT) a1 = fabs(a1);
    cudnnOpTensorDescriptor_t od;
    TH_OK(cudnnCreateOpTensorDescriptor(&od));
    TH_OK(cudnnSetOpTensorDescriptor(od, (cudnnOpTensorOp_t)op, CUDNN_DATA_FLOAT, prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN));
    tt A, B, C;
    tt_make(h, &A, ab, nd, dim, la);
    tt_make(h, &B, ab, nd, bdim, lb);
    tt_make(h, &C, ct, nd, dim, lc);
    double *a = dalloc(A.n), *b = dalloc(B.n), *bb = dalloc(C.n), *c0 = dalloc(C.n), *got = dalloc(C.n), *want = dalloc(C.n);
    th_fill_uniform(a, (size_t)A.n, op == RO_SQRT ? 0 : -4, 4);
    th_fill_uniform(b, (size_t)B.n, -4, 4);
    if (op == RO_MIN || op == RO_MAX) { /* NaN in about one element in 8 of each operand */
        for (int64_t i = 0; i < A.n; i++) if (th_randint(0, 7) == 0) a[i] = NAN;
        for (int64_t i = 0; i < B.n; i++) if (th_randint(0, 7) == 0) b[i] = NAN;
    }
    tt_fill(h, &A, a, 0);
    tt_fill(h, &B, b, 0);
    prior_fill(c0, C.n, beta);
    if (inplace) memcpy(c0, inplace == 1 ? a : b, sizeof(double) * (size_t)C.n);
    tt_fill(h, &C, c0, 55);
    ref_broadcast(nd, bdim, dim, b, bb);
    for (int64_t i = 0; i < C.n; i++) want[i] = ref_op(op, prop, a1 * a[i], a2 * bb[i]) + (beta != 0 ? beta * c0[i] : 0);
    scal s1 = mkscal(a1, ct), s2 = mkscal(a2, ct), sb = mkscal(beta, ct);
    TH_OK(cudnnOpTensor(h, od, &s1, A.d, inplace == 1 ? C.dev : A.dev, &s2, B.d, inplace == 2 ? C.dev : B.dev, &sb, C.d, C.dev));
    tt_read(h, &C, got);
    char what[220];
    snprintf(what, sizeof what, "OpTensor fast-path shapes op=%d %s->%s nd=%d %dx%dx..(%lld) B kind %d %s/%s/%s in place %d a1=%g a2=%g beta=%g nan=%d",
             op, th_dtype_name(ab), th_dtype_name(ct), nd, dim[0], dim[1], (long long)C.n, k, ol_name[la], ol_name[lb], ol_name[lc], inplace, a1, a2,
             beta, prop);
    th_compare(what, got, want, (size_t)C.n, fmax(th_tolerance("op", ab), th_tolerance("op", ct)));
    free(a); free(b); free(bb); free(c0); free(got); free(want);
    tt_free(h, &A); tt_free(h, &B); tt_free(h, &C);
    cudnnDestroyOpTensorDescriptor(od);
}

static void op_errors(cudnnHandle_t h)
{
    cudnnOpTensorDescriptor_t od;
    TH_OK(cudnnCreateOpTensorDescriptor(&od));
    cudnnOpTensorOp_t op; cudnnDataType_t ct; cudnnNanPropagation_t np;
    TH_STATUS(cudnnGetOpTensorDescriptor(od, &op, &ct, &np), CUDNN_STATUS_BAD_PARAM); /* never set */
    TH_STATUS(cudnnSetOpTensorDescriptor(od, (cudnnOpTensorOp_t)6, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_INT8, CUDNN_NOT_PROPAGATE_NAN), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, (cudnnNanPropagation_t)2), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_MAX, CUDNN_DATA_DOUBLE, CUDNN_PROPAGATE_NAN));
    TH_OK(cudnnGetOpTensorDescriptor(od, &op, &ct, &np));
    TH_CHECK(op == CUDNN_OP_TENSOR_MAX && ct == CUDNN_DATA_DOUBLE && np == CUDNN_PROPAGATE_NAN, "op-tensor descriptor round trip");
    TH_STATUS(cudnnGetOpTensorDescriptor(od, NULL, &ct, &np), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCreateOpTensorDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
    int d4[4] = {2, 3, 4, 5}, b1[4] = {1, 3, 1, 1}, bad[4] = {2, 3, 4, 2}, d6[6] = {1, 2, 1, 2, 1, 2};
    tt A, B, C, Bb, Cd, A6, C6;
    tt_make(h, &A, CUDNN_DATA_FLOAT, 4, d4, OL_NCHW);
    tt_make(h, &B, CUDNN_DATA_FLOAT, 4, b1, OL_NCHW);
    tt_make(h, &C, CUDNN_DATA_FLOAT, 4, d4, OL_NHWC);
    tt_make(h, &Bb, CUDNN_DATA_FLOAT, 4, bad, OL_NCHW);
    tt_make(h, &Cd, CUDNN_DATA_DOUBLE, 4, d4, OL_NCHW);
    tt_make(h, &A6, CUDNN_DATA_FLOAT, 6, d6, OL_NCHW);
    tt_make(h, &C6, CUDNN_DATA_FLOAT, 6, d6, OL_NCHW);
    double *v = dalloc(C.n);
    th_fill_int(v, (size_t)C.n, -3, 3);
    tt_fill(h, &C, v, 0);
    float one = 1, zero = 0;
    TH_STATUS(cudnnOpTensor(h, od, &one, A.d, A.dev, &one, Bb.d, Bb.dev, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnOpTensor(h, od, &one, B.d, B.dev, &one, A.d, A.dev, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM); /* A must match C */
    TH_STATUS(cudnnOpTensor(h, od, &one, A.d, A.dev, &one, B.d, B.dev, &zero, Cd.d, Cd.dev), CUDNN_STATUS_BAD_PARAM); /* types */
    TH_STATUS(cudnnOpTensor(h, od, &one, A6.d, A6.dev, &one, A6.d, A6.dev, &zero, C6.d, C6.dev), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnOpTensor(h, od, &one, A.d, A.dev, &one, B.d, NULL, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnOpTensor(h, NULL, &one, A.d, A.dev, &one, B.d, B.dev, &zero, C.d, C.dev), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(tt_unchanged(h, &C), "C changed by a failed cudnnOpTensor");
    /* unary ops ignore B entirely */
    TH_OK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_NOT, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
    double *a = dalloc(A.n), *got = dalloc(C.n);
    fill_nz(a, A.n, 0, 1);
    tt_fill(h, &A, a, 0);
    TH_OK(cudnnOpTensor(h, od, &one, A.d, A.dev, NULL, NULL, NULL, &zero, C.d, C.dev));
    tt_read(h, &C, got);
    int ok = 1;
    for (int64_t i = 0; i < C.n; i++) ok &= got[i] == (a[i] == 0 ? 1.0 : 0.0);
    TH_CHECK(ok, "OP_TENSOR_NOT on {0,1} data is logical negation");
    free(a); free(got); free(v);
    tt_free(h, &A); tt_free(h, &B); tt_free(h, &C); tt_free(h, &Bb); tt_free(h, &Cd); tt_free(h, &A6); tt_free(h, &C6);
    TH_OK(cudnnDestroyOpTensorDescriptor(od));
    TH_OK(cudnnDestroyOpTensorDescriptor(NULL));
}

static const cudnnDataType_t all_types[5] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_INT8};

static void set_scale(cudnnHandle_t h, cudnnDataType_t dt)
{
    for (int it = 0; it < 6; it++) {
        int nd = th_randint(3, 8), dim[8];
        for (int i = 0; i < nd; i++) dim[i] = th_randint(1, nd > 5 ? 2 : 4);
        int l = th_randint(0, 3);
        tt Y;
        tt_make(h, &Y, dt, nd, dim, l);
        double *y = dalloc(Y.n), *got = dalloc(Y.n), *want = dalloc(Y.n);
        fill_nz(y, Y.n, -5, 5);
        tt_fill(h, &Y, y, 33);
        double val = -3;
        union { float f; double d; uint16_t u; int8_t i8; } vp;
        /* HALF/BFLOAT16 take a float value (as NVIDIA's library does), other types their own */
        if (dt == CUDNN_DATA_HALF || dt == CUDNN_DATA_BFLOAT16) vp.f = (float)val;
        else th_from_double(&val, dt, &vp, 1);
        TH_OK(cudnnSetTensor(h, Y.d, Y.dev, &vp));
        tt_read(h, &Y, got);
        for (int64_t i = 0; i < Y.n; i++) want[i] = val;
        char what[120];
        snprintf(what, sizeof what, "SetTensor %s nd=%d %s", th_dtype_name(dt), nd, ol_name[l]);
        th_compare(what, got, want, (size_t)Y.n, 0);
        tt_fill(h, &Y, y, 33);
        double alpha = dt == CUDNN_DATA_INT8 ? -2 : 0.75;
        scal sa = mkscal(alpha, dt);
        TH_OK(cudnnScaleTensor(h, Y.d, Y.dev, &sa));
        tt_read(h, &Y, got);
        for (int64_t i = 0; i < Y.n; i++) want[i] = alpha * y[i];
        snprintf(what, sizeof what, "ScaleTensor %s nd=%d %s", th_dtype_name(dt), nd, ol_name[l]);
        th_compare(what, got, want, (size_t)Y.n, th_tolerance("scale", dt));
        free(y); free(got); free(want);
        tt_free(h, &Y);
    }
}

/* cudnnSetTensor and cudnnScaleTensor on FLOAT tensors of fast_dims shapes, NCHW-like or NHWC-like, packed (both on
 * the CPU backend's fast path) or with gaps (ScaleTensor's fast path, SetTensor's general one), Y holding NaN in
 * places: SetTensor overwrites them, ScaleTensor keeps them */
static void set_scale_fast(cudnnHandle_t h, int iter)
{
    int dim[8];
    const int nd = fast_dims(iter, dim), l = fast_layout(th_randint(0, 1), iter / 2 % 2);
    tt Y;
    tt_make(h, &Y, CUDNN_DATA_FLOAT, nd, dim, l);
    double *y = dalloc(Y.n), *got = dalloc(Y.n), *want = dalloc(Y.n);
    th_fill_uniform(y, (size_t)Y.n, -4, 4);
    for (int64_t i = 0; i < Y.n; i++)
        if (th_randint(0, 15) == 0) y[i] = NAN;
    tt_fill(h, &Y, y, 33);
    const float v = (float)th_uniform(-4, 4);
    TH_OK(cudnnSetTensor(h, Y.d, Y.dev, &v));
    tt_read(h, &Y, got);
    for (int64_t i = 0; i < Y.n; i++) want[i] = v;
    char what[160];
    snprintf(what, sizeof what, "SetTensor FLOAT nd=%d %s (%lld elements)", nd, ol_name[l], (long long)Y.n);
    th_compare(what, got, want, (size_t)Y.n, 0);
    tt_fill(h, &Y, y, 33);
    const double alpha = fast_scale();
    scal sa = mkscal(alpha, CUDNN_DATA_FLOAT);
    TH_OK(cudnnScaleTensor(h, Y.d, Y.dev, &sa));
    tt_read(h, &Y, got);
    for (int64_t i = 0; i < Y.n; i++) want[i] = alpha * y[i];
    snprintf(what, sizeof what, "ScaleTensor FLOAT nd=%d %s (%lld elements) alpha=%g", nd, ol_name[l], (long long)Y.n, alpha);
    th_compare(what, got, want, (size_t)Y.n, th_tolerance("scale", CUDNN_DATA_FLOAT));
    free(y); free(got); free(want);
    tt_free(h, &Y);
}

static void transform_case(cudnnHandle_t h, cudnnDataType_t xt, int lx, cudnnDataType_t yt, int ly, int iter)
{
    int vect = (lx == OL_VECT || ly == OL_VECT);
    int nd = vect ? 4 : th_randint(3, 8), dim[8];
    for (int i = 0; i < nd; i++) dim[i] = th_randint(1, nd > 5 ? 2 : 4);
    if (vect) {
        cudnnDataType_t vt = lx == OL_VECT ? xt : yt;
        dim[1] = (vt == CUDNN_DATA_INT8x32 ? 32 : 4) * th_randint(1, 2);
    }
    static const double ab[4][2] = {{1, 0}, {2, 0}, {1, 1}, {-1, 2}};
    double alpha = ab[iter % 4][0], beta = ab[iter % 4][1];
    tt X, Y;
    tt_make(h, &X, xt, nd, dim, lx);
    tt_make(h, &Y, yt, nd, dim, ly);
    double *x = dalloc(X.n), *y0 = dalloc(Y.n), *got = dalloc(Y.n), *want = dalloc(Y.n);
    fill_nz(x, X.n, -20, 20);
    prior_fill_t(y0, Y.n, beta, yt);
    tt_fill(h, &X, x, 0);
    tt_fill(h, &Y, y0, 11);
    scal sa = mkscal(alpha, yt), sb = mkscal(beta, yt);
    TH_OK(cudnnTransformTensor(h, &sa, X.d, X.dev, &sb, Y.d, Y.dev));
    tt_read(h, &Y, got);
    for (int64_t i = 0; i < Y.n; i++) {
        want[i] = alpha * x[i] + (beta != 0 ? beta * y0[i] : 0);
        if (tt_scalar_type(yt) == CUDNN_DATA_INT8) want[i] = fmax(-128, fmin(127, want[i]));
    }
    char what[160];
    snprintf(what, sizeof what, "TransformTensor %s/%s -> %s/%s nd=%d alpha=%g beta=%g", th_dtype_name(xt), ol_name[lx], th_dtype_name(yt),
             ol_name[ly], nd, alpha, beta);
    th_compare(what, got, want, (size_t)Y.n, fmax(th_tolerance("transform", xt), th_tolerance("transform", yt)));
    free(x); free(y0); free(got); free(want);
    tt_free(h, &X); tt_free(h, &Y);
}

static void transform_errors(cudnnHandle_t h)
{
    int d[4] = {2, 3, 4, 5}, e[4] = {2, 3, 5, 4};
    tt X, Y, Yh, Z;
    tt_make(h, &X, CUDNN_DATA_FLOAT, 4, d, OL_NCHW);
    tt_make(h, &Y, CUDNN_DATA_FLOAT, 4, d, OL_NHWC);
    tt_make(h, &Yh, CUDNN_DATA_HALF, 4, d, OL_NHWC);
    tt_make(h, &Z, CUDNN_DATA_FLOAT, 4, e, OL_NHWC);
    double *v = dalloc(Y.n);
    fill_nz(v, Y.n, -3, 3);
    tt_fill(h, &Y, v, 0);
    tt_fill(h, &Z, v, 0);
    float one = 1, zero = 0;
    TH_STATUS(cudnnTransformTensor(h, &one, X.d, X.dev, &zero, Z.d, Z.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnTransformTensor(h, &one, X.d, X.dev, &zero, Yh.d, Yh.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnTransformTensor(h, &one, X.d, NULL, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnTransformTensor(h, NULL, X.d, X.dev, &zero, Y.d, Y.dev), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetTensor(h, Y.d, Y.dev, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnScaleTensor(h, Y.d, NULL, &one), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnScaleTensor(h, NULL, Y.dev, &one), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(tt_unchanged(h, &Y), "Y changed by a failed call");
    TH_CHECK(tt_unchanged(h, &Z), "Z changed by a failed call");
    free(v);
    tt_free(h, &X); tt_free(h, &Y); tt_free(h, &Yh); tt_free(h, &Z);
}

/* CUDA handles only, informational: effective bandwidth of the element-wise kernels on a
 * 64 Mi-element FLOAT tensor (packed copy, NCHW -> NHWC, scale, op-tensor add), plus a
 * spot check of the results. Never fails on speed. */
static double now_s(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void bandwidth_report(cudnnHandle_t h)
{
    const int N = 64, C = 64, H = 128, W = 128;
    const size_t n = (size_t)N * C * H * W, bytes = n * sizeof(float);
    cudnnTensorDescriptor_t dn, dh;
    TH_OK(cudnnCreateTensorDescriptor(&dn));
    TH_OK(cudnnCreateTensorDescriptor(&dh));
    TH_OK(cudnnSetTensor4dDescriptor(dn, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
    TH_OK(cudnnSetTensor4dDescriptor(dh, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, N, C, H, W));
    cudnnOpTensorDescriptor_t od;
    TH_OK(cudnnCreateOpTensorDescriptor(&od));
    TH_OK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
    float *hx = malloc(bytes);
    for (size_t i = 0; i < n; i++) hx[i] = (float)(i % 1000);
    void *x = th_alloc(h, bytes), *y = th_alloc(h, bytes), *z = th_alloc(h, bytes);
    th_upload(h, x, hx, bytes);
    float one = 1, zero = 0, two = 2;
    const char *names[4] = {"TransformTensor NCHW->NCHW", "TransformTensor NCHW->NHWC", "ScaleTensor", "OpTensor ADD"};
    const double traffic[4] = {2.0 * bytes, 2.0 * bytes, 2.0 * bytes, 3.0 * bytes};
    for (int k = 0; k < 4; k++) {
        double best = 1e30;
        for (int rep = 0; rep < 4; rep++) {
            th_sync(h);
            double t0 = now_s();
            if (k == 0) TH_OK(cudnnTransformTensor(h, &one, dn, x, &zero, dn, y));
            else if (k == 1) TH_OK(cudnnTransformTensor(h, &one, dn, x, &zero, dh, y));
            else if (k == 2) TH_OK(cudnnScaleTensor(h, dn, y, &one));
            else TH_OK(cudnnOpTensor(h, od, &one, dn, x, &two, dn, y, &zero, dn, z));
            th_sync(h);
            double t = now_s() - t0;
            if (t < best) best = t;
        }
        printf("  bandwidth: %-28s %7.1f GB/s\n", names[k], traffic[k] / best * 1e-9);
    }
    /* z = x + 2*y with y = NHWC copy of x (scaled by 1): check a few NCHW positions of z */
    th_download(h, hx, z, bytes);
    int ok = 1;
    for (size_t i = 0; i < n; i += n / 97) {
        /* y's memory at i (NHWC storage) holds the logical element j */
        size_t c = i % C, w = (i / C) % W, hh = (i / ((size_t)C * W)) % H, b = i / ((size_t)C * W * H);
        size_t j = ((b * C + c) * H + hh) * W + w;
        float want = (float)(i % 1000) + 2.0f * (float)(j % 1000);
        ok &= hx[i] == want;
    }
    TH_CHECK(ok, "bandwidth run: OpTensor result spot check");
    th_free(h, x); th_free(h, y); th_free(h, z);
    free(hx);
    cudnnDestroyOpTensorDescriptor(od);
    cudnnDestroyTensorDescriptor(dn);
    cudnnDestroyTensorDescriptor(dh);
}

int main(void)
{
    th_seed(0x7e2502);
    cudnnHandle_t h = th_create_handle();
    for (int c = 0; c < NCOMBO; c++)
        for (int op = 0; op <= RO_NOT; op++)
            for (int it = 0; it < 4; it++) op_case(h, &combos[c], op, it);
    op_errors(h);
    for (int t = 0; t < 5; t++) set_scale(h, all_types[t]);
    for (int t = 0; t < 5; t++)
        for (int it = 0; it < 12; it++) transform_case(h, all_types[t], th_randint(0, 3), all_types[t], th_randint(0, 3), it);
    static const cudnnDataType_t vt[3] = {CUDNN_DATA_INT8x4, CUDNN_DATA_INT8x32, CUDNN_DATA_UINT8x4};
    for (int v = 0; v < 2; v++)
        for (int it = 0; it < 4; it++) {
            transform_case(h, vt[v], OL_VECT, CUDNN_DATA_INT8, th_randint(0, 3), it);
            transform_case(h, CUDNN_DATA_INT8, th_randint(0, 3), vt[v], OL_VECT, it);
            transform_case(h, CUDNN_DATA_FLOAT, th_randint(0, 3), vt[v], OL_VECT, it);
            transform_case(h, vt[v], OL_VECT, CUDNN_DATA_FLOAT, th_randint(0, 3), it);
        }
    transform_errors(h);
    for (int op = 0; op <= RO_NOT; op++)
        for (int it = 0; it < 28; it++) op_fast_case(h, op, it, 0);
    for (int fall = 1; fall <= 3; fall++)
        for (int it = 0; it < 8; it++) op_fast_case(h, it % (RO_NOT + 1), it, fall);
    for (int it = 0; it < 12; it++) set_scale_fast(h, it);
    if (th_is_gpu(h)) bandwidth_report(h);
    cudnnDestroy(h);
    return th_finish();
}
