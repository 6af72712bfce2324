/* cudnnActivationForward/Backward on the CPU and CUDA (src/cuda/ops_elementwise.cu) backends: y = alpha*act(x) + beta*y and
 * dx = alpha*act'(x)*dy + beta*dx with the scalar math of core/activation_math.h. On the CPU, FLOAT tensors dense in
 * one layout take src/cpu/act_fast.c's float loops (FREEDNN_CPU_FAST_PATH=0: the double loops below, 2: required).
 * IDENTITY is documented by cuDNN as not working with these two functions (it exists for
 * cudnnConvolutionBiasActivationForward): it is rejected with NOT_SUPPORTED. */
#include <stdint.h>
#include <stdlib.h>
#include "../core/fdnn.h"
#include "../core/activation_math.h"
#include "../cpu/ops_common.h"
#include "../cpu/ops_fast.h"

#ifdef FDNN_HAVE_CUDA
#include "../cuda/cuda_ops.h"
#endif

static cudnnStatus_t check_mode(const struct cudnnActivationStruct *d)
{
    if (d->mode == CUDNN_ACTIVATION_IDENTITY)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                         "CUDNN_ACTIVATION_IDENTITY does not work with cudnnActivationForward/Backward (cuDNN restricts it to cudnnConvolutionBiasActivationForward)");
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnActivationForward(cudnnHandle_t handle, cudnnActivationDescriptor_t activationDesc, const void *alpha,
                                                             const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                                             const cudnnTensorDescriptor_t yDesc, void *y)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_check_activation(activationDesc, "activationDesc"));
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    FDNN_CHECK(fdnn_check_tensor(yDesc, "yDesc"));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(x, "x");
    FDNN_CHECK_PTR(y, "y");
    FDNN_CHECK(fdnn_ops_same_dims(xDesc, "xDesc", yDesc, "yDesc"));
    FDNN_CHECK(fdnn_ops_same_type(xDesc, "xDesc", yDesc, "yDesc"));
    if (x == y && !fdnn_ops_same_layout(xDesc, yDesc))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "in-place operation (x == y) needs equal strides in xDesc and yDesc");
    FDNN_CHECK(fdnn_ops_float_type(xDesc, "xDesc"));
    FDNN_CHECK(check_mode(activationDesc));
    const double a = fdnn_scalar(alpha, yDesc->dtype), b = fdnn_scalar(beta, yDesc->dtype);
    const cudnnActivationMode_t mode = activationDesc->mode;
    const double coef = activationDesc->coef, sb = activationDesc->swish_beta;
    const int prop = activationDesc->nan_opt == CUDNN_PROPAGATE_NAN;
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_activation_fwd(handle, (int)mode, coef, sb, prop, a, xDesc, x, b, yDesc, y);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnActivationForward: this build has no CUDA backend");
#endif
    }
    const int fast = fdnn_ops_fast_mode();
    if (fast && fdnn_cpu_act_fwd_f32((int)mode, coef, sb, prop, a, xDesc, x, b, yDesc, y)) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_ops_fast_missed(fast));
    int64_t n = fdnn_tensor_elems(xDesc);
    if (xDesc->dtype == CUDNN_DATA_FLOAT && fdnn_ops_flat(xDesc, yDesc)) {
        /* dense FLOAT (NCHW, NHWC, ...) in one layout, walked in memory order: the same double arithmetic and single rounding, without the double copies */
        const float *xf = x;
        float *yf = y;
#pragma omp parallel for schedule(static) if (n > 65536)
        for (int64_t i = 0; i < n; i++) {
            double v = a * fdnn_act_fwd(mode, coef, sb, prop, xf[i]);
            if (b != 0) v += b * (double)yf[i];
            yf[i] = (float)v;
        }
        return CUDNN_STATUS_SUCCESS;
    }
    double *p = fdnn_ops_gather(xDesc, x);
    if (!p) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) p[i] = fdnn_act_fwd(mode, coef, sb, prop, p[i]);
    fdnn_ops_blend(yDesc, y, p, a, b);
    free(p);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnActivationBackward(cudnnHandle_t handle, cudnnActivationDescriptor_t activationDesc, const void *alpha,
                                                              const cudnnTensorDescriptor_t yDesc, const void *y,
                                                              const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                              const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                                              const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_check_activation(activationDesc, "activationDesc"));
    FDNN_CHECK(fdnn_check_tensor(yDesc, "yDesc"));
    FDNN_CHECK(fdnn_check_tensor(dyDesc, "dyDesc"));
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    FDNN_CHECK(fdnn_check_tensor(dxDesc, "dxDesc"));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(y, "y");
    FDNN_CHECK_PTR(dy, "dy");
    FDNN_CHECK_PTR(x, "x");
    FDNN_CHECK_PTR(dx, "dx");
    /* cuDNN documents mismatched dims/types among the four tensors as NOT_SUPPORTED here */
    const struct cudnnTensorStruct *t[3] = {yDesc, dyDesc, xDesc};
    const char *nm[3] = {"yDesc", "dyDesc", "xDesc"};
    for (int i = 0; i < 3; i++) {
        if (fdnn_ops_same_dims(t[i], nm[i], dxDesc, "dxDesc") != CUDNN_STATUS_SUCCESS ||
            fdnn_ops_same_type(t[i], nm[i], dxDesc, "dxDesc") != CUDNN_STATUS_SUCCESS)
            return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s and dxDesc must have equal dims and data type", nm[i]);
    }
    if (dy == dx && !fdnn_ops_same_layout(dyDesc, dxDesc))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "in-place operation (dy == dx) needs equal strides in dyDesc and dxDesc");
    FDNN_CHECK(fdnn_ops_float_type(dxDesc, "dxDesc"));
    FDNN_CHECK(check_mode(activationDesc));
    const double a = fdnn_scalar(alpha, dxDesc->dtype), b = fdnn_scalar(beta, dxDesc->dtype);
    const cudnnActivationMode_t mode = activationDesc->mode;
    const double coef = activationDesc->coef, sb = activationDesc->swish_beta;
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_activation_bwd(handle, (int)mode, coef, sb, a, yDesc, y, dyDesc, dy, xDesc, x, b, dxDesc, dx);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnActivationBackward: this build has no CUDA backend");
#endif
    }
    const int fast = fdnn_ops_fast_mode();
    if (fast && fdnn_cpu_act_bwd_f32((int)mode, coef, sb, a, yDesc, y, dyDesc, dy, xDesc, x, b, dxDesc, dx)) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_ops_fast_missed(fast));
    if (dxDesc->dtype == CUDNN_DATA_FLOAT && fdnn_ops_flat(yDesc, dxDesc) && fdnn_ops_flat(dyDesc, dxDesc) &&
        fdnn_ops_flat(xDesc, dxDesc)) {
        const float *yf = y, *dyf = dy, *xf = x;
        float *dxf = dx;
        const int64_t n = fdnn_tensor_elems(dxDesc);
#pragma omp parallel for schedule(static) if (n > 65536)
        for (int64_t i = 0; i < n; i++) {
            double v = a * fdnn_act_bwd(mode, coef, sb, xf[i], yf[i], dyf[i]);
            if (b != 0) v += b * (double)dxf[i];
            dxf[i] = (float)v;
        }
        return CUDNN_STATUS_SUCCESS;
    }
    double *py = fdnn_ops_gather(yDesc, y), *pdy = fdnn_ops_gather(dyDesc, dy), *px = fdnn_ops_gather(xDesc, x);
    if (!py || !pdy || !px) {
        free(py);
        free(pdy);
        free(px);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
    int64_t n = fdnn_tensor_elems(dxDesc);
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) px[i] = fdnn_act_bwd(mode, coef, sb, px[i], py[i], pdy[i]);
    fdnn_ops_blend(dxDesc, dx, px, a, b);
    free(py);
    free(pdy);
    free(px);
    return CUDNN_STATUS_SUCCESS;
}
