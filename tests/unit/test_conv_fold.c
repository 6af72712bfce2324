/* cudnnGetFoldedConvBackwardDataDescriptors: for strides 1, 2, 3 (mixed per dim), 2-D and 3-D,
 * groups, padding, NCHW and NHWC transform formats, FLOAT and DOUBLE, alpha/beta: fold the
 * filter (cudnnTransformFilter), pad dy and fold the prior dx (cudnnTransformTensorEx), run
 * cudnnConvolutionBackwardData on the folded descriptors, unfold, and compare with the
 * unfolded problem in tests/ref/conv_ref.c. Also the descriptor values of one known case and
 * the error paths (outputs untouched). */
#include "test_conv_util.h"

static int fold_case(cudnnHandle_t h, int it, cudnnDataType_t dt, cudnnTensorFormat_t fmt)
{
    tcase t;
    memset(&t, 0, sizeof t);
    t.nsp = it % 4 == 3 ? 3 : 2;
    t.g = it % 3 == 1 || it % 7 == 0 ? 2 : 1; /* groups 2: refused when a stride is > 1, folded when all are 1 */
    t.n = th_randint(1, 2);
    t.c = t.g * th_randint(1, 3);
    t.k = t.g * th_randint(1, 3);
    for (int i = 0; i < 3; i++) {
        t.in[i] = t.out[i] = t.flt[i] = t.stride[i] = t.dil[i] = 1;
        t.pad[i] = 0;
    }
    int s_main = 1 + it % 3; /* 1, 2, 3 */
    for (int i = 3 - t.nsp; i < 3; i++) {
        t.stride[i] = i == 2 ? s_main : th_randint(1, 3);
        t.flt[i] = th_randint(1, t.nsp == 3 ? 3 : 5);
        t.dil[i] = t.stride[i] == 1 && th_randint(0, 2) == 0 ? 2 : 1;
        int eff = (t.flt[i] - 1) * t.dil[i] + 1;
        t.pad[i] = th_randint(0, eff - 1 < 2 ? eff - 1 : 2);
        t.in[i] = eff + th_randint(0, t.nsp == 3 ? 4 : 7);
        t.out[i] = ref_conv_out_dim(t.in[i], t.pad[i], t.flt[i], t.dil[i], t.stride[i]);
    }
    int all_one = t.stride[0] == 1 && t.stride[1] == 1 && t.stride[2] == 1;
    t.mode = all_one && it % 2 ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
    t.xt = t.yt = dt;
    t.ct = dt;
    t.xlay = th_randint(0, 3);
    t.ylay = th_randint(0, 3);
    t.w_nhwc = th_randint(0, 1);
    if (!TH_CHECK(tc_setup(&t), "setup of a fold case")) return 0;
    char desc[400];
    tc_str(&t, desc, sizeof desc);

    cudnnFilterDescriptor_t wf;
    cudnnTensorDescriptor_t dyp, dxf;
    cudnnConvolutionDescriptor_t cf;
    cudnnTensorTransformDescriptor_t tw, tdy, tdx, tux;
    cudnnCreateFilterDescriptor(&wf);
    cudnnCreateTensorDescriptor(&dyp);
    cudnnCreateTensorDescriptor(&dxf);
    cudnnCreateConvolutionDescriptor(&cf);
    cudnnCreateTensorTransformDescriptor(&tw);
    cudnnCreateTensorTransformDescriptor(&tdy);
    cudnnCreateTensorTransformDescriptor(&tdx);
    cudnnCreateTensorTransformDescriptor(&tux);
    int ok;
    if (t.g > 1 && !all_one) /* phase-major folded channels (NVIDIA's order) split the groups: refused */
        ok = TH_STATUS(cudnnGetFoldedConvBackwardDataDescriptors(h, t.wd, t.yd, t.cd, t.xd, fmt, wf, dyp, cf, dxf, tw, tdy, tdx, tux),
                       CUDNN_STATUS_NOT_SUPPORTED);
    else if ((ok = TH_OK(cudnnGetFoldedConvBackwardDataDescriptors(h, t.wd, t.yd, t.cd, t.xd, fmt, wf, dyp, cf, dxf, tw, tdy, tdx, tux)))) {
        /* folded stride is 1 everywhere, and the channel count grew by the product of the strides */
        int F = t.stride[0] * t.stride[1] * t.stride[2];
        int nbd = 0, dims[5], strides[5];
        cudnnDataType_t ft;
        TH_OK(cudnnGetTensorNdDescriptor(dxf, 5, &ft, &nbd, dims, strides));
        ok &= TH_CHECK(dims[1] == t.c * F && ft == dt, "folded grad has %d channels (want %d)", dims[1], t.c * F);
        int arr = 0, pad[3], str[3], dil[3];
        cudnnConvolutionMode_t mode;
        cudnnDataType_t ct;
        TH_OK(cudnnGetConvolutionNdDescriptor(cf, 3, &arr, pad, str, dil, &mode, &ct));
        for (int i = 0; i < arr; i++) ok &= TH_CHECK(str[i] == 1 && pad[i] == 0, "folded conv dim %d: stride %d pad %d", i, str[i], pad[i]);

        size_t szw = 0, szdy = 0, szdx = 0;
        TH_OK(cudnnGetTensorSizeInBytes(dyp, &szdy));
        TH_OK(cudnnGetTensorSizeInBytes(dxf, &szdx));
        TH_OK(cudnnGetFilterSizeInBytes(wf, &szw));
        tbuf x, w, y;
        tb_init(h, &x, dt, t.xspan);
        tb_init(h, &w, dt, t.wspan);
        tb_init(h, &y, dt, t.yspan);
        tb_fill(&w, -3, 3);
        tb_fill(&y, -3, 3);
        double alpha = it % 4 == 1 ? 2 : 1, beta = it % 3 == 0 ? 0 : (it % 2 ? 1 : -0.5);
        if (beta == 0) tb_fill_poison(&x);
        else tb_fill(&x, -2, 2);
        tb_upload(h, &x); tb_upload(h, &w); tb_upload(h, &y);
        double *prior = malloc(sizeof(double) * (size_t)x.n);
        memcpy(prior, x.h, sizeof(double) * (size_t)x.n);
        void *wfd = th_alloc(h, szw + 1), *dypd = th_alloc(h, szdy + 1), *dxfd = th_alloc(h, szdx + 1);
        double one_d = 1, zero_d = 0, al_d = alpha, be_d = beta;
        float one_f = 1, zero_f = 0, al_f = (float)alpha, be_f = (float)beta;
        int isd = dt == CUDNN_DATA_DOUBLE;
        const void *one = isd ? (const void *)&one_d : (const void *)&one_f, *zero = isd ? (const void *)&zero_d : (const void *)&zero_f;
        const void *al = isd ? (const void *)&al_d : (const void *)&al_f, *be = isd ? (const void *)&be_d : (const void *)&be_f;
        ok &= TH_OK(cudnnTransformFilter(h, tw, one, t.wd, w.d, zero, wf, wfd));
        ok &= TH_OK(cudnnTransformTensorEx(h, tdy, one, t.yd, y.d, zero, dyp, dypd));
        if (beta != 0) ok &= TH_OK(cudnnTransformTensorEx(h, tdx, one, t.xd, x.d, zero, dxf, dxfd));
        cudnnConvolutionBwdDataAlgoPerf_t pd[8];
        int cnt = 0, algo = -1;
        ok &= TH_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, wf, dyp, cf, dxf, 8, &cnt, pd));
        for (int i = 0; i < cnt && algo < 0; i++)
            if (pd[i].status == CUDNN_STATUS_SUCCESS) algo = pd[i].algo;
        ok &= TH_CHECK(algo >= 0, "no backward-data algorithm for the folded problem of %s", desc);
        if (ok) {
            size_t wsz = 0;
            TH_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, wf, dyp, cf, dxf, (cudnnConvolutionBwdDataAlgo_t)algo, &wsz));
            void *ws = th_alloc(h, wsz + 1);
            ok &= TH_OK(cudnnConvolutionBackwardData(h, al, wf, wfd, dyp, dypd, cf, (cudnnConvolutionBwdDataAlgo_t)algo, ws, wsz, be, dxf, dxfd));
            ok &= TH_OK(cudnnTransformTensorEx(h, tux, one, dxf, dxfd, zero, t.xd, x.d));
            th_free(h, ws);
            double *got = malloc(sizeof(double) * (size_t)x.n), *want = malloc(sizeof(double) * (size_t)x.n);
            tb_download(h, &x, got);
            memcpy(want, prior, sizeof(double) * (size_t)x.n);
            ref_conv r = tc_ref(&t);
            ref_conv_bwd_data(&r, want, &t.xl, w.h, &t.wl, y.h, &t.yl, alpha, beta);
            int d5[5] = {t.n, t.c, t.in[0], t.in[1], t.in[2]};
            char what[600];
            snprintf(what, sizeof what, "folded bwd-data (%s, algo %d, alpha %g beta %g): %s", fmt == CUDNN_TENSOR_NHWC ? "NHWC" : "NCHW", algo, alpha,
                     beta, desc);
            ok &= tc_compare_tensor(what, dt, got, want, prior, x.n, &t.xl, d5, th_tolerance("conv", dt));
            free(got);
            free(want);
        }
        th_free(h, wfd); th_free(h, dypd); th_free(h, dxfd);
        free(prior);
        tb_free(h, &x); tb_free(h, &w); tb_free(h, &y);
    }
    cudnnDestroyFilterDescriptor(wf);
    cudnnDestroyTensorDescriptor(dyp);
    cudnnDestroyTensorDescriptor(dxf);
    cudnnDestroyConvolutionDescriptor(cf);
    cudnnDestroyTensorTransformDescriptor(tw);
    cudnnDestroyTensorTransformDescriptor(tdy);
    cudnnDestroyTensorTransformDescriptor(tdx);
    cudnnDestroyTensorTransformDescriptor(tux);
    tc_destroy(&t);
    return ok;
}

/* dx 1x2x7x7, w 3x2x3x3, pad 1, stride 2 -> dy 1x3x4x4; folded: dx 1x8x5x5 (ceil(9/2)),
 * w 3x8x2x2, dy padded to 5-2+1 = 4 (no padding), grad fold pads 1 before, 5*2-7-1 = 2 after */
static void test_values_and_errors(cudnnHandle_t h)
{
    cudnnFilterDescriptor_t w, wf;
    cudnnTensorDescriptor_t dy, dx, dyp, dxf;
    cudnnConvolutionDescriptor_t c, cf;
    cudnnTensorTransformDescriptor_t tw, tdy, tdx, tux;
    cudnnCreateFilterDescriptor(&w); cudnnCreateFilterDescriptor(&wf);
    cudnnCreateTensorDescriptor(&dy); cudnnCreateTensorDescriptor(&dx); cudnnCreateTensorDescriptor(&dyp); cudnnCreateTensorDescriptor(&dxf);
    cudnnCreateConvolutionDescriptor(&c); cudnnCreateConvolutionDescriptor(&cf);
    cudnnCreateTensorTransformDescriptor(&tw); cudnnCreateTensorTransformDescriptor(&tdy);
    cudnnCreateTensorTransformDescriptor(&tdx); cudnnCreateTensorTransformDescriptor(&tux);
    TH_OK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, 2, 3, 3));
    TH_OK(cudnnSetTensor4dDescriptor(dx, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 7, 7));
    TH_OK(cudnnSetTensor4dDescriptor(dy, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 3, 4, 4));
    TH_OK(cudnnSetConvolution2dDescriptor(c, 1, 1, 2, 2, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    /* a marker value in the folded conv descriptor shows whether an error path wrote it */
    TH_OK(cudnnSetConvolution2dDescriptor(cf, 5, 5, 5, 5, 1, 1, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT));
    TH_STATUS(cudnnGetFoldedConvBackwardDataDescriptors(NULL, w, dy, c, dx, CUDNN_TENSOR_NCHW, wf, dyp, cf, dxf, tw, tdy, tdx, tux),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetFoldedConvBackwardDataDescriptors(h, w, dy, c, dx, CUDNN_TENSOR_NCHW, NULL, dyp, cf, dxf, tw, tdy, tdx, tux),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetFoldedConvBackwardDataDescriptors(h, w, dy, c, dx, CUDNN_TENSOR_NCHW, wf, dyp, cf, dxf, tw, tdy, tdx, NULL),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetFoldedConvBackwardDataDescriptors(h, w, dy, c, dx, (cudnnTensorFormat_t)9, wf, dyp, cf, dxf, tw, tdy, tdx, tux),
              CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetFoldedConvBackwardDataDescriptors(h, w, dy, c, dx, CUDNN_TENSOR_NCHW_VECT_C, wf, dyp, cf, dxf, tw, tdy, tdx, tux),
              CUDNN_STATUS_NOT_SUPPORTED);
    /* dy of the wrong size */
    TH_STATUS(cudnnGetFoldedConvBackwardDataDescriptors(h, w, dx, c, dx, CUDNN_TENSOR_NCHW, wf, dyp, cf, dxf, tw, tdy, tdx, tux),
              CUDNN_STATUS_BAD_PARAM);
    /* CONVOLUTION mode with stride 2 */
    cudnnConvolutionDescriptor_t cc;
    cudnnCreateConvolutionDescriptor(&cc);
    TH_OK(cudnnSetConvolution2dDescriptor(cc, 1, 1, 2, 2, 1, 1, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT));
    TH_STATUS(cudnnGetFoldedConvBackwardDataDescriptors(h, w, dy, cc, dx, CUDNN_TENSOR_NCHW, wf, dyp, cf, dxf, tw, tdy, tdx, tux),
              CUDNN_STATUS_NOT_SUPPORTED);
    int pad_h, pad_w, u, v, dh, dw;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t ct;
    TH_OK(cudnnGetConvolution2dDescriptor(cf, &pad_h, &pad_w, &u, &v, &dh, &dw, &mode, &ct));
    TH_CHECK(pad_h == 5 && u == 5 && mode == CUDNN_CONVOLUTION, "foldedConvDesc was modified by a failing call");

    TH_OK(cudnnGetFoldedConvBackwardDataDescriptors(h, w, dy, c, dx, CUDNN_TENSOR_NCHW, wf, dyp, cf, dxf, tw, tdy, tdx, tux));
    TH_OK(cudnnGetConvolution2dDescriptor(cf, &pad_h, &pad_w, &u, &v, &dh, &dw, &mode, &ct));
    TH_CHECK(pad_h == 0 && pad_w == 0 && u == 1 && v == 1 && dh == 1 && dw == 1 && mode == CUDNN_CROSS_CORRELATION && ct == CUDNN_DATA_FLOAT,
             "folded conv: pad %d,%d stride %d,%d dil %d,%d mode %d", pad_h, pad_w, u, v, dh, dw, (int)mode);
    cudnnDataType_t dt;
    cudnnTensorFormat_t ff;
    int k, cch, r, s;
    TH_OK(cudnnGetFilter4dDescriptor(wf, &dt, &ff, &k, &cch, &r, &s));
    TH_CHECK(k == 3 && cch == 8 && r == 2 && s == 2 && ff == CUDNN_TENSOR_NCHW, "folded filter %dx%dx%dx%d", k, cch, r, s);
    int n, ch, hh, ww, s0, s1, s2, s3;
    TH_OK(cudnnGetTensor4dDescriptor(dxf, &dt, &n, &ch, &hh, &ww, &s0, &s1, &s2, &s3));
    TH_CHECK(n == 1 && ch == 8 && hh == 5 && ww == 5 && s3 == 1 && s2 == 5, "folded grad %dx%dx%dx%d", n, ch, hh, ww);
    TH_OK(cudnnGetTensor4dDescriptor(dyp, &dt, &n, &ch, &hh, &ww, &s0, &s1, &s2, &s3));
    TH_CHECK(n == 1 && ch == 3 && hh == 4 && ww == 4, "padded diff %dx%dx%dx%d", n, ch, hh, ww);
    int32_t pb[4], pa[4];
    uint32_t fo[2];
    cudnnFoldingDirection_t dir;
    TH_OK(cudnnGetTensorTransformDescriptor(tdx, 4, &ff, pb, pa, fo, &dir));
    TH_CHECK(pb[2] == 1 && pb[3] == 1 && pa[2] == 2 && pa[3] == 2 && fo[0] == 2 && fo[1] == 2 && dir == CUDNN_TRANSFORM_FOLD,
             "grad fold: pad %d/%d fold %u dir %d", pb[2], pa[2], fo[0], (int)dir);
    TH_OK(cudnnGetTensorTransformDescriptor(tux, 4, &ff, pb, pa, fo, &dir));
    TH_CHECK(pb[2] == 1 && pa[2] == 2 && fo[0] == 2 && dir == CUDNN_TRANSFORM_UNFOLD, "grad unfold: pad %d/%d fold %u dir %d", pb[2], pa[2], fo[0],
             (int)dir);
    TH_OK(cudnnGetTensorTransformDescriptor(tw, 4, &ff, pb, pa, fo, &dir));
    TH_CHECK(pb[2] == 0 && pa[2] == 1 && fo[0] == 2, "filter fold: pad %d/%d fold %u", pb[2], pa[2], fo[0]);
    cudnnDestroyConvolutionDescriptor(cc);
    cudnnDestroyFilterDescriptor(w); cudnnDestroyFilterDescriptor(wf);
    cudnnDestroyTensorDescriptor(dy); cudnnDestroyTensorDescriptor(dx); cudnnDestroyTensorDescriptor(dyp); cudnnDestroyTensorDescriptor(dxf);
    cudnnDestroyConvolutionDescriptor(c); cudnnDestroyConvolutionDescriptor(cf);
    cudnnDestroyTensorTransformDescriptor(tw); cudnnDestroyTensorTransformDescriptor(tdy);
    cudnnDestroyTensorTransformDescriptor(tdx); cudnnDestroyTensorTransformDescriptor(tux);
}

int main(void)
{
    th_seed(4242);
    cudnnHandle_t h = th_create_handle();
    test_values_and_errors(h);
    int fails = 0, n = 0;
    for (int it = 0; it < 48; it++) {
        cudnnDataType_t dt = it % 5 == 4 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
        cudnnTensorFormat_t fmt = (it / 2) % 2 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
        if (!fold_case(h, it, dt, fmt)) fails++;
        n++;
    }
    printf("folded backward data: %d cases, %d with failures\n", n, fails);
    cudnnDestroy(h);
    return th_finish();
}
