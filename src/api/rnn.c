/* cudnnRNNForward, cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8 on the CPU backend
 * (engine in src/cpu/rnn_cpu.c, shared with the v6/v7 entry points of rnn_legacy.c). */
#include <stdlib.h>
#include <string.h>
#include "../core/adv_desc.h"
#include "../cpu/rnn_cpu.h"
#include "rnn_internal.h"

static cudnnStatus_t check_state_desc(const struct cudnnTensorStruct *t, const char *name, cudnnDataType_t dt, int d0, int d1, int d2)
{
    FDNN_CHECK(fdnn_check_tensor(t, name));
    if (t->nb_dims != 3 || t->dim[0] != d0 || t->dim[1] != d1 || t->dim[2] != d2)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s must be 3-D [numLayers*dirs=%d, batch=%d, %d]", name, d0, d1, d2);
    if (t->stride[2] != 1 || t->stride[1] != d2 || t->stride[0] != (int64_t)d1 * d2)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s must be fully packed", name);
    if (t->dtype != dt) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s; the RNN is %s", name, fdnn_dtype_name(t->dtype), fdnn_dtype_name(dt));
    return CUDNN_STATUS_SUCCESS;
}

/* Everything the v8 calls share. Fills run, xio, yio (pack offsets malloc'ed into *pack). */
cudnnStatus_t fdnn_rnn_prepare(cudnnHandle_t handle, const struct cudnnRNNStruct *rd, const int32_t *devSeqLengths,
                               const struct cudnnRNNDataStruct *xd, const struct cudnnRNNDataStruct *yd, const struct cudnnTensorStruct *hd,
                               const struct cudnnTensorStruct *cd, size_t wsize, const void *w, size_t work_size, void *work, size_t res_size,
                               void *res, int training, fdnn_rnn_run *run, fdnn_rnn_io *xio, fdnn_rnn_io *yio, int64_t **pack)
{
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_rnn_check(rd, "rnnDesc"));
    FDNN_CHECK(fdnn_rnn_data_check(xd, "xDesc"));
    FDNN_CHECK(fdnn_rnn_data_check(yd, "yDesc"));
    fdnn_rnn_geom g;
    fdnn_rnn_geom_of(rd, &g);
    if (xd->dtype != rd->data_type || yd->dtype != rd->data_type)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc/yDesc data type must be the RNN's %s", fdnn_dtype_name(rd->data_type));
    if (xd->vec != g.in0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc vectorSize=%d must equal inputSize=%d", xd->vec, g.in0);
    if (yd->vec != g.D * g.P)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "yDesc vectorSize=%d must equal dirs*projSize=%d", yd->vec, g.D * g.P);
    if (yd->layout != xd->layout || yd->max_seq != xd->max_seq || yd->batch != xd->batch ||
        memcmp(yd->seq_len, xd->seq_len, sizeof(int) * (size_t)xd->batch) != 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "yDesc must have the layout, maxSeqLength, batchSize and seqLengthArray of xDesc");
    /* On a CUDA handle devSeqLengths is device memory: it is not read; the engine uses the host
     * seqLengthArray of xDesc (the cuDNN contract says both hold the same lengths). */
    if (handle->backend != FDNN_BACKEND_CUDA && devSeqLengths && memcmp(devSeqLengths, xd->seq_len, sizeof(int) * (size_t)xd->batch) != 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "devSeqLengths differs from the seqLengthArray of xDesc");
    if (!devSeqLengths) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "devSeqLengths is NULL");
    int T = xd->max_seq, N = xd->batch;
    if (hd) FDNN_CHECK(check_state_desc(hd, "hDesc", rd->data_type, g.L * g.D, N, g.P));
    if (g.mode == CUDNN_LSTM) {
        if (!cd) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "cDesc is NULL; LSTM needs it");
        FDNN_CHECK(check_state_desc(cd, "cDesc", rd->data_type, g.L * g.D, N, g.H));
    }
    size_t wneed = (size_t)fdnn_rnn_weight_count(&g) * fdnn_dtype_size(rd->data_type);
    if (wsize < wneed) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "weightSpaceSize=%zu is smaller than the %zu bytes required", wsize, wneed);
    if (!w) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "weightSpace is NULL");
    size_t wk = fdnn_rnn_work_bytes(&g, T, N, training);
    if (work_size < wk || !work)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workSpace is NULL or workSpaceSize=%zu is smaller than the %zu bytes required", work_size, wk);
    if (training) {
        size_t rk = fdnn_rnn_reserve_bytes(&g, T, N);
        if (res_size < rk || !res)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reserveSpace is NULL or reserveSpaceSize=%zu is smaller than the %zu bytes required", res_size, rk);
    }
    memset(run, 0, sizeof *run);
    run->handle = handle;
    run->desc = rd;
    run->g = g;
    run->T = T;
    run->N = N;
    run->len = xd->seq_len;
    run->dtype = rd->data_type;
    run->training = training;
    run->w = w;
    run->work = work;
    run->reserve = res;
    *pack = NULL;
    if (xd->layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED) {
        *pack = malloc(sizeof(int64_t) * (size_t)(T + 1));
        if (!*pack) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
        int64_t o = 0;
        for (int t = 0; t <= T; t++) {
            (*pack)[t] = o;
            if (t < T)
                for (int n = 0; n < N; n++) o += xd->seq_len[n] > t;
        }
    }
    fdnn_rnn_io *ios[2] = {xio, yio};
    const struct cudnnRNNDataStruct *ds[2] = {xd, yd};
    for (int i = 0; i < 2; i++) {
        ios[i]->layout = ds[i]->layout;
        ios[i]->dtype = ds[i]->dtype;
        ios[i]->T = T;
        ios[i]->N = N;
        ios[i]->V = ds[i]->vec;
        ios[i]->len = ds[i]->seq_len;
        ios[i]->pack_off = *pack;
        ios[i]->has_fill = ds[i]->has_fill;
        ios[i]->fill = ds[i]->fill;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNForward(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnForwardMode_t fwdMode,
                                                      const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t xDesc, const void *x,
                                                      cudnnRNNDataDescriptor_t yDesc, void *y, cudnnTensorDescriptor_t hDesc, const void *hx,
                                                      void *hy, cudnnTensorDescriptor_t cDesc, const void *cx, void *cy, size_t weightSpaceSize,
                                                      const void *weightSpace, size_t workSpaceSize, void *workSpace, size_t reserveSpaceSize,
                                                      void *reserveSpace)
{
    FDNN_API_ENTER();
    if (fwdMode != CUDNN_FWD_MODE_INFERENCE && fwdMode != CUDNN_FWD_MODE_TRAINING)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "fwdMode=%d is not a cudnnForwardMode_t", (int)fwdMode);
    fdnn_rnn_run run;
    fdnn_rnn_io xio, yio;
    int64_t *pack = NULL;
    FDNN_CHECK(fdnn_rnn_prepare(handle, rnnDesc, devSeqLengths, xDesc, yDesc, hDesc, cDesc, weightSpaceSize, weightSpace, workSpaceSize,
                                workSpace, reserveSpaceSize, reserveSpace, fwdMode == CUDNN_FWD_MODE_TRAINING, &run, &xio, &yio, &pack));
    if (!x || !y) { free(pack); return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "x or y is NULL"); }
    if ((hx || hy) && !hDesc) { free(pack); return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "hx or hy is given but hDesc is NULL"); }
    FDNN_API_LOG(handle, "mode=%d T=%d N=%d training=%d", (int)rnnDesc->cell_mode, run.T, run.N, run.training);
    cudnnStatus_t st = fdnn_rnn_cpu_forward(&run, &xio, x, &yio, y, hx, hy, cx, cy);
    free(pack);
    return st;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNBackwardData_v8(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, const int32_t devSeqLengths[],
                                                              cudnnRNNDataDescriptor_t yDesc, const void *y, const void *dy,
                                                              cudnnRNNDataDescriptor_t xDesc, void *dx, cudnnTensorDescriptor_t hDesc,
                                                              const void *hx, const void *dhy, void *dhx, cudnnTensorDescriptor_t cDesc,
                                                              const void *cx, const void *dcy, void *dcx, size_t weightSpaceSize,
                                                              const void *weightSpace, size_t workSpaceSize, void *workSpace,
                                                              size_t reserveSpaceSize, void *reserveSpace)
{
    FDNN_API_ENTER();
    fdnn_rnn_run run;
    fdnn_rnn_io xio, yio;
    int64_t *pack = NULL;
    FDNN_CHECK(fdnn_rnn_prepare(handle, rnnDesc, devSeqLengths, xDesc, yDesc, hDesc, cDesc, weightSpaceSize, weightSpace, workSpaceSize,
                                workSpace, reserveSpaceSize, reserveSpace, 1, &run, &xio, &yio, &pack));
    (void)y;
    if (!dy || !dx) { free(pack); return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dy or dx is NULL"); }
    cudnnStatus_t st = fdnn_rnn_cpu_backward_data(&run, &yio, dy, &xio, dx, hx, dhy, dhx, cx, dcy, dcx);
    free(pack);
    return st;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNBackwardWeights_v8(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnWgradMode_t addGrad,
                                                                 const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t xDesc, const void *x,
                                                                 cudnnTensorDescriptor_t hDesc, const void *hx, cudnnRNNDataDescriptor_t yDesc,
                                                                 const void *y, size_t weightSpaceSize, void *dweightSpace, size_t workSpaceSize,
                                                                 void *workSpace, size_t reserveSpaceSize, void *reserveSpace)
{
    FDNN_API_ENTER();
    if (addGrad != CUDNN_WGRAD_MODE_ADD && addGrad != CUDNN_WGRAD_MODE_SET)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "addGrad=%d is not a cudnnWgradMode_t", (int)addGrad);
    fdnn_rnn_run run;
    fdnn_rnn_io xio, yio;
    int64_t *pack = NULL;
    /* the LSTM cDesc is not an argument here: pass none and skip its check */
    cudnnRNNMode_t m = rnnDesc && rnnDesc->magic == FDNN_MAGIC_RNN ? rnnDesc->cell_mode : CUDNN_RNN_TANH;
    struct cudnnTensorStruct cfake;
    memset(&cfake, 0, sizeof cfake);
    if (m == CUDNN_LSTM && rnnDesc->is_set && xDesc && xDesc->magic == FDNN_MAGIC_RNNDATA && xDesc->is_set) {
        cfake.magic = FDNN_MAGIC_TENSOR;
        fdnn_rnn_fill_tensor(&cfake, rnnDesc->data_type, rnnDesc->num_layers * (rnnDesc->dir_mode == CUDNN_BIDIRECTIONAL ? 2 : 1), xDesc->batch,
                             rnnDesc->hidden_size);
    }
    FDNN_CHECK(fdnn_rnn_prepare(handle, rnnDesc, devSeqLengths, xDesc, yDesc, hDesc, cfake.magic ? &cfake : NULL, weightSpaceSize, dweightSpace,
                                workSpaceSize, workSpace, reserveSpaceSize, reserveSpace, 1, &run, &xio, &yio, &pack));
    (void)x;
    (void)y;
    cudnnStatus_t st = fdnn_rnn_cpu_backward_weights(&run, addGrad == CUDNN_WGRAD_MODE_ADD, hx, dweightSpace);
    free(pack);
    return st;
}
