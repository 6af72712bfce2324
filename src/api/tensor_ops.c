/* Whole-tensor utilities: cudnnAddTensor (broadcast add), cudnnSetTensor, cudnnScaleTensor,
 * cudnnTransformTensor (layout/type conversion with alpha/beta). On the CPU backend, FLOAT tensors
 * in the layouts src/cpu/tensor_fast.c serves are computed there in place; every other case goes
 * through src/cpu/ops_common (gather to packed doubles, blend back). */
#include <stdlib.h>
#include "../core/fdnn.h"
#include "../cpu/ops_common.h"
#include "../cpu/ops_fast.h"

#ifdef FDNN_HAVE_CUDA
#if __has_include("../cuda/cuda_ops.h")
#include "../cuda/cuda_ops.h"
#else
cudnnStatus_t fdnn_cuda_add_tensor(cudnnHandle_t h, double alpha, const struct cudnnTensorStruct *a, const void *A, double beta,
                                   const struct cudnnTensorStruct *c, void *C);
#endif
#endif

/* Types cudnnAddTensor accepts (A and C must share one). */
static int add_type_ok(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16 || t == CUDNN_DATA_INT8;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnAddTensor(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t aDesc, const void *A,
                                                     const void *beta, const cudnnTensorDescriptor_t cDesc, void *C)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_check_tensor(aDesc, "aDesc"));
    FDNN_CHECK(fdnn_check_tensor(cDesc, "cDesc"));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(A, "A");
    FDNN_CHECK_PTR(C, "C");
    FDNN_CHECK(fdnn_ops_same_type(aDesc, "aDesc", cDesc, "cDesc"));
    FDNN_CHECK(fdnn_ops_broadcastable(aDesc, "aDesc", cDesc, "cDesc"));
    if (cDesc->nb_dims > 5)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cDesc has %d dims; cudnnAddTensor supports at most 5", cDesc->nb_dims);
    if (!add_type_ok(cDesc->dtype))
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "data type %s is not supported (FLOAT, DOUBLE, HALF, BFLOAT16, INT8)", fdnn_dtype_name(cDesc->dtype));
    double a = fdnn_scalar(alpha, cDesc->dtype), b = fdnn_scalar(beta, cDesc->dtype);
    FDNN_API_LOG(handle, "alpha=%g beta=%g", a, b);
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        if (cDesc->dtype == CUDNN_DATA_INT8) return fdnn_cuda_add_broadcast(handle, a, aDesc, A, b, cDesc, C);
        return fdnn_cuda_add_tensor(handle, a, aDesc, A, b, cDesc, C);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnAddTensor: this build has no CUDA backend");
#endif
    }
    if (fdnn_cpu_op_f32(FDNN_OP_COPY, 0, a, aDesc, A, 0.0, NULL, NULL, b, cDesc, C)) return CUDNN_STATUS_SUCCESS;
    double *pa = fdnn_ops_gather(aDesc, A);
    double *res = malloc(sizeof(double) * (size_t)fdnn_tensor_elems(cDesc));
    if (!pa || !res) {
        free(pa);
        free(res);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
    fdnn_ops_broadcast(aDesc, pa, cDesc, res);
    fdnn_ops_blend(cDesc, C, res, a, b);
    free(pa);
    free(res);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void *y, const void *valuePtr)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_check_tensor(yDesc, "yDesc"));
    FDNN_CHECK_PTR(y, "y");
    FDNN_CHECK_PTR(valuePtr, "valuePtr");
    /* The value has the tensor's own data type (one scalar lane for vector types), except for
     * HALF and BFLOAT16, where it is a float like the scaling parameters. NVIDIA documents "the
     * type of the tensor", but its library reads a float there: on the H200 comparison
     * (tests/compat, docs/compat.md) a half passed to NVIDIA's cuDNN 9.19 set the tensor to ~0,
     * so programs that work with NVIDIA's library pass a float. */
    double v = (yDesc->dtype == CUDNN_DATA_HALF || yDesc->dtype == CUDNN_DATA_BFLOAT16) ? (double)*(const float *)valuePtr
                                                                                          : fdnn_load(valuePtr, yDesc->dtype, 0);
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_set_tensor(handle, yDesc, y, v);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnSetTensor: this build has no CUDA backend");
#endif
    }
    if (fdnn_cpu_set_f32(yDesc, y, v)) return CUDNN_STATUS_SUCCESS;
    int64_t n = fdnn_tensor_elems(yDesc);
    const int nd = yDesc->nb_dims;
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) {
        int idx[CUDNN_DIM_MAX];
        fdnn_ops_unravel(yDesc->dim, nd, i, idx);
        fdnn_store(y, yDesc->dtype, fdnn_ops_offset(yDesc, idx), v);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnScaleTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void *y, const void *alpha)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_check_tensor(yDesc, "yDesc"));
    FDNN_CHECK_PTR(y, "y");
    FDNN_CHECK_PTR(alpha, "alpha");
    double a = fdnn_scalar(alpha, yDesc->dtype);
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_scale_tensor(handle, yDesc, y, a);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnScaleTensor: this build has no CUDA backend");
#endif
    }
    if (fdnn_cpu_op_f32(FDNN_OP_COPY, 0, a, yDesc, y, 0.0, NULL, NULL, 0.0, yDesc, y)) return CUDNN_STATUS_SUCCESS;
    double *py = fdnn_ops_gather(yDesc, y);
    if (!py) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    fdnn_ops_blend(yDesc, y, py, a, 0.0);
    free(py);
    return CUDNN_STATUS_SUCCESS;
}

static int is_vect_int8(cudnnDataType_t t) { return t == CUDNN_DATA_INT8x4 || t == CUDNN_DATA_INT8x32; }

/* Data-type pairs cudnnTransformTensor converts between: equal types, and the NCHW_VECT_C
 * int8 types to/from their scalar int8 type or FLOAT (the quantisation use case). */
static int transform_types_ok(cudnnDataType_t x, cudnnDataType_t y)
{
    if (x == y) return 1;
    if (is_vect_int8(x) && (y == CUDNN_DATA_INT8 || y == CUDNN_DATA_FLOAT || is_vect_int8(y))) return 1;
    if (is_vect_int8(y) && (x == CUDNN_DATA_INT8 || x == CUDNN_DATA_FLOAT)) return 1;
    if (x == CUDNN_DATA_UINT8x4 && (y == CUDNN_DATA_UINT8 || y == CUDNN_DATA_FLOAT)) return 1;
    if (y == CUDNN_DATA_UINT8x4 && (x == CUDNN_DATA_UINT8 || x == CUDNN_DATA_FLOAT)) return 1;
    return 0;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnTransformTensor(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc,
                                                           const void *x, const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    FDNN_CHECK(fdnn_check_tensor(yDesc, "yDesc"));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(x, "x");
    FDNN_CHECK_PTR(y, "y");
    FDNN_CHECK(fdnn_ops_same_dims(xDesc, "xDesc", yDesc, "yDesc"));
    if (!transform_types_ok(xDesc->dtype, yDesc->dtype))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc type %s and yDesc type %s differ (only NCHW_VECT_C int8 <-> int8/FLOAT may differ)",
                         fdnn_dtype_name(xDesc->dtype), fdnn_dtype_name(yDesc->dtype));
    double a = fdnn_scalar(alpha, yDesc->dtype), b = fdnn_scalar(beta, yDesc->dtype);
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_transform_tensor(handle, a, xDesc, x, b, yDesc, y);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnTransformTensor: this build has no CUDA backend");
#endif
    }
    if (fdnn_cpu_transform_f32(a, xDesc, x, b, yDesc, y)) return CUDNN_STATUS_SUCCESS;
    double *px = fdnn_ops_gather(xDesc, x);
    if (!px) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    fdnn_ops_blend(yDesc, y, px, a, b);
    free(px);
    return CUDNN_STATUS_SUCCESS;
}
