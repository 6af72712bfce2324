/* Compat probe 3: RNN training (cudnnRNNForward in TRAINING mode, cudnnRNNBackwardData_v8,
 * cudnnRNNBackwardWeights_v8) for LSTM and GRU, and multi-head attention (forward in training
 * mode, backward data, backward weights), built once against FreeDNN and once against NVIDIA's
 * cuDNN 9 (only calls present in both). Weights are written and weight gradients read through
 * cudnnGetRNNWeightParams / cudnnGetMultiHeadAttnWeights and the descriptors they return, in
 * logical (layer, id, row, col) / (head, row, col) order, so each library's own layout is used
 * and the printed values do not depend on it. Deterministic: fixed data, dropout 0. compare.py
 * compares the two outputs ("f32_rnn_..." and "f32_mha_..." lines). */
#include "compat_util.h"

static cudnnHandle_t H;

static cudnnTensorDescriptor_t t3(int a, int b, int c)
{
    cudnnTensorDescriptor_t d;
    int dims[3] = {a, b, c}, str[3] = {b * c, c, 1};
    cudnnCreateTensorDescriptor(&d);
    cudnnSetTensorNdDescriptor(d, CUDNN_DATA_FLOAT, 3, dims, str);
    return d;
}

static cudnnDropoutDescriptor_t no_dropout(void **states)
{
    cudnnDropoutDescriptor_t dd;
    size_t n = 0;
    cudnnCreateDropoutDescriptor(&dd);
    cudnnDropoutGetStatesSize(H, &n);
    *states = dev_alloc(n);
    cudnnSetDropoutDescriptor(dd, H, 0.0f, *states, n, 1234);
    return dd;
}

/* ---------------------------------------------------------------- RNN training */
/* Walks every matrix and bias of the weight space in (layer, id, matrix then bias) order.
 * fill != 0: writes w(l, id, r, c) into host image `img` of the space at `base`;
 * fill == 0: appends the values of `img` (a downloaded gradient space) to out[]. */
static size_t rnn_walk(cudnnRNNDescriptor_t rd, int layers, int nlin, size_t wsz, void *base, float *img, int fill, float *out, cudnnStatus_t *wst)
{
    cudnnTensorDescriptor_t md, bd;
    cudnnCreateTensorDescriptor(&md);
    cudnnCreateTensorDescriptor(&bd);
    size_t k = 0;
    for (int l = 0; l < layers; l++)
        for (int id = 0; id < nlin; id++) {
            void *ma = NULL, *ba = NULL;
            cudnnStatus_t s = cudnnGetRNNWeightParams(H, rd, l, wsz, base, id, md, &ma, bd, &ba);
            if (s != CUDNN_STATUS_SUCCESS) { *wst = s; continue; }
            for (int which = 0; which < 2; which++) {
                void *a = which ? ba : ma;
                if (!a) continue;
                cudnnDataType_t t;
                int nd = 0, dims[4] = {0, 0, 0, 0}, str[4] = {0, 0, 0, 0};
                cudnnGetTensorNdDescriptor(which ? bd : md, 4, &t, &nd, dims, str);
                /* documented 3-d {1, rows, cols} (cols 1 for biases): the last two dims, through the strides */
                int rows = nd >= 2 ? dims[nd - 2] : dims[0], cols = nd >= 2 ? dims[nd - 1] : 1;
                size_t rstr = (size_t)(nd >= 2 ? str[nd - 2] : str[0]), cstr = (size_t)(nd >= 2 ? str[nd - 1] : 0);
                size_t off = (size_t)((char *)a - (char *)base) / 4;
                for (int r = 0; r < rows; r++)
                    for (int c = 0; c < cols; c++) {
                        size_t e = off + (size_t)r * rstr + (size_t)c * cstr;
                        if (fill) img[e] = which ? (float)(((l + id * 2 + r * 3) % 5) - 2) * 0.0625f
                                                 : (float)(((l * 7 + id * 3 + r * 5 + c * 11) % 9) - 4) * 0.03125f;
                        else out[k] = img[e];
                        k++;
                    }
            }
        }
    cudnnDestroyTensorDescriptor(md);
    cudnnDestroyTensorDescriptor(bd);
    return k;
}

static void rnn_train(const char *tag, cudnnRNNMode_t cell, cudnnRNNDataLayout_t layout)
{
    enum { L = 2, IN = 16, HID = 32, N = 3, T = 5 };
    static const int seqlens[N] = {3, 5, 2}; /* ragged and unsorted */
    char name[96];
    snprintf(name, sizeof name, "f32_rnn_train_%s", tag);
    void *dstates;
    cudnnDropoutDescriptor_t dd = no_dropout(&dstates);
    cudnnRNNDescriptor_t rd;
    cudnnCreateRNNDescriptor(&rd);
    cudnnStatus_t st = cudnnSetRNNDescriptor_v8(rd, CUDNN_RNN_ALGO_STANDARD, cell, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT,
                                                CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, IN, HID, HID, L, dd, CUDNN_RNN_PADDED_IO_ENABLED);
    report(name, "set_descriptor", st, NULL, 0, CUDNN_DATA_FLOAT);
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnCreateRNNDataDescriptor(&xd);
    cudnnCreateRNNDataDescriptor(&yd);
    float pad = 0;
    cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, layout, T, N, IN, seqlens, &pad);
    cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, layout, T, N, HID, seqlens, &pad);
    cudnnTensorDescriptor_t hd = t3(L, N, HID);
    size_t wsz = 0, work = 0, reserve = 0;
    cudnnGetRNNWeightSpaceSize(H, rd, &wsz);
    st = cudnnGetRNNTempSpaceSizes(H, rd, CUDNN_FWD_MODE_TRAINING, xd, &work, &reserve);
    report(name, "temp_space_sizes", st, NULL, 0, CUDNN_DATA_FLOAT);
    int nlin = cell == CUDNN_LSTM ? 8 : cell == CUDNN_GRU ? 6 : 2;
    float *img = calloc(wsz / 4 + 1, 4);
    void *wsp = dev_alloc(wsz);
    cudnnStatus_t wst = CUDNN_STATUS_SUCCESS;
    size_t nparam = rnn_walk(rd, L, nlin, wsz, wsp, img, 1, NULL, &wst);
    cudaMemcpy(wsp, img, wsz, cudaMemcpyHostToDevice);
    report(name, "weight_params", wst, NULL, 0, CUDNN_DATA_FLOAT);
    size_t nxv = (size_t)T * N * IN, nyv = (size_t)T * N * HID, nh = (size_t)L * N * HID;
    /* padded positions of x and dy hold data too; they must be ignored */
    void *x = dev_fill_so(nxv, CUDNN_DATA_FLOAT, 91, 0.25, 0), *hx = dev_fill_so(nh, CUDNN_DATA_FLOAT, 92, 0.25, 0),
         *cx = dev_fill_so(nh, CUDNN_DATA_FLOAT, 93, 0.25, 0);
    void *y = dev_alloc(nyv * 4), *hy = dev_alloc(nh * 4), *cy = dev_alloc(nh * 4);
    cudaMemset(y, 0, nyv * 4);
    cudaMemset(hy, 0, nh * 4);
    cudaMemset(cy, 0, nh * 4);
    void *wk = dev_alloc(work), *rs = dev_alloc(reserve);
    void *dseq = dev_upload(seqlens, sizeof seqlens);
    int lstm = cell == CUDNN_LSTM;
    st = cudnnRNNForward(H, rd, CUDNN_FWD_MODE_TRAINING, dseq, xd, x, yd, y, hd, hx, hy, lstm ? hd : NULL, lstm ? cx : NULL, lstm ? cy : NULL, wsz, wsp,
                         work, wk, reserve, rs);
    report(name, "fwd_y", st, y, nyv, CUDNN_DATA_FLOAT);
    report(name, "fwd_hy", st, hy, nh, CUDNN_DATA_FLOAT);
    if (lstm) report(name, "fwd_cy", st, cy, nh, CUDNN_DATA_FLOAT);
    /* backward data */
    void *dy = dev_fill_so(nyv, CUDNN_DATA_FLOAT, 94, 0.25, 0), *dhy = dev_fill_so(nh, CUDNN_DATA_FLOAT, 95, 0.25, 0),
         *dcy = dev_fill_so(nh, CUDNN_DATA_FLOAT, 96, 0.25, 0);
    void *dx = dev_alloc(nxv * 4), *dhx = dev_alloc(nh * 4), *dcx = dev_alloc(nh * 4);
    cudaMemset(dx, 0, nxv * 4);
    cudaMemset(dhx, 0, nh * 4);
    cudaMemset(dcx, 0, nh * 4);
    cudnnStatus_t st2 = cudnnRNNBackwardData_v8(H, rd, dseq, yd, y, dy, xd, dx, hd, hx, dhy, dhx, lstm ? hd : NULL, lstm ? cx : NULL, lstm ? dcy : NULL,
                                                lstm ? dcx : NULL, wsz, wsp, work, wk, reserve, rs);
    if (st != CUDNN_STATUS_SUCCESS) st2 = st;
    report(name, "bwd_dx", st2, dx, nxv, CUDNN_DATA_FLOAT);
    report(name, "bwd_dhx", st2, dhx, nh, CUDNN_DATA_FLOAT);
    if (lstm) report(name, "bwd_dcx", st2, dcx, nh, CUDNN_DATA_FLOAT);
    /* backward weights: ADD (the mode both libraries support) into zeros */
    void *dw = dev_alloc(wsz);
    cudaMemset(dw, 0, wsz);
    cudnnStatus_t st3 = cudnnRNNBackwardWeights_v8(H, rd, CUDNN_WGRAD_MODE_ADD, dseq, xd, x, hd, hx, yd, y, wsz, dw, work, wk, reserve, rs);
    if (st2 != CUDNN_STATUS_SUCCESS) st3 = st2;
    float *gimg = calloc(wsz / 4 + 1, 4), *g = calloc(nparam + 1, 4);
    cudaDeviceSynchronize();
    cudaMemcpy(gimg, dw, wsz, cudaMemcpyDeviceToHost);
    size_t ng = rnn_walk(rd, L, nlin, wsz, dw, gimg, 0, g, &wst);
    report_host(name, "bwd_dw", st3, g, ng);
    free(img); free(gimg); free(g);
    cudaFree(x); cudaFree(hx); cudaFree(cx); cudaFree(y); cudaFree(hy); cudaFree(cy); cudaFree(dy); cudaFree(dhy); cudaFree(dcy);
    cudaFree(dx); cudaFree(dhx); cudaFree(dcx); cudaFree(dw); cudaFree(wk); cudaFree(rs); cudaFree(dseq); cudaFree(wsp); cudaFree(dstates);
    cudnnDestroyTensorDescriptor(hd);
    cudnnDestroyRNNDataDescriptor(xd);
    cudnnDestroyRNNDataDescriptor(yd);
    cudnnDestroyRNNDescriptor(rd);
    cudnnDestroyDropoutDescriptor(dd);
}

/* ---------------------------------------------------------------- multi-head attention */
/* Walks the weights of one kind in (head, row, col) order through the returned descriptor:
 * fill != 0 writes a function of (kind, h, r, c) into img; otherwise appends img's values to out. */
static size_t attn_walk(cudnnAttnDescriptor_t ad, int kind, size_t wsz, void *base, float *img, int fill, float *out, cudnnStatus_t *wst)
{
    cudnnTensorDescriptor_t wd;
    cudnnCreateTensorDescriptor(&wd);
    void *addr = NULL;
    size_t k = 0;
    cudnnStatus_t s = cudnnGetMultiHeadAttnWeights(H, ad, (cudnnMultiHeadAttnWeightKind_t)kind, wsz, base, wd, &addr);
    if (s != CUDNN_STATUS_SUCCESS) *wst = s;
    if (s == CUDNN_STATUS_SUCCESS && addr) {
        cudnnDataType_t t;
        int nd = 0, dims[4] = {1, 1, 1, 1}, str[4] = {0, 0, 0, 0};
        cudnnGetTensorNdDescriptor(wd, 4, &t, &nd, dims, str);
        size_t off = (size_t)((char *)addr - (char *)base) / 4;
        for (int hh = 0; hh < dims[0]; hh++)
            for (int r = 0; r < (nd > 1 ? dims[1] : 1); r++)
                for (int c = 0; c < (nd > 2 ? dims[2] : 1); c++) {
                    size_t e = off + (size_t)hh * str[0] + (size_t)r * (nd > 1 ? str[1] : 0) + (size_t)c * (nd > 2 ? str[2] : 0);
                    if (fill) img[e] = (float)(((kind * 5 + hh * 3 + r * 7 + c * 2) % 9) - 4) * 0.0625f;
                    else out[k] = img[e];
                    k++;
                }
    }
    cudnnDestroyTensorDescriptor(wd);
    return k;
}

static cudnnSeqDataDescriptor_t seqdata(int T, int N, int V, const int *lens)
{
    cudnnSeqDataDescriptor_t d;
    cudnnCreateSeqDataDescriptor(&d);
    int dimA[CUDNN_SEQDATA_DIM_COUNT];
    dimA[CUDNN_SEQDATA_TIME_DIM] = T;
    dimA[CUDNN_SEQDATA_BATCH_DIM] = N;
    dimA[CUDNN_SEQDATA_BEAM_DIM] = 1;
    dimA[CUDNN_SEQDATA_VECT_DIM] = V;
    cudnnSeqDataAxis_t axes[CUDNN_SEQDATA_DIM_COUNT] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_VECT_DIM};
    cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_SEQDATA_DIM_COUNT, dimA, axes, (size_t)N, lens, NULL);
    return d;
}

static void attn(void)
{
    enum { NH = 2, E = 8, P = 4, O = 8, TQ = 4, TK = 5, N = 2 };
    static const int lq[N] = {4, 2}, lk[N] = {3, 5};
    const char *name = "f32_mha_train";
    void *s1, *s2;
    cudnnDropoutDescriptor_t d1 = no_dropout(&s1), d2 = no_dropout(&s2);
    cudnnAttnDescriptor_t ad;
    cudnnCreateAttnDescriptor(&ad);
    cudnnStatus_t st = cudnnSetAttnDescriptor(ad, CUDNN_ATTN_QUERYMAP_ALL_TO_ONE | CUDNN_ATTN_ENABLE_PROJ_BIASES, NH, 0.5, CUDNN_DATA_FLOAT,
                                              CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, d1, d2, E, E, E, P, P, P, O, TQ, TK, N, 1);
    report(name, "set_descriptor", st, NULL, 0, CUDNN_DATA_FLOAT);
    size_t wsz = 0, work = 0, reserve = 0;
    st = cudnnGetMultiHeadAttnBuffers(H, ad, &wsz, &work, &reserve);
    report(name, "buffers", st, NULL, 0, CUDNN_DATA_FLOAT);
    float *img = calloc(wsz / 4 + 1, 4);
    void *w = dev_alloc(wsz);
    cudnnStatus_t wst = CUDNN_STATUS_SUCCESS;
    for (int kind = 0; kind < 8; kind++) attn_walk(ad, kind, wsz, w, img, 1, NULL, &wst);
    cudaMemcpy(w, img, wsz, cudaMemcpyHostToDevice);
    report(name, "weights", wst, NULL, 0, CUDNN_DATA_FLOAT);
    cudnnSeqDataDescriptor_t qd = seqdata(TQ, N, E, lq), od = seqdata(TQ, N, O, lq), kd = seqdata(TK, N, E, lk);
    size_t nq = (size_t)TQ * N * E, no = (size_t)TQ * N * O, nk = (size_t)TK * N * E;
    void *q = dev_fill_so(nq, CUDNN_DATA_FLOAT, 101, 0.25, 0), *k = dev_fill_so(nk, CUDNN_DATA_FLOAT, 102, 0.25, 0),
         *v = dev_fill_so(nk, CUDNN_DATA_FLOAT, 103, 0.25, 0), *out = dev_alloc(no * 4);
    cudaMemset(out, 0, no * 4);
    void *dlq = dev_upload(lq, sizeof lq), *dlk = dev_upload(lk, sizeof lk), *wk = dev_alloc(work), *rs = dev_alloc(reserve);
    int lo[TQ], hi[TQ];
    for (int t = 0; t < TQ; t++) { lo[t] = 0; hi[t] = TK; }
    st = cudnnMultiHeadAttnForward(H, ad, -1, lo, hi, dlq, dlk, qd, q, NULL, kd, k, kd, v, od, out, wsz, w, work, wk, reserve, rs);
    report(name, "fwd_out", st, out, no, CUDNN_DATA_FLOAT);
    /* the same output split into the rows of each sequence's length and the padding rows beyond
     * it (out was zeroed before the call), so a difference shows where it is */
    {
        float *ho = calloc(no, 4), *hv = calloc(no, 4), *hp = calloc(no, 4);
        cudaDeviceSynchronize();
        cudaMemcpy(ho, out, no * 4, cudaMemcpyDeviceToHost);
        for (int n = 0; n < N; n++)
            for (int t = 0; t < TQ; t++)
                for (int c = 0; c < O; c++) {
                    size_t i = ((size_t)n * TQ + t) * O + c;
                    (t < lq[n] ? hv : hp)[i] = ho[i];
                }
        report_host(name, "fwd_out_valid_rows", st, hv, no);
        report_host(name, "fwd_out_padding_rows", st, hp, no);
        free(ho); free(hv); free(hp);
    }
    /* dout is zero in the padding rows (the rows beyond each sequence's length): what the
     * gradients then hold depends only on the valid rows */
    void *dout = dev_fill_so(no, CUDNN_DATA_FLOAT, 104, 0.25, 0);
    {
        float *hd = calloc(no, 4);
        cudaMemcpy(hd, dout, no * 4, cudaMemcpyDeviceToHost);
        for (int n = 0; n < N; n++)
            for (int t = lq[n]; t < TQ; t++)
                for (int c = 0; c < O; c++) hd[((size_t)n * TQ + t) * O + c] = 0;
        cudaMemcpy(dout, hd, no * 4, cudaMemcpyHostToDevice);
        free(hd);
    }
    void *dq = dev_alloc(nq * 4), *dk = dev_alloc(nk * 4), *dv = dev_alloc(nk * 4);
    cudaMemset(dq, 0, nq * 4);
    cudaMemset(dk, 0, nk * 4);
    cudaMemset(dv, 0, nk * 4);
    cudnnStatus_t st2 = cudnnMultiHeadAttnBackwardData(H, ad, lo, hi, dlq, dlk, od, dout, qd, dq, q, kd, dk, k, kd, dv, v, wsz, w, work, wk, reserve, rs);
    if (st != CUDNN_STATUS_SUCCESS) st2 = st;
    report(name, "bwd_dq", st2, dq, nq, CUDNN_DATA_FLOAT);
    report(name, "bwd_dk", st2, dk, nk, CUDNN_DATA_FLOAT);
    report(name, "bwd_dv", st2, dv, nk, CUDNN_DATA_FLOAT);
    void *dw = dev_alloc(wsz);
    cudaMemset(dw, 0, wsz);
    cudnnStatus_t st3 = cudnnMultiHeadAttnBackwardWeights(H, ad, CUDNN_WGRAD_MODE_ADD, qd, q, kd, k, kd, v, od, dout, wsz, w, dw, work, wk, reserve, rs);
    if (st2 != CUDNN_STATUS_SUCCESS) st3 = st2;
    float *gimg = calloc(wsz / 4 + 1, 4), *g = calloc(wsz / 4 + 1, 4);
    cudaDeviceSynchronize();
    cudaMemcpy(gimg, dw, wsz, cudaMemcpyDeviceToHost);
    static const char *kinds[8] = {"bwd_dwq", "bwd_dwk", "bwd_dwv", "bwd_dwo", "bwd_dbq", "bwd_dbk", "bwd_dbv", "bwd_dbo"};
    for (int kind = 0; kind < 8; kind++) {
        size_t n = attn_walk(ad, kind, wsz, dw, gimg, 0, g, &wst);
        report_host(name, kinds[kind], st3, g, n);
    }
    /* backward weights again with dout nonzero in the padding rows too: whether a library reads
     * the padding rows of dout for the output-projection gradients */
    {
        void *dout2 = dev_fill_so(no, CUDNN_DATA_FLOAT, 104, 0.25, 0);
        cudaMemset(dw, 0, wsz);
        cudnnStatus_t st4 = cudnnMultiHeadAttnBackwardWeights(H, ad, CUDNN_WGRAD_MODE_ADD, qd, q, kd, k, kd, v, od, dout2, wsz, w, dw, work, wk,
                                                              reserve, rs);
        if (st3 != CUDNN_STATUS_SUCCESS) st4 = st3;
        cudaDeviceSynchronize();
        cudaMemcpy(gimg, dw, wsz, cudaMemcpyDeviceToHost);
        size_t n = attn_walk(ad, 7, wsz, dw, gimg, 0, g, &wst);
        report_host(name, "bwd_dbo_padded_dout", st4, g, n);
        n = attn_walk(ad, 3, wsz, dw, gimg, 0, g, &wst);
        report_host(name, "bwd_dwo_padded_dout", st4, g, n);
        cudaFree(dout2);
    }
    free(img); free(gimg); free(g);
    cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(out); cudaFree(dout); cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(dw); cudaFree(w);
    cudaFree(dlq); cudaFree(dlk); cudaFree(wk); cudaFree(rs); cudaFree(s1); cudaFree(s2);
    cudnnDestroySeqDataDescriptor(qd);
    cudnnDestroySeqDataDescriptor(od);
    cudnnDestroySeqDataDescriptor(kd);
    cudnnDestroyAttnDescriptor(ad);
    cudnnDestroyDropoutDescriptor(d1);
    cudnnDestroyDropoutDescriptor(d2);
}

int main(void)
{
    cudnnStatus_t st = cudnnCreate(&H);
    printf("library %zu create %s\n", cudnnGetVersion(), cudnnGetErrorString(st));
    if (st != CUDNN_STATUS_SUCCESS) return 1;
    rnn_train("lstm_l2_h32_batch_major", CUDNN_LSTM, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED);
    rnn_train("gru_l2_h32_seq_major", CUDNN_GRU, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED);
    attn();
    cudnnDestroy(H);
    return 0;
}
