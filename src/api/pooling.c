/* Pooling descriptors (2-D and N-D), output-dim queries and cudnnPoolingForward/Backward on
 * the CPU and CUDA (src/cuda/ops_pool.cu) backends for MAX, MAX_DETERMINISTIC, AVERAGE_COUNT_INCLUDE_PADDING and
 * AVERAGE_COUNT_EXCLUDE_PADDING over 4-D (2-D pooling) and 5-D (3-D pooling) tensors.
 * out = 1 + (in + 2*pad - window) / stride. Max never selects padding; with
 * NOT_PROPAGATE_NAN a NaN input is skipped, with PROPAGATE_NAN it wins. Max backward routes
 * dy to the first maximum of the window (row-major window order), for both MAX modes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../core/fdnn.h"
#include "../core/ops_desc.h"
#include "../cpu/ops_fast.h"

#ifdef FDNN_HAVE_CUDA
#include "../cuda/cuda_ops.h"
#endif

static cudnnStatus_t check_live(const struct cudnnPoolingStruct *d)
{
    if (d == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "poolingDesc is NULL");
    if (d->magic != FDNN_MAGIC_POOLING) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "poolingDesc is not a live pooling descriptor");
    return CUDNN_STATUS_SUCCESS;
}
static cudnnStatus_t check_set(const struct cudnnPoolingStruct *d)
{
    FDNN_CHECK(check_live(d));
    if (!d->is_set) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "poolingDesc was created but never set");
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnCreatePoolingDescriptor(cudnnPoolingDescriptor_t *poolingDesc)
{
    FDNN_API_ENTER();
    FDNN_CHECK_PTR(poolingDesc, "poolingDesc");
    struct cudnnPoolingStruct *d = calloc(1, sizeof *d);
    if (!d) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    d->magic = FDNN_MAGIC_POOLING;
    *poolingDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnDestroyPoolingDescriptor(cudnnPoolingDescriptor_t poolingDesc)
{
    FDNN_API_ENTER();
    if (poolingDesc == NULL) return CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(check_live(poolingDesc));
    poolingDesc->magic = FDNN_MAGIC_DEAD;
    free(poolingDesc);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t pool_set(struct cudnnPoolingStruct *d, cudnnPoolingMode_t mode, cudnnNanPropagation_t nan, int nb, const int *win,
                              const int *pad, const int *stride)
{
    if ((int)mode < 0 || mode > CUDNN_POOLING_MAX_DETERMINISTIC)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mode=%d is not a cudnnPoolingMode_t", (int)mode);
    if (nan != CUDNN_NOT_PROPAGATE_NAN && nan != CUDNN_PROPAGATE_NAN)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "maxpoolingNanOpt=%d is not a cudnnNanPropagation_t", (int)nan);
    if (nb < 1 || nb > FDNN_MAX_SPATIAL)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDims=%d must be in [1, %d]", nb, FDNN_MAX_SPATIAL);
    for (int i = 0; i < nb; i++) {
        if (win[i] <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "window dim %d is %d; it must be positive", i, win[i]);
        if (stride[i] <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "stride dim %d is %d; it must be positive", i, stride[i]);
        if (pad[i] < 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "padding dim %d is %d; it must not be negative", i, pad[i]);
    }
    d->mode = mode;
    d->nan_opt = nan;
    d->nb_spatial = nb;
    memcpy(d->window, win, sizeof(int) * (size_t)nb);
    memcpy(d->pad, pad, sizeof(int) * (size_t)nb);
    memcpy(d->stride, stride, sizeof(int) * (size_t)nb);
    d->is_set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t poolingDesc, cudnnPoolingMode_t mode,
                                                                  cudnnNanPropagation_t maxpoolingNanOpt, int windowHeight, int windowWidth,
                                                                  int verticalPadding, int horizontalPadding, int verticalStride,
                                                                  int horizontalStride)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_live(poolingDesc));
    int w[2] = {windowHeight, windowWidth}, p[2] = {verticalPadding, horizontalPadding}, s[2] = {verticalStride, horizontalStride};
    return pool_set(poolingDesc, mode, maxpoolingNanOpt, 2, w, p, s);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetPooling2dDescriptor(const cudnnPoolingDescriptor_t poolingDesc, cudnnPoolingMode_t *mode,
                                                                  cudnnNanPropagation_t *maxpoolingNanOpt, int *windowHeight,
                                                                  int *windowWidth, int *verticalPadding, int *horizontalPadding,
                                                                  int *verticalStride, int *horizontalStride)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_set(poolingDesc));
    if (poolingDesc->nb_spatial != 2)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "poolingDesc has %d spatial dims, not 2", poolingDesc->nb_spatial);
    if (!mode || !maxpoolingNanOpt || !windowHeight || !windowWidth || !verticalPadding || !horizontalPadding || !verticalStride ||
        !horizontalStride)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    const struct cudnnPoolingStruct *d = poolingDesc;
    *mode = d->mode;
    *maxpoolingNanOpt = d->nan_opt;
    *windowHeight = d->window[0]; *windowWidth = d->window[1];
    *verticalPadding = d->pad[0]; *horizontalPadding = d->pad[1];
    *verticalStride = d->stride[0]; *horizontalStride = d->stride[1];
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetPoolingNdDescriptor(cudnnPoolingDescriptor_t poolingDesc, const cudnnPoolingMode_t mode,
                                                                  const cudnnNanPropagation_t maxpoolingNanOpt, int nbDims,
                                                                  const int windowDimA[], const int paddingA[], const int strideA[])
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_live(poolingDesc));
    FDNN_CHECK_PTR(windowDimA, "windowDimA");
    FDNN_CHECK_PTR(paddingA, "paddingA");
    FDNN_CHECK_PTR(strideA, "strideA");
    return pool_set(poolingDesc, mode, maxpoolingNanOpt, nbDims, windowDimA, paddingA, strideA);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetPoolingNdDescriptor(const cudnnPoolingDescriptor_t poolingDesc, int nbDimsRequested,
                                                                  cudnnPoolingMode_t *mode, cudnnNanPropagation_t *maxpoolingNanOpt,
                                                                  int *nbDims, int windowDimA[], int paddingA[], int strideA[])
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_set(poolingDesc));
    if (nbDimsRequested < 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDimsRequested=%d is negative", nbDimsRequested);
    if (!mode || !maxpoolingNanOpt || !nbDims) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    int k = nbDimsRequested < poolingDesc->nb_spatial ? nbDimsRequested : poolingDesc->nb_spatial;
    if (k > 0 && (!windowDimA || !paddingA || !strideA)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output array is NULL");
    *mode = poolingDesc->mode;
    *maxpoolingNanOpt = poolingDesc->nan_opt;
    *nbDims = poolingDesc->nb_spatial;
    for (int i = 0; i < k; i++) {
        windowDimA[i] = poolingDesc->window[i];
        paddingA[i] = poolingDesc->pad[i];
        strideA[i] = poolingDesc->stride[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Output dims for input t (nb_dims == nb_spatial + 2). */
static cudnnStatus_t out_dims(const struct cudnnPoolingStruct *d, const fdnn_tensor *t, int *out)
{
    if (t->nb_dims != d->nb_spatial + 2)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "the input tensor has %d dims but poolingDesc has %d spatial dims (needs %d tensor dims)",
                         t->nb_dims, d->nb_spatial, d->nb_spatial + 2);
    out[0] = t->dim[0];
    out[1] = t->dim[1];
    for (int i = 0; i < d->nb_spatial; i++) {
        int span = t->dim[i + 2] + 2 * d->pad[i] - d->window[i];
        if (span < 0)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "spatial dim %d: input %d plus padding 2*%d is smaller than the window %d", i,
                             t->dim[i + 2], d->pad[i], d->window[i]);
        out[i + 2] = 1 + span / d->stride[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetPoolingNdForwardOutputDim(const cudnnPoolingDescriptor_t poolingDesc,
                                                                        const cudnnTensorDescriptor_t inputTensorDesc, int nbDims,
                                                                        int outputTensorDimA[])
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_set(poolingDesc));
    FDNN_CHECK(fdnn_check_tensor(inputTensorDesc, "inputTensorDesc"));
    FDNN_CHECK_PTR(outputTensorDimA, "outputTensorDimA");
    if (nbDims != poolingDesc->nb_spatial + 2)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDims=%d must be the pooling dims + 2 = %d", nbDims, poolingDesc->nb_spatial + 2);
    int out[CUDNN_DIM_MAX];
    FDNN_CHECK(out_dims(poolingDesc, inputTensorDesc, out));
    memcpy(outputTensorDimA, out, sizeof(int) * (size_t)nbDims);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetPooling2dForwardOutputDim(const cudnnPoolingDescriptor_t poolingDesc,
                                                                        const cudnnTensorDescriptor_t inputTensorDesc, int *n, int *c, int *h,
                                                                        int *w)
{
    FDNN_API_ENTER();
    FDNN_CHECK(check_set(poolingDesc));
    FDNN_CHECK(fdnn_check_tensor(inputTensorDesc, "inputTensorDesc"));
    if (!n || !c || !h || !w) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    if (poolingDesc->nb_spatial != 2)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "poolingDesc has %d spatial dims, not 2", poolingDesc->nb_spatial);
    int out[4];
    FDNN_CHECK(out_dims(poolingDesc, inputTensorDesc, out));
    *n = out[0]; *c = out[1]; *h = out[2]; *w = out[3];
    return CUDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------ compute */
typedef struct {
    int ns, is_max, prop, incl;
    int in[3], out[3], win[3], pad[3], str[3];
    int64_t in_sz, out_sz, win_sz;
} pgeom;

static void make_geom(pgeom *g, const struct cudnnPoolingStruct *d, const fdnn_tensor *x, const fdnn_tensor *y)
{
    g->ns = d->nb_spatial;
    g->is_max = d->mode == CUDNN_POOLING_MAX || d->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    g->incl = d->mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    g->prop = d->nan_opt == CUDNN_PROPAGATE_NAN;
    g->in_sz = g->out_sz = g->win_sz = 1;
    for (int i = 0; i < 3; i++) {
        int act = i < g->ns;
        g->in[i] = act ? x->dim[i + 2] : 1;
        g->out[i] = act ? y->dim[i + 2] : 1;
        g->win[i] = act ? d->window[i] : 1;
        g->pad[i] = act ? d->pad[i] : 0;
        g->str[i] = act ? d->stride[i] : 1;
        g->in_sz *= g->in[i];
        g->out_sz *= g->out[i];
        g->win_sz *= g->win[i];
    }
}

/* Visit the in-bounds inputs of output o in plane p: returns the reduced value, writes the
 * chosen argmax (input index within the plane, -1 if none) and the divisor. */
static double pool_one(const pgeom *g, const double *px, int64_t o, int64_t *arg, double *cnt)
{
    int oi[3];
    int64_t r = o;
    for (int i = 2; i >= 0; i--) { oi[i] = (int)(r % g->out[i]); r /= g->out[i]; }
    double acc = g->is_max ? -INFINITY : 0.0;
    int64_t best = -1, n = 0;
    int found_nan = 0;
    for (int a = 0; a < g->win[0]; a++) {
        int i0 = oi[0] * g->str[0] - g->pad[0] + a;
        if (i0 < 0 || i0 >= g->in[0]) continue;
        for (int b = 0; b < g->win[1]; b++) {
            int i1 = oi[1] * g->str[1] - g->pad[1] + b;
            if (i1 < 0 || i1 >= g->in[1]) continue;
            for (int c = 0; c < g->win[2]; c++) {
                int i2 = oi[2] * g->str[2] - g->pad[2] + c;
                if (i2 < 0 || i2 >= g->in[2]) continue;
                int64_t ii = ((int64_t)i0 * g->in[1] + i1) * g->in[2] + i2;
                double v = px[ii];
                n++;
                if (g->is_max) {
                    if (found_nan) continue;
                    if (isnan(v)) {
                        if (g->prop) { found_nan = 1; acc = v; best = ii; }
                        continue;
                    }
                    if (best < 0 || v > acc) { acc = v; best = ii; }
                } else {
                    acc += v;
                }
            }
        }
    }
    *arg = best;
    if (g->is_max) {
        if (best < 0) acc = n ? NAN : 0.0; /* all-NaN window (not propagated) / window fully in padding */
        *cnt = 1;
    } else {
        *cnt = g->incl ? (double)g->win_sz : (double)n;
        acc = *cnt > 0 ? acc / *cnt : 0.0;
    }
    return acc;
}

static cudnnStatus_t check_pool_tensors(const struct cudnnPoolingStruct *d, const fdnn_tensor *x, const char *xn, const fdnn_tensor *y,
                                        const char *yn)
{
    if (x->nb_dims != 4 && x->nb_dims != 5)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s has %d dims; pooling supports 4-D and 5-D tensors", xn, x->nb_dims);
    int out[CUDNN_DIM_MAX];
    FDNN_CHECK(out_dims(d, x, out));
    if (y->nb_dims != x->nb_dims)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has %d dims but %s has %d", yn, y->nb_dims, xn, x->nb_dims);
    for (int i = 0; i < x->nb_dims; i++)
        if (y->dim[i] != out[i])
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dim %d of %s is %d; the pooling output dim is %d", i, yn, y->dim[i], out[i]);
    FDNN_CHECK(fdnn_ops_same_type(x, xn, y, yn));
    return fdnn_ops_float_type(x, xn);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnPoolingForward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc, const void *alpha,
                                                          const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                                          const cudnnTensorDescriptor_t yDesc, void *y)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_set(poolingDesc));
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    FDNN_CHECK(fdnn_check_tensor(yDesc, "yDesc"));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(x, "x");
    FDNN_CHECK_PTR(y, "y");
    FDNN_CHECK(check_pool_tensors(poolingDesc, xDesc, "xDesc", yDesc, "yDesc"));
    const double a = fdnn_scalar(alpha, yDesc->dtype), b = fdnn_scalar(beta, yDesc->dtype);
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_pooling_fwd(handle, poolingDesc, a, xDesc, x, b, yDesc, y);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnPoolingForward: this build has no CUDA backend");
#endif
    }
    if (fdnn_cpu_pool_fwd_f32(poolingDesc, a, xDesc, x, b, yDesc, y)) return CUDNN_STATUS_SUCCESS;
    pgeom g;
    make_geom(&g, poolingDesc, xDesc, yDesc);
    int64_t planes = (int64_t)xDesc->dim[0] * xDesc->dim[1];
    double *px = fdnn_ops_gather(xDesc, x);
    double *py = malloc(sizeof(double) * (size_t)(planes * g.out_sz));
    if (!px || !py) {
        free(px);
        free(py);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
#pragma omp parallel for schedule(static) if (planes * g.out_sz > 4096)
    for (int64_t k = 0; k < planes * g.out_sz; k++) {
        int64_t p = k / g.out_sz, o = k % g.out_sz, arg;
        double cnt;
        py[k] = pool_one(&g, px + p * g.in_sz, o, &arg, &cnt);
    }
    fdnn_ops_blend(yDesc, y, py, a, b);
    free(px);
    free(py);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnPoolingBackward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc, const void *alpha,
                                                           const cudnnTensorDescriptor_t yDesc, const void *y,
                                                           const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                           const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                                           const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(check_set(poolingDesc));
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
    FDNN_CHECK(check_pool_tensors(poolingDesc, xDesc, "xDesc", yDesc, "yDesc"));
    FDNN_CHECK(fdnn_ops_same_dims(dyDesc, "dyDesc", yDesc, "yDesc"));
    FDNN_CHECK(fdnn_ops_same_dims(dxDesc, "dxDesc", xDesc, "xDesc"));
    FDNN_CHECK(fdnn_ops_same_type(dyDesc, "dyDesc", yDesc, "yDesc"));
    FDNN_CHECK(fdnn_ops_same_type(dxDesc, "dxDesc", xDesc, "xDesc"));
    const double a = fdnn_scalar(alpha, dxDesc->dtype), b = fdnn_scalar(beta, dxDesc->dtype);
    if (handle->backend == FDNN_BACKEND_CUDA) {
#ifdef FDNN_HAVE_CUDA
        return fdnn_cuda_pooling_bwd(handle, poolingDesc, a, dyDesc, dy, xDesc, x, b, dxDesc, dx);
#else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnPoolingBackward: this build has no CUDA backend");
#endif
    }
    int alloc_failed;
    const int fast = fdnn_ops_fast_mode();
    if (fast && fdnn_cpu_pool_bwd_f32(poolingDesc, a, dyDesc, dy, xDesc, x, b, dxDesc, dx, fast == 2, &alloc_failed))
        return alloc_failed ? FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory") : CUDNN_STATUS_SUCCESS;
    FDNN_CHECK(fdnn_ops_fast_missed(fast));
    pgeom g;
    make_geom(&g, poolingDesc, xDesc, yDesc);
    int64_t planes = (int64_t)xDesc->dim[0] * xDesc->dim[1];
    double *px = fdnn_ops_gather(xDesc, x), *pdy = fdnn_ops_gather(dyDesc, dy);
    double *pdx = calloc((size_t)(planes * g.in_sz), sizeof(double));
    if (!px || !pdy || !pdx) {
        free(px);
        free(pdy);
        free(pdx);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
    /* one plane per thread: deterministic scatter */
#pragma omp parallel for schedule(static) if (planes * g.in_sz > 4096)
    for (int64_t p = 0; p < planes; p++) {
        const double *xp = px + p * g.in_sz;
        const double *dyp = pdy + p * g.out_sz;
        double *dxp = pdx + p * g.in_sz;
        for (int64_t o = 0; o < g.out_sz; o++) {
            int64_t arg;
            double cnt;
            pool_one(&g, xp, o, &arg, &cnt);
            if (g.is_max) {
                if (arg >= 0) dxp[arg] += dyp[o];
                continue;
            }
            if (cnt <= 0) continue;
            /* every in-bounds input of the window receives dy / divisor */
            int oi[3];
            int64_t r = o;
            for (int i = 2; i >= 0; i--) { oi[i] = (int)(r % g.out[i]); r /= g.out[i]; }
            double gsh = dyp[o] / cnt;
            for (int a0 = 0; a0 < g.win[0]; a0++) {
                int i0 = oi[0] * g.str[0] - g.pad[0] + a0;
                if (i0 < 0 || i0 >= g.in[0]) continue;
                for (int b0 = 0; b0 < g.win[1]; b0++) {
                    int i1 = oi[1] * g.str[1] - g.pad[1] + b0;
                    if (i1 < 0 || i1 >= g.in[1]) continue;
                    for (int c0 = 0; c0 < g.win[2]; c0++) {
                        int i2 = oi[2] * g.str[2] - g.pad[2] + c0;
                        if (i2 < 0 || i2 >= g.in[2]) continue;
                        dxp[((int64_t)i0 * g.in[1] + i1) * g.in[2] + i2] += gsh;
                    }
                }
            }
        }
    }
    fdnn_ops_blend(dxDesc, dx, pdx, a, b);
    free(px);
    free(pdy);
    free(pdx);
    return CUDNN_STATUS_SUCCESS;
}
