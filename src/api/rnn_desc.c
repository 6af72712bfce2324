/* RNN descriptors (v8 API; the v6/v7 setters in rnn_legacy.c write the same struct), RNN data
 * descriptors, clipping, weight-space layout queries, temp-space sizes, cudnnBuildRNNDynamic. */
#include <stdlib.h>
#include <string.h>
#include "../core/adv_desc.h"
#include "../cpu/rnn_cpu.h"
#include "rnn_internal.h"

cudnnStatus_t fdnn_rnn_live(const struct cudnnRNNStruct *r, const char *name)
{
    if (r == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", name);
    if (r->magic != FDNN_MAGIC_RNN) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live RNN descriptor", name);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_rnn_check(const struct cudnnRNNStruct *r, const char *name)
{
    FDNN_CHECK(fdnn_rnn_live(r, name));
    if (!r->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was created but never set", name);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_rnn_data_check(const struct cudnnRNNDataStruct *d, const char *name)
{
    if (d == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", name);
    if (d->magic != FDNN_MAGIC_RNNDATA) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live RNN data descriptor", name);
    if (!d->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was created but never set", name);
    return CUDNN_STATUS_SUCCESS;
}

static int rnn_dtype_ok(cudnnDataType_t t) { return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF; }

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateRNNDescriptor(cudnnRNNDescriptor_t *rnnDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(rnnDesc, "rnnDesc");
    struct cudnnRNNStruct *r = calloc(1, sizeof *r);
    if (!r) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    r->magic = FDNN_MAGIC_RNN;
    r->algo = CUDNN_RNN_ALGO_STANDARD;
    r->cell_mode = CUDNN_LSTM;
    r->bias_mode = CUDNN_RNN_DOUBLE_BIAS;
    r->data_type = CUDNN_DATA_FLOAT;
    r->math_prec = CUDNN_DATA_FLOAT;
    r->clip_mode = CUDNN_RNN_CLIP_NONE;
    r->clip_nan = CUDNN_NOT_PROPAGATE_NAN;
    *rnnDesc = r;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyRNNDescriptor(cudnnRNNDescriptor_t rnnDesc)
{
    FDNN_API_ENTER();
    if (rnnDesc == NULL) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_rnn_live(rnnDesc, "rnnDesc"));
    rnnDesc->magic = FDNN_MAGIC_DEAD;
    free(rnnDesc);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_rnn_set(struct cudnnRNNStruct *r, cudnnRNNAlgo_t algo, cudnnRNNMode_t cellMode, cudnnRNNBiasMode_t biasMode,
                           cudnnDirectionMode_t dirMode, cudnnRNNInputMode_t inputMode, cudnnDataType_t dataType, cudnnDataType_t mathPrec,
                           cudnnMathType_t mathType, int inputSize, int hiddenSize, int projSize, int numLayers,
                           cudnnDropoutDescriptor_t dropoutDesc, uint32_t auxFlags)
{
    FDNN_CHECK(fdnn_rnn_live(r, "rnnDesc"));
    if ((int)algo < 0 || algo >= CUDNN_RNN_ALGO_COUNT) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algo=%d is not a cudnnRNNAlgo_t", (int)algo);
    if ((int)cellMode < 0 || cellMode > CUDNN_GRU) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "cellMode=%d is not a cudnnRNNMode_t", (int)cellMode);
    if ((int)biasMode < 0 || biasMode > CUDNN_RNN_SINGLE_REC_BIAS)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "biasMode=%d is not a cudnnRNNBiasMode_t", (int)biasMode);
    if (dirMode != CUDNN_UNIDIRECTIONAL && dirMode != CUDNN_BIDIRECTIONAL)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dirMode=%d is not a cudnnDirectionMode_t", (int)dirMode);
    if (inputMode != CUDNN_LINEAR_INPUT && inputMode != CUDNN_SKIP_INPUT)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "inputMode=%d is not a cudnnRNNInputMode_t", (int)inputMode);
    if (!rnn_dtype_ok(dataType))
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "dataType %s: RNNs support FLOAT, DOUBLE and HALF", fdnn_dtype_name(dataType));
    int prec_ok = dataType == CUDNN_DATA_HALF ? (mathPrec == CUDNN_DATA_HALF || mathPrec == CUDNN_DATA_FLOAT) : mathPrec == dataType;
    if (!prec_ok)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mathPrec %s does not go with dataType %s (FLOAT->FLOAT, DOUBLE->DOUBLE, HALF->HALF or FLOAT)",
                         fdnn_dtype_name(mathPrec), fdnn_dtype_name(dataType));
    if ((int)mathType < 0 || mathType > CUDNN_FMA_MATH) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mathType=%d is not a cudnnMathType_t", (int)mathType);
    if (inputSize <= 0 || hiddenSize <= 0 || numLayers <= 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "inputSize=%d, hiddenSize=%d and numLayers=%d must be positive", inputSize, hiddenSize, numLayers);
    if (numLayers > 64) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "numLayers=%d: at most 64 layers are supported", numLayers);
    if (projSize <= 0 || projSize > hiddenSize)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "projSize=%d must be in [1, hiddenSize=%d]", projSize, hiddenSize);
    if (projSize != hiddenSize && cellMode != CUDNN_LSTM)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "projSize=%d < hiddenSize=%d: recurrent projection exists only for LSTM", projSize, hiddenSize);
    if (inputMode == CUDNN_SKIP_INPUT && inputSize != hiddenSize)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "SKIP_INPUT needs inputSize (%d) == hiddenSize (%d)", inputSize, hiddenSize);
    if (auxFlags & ~(uint32_t)CUDNN_RNN_PADDED_IO_ENABLED)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "auxFlags=0x%x has bits other than CUDNN_RNN_PADDED_IO_ENABLED", auxFlags);
    if (dropoutDesc && dropoutDesc->magic != FDNN_MAGIC_DROPOUT)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dropoutDesc is not a live dropout descriptor");
    r->algo = algo;
    r->cell_mode = cellMode;
    r->bias_mode = biasMode;
    r->dir_mode = dirMode;
    r->input_mode = inputMode;
    r->data_type = dataType;
    r->math_prec = mathPrec;
    r->math_type = mathType;
    r->input_size = inputSize;
    r->hidden_size = hiddenSize;
    r->proj_size = projSize;
    r->num_layers = numLayers;
    r->dropout = dropoutDesc;
    r->aux_flags = auxFlags;
    r->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetRNNDescriptor_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNAlgo_t algo, cudnnRNNMode_t cellMode,
                                                               cudnnRNNBiasMode_t biasMode, cudnnDirectionMode_t dirMode,
                                                               cudnnRNNInputMode_t inputMode, cudnnDataType_t dataType,
                                                               cudnnDataType_t mathPrec, cudnnMathType_t mathType, int32_t inputSize,
                                                               int32_t hiddenSize, int32_t projSize, int32_t numLayers,
                                                               cudnnDropoutDescriptor_t dropoutDesc, uint32_t auxFlags)
{
    FDNN_API_ENTER();
    return fdnn_rnn_set(rnnDesc, algo, cellMode, biasMode, dirMode, inputMode, dataType, mathPrec, mathType, inputSize, hiddenSize, projSize,
                        numLayers, dropoutDesc, auxFlags);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNDescriptor_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNAlgo_t *algo, cudnnRNNMode_t *cellMode,
                                                               cudnnRNNBiasMode_t *biasMode, cudnnDirectionMode_t *dirMode,
                                                               cudnnRNNInputMode_t *inputMode, cudnnDataType_t *dataType,
                                                               cudnnDataType_t *mathPrec, cudnnMathType_t *mathType, int32_t *inputSize,
                                                               int32_t *hiddenSize, int32_t *projSize, int32_t *numLayers,
                                                               cudnnDropoutDescriptor_t *dropoutDesc, uint32_t *auxFlags)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    /* every output is optional (NULL: not returned) */
    if (algo) *algo = rnnDesc->algo;
    if (cellMode) *cellMode = rnnDesc->cell_mode;
    if (biasMode) *biasMode = rnnDesc->bias_mode;
    if (dirMode) *dirMode = rnnDesc->dir_mode;
    if (inputMode) *inputMode = rnnDesc->input_mode;
    if (dataType) *dataType = rnnDesc->data_type;
    if (mathPrec) *mathPrec = rnnDesc->math_prec;
    if (mathType) *mathType = rnnDesc->math_type;
    if (inputSize) *inputSize = rnnDesc->input_size;
    if (hiddenSize) *hiddenSize = rnnDesc->hidden_size;
    if (projSize) *projSize = rnnDesc->proj_size;
    if (numLayers) *numLayers = rnnDesc->num_layers;
    if (dropoutDesc) *dropoutDesc = rnnDesc->dropout;
    if (auxFlags) *auxFlags = rnnDesc->aux_flags;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_rnn_set_clip(struct cudnnRNNStruct *r, cudnnRNNClipMode_t clipMode, cudnnNanPropagation_t nan, double lclip, double rclip)
{
    FDNN_CHECK(fdnn_rnn_check(r, "rnnDesc"));
    if (clipMode != CUDNN_RNN_CLIP_NONE && clipMode != CUDNN_RNN_CLIP_MINMAX)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "clipMode=%d is not a cudnnRNNClipMode_t", (int)clipMode);
    if (nan != CUDNN_NOT_PROPAGATE_NAN && nan != CUDNN_PROPAGATE_NAN)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "clipNanOpt=%d is not a cudnnNanPropagation_t", (int)nan);
    if (clipMode == CUDNN_RNN_CLIP_MINMAX && !(lclip <= rclip))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "lclip=%g must not exceed rclip=%g", lclip, rclip);
    if (clipMode == CUDNN_RNN_CLIP_MINMAX && r->cell_mode != CUDNN_LSTM)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "cell clipping applies only to LSTM");
    r->clip_mode = clipMode;
    r->clip_nan = nan;
    r->lclip = lclip;
    r->rclip = rclip;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNSetClip_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNClipMode_t clipMode, cudnnNanPropagation_t clipNanOpt,
                                                         double lclip, double rclip)
{
    FDNN_API_ENTER();
    return fdnn_rnn_set_clip(rnnDesc, clipMode, clipNanOpt, lclip, rclip);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRNNGetClip_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNClipMode_t *clipMode,
                                                         cudnnNanPropagation_t *clipNanOpt, double *lclip, double *rclip)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    if (!clipMode || !clipNanOpt || !lclip || !rclip) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "clipMode, clipNanOpt, lclip or rclip is NULL");
    *clipMode = rnnDesc->clip_mode;
    *clipNanOpt = rnnDesc->clip_nan;
    *lclip = rnnDesc->lclip;
    *rclip = rnnDesc->rclip;
    return CUDNN_STATUS_SUCCESS;
}

/* ---------------------------------------------------------------- RNN data descriptors */
/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateRNNDataDescriptor(cudnnRNNDataDescriptor_t *rnnDataDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(rnnDataDesc, "rnnDataDesc");
    struct cudnnRNNDataStruct *d = calloc(1, sizeof *d);
    if (!d) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    d->magic = FDNN_MAGIC_RNNDATA;
    *rnnDataDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyRNNDataDescriptor(cudnnRNNDataDescriptor_t rnnDataDesc)
{
    FDNN_API_ENTER();
    if (rnnDataDesc == NULL) return CUDNN_STATUS_SUCCESS;
    if (rnnDataDesc->magic != FDNN_MAGIC_RNNDATA) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "rnnDataDesc is not a live RNN data descriptor");
    rnnDataDesc->magic = FDNN_MAGIC_DEAD;
    free(rnnDataDesc->seq_len);
    free(rnnDataDesc);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetRNNDataDescriptor(cudnnRNNDataDescriptor_t rnnDataDesc, cudnnDataType_t dataType,
                                                                cudnnRNNDataLayout_t layout, int maxSeqLength, int batchSize, int vectorSize,
                                                                const int seqLengthArray[], void *paddingFill)
{
    FDNN_API_ENTER();
    if (rnnDataDesc == NULL || rnnDataDesc->magic != FDNN_MAGIC_RNNDATA)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "rnnDataDesc is NULL or not a live RNN data descriptor");
    if (!rnn_dtype_ok(dataType))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType %s: RNN data is FLOAT, DOUBLE or HALF", fdnn_dtype_name(dataType));
    if ((int)layout < 0 || layout > CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "layout=%d is not a cudnnRNNDataLayout_t", (int)layout);
    if (maxSeqLength <= 0 || batchSize <= 0 || vectorSize <= 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "maxSeqLength=%d, batchSize=%d and vectorSize=%d must be positive", maxSeqLength, batchSize, vectorSize);
    FDNN_CHECK_PTR(seqLengthArray, "seqLengthArray");
    for (int n = 0; n < batchSize; n++) {
        if (seqLengthArray[n] < 1 || seqLengthArray[n] > maxSeqLength)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "seqLengthArray[%d]=%d is outside [1, maxSeqLength=%d]", n, seqLengthArray[n], maxSeqLength);
        if (layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED && n > 0 && seqLengthArray[n] > seqLengthArray[n - 1])
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "SEQ_MAJOR_PACKED needs non-increasing seqLengthArray (entry %d: %d > %d)", n, seqLengthArray[n],
                             seqLengthArray[n - 1]);
    }
    int *sl = malloc(sizeof(int) * (size_t)batchSize);
    if (!sl) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    memcpy(sl, seqLengthArray, sizeof(int) * (size_t)batchSize);
    free(rnnDataDesc->seq_len);
    rnnDataDesc->seq_len = sl;
    rnnDataDesc->dtype = dataType;
    rnnDataDesc->layout = layout;
    rnnDataDesc->max_seq = maxSeqLength;
    rnnDataDesc->batch = batchSize;
    rnnDataDesc->vec = vectorSize;
    rnnDataDesc->has_fill = paddingFill != NULL;
    rnnDataDesc->fill = paddingFill ? fdnn_load(paddingFill, dataType, 0) : 0.0;
    rnnDataDesc->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNDataDescriptor(cudnnRNNDataDescriptor_t rnnDataDesc, cudnnDataType_t *dataType,
                                                                cudnnRNNDataLayout_t *layout, int *maxSeqLength, int *batchSize, int *vectorSize,
                                                                int arrayLengthRequested, int seqLengthArray[], void *paddingFill)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_rnn_data_check(rnnDataDesc, "rnnDataDesc"));
    if (!dataType || !layout || !maxSeqLength || !batchSize || !vectorSize)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType, layout, maxSeqLength, batchSize or vectorSize is NULL");
    if (arrayLengthRequested < 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "arrayLengthRequested=%d is negative", arrayLengthRequested);
    if (arrayLengthRequested > 0 && !seqLengthArray) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "seqLengthArray is NULL");
    *dataType = rnnDataDesc->dtype;
    *layout = rnnDataDesc->layout;
    *maxSeqLength = rnnDataDesc->max_seq;
    *batchSize = rnnDataDesc->batch;
    *vectorSize = rnnDataDesc->vec;
    for (int i = 0; i < arrayLengthRequested && i < rnnDataDesc->batch; i++) seqLengthArray[i] = rnnDataDesc->seq_len[i];
    if (paddingFill) fdnn_store(paddingFill, rnnDataDesc->dtype, 0, rnnDataDesc->fill);
    return CUDNN_STATUS_SUCCESS;
}

/* ---------------------------------------------------------------- sizes and weights */
/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNWeightSpaceSize(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, size_t *weightSpaceSize)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    FDNN_CHECK_PTR(weightSpaceSize, "weightSpaceSize");
    fdnn_rnn_geom g;
    fdnn_rnn_geom_of(rnnDesc, &g);
    *weightSpaceSize = (size_t)fdnn_rnn_weight_count(&g) * fdnn_dtype_size(rnnDesc->data_type);
    return CUDNN_STATUS_SUCCESS;
}

void fdnn_rnn_fill_tensor(struct cudnnTensorStruct *t, cudnnDataType_t dt, int d0, int d1, int d2)
{
    t->dtype = dt;
    t->format = CUDNN_TENSOR_NCHW;
    t->nb_dims = 3;
    t->dim[0] = d0; t->dim[1] = d1; t->dim[2] = d2;
    t->stride[2] = 1; t->stride[1] = d2; t->stride[0] = d1 * d2;
    t->vect = 1;
    t->is_set = 1;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNWeightParams(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, int32_t pseudoLayer,
                                                              size_t weightSpaceSize, const void *weightSpace, int32_t linLayerID,
                                                              cudnnTensorDescriptor_t mDesc, void **mAddr, cudnnTensorDescriptor_t bDesc,
                                                              void **bAddr)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    fdnn_rnn_geom g;
    fdnn_rnn_geom_of(rnnDesc, &g);
    size_t es = fdnn_dtype_size(rnnDesc->data_type);
    if (pseudoLayer < 0 || pseudoLayer >= g.L * g.D)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "pseudoLayer=%d is outside [0, numLayers*dirs=%d)", pseudoLayer, g.L * g.D);
    int maxid = g.has_proj ? 8 : 2 * g.G - 1;
    if (linLayerID < 0 || linLayerID > maxid || (linLayerID >= 2 * g.G && linLayerID != 8))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "linLayerID=%d is not valid for this cell (0..%d%s)", linLayerID, 2 * g.G - 1, g.has_proj ? ", 8" : "");
    if (weightSpaceSize < (size_t)fdnn_rnn_weight_count(&g) * es)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "weightSpaceSize=%zu is smaller than cudnnGetRNNWeightSpaceSize (%zu)", weightSpaceSize,
                         (size_t)fdnn_rnn_weight_count(&g) * es);
    if (mAddr && !mDesc) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mAddr is given without mDesc");
    if (bAddr && !bDesc) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "bAddr is given without bDesc");
    if (mDesc && mDesc->magic != FDNN_MAGIC_TENSOR) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mDesc is not a live tensor descriptor");
    if (bDesc && bDesc->magic != FDNN_MAGIC_TENSOR) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "bDesc is not a live tensor descriptor");
    int rows = 0, cols = 0;
    if (mAddr) {
        int64_t o = fdnn_rnn_param(&g, pseudoLayer, linLayerID, 0, &rows, &cols);
        if (o < 0) *mAddr = NULL;
        else {
            *mAddr = (char *)weightSpace + o * (int64_t)es;
            fdnn_rnn_fill_tensor(mDesc, rnnDesc->data_type, 1, rows, cols);
        }
    }
    if (bAddr) {
        int64_t o = fdnn_rnn_param(&g, pseudoLayer, linLayerID, 1, &rows, &cols);
        if (o < 0) *bAddr = NULL;
        else {
            *bAddr = (char *)weightSpace + o * (int64_t)es;
            fdnn_rnn_fill_tensor(bDesc, rnnDesc->data_type, 1, rows, 1);
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetRNNTempSpaceSizes(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnForwardMode_t fMode,
                                                                cudnnRNNDataDescriptor_t xDesc, size_t *workSpaceSize, size_t *reserveSpaceSize)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    FDNN_CHECK(fdnn_rnn_data_check(xDesc, "xDesc"));
    if (fMode != CUDNN_FWD_MODE_INFERENCE && fMode != CUDNN_FWD_MODE_TRAINING)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "fMode=%d is not a cudnnForwardMode_t", (int)fMode);
    fdnn_rnn_geom g;
    fdnn_rnn_geom_of(rnnDesc, &g);
    if (workSpaceSize) *workSpaceSize = fdnn_rnn_work_bytes(&g, xDesc->max_seq, xDesc->batch, fMode == CUDNN_FWD_MODE_TRAINING);
    if (reserveSpaceSize) *reserveSpaceSize = fMode == CUDNN_FWD_MODE_TRAINING ? fdnn_rnn_reserve_bytes(&g, xDesc->max_seq, xDesc->batch) : 0;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any | nothing to build on the CPU; validates and succeeds */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnBuildRNNDynamic(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, int miniBatch)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_rnn_check(rnnDesc, "rnnDesc"));
    if (miniBatch <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "miniBatch=%d must be positive", miniBatch);
    return CUDNN_STATUS_SUCCESS;
}
