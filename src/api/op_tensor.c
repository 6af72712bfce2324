/* cudnnOpTensor and its descriptor: C = op(alpha1*A, alpha2*B) + beta*C with B broadcast
 * by size-1 dims (A must match C). SQRT and NOT are unary (B ignored); NOT is 1 - a, which is
 * logical negation on {0, 1} data. MIN/MAX with NOT_PROPAGATE_NAN ignore a NaN operand.
 * On the CPU backend FLOAT tensors in the layouts src/cpu/tensor_fast.c serves are computed there,
 * in place; the rest through packed double copies (src/cpu/ops_common). */
#include <stdlib.h>
#include "../core/fdnn.h"
#include "../core/ops_desc.h"
#include "../cpu/ops_common.h"
#include "../cpu/ops_fast.h"

#ifdef FDNN_HAVE_CUDA
#include "../cuda/cuda_ops.h"
#endif

static cudnnStatus_t check_live(const struct cudnnOpTensorStruct *d)
{
    if (d == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "opTensorDesc is NULL");
    if (d->magic != FDNN_MAGIC_OPTENSOR) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "opTensorDesc is not a live op-tensor descriptor");
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateOpTensorDescriptor(cudnnOpTensorDescriptor_t *opTensorDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(opTensorDesc, "opTensorDesc");
    struct cudnnOpTensorStruct *d = calloc(1, sizeof *d);
    if (!d) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    d->magic = FDNN_MAGIC_OPTENSOR;
    *opTensorDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetOpTensorDescriptor(cudnnOpTensorDescriptor_t opTensorDesc, cudnnOpTensorOp_t opTensorOp,
                                                                 cudnnDataType_t opTensorCompType, cudnnNanPropagation_t opTensorNanOpt)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_live(opTensorDesc));
    if ((int)opTensorOp < 0 || opTensorOp > CUDNN_OP_TENSOR_NOT)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "opTensorOp=%d is not a cudnnOpTensorOp_t", (int)opTensorOp);
    if (opTensorCompType != CUDNN_DATA_FLOAT && opTensorCompType != CUDNN_DATA_DOUBLE && opTensorCompType != CUDNN_DATA_HALF &&
        opTensorCompType != CUDNN_DATA_BFLOAT16)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "opTensorCompType=%d must be FLOAT, DOUBLE, HALF or BFLOAT16", (int)opTensorCompType);
    if (opTensorNanOpt != CUDNN_NOT_PROPAGATE_NAN && opTensorNanOpt != CUDNN_PROPAGATE_NAN)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "opTensorNanOpt=%d is not a cudnnNanPropagation_t", (int)opTensorNanOpt);
    opTensorDesc->op = opTensorOp;
    opTensorDesc->comp_type = opTensorCompType;
    opTensorDesc->nan_opt = opTensorNanOpt;
    opTensorDesc->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetOpTensorDescriptor(const cudnnOpTensorDescriptor_t opTensorDesc, cudnnOpTensorOp_t *opTensorOp,
                                                                 cudnnDataType_t *opTensorCompType, cudnnNanPropagation_t *opTensorNanOpt)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_live(opTensorDesc));
    if (!opTensorDesc->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "opTensorDesc was created but never set");
    if (!opTensorOp || !opTensorCompType || !opTensorNanOpt) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    *opTensorOp = opTensorDesc->op;
    *opTensorCompType = opTensorDesc->comp_type;
    *opTensorNanOpt = opTensorDesc->nan_opt;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyOpTensorDescriptor(cudnnOpTensorDescriptor_t opTensorDesc)
{
    FDNN_API_ENTER();
    if (opTensorDesc == NULL) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(check_live(opTensorDesc));
    opTensorDesc->magic = FDNN_MAGIC_DEAD;
    free(opTensorDesc);
    return CUDNN_STATUS_SUCCESS;
}

/* The (A/B type, C type, compute type) combinations of cuDNN's cudnnOpTensor table. */
static int types_ok(cudnnDataType_t ab, cudnnDataType_t c, cudnnDataType_t comp)
{
    if (ab == CUDNN_DATA_DOUBLE || c == CUDNN_DATA_DOUBLE || comp == CUDNN_DATA_DOUBLE)
        return ab == CUDNN_DATA_DOUBLE && c == CUDNN_DATA_DOUBLE && comp == CUDNN_DATA_DOUBLE;
    if (comp != CUDNN_DATA_FLOAT) return 0;
    switch (ab) {
    case CUDNN_DATA_FLOAT:
        return c == CUDNN_DATA_FLOAT || c == CUDNN_DATA_HALF || c == CUDNN_DATA_BFLOAT16 || c == CUDNN_DATA_INT8;
    case CUDNN_DATA_HALF: return c == CUDNN_DATA_HALF || c == CUDNN_DATA_FLOAT;
    case CUDNN_DATA_BFLOAT16: return c == CUDNN_DATA_BFLOAT16 || c == CUDNN_DATA_FLOAT;
    case CUDNN_DATA_INT8: return c == CUDNN_DATA_INT8 || c == CUDNN_DATA_FLOAT;
    default: return 0;
    }
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnOpTensor(cudnnHandle_t handle, const cudnnOpTensorDescriptor_t opTensorDesc, const void *alpha1,
                                                    const cudnnTensorDescriptor_t aDesc, const void *A, const void *alpha2,
                                                    const cudnnTensorDescriptor_t bDesc, const void *B, const void *beta,
                                                    const cudnnTensorDescriptor_t cDesc, void *C)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_live(opTensorDesc));
    if (!opTensorDesc->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "opTensorDesc was created but never set");
    const cudnnOpTensorOp_t op = opTensorDesc->op;
    const int unary = op == CUDNN_OP_TENSOR_SQRT || op == CUDNN_OP_TENSOR_NOT;
    FDNN_CHECK(fdnn_check_tensor(aDesc, "aDesc"));
    FDNN_CHECK(fdnn_check_tensor(cDesc, "cDesc"));
    FDNN_CHECK_PTR(alpha1, "alpha1");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(A, "A");
    FDNN_CHECK_PTR(C, "C");
    FDNN_CHECK(fdnn_ops_same_dims(aDesc, "aDesc", cDesc, "cDesc"));
    if (!unary) {
        FDNN_CHECK(fdnn_check_tensor(bDesc, "bDesc"));
        FDNN_CHECK_PTR(alpha2, "alpha2");
        FDNN_CHECK_PTR(B, "B");
        FDNN_CHECK(fdnn_ops_same_type(aDesc, "aDesc", bDesc, "bDesc"));
        FDNN_CHECK(fdnn_ops_broadcastable(bDesc, "bDesc", cDesc, "cDesc"));
    }
    if (!types_ok(aDesc->dtype, cDesc->dtype, opTensorDesc->comp_type))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "types A=%s C=%s compute=%s are not a combination cudnnOpTensor accepts",
                         fdnn_dtype_name(aDesc->dtype), fdnn_dtype_name(cDesc->dtype), fdnn_dtype_name(opTensorDesc->comp_type));
    if (cDesc->nb_dims > 5)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cDesc has %d dims; cudnnOpTensor supports at most 5", cDesc->nb_dims);
    const double a1 = fdnn_scalar(alpha1, cDesc->dtype), b = fdnn_scalar(beta, cDesc->dtype);
    const double a2 = unary ? 0.0 : fdnn_scalar(alpha2, cDesc->dtype);
    const int prop = opTensorDesc->nan_opt == CUDNN_PROPAGATE_NAN;
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_op_tensor(handle, (int)op, prop, a1, aDesc, A, a2, unary ? NULL : bDesc, unary ? NULL : B, b, cDesc, C);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnOpTensor: this build has no CUDA backend");
#endif
    }
    if (opTensorDesc->comp_type == CUDNN_DATA_FLOAT &&
        fdnn_cpu_op_f32((int)op, prop, a1, aDesc, A, a2, unary ? NULL : bDesc, unary ? NULL : B, b, cDesc, C))
        return CUDNN_STATUS_SUCCESS;
    int64_t n = fdnn_tensor_elems(cDesc);
    double *pa = fdnn_ops_gather(aDesc, A);
    double *pb0 = unary ? NULL : fdnn_ops_gather(bDesc, B);
    double *pb = unary ? NULL : malloc(sizeof(double) * (size_t)n);
    if (!pa || (!unary && (!pb0 || !pb))) {
        free(pa);
        free(pb0);
        free(pb);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
    if (!unary) fdnn_ops_broadcast(bDesc, pb0, cDesc, pb);
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) pa[i] = fdnn_ops_tensor_op((int)op, prop, a1 * pa[i], unary ? 0.0 : a2 * pb[i]);
    fdnn_ops_blend(cDesc, C, pa, 1.0, b);
    free(pa);
    free(pb0);
    free(pb);
    return CUDNN_STATUS_SUCCESS;
}
