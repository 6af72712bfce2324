/* The handle: backend choice at creation (CUDA when built with it and a device is usable,
 * else CPU; FREEDNN_BACKEND=cpu|cuda forces one), stream, version and property queries,
 * and the v8 sub-library version checks. */
#include <stdlib.h>
#include <string.h>
#include "fdnn.h"
#include "../cuda/cuda_backend.h"
#include "../dispatch/plan_cache.h"

cudnnStatus_t fdnn_check_handle(cudnnHandle_t h, const char *argname)
{
    if (h == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", argname);
    if (h->magic != FDNN_MAGIC_HANDLE)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live cudnnHandle_t (destroyed or never created)", argname);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreate(cudnnHandle_t *handle)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(handle, "handle");
    const char *want = fdnn_getenv("FREEDNN_BACKEND");
    int backend;
    char why[256] = "FreeDNN was built without the CUDA backend";
    if (want && strcmp(want, "cpu") == 0) {
        backend = FDNN_BACKEND_CPU;
    } else if (want && strcmp(want, "cuda") == 0) {
        if (!fdnn_cuda_usable(why, sizeof why))
            return FDNN_FAIL(CUDNN_STATUS_NOT_INITIALIZED, "FREEDNN_BACKEND=cuda but the CUDA backend cannot be used: %s", why);
        backend = FDNN_BACKEND_CUDA;
    } else if (want) {
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "FREEDNN_BACKEND=%s is not one of cpu, cuda", want);
    } else {
        backend = fdnn_cuda_usable(why, sizeof why) ? FDNN_BACKEND_CUDA : FDNN_BACKEND_CPU;
    }
    struct cudnnContext *h = calloc(1, sizeof *h);
    if (!h) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory for the handle");
    h->magic = FDNN_MAGIC_HANDLE;
    h->backend = backend;
    h->device = -1;
    h->nthreads = fdnn_env_int("FREEDNN_NUM_THREADS", 0);
    if (backend == FDNN_BACKEND_CUDA) {
        cudnnStatus_t st = fdnn_cuda_handle_init(h);
        if (st != CUDNN_STATUS_SUCCESS) {
            h->magic = FDNN_MAGIC_DEAD;
            free(h);
            return st;
        }
    }
    FDNN_API_LOG(h, "handle=%p backend=%s", (void *)h, backend == FDNN_BACKEND_CUDA ? "cuda" : "cpu");
    *handle = h;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroy(cudnnHandle_t handle)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_API_LOG(handle, "handle=%p", (void *)handle);
    if (handle->backend == FDNN_BACKEND_CUDA) fdnn_cuda_handle_free(handle);
    fdnn_plan_cache_free(handle);
    handle->magic = FDNN_MAGIC_DEAD;
    free(handle);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_API_LOG(handle, "handle=%p streamId=%p", (void *)handle, (void *)streamId);
    if (handle->backend == FDNN_BACKEND_CUDA) FDNN_CHECK(fdnn_cuda_set_stream(handle, streamId));
    handle->stream = streamId;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetStream(cudnnHandle_t handle, cudaStream_t *streamId)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK_PTR(streamId, "streamId");
    *streamId = handle->stream;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT size_t CUDNNWINAPI cudnnGetVersion(void) { return CUDNN_VERSION; }

/* api: any */
FDNN_EXPORT size_t CUDNNWINAPI cudnnGetMaxDeviceVersion(void) { return CUDNN_MAX_DEVICE_VERSION; }

/* api: any */
FDNN_EXPORT size_t CUDNNWINAPI cudnnGetCudartVersion(void) { return (size_t)fdnn_cuda_runtime_version(); }

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetProperty(libraryPropertyType type, int *value)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(value, "value");
    switch (type) {
    case MAJOR_VERSION: *value = CUDNN_MAJOR; break;
    case MINOR_VERSION: *value = CUDNN_MINOR; break;
    case PATCH_LEVEL: *value = CUDNN_PATCHLEVEL; break;
    default: return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "type=%d is not MAJOR_VERSION, MINOR_VERSION or PATCH_LEVEL", (int)type);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnQueryRuntimeError(cudnnHandle_t handle, cudnnStatus_t *rstatus,
                                                             cudnnErrQueryMode_t mode, cudnnRuntimeTag_t *tag)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK_PTR(rstatus, "rstatus");
    if (mode != CUDNN_ERRQUERY_RAWCODE && mode != CUDNN_ERRQUERY_NONBLOCKING && mode != CUDNN_ERRQUERY_BLOCKING)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mode=%d is not a cudnnErrQueryMode_t", (int)mode);
    if (tag != NULL)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "tag must be NULL (reserved by cuDNN)");
    /* FreeDNN kernels report no deferred numerical errors: none are ever pending. */
    *rstatus = CUDNN_STATUS_SUCCESS;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT const char *freednnGetBackendName(cudnnHandle_t handle)
{
    if (!handle || handle->magic != FDNN_MAGIC_HANDLE) return "invalid";
    return handle->backend == FDNN_BACKEND_CUDA ? "cuda" : "cpu";
}

/* The six v8 sub-library version checks: everything lives in one library, so the versions
 * always agree. */
/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnOpsInferVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnOpsTrainVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCnnInferVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCnnTrainVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnAdvInferVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnAdvTrainVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
