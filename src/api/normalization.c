/* The v8 cudnnNormalization* family. It is batch normalization generalised (PER_CHANNEL =
 * BN SPATIAL, PER_ACTIVATION = BN PER_ACTIVATION, norm ops = BN ops) with a separate mean/var
 * descriptor and a groupCnt that cuDNN 8.9 only supports as 1; every call maps onto the shared
 * batch-norm validation and engine (batchnorm.c, src/cpu/norm_cpu.c). */
#include <string.h>
#include "../core/fdnn.h"
#include "../core/norm_desc.h"

static cudnnStatus_t norm_args(cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormAlgo_t algo, int groupCnt, int *per_act)
{
    if (handle != NULL) {
        FDNN_CHECK(fdnn_check_handle(handle, "handle"));
#ifndef FDNN_HAVE_CUDA
        if (handle->backend == FDNN_BACKEND_CUDA)
            return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s is not implemented on the CUDA backend yet", fdnn_current_api());
#endif
    }
    if (mode != CUDNN_NORM_PER_ACTIVATION && mode != CUDNN_NORM_PER_CHANNEL)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mode=%d is not a cudnnNormMode_t", (int)mode);
    if (algo != CUDNN_NORM_ALGO_STANDARD && algo != CUDNN_NORM_ALGO_PERSIST)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algo=%d is not a cudnnNormAlgo_t", (int)algo);
    if (groupCnt < 1) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "groupCnt=%d must be positive", groupCnt);
    if (groupCnt != 1)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "groupCnt=%d: only groupCnt == 1 is supported (as in cuDNN 8.9)", groupCnt);
    *per_act = mode == CUDNN_NORM_PER_ACTIVATION;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDeriveNormTensorDescriptor(cudnnTensorDescriptor_t derivedNormScaleBiasDesc,
                                                                       cudnnTensorDescriptor_t derivedNormMeanVarDesc,
                                                                       const cudnnTensorDescriptor_t xDesc, cudnnNormMode_t mode, int groupCnt)
{
    FDNN_API_ENTER();
    if (derivedNormScaleBiasDesc == NULL || derivedNormScaleBiasDesc->magic != FDNN_MAGIC_TENSOR)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "derivedNormScaleBiasDesc is NULL or not a live tensor descriptor");
    if (derivedNormMeanVarDesc == NULL || derivedNormMeanVarDesc->magic != FDNN_MAGIC_TENSOR)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "derivedNormMeanVarDesc is NULL or not a live tensor descriptor");
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    int pa = 0;
    FDNN_CHECK(norm_args(NULL, mode, CUDNN_NORM_ALGO_STANDARD, groupCnt, &pa));
    struct cudnnTensorStruct d;
    memset(&d, 0, sizeof d);
    FDNN_CHECK(fdnn_norm_derive(&d, xDesc, pa, "cudnnDeriveNormTensorDescriptor"));
    *derivedNormScaleBiasDesc = d;
    *derivedNormMeanVarDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnNormalizationForwardInference(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t normScaleBiasDesc, const void *normScale,
    const void *normBias, const cudnnTensorDescriptor_t normMeanVarDesc, const void *estimatedMean, const void *estimatedVariance,
    const cudnnTensorDescriptor_t zDesc, const void *z, cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t yDesc,
    void *y, double epsilon, int groupCnt)
{
    FDNN_API_ENTER();
    FDNN_API_LOG(handle, "mode=%d normOps=%d algo=%d epsilon=%g groupCnt=%d", (int)mode, (int)normOps, (int)algo, epsilon, groupCnt);
    int pa = 0;
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(norm_args(handle, mode, algo, groupCnt, &pa));
    return fdnn_norm_infer_api(handle, pa, (int)normOps, alpha, beta, xDesc, x, normScaleBiasDesc, normScale, normBias, normMeanVarDesc,
                               estimatedMean, estimatedVariance, zDesc, z, activationDesc, yDesc, y, epsilon);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *xData, const cudnnTensorDescriptor_t normScaleBiasDesc, const void *normScale,
    const void *normBias, double exponentialAverageFactor, const cudnnTensorDescriptor_t normMeanVarDesc, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean, void *resultSaveInvVariance, cudnnActivationDescriptor_t activationDesc,
    const cudnnTensorDescriptor_t zDesc, const void *zData, const cudnnTensorDescriptor_t yDesc, void *yData, void *workspace,
    size_t workSpaceSizeInBytes, void *reserveSpace, size_t reserveSpaceSizeInBytes, int groupCnt)
{
    FDNN_API_ENTER();
    FDNN_API_LOG(handle, "mode=%d normOps=%d algo=%d factor=%g epsilon=%g groupCnt=%d", (int)mode, (int)normOps, (int)algo,
                 exponentialAverageFactor, epsilon, groupCnt);
    (void)workspace, (void)workSpaceSizeInBytes; /* the CPU engine needs no workspace */
    int pa = 0;
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(norm_args(handle, mode, algo, groupCnt, &pa));
    return fdnn_norm_train_api(handle, pa, (int)normOps, alpha, beta, xDesc, xData, zDesc, zData, yDesc, yData, normScaleBiasDesc, normScale,
                               normBias, normMeanVarDesc, exponentialAverageFactor, resultRunningMean, resultRunningVariance, epsilon,
                               resultSaveMean, resultSaveInvVariance, activationDesc, reserveSpace, reserveSpaceSizeInBytes);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnNormalizationBackward(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo, const void *alphaDataDiff, const void *betaDataDiff,
    const void *alphaParamDiff, const void *betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t yDesc, const void *yData, const cudnnTensorDescriptor_t dyDesc, const void *dyData,
    const cudnnTensorDescriptor_t dzDesc, void *dzData, const cudnnTensorDescriptor_t dxDesc, void *dxData,
    const cudnnTensorDescriptor_t dNormScaleBiasDesc, const void *normScaleData, const void *normBiasData, void *dNormScaleData,
    void *dNormBiasData, double epsilon, const cudnnTensorDescriptor_t normMeanVarDesc, const void *savedMean, const void *savedInvVariance,
    cudnnActivationDescriptor_t activationDesc, void *workSpace, size_t workSpaceSizeInBytes, void *reserveSpace,
    size_t reserveSpaceSizeInBytes, int groupCnt)
{
    FDNN_API_ENTER();
    FDNN_API_LOG(handle, "mode=%d normOps=%d algo=%d epsilon=%g groupCnt=%d", (int)mode, (int)normOps, (int)algo, epsilon, groupCnt);
    (void)workSpace, (void)workSpaceSizeInBytes;
    int pa = 0;
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(norm_args(handle, mode, algo, groupCnt, &pa));
    return fdnn_norm_backward_api(handle, pa, (int)normOps, alphaDataDiff, betaDataDiff, alphaParamDiff, betaParamDiff, xDesc, xData, yDesc,
                                  yData, dyDesc, dyData, dzDesc, dzData, dxDesc, dxData, dNormScaleBiasDesc, normScaleData, normBiasData,
                                  dNormScaleData, dNormBiasData, epsilon, normMeanVarDesc, savedMean, savedInvVariance, activationDesc,
                                  reserveSpace, reserveSpaceSizeInBytes);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetNormalizationForwardTrainingWorkspaceSize(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo, const cudnnTensorDescriptor_t xDesc,
    const cudnnTensorDescriptor_t zDesc, const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t normScaleBiasDesc,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t normMeanVarDesc, size_t *sizeInBytes, int groupCnt)
{
    FDNN_API_ENTER();
    int pa = 0;
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(norm_args(handle, mode, algo, groupCnt, &pa));
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    FDNN_CHECK(fdnn_check_tensor(yDesc, "yDesc"));
    FDNN_CHECK(fdnn_check_tensor(normScaleBiasDesc, "normScaleBiasDesc"));
    FDNN_CHECK(fdnn_check_tensor(normMeanVarDesc, "normMeanVarDesc"));
    FDNN_CHECK(fdnn_norm_check_ops((int)normOps, activationDesc, "normOps"));
    if (normOps == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION) FDNN_CHECK(fdnn_check_tensor(zDesc, "zDesc"));
    FDNN_CHECK_PTR(sizeInBytes, "sizeInBytes");
    *sizeInBytes = 0;
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetNormalizationBackwardWorkspaceSize(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo, const cudnnTensorDescriptor_t xDesc,
    const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t dyDesc, const cudnnTensorDescriptor_t dzDesc,
    const cudnnTensorDescriptor_t dxDesc, const cudnnTensorDescriptor_t dNormScaleBiasDesc, const cudnnActivationDescriptor_t activationDesc,
    const cudnnTensorDescriptor_t normMeanVarDesc, size_t *sizeInBytes, int groupCnt)
{
    FDNN_API_ENTER();
    int pa = 0;
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(norm_args(handle, mode, algo, groupCnt, &pa));
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    FDNN_CHECK(fdnn_check_tensor(dyDesc, "dyDesc"));
    FDNN_CHECK(fdnn_check_tensor(dxDesc, "dxDesc"));
    FDNN_CHECK(fdnn_check_tensor(dNormScaleBiasDesc, "dNormScaleBiasDesc"));
    FDNN_CHECK(fdnn_check_tensor(normMeanVarDesc, "normMeanVarDesc"));
    FDNN_CHECK(fdnn_norm_check_ops((int)normOps, activationDesc, "normOps"));
    if (normOps != CUDNN_NORM_OPS_NORM) FDNN_CHECK(fdnn_check_tensor(yDesc, "yDesc"));
    if (normOps == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION) FDNN_CHECK(fdnn_check_tensor(dzDesc, "dzDesc"));
    FDNN_CHECK_PTR(sizeInBytes, "sizeInBytes");
    *sizeInBytes = 0;
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetNormalizationTrainingReserveSpaceSize(cudnnHandle_t handle, cudnnNormMode_t mode,
                                                                                    cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
                                                                                    const cudnnActivationDescriptor_t activationDesc,
                                                                                    const cudnnTensorDescriptor_t xDesc, size_t *sizeInBytes,
                                                                                    int groupCnt)
{
    FDNN_API_ENTER();
    int pa = 0;
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(norm_args(handle, mode, algo, groupCnt, &pa));
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    FDNN_CHECK(fdnn_norm_check_ops((int)normOps, activationDesc, "normOps"));
    FDNN_CHECK_PTR(sizeInBytes, "sizeInBytes");
    *sizeInBytes = fdnn_norm_reserve_size((int)normOps, fdnn_tensor_elems(xDesc));
    return CUDNN_STATUS_SUCCESS;
}
