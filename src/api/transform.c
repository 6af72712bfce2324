/* Tensor-transform descriptors, cudnnInitTransformDest, cudnnTransformTensorEx and
 * cudnnTransformFilter on the CPU and CUDA (src/cuda/ops_transform.cu) backends.
 * A transform descriptor holds, for nbDims-dim operands: destination format, padding before
 * and after every dim (>= 0), a fold factor per spatial dim (dims 2..) and a direction.
 *   FOLD:   dest = fold(pad(src)). pad extends each dim with zeros; fold with factors f_i
 *           turns spatial dims S_i into ceil(S_i/f_i) and C into C*F (F = prod f_i): element
 *           (n, c, s) with s_i = q_i*f_i + r_i goes to (n, r*C + c, q) (C the padded channel
 *           count, r = row-major flattening of the r_i: phase-major channels, H phase before
 *           W phase, as NVIDIA's cuDNN orders them); positions past the padded extent are zero.
 *   UNFOLD: the exact inverse: dest = crop(unfold(src)), C must be a multiple of F and the
 *           padding amounts are removed after unfolding. cudnnInitTransformDest gives the
 *           full unfolded extent; a destination up to f-1 smaller in a spatial dim (the
 *           original size before FOLD rounded it up) is accepted too.
 * The result is blended: dest = alpha*T(src) + beta*dest. Types follow cudnnTransformTensor. */
#include <stdlib.h>
#include <string.h>
#include "../core/fdnn.h"
#include "../core/ops_desc.h"
#include "../cpu/ops_common.h"

#ifdef FDNN_HAVE_CUDA
#include "../cuda/cuda_ops.h"
#endif

static cudnnStatus_t check_live(const struct cudnnTensorTransformStruct *d)
{
    if (d == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "transformDesc is NULL");
    if (d->magic != FDNN_MAGIC_TRANSFORM) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "transformDesc is not a live tensor-transform descriptor");
    return CUDNN_STATUS_SUCCESS;
}
static cudnnStatus_t check_set(const struct cudnnTensorTransformStruct *d)
{
    FDNN_CHECK(check_live(d));
    if (!d->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "transformDesc was created but never set");
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateTensorTransformDescriptor(cudnnTensorTransformDescriptor_t *transformDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(transformDesc, "transformDesc");
    struct cudnnTensorTransformStruct *d = calloc(1, sizeof *d);
    if (!d) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    d->magic = FDNN_MAGIC_TRANSFORM;
    *transformDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyTensorTransformDescriptor(cudnnTensorTransformDescriptor_t transformDesc)
{
    FDNN_API_ENTER();
    if (transformDesc == NULL) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(check_live(transformDesc));
    transformDesc->magic = FDNN_MAGIC_DEAD;
    free(transformDesc);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetTensorTransformDescriptor(cudnnTensorTransformDescriptor_t transformDesc, const uint32_t nbDims,
                                                                        const cudnnTensorFormat_t destFormat, const int32_t padBeforeA[],
                                                                        const int32_t padAfterA[], const uint32_t foldA[],
                                                                        const cudnnFoldingDirection_t direction)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_live(transformDesc));
    if (nbDims < 3 || nbDims > CUDNN_DIM_MAX) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDims=%u is outside [3, %d]", nbDims, CUDNN_DIM_MAX);
    if (destFormat != CUDNN_TENSOR_NCHW && destFormat != CUDNN_TENSOR_NHWC && destFormat != CUDNN_TENSOR_NCHW_VECT_C)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "destFormat=%d is not a cudnnTensorFormat_t", (int)destFormat);
    if (direction != CUDNN_TRANSFORM_FOLD && direction != CUDNN_TRANSFORM_UNFOLD)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "direction=%d is not a cudnnFoldingDirection_t", (int)direction);
    for (uint32_t i = 0; i < nbDims; i++) {
        if ((padBeforeA && padBeforeA[i] < 0) || (padAfterA && padAfterA[i] < 0))
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "padding of dim %u is negative", i);
        if (i >= 2 && foldA && (foldA[i - 2] < 1 || foldA[i - 2] > 65536))
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "foldA[%u]=%u must be in [1, 65536]", i - 2, foldA[i - 2]);
    }
    struct cudnnTensorTransformStruct *d = transformDesc;
    d->nb_dims = (int)nbDims;
    d->dest_format = destFormat;
    d->direction = direction;
    for (int i = 0; i < CUDNN_DIM_MAX; i++) {
        int in = i < (int)nbDims;
        d->pad_before[i] = in && padBeforeA ? padBeforeA[i] : 0;
        d->pad_after[i] = in && padAfterA ? padAfterA[i] : 0;
        d->fold[i] = (in && i >= 2 && foldA) ? foldA[i - 2] : 1;
    }
    d->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetTensorTransformDescriptor(cudnnTensorTransformDescriptor_t transformDesc, uint32_t nbDimsRequested,
                                                                        cudnnTensorFormat_t *destFormat, int32_t padBeforeA[], int32_t padAfterA[],
                                                                        uint32_t foldA[], cudnnFoldingDirection_t *direction)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_set(transformDesc));
    if (!destFormat || !direction) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    if (nbDimsRequested != (uint32_t)transformDesc->nb_dims)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDimsRequested=%u differs from the descriptor's nbDims=%d", nbDimsRequested, transformDesc->nb_dims);
    *destFormat = transformDesc->dest_format;
    *direction = transformDesc->direction;
    for (uint32_t i = 0; i < nbDimsRequested; i++) {
        if (padBeforeA) padBeforeA[i] = transformDesc->pad_before[i];
        if (padAfterA) padAfterA[i] = transformDesc->pad_after[i];
        if (foldA && i >= 2) foldA[i - 2] = transformDesc->fold[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

static int64_t fold_count(const struct cudnnTensorTransformStruct *d)
{
    int64_t F = 1;
    for (int i = 2; i < d->nb_dims; i++) F *= d->fold[i];
    return F;
}

/* Destination dims for source dims src[nb]. */
static cudnnStatus_t dest_dims(const struct cudnnTensorTransformStruct *d, int nb, const int *src, int *dst)
{
    if (nb != d->nb_dims)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "the source has %d dims but transformDesc has nbDims=%d", nb, d->nb_dims);
    int64_t F = fold_count(d);
    int64_t v[CUDNN_DIM_MAX];
    if (d->direction == CUDNN_TRANSFORM_FOLD) {
        for (int i = 0; i < nb; i++) v[i] = (int64_t)src[i] + d->pad_before[i] + d->pad_after[i];
        for (int i = 2; i < nb; i++) v[i] = (v[i] + d->fold[i] - 1) / d->fold[i];
        v[1] *= F;
    } else {
        if (src[1] % F != 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "C=%d is not a multiple of the fold product %lld", src[1], (long long)F);
        for (int i = 0; i < nb; i++) v[i] = (int64_t)src[i] * (i >= 2 ? d->fold[i] : 1);
        v[1] /= F;
        for (int i = 0; i < nb; i++) v[i] -= (int64_t)d->pad_before[i] + d->pad_after[i];
    }
    for (int i = 0; i < nb; i++) {
        if (v[i] <= 0 || v[i] > 0x7fffffff) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "destination dim %d would be %lld", i, (long long)v[i]);
        dst[i] = (int)v[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnInitTransformDest(const cudnnTensorTransformDescriptor_t transformDesc, const cudnnTensorDescriptor_t srcDesc,
                                                             cudnnTensorDescriptor_t destDesc, size_t *destSizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_set(transformDesc));
    FDNN_CHECK(fdnn_check_tensor(srcDesc, "srcDesc"));
    FDNN_CHECK_PTR(destDesc, "destDesc");
    FDNN_CHECK_PTR(destSizeInBytes, "destSizeInBytes");
    if (destDesc->magic != FDNN_MAGIC_TENSOR) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "destDesc is not a live tensor descriptor");
    int dst[CUDNN_DIM_MAX];
    FDNN_CHECK(dest_dims(transformDesc, srcDesc->nb_dims, srcDesc->dim, dst));
    cudnnDataType_t dt = srcDesc->dtype;
    cudnnTensorFormat_t fmt = transformDesc->dest_format;
    if (fmt == CUDNN_TENSOR_NCHW_VECT_C && fdnn_dtype_vect(dt) == 1) {
        if (dt != CUDNN_DATA_INT8 && dt != CUDNN_DATA_UINT8)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "destFormat NCHW_VECT_C needs an int8 source, got %s", fdnn_dtype_name(dt));
        dt = dt == CUDNN_DATA_INT8 ? CUDNN_DATA_INT8x4 : CUDNN_DATA_UINT8x4;
    } else if (fmt != CUDNN_TENSOR_NCHW_VECT_C && fdnn_dtype_vect(dt) > 1) {
        dt = dt == CUDNN_DATA_UINT8x4 ? CUDNN_DATA_UINT8 : CUDNN_DATA_INT8;
    }
    /* validate on a scratch copy so destDesc stays untouched on error */
    struct cudnnTensorStruct tmp = *destDesc;
    cudnnStatus_t st = cudnnSetTensorNdDescriptorEx(&tmp, fmt, dt, srcDesc->nb_dims, dst);
    fdnn_set_current_api(__func__);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    *destDesc = tmp;
    *destSizeInBytes = (size_t)fdnn_tensor_span(&tmp) * fdnn_dtype_size(dt); /* span counts vectors for VECT_C */
    return CUDNN_STATUS_SUCCESS;
}

/* res (dest logical order) = T(src logical) */
static void apply(const struct cudnnTensorTransformStruct *d, int nb, const int *sdim, const double *src, const int *ddim, double *res)
{
    int64_t n = 1, sst[CUDNN_DIM_MAX], s = 1;
    for (int i = 0; i < nb; i++) n *= ddim[i];
    for (int i = nb - 1; i >= 0; i--) { sst[i] = s; s *= sdim[i]; }
    const int64_t F = fold_count(d);
    const int fold = d->direction == CUDNN_TRANSFORM_FOLD;
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) {
        int di[CUDNN_DIM_MAX], si[CUDNN_DIM_MAX];
        fdnn_ops_unravel(ddim, nb, i, di);
        int ok = 1;
        if (fold) {
            /* padded coordinates of the source element this dest element holds */
            const int64_t cp = ddim[1] / F; /* padded source channels */
            int64_t r = di[1] / cp;
            si[1] = (int)(di[1] % cp);
            si[0] = di[0];
            for (int k = nb - 1; k >= 2; k--) {
                int rk = (int)(r % d->fold[k]);
                r /= d->fold[k];
                si[k] = di[k] * (int)d->fold[k] + rk;
            }
            for (int k = 0; k < nb; k++) {
                si[k] -= d->pad_before[k];
                if (si[k] < 0 || si[k] >= sdim[k]) ok = 0;
            }
        } else {
            int u[CUDNN_DIM_MAX] = {0};
            for (int k = 0; k < nb; k++) u[k] = di[k] + d->pad_before[k];
            int64_t r = 0;
            for (int k = 2; k < nb; k++) {
                r = r * d->fold[k] + u[k] % (int)d->fold[k];
                si[k] = u[k] / (int)d->fold[k];
            }
            const int64_t cu = sdim[1] / F; /* channels of one phase of the folded source */
            si[0] = u[0];
            si[1] = (int)(r * cu + u[1]);
            if (u[1] >= cu) ok = 0;
            for (int k = 0; k < nb; k++)
                if (si[k] >= sdim[k]) ok = 0;
        }
        double v = 0;
        if (ok) {
            int64_t o = 0;
            for (int k = 0; k < nb; k++) o += si[k] * sst[k];
            v = src[o];
        }
        res[i] = v;
    }
}

static int is_vect_int8(cudnnDataType_t t) { return t == CUDNN_DATA_INT8x4 || t == CUDNN_DATA_INT8x32; }
static int types_ok(cudnnDataType_t x, cudnnDataType_t y)
{
    if (x == y) return 1;
    if (is_vect_int8(x) && (y == CUDNN_DATA_INT8 || y == CUDNN_DATA_FLOAT || is_vect_int8(y))) return 1;
    if (is_vect_int8(y) && (x == CUDNN_DATA_INT8 || x == CUDNN_DATA_FLOAT)) return 1;
    if (x == CUDNN_DATA_UINT8x4 && (y == CUDNN_DATA_UINT8 || y == CUDNN_DATA_FLOAT)) return 1;
    if (y == CUDNN_DATA_UINT8x4 && (x == CUDNN_DATA_UINT8 || x == CUDNN_DATA_FLOAT)) return 1;
    return 0;
}

static cudnnStatus_t run(cudnnHandle_t handle, const struct cudnnTensorTransformStruct *d, const void *alpha, const fdnn_tensor *s, const void *src, const void *beta,
                         const fdnn_tensor *t, void *dst)
{
    int want[CUDNN_DIM_MAX];
    FDNN_CHECK(dest_dims(d, s->nb_dims, s->dim, want));
    if (t->nb_dims != s->nb_dims) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "destination has %d dims, source %d", t->nb_dims, s->nb_dims);
    for (int i = 0; i < t->nb_dims; i++) {
        /* UNFOLD may drop the up to f-1 trailing positions a FOLD added by rounding up */
        int lo = want[i];
        if (d->direction == CUDNN_TRANSFORM_UNFOLD && i >= 2) lo = want[i] - (int)d->fold[i] + 1;
        if (t->dim[i] > want[i] || t->dim[i] < lo || t->dim[i] < 1)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "destination dim %d is %d; the transform produces %d (see cudnnInitTransformDest)", i, t->dim[i],
                             want[i]);
    }
    if (!types_ok(s->dtype, t->dtype))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "source type %s and destination type %s differ (only NCHW_VECT_C int8 <-> int8/FLOAT may differ)",
                         fdnn_dtype_name(s->dtype), fdnn_dtype_name(t->dtype));
    const double a = fdnn_scalar(alpha, t->dtype), b = fdnn_scalar(beta, t->dtype);
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_transform_ex(handle, d, a, s, src, b, t, dst);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s: this build has no CUDA backend", fdnn_current_api());
#endif
    }
    double *ps = fdnn_ops_gather(s, src), *res = malloc(sizeof(double) * (size_t)fdnn_tensor_elems(t));
    if (!ps || !res) { free(ps); free(res); return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory"); }
    apply(d, s->nb_dims, s->dim, ps, t->dim, res);
    fdnn_ops_blend(t, dst, res, a, b);
    free(ps);
    free(res);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnTransformTensorEx(cudnnHandle_t handle, const cudnnTensorTransformDescriptor_t transDesc, const void *alpha,
                                                             const cudnnTensorDescriptor_t srcDesc, const void *srcData, const void *beta,
                                                             const cudnnTensorDescriptor_t destDesc, void *destData)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_set(transDesc));
    FDNN_CHECK(fdnn_check_tensor(srcDesc, "srcDesc"));
    FDNN_CHECK(fdnn_check_tensor(destDesc, "destDesc"));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(srcData, "srcData");
    FDNN_CHECK_PTR(destData, "destData");
    return run(handle, transDesc, alpha, srcDesc, srcData, beta, destDesc, destData);
}

/* A filter viewed as a tensor with the strides of its packed format. */
static void filter_as_tensor(const struct cudnnFilterStruct *f, struct cudnnTensorStruct *t)
{
    memset(t, 0, sizeof *t);
    t->magic = FDNN_MAGIC_TENSOR;
    t->is_set = 1;
    t->dtype = f->dtype;
    t->format = f->format;
    t->nb_dims = f->nb_dims;
    t->vect = f->vect;
    memcpy(t->dim, f->dim, sizeof(int) * (size_t)f->nb_dims);
    int nb = f->nb_dims, cdim = f->vect > 1 ? f->dim[1] / f->vect : f->dim[1];
    int64_t s = 1;
    if (f->format == CUDNN_TENSOR_NHWC) {
        t->stride[1] = 1;
        s = cdim;
        for (int i = nb - 1; i >= 2; i--) { t->stride[i] = (int)s; s *= f->dim[i]; }
        t->stride[0] = (int)s;
    } else {
        for (int i = nb - 1; i >= 0; i--) { t->stride[i] = (int)s; s *= (i == 1 ? cdim : f->dim[i]); }
    }
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnTransformFilter(cudnnHandle_t handle, const cudnnTensorTransformDescriptor_t transDesc, const void *alpha,
                                                           const cudnnFilterDescriptor_t srcDesc, const void *srcData, const void *beta,
                                                           const cudnnFilterDescriptor_t destDesc, void *destData)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_set(transDesc));
    FDNN_CHECK(fdnn_check_filter(srcDesc, "srcDesc"));
    FDNN_CHECK(fdnn_check_filter(destDesc, "destDesc"));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(srcData, "srcData");
    FDNN_CHECK_PTR(destData, "destData");
    struct cudnnTensorStruct s, t;
    filter_as_tensor(srcDesc, &s);
    filter_as_tensor(destDesc, &t);
    return run(handle, transDesc, alpha, &s, srcData, beta, &t, destData);
}
