/* Dropout descriptors and dropout forward/backward. Masks come from the counter-based Philox
 * generator (src/core/philox.h) keyed by the seed, so the states buffer holds nothing the mask
 * depends on: it is only recorded, and cudnnRestoreDropoutDescriptor reproduces the masks from
 * the seed alone. The reserve space holds the mask, one byte per element. Both backends
 * (src/cpu/dropout_cpu.c, src/cuda/dropout.cu) produce the same mask bit for bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../core/fdnn.h"
#include "../core/norm_desc.h"
#ifdef FDNN_HAVE_CUDA
#include "../cuda/cuda_norm.h"
#endif

#define FDNN_DROPOUT_STATES_BYTES 64 /* recorded only; see the header comment */

static cudnnStatus_t check_desc_only(const struct cudnnDropoutStruct *d)
{
    if (d == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dropoutDesc is NULL");
    if (d->magic != FDNN_MAGIC_DROPOUT) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dropoutDesc is not a live dropout descriptor");
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_desc_set(const struct cudnnDropoutStruct *d)
{
    FDNN_CHECK(check_desc_only(d));
    if (!d->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dropoutDesc was created but never set");
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateDropoutDescriptor(cudnnDropoutDescriptor_t *dropoutDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(dropoutDesc, "dropoutDesc");
    struct cudnnDropoutStruct *d = calloc(1, sizeof *d);
    if (!d) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    d->magic = FDNN_MAGIC_DROPOUT;
    *dropoutDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc)
{
    FDNN_API_ENTER();
    if (dropoutDesc == NULL) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(check_desc_only(dropoutDesc));
    dropoutDesc->magic = FDNN_MAGIC_DEAD;
    free(dropoutDesc);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDropoutGetStatesSize(cudnnHandle_t handle, size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK_PTR(sizeInBytes, "sizeInBytes");
    *sizeInBytes = FDNN_DROPOUT_STATES_BYTES;
    return CUDNN_STATUS_SUCCESS;
}

static int dtype_ok(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDropoutGetReserveSpaceSize(cudnnTensorDescriptor_t xdesc, size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_tensor(xdesc, "xdesc"));
    FDNN_CHECK_PTR(sizeInBytes, "sizeInBytes");
    *sizeInBytes = (size_t)fdnn_tensor_elems(xdesc); /* one mask byte per element */
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t set_common(cudnnDropoutDescriptor_t d, cudnnHandle_t handle, float dropout, void *states, size_t size,
                                unsigned long long seed)
{
    FDNN_CHECK(check_desc_only(d));
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    if (!(dropout >= 0.0f && dropout < 1.0f))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dropout=%g must be in [0, 1)", (double)dropout);
    if (states != NULL && size < FDNN_DROPOUT_STATES_BYTES)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "stateSizeInBytes=%zu is less than cudnnDropoutGetStatesSize (%d)", size,
                         FDNN_DROPOUT_STATES_BYTES);
    d->handle = handle;
    d->dropout = dropout;
    d->seed = seed;
    d->states = states;
    d->state_size = size;
    d->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc, cudnnHandle_t handle, float dropout,
                                                                void *states, size_t stateSizeInBytes, unsigned long long seed)
{
    FDNN_API_ENTER();
    FDNN_API_LOG(handle, "dropout=%g states=%p size=%zu seed=%llu", (double)dropout, states, stateSizeInBytes, seed);
    return set_common(dropoutDesc, handle, dropout, states, stateSizeInBytes, seed);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnRestoreDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc, cudnnHandle_t handle, float dropout,
                                                                    void *states, size_t stateSizeInBytes, unsigned long long seed)
{
    FDNN_API_ENTER();
    FDNN_API_LOG(handle, "dropout=%g states=%p size=%zu seed=%llu", (double)dropout, states, stateSizeInBytes, seed);
    return set_common(dropoutDesc, handle, dropout, states, stateSizeInBytes, seed);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc, cudnnHandle_t handle, float *dropout,
                                                                void **states, unsigned long long *seed)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_desc_set(dropoutDesc));
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    if (!dropout || !states || !seed) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer (dropout, states, seed) is NULL");
    *dropout = dropoutDesc->dropout;
    *states = dropoutDesc->states;
    *seed = dropoutDesc->seed;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_pair(const struct cudnnTensorStruct *a, const char *an, const struct cudnnTensorStruct *b, const char *bn)
{
    FDNN_CHECK(fdnn_check_tensor(a, an));
    FDNN_CHECK(fdnn_check_tensor(b, bn));
    if (!dtype_ok(a->dtype))
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s data type %s is not supported (FLOAT, DOUBLE, HALF, BFLOAT16)", an,
                         fdnn_dtype_name(a->dtype));
    if (a->dtype != b->dtype)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s type %s differs from %s type %s", bn, fdnn_dtype_name(b->dtype), an,
                         fdnn_dtype_name(a->dtype));
    if (fdnn_tensor_elems(a) != fdnn_tensor_elems(b))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s and %s have different numbers of elements", an, bn);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_run(cudnnHandle_t handle, const struct cudnnDropoutStruct *d, const struct cudnnTensorStruct *a, const char *an,
                               const void *ap, const struct cudnnTensorStruct *b, const char *bn, const void *bp, const void *reserve,
                               size_t rsize)
{
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
#ifndef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s is not implemented on the CUDA backend yet", fdnn_current_api());
#endif
    FDNN_CHECK(check_desc_set(d));
    FDNN_CHECK(check_pair(a, an, b, bn));
    FDNN_CHECK_PTR(ap, an[0] == 'x' ? "x" : "dy");
    FDNN_CHECK_PTR(bp, bn[0] == 'y' ? "y" : "dx");
    if (d->states == NULL)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dropoutDesc was set with NULL states (only valid for descriptors never run)");
    if (ap == bp && (a->nb_dims != b->nb_dims || memcmp(a->stride, b->stride, sizeof(int) * (size_t)a->nb_dims) != 0 ||
                     memcmp(a->dim, b->dim, sizeof(int) * (size_t)a->nb_dims) != 0))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "in-place %s/%s need identical dims and strides", an, bn);
    FDNN_CHECK_PTR(reserve, "reserveSpace");
    size_t need = (size_t)fdnn_tensor_elems(a);
    if (rsize < need)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "reserveSpaceSizeInBytes=%zu is less than cudnnDropoutGetReserveSpaceSize (%zu)", rsize,
                         need);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDropoutForward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t dropoutDesc,
                                                          const cudnnTensorDescriptor_t xdesc, const void *x, const cudnnTensorDescriptor_t ydesc,
                                                          void *y, void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_API_LOG(handle, "reserve=%zu", reserveSpaceSizeInBytes);
    FDNN_CHECK(check_run(handle, dropoutDesc, xdesc, "xdesc", x, ydesc, "ydesc", y, reserveSpace, reserveSpaceSizeInBytes));
#ifdef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA)
        return fdnn_cuda_dropout_fwd(handle, xdesc, x, ydesc, y, dropoutDesc->dropout, dropoutDesc->seed, reserveSpace);
#endif
    fdnn_cpu_dropout_fwd(xdesc, x, ydesc, y, dropoutDesc->dropout, dropoutDesc->seed, reserveSpace);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDropoutBackward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t dropoutDesc,
                                                           const cudnnTensorDescriptor_t dydesc, const void *dy, const cudnnTensorDescriptor_t dxdesc,
                                                           void *dx, void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    FDNN_API_LOG(handle, "reserve=%zu", reserveSpaceSizeInBytes);
    FDNN_CHECK(check_run(handle, dropoutDesc, dydesc, "dydesc", dy, dxdesc, "dxdesc", dx, reserveSpace, reserveSpaceSizeInBytes));
#ifdef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA)
        return fdnn_cuda_dropout_bwd(handle, dydesc, dy, dxdesc, dx, dropoutDesc->dropout, reserveSpace);
#endif
    fdnn_cpu_dropout_bwd(dydesc, dy, dxdesc, dx, dropoutDesc->dropout, reserveSpace);
    return CUDNN_STATUS_SUCCESS;
}
