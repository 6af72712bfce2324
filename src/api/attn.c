/* Sequence data descriptors, attention descriptors and multi-head attention (forward,
 * backward data, backward weights) on the CPU backend. Math: docs/attention.md; engine:
 * src/cpu/attn_cpu.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../core/adv_desc.h"
#include "../cpu/attn_cpu.h"

static int attn_dtype_ok(cudnnDataType_t t) { return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF; }

/* ---------------------------------------------------------------- sequence data */
static cudnnStatus_t seq_check(const struct cudnnSeqDataStruct *d, const char *name)
{
    if (d == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", name);
    if (d->magic != FDNN_MAGIC_SEQDATA) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live sequence data descriptor", name);
    if (!d->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was created but never set", name);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateSeqDataDescriptor(cudnnSeqDataDescriptor_t *seqDataDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(seqDataDesc, "seqDataDesc");
    struct cudnnSeqDataStruct *d = calloc(1, sizeof *d);
    if (!d) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    d->magic = FDNN_MAGIC_SEQDATA;
    *seqDataDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroySeqDataDescriptor(cudnnSeqDataDescriptor_t seqDataDesc)
{
    FDNN_API_ENTER();
    if (seqDataDesc == NULL) return CUDNN_STATUS_SUCCESS;
    if (seqDataDesc->magic != FDNN_MAGIC_SEQDATA) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "seqDataDesc is not a live sequence data descriptor");
    seqDataDesc->magic = FDNN_MAGIC_DEAD;
    free(seqDataDesc->seq_len);
    free(seqDataDesc);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetSeqDataDescriptor(cudnnSeqDataDescriptor_t seqDataDesc, cudnnDataType_t dataType, int nbDims,
                                                                const int dimA[], const cudnnSeqDataAxis_t axes[], size_t seqLengthArraySize,
                                                                const int seqLengthArray[], void *paddingFill)
{
    FDNN_API_ENTER();
    if (seqDataDesc == NULL || seqDataDesc->magic != FDNN_MAGIC_SEQDATA)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "seqDataDesc is NULL or not a live sequence data descriptor");
    if (!attn_dtype_ok(dataType))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType %s: sequence data is FLOAT, DOUBLE or HALF", fdnn_dtype_name(dataType));
    if (nbDims != CUDNN_SEQDATA_DIM_COUNT) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDims=%d must be CUDNN_SEQDATA_DIM_COUNT (4)", nbDims);
    FDNN_CHECK_PTR(dimA, "dimA");
    FDNN_CHECK_PTR(axes, "axes");
    int seen = 0;
    for (int i = 0; i < 4; i++) {
        if (dimA[i] <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dimA[%d]=%d must be positive", i, dimA[i]);
        if ((int)axes[i] < 0 || (int)axes[i] > 3) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "axes[%d]=%d is not a cudnnSeqDataAxis_t", i, (int)axes[i]);
        if (seen & (1 << axes[i])) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "axes[%d]=%d repeats an axis", i, (int)axes[i]);
        seen |= 1 << axes[i];
    }
    if (axes[3] != CUDNN_SEQDATA_VECT_DIM)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "axes[3] must be CUDNN_SEQDATA_VECT_DIM (vectors are packed innermost)");
    size_t nlen = (size_t)dimA[CUDNN_SEQDATA_BATCH_DIM] * (size_t)dimA[CUDNN_SEQDATA_BEAM_DIM];
    if (seqLengthArraySize != nlen)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "seqLengthArraySize=%zu must equal batch*beam=%zu", seqLengthArraySize, nlen);
    FDNN_CHECK_PTR(seqLengthArray, "seqLengthArray");
    for (size_t i = 0; i < nlen; i++)
        if (seqLengthArray[i] < 0 || seqLengthArray[i] > dimA[CUDNN_SEQDATA_TIME_DIM])
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "seqLengthArray[%zu]=%d is outside [0, dimA[TIME]=%d]", i, seqLengthArray[i],
                             dimA[CUDNN_SEQDATA_TIME_DIM]);
    int *sl = malloc(sizeof(int) * nlen);
    if (!sl) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    memcpy(sl, seqLengthArray, sizeof(int) * nlen);
    free(seqDataDesc->seq_len);
    seqDataDesc->seq_len = sl;
    seqDataDesc->n_len = nlen;
    seqDataDesc->dtype = dataType;
    int64_t st = 1;
    for (int i = 3; i >= 0; i--) {
        seqDataDesc->axes[i] = axes[i];
        seqDataDesc->dim[i] = dimA[i];
        seqDataDesc->stride[axes[i]] = st;
        st *= dimA[axes[i]];
    }
    seqDataDesc->has_fill = paddingFill != NULL;
    seqDataDesc->fill = paddingFill ? fdnn_load(paddingFill, dataType, 0) : 0.0;
    seqDataDesc->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetSeqDataDescriptor(const cudnnSeqDataDescriptor_t seqDataDesc, cudnnDataType_t *dataType, int *nbDims,
                                                                int nbDimsRequested, int dimA[], cudnnSeqDataAxis_t axes[],
                                                                size_t *seqLengthArraySize, size_t seqLengthSizeRequested, int seqLengthArray[],
                                                                void *paddingFill)
{
    FDNN_API_ENTER();
    FDNN_CHECK(seq_check(seqDataDesc, "seqDataDesc"));
    if (!dataType || !nbDims || !seqLengthArraySize) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType, nbDims or seqLengthArraySize is NULL");
    if (nbDimsRequested < 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDimsRequested=%d is negative", nbDimsRequested);
    if (nbDimsRequested > 0 && (!dimA || !axes)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dimA or axes is NULL");
    if (seqLengthSizeRequested > 0 && !seqLengthArray) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "seqLengthArray is NULL");
    *dataType = seqDataDesc->dtype;
    *nbDims = CUDNN_SEQDATA_DIM_COUNT;
    for (int i = 0; i < nbDimsRequested && i < 4; i++) {
        dimA[i] = seqDataDesc->dim[i];
        axes[i] = seqDataDesc->axes[i];
    }
    *seqLengthArraySize = seqDataDesc->n_len;
    for (size_t i = 0; i < seqLengthSizeRequested && i < seqDataDesc->n_len; i++) seqLengthArray[i] = seqDataDesc->seq_len[i];
    if (paddingFill) fdnn_store(paddingFill, seqDataDesc->dtype, 0, seqDataDesc->fill);
    return CUDNN_STATUS_SUCCESS;
}

/* ---------------------------------------------------------------- attention descriptor */
static cudnnStatus_t attn_check(const struct cudnnAttnStruct *a, const char *name)
{
    if (a == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", name);
    if (a->magic != FDNN_MAGIC_ATTN) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live attention descriptor", name);
    if (!a->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was created but never set", name);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateAttnDescriptor(cudnnAttnDescriptor_t *attnDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(attnDesc, "attnDesc");
    struct cudnnAttnStruct *a = calloc(1, sizeof *a);
    if (!a) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    a->magic = FDNN_MAGIC_ATTN;
    *attnDesc = a;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyAttnDescriptor(cudnnAttnDescriptor_t attnDesc)
{
    FDNN_API_ENTER();
    if (attnDesc == NULL) return CUDNN_STATUS_SUCCESS;
    if (attnDesc->magic != FDNN_MAGIC_ATTN) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "attnDesc is not a live attention descriptor");
    attnDesc->magic = FDNN_MAGIC_DEAD;
    free(attnDesc);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_dropout(cudnnDropoutDescriptor_t d, const char *name)
{
    if (d == NULL) return CUDNN_STATUS_SUCCESS;
    if (d->magic != FDNN_MAGIC_DROPOUT) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live dropout descriptor", name);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetAttnDescriptor(cudnnAttnDescriptor_t attnDesc, unsigned attnMode, int nHeads, double smScaler,
                                                             cudnnDataType_t dataType, cudnnDataType_t computePrec, cudnnMathType_t mathType,
                                                             cudnnDropoutDescriptor_t attnDropoutDesc, cudnnDropoutDescriptor_t postDropoutDesc,
                                                             int qSize, int kSize, int vSize, int qProjSize, int kProjSize, int vProjSize,
                                                             int oProjSize, int qoMaxSeqLength, int kvMaxSeqLength, int maxBatchSize,
                                                             int maxBeamSize)
{
    FDNN_API_ENTER();
    if (attnDesc == NULL || attnDesc->magic != FDNN_MAGIC_ATTN)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "attnDesc is NULL or not a live attention descriptor");
    if (attnMode & ~(unsigned)(CUDNN_ATTN_QUERYMAP_ONE_TO_ONE | CUDNN_ATTN_ENABLE_PROJ_BIASES))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "attnMode=0x%x has bits other than QUERYMAP_ONE_TO_ONE and ENABLE_PROJ_BIASES", attnMode);
    if (nHeads <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "nHeads=%d must be positive", nHeads);
    if (!isfinite(smScaler)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "smScaler must be finite");
    if (!attn_dtype_ok(dataType)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType %s: attention is FLOAT, DOUBLE or HALF", fdnn_dtype_name(dataType));
    int prec_ok = dataType == CUDNN_DATA_DOUBLE ? computePrec == CUDNN_DATA_DOUBLE
                  : dataType == CUDNN_DATA_FLOAT ? computePrec == CUDNN_DATA_FLOAT
                                                 : (computePrec == CUDNN_DATA_FLOAT || computePrec == CUDNN_DATA_HALF);
    if (!prec_ok)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "computePrec %s does not go with dataType %s (DOUBLE/DOUBLE, FLOAT/FLOAT, HALF/FLOAT or HALF)",
                         fdnn_dtype_name(computePrec), fdnn_dtype_name(dataType));
    if ((int)mathType < 0 || mathType > CUDNN_FMA_MATH) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mathType=%d is not a cudnnMathType_t", (int)mathType);
    FDNN_CHECK(check_dropout(attnDropoutDesc, "attnDropoutDesc"));
    FDNN_CHECK(check_dropout(postDropoutDesc, "postDropoutDesc"));
    if (qSize <= 0 || kSize <= 0 || vSize <= 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "qSize=%d, kSize=%d and vSize=%d must be positive", qSize, kSize, vSize);
    if (qProjSize < 0 || kProjSize < 0 || vProjSize < 0 || oProjSize < 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "projection sizes must be >= 0 (0 = no projection)");
    int qp = qProjSize ? qProjSize : qSize, kp = kProjSize ? kProjSize : kSize;
    if (qp != kp)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "projected query size %d and key size %d must be equal (qProjSize/kProjSize, or qSize/kSize when 0)", qp, kp);
    if (qoMaxSeqLength <= 0 || kvMaxSeqLength <= 0 || maxBatchSize <= 0 || maxBeamSize <= 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "qoMaxSeqLength=%d, kvMaxSeqLength=%d, maxBatchSize=%d and maxBeamSize=%d must be positive",
                         qoMaxSeqLength, kvMaxSeqLength, maxBatchSize, maxBeamSize);
    struct cudnnAttnStruct *a = attnDesc;
    a->mode = attnMode;
    a->n_heads = nHeads;
    a->sm_scaler = smScaler;
    a->data_type = dataType;
    a->comp_prec = computePrec;
    a->math_type = mathType;
    a->attn_dropout = attnDropoutDesc;
    a->post_dropout = postDropoutDesc;
    a->q_size = qSize; a->k_size = kSize; a->v_size = vSize;
    a->q_proj = qProjSize; a->k_proj = kProjSize; a->v_proj = vProjSize; a->o_proj = oProjSize;
    a->qo_max_seq = qoMaxSeqLength; a->kv_max_seq = kvMaxSeqLength; a->max_batch = maxBatchSize; a->max_beam = maxBeamSize;
    a->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetAttnDescriptor(cudnnAttnDescriptor_t attnDesc, unsigned *attnMode, int *nHeads, double *smScaler,
                                                             cudnnDataType_t *dataType, cudnnDataType_t *computePrec, cudnnMathType_t *mathType,
                                                             cudnnDropoutDescriptor_t *attnDropoutDesc, cudnnDropoutDescriptor_t *postDropoutDesc,
                                                             int *qSize, int *kSize, int *vSize, int *qProjSize, int *kProjSize, int *vProjSize,
                                                             int *oProjSize, int *qoMaxSeqLength, int *kvMaxSeqLength, int *maxBatchSize,
                                                             int *maxBeamSize)
{
    FDNN_API_ENTER();
    FDNN_CHECK(attn_check(attnDesc, "attnDesc"));
    if (!attnMode || !nHeads || !smScaler || !dataType || !computePrec || !mathType || !attnDropoutDesc || !postDropoutDesc || !qSize || !kSize ||
        !vSize || !qProjSize || !kProjSize || !vProjSize || !oProjSize || !qoMaxSeqLength || !kvMaxSeqLength || !maxBatchSize || !maxBeamSize)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    const struct cudnnAttnStruct *a = attnDesc;
    *attnMode = a->mode; *nHeads = a->n_heads; *smScaler = a->sm_scaler;
    *dataType = a->data_type; *computePrec = a->comp_prec; *mathType = a->math_type;
    *attnDropoutDesc = a->attn_dropout; *postDropoutDesc = a->post_dropout;
    *qSize = a->q_size; *kSize = a->k_size; *vSize = a->v_size;
    *qProjSize = a->q_proj; *kProjSize = a->k_proj; *vProjSize = a->v_proj; *oProjSize = a->o_proj;
    *qoMaxSeqLength = a->qo_max_seq; *kvMaxSeqLength = a->kv_max_seq; *maxBatchSize = a->max_batch; *maxBeamSize = a->max_beam;
    return CUDNN_STATUS_SUCCESS;
}

/* ---------------------------------------------------------------- buffers and weights */
/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetMultiHeadAttnBuffers(cudnnHandle_t handle, const cudnnAttnDescriptor_t attnDesc, size_t *weightSizeInBytes,
                                                                   size_t *workSpaceSizeInBytes, size_t *reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(attn_check(attnDesc, "attnDesc"));
    FDNN_CHECK_PTR(weightSizeInBytes, "weightSizeInBytes");
    FDNN_CHECK_PTR(workSpaceSizeInBytes, "workSpaceSizeInBytes");
    fdnn_attn_geom g;
    fdnn_attn_geom_of(attnDesc, &g);
    *weightSizeInBytes = (size_t)fdnn_attn_weight_count(&g) * fdnn_dtype_size(attnDesc->data_type);
    *workSpaceSizeInBytes = fdnn_attn_work_bytes(&g);
    if (reserveSpaceSizeInBytes) *reserveSpaceSizeInBytes = fdnn_attn_reserve_bytes(&g);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetMultiHeadAttnWeights(cudnnHandle_t handle, const cudnnAttnDescriptor_t attnDesc,
                                                                   cudnnMultiHeadAttnWeightKind_t wKind, size_t weightSizeInBytes, const void *weights,
                                                                   cudnnTensorDescriptor_t wDesc, void **wAddr)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(attn_check(attnDesc, "attnDesc"));
    if ((int)wKind < 0 || (int)wKind >= CUDNN_ATTN_WKIND_COUNT) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "wKind=%d is not a weight kind", (int)wKind);
    fdnn_attn_geom g;
    fdnn_attn_geom_of(attnDesc, &g);
    size_t es = fdnn_dtype_size(attnDesc->data_type), need = (size_t)fdnn_attn_weight_count(&g) * es;
    if (weightSizeInBytes != need)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "weightSizeInBytes=%zu must be the %zu bytes cudnnGetMultiHeadAttnBuffers reports", weightSizeInBytes, need);
    if (!weights && need) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "weights is NULL");
    if (wDesc == NULL || wDesc->magic != FDNN_MAGIC_TENSOR) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "wDesc is NULL or not a live tensor descriptor");
    FDNN_CHECK_PTR(wAddr, "wAddr");
    int dims[3], strides[3];
    int64_t off = fdnn_attn_weight_off(&g, (int)wKind, dims, strides);
    if (off < 0) { /* that projection (or its bias) is disabled */
        *wAddr = NULL;
        return CUDNN_STATUS_SUCCESS;
    }
    wDesc->dtype = attnDesc->data_type;
    wDesc->format = CUDNN_TENSOR_NCHW;
    wDesc->nb_dims = 3;
    wDesc->dim[0] = dims[0]; wDesc->dim[1] = dims[1]; wDesc->dim[2] = dims[2];
    wDesc->stride[0] = strides[0]; wDesc->stride[1] = strides[1]; wDesc->stride[2] = strides[2];
    wDesc->vect = 1;
    wDesc->is_set = 1;
    *wAddr = (char *)weights + (size_t)off * es;
    return CUDNN_STATUS_SUCCESS;
}

/* ---------------------------------------------------------------- the three operations */
static int same_lens(const struct cudnnSeqDataStruct *a, const struct cudnnSeqDataStruct *b)
{
    return a->n_len == b->n_len && memcmp(a->seq_len, b->seq_len, sizeof(int) * a->n_len) == 0;
}

static cudnnStatus_t check_vec(const struct cudnnSeqDataStruct *d, const char *name, const struct cudnnAttnStruct *a, int vec)
{
    if (d->dtype != a->data_type)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s; the attention is %s", name, fdnn_dtype_name(d->dtype), fdnn_dtype_name(a->data_type));
    if (d->dim[CUDNN_SEQDATA_VECT_DIM] != vec)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s VECT dimension is %d; it must be %d", name, d->dim[CUDNN_SEQDATA_VECT_DIM], vec);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_like(const struct cudnnSeqDataStruct *d, const char *name, const struct cudnnSeqDataStruct *ref, const char *refname)
{
    if (d->dim[0] != ref->dim[0] || d->dim[1] != ref->dim[1] || d->dim[2] != ref->dim[2] || !same_lens(d, ref))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s must have the TIME, BATCH and BEAM dimensions and sequence lengths of %s", name, refname);
    return CUDNN_STATUS_SUCCESS;
}

/* Checks shared by the three calls; fills run (except work/res/drop). q/k/v/o are the
 * descriptors of queries (or dqueries), keys, values and out (or dout). */
static cudnnStatus_t prepare(cudnnHandle_t handle, const struct cudnnAttnStruct *a, const int *lo, const int *hi, const int *lenqo,
                             const int *lenkv, const struct cudnnSeqDataStruct *qd, const char *qn, const struct cudnnSeqDataStruct *kd,
                             const char *kn, const struct cudnnSeqDataStruct *vd, const char *vn, const struct cudnnSeqDataStruct *od,
                             const char *on, size_t wsize, const void *w, size_t work_size, void *work, fdnn_attn_run *run)
{
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(attn_check(a, "attnDesc"));
    FDNN_CHECK(seq_check(qd, qn));
    FDNN_CHECK(seq_check(kd, kn));
    FDNN_CHECK(seq_check(vd, vn));
    FDNN_CHECK(seq_check(od, on));
    fdnn_attn_geom g;
    fdnn_attn_geom_of(a, &g);
    FDNN_CHECK(check_vec(qd, qn, a, g.qS));
    FDNN_CHECK(check_vec(kd, kn, a, g.kS));
    FDNN_CHECK(check_vec(vd, vn, a, g.vS));
    FDNN_CHECK(check_vec(od, on, a, g.O));
    int Tq = qd->dim[CUDNN_SEQDATA_TIME_DIM], B = qd->dim[CUDNN_SEQDATA_BATCH_DIM], Mq = qd->dim[CUDNN_SEQDATA_BEAM_DIM];
    int Tk = kd->dim[CUDNN_SEQDATA_TIME_DIM];
    if (Tq > a->qo_max_seq || B > a->max_batch || Mq > a->max_beam)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s TIME=%d, BATCH=%d, BEAM=%d exceed qoMaxSeqLength=%d, maxBatchSize=%d, maxBeamSize=%d", qn, Tq, B, Mq,
                         a->qo_max_seq, a->max_batch, a->max_beam);
    if (Tk > a->kv_max_seq) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s TIME=%d exceeds kvMaxSeqLength=%d", kn, Tk, a->kv_max_seq);
    int Mkv = g.one_to_one ? Mq : 1;
    if (kd->dim[CUDNN_SEQDATA_BATCH_DIM] != B || kd->dim[CUDNN_SEQDATA_BEAM_DIM] != Mkv)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s must have BATCH=%d and BEAM=%d (%s)", kn, B, Mkv,
                         g.one_to_one ? "QUERYMAP_ONE_TO_ONE: the beam of the queries" : "QUERYMAP_ALL_TO_ONE: one K/V beam");
    FDNN_CHECK(check_like(vd, vn, kd, kn));
    FDNN_CHECK(check_like(od, on, qd, qn));
    if (!lo || !hi) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "loWinIdx and hiWinIdx must not be NULL");
    if (!lenqo || !lenkv) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "the device sequence length arrays must not be NULL");
    /* on a CUDA handle the device length arrays are device memory and are not read: the engine
     * uses the descriptors' host seqLengthArray (cuDNN requires both to hold the same lengths) */
    int cuda = handle->backend == FDNN_BACKEND_CUDA;
    if (!cuda && memcmp(lenqo, qd->seq_len, sizeof(int) * qd->n_len) != 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "the Q/O device sequence lengths differ from the seqLengthArray of %s", qn);
    if (!cuda && memcmp(lenkv, kd->seq_len, sizeof(int) * kd->n_len) != 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "the K/V device sequence lengths differ from the seqLengthArray of %s", kn);
    size_t need = (size_t)fdnn_attn_weight_count(&g) * fdnn_dtype_size(a->data_type);
    if (wsize != need) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "weightSizeInBytes=%zu must be %zu", wsize, need);
    if (need && !w) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "weights is NULL");
    size_t wk = fdnn_attn_work_bytes(&g);
    if (work_size < wk || !work)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workSpace is NULL or workSpaceSizeInBytes=%zu is smaller than the %zu bytes required", work_size, wk);
    memset(run, 0, sizeof *run);
    run->handle = handle;
    run->g = g;
    run->g.Tq = Tq; run->g.Tk = Tk; run->g.B = B; run->g.Mq = Mq; run->g.Mkv = Mkv;
    run->dt = a->data_type;
    run->lenq = qd->seq_len;
    run->lenkv = kd->seq_len;
    run->lo = lo;
    run->hi = hi;
    run->w = w;
    run->work = work;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_reserve(const struct cudnnAttnStruct *a, size_t size, void *res)
{
    fdnn_attn_geom g;
    fdnn_attn_geom_of(a, &g);
    size_t need = fdnn_attn_reserve_bytes(&g);
    if (!res || size < need)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reserveSpace is NULL or reserveSpaceSizeInBytes=%zu is smaller than the %zu bytes required", size, need);
    return CUDNN_STATUS_SUCCESS;
}

static const struct cudnnDropoutStruct *active_dropout(cudnnDropoutDescriptor_t d)
{
    return (d && d->is_set && d->dropout > 0.0f) ? d : NULL;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnMultiHeadAttnForward(cudnnHandle_t handle, const cudnnAttnDescriptor_t attnDesc, int currIdx,
                                                                const int loWinIdx[], const int hiWinIdx[], const int devSeqLengthsQO[],
                                                                const int devSeqLengthsKV[], const cudnnSeqDataDescriptor_t qDesc, const void *queries,
                                                                const void *residuals, const cudnnSeqDataDescriptor_t kDesc, const void *keys,
                                                                const cudnnSeqDataDescriptor_t vDesc, const void *values,
                                                                const cudnnSeqDataDescriptor_t oDesc, void *out, size_t weightSizeInBytes,
                                                                const void *weights, size_t workSpaceSizeInBytes, void *workSpace,
                                                                size_t reserveSpaceSizeInBytes, void *reserveSpace)
{
    FDNN_API_ENTER();
    FDNN_API_LOG(handle, "currIdx=%d reserveSpace=%p", currIdx, reserveSpace);
    fdnn_attn_run run;
    FDNN_CHECK(prepare(handle, attnDesc, loWinIdx, hiWinIdx, devSeqLengthsQO, devSeqLengthsKV, qDesc, "qDesc", kDesc, "kDesc", vDesc, "vDesc", oDesc,
                       "oDesc", weightSizeInBytes, weights, workSpaceSizeInBytes, workSpace, &run));
    if (!queries || !keys || !values || !out) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "queries, keys, values or out is NULL");
    int training = reserveSpace != NULL;
    if (training) {
        FDNN_CHECK(check_reserve(attnDesc, reserveSpaceSizeInBytes, reserveSpace));
        if (currIdx >= 0)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "currIdx=%d: a single time step is for inference only (reserveSpace must be NULL)", currIdx);
    }
    if (currIdx >= run.g.Tq) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "currIdx=%d must be below the query TIME dimension %d", currIdx, run.g.Tq);
    if (residuals && run.g.O != run.g.qS)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "residuals need an output size (%d) equal to qSize (%d)", run.g.O, run.g.qS);
    if (training) {
        run.res = reserveSpace;
        run.attn_drop = active_dropout(attnDesc->attn_dropout);
        run.post_drop = active_dropout(attnDesc->post_dropout);
    }
    return fdnn_attn_cpu_forward(&run, currIdx, qDesc, queries, residuals, kDesc, keys, vDesc, values, oDesc, out);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnMultiHeadAttnBackwardData(cudnnHandle_t handle, const cudnnAttnDescriptor_t attnDesc, const int loWinIdx[],
                                                                     const int hiWinIdx[], const int devSeqLengthsDQDO[], const int devSeqLengthsDKDV[],
                                                                     const cudnnSeqDataDescriptor_t doDesc, const void *dout,
                                                                     const cudnnSeqDataDescriptor_t dqDesc, void *dqueries, const void *queries,
                                                                     const cudnnSeqDataDescriptor_t dkDesc, void *dkeys, const void *keys,
                                                                     const cudnnSeqDataDescriptor_t dvDesc, void *dvalues, const void *values,
                                                                     size_t weightSizeInBytes, const void *weights, size_t workSpaceSizeInBytes,
                                                                     void *workSpace, size_t reserveSpaceSizeInBytes, void *reserveSpace)
{
    FDNN_API_ENTER();
    fdnn_attn_run run;
    FDNN_CHECK(prepare(handle, attnDesc, loWinIdx, hiWinIdx, devSeqLengthsDQDO, devSeqLengthsDKDV, dqDesc, "dqDesc", dkDesc, "dkDesc", dvDesc, "dvDesc",
                       doDesc, "doDesc", weightSizeInBytes, weights, workSpaceSizeInBytes, workSpace, &run));
    if (!dout || !dqueries || !queries || !dkeys || !keys || !dvalues || !values)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dout, dqueries, queries, dkeys, keys, dvalues or values is NULL");
    FDNN_CHECK(check_reserve(attnDesc, reserveSpaceSizeInBytes, reserveSpace));
    run.res = reserveSpace;
    run.attn_drop = active_dropout(attnDesc->attn_dropout);
    run.post_drop = active_dropout(attnDesc->post_dropout);
    return fdnn_attn_cpu_backward_data(&run, doDesc, dout, dqDesc, dqueries, dkDesc, dkeys, dvDesc, dvalues);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnMultiHeadAttnBackwardWeights(cudnnHandle_t handle, const cudnnAttnDescriptor_t attnDesc,
                                                                        cudnnWgradMode_t addGrad, const cudnnSeqDataDescriptor_t qDesc,
                                                                        const void *queries, const cudnnSeqDataDescriptor_t kDesc, const void *keys,
                                                                        const cudnnSeqDataDescriptor_t vDesc, const void *values,
                                                                        const cudnnSeqDataDescriptor_t doDesc, const void *dout, size_t weightSizeInBytes,
                                                                        const void *weights, void *dweights, size_t workSpaceSizeInBytes,
                                                                        void *workSpace, size_t reserveSpaceSizeInBytes, void *reserveSpace)
{
    FDNN_API_ENTER();
    static const int no_window[1] = {0};
    fdnn_attn_run run;
    /* windows and device lengths are not inputs of this call: pass the descriptors' own */
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(seq_check(qDesc, "qDesc"));
    FDNN_CHECK(seq_check(kDesc, "kDesc"));
    FDNN_CHECK(prepare(handle, attnDesc, no_window, no_window, qDesc->seq_len, kDesc->seq_len, qDesc, "qDesc", kDesc, "kDesc", vDesc, "vDesc", doDesc,
                       "doDesc", weightSizeInBytes, weights, workSpaceSizeInBytes, workSpace, &run));
    if (addGrad != CUDNN_WGRAD_MODE_ADD && addGrad != CUDNN_WGRAD_MODE_SET)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "addGrad=%d is not CUDNN_WGRAD_MODE_ADD or _SET", (int)addGrad);
    if (!queries || !keys || !values || !dout) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "queries, keys, values or dout is NULL");
    if (!dweights && weightSizeInBytes) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dweights is NULL");
    FDNN_CHECK(check_reserve(attnDesc, reserveSpaceSizeInBytes, reserveSpace));
    run.res = reserveSpace;
    run.lo = run.hi = NULL;
    run.post_drop = active_dropout(attnDesc->post_dropout);
    return fdnn_attn_cpu_backward_weights(&run, addGrad == CUDNN_WGRAD_MODE_ADD, qDesc, queries, kDesc, keys, vDesc, values, doDesc, dout,
                                          dweights);
}
