/* INT8 forward extras on every backend: cudnnConvolutionBiasActivationForward for INT8, INT8x4
 * and INT8x32 (y of x's type or FLOAT, RELU / identity, z aliasing y or not, alpha1 = 0.5 so
 * INT8 outputs hit .5 ties that must round to even, saturation), and cudnnReorderFilterAndBias
 * (FreeDNN's reordered layout is the identity: reorder + DEFAULT reorder type must equal the
 * unreordered filter with NO_REORDER; every error path, output untouched). Reference:
 * tests/ref/conv_ref.c. */
#include "test_conv_util.h"

static int same(const double *a, const double *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])))) return 0;
    return 1;
}

/* a fixed-size random INT8-family problem: vector-aligned channels, 2-D, strides 1-2, groups 1-2 */
static void int8_case(tcase *t, cudnnDataType_t xt, int yfloat, int it)
{
    memset(t, 0, sizeof *t);
    int v = tc_vect_of(xt);
    t->nsp = 2;
    t->n = th_randint(1, 2);
    t->g = it % 3 == 2 ? 2 : 1;
    t->c = t->g * (v > 1 ? v * (v == 4 ? th_randint(1, 2) : 1) : th_randint(1, 3));
    t->k = t->g * (yfloat ? th_randint(1, 3) : (v > 1 ? v : th_randint(1, 3)));
    for (int i = 0; i < 3; i++) {
        t->in[i] = t->out[i] = t->flt[i] = t->stride[i] = t->dil[i] = 1;
        t->pad[i] = 0;
    }
    for (int i = 1; i < 3; i++) {
        t->in[i] = th_randint(4, 7);
        t->flt[i] = th_randint(1, 3);
        t->pad[i] = th_randint(0, t->flt[i] - 1);
        t->stride[i] = th_randint(1, 2);
        t->out[i] = ref_conv_out_dim(t->in[i], t->pad[i], t->flt[i], 1, t->stride[i]);
    }
    t->mode = it % 2 ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
    t->xt = xt;
    t->yt = yfloat ? CUDNN_DATA_FLOAT : xt;
    t->ct = CUDNN_DATA_INT32;
    t->xlay = v > 1 ? LAY_NCHW : th_randint(0, 3);
    t->ylay = th_randint(0, 3);
}

static int first_fwd_algo(cudnnHandle_t h, tcase *t, int *algo)
{
    cudnnConvolutionFwdAlgoPerf_t pf[16];
    int cnt = 0;
    if (!TH_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, t->xd, t->wd, t->cd, t->yd, 16, &cnt, pf))) return 0;
    for (int i = 0; i < cnt; i++)
        if (pf[i].status == CUDNN_STATUS_SUCCESS) {
            *algo = pf[i].algo;
            return 1;
        }
    return TH_CHECK(0, "no runnable forward algorithm for an INT8 problem (x=%s)", th_dtype_name(t->xt));
}

static void test_bias_act_int8(cudnnHandle_t h)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_INT8x4, CUDNN_DATA_INT8x32, CUDNN_DATA_INT8};
    int cases = 0;
    for (int it = 0; it < 24; it++) {
        tcase t;
        int yfloat = (it / 3) % 2;
        int relu = (it / 6) % 2 == 0, alias = (it / 12) % 2;
        int8_case(&t, types[it % 3], yfloat, it);
        if (!TH_CHECK(tc_setup(&t), "setup of an INT8 bias-activation case")) continue;
        double a1 = it % 4 == 3 ? 1 : 0.5, a2 = it % 5 == 0 ? 0 : (it % 2 ? 0.5 : 1);
        tbuf x, w, y, z, bias;
        tb_init(h, &x, t.xt, t.xspan);
        tb_init(h, &w, t.xt, t.wspan);
        tb_init(h, &y, t.yt, t.yspan);
        tb_init(h, &z, t.yt, t.yspan);
        tb_init(h, &bias, CUDNN_DATA_FLOAT, t.k);
        tb_fill(&x, -3, 3);
        tb_fill(&w, -2, 2);
        tb_fill(&z, -9, 9);
        tb_fill(&bias, -20, 20);
        if (alias) memcpy(y.h, z.h, sizeof(double) * (size_t)y.n);
        else tb_fill_poison(&y);
        tb_upload(h, &x); tb_upload(h, &w); tb_upload(h, &y); tb_upload(h, &z); tb_upload(h, &bias);
        double *prior = malloc(sizeof(double) * (size_t)y.n);
        memcpy(prior, y.h, sizeof(double) * (size_t)y.n);
        cudnnTensorDescriptor_t bd;
        cudnnActivationDescriptor_t ad;
        cudnnCreateTensorDescriptor(&bd);
        cudnnCreateActivationDescriptor(&ad);
        TH_OK(cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, t.k, 1, 1));
        TH_OK(cudnnSetActivationDescriptor(ad, relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY, CUDNN_PROPAGATE_NAN, 0));
        int algo = 0;
        if (first_fwd_algo(h, &t, &algo)) {
            size_t wsz = 0;
            TH_OK(cudnnGetConvolutionForwardWorkspaceSize(h, t.xd, t.wd, t.cd, t.yd, (cudnnConvolutionFwdAlgo_t)algo, &wsz));
            void *ws = th_alloc(h, wsz + 1);
            float f1 = (float)a1, f2 = (float)a2;
            cudnnStatus_t st = cudnnConvolutionBiasActivationForward(h, &f1, t.xd, x.d, t.wd, w.d, t.cd, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz, &f2,
                                                                     t.yd, alias ? y.d : z.d, bd, bias.d, ad, t.yd, y.d);
            char desc[400], what[600];
            tc_str(&t, desc, sizeof desc);
            snprintf(what, sizeof what, "bias-act %s relu=%d alias=%d a1=%g a2=%g algo %d: %s", th_dtype_name(t.xt), relu, alias, a1, a2, algo,
                     desc);
            if (TH_OK(st)) {
                ref_conv r = tc_ref(&t);
                double *want = malloc(sizeof(double) * (size_t)y.n), *got = malloc(sizeof(double) * (size_t)y.n);
                memcpy(want, prior, sizeof(double) * (size_t)y.n);
                ref_conv_fwd(&r, x.h, &t.xl, w.h, &t.wl, want, &t.yl, a1, 0);
                for (int n = 0; n < t.n; n++)
                    for (int k = 0; k < t.k; k++)
                        for (int oh = 0; oh < t.out[1]; oh++)
                            for (int ow = 0; ow < t.out[2]; ow++) {
                                int64_t o = ref_conv_off(&t.yl, n, k, 0, oh, ow);
                                double v = want[o] + bias.h[k] + (a2 != 0 ? a2 * z.h[o] : 0);
                                want[o] = relu && v < 0 ? 0 : v;
                            }
                tb_download(h, &y, got);
                int d5[5] = {t.n, t.k, 1, t.out[1], t.out[2]};
                tc_compare_tensor(what, t.yt, got, want, prior, y.n, &t.yl, d5, th_tolerance("conv", t.yt));
                free(want);
                free(got);
                cases++;
            } else {
                fprintf(stderr, "  case: %s\n", what);
            }
            th_free(h, ws);
        }
        free(prior);
        cudnnDestroyTensorDescriptor(bd);
        cudnnDestroyActivationDescriptor(ad);
        tb_free(h, &x); tb_free(h, &w); tb_free(h, &y); tb_free(h, &z); tb_free(h, &bias);
        tc_destroy(&t);
    }
    printf("INT8 bias-activation: %d cases run\n", cases);
}

/* plain forward y = alpha conv(x, w) on device buffers into y (poisoned first); returns status */
static cudnnStatus_t fwd(cudnnHandle_t h, tcase *t, const void *x, const void *w, void *y, float alpha, int algo)
{
    float beta = 0;
    size_t wsz = 0;
    cudnnStatus_t st = cudnnGetConvolutionForwardWorkspaceSize(h, t->xd, t->wd, t->cd, t->yd, (cudnnConvolutionFwdAlgo_t)algo, &wsz);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    void *ws = th_alloc(h, wsz + 1);
    st = cudnnConvolutionForward(h, &alpha, t->xd, x, t->wd, w, t->cd, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz, &beta, t->yd, y);
    th_free(h, ws);
    return st;
}

static void test_reorder(cudnnHandle_t h)
{
    for (int it = 0; it < 6; it++) {
        tcase t;
        int8_case(&t, CUDNN_DATA_INT8x32, it % 2, it);
        if (!TH_CHECK(tc_setup(&t), "setup of a reorder case")) continue;
        cudnnReorderType_t rt = CUDNN_DEFAULT_REORDER;
        TH_OK(cudnnGetConvolutionReorderType(t.cd, &rt));
        TH_CHECK(rt == CUDNN_DEFAULT_REORDER, "a new convolution descriptor has reorder type %d, want DEFAULT", (int)rt);
        tbuf x, w, wr, y1, y2, b, br;
        tb_init(h, &x, t.xt, t.xspan);
        tb_init(h, &w, t.xt, t.wspan);
        tb_init(h, &wr, t.xt, t.wspan);
        tb_init(h, &y1, t.yt, t.yspan);
        tb_init(h, &y2, t.yt, t.yspan);
        tb_init(h, &b, CUDNN_DATA_FLOAT, t.k);
        tb_init(h, &br, CUDNN_DATA_FLOAT, t.k);
        tb_fill(&x, -3, 3);
        tb_fill(&w, -2, 2);
        tb_fill(&b, -20, 20);
        for (int64_t i = 0; i < wr.n; i++) wr.h[i] = 55;
        for (int64_t i = 0; i < br.n; i++) br.h[i] = 555;
        tb_fill_poison(&y1);
        tb_fill_poison(&y2);
        tb_upload(h, &x); tb_upload(h, &w); tb_upload(h, &wr); tb_upload(h, &y1); tb_upload(h, &y2); tb_upload(h, &b); tb_upload(h, &br);
        double *before = malloc(sizeof(double) * (size_t)wr.n), *after = malloc(sizeof(double) * (size_t)wr.n);
        double *bb = malloc(sizeof(double) * (size_t)br.n), *ba = malloc(sizeof(double) * (size_t)br.n);
        tb_download(h, &wr, before);
        tb_download(h, &br, bb);
        if (it == 0) {
            /* errors first: nothing may be written */
            cudnnFilterDescriptor_t f4, ff, f5;
            cudnnCreateFilterDescriptor(&f4);
            cudnnCreateFilterDescriptor(&ff);
            cudnnCreateFilterDescriptor(&f5);
            TH_OK(cudnnSetFilter4dDescriptor(f4, CUDNN_DATA_INT8x4, CUDNN_TENSOR_NCHW_VECT_C, 4, 32, 3, 3));
            TH_OK(cudnnSetFilter4dDescriptor(ff, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 8, 3, 3));
            int d5[5] = {4, 32, 2, 3, 3};
            int have5 = cudnnSetFilterNdDescriptor(f5, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NCHW_VECT_C, 5, d5) == CUDNN_STATUS_SUCCESS;
            TH_STATUS(cudnnReorderFilterAndBias(NULL, t.wd, CUDNN_DEFAULT_REORDER, w.d, wr.d, 1, b.d, br.d), CUDNN_STATUS_BAD_PARAM);
            TH_STATUS(cudnnReorderFilterAndBias(h, NULL, CUDNN_DEFAULT_REORDER, w.d, wr.d, 1, b.d, br.d), CUDNN_STATUS_BAD_PARAM);
            TH_STATUS(cudnnReorderFilterAndBias(h, t.wd, (cudnnReorderType_t)7, w.d, wr.d, 1, b.d, br.d), CUDNN_STATUS_BAD_PARAM);
            TH_STATUS(cudnnReorderFilterAndBias(h, t.wd, CUDNN_DEFAULT_REORDER, NULL, wr.d, 1, b.d, br.d), CUDNN_STATUS_BAD_PARAM);
            TH_STATUS(cudnnReorderFilterAndBias(h, t.wd, CUDNN_DEFAULT_REORDER, w.d, NULL, 1, b.d, br.d), CUDNN_STATUS_BAD_PARAM);
            TH_STATUS(cudnnReorderFilterAndBias(h, t.wd, CUDNN_DEFAULT_REORDER, w.d, wr.d, 1, NULL, br.d), CUDNN_STATUS_BAD_PARAM);
            TH_STATUS(cudnnReorderFilterAndBias(h, t.wd, CUDNN_DEFAULT_REORDER, w.d, wr.d, 1, b.d, NULL), CUDNN_STATUS_BAD_PARAM);
            TH_STATUS(cudnnReorderFilterAndBias(h, f4, CUDNN_DEFAULT_REORDER, w.d, wr.d, 1, b.d, br.d), CUDNN_STATUS_NOT_SUPPORTED);
            TH_STATUS(cudnnReorderFilterAndBias(h, ff, CUDNN_DEFAULT_REORDER, w.d, wr.d, 1, b.d, br.d), CUDNN_STATUS_NOT_SUPPORTED);
            if (have5) TH_STATUS(cudnnReorderFilterAndBias(h, f5, CUDNN_DEFAULT_REORDER, w.d, wr.d, 1, b.d, br.d), CUDNN_STATUS_NOT_SUPPORTED);
            tb_download(h, &wr, after);
            tb_download(h, &br, ba);
            TH_CHECK(same(before, after, wr.n) && same(bb, ba, br.n), "reorder: output modified on error");
            cudnnDestroyFilterDescriptor(f4);
            cudnnDestroyFilterDescriptor(ff);
            cudnnDestroyFilterDescriptor(f5);
        }
        /* reorderBias = 0: bias pointers may be NULL and the bias output is not written */
        cudnnReorderType_t rtype = it % 3 == 1 ? CUDNN_NO_REORDER : CUDNN_DEFAULT_REORDER;
        int rb = it % 3 != 2;
        TH_OK(cudnnReorderFilterAndBias(h, t.wd, rtype, w.d, wr.d, rb, rb ? b.d : NULL, rb ? br.d : NULL));
        tb_download(h, &br, ba);
        if (!rb) TH_CHECK(same(bb, ba, br.n), "reorderBias=0 wrote the bias output");
        else TH_CHECK(same(b.h, ba, br.n), "the reordered bias differs from FreeDNN's identity layout");
        /* unreordered filter + NO_REORDER vs reordered filter + DEFAULT */
        int algo = 0;
        TH_OK(cudnnSetConvolutionReorderType(t.cd, CUDNN_NO_REORDER));
        TH_OK(cudnnGetConvolutionReorderType(t.cd, &rt));
        TH_CHECK(rt == CUDNN_NO_REORDER, "reorder type did not round-trip");
        if (first_fwd_algo(h, &t, &algo)) {
            float alpha = it % 2 ? 1.0f : 0.5f;
            TH_OK(fwd(h, &t, x.d, w.d, y1.d, alpha, algo));
            TH_OK(cudnnSetConvolutionReorderType(t.cd, CUDNN_DEFAULT_REORDER));
            TH_OK(fwd(h, &t, x.d, wr.d, y2.d, alpha, algo));
            double *g1 = malloc(sizeof(double) * (size_t)y1.n), *g2 = malloc(sizeof(double) * (size_t)y1.n);
            double *want = malloc(sizeof(double) * (size_t)y1.n);
            tb_download(h, &y1, g1);
            tb_download(h, &y2, g2);
            TH_CHECK(same(g1, g2, y1.n), "reordered filter + DEFAULT differs from the original filter + NO_REORDER");
            memcpy(want, y1.h, sizeof(double) * (size_t)y1.n);
            ref_conv r = tc_ref(&t);
            ref_conv_fwd(&r, x.h, &t.xl, w.h, &t.wl, want, &t.yl, alpha, 0);
            int d5[5] = {t.n, t.k, 1, t.out[1], t.out[2]};
            char desc[400], what[500];
            tc_str(&t, desc, sizeof desc);
            snprintf(what, sizeof what, "reorder(%s) + conv: %s", rtype == CUDNN_NO_REORDER ? "NO_REORDER" : "DEFAULT", desc);
            tc_compare_tensor(what, t.yt, g2, want, y1.h, y1.n, &t.yl, d5, th_tolerance("conv", t.yt));
            free(g1); free(g2); free(want);
        }
        /* in place */
        TH_OK(cudnnReorderFilterAndBias(h, t.wd, CUDNN_DEFAULT_REORDER, wr.d, wr.d, 1, br.d, br.d));
        tb_download(h, &wr, after);
        TH_CHECK(same(w.h, after, w.n), "in-place reorder changed the identity-layout filter");
        free(before); free(after); free(bb); free(ba);
        tb_free(h, &x); tb_free(h, &w); tb_free(h, &wr); tb_free(h, &y1); tb_free(h, &y2); tb_free(h, &b); tb_free(h, &br);
        tc_destroy(&t);
    }
}

int main(void)
{
    th_seed(8088);
    cudnnHandle_t h = th_create_handle();
    test_bias_act_int8(h);
    test_reorder(h);
    cudnnDestroy(h);
    return th_finish();
}
