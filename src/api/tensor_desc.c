/* Tensor descriptors: create/set/get/destroy and size queries. Dims are N, C, (D,) H, W;
 * layout lives only in the strides (in elements; in vectors for NCHW_VECT_C types). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/fdnn.h"

static int dtype_valid(cudnnDataType_t t) { return (int)t >= 0 && t <= CUDNN_DATA_FAST_FLOAT_FOR_FP8 && fdnn_dtype_size(t) > 0; }

cudnnStatus_t fdnn_check_tensor(const struct cudnnTensorStruct *t, const char *argname)
{
    if (t == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", argname);
    if (t->magic != FDNN_MAGIC_TENSOR)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live tensor descriptor", argname);
    if (!t->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was created but never set", argname);
    return CUDNN_STATUS_SUCCESS;
}

int64_t fdnn_tensor_elems(const struct cudnnTensorStruct *t)
{
    int64_t e = 1;
    for (int i = 0; i < t->nb_dims; i++) e *= t->dim[i];
    return e;
}

int64_t fdnn_tensor_span(const struct cudnnTensorStruct *t)
{
    int64_t s = 1;
    for (int i = 0; i < t->nb_dims; i++) {
        int64_t d = t->dim[i];
        if (i == 1 && t->vect > 1) d = (d + t->vect - 1) / t->vect;
        s += (d - 1) * (int64_t)t->stride[i];
    }
    return s;
}

const char *fdnn_tensor_str(const struct cudnnTensorStruct *t, char *buf, size_t n)
{
    if (!t || t->magic != FDNN_MAGIC_TENSOR || !t->is_set) {
        snprintf(buf, n, "%s", t ? "<unset tensor>" : "NULL");
        return buf;
    }
    size_t o = (size_t)snprintf(buf, n, "%s dims=[", fdnn_dtype_name(t->dtype));
    for (int i = 0; i < t->nb_dims && o < n; i++) o += (size_t)snprintf(buf + o, n - o, "%s%d", i ? "," : "", t->dim[i]);
    if (o < n) o += (size_t)snprintf(buf + o, n - o, "] strides=[");
    for (int i = 0; i < t->nb_dims && o < n; i++) o += (size_t)snprintf(buf + o, n - o, "%s%d", i ? "," : "", t->stride[i]);
    if (o < n) snprintf(buf + o, n - o, "]");
    return buf;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *tensorDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(tensorDesc, "tensorDesc");
    struct cudnnTensorStruct *t = calloc(1, sizeof *t);
    if (!t) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    t->magic = FDNN_MAGIC_TENSOR;
    *tensorDesc = t;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc)
{
    FDNN_API_ENTER();
    if (tensorDesc == NULL) return CUDNN_STATUS_SUCCESS;
    if (tensorDesc->magic != FDNN_MAGIC_TENSOR)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "tensorDesc is not a live tensor descriptor");
    tensorDesc->magic = FDNN_MAGIC_DEAD;
    free(tensorDesc);
    return CUDNN_STATUS_SUCCESS;
}

/* Validate and store dims/strides; nothing is written unless everything is valid. */
static cudnnStatus_t tensor_set(struct cudnnTensorStruct *t, cudnnDataType_t dt, cudnnTensorFormat_t fmt, int nb,
                                const int *dim, const int *stride)
{
    if (!dtype_valid(dt)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType=%d is not a valid cudnnDataType_t", (int)dt);
    if (nb < 3 || nb > CUDNN_DIM_MAX)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "nbDims=%d is outside [3, %d]", nb, CUDNN_DIM_MAX);
    int vect = fdnn_dtype_vect(dt);
    if (vect > 1 && fmt != CUDNN_TENSOR_NCHW_VECT_C)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType %s requires format CUDNN_TENSOR_NCHW_VECT_C", fdnn_dtype_name(dt));
    if (fmt == CUDNN_TENSOR_NCHW_VECT_C && vect == 1)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "CUDNN_TENSOR_NCHW_VECT_C requires an INT8x4, UINT8x4 or INT8x32 dataType, got %s", fdnn_dtype_name(dt));
    int64_t elems = 1;
    for (int i = 0; i < nb; i++) {
        if (dim[i] <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dimA[%d]=%d must be positive", i, dim[i]);
        if (stride && stride[i] <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "strideA[%d]=%d must be positive", i, stride[i]);
        elems *= dim[i];
        if (elems > INT_MAX)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "the tensor has more than %d elements (dims overflow)", INT_MAX);
    }
    if (vect > 1 && dim[1] % vect != 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "C=%d must be a multiple of %d for %s", dim[1], vect, fdnn_dtype_name(dt));
    int st[CUDNN_DIM_MAX];
    if (stride) {
        memcpy(st, stride, sizeof(int) * (size_t)nb);
        int64_t span = 1;
        for (int i = 0; i < nb; i++) span += (int64_t)(dim[i] - 1) * stride[i];
        if (span > INT_MAX) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "strides address more than %d elements (overflow)", INT_MAX);
    } else {
        /* packed strides for the format; VECT_C counts in vectors along C */
        int64_t s = 1;
        int cdim = vect > 1 ? dim[1] / vect : dim[1];
        if (fmt == CUDNN_TENSOR_NHWC) {
            st[1] = 1;
            s = cdim;
            for (int i = nb - 1; i >= 2; i--) { st[i] = (int)s; s *= dim[i]; }
            st[0] = (int)s;
        } else {
            for (int i = nb - 1; i >= 0; i--) { st[i] = (int)s; s *= (i == 1 ? cdim : dim[i]); }
        }
    }
    t->dtype = dt;
    t->format = fmt;
    t->nb_dims = nb;
    memcpy(t->dim, dim, sizeof(int) * (size_t)nb);
    memcpy(t->stride, st, sizeof(int) * (size_t)nb);
    t->vect = vect;
    t->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_desc_only(const struct cudnnTensorStruct *t)
{
    if (t == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "tensorDesc is NULL");
    if (t->magic != FDNN_MAGIC_TENSOR) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "tensorDesc is not a live tensor descriptor");
    return CUDNN_STATUS_SUCCESS;
}

static int format_valid(cudnnTensorFormat_t f) { return f == CUDNN_TENSOR_NCHW || f == CUDNN_TENSOR_NHWC || f == CUDNN_TENSOR_NCHW_VECT_C; }

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensorDesc, cudnnTensorFormat_t format,
                                                                 cudnnDataType_t dataType, int n, int c, int h, int w)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(tensorDesc));
    if (!format_valid(format)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "format=%d is not a cudnnTensorFormat_t", (int)format);
    int dim[4] = {n, c, h, w};
    return tensor_set(tensorDesc, dataType, format, 4, dim, NULL);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t tensorDesc, cudnnDataType_t dataType, int n,
                                                                   int c, int h, int w, int nStride, int cStride, int hStride,
                                                                   int wStride)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(tensorDesc));
    if (fdnn_dtype_vect(dataType) > 1)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s needs CUDNN_TENSOR_NCHW_VECT_C, which only cudnnSetTensor4dDescriptor and cudnnSetTensorNdDescriptorEx accept", fdnn_dtype_name(dataType));
    int dim[4] = {n, c, h, w}, st[4] = {nStride, cStride, hStride, wStride};
    return tensor_set(tensorDesc, dataType, CUDNN_TENSOR_NCHW, 4, dim, st);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetTensor4dDescriptor(const cudnnTensorDescriptor_t tensorDesc, cudnnDataType_t *dataType,
                                                                 int *n, int *c, int *h, int *w, int *nStride, int *cStride,
                                                                 int *hStride, int *wStride)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_tensor(tensorDesc, "tensorDesc"));
    if (tensorDesc->nb_dims != 4)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "tensorDesc has %d dims, cudnnGetTensor4dDescriptor needs 4", tensorDesc->nb_dims);
    if (!dataType || !n || !c || !h || !w || !nStride || !cStride || !hStride || !wStride)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    const struct cudnnTensorStruct *t = tensorDesc;
    *dataType = t->dtype;
    *n = t->dim[0]; *c = t->dim[1]; *h = t->dim[2]; *w = t->dim[3];
    *nStride = t->stride[0]; *cStride = t->stride[1]; *hStride = t->stride[2]; *wStride = t->stride[3];
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t tensorDesc, cudnnDataType_t dataType, int nbDims,
                                                                 const int dimA[], const int strideA[])
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(tensorDesc));
    FDNN_CHECK_PTR(dimA, "dimA");
    FDNN_CHECK_PTR(strideA, "strideA");
    if (fdnn_dtype_vect(dataType) > 1)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s needs CUDNN_TENSOR_NCHW_VECT_C; use cudnnSetTensorNdDescriptorEx", fdnn_dtype_name(dataType));
    return tensor_set(tensorDesc, dataType, CUDNN_TENSOR_NCHW, nbDims, dimA, strideA);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetTensorNdDescriptorEx(cudnnTensorDescriptor_t tensorDesc, cudnnTensorFormat_t format,
                                                                   cudnnDataType_t dataType, int nbDims, const int dimA[])
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(tensorDesc));
    FDNN_CHECK_PTR(dimA, "dimA");
    if (!format_valid(format)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "format=%d is not a cudnnTensorFormat_t", (int)format);
    return tensor_set(tensorDesc, dataType, format, nbDims, dimA, NULL);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t tensorDesc, int nbDimsRequested,
                                                                 cudnnDataType_t *dataType, int *nbDims, int dimA[], int strideA[])
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_tensor(tensorDesc, "tensorDesc"));
    if (nbDimsRequested < 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDimsRequested=%d is negative", nbDimsRequested);
    if (!dataType || !nbDims) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType or nbDims is NULL");
    int m = nbDimsRequested < tensorDesc->nb_dims ? nbDimsRequested : tensorDesc->nb_dims;
    if (m > 0 && (!dimA || !strideA)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dimA or strideA is NULL");
    *dataType = tensorDesc->dtype;
    *nbDims = tensorDesc->nb_dims;
    for (int i = 0; i < m; i++) {
        dimA[i] = tensorDesc->dim[i];
        strideA[i] = tensorDesc->stride[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetTensorSizeInBytes(const cudnnTensorDescriptor_t tensorDesc, size_t *size)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_tensor(tensorDesc, "tensorDesc"));
    FDNN_CHECK_PTR(size, "size");
    *size = (size_t)fdnn_tensor_span(tensorDesc) * fdnn_dtype_size(tensorDesc->dtype);
    return CUDNN_STATUS_SUCCESS;
}
