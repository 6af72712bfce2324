/* Convolution descriptors (2-D and N-D), group count, math and reorder types, and the
 * forward output-dimension queries. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/fdnn.h"

cudnnStatus_t fdnn_check_conv(const struct cudnnConvolutionStruct *c, const char *argname)
{
    if (c == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", argname);
    if (c->magic != FDNN_MAGIC_CONV) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live convolution descriptor", argname);
    if (!c->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was created but never set", argname);
    return CUDNN_STATUS_SUCCESS;
}

const char *fdnn_conv_str(const struct cudnnConvolutionStruct *c, char *buf, size_t n)
{
    if (!c || c->magic != FDNN_MAGIC_CONV || !c->is_set) {
        snprintf(buf, n, "%s", c ? "<unset convolution>" : "NULL");
        return buf;
    }
    size_t o = (size_t)snprintf(buf, n, "%s compute=%s groups=%d math=%d pad=[", c->mode == CUDNN_CONVOLUTION ? "CONVOLUTION" : "CROSS_CORRELATION",
                                fdnn_dtype_name(c->compute_type), c->group_count, (int)c->math_type);
    for (int i = 0; i < c->nb_spatial && o < n; i++) o += (size_t)snprintf(buf + o, n - o, "%s%d", i ? "," : "", c->pad[i]);
    if (o < n) o += (size_t)snprintf(buf + o, n - o, "] stride=[");
    for (int i = 0; i < c->nb_spatial && o < n; i++) o += (size_t)snprintf(buf + o, n - o, "%s%d", i ? "," : "", c->stride[i]);
    if (o < n) o += (size_t)snprintf(buf + o, n - o, "] dilation=[");
    for (int i = 0; i < c->nb_spatial && o < n; i++) o += (size_t)snprintf(buf + o, n - o, "%s%d", i ? "," : "", c->dilation[i]);
    if (o < n) snprintf(buf + o, n - o, "]");
    return buf;
}

static cudnnStatus_t check_desc_only(const struct cudnnConvolutionStruct *c)
{
    if (c == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "convDesc is NULL");
    if (c->magic != FDNN_MAGIC_CONV) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "convDesc is not a live convolution descriptor");
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *convDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(convDesc, "convDesc");
    struct cudnnConvolutionStruct *c = calloc(1, sizeof *c);
    if (!c) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    c->magic = FDNN_MAGIC_CONV;
    c->group_count = 1;
    c->math_type = CUDNN_DEFAULT_MATH;
    c->reorder_type = CUDNN_DEFAULT_REORDER;
    c->mode = CUDNN_CROSS_CORRELATION;
    c->compute_type = CUDNN_DATA_FLOAT;
    *convDesc = c;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc)
{
    FDNN_API_ENTER();
    if (convDesc == NULL) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(check_desc_only(convDesc));
    convDesc->magic = FDNN_MAGIC_DEAD;
    free(convDesc);
    return CUDNN_STATUS_SUCCESS;
}

static int compute_type_valid(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_INT32 ||
           t == CUDNN_DATA_BFLOAT16;
}

static cudnnStatus_t conv_set(struct cudnnConvolutionStruct *c, int n, const int *pad, const int *stride, const int *dil,
                              cudnnConvolutionMode_t mode, cudnnDataType_t ct)
{
    if (n < 1 || n > FDNN_MAX_SPATIAL)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "arrayLength=%d is outside [1, %d]", n, FDNN_MAX_SPATIAL);
    for (int i = 0; i < n; i++) {
        if (pad[i] < 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "padding %d of dimension %d is negative", pad[i], i);
        if (stride[i] <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "stride %d of dimension %d must be positive", stride[i], i);
        if (dil[i] <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dilation %d of dimension %d must be positive", dil[i], i);
    }
    if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mode=%d is not a cudnnConvolutionMode_t", (int)mode);
    if (!compute_type_valid(ct))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "computeType %s is not FLOAT, DOUBLE, HALF, BFLOAT16 or INT32", fdnn_dtype_name(ct));
    c->nb_spatial = n;
    for (int i = 0; i < n; i++) {
        c->pad[i] = pad[i];
        c->stride[i] = stride[i];
        c->dilation[i] = dil[i];
    }
    c->mode = mode;
    c->compute_type = ct;
    c->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t convDesc, int pad_h, int pad_w, int u,
                                                                      int v, int dilation_h, int dilation_w, cudnnConvolutionMode_t mode,
                                                                      cudnnDataType_t computeType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(convDesc));
    int pad[2] = {pad_h, pad_w}, st[2] = {u, v}, dil[2] = {dilation_h, dilation_w};
    return conv_set(convDesc, 2, pad, st, dil, mode, computeType);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolution2dDescriptor(const cudnnConvolutionDescriptor_t convDesc, int *pad_h, int *pad_w,
                                                                      int *u, int *v, int *dilation_h, int *dilation_w,
                                                                      cudnnConvolutionMode_t *mode, cudnnDataType_t *computeType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_conv(convDesc, "convDesc"));
    if (convDesc->nb_spatial != 2)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "convDesc has %d spatial dims, cudnnGetConvolution2dDescriptor needs 2", convDesc->nb_spatial);
    if (!pad_h || !pad_w || !u || !v || !dilation_h || !dilation_w || !mode || !computeType)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    *pad_h = convDesc->pad[0]; *pad_w = convDesc->pad[1];
    *u = convDesc->stride[0]; *v = convDesc->stride[1];
    *dilation_h = convDesc->dilation[0]; *dilation_w = convDesc->dilation[1];
    *mode = convDesc->mode;
    *computeType = convDesc->compute_type;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t convDesc, int arrayLength, const int padA[],
                                                                      const int filterStrideA[], const int dilationA[],
                                                                      cudnnConvolutionMode_t mode, cudnnDataType_t computeType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(convDesc));
    if (!padA || !filterStrideA || !dilationA) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "padA, filterStrideA or dilationA is NULL");
    return conv_set(convDesc, arrayLength, padA, filterStrideA, dilationA, mode, computeType);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionNdDescriptor(const cudnnConvolutionDescriptor_t convDesc, int arrayLengthRequested,
                                                                      int *arrayLength, int padA[], int strideA[], int dilationA[],
                                                                      cudnnConvolutionMode_t *mode, cudnnDataType_t *computeType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_conv(convDesc, "convDesc"));
    if (arrayLengthRequested < 0 || arrayLengthRequested > FDNN_MAX_SPATIAL)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "arrayLengthRequested=%d is outside [0, %d]", arrayLengthRequested, FDNN_MAX_SPATIAL);
    if (!arrayLength || !mode || !computeType) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    int m = arrayLengthRequested < convDesc->nb_spatial ? arrayLengthRequested : convDesc->nb_spatial;
    if (m > 0 && (!padA || !strideA || !dilationA)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "padA, strideA or dilationA is NULL");
    *arrayLength = convDesc->nb_spatial;
    for (int i = 0; i < m; i++) {
        padA[i] = convDesc->pad[i];
        strideA[i] = convDesc->stride[i];
        dilationA[i] = convDesc->dilation[i];
    }
    *mode = convDesc->mode;
    *computeType = convDesc->compute_type;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int groupCount)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(convDesc));
    if (groupCount < 1) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "groupCount=%d must be at least 1", groupCount);
    convDesc->group_count = groupCount;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int *groupCount)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(convDesc));
    FDNN_CHECK_PTR(groupCount, "groupCount");
    *groupCount = convDesc->group_count;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc, cudnnMathType_t mathType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(convDesc));
    if ((int)mathType < 0 || mathType > CUDNN_FMA_MATH)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mathType=%d is not a cudnnMathType_t", (int)mathType);
    convDesc->math_type = mathType;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc, cudnnMathType_t *mathType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(convDesc));
    FDNN_CHECK_PTR(mathType, "mathType");
    *mathType = convDesc->math_type;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionReorderType(cudnnConvolutionDescriptor_t convDesc, cudnnReorderType_t reorderType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(convDesc));
    if (reorderType != CUDNN_DEFAULT_REORDER && reorderType != CUDNN_NO_REORDER)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reorderType=%d is not a cudnnReorderType_t", (int)reorderType);
    convDesc->reorder_type = reorderType;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionReorderType(cudnnConvolutionDescriptor_t convDesc, cudnnReorderType_t *reorderType)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_only(convDesc));
    FDNN_CHECK_PTR(reorderType, "reorderType");
    *reorderType = convDesc->reorder_type;
    return CUDNN_STATUS_SUCCESS;
}

/* Shared by the 2-D and N-D output-dimension queries and by the convolution API. */
cudnnStatus_t fdnn_conv_output_dims(const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *x,
                                    const struct cudnnFilterStruct *w, int nb, int *out)
{
    FDNN_CHECK(fdnn_check_conv(c, "convDesc"));
    FDNN_CHECK(fdnn_check_tensor(x, "inputTensorDesc"));
    FDNN_CHECK(fdnn_check_filter(w, "filterDesc"));
    if (x->nb_dims != w->nb_dims)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "input has %d dims but the filter has %d", x->nb_dims, w->nb_dims);
    if (x->nb_dims - 2 != c->nb_spatial)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "input has %d spatial dims but convDesc describes %d", x->nb_dims - 2, c->nb_spatial);
    if (nb != x->nb_dims)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDims=%d does not match the input's %d dims", nb, x->nb_dims);
    if (x->dim[1] != w->dim[1] * c->group_count)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "input C=%d must equal filter C=%d times groupCount=%d", x->dim[1], w->dim[1],
                         c->group_count);
    if (w->dim[0] % c->group_count != 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "filter K=%d is not divisible by groupCount=%d", w->dim[0], c->group_count);
    int tmp[CUDNN_DIM_MAX];
    tmp[0] = x->dim[0];
    tmp[1] = w->dim[0];
    for (int i = 0; i < c->nb_spatial; i++) {
        int64_t eff = (int64_t)(w->dim[i + 2] - 1) * c->dilation[i] + 1;
        int64_t span = (int64_t)x->dim[i + 2] + 2 * (int64_t)c->pad[i] - eff;
        if (span < 0)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "spatial dim %d: dilated filter extent %lld exceeds padded input %lld", i,
                             (long long)eff, (long long)x->dim[i + 2] + 2 * (long long)c->pad[i]);
        tmp[i + 2] = (int)(span / c->stride[i] + 1);
    }
    memcpy(out, tmp, sizeof(int) * (size_t)nb);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                                            const cudnnTensorDescriptor_t inputTensorDesc,
                                                                            const cudnnFilterDescriptor_t filterDesc, int *n, int *c,
                                                                            int *h, int *w)
{
    FDNN_API_ENTER();
    if (!n || !c || !h || !w) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    int out[4];
    FDNN_CHECK(fdnn_conv_output_dims(convDesc, inputTensorDesc, filterDesc, 4, out));
    *n = out[0]; *c = out[1]; *h = out[2]; *w = out[3];
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionNdForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                                            const cudnnTensorDescriptor_t inputTensorDesc,
                                                                            const cudnnFilterDescriptor_t filterDesc, int nbDims,
                                                                            int tensorOuputDimA[])
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(tensorOuputDimA, "tensorOuputDimA");
    return fdnn_conv_output_dims(convDesc, inputTensorDesc, filterDesc, nbDims, tensorOuputDimA);
}
