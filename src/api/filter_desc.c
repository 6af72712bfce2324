/* Filter descriptors: K, C, (D,) R, S, packed; NCHW format = KCRS, NHWC = KRSC,
 * NCHW_VECT_C = KCRS with C in vectors of 4 or 32 int8. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/fdnn.h"

cudnnStatus_t fdnn_check_filter(const struct cudnnFilterStruct *f, const char *argname)
{
    if (f == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", argname);
    if (f->magic != FDNN_MAGIC_FILTER) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live filter descriptor", argname);
    if (!f->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was created but never set", argname);
    return CUDNN_STATUS_SUCCESS;
}

int64_t fdnn_filter_elems(const struct cudnnFilterStruct *f)
{
    int64_t e = 1;
    for (int i = 0; i < f->nb_dims; i++) e *= f->dim[i];
    return e;
}

const char *fdnn_filter_str(const struct cudnnFilterStruct *f, char *buf, size_t n)
{
    if (!f || f->magic != FDNN_MAGIC_FILTER || !f->is_set) {
        snprintf(buf, n, "%s", f ? "<unset filter>" : "NULL");
        return buf;
    }
    size_t o = (size_t)snprintf(buf, n, "%s %s dims=[", fdnn_dtype_name(f->dtype),
                                f->format == CUDNN_TENSOR_NHWC ? "NHWC" : f->format == CUDNN_TENSOR_NCHW ? "NCHW" : "NCHW_VECT_C");
    for (int i = 0; i < f->nb_dims && o < n; i++) o += (size_t)snprintf(buf + o, n - o, "%s%d", i ? "," : "", f->dim[i]);
    if (o < n) snprintf(buf + o, n - o, "]");
    return buf;
}

static cudnnStatus_t check_desc_only(const struct cudnnFilterStruct *f)
{
    if (f == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "filterDesc is NULL");
    if (f->magic != FDNN_MAGIC_FILTER) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "filterDesc is not a live filter descriptor");
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t filter_set(struct cudnnFilterStruct *f, cudnnDataType_t dt, cudnnTensorFormat_t fmt, int nb, const int *dim)
{
    if (fdnn_dtype_size(dt) == 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType=%d is not a valid cudnnDataType_t", (int)dt);
    if (fmt != CUDNN_TENSOR_NCHW && fmt != CUDNN_TENSOR_NHWC && fmt != CUDNN_TENSOR_NCHW_VECT_C)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "format=%d is not a cudnnTensorFormat_t", (int)fmt);
    if (nb < 3 || nb > CUDNN_DIM_MAX) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "nbDims=%d is outside [3, %d]", nb, CUDNN_DIM_MAX);
    int vect = fdnn_dtype_vect(dt);
    if ((vect > 1) != (fmt == CUDNN_TENSOR_NCHW_VECT_C))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "CUDNN_TENSOR_NCHW_VECT_C goes with INT8x4/UINT8x4/INT8x32 and only with them (got %s)",
                         fdnn_dtype_name(dt));
    int64_t e = 1;
    for (int i = 0; i < nb; i++) {
        if (dim[i] <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "filter dimension %d is %d, must be positive", i, dim[i]);
        e *= dim[i];
        if (e > INT_MAX) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "the filter has more than %d elements (dims overflow)", INT_MAX);
    }
    if (vect > 1 && dim[1] % vect != 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "C=%d must be a multiple of %d for %s", dim[1], vect, fdnn_dtype_name(dt));
    f->dtype = dt;
    f->format = fmt;
    f->nb_dims = nb;
    memcpy(f->dim, dim, sizeof(int) * (size_t)nb);
    f->vect = vect;
    f->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *filterDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(filterDesc, "filterDesc");
    struct cudnnFilterStruct *f = calloc(1, sizeof *f);
    if (!f) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    f->magic = FDNN_MAGIC_FILTER;
    *filterDesc = f;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc)
{
    FDNN_API_ENTER();
    if (filterDesc == NULL) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(check_desc_only(filterDesc));
    filterDesc->magic = FDNN_MAGIC_DEAD;
    free(filterDesc);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t filterDesc, cudnnDataType_t dataType,
                                                                 cudnnTensorFormat_t format, int k, int c, int h, int w)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(filterDesc));
    int dim[4] = {k, c, h, w};
    return filter_set(filterDesc, dataType, format, 4, dim);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetFilter4dDescriptor(const cudnnFilterDescriptor_t filterDesc, cudnnDataType_t *dataType,
                                                                 cudnnTensorFormat_t *format, int *k, int *c, int *h, int *w)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_filter(filterDesc, "filterDesc"));
    if (filterDesc->nb_dims != 4)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "filterDesc has %d dims, cudnnGetFilter4dDescriptor needs 4", filterDesc->nb_dims);
    if (!dataType || !format || !k || !c || !h || !w) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    *dataType = filterDesc->dtype;
    *format = filterDesc->format;
    *k = filterDesc->dim[0]; *c = filterDesc->dim[1]; *h = filterDesc->dim[2]; *w = filterDesc->dim[3];
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t filterDesc, cudnnDataType_t dataType,
                                                                 cudnnTensorFormat_t format, int nbDims, const int filterDimA[])
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(filterDesc));
    FDNN_CHECK_PTR(filterDimA, "filterDimA");
    return filter_set(filterDesc, dataType, format, nbDims, filterDimA);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t filterDesc, int nbDimsRequested,
                                                                 cudnnDataType_t *dataType, cudnnTensorFormat_t *format, int *nbDims,
                                                                 int filterDimA[])
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_filter(filterDesc, "filterDesc"));
    if (nbDimsRequested < 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDimsRequested=%d is negative", nbDimsRequested);
    if (!dataType || !format || !nbDims) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    int m = nbDimsRequested < filterDesc->nb_dims ? nbDimsRequested : filterDesc->nb_dims;
    if (m > 0 && !filterDimA) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "filterDimA is NULL");
    *dataType = filterDesc->dtype;
    *format = filterDesc->format;
    *nbDims = filterDesc->nb_dims;
    for (int i = 0; i < m; i++) filterDimA[i] = filterDesc->dim[i];
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetFilterSizeInBytes(const cudnnFilterDescriptor_t filterDesc, size_t *size)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_filter(filterDesc, "filterDesc"));
    FDNN_CHECK_PTR(size, "size");
    *size = (size_t)(fdnn_filter_elems(filterDesc) / filterDesc->vect) * fdnn_dtype_size(filterDesc->dtype);
    return CUDNN_STATUS_SUCCESS;
}
