/* cudnnSoftmaxForward/Backward on the GPU with the CPU backend's formulas (double math).
 * INSTANCE mode: one block per image reduces over C*spatial with a deterministic tree
 * (max, then sum of exp; or sum of dy*y / dy). CHANNEL mode: one thread per (n, spatial
 * position) loops over C, so neighbouring threads read neighbouring addresses on NCHW.
 * The max keeps NaN (a NaN in the row makes the whole row NaN, like the CPU loop).
 * Fast paths (typed, float math for 16-bit types): CHANNEL on packed NCHW (32 rows x 8 channel
 * slices per block, the channels in registers when C <= 256) and NHWC (a warp per row, the row in registers when C <= 256,
 * in 16-byte vectors with several rows per warp when C fits and the pointers are aligned); INSTANCE
 * forward and backward on image-packed tensors (a row in registers when it has <= 4096 elements, else
 * chunk partials in the handle's scratch, a per-row merge and an element-wise pass, all in one
 * pipelined kernel that re-reads each row from L2; on sm_90 the forward of rows up to 256 KB
 * keeps each row in the shared memory of one thread-block cluster and reads it once). */
#include <math.h>
#include <cooperative_groups.h>
#include "ops_dev.cuh"
#include "ew_dense.cuh"
#include "pipe2.cuh"
#include "conv_mma_ptx.cuh"
#include "cluster.cuh"

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
    if (v != v || m != m) { m = fmaxn(m, v); s = F(NAN); return; }
    /* bit-identical to s*exp(m - max(m,v)) + exp(v - max(m,v)) with one exp in the common case:
     * exp(0) == 1 exactly; exp(v - v) keeps the NaN of v == +inf */
    if (v > m) { s = (s == F(0) ? F(0) : s * fexp_(m - v)) + fexp_(v - v); m = v; }
    else s += fexp_(v - m);
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

/* NCHW CHANNEL rows with C >= 32: blocks of 32 rows (adjacent spatial positions, coalesced) x 8
 * channel slices; slice k owns channels k, k+8, ... The 8 per-slice (max, sum) pairs (or sums
 * for backward) are merged in slice order by every thread (fixed order: deterministic, same
 * value in the whole column). x (y, dy) is read twice, the second time mostly from L2. */
const int SM_SL = 8;

/* The sum (MAX: the NaN-keeping max) of v over the SL channel slices (threadIdx.y) of column
 * threadIdx.x, in slice order (deterministic), through sh; every thread of the block calls it. */
template <bool MAX, int SL, typename F> __device__ __forceinline__ F slice_reduce(F v, F (*sh)[32])
{
    sh[threadIdx.y][threadIdx.x] = v;
    __syncthreads();
    F r = sh[0][threadIdx.x];
#pragma unroll
    for (int k = 1; k < SL; k++) r = MAX ? fmaxn(r, sh[k][threadIdx.x]) : r + sh[k][threadIdx.x];
    __syncthreads(); /* sh is rewritten by the next reduction */
    return r;
}
template <typename T>
__global__ void __launch_bounds__(256) sm_chan_fwd_sl(const T *X, T *Y, unsigned rows, unsigned C, unsigned S, int algo,
                                                      typename Acc<T>::type alpha, typename Acc<T>::type beta)
{
    typedef typename Acc<T>::type F;
    __shared__ F shm[SM_SL][32], shs[SM_SL][32];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const int fast = algo == CUDNN_SOFTMAX_FAST;
    for (unsigned rb = blockIdx.x * 32u; rb < rows; rb += gridDim.x * 32u) {
        const unsigned r = rb + tx;
        const bool on = r < rows;
        const unsigned base = on ? (r / S) * C * S + r % S : 0;
        F m = fast ? F(0) : F(-INFINITY), s = F(0);
        if (on) {
#pragma unroll 4
            for (unsigned c = ty; c < C; c += SM_SL) om_add(m, s, to_a(X[base + c * S]), fast);
        }
        shm[ty][tx] = m, shs[ty][tx] = s;
        __syncthreads();
        m = shm[0][tx], s = shs[0][tx];
        for (int k = 1; k < SM_SL; k++) {
            if (fast) s += shs[k][tx];
            else om_merge(m, s, shm[k][tx], shs[k][tx]);
        }
        __syncthreads(); /* shm/shs are rewritten by the next row group */
        if (!on) continue;
        if (!fast && m == F(-INFINITY)) s = F(NAN);
        const F ls = flog_(s);
#pragma unroll 4
        for (unsigned c = ty; c < C; c += SM_SL) {
            const unsigned o = base + c * S;
            const F v = to_a(X[o]);
            sm_store(Y, o, algo == CUDNN_SOFTMAX_LOG ? v - m - ls : fexp_(v - m) / s, alpha, beta);
        }
    }
}

template <typename T>
__global__ void __launch_bounds__(256) sm_chan_bwd_sl(const T *Yv, const T *DY, T *DX, unsigned rows, unsigned C, unsigned S, int algo,
                                                      typename Acc<T>::type alpha, typename Acc<T>::type beta)
{
    typedef typename Acc<T>::type F;
    __shared__ F shs[SM_SL][32];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const bool lg = algo == CUDNN_SOFTMAX_LOG;
    for (unsigned rb = blockIdx.x * 32u; rb < rows; rb += gridDim.x * 32u) {
        const unsigned r = rb + tx;
        const bool on = r < rows;
        const unsigned base = on ? (r / S) * C * S + r % S : 0;
        F s = F(0);
        if (on) {
#pragma unroll 4
            for (unsigned c = ty; c < C; c += SM_SL) {
                const unsigned o = base + c * S;
                const F dy = to_a(DY[o]);
                s += lg ? dy : dy * to_a(Yv[o]);
            }
        }
        s = slice_reduce<false, SM_SL>(s, shs);
        if (!on) continue;
#pragma unroll 4
        for (unsigned c = ty; c < C; c += SM_SL) {
            const unsigned o = base + c * S;
            const F y = to_a(Yv[o]), dy = to_a(DY[o]);
            sm_store(DX, o, lg ? dy - fexp_(y) * s : y * (dy - s), alpha, beta);
        }
    }
}

/* NCHW CHANNEL rows with 32 <= C <= SL*RV: the slice layout of sm_chan_fwd_sl (32*P adjacent
 * rows x SL channel slices per block; SL = 16 where 8 slices would hold 32 channels per thread),
 * but every thread keeps its <= RV channel values in
 * registers, so x is read once and y written once (the sl kernel reads x twice, and at 32 KiB of
 * x per block in flight the second read mostly misses L2 on large tensors). All RV loads of a
 * thread are issued before any math (memory-level parallelism). Exact two-pass formula: the
 * slice maxima and then the slice sums of exp(x - max) are merged in slice order (fixed:
 * deterministic); exp is evaluated once per element and y = e * (1/s). NaN / +inf / all -inf
 * rows come out NaN as in the generic formula (exp(NaN) propagates, so a thread's max may skip
 * NaNs). 16 slices (not DOUBLE): at most 32 registers, four blocks per SM (three where an SM
 * holds 1536 threads).
 * P = 2 (16-bit types, S even, 4-byte aligned pointers): a thread owns two adjacent rows
 * (spatial positions 2j, 2j+1 of one image: S even keeps a pair inside an image) and moves each
 * channel's two elements as one 32-bit access. With one 2-byte element per lane a warp's request
 * is 64 bytes; the pairs make it 128. Each row's arithmetic is P = 1's, so the results are the same. */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
#define SM_SL16_BLOCKS 3 /* 1536 threads per SM */
#else
#define SM_SL16_BLOCKS 4
#endif
/* Load the P row elements at X[o], X[o+1], ... (P = 2: one pair access) */
template <int P, typename T, typename F> __device__ __forceinline__ void slr_load(const T *X, unsigned o, F (&v)[P])
{
    if constexpr (P == 2) {
        const fdnn_ewd::Pair2<T> q = *reinterpret_cast<const fdnn_ewd::Pair2<T> *>(X + o);
        v[0] = to_a(q.a), v[1] = to_a(q.b);
    } else {
        v[0] = to_a(X[o]);
    }
}
/* Y[o + j] = alpha * r[j] (+ beta * Y[o + j]) for the P rows */
template <int P, typename T, typename F> __device__ __forceinline__ void slr_store(T *Y, unsigned o, const F (&r)[P], F alpha, F beta)
{
    if constexpr (P == 2) {
        fdnn_ewd::Pair2<T> q;
        F a = alpha * r[0], b = alpha * r[1];
        if (beta != F(0)) {
            q = *reinterpret_cast<const fdnn_ewd::Pair2<T> *>(Y + o);
            a += beta * to_a(q.a), b += beta * to_a(q.b);
        }
        q.a = from_a<T>(a), q.b = from_a<T>(b);
        *reinterpret_cast<fdnn_ewd::Pair2<T> *>(Y + o) = q;
    } else {
        sm_store(Y, o, r[0], alpha, beta);
    }
}
/* slice_reduce for the P rows of each thread: row j of column tx sits at sh[.][j*32 + tx] (conflict-free) */
template <bool MAX, int SL, int P, typename F> __device__ __forceinline__ void slice_reduce_p(F (&v)[P], F (*sh)[32 * P])
{
#pragma unroll
    for (int j = 0; j < P; j++) sh[threadIdx.y][j * 32 + threadIdx.x] = v[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < P; j++) {
        F r = sh[0][j * 32 + threadIdx.x];
#pragma unroll
        for (int k = 1; k < SL; k++) r = MAX ? fmaxn(r, sh[k][j * 32 + threadIdx.x]) : r + sh[k][j * 32 + threadIdx.x];
        v[j] = r;
    }
    __syncthreads();
}
/* A thread's values of one channel for its P rows: in the accumulation type, or (RAW, P = 2) the
 * loaded pair itself, converted where used (half the registers; a value needed twice is computed
 * twice, the same way, so the results do not change). */
template <typename T, int P, bool RAW> struct SlrV {
    typedef typename Acc<T>::type F;
    F v[P];
    __device__ __forceinline__ void load(const T *X, unsigned o) { slr_load<P>(X, o, v); }
    __device__ __forceinline__ void fill(F x)
    {
#pragma unroll
        for (int j = 0; j < P; j++) v[j] = x;
    }
    __device__ __forceinline__ F get(int j) const { return v[j]; }
    __device__ __forceinline__ void set(int j, F x) { v[j] = x; }
};
/* to_a in a volatile asm: the compiler may not keep the converted floats (that would undo RAW) */
__device__ __forceinline__ float raw_cvt(__half v)
{
    float r;
    asm volatile("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(__half_as_ushort(v)));
    return r;
}
__device__ __forceinline__ float raw_cvt(__nv_bfloat16 v)
{
    float r;
    asm volatile("mov.b32 %0, {0, %1};" : "=f"(r) : "h"(__bfloat16_as_ushort(v)));
    return r;
}
template <typename T> struct SlrV<T, 2, true> {
    typedef typename Acc<T>::type F;
    fdnn_ewd::Pair2<T> q;
    __device__ __forceinline__ void load(const T *X, unsigned o) { q = *reinterpret_cast<const fdnn_ewd::Pair2<T> *>(X + o); }
    __device__ __forceinline__ void fill(F x) { q.a = q.b = from_a<T>(x); } /* -inf and 0: exact */
    __device__ __forceinline__ F get(int j) const { return raw_cvt(j ? q.b : q.a); }
};
/* P = 2 holds more values: values as floats, twice the registers (half the blocks); as loaded, one block fewer (no spill) */
#define SM_SLR_BLOCKS(T, SL, P, RAW) \
    (SL == 16 && sizeof(T) < 8 ? (P == 2 ? (RAW ? SM_SL16_BLOCKS - 1 : SM_SL16_BLOCKS / 2) : SM_SL16_BLOCKS) : 1)
template <typename T, int RV, int SL, int P = 1, bool RAW = false>
__global__ void __launch_bounds__(32 * SL, SM_SLR_BLOCKS(T, SL, P, RAW)) sm_chan_fwd_slr(const T *X, T *Y, unsigned rows, unsigned C, unsigned S,
                                                                                       int algo, typename Acc<T>::type alpha, typename Acc<T>::type beta)
{
    typedef typename Acc<T>::type F;
    __shared__ F shm[SL][32 * P];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const int fast = algo == CUDNN_SOFTMAX_FAST;
    const bool lg = algo == CUDNN_SOFTMAX_LOG;
    for (unsigned rb = blockIdx.x * 32u * P; rb < rows; rb += gridDim.x * 32u * P) { /* same trip count in the whole block */
        const unsigned r = rb + P * tx; /* P = 2: r even, r + 1 in the same image (S even), rows even */
        const bool on = r < rows;
        const unsigned base = on ? (r / S) * C * S + r % S : 0;
        SlrV<T, P, RAW> v[RV];
#pragma unroll
        for (int k = 0; k < RV; k++) {
            const unsigned c = ty + (unsigned)SL * k;
            if (on && c < C) v[k].load(X, base + c * S);
            else v[k].fill(F(-INFINITY));
        }
        F m[P], s[P];
#pragma unroll
        for (int j = 0; j < P; j++) m[j] = F(0), s[j] = F(0);
        if (!fast) {
#pragma unroll
            for (int j = 0; j < P; j++) {
                m[j] = F(-INFINITY);
#pragma unroll
                for (int k = 0; k < RV; k++)
                    if (ty + (unsigned)SL * k < C) m[j] = fmax(m[j], v[k].get(j)); /* a NaN still reaches s, so every y */
            }
            slice_reduce_p<true, SL, P>(m, shm);
        }
#pragma unroll
        for (int k = 0; k < RV; k++)
            if (ty + (unsigned)SL * k < C) {
#pragma unroll
                for (int j = 0; j < P; j++) {
                    const F e = fexp_(v[k].get(j) - m[j]);
                    if constexpr (!RAW)
                        if (!lg) v[k].set(j, e);
                    s[j] += e;
                }
            }
        slice_reduce_p<false, SL, P>(s, shm);
        if (!on) continue;
        F ls[P], inv[P];
#pragma unroll
        for (int j = 0; j < P; j++) ls[j] = lg ? flog_(s[j]) : F(0), inv[j] = F(1) / s[j];
#pragma unroll
        for (int k = 0; k < RV; k++) {
            const unsigned c = ty + (unsigned)SL * k;
            if (c < C) {
                F o[P];
#pragma unroll
                for (int j = 0; j < P; j++) {
                    const F x = v[k].get(j);
                    o[j] = lg ? x - m[j] - ls[j] : (RAW ? fexp_(x - m[j]) : x) * inv[j];
                }
                slr_store<P>(Y, base + c * S, o, alpha, beta);
            }
        }
    }
}

/* Backward twin of sm_chan_fwd_slr: y and dy of a thread's <= RV channels (of its P rows) stay in
 * registers (y, dy read once, dx written once); s = sum dy*y (LOG: sum dy) merged in slice order. */
template <typename T, int RV, int SL, int P = 1, bool RAW = false>
__global__ void __launch_bounds__(32 * SL) sm_chan_bwd_slr(const T *Yv, const T *DY, T *DX, unsigned rows, unsigned C, unsigned S, int algo,
                                                       typename Acc<T>::type alpha, typename Acc<T>::type beta)
{
    typedef typename Acc<T>::type F;
    __shared__ F shs[SL][32 * P];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const bool lg = algo == CUDNN_SOFTMAX_LOG;
    for (unsigned rb = blockIdx.x * 32u * P; rb < rows; rb += gridDim.x * 32u * P) {
        const unsigned r = rb + P * tx;
        const bool on = r < rows;
        const unsigned base = on ? (r / S) * C * S + r % S : 0;
        SlrV<T, P, RAW> y[RV], d[RV];
#pragma unroll
        for (int k = 0; k < RV; k++) {
            const unsigned c = ty + (unsigned)SL * k;
            if (on && c < C) {
                y[k].load(Yv, base + c * S);
                d[k].load(DY, base + c * S);
            } else {
                y[k].fill(F(0));
                d[k].fill(F(0));
            }
        }
        F s[P];
#pragma unroll
        for (int j = 0; j < P; j++) {
            s[j] = F(0);
#pragma unroll
            for (int k = 0; k < RV; k++)
                if (ty + (unsigned)SL * k < C) s[j] += lg ? d[k].get(j) : d[k].get(j) * y[k].get(j);
        }
        slice_reduce_p<false, SL, P>(s, shs);
        if (!on) continue;
#pragma unroll
        for (int k = 0; k < RV; k++) {
            const unsigned c = ty + (unsigned)SL * k;
            if (c < C) {
                F o[P];
#pragma unroll
                for (int j = 0; j < P; j++) {
                    const F yv = y[k].get(j), dv = d[k].get(j);
                    o[j] = lg ? dv - fexp_(yv) * s[j] : yv * (dv - s[j]);
                }
                slr_store<P>(DX, base + c * S, o, alpha, beta);
            }
        }
    }
}

/* NHWC CHANNEL rows with C <= 32*SM_RV: one warp per row, the row kept in registers (x read
 * once); exact two-pass formula (max, then sum of exp(x - max)), warp reductions in a fixed
 * shuffle tree. exp is evaluated once per element (kept in registers) and y = e * (1/s): the
 * former second exp and per-element division made this kernel partly compute-bound. */
const int SM_RV = 8;
template <typename T>
__global__ void __launch_bounds__(256) sm_chan_fwd_reg(const T *X, T *Y, unsigned rows, unsigned C, int algo, typename Acc<T>::type alpha,
                                                       typename Acc<T>::type beta)
{
    typedef typename Acc<T>::type F;
    const unsigned lane = threadIdx.x & 31, per_block = blockDim.x / 32;
    const int fast = algo == CUDNN_SOFTMAX_FAST;
    const bool lg = algo == CUDNN_SOFTMAX_LOG;
    for (unsigned r = blockIdx.x * per_block + threadIdx.x / 32; r < rows; r += gridDim.x * per_block) {
        const unsigned base = r * C;
        F v[SM_RV];
        F m = fast ? F(0) : F(-INFINITY);
#pragma unroll
        for (int k = 0; k < SM_RV; k++) {
            const unsigned c = lane + 32u * k;
            v[k] = c < C ? to_a(X[base + c]) : F(-INFINITY);
            if (!fast && c < C) m = fmaxn(m, v[k]);
        }
        if (!fast) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) m = fmaxn(m, __shfl_xor_sync(0xffffffffu, m, o));
        }
        F s = F(0);
#pragma unroll
        for (int k = 0; k < SM_RV; k++)
            if (lane + 32u * k < C) {
                const F e = fexp_(v[k] - m); /* once per element: kept for the output unless LOG */
                if (!lg) v[k] = e;
                s += e;
            }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        const F ls = lg ? flog_(s) : F(0), inv = F(1) / s;
#pragma unroll
        for (int k = 0; k < SM_RV; k++) {
            const unsigned c = lane + 32u * k;
            if (c < C) sm_store(Y, base + c, lg ? v[k] - m - ls : v[k] * inv, alpha, beta);
        }
    }
}

/* NHWC CHANNEL rows held in 16-byte vectors: C a multiple of VL = 16 / sizeof(T), C <= 32*NV*VL,
 * every pointer 16-byte aligned. A warp takes RW rows at once (all their loads issued before
 * the first reduction), lane l owns vectors l, l+32, ... of a row. Backward: RW = 2 (twice the
 * bytes in flight; RW = 4 measured slower on the H200). Forward: RW = 1, with a per-lane max
 * that skips NaN (fmax; the warp tree keeps NaN, and a NaN element still makes the row's sum
 * NaN, so the row comes out NaN as before): 90% -> 97% of the copy bandwidth at C = 256 on an
 * H100 (RW = 2 with fmax 92%; streaming loads / stores 94%).
 * Same formulas as sm_chan_fwd_reg / sm_chan_bwd (exact two-pass max and sum in registers, fixed
 * shuffle trees: deterministic); the sum's association differs from the scalar kernels (per-lane
 * partials over VL-wide pieces), within the rounding of the float accumulation. */
/* Butterfly all-reduce over the warp of RW independent values per lane (the RW rows a warp
 * handles): sum, or the NaN-keeping max; all RW shuffles of a step are issued before they are
 * combined. Every lane ends with the same, fixed-order result. */
/* Reduction over each aligned group of G lanes (G = 32: the whole warp), in a fixed butterfly */
template <bool MAX, int RW, typename F, int G = 32> __device__ __forceinline__ void warp_allreduce(F *v)
{
#pragma unroll
    for (int o = G / 2; o > 0; o >>= 1) {
        F a[RW];
#pragma unroll
        for (int q = 0; q < RW; q++) a[q] = __shfl_xor_sync(0xffffffffu, v[q], o);
#pragma unroll
        for (int q = 0; q < RW; q++) v[q] = MAX ? fmaxn(v[q], a[q]) : v[q] + a[q];
    }
}

/* G < 32 (NV = RW = 1, C / VL <= G): each aligned group of G lanes owns a row, 32 / G rows a warp
 * (with C = 64 HALF, one row a warp left 24 of its 32 lanes idle) */
template <typename T, int NV, int RW, int G = 32>
__global__ void __launch_bounds__(256) sm_chan_fwd_vec(const T *X, T *Y, unsigned rows, unsigned C, int algo, typename Acc<T>::type alpha,
                                                       typename Acc<T>::type beta)
{
    typedef typename Acc<T>::type F;
    typedef fdnn_ewd::V16<T> V;
    const int VL = 16 / sizeof(T);
    static_assert(G == 32 || (NV == 1 && RW == 1), "lane groups: one vector, one row a group");
    const unsigned lane = threadIdx.x & 31, CV = C / VL;
    const unsigned gl = lane % G, RPW = (unsigned)RW * (32 / G); /* lane in its group; rows a warp */
    const unsigned step = RPW * gridDim.x * (blockDim.x / 32);
    const int fast = algo == CUDNN_SOFTMAX_FAST;
    const bool lg = algo == CUDNN_SOFTMAX_LOG;
    for (unsigned rw = RPW * (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32); rw < rows; rw += step) { /* warp-uniform */
        const unsigned r0 = rw + lane / G;
        F v[RW][NV * VL], m[RW], s[RW];
        bool rok[RW], ok[NV];
#pragma unroll
        for (int j = 0; j < NV; j++) ok[j] = gl + 32u * j < CV;
#pragma unroll
        for (int q = 0; q < RW; q++) {
            rok[q] = r0 + q < rows;
            const V *xv = reinterpret_cast<const V *>(X + (size_t)(r0 + q) * C);
#pragma unroll
            for (int j = 0; j < NV; j++) {
                V a;
                if (rok[q] && ok[j]) a = xv[gl + 32u * j];
#pragma unroll
                for (int l = 0; l < VL; l++) v[q][j * VL + l] = rok[q] && ok[j] ? to_a(a.e[l]) : F(-INFINITY);
            }
        }
#pragma unroll
        for (int q = 0; q < RW; q++) {
            m[q] = fast ? F(0) : F(-INFINITY);
            if (!fast) {
#pragma unroll
                for (int j = 0; j < NV; j++)
                    if (ok[j]) {
#pragma unroll
                        for (int l = 0; l < VL; l++) m[q] = fmax(m[q], v[q][j * VL + l]);
                    }
            }
        }
        if (!fast) warp_allreduce<true, RW, F, G>(m);
#pragma unroll
        for (int q = 0; q < RW; q++) {
            s[q] = F(0);
#pragma unroll
            for (int j = 0; j < NV; j++)
                if (ok[j]) {
#pragma unroll
                    for (int l = 0; l < VL; l++) {
                        const F e = fexp_(v[q][j * VL + l] - m[q]);
                        if (!lg) v[q][j * VL + l] = e;
                        s[q] += e;
                    }
                }
        }
        warp_allreduce<false, RW, F, G>(s);
#pragma unroll
        for (int q = 0; q < RW; q++) {
            if (!rok[q]) continue;
            const F ls = lg ? flog_(s[q]) : F(0), inv = F(1) / s[q];
            V *yv = reinterpret_cast<V *>(Y + (size_t)(r0 + q) * C);
#pragma unroll
            for (int j = 0; j < NV; j++) {
                if (!ok[j]) continue;
                V o;
                if (beta != F(0)) o = yv[gl + 32u * j];
#pragma unroll
                for (int l = 0; l < VL; l++) {
                    const F x = v[q][j * VL + l];
                    F r = alpha * (lg ? x - m[q] - ls : x * inv);
                    if (beta != F(0)) r += beta * to_a(o.e[l]);
                    o.e[l] = from_a<T>(r);
                }
                yv[gl + 32u * j] = o;
            }
        }
    }
}

template <typename T, int NV>
__global__ void __launch_bounds__(256) sm_chan_bwd_vec(const T *Yv, const T *DY, T *DX, unsigned rows, unsigned C, int algo,
                                                       typename Acc<T>::type alpha, typename Acc<T>::type beta)
{
    typedef typename Acc<T>::type F;
    typedef fdnn_ewd::V16<T> V;
    const int VL = 16 / sizeof(T);
    const unsigned lane = threadIdx.x & 31, CV = C / VL;
    const unsigned step = 2u * gridDim.x * (blockDim.x / 32);
    const bool lg = algo == CUDNN_SOFTMAX_LOG;
    for (unsigned r0 = 2u * (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32); r0 < rows; r0 += step) {
        V y[2][NV], d[2][NV];
        bool rok[2], ok[NV];
        F s[2];
#pragma unroll
        for (int j = 0; j < NV; j++) ok[j] = lane + 32u * j < CV;
#pragma unroll
        for (int q = 0; q < 2; q++) {
            rok[q] = r0 + q < rows;
            const V *yp = reinterpret_cast<const V *>(Yv + (size_t)(r0 + q) * C), *dp = reinterpret_cast<const V *>(DY + (size_t)(r0 + q) * C);
#pragma unroll
            for (int j = 0; j < NV; j++)
                if (rok[q] && ok[j]) y[q][j] = yp[lane + 32u * j], d[q][j] = dp[lane + 32u * j];
        }
#pragma unroll
        for (int q = 0; q < 2; q++) {
            s[q] = F(0);
#pragma unroll
            for (int j = 0; j < NV; j++)
                if (rok[q] && ok[j]) {
#pragma unroll
                    for (int l = 0; l < VL; l++) s[q] += lg ? to_a(d[q][j].e[l]) : to_a(d[q][j].e[l]) * to_a(y[q][j].e[l]);
                }
        }
        warp_allreduce<false, 2>(s);
#pragma unroll
        for (int q = 0; q < 2; q++) {
            if (!rok[q]) continue;
            V *xp = reinterpret_cast<V *>(DX + (size_t)(r0 + q) * C);
#pragma unroll
            for (int j = 0; j < NV; j++) {
                if (!ok[j]) continue;
                V o;
                if (beta != F(0)) o = xp[lane + 32u * j];
#pragma unroll
                for (int l = 0; l < VL; l++) {
                    const F yy = to_a(y[q][j].e[l]), dd = to_a(d[q][j].e[l]);
                    F r = alpha * (lg ? dd - fexp_(yy) * s[q] : yy * (dd - s[q]));
                    if (beta != F(0)) r += beta * to_a(o.e[l]);
                    o.e[l] = from_a<T>(r);
                }
                xp[lane + 32u * j] = o;
            }
        }
    }
}

/* ---- INSTANCE mode, x and y (dy, dx) with equal geometry, each image packed (stride[0] =
 * C*spatial, the rest packed in any dimension order: the softmax over a whole image does not
 * depend on the order). Rows of L = C*spatial contiguous elements, cut into chunks of
 * SM_CH = 256*SM_IV elements (one 256-thread block per chunk):
 *   L <= SM_CH: one kernel, one block per row, x read once (exact two-pass formula in registers).
 *   else: one pipelined kernel (pipe2.cuh): each chunk's (max, sum exp(x - max)) (backward:
 *   sum dy*y) goes to the handle's scratch, the row's last chunk merges them in fixed order, and
 *   the output pass over the row follows a few rows behind, so its second read of x comes from
 *   L2 (DRAM traffic: x once, y once).
 * Block reductions are fixed shared-memory trees (deterministic). ---- */
const int SM_IV = 16, SM_CH = 256 * SM_IV;

template <typename F> __device__ __forceinline__ F blk_max(F v, F *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k) sh[threadIdx.x] = fmaxn(sh[threadIdx.x], sh[threadIdx.x + k]);
        __syncthreads();
    }
    const F r = sh[0];
    __syncthreads();
    return r;
}
template <typename F> __device__ __forceinline__ F blk_sum(F v, F *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
        __syncthreads();
    }
    const F r = sh[0];
    __syncthreads();
    return r;
}

/* Chunk [lo, hi) of a row (at X + base) loaded into v[] (-inf past hi) with its max (0 for FAST)
 * and sum of exp(v - max), block-uniform. Scalar loads. */
template <typename T>
__device__ __forceinline__ void inst_stats_s(const T *X, unsigned base, unsigned lo, unsigned hi, int fast, typename Acc<T>::type *v,
                                             typename Acc<T>::type &m, typename Acc<T>::type &s, typename Acc<T>::type *sh)
{
    typedef typename Acc<T>::type F;
    m = fast ? F(0) : F(-INFINITY);
#pragma unroll
    for (int k = 0; k < SM_IV; k++) {
        const unsigned i = lo + threadIdx.x + 256u * k;
        v[k] = i < hi ? to_a(X[base + i]) : F(-INFINITY);
        if (!fast && i < hi) m = fmaxn(m, v[k]);
    }
    if (!fast) m = blk_max(m, sh);
    s = F(0);
#pragma unroll
    for (int k = 0; k < SM_IV; k++)
        if (lo + threadIdx.x + 256u * k < hi) s += fexp_(v[k] - m);
    s = blk_sum(s, sh);
}

/* A row of at most SM_CH elements, one block per row: x read once, outputs written. */
template <typename T>
__global__ void __launch_bounds__(256) sm_inst_whole(const T *X, T *Y, unsigned L, int algo, typename Acc<T>::type alpha,
                                                     typename Acc<T>::type beta)
{
    typedef typename Acc<T>::type F;
    __shared__ F sh[256];
    const unsigned base = blockIdx.x * L;
    F v[SM_IV], m, s;
    inst_stats_s<T>(X, base, 0, L, algo == CUDNN_SOFTMAX_FAST, v, m, s, sh);
    const F ls = flog_(s);
#pragma unroll
    for (int k = 0; k < SM_IV; k++) {
        const unsigned i = threadIdx.x + 256u * k;
        if (i < L) sm_store(Y, base + i, algo == CUDNN_SOFTMAX_LOG ? v[k] - m - ls : fexp_(v[k] - m) / s, alpha, beta);
    }
}

/* Merge a row's nch chunk pairs (part: the row's first pair) in a fixed order (each thread a
 * strided run in ascending order, then a fixed tree); the result is valid in thread 0. The pairs
 * may come from other blocks of the running kernel: read through L2 (__ldcg). */
template <typename F> __device__ __forceinline__ void inst_merge(const F *part, unsigned nch, int fast, F *shm, F *shs, F &mm, F &ss)
{
    F m = fast ? F(0) : F(-INFINITY), s = F(0);
    for (unsigned c = threadIdx.x; c < nch; c += blockDim.x) {
        const F m2 = __ldcg(part + 2 * c), s2 = __ldcg(part + 2 * c + 1);
        if (fast) s += s2;
        else om_merge(m, s, m2, s2);
    }
    shm[threadIdx.x] = m, shs[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k) {
            F a = shm[threadIdx.x], b = shs[threadIdx.x];
            if (fast) b += shs[threadIdx.x + k];
            else om_merge(a, b, shm[threadIdx.x + k], shs[threadIdx.x + k]);
            shm[threadIdx.x] = a, shs[threadIdx.x] = b;
        }
        __syncthreads();
    }
    mm = shm[0], ss = shs[0];
    if (!fast && mm == F(-INFINITY)) ss = F(NAN); /* all -inf: NaN, as the generic formula */
    __syncthreads();
}

/* Vector forms (L % VL == 0, x and y 16-byte aligned; VL = 16 / sizeof(T)): the same chunks and
 * chunk formula (chunk max, then sum of exp(x - max)), 16-byte loads and stores, block
 * reductions as a fixed shuffle tree per warp then the 8 warp results in warp order
 * (deterministic). */
template <typename F> __device__ __forceinline__ F blk_max_w(F v, F *sh)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxn(v, __shfl_down_sync(0xffffffffu, v, o));
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    F r = sh[0];
    for (unsigned w = 1; w < blockDim.x / 32; w++) r = fmaxn(r, sh[w]);
    __syncthreads();
    return r;
}
template <typename F> __device__ __forceinline__ F blk_sum_w(F v, F *sh)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    F r = sh[0];
    for (unsigned w = 1; w < blockDim.x / 32; w++) r += sh[w];
    __syncthreads();
    return r;
}

/* Element l of raw word r (a 16-byte vector of T, or one T). */
template <typename T, bool VEC> __device__ __forceinline__ typename Acc<T>::type relem(const typename fdnn_pipe::Raw<T, VEC>::type &r, unsigned l)
{
    if constexpr (VEC) {
        fdnn_ewd::V16<T> a;
        memcpy(&a, &r, 16);
        return to_a(a.e[l]);
    } else {
        (void)l;
        return to_a(r);
    }
}
template <typename T, bool VEC> __device__ __forceinline__ void rset(typename fdnn_pipe::Raw<T, VEC>::type &r, unsigned l, typename Acc<T>::type v)
{
    if constexpr (VEC) {
        fdnn_ewd::V16<T> a;
        memcpy(&a, &r, 16);
        a.e[l] = from_a<T>(v);
        memcpy(&r, &a, 16);
    } else {
        (void)l;
        r = from_a<T>(v);
    }
}

/* Long rows (L > SM_CH) in one kernel (pipe2.cuh). A unit is a row; its statistics and apply
 * items are its nch chunks of SM_CH elements, thread tid holding words tid + 256*j of the chunk
 * (a word is a 16-byte vector when VEC: L % VL == 0 and aligned pointers; else one element).
 * Forward statistics: the chunk's max (0 for FAST) and sum of exp(x - max) into part[row][nch];
 * the merge item combines them (inst_merge) into rowv[2*row]. Backward statistics: the chunk's
 * sum of dy*y (LOG: dy) into part[row][nch], merged by a fixed-order sum into rowv[row]. */
template <typename T, bool VEC, bool BWD> struct SmInstOp {
    typedef typename Acc<T>::type F;
    typedef typename fdnn_pipe::Raw<T, VEC>::type R;
    static const unsigned VL = VEC ? 16 / sizeof(T) : 1, NR = SM_IV / VL;
    struct Regs {
        R a[NR], b[BWD ? NR : 1]; /* x (forward); y and dy (backward) */
    };
    const T *A, *B; /* x (forward); y, dy (backward) */
    T *O;
    unsigned L, nch;
    int algo;
    F alpha, beta;
    F *part, *rowv;

    __device__ __forceinline__ void range(const fdnn_pipe::Item &it, unsigned &lo, unsigned &hi) const
    {
        lo = it.idx * (unsigned)SM_CH, hi = lo + SM_CH < L ? lo + SM_CH : L;
    }
    __device__ __forceinline__ void load(const fdnn_pipe::Item &it, Regs &g) const
    {
        unsigned lo, hi;
        range(it, lo, hi);
        const size_t base = (size_t)it.unit * L;
#pragma unroll
        for (unsigned j = 0; j < NR; j++) {
            const unsigned i = lo + (threadIdx.x + 256u * j) * VL; /* lo, hi, i: multiples of VL */
            if (i >= hi) continue;
            if (it.kind == fdnn_pipe::K_APPLY) {
                g.a[j] = fdnn_pipe::ld<T, VEC, true>(A + base, i / VL);
                if (BWD) g.b[j] = fdnn_pipe::ld<T, VEC, true>(B + base, i / VL);
            } else {
                g.a[j] = fdnn_pipe::ld<T, VEC, false>(A + base, i / VL);
                if (BWD) g.b[j] = fdnn_pipe::ld<T, VEC, false>(B + base, i / VL);
            }
        }
    }
    __device__ __forceinline__ void stats(const fdnn_pipe::Item &it, Regs &g, F *shm) const
    {
        unsigned lo, hi;
        range(it, lo, hi);
        F *pp = part + (BWD ? 1 : 2) * ((size_t)it.unit * nch + it.idx);
        if (BWD) {
            const bool lg = algo == CUDNN_SOFTMAX_LOG;
            F s = F(0);
#pragma unroll
            for (unsigned j = 0; j < NR; j++)
                if (lo + (threadIdx.x + 256u * j) * VL < hi) {
#pragma unroll
                    for (unsigned l = 0; l < VL; l++) {
                        const F d = relem<T, VEC>(g.b[j], l);
                        s += lg ? d : d * relem<T, VEC>(g.a[j], l);
                    }
                }
            s = blk_sum_w(s, shm);
            if (fdnn_pipe::leader()) pp[0] = s;
            return;
        }
        const int fast = algo == CUDNN_SOFTMAX_FAST;
        F m = fast ? F(0) : F(-INFINITY);
        if (!fast) {
#pragma unroll
            for (unsigned j = 0; j < NR; j++)
                if (lo + (threadIdx.x + 256u * j) * VL < hi) {
#pragma unroll
                    for (unsigned l = 0; l < VL; l++) m = fmaxn(m, relem<T, VEC>(g.a[j], l));
                }
            m = blk_max_w(m, shm);
        }
        F s = F(0);
#pragma unroll
        for (unsigned j = 0; j < NR; j++)
            if (lo + (threadIdx.x + 256u * j) * VL < hi) {
#pragma unroll
                for (unsigned l = 0; l < VL; l++) s += fexp_(relem<T, VEC>(g.a[j], l) - m);
            }
        s = blk_sum_w(s, shm);
        if (!fast && m == F(-INFINITY)) s = F(0); /* an all -inf chunk adds nothing (the row fix-up is in inst_merge) */
        if (fdnn_pipe::leader()) pp[0] = m, pp[1] = s;
    }
    __device__ __forceinline__ void merge(unsigned row, F *shm) const
    {
        F *shs = shm + 256;
        if (BWD) {
            F r = F(0);
            for (unsigned c = threadIdx.x; c < nch; c += blockDim.x) r += __ldcg(part + (size_t)row * nch + c);
            r = blk_sum(r, shm);
            if (fdnn_pipe::leader()) rowv[row] = r;
            return;
        }
        F mm, ss;
        inst_merge(part + 2 * (size_t)row * nch, nch, algo == CUDNN_SOFTMAX_FAST, shm, shs, mm, ss);
        if (fdnn_pipe::leader()) rowv[2 * row] = mm, rowv[2 * row + 1] = ss;
    }
    __device__ __forceinline__ void apply(const fdnn_pipe::Item &it, Regs &g) const
    {
        unsigned lo, hi;
        range(it, lo, hi);
        T *orow = O + (size_t)it.unit * L;
        const bool lg = algo == CUDNN_SOFTMAX_LOG;
        F m = F(0), s, ls = F(0), rs = F(0);
        if (BWD) {
            s = __ldcg(rowv + it.unit);
        } else {
            m = __ldcg(rowv + 2 * it.unit), s = __ldcg(rowv + 2 * it.unit + 1);
            ls = flog_(s);
            rs = F(1) / s; /* one division per item, a multiply per element */
        }
#pragma unroll
        for (unsigned j = 0; j < NR; j++) {
            const unsigned i = lo + (threadIdx.x + 256u * j) * VL;
            if (i >= hi) continue;
            R o;
            if (beta != F(0)) o = fdnn_pipe::ld<T, VEC, true>(orow, i / VL);
#pragma unroll
            for (unsigned l = 0; l < VL; l++) {
                F r;
                if (BWD) {
                    const F yv = relem<T, VEC>(g.a[j], l), dv = relem<T, VEC>(g.b[j], l);
                    r = lg ? dv - fexp_(yv) * s : yv * (dv - s);
                } else {
                    const F v = relem<T, VEC>(g.a[j], l);
                    r = lg ? v - m - ls : fexp_(v - m) * rs;
                }
                r *= alpha;
                if (beta != F(0)) r += beta * relem<T, VEC>(o, l);
                rset<T, VEC>(o, l, r);
            }
            fdnn_pipe::st<T, VEC>(orow, i / VL, o);
        }
    }
};

template <typename T, bool VEC, bool BWD> __global__ void __launch_bounds__(256) sm_inst_pipe(const SmInstOp<T, VEC, BWD> op, fdnn_pipe::Pipe p)
{
    typedef typename Acc<T>::type F;
    __shared__ F sm[512];
    fdnn_pipe::run(op, p, sm);
}

template <typename T, bool VEC, bool BWD>
cudnnStatus_t inst_pipe_launch(cudnnHandle_t h, const SmGeom &g, int algo, double alpha, double beta, const void *A, const void *B, void *O)
{
    typedef typename Acc<T>::type F;
    const unsigned rows = (unsigned)g.groups, L = (unsigned)g.len, nch = (L + SM_CH - 1) / SM_CH;
    const fdnn_cuda_state *cs = (const fdnn_cuda_state *)h->cuda;
    SmInstOp<T, VEC, BWD> op;
    op.A = (const T *)A, op.B = (const T *)B, op.O = (T *)O, op.L = L, op.nch = nch, op.algo = algo, op.alpha = (F)alpha, op.beta = (F)beta;
    op.part = (F *)cs->scratch, op.rowv = op.part + (BWD ? 1 : 2) * (size_t)rows * nch;
    const fdnn_pipe::Pipe p = fdnn_pipe::make(cs->sync, rows, nch, nch, fdnn_pipe::lookahead((unsigned long long)L * sizeof(T) * (BWD ? 2 : 1)));
    static int per_sm = fdnn_pipe::per_sm_of((const void *)sm_inst_pipe<T, VEC, BWD>, 256);
    sm_inst_pipe<T, VEC, BWD><<<fdnn_pipe::grid_for(cs, per_sm, fdnn_pipe::total(p)), 256, 0, fdnn_cuda_stream(h)>>>(op, p);
    return fdnn_cuda_check(cudaGetLastError(), BWD ? "softmax INSTANCE backward (sm_inst_pipe)" : "softmax INSTANCE (sm_inst_pipe)");
}

/* ---- INSTANCE forward on sm_90 and newer, rows longer than SM_CH: one thread-block cluster of
 * cs blocks per row (grid = rows * cs). Block rank r copies a fixed contiguous range of the row's
 * units (16 bytes when L and the pointers allow, else elements) into its shared memory with
 * cp.async; the max and the sum of exp(x - max) are reduced per block (a shuffle tree per warp,
 * then warp 0) and over the cluster by thread 0 of every block reading all ranks' partials
 * through distributed shared memory in rank order, so every block gets the same deterministic
 * totals; the outputs are computed from shared memory. x is read from DRAM once, y written once
 * (the pipelined kernel reads x twice, the second time mostly from L2). As in bn_cluster_kernel,
 * a block arrives on the cluster barrier after its last remote read and waits before exiting,
 * so its shared memory outlives the others' reads. ---- */
struct SmCl {
    unsigned cs;  /* blocks per cluster (per row) */
    unsigned VM;  /* units per row */
};
/* Per-block shared limit of the cluster kernel (forced sizes), the largest share the automatic
 * choice takes (two blocks per SM: one block per SM leaves its SM idle between its copy and its
 * writes), and the smallest share worth splitting a row for. */
enum { SM_CL_MAX = 200 << 10, SM_CL_PAIR = 112 << 10, SM_CL_MIN = 16 << 10 };

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
/* v reduced by OP over the whole cluster (fdnn_cl::cluster_reduce) and returned to every thread;
 * slot is this reduction's own (not reused in the kernel). sh: 33 values. */
template <class OP, typename F> __device__ F cl_reduce(F v, F *sh, F *slot)
{
    F a[1] = {v};
    fdnn_cl::cluster_reduce<OP>(a, sh, slot);
    if (threadIdx.x == 0) sh[32] = a[0];
    __syncthreads();
    return sh[32];
}
#endif

template <typename T, bool VEC>
__global__ void __launch_bounds__(512, 2) sm_inst_cluster(const T *X, T *Y, SmCl g, int algo, typename Acc<T>::type alpha,
                                                          typename Acc<T>::type beta)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    typedef typename Acc<T>::type F;
    typedef typename fdnn_cl::Unit<T, VEC>::type U;
    const unsigned L = sizeof(U) / sizeof(T);
    extern __shared__ __align__(16) unsigned char smraw[];
    __shared__ F sh[33], slot[2];
    U *ux = reinterpret_cast<U *>(smraw);
    const unsigned r = cooperative_groups::this_cluster().block_rank(), t = threadIdx.x;
    const unsigned lo = (unsigned)((unsigned long long)g.VM * r / g.cs), n = (unsigned)((unsigned long long)g.VM * (r + 1) / g.cs) - lo;
    const size_t base = (size_t)(blockIdx.x / g.cs) * g.VM + lo;
    const U *gx = reinterpret_cast<const U *>(X) + base;
    U *gy = reinterpret_cast<U *>(Y) + base;
    for (unsigned j = t; j < n; j += blockDim.x) {
        if (VEC) fdnn_ptx::cp_async16((uint32_t)__cvta_generic_to_shared(ux + j), gx + j, 16);
        else ux[j].e[0] = __ldg(&gx[j].e[0]);
    }
    if (VEC) asm volatile("cp.async.wait_all;\n" ::: "memory"); /* this thread's copies: all it reads below */
    F m = F(0);
    if (algo != CUDNN_SOFTMAX_FAST) {
        F mx = F(-INFINITY);
        for (unsigned j = t; j < n; j += blockDim.x) {
            const U u = ux[j];
#pragma unroll
            for (unsigned k = 0; k < L; k++) mx = fmaxn(mx, to_a(u.e[k]));
        }
        m = cl_reduce<fdnn_cl::MaxNaN>(mx, sh, &slot[0]);
    }
    F s = F(0);
    for (unsigned j = t; j < n; j += blockDim.x) {
        const U u = ux[j];
#pragma unroll
        for (unsigned k = 0; k < L; k++) s += fexp_(to_a(u.e[k]) - m);
    }
    s = cl_reduce<fdnn_cl::Sum>(s, sh, &slot[1]);
    cooperative_groups::this_cluster().barrier_arrive(); /* this block's reads of other blocks are done */
    const bool lg = algo == CUDNN_SOFTMAX_LOG;
    const F ls = flog_(s), inv = F(1) / s;
    for (unsigned j = t; j < n; j += blockDim.x) {
        const U u = ux[j];
        U o;
        if (beta != F(0)) o = gy[j];
#pragma unroll
        for (unsigned k = 0; k < L; k++) {
            const F v = to_a(u.e[k]);
            F w = alpha * (lg ? v - m - ls : fexp_(v - m) * inv);
            if (beta != F(0)) w += beta * to_a(o.e[k]);
            o.e[k] = from_a<T>(w);
        }
        gy[j] = o;
    }
    cooperative_groups::this_cluster().barrier_wait(); /* the other blocks' reads of this one are done */
#else
    (void)X, (void)Y, (void)g, (void)algo, (void)alpha, (void)beta;
#endif
}

/* Returns 1 when the cluster kernel was launched (status in *st), 0 when it does not apply
 * (nothing launched). FREEDNN_SOFTMAX_CLUSTER=0 turns it off; 1, 2, 4, 8 or 16 force that
 * cluster size where the share fits (tests, benchmarks; read once per process). */
template <typename T>
int inst_cluster(cudnnHandle_t h, const SmGeom &g, int algo, double alpha, double beta, const void *X, void *Y, cudnnStatus_t *st)
{
    typedef typename Acc<T>::type F;
    static const int want = fdnn_env_int("FREEDNN_SOFTMAX_CLUSTER", -1);
    if (want == 0 || sizeof(T) == 8) return 0;
    const fdnn_cuda_state *cs = (const fdnn_cuda_state *)h->cuda;
    if (!cs || cs->cc < 90 || !cs->prop.clusterLaunch || cs->prop.sharedMemPerBlockOptin < (size_t)SM_CL_MAX + 1024) return 0;
    const unsigned Lv = 16 / sizeof(T);
    const bool vec = g.len % Lv == 0 && fdnn_ewd::aligned16(X) && fdnn_ewd::aligned16(Y);
    const long long VM = vec ? g.len / Lv : g.len, unit = vec ? 16 : sizeof(T), rows = g.groups;
    auto share = [&](long long k) { return (size_t)((VM + k - 1) / k) * (size_t)unit; };
    long long k = 1;
    if (want == 1 || want == 2 || want == 4 || want == 8 || want == 16) {
        k = want;
    } else {
        /* rows of at most 256 KB: longer ones stream better through the pipelined kernel (H200,
         * FLOAT, % of the copy bandwidth, pipelined -> cluster: rows of 200 KB 24 -> 41%, 0.8 MB
         * 48 -> 46%, 1.6 MB 54 -> 47%, 3.2 MB 57 -> 41%) */
        if ((size_t)VM * unit > ((size_t)256 << 10)) return 0;
        /* the smallest cluster whose shares let two blocks share an SM, doubled (up to 16) while
         * there are fewer blocks than SMs and the halves keep >= SM_CL_MIN */
        const long long sms = fdnn_cuda_sm_count(h);
        while (k < 16 && (share(k) > SM_CL_PAIR || (rows * k < sms && share(2 * k) >= SM_CL_MIN))) k *= 2;
        if (share(k) > SM_CL_PAIR) return 0;
        /* a few long rows would stream through a few SMs; the pipelined kernel spreads them */
        if (rows * k * 2 < sms && (size_t)rows * VM * unit > ((size_t)8 << 20)) return 0;
    }
    if (share(k) > SM_CL_MAX || VM < k) return 0;
    SmCl c;
    c.cs = (unsigned)k, c.VM = (unsigned)VM;
    cudaLaunchAttribute at;
    const cudaLaunchConfig_t cfg =
        fdnn_cl::config(&at, (unsigned)k, (unsigned)rows, share(k) >= SM_CL_MIN ? 512 : 256, share(k), fdnn_cuda_stream(h));
    static unsigned long long ready[2];
    cudaError_t e;
    if (vec) {
        if (fdnn_cl::ready(sm_inst_cluster<T, true>, SM_CL_MAX, true, &ready[1]) != cudaSuccess) return 0;
        e = cudaLaunchKernelEx(&cfg, sm_inst_cluster<T, true>, (const T *)X, (T *)Y, c, algo, (F)alpha, (F)beta);
    } else {
        if (fdnn_cl::ready(sm_inst_cluster<T, false>, SM_CL_MAX, true, &ready[0]) != cudaSuccess) return 0;
        e = cudaLaunchKernelEx(&cfg, sm_inst_cluster<T, false>, (const T *)X, (T *)Y, c, algo, (F)alpha, (F)beta);
    }
    if (fdnn_cl::refused(e)) return 0; /* e.g. no GPC with k free SMs: the pipelined kernel runs */
    *st = fdnn_cuda_check(e == cudaSuccess ? cudaGetLastError() : e, "softmax INSTANCE (sm_inst_cluster)");
    return 1;
}

/* Image-packed: stride[0] == C*spatial and dims 1.. packed in some order. */
int inst_layout(const struct cudnnTensorStruct *t)
{
    if (t->vect > 1 || t->nb_dims < 2) return 0;
    struct cudnnTensorStruct u = *t;
    long long L = 1;
    for (int i = 1; i < t->nb_dims; i++) L *= t->dim[i];
    if (t->dim[0] != 1 && t->stride[0] != L) return 0;
    u.dim[0] = 1; /* the rest must be packed in some order */
    return fdnn_ewd::dense_any_order(&u);
}

template <typename T>
cudnnStatus_t inst_launch(cudnnHandle_t h, const SmGeom &g, int algo, double alpha, double beta, const void *X, void *Y)
{
    typedef typename Acc<T>::type F;
    const unsigned rows = (unsigned)g.groups, L = (unsigned)g.len;
    if (L <= (unsigned)SM_CH) {
        sm_inst_whole<T><<<rows, 256, 0, fdnn_cuda_stream(h)>>>((const T *)X, (T *)Y, L, algo, (F)alpha, (F)beta);
        return fdnn_cuda_check(cudaGetLastError(), "sm_inst_whole");
    }
    cudnnStatus_t st;
    if (inst_cluster<T>(h, g, algo, alpha, beta, X, Y, &st)) return st;
    if (L % (16 / sizeof(T)) == 0 && fdnn_ewd::aligned16(X) && fdnn_ewd::aligned16(Y))
        return inst_pipe_launch<T, true, false>(h, g, algo, alpha, beta, X, NULL, Y);
    return inst_pipe_launch<T, false, false>(h, g, algo, alpha, beta, X, NULL, Y);
}

int inst_fast(cudnnHandle_t h, int algo, double alpha, double beta, const struct cudnnTensorStruct *x, const struct cudnnTensorStruct *y,
              const void *X, void *Y, cudnnStatus_t *st)
{
    if (!fdnn_ewd::same_geom(x, y) || !inst_layout(x)) return 0;
    const SmGeom g = sm_geom(x, algo, CUDNN_SOFTMAX_MODE_INSTANCE);
    if (g.groups <= 0 || g.len <= 0 || g.groups * g.len >= 0x7fffffffLL - SM_CH) return 0;
    const long long nch = (g.len + SM_CH - 1) / SM_CH;
    if (g.groups * nch > 0x7fffffffLL) return 0;
    if (nch > 1) {
        const fdnn_cuda_state *cs = (const fdnn_cuda_state *)h->cuda;
        const size_t esz = x->dtype == CUDNN_DATA_DOUBLE ? 8 : 4;
        if (!cs || !cs->scratch || (size_t)(2 * g.groups * nch + 2 * g.groups) * esz > cs->scratch_bytes) return 0;
        if (!cs->sync || !fdnn_pipe::usable(fdnn_pipe::make(cs->sync, (unsigned)g.groups, (unsigned)nch, (unsigned)nch, 1), FDNN_CUDA_SYNC_WORDS)) return 0;
    }
    switch (x->dtype) {
    case CUDNN_DATA_FLOAT: *st = inst_launch<float>(h, g, algo, alpha, beta, X, Y); return 1;
    case CUDNN_DATA_DOUBLE: *st = inst_launch<double>(h, g, algo, alpha, beta, X, Y); return 1;
    case CUDNN_DATA_HALF: *st = inst_launch<__half>(h, g, algo, alpha, beta, X, Y); return 1;
    case CUDNN_DATA_BFLOAT16: *st = inst_launch<__nv_bfloat16>(h, g, algo, alpha, beta, X, Y); return 1;
    default: return 0;
    }
}

/* INSTANCE backward, same chunking: per chunk s = sum(dy*y) (LOG: sum(dy)); rows of <= SM_CH
 * elements keep y and dy in registers and write dx at once (sm_inst_bwd_whole); longer rows run
 * in one pipelined kernel like the forward (sm_inst_bwd_pipe): chunk sums into part[row][nch],
 * the row's last chunk adds them in a fixed order into rowv[row], then the dx pass re-reads y
 * and dy from L2. */
template <typename T>
__global__ void __launch_bounds__(256) sm_inst_bwd_whole(const T *Yv, const T *DY, T *DX, unsigned L, int algo, typename Acc<T>::type alpha,
                                                         typename Acc<T>::type beta)
{
    typedef typename Acc<T>::type F;
    __shared__ F sh[256];
    const unsigned base = blockIdx.x * L;
    const bool lg = algo == CUDNN_SOFTMAX_LOG;
    F y[SM_IV], d[SM_IV];
    F s = F(0);
#pragma unroll
    for (int k = 0; k < SM_IV; k++) {
        const unsigned i = threadIdx.x + 256u * k;
        y[k] = i < L ? to_a(Yv[base + i]) : F(0);
        d[k] = i < L ? to_a(DY[base + i]) : F(0);
        if (i < L) s += lg ? d[k] : d[k] * y[k];
    }
    s = blk_sum(s, sh);
#pragma unroll
    for (int k = 0; k < SM_IV; k++) {
        const unsigned i = threadIdx.x + 256u * k;
        if (i < L) sm_store(DX, base + i, lg ? d[k] - fexp_(y[k]) * s : y[k] * (d[k] - s), alpha, beta);
    }
}

template <typename T>
cudnnStatus_t inst_bwd_launch(cudnnHandle_t h, const SmGeom &g, int algo, double alpha, double beta, const void *Yv, const void *DY, void *DX)
{
    typedef typename Acc<T>::type F;
    const unsigned rows = (unsigned)g.groups, L = (unsigned)g.len;
    if (L <= (unsigned)SM_CH) {
        sm_inst_bwd_whole<T><<<rows, 256, 0, fdnn_cuda_stream(h)>>>((const T *)Yv, (const T *)DY, (T *)DX, L, algo, (F)alpha, (F)beta);
        return fdnn_cuda_check(cudaGetLastError(), "sm_inst_bwd_whole");
    }
    if (L % (16 / sizeof(T)) == 0 && fdnn_ewd::aligned16(Yv) && fdnn_ewd::aligned16(DY) && fdnn_ewd::aligned16(DX))
        return inst_pipe_launch<T, true, true>(h, g, algo, alpha, beta, Yv, DY, DX);
    return inst_pipe_launch<T, false, true>(h, g, algo, alpha, beta, Yv, DY, DX);
}

int inst_bwd_fast(cudnnHandle_t h, int algo, double alpha, double beta, const struct cudnnTensorStruct *y, const struct cudnnTensorStruct *dy,
                  const struct cudnnTensorStruct *dx, const void *Yv, const void *DY, void *DX, cudnnStatus_t *st)
{
    if (!fdnn_ewd::same_geom(y, dy) || !fdnn_ewd::same_geom(y, dx) || !inst_layout(y)) return 0;
    const SmGeom g = sm_geom(y, algo, CUDNN_SOFTMAX_MODE_INSTANCE);
    if (g.groups <= 0 || g.len <= 0 || g.groups * g.len >= 0x7fffffffLL - SM_CH) return 0;
    const long long nch = (g.len + SM_CH - 1) / SM_CH;
    if (g.groups * nch > 0x7fffffffLL) return 0;
    if (nch > 1) {
        const fdnn_cuda_state *cs = (const fdnn_cuda_state *)h->cuda;
        const size_t esz = y->dtype == CUDNN_DATA_DOUBLE ? 8 : 4;
        if (!cs || !cs->scratch || (size_t)(g.groups * nch + g.groups) * esz > cs->scratch_bytes) return 0;
        if (!cs->sync || !fdnn_pipe::usable(fdnn_pipe::make(cs->sync, (unsigned)g.groups, (unsigned)nch, (unsigned)nch, 1), FDNN_CUDA_SYNC_WORDS)) return 0;
    }
    switch (y->dtype) {
    case CUDNN_DATA_FLOAT: *st = inst_bwd_launch<float>(h, g, algo, alpha, beta, Yv, DY, DX); return 1;
    case CUDNN_DATA_DOUBLE: *st = inst_bwd_launch<double>(h, g, algo, alpha, beta, Yv, DY, DX); return 1;
    case CUDNN_DATA_HALF: *st = inst_bwd_launch<__half>(h, g, algo, alpha, beta, Yv, DY, DX); return 1;
    case CUDNN_DATA_BFLOAT16: *st = inst_bwd_launch<__nv_bfloat16>(h, g, algo, alpha, beta, Yv, DY, DX); return 1;
    default: return 0;
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

template <typename T, int RV, int SL, bool RAW>
cudnnStatus_t slr_pair_one(int fwd, unsigned grid, cudaStream_t st, const void *A, const void *B, void *O, unsigned rows, unsigned C, unsigned S,
                           int algo, float alpha, float beta)
{
    const dim3 blk(32, SL);
    if (fwd) sm_chan_fwd_slr<T, RV, SL, 2, RAW><<<grid, blk, 0, st>>>((const T *)A, (T *)O, rows, C, S, algo, alpha, beta);
    else sm_chan_bwd_slr<T, RV, SL, 2, true><<<grid, blk, 0, st>>>((const T *)A, (const T *)B, (T *)O, rows, C, S, algo, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), fwd ? "sm_chan_fwd_slr (pairs)" : "sm_chan_bwd_slr (pairs)");
}
/* The pair kernels by slices * 100 + channels a thread (the combinations chan_launch picks) */
template <typename T, bool RAW>
cudnnStatus_t slr_pair_go(unsigned shape, int fwd, unsigned grid, cudaStream_t st, const void *A, const void *B, void *O, unsigned rows, unsigned C,
                          unsigned S, int algo, float alpha, float beta)
{
    switch (shape) {
    case 804: return slr_pair_one<T, 4, 8, RAW>(fwd, grid, st, A, B, O, rows, C, S, algo, alpha, beta);
    case 808: return slr_pair_one<T, 8, 8, RAW>(fwd, grid, st, A, B, O, rows, C, S, algo, alpha, beta);
    case 816: return slr_pair_one<T, 16, 8, RAW>(fwd, grid, st, A, B, O, rows, C, S, algo, alpha, beta);
    case 1604: return slr_pair_one<T, 4, 16, RAW>(fwd, grid, st, A, B, O, rows, C, S, algo, alpha, beta);
    case 1608: return slr_pair_one<T, 8, 16, RAW>(fwd, grid, st, A, B, O, rows, C, S, algo, alpha, beta);
    case 1616: return slr_pair_one<T, 16, 16, RAW>(fwd, grid, st, A, B, O, rows, C, S, algo, alpha, beta);
    case 3208: return slr_pair_one<T, 8, 32, RAW>(fwd, grid, st, A, B, O, rows, C, S, algo, alpha, beta);
    default: return slr_pair_one<T, 16, 32, RAW>(fwd, grid, st, A, B, O, rows, C, S, algo, alpha, beta); /* 3216 */
    }
}

template <typename T>
cudnnStatus_t chan_launch(cudnnHandle_t h, int lay, const SmGeom &g, int fwd, int algo, double alpha, double beta, const void *A, const void *B,
                          void *O)
{
    typedef typename Acc<T>::type F;
    const unsigned rows = (unsigned)g.groups, C = (unsigned)g.len, S = (unsigned)g.S;
    cudaStream_t st = (cudaStream_t)h->stream;
    /* FREEDNN_SOFTMAX_SL=8 (read once per process): 8 channel slices at every width (tests) */
    static const bool wide_slices = fdnn_env_int("FREEDNN_SOFTMAX_SL", 16) != SM_SL;
    if (lay == 1 && C >= 32) { /* NCHW: 32 rows x 8 (or 16) channel slices per block */
        long long cap = (long long)fdnn_cuda_sm_count(h) * 8 * 4;
        if constexpr (sizeof(T) == 2) { /* two rows a thread, pairs of 16-bit elements (sm_chan_fwd_slr, P = 2) */
            /* FREEDNN_SOFTMAX_PAIR (read once per process): 0 off; 1 (default) as measured best on an H100 (HALF,
             * 32..512 channels): the forward with P = 1's slices and the values as floats (as loaded at 8 slices of 16
             * channels, where floats need 95 registers), the backward with 16 slices (32 above 256 channels) and the
             * values as loaded; 2 twice P = 1's slices, as loaded; 3 P = 1's slices, the forward's values as floats;
             * 4 P = 1's slices, as loaded. (The backward keeps the values as loaded in every mode.) */
            static const int pair = fdnn_env_int("FREEDNN_SOFTMAX_PAIR", 1);
            if (pair && wide_slices && C <= 512u && S % 2 == 0 && fdnn_ewd::aligned4(A) && fdnn_ewd::aligned4(O) && (fwd || fdnn_ewd::aligned4(B))) {
                long long pb = (rows + 63) / 64;
                const unsigned grid = (unsigned)(pb < cap ? pb : cap);
                const unsigned sl1 = C > 256u ? 32u : C > 128u ? 16u : 8u; /* P = 1's slices */
                const unsigned sl = pair == 2 ? (C > 128u ? 32u : 16u) : pair == 1 && !fwd ? (C > 256u ? 32u : 16u) : sl1;
                const unsigned rv = C <= 4u * sl ? 4u : C <= 8u * sl ? 8u : 16u;
                const bool raw = pair == 2 || pair == 4 || (pair == 1 && sl == 8u && rv == 16u);
                if (!raw) return slr_pair_go<T, false>(sl * 100u + rv, fwd, grid, st, A, B, O, rows, C, S, algo, (F)alpha, (F)beta);
                return slr_pair_go<T, true>(sl * 100u + rv, fwd, grid, st, A, B, O, rows, C, S, algo, (F)alpha, (F)beta);
            }
        }
        long long nb = (rows + 31) / 32;
        const unsigned grid = (unsigned)(nb < cap ? nb : cap);
        if constexpr (sizeof(T) < 8) /* (DOUBLE would spill) */
            if (C > 32u * SM_SL && C <= 512u && wide_slices) {
                /* 257..512 channels: 32 slices of 1024 threads, 16 channels a thread in registers */
                const dim3 blk(32, 32);
                if (fwd) sm_chan_fwd_slr<T, 16, 32><<<grid, blk, 0, st>>>((const T *)A, (T *)O, rows, C, S, algo, (F)alpha, (F)beta);
                else sm_chan_bwd_slr<T, 16, 32><<<grid, blk, 0, st>>>((const T *)A, (const T *)B, (T *)O, rows, C, S, algo, (F)alpha, (F)beta);
                return fdnn_cuda_check(cudaGetLastError(), fwd ? "sm_chan_fwd_slr" : "sm_chan_bwd_slr");
            }
        if (C <= 32u * SM_SL) { /* channels in registers: each input read once */
            const T *a = (const T *)A, *b = (const T *)B;
            T *o = (T *)O;
            /* more than 16 channels per thread in 8 slices: 16 slices instead (FREEDNN_SOFTMAX_SL=8
             * keeps 8, for tests). H200, FLOAT 32x256x56x56, forward 64% -> 78% of the copy
             * bandwidth (8 slices need 128 registers a thread, two blocks per SM; 16 slices with 32
             * registers run four), backward 99% -> 103% */
            if (C > 16u * SM_SL && wide_slices) {
                const dim3 blk(32, 16);
                if (fwd) sm_chan_fwd_slr<T, 16, 16><<<grid, blk, 0, st>>>(a, o, rows, C, S, algo, (F)alpha, (F)beta);
                else sm_chan_bwd_slr<T, 16, 16><<<grid, blk, 0, st>>>(a, b, o, rows, C, S, algo, (F)alpha, (F)beta);
                return fdnn_cuda_check(cudaGetLastError(), fwd ? "sm_chan_fwd_slr" : "sm_chan_bwd_slr");
            }
            const dim3 blk(32, SM_SL);
            const int rv = C <= 4u * SM_SL ? 4 : C <= 8u * SM_SL ? 8 : C <= 16u * SM_SL ? 16 : 32;
            if (fwd) {
                if (rv == 4) sm_chan_fwd_slr<T, 4, SM_SL><<<grid, blk, 0, st>>>(a, o, rows, C, S, algo, (F)alpha, (F)beta);
                else if (rv == 8) sm_chan_fwd_slr<T, 8, SM_SL><<<grid, blk, 0, st>>>(a, o, rows, C, S, algo, (F)alpha, (F)beta);
                else if (rv == 16) sm_chan_fwd_slr<T, 16, SM_SL><<<grid, blk, 0, st>>>(a, o, rows, C, S, algo, (F)alpha, (F)beta);
                else sm_chan_fwd_slr<T, 32, SM_SL><<<grid, blk, 0, st>>>(a, o, rows, C, S, algo, (F)alpha, (F)beta);
                return fdnn_cuda_check(cudaGetLastError(), "sm_chan_fwd_slr");
            }
            if (rv == 4) sm_chan_bwd_slr<T, 4, SM_SL><<<grid, blk, 0, st>>>(a, b, o, rows, C, S, algo, (F)alpha, (F)beta);
            else if (rv == 8) sm_chan_bwd_slr<T, 8, SM_SL><<<grid, blk, 0, st>>>(a, b, o, rows, C, S, algo, (F)alpha, (F)beta);
            else if (rv == 16) sm_chan_bwd_slr<T, 16, SM_SL><<<grid, blk, 0, st>>>(a, b, o, rows, C, S, algo, (F)alpha, (F)beta);
            else sm_chan_bwd_slr<T, 32, SM_SL><<<grid, blk, 0, st>>>(a, b, o, rows, C, S, algo, (F)alpha, (F)beta);
            return fdnn_cuda_check(cudaGetLastError(), "sm_chan_bwd_slr");
        }
        if (fwd) {
            sm_chan_fwd_sl<T><<<grid, dim3(32, SM_SL), 0, st>>>((const T *)A, (T *)O, rows, C, S, algo, (F)alpha, (F)beta);
            return fdnn_cuda_check(cudaGetLastError(), "sm_chan_fwd_sl");
        }
        sm_chan_bwd_sl<T><<<grid, dim3(32, SM_SL), 0, st>>>((const T *)A, (const T *)B, (T *)O, rows, C, S, algo, (F)alpha, (F)beta);
        return fdnn_cuda_check(cudaGetLastError(), "sm_chan_bwd_sl");
    }
    const bool warp = lay == 2 && C > 1;
    const long long per_block = warp ? 8 : 256;
    long long nb = (rows + per_block - 1) / per_block, cap = (long long)fdnn_cuda_sm_count(h) * 32;
    if (nb > cap) nb = cap;
    const unsigned grid = (unsigned)(nb < 1 ? 1 : nb);
    {   /* NHWC rows in 16-byte vectors (sm_chan_fwd_vec / sm_chan_bwd_vec) */
        const unsigned VL = 16 / sizeof(T);
        const bool vec = warp && C % VL == 0 && C <= 64u * VL && fdnn_ewd::aligned16(A) && fdnn_ewd::aligned16(O) && (fwd || fdnn_ewd::aligned16(B));
        if (vec) {
            long long nw = ((long long)rows + 1) / 2, vb = (nw + 7) / 8;
            if (vb > cap) vb = cap;
            const unsigned vg = (unsigned)(vb < 1 ? 1 : vb);
            const T *a = (const T *)A, *b = (const T *)B;
            T *o = (T *)O;
            if (fwd) {
                long long fb = ((long long)rows + 7) / 8; /* forward: one row per warp */
                if (fb > cap) fb = cap;
                const unsigned fg = (unsigned)(fb < 1 ? 1 : fb);
                /* rows of at most 8 or 16 vectors: a row per group of 8 or 16 lanes (FREEDNN_SOFTMAX_GROUPS=0: a row a warp) */
                static const bool groups = fdnn_env_int("FREEDNN_SOFTMAX_GROUPS", 1) != 0;
                if (groups && C <= 16u * VL) {
                    const unsigned gsz = C <= 8u * VL ? 8u : 16u, per = 8u * (32u / gsz); /* rows a block */
                    long long gb = ((long long)rows + per - 1) / per;
                    if (gb > cap) gb = cap;
                    const unsigned gg = (unsigned)(gb < 1 ? 1 : gb);
                    if (gsz == 8) sm_chan_fwd_vec<T, 1, 1, 8><<<gg, 256, 0, st>>>(a, o, rows, C, algo, (F)alpha, (F)beta);
                    else sm_chan_fwd_vec<T, 1, 1, 16><<<gg, 256, 0, st>>>(a, o, rows, C, algo, (F)alpha, (F)beta);
                } else if (C <= 32u * VL) sm_chan_fwd_vec<T, 1, 1><<<fg, 256, 0, st>>>(a, o, rows, C, algo, (F)alpha, (F)beta);
                else sm_chan_fwd_vec<T, 2, 1><<<fg, 256, 0, st>>>(a, o, rows, C, algo, (F)alpha, (F)beta);
                return fdnn_cuda_check(cudaGetLastError(), "sm_chan_fwd_vec");
            }
            if (C <= 32u * VL) sm_chan_bwd_vec<T, 1><<<vg, 256, 0, st>>>(a, b, o, rows, C, algo, (F)alpha, (F)beta);
            else sm_chan_bwd_vec<T, 2><<<vg, 256, 0, st>>>(a, b, o, rows, C, algo, (F)alpha, (F)beta);
            return fdnn_cuda_check(cudaGetLastError(), "sm_chan_bwd_vec");
        }
    }
    if (fwd && warp && C <= 32u * SM_RV) { /* NHWC row in registers: x read once */
        sm_chan_fwd_reg<T><<<grid, 256, 0, st>>>((const T *)A, (T *)O, rows, C, algo, (F)alpha, (F)beta);
        return fdnn_cuda_check(cudaGetLastError(), "sm_chan_fwd_reg");
    }
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
    int lay = chan_layout(o, g.len, g.S);
    if (!lay) return 0;
    if (g.S == 1) lay = 2; /* rows of C contiguous elements: one warp per row */
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
    if (mode == CUDNN_SOFTMAX_MODE_INSTANCE && inst_fast(h, algo, alpha, beta, x, y, X, Y, &fs)) return fs;
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
    if (mode == CUDNN_SOFTMAX_MODE_INSTANCE && inst_bwd_fast(h, algo, alpha, beta, y, dy, dx, Y, DY, DX, &fs)) return fs;
    cudaStream_t st = (cudaStream_t)h->stream;
    if (use_block(g)) {
        unsigned grid = (unsigned)(g.groups < 65535LL * 16 ? g.groups : 65535LL * 16);
        sm_bwd_block<<<grid, SM_BLOCK, 0, st>>>(g, make_tv(y), Y, make_tv(dy), DY, make_tv(dx), DX, alpha, beta);
        return fdnn_cuda_check(cudaGetLastError(), "sm_bwd_block");
    }
    sm_bwd_thread<<<grid_for(g.groups, 128), 128, 0, st>>>(g, make_tv(y), Y, make_tv(dy), DY, make_tv(dx), DX, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "sm_bwd_thread");
}
