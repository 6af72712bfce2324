/* Convolution execution and algorithm queries (cudnn_cnn_infer.h / cudnn_cnn_train.h).
 * This layer validates, logs, builds an fdnn_conv_problem and calls an implementation from
 * the handle's backend list (src/dispatch/conv.h); it never touches data pointers itself,
 * which on a CUDA handle are device pointers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/fdnn.h"
#include "../core/backend_util.h"
#include "../dispatch/conv.h"
#include "../cpu/conv_cpu.h"
#ifdef FDNN_HAVE_CUDA
#include "../cuda/cuda_ops.h"
#include "../cuda/conv_cuda.h"
#endif

void fdnn_conv_logbench(cudnnHandle_t h, int dir, const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                        const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *y, int algo); /* conv_logbench.c */

static const char *const DIR_NAME[] = {"forward", "backward-data", "backward-filter"};
static const int ALGO_COUNT[] = {CUDNN_CONVOLUTION_FWD_ALGO_COUNT, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                 CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT};

/* One perf entry, independent of the three public struct types (same fields). */
typedef struct perf {
    int algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnDeterminism_t det;
    cudnnMathType_t math;
} perf;

#define COPY_PERF(dst, src, n, T)                                              \
    do {                                                                       \
        for (int i_ = 0; i_ < (n); i_++) {                                     \
            memset(&(dst)[i_], 0, sizeof((dst)[i_]));                          \
            (dst)[i_].algo = (T)(src)[i_].algo;                                \
            (dst)[i_].status = (src)[i_].status;                               \
            (dst)[i_].time = (src)[i_].time;                                   \
            (dst)[i_].memory = (src)[i_].memory;                               \
            (dst)[i_].determinism = (src)[i_].det;                             \
            (dst)[i_].mathType = (src)[i_].math;                               \
        }                                                                      \
    } while (0)

static void log_problem(cudnnHandle_t h, fdnn_conv_dir dir, const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                        const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *y, int algo, size_t ws)
{
    if (!fdnn_log_on(CUDNN_SEV_INFO)) return;
    char bx[256], bw[256], bc[256], by[256];
    FDNN_API_LOG(h, "%s: %s=%s %s=%s conv=%s %s=%s algo=%d workSpaceSizeInBytes=%zu", DIR_NAME[dir],
             dir == FDNN_CONV_BWD_DATA ? "dx" : "x", fdnn_tensor_str(x, bx, sizeof bx), dir == FDNN_CONV_BWD_FILTER ? "dw" : "w",
             fdnn_filter_str(w, bw, sizeof bw), fdnn_conv_str(c, bc, sizeof bc), dir == FDNN_CONV_FWD ? "y" : "dy",
             fdnn_tensor_str(y, by, sizeof by), algo, ws);
}

static cudnnStatus_t build(cudnnHandle_t h, fdnn_conv_dir dir, const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                           const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *y, fdnn_conv_problem *p)
{
    FDNN_CHECK(fdnn_check_handle(h, "handle"));
    return fdnn_conv_build_problem(dir, x, w, c, y, p);
}

static cudnnStatus_t check_algo(fdnn_conv_dir dir, int algo)
{
    if (algo < 0 || algo >= ALGO_COUNT[dir])
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "algo=%d is not a %s algorithm (valid: 0..%d)", algo, DIR_NAME[dir], ALGO_COUNT[dir] - 1);
    return CUDNN_STATUS_SUCCESS;
}

/* Pick the implementation for algo and check the workspace; logs the choice. */
static cudnnStatus_t choose(cudnnHandle_t h, const fdnn_conv_problem *p, int algo, const void *ws, size_t ws_size,
                            const fdnn_conv_impl **impl)
{
    FDNN_CHECK(check_algo(p->dir, algo));
    FDNN_CHECK(fdnn_conv_select(h, p, algo, impl));
    size_t need = (*impl)->workspace(p);
    if (ws_size < need)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workSpaceSizeInBytes=%zu is smaller than the %zu bytes %s algorithm %d needs", ws_size,
                         need, DIR_NAME[p->dir], algo);
    if (need > 0 && ws == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workSpace is NULL but %zu bytes are needed", need);
    if (fdnn_log_on(CUDNN_SEV_INFO)) FDNN_API_LOG(h, "%s algorithm %d runs as %s", DIR_NAME[p->dir], algo, (*impl)->name);
    return CUDNN_STATUS_SUCCESS;
}

/* The three main directions share this body. */
static cudnnStatus_t execute(cudnnHandle_t h, fdnn_conv_dir dir, const struct cudnnTensorStruct *xd, const struct cudnnFilterStruct *wd,
                             const struct cudnnConvolutionStruct *cd, const struct cudnnTensorStruct *yd, int algo, const void *alpha,
                             const void *beta, const void *x, const void *w, const void *y, void *out, void *ws, size_t ws_size)
{
    fdnn_conv_problem p;
    FDNN_CHECK(build(h, dir, xd, wd, cd, yd, &p));
    log_problem(h, dir, xd, wd, cd, yd, algo, ws_size);
    fdnn_conv_logbench(h, (int)dir, xd, wd, cd, yd, algo);
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    if (dir != FDNN_CONV_FWD) FDNN_CHECK_PTR(y, "dy");
    if (dir != FDNN_CONV_BWD_FILTER) FDNN_CHECK_PTR(w, "w");
    if (dir != FDNN_CONV_BWD_DATA) FDNN_CHECK_PTR(x, "x");
    FDNN_CHECK_PTR(out, dir == FDNN_CONV_FWD ? "y" : dir == FDNN_CONV_BWD_DATA ? "dx" : "dw");
    const fdnn_conv_impl *impl;
    FDNN_CHECK(choose(h, &p, algo, ws, ws_size, &impl));
    fdnn_conv_args a = {x, w, y, out, ws, ws_size, fdnn_scalar(alpha, p.xtype), fdnn_scalar(beta, p.xtype)};
    return fdnn_conv_run(h, &p, impl, &a);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc,
                                                              const void *x, const cudnnFilterDescriptor_t wDesc, const void *w,
                                                              const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
                                                              void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
                                                              const cudnnTensorDescriptor_t yDesc, void *y)
{
    FDNN_API_ENTER();
    return execute(handle, FDNN_CONV_FWD, xDesc, wDesc, convDesc, yDesc, (int)algo, alpha, beta, x, w, NULL, y, workSpace,
                   workSpaceSizeInBytes);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha, const cudnnFilterDescriptor_t wDesc,
                                                                   const void *w, const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                                   const cudnnConvolutionDescriptor_t convDesc,
                                                                   cudnnConvolutionBwdDataAlgo_t algo, void *workSpace,
                                                                   size_t workSpaceSizeInBytes, const void *beta,
                                                                   const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    FDNN_API_ENTER();
    return execute(handle, FDNN_CONV_BWD_DATA, dxDesc, wDesc, convDesc, dyDesc, (int)algo, alpha, beta, NULL, w, dy, dx, workSpace,
                   workSpaceSizeInBytes);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void *alpha,
                                                                     const cudnnTensorDescriptor_t xDesc, const void *x,
                                                                     const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                                     const cudnnConvolutionDescriptor_t convDesc,
                                                                     cudnnConvolutionBwdFilterAlgo_t algo, void *workSpace,
                                                                     size_t workSpaceSizeInBytes, const void *beta,
                                                                     const cudnnFilterDescriptor_t dwDesc, void *dw)
{
    FDNN_API_ENTER();
    return execute(handle, FDNN_CONV_BWD_FILTER, xDesc, dwDesc, convDesc, dyDesc, (int)algo, alpha, beta, x, NULL, dy, dw, workSpace,
                   workSpaceSizeInBytes);
}

/* ------------------------------------------------------------------ queries */

/* Heuristic list: every algorithm enum value once; those an implementation of this backend
 * can run first (list order), then the rest with NOT_SUPPORTED. Returns the entry count. */
static int heuristic(cudnnHandle_t h, const fdnn_conv_problem *p, perf *out, const fdnn_conv_impl **impls)
{
    int count = ALGO_COUNT[p->dir], m = 0;
    int taken[FDNN_CONV_MAX_ALGOS] = {0};
    const fdnn_conv_impl *runnable[FDNN_CONV_MAX_ALGOS];
    int nr = fdnn_conv_heuristic_impls(h, p, count, runnable);
    for (int i = 0; i < nr; i++) {
        const fdnn_conv_impl *im = runnable[i];
        taken[im->algo] = 1;
        impls[m] = im;
        out[m++] = (perf){im->algo, CUDNN_STATUS_SUCCESS, -1.0f, im->workspace(p),
                          im->deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC, im->math};
    }
    int ok = m;
    for (int a = 0; a < count; a++)
        if (!taken[a]) {
            impls[m] = NULL;
            out[m++] = (perf){a, CUDNN_STATUS_NOT_SUPPORTED, -1.0f, 0, CUDNN_NON_DETERMINISTIC, p->math_type};
        }
    (void)ok;
    return m;
}

static cudnnStatus_t check_query_out(int requested, int *returned, const void *perf_results)
{
    if (requested <= 0) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "requestedAlgoCount=%d must be positive", requested);
    FDNN_CHECK_PTR(returned, "returnedAlgoCount");
    FDNN_CHECK_PTR(perf_results, "perfResults");
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t get_v7(cudnnHandle_t h, fdnn_conv_dir dir, const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                            const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *y, int requested, int *returned,
                            const void *res, perf *out, int *n)
{
    fdnn_conv_problem p;
    FDNN_CHECK(build(h, dir, x, w, c, y, &p));
    log_problem(h, dir, x, w, c, y, -1, 0);
    FDNN_CHECK(check_query_out(requested, returned, res));
    const fdnn_conv_impl *impls[16];
    int m = heuristic(h, &p, out, impls);
    *n = m < requested ? m : requested;
    *returned = *n;
    return CUDNN_STATUS_SUCCESS;
}

/* Times every runnable entry of the heuristic list. buf[0..2] = x, w, y (caller's for Ex,
 * else allocated here); out_idx selects which one is written. ws: caller workspace (Ex) or
 * NULL to allocate per implementation. */
static cudnnStatus_t find(cudnnHandle_t h, const fdnn_conv_problem *p, const void *bx, const void *bw, const void *by, void *bout, void *ws,
                          size_t ws_size, int allocate_ws, perf *out, int *m_out)
{
    const fdnn_conv_impl *impls[16];
    int m = heuristic(h, p, out, impls);
    for (int i = 0; i < m; i++) {
        if (!impls[i]) continue;
        size_t need = impls[i]->workspace(p);
        void *w = ws;
        if (allocate_ws) {
            w = need ? fdnn_mem_alloc(h, need) : NULL;
            if (need && !w) {
                out[i].status = CUDNN_STATUS_ALLOC_FAILED;
                continue;
            }
        } else if (need > ws_size) {
            out[i].status = CUDNN_STATUS_ALLOC_FAILED; /* caller's workspace is too small for it */
            continue;
        }
        fdnn_conv_args a = {bx, bw, by, bout, w, allocate_ws ? need : ws_size, 1.0, 0.0};
        double best = -1;
        for (int rep = 0; rep < 2; rep++) {
            fdnn_timer t;
            cudnnStatus_t st = fdnn_timer_start(h, &t);
            if (st == CUDNN_STATUS_SUCCESS) st = impls[i]->run(h, p, &a);
            double ms = fdnn_timer_stop_ms(h, &t);
            if (st != CUDNN_STATUS_SUCCESS) {
                out[i].status = st;
                break;
            }
            if (best < 0 || ms < best) best = ms;
            if (ms > 20.0) break; /* slow enough that one run is a fair measurement */
        }
        out[i].time = (float)best;
        if (allocate_ws && w) fdnn_mem_free(h, w);
    }
    /* runnable entries fastest first, then the others in heuristic order (stable) */
    for (int i = 1; i < m; i++) {
        perf e = out[i];
        int key_ok = e.status == CUDNN_STATUS_SUCCESS;
        int j = i;
        while (j > 0) {
            perf *q = &out[j - 1];
            int q_ok = q->status == CUDNN_STATUS_SUCCESS;
            if ((key_ok && !q_ok) || (key_ok && q_ok && e.time < q->time)) {
                out[j] = *q;
                j--;
            } else
                break;
        }
        out[j] = e;
    }
    for (int i = 0; i < m; i++)
        if (out[i].status != CUDNN_STATUS_SUCCESS) out[i].time = -1.0f;
    *m_out = m;
    return fdnn_sync(h);
}

static size_t tensor_bytes(const struct cudnnTensorStruct *t) { return (size_t)fdnn_tensor_span(t) * fdnn_dtype_size(t->dtype); }
static size_t filter_bytes(const struct cudnnFilterStruct *f) { return (size_t)(fdnn_filter_elems(f) / f->vect) * fdnn_dtype_size(f->dtype); }

static cudnnStatus_t find_alloc(cudnnHandle_t h, fdnn_conv_dir dir, const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                                const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *y, int requested, int *returned,
                                const void *res, perf *out, int *n)
{
    fdnn_conv_problem p;
    FDNN_CHECK(build(h, dir, x, w, c, y, &p));
    log_problem(h, dir, x, w, c, y, -1, 0);
    FDNN_CHECK(check_query_out(requested, returned, res));
    size_t sz[3] = {tensor_bytes(x), filter_bytes(w), tensor_bytes(y)};
    void *b[3] = {NULL, NULL, NULL};
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    for (int i = 0; i < 3 && st == CUDNN_STATUS_SUCCESS; i++) {
        b[i] = fdnn_mem_alloc(h, sz[i]);
        if (!b[i]) st = FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate %zu bytes of scratch for the timing runs", sz[i]);
        else st = fdnn_mem_zero(h, b[i], sz[i]);
    }
    int m = 0;
    if (st == CUDNN_STATUS_SUCCESS) {
        void *o = dir == FDNN_CONV_FWD ? b[2] : dir == FDNN_CONV_BWD_DATA ? b[0] : b[1];
        st = find(h, &p, b[0], b[1], b[2], o, NULL, 0, 1, out, &m);
    }
    for (int i = 0; i < 3; i++)
        if (b[i]) fdnn_mem_free(h, b[i]);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    *n = m < requested ? m : requested;
    *returned = *n;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t find_ex(cudnnHandle_t h, fdnn_conv_dir dir, const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                             const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *y, const void *bx, const void *bw,
                             const void *by, void *bout, void *ws, size_t ws_size, int requested, int *returned, const void *res,
                             perf *out, int *n)
{
    fdnn_conv_problem p;
    FDNN_CHECK(build(h, dir, x, w, c, y, &p));
    log_problem(h, dir, x, w, c, y, -1, ws_size);
    FDNN_CHECK(check_query_out(requested, returned, res));
    FDNN_CHECK_PTR(bx, dir == FDNN_CONV_BWD_DATA ? "dx" : "x");
    FDNN_CHECK_PTR(bw, dir == FDNN_CONV_BWD_FILTER ? "dw" : "w");
    FDNN_CHECK_PTR(by, dir == FDNN_CONV_FWD ? "y" : "dy");
    if (ws_size > 0 && ws == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workSpace is NULL but workSpaceSizeInBytes=%zu", ws_size);
    int m = 0;
    FDNN_CHECK(find(h, &p, bx, bw, by, bout, ws, ws_size, 0, out, &m));
    *n = m < requested ? m : requested;
    *returned = *n;
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK_PTR(count, "count");
    *count = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK_PTR(count, "count");
    *count = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK_PTR(count, "count");
    *count = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
                                                                             const cudnnFilterDescriptor_t filterDesc,
                                                                             const cudnnConvolutionDescriptor_t convDesc,
                                                                             const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount,
                                                                             int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    FDNN_API_ENTER();
    perf out[16];
    int n = 0;
    FDNN_CHECK(get_v7(handle, FDNN_CONV_FWD, srcDesc, filterDesc, convDesc, destDesc, requestedAlgoCount, returnedAlgoCount, perfResults, out, &n));
    COPY_PERF(perfResults, out, n, cudnnConvolutionFwdAlgo_t);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc,
                                                                                  const cudnnTensorDescriptor_t diffDesc,
                                                                                  const cudnnConvolutionDescriptor_t convDesc,
                                                                                  const cudnnTensorDescriptor_t gradDesc, const int requestedAlgoCount,
                                                                                  int *returnedAlgoCount,
                                                                                  cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    FDNN_API_ENTER();
    perf out[16];
    int n = 0;
    FDNN_CHECK(get_v7(handle, FDNN_CONV_BWD_DATA, gradDesc, filterDesc, convDesc, diffDesc, requestedAlgoCount, returnedAlgoCount, perfResults, out, &n));
    COPY_PERF(perfResults, out, n, cudnnConvolutionBwdDataAlgo_t);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
                                                                                    const cudnnTensorDescriptor_t diffDesc,
                                                                                    const cudnnConvolutionDescriptor_t convDesc,
                                                                                    const cudnnFilterDescriptor_t gradDesc,
                                                                                    const int requestedAlgoCount, int *returnedAlgoCount,
                                                                                    cudnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
    FDNN_API_ENTER();
    perf out[16];
    int n = 0;
    FDNN_CHECK(get_v7(handle, FDNN_CONV_BWD_FILTER, srcDesc, gradDesc, convDesc, diffDesc, requestedAlgoCount, returnedAlgoCount, perfResults, out, &n));
    COPY_PERF(perfResults, out, n, cudnnConvolutionBwdFilterAlgo_t);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionForwardAlgorithm(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                                           const cudnnFilterDescriptor_t wDesc,
                                                                           const cudnnConvolutionDescriptor_t convDesc,
                                                                           const cudnnTensorDescriptor_t yDesc, const int requestedAlgoCount,
                                                                           int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    FDNN_API_ENTER();
    perf out[16];
    int n = 0;
    FDNN_CHECK(find_alloc(handle, FDNN_CONV_FWD, xDesc, wDesc, convDesc, yDesc, requestedAlgoCount, returnedAlgoCount, perfResults, out, &n));
    COPY_PERF(perfResults, out, n, cudnnConvolutionFwdAlgo_t);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardDataAlgorithm(cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
                                                                                const cudnnTensorDescriptor_t dyDesc,
                                                                                const cudnnConvolutionDescriptor_t convDesc,
                                                                                const cudnnTensorDescriptor_t dxDesc, const int requestedAlgoCount,
                                                                                int *returnedAlgoCount,
                                                                                cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    FDNN_API_ENTER();
    perf out[16];
    int n = 0;
    FDNN_CHECK(find_alloc(handle, FDNN_CONV_BWD_DATA, dxDesc, wDesc, convDesc, dyDesc, requestedAlgoCount, returnedAlgoCount, perfResults, out, &n));
    COPY_PERF(perfResults, out, n, cudnnConvolutionBwdDataAlgo_t);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardFilterAlgorithm(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                                                  const cudnnTensorDescriptor_t dyDesc,
                                                                                  const cudnnConvolutionDescriptor_t convDesc,
                                                                                  const cudnnFilterDescriptor_t dwDesc, const int requestedAlgoCount,
                                                                                  int *returnedAlgoCount,
                                                                                  cudnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
    FDNN_API_ENTER();
    perf out[16];
    int n = 0;
    FDNN_CHECK(find_alloc(handle, FDNN_CONV_BWD_FILTER, xDesc, dwDesc, convDesc, dyDesc, requestedAlgoCount, returnedAlgoCount, perfResults, out, &n));
    COPY_PERF(perfResults, out, n, cudnnConvolutionBwdFilterAlgo_t);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                                             const void *x, const cudnnFilterDescriptor_t wDesc, const void *w,
                                                                             const cudnnConvolutionDescriptor_t convDesc,
                                                                             const cudnnTensorDescriptor_t yDesc, void *y,
                                                                             const int requestedAlgoCount, int *returnedAlgoCount,
                                                                             cudnnConvolutionFwdAlgoPerf_t *perfResults, void *workSpace,
                                                                             size_t workSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    perf out[16];
    int n = 0;
    FDNN_CHECK(find_ex(handle, FDNN_CONV_FWD, xDesc, wDesc, convDesc, yDesc, x, w, y, y, workSpace, workSpaceSizeInBytes, requestedAlgoCount,
                       returnedAlgoCount, perfResults, out, &n));
    COPY_PERF(perfResults, out, n, cudnnConvolutionFwdAlgo_t);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardDataAlgorithmEx(cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
                                                                                  const void *w, const cudnnTensorDescriptor_t dyDesc,
                                                                                  const void *dy, const cudnnConvolutionDescriptor_t convDesc,
                                                                                  const cudnnTensorDescriptor_t dxDesc, void *dx,
                                                                                  const int requestedAlgoCount, int *returnedAlgoCount,
                                                                                  cudnnConvolutionBwdDataAlgoPerf_t *perfResults, void *workSpace,
                                                                                  size_t workSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    perf out[16];
    int n = 0;
    FDNN_CHECK(find_ex(handle, FDNN_CONV_BWD_DATA, dxDesc, wDesc, convDesc, dyDesc, dx, w, dy, dx, workSpace, workSpaceSizeInBytes,
                       requestedAlgoCount, returnedAlgoCount, perfResults, out, &n));
    COPY_PERF(perfResults, out, n, cudnnConvolutionBwdDataAlgo_t);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardFilterAlgorithmEx(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                                                    const void *x, const cudnnTensorDescriptor_t dyDesc,
                                                                                    const void *y, const cudnnConvolutionDescriptor_t convDesc,
                                                                                    const cudnnFilterDescriptor_t dwDesc, void *dw,
                                                                                    const int requestedAlgoCount, int *returnedAlgoCount,
                                                                                    cudnnConvolutionBwdFilterAlgoPerf_t *perfResults,
                                                                                    void *workSpace, size_t workSpaceSizeInBytes)
{
    FDNN_API_ENTER();
    perf out[16];
    int n = 0;
    FDNN_CHECK(find_ex(handle, FDNN_CONV_BWD_FILTER, xDesc, dwDesc, convDesc, dyDesc, x, dw, y, dw, workSpace, workSpaceSizeInBytes,
                       requestedAlgoCount, returnedAlgoCount, perfResults, out, &n));
    COPY_PERF(perfResults, out, n, cudnnConvolutionBwdFilterAlgo_t);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t workspace_size(cudnnHandle_t h, fdnn_conv_dir dir, const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                                    const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *y, int algo, size_t *size)
{
    fdnn_conv_problem p;
    FDNN_CHECK(build(h, dir, x, w, c, y, &p));
    log_problem(h, dir, x, w, c, y, algo, 0);
    FDNN_CHECK_PTR(size, "sizeInBytes");
    FDNN_CHECK(check_algo(dir, algo));
    const fdnn_conv_impl *impl;
    FDNN_CHECK(fdnn_conv_select(h, &p, algo, &impl));
    *size = impl->workspace(&p);
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                                              const cudnnFilterDescriptor_t wDesc,
                                                                              const cudnnConvolutionDescriptor_t convDesc,
                                                                              const cudnnTensorDescriptor_t yDesc, cudnnConvolutionFwdAlgo_t algo,
                                                                              size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    return workspace_size(handle, FDNN_CONV_FWD, xDesc, wDesc, convDesc, yDesc, (int)algo, sizeInBytes);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
                                                                                   const cudnnTensorDescriptor_t dyDesc,
                                                                                   const cudnnConvolutionDescriptor_t convDesc,
                                                                                   const cudnnTensorDescriptor_t dxDesc,
                                                                                   cudnnConvolutionBwdDataAlgo_t algo, size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    return workspace_size(handle, FDNN_CONV_BWD_DATA, dxDesc, wDesc, convDesc, dyDesc, (int)algo, sizeInBytes);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                                                     const cudnnTensorDescriptor_t dyDesc,
                                                                                     const cudnnConvolutionDescriptor_t convDesc,
                                                                                     const cudnnFilterDescriptor_t gradDesc,
                                                                                     cudnnConvolutionBwdFilterAlgo_t algo, size_t *sizeInBytes)
{
    FDNN_API_ENTER();
    return workspace_size(handle, FDNN_CONV_BWD_FILTER, xDesc, gradDesc, convDesc, dyDesc, (int)algo, sizeInBytes);
}

/* ------------------------------------------------------------ CPU-only extras */

static cudnnStatus_t cpu_only(cudnnHandle_t h)
{
    FDNN_CHECK(fdnn_check_handle(h, "handle"));
    if (h->backend != FDNN_BACKEND_CPU)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s is not implemented on the CUDA backend yet", fdnn_current_api());
    return CUDNN_STATUS_SUCCESS;
}

static void tensor5(const struct cudnnTensorStruct *t, int64_t s[5], int d[3])
{
    s[0] = t->stride[0];
    s[1] = t->stride[1];
    if (t->nb_dims == 4) {
        s[2] = 0; s[3] = t->stride[2]; s[4] = t->stride[3];
        d[0] = 1; d[1] = t->dim[2]; d[2] = t->dim[3];
    } else {
        s[2] = t->stride[2]; s[3] = t->stride[3]; s[4] = t->stride[4];
        d[0] = t->dim[2]; d[1] = t->dim[3]; d[2] = t->dim[4];
    }
}

/* bias descriptor: 1 x K x 1 x 1 (x 1) with the rank of y */
static cudnnStatus_t check_bias_desc(const struct cudnnTensorStruct *b, const char *bn, const struct cudnnTensorStruct *y, const char *yn)
{
    FDNN_CHECK(fdnn_check_tensor(b, bn));
    if (b->nb_dims != y->nb_dims)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has %d dims but %s has %d", bn, b->nb_dims, yn, y->nb_dims);
    for (int i = 0; i < b->nb_dims; i++)
        if (b->dim[i] != (i == 1 ? y->dim[1] : 1))
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s dim %d is %d; it must be 1 x C(%d) x 1 x 1", bn, i, b->dim[i], y->dim[1]);
    if (b->vect > 1) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s: vectorised bias tensors are not supported", bn);
    return CUDNN_STATUS_SUCCESS;
}

#ifdef FDNN_HAVE_CUDA
/* The CUDA epilogue as a sequence of launches on the handle's stream: y = alpha2*z (or
 * nothing), y = alpha1*conv(x) + (alpha2 != 0)*y, y += bias, y = act(y). Intermediate values are
 * rounded to y's type between steps (cuDNN's fused kernels round once). */
static cudnnStatus_t cuda_bias_act(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_impl *impl, const void *x, const void *w,
                                   void *ws, size_t ws_size, double a1, double a2, const struct cudnnTensorStruct *zd, const void *z,
                                   const struct cudnnTensorStruct *bd, const void *bias, const struct cudnnActivationStruct *act,
                                   const struct cudnnTensorStruct *yd, void *y)
{
    if (a2 != 0.0) {
        int same = z == y && memcmp(zd->stride, yd->stride, sizeof(int) * (size_t)yd->nb_dims) == 0;
        if (same) {
            if (a2 != 1.0) FDNN_CHECK(fdnn_cuda_scale_tensor(h, yd, y, a2));
        } else {
            FDNN_CHECK(fdnn_cuda_transform_tensor(h, a2, zd, z, 0.0, yd, y));
        }
    }
    fdnn_conv_args a = {x, w, NULL, y, ws, ws_size, a1, a2 != 0.0 ? 1.0 : 0.0};
    FDNN_CHECK(impl->run(h, p, &a));
    FDNN_CHECK(fdnn_cuda_add_broadcast(h, 1.0, bd, bias, 1.0, yd, y));
    if (act->mode == CUDNN_ACTIVATION_RELU)
        FDNN_CHECK(fdnn_cuda_activation_fwd(h, CUDNN_ACTIVATION_RELU, act->coef, act->swish_beta, act->nan_opt == CUDNN_PROPAGATE_NAN, 1.0,
                                            yd, y, 0.0, yd, y));
    return CUDNN_STATUS_SUCCESS;
}
#endif

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void *alpha1, const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnFilterDescriptor_t wDesc,
    const void *w, const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo, void *workSpace, size_t workSpaceSizeInBytes,
    const void *alpha2, const cudnnTensorDescriptor_t zDesc, const void *z, const cudnnTensorDescriptor_t biasDesc, const void *bias,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t yDesc, void *y)
{
    FDNN_API_ENTER();
    fdnn_conv_problem p;
    FDNN_CHECK(build(handle, FDNN_CONV_FWD, xDesc, wDesc, convDesc, yDesc, &p));
    log_problem(handle, FDNN_CONV_FWD, xDesc, wDesc, convDesc, yDesc, (int)algo, workSpaceSizeInBytes);
    fdnn_conv_logbench(handle, (int)FDNN_CONV_FWD, xDesc, wDesc, convDesc, yDesc, (int)algo);
    FDNN_CHECK(fdnn_check_tensor(zDesc, "zDesc"));
    if (zDesc->nb_dims != yDesc->nb_dims || memcmp(zDesc->dim, yDesc->dim, sizeof(int) * (size_t)yDesc->nb_dims) != 0)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "zDesc dims must equal yDesc dims");
    if (zDesc->dtype != yDesc->dtype)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "zDesc type %s differs from yDesc type %s", fdnn_dtype_name(zDesc->dtype),
                         fdnn_dtype_name(yDesc->dtype));
    FDNN_CHECK(check_bias_desc(biasDesc, "biasDesc", yDesc, "yDesc"));
    if (biasDesc->dtype != yDesc->dtype && !(biasDesc->dtype == CUDNN_DATA_FLOAT && yDesc->dtype != CUDNN_DATA_DOUBLE))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "biasDesc type %s must be the output type %s (or FLOAT)", fdnn_dtype_name(biasDesc->dtype),
                         fdnn_dtype_name(yDesc->dtype));
    FDNN_CHECK(fdnn_check_activation(activationDesc, "activationDesc"));
    if (activationDesc->mode != CUDNN_ACTIVATION_RELU && activationDesc->mode != CUDNN_ACTIVATION_IDENTITY)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "activationDesc mode %d: only CUDNN_ACTIVATION_RELU and CUDNN_ACTIVATION_IDENTITY are supported",
                         (int)activationDesc->mode);
    FDNN_CHECK_PTR(alpha1, "alpha1");
    FDNN_CHECK_PTR(alpha2, "alpha2");
    FDNN_CHECK_PTR(x, "x");
    FDNN_CHECK_PTR(w, "w");
    FDNN_CHECK_PTR(z, "z");
    FDNN_CHECK_PTR(bias, "bias");
    FDNN_CHECK_PTR(y, "y");
    const fdnn_conv_impl *impl;
    FDNN_CHECK(choose(handle, &p, (int)algo, workSpace, workSpaceSizeInBytes, &impl));
#ifdef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA && p.compute_type == CUDNN_DATA_INT32) {
        /* INT8 family: one fused kernel that rounds once, exactly as the CPU epilogue does */
        int64_t zs[5];
        int zdim[3];
        tensor5(zDesc, zs, zdim);
        return fdnn_cuda_conv_int8_bias_act(handle, &p, x, w, fdnn_scalar(alpha1, p.xtype), fdnn_scalar(alpha2, p.xtype), z, zs, bias,
                                            biasDesc->dtype, biasDesc->stride[1], activationDesc->mode == CUDNN_ACTIVATION_RELU,
                                            activationDesc->nan_opt == CUDNN_PROPAGATE_NAN, y);
    }
    if (handle->backend == FDNN_BACKEND_CUDA)
        return cuda_bias_act(handle, &p, impl, x, w, workSpace, workSpaceSizeInBytes, fdnn_scalar(alpha1, p.xtype),
                             fdnn_scalar(alpha2, p.xtype), zDesc, z, biasDesc, bias, activationDesc, yDesc, y);
#endif
    fdnn_conv_args a = {x, w, NULL, y, workSpace, workSpaceSizeInBytes, 1.0, 0.0};
    fdnn_bias_act_args e;
    memset(&e, 0, sizeof e);
    e.alpha1 = fdnn_scalar(alpha1, p.xtype);
    e.alpha2 = fdnn_scalar(alpha2, p.xtype);
    e.z = z;
    int zd[3];
    tensor5(zDesc, e.zs, zd);
    e.bias = bias;
    e.bias_stride = biasDesc->stride[1];
    e.btype = biasDesc->dtype;
    e.mode = activationDesc->mode;
    e.coef = activationDesc->coef;
    e.propagate_nan = activationDesc->nan_opt == CUDNN_PROPAGATE_NAN;
    return fdnn_cpu_conv_bias_act(handle, &p, impl, &a, &e);
}

/* api: cpu cuda */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t dyDesc,
                                                                   const void *dy, const void *beta, const cudnnTensorDescriptor_t dbDesc,
                                                                   void *db)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_check_tensor(dyDesc, "dyDesc"));
    FDNN_CHECK(fdnn_check_tensor(dbDesc, "dbDesc"));
    if (fdnn_log_on(CUDNN_SEV_INFO)) {
        char b1[256], b2[256];
        FDNN_API_LOG(handle, "dy=%s db=%s", fdnn_tensor_str(dyDesc, b1, sizeof b1), fdnn_tensor_str(dbDesc, b2, sizeof b2));
    }
    if (dyDesc->nb_dims != 4 && dyDesc->nb_dims != 5)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "dyDesc has %d dims; only 4-D and 5-D tensors are supported", dyDesc->nb_dims);
    FDNN_CHECK(check_bias_desc(dbDesc, "dbDesc", dyDesc, "dyDesc"));
    if (dyDesc->vect > 1) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "dyDesc: vectorised tensors are not supported");
    if (dyDesc->dtype != dbDesc->dtype)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "dyDesc type %s differs from dbDesc type %s", fdnn_dtype_name(dyDesc->dtype),
                         fdnn_dtype_name(dbDesc->dtype));
    cudnnDataType_t t = dyDesc->dtype;
    if (t != CUDNN_DATA_FLOAT && t != CUDNN_DATA_DOUBLE && t != CUDNN_DATA_HALF && t != CUDNN_DATA_BFLOAT16)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "dyDesc type %s: only FLOAT, DOUBLE, HALF and BFLOAT16 are supported", fdnn_dtype_name(t));
    FDNN_CHECK_PTR(alpha, "alpha");
    FDNN_CHECK_PTR(beta, "beta");
    FDNN_CHECK_PTR(dy, "dy");
    FDNN_CHECK_PTR(db, "db");
#ifdef FDNN_HAVE_CUDA
    if (handle->backend == FDNN_BACKEND_CUDA)
        return fdnn_cuda_reduce_tensor(handle, CUDNN_REDUCE_TENSOR_ADD, 0, NULL, fdnn_scalar(alpha, t), dyDesc, dy, fdnn_scalar(beta, t),
                                       dbDesc, db);
#endif
    FDNN_CHECK(cpu_only(handle));
    int64_t s[5];
    int d[3];
    tensor5(dyDesc, s, d);
    fdnn_cpu_conv_bwd_bias(t, dyDesc->dim[0], dyDesc->dim[1], dyDesc->nb_dims - 2, s, d, dy, dbDesc->stride[1], db, fdnn_scalar(alpha, t),
                           fdnn_scalar(beta, t));
    return CUDNN_STATUS_SUCCESS;
}

/* api: cpu | column buffer per image: rows (c,t,r,s), columns output positions, type of x */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnIm2Col(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void *x,
                                                  const cudnnFilterDescriptor_t wDesc, const cudnnConvolutionDescriptor_t convDesc,
                                                  void *colBuffer)
{
    FDNN_API_ENTER();
    FDNN_CHECK(fdnn_check_handle(handle, "handle"));
    FDNN_CHECK(fdnn_check_tensor(xDesc, "xDesc"));
    FDNN_CHECK(fdnn_check_filter(wDesc, "wDesc"));
    FDNN_CHECK(fdnn_check_conv(convDesc, "convDesc"));
    if (fdnn_log_on(CUDNN_SEV_INFO)) {
        char b1[256], b2[256], b3[256];
        FDNN_API_LOG(handle, "x=%s w=%s conv=%s", fdnn_tensor_str(xDesc, b1, sizeof b1), fdnn_filter_str(wDesc, b2, sizeof b2),
                 fdnn_conv_str(convDesc, b3, sizeof b3));
    }
    int od[CUDNN_DIM_MAX];
    if (xDesc->nb_dims != 4 && xDesc->nb_dims != 5)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "xDesc has %d dims; only 4-D and 5-D tensors are supported", xDesc->nb_dims);
    FDNN_CHECK(fdnn_conv_output_dims(convDesc, xDesc, wDesc, xDesc->nb_dims, od));
    /* a packed output descriptor of x's type, so the shared problem builder can validate */
    struct cudnnTensorStruct yt = *xDesc;
    memcpy(yt.dim, od, sizeof(int) * (size_t)xDesc->nb_dims);
    int64_t st = 1;
    for (int i = yt.nb_dims - 1; i >= 0; i--) {
        yt.stride[i] = (int)st;
        st *= (i == 1 && yt.vect > 1) ? yt.dim[i] / yt.vect : yt.dim[i];
    }
    if (xDesc->dtype == CUDNN_DATA_FLOAT || xDesc->dtype == CUDNN_DATA_DOUBLE) {
        if (convDesc->compute_type != xDesc->dtype)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "convDesc computeType %s does not fit xDesc type %s",
                             fdnn_dtype_name(convDesc->compute_type), fdnn_dtype_name(xDesc->dtype));
    }
    fdnn_conv_problem p;
    FDNN_CHECK(fdnn_conv_build_problem(FDNN_CONV_FWD, xDesc, wDesc, convDesc, &yt, &p));
    FDNN_CHECK_PTR(x, "x");
    FDNN_CHECK_PTR(colBuffer, "colBuffer");
    FDNN_CHECK(cpu_only(handle));
    fdnn_cpu_im2col_api(&p, x, colBuffer);
    return CUDNN_STATUS_SUCCESS;
}
