/* CTC loss: descriptors, workspace queries and the loss itself (CPU backend).
 * probs is (T, N, A) FLOAT. With CUDNN_LOSS_NORMALIZATION_SOFTMAX probs holds the pre-softmax
 * activations: the library applies softmax over A and the
 * gradient is with respect to those activations (softmax - gamma, gamma = posterior occupancy of
 * the symbol at t). With NONE probs already holds probabilities y and the gradient follows
 * NVIDIA's rule, measured on an H200 with cuDNN 9.19 (tests/compat ops probe): -gamma/y (the
 * derivative of the cost with respect to y) where gamma > 0, and y itself where gamma == 0 (the
 * symbol is not in the extended label or unreachable at t; this value is not a derivative).
 * Time steps t >= inputLengths[n] get 0 (NVIDIA leaves them untouched). The pre-v8 setter cudnnSetCTCLossDescriptor (and a new descriptor) mean NONE with
 * NOT_PROPAGATE_NAN, as NVIDIA documents for it; the H200 comparison with NVIDIA's library showed
 * our earlier SOFTMAX default giving different costs. Labels are packed (concatenated per batch entry) in both cudnnCTCLoss and
 * cudnnCTCLoss_v8; blank is label 0. The NON_DETERMINISTIC algorithm maps to the
 * deterministic one. On a CUDA handle the loss runs in src/cuda/ctc_cuda.cu. */
#include <stdlib.h>
#include <string.h>
#include "../core/adv_desc.h"
#include "../cuda/cuda_adv.h"

#define FDNN_CTC_LEGACY_MAX_LABEL 256

static cudnnStatus_t ctc_live(const struct cudnnCTCLossStruct *c)
{
    if (c == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "ctcLossDesc is NULL");
    if (c->magic != FDNN_MAGIC_CTC) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "ctcLossDesc is not a live CTC loss descriptor");
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t ctc_set(struct cudnnCTCLossStruct *c, cudnnDataType_t comp, cudnnLossNormalizationMode_t norm,
                             cudnnNanPropagation_t grad, int maxL)
{
    FDNN_CHECK(ctc_live(c));
    if (comp != CUDNN_DATA_FLOAT)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "compType %s: CTC loss supports only FLOAT", fdnn_dtype_name(comp));
    if (norm != CUDNN_LOSS_NORMALIZATION_NONE && norm != CUDNN_LOSS_NORMALIZATION_SOFTMAX)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "normMode=%d is not a cudnnLossNormalizationMode_t", (int)norm);
    if (grad != CUDNN_NOT_PROPAGATE_NAN && grad != CUDNN_PROPAGATE_NAN)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "gradMode=%d is not a cudnnNanPropagation_t", (int)grad);
    if (maxL < 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "maxLabelLength=%d is negative", maxL);
    c->comp_type = comp;
    c->norm_mode = norm;
    c->grad_mode = grad;
    c->max_label_length = maxL;
    c->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateCTCLossDescriptor(cudnnCTCLossDescriptor_t *ctcLossDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(ctcLossDesc, "ctcLossDesc");
    struct cudnnCTCLossStruct *c = calloc(1, sizeof *c);
    if (!c) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    c->magic = FDNN_MAGIC_CTC;
    c->comp_type = CUDNN_DATA_FLOAT;
    c->norm_mode = CUDNN_LOSS_NORMALIZATION_NONE;
    c->grad_mode = CUDNN_NOT_PROPAGATE_NAN;
    *ctcLossDesc = c;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyCTCLossDescriptor(cudnnCTCLossDescriptor_t ctcLossDesc)
{
    FDNN_API_ENTER();
    if (ctcLossDesc == NULL) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(ctc_live(ctcLossDesc));
    ctcLossDesc->magic = FDNN_MAGIC_DEAD;
    free(ctcLossDesc);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetCTCLossDescriptor(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t compType)
{
    FDNN_API_ENTER();
    return ctc_set(ctcLossDesc, compType, CUDNN_LOSS_NORMALIZATION_NONE, CUDNN_NOT_PROPAGATE_NAN, 0);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetCTCLossDescriptorEx(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t compType,
                                                                  cudnnLossNormalizationMode_t normMode, cudnnNanPropagation_t gradMode)
{
    FDNN_API_ENTER();
    return ctc_set(ctcLossDesc, compType, normMode, gradMode, 0);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetCTCLossDescriptor_v8(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t compType,
                                                                   cudnnLossNormalizationMode_t normMode, cudnnNanPropagation_t gradMode,
                                                                   int maxLabelLength)
{
    FDNN_API_ENTER();
    return ctc_set(ctcLossDesc, compType, normMode, gradMode, maxLabelLength);
}

static cudnnStatus_t ctc_get_checked(const struct cudnnCTCLossStruct *c)
{
    FDNN_CHECK(ctc_live(c));
    if (!c->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "ctcLossDesc was created but never set");
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossDescriptor(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t *compType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(ctc_get_checked(ctcLossDesc));
    FDNN_CHECK_PTR(compType, "compType");
    *compType = ctcLossDesc->comp_type;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossDescriptorEx(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t *compType,
                                                                  cudnnLossNormalizationMode_t *normMode, cudnnNanPropagation_t *gradMode)
{
    FDNN_API_ENTER();
    FDNN_CHECK(ctc_get_checked(ctcLossDesc));
    if (!compType || !normMode || !gradMode) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "compType, normMode or gradMode is NULL");
    *compType = ctcLossDesc->comp_type;
    *normMode = ctcLossDesc->norm_mode;
    *gradMode = ctcLossDesc->grad_mode;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossDescriptor_v8(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t *compType,
                                                                   cudnnLossNormalizationMode_t *normMode, cudnnNanPropagation_t *gradMode,
                                                                   int *maxLabelLength)
{
    FDNN_API_ENTER();
    FDNN_CHECK(ctc_get_checked(ctcLossDesc));
    if (!compType || !normMode || !gradMode || !maxLabelLength)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "compType, normMode, gradMode or maxLabelLength is NULL");
    *compType = ctcLossDesc->comp_type;
    *normMode = ctcLossDesc->norm_mode;
    *gradMode = ctcLossDesc->grad_mode;
    *maxLabelLength = ctcLossDesc->max_label_length;
    return CUDNN_STATUS_SUCCESS;
}

/* Shape checks shared by the queries and the loss: returns T, N, A. */
static cudnnStatus_t ctc_shapes(cudnnCTCLossAlgo_t algo, const struct cudnnCTCLossStruct *c, const struct cudnnTensorStruct *pd,
                                const struct cudnnTensorStruct *gd, int *T, int *N, int *A)
{
    FDNN_CHECK(ctc_get_checked(c));
    if (algo != CUDNN_CTC_LOSS_ALGO_DETERMINISTIC && algo != CUDNN_CTC_LOSS_ALGO_NON_DETERMINISTIC)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algo=%d is not a cudnnCTCLossAlgo_t", (int)algo);
    FDNN_CHECK(fdnn_check_tensor(pd, "probsDesc"));
    if (pd->nb_dims != 3) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "probsDesc has %d dims; it must be 3-D (T, N, A)", pd->nb_dims);
    if (pd->dtype != CUDNN_DATA_FLOAT)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "probsDesc is %s; CTC loss supports only FLOAT", fdnn_dtype_name(pd->dtype));
    if (gd) {
        FDNN_CHECK(fdnn_check_tensor(gd, "gradientsDesc"));
        if (gd->nb_dims != 3 || gd->dim[0] != pd->dim[0] || gd->dim[1] != pd->dim[1] || gd->dim[2] != pd->dim[2])
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "gradientsDesc must have the dimensions of probsDesc (%d, %d, %d)", pd->dim[0], pd->dim[1], pd->dim[2]);
        if (gd->dtype != CUDNN_DATA_FLOAT) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "gradientsDesc must be FLOAT like probsDesc");
    }
    *T = pd->dim[0];
    *N = pd->dim[1];
    *A = pd->dim[2];
    if (*A < 2) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "alphabet size %d (probsDesc dim 2) must be at least 2 (blank + one label)", *A);
    return CUDNN_STATUS_SUCCESS;
}

/* Validates lengths and labels; *maxL receives the largest label length. */
static cudnnStatus_t ctc_check_labels(int T, int N, int A, const int *labels, const int *labelLengths, const int *inputLengths,
                                      int limit, const char *limit_name, int *maxL)
{
    if (!labels || !labelLengths || !inputLengths) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "labels, labelLengths or inputLengths is NULL");
    int64_t off = 0;
    *maxL = 0;
    for (int n = 0; n < N; n++) {
        if (inputLengths[n] < 1 || inputLengths[n] > T)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "inputLengths[%d]=%d is outside [1, T=%d]", n, inputLengths[n], T);
        if (labelLengths[n] < 0 || labelLengths[n] > limit)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "labelLengths[%d]=%d is outside [0, %s=%d]", n, labelLengths[n], limit_name, limit);
        for (int k = 0; k < labelLengths[n]; k++) {
            int l = labels[off + k];
            if (l < 1 || l >= A)
                return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "label %d of batch entry %d is %d; labels must be in [1, A-1=%d] (0 is the blank)", k, n, l, A - 1);
        }
        off += labelLengths[n];
        if (labelLengths[n] > *maxL) *maxL = labelLengths[n];
    }
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t ctc_run(cudnnHandle_t handle, cudnnCTCLossAlgo_t algo, const struct cudnnCTCLossStruct *c,
                             const struct cudnnTensorStruct *pd, const void *probs, const int *labels, const int *labelLengths,
                             const int *inputLengths, void *costs, const struct cudnnTensorStruct *gd, void *gradients,
                             void *workspace, size_t wsBytes, int v8)
{
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    int cuda = handle->backend == FDNN_BACKEND_CUDA;
    int T = 0, N = 0, A = 0, maxL = 0;
    FDNN_CHECK(ctc_shapes(algo, c, pd, gd, &T, &N, &A));
    FDNN_CHECK_PTR(probs, "probs");
    FDNN_CHECK_PTR(costs, "costs");
    if (gradients && !gd) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "gradients is given but gradientsDesc is NULL");
    /* cudnnCTCLoss_v8 on a CUDA handle: the label arrays are device memory, checked by the kernel */
    if (v8 && cuda) {
        if (!labels || !labelLengths || !inputLengths) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "labels, labelLengths or inputLengths is NULL");
    } else if (v8) FDNN_CHECK(ctc_check_labels(T, N, A, labels, labelLengths, inputLengths, c->max_label_length, "maxLabelLength", &maxL));
    else FDNN_CHECK(ctc_check_labels(T, N, A, labels, labelLengths, inputLengths, FDNN_CTC_LEGACY_MAX_LABEL, "256", &maxL));
    if (v8) maxL = c->max_label_length;
    size_t need = fdnn_ctc_cpu_work_bytes(T, N, A, maxL);
    if (wsBytes < need)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workSpaceSizeInBytes=%zu is smaller than the %zu bytes the workspace query returns", wsBytes, need);
    if (need && !workspace) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workspace is NULL but %zu bytes are needed", need);
    FDNN_API_LOG(handle, "T=%d N=%d A=%d algo=%d (runs the deterministic algorithm) norm=%d", T, N, A, (int)algo, (int)c->norm_mode);
    int64_t st[3] = {pd->stride[0], pd->stride[1], pd->stride[2]};
    int64_t gst[3] = {0, 0, 0};
    if (gd) { gst[0] = gd->stride[0]; gst[1] = gd->stride[1]; gst[2] = gd->stride[2]; }
    if (cuda)
        return fdnn_ctc_cuda(handle, (const float *)probs, st, T, N, A, labels, labelLengths, inputLengths, !v8,
                             c->norm_mode == CUDNN_LOSS_NORMALIZATION_SOFTMAX, c->grad_mode == CUDNN_PROPAGATE_NAN, (float *)costs,
                             (float *)gradients, gst, maxL, workspace);
    fdnn_ctc_cpu((const float *)probs, st, T, N, A, labels, labelLengths, inputLengths, c->norm_mode == CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                 c->grad_mode == CUDNN_PROPAGATE_NAN, (float *)costs, (float *)gradients, gst, maxL, workspace);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCTCLoss(cudnnHandle_t handle, const cudnnTensorDescriptor_t probsDesc, const void *probs,
                                                   const int hostLabels[], const int hostLabelLengths[], const int hostInputLengths[],
                                                   void *costs, const cudnnTensorDescriptor_t gradientsDesc, void *gradients,
                                                   cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcLossDesc, void *workspace,
                                                   size_t workSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    return ctc_run(handle, algo, ctcLossDesc, probsDesc, probs, hostLabels, hostLabelLengths, hostInputLengths, costs, gradientsDesc,
                   gradients, workspace, workSpaceSizeInBytes, 0);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCTCLoss_v8(cudnnHandle_t handle, cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcLossDesc,
                                                      const cudnnTensorDescriptor_t probsDesc, const void *probs, const int labels[],
                                                      const int labelLengths[], const int inputLengths[], void *costs,
                                                      const cudnnTensorDescriptor_t gradientsDesc, void *gradients,
                                                      size_t workSpaceSizeInBytes, void *workspace)
{
    FDNN_API_ENTER();
    return ctc_run(handle, algo, ctcLossDesc, probsDesc, probs, labels, labelLengths, inputLengths, costs, gradientsDesc, gradients,
                   workspace, workSpaceSizeInBytes, 1);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t probsDesc,
                                                                   const cudnnTensorDescriptor_t gradientsDesc, const int *labels,
                                                                   const int *labelLengths, const int *inputLengths,
                                                                   cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcLossDesc,
                                                                   size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    int T = 0, N = 0, A = 0, maxL = 0;
    FDNN_CHECK(ctc_shapes(algo, ctcLossDesc, probsDesc, gradientsDesc, &T, &N, &A));
    FDNN_CHECK_PTR(sizeInBytes, "sizeInBytes");
    FDNN_CHECK(ctc_check_labels(T, N, A, labels, labelLengths, inputLengths, FDNN_CTC_LEGACY_MAX_LABEL, "256", &maxL));
    *sizeInBytes = fdnn_ctc_cpu_work_bytes(T, N, A, maxL);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossWorkspaceSize_v8(cudnnHandle_t handle, cudnnCTCLossAlgo_t algo,
                                                                      cudnnCTCLossDescriptor_t ctcLossDesc,
                                                                      const cudnnTensorDescriptor_t probsDesc,
                                                                      const cudnnTensorDescriptor_t gradientsDesc, size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    int T = 0, N = 0, A = 0;
    FDNN_CHECK(ctc_shapes(algo, ctcLossDesc, probsDesc, gradientsDesc, &T, &N, &A));
    FDNN_CHECK_PTR(sizeInBytes, "sizeInBytes");
    *sizeInBytes = fdnn_ctc_cpu_work_bytes(T, N, A, ctcLossDesc->max_label_length);
    return CUDNN_STATUS_SUCCESS;
}
