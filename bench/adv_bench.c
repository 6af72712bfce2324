/* LSTM and multi-head attention timings through the cuDNN API, built twice (against FreeDNN
 * and against NVIDIA's cuDNN, like tests/compat) so both run the same problem in the same way:
 *   LSTM fp16: 2 layers, hidden 1024, input 1024, batch 64, 100 steps; forward (training),
 *              backward data, backward weights.
 *   MHA fp16:  batch 32, 8 heads, sequence 512, head size 64 (embedding 512); forward
 *              (inference) and forward (training) + backward data + backward weights.
 * Only calls present in cuDNN 8.9 and 9.x are used; statuses are printed by name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

static int failed;
#define CK(x)                                                                                        \
    do {                                                                                             \
        cudnnStatus_t s_ = (x);                                                                      \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                            \
            printf("  %s: %s (line %d)\n", #x, cudnnGetErrorString(s_), __LINE__);                  \
            failed = 1;                                                                              \
            return;                                                                                  \
        }                                                                                            \
    } while (0)

static void *dev_rand(size_t bytes)
{
    unsigned short *h = malloc(bytes);
    unsigned s = 12345;
    for (size_t i = 0; i < bytes / 2; i++) {
        s = s * 1103515245u + 12345u;
        /* fp16 values in about [-0.06, 0.06]: exponent 2^-5..2^-8, random mantissa and sign */
        h[i] = (unsigned short)(((s >> 31) << 15) | ((10 + ((s >> 20) & 3)) << 10) | ((s >> 8) & 0x3ff));
    }
    void *d = NULL;
    cudaMalloc(&d, bytes);
    cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
    free(h);
    return d;
}

static cudaEvent_t e0, e1;
static float elapsed(void)
{
    float ms = 0;
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    return ms;
}

static void lstm(cudnnHandle_t h, int iters)
{
    const int L = 2, H = 1024, I = 1024, N = 64, T = 100;
    cudnnRNNDescriptor_t rnn;
    cudnnDropoutDescriptor_t dd;
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd;
    CK(cudnnCreateRNNDescriptor(&rnn));
    CK(cudnnCreateDropoutDescriptor(&dd));
    size_t ssz = 0;
    CK(cudnnDropoutGetStatesSize(h, &ssz));
    void *states = NULL;
    cudaMalloc(&states, ssz ? ssz : 1);
    CK(cudnnSetDropoutDescriptor(dd, h, 0.0f, states, ssz, 1));
    CK(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT,
                                CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, I, H, H, L, dd, CUDNN_RNN_PADDED_IO_DISABLED));
    int lens[64];
    for (int i = 0; i < N; i++) lens[i] = T;
    CK(cudnnCreateRNNDataDescriptor(&xd));
    CK(cudnnCreateRNNDataDescriptor(&yd));
    CK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_HALF, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, I, lens, NULL));
    CK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_HALF, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, H, lens, NULL));
    CK(cudnnCreateTensorDescriptor(&hd));
    int hdim[3] = {L, N, H}, hst[3] = {N * H, H, 1};
    CK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_HALF, 3, hdim, hst));
    size_t wsz, ws, rs;
    CK(cudnnGetRNNWeightSpaceSize(h, rnn, &wsz));
    CK(cudnnGetRNNTempSpaceSizes(h, rnn, CUDNN_FWD_MODE_TRAINING, xd, &ws, &rs));
    int *dlens = NULL;
    cudaMalloc((void **)&dlens, sizeof lens);
    cudaMemcpy(dlens, lens, sizeof lens, cudaMemcpyHostToDevice);
    size_t xb = (size_t)T * N * I * 2, yb = (size_t)T * N * H * 2, hb = (size_t)L * N * H * 2;
    void *w = dev_rand(wsz), *dw = dev_rand(wsz), *x = dev_rand(xb), *y = dev_rand(yb), *dy = dev_rand(yb), *dx = dev_rand(xb);
    void *hx = dev_rand(hb), *cx = dev_rand(hb), *hy = dev_rand(hb), *cy = dev_rand(hb), *dhy = dev_rand(hb), *dcy = dev_rand(hb);
    void *dhx = dev_rand(hb), *dcx = dev_rand(hb), *wsp = NULL, *rsp = NULL;
    cudaMalloc(&wsp, ws ? ws : 1);
    cudaMalloc(&rsp, rs ? rs : 1);
    printf("LSTM fp16 L=%d H=%d N=%d T=%d: weights %zu B, workspace %zu B, reserve %zu B\n", L, H, N, T, wsz, ws, rs);
    float f = 0, bd = 0, bw = 0;
    for (int it = -1; it < iters; it++) { /* it == -1: warm-up */
        cudaEventRecord(e0, 0);
        CK(cudnnRNNForward(h, rnn, CUDNN_FWD_MODE_TRAINING, dlens, xd, x, yd, y, hd, hx, hy, hd, cx, cy, wsz, w, ws, wsp, rs, rsp));
        float t = elapsed();
        if (it >= 0) f += t;
        cudaEventRecord(e0, 0);
        CK(cudnnRNNBackwardData_v8(h, rnn, dlens, yd, y, dy, xd, dx, hd, hx, dhy, dhx, hd, cx, dcy, dcx, wsz, w, ws, wsp, rs, rsp));
        t = elapsed();
        if (it >= 0) bd += t;
        cudaEventRecord(e0, 0);
        CK(cudnnRNNBackwardWeights_v8(h, rnn, CUDNN_WGRAD_MODE_ADD, dlens, xd, x, hd, hx, yd, y, wsz, dw, ws, wsp, rs, rsp));
        t = elapsed();
        if (it >= 0) bw += t;
    }
    printf("  forward(training) %.3f ms  backward-data %.3f ms  backward-weights %.3f ms  total %.3f ms\n", f / iters, bd / iters,
           bw / iters, (f + bd + bw) / iters);
}

static void mha(cudnnHandle_t h, int iters)
{
    const int B = 32, NH = 8, S = 512, D = 64, E = NH * D;
    cudnnAttnDescriptor_t ad;
    cudnnSeqDataDescriptor_t qd;
    CK(cudnnCreateAttnDescriptor(&ad));
    CK(cudnnSetAttnDescriptor(ad, CUDNN_ATTN_QUERYMAP_ALL_TO_ONE | CUDNN_ATTN_DISABLE_PROJ_BIASES, NH, 0.125, CUDNN_DATA_HALF,
                              CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, NULL, NULL, E, E, E, D, D, D, E, S, S, B, 1));
    CK(cudnnCreateSeqDataDescriptor(&qd));
    int dims[CUDNN_SEQDATA_DIM_COUNT];
    dims[CUDNN_SEQDATA_TIME_DIM] = S;
    dims[CUDNN_SEQDATA_BATCH_DIM] = B;
    dims[CUDNN_SEQDATA_BEAM_DIM] = 1;
    dims[CUDNN_SEQDATA_VECT_DIM] = E;
    cudnnSeqDataAxis_t axes[CUDNN_SEQDATA_DIM_COUNT] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM,
                                                        CUDNN_SEQDATA_VECT_DIM};
    int lens[32];
    for (int i = 0; i < B; i++) lens[i] = S;
    CK(cudnnSetSeqDataDescriptor(qd, CUDNN_DATA_HALF, CUDNN_SEQDATA_DIM_COUNT, dims, axes, (size_t)B, lens, NULL));
    size_t wsz, ws, rs, ws_inf;
    /* training sizes (reserve requested) and inference sizes (reserve pointer NULL) differ */
    CK(cudnnGetMultiHeadAttnBuffers(h, ad, &wsz, &ws, &rs));
    CK(cudnnGetMultiHeadAttnBuffers(h, ad, &wsz, &ws_inf, NULL));
    if (ws_inf > ws) ws = ws_inf;
    int lo[512], hi[512];
    for (int i = 0; i < S; i++) {
        lo[i] = 0;
        hi[i] = S;
    }
    int *dl = NULL;
    cudaMalloc((void **)&dl, sizeof lens);
    cudaMemcpy(dl, lens, sizeof lens, cudaMemcpyHostToDevice);
    size_t tb = (size_t)B * S * E * 2;
    void *q = dev_rand(tb), *k = dev_rand(tb), *v = dev_rand(tb), *o = dev_rand(tb), *dout = dev_rand(tb), *dq = dev_rand(tb),
         *dk = dev_rand(tb), *dv = dev_rand(tb), *w = dev_rand(wsz), *dw = dev_rand(wsz), *wsp = NULL, *rsp = NULL;
    cudaMalloc(&wsp, ws ? ws : 1);
    cudaMalloc(&rsp, rs ? rs : 1);
    printf("MHA fp16 B=%d heads=%d S=%d D=%d: weights %zu B, workspace %zu B, reserve %zu B\n", B, NH, S, D, wsz, ws, rs);
    float fi = 0, ft = 0, bd = 0, bw = 0;
    for (int it = -1; it < iters; it++) {
        cudaEventRecord(e0, 0);
        CK(cudnnMultiHeadAttnForward(h, ad, -1, lo, hi, dl, dl, qd, q, NULL, qd, k, qd, v, qd, o, wsz, w, ws_inf, ws_inf ? wsp : NULL, 0, NULL));
        float t = elapsed();
        if (it >= 0) fi += t;
        cudaEventRecord(e0, 0);
        CK(cudnnMultiHeadAttnForward(h, ad, -1, lo, hi, dl, dl, qd, q, NULL, qd, k, qd, v, qd, o, wsz, w, ws, wsp, rs, rsp));
        t = elapsed();
        if (it >= 0) ft += t;
        cudaEventRecord(e0, 0);
        CK(cudnnMultiHeadAttnBackwardData(h, ad, lo, hi, dl, dl, qd, dout, qd, dq, q, qd, dk, k, qd, dv, v, wsz, w, ws, wsp, rs, rsp));
        t = elapsed();
        if (it >= 0) bd += t;
        cudaEventRecord(e0, 0);
        CK(cudnnMultiHeadAttnBackwardWeights(h, ad, CUDNN_WGRAD_MODE_ADD, qd, q, qd, k, qd, v, qd, dout, wsz, w, dw, ws, wsp, rs, rsp));
        t = elapsed();
        if (it >= 0) bw += t;
    }
    printf("  forward(inference) %.3f ms  forward(training) %.3f ms  backward-data %.3f ms  backward-weights %.3f ms\n", fi / iters,
           ft / iters, bd / iters, bw / iters);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 5;
    cudnnHandle_t h;
    cudnnStatus_t st = cudnnCreate(&h);
    printf("library %zu create %s\n", cudnnGetVersion(), cudnnGetErrorString(st));
    if (st != CUDNN_STATUS_SUCCESS) return 77;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    lstm(h, iters);
    mha(h, iters);
    cudnnDestroy(h);
    return failed;
}
