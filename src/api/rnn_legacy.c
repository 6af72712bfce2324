/* The v6/v7 RNN API (deprecated in 8.9) on the same descriptor and the same CPU engine as the
 * v8 API. cudnnSetRNNDescriptor_v6 leaves the data type and input size open: each v7 call takes
 * them from its xDesc (a per-call copy of the descriptor is completed with them). Sequences are
 * arrays of per-step tensors [batch_t, vector, 1] with non-increasing batch_t, i.e. the
 * SEQ_MAJOR_PACKED layout of the v8 API. cudnnRNNBackwardWeights(Ex) accumulate into dw.
 * The cudnnFindRNN*AlgorithmEx functions (end of file) run and time the one algorithm. */
#include <stdlib.h>
#include <string.h>
#include "../core/adv_desc.h"
#include "../core/backend_util.h"
#include "algo_internal.h"
#include "rnn_internal.h"

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetRNNDescriptor_v6(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, const int hiddenSize,
                                                               const int numLayers, cudnnDropoutDescriptor_t dropoutDesc,
                                                               cudnnRNNInputMode_t inputMode, cudnnDirectionMode_t direction,
                                                               cudnnRNNMode_t cellMode, cudnnRNNAlgo_t algo, cudnnDataType_t mathPrec)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    return fdnn_rnn_set(rnnDesc, algo, cellMode, CUDNN_RNN_DOUBLE_BIAS, direction, inputMode, mathPrec, mathPrec, CUDNN_DEFAULT_MATH, hiddenSize,
                        hiddenSize, hiddenSize, numLayers, dropoutDesc, 0);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNDescriptor_v6(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, int *hiddenSize, int *numLayers,
                                                               cudnnDropoutDescriptor_t *dropoutDesc, cudnnRNNInputMode_t *inputMode,
                                                               cudnnDirectionMode_t *direction, cudnnRNNMode_t *cellMode, cudnnRNNAlgo_t *algo,
                                                               cudnnDataType_t *mathPrec)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    if (!hiddenSize || !numLayers || !dropoutDesc || !inputMode || !direction || !cellMode || !algo || !mathPrec)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    *hiddenSize = rnnDesc->hidden_size;
    *numLayers = rnnDesc->num_layers;
    *dropoutDesc = rnnDesc->dropout;
    *inputMode = rnnDesc->input_mode;
    *direction = rnnDesc->dir_mode;
    *cellMode = rnnDesc->cell_mode;
    *algo = rnnDesc->algo;
    *mathPrec = rnnDesc->math_prec;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetRNNMatrixMathType(cudnnRNNDescriptor_t rnnDesc, cudnnMathType_t mType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    if ((int)mType < 0 || mType > CUDNN_FMA_MATH) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mType=%d is not a cudnnMathType_t", (int)mType);
    rnnDesc->math_type = mType;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNMatrixMathType(cudnnRNNDescriptor_t rnnDesc, cudnnMathType_t *mType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    FDNN_CHECK_PTR(mType, "mType");
    *mType = rnnDesc->math_type;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetRNNBiasMode(cudnnRNNDescriptor_t rnnDesc, cudnnRNNBiasMode_t biasMode)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    if ((int)biasMode < 0 || biasMode > CUDNN_RNN_SINGLE_REC_BIAS)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "biasMode=%d is not a cudnnRNNBiasMode_t", (int)biasMode);
    rnnDesc->bias_mode = biasMode;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNBiasMode(cudnnRNNDescriptor_t rnnDesc, cudnnRNNBiasMode_t *biasMode)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    FDNN_CHECK_PTR(biasMode, "biasMode");
    *biasMode = rnnDesc->bias_mode;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNSetClip(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnRNNClipMode_t clipMode,
                                                      cudnnNanPropagation_t clipNanOpt, double lclip, double rclip)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    return fdnn_rnn_set_clip(rnnDesc, clipMode, clipNanOpt, lclip, rclip);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNGetClip(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnRNNClipMode_t *clipMode,
                                                      cudnnNanPropagation_t *clipNanOpt, double *lclip, double *rclip)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    if (!clipMode || !clipNanOpt || !lclip || !rclip) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "clipMode, clipNanOpt, lclip or rclip is NULL");
    *clipMode = rnnDesc->clip_mode;
    *clipNanOpt = rnnDesc->clip_nan;
    *lclip = rnnDesc->lclip;
    *rclip = rnnDesc->rclip;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetRNNProjectionLayers(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, const int recProjSize,
                                                                  const int outProjSize)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    if (rnnDesc->cell_mode != CUDNN_LSTM) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "recurrent projection exists only for LSTM");
    if (recProjSize <= 0 || recProjSize > rnnDesc->hidden_size)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "recProjSize=%d must be in [1, hiddenSize=%d]", recProjSize, rnnDesc->hidden_size);
    if (outProjSize != 0) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "outProjSize=%d: output projection is not supported (must be 0)", outProjSize);
    rnnDesc->proj_size = recProjSize;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNProjectionLayers(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, int *recProjSize,
                                                                  int *outProjSize)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    if (!recProjSize || !outProjSize) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "recProjSize or outProjSize is NULL");
    *recProjSize = rnnDesc->proj_size;
    *outProjSize = 0;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetRNNPaddingMode(cudnnRNNDescriptor_t rnnDesc, unsigned paddingMode)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    if (paddingMode & ~(unsigned)CUDNN_RNN_PADDED_IO_ENABLED)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "paddingMode=%u is neither CUDNN_RNN_PADDED_IO_DISABLED nor _ENABLED", paddingMode);
    rnnDesc->aux_flags = (rnnDesc->aux_flags & ~(uint32_t)CUDNN_RNN_PADDED_IO_ENABLED) | paddingMode;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNPaddingMode(cudnnRNNDescriptor_t rnnDesc, unsigned *paddingMode)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    FDNN_CHECK_PTR(paddingMode, "paddingMode");
    *paddingMode = rnnDesc->aux_flags & CUDNN_RNN_PADDED_IO_ENABLED;
    return CUDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------ persistent plans, algorithms */
/* api: any | the CPU only records the plan */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreatePersistentRNNPlan(cudnnRNNDescriptor_t rnnDesc, const int minibatch, const cudnnDataType_t dataType,
                                                                   cudnnPersistentRNNPlan_t *plan)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    FDNN_CHECK_PTR(plan, "plan");
    if (minibatch <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "minibatch=%d must be positive", minibatch);
    struct cudnnPersistentRNNPlan *p = calloc(1, sizeof *p);
    if (!p) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    p->magic = FDNN_MAGIC_RNNPLAN;
    p->rnn = rnnDesc;
    p->batch = minibatch;
    p->dtype = dataType;
    *plan = p;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyPersistentRNNPlan(cudnnPersistentRNNPlan_t plan)
{
    FDNN_API_ENTER();
    if (plan == NULL) return CUDNN_STATUS_SUCCESS;
    if (plan->magic != FDNN_MAGIC_RNNPLAN) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "plan is not a live persistent RNN plan");
    plan->magic = FDNN_MAGIC_DEAD;
    free(plan);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetPersistentRNNPlan(cudnnRNNDescriptor_t rnnDesc, cudnnPersistentRNNPlan_t plan)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    if (plan == NULL || plan->magic != FDNN_MAGIC_RNNPLAN) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "plan is NULL or not a live persistent RNN plan");
    if (rnnDesc->algo != CUDNN_RNN_ALGO_PERSIST_DYNAMIC)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "a persistent plan needs an RNN descriptor with CUDNN_RNN_ALGO_PERSIST_DYNAMIC");
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t algo_count(cudnnHandle_t handle, const struct cudnnRNNStruct *r, int *count)
{
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_rnn_check(r, "rnnDesc"));
    FDNN_CHECK_PTR(count, "count");
    *count = 1; /* CUDNN_RNN_ALGO_STANDARD */
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNForwardInferenceAlgorithmMaxCount(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, int *count)
{
    FDNN_API_ENTER();
    return algo_count(handle, rnnDesc, count);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNForwardTrainingAlgorithmMaxCount(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, int *count)
{
    FDNN_API_ENTER();
    return algo_count(handle, rnnDesc, count);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNBackwardDataAlgorithmMaxCount(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, int *count)
{
    FDNN_API_ENTER();
    return algo_count(handle, rnnDesc, count);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNBackwardWeightsAlgorithmMaxCount(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, int *count)
{
    FDNN_API_ENTER();
    return algo_count(handle, rnnDesc, count);
}

/* ------------------------------------------------------------ v7 sequences */
typedef struct {
    struct cudnnRNNStruct rnn;       /* completed copy */
    struct cudnnRNNDataStruct xd, yd;
    int *len;
} legacy_t;

static void legacy_free(legacy_t *L) { free(L->len); }

/* Completes the descriptor from xDesc[0] and, when yDesc is given, builds packed data descriptors. */
static cudnnStatus_t legacy_setup(const struct cudnnRNNStruct *r, int seqLength, const cudnnTensorDescriptor_t *xDesc,
                                  const cudnnTensorDescriptor_t *yDesc, legacy_t *L)
{
    memset(L, 0, sizeof *L);
    FDNN_CHECK(fdnn_rnn_check(r, "rnnDesc"));
    if (seqLength <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "seqLength=%d must be positive", seqLength);
    if (!xDesc) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc is NULL");
    for (int t = 0; t < seqLength; t++) {
        FDNN_CHECK(fdnn_check_tensor(xDesc[t], "xDesc[t]"));
        if (xDesc[t]->nb_dims < 2 || xDesc[t]->dim[1] != xDesc[0]->dim[1] || xDesc[t]->dtype != xDesc[0]->dtype)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc[%d] must be [batch, inputSize=%d, 1] of the type of xDesc[0]", t, xDesc[0]->dim[1]);
        if (t > 0 && xDesc[t]->dim[0] > xDesc[t - 1]->dim[0])
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc[%d] batch %d exceeds xDesc[%d] batch %d: batches must not increase", t, xDesc[t]->dim[0], t - 1,
                             xDesc[t - 1]->dim[0]);
    }
    L->rnn = *r;
    L->rnn.input_size = xDesc[0]->dim[1];
    L->rnn.data_type = xDesc[0]->dtype;
    if (L->rnn.input_mode == CUDNN_SKIP_INPUT && L->rnn.input_size != L->rnn.hidden_size)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "SKIP_INPUT needs inputSize (%d) == hiddenSize (%d)", L->rnn.input_size, L->rnn.hidden_size);
    if (L->rnn.data_type != CUDNN_DATA_FLOAT && L->rnn.data_type != CUDNN_DATA_DOUBLE && L->rnn.data_type != CUDNN_DATA_HALF)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "xDesc is %s; RNNs support FLOAT, DOUBLE and HALF", fdnn_dtype_name(L->rnn.data_type));
    int N = xDesc[0]->dim[0];
    L->len = calloc((size_t)N, sizeof(int));
    if (!L->len) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    for (int t = 0; t < seqLength; t++)
        for (int n = 0; n < xDesc[t]->dim[0]; n++) L->len[n]++;
    fdnn_rnn_geom g;
    fdnn_rnn_geom_of(&L->rnn, &g);
    struct cudnnRNNDataStruct *ds[2] = {&L->xd, &L->yd};
    for (int i = 0; i < 2; i++) {
        ds[i]->magic = FDNN_MAGIC_RNNDATA;
        ds[i]->is_set = 1;
        ds[i]->dtype = L->rnn.data_type;
        ds[i]->layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED;
        ds[i]->max_seq = seqLength;
        ds[i]->batch = N;
        ds[i]->vec = i == 0 ? g.in0 : g.D * g.P;
        ds[i]->seq_len = L->len;
    }
    if (yDesc) {
        for (int t = 0; t < seqLength; t++) {
            FDNN_CHECK(fdnn_check_tensor(yDesc[t], "yDesc[t]"));
            if (yDesc[t]->nb_dims < 2 || yDesc[t]->dim[0] != xDesc[t]->dim[0] || yDesc[t]->dim[1] != g.D * g.P || yDesc[t]->dtype != L->rnn.data_type)
                return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "yDesc[%d] must be [batch of xDesc[%d]=%d, dirs*hidden=%d, 1] of the data type", t, t,
                                 xDesc[t]->dim[0], g.D * g.P);
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_w(const legacy_t *L, const struct cudnnFilterStruct *wDesc, size_t *wbytes)
{
    FDNN_CHECK(fdnn_check_filter(wDesc, "wDesc"));
    fdnn_rnn_geom g;
    fdnn_rnn_geom_of(&L->rnn, &g);
    size_t need = (size_t)fdnn_rnn_weight_count(&g) * fdnn_dtype_size(L->rnn.data_type);
    size_t have = (size_t)fdnn_filter_elems(wDesc) * fdnn_dtype_size(wDesc->dtype);
    if (have < need) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "wDesc describes %zu bytes; the RNN needs %zu (cudnnGetRNNParamsSize)", have, need);
    *wbytes = need;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t same_dims(const struct cudnnTensorStruct *a, const struct cudnnTensorStruct *b, const char *an, const char *bn)
{
    if (!a || !b) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_check_tensor(b, bn));
    if (a->nb_dims != b->nb_dims || a->dim[0] != b->dim[0] || a->dim[1] != b->dim[1] || a->dim[2] != b->dim[2])
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s must have the dimensions of %s", bn, an);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNWorkspaceSize(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength,
                                                               const cudnnTensorDescriptor_t *xDesc, size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    legacy_t L;
    cudnnStatus_t s = legacy_setup(rnnDesc, seqLength, xDesc, NULL, &L);
    if (s == CUDNN_STATUS_SUCCESS && !sizeInBytes) s = FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "sizeInBytes is NULL");
    if (s == CUDNN_STATUS_SUCCESS) {
        fdnn_rnn_geom g;
        fdnn_rnn_geom_of(&L.rnn, &g);
        size_t a = fdnn_rnn_work_bytes(&g, seqLength, L.xd.batch, 0), b = fdnn_rnn_work_bytes(&g, seqLength, L.xd.batch, 1);
        *sizeInBytes = a > b ? a : b;
    }
    legacy_free(&L);
    return s;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNTrainingReserveSize(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength,
                                                                     const cudnnTensorDescriptor_t *xDesc, size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    legacy_t L;
    cudnnStatus_t s = legacy_setup(rnnDesc, seqLength, xDesc, NULL, &L);
    if (s == CUDNN_STATUS_SUCCESS && !sizeInBytes) s = FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "sizeInBytes is NULL");
    if (s == CUDNN_STATUS_SUCCESS) {
        fdnn_rnn_geom g;
        fdnn_rnn_geom_of(&L.rnn, &g);
        *sizeInBytes = fdnn_rnn_reserve_bytes(&g, seqLength, L.xd.batch);
    }
    legacy_free(&L);
    return s;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNParamsSize(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc,
                                                            const cudnnTensorDescriptor_t xDesc, size_t *sizeInBytes, cudnnDataType_t dataType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    legacy_t L;
    cudnnStatus_t s = legacy_setup(rnnDesc, 1, &xDesc, NULL, &L);
    legacy_free(&L);
    FDNN_CHECK(s);
    FDNN_CHECK_PTR(sizeInBytes, "sizeInBytes");
    if (dataType != L.rnn.data_type)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType %s differs from xDesc's %s", fdnn_dtype_name(dataType), fdnn_dtype_name(L.rnn.data_type));
    fdnn_rnn_geom g;
    fdnn_rnn_geom_of(&L.rnn, &g);
    *sizeInBytes = (size_t)fdnn_rnn_weight_count(&g) * fdnn_dtype_size(dataType);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t lin_params(cudnnHandle_t handle, const struct cudnnRNNStruct *r, int pl, const struct cudnnTensorStruct *xDesc,
                                const struct cudnnFilterStruct *wDesc, const void *w, int id, struct cudnnFilterStruct *out, void **addr, int is_bias)
{
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    legacy_t L;
    const cudnnTensorDescriptor_t xd[1] = {(cudnnTensorDescriptor_t)xDesc};
    cudnnStatus_t s = legacy_setup(r, 1, xd, NULL, &L);
    legacy_free(&L);
    FDNN_CHECK(s);
    size_t wb;
    FDNN_CHECK(check_w(&L, wDesc, &wb));
    if (!out || out->magic != FDNN_MAGIC_FILTER) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "the output filter descriptor is NULL or not live");
    FDNN_CHECK_PTR(addr, "linLayerMat/linLayerBias");
    fdnn_rnn_geom g;
    fdnn_rnn_geom_of(&L.rnn, &g);
    if (pl < 0 || pl >= g.L * g.D) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "pseudoLayer=%d is outside [0, %d)", pl, g.L * g.D);
    if (id < 0 || (id >= 2 * g.G && !(id == 8 && g.has_proj)))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "linLayerID=%d is not valid for this cell", id);
    int rows = 0, cols = 0;
    int64_t o = fdnn_rnn_param(&g, pl, id, is_bias, &rows, &cols);
    if (o < 0) {
        *addr = NULL;
        return CUDNN_STATUS_SUCCESS;
    }
    *addr = (char *)w + o * (int64_t)fdnn_dtype_size(L.rnn.data_type);
    out->dtype = L.rnn.data_type;
    out->format = CUDNN_TENSOR_NCHW;
    out->nb_dims = 3;
    out->dim[0] = 1;
    out->dim[1] = rows;
    out->dim[2] = cols;
    out->vect = 1;
    out->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNLinLayerMatrixParams(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int pseudoLayer,
                                                                      const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
                                                                      const void *w, const int linLayerID, cudnnFilterDescriptor_t linLayerMatDesc,
                                                                      void **linLayerMat)
{
    FDNN_API_ENTER();
    return lin_params(handle, rnnDesc, pseudoLayer, xDesc, wDesc, w, linLayerID, linLayerMatDesc, linLayerMat, 0);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNLinLayerBiasParams(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int pseudoLayer,
                                                                    const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
                                                                    const void *w, const int linLayerID, cudnnFilterDescriptor_t linLayerBiasDesc,
                                                                    void **linLayerBias)
{
    FDNN_API_ENTER();
    return lin_params(handle, rnnDesc, pseudoLayer, xDesc, wDesc, w, linLayerID, linLayerBiasDesc, linLayerBias, 1);
}

/* One engine call for all v7 entry points. op: 0 forward, 1 backward data, 2 backward weights. */
static cudnnStatus_t legacy_run(cudnnHandle_t handle, const struct cudnnRNNStruct *r, int seqLength, const cudnnTensorDescriptor_t *xDesc,
                                const cudnnTensorDescriptor_t *yDesc, const struct cudnnTensorStruct *hxDesc,
                                const struct cudnnTensorStruct *cxDesc, const struct cudnnFilterStruct *wDesc, const void *w, void *ws,
                                size_t wsSize, void *res, size_t resSize, int training, int op, const void *a0, void *a1, const void *hx,
                                void *hy, const void *cx, void *cy, const void *dhy, void *dhx, const void *dcy, void *dcx)
{
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    legacy_t L;
    cudnnStatus_t s = legacy_setup(r, seqLength, xDesc, yDesc, &L);
    size_t wb = 0;
    if (s == CUDNN_STATUS_SUCCESS) s = check_w(&L, wDesc, &wb);
    fdnn_rnn_run run;
    fdnn_rnn_io xio, yio;
    int64_t *pack = NULL;
    const struct cudnnTensorStruct *cd = L.rnn.cell_mode == CUDNN_LSTM ? cxDesc : NULL;
    if (s == CUDNN_STATUS_SUCCESS && !hxDesc) s = FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "hxDesc is NULL");
    if (s == CUDNN_STATUS_SUCCESS)
        s = fdnn_rnn_prepare(handle, &L.rnn, L.len, &L.xd, &L.yd, hxDesc, cd, wb, w, wsSize, ws, resSize, res, training, &run, &xio, &yio, &pack);
    if (s == CUDNN_STATUS_SUCCESS && (!a0 || !a1)) s = FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "a data pointer (x, y, dy, dx or dw) is NULL");
    if (s == CUDNN_STATUS_SUCCESS) {
        if (op == 0) s = fdnn_rnn_cpu_forward(&run, &xio, a0, &yio, a1, hx, hy, cx, cy);
        else if (op == 1) s = fdnn_rnn_cpu_backward_data(&run, &yio, a0, &xio, a1, hx, dhy, dhx, cx, dcy, dcx);
        else s = fdnn_rnn_cpu_backward_weights(&run, 1, hx, a1);
    }
    free(pack);
    legacy_free(&L);
    return s;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNForwardInference(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength,
                                                               const cudnnTensorDescriptor_t *xDesc, const void *x, const cudnnTensorDescriptor_t hxDesc,
                                                               const void *hx, const cudnnTensorDescriptor_t cxDesc, const void *cx,
                                                               const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnTensorDescriptor_t *yDesc,
                                                               void *y, const cudnnTensorDescriptor_t hyDesc, void *hy, const cudnnTensorDescriptor_t cyDesc,
                                                               void *cy, void *workSpace, size_t workSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(same_dims(hxDesc, hyDesc, "hxDesc", "hyDesc"));
    FDNN_CHECK(same_dims(cxDesc, cyDesc, "cxDesc", "cyDesc"));
    return legacy_run(handle, rnnDesc, seqLength, xDesc, yDesc, hxDesc, cxDesc, wDesc, w, workSpace, workSpaceSizeInBytes, NULL, 0, 0, 0, x, y, hx,
                      hy, cx, cy, NULL, NULL, NULL, NULL);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNForwardTraining(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength,
                                                              const cudnnTensorDescriptor_t *xDesc, const void *x, const cudnnTensorDescriptor_t hxDesc,
                                                              const void *hx, const cudnnTensorDescriptor_t cxDesc, const void *cx,
                                                              const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnTensorDescriptor_t *yDesc,
                                                              void *y, const cudnnTensorDescriptor_t hyDesc, void *hy, const cudnnTensorDescriptor_t cyDesc,
                                                              void *cy, void *workSpace, size_t workSpaceSizeInBytes, void *reserveSpace,
                                                              size_t reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(same_dims(hxDesc, hyDesc, "hxDesc", "hyDesc"));
    FDNN_CHECK(same_dims(cxDesc, cyDesc, "cxDesc", "cyDesc"));
    return legacy_run(handle, rnnDesc, seqLength, xDesc, yDesc, hxDesc, cxDesc, wDesc, w, workSpace, workSpaceSizeInBytes, reserveSpace,
                      reserveSpaceSizeInBytes, 1, 0, x, y, hx, hy, cx, cy, NULL, NULL, NULL, NULL);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNBackwardData(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength,
                                                           const cudnnTensorDescriptor_t *yDesc, const void *y, const cudnnTensorDescriptor_t *dyDesc,
                                                           const void *dy, const cudnnTensorDescriptor_t dhyDesc, const void *dhy,
                                                           const cudnnTensorDescriptor_t dcyDesc, const void *dcy, const cudnnFilterDescriptor_t wDesc,
                                                           const void *w, const cudnnTensorDescriptor_t hxDesc, const void *hx,
                                                           const cudnnTensorDescriptor_t cxDesc, const void *cx, const cudnnTensorDescriptor_t *dxDesc,
                                                           void *dx, const cudnnTensorDescriptor_t dhxDesc, void *dhx, const cudnnTensorDescriptor_t dcxDesc,
                                                           void *dcx, void *workSpace, size_t workSpaceSizeInBytes, void *reserveSpace,
                                                           size_t reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    (void)y;
    (void)dyDesc;
    FDNN_CHECK(same_dims(hxDesc, dhyDesc, "hxDesc", "dhyDesc"));
    FDNN_CHECK(same_dims(hxDesc, dhxDesc, "hxDesc", "dhxDesc"));
    FDNN_CHECK(same_dims(cxDesc, dcyDesc, "cxDesc", "dcyDesc"));
    FDNN_CHECK(same_dims(cxDesc, dcxDesc, "cxDesc", "dcxDesc"));
    return legacy_run(handle, rnnDesc, seqLength, dxDesc, yDesc, hxDesc, cxDesc, wDesc, w, workSpace, workSpaceSizeInBytes, reserveSpace,
                      reserveSpaceSizeInBytes, 1, 1, dy, dx, hx, NULL, cx, NULL, dhy, dhx, dcy, dcx);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNBackwardWeights(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength,
                                                              const cudnnTensorDescriptor_t *xDesc, const void *x, const cudnnTensorDescriptor_t hxDesc,
                                                              const void *hx, const cudnnTensorDescriptor_t *yDesc, const void *y, const void *workSpace,
                                                              size_t workSpaceSizeInBytes, const cudnnFilterDescriptor_t dwDesc, void *dw,
                                                              const void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    (void)y;
    /* the LSTM cx descriptor is not an argument: reuse hxDesc's batch with hiddenSize */
    struct cudnnTensorStruct cfake;
    memset(&cfake, 0, sizeof cfake);
    if (rnnDesc && rnnDesc->magic == FDNN_MAGIC_RNN && rnnDesc->is_set && rnnDesc->cell_mode == CUDNN_LSTM && hxDesc &&
        hxDesc->magic == FDNN_MAGIC_TENSOR && hxDesc->is_set && hxDesc->nb_dims == 3) {
        cfake.magic = FDNN_MAGIC_TENSOR;
        fdnn_rnn_fill_tensor(&cfake, hxDesc->dtype, hxDesc->dim[0], hxDesc->dim[1], rnnDesc->hidden_size);
    }
    return legacy_run(handle, rnnDesc, seqLength, xDesc, yDesc, hxDesc, cfake.magic ? &cfake : NULL, dwDesc, dw, (void *)workSpace,
                      workSpaceSizeInBytes, (void *)reserveSpace, reserveSpaceSizeInBytes, 1, 2, x, dw, hx, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}

/* ------------------------------------------------------------ Ex forms (RNN data descriptors) */
static cudnnStatus_t ex_run(cudnnHandle_t handle, const struct cudnnRNNStruct *r, const struct cudnnRNNDataStruct *xd,
                            const struct cudnnRNNDataStruct *yd, const struct cudnnTensorStruct *hd, const struct cudnnTensorStruct *cd,
                            const struct cudnnFilterStruct *wDesc, const void *w, void *ws, size_t wsSize, void *res, size_t resSize, int training,
                            int op, const void *a0, void *a1, const void *hx, void *hy, const void *cx, void *cy, const void *dhy, void *dhx,
                            const void *dcy, void *dcx, int attn_args)
{
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    if (attn_args) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the attention arguments (keys, cAttn, iAttn, queries, dkeys) must be NULL");
    FDNN_CHECK(fdnn_rnn_check(r, "rnnDesc"));
    FDNN_CHECK(fdnn_rnn_data_check(xd, "xDesc"));
    struct cudnnRNNStruct c = *r;
    c.input_size = xd->vec;
    c.data_type = xd->dtype;
    if (c.input_mode == CUDNN_SKIP_INPUT && c.input_size != c.hidden_size)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "SKIP_INPUT needs inputSize (%d) == hiddenSize (%d)", c.input_size, c.hidden_size);
    FDNN_CHECK(fdnn_check_filter(wDesc, "wDesc"));
    fdnn_rnn_geom g;
    fdnn_rnn_geom_of(&c, &g);
    size_t need = (size_t)fdnn_rnn_weight_count(&g) * fdnn_dtype_size(c.data_type);
    size_t have = (size_t)fdnn_filter_elems(wDesc) * fdnn_dtype_size(wDesc->dtype);
    if (have < need) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "wDesc describes %zu bytes; the RNN needs %zu", have, need);
    if (!hd) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "hxDesc is NULL");
    fdnn_rnn_run run;
    fdnn_rnn_io xio, yio;
    int64_t *pack = NULL;
    FDNN_CHECK(fdnn_rnn_prepare(handle, &c, xd->seq_len, xd, yd, hd, c.cell_mode == CUDNN_LSTM ? cd : NULL, need, w, wsSize, ws, resSize, res, training,
                                &run, &xio, &yio, &pack));
    if (!a0 || !a1) {
        free(pack);
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "a data pointer (x, y, dy, dx or dw) is NULL");
    }
    cudnnStatus_t st;
    if (op == 0) st = fdnn_rnn_cpu_forward(&run, &xio, a0, &yio, a1, hx, hy, cx, cy);
    else if (op == 1) st = fdnn_rnn_cpu_backward_data(&run, &yio, a0, &xio, a1, hx, dhy, dhx, cx, dcy, dcx);
    else st = fdnn_rnn_cpu_backward_weights(&run, 1, hx, a1);
    free(pack);
    return st;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNForwardInferenceEx(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const cudnnRNNDataDescriptor_t xDesc,
                                                                 const void *x, const cudnnTensorDescriptor_t hxDesc, const void *hx,
                                                                 const cudnnTensorDescriptor_t cxDesc, const void *cx, const cudnnFilterDescriptor_t wDesc,
                                                                 const void *w, const cudnnRNNDataDescriptor_t yDesc, void *y,
                                                                 const cudnnTensorDescriptor_t hyDesc, void *hy, const cudnnTensorDescriptor_t cyDesc,
                                                                 void *cy, const cudnnRNNDataDescriptor_t kDesc, const void *keys,
                                                                 const cudnnRNNDataDescriptor_t cDesc, void *cAttn, const cudnnRNNDataDescriptor_t iDesc,
                                                                 void *iAttn, const cudnnRNNDataDescriptor_t qDesc, void *queries, void *workSpace,
                                                                 size_t workSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(same_dims(hxDesc, hyDesc, "hxDesc", "hyDesc"));
    FDNN_CHECK(same_dims(cxDesc, cyDesc, "cxDesc", "cyDesc"));
    int attn = kDesc || keys || cDesc || cAttn || iDesc || iAttn || qDesc || queries;
    return ex_run(handle, rnnDesc, xDesc, yDesc, hxDesc, cxDesc, wDesc, w, workSpace, workSpaceSizeInBytes, NULL, 0, 0, 0, x, y, hx, hy, cx, cy, NULL,
                  NULL, NULL, NULL, attn);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNForwardTrainingEx(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const cudnnRNNDataDescriptor_t xDesc,
                                                                const void *x, const cudnnTensorDescriptor_t hxDesc, const void *hx,
                                                                const cudnnTensorDescriptor_t cxDesc, const void *cx, const cudnnFilterDescriptor_t wDesc,
                                                                const void *w, const cudnnRNNDataDescriptor_t yDesc, void *y,
                                                                const cudnnTensorDescriptor_t hyDesc, void *hy, const cudnnTensorDescriptor_t cyDesc, void *cy,
                                                                const cudnnRNNDataDescriptor_t kDesc, const void *keys, const cudnnRNNDataDescriptor_t cDesc,
                                                                void *cAttn, const cudnnRNNDataDescriptor_t iDesc, void *iAttn,
                                                                const cudnnRNNDataDescriptor_t qDesc, void *queries, void *workSpace,
                                                                size_t workSpaceSizeInBytes, void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(same_dims(hxDesc, hyDesc, "hxDesc", "hyDesc"));
    FDNN_CHECK(same_dims(cxDesc, cyDesc, "cxDesc", "cyDesc"));
    int attn = kDesc || keys || cDesc || cAttn || iDesc || iAttn || qDesc || queries;
    return ex_run(handle, rnnDesc, xDesc, yDesc, hxDesc, cxDesc, wDesc, w, workSpace, workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes, 1, 0,
                  x, y, hx, hy, cx, cy, NULL, NULL, NULL, NULL, attn);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNBackwardDataEx(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const cudnnRNNDataDescriptor_t yDesc,
                                                             const void *y, const cudnnRNNDataDescriptor_t dyDesc, const void *dy,
                                                             const cudnnRNNDataDescriptor_t dcDesc, const void *dcAttn, const cudnnTensorDescriptor_t dhyDesc,
                                                             const void *dhy, const cudnnTensorDescriptor_t dcyDesc, const void *dcy,
                                                             const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnTensorDescriptor_t hxDesc,
                                                             const void *hx, const cudnnTensorDescriptor_t cxDesc, const void *cx,
                                                             const cudnnRNNDataDescriptor_t dxDesc, void *dx, const cudnnTensorDescriptor_t dhxDesc,
                                                             void *dhx, const cudnnTensorDescriptor_t dcxDesc, void *dcx,
                                                             const cudnnRNNDataDescriptor_t dkDesc, void *dkeys, void *workSpace, size_t workSpaceSizeInBytes,
                                                             void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    (void)y;
    (void)dyDesc;
    FDNN_CHECK(same_dims(hxDesc, dhyDesc, "hxDesc", "dhyDesc"));
    FDNN_CHECK(same_dims(hxDesc, dhxDesc, "hxDesc", "dhxDesc"));
    FDNN_CHECK(same_dims(cxDesc, dcyDesc, "cxDesc", "dcyDesc"));
    FDNN_CHECK(same_dims(cxDesc, dcxDesc, "cxDesc", "dcxDesc"));
    int attn = dcDesc || dcAttn || dkDesc || dkeys;
    return ex_run(handle, rnnDesc, dxDesc, yDesc, hxDesc, cxDesc, wDesc, w, workSpace, workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes, 1, 1,
                  dy, dx, hx, NULL, cx, NULL, dhy, dhx, dcy, dcx, attn);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNBackwardWeightsEx(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const cudnnRNNDataDescriptor_t xDesc,
                                                                const void *x, const cudnnTensorDescriptor_t hxDesc, const void *hx,
                                                                const cudnnRNNDataDescriptor_t yDesc, const void *y, void *workSpace,
                                                                size_t workSpaceSizeInBytes, const cudnnFilterDescriptor_t dwDesc, void *dw,
                                                                void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    (void)y;
    struct cudnnTensorStruct cfake;
    memset(&cfake, 0, sizeof cfake);
    if (rnnDesc && rnnDesc->magic == FDNN_MAGIC_RNN && rnnDesc->is_set && rnnDesc->cell_mode == CUDNN_LSTM && hxDesc &&
        hxDesc->magic == FDNN_MAGIC_TENSOR && hxDesc->is_set && hxDesc->nb_dims == 3) {
        cfake.magic = FDNN_MAGIC_TENSOR;
        fdnn_rnn_fill_tensor(&cfake, hxDesc->dtype, hxDesc->dim[0], hxDesc->dim[1], rnnDesc->hidden_size);
    }
    return ex_run(handle, rnnDesc, xDesc, yDesc, hxDesc, cfake.magic ? &cfake : NULL, dwDesc, dw, workSpace, workSpaceSizeInBytes, reserveSpace,
                  reserveSpaceSizeInBytes, 1, 2, x, dw, hx, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
}

/* ------------------------------------------------------------ algorithm descriptors and Find*Ex */
/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetRNNAlgorithmDescriptor(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnAlgorithmDescriptor_t algoDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    FDNN_CHECK(fdnn_algo_desc_check(algoDesc, "algoDesc", 1));
    int v = (int)algoDesc->algo.algo.RNNAlgo;
    /* the same range cudnnSetRNNDescriptor_v6/_v8 accept; the engine runs every one as STANDARD */
    if (v < 0 || v >= CUDNN_RNN_ALGO_COUNT) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algoDesc holds %d, which is not a cudnnRNNAlgo_t", v);
    rnnDesc->algo = (cudnnRNNAlgo_t)v;
    return CUDNN_STATUS_SUCCESS;
}

/* The RNN engine implements one algorithm, CUDNN_RNN_ALGO_STANDARD (the *AlgorithmMaxCount
 * functions report 1), so a Find runs the operation once, timed, and fills one result. The
 * persistent algorithms are not listed: they are not distinct implementations here. */
static cudnnStatus_t find_check(int requestedAlgoCount, const int *returnedAlgoCount, const cudnnAlgorithmPerformance_t *perfResults)
{
    if (requestedAlgoCount <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "requestedAlgoCount=%d must be positive", requestedAlgoCount);
    FDNN_CHECK_PTR(returnedAlgoCount, "returnedAlgoCount");
    FDNN_CHECK_PTR(perfResults, "perfResults");
    /* one algorithm: only perfResults[0] is written; it must come from cudnnCreateAlgorithmPerformance */
    FDNN_CHECK(fdnn_algo_perf_check(perfResults[0], "perfResults[0]"));
    return CUDNN_STATUS_SUCCESS;
}

/* Workspace bytes the algorithm needs (what cudnnGetRNNWorkspaceSize reports). */
static size_t find_work_bytes(const struct cudnnRNNStruct *r, int seqLength, const cudnnTensorDescriptor_t *xDesc)
{
    legacy_t L;
    size_t n = 0;
    if (legacy_setup(r, seqLength, xDesc, NULL, &L) == CUDNN_STATUS_SUCCESS) {
        fdnn_rnn_geom g;
        fdnn_rnn_geom_of(&L.rnn, &g);
        size_t a = fdnn_rnn_work_bytes(&g, seqLength, L.xd.batch, 0), b = fdnn_rnn_work_bytes(&g, seqLength, L.xd.batch, 1);
        n = a > b ? a : b;
    }
    legacy_free(&L);
    return n;
}

static cudnnStatus_t find_run(cudnnHandle_t handle, const struct cudnnRNNStruct *r, int seqLength, const cudnnTensorDescriptor_t *xDesc,
                              const cudnnTensorDescriptor_t *yDesc, const struct cudnnTensorStruct *hxDesc, const struct cudnnTensorStruct *cxDesc,
                              const struct cudnnFilterStruct *wDesc, const void *w, void *ws, size_t wsSize, void *res, size_t resSize, int training,
                              int op, const void *a0, void *a1, const void *hx, void *hy, const void *cx, void *cy, const void *dhy, void *dhx,
                              const void *dcy, void *dcx, int requestedAlgoCount, int *returnedAlgoCount, cudnnAlgorithmPerformance_t *perfResults)
{
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(find_check(requestedAlgoCount, returnedAlgoCount, perfResults));
    fdnn_timer t;
    FDNN_CHECK(fdnn_timer_start(handle, &t));
    cudnnStatus_t s = legacy_run(handle, r, seqLength, xDesc, yDesc, hxDesc, cxDesc, wDesc, w, ws, wsSize, res, resSize, training, op, a0, a1, hx, hy, cx,
                                 cy, dhy, dhx, dcy, dcx);
    double ms = fdnn_timer_stop_ms(handle, &t);
    FDNN_CHECK(s);
    if (!(ms > 0)) ms = 1e-6; /* a clock too coarse to see the run: report the smallest positive time, not zero */
    fdnn_algo_perf_fill(perfResults[0], CUDNN_RNN_ALGO_STANDARD, CUDNN_STATUS_SUCCESS, (float)ms, find_work_bytes(r, seqLength, xDesc));
    *returnedAlgoCount = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnFindRNNForwardInferenceAlgorithmEx(
    cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength, const cudnnTensorDescriptor_t *xDesc, const void *x,
    const cudnnTensorDescriptor_t hxDesc, const void *hx, const cudnnTensorDescriptor_t cxDesc, const void *cx, const cudnnFilterDescriptor_t wDesc,
    const void *w, const cudnnTensorDescriptor_t *yDesc, void *y, const cudnnTensorDescriptor_t hyDesc, void *hy, const cudnnTensorDescriptor_t cyDesc,
    void *cy, const float findIntensity, const int requestedAlgoCount, int *returnedAlgoCount, cudnnAlgorithmPerformance_t *perfResults, void *workspace,
    size_t workSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    (void)findIntensity; /* one algorithm: there is no search space to narrow */
    FDNN_CHECK(same_dims(hxDesc, hyDesc, "hxDesc", "hyDesc"));
    FDNN_CHECK(same_dims(cxDesc, cyDesc, "cxDesc", "cyDesc"));
    return find_run(handle, rnnDesc, seqLength, xDesc, yDesc, hxDesc, cxDesc, wDesc, w, workspace, workSpaceSizeInBytes, NULL, 0, 0, 0, x, y, hx, hy,
                    cx, cy, NULL, NULL, NULL, NULL, requestedAlgoCount, returnedAlgoCount, perfResults);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnFindRNNForwardTrainingAlgorithmEx(
    cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength, const cudnnTensorDescriptor_t *xDesc, const void *x,
    const cudnnTensorDescriptor_t hxDesc, const void *hx, const cudnnTensorDescriptor_t cxDesc, const void *cx, const cudnnFilterDescriptor_t wDesc,
    const void *w, const cudnnTensorDescriptor_t *yDesc, void *y, const cudnnTensorDescriptor_t hyDesc, void *hy, const cudnnTensorDescriptor_t cyDesc,
    void *cy, const float findIntensity, const int requestedAlgoCount, int *returnedAlgoCount, cudnnAlgorithmPerformance_t *perfResults, void *workspace,
    size_t workSpaceSizeInBytes, void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    (void)findIntensity;
    FDNN_CHECK(same_dims(hxDesc, hyDesc, "hxDesc", "hyDesc"));
    FDNN_CHECK(same_dims(cxDesc, cyDesc, "cxDesc", "cyDesc"));
    return find_run(handle, rnnDesc, seqLength, xDesc, yDesc, hxDesc, cxDesc, wDesc, w, workspace, workSpaceSizeInBytes, reserveSpace,
                    reserveSpaceSizeInBytes, 1, 0, x, y, hx, hy, cx, cy, NULL, NULL, NULL, NULL, requestedAlgoCount, returnedAlgoCount, perfResults);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnFindRNNBackwardDataAlgorithmEx(
    cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength, const cudnnTensorDescriptor_t *yDesc, const void *y,
    const cudnnTensorDescriptor_t *dyDesc, const void *dy, const cudnnTensorDescriptor_t dhyDesc, const void *dhy, const cudnnTensorDescriptor_t dcyDesc,
    const void *dcy, const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnTensorDescriptor_t hxDesc, const void *hx,
    const cudnnTensorDescriptor_t cxDesc, const void *cx, const cudnnTensorDescriptor_t *dxDesc, void *dx, const cudnnTensorDescriptor_t dhxDesc,
    void *dhx, const cudnnTensorDescriptor_t dcxDesc, void *dcx, const float findIntensity, const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnAlgorithmPerformance_t *perfResults, void *workspace, size_t workSpaceSizeInBytes, void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    (void)findIntensity;
    (void)y;
    (void)dyDesc;
    FDNN_CHECK(same_dims(hxDesc, dhyDesc, "hxDesc", "dhyDesc"));
    FDNN_CHECK(same_dims(hxDesc, dhxDesc, "hxDesc", "dhxDesc"));
    FDNN_CHECK(same_dims(cxDesc, dcyDesc, "cxDesc", "dcyDesc"));
    FDNN_CHECK(same_dims(cxDesc, dcxDesc, "cxDesc", "dcxDesc"));
    return find_run(handle, rnnDesc, seqLength, dxDesc, yDesc, hxDesc, cxDesc, wDesc, w, workspace, workSpaceSizeInBytes, reserveSpace,
                    reserveSpaceSizeInBytes, 1, 1, dy, dx, hx, NULL, cx, NULL, dhy, dhx, dcy, dcx, requestedAlgoCount, returnedAlgoCount, perfResults);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnFindRNNBackwardWeightsAlgorithmEx(
    cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength, const cudnnTensorDescriptor_t *xDesc, const void *x,
    const cudnnTensorDescriptor_t hxDesc, const void *hx, const cudnnTensorDescriptor_t *yDesc, const void *y, const float findIntensity,
    const int requestedAlgoCount, int *returnedAlgoCount, cudnnAlgorithmPerformance_t *perfResults, const void *workspace, size_t workSpaceSizeInBytes,
    const cudnnFilterDescriptor_t dwDesc, void *dw, const void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    (void)findIntensity;
    (void)y;
    /* as cudnnRNNBackwardWeights: accumulates into dw (one run); cx's shape follows hxDesc */
    struct cudnnTensorStruct cfake;
    memset(&cfake, 0, sizeof cfake);
    if (rnnDesc && rnnDesc->magic == FDNN_MAGIC_RNN && rnnDesc->is_set && rnnDesc->cell_mode == CUDNN_LSTM && hxDesc &&
        hxDesc->magic == FDNN_MAGIC_TENSOR && hxDesc->is_set && hxDesc->nb_dims == 3) {
        cfake.magic = FDNN_MAGIC_TENSOR;
        fdnn_rnn_fill_tensor(&cfake, hxDesc->dtype, hxDesc->dim[0], hxDesc->dim[1], rnnDesc->hidden_size);
    }
    return find_run(handle, rnnDesc, seqLength, xDesc, yDesc, hxDesc, cfake.magic ? &cfake : NULL, dwDesc, dw, (void *)workspace, workSpaceSizeInBytes,
                    (void *)reserveSpace, reserveSpaceSizeInBytes, 1, 2, x, dw, hx, NULL, NULL, NULL, NULL, NULL, NULL, NULL, requestedAlgoCount,
                    returnedAlgoCount, perfResults);
}
