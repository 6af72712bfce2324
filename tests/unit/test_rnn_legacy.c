/* The v6/v7 RNN API: same weight layout and bit-identical results as the v8 API on the same
 * weights (forward, backward data, backward weights), descriptor setters/getters, error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"

static cudnnHandle_t h;


/* Library-visible twins of host buffers (device memory on a CUDA handle): DV(p) uploads p's
 * current contents on first use, pull(p) downloads the twin into p. */
static struct { void *host, *dev; size_t n; } twin[64];
static int ntwin;
static void track(void *host, size_t n)
{
    twin[ntwin].host = host;
    twin[ntwin].n = n;
    twin[ntwin].dev = NULL;
    ntwin++;
}
static void *DV(void *host)
{
    for (int i = 0; i < ntwin; i++)
        if (twin[i].host == host) {
            if (!twin[i].dev) {
                twin[i].dev = th_alloc(h, twin[i].n);
                th_upload(h, twin[i].dev, host, twin[i].n);
            }
            return twin[i].dev;
        }
    fprintf(stderr, "untracked buffer\n");
    abort();
}
static void pull(void *host)
{
    for (int i = 0; i < ntwin; i++)
        if (twin[i].host == host) th_download(h, host, DV(host), twin[i].n);
}
static void twins_free(void)
{
    for (int i = 0; i < ntwin; i++) th_free(h, twin[i].dev);
    ntwin = 0;
}

static int bits_equal(const float *a, const float *b, long n) { return memcmp(a, b, sizeof(float) * (size_t)n) == 0; }

static void one(int mode, int it)
{
    int D = th_randint(1, 2), L = th_randint(1, 2), H = th_randint(2, 5), in = th_randint(1, 5), T = th_randint(1, 5), N = th_randint(1, 4);
    int P = (mode == 2 && (it & 1)) ? th_randint(1, H) : H;
    cudnnRNNBiasMode_t bias = (cudnnRNNBiasMode_t)th_randint(0, 3);
    int len[8];
    for (int n = 0; n < N; n++) len[n] = th_randint(1, T);
    for (int a = 0; a < N; a++)
        for (int b = a + 1; b < N; b++)
            if (len[b] > len[a]) { int t = len[a]; len[a] = len[b]; len[b] = t; }
    T = len[0];
    cudnnDropoutDescriptor_t nodrop = NULL;
    cudnnRNNDescriptor_t r6, r8;
    cudnnCreateRNNDescriptor(&r6);
    cudnnCreateRNNDescriptor(&r8);
    TH_OK(cudnnSetRNNDescriptor_v6(h, r6, H, L, nodrop, CUDNN_LINEAR_INPUT, D == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, (cudnnRNNMode_t)mode,
                                   CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT));
    TH_OK(cudnnSetRNNBiasMode(r6, bias));
    if (P != H) TH_OK(cudnnSetRNNProjectionLayers(h, r6, P, 0));
    if (mode == 2) TH_OK(cudnnRNNSetClip(h, r6, CUDNN_RNN_CLIP_MINMAX, CUDNN_NOT_PROPAGATE_NAN, -0.4, 0.5));
    TH_OK(cudnnSetRNNDescriptor_v8(r8, CUDNN_RNN_ALGO_STANDARD, (cudnnRNNMode_t)mode, bias, D == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                   CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, in, H, P, L, NULL, 0));
    if (mode == 2) TH_OK(cudnnRNNSetClip_v8(r8, CUDNN_RNN_CLIP_MINMAX, CUDNN_NOT_PROPAGATE_NAN, -0.4, 0.5));
    /* v7 per-step descriptors */
    cudnnTensorDescriptor_t xd[8], yd[8], hd, cd;
    for (int t = 0; t < T; t++) {
        int b = 0;
        for (int n = 0; n < N; n++) b += len[n] > t;
        int dx[3] = {b, in, 1}, sx[3] = {in, 1, 1}, dy[3] = {b, D * P, 1}, sy[3] = {D * P, 1, 1};
        cudnnCreateTensorDescriptor(&xd[t]);
        cudnnCreateTensorDescriptor(&yd[t]);
        cudnnSetTensorNdDescriptor(xd[t], CUDNN_DATA_FLOAT, 3, dx, sx);
        cudnnSetTensorNdDescriptor(yd[t], CUDNN_DATA_FLOAT, 3, dy, sy);
    }
    int hdim[3] = {L * D, N, P}, hst[3] = {N * P, P, 1}, cdim[3] = {L * D, N, H}, cst[3] = {N * H, H, 1};
    cudnnCreateTensorDescriptor(&hd);
    cudnnCreateTensorDescriptor(&cd);
    cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, hdim, hst);
    cudnnSetTensorNdDescriptor(cd, CUDNN_DATA_FLOAT, 3, cdim, cst);
    cudnnRNNDataDescriptor_t x8, y8;
    cudnnCreateRNNDataDescriptor(&x8);
    cudnnCreateRNNDataDescriptor(&y8);
    TH_OK(cudnnSetRNNDataDescriptor(x8, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, T, N, in, len, NULL));
    TH_OK(cudnnSetRNNDataDescriptor(y8, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, T, N, D * P, len, NULL));
    /* sizes */
    size_t p6 = 0, w8 = 0, ws6 = 0, rs6 = 0, ws8 = 0, rs8 = 0;
    TH_OK(cudnnGetRNNParamsSize(h, r6, xd[0], &p6, CUDNN_DATA_FLOAT));
    TH_OK(cudnnGetRNNWeightSpaceSize(h, r8, &w8));
    TH_CHECK(p6 == w8 && p6 > 0, "params size %zu == weight space size %zu", p6, w8);
    TH_STATUS(cudnnGetRNNParamsSize(h, r6, xd[0], &p6, CUDNN_DATA_DOUBLE), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnGetRNNWorkspaceSize(h, r6, T, xd, &ws6));
    TH_OK(cudnnGetRNNTrainingReserveSize(h, r6, T, xd, &rs6));
    TH_OK(cudnnGetRNNTempSpaceSizes(h, r8, CUDNN_FWD_MODE_TRAINING, x8, &ws8, &rs8));
    TH_CHECK(rs6 == rs8 && ws6 >= ws8, "v7 and v8 temp sizes agree");
    cudnnFilterDescriptor_t wd, md;
    cudnnCreateFilterDescriptor(&wd);
    cudnnCreateFilterDescriptor(&md);
    int wdim[3] = {(int)(p6 / 4), 1, 1};
    cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, wdim);
    float *w = malloc(p6);
    for (size_t i = 0; i < p6 / 4; i++) w[i] = (float)th_uniform(-0.6, 0.6);
    ntwin = 0;
    track(w, p6);
    /* same parameter addresses */
    cudnnTensorDescriptor_t mt, bt;
    cudnnCreateTensorDescriptor(&mt);
    cudnnCreateTensorDescriptor(&bt);
    int G = mode == 2 ? 4 : mode == 3 ? 3 : 1, same = 1;
    for (int pl = 0; pl < L * D; pl++)
        for (int q = 0; q < 2 * G + (P != H); q++) {
            int id = q < 2 * G ? q : 8;
            void *m6 = NULL, *b6 = NULL, *m8 = NULL, *b8 = NULL;
            TH_OK(cudnnGetRNNLinLayerMatrixParams(h, r6, pl, xd[0], wd, w, id, md, &m6));
            if (id != 8) TH_OK(cudnnGetRNNLinLayerBiasParams(h, r6, pl, xd[0], wd, w, id, md, &b6));
            TH_OK(cudnnGetRNNWeightParams(h, r8, pl, w8, w, id, mt, &m8, bt, &b8));
            same &= m6 == m8 && b6 == b8;
        }
    TH_CHECK(same, "v7 LinLayer params and v8 weight params point at the same places (mode %d)", mode);
    TH_STATUS(cudnnGetRNNLinLayerMatrixParams(h, r6, L * D, xd[0], wd, w, 0, md, NULL), CUDNN_STATUS_BAD_PARAM);
    /* forward */
    long tot = 0;
    for (int n = 0; n < N; n++) tot += len[n];
    long nx = tot * in, ny = tot * D * P, nh = (long)L * D * N * P, nc = (long)L * D * N * H, nw = (long)(p6 / 4);
    float *x = malloc(nx * 4), *hx = malloc(nh * 4), *cx = malloc(nc * 4), *dy = malloc(ny * 4), *dhy = malloc(nh * 4), *dcy = malloc(nc * 4);
    track(x, (size_t)(nx * 4)); track(hx, (size_t)(nh * 4)); track(cx, (size_t)(nc * 4)); track(dy, (size_t)(ny * 4)); track(dhy, (size_t)(nh * 4)); track(dcy, (size_t)(nc * 4));
    for (long i = 0; i < nx; i++) x[i] = (float)th_uniform(-1, 1);
    for (long i = 0; i < nh; i++) { hx[i] = (float)th_uniform(-1, 1); dhy[i] = (float)th_uniform(-1, 1); }
    for (long i = 0; i < nc; i++) { cx[i] = (float)th_uniform(-1, 1); dcy[i] = (float)th_uniform(-1, 1); }
    for (long i = 0; i < ny; i++) dy[i] = (float)th_uniform(-1, 1);
    float *y6 = malloc(ny * 4), *y8b = malloc(ny * 4), *hy6 = malloc(nh * 4), *hy8 = malloc(nh * 4), *cy6 = malloc(nc * 4), *cy8 = malloc(nc * 4);
    track(y6, (size_t)(ny * 4)); track(y8b, (size_t)(ny * 4)); track(hy6, (size_t)(nh * 4)); track(hy8, (size_t)(nh * 4)); track(cy6, (size_t)(nc * 4)); track(cy8, (size_t)(nc * 4));
    void *ws = malloc(ws6), *res6 = malloc(rs6), *res8 = malloc(rs8);
    track(ws, (size_t)(ws6)); track(res6, (size_t)(rs6)); track(res8, (size_t)(rs8));
    TH_OK(cudnnRNNForwardTraining(h, r6, T, xd, DV(x), hd, DV(hx), cd, DV(cx), wd, DV(w), yd, DV(y6), hd, DV(hy6), cd, DV(cy6), DV(ws), ws6, DV(res6), rs6));
    TH_OK(cudnnRNNForward(h, r8, CUDNN_FWD_MODE_TRAINING, len, x8, DV(x), y8, DV(y8b), hd, DV(hx), DV(hy8), cd, DV(cx), DV(cy8), w8, DV(w), ws8, DV(ws), rs8, DV(res8)));
    pull(y6); pull(y8b); pull(hy6); pull(hy8); pull(cy6); pull(cy8);
    TH_CHECK(bits_equal(y6, y8b, ny) && bits_equal(hy6, hy8, nh) && (mode != 2 || bits_equal(cy6, cy8, nc)), "v7 and v8 forward identical (mode %d)", mode);
    float *yi = malloc(ny * 4);
    track(yi, (size_t)(ny * 4));
    TH_OK(cudnnRNNForwardInference(h, r6, T, xd, DV(x), hd, DV(hx), cd, DV(cx), wd, DV(w), yd, DV(yi), hd, DV(hy6), cd, DV(cy6), DV(ws), ws6));
    pull(yi);
    TH_CHECK(bits_equal(yi, y8b, ny), "v7 inference equals training output");
    /* backward data */
    float *dx6 = malloc(nx * 4), *dx8 = malloc(nx * 4), *dhx6 = malloc(nh * 4), *dhx8 = malloc(nh * 4), *dcx6 = malloc(nc * 4), *dcx8 = malloc(nc * 4);
    track(dx6, (size_t)(nx * 4)); track(dx8, (size_t)(nx * 4)); track(dhx6, (size_t)(nh * 4)); track(dhx8, (size_t)(nh * 4)); track(dcx6, (size_t)(nc * 4)); track(dcx8, (size_t)(nc * 4));
    TH_OK(cudnnRNNBackwardData(h, r6, T, yd, DV(y6), yd, DV(dy), hd, DV(dhy), cd, DV(dcy), wd, DV(w), hd, DV(hx), cd, DV(cx), xd, DV(dx6), hd, DV(dhx6), cd, DV(dcx6), DV(ws), ws6, DV(res6), rs6));
    TH_OK(cudnnRNNBackwardData_v8(h, r8, len, y8, DV(y8b), DV(dy), x8, DV(dx8), hd, DV(hx), DV(dhy), DV(dhx8), cd, DV(cx), DV(dcy), DV(dcx8), w8, DV(w), ws8, DV(ws), rs8, DV(res8)));
    pull(dx6); pull(dx8); pull(dhx6); pull(dhx8); pull(dcx6); pull(dcx8);
    TH_CHECK(bits_equal(dx6, dx8, nx) && bits_equal(dhx6, dhx8, nh) && (mode != 2 || bits_equal(dcx6, dcx8, nc)), "v7 and v8 backward data identical");
    /* backward weights: v7 accumulates */
    float *dw6 = calloc(nw, 4), *dw8 = malloc(nw * 4);
    track(dw6, (size_t)(nw) * 4); track(dw8, (size_t)(nw * 4));
    TH_OK(cudnnRNNBackwardWeights(h, r6, T, xd, DV(x), hd, DV(hx), yd, DV(y6), DV(ws), ws6, wd, DV(dw6), DV(res6), rs6));
    TH_OK(cudnnRNNBackwardWeights_v8(h, r8, CUDNN_WGRAD_MODE_SET, len, x8, DV(x), hd, DV(hx), y8, DV(y8b), w8, DV(dw8), ws8, DV(ws), rs8, DV(res8)));
    pull(dw6); pull(dw8);
    int nz = 0;
    for (long i = 0; i < nw; i++) nz |= dw8[i] != 0;
    TH_CHECK(nz && bits_equal(dw6, dw8, nw), "v7 backward weights (accumulating into zeros) equals v8 SET");
    TH_OK(cudnnRNNBackwardWeights(h, r6, T, xd, DV(x), hd, DV(hx), yd, DV(y6), DV(ws), ws6, wd, DV(dw6), DV(res6), rs6));
    pull(dw6);
    int acc = 1;
    for (long i = 0; i < nw; i++) acc &= fabsf(dw6[i] - 2 * dw8[i]) <= 1e-6f * (1 + fabsf(dw8[i]));
    TH_CHECK(acc, "v7 backward weights accumulates");
    /* Ex forms with the v8 data descriptors */
    float *ye = malloc(ny * 4), *dxe = malloc(nx * 4), *dwe = calloc(nw, 4), *dhxe = malloc(nh * 4), *dcxe = malloc(nc * 4);
    track(ye, (size_t)(ny * 4)); track(dxe, (size_t)(nx * 4)); track(dwe, (size_t)(nw) * 4); track(dhxe, (size_t)(nh * 4)); track(dcxe, (size_t)(nc * 4));
    TH_OK(cudnnRNNForwardTrainingEx(h, r6, x8, DV(x), hd, DV(hx), cd, DV(cx), wd, DV(w), y8, DV(ye), hd, DV(hy6), cd, DV(cy6), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, DV(ws),
                                    ws6, DV(res6), rs6));
    pull(ye);
    TH_CHECK(bits_equal(ye, y8b, ny), "ForwardTrainingEx equals v8");
    TH_OK(cudnnRNNForwardInferenceEx(h, r6, x8, DV(x), hd, DV(hx), cd, DV(cx), wd, DV(w), y8, DV(ye), hd, DV(hy6), cd, DV(cy6), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, DV(ws), ws6));
    pull(ye);
    TH_CHECK(bits_equal(ye, y8b, ny), "ForwardInferenceEx equals v8");
    TH_STATUS(cudnnRNNForwardInferenceEx(h, r6, x8, DV(x), hd, DV(hx), cd, DV(cx), wd, DV(w), y8, DV(ye), hd, DV(hy6), cd, DV(cy6), x8, DV(x), NULL, NULL, NULL, NULL, NULL, NULL, DV(ws), ws6),
              CUDNN_STATUS_NOT_SUPPORTED);
    TH_OK(cudnnRNNForwardTrainingEx(h, r6, x8, DV(x), hd, DV(hx), cd, DV(cx), wd, DV(w), y8, DV(ye), hd, DV(hy6), cd, DV(cy6), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, DV(ws),
                                    ws6, DV(res6), rs6));
    TH_OK(cudnnRNNBackwardDataEx(h, r6, y8, DV(ye), y8, DV(dy), NULL, NULL, hd, DV(dhy), cd, DV(dcy), wd, DV(w), hd, DV(hx), cd, DV(cx), x8, DV(dxe), hd, DV(dhxe), cd, DV(dcxe), NULL, NULL, DV(ws),
                                 ws6, DV(res6), rs6));
    pull(dxe); pull(dhxe);
    TH_CHECK(bits_equal(dxe, dx8, nx) && bits_equal(dhxe, dhx8, nh), "BackwardDataEx equals v8");
    TH_OK(cudnnRNNBackwardWeightsEx(h, r6, x8, DV(x), hd, DV(hx), y8, DV(ye), DV(ws), ws6, wd, DV(dwe), DV(res6), rs6));
    pull(dwe);
    TH_CHECK(bits_equal(dwe, dw8, nw), "BackwardWeightsEx (accumulating into zeros) equals v8 SET");
    free(ye); free(dxe); free(dwe); free(dhxe); free(dcxe);
    TH_STATUS(cudnnRNNForwardTraining(h, r6, T, xd, x, hd, hx, cd, cx, wd, w, yd, y6, hd, hy6, cd, cy6, ws, ws6, res6, rs6 - 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnRNNForwardTraining(h, r6, 0, xd, x, hd, hx, cd, cx, wd, w, yd, y6, hd, hy6, cd, cy6, ws, ws6, res6, rs6), CUDNN_STATUS_BAD_PARAM);
    free(x); free(hx); free(cx); free(dy); free(dhy); free(dcy); free(y6); free(y8b); free(hy6); free(hy8); free(cy6); free(cy8); free(yi);
    twins_free();
    free(ws); free(res6); free(res8); free(dx6); free(dx8); free(dhx6); free(dhx8); free(dcx6); free(dcx8); free(dw6); free(dw8); free(w);
    for (int t = 0; t < T; t++) { cudnnDestroyTensorDescriptor(xd[t]); cudnnDestroyTensorDescriptor(yd[t]); }
    cudnnDestroyTensorDescriptor(hd); cudnnDestroyTensorDescriptor(cd); cudnnDestroyTensorDescriptor(mt); cudnnDestroyTensorDescriptor(bt);
    cudnnDestroyFilterDescriptor(wd); cudnnDestroyFilterDescriptor(md);
    cudnnDestroyRNNDataDescriptor(x8); cudnnDestroyRNNDataDescriptor(y8);
    cudnnDestroyRNNDescriptor(r6); cudnnDestroyRNNDescriptor(r8);
}

static void test_setters(void)
{
    cudnnRNNDescriptor_t r;
    cudnnCreateRNNDescriptor(&r);
    TH_STATUS(cudnnSetRNNMatrixMathType(r, CUDNN_TENSOR_OP_MATH), CUDNN_STATUS_BAD_PARAM); /* never set */
    TH_OK(cudnnSetRNNDescriptor_v6(h, r, 8, 2, NULL, CUDNN_SKIP_INPUT, CUDNN_BIDIRECTIONAL, CUDNN_GRU, CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT));
    int hs, nl;
    cudnnDropoutDescriptor_t dd;
    cudnnRNNInputMode_t im;
    cudnnDirectionMode_t dm;
    cudnnRNNMode_t cm;
    cudnnRNNAlgo_t al;
    cudnnDataType_t mp;
    TH_OK(cudnnGetRNNDescriptor_v6(h, r, &hs, &nl, &dd, &im, &dm, &cm, &al, &mp));
    TH_CHECK(hs == 8 && nl == 2 && dd == NULL && im == CUDNN_SKIP_INPUT && dm == CUDNN_BIDIRECTIONAL && cm == CUDNN_GRU && mp == CUDNN_DATA_FLOAT, "v6 getter");
    cudnnMathType_t mt;
    TH_OK(cudnnSetRNNMatrixMathType(r, CUDNN_TENSOR_OP_MATH));
    TH_OK(cudnnGetRNNMatrixMathType(r, &mt));
    TH_CHECK(mt == CUDNN_TENSOR_OP_MATH, "math type");
    TH_STATUS(cudnnSetRNNMatrixMathType(r, (cudnnMathType_t)9), CUDNN_STATUS_BAD_PARAM);
    cudnnRNNBiasMode_t bm;
    TH_OK(cudnnGetRNNBiasMode(r, &bm));
    TH_CHECK(bm == CUDNN_RNN_DOUBLE_BIAS, "default bias mode is DOUBLE");
    TH_STATUS(cudnnSetRNNBiasMode(r, (cudnnRNNBiasMode_t)7), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetRNNProjectionLayers(h, r, 4, 0), CUDNN_STATUS_NOT_SUPPORTED); /* GRU */
    unsigned pm;
    TH_OK(cudnnSetRNNPaddingMode(r, CUDNN_RNN_PADDED_IO_ENABLED));
    TH_OK(cudnnGetRNNPaddingMode(r, &pm));
    TH_CHECK(pm == CUDNN_RNN_PADDED_IO_ENABLED, "padding mode");
    TH_STATUS(cudnnSetRNNPaddingMode(r, 4), CUDNN_STATUS_BAD_PARAM);
    int cnt = 0;
    TH_OK(cudnnGetRNNForwardInferenceAlgorithmMaxCount(h, r, &cnt));
    TH_CHECK(cnt == 1, "one algorithm");
    TH_OK(cudnnGetRNNForwardTrainingAlgorithmMaxCount(h, r, &cnt));
    TH_OK(cudnnGetRNNBackwardDataAlgorithmMaxCount(h, r, &cnt));
    TH_OK(cudnnGetRNNBackwardWeightsAlgorithmMaxCount(h, r, &cnt));
    TH_STATUS(cudnnGetRNNBackwardWeightsAlgorithmMaxCount(h, r, NULL), CUDNN_STATUS_BAD_PARAM);
    cudnnPersistentRNNPlan_t plan;
    TH_OK(cudnnCreatePersistentRNNPlan(r, 4, CUDNN_DATA_FLOAT, &plan));
    TH_STATUS(cudnnSetPersistentRNNPlan(r, plan), CUDNN_STATUS_BAD_PARAM); /* algo is STANDARD */
    TH_OK(cudnnSetRNNDescriptor_v6(h, r, 8, 2, NULL, CUDNN_LINEAR_INPUT, CUDNN_UNIDIRECTIONAL, CUDNN_LSTM, CUDNN_RNN_ALGO_PERSIST_DYNAMIC, CUDNN_DATA_FLOAT));
    TH_OK(cudnnSetPersistentRNNPlan(r, plan));
    TH_OK(cudnnDestroyPersistentRNNPlan(plan));
    TH_STATUS(cudnnCreatePersistentRNNPlan(r, 0, CUDNN_DATA_FLOAT, &plan), CUDNN_STATUS_BAD_PARAM);
    int rp, op;
    TH_OK(cudnnSetRNNProjectionLayers(h, r, 5, 0));
    TH_OK(cudnnGetRNNProjectionLayers(h, r, &rp, &op));
    TH_CHECK(rp == 5 && op == 0, "projection getter");
    TH_STATUS(cudnnSetRNNProjectionLayers(h, r, 9, 0), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetRNNProjectionLayers(h, r, 4, 3), CUDNN_STATUS_NOT_SUPPORTED);
    cudnnRNNClipMode_t clm;
    cudnnNanPropagation_t nn;
    double lc, rc;
    TH_OK(cudnnRNNSetClip(h, r, CUDNN_RNN_CLIP_MINMAX, CUDNN_NOT_PROPAGATE_NAN, -1, 2));
    TH_OK(cudnnRNNGetClip(h, r, &clm, &nn, &lc, &rc));
    TH_CHECK(clm == CUDNN_RNN_CLIP_MINMAX && lc == -1 && rc == 2, "legacy clip getter");
    /* increasing batch in the per-step descriptors */
    cudnnTensorDescriptor_t xd[2];
    int d0[3] = {2, 8, 1}, d1[3] = {3, 8, 1}, st[3] = {8, 1, 1};
    cudnnCreateTensorDescriptor(&xd[0]);
    cudnnCreateTensorDescriptor(&xd[1]);
    cudnnSetTensorNdDescriptor(xd[0], CUDNN_DATA_FLOAT, 3, d0, st);
    cudnnSetTensorNdDescriptor(xd[1], CUDNN_DATA_FLOAT, 3, d1, st);
    size_t sz = 777;
    TH_STATUS(cudnnGetRNNWorkspaceSize(h, r, 2, xd, &sz), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetRNNTrainingReserveSize(h, r, 2, xd, &sz), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(sz == 777, "failed query leaves the output alone");
    cudnnDestroyTensorDescriptor(xd[0]);
    cudnnDestroyTensorDescriptor(xd[1]);
    cudnnDestroyRNNDescriptor(r);
}

int main(void)
{
    th_seed(0x76);
    h = th_create_handle();
    test_setters();
    for (int it = 0; it < 24; it++) one(it % 4, it / 4);
    cudnnDestroy(h);
    return th_finish();
}
