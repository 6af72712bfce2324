/* cudnnSoftmaxForward/Backward on the CPU and CUDA (src/cuda/ops_softmax.cu) backends. INSTANCE normalises over C*(D)*H*W per
 * image, CHANNEL over C per (n, spatial position). FAST skips the max subtraction, ACCURATE
 * subtracts it, LOG gives log-softmax. Backward takes y and dy:
 * dx = y*(dy - sum(dy*y)) (FAST/ACCURATE), dx = dy - exp(y)*sum(dy) (LOG). */
#include <math.h>
#include <stdlib.h>
#include "../core/fdnn.h"
#include "../cpu/ops_fast.h"

#ifdef FDNN_HAVE_CUDA
#include "../cuda/cuda_ops.h"
#endif

/* Groups: count, elements per group, stride between elements, and base of group g. */
typedef struct { int64_t groups, len, step, S; int mode; } sm_geom;

static sm_geom geom(const fdnn_tensor *t, cudnnSoftmaxMode_t mode)
{
    sm_geom g;
    int64_t N = t->dim[0], C = t->dim[1], S = 1;
    for (int i = 2; i < t->nb_dims; i++) S *= t->dim[i];
    g.S = S;
    g.mode = mode;
    if (mode == CUDNN_SOFTMAX_MODE_INSTANCE) { g.groups = N; g.len = C * S; g.step = 1; }
    else { g.groups = N * S; g.len = C; g.step = S; }
    return g;
}
static inline int64_t gbase(const sm_geom *g, int64_t k)
{
    if (g->mode == CUDNN_SOFTMAX_MODE_INSTANCE) return k * g->len;
    return (k / g->S) * g->len * g->S + k % g->S;
}

static cudnnStatus_t check_algo_mode(cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode)
{
    if ((int)algo < 0 || algo > CUDNN_SOFTMAX_LOG) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algo=%d is not a cudnnSoftmaxAlgorithm_t", (int)algo);
    if (mode != CUDNN_SOFTMAX_MODE_INSTANCE && mode != CUDNN_SOFTMAX_MODE_CHANNEL)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mode=%d is not a cudnnSoftmaxMode_t", (int)mode);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,
                                                          const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
                                                          const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_algo_mode(algo, mode));
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    FDNN_CHECK(fdnn_check_tensor(yDesc, "yDesc"));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(x, "x");
    FDNN_CHECK_PTR(y, "y");
    FDNN_CHECK(fdnn_ops_same_dims(xDesc, "xDesc", yDesc, "yDesc"));
    FDNN_CHECK(fdnn_ops_same_type(xDesc, "xDesc", yDesc, "yDesc"));
    FDNN_CHECK(fdnn_ops_float_type(xDesc, "xDesc"));
    const double a = fdnn_scalar(alpha, yDesc->dtype), b = fdnn_scalar(beta, yDesc->dtype);
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_softmax_fwd(handle, (int)algo, (int)mode, a, xDesc, x, b, yDesc, y);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnSoftmaxForward: this build has no CUDA backend");
#endif
    }
    const int fast = fdnn_ops_fast_mode();
    if (fast && fdnn_cpu_softmax_fwd_f32((int)algo, (int)mode, a, xDesc, x, b, yDesc, y)) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_ops_fast_missed(fast));
    double *p = fdnn_ops_gather(xDesc, x);
    if (!p) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    sm_geom g = geom(xDesc, mode);
#pragma omp parallel for schedule(static) if (g.groups * g.len > 65536)
    for (int64_t k = 0; k < g.groups; k++) {
        double *v = p + gbase(&g, k);
        double mx = 0;
        if (algo != CUDNN_SOFTMAX_FAST) {
            mx = -INFINITY;
            for (int64_t i = 0; i < g.len; i++) mx = v[i * g.step] > mx || isnan(v[i * g.step]) ? v[i * g.step] : mx;
        }
        double s = 0;
        if (algo == CUDNN_SOFTMAX_LOG) {
            for (int64_t i = 0; i < g.len; i++) s += exp(v[i * g.step] - mx);
            double ls = log(s);
            for (int64_t i = 0; i < g.len; i++) v[i * g.step] = v[i * g.step] - mx - ls;
        } else { /* each exp once: kept in v for the division */
            for (int64_t i = 0; i < g.len; i++) {
                const double e = exp(v[i * g.step] - mx);
                v[i * g.step] = e;
                s += e;
            }
            for (int64_t i = 0; i < g.len; i++) v[i * g.step] /= s;
        }
    }
    fdnn_ops_blend(yDesc, y, p, a, b);
    free(p);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSoftmaxBackward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,
                                                           const void *alpha, const cudnnTensorDescriptor_t yDesc, const void *y,
                                                           const cudnnTensorDescriptor_t dyDesc, const void *dy, const void *beta,
                                                           const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_algo_mode(algo, mode));
    FDNN_CHECK(fdnn_check_tensor(yDesc, "yDesc"));
    FDNN_CHECK(fdnn_check_tensor(dyDesc, "dyDesc"));
    FDNN_CHECK(fdnn_check_tensor(dxDesc, "dxDesc"));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(y, "y");
    FDNN_CHECK_PTR(dy, "dy");
    FDNN_CHECK_PTR(dx, "dx");
    FDNN_CHECK(fdnn_ops_same_dims(yDesc, "yDesc", dxDesc, "dxDesc"));
    FDNN_CHECK(fdnn_ops_same_dims(dyDesc, "dyDesc", dxDesc, "dxDesc"));
    FDNN_CHECK(fdnn_ops_same_type(yDesc, "yDesc", dxDesc, "dxDesc"));
    FDNN_CHECK(fdnn_ops_same_type(dyDesc, "dyDesc", dxDesc, "dxDesc"));
    FDNN_CHECK(fdnn_ops_float_type(dxDesc, "dxDesc"));
    const double a = fdnn_scalar(alpha, dxDesc->dtype), b = fdnn_scalar(beta, dxDesc->dtype);
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_softmax_bwd(handle, (int)algo, (int)mode, a, yDesc, y, dyDesc, dy, b, dxDesc, dx);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnSoftmaxBackward: this build has no CUDA backend");
#endif
    }
    const int fast = fdnn_ops_fast_mode();
    if (fast && fdnn_cpu_softmax_bwd_f32((int)algo, (int)mode, a, yDesc, y, dyDesc, dy, b, dxDesc, dx)) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_ops_fast_missed(fast));
    double *py = fdnn_ops_gather(yDesc, y), *pd = fdnn_ops_gather(dyDesc, dy);
    if (!py || !pd) {
        free(py);
        free(pd);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
    sm_geom g = geom(yDesc, mode);
#pragma omp parallel for schedule(static) if (g.groups * g.len > 65536)
    for (int64_t k = 0; k < g.groups; k++) {
        int64_t o = gbase(&g, k);
        const double *yy = py + o;
        double *d = pd + o;
        double s = 0;
        if (algo == CUDNN_SOFTMAX_LOG) {
            for (int64_t i = 0; i < g.len; i++) s += d[i * g.step];
            for (int64_t i = 0; i < g.len; i++) d[i * g.step] -= exp(yy[i * g.step]) * s;
        } else {
            for (int64_t i = 0; i < g.len; i++) s += d[i * g.step] * yy[i * g.step];
            for (int64_t i = 0; i < g.len; i++) d[i * g.step] = yy[i * g.step] * (d[i * g.step] - s);
        }
    }
    fdnn_ops_blend(dxDesc, dx, pd, a, b);
    free(py);
    free(pd);
    return CUDNN_STATUS_SUCCESS;
}
