/* LRN descriptor, cross-channel LRN and divisive normalisation on the CPU and CUDA (src/cuda/ops_lrn.cu) backends.
 * LRN (cuDNN's documented formula): y = x / (k + alpha/n * sum_{window over C} x^2)^beta with
 * a window of lrnN channels, lookBehind = (lrnN-1)/2, lookAhead = lrnN-1-lookBehind.
 * Divisive normalisation (PRECOMPUTED_MEANS) is NVIDIA's formula as measured on an H200 against
 * cuDNN 9.19 with tests/compat/ops_compat.c: per image and channel, with W(i) the lrnN^d window
 * (d = 2 for 4-D, 3 for 5-D; same centring on each spatial dim; out-of-range positions skipped)
 *   y_i = x_i / (k + alpha/n^d * sum_{j in W(i)} (x_j - m_i)^2)^beta
 * i.e. the numerator is x itself (not x - means) and the centre element's mean m_i is subtracted
 * for every j of the window (means NULL = 0). The backward returns the exact derivatives of
 * that forward, dx = d(sum dy*y)/dx and dMeans = d(sum dy*y)/dmeans (as NVIDIA's does).
 * temp/temp2 must be given (cuDNN requires them); only the CUDA backward uses them, as scratch. */
#include <stdlib.h>
#include "../core/fdnn.h"
#include "../core/ops_desc.h"
#include "../cpu/ops_fast.h"
#include "../cpu/ops_lrn.h"

#ifdef FDNN_HAVE_CUDA
#include "../cuda/cuda_ops.h"
#endif

static cudnnStatus_t check_live(const struct cudnnLRNStruct *d)
{
    if (d == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "normDesc is NULL");
    if (d->magic != FDNN_MAGIC_LRN) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "normDesc is not a live LRN descriptor");
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreateLRNDescriptor(cudnnLRNDescriptor_t *normDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(normDesc, "normDesc");
    struct cudnnLRNStruct *d = calloc(1, sizeof *d);
    if (!d) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    d->magic = FDNN_MAGIC_LRN;
    /* cuDNN's documented defaults */
    d->n = 5;
    d->alpha = 1e-4;
    d->beta = 0.75;
    d->k = 2.0;
    d->is_set = 1;
    *normDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetLRNDescriptor(cudnnLRNDescriptor_t normDesc, unsigned lrnN, double lrnAlpha, double lrnBeta,
                                                            double lrnK)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_live(normDesc));
    if (lrnN < CUDNN_LRN_MIN_N || lrnN > CUDNN_LRN_MAX_N)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "lrnN=%u is outside [CUDNN_LRN_MIN_N=%d, CUDNN_LRN_MAX_N=%d]", lrnN, CUDNN_LRN_MIN_N, CUDNN_LRN_MAX_N);
    if (!(lrnK >= CUDNN_LRN_MIN_K)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "lrnK=%g is below CUDNN_LRN_MIN_K=%g", lrnK, CUDNN_LRN_MIN_K);
    if (!(lrnBeta >= CUDNN_LRN_MIN_BETA))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "lrnBeta=%g is below CUDNN_LRN_MIN_BETA=%g", lrnBeta, CUDNN_LRN_MIN_BETA);
    if (lrnAlpha != lrnAlpha) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "lrnAlpha is NaN");
    normDesc->n = lrnN;
    normDesc->alpha = lrnAlpha;
    normDesc->beta = lrnBeta;
    normDesc->k = lrnK;
    normDesc->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetLRNDescriptor(cudnnLRNDescriptor_t normDesc, unsigned *lrnN, double *lrnAlpha, double *lrnBeta,
                                                            double *lrnK)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_live(normDesc));
    if (!lrnN || !lrnAlpha || !lrnBeta || !lrnK) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    *lrnN = normDesc->n;
    *lrnAlpha = normDesc->alpha;
    *lrnBeta = normDesc->beta;
    *lrnK = normDesc->k;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyLRNDescriptor(cudnnLRNDescriptor_t lrnDesc)
{
    FDNN_API_ENTER();
    if (lrnDesc == NULL) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(check_live(lrnDesc));
    lrnDesc->magic = FDNN_MAGIC_DEAD;
    free(lrnDesc);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_nd(const fdnn_tensor *t, const char *name)
{
    if (t->nb_dims != 4 && t->nb_dims != 5)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s has %d dims; LRN and divisive normalisation support 4-D and 5-D tensors", name, t->nb_dims);
    return fdnn_ops_float_type(t, name);
}

static fdnn_norm_geom lrn_geom(const struct cudnnLRNStruct *d, const fdnn_tensor *t)
{
    fdnn_norm_geom g;
    g.outer = t->dim[0];
    g.inner = 1;
    for (int i = 2; i < t->nb_dims; i++) g.inner *= t->dim[i];
    g.ax[0] = t->dim[1]; g.ax[1] = 1; g.ax[2] = 1;
    g.win[0] = (int)d->n; g.win[1] = 1; g.win[2] = 1;
    g.alpha = d->alpha; g.beta = d->beta; g.k = d->k;
    return g;
}

static fdnn_norm_geom divnorm_geom(const struct cudnnLRNStruct *d, const fdnn_tensor *t)
{
    fdnn_norm_geom g;
    g.outer = (int64_t)t->dim[0] * t->dim[1];
    g.inner = 1;
    int five = t->nb_dims == 5;
    g.ax[0] = five ? t->dim[2] : 1;
    g.ax[1] = t->dim[t->nb_dims - 2];
    g.ax[2] = t->dim[t->nb_dims - 1];
    g.win[0] = five ? (int)d->n : 1;
    g.win[1] = g.win[2] = (int)d->n;
    g.alpha = d->alpha; g.beta = d->beta; g.k = d->k;
    return g;
}

static cudnnStatus_t oom(void) { return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory"); }

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnLRNCrossChannelForward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc, cudnnLRNMode_t lrnMode,
                                                                  const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
                                                                  const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_live(normDesc));
    if (lrnMode != CUDNN_LRN_CROSS_CHANNEL_DIM1) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "lrnMode=%d is not CUDNN_LRN_CROSS_CHANNEL_DIM1", (int)lrnMode);
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    FDNN_CHECK(fdnn_check_tensor(yDesc, "yDesc"));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(x, "x");
    FDNN_CHECK_PTR(y, "y");
    FDNN_CHECK(fdnn_ops_same_dims(xDesc, "xDesc", yDesc, "yDesc"));
    FDNN_CHECK(fdnn_ops_same_type(xDesc, "xDesc", yDesc, "yDesc"));
    FDNN_CHECK(check_nd(xDesc, "xDesc"));
    const double a = fdnn_scalar(alpha, yDesc->dtype), b = fdnn_scalar(beta, yDesc->dtype);
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_norm_fwd(handle, normDesc, 0, a, xDesc, x, NULL, b, yDesc, y);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnLRNCrossChannelForward: this build has no CUDA backend");
#endif
    }
    const int fast = fdnn_ops_fast_mode();
    if (fast && fdnn_cpu_lrn_fwd_f32(normDesc, a, xDesc, x, b, yDesc, y)) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_ops_fast_missed(fast));
    fdnn_norm_geom g = lrn_geom(normDesc, xDesc);
    double *px = fdnn_ops_gather(xDesc, x), *py = malloc(sizeof(double) * (size_t)fdnn_tensor_elems(xDesc));
    if (!px || !py || fdnn_norm_fwd(&g, px, NULL, py) != 0) { free(px); free(py); return oom(); }
    fdnn_ops_blend(yDesc, y, py, a, b);
    free(px);
    free(py);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnLRNCrossChannelBackward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc, cudnnLRNMode_t lrnMode,
                                                                   const void *alpha, const cudnnTensorDescriptor_t yDesc, const void *y,
                                                                   const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                                   const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                                                   const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_live(normDesc));
    if (lrnMode != CUDNN_LRN_CROSS_CHANNEL_DIM1) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "lrnMode=%d is not CUDNN_LRN_CROSS_CHANNEL_DIM1", (int)lrnMode);
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
    FDNN_CHECK(fdnn_ops_same_dims(yDesc, "yDesc", xDesc, "xDesc"));
    FDNN_CHECK(fdnn_ops_same_dims(dyDesc, "dyDesc", xDesc, "xDesc"));
    FDNN_CHECK(fdnn_ops_same_dims(dxDesc, "dxDesc", xDesc, "xDesc"));
    FDNN_CHECK(fdnn_ops_same_type(yDesc, "yDesc", xDesc, "xDesc"));
    FDNN_CHECK(fdnn_ops_same_type(dyDesc, "dyDesc", xDesc, "xDesc"));
    FDNN_CHECK(fdnn_ops_same_type(dxDesc, "dxDesc", xDesc, "xDesc"));
    FDNN_CHECK(check_nd(xDesc, "xDesc"));
    const double a = fdnn_scalar(alpha, dxDesc->dtype), b = fdnn_scalar(beta, dxDesc->dtype);
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_norm_bwd(handle, normDesc, 0, a, xDesc, x, NULL, dyDesc, dy, b, dxDesc, dx, NULL, NULL, NULL);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnLRNCrossChannelBackward: this build has no CUDA backend");
#endif
    }
    const int fast = fdnn_ops_fast_mode();
    if (fast && fdnn_cpu_lrn_bwd_f32(normDesc, a, dyDesc, dy, xDesc, x, b, dxDesc, dx)) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_ops_fast_missed(fast));
    fdnn_norm_geom g = lrn_geom(normDesc, xDesc);
    /* the gradient is formed from x (y is implied by x and not needed) */
    double *px = fdnn_ops_gather(xDesc, x), *pdy = fdnn_ops_gather(dyDesc, dy);
    double *pdx = malloc(sizeof(double) * (size_t)fdnn_tensor_elems(xDesc));
    if (!px || !pdy || !pdx || fdnn_norm_bwd(&g, px, NULL, pdy, pdx, NULL) != 0) { free(px); free(pdy); free(pdx); return oom(); }
    fdnn_ops_blend(dxDesc, dx, pdx, a, b);
    free(px);
    free(pdy);
    free(pdx);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDivisiveNormalizationForward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc, cudnnDivNormMode_t mode,
                                                                        const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
                                                                        const void *means, void *temp, void *temp2, const void *beta,
                                                                        const cudnnTensorDescriptor_t yDesc, void *y)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_live(normDesc));
    if (mode != CUDNN_DIVNORM_PRECOMPUTED_MEANS) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mode=%d is not CUDNN_DIVNORM_PRECOMPUTED_MEANS", (int)mode);
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    FDNN_CHECK(fdnn_check_tensor(yDesc, "yDesc"));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(x, "x");
    FDNN_CHECK_PTR(temp, "temp");
    FDNN_CHECK_PTR(temp2, "temp2");
    FDNN_CHECK_PTR(y, "y");
    FDNN_CHECK(fdnn_ops_same_dims(xDesc, "xDesc", yDesc, "yDesc"));
    FDNN_CHECK(fdnn_ops_same_type(xDesc, "xDesc", yDesc, "yDesc"));
    FDNN_CHECK(check_nd(xDesc, "xDesc"));
    const double a = fdnn_scalar(alpha, yDesc->dtype), b = fdnn_scalar(beta, yDesc->dtype);
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_norm_fwd(handle, normDesc, 1, a, xDesc, x, means, b, yDesc, y);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnDivisiveNormalizationForward: this build has no CUDA backend");
#endif
    }
    const int fast = fdnn_ops_fast_mode();
    if (fast && fdnn_cpu_divnorm_fwd_f32(normDesc, a, xDesc, x, means, b, yDesc, y)) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_ops_fast_missed(fast));
    fdnn_norm_geom g = divnorm_geom(normDesc, xDesc);
    double *px = fdnn_ops_gather(xDesc, x), *pm = means ? fdnn_ops_gather(xDesc, means) : NULL;
    double *py = malloc(sizeof(double) * (size_t)fdnn_tensor_elems(xDesc));
    if (!px || (means && !pm) || !py || fdnn_norm_fwd(&g, px, pm, py) != 0) { free(px); free(pm); free(py); return oom(); }
    fdnn_ops_blend(yDesc, y, py, a, b);
    free(px);
    free(pm);
    free(py);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDivisiveNormalizationBackward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                                                         cudnnDivNormMode_t mode, const void *alpha,
                                                                         const cudnnTensorDescriptor_t xDesc, const void *x, const void *means,
                                                                         const void *dy, void *temp, void *temp2, const void *beta,
                                                                         const cudnnTensorDescriptor_t dXdMeansDesc, void *dx, void *dMeans)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_live(normDesc));
    if (mode != CUDNN_DIVNORM_PRECOMPUTED_MEANS) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mode=%d is not CUDNN_DIVNORM_PRECOMPUTED_MEANS", (int)mode);
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    FDNN_CHECK(fdnn_check_tensor(dXdMeansDesc, "dXdMeansDesc"));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(x, "x");
    FDNN_CHECK_PTR(dy, "dy");
    FDNN_CHECK_PTR(temp, "temp");
    FDNN_CHECK_PTR(temp2, "temp2");
    FDNN_CHECK_PTR(dx, "dx");
    FDNN_CHECK(fdnn_ops_same_dims(xDesc, "xDesc", dXdMeansDesc, "dXdMeansDesc"));
    FDNN_CHECK(fdnn_ops_same_type(xDesc, "xDesc", dXdMeansDesc, "dXdMeansDesc"));
    FDNN_CHECK(check_nd(xDesc, "xDesc"));
    const double a = fdnn_scalar(alpha, dXdMeansDesc->dtype), b = fdnn_scalar(beta, dXdMeansDesc->dtype);
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_norm_bwd(handle, normDesc, 1, a, xDesc, x, means, xDesc, dy, b, dXdMeansDesc, dx, dMeans, temp, temp2);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnDivisiveNormalizationBackward: this build has no CUDA backend");
#endif
    }
    const int fast = fdnn_ops_fast_mode();
    if (fast && fdnn_cpu_divnorm_bwd_f32(normDesc, a, xDesc, x, means, dy, b, dXdMeansDesc, dx, dMeans)) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_ops_fast_missed(fast));
    fdnn_norm_geom g = divnorm_geom(normDesc, xDesc);
    int64_t n = fdnn_tensor_elems(xDesc);
    double *px = fdnn_ops_gather(xDesc, x), *pm = means ? fdnn_ops_gather(xDesc, means) : NULL, *pdy = fdnn_ops_gather(xDesc, dy);
    double *pdx = malloc(sizeof(double) * (size_t)n), *pdm = dMeans ? malloc(sizeof(double) * (size_t)n) : NULL;
    if (!px || (means && !pm) || !pdy || !pdx || (dMeans && !pdm) || fdnn_norm_bwd(&g, px, pm, pdy, pdx, pdm) != 0) {
        free(px); free(pm); free(pdy); free(pdx); free(pdm);
        return oom();
    }
    fdnn_ops_blend(dXdMeansDesc, dx, pdx, a, b);
    if (dMeans) fdnn_ops_blend(dXdMeansDesc, dMeans, pdm, a, b);
    free(px);
    free(pm);
    free(pdy);
    free(pdx);
    free(pdm);
    return CUDNN_STATUS_SUCCESS;
}
