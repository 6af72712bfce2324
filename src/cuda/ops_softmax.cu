/* cudnnSoftmaxForward/Backward on the GPU with the CPU backend's formulas (double math).
 * INSTANCE mode: one block per image reduces over C*spatial with a deterministic tree
 * (max, then sum of exp; or sum of dy*y / dy). CHANNEL mode: one thread per (n, spatial
 * position) loops over C, so neighbouring threads read neighbouring addresses on NCHW.
 * The max keeps NaN (a NaN in the row makes the whole row NaN, like the CPU loop). */
#include <math.h>
#include "ops_dev.cuh"
#include "ew_dense.cuh"

using namespace fdnn_ops;

namespace {

struct SmGeom {
    long long groups, len, S;
    int algo, mode;
};

/* Logical linear index of element i of group g. */
__device__ __forceinline__ long long sm_lin(const SmGeom &g, long long grp, long long i)
{
    if (g.mode == CUDNN_SOFTMAX_MODE_INSTANCE) return grp * g.len + i;
    return (grp / g.S) * g.len * g.S + grp % g.S + i * g.S;
}

__device__ __forceinline__ double nanmax(double a, double b) { return (a != a || b != b) ? (a != a ? a : b) : (a > b ? a : b); }

const int SM_BLOCK = 256;

__global__ void sm_fwd_block(SmGeom g, TV tx, const void *X, TV ty, void *Y, double alpha, double beta)
{
    __shared__ double sh[SM_BLOCK];
    for (long long grp = blockIdx.x; grp < g.groups; grp += gridDim.x) {
        double mx = 0.0;
        if (g.algo != CUDNN_SOFTMAX_FAST) {
            double m = -INFINITY;
            for (long long i = threadIdx.x; i < g.len; i += blockDim.x) m = nanmax(m, ldv(X, tx.dtype, off_lin(tx, sm_lin(g, grp, i))));
            sh[threadIdx.x] = m;
            __syncthreads();
            for (int s = blockDim.x / 2; s > 0; s >>= 1) {
                if ((int)threadIdx.x < s) sh[threadIdx.x] = nanmax(sh[threadIdx.x], sh[threadIdx.x + s]);
                __syncthreads();
            }
            mx = sh[0];
            __syncthreads();
        }
        double s = 0.0;
        for (long long i = threadIdx.x; i < g.len; i += blockDim.x) s += exp(ldv(X, tx.dtype, off_lin(tx, sm_lin(g, grp, i))) - mx);
        s = block_sum(s, sh);
        const double ls = log(s);
        for (long long i = threadIdx.x; i < g.len; i += blockDim.x) {
            const long long l = sm_lin(g, grp, i);
            const double v = ldv(X, tx.dtype, off_lin(tx, l));
            const double r = g.algo == CUDNN_SOFTMAX_LOG ? v - mx - ls : exp(v - mx) / s;
            blendv(Y, ty.dtype, off_lin(ty, l), r, alpha, beta);
        }
    }
}

__global__ void sm_fwd_thread(SmGeom g, TV tx, const void *X, TV ty, void *Y, double alpha, double beta)
{
    for (long long grp = blockIdx.x * (long long)blockDim.x + threadIdx.x; grp < g.groups; grp += (long long)gridDim.x * blockDim.x) {
        double mx = 0.0;
        if (g.algo != CUDNN_SOFTMAX_FAST) {
            mx = -INFINITY;
            for (long long i = 0; i < g.len; i++) mx = nanmax(mx, ldv(X, tx.dtype, off_lin(tx, sm_lin(g, grp, i))));
        }
        double s = 0.0;
        for (long long i = 0; i < g.len; i++) s += exp(ldv(X, tx.dtype, off_lin(tx, sm_lin(g, grp, i))) - mx);
        const double ls = log(s);
        for (long long i = 0; i < g.len; i++) {
            const long long l = sm_lin(g, grp, i);
            const double v = ldv(X, tx.dtype, off_lin(tx, l));
            const double r = g.algo == CUDNN_SOFTMAX_LOG ? v - mx - ls : exp(v - mx) / s;
            blendv(Y, ty.dtype, off_lin(ty, l), r, alpha, beta);
        }
    }
}

__device__ __forceinline__ double bwd_term(int algo, double y, double dy) { return algo == CUDNN_SOFTMAX_LOG ? dy : dy * y; }
__device__ __forceinline__ double bwd_out(int algo, double y, double dy, double s)
{
    return algo == CUDNN_SOFTMAX_LOG ? dy - exp(y) * s : y * (dy - s);
}

__global__ void sm_bwd_block(SmGeom g, TV ty, const void *Y, TV td, const void *DY, TV tx, void *DX, double alpha, double beta)
{
    __shared__ double sh[SM_BLOCK];
    for (long long grp = blockIdx.x; grp < g.groups; grp += gridDim.x) {
        double s = 0.0;
        for (long long i = threadIdx.x; i < g.len; i += blockDim.x) {
            const long long l = sm_lin(g, grp, i);
            s += bwd_term(g.algo, ldv(Y, ty.dtype, off_lin(ty, l)), ldv(DY, td.dtype, off_lin(td, l)));
        }
        s = block_sum(s, sh);
        for (long long i = threadIdx.x; i < g.len; i += blockDim.x) {
            const long long l = sm_lin(g, grp, i);
            const double r = bwd_out(g.algo, ldv(Y, ty.dtype, off_lin(ty, l)), ldv(DY, td.dtype, off_lin(td, l)), s);
            blendv(DX, tx.dtype, off_lin(tx, l), r, alpha, beta);
        }
    }
}

__global__ void sm_bwd_thread(SmGeom g, TV ty, const void *Y, TV td, const void *DY, TV tx, void *DX, double alpha, double beta)
{
    for (long long grp = blockIdx.x * (long long)blockDim.x + threadIdx.x; grp < g.groups; grp += (long long)gridDim.x * blockDim.x) {
        double s = 0.0;
        for (long long i = 0; i < g.len; i++) {
            const long long l = sm_lin(g, grp, i);
            s += bwd_term(g.algo, ldv(Y, ty.dtype, off_lin(ty, l)), ldv(DY, td.dtype, off_lin(td, l)));
        }
        for (long long i = 0; i < g.len; i++) {
            const long long l = sm_lin(g, grp, i);
            const double r = bwd_out(g.algo, ldv(Y, ty.dtype, off_lin(ty, l)), ldv(DY, td.dtype, off_lin(td, l)), s);
            blendv(DX, tx.dtype, off_lin(tx, l), r, alpha, beta);
        }
    }
}

SmGeom sm_geom(const struct cudnnTensorStruct *t, int algo, int mode)
{
    SmGeom g;
    long long N = t->dim[0], C = t->nb_dims > 1 ? t->dim[1] : 1, S = 1;
    for (int i = 2; i < t->nb_dims; i++) S *= t->dim[i];
    g.S = S;
    g.algo = algo;
    g.mode = mode;
    if (mode == CUDNN_SOFTMAX_MODE_INSTANCE) { g.groups = N; g.len = C * S; }
    else { g.groups = N * S; g.len = C; }
    return g;
}

/* One block per row when rows are long (or few); one thread per row otherwise. */
bool use_block(const SmGeom &g) { return g.mode == CUDNN_SOFTMAX_MODE_INSTANCE ? g.len > 32 : (g.len > 1024 && g.groups < 65536); }

/* ---- CHANNEL mode fast path: x, y (dy, dx) with equal packed NCHW or NHWC strides, typed,
 * float math for FLOAT/HALF/BFLOAT16 (double for DOUBLE), 32-bit indices. Forward does max and
 * sum of exp in one online pass (the running sum is rescaled when the max grows), then writes;
 * a NaN anywhere in a row (or +inf, or a row of only -inf) still makes the row NaN, as in the
 * generic two-pass formula. NCHW: one thread per (n, spatial) row
 * walking C with stride S (neighbouring threads read neighbouring addresses). NHWC: one warp
 * per row of C contiguous channels, combined with a fixed shuffle tree (deterministic). ---- */
using fdnn_ewd::Acc;
using fdnn_ewd::to_a;
using fdnn_ewd::from_a;
__device__ __forceinline__ float fexp_(float x) { return expf(x); }
__device__ __forceinline__ double fexp_(double x) { return exp(x); }
__device__ __forceinline__ float flog_(float x) { return logf(x); }
__device__ __forceinline__ double flog_(double x) { return log(x); }
template <typename F> __device__ __forceinline__ F fmaxn(F a, F b) { return (a != a || b != b) ? (a != a ? a : b) : (a > b ? a : b); }
/* Merge running (m, s) with (m2, s2); a zero sum contributes nothing (avoids -inf - -inf). */
template <typename F> __device__ __forceinline__ void om_merge(F &m, F &s, F m2, F s2)
{
    const F mn = fmaxn(m, m2);
    const F a = s == F(0) ? F(0) : s * fexp_(m - mn), b = s2 == F(0) ? F(0) : s2 * fexp_(m2 - mn);
    m = mn;
    s = a + b;
}
template <typename F> __device__ __forceinline__ void om_add(F &m, F &s, F v, int fast)
{
    if (fast) { s += fexp_(v); return; }
    if (v == F(-INFINITY)) return; /* adds exp(-inf - max) = 0 unless the whole row is -inf (fixed up after the pass) */
    const F mn = fmaxn(m, v);
    s = (s == F(0) ? F(0) : s * fexp_(m - mn)) + fexp_(v - mn);
    m = mn;
}

template <typename T>
__device__ __forceinline__ void sm_store(T *Y, unsigned o, typename Acc<T>::type r, typename Acc<T>::type alpha, typename Acc<T>::type beta)
{
    typedef typename Acc<T>::type F;
    F v = alpha * r;
    if (beta != F(0)) v += beta * to_a(Y[o]);
    Y[o] = from_a<T>(v);
}

/* rows: N*S (NCHW) or N*S rows of C (NHWC); row r starts at (r / S)*C*S + r % S (NCHW, element
 * stride S) or r*C (NHWC, stride 1). */
template <typename T, bool WARP>
__global__ void __launch_bounds__(256) sm_chan_fwd(const T *X, T *Y, unsigned rows, unsigned C, unsigned S, int algo,
                                                   typename Acc<T>::type alpha, typename Acc<T>::type beta)
{
    typedef typename Acc<T>::type F;
    const unsigned lane = WARP ? (threadIdx.x & 31) : 0, step = WARP ? 32 : 1;
    const unsigned per_block = WARP ? blockDim.x / 32 : blockDim.x;
    const unsigned first = blockIdx.x * per_block + (WARP ? threadIdx.x / 32 : threadIdx.x);
    const int fast = algo == CUDNN_SOFTMAX_FAST;
    for (unsigned r = first; r < rows; r += gridDim.x * per_block) {
        const unsigned base = WARP ? r * C : (r / S) * C * S + r % S, st = WARP ? 1 : S;
        F m = fast ? F(0) : F(-INFINITY), s = F(0);
#pragma unroll 4
        for (unsigned c = lane; c < C; c += step) om_add(m, s, to_a(X[base + c * st]), fast);
        if (WARP) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) {
                const F m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
                if (fast) s += s2;
                else om_merge(m, s, m2, s2);
            }
        }
        if (!fast && m == F(-INFINITY)) s = F(NAN); /* all -inf: exp(-inf - -inf) is NaN in the generic formula */
        const F ls = flog_(s);
#pragma unroll 4
        for (unsigned c = lane; c < C; c += step) {
            const unsigned o = base + c * st;
            const F v = to_a(X[o]);
            sm_store(Y, o, algo == CUDNN_SOFTMAX_LOG ? v - m - ls : fexp_(v - m) / s, alpha, beta);
        }
    }
}

template <typename T, bool WARP>
__global__ void __launch_bounds__(256) sm_chan_bwd(const T *Yv, const T *DY, T *DX, unsigned rows, unsigned C, unsigned S, int algo,
                                                   typename Acc<T>::type alpha, typename Acc<T>::type beta)
{
    typedef typename Acc<T>::type F;
    const unsigned lane = WARP ? (threadIdx.x & 31) : 0, step = WARP ? 32 : 1;
    const unsigned per_block = WARP ? blockDim.x / 32 : blockDim.x;
    const unsigned first = blockIdx.x * per_block + (WARP ? threadIdx.x / 32 : threadIdx.x);
    const bool lg = algo == CUDNN_SOFTMAX_LOG;
    for (unsigned r = first; r < rows; r += gridDim.x * per_block) {
        const unsigned base = WARP ? r * C : (r / S) * C * S + r % S, st = WARP ? 1 : S;
        F s = F(0);
#pragma unroll 4
        for (unsigned c = lane; c < C; c += step) {
            const unsigned o = base + c * st;
            const F dy = to_a(DY[o]);
            s += lg ? dy : dy * to_a(Yv[o]);
        }
        if (WARP) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        }
#pragma unroll 4
        for (unsigned c = lane; c < C; c += step) {
            const unsigned o = base + c * st;
            const F y = to_a(Yv[o]), dy = to_a(DY[o]);
            sm_store(DX, o, lg ? dy - fexp_(y) * s : y * (dy - s), alpha, beta);
        }
    }
}

/* 1: packed NCHW-like (C stride S, spatial packed), 2: packed NHWC-like, 0: neither. */
int chan_layout(const struct cudnnTensorStruct *t, long long C, long long S)
{
    if (t->vect > 1 || t->nb_dims < 2) return 0;
    int nchw = 1, nhwc = 1;
    long long inner = 1;
    for (int i = t->nb_dims - 1; i >= 2; i--) {
        if (t->dim[i] != 1 && t->stride[i] != inner) nchw = 0;
        if (t->dim[i] != 1 && t->stride[i] != inner * C) nhwc = 0;
        inner *= t->dim[i];
    }
    if (t->dim[1] != 1 && t->stride[1] != S) nchw = 0;
    if (t->dim[1] != 1 && t->stride[1] != 1) nhwc = 0;
    if (t->dim[0] != 1 && t->stride[0] != C * S) nchw = nhwc = 0;
    return nchw ? 1 : nhwc ? 2 : 0;
}

template <typename T>
cudnnStatus_t chan_launch(cudnnHandle_t h, int lay, const SmGeom &g, int fwd, int algo, double alpha, double beta, const void *A, const void *B,
                          void *O)
{
    typedef typename Acc<T>::type F;
    const unsigned rows = (unsigned)g.groups, C = (unsigned)g.len, S = (unsigned)g.S;
    const bool warp = lay == 2 && C > 1;
    const long long per_block = warp ? 8 : 256;
    long long nb = (rows + per_block - 1) / per_block, cap = (long long)fdnn_ewd::sm_count(h) * 32;
    if (nb > cap) nb = cap;
    const unsigned grid = (unsigned)(nb < 1 ? 1 : nb);
    cudaStream_t st = (cudaStream_t)h->stream;
    if (fwd) {
        if (warp) sm_chan_fwd<T, true><<<grid, 256, 0, st>>>((const T *)A, (T *)O, rows, C, lay == 2 ? 1u : S, algo, (F)alpha, (F)beta);
        else sm_chan_fwd<T, false><<<grid, 256, 0, st>>>((const T *)A, (T *)O, rows, C, lay == 2 ? 1u : S, algo,
                                                         (F)alpha, (F)beta);
        return fdnn_cuda_check(cudaGetLastError(), "sm_chan_fwd");
    }
    if (warp) sm_chan_bwd<T, true><<<grid, 256, 0, st>>>((const T *)A, (const T *)B, (T *)O, rows, C, lay == 2 ? 1u : S, algo, (F)alpha,
                                                         (F)beta);
    else sm_chan_bwd<T, false><<<grid, 256, 0, st>>>((const T *)A, (const T *)B, (T *)O, rows, C, lay == 2 ? 1u : S, algo, (F)alpha,
                                                     (F)beta);
    return fdnn_cuda_check(cudaGetLastError(), "sm_chan_bwd");
}

/* Returns 1 and launches when the fast path applies. A, B: inputs (x; or y, dy), O: output. */
int chan_fast(cudnnHandle_t h, int fwd, int algo, int mode, double alpha, double beta, const struct cudnnTensorStruct *o,
              const struct cudnnTensorStruct *a, const struct cudnnTensorStruct *b, const void *A, const void *B, void *O, cudnnStatus_t *st)
{
    if (mode != CUDNN_SOFTMAX_MODE_CHANNEL || !fdnn_ewd::same_geom(o, a) || (b && !fdnn_ewd::same_geom(o, b))) return 0;
    const SmGeom g = sm_geom(o, algo, mode);
    if (g.groups <= 0 || g.len <= 0 || g.groups * g.len >= 0x7fffffffLL) return 0;
    const int lay = chan_layout(o, g.len, g.S);
    if (!lay) return 0;
    switch (o->dtype) {
    case CUDNN_DATA_FLOAT: *st = chan_launch<float>(h, lay, g, fwd, algo, alpha, beta, A, B, O); return 1;
    case CUDNN_DATA_DOUBLE: *st = chan_launch<double>(h, lay, g, fwd, algo, alpha, beta, A, B, O); return 1;
    case CUDNN_DATA_HALF: *st = chan_launch<__half>(h, lay, g, fwd, algo, alpha, beta, A, B, O); return 1;
    case CUDNN_DATA_BFLOAT16: *st = chan_launch<__nv_bfloat16>(h, lay, g, fwd, algo, alpha, beta, A, B, O); return 1;
    default: return 0;
    }
}

} /* namespace */

extern "C" cudnnStatus_t fdnn_cuda_softmax_fwd(cudnnHandle_t h, int algo, int mode, double alpha, const struct cudnnTensorStruct *x,
                                               const void *X, double beta, const struct cudnnTensorStruct *y, void *Y)
{
    SmGeom g = sm_geom(x, algo, mode);
    if (g.groups <= 0 || g.len <= 0) return CUDNN_STATUS_SUCCESS;
    cudnnStatus_t fs;
    if (chan_fast(h, 1, algo, mode, alpha, beta, y, x, NULL, X, NULL, Y, &fs)) return fs;
    cudaStream_t st = (cudaStream_t)h->stream;
    if (use_block(g)) {
        unsigned grid = (unsigned)(g.groups < 65535LL * 16 ? g.groups : 65535LL * 16);
        sm_fwd_block<<<grid, SM_BLOCK, 0, st>>>(g, make_tv(x), X, make_tv(y), Y, alpha, beta);
        return fdnn_cuda_check(cudaGetLastError(), "sm_fwd_block");
    }
    sm_fwd_thread<<<grid_for(g.groups, 128), 128, 0, st>>>(g, make_tv(x), X, make_tv(y), Y, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "sm_fwd_thread");
}

extern "C" cudnnStatus_t fdnn_cuda_softmax_bwd(cudnnHandle_t h, int algo, int mode, double alpha, const struct cudnnTensorStruct *y,
                                               const void *Y, const struct cudnnTensorStruct *dy, const void *DY, double beta,
                                               const struct cudnnTensorStruct *dx, void *DX)
{
    SmGeom g = sm_geom(y, algo, mode);
    if (g.groups <= 0 || g.len <= 0) return CUDNN_STATUS_SUCCESS;
    cudnnStatus_t fs;
    if (chan_fast(h, 0, algo, mode, alpha, beta, dx, y, dy, Y, DY, DX, &fs)) return fs;
    cudaStream_t st = (cudaStream_t)h->stream;
    if (use_block(g)) {
        unsigned grid = (unsigned)(g.groups < 65535LL * 16 ? g.groups : 65535LL * 16);
        sm_bwd_block<<<grid, SM_BLOCK, 0, st>>>(g, make_tv(y), Y, make_tv(dy), DY, make_tv(dx), DX, alpha, beta);
        return fdnn_cuda_check(cudaGetLastError(), "sm_bwd_block");
    }
    sm_bwd_thread<<<grid_for(g.groups, 128), 128, 0, st>>>(g, make_tv(y), Y, make_tv(dy), DY, make_tv(dx), DX, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "sm_bwd_thread");
}
