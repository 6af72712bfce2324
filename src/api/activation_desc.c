/* Activation descriptors (mode, NaN option, coef, swish beta). The activation kernels live
 * with the other pointwise ops; the convolution epilogue uses the same descriptor. */
#include <math.h>
#include <stdlib.h>
#include "../core/fdnn.h"

cudnnStatus_t fdnn_check_activation(const struct cudnnActivationStruct *a, const char *argname)
{
    if (a == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", argname);
    if (a->magic != FDNN_MAGIC_ACT) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live activation descriptor", argname);
    if (!a->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was created but never set", argname);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_desc_only(const struct cudnnActivationStruct *a)
{
    if (a == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "activationDesc is NULL");
    if (a->magic != FDNN_MAGIC_ACT) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "activationDesc is not a live activation descriptor");
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t *activationDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(activationDesc, "activationDesc");
    struct cudnnActivationStruct *a = calloc(1, sizeof *a);
    if (!a) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    a->magic = FDNN_MAGIC_ACT;
    a->swish_beta = 1.0;
    *activationDesc = a;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t activationDesc)
{
    FDNN_API_ENTER();
    if (activationDesc == NULL) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(check_desc_only(activationDesc));
    activationDesc->magic = FDNN_MAGIC_DEAD;
    free(activationDesc);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetActivationDescriptor(cudnnActivationDescriptor_t activationDesc, cudnnActivationMode_t mode,
                                                                   cudnnNanPropagation_t reluNanOpt, double coef)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(activationDesc));
    if ((int)mode < 0 || mode > CUDNN_ACTIVATION_SWISH)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mode=%d is not a cudnnActivationMode_t", (int)mode);
    if (reluNanOpt != CUDNN_NOT_PROPAGATE_NAN && reluNanOpt != CUDNN_PROPAGATE_NAN)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reluNanOpt=%d is not a cudnnNanPropagation_t", (int)reluNanOpt);
    if (isnan(coef)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "coef is NaN");
    activationDesc->mode = mode;
    activationDesc->nan_opt = reluNanOpt;
    activationDesc->coef = coef;
    activationDesc->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetActivationDescriptor(const cudnnActivationDescriptor_t activationDesc, cudnnActivationMode_t *mode,
                                                                   cudnnNanPropagation_t *reluNanOpt, double *coef)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_activation(activationDesc, "activationDesc"));
    if (!mode || !reluNanOpt || !coef) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    *mode = activationDesc->mode;
    *reluNanOpt = activationDesc->nan_opt;
    *coef = activationDesc->coef;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetActivationDescriptorSwishBeta(cudnnActivationDescriptor_t activationDesc, double swish_beta)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(activationDesc));
    if (isnan(swish_beta)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "swish_beta is NaN");
    activationDesc->swish_beta = swish_beta;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetActivationDescriptorSwishBeta(cudnnActivationDescriptor_t activationDesc, double *swish_beta)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(activationDesc));
    FDNN_CHECK_PTR(swish_beta, "swish_beta");
    *swish_beta = activationDesc->swish_beta;
    return CUDNN_STATUS_SUCCESS;
}
