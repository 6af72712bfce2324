/* Spatial transformer: descriptor (bilinear sampler, 4-D output dims), grid generator and
 * sampler forward/backward. The grid is N x H x W x 2 (x then y, normalised to [-1, 1]);
 * x/y/dx/dy are NCHW-logical tensors with any strides. See docs/ops-norm.md. */
#include <stdlib.h>
#include <string.h>
#include "../core/fdnn.h"
#include "../core/norm_desc.h"
#include "../cpu/ops_fast.h"
#ifdef FDNN_HAVE_CUDA
#include "../cuda/cuda_norm.h"
#endif

static cudnnStatus_t check_st_only(const struct cudnnSpatialTransformerStruct *s)
{
    if (s == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "stDesc is NULL");
    if (s->magic != FDNN_MAGIC_SPATIAL_TF) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "stDesc is not a live spatial transformer descriptor");
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_st(const struct cudnnSpatialTransformerStruct *s)
{
    FDNN_CHECK(check_st_only(s));
    if (!s->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "stDesc was created but never set");
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateSpatialTransformerDescriptor(cudnnSpatialTransformerDescriptor_t *stDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(stDesc, "stDesc");
    struct cudnnSpatialTransformerStruct *s = calloc(1, sizeof *s);
    if (!s) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    s->magic = FDNN_MAGIC_SPATIAL_TF;
    *stDesc = s;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroySpatialTransformerDescriptor(cudnnSpatialTransformerDescriptor_t stDesc)
{
    FDNN_API_ENTER();
    if (stDesc == NULL) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(check_st_only(stDesc));
    stDesc->magic = FDNN_MAGIC_DEAD;
    free(stDesc);
    return CUDNN_STATUS_SUCCESS;
}

static int dtype_ok(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetSpatialTransformerNdDescriptor(cudnnSpatialTransformerDescriptor_t stDesc,
                                                                            cudnnSamplerType_t samplerType, cudnnDataType_t dataType,
                                                                            const int nbDims, const int dimA[])
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_st_only(stDesc));
    if (samplerType != CUDNN_SAMPLER_BILINEAR)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "samplerType=%d is not CUDNN_SAMPLER_BILINEAR", (int)samplerType);
    if (!dtype_ok(dataType))
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "dataType %s is not supported (FLOAT, DOUBLE, HALF, BFLOAT16)", fdnn_dtype_name(dataType));
    if (nbDims != 4) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "nbDims=%d: only 4-D spatial transformers are supported", nbDims);
    FDNN_CHECK_PTR(dimA, "dimA");
    for (int i = 0; i < 4; i++)
        if (dimA[i] <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dimA[%d]=%d must be positive", i, dimA[i]);
    stDesc->sampler = samplerType;
    stDesc->dtype = dataType;
    stDesc->nb_dims = 4;
    memcpy(stDesc->dim, dimA, sizeof stDesc->dim);
    stDesc->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_cpu(cudnnHandle_t handle)
{
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
#ifndef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s is not implemented on the CUDA backend yet", fdnn_current_api());
#endif
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSpatialTfGridGeneratorForward(cudnnHandle_t handle, const cudnnSpatialTransformerDescriptor_t stDesc,
                                                                        const void *theta, void *grid)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_cpu(handle));
    FDNN_CHECK(check_st(stDesc));
    FDNN_CHECK_PTR(theta, "theta");
    FDNN_CHECK_PTR(grid, "grid");
#ifdef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA)
        return fdnn_cuda_stf_grid_fwd(handle, stDesc, theta, grid);
#endif
    const int fast = fdnn_ops_fast_mode();
    if (fast && fdnn_cpu_stf_grid_fwd_f32(stDesc, theta, grid)) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_ops_fast_missed(fast));
    fdnn_cpu_stf_grid_fwd(stDesc, theta, grid);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSpatialTfGridGeneratorBackward(cudnnHandle_t handle, const cudnnSpatialTransformerDescriptor_t stDesc,
                                                                         const void *dgrid, void *dtheta)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_cpu(handle));
    FDNN_CHECK(check_st(stDesc));
    FDNN_CHECK_PTR(dgrid, "dgrid");
    FDNN_CHECK_PTR(dtheta, "dtheta");
#ifdef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA)
        return fdnn_cuda_stf_grid_bwd(handle, stDesc, dgrid, dtheta);
#endif
    const int fast = fdnn_ops_fast_mode();
    if (fast && fdnn_cpu_stf_grid_bwd_f32(stDesc, dgrid, dtheta)) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_ops_fast_missed(fast));
    fdnn_cpu_stf_grid_bwd(stDesc, dgrid, dtheta);
    return CUDNN_STATUS_SUCCESS;
}

/* t must be 4-D, of the descriptor's type, N (and C, H, W when `full`) equal to the descriptor's. */
static cudnnStatus_t check_tensor(const struct cudnnSpatialTransformerStruct *st, const struct cudnnTensorStruct *t, const char *name, int full)
{
    FDNN_CHECK(fdnn_check_tensor(t, name));
    if (t->nb_dims != 4) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s has %d dims; only 4-D tensors are supported", name, t->nb_dims);
    if (t->dtype != st->dtype)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s type %s differs from stDesc type %s", name, fdnn_dtype_name(t->dtype),
                         fdnn_dtype_name(st->dtype));
    if (t->dim[0] != st->dim[0] || t->dim[1] != st->dim[1])
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s N,C = %d,%d differ from stDesc's %d,%d", name, t->dim[0], t->dim[1], st->dim[0],
                         st->dim[1]);
    if (full && (t->dim[2] != st->dim[2] || t->dim[3] != st->dim[3]))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s H,W = %d,%d differ from stDesc's %d,%d", name, t->dim[2], t->dim[3], st->dim[2],
                         st->dim[3]);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSpatialTfSamplerForward(cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t stDesc,
                                                                  const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
                                                                  const void *grid, const void *beta, cudnnTensorDescriptor_t yDesc, void *y)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_cpu(handle));
    FDNN_CHECK(check_st(stDesc));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK(check_tensor(stDesc, xDesc, "xDesc", 0));
    FDNN_CHECK(check_tensor(stDesc, yDesc, "yDesc", 1));
    FDNN_CHECK_PTR(x, "x");
    FDNN_CHECK_PTR(grid, "grid");
    FDNN_CHECK_PTR(y, "y");
#ifdef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA)
        return fdnn_cuda_stf_sampler_fwd(handle, stDesc, fdnn_scalar(alpha, stDesc->dtype), xDesc, x, grid, fdnn_scalar(beta, stDesc->dtype), yDesc, y);
#endif
    const double a = fdnn_scalar(alpha, stDesc->dtype), b = fdnn_scalar(beta, stDesc->dtype);
    const int fast = fdnn_ops_fast_mode();
    if (fast && fdnn_cpu_stf_sampler_fwd_f32(stDesc, a, xDesc, x, grid, b, yDesc, y)) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_ops_fast_missed(fast));
    return fdnn_cpu_stf_sampler_fwd(stDesc, a, xDesc, x, grid, b, yDesc, y);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSpatialTfSamplerBackward(cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t stDesc,
                                                                   const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
                                                                   const void *beta, const cudnnTensorDescriptor_t dxDesc, void *dx,
                                                                   const void *alphaDgrid, const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                                   const void *grid, const void *betaDgrid, void *dgrid)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_cpu(handle));
    FDNN_CHECK(check_st(stDesc));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(alphaDgrid, "alphaDgrid");
    FDNN_CHECK_PTR(betaDgrid, "betaDgrid");
    FDNN_CHECK(check_tensor(stDesc, xDesc, "xDesc", 0));
    FDNN_CHECK(check_tensor(stDesc, dxDesc, "dxDesc", 0));
    FDNN_CHECK(check_tensor(stDesc, dyDesc, "dyDesc", 1));
    if (dxDesc->dim[2] != xDesc->dim[2] || dxDesc->dim[3] != xDesc->dim[3])
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dxDesc dims differ from xDesc dims");
    FDNN_CHECK_PTR(x, "x");
    FDNN_CHECK_PTR(dx, "dx");
    FDNN_CHECK_PTR(dy, "dy");
    FDNN_CHECK_PTR(grid, "grid");
    FDNN_CHECK_PTR(dgrid, "dgrid");
    cudnnDataType_t t = stDesc->dtype;
#ifdef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA)
        return fdnn_cuda_stf_sampler_bwd(handle, stDesc, fdnn_scalar(alpha, t), xDesc, x, fdnn_scalar(beta, t), dxDesc, dx, fdnn_scalar(alphaDgrid, t), dyDesc, dy,
                                         grid, fdnn_scalar(betaDgrid, t), dgrid);
#endif
    const double a = fdnn_scalar(alpha, t), b = fdnn_scalar(beta, t), ag = fdnn_scalar(alphaDgrid, t), bg = fdnn_scalar(betaDgrid, t);
    const int fast = fdnn_ops_fast_mode();
    if (fast && fdnn_cpu_stf_sampler_bwd_f32(stDesc, a, xDesc, x, b, dxDesc, dx, ag, dyDesc, dy, grid, bg, dgrid)) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_ops_fast_missed(fast));
    return fdnn_cpu_stf_sampler_bwd(stDesc, a, xDesc, x, b, dxDesc, dx, ag, dyDesc, dy, grid, bg, dgrid);
}
