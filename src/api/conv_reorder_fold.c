/* cudnnReorderFilterAndBias and cudnnGetFoldedConvBackwardDataDescriptors (docs/conv.md,
 * "Reordered INT8x32 filters" and "Folded backward data").
 *
 * Reorder: FreeDNN's INT8 kernels (CPU and CUDA) read the plain NCHW_VECT_C filter, so
 * FreeDNN's "reordered" INT8x32 layout is the identity: the reordered filter (and bias) are
 * byte-for-byte copies. That is legal because the reordered layout is opaque to the caller and
 * is only ever consumed by our own convolutions, which therefore read a filter the same way
 * whether the convolution descriptor's reorder type is CUDNN_DEFAULT_REORDER or
 * CUDNN_NO_REORDER: a reordered filter with DEFAULT gives the same result as the original
 * filter with NO_REORDER.
 *
 * Fold: a backward-data problem with stride s > 1 in a spatial dim becomes a stride-1 problem
 * by splitting dx into its s phases (the fold of cudnnTransformTensorEx, see transform.c):
 * with the padded dx index i + pad = q*s + r, only filter taps t = m*s + r reach phase r, and
 * dx_r[q] = sum dy[q - m] * w[m*s + r], a stride-1 backward data with filter ceil(T/s) taps
 * whose input channels are the (phase, channel) pairs r*C + c (F = product of the strides).
 * Per spatial dim with grad (dx) extent H, filter T, diff (dy) extent O, pad p, stride s:
 *   s == 1: fold 1, folded grad H + 2p, filter T (dilation kept), diff O;
 *   s > 1:  fold s, folded grad Hf = ceil((H+2p)/s), filter Tf = ceil(T/s), diff padded at the
 *           end to Hf - Tf + 1 (>= O), dilation must be 1;
 * the folded convolution has padding 0 and stride 1 and keeps mode, compute type, groups and
 * math type. The transforms: filterFold pads the filter taps to Tf*s and folds by s;
 * diffPad pads dy at the end; gradFold pads dx by p before and Hf*s - H - p after and folds
 * (apply it to dx when beta != 0); gradUnfold is its inverse, giving back the H-extent dx.
 * A true convolution (CUDNN_CONVOLUTION) with a stride > 1 would need the phases in reverse
 * order in the filter, which no fold transform expresses: NOT_SUPPORTED. So are groups > 1
 * with a stride > 1: the phase-major channel order splits every group across the tensor. */
#include <string.h>
#include "../core/fdnn.h"
#include "../core/ops_desc.h"
#include "../core/backend_util.h"
#include "../dispatch/conv.h"

/* api: cpu cuda | identity layout: FreeDNN's kernels read the plain NCHW_VECT_C INT8x32 filter */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnReorderFilterAndBias(cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc,
                                                                cudnnReorderType_t reorderType, const void *filterData, void *reorderedFilterData,
                                                                int reorderBias, const void *biasData, void *reorderedBiasData)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_check_filter(filterDesc, "filterDesc"));
    if (fdnn_log_on(CUDNN_SEV_INFO)) {
        char b[256];
        FDNN_API_LOG(handle, "filter=%s reorderType=%d reorderBias=%d", fdnn_filter_str(filterDesc, b, sizeof b), (int)reorderType, reorderBias);
    }
    if (reorderType != CUDNN_DEFAULT_REORDER && reorderType != CUDNN_NO_REORDER)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reorderType=%d is not a cudnnReorderType_t", (int)reorderType);
    if (filterDesc->dtype != CUDNN_DATA_INT8x32 || filterDesc->format != CUDNN_TENSOR_NCHW_VECT_C)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "filterDesc is %s; only INT8x32 filters in CUDNN_TENSOR_NCHW_VECT_C are reordered",
                         fdnn_dtype_name(filterDesc->dtype));
    if (filterDesc->nb_dims != 4)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "filterDesc has %d dims; only 2-D (4-D K,C,R,S) filters are reordered", filterDesc->nb_dims);
    FDNN_CHECK_PTR(filterData, "filterData");
    FDNN_CHECK_PTR(reorderedFilterData, "reorderedFilterData");
    if (reorderBias) {
        FDNN_CHECK_PTR(biasData, "biasData (reorderBias is nonzero)");
        FDNN_CHECK_PTR(reorderedBiasData, "reorderedBiasData (reorderBias is nonzero)");
    }
    /* identity layout (see the file comment); same pointer: nothing to move */
    size_t fbytes = (size_t)(fdnn_filter_elems(filterDesc) / filterDesc->vect) * fdnn_dtype_size(filterDesc->dtype);
    if (reorderedFilterData != filterData) FDNN_CHECK(fdnn_mem_copy(handle, reorderedFilterData, filterData, fbytes));
    if (reorderBias && reorderedBiasData != biasData)
        FDNN_CHECK(fdnn_mem_copy(handle, reorderedBiasData, biasData, (size_t)filterDesc->dim[0] * sizeof(float)));
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t live_transform(const struct cudnnTensorTransformStruct *d, const char *name)
{
    if (d == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", name);
    if (d->magic != FDNN_MAGIC_TRANSFORM) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live tensor-transform descriptor", name);
    return CUDNN_STATUS_SUCCESS;
}

static void set_transform(struct cudnnTensorTransformStruct *t, int nb, cudnnTensorFormat_t fmt, const int *pb, const int *pa, const int *fold,
                          cudnnFoldingDirection_t dir)
{
    uint32_t magic = t->magic;
    memset(t, 0, sizeof *t);
    t->magic = magic;
    t->is_set = 1;
    t->nb_dims = nb;
    t->dest_format = fmt;
    t->direction = dir;
    for (int i = 0; i < CUDNN_DIM_MAX; i++) {
        t->pad_before[i] = i < nb ? pb[i] : 0;
        t->pad_after[i] = i < nb ? pa[i] : 0;
        t->fold[i] = (uint32_t)(i < nb && i >= 2 ? fold[i] : 1);
    }
}

/* api: any | strided backward data folded into stride 1 (cross-correlation, or any mode when every stride is 1) */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetFoldedConvBackwardDataDescriptors(
    const cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc, const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t gradDesc, const cudnnTensorFormat_t transformFormat,
    cudnnFilterDescriptor_t foldedFilterDesc, cudnnTensorDescriptor_t paddedDiffDesc, cudnnConvolutionDescriptor_t foldedConvDesc,
    cudnnTensorDescriptor_t foldedGradDesc, cudnnTensorTransformDescriptor_t filterFoldTransDesc, cudnnTensorTransformDescriptor_t diffPadTransDesc,
    cudnnTensorTransformDescriptor_t gradFoldTransDesc, cudnnTensorTransformDescriptor_t gradUnfoldTransDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    fdnn_conv_problem p;
    FDNN_CHECK(fdnn_conv_build_problem(FDNN_CONV_BWD_DATA, gradDesc, filterDesc, convDesc, diffDesc, &p));
    if (fdnn_log_on(CUDNN_SEV_INFO)) {
        char b1[256], b2[256], b3[256], b4[256];
        FDNN_API_LOG(handle, "w=%s dy=%s conv=%s dx=%s transformFormat=%d", fdnn_filter_str(filterDesc, b1, sizeof b1),
                     fdnn_tensor_str(diffDesc, b2, sizeof b2), fdnn_conv_str(convDesc, b3, sizeof b3), fdnn_tensor_str(gradDesc, b4, sizeof b4),
                     (int)transformFormat);
    }
    if (transformFormat != CUDNN_TENSOR_NCHW && transformFormat != CUDNN_TENSOR_NHWC) {
        if (transformFormat == CUDNN_TENSOR_NCHW_VECT_C)
            return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "transformFormat NCHW_VECT_C: backward data has no vectorised types");
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "transformFormat=%d is not a cudnnTensorFormat_t", (int)transformFormat);
    }
    FDNN_CHECK_PTR(foldedFilterDesc, "foldedFilterDesc");
    FDNN_CHECK_PTR(paddedDiffDesc, "paddedDiffDesc");
    FDNN_CHECK_PTR(foldedConvDesc, "foldedConvDesc");
    FDNN_CHECK_PTR(foldedGradDesc, "foldedGradDesc");
    if (foldedFilterDesc->magic != FDNN_MAGIC_FILTER) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "foldedFilterDesc is not a live filter descriptor");
    if (paddedDiffDesc->magic != FDNN_MAGIC_TENSOR) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "paddedDiffDesc is not a live tensor descriptor");
    if (foldedConvDesc->magic != FDNN_MAGIC_CONV)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "foldedConvDesc is not a live convolution descriptor");
    if (foldedGradDesc->magic != FDNN_MAGIC_TENSOR) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "foldedGradDesc is not a live tensor descriptor");
    FDNN_CHECK(live_transform(filterFoldTransDesc, "filterFoldTransDesc"));
    FDNN_CHECK(live_transform(diffPadTransDesc, "diffPadTransDesc"));
    FDNN_CHECK(live_transform(gradFoldTransDesc, "gradFoldTransDesc"));
    FDNN_CHECK(live_transform(gradUnfoldTransDesc, "gradUnfoldTransDesc"));

    const int nb = gradDesc->nb_dims, ns = nb - 2;
    int zero[CUDNN_DIM_MAX] = {0}, fold[CUDNN_DIM_MAX] = {0}, wpa[CUDNN_DIM_MAX] = {0}, dpa[CUDNN_DIM_MAX] = {0}, gpb[CUDNN_DIM_MAX] = {0},
        gpa[CUDNN_DIM_MAX] = {0};
    int fw[CUDNN_DIM_MAX], fdy[CUDNN_DIM_MAX], fdx[CUDNN_DIM_MAX], cpad[FDNN_MAX_SPATIAL], cstr[FDNN_MAX_SPATIAL], cdil[FDNN_MAX_SPATIAL];
    long long F = 1;
    int ones[CUDNN_DIM_MAX];
    for (int i = 0; i < CUDNN_DIM_MAX; i++) fold[i] = ones[i] = 1;
    for (int i = 0; i < ns; i++) {
        const int H = gradDesc->dim[2 + i], T = filterDesc->dim[2 + i], O = diffDesc->dim[2 + i];
        const int pd = convDesc->pad[i], s = convDesc->stride[i], d = convDesc->dilation[i];
        const long long L = (long long)H + 2LL * pd;
        cpad[i] = 0;
        cstr[i] = 1;
        gpb[2 + i] = pd;
        if (s == 1) {
            cdil[i] = d;
            fdx[2 + i] = (int)L;
            fw[2 + i] = T;
            fdy[2 + i] = O;
            gpa[2 + i] = pd;
            continue;
        }
        if (d != 1)
            return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "spatial dim %d has stride %d and dilation %d; folding needs dilation 1 where the stride is > 1",
                             i, s, d);
        if (convDesc->mode != CUDNN_CROSS_CORRELATION)
            return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                             "CUDNN_CONVOLUTION mode with stride %d in dim %d: the folded filter would need its phases reversed, which no fold "
                             "transform expresses; use CUDNN_CROSS_CORRELATION (or stride 1)", s, i);
        const long long Hf = (L + s - 1) / s, Tf = ((long long)T + s - 1) / s, Of = Hf - Tf + 1;
        if (Of < O) return FDNN_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "folded diff extent %lld < %d in dim %d", Of, O, i); /* cannot happen */
        cdil[i] = 1;
        fold[2 + i] = s;
        F *= s;
        fdx[2 + i] = (int)Hf;
        fw[2 + i] = (int)Tf;
        fdy[2 + i] = (int)Of;
        wpa[2 + i] = (int)(Tf * s - T);
        dpa[2 + i] = (int)(Of - O);
        gpa[2 + i] = (int)(Hf * s - H - pd);
    }
    if (F > 1 && convDesc->group_count > 1)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                         "groups=%d with a stride > 1: the fold puts the channels phase-major (phase * C + c, as NVIDIA's cuDNN does), "
                         "which splits each group's channels across the folded tensor; fold with groups 1 or stride 1",
                         convDesc->group_count);
    if ((long long)gradDesc->dim[1] * F > 0x7fffffffLL)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "folded channel count %lld does not fit in int", (long long)gradDesc->dim[1] * F);
    fw[0] = filterDesc->dim[0];
    fw[1] = (int)(filterDesc->dim[1] * F);
    fdy[0] = diffDesc->dim[0];
    fdy[1] = diffDesc->dim[1];
    fdx[0] = gradDesc->dim[0];
    fdx[1] = (int)(gradDesc->dim[1] * F);

    /* build every output on a scratch copy, so that nothing changes on error */
    struct cudnnFilterStruct wf = *foldedFilterDesc;
    struct cudnnTensorStruct dyp = *paddedDiffDesc, dxf = *foldedGradDesc;
    struct cudnnConvolutionStruct cf = *foldedConvDesc;
    cudnnStatus_t st = cudnnSetFilterNdDescriptor(&wf, filterDesc->dtype, transformFormat, nb, fw);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnSetTensorNdDescriptorEx(&dyp, transformFormat, diffDesc->dtype, nb, fdy);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnSetTensorNdDescriptorEx(&dxf, transformFormat, gradDesc->dtype, nb, fdx);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnSetConvolutionNdDescriptor(&cf, ns, cpad, cstr, cdil, convDesc->mode, convDesc->compute_type);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnSetConvolutionGroupCount(&cf, convDesc->group_count);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnSetConvolutionMathType(&cf, convDesc->math_type);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnSetConvolutionReorderType(&cf, convDesc->reorder_type);
    fdnn_set_current_api(__func__);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    *foldedFilterDesc = wf;
    *paddedDiffDesc = dyp;
    *foldedGradDesc = dxf;
    *foldedConvDesc = cf;
    set_transform(filterFoldTransDesc, nb, transformFormat, zero, wpa, fold, CUDNN_TRANSFORM_FOLD);
    set_transform(diffPadTransDesc, nb, transformFormat, zero, dpa, ones, CUDNN_TRANSFORM_FOLD);
    set_transform(gradFoldTransDesc, nb, transformFormat, gpb, gpa, fold, CUDNN_TRANSFORM_FOLD);
    set_transform(gradUnfoldTransDesc, nb, transformFormat, gpb, gpa, fold, CUDNN_TRANSFORM_UNFOLD);
    return CUDNN_STATUS_SUCCESS;
}
