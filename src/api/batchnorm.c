/* Batch normalization (cudnnBatchNormalization*, cudnnDeriveBNTensorDescriptor) and the
 * validation shared with cudnnNormalization* (normalization.c): both families check their
 * arguments here and run on one engine (src/cpu/norm_cpu.c). Semantics: reference section 4
 * item 8 and docs/ops-norm.md. */
#include <math.h>
#include <string.h>
#include "../core/fdnn.h"
#include "../core/norm_desc.h"
#ifdef FDNN_HAVE_CUDA
#include "../cuda/cuda_norm.h"
#endif

static int data_type_ok(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

static cudnnDataType_t param_type(cudnnDataType_t x)
{
    return (x == CUDNN_DATA_HALF || x == CUDNN_DATA_BFLOAT16) ? CUDNN_DATA_FLOAT : x;
}

cudnnStatus_t fdnn_norm_derive(struct cudnnTensorStruct *d, const struct cudnnTensorStruct *x, int per_act, const char *argname)
{
    if (!data_type_ok(x->dtype))
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "xDesc data type %s is not supported (FLOAT, DOUBLE, HALF, BFLOAT16)",
                         fdnn_dtype_name(x->dtype));
    if (x->nb_dims != 4 && x->nb_dims != 5)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc has %d dims; %s needs a 4-D or 5-D tensor", x->nb_dims, argname);
    int nb = x->nb_dims;
    d->magic = FDNN_MAGIC_TENSOR;
    d->dtype = param_type(x->dtype);
    d->format = CUDNN_TENSOR_NCHW;
    d->nb_dims = nb;
    d->vect = 1;
    d->dim[0] = 1;
    d->dim[1] = x->dim[1];
    for (int i = 2; i < nb; i++) d->dim[i] = per_act ? x->dim[i] : 1;
    int s = 1;
    for (int i = nb - 1; i >= 0; i--) {
        d->stride[i] = s;
        s *= d->dim[i];
    }
    d->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t derivedBnDesc, const cudnnTensorDescriptor_t xDesc,
                                                                     cudnnBatchNormMode_t mode)
{
    FDNN_API_ENTER();
    if (derivedBnDesc == NULL || derivedBnDesc->magic != FDNN_MAGIC_TENSOR)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "derivedBnDesc is NULL or not a live tensor descriptor");
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    if ((int)mode < 0 || mode > CUDNN_BATCHNORM_SPATIAL_PERSISTENT)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mode=%d is not a cudnnBatchNormMode_t", (int)mode);
    struct cudnnTensorStruct d;
    memset(&d, 0, sizeof d);
    FDNN_CHECK(fdnn_norm_derive(&d, xDesc, mode == CUDNN_BATCHNORM_PER_ACTIVATION, "cudnnDeriveBNTensorDescriptor"));
    *derivedBnDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

/* --------------------------------------------------------- shared validation */

static cudnnStatus_t check_data_desc(const struct cudnnTensorStruct *t, const char *name)
{
    FDNN_CHECK(fdnn_check_tensor(t, name));
    if (!data_type_ok(t->dtype))
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s data type %s is not supported (FLOAT, DOUBLE, HALF, BFLOAT16)", name,
                         fdnn_dtype_name(t->dtype));
    if (t->nb_dims != 4 && t->nb_dims != 5)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s has %d dims; only 4-D and 5-D tensors are supported", name, t->nb_dims);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_like_x(const struct cudnnTensorStruct *x, const struct cudnnTensorStruct *t, const char *name)
{
    FDNN_CHECK(check_data_desc(t, name));
    if (t->nb_dims != x->nb_dims || memcmp(t->dim, x->dim, sizeof(int) * (size_t)x->nb_dims) != 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s dims differ from xDesc dims", name);
    if (t->dtype != x->dtype)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s data type %s differs from xDesc's %s", name, fdnn_dtype_name(t->dtype),
                         fdnn_dtype_name(x->dtype));
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_param_desc(const struct cudnnTensorStruct *x, const struct cudnnTensorStruct *p, int per_act, const char *name)
{
    FDNN_CHECK(fdnn_check_tensor(p, name));
    struct cudnnTensorStruct d;
    memset(&d, 0, sizeof d);
    FDNN_CHECK(fdnn_norm_derive(&d, x, per_act, name));
    if (p->nb_dims != d.nb_dims || memcmp(p->dim, d.dim, sizeof(int) * (size_t)d.nb_dims) != 0) {
        char b1[160], b2[160];
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s but this mode needs the derived shape %s", name,
                         fdnn_tensor_str(p, b1, sizeof b1), fdnn_tensor_str(&d, b2, sizeof b2));
    }
    if (p->dtype != d.dtype)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s data type %s must be %s for %s data", name, fdnn_dtype_name(p->dtype),
                         fdnn_dtype_name(d.dtype), fdnn_dtype_name(x->dtype));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_norm_check_ops(int ops, const struct cudnnActivationStruct *act, const char *opsname)
{
    if (ops < FDNN_NORM_OPS_NORM || ops > FDNN_NORM_OPS_ADD_ACT)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s=%d is not a valid ops value (0, 1 or 2)", opsname, ops);
    if (ops != FDNN_NORM_OPS_NORM) FDNN_CHECK(fdnn_check_activation(act, "activationDesc"));
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_eps(double eps)
{
    if (!(eps >= CUDNN_BN_MIN_EPSILON))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "epsilon=%g must be >= CUDNN_BN_MIN_EPSILON (%g)", eps, (double)CUDNN_BN_MIN_EPSILON);
    return CUDNN_STATUS_SUCCESS;
}

/* Both backends run the engine: the CPU one (src/cpu/norm_cpu.c) and, in CUDA builds, the
 * CUDA one (src/cuda/norm_engine.cu). */
static cudnnStatus_t check_cpu_handle(cudnnHandle_t handle)
{
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
#ifndef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s is not implemented on the CUDA backend yet", fdnn_current_api());
#endif
    return CUDNN_STATUS_SUCCESS;
}

#define NEED(p, name) FDNN_CHECK_PTR(p, name)

/* The checks both forward paths (inference and training) start with, in this order; zname is
 * the public name of the z argument in the calling API. */
static cudnnStatus_t check_forward(cudnnHandle_t handle, int per_act, int ops, const void *alpha, const void *beta,
                                   const struct cudnnTensorStruct *xDesc, const void *x, const struct cudnnTensorStruct *sbDesc,
                                   const struct cudnnTensorStruct *mvDesc, const struct cudnnTensorStruct *zDesc, const void *z,
                                   const char *zname, const struct cudnnActivationStruct *act, const struct cudnnTensorStruct *yDesc,
                                   const void *y)
{
    FDNN_CHECK(check_cpu_handle(handle));
    NEED(alpha, "alpha");
    NEED(beta, "beta");
    FDNN_CHECK(check_data_desc(xDesc, "xDesc"));
    FDNN_CHECK(check_like_x(xDesc, yDesc, "yDesc"));
    FDNN_CHECK(check_param_desc(xDesc, sbDesc, per_act, "scale/bias descriptor"));
    FDNN_CHECK(check_param_desc(xDesc, mvDesc, per_act, "mean/variance descriptor"));
    FDNN_CHECK(fdnn_norm_check_ops(ops, act, "ops"));
    if (ops == FDNN_NORM_OPS_ADD_ACT) {
        FDNN_CHECK(check_like_x(xDesc, zDesc, "zDesc"));
        NEED(z, zname);
    }
    NEED(x, "x");
    NEED(y, "y");
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_norm_infer_api(cudnnHandle_t handle, int per_act, int ops, const void *alpha, const void *beta,
                                  const struct cudnnTensorStruct *xDesc, const void *x, const struct cudnnTensorStruct *sbDesc,
                                  const void *scale, const void *bias, const struct cudnnTensorStruct *mvDesc, const void *mean,
                                  const void *var, const struct cudnnTensorStruct *zDesc, const void *z,
                                  const struct cudnnActivationStruct *act, const struct cudnnTensorStruct *yDesc, void *y, double eps)
{
    FDNN_CHECK(check_forward(handle, per_act, ops, alpha, beta, xDesc, x, sbDesc, mvDesc, zDesc, z, "z", act, yDesc, y));
    NEED(scale, "scale");
    NEED(bias, "bias");
    NEED(mean, "estimatedMean");
    NEED(var, "estimatedVariance");
    FDNN_CHECK(check_eps(eps));
    fdnn_norm_prob p;
    memset(&p, 0, sizeof p);
    p.per_activation = per_act;
    p.ops = ops;
    p.act = act;
    p.x = xDesc, p.y = yDesc, p.z = ops == FDNN_NORM_OPS_ADD_ACT ? zDesc : NULL;
    p.sb = sbDesc, p.mv = mvDesc;
    p.xp = x, p.zp = z, p.yp = y, p.scale = scale, p.bias = bias, p.est_mean = mean, p.est_var = var;
    p.alpha = fdnn_scalar(alpha, xDesc->dtype);
    p.beta = fdnn_scalar(beta, xDesc->dtype);
    p.eps = eps;
#ifdef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA) return fdnn_cuda_norm_infer(handle, &p);
#endif
    return fdnn_cpu_norm_infer(&p);
}

cudnnStatus_t fdnn_norm_train_api(cudnnHandle_t handle, int per_act, int ops, const void *alpha, const void *beta,
                                  const struct cudnnTensorStruct *xDesc, const void *x, const struct cudnnTensorStruct *zDesc, const void *z,
                                  const struct cudnnTensorStruct *yDesc, void *y, const struct cudnnTensorStruct *sbDesc, const void *scale,
                                  const void *bias, const struct cudnnTensorStruct *mvDesc, double factor, void *run_mean, void *run_var,
                                  double eps, void *save_mean, void *save_invstd, const struct cudnnActivationStruct *act,
                                  void *reserve, size_t reserve_size)
{
    FDNN_CHECK(check_forward(handle, per_act, ops, alpha, beta, xDesc, x, sbDesc, mvDesc, zDesc, z, "zData", act, yDesc, y));
    NEED(scale, "bnScale");
    NEED(bias, "bnBias");
    if ((run_mean == NULL) != (run_var == NULL))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "resultRunningMean and resultRunningVariance must both be NULL or both non-NULL");
    if ((save_mean == NULL) != (save_invstd == NULL))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "resultSaveMean and resultSaveInvVariance must both be NULL or both non-NULL");
    FDNN_CHECK(check_eps(eps));
    if (isnan(factor)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "exponentialAverageFactor is NaN");
    size_t need = fdnn_norm_reserve_size(ops, fdnn_tensor_elems(xDesc));
    if (need > 0 && (reserve == NULL || reserve_size < need))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reserveSpace (%p, %zu bytes) is smaller than the %zu bytes the size query returns", reserve,
                         reserve_size, need);
    fdnn_norm_prob p;
    memset(&p, 0, sizeof p);
    p.per_activation = per_act;
    p.ops = ops;
    p.act = act;
    p.x = xDesc, p.y = yDesc, p.z = ops == FDNN_NORM_OPS_ADD_ACT ? zDesc : NULL;
    p.sb = sbDesc, p.mv = mvDesc;
    p.xp = x, p.zp = z, p.yp = y, p.scale = scale, p.bias = bias;
    p.run_mean = run_mean, p.run_var = run_var, p.save_mean = save_mean, p.save_invstd = save_invstd;
    p.alpha = fdnn_scalar(alpha, xDesc->dtype);
    p.beta = fdnn_scalar(beta, xDesc->dtype);
    p.eps = eps;
    p.factor = factor;
    p.reserve = need ? reserve : NULL;
#ifdef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA) return fdnn_cuda_norm_train(handle, &p);
#endif
    return fdnn_cpu_norm_train(&p);
}

cudnnStatus_t fdnn_norm_backward_api(cudnnHandle_t handle, int per_act, int ops, const void *alphaD, const void *betaD,
                                     const void *alphaP, const void *betaP, const struct cudnnTensorStruct *xDesc, const void *x,
                                     const struct cudnnTensorStruct *yDesc, const void *y, const struct cudnnTensorStruct *dyDesc,
                                     const void *dy, const struct cudnnTensorStruct *dzDesc, void *dz,
                                     const struct cudnnTensorStruct *dxDesc, void *dx, const struct cudnnTensorStruct *sbDesc,
                                     const void *scale, const void *bias, void *dscale, void *dbias, double eps,
                                     const struct cudnnTensorStruct *mvDesc, const void *save_mean, const void *save_invstd,
                                     const struct cudnnActivationStruct *act, void *reserve, size_t reserve_size)
{
    FDNN_CHECK(check_cpu_handle(handle));
    NEED(alphaD, "alphaDataDiff");
    NEED(betaD, "betaDataDiff");
    NEED(alphaP, "alphaParamDiff");
    NEED(betaP, "betaParamDiff");
    FDNN_CHECK(check_data_desc(xDesc, "xDesc"));
    FDNN_CHECK(check_like_x(xDesc, dyDesc, "dyDesc"));
    FDNN_CHECK(check_like_x(xDesc, dxDesc, "dxDesc"));
    FDNN_CHECK(check_param_desc(xDesc, sbDesc, per_act, "dBnScaleBiasDesc"));
    FDNN_CHECK(check_param_desc(xDesc, mvDesc, per_act, "mean/variance descriptor"));
    FDNN_CHECK(fdnn_norm_check_ops(ops, act, "ops"));
    if (ops != FDNN_NORM_OPS_NORM) {
        FDNN_CHECK(check_like_x(xDesc, yDesc, "yDesc"));
        NEED(y, "yData");
        NEED(bias, "bias");
    }
    if (ops == FDNN_NORM_OPS_ADD_ACT) {
        FDNN_CHECK(check_like_x(xDesc, dzDesc, "dzDesc"));
        NEED(dz, "dzData");
    }
    NEED(x, "x");
    NEED(dy, "dy");
    NEED(dx, "dx");
    NEED(scale, "scale");
    NEED(dscale, "dScaleResult");
    NEED(dbias, "dBiasResult");
    if ((save_mean == NULL) != (save_invstd == NULL))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "savedMean and savedInvVariance must both be NULL or both non-NULL");
    FDNN_CHECK(check_eps(eps));
    size_t need = fdnn_norm_reserve_size(ops, fdnn_tensor_elems(xDesc));
    if (need > 0 && (reserve == NULL || reserve_size < need))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reserveSpace (%p, %zu bytes) is smaller than the %zu bytes the size query returns", reserve,
                         reserve_size, need);
    fdnn_norm_prob p;
    memset(&p, 0, sizeof p);
    p.per_activation = per_act;
    p.ops = ops;
    p.act = act;
    p.x = xDesc, p.dy = dyDesc, p.dx = dxDesc, p.dz = ops == FDNN_NORM_OPS_ADD_ACT ? dzDesc : NULL;
    p.sb = sbDesc, p.mv = mvDesc;
    p.xp = x, p.dyp = dy, p.dxp = dx, p.dzp = dz, p.scale = scale, p.bias = bias, p.dscale = dscale, p.dbias = dbias;
    p.save_mean = (void *)save_mean, p.save_invstd = (void *)save_invstd;
    p.alpha = fdnn_scalar(alphaD, xDesc->dtype);
    p.beta = fdnn_scalar(betaD, xDesc->dtype);
    p.alpha_p = fdnn_scalar(alphaP, xDesc->dtype);
    p.beta_p = fdnn_scalar(betaP, xDesc->dtype);
    p.eps = eps;
    p.reserve = need ? reserve : NULL;
#ifdef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA) return fdnn_cuda_norm_backward(handle, &p);
#endif
    return fdnn_cpu_norm_backward(&p);
}

/* ------------------------------------------------------------- batch norm API */

static cudnnStatus_t bn_mode(cudnnBatchNormMode_t mode, int *per_act)
{
    if ((int)mode < 0 || mode > CUDNN_BATCHNORM_SPATIAL_PERSISTENT)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mode=%d is not a cudnnBatchNormMode_t", (int)mode);
    *per_act = mode == CUDNN_BATCHNORM_PER_ACTIVATION;
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t yDesc, void *y, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale, const void *bnBias,
    const void *estimatedMean, const void *estimatedVariance, double epsilon)
{
    FDNN_API_ENTER();
    FDNN_API_LOG(handle, "mode=%d epsilon=%g", (int)mode, epsilon);
    int pa = 0;
    FDNN_CHECK(check_cpu_handle(handle));
    FDNN_CHECK(bn_mode(mode, &pa));
    return fdnn_norm_infer_api(handle, pa, FDNN_NORM_OPS_NORM, alpha, beta, xDesc, x, bnScaleBiasMeanVarDesc, bnScale, bnBias,
                               bnScaleBiasMeanVarDesc, estimatedMean, estimatedVariance, NULL, NULL, NULL, yDesc, y, epsilon);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t yDesc, void *y, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale, const void *bnBias,
    double exponentialAverageFactor, void *resultRunningMean, void *resultRunningVariance, double epsilon, void *resultSaveMean,
    void *resultSaveInvVariance)
{
    FDNN_API_ENTER();
    FDNN_API_LOG(handle, "mode=%d factor=%g epsilon=%g", (int)mode, exponentialAverageFactor, epsilon);
    int pa = 0;
    FDNN_CHECK(check_cpu_handle(handle));
    FDNN_CHECK(bn_mode(mode, &pa));
    return fdnn_norm_train_api(handle, pa, FDNN_NORM_OPS_NORM, alpha, beta, xDesc, x, NULL, NULL, yDesc, y, bnScaleBiasMeanVarDesc, bnScale,
                               bnBias, bnScaleBiasMeanVarDesc, exponentialAverageFactor, resultRunningMean, resultRunningVariance, epsilon,
                               resultSaveMean, resultSaveInvVariance, NULL, NULL, 0);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *xData, const cudnnTensorDescriptor_t zDesc, const void *zData,
    const cudnnTensorDescriptor_t yDesc, void *yData, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, double exponentialAverageFactor, void *resultRunningMean, void *resultRunningVariance, double epsilon,
    void *resultSaveMean, void *resultSaveInvVariance, cudnnActivationDescriptor_t activationDesc, void *workspace,
    size_t workSpaceSizeInBytes, void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_API_LOG(handle, "mode=%d bnOps=%d factor=%g epsilon=%g", (int)mode, (int)bnOps, exponentialAverageFactor, epsilon);
    (void)workspace, (void)workSpaceSizeInBytes; /* the CPU engine needs no workspace (size query returns 0) */
    int pa = 0;
    FDNN_CHECK(check_cpu_handle(handle));
    FDNN_CHECK(bn_mode(mode, &pa));
    return fdnn_norm_train_api(handle, pa, (int)bnOps, alpha, beta, xDesc, xData, zDesc, zData, yDesc, yData, bnScaleBiasMeanVarDesc,
                               bnScale, bnBias, bnScaleBiasMeanVarDesc, exponentialAverageFactor, resultRunningMean,
                               resultRunningVariance, epsilon, resultSaveMean, resultSaveInvVariance, activationDesc, reserveSpace,
                               reserveSpaceSizeInBytes);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationBackward(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alphaDataDiff, const void *betaDataDiff, const void *alphaParamDiff,
    const void *betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t dyDesc, const void *dy,
    const cudnnTensorDescriptor_t dxDesc, void *dx, const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void *bnScale,
    void *dBnScaleResult, void *dBnBiasResult, double epsilon, const void *savedMean, const void *savedInvVariance)
{
    FDNN_API_ENTER();
    FDNN_API_LOG(handle, "mode=%d epsilon=%g", (int)mode, epsilon);
    int pa = 0;
    FDNN_CHECK(check_cpu_handle(handle));
    FDNN_CHECK(bn_mode(mode, &pa));
    return fdnn_norm_backward_api(handle, pa, FDNN_NORM_OPS_NORM, alphaDataDiff, betaDataDiff, alphaParamDiff, betaParamDiff, xDesc, x, NULL,
                                  NULL, dyDesc, dy, NULL, NULL, dxDesc, dx, dBnScaleBiasDesc, bnScale, NULL, dBnScaleResult,
                                  dBnBiasResult, epsilon, dBnScaleBiasDesc, savedMean, savedInvVariance, NULL, NULL, 0);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void *alphaDataDiff, const void *betaDataDiff,
    const void *alphaParamDiff, const void *betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t yDesc, const void *yData, const cudnnTensorDescriptor_t dyDesc, const void *dyData,
    const cudnnTensorDescriptor_t dzDesc, void *dzData, const cudnnTensorDescriptor_t dxDesc, void *dxData,
    const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void *bnScaleData, const void *bnBiasData, void *dBnScaleData, void *dBnBiasData,
    double epsilon, const void *savedMean, const void *savedInvVariance, cudnnActivationDescriptor_t activationDesc, void *workSpace,
    size_t workSpaceSizeInBytes, void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_API_LOG(handle, "mode=%d bnOps=%d epsilon=%g", (int)mode, (int)bnOps, epsilon);
    (void)workSpace, (void)workSpaceSizeInBytes;
    int pa = 0;
    FDNN_CHECK(check_cpu_handle(handle));
    FDNN_CHECK(bn_mode(mode, &pa));
    return fdnn_norm_backward_api(handle, pa, (int)bnOps, alphaDataDiff, betaDataDiff, alphaParamDiff, betaParamDiff, xDesc, xData, yDesc,
                                  yData, dyDesc, dyData, dzDesc, dzData, dxDesc, dxData, dBnScaleBiasDesc, bnScaleData, bnBiasData,
                                  dBnScaleData, dBnBiasData, epsilon, dBnScaleBiasDesc, savedMean, savedInvVariance, activationDesc,
                                  reserveSpace, reserveSpaceSizeInBytes);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const cudnnTensorDescriptor_t xDesc,
    const cudnnTensorDescriptor_t zDesc, const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc,
    const cudnnActivationDescriptor_t activationDesc, size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    int pa = 0;
    FDNN_CHECK(check_cpu_handle(handle));
    FDNN_CHECK(bn_mode(mode, &pa));
    FDNN_CHECK(check_data_desc(xDesc, "xDesc"));
    FDNN_CHECK(check_like_x(xDesc, yDesc, "yDesc"));
    FDNN_CHECK(check_param_desc(xDesc, bnScaleBiasMeanVarDesc, pa, "bnScaleBiasMeanVarDesc"));
    FDNN_CHECK(fdnn_norm_check_ops((int)bnOps, activationDesc, "bnOps"));
    if (bnOps == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION) FDNN_CHECK(check_like_x(xDesc, zDesc, "zDesc"));
    NEED(sizeInBytes, "sizeInBytes");
    *sizeInBytes = 0;
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetBatchNormalizationBackwardExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const cudnnTensorDescriptor_t xDesc,
    const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t dyDesc, const cudnnTensorDescriptor_t dzDesc,
    const cudnnTensorDescriptor_t dxDesc, const cudnnTensorDescriptor_t dBnScaleBiasDesc, const cudnnActivationDescriptor_t activationDesc,
    size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    int pa = 0;
    FDNN_CHECK(check_cpu_handle(handle));
    FDNN_CHECK(bn_mode(mode, &pa));
    FDNN_CHECK(check_data_desc(xDesc, "xDesc"));
    FDNN_CHECK(check_like_x(xDesc, dyDesc, "dyDesc"));
    FDNN_CHECK(check_like_x(xDesc, dxDesc, "dxDesc"));
    FDNN_CHECK(check_param_desc(xDesc, dBnScaleBiasDesc, pa, "dBnScaleBiasDesc"));
    FDNN_CHECK(fdnn_norm_check_ops((int)bnOps, activationDesc, "bnOps"));
    if (bnOps != CUDNN_BATCHNORM_OPS_BN) FDNN_CHECK(check_like_x(xDesc, yDesc, "yDesc"));
    if (bnOps == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION) FDNN_CHECK(check_like_x(xDesc, dzDesc, "dzDesc"));
    NEED(sizeInBytes, "sizeInBytes");
    *sizeInBytes = 0;
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetBatchNormalizationTrainingExReserveSpaceSize(cudnnHandle_t handle, cudnnBatchNormMode_t mode,
                                                                                           cudnnBatchNormOps_t bnOps,
                                                                                           const cudnnActivationDescriptor_t activationDesc,
                                                                                           const cudnnTensorDescriptor_t xDesc,
                                                                                           size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    int pa = 0;
    FDNN_CHECK(check_cpu_handle(handle));
    FDNN_CHECK(bn_mode(mode, &pa));
    FDNN_CHECK(check_data_desc(xDesc, "xDesc"));
    FDNN_CHECK(fdnn_norm_check_ops((int)bnOps, activationDesc, "bnOps"));
    NEED(sizeInBytes, "sizeInBytes");
    *sizeInBytes = fdnn_norm_reserve_size((int)bnOps, fdnn_tensor_elems(xDesc));
    return CUDNN_STATUS_SUCCESS;
}
