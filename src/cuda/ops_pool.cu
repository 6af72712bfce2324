/* cudnnPoolingForward/Backward on the GPU, 2-D and 3-D, every mode, with the CPU backend's
 * rules: max never selects padding, NOT_PROPAGATE_NAN skips NaN inputs, PROPAGATE_NAN lets
 * the first NaN win, ties go to the first maximum in row-major window order; averages divide
 * by the window size (INCLUDE_PADDING) or the in-bounds count (EXCLUDE_PADDING).
 * Forward: one thread per output element. Backward is a deterministic gather: one thread per
 * input element visits, in ascending output order, the output windows that cover it; for
 * max it re-runs that window's forward selection and takes dy only where it picked this
 * element, for averages it adds dy/divisor. No atomics; results are independent of timing.
 * 2-D packed NCHW/NHWC tensors take typed fast paths (below), the rest these generic kernels. */
#include <math.h>
#include "ops_dev.cuh"
#include "ew_dense.cuh"

using namespace fdnn_ops;

namespace {

struct PGeom {
    int ns, is_max, prop, incl, C;
    int in[3], out[3], win[3], pad[3], str[3];
    long long in_sz, out_sz, win_sz, planes;
};

/* Reduce the window of output o (spatial multi-index oi) in plane (n, c). */
__device__ double pool_one(const PGeom &g, const TV &tx, const void *X, int n, int c, const int *oi, long long *arg, double *cnt)
{
    double acc = g.is_max ? -INFINITY : 0.0;
    long long best = -1, cntin = 0;
    bool found_nan = false;
    int idx[5];
    idx[0] = n;
    idx[1] = c;
    for (int a = 0; a < g.win[0]; a++) {
        const int i0 = oi[0] * g.str[0] - g.pad[0] + a;
        if (i0 < 0 || i0 >= g.in[0]) continue;
        for (int b = 0; b < g.win[1]; b++) {
            const int i1 = oi[1] * g.str[1] - g.pad[1] + b;
            if (i1 < 0 || i1 >= g.in[1]) continue;
            for (int e = 0; e < g.win[2]; e++) {
                const int i2 = oi[2] * g.str[2] - g.pad[2] + e;
                if (i2 < 0 || i2 >= g.in[2]) continue;
                idx[2] = i0; idx[3] = i1; idx[4] = i2;
                const double v = ldv(X, tx.dtype, off_idx(tx, idx));
                const long long ii = ((long long)i0 * g.in[1] + i1) * g.in[2] + i2;
                cntin++;
                if (g.is_max) {
                    if (found_nan) continue;
                    if (v != v) {
                        if (g.prop) { found_nan = true; acc = v; best = ii; }
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
    if (g.is_max) {
        if (best < 0) acc = cntin ? __longlong_as_double(0x7ff8000000000000LL) : 0.0;
        *cnt = 1;
    } else {
        *cnt = g.incl ? (double)g.win_sz : (double)cntin;
        acc = *cnt > 0 ? acc / *cnt : 0.0;
    }
    return acc;
}

__device__ __forceinline__ void unravel3(const int *ext, long long r, int *o)
{
    for (int i = 2; i >= 0; i--) { o[i] = (int)(r % ext[i]); r /= ext[i]; }
}

/* 5-entry index (n, c, s0, s1, s2) -> offset; 4-D tensors ignore s2 (always 0 there). */
__device__ __forceinline__ long long off5(const TV &t, int n, int c, const int *s)
{
    int idx[5] = {n, c, s[0], s[1], s[2]};
    return off_idx(t, idx);
}

__global__ void pool_fwd(PGeom g, TV tx, const void *X, TV ty, void *Y, double alpha, double beta)
{
    const long long total = g.planes * g.out_sz;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total; k += (long long)gridDim.x * blockDim.x) {
        const long long p = k / g.out_sz, o = k - p * g.out_sz;
        const int n = (int)(p / g.C), c = (int)(p % g.C);
        int oi[3];
        unravel3(g.out, o, oi);
        long long arg;
        double cnt;
        const double v = pool_one(g, tx, X, n, c, oi, &arg, &cnt);
        blendv(Y, ty.dtype, off5(ty, n, c, oi), v, alpha, beta);
    }
}

__global__ void pool_bwd(PGeom g, TV tx, const void *X, TV tdy, const void *DY, TV tdx, void *DX, double alpha, double beta)
{
    const long long total = g.planes * g.in_sz;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total; k += (long long)gridDim.x * blockDim.x) {
        const long long p = k / g.in_sz, ii = k - p * g.in_sz;
        const int n = (int)(p / g.C), c = (int)(p % g.C);
        int xi[3], lo[3], hi[3];
        unravel3(g.in, ii, xi);
        for (int a = 0; a < 3; a++) {
            /* outputs o with o*str - pad <= xi <= o*str - pad + win - 1 */
            const int t = xi[a] + g.pad[a] - g.win[a] + 1;
            int l = t <= 0 ? 0 : (t + g.str[a] - 1) / g.str[a];
            int u = (xi[a] + g.pad[a]) / g.str[a];
            if (u > g.out[a] - 1) u = g.out[a] - 1;
            lo[a] = l;
            hi[a] = u;
        }
        double acc = 0.0;
        int oi[3];
        for (oi[0] = lo[0]; oi[0] <= hi[0]; oi[0]++)
            for (oi[1] = lo[1]; oi[1] <= hi[1]; oi[1]++)
                for (oi[2] = lo[2]; oi[2] <= hi[2]; oi[2]++) {
                    double cnt;
                    if (g.is_max) {
                        long long arg;
                        pool_one(g, tx, X, n, c, oi, &arg, &cnt);
                        if (arg != ii) continue;
                        acc += ldv(DY, tdy.dtype, off5(tdy, n, c, oi));
                    } else {
                        if (g.incl) cnt = (double)g.win_sz;
                        else {
                            cnt = 1.0;
                            for (int a = 0; a < 3; a++) {
                                const int s = oi[a] * g.str[a] - g.pad[a];
                                const int b0 = s < 0 ? 0 : s, b1 = s + g.win[a] < g.in[a] ? s + g.win[a] : g.in[a];
                                cnt *= (double)(b1 - b0);
                            }
                        }
                        if (cnt <= 0) continue;
                        acc += ldv(DY, tdy.dtype, off5(tdy, n, c, oi)) / cnt;
                    }
                }
        blendv(DX, tdx.dtype, off5(tdx, n, c, xi), acc, alpha, beta);
    }
}

PGeom make_pgeom(const struct cudnnPoolingStruct *d, const struct cudnnTensorStruct *x, const struct cudnnTensorStruct *y)
{
    PGeom g;
    g.ns = d->nb_spatial;
    g.is_max = d->mode == CUDNN_POOLING_MAX || d->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    g.incl = d->mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    g.prop = d->nan_opt == CUDNN_PROPAGATE_NAN;
    g.C = x->dim[1];
    g.planes = (long long)x->dim[0] * x->dim[1];
    g.in_sz = g.out_sz = g.win_sz = 1;
    for (int i = 0; i < 3; i++) {
        const bool act = i < g.ns;
        g.in[i] = act ? x->dim[i + 2] : 1;
        g.out[i] = act ? y->dim[i + 2] : 1;
        g.win[i] = act ? d->window[i] : 1;
        g.pad[i] = act ? d->pad[i] : 0;
        g.str[i] = act ? d->stride[i] : 1;
        g.in_sz *= g.in[i];
        g.out_sz *= g.out[i];
        g.win_sz *= g.win[i];
    }
    return g;
}

/* A view whose index list is (n, c, s0, s1, s2): 4-D tensors get a unit third spatial dim. */
TV pool_tv(const struct cudnnTensorStruct *t)
{
    TV v = make_tv(t);
    if (v.nd == 4) { v.nd = 5; v.dim[4] = 1; v.st[4] = 0; }
    v.packed = 0;
    return v;
}

/* ---- 2-D fast paths: x, y (dy, dx) each packed NCHW or packed NHWC (4-D), 32-bit index math,
 * typed loads, float math for FLOAT/HALF/BFLOAT16 (double for DOUBLE); the same max/NaN/tie and
 * divisor rules as pool_one. VL > 1: every tensor NHWC with C % VL == 0 and 16-byte aligned
 * pointers; a thread then owns VL adjacent channels (16-byte loads and stores). KH, KW > 0:
 * the window size as a compile-time constant (2x2, 3x3), so the window loops unroll.
 * Forward: one thread per output (vector) in y's memory order. Backward: a deterministic
 * gather, one thread per dx (vector) in dx's memory order, visiting the covering windows in
 * ascending output order; max re-runs each window's selection (first maximum in row-major
 * window order, NaN rules as forward) and adds dy where it picked this element. ---- */
struct P2 {
    unsigned total, C, H, W, OH, OW;
    int wh, ww, ph, pw, sh, sw, xnhwc, ynhwc, onhwc, is_max, prop, incl;
    fdnn_ewd::FDiv fCV, fH, fW, fOH, fOW, fsh, fsw; /* C / VL, the spatial extents and strides */
};
using fdnn_ewd::fdiv;
using fdnn_ewd::fmod_;

/* Walk index k of a plane-major grid -> u (the output column, or column pair / unit, fU = its
 * count per row), output row oh and plane n*C + c. */
__device__ __forceinline__ void p2_plane_decode(const fdnn_ewd::FDiv &fU, const fdnn_ewd::FDiv &fOH, unsigned k, unsigned &u, unsigned &oh,
                                                unsigned &plane)
{
    u = fdnn_ewd::fmod_(fU, k);
    const unsigned r = fdnn_ewd::fdiv(fU, k);
    oh = fdnn_ewd::fmod_(fOH, r);
    plane = fdnn_ewd::fdiv(fOH, r);
}

template <typename T, int VL> struct VLd {
    typedef typename fdnn_ewd::Acc<T>::type F;
    static __device__ __forceinline__ void ld(const T *p, F *o)
    {
        if (VL == 1) o[0] = fdnn_ewd::to_a(p[0]);
        else {
            const fdnn_ewd::V16<T> v = *reinterpret_cast<const fdnn_ewd::V16<T> *>(p);
#pragma unroll
            for (int l = 0; l < VL; l++) o[l] = fdnn_ewd::to_a(v.e[l]);
        }
    }
    static __device__ __forceinline__ void st(T *p, const F *o, F alpha, F beta)
    {
        if (VL == 1) {
            F v = alpha * o[0];
            if (beta != F(0)) v += beta * fdnn_ewd::to_a(p[0]);
            p[0] = fdnn_ewd::from_a<T>(v);
        } else {
            fdnn_ewd::V16<T> v;
            if (beta != F(0)) v = *reinterpret_cast<const fdnn_ewd::V16<T> *>(p);
#pragma unroll
            for (int l = 0; l < VL; l++) {
                F r = alpha * o[l];
                if (beta != F(0)) r += beta * fdnn_ewd::to_a(v.e[l]);
                v.e[l] = fdnn_ewd::from_a<T>(r);
            }
            *reinterpret_cast<fdnn_ewd::V16<T> *>(p) = v;
        }
    }
};

/* Index k (in units of VL elements) of a tensor of shape N x C x A x B -> (n, c, a, b), by
 * multiply-high divisions (fCV divides by C / VL). */
__device__ __forceinline__ void p2_decode(unsigned k, int nhwc, const fdnn_ewd::FDiv &fCV, unsigned VL, const fdnn_ewd::FDiv &fA,
                                          const fdnn_ewd::FDiv &fB, unsigned &n, unsigned &c, unsigned &a, unsigned &b)
{
    unsigned r;
    if (nhwc) {
        c = fmod_(fCV, k) * VL, r = fdiv(fCV, k);
        b = fmod_(fB, r), r = fdiv(fB, r);
        a = fmod_(fA, r), n = fdiv(fA, r);
    } else {
        b = fmod_(fB, k), r = fdiv(fB, k);
        a = fmod_(fA, r), r = fdiv(fA, r);
        c = fmod_(fCV, r), n = fdiv(fCV, r);
    }
}
__device__ __forceinline__ unsigned p2_off(int nhwc, unsigned n, unsigned c, unsigned a, unsigned b, unsigned C, unsigned A, unsigned B)
{
    return nhwc ? ((n * A + a) * B + b) * C + c : ((n * C + c) * A + a) * B + b;
}

/* One input value v at input position pos joins a window: max keeps the first maximum in scan
 * order (a NaN wins for good when NaNs propagate, is skipped otherwise); average sums. */
template <typename F>
__device__ __forceinline__ void p2_take(const P2 &g, F v, int pos, F &acc, int &best, int &nanf)
{
    if (g.is_max) {
        if (nanf) return;
        if (v != v) {
            if (g.prop) nanf = 1, acc = v, best = pos;
            return;
        }
        if (best < 0 || v > acc) acc = v, best = pos;
    } else {
        acc += v;
    }
}
/* The window's result once all cnt in-range values were taken (wsize = window area). */
template <typename F>
__device__ __forceinline__ void p2_finish(const P2 &g, unsigned cnt, int wsize, F &acc, int best)
{
    if (g.is_max) {
        if (best < 0) acc = cnt ? F(NAN) : F(0);
    } else {
        const F d = g.incl ? F(wsize) : F(cnt);
        acc = d > F(0) ? acc / d : F(0);
    }
}

/* Calls f(a, b, ih, iw) for every tap (a, b) of window (oh, ow) that lies inside the input, in
 * row-major window order (constant trip counts when KH, KW > 0: unrolled). */
template <int KH, int KW, typename Fn> __device__ __forceinline__ void p2_taps(const P2 &g, int oh, int ow, Fn f)
{
    const int wh = KH > 0 ? KH : g.wh, ww = KW > 0 ? KW : g.ww;
    const int h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
    for (int a = 0; a < wh; a++) {
        const int ih = h0 + a;
        if (ih < 0 || ih >= (int)g.H) continue;
        for (int b = 0; b < ww; b++) {
            const int iw = w0 + b;
            if (iw < 0 || iw >= (int)g.W) continue;
            f(a, b, ih, iw);
        }
    }
}

/* Max selection over window (oh, ow) for VL channels from x at xb (offset of channel c, pixel
 * (0,0)); best[l] = the chosen input position ih*W+iw (-1 when none); acc[l] its value, or the
 * NaN / 0 of pool_one when nothing was selected. Average: acc = sum / divisor. */
template <typename T, int VL, int KH, int KW>
__device__ __forceinline__ void p2_window(const P2 &g, const T *X, unsigned xb, unsigned rs, unsigned cs, int oh, int ow,
                                          typename fdnn_ewd::Acc<T>::type *acc, int *best)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const int wh = KH > 0 ? KH : g.wh, ww = KW > 0 ? KW : g.ww;
    int nanf[VL];
#pragma unroll
    for (int l = 0; l < VL; l++) acc[l] = g.is_max ? F(-INFINITY) : F(0), best[l] = -1, nanf[l] = 0;
    unsigned cnt = 0;
    p2_taps<KH, KW>(g, oh, ow, [&](int, int, int ih, int iw) {
        F v[VL];
        VLd<T, VL>::ld(X + xb + (unsigned)ih * rs + (unsigned)iw * cs, v);
        cnt++;
        const int pos = ih * (int)g.W + iw;
#pragma unroll
        for (int l = 0; l < VL; l++) p2_take(g, v[l], pos, acc[l], best[l], nanf[l]);
    });
#pragma unroll
    for (int l = 0; l < VL; l++) p2_finish(g, cnt, wh * ww, acc[l], best[l]);
}

/* Window selection without positions, for the kernels that are instruction-bound with p2_take
 * (ncu on the H200: the 3x3/2 pooling kernels ran at 84% of the SM's issue rate and 31% of
 * DRAM). PMODE (pool_mode): 0 average (sum in scan order, as p2_take), 1 max skipping NaN
 * (fmax folded from NaN: a NaN is dropped, an all-NaN window stays NaN), 2 max propagating NaN
 * (max.NaN folded from -inf), 3 / 4 the argmax tap of max skipping / propagating NaN (the first
 * maximum in scan order; with propagation the first NaN, for good). Values equal p2_take +
 * p2_finish; a propagated NaN comes out as the canonical NaN. */
__device__ __forceinline__ float pf_maxnan(float a, float b)
{
    float r;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
__device__ __forceinline__ double pf_maxnan(double a, double b) { return a != a ? a : b != b ? b : fmax(a, b); }
template <int PM, typename F> __device__ __forceinline__ F pf_init() { return PM == 0 ? F(0) : PM == 1 || PM == 3 ? F(NAN) : F(-INFINITY); }
template <int PM, typename F> __device__ __forceinline__ void pf_take(F &acc, int &best, F v, int tap)
{
    if (PM == 0) acc += v;
    else if (PM == 1) acc = fmax(acc, v);
    else if (PM == 2) acc = pf_maxnan(acc, v);
    else if (PM == 3) {
        if (v == v && !(v <= acc)) acc = v, best = tap; /* acc NaN until the first number */
    } else if (acc == acc && (best < 0 || !(v <= acc))) {
        acc = v, best = tap; /* a NaN v is taken and stops the scan */
    }
}
template <int PM, typename F> __device__ __forceinline__ F pf_finish(const P2 &g, F acc, unsigned cnt, int wsize)
{
    if (PM == 0) {
        const F d = g.incl ? F(wsize) : F(cnt);
        return d > F(0) ? acc / d : F(0);
    }
    return cnt ? acc : F(0);
}
static inline int pool_mode(const P2 &g, bool map) { return !g.is_max ? 0 : (g.prop ? 2 : 1) + (map ? 2 : 0); }

/* NHWC (VL > 1) 3x3 windows with stride 2, any padding: one thread per (n, oh, ow, channel
 * vector), its 9 input vectors loaded before the selection, which folds with pf_take (PM < 3:
 * into y with alpha / beta; PM 3 / 4: the selected tap a*3 + b, -1 for none, into map in dy's
 * memory order, as pool2d_argmax_map writes it). items = N * OH * OW * (C / VL). */
template <int VL> struct MapSt;
template <> struct MapSt<2> {
    static __device__ __forceinline__ void st(signed char *p, const int *t) { *reinterpret_cast<char2 *>(p) = make_char2((char)t[0], (char)t[1]); }
};
template <> struct MapSt<4> {
    static __device__ __forceinline__ void st(signed char *p, const int *t)
    {
        *reinterpret_cast<char4 *>(p) = make_char4((char)t[0], (char)t[1], (char)t[2], (char)t[3]);
    }
};
template <> struct MapSt<8> {
    static __device__ __forceinline__ void st(signed char *p, const int *t)
    {
        MapSt<4>::st(p, t);
        MapSt<4>::st(p + 4, t + 4);
    }
};
/* 16-bit max selection without positions (PM 1 / 2) on packed pairs: a 16-bit max is exact, so
 * folding the pairs with max / max.NaN (__hmax2 / __hmax2_nan: the same NaN rules as fmax and
 * max.NaN.f32, a propagated NaN canonical) gives the values the float fold gives, at a quarter of
 * the instructions (half the NHWC 3x3/2 forward's time went to conversions and folds in float).
 * FREEDNN_CUDA_POOL_H2=0 (read once per process): the float fold (and in pool2d_bwd_cell_nhwc
 * the divisions), for timing. */
template <typename T> struct H2 { typedef void type; };
template <> struct H2<__half> { typedef __half2 type; };
template <> struct H2<__nv_bfloat16> { typedef __nv_bfloat162 type; };
bool pool_h2_on()
{
    static const bool on = fdnn_env_int("FREEDNN_CUDA_POOL_H2", 1) != 0;
    return on;
}
template <typename P, int PM> __device__ __forceinline__ P h2_fold(P a, P b)
{
    if constexpr (PM == 1) return __hmax2(a, b);
    else return __hmax2_nan(a, b);
}
template <typename P, int PM> __device__ __forceinline__ P h2_init()
{
    typedef decltype(P().x) E;
    const E e = PM == 1 ? E(__ushort_as_half((unsigned short)0x7fffu)) : E(-INFINITY);
    P r;
    r.x = e, r.y = e;
    return r;
}
template <> __device__ __forceinline__ __nv_bfloat162 h2_init<__nv_bfloat162, 1>()
{
    const __nv_bfloat16 e = __ushort_as_bfloat16((unsigned short)0x7fffu);
    return __nv_bfloat162(e, e);
}
template <> __device__ __forceinline__ __nv_bfloat162 h2_init<__nv_bfloat162, 2>()
{
    const __nv_bfloat16 e = __float2bfloat16(-INFINITY);
    return __nv_bfloat162(e, e);
}

template <typename T, int VL, int PM>
__global__ void __launch_bounds__(256) pool2d_k3s2_nhwc(P2 g, const T *X, T *Y, signed char *map, typename fdnn_ewd::Acc<T>::type alpha,
                                                        typename fdnn_ewd::Acc<T>::type beta, unsigned items, bool h2)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < items; k += gridDim.x * blockDim.x) {
        const unsigned c = fmod_(g.fCV, k) * VL;
        unsigned r = fdiv(g.fCV, k);
        const unsigned ow = fmod_(g.fOW, r);
        r = fdiv(g.fOW, r);
        const unsigned oh = fmod_(g.fOH, r), n = fdiv(g.fOH, r);
        const int h0 = 2 * (int)oh - g.ph, w0 = 2 * (int)ow - g.pw;
        const T *xb = X + (size_t)n * g.H * g.W * g.C + c;
        if constexpr (sizeof(T) == 2 && VL == 8 && (PM == 1 || PM == 2)) {
            if (h2) {
                typedef typename H2<T>::type P;
                union U { uint4 u; P p[4]; };
                U v[3][3];
                bool ok[3][3];
#pragma unroll
                for (int a = 0; a < 3; a++)
#pragma unroll
                    for (int b = 0; b < 3; b++) {
                        const int ih = h0 + a, iw = w0 + b;
                        ok[a][b] = ih >= 0 && ih < (int)g.H && iw >= 0 && iw < (int)g.W;
                        if (ok[a][b]) v[a][b].u = *reinterpret_cast<const uint4 *>(xb + ((size_t)ih * g.W + (unsigned)iw) * g.C);
                    }
                U acc;
#pragma unroll
                for (int l = 0; l < 4; l++) acc.p[l] = h2_init<P, PM>();
                unsigned cnt = 0;
#pragma unroll
                for (int a = 0; a < 3; a++)
#pragma unroll
                    for (int b = 0; b < 3; b++) {
                        if (!ok[a][b]) continue;
                        cnt++;
#pragma unroll
                        for (int l = 0; l < 4; l++) acc.p[l] = h2_fold<P, PM>(acc.p[l], v[a][b].p[l]);
                    }
                if (!cnt) acc.u = make_uint4(0u, 0u, 0u, 0u);
                T *yo = Y + (size_t)k * VL;
                if (alpha == F(1) && beta == F(0)) {
                    *reinterpret_cast<uint4 *>(yo) = acc.u;
                } else {
                    F o[VL];
#pragma unroll
                    for (int l = 0; l < 4; l++) o[2 * l] = fdnn_ewd::to_a(acc.p[l].x), o[2 * l + 1] = fdnn_ewd::to_a(acc.p[l].y);
                    VLd<T, VL>::st(yo, o, alpha, beta);
                }
                continue;
            }
        }
        F v[3][3][VL];
        bool ok[3][3];
#pragma unroll
        for (int a = 0; a < 3; a++)
#pragma unroll
            for (int b = 0; b < 3; b++) {
                const int ih = h0 + a, iw = w0 + b;
                ok[a][b] = ih >= 0 && ih < (int)g.H && iw >= 0 && iw < (int)g.W;
                if (ok[a][b]) VLd<T, VL>::ld(xb + ((size_t)ih * g.W + (unsigned)iw) * g.C, v[a][b]);
            }
        F acc[VL];
        int best[VL];
#pragma unroll
        for (int l = 0; l < VL; l++) acc[l] = pf_init<PM, F>(), best[l] = -1;
        unsigned cnt = 0;
#pragma unroll
        for (int a = 0; a < 3; a++)
#pragma unroll
            for (int b = 0; b < 3; b++) {
                if (!ok[a][b]) continue;
                cnt++;
#pragma unroll
                for (int l = 0; l < VL; l++) pf_take<PM>(acc[l], best[l], v[a][b][l], a * 3 + b);
            }
        const size_t o = (size_t)k * VL; /* y (dy) is NHWC: k is its vector index */
        if (PM >= 3) {
            MapSt<VL>::st(map + o, best);
        } else {
#pragma unroll
            for (int l = 0; l < VL; l++) acc[l] = pf_finish<PM>(g, acc[l], cnt, 9);
            VLd<T, VL>::st(Y + o, acc, alpha, beta);
        }
    }
}

/* FREEDNN_CUDA_POOL_NHWC=0 (read once per process): the general kernels instead of
 * pool2d_k3s2_nhwc, for timing. */
bool pool_nhwc_k3s2_on()
{
    static const bool on = fdnn_env_int("FREEDNN_CUDA_POOL_NHWC", 1) != 0;
    return on;
}

/* FREEDNN_CUDA_POOL_X1=1 (read once per process): the one-output NCHW 3x3/2 forward instead of
 * two outputs per thread, for timing. */
bool pool_x1_only()
{
    static const bool on = fdnn_env_int("FREEDNN_CUDA_POOL_X1", 0) == 1;
    return on;
}

/* Launches pool2d_k3s2_nhwc (forward into y, or the argmax map when map != NULL) when it
 * applies: VL > 1 (every tensor NHWC), 3x3 window, stride 2. */
template <typename T, int VL>
bool pool_k3s2_nhwc_go(cudnnHandle_t h, const P2 &g, const T *X, T *Y, signed char *map, typename fdnn_ewd::Acc<T>::type alpha,
                       typename fdnn_ewd::Acc<T>::type beta)
{
    if constexpr (VL == 1) return false; /* (no VL = 1 instances of the kernel) */
    else {
        if (g.wh != 3 || g.ww != 3 || g.sh != 2 || g.sw != 2 || !pool_nhwc_k3s2_on()) return false;
        const unsigned items = g.total / VL;
        if (items == 0) return false;
        const unsigned grid = fdnn_ewd::dense_grid(h, items);
        cudaStream_t s = (cudaStream_t)h->stream;
        switch (pool_mode(g, map != NULL)) {
        case 0: pool2d_k3s2_nhwc<T, VL, 0><<<grid, 256, 0, s>>>(g, X, Y, map, alpha, beta, items, false); break;
        case 1: pool2d_k3s2_nhwc<T, VL, 1><<<grid, 256, 0, s>>>(g, X, Y, map, alpha, beta, items, pool_h2_on()); break;
        case 2: pool2d_k3s2_nhwc<T, VL, 2><<<grid, 256, 0, s>>>(g, X, Y, map, alpha, beta, items, pool_h2_on()); break;
        case 3: pool2d_k3s2_nhwc<T, VL, 3><<<grid, 256, 0, s>>>(g, X, Y, map, alpha, beta, items, false); break;
        default: pool2d_k3s2_nhwc<T, VL, 4><<<grid, 256, 0, s>>>(g, X, Y, map, alpha, beta, items, false); break;
        }
        return true;
    }
}

/* Forward of the common 3x3 / stride 2 / padding 1 window on packed NCHW with an even W (then
 * OW = W / 2, and input columns 2ow, 2ow+1 of every window row are one aligned pair). One thread
 * per output, consecutive outputs on consecutive lanes: each thread loads its 3 pairs (coalesced,
 * 3 loads instead of 9) and takes column 2ow-1 from the pair of the lane to its left (same row,
 * ow-1) by a shuffle, loading it only on lane 0. Same scan order, p2_take / p2_finish rules and
 * results as p2_window. Lanes past the end stay in the loop so that every shuffle sees a full
 * warp. The selection folds with pf_take (PM: pool_mode); PM 3 / 4 write the selected tap
 * (a*3 + b, -1 for none) to map[k] instead of y (the max backward's argmax map, as
 * pool2d_argmax_map writes it). */
template <typename T> using PoolPair = fdnn_ewd::Pair2<T>;
template <typename T, int PM>
__global__ void __launch_bounds__(256) pool2d_fwd_k3s2p1_nchw(P2 g, const T *X, T *Y, signed char *map, typename fdnn_ewd::Acc<T>::type alpha,
                                                              typename fdnn_ewd::Acc<T>::type beta)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const unsigned lane = threadIdx.x & 31u, stride = gridDim.x * blockDim.x;
    for (unsigned base = blockIdx.x * blockDim.x + threadIdx.x - lane; base < g.total; base += stride) {
        const unsigned k = base + lane;
        const bool act = k < g.total;
        unsigned ow = 0, oh = 0, plane = 0;
        if (act) p2_plane_decode(g.fOW, g.fOH, k, ow, oh, plane);
        const T *xp = X + (size_t)plane * g.H * g.W;
        F c0[3], c1[3], cl[3];
        bool rok[3];
#pragma unroll
        for (int a = 0; a < 3; a++) {
            const int ih = 2 * (int)oh - 1 + a;
            rok[a] = act && ih >= 0 && ih < (int)g.H;
            c0[a] = c1[a] = F(0);
            if (rok[a]) {
                const PoolPair<T> v = *reinterpret_cast<const PoolPair<T> *>(xp + (unsigned)ih * g.W + 2u * ow);
                c0[a] = fdnn_ewd::to_a(v.a);
                c1[a] = fdnn_ewd::to_a(v.b);
            }
            cl[a] = __shfl_up_sync(0xffffffffu, c1[a], 1);
            if (lane == 0 && rok[a] && ow > 0) cl[a] = fdnn_ewd::to_a(xp[(unsigned)ih * g.W + 2u * ow - 1u]);
        }
        if (!act) continue;
        F acc = pf_init<PM, F>();
        int best = -1;
        unsigned cnt = 0;
#pragma unroll
        for (int a = 0; a < 3; a++) {
            if (!rok[a]) continue;
            if (ow > 0) {
                pf_take<PM>(acc, best, cl[a], 3 * a);
                cnt++;
            }
            pf_take<PM>(acc, best, c0[a], 3 * a + 1);
            pf_take<PM>(acc, best, c1[a], 3 * a + 2);
            cnt += 2;
        }
        if (PM >= 3) {
            map[k] = (signed char)best;
            continue;
        }
        acc = pf_finish<PM>(g, acc, cnt, 9);
        VLd<T, 1>::st(Y + k, &acc, alpha, beta);
    }
}

/* Forward, any window: one thread per output (vector) in y's memory order, the window folded
 * with pf_take (PM = pool_mode, 0..2) in row-major scan order. */
template <typename T, int VL, int KH, int KW, int PM>
__global__ void __launch_bounds__(256) pool2d_fwd_fast(P2 g, const T *X, T *Y, typename fdnn_ewd::Acc<T>::type alpha,
                                                       typename fdnn_ewd::Acc<T>::type beta)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const int wh = KH > 0 ? KH : g.wh, ww = KW > 0 ? KW : g.ww;
    const unsigned nv = g.total / VL;
    const unsigned rs = g.xnhwc ? g.W * g.C : g.W, cs = g.xnhwc ? g.C : 1;
    for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < nv; k += gridDim.x * blockDim.x) {
        unsigned n, c, oh, ow;
        p2_decode(k, g.ynhwc, g.fCV, VL, g.fOH, g.fOW, n, c, oh, ow);
        const unsigned xb = g.xnhwc ? n * g.H * g.W * g.C + c : (n * g.C + c) * g.H * g.W;
        F acc[VL];
        int best[VL];
#pragma unroll
        for (int l = 0; l < VL; l++) acc[l] = pf_init<PM, F>(), best[l] = -1;
        unsigned cnt = 0;
        p2_taps<KH, KW>(g, (int)oh, (int)ow, [&](int, int, int ih, int iw) {
            F v[VL];
            VLd<T, VL>::ld(X + xb + (unsigned)ih * rs + (unsigned)iw * cs, v);
            cnt++;
#pragma unroll
            for (int l = 0; l < VL; l++) pf_take<PM>(acc[l], best[l], v[l], 0);
        });
#pragma unroll
        for (int l = 0; l < VL; l++) acc[l] = pf_finish<PM>(g, acc[l], cnt, wh * ww);
        VLd<T, VL>::st(Y + (size_t)k * VL, acc, alpha, beta);
    }
}

/* Launches pool2d_fwd_fast for the window size (2x2 and 3x3 unrolled) and pool_mode. */
template <typename T, int VL, int KH, int KW>
void pool_fwd_fast_go(const P2 &g, unsigned grid, cudaStream_t s, const T *X, T *Y, typename fdnn_ewd::Acc<T>::type alpha,
                      typename fdnn_ewd::Acc<T>::type beta)
{
    switch (pool_mode(g, false)) {
    case 0: pool2d_fwd_fast<T, VL, KH, KW, 0><<<grid, 256, 0, s>>>(g, X, Y, alpha, beta); break;
    case 1: pool2d_fwd_fast<T, VL, KH, KW, 1><<<grid, 256, 0, s>>>(g, X, Y, alpha, beta); break;
    default: pool2d_fwd_fast<T, VL, KH, KW, 2><<<grid, 256, 0, s>>>(g, X, Y, alpha, beta); break;
    }
}

template <typename T, int VL, int KH, int KW>
__global__ void __launch_bounds__(256) pool2d_bwd_fast(P2 g, const T *X, const T *DY, T *DX, typename fdnn_ewd::Acc<T>::type alpha,
                                                       typename fdnn_ewd::Acc<T>::type beta)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const int wh = KH > 0 ? KH : g.wh, ww = KW > 0 ? KW : g.ww;
    const unsigned nv = g.total / VL;
    const unsigned rs = g.xnhwc ? g.W * g.C : g.W, cs = g.xnhwc ? g.C : 1;
    for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < nv; k += gridDim.x * blockDim.x) {
        unsigned n, c, ih, iw;
        p2_decode(k, g.onhwc, g.fCV, VL, g.fH, g.fW, n, c, ih, iw);
        const unsigned xb = g.xnhwc ? n * g.H * g.W * g.C + c : (n * g.C + c) * g.H * g.W;
        const int me = (int)(ih * g.W + iw);
        /* outputs o with o*str - pad <= i <= o*str - pad + win - 1 */
        const int th = (int)ih + g.ph - wh + 1, tw = (int)iw + g.pw - ww + 1;
        const int lh = th <= 0 ? 0 : (int)fdiv(g.fsh, (unsigned)(th + g.sh - 1)), lw = tw <= 0 ? 0 : (int)fdiv(g.fsw, (unsigned)(tw + g.sw - 1));
        int uh = (int)fdiv(g.fsh, ih + (unsigned)g.ph), uw = (int)fdiv(g.fsw, iw + (unsigned)g.pw);
        if (uh > (int)g.OH - 1) uh = (int)g.OH - 1;
        if (uw > (int)g.OW - 1) uw = (int)g.OW - 1;
        F acc[VL];
#pragma unroll
        for (int l = 0; l < VL; l++) acc[l] = F(0);
        for (int oh = lh; oh <= uh; oh++)
            for (int ow = lw; ow <= uw; ow++) {
                F d[VL];
                VLd<T, VL>::ld(DY + p2_off(g.ynhwc, n, c, (unsigned)oh, (unsigned)ow, g.C, g.OH, g.OW), d);
                if (g.is_max) {
                    F v[VL];
                    int best[VL];
                    p2_window<T, VL, KH, KW>(g, X, xb, rs, cs, oh, ow, v, best);
#pragma unroll
                    for (int l = 0; l < VL; l++)
                        if (best[l] == me) acc[l] += d[l];
                } else {
                    F div;
                    if (g.incl) div = F(wh * ww);
                    else {
                        const int hs = oh * g.sh - g.ph, ws = ow * g.sw - g.pw;
                        const int h0 = hs < 0 ? 0 : hs, h1 = hs + wh < (int)g.H ? hs + wh : (int)g.H;
                        const int w0 = ws < 0 ? 0 : ws, w1 = ws + ww < (int)g.W ? ws + ww : (int)g.W;
                        div = F((h1 - h0) * (w1 - w0));
                    }
                    if (div <= F(0)) continue;
#pragma unroll
                    for (int l = 0; l < VL; l++) acc[l] += d[l] / div;
                }
            }
        VLd<T, VL>::st(DX + (size_t)k * VL, acc, alpha, beta);
    }
}

/* Max backward when no input lies in two windows (stride >= window in both dims): one thread per
 * dy (vector), in dy's memory order, selects its window's maximum (pf_take's tap form, PM 3 / 4:
 * the forward's rules) and writes every dx element of its stride cell -- rows [oh*sh - ph, (oh+1)*sh - ph),
 * the first cell extended down to row 0 and the last up to H (columns alike), so the cells
 * partition dx and each window lies inside its cell: dy at the selected element, 0 elsewhere
 * (accumulated as 0 + dy, the gather's arithmetic), blended with alpha/beta. dx zero-fill and
 * scatter in one pass; each dx element is written by exactly one thread. */
template <typename T, int VL, int KH, int KW, int PM>
__global__ void __launch_bounds__(256) pool2d_maxbwd_cell(P2 g, const T *X, const T *DY, T *DX, typename fdnn_ewd::Acc<T>::type alpha,
                                                          typename fdnn_ewd::Acc<T>::type beta)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const unsigned nv = g.total / VL; /* g.total: dy elements */
    const unsigned rs = g.xnhwc ? g.W * g.C : g.W, cs = g.xnhwc ? g.C : 1;
    for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < nv; k += gridDim.x * blockDim.x) {
        unsigned n, c, oh, ow;
        p2_decode(k, g.ynhwc, g.fCV, VL, g.fOH, g.fOW, n, c, oh, ow);
        const unsigned xb = g.xnhwc ? n * g.H * g.W * g.C + c : (n * g.C + c) * g.H * g.W;
        const int ww = KW > 0 ? KW : g.ww;
        const int h0 = (int)oh * g.sh - g.ph, w0 = (int)ow * g.sw - g.pw;
        F v[VL], d[VL];
        int best[VL]; /* the selected tap a*ww + b (pf_take, PM 3 / 4), -1 for none; then its position */
#pragma unroll
        for (int l = 0; l < VL; l++) v[l] = pf_init<PM, F>(), best[l] = -1;
        p2_taps<KH, KW>(g, (int)oh, (int)ow, [&](int a, int b, int ih, int iw) {
            F x[VL];
            VLd<T, VL>::ld(X + xb + (unsigned)ih * rs + (unsigned)iw * cs, x);
#pragma unroll
            for (int l = 0; l < VL; l++) pf_take<PM>(v[l], best[l], x[l], a * ww + b);
        });
#pragma unroll
        for (int l = 0; l < VL; l++) /* the tap as the input position ih*W + iw (once, not per cell pixel) */
            if (best[l] >= 0) best[l] = (h0 + best[l] / ww) * (int)g.W + w0 + best[l] % ww;
        VLd<T, VL>::ld(DY + (size_t)k * VL, d);
        int r0 = oh == 0 ? 0 : (int)oh * g.sh - g.ph, r1 = oh + 1 == g.OH ? (int)g.H : ((int)oh + 1) * g.sh - g.ph;
        int c0 = ow == 0 ? 0 : (int)ow * g.sw - g.pw, c1 = ow + 1 == g.OW ? (int)g.W : ((int)ow + 1) * g.sw - g.pw;
        r0 = r0 < 0 ? 0 : r0 > (int)g.H ? (int)g.H : r0, r1 = r1 < 0 ? 0 : r1 > (int)g.H ? (int)g.H : r1;
        c0 = c0 < 0 ? 0 : c0 > (int)g.W ? (int)g.W : c0, c1 = c1 < 0 ? 0 : c1 > (int)g.W ? (int)g.W : c1;
        for (int ih = r0; ih < r1; ih++)
            for (int iw = c0; iw < c1; iw++) {
                const int me = ih * (int)g.W + iw;
                F acc[VL];
#pragma unroll
                for (int l = 0; l < VL; l++) {
                    acc[l] = F(0);
                    if (best[l] == me) acc[l] += d[l];
                }
                VLd<T, VL>::st(DX + p2_off(g.onhwc, n, c, (unsigned)ih, (unsigned)iw, g.C, g.H, g.W), acc, alpha, beta);
            }
    }
}

/* Overlapping max backward, step 1: one thread per dy (vector) records which tap of its window
 * the forward selects (a*ww + b, -1 for none) as one signed byte per output element in map
 * (dy's memory order). */
template <typename T, int VL, int KH, int KW>
__global__ void __launch_bounds__(256) pool2d_argmax_map(P2 g, const T *X, signed char *map)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const int ww = KW > 0 ? KW : g.ww;
    const unsigned nv = g.total / VL; /* g.total: dy elements */
    const unsigned rs = g.xnhwc ? g.W * g.C : g.W, cs = g.xnhwc ? g.C : 1;
    for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < nv; k += gridDim.x * blockDim.x) {
        unsigned n, c, oh, ow;
        p2_decode(k, g.ynhwc, g.fCV, VL, g.fOH, g.fOW, n, c, oh, ow);
        const unsigned xb = g.xnhwc ? n * g.H * g.W * g.C + c : (n * g.C + c) * g.H * g.W;
        F v[VL];
        int best[VL];
        p2_window<T, VL, KH, KW>(g, X, xb, rs, cs, (int)oh, (int)ow, v, best);
        const int h0 = (int)oh * g.sh - g.ph, w0 = (int)ow * g.sw - g.pw;
#pragma unroll
        for (int l = 0; l < VL; l++) {
            int tap = -1;
            if (best[l] >= 0) {
                const int bh = (int)fdiv(g.fW, (unsigned)best[l]), bw = best[l] - bh * (int)g.W;
                tap = (bh - h0) * ww + (bw - w0);
            }
            map[(size_t)k * VL + l] = (signed char)tap;
        }
    }
}

template <int VL> struct MapLd;
template <> struct MapLd<1> { static __device__ __forceinline__ void ld(const signed char *p, int *t) { t[0] = p[0]; } };
template <> struct MapLd<2> {
    static __device__ __forceinline__ void ld(const signed char *p, int *t)
    {
        const char2 v = *reinterpret_cast<const char2 *>(p);
        t[0] = (signed char)v.x, t[1] = (signed char)v.y;
    }
};
template <> struct MapLd<4> {
    static __device__ __forceinline__ void ld(const signed char *p, int *t)
    {
        const char4 v = *reinterpret_cast<const char4 *>(p);
        t[0] = (signed char)v.x, t[1] = (signed char)v.y, t[2] = (signed char)v.z, t[3] = (signed char)v.w;
    }
};
template <> struct MapLd<8> {
    static __device__ __forceinline__ void ld(const signed char *p, int *t)
    {
        MapLd<4>::ld(p, t);
        MapLd<4>::ld(p + 4, t + 4);
    }
};

/* Overlapping max backward, step 2: the gather of pool2d_bwd_fast (one thread per dx vector,
 * covering windows in ascending output order, acc = 0 + dy + ...), but each window's selection
 * is the recorded tap instead of a re-run: dy is read only where the tap is this element. */
template <typename T, int VL, int KH, int KW>
__global__ void __launch_bounds__(256) pool2d_maxbwd_map(P2 g, const signed char *map, const T *DY, T *DX, typename fdnn_ewd::Acc<T>::type alpha,
                                                         typename fdnn_ewd::Acc<T>::type beta)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const int wh = KH > 0 ? KH : g.wh, ww = KW > 0 ? KW : g.ww;
    const unsigned nv = g.total / VL; /* g.total: dx elements */
    for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < nv; k += gridDim.x * blockDim.x) {
        unsigned n, c, ih, iw;
        p2_decode(k, g.onhwc, g.fCV, VL, g.fH, g.fW, n, c, ih, iw);
        const int th = (int)ih + g.ph - wh + 1, tw = (int)iw + g.pw - ww + 1;
        const int lh = th <= 0 ? 0 : (int)fdiv(g.fsh, (unsigned)(th + g.sh - 1)), lw = tw <= 0 ? 0 : (int)fdiv(g.fsw, (unsigned)(tw + g.sw - 1));
        int uh = (int)fdiv(g.fsh, ih + (unsigned)g.ph), uw = (int)fdiv(g.fsw, iw + (unsigned)g.pw);
        if (uh > (int)g.OH - 1) uh = (int)g.OH - 1;
        if (uw > (int)g.OW - 1) uw = (int)g.OW - 1;
        F acc[VL];
#pragma unroll
        for (int l = 0; l < VL; l++) acc[l] = F(0);
        for (int oh = lh; oh <= uh; oh++)
            for (int ow = lw; ow <= uw; ow++) {
                const unsigned yo = p2_off(g.ynhwc, n, c, (unsigned)oh, (unsigned)ow, g.C, g.OH, g.OW);
                const int me = ((int)ih - (oh * g.sh - g.ph)) * ww + ((int)iw - (ow * g.sw - g.pw));
                int t[VL];
                MapLd<VL>::ld(map + yo, t);
                bool any = false;
#pragma unroll
                for (int l = 0; l < VL; l++) any |= t[l] == me;
                if (!any) continue;
                F d[VL];
                VLd<T, VL>::ld(DY + yo, d);
#pragma unroll
                for (int l = 0; l < VL; l++)
                    if (t[l] == me) acc[l] += d[l];
            }
        VLd<T, VL>::st(DX + (size_t)k * VL, acc, alpha, beta);
    }
}

/* The same forward with two outputs per thread when W % 4 == 0 (OW even): output columns 2u and
 * 2u+1 read input columns 4u-1 .. 4u+3; each thread loads its quad 4u .. 4u+3 of every window
 * row (one 16-byte load for FLOAT) and takes column 4u-1 from the lane to its left by a shuffle
 * (loading it on lane 0). Twice the bytes in flight per thread of the pair form; same rules. */
template <typename T> struct alignas(4 * sizeof(T)) PoolQuad {
    T a, b, c, d;
};
template <typename T, int PM>
__global__ void __launch_bounds__(256) pool2d_fwd_k3s2p1_nchw_x2(P2 g, const T *X, T *Y, typename fdnn_ewd::Acc<T>::type alpha,
                                                                 typename fdnn_ewd::Acc<T>::type beta, fdnn_ewd::FDiv fU)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const unsigned lane = threadIdx.x & 31u, stride = gridDim.x * blockDim.x, units = g.total / 2; /* output pairs */
    for (unsigned base = blockIdx.x * blockDim.x + threadIdx.x - lane; base < units; base += stride) {
        const unsigned k = base + lane;
        const bool act = k < units;
        unsigned u = 0, oh = 0, plane = 0;
        if (act) p2_plane_decode(fU, g.fOH, k, u, oh, plane); /* pairs per output row = OW / 2 */
        const T *xp = X + (size_t)plane * g.H * g.W;
        F c[3][4], cl[3];
        bool rok[3];
#pragma unroll
        for (int a = 0; a < 3; a++) {
            const int ih = 2 * (int)oh - 1 + a;
            rok[a] = act && ih >= 0 && ih < (int)g.H;
            c[a][0] = c[a][1] = c[a][2] = c[a][3] = F(0);
            if (rok[a]) {
                const PoolQuad<T> v = *reinterpret_cast<const PoolQuad<T> *>(xp + (unsigned)ih * g.W + 4u * u);
                c[a][0] = fdnn_ewd::to_a(v.a), c[a][1] = fdnn_ewd::to_a(v.b), c[a][2] = fdnn_ewd::to_a(v.c), c[a][3] = fdnn_ewd::to_a(v.d);
            }
            cl[a] = __shfl_up_sync(0xffffffffu, c[a][3], 1);
            if (lane == 0 && rok[a] && u > 0) cl[a] = fdnn_ewd::to_a(xp[(unsigned)ih * g.W + 4u * u - 1u]);
        }
        if (!act) continue;
        F acc[2];
#pragma unroll
        for (int o = 0; o < 2; o++) { /* output column 2u + o: input columns 4u + 2o - 1 .. 4u + 2o + 1 */
            acc[o] = pf_init<PM, F>();
            int best = -1;
            unsigned cnt = 0;
#pragma unroll
            for (int a = 0; a < 3; a++) {
                if (!rok[a]) continue;
                if (o == 1 || u > 0) {
                    pf_take<PM>(acc[o], best, o ? c[a][1] : cl[a], 3 * a);
                    cnt++;
                }
                pf_take<PM>(acc[o], best, c[a][2 * o], 3 * a + 1);
                pf_take<PM>(acc[o], best, c[a][2 * o + 1], 3 * a + 2);
                cnt += 2;
            }
            acc[o] = pf_finish<PM>(g, acc[o], cnt, 9);
        }
        T *yo = Y + (size_t)k * 2;
        PoolPair<T> v;
        if (beta != F(0)) v = *reinterpret_cast<const PoolPair<T> *>(yo);
        F r0 = alpha * acc[0], r1 = alpha * acc[1];
        if (beta != F(0)) r0 += beta * fdnn_ewd::to_a(v.a), r1 += beta * fdnn_ewd::to_a(v.b);
        v.a = fdnn_ewd::from_a<T>(r0);
        v.b = fdnn_ewd::from_a<T>(r1);
        *reinterpret_cast<PoolPair<T> *>(yo) = v;
    }
}

/* The 2x2 / stride 2 NCHW pair kernels' x block: output pair k (oh; 2u, 2u+1) reads x rows 2oh,
 * 2oh+1 at columns 4u .. 4u+3 as two quads, converted into c[row][column]; returns the block's
 * first x index (the dx block of the backward has the same index). */
template <typename T, typename F>
__device__ __forceinline__ size_t k2s2_block(const P2 &g, fdnn_ewd::FDiv fU, const T *X, unsigned k, F (&c)[2][4])
{
    unsigned u, oh, plane;
    p2_plane_decode(fU, g.fOH, k, u, oh, plane);
    const size_t xo = ((size_t)plane * g.H + 2u * oh) * g.W + 4u * u;
    const PoolQuad<T> q0 = *reinterpret_cast<const PoolQuad<T> *>(X + xo), q1 = *reinterpret_cast<const PoolQuad<T> *>(X + xo + g.W);
    c[0][0] = fdnn_ewd::to_a(q0.a), c[0][1] = fdnn_ewd::to_a(q0.b), c[0][2] = fdnn_ewd::to_a(q0.c), c[0][3] = fdnn_ewd::to_a(q0.d);
    c[1][0] = fdnn_ewd::to_a(q1.a), c[1][1] = fdnn_ewd::to_a(q1.b), c[1][2] = fdnn_ewd::to_a(q1.c), c[1][3] = fdnn_ewd::to_a(q1.d);
    return xo;
}

/* Forward of the 2x2 / stride 2 / no-padding window on packed NCHW with H = 2*OH, W = 2*OW and
 * W % 4 == 0: one thread per output pair (oh; 2u, 2u+1), reading x rows 2oh, 2oh+1 at columns
 * 4u .. 4u+3 as two quads and writing the pair (pool2d_fwd_fast reads pairs and writes single
 * values). Same fold as that kernel: pf_take over the taps in row-major order, pf_finish with 4
 * taps. units = planes * OH * OW / 2; fU divides by OW / 2. */
template <typename T, int PM>
__global__ void __launch_bounds__(256) pool2d_fwd_k2s2_nchw_x2(P2 g, const T *X, T *Y, unsigned units, fdnn_ewd::FDiv fU,
                                                               typename fdnn_ewd::Acc<T>::type alpha, typename fdnn_ewd::Acc<T>::type beta)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < units; k += gridDim.x * blockDim.x) {
        F c[2][4];
        k2s2_block(g, fU, X, k, c);
        F r[2];
#pragma unroll
        for (int w = 0; w < 2; w++) {
            F acc = pf_init<PM, F>();
            int best = -1;
#pragma unroll
            for (int a = 0; a < 2; a++)
#pragma unroll
                for (int b = 0; b < 2; b++) pf_take<PM>(acc, best, c[a][2 * w + b], 0);
            r[w] = alpha * pf_finish<PM>(g, acc, 4u, 4);
        }
        T *yo = Y + (size_t)k * 2;
        PoolPair<T> v;
        if (beta != F(0)) {
            v = *reinterpret_cast<const PoolPair<T> *>(yo);
            r[0] += beta * fdnn_ewd::to_a(v.a), r[1] += beta * fdnn_ewd::to_a(v.b);
        }
        v.a = fdnn_ewd::from_a<T>(r[0]), v.b = fdnn_ewd::from_a<T>(r[1]);
        *reinterpret_cast<PoolPair<T> *>(yo) = v;
    }
}

/* Max backward of the 2x2 / stride 2 / no-padding window on packed NCHW with H = 2*OH, W = 2*OW
 * and W % 4 == 0: one thread per output pair (oh; 2u, 2u+1), i.e. per dx block of rows 2oh, 2oh+1
 * x columns 4u .. 4u+3 (the blocks tile dx): two quad loads of x, one pair load of dy, two quad
 * stores of dx (pool2d_maxbwd_cell moves pairs and single values). Same rules as that kernel: the
 * window's selection by pf_take (PM 3 / 4) over taps a*2 + b in row-major order, and each dx
 * pixel 0 + dy where its window selected it, else 0, blended with alpha / beta.
 * units = planes * OH * OW / 2; fU divides by OW / 2. */
template <typename T, int PM>
__global__ void __launch_bounds__(256) pool2d_maxbwd_k2s2_nchw_x2(P2 g, const T *X, const T *DY, T *DX, unsigned units, fdnn_ewd::FDiv fU,
                                                                  typename fdnn_ewd::Acc<T>::type alpha, typename fdnn_ewd::Acc<T>::type beta)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < units; k += gridDim.x * blockDim.x) {
        F c[2][4];
        const size_t xo = k2s2_block(g, fU, X, k, c);
        const PoolPair<T> dp = *reinterpret_cast<const PoolPair<T> *>(DY + (size_t)k * 2);
        const F d[2] = {fdnn_ewd::to_a(dp.a), fdnn_ewd::to_a(dp.b)};
        F o[2][4];
#pragma unroll
        for (int w = 0; w < 2; w++) { /* window w: columns 2w, 2w+1 of the block */
            F acc = pf_init<PM, F>();
            int best = -1;
#pragma unroll
            for (int a = 0; a < 2; a++)
#pragma unroll
                for (int b = 0; b < 2; b++) pf_take<PM>(acc, best, c[a][2 * w + b], a * 2 + b);
#pragma unroll
            for (int a = 0; a < 2; a++)
#pragma unroll
                for (int b = 0; b < 2; b++) o[a][2 * w + b] = best == a * 2 + b ? F(0) + d[w] : F(0);
        }
#pragma unroll
        for (int a = 0; a < 2; a++) {
            T *dp_ = DX + xo + (a ? g.W : 0u);
            PoolQuad<T> v;
            if (beta != F(0)) v = *reinterpret_cast<const PoolQuad<T> *>(dp_);
            F r[4];
#pragma unroll
            for (int l = 0; l < 4; l++) r[l] = alpha * o[a][l];
            if (beta != F(0)) r[0] += beta * fdnn_ewd::to_a(v.a), r[1] += beta * fdnn_ewd::to_a(v.b), r[2] += beta * fdnn_ewd::to_a(v.c),
                                r[3] += beta * fdnn_ewd::to_a(v.d);
            v.a = fdnn_ewd::from_a<T>(r[0]), v.b = fdnn_ewd::from_a<T>(r[1]), v.c = fdnn_ewd::from_a<T>(r[2]), v.d = fdnn_ewd::from_a<T>(r[3]);
            *reinterpret_cast<PoolQuad<T> *>(dp_) = v;
        }
    }
}

/* Backward of the 3x3 / stride 2 / padding 1 window on packed NCHW with an even W (OW = W / 2,
 * OH = ceil(H / 2)): one thread per output cell (oh, ow), i.e. per dx quad rows 2oh, 2oh+1 x
 * columns 2ow, 2ow+1 (the cells tile dx). The quad's terms come from outputs (oh, ow), (oh, ow+1),
 * (oh+1, ow), (oh+1, ow+1): the thread loads column ow of rows oh and oh+1 and takes column ow+1
 * from the next lane (lane 31 loads it), so each dy term and map byte is loaded once. Pixel
 * (2oh, 2ow) gets tap 4 of (oh, ow); (2oh, 2ow+1) taps 5, 3 of (oh, ow), (oh, ow+1);
 * (2oh+1, 2ow) taps 7, 1 of (oh, ow), (oh+1, ow); (2oh+1, 2ow+1) taps 8, 6, 2, 0 of the four.
 * Terms: average dy / divisor (the divisor of pool2d_avgbwd_w4); max dy where the argmax map (tap
 * a*3 + b of the window) names this pixel. Each pixel sums its terms in ascending (oh, ow) order,
 * as pool2d_avgbwd_w4 / pool2d_maxbwd_map do. Lanes past the end stay in the loop so that every
 * shuffle sees a full warp. items = planes * OH * OW. (A thread per dx pair, loading each term
 * twice, measured 48% (max) and 38% (average) of the copy bandwidth on the H200; this form 67%
 * and 63%.) */
/* Divisor of the 3x3/2 pad-1 average window of output (oh, ow): 9 counting the padding, else
 * the number of its pixels inside the H x W image. */
template <typename F> __device__ __forceinline__ F p2_k3s2p1_div(const P2 &g, int oh, int ow)
{
    if (g.incl) return F(9);
    const int hs = 2 * oh - 1, ws = 2 * ow - 1;
    const int h0 = hs < 0 ? 0 : hs, h1 = hs + 3 < (int)g.H ? hs + 3 : (int)g.H;
    const int w0 = ws < 0 ? 0 : ws, w1 = ws + 3 < (int)g.W ? ws + 3 : (int)g.W;
    return F((h1 - h0) * (w1 - w0));
}

template <typename T, bool MAXM>
__device__ __forceinline__ typename fdnn_ewd::Acc<T>::type p2_cell_term(const P2 &g, const T *dyp, const signed char *mp, int oh, int ow,
                                                                        int &tap)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const unsigned yo = (unsigned)oh * g.OW + (unsigned)ow;
    F q = fdnn_ewd::to_a(dyp[yo]);
    if (MAXM) {
        tap = mp[yo];
        return q;
    }
    const F div = p2_k3s2p1_div<F>(g, oh, ow);
    return div > F(0) ? q / div : F(0);
}
template <typename T, bool MAXM>
__global__ void __launch_bounds__(256) pool2d_bwd_k3s2p1_nchw_cell(P2 g, const signed char *map, const T *DY, T *DX, unsigned items,
                                                                   typename fdnn_ewd::Acc<T>::type alpha, typename fdnn_ewd::Acc<T>::type beta)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const unsigned lane = threadIdx.x & 31u, stride = gridDim.x * blockDim.x;
    for (unsigned base = blockIdx.x * blockDim.x + threadIdx.x - lane; base < items; base += stride) {
        const unsigned k = base + lane;
        const bool act = k < items;
        unsigned ow = 0, oh = 0, plane = 0;
        if (act) p2_plane_decode(g.fOW, g.fOH, k, ow, oh, plane);
        const T *dyp = DY + (size_t)plane * g.OH * g.OW;
        const signed char *mp = MAXM ? map + (size_t)plane * g.OH * g.OW : NULL;
        const bool down = act && oh + 1 < g.OH, right = act && ow + 1 < g.OW;
        int t00 = -1, t10 = -1, t01 = -1, t11 = -1;
        F q00 = F(0), q10 = F(0);
        if (act) q00 = p2_cell_term<T, MAXM>(g, dyp, mp, (int)oh, (int)ow, t00);
        if (down) q10 = p2_cell_term<T, MAXM>(g, dyp, mp, (int)oh + 1, (int)ow, t10);
        F q01 = __shfl_down_sync(0xffffffffu, q00, 1), q11 = __shfl_down_sync(0xffffffffu, q10, 1);
        t01 = __shfl_down_sync(0xffffffffu, t00, 1), t11 = __shfl_down_sync(0xffffffffu, t10, 1);
        if (lane == 31 && right) {
            q01 = p2_cell_term<T, MAXM>(g, dyp, mp, (int)oh, (int)ow + 1, t01);
            if (down) q11 = p2_cell_term<T, MAXM>(g, dyp, mp, (int)oh + 1, (int)ow + 1, t11);
        }
        if (!act) continue;
        /* a term counts when it exists and (max) its window selected this pixel */
        const bool r = right, d = down, rd = right && down;
        F a00 = F(0), a01 = F(0), a10 = F(0), a11 = F(0);
        if (!MAXM || t00 == 4) a00 += q00;
        if (!MAXM || t00 == 5) a01 += q00;
        if (r && (!MAXM || t01 == 3)) a01 += q01;
        if (!MAXM || t00 == 7) a10 += q00;
        if (d && (!MAXM || t10 == 1)) a10 += q10;
        if (!MAXM || t00 == 8) a11 += q00;
        if (r && (!MAXM || t01 == 6)) a11 += q01;
        if (d && (!MAXM || t10 == 2)) a11 += q10;
        if (rd && (!MAXM || t11 == 0)) a11 += q11;
#pragma unroll
        for (int rr = 0; rr < 2; rr++) {
            const unsigned ih = 2 * oh + rr;
            if (ih >= g.H) break;
            T *o = DX + (size_t)plane * g.H * g.W + (size_t)ih * g.W + 2u * ow;
            PoolPair<T> v;
            if (beta != F(0)) v = *reinterpret_cast<const PoolPair<T> *>(o);
            F r0 = alpha * (rr ? a10 : a00), r1 = alpha * (rr ? a11 : a01);
            if (beta != F(0)) r0 += beta * fdnn_ewd::to_a(v.a), r1 += beta * fdnn_ewd::to_a(v.b);
            v.a = fdnn_ewd::from_a<T>(r0);
            v.b = fdnn_ewd::from_a<T>(r1);
            *reinterpret_cast<PoolPair<T> *>(o) = v;
        }
    }
}

/* The outputs whose windows cover input (ih, iw): rows [lh, uh], columns [lw, uw] (as pool2d_bwd_fast). */
__device__ __forceinline__ void pl_cover(const P2 &g, int wh, int ww, unsigned ih, unsigned iw, int &lh, int &uh, int &lw, int &uw)
{
    const int th = (int)ih + g.ph - wh + 1, tw = (int)iw + g.pw - ww + 1;
    lh = th <= 0 ? 0 : (int)fdiv(g.fsh, (unsigned)(th + g.sh - 1)), lw = tw <= 0 ? 0 : (int)fdiv(g.fsw, (unsigned)(tw + g.sw - 1));
    uh = (int)fdiv(g.fsh, ih + (unsigned)g.ph), uw = (int)fdiv(g.fsw, iw + (unsigned)g.pw);
    if (uh > (int)g.OH - 1) uh = (int)g.OH - 1;
    if (uw > (int)g.OW - 1) uw = (int)g.OW - 1;
}

/* NHWC (VL > 1) backward of the 3x3 / stride 2 / padding 1 window: one thread per output cell
 * (oh, ow) and channel vector, i.e. per dx quad rows 2oh, 2oh+1 x columns 2ow, 2ow+1 (OH =
 * ceil(H / 2), OW = ceil(W / 2): the cells tile dx). The same constant taps and term order as
 * pool2d_bwd_k3s2p1_nchw_cell: outputs (oh, ow), (oh, ow+1), (oh+1, ow), (oh+1, ow+1), each dy
 * vector (and map entry) loaded once, pixel (2oh, 2ow) gets tap 4 of the first, (2oh, 2ow+1)
 * taps 5, 3, (2oh+1, 2ow) taps 7, 1, (2oh+1, 2ow+1) taps 8, 6, 2, 0, in ascending output order,
 * so the sums are those of pool2d_bwd_quad, which it replaces for this geometry (its run-time
 * range loops made it instruction-bound). items = N * OH * OW * (C / VL). */
template <typename T, int VL, bool MAXM>
__device__ __forceinline__ void p2_cell_vec(const P2 &g, const T *DY, const signed char *map, unsigned n, int oh, int ow, unsigned c,
                                            typename fdnn_ewd::Acc<T>::type *q, int *t, bool rcp)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const unsigned yo = ((n * g.OH + (unsigned)oh) * g.OW + (unsigned)ow) * g.C + c;
    VLd<T, VL>::ld(DY + yo, q);
    if (MAXM) {
        MapLd<VL>::ld(map + yo, t);
        return;
    }
    const F div = p2_k3s2p1_div<F>(g, oh, ow);
    if (sizeof(T) == 2 && rcp) { /* 16-bit data: one reciprocal per window instead of VL divisions (see the kernel) */
        const F r = F(1) / div;
#pragma unroll
        for (int l = 0; l < VL; l++) q[l] = q[l] * r;
        return;
    }
#pragma unroll
    for (int l = 0; l < VL; l++) q[l] = q[l] / div; /* div >= 1: the window covers a pixel */
}
/* Average with 16-bit data (rcp, FREEDNN_CUDA_POOL_H2 not 0): dy times the window's float
 * reciprocal instead of dy / divisor (within an ulp of float before the rounding to 16 bits; the
 * 8-lane vectors of HALF / BFLOAT16 made the divisions this kernel's largest cost). */
template <typename T, int VL, bool MAXM>
__global__ void __launch_bounds__(256) pool2d_bwd_cell_nhwc(P2 g, const signed char *map, const T *DY, T *DX, unsigned items,
                                                            typename fdnn_ewd::Acc<T>::type alpha, typename fdnn_ewd::Acc<T>::type beta, bool rcp)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < items; k += gridDim.x * blockDim.x) {
        const unsigned c = fmod_(g.fCV, k) * VL;
        unsigned r = fdiv(g.fCV, k);
        const int ow = (int)fmod_(g.fOW, r);
        r = fdiv(g.fOW, r);
        const int oh = (int)fmod_(g.fOH, r);
        const unsigned n = fdiv(g.fOH, r);
        const bool rt = ow + 1 < (int)g.OW, dn = oh + 1 < (int)g.OH;
        F q00[VL], q01[VL], q10[VL], q11[VL];
        int t00[VL], t01[VL], t10[VL], t11[VL];
        p2_cell_vec<T, VL, MAXM>(g, DY, map, n, oh, ow, c, q00, t00, rcp);
        if (rt) p2_cell_vec<T, VL, MAXM>(g, DY, map, n, oh, ow + 1, c, q01, t01, rcp);
        if (dn) p2_cell_vec<T, VL, MAXM>(g, DY, map, n, oh + 1, ow, c, q10, t10, rcp);
        if (rt && dn) p2_cell_vec<T, VL, MAXM>(g, DY, map, n, oh + 1, ow + 1, c, q11, t11, rcp);
        F a[4][VL];
#pragma unroll
        for (int l = 0; l < VL; l++) {
            a[0][l] = a[1][l] = a[2][l] = a[3][l] = F(0);
            if (!MAXM || t00[l] == 4) a[0][l] += q00[l];
            if (!MAXM || t00[l] == 5) a[1][l] += q00[l];
            if (rt && (!MAXM || t01[l] == 3)) a[1][l] += q01[l];
            if (!MAXM || t00[l] == 7) a[2][l] += q00[l];
            if (dn && (!MAXM || t10[l] == 1)) a[2][l] += q10[l];
            if (!MAXM || t00[l] == 8) a[3][l] += q00[l];
            if (rt && (!MAXM || t01[l] == 6)) a[3][l] += q01[l];
            if (dn && (!MAXM || t10[l] == 2)) a[3][l] += q10[l];
            if (rt && dn && (!MAXM || t11[l] == 0)) a[3][l] += q11[l];
        }
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const unsigned ih = 2u * (unsigned)oh + (q >> 1), iw = 2u * (unsigned)ow + (q & 1);
            if (ih >= g.H || iw >= g.W) continue;
            VLd<T, VL>::st(DX + ((size_t)(n * g.H + ih) * g.W + iw) * g.C + c, a[q], alpha, beta);
        }
    }
}

/* NHWC backward (VL > 1, every tensor NHWC) by 2x2 quads of dx pixels (2qh..2qh+1, 2qw..2qw+1):
 * the outputs covering any of the 4 pixels are visited once in ascending (oh, ow) order, their dy
 * vector (and, for max, argmax-map entry) loaded once and added to each pixel whose own covering
 * range contains them -- per pixel the same terms in the same order as pool2d_maxbwd_map (MAXM:
 * dy where the map's tap equals the pixel's position in that window) and pool2d_bwd_fast
 * (average: dy / divisor). With 3x3 windows and stride 2 the union is 2x2 outputs: 4 dy loads
 * for 4 pixels instead of 9. Work item k: channel vector fastest, then qw, qh, n. */
template <typename T, int VL, bool MAXM>
__global__ void __launch_bounds__(256) pool2d_bwd_quad(P2 g, const signed char *map, const T *DY, T *DX, unsigned items, fdnn_ewd::FDiv fQW,
                                                       fdnn_ewd::FDiv fQH, typename fdnn_ewd::Acc<T>::type alpha,
                                                       typename fdnn_ewd::Acc<T>::type beta)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const int wh = g.wh, ww = g.ww;
    for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < items; k += gridDim.x * blockDim.x) {
        const unsigned c = fmod_(g.fCV, k) * VL;
        unsigned r = fdiv(g.fCV, k);
        const unsigned qw = fmod_(fQW, r);
        r = fdiv(fQW, r);
        const unsigned qh = fmod_(fQH, r), n = fdiv(fQH, r);
        int lh[4], uh[4], lw[4], uw[4];
        int LH = 0x7fffffff, UH = -1, LW = 0x7fffffff, UW = -1;
        F acc[4][VL];
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const unsigned ih = 2 * qh + (q >> 1), iw = 2 * qw + (q & 1);
#pragma unroll
            for (int l = 0; l < VL; l++) acc[q][l] = F(0);
            if (ih >= g.H || iw >= g.W) { lh[q] = 1, uh[q] = 0, lw[q] = 1, uw[q] = 0; continue; } /* empty range */
            pl_cover(g, wh, ww, ih, iw, lh[q], uh[q], lw[q], uw[q]);
            if (lh[q] > uh[q] || lw[q] > uw[q]) continue;
            LH = min(LH, lh[q]), UH = max(UH, uh[q]), LW = min(LW, lw[q]), UW = max(UW, uw[q]);
        }
        for (int oh = LH; oh <= UH; oh++)
            for (int ow = LW; ow <= UW; ow++) {
                const unsigned yo = ((n * g.OH + (unsigned)oh) * g.OW + (unsigned)ow) * g.C + c;
                F d[VL];
                VLd<T, VL>::ld(DY + yo, d);
                if (MAXM) {
                    int t[VL];
                    MapLd<VL>::ld(map + yo, t);
                    const int hs = oh * g.sh - g.ph, ws = ow * g.sw - g.pw;
#pragma unroll
                    for (int q = 0; q < 4; q++) {
                        if (oh < lh[q] || oh > uh[q] || ow < lw[q] || ow > uw[q]) continue;
                        const int me = ((int)(2 * qh) + (q >> 1) - hs) * ww + ((int)(2 * qw) + (q & 1) - ws);
#pragma unroll
                        for (int l = 0; l < VL; l++)
                            if (t[l] == me) acc[q][l] += d[l];
                    }
                } else {
                    F div;
                    if (g.incl) div = F(wh * ww);
                    else {
                        const int hs = oh * g.sh - g.ph, ws = ow * g.sw - g.pw;
                        const int h0 = hs < 0 ? 0 : hs, h1 = hs + wh < (int)g.H ? hs + wh : (int)g.H;
                        const int w0 = ws < 0 ? 0 : ws, w1 = ws + ww < (int)g.W ? ws + ww : (int)g.W;
                        div = F((h1 - h0) * (w1 - w0));
                    }
                    F qv[VL];
#pragma unroll
                    for (int l = 0; l < VL; l++) qv[l] = d[l] / div; /* div >= 1: the window covers a pixel */
#pragma unroll
                    for (int q = 0; q < 4; q++) {
                        if (oh < lh[q] || oh > uh[q] || ow < lw[q] || ow > uw[q]) continue;
#pragma unroll
                        for (int l = 0; l < VL; l++) acc[q][l] += qv[l];
                    }
                }
            }
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const unsigned ih = 2 * qh + (q >> 1), iw = 2 * qw + (q & 1);
            if (ih >= g.H || iw >= g.W) continue;
            VLd<T, VL>::st(DX + ((size_t)(n * g.H + ih) * g.W + iw) * g.C + c, acc[q], alpha, beta);
        }
    }
}

/* Average backward, dy and dx packed NCHW, W % 4 == 0, dx 4*sizeof(T)-aligned: one thread per 4
 * consecutive dx elements of a row. It walks the union of their covering windows once in
 * ascending (oh, ow) order, forms dy/divisor once per window and adds it to each of the 4 elements
 * that window covers -- per element the same terms in the same order as pool2d_bwd_fast. */
template <typename T> struct alignas(4 * sizeof(T)) P4v {
    T v[4];
};
template <typename T, int KH, int KW>
__global__ void __launch_bounds__(256) pool2d_avgbwd_w4(P2 g, const T *DY, T *DX, typename fdnn_ewd::Acc<T>::type alpha,
                                                        typename fdnn_ewd::Acc<T>::type beta, fdnn_ewd::FDiv fW4)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const int wh = KH > 0 ? KH : g.wh, ww = KW > 0 ? KW : g.ww;
    const unsigned nv = g.total / 4; /* g.total: dx elements */
    for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < nv; k += gridDim.x * blockDim.x) {
        const unsigned iw0 = fmod_(fW4, k) * 4, r = fdiv(fW4, k);
        const unsigned ih = fmod_(g.fH, r), plane = fdiv(g.fH, r); /* plane = n*C + c */
        const int th = (int)ih + g.ph - wh + 1, tw = (int)iw0 + g.pw - ww + 1;
        const int lh = th <= 0 ? 0 : (int)fdiv(g.fsh, (unsigned)(th + g.sh - 1)), lw = tw <= 0 ? 0 : (int)fdiv(g.fsw, (unsigned)(tw + g.sw - 1));
        int uh = (int)fdiv(g.fsh, ih + (unsigned)g.ph), uw = (int)fdiv(g.fsw, iw0 + 3u + (unsigned)g.pw);
        if (uh > (int)g.OH - 1) uh = (int)g.OH - 1;
        if (uw > (int)g.OW - 1) uw = (int)g.OW - 1;
        F acc[4] = {F(0), F(0), F(0), F(0)};
        const T *dyp = DY + (size_t)plane * g.OH * g.OW;
        for (int oh = lh; oh <= uh; oh++) {
            const int hs = oh * g.sh - g.ph;
            const int h0 = hs < 0 ? 0 : hs, h1 = hs + wh < (int)g.H ? hs + wh : (int)g.H;
            for (int ow = lw; ow <= uw; ow++) {
                const int ws = ow * g.sw - g.pw;
                F div;
                if (g.incl) div = F(wh * ww);
                else {
                    const int w0 = ws < 0 ? 0 : ws, w1 = ws + ww < (int)g.W ? ws + ww : (int)g.W;
                    div = F((h1 - h0) * (w1 - w0));
                }
                if (div <= F(0)) continue;
                const F q = fdnn_ewd::to_a(dyp[(unsigned)oh * g.OW + (unsigned)ow]) / div;
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    const int iw = (int)iw0 + j;
                    if (iw >= ws && iw < ws + ww) acc[j] += q;
                }
            }
        }
        P4v<T> *o = reinterpret_cast<P4v<T> *>(DX) + k;
        P4v<T> v;
        if (beta != F(0)) v = *o;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            F r2 = alpha * acc[j];
            if (beta != F(0)) r2 += beta * fdnn_ewd::to_a(v.v[j]);
            v.v[j] = fdnn_ewd::from_a<T>(r2);
        }
        *o = v;
    }
}

/* ---- NCHW planes in shared memory: x, y (dy, dx) all packed NCHW, one (n, c) plane per block
 * iteration. The per-output kernels above read x with stride sh along a row (FLOAT 3x3/2: each
 * warp load spans 2-3 lines, about 27 L1 wavefronts per 32 outputs) and the backward re-reads
 * windows or an argmax map through L2; here each input plane is read once with coalesced loads,
 * staged in shared memory, and the outputs are computed from there and written once, coalesced.
 * Used for the overlapping max backward only (pool_go says why). Max backward: (1) stage x and dy, (2) every output's selection (p2_window: first maximum in
 * row-major window order, NaN rules) to shared memory as an input position, (3) every dx element
 * adds, in ascending (oh, ow) order, dy of the covering windows that selected it -- the same terms
 * in the same order as pool2d_maxbwd_map / pool2d_bwd_fast. Shared memory: plane sizes checked by plane_bytes(). ---- */
const int PL_LD = 4; /* independent loads per thread and round of the staging loop */

template <typename T, typename S>
__device__ __forceinline__ void pl_stage(const T *src, S *dst, unsigned n)
{
    for (unsigned i0 = 0; i0 < n; i0 += PL_LD * 256u) {
        T r[PL_LD];
#pragma unroll
        for (int j = 0; j < PL_LD; j++) {
            const unsigned i = i0 + threadIdx.x + 256u * j;
            if (i < n) r[j] = src[i];
        }
#pragma unroll
        for (int j = 0; j < PL_LD; j++) {
            const unsigned i = i0 + threadIdx.x + 256u * j;
            if (i < n) dst[i] = (S)fdnn_ewd::to_a(r[j]);
        }
    }
}

__host__ __device__ __forceinline__ unsigned pl_al8(unsigned b) { return (b + 7u) & ~7u; }

/* Max backward only. Shared = [x plane: T][selection per output: int][dy per output: F]. */
template <typename T, int KH, int KW>
__global__ void __launch_bounds__(256) pool2d_bwd_plane(P2 g, const T *X, const T *DY, T *DX, unsigned planes,
                                                        typename fdnn_ewd::Acc<T>::type alpha, typename fdnn_ewd::Acc<T>::type beta)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    extern __shared__ __align__(16) unsigned char pl_sm[];
    const int wh = KH > 0 ? KH : g.wh, ww = KW > 0 ? KW : g.ww;
    const unsigned HW = g.H * g.W, OHW = g.OH * g.OW;
    T *sx = reinterpret_cast<T *>(pl_sm);
    int *sb = reinterpret_cast<int *>(pl_sm + pl_al8(HW * (unsigned)sizeof(T)));
    F *sd = reinterpret_cast<F *>(reinterpret_cast<unsigned char *>(sb) + pl_al8(OHW * 4u));
    for (unsigned p = blockIdx.x; p < planes; p += gridDim.x) {
        pl_stage<T, F>(DY + (size_t)p * OHW, sd, OHW);
        pl_stage<T, T>(X + (size_t)p * HW, sx, HW); /* T -> F -> T: exact */
        __syncthreads();
        for (unsigned o = threadIdx.x; o < OHW; o += 256u) {
            const unsigned oh = fdiv(g.fOW, o), ow = o - oh * g.OW;
            F v[1];
            int best[1];
            p2_window<T, 1, KH, KW>(g, sx, 0u, g.W, 1u, (int)oh, (int)ow, v, best);
            sb[o] = best[0];
        }
        __syncthreads();
        T *dxp = DX + (size_t)p * HW;
        for (unsigned i = threadIdx.x; i < HW; i += 256u) {
            const unsigned ih = fdiv(g.fW, i), iw = i - ih * g.W;
            int lh, uh, lw, uw;
            pl_cover(g, wh, ww, ih, iw, lh, uh, lw, uw);
            F acc[1] = {F(0)};
            for (int oh = lh; oh <= uh; oh++)
                for (int ow = lw; ow <= uw; ow++) {
                    const unsigned o = (unsigned)oh * g.OW + (unsigned)ow;
                    if (sb[o] == (int)i) acc[0] += sd[o];
                }
            VLd<T, 1>::st(dxp + i, acc, alpha, beta);
        }
        __syncthreads(); /* shared memory is restaged for the next plane */
    }
}

/* Shared bytes of the max-backward plane kernel, or ~0u when a plane is too large or too small. */
template <typename T> unsigned plane_bytes(const P2 &g)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    const unsigned long long HW = (unsigned long long)g.H * g.W, OHW = (unsigned long long)g.OH * g.OW;
    if (HW < 512 || HW > 65536 || OHW > 65536) return ~0u; /* small planes: most of a 256-thread block would idle */
    const unsigned hw = (unsigned)HW, ohw = (unsigned)OHW;
    const unsigned b = pl_al8(hw * (unsigned)sizeof(T)) + pl_al8(ohw * 4u) + ohw * (unsigned)sizeof(F);
    return b <= 40u * 1024u ? b : ~0u;
}

/* 1: packed NCHW, 2: packed NHWC, 0: neither (4-D only). */
int pool_layout(const struct cudnnTensorStruct *t)
{
    if (t->nb_dims != 4 || t->vect > 1) return 0;
    const long long C = t->dim[1], H = t->dim[2], W = t->dim[3];
    const long long nchw[4] = {C * H * W, H * W, W, 1}, nhwc[4] = {H * W * C, 1, W * C, C};
    int a = 1, b = 1;
    for (int i = 0; i < 4; i++)
        if (t->dim[i] != 1) {
            if (t->stride[i] != nchw[i]) a = 0;
            if (t->stride[i] != nhwc[i]) b = 0;
        }
    return a ? 1 : b ? 2 : 0;
}

/* NHWC when the strides allow it (a tensor with C == 1 or H == W == 1 is both: prefer NHWC so
 * the vector path can apply), else NCHW; 0 when neither. */
int pool_nhwc_ok(const struct cudnnTensorStruct *t)
{
    if (t->nb_dims != 4 || t->vect > 1) return 0;
    const long long C = t->dim[1], H = t->dim[2], W = t->dim[3];
    const long long nhwc[4] = {H * W * C, 1, W * C, C};
    for (int i = 0; i < 4; i++)
        if (t->dim[i] != 1 && t->stride[i] != nhwc[i]) return 0;
    return 1;
}

/* Launches pool2d_bwd_quad over the dx of g (g.total dx elements) when it applies (VL > 1: every
 * tensor NHWC; 3x3 windows, stride 2); returns false otherwise. */
template <typename T, int VL, bool MAXM>
bool pool_bwd_quad(cudnnHandle_t h, const P2 &g, const signed char *map, const T *DY, T *DX, typename fdnn_ewd::Acc<T>::type alpha,
                   typename fdnn_ewd::Acc<T>::type beta)
{
    if (VL == 1 || g.wh != 3 || g.ww != 3 || g.sh != 2 || g.sw != 2 || g.H * g.W == 0) return false;
    const unsigned QH = (g.H + 1) / 2, QW = (g.W + 1) / 2, N = g.total / (g.C * g.H * g.W);
    const unsigned long long items = (unsigned long long)N * QH * QW * (g.C / VL);
    if (items == 0 || items >= 0x7fffffffULL) return false;
    if (g.ph == 1 && g.pw == 1 && g.OH == QH && g.OW == QW) { /* padding 1: constant taps per cell */
        pool2d_bwd_cell_nhwc<T, VL, MAXM><<<fdnn_ewd::dense_grid(h, (long long)items), 256, 0, (cudaStream_t)h->stream>>>(
            g, map, DY, DX, (unsigned)items, alpha, beta, pool_h2_on());
        return true;
    }
    pool2d_bwd_quad<T, VL, MAXM><<<fdnn_ewd::dense_grid(h, (long long)items), 256, 0, (cudaStream_t)h->stream>>>(
        g, map, DY, DX, (unsigned)items, fdnn_ewd::mk_fdiv(QW), fdnn_ewd::mk_fdiv(QH), alpha, beta);
    return true;
}

/* The NCHW 3x3 / stride 2 / padding 1 geometry of the paired kernels (even W, OW = W / 2, OH = ceil(H / 2), packed
 * NCHW everywhere, pointers aligned to element pairs). */
template <typename T, int VL>
bool pool_k3s2p1_nchw(const P2 &g, const void *a, const void *b)
{
    return VL == 1 && g.wh == 3 && g.ww == 3 && g.sh == 2 && g.sw == 2 && g.ph == 1 && g.pw == 1 && g.W % 2 == 0 && g.OW == g.W / 2 &&
           g.OH == (g.H + 1) / 2 &&
           !g.xnhwc && !g.ynhwc && !g.onhwc && (uintptr_t)a % (2 * sizeof(T)) == 0 && (uintptr_t)b % (2 * sizeof(T)) == 0;
}

template <typename T, int VL, int KH, int KW>
void pool_maxbwd_chunks(cudnnHandle_t h, const P2 &g, const T *X, const T *DY, T *DX, typename fdnn_ewd::Acc<T>::type alpha,
                        typename fdnn_ewd::Acc<T>::type beta, signed char *map, unsigned per)
{
    cudaStream_t s = (cudaStream_t)h->stream;
    const unsigned xi = g.C * g.H * g.W, yi = g.C * g.OH * g.OW, N = g.total / xi;
    for (unsigned n0 = 0; n0 < N; n0 += per) { /* stream order: each chunk's map is consumed before the next overwrites it */
        const unsigned nb = N - n0 < per ? N - n0 : per;
        P2 gy = g, gx = g;
        gy.total = nb * yi, gx.total = nb * xi;
        if (pool_k3s2p1_nchw<T, VL>(g, X, DX)) { /* paired loads + a shuffle, as the forward */
            const unsigned gg = fdnn_ewd::dense_grid(h, gy.total);
            if (g.prop) pool2d_fwd_k3s2p1_nchw<T, 4><<<gg, 256, 0, s>>>(gy, X + (size_t)n0 * xi, NULL, map, alpha, beta);
            else pool2d_fwd_k3s2p1_nchw<T, 3><<<gg, 256, 0, s>>>(gy, X + (size_t)n0 * xi, NULL, map, alpha, beta);
        } else if (!pool_k3s2_nhwc_go<T, VL>(h, gy, X + (size_t)n0 * xi, NULL, map, alpha, beta))
            pool2d_argmax_map<T, VL, KH, KW><<<fdnn_ewd::dense_grid(h, gy.total / VL), 256, 0, s>>>(gy, X + (size_t)n0 * xi, map);
        if (pool_bwd_quad<T, VL, true>(h, gx, map, DY + (size_t)n0 * yi, DX + (size_t)n0 * xi, alpha, beta)) continue;
        if (pool_k3s2p1_nchw<T, VL>(g, X, DX)) {
            pool2d_bwd_k3s2p1_nchw_cell<T, true><<<fdnn_ewd::dense_grid(h, gy.total), 256, 0, s>>>(
                gx, map, DY + (size_t)n0 * yi, DX + (size_t)n0 * xi, gy.total, alpha, beta);
            continue;
        }
        pool2d_maxbwd_map<T, VL, KH, KW><<<fdnn_ewd::dense_grid(h, gx.total / VL), 256, 0, s>>>(gx, map, DY + (size_t)n0 * yi,
                                                                                                DX + (size_t)n0 * xi, alpha, beta);
    }
}

template <typename T, int VL>
void pool_go(cudnnHandle_t h, P2 g, int fwd, const void *X, const void *DY, void *O, double alpha, double beta)
{
    typedef typename fdnn_ewd::Acc<T>::type F;
    g.fCV = fdnn_ewd::mk_fdiv(g.C / VL), g.fH = fdnn_ewd::mk_fdiv(g.H), g.fW = fdnn_ewd::mk_fdiv(g.W);
    g.fOH = fdnn_ewd::mk_fdiv(g.OH), g.fOW = fdnn_ewd::mk_fdiv(g.OW);
    g.fsh = fdnn_ewd::mk_fdiv((unsigned)g.sh), g.fsw = fdnn_ewd::mk_fdiv((unsigned)g.sw);
    const unsigned grid = fdnn_ewd::dense_grid(h, g.total / VL);
    cudaStream_t s = (cudaStream_t)h->stream;
    const int k = g.wh == 2 && g.ww == 2 ? 2 : g.wh == 3 && g.ww == 3 ? 3 : 0;
    /* NCHW overlapping max backward: a plane per block through shared memory (ops_bandwidth on the
     * H200, 3x3/2: 24% -> 31% of copy bandwidth; the same staging measured slower for the forward
     * (2x2: 64% -> 57%) and for average backward (33% -> 25%), which keep the kernels below) */
    if (VL == 1 && !fwd && g.is_max && !g.xnhwc && !g.ynhwc && !g.onhwc && !(g.sh >= g.wh && g.sw >= g.ww) &&
        !pool_k3s2p1_nchw<T, VL>(g, X, O)) { /* (3x3/2 pad 1: the argmax map and the paired gather below) */
        const unsigned pb = plane_bytes<T>(g);
        if (pb != ~0u) {
            const unsigned planes = g.total / (g.H * g.W);
            const T *x = (const T *)X, *dy = (const T *)DY;
            T *o = (T *)O;
            if (k == 2) pool2d_bwd_plane<T, 2, 2><<<planes, 256, pb, s>>>(g, x, dy, o, planes, (F)alpha, (F)beta);
            else if (k == 3) pool2d_bwd_plane<T, 3, 3><<<planes, 256, pb, s>>>(g, x, dy, o, planes, (F)alpha, (F)beta);
            else pool2d_bwd_plane<T, 0, 0><<<planes, 256, pb, s>>>(g, x, dy, o, planes, (F)alpha, (F)beta);
            return;
        }
    }
    if (fwd && pool_k3s2p1_nchw<T, VL>(g, X, X)) { /* NCHW 3x3/2 pad 1: paired loads + a shuffle */
        /* W % 4 == 0 (and x, y aligned for quads / pairs): two outputs per thread, unless
         * FREEDNN_CUDA_POOL_X1=1 (for timing the one-output form) */
        if (g.W % 4 == 0 && (uintptr_t)X % (4 * sizeof(T)) == 0 && (uintptr_t)O % (2 * sizeof(T)) == 0 &&
            !pool_x1_only()) {
            const unsigned g2 = fdnn_ewd::dense_grid(h, g.total / 2);
            const fdnn_ewd::FDiv fU = fdnn_ewd::mk_fdiv(g.OW / 2);
            const T *x = (const T *)X;
            T *y = (T *)O;
            switch (pool_mode(g, false)) {
            case 0: pool2d_fwd_k3s2p1_nchw_x2<T, 0><<<g2, 256, 0, s>>>(g, x, y, (F)alpha, (F)beta, fU); break;
            case 1: pool2d_fwd_k3s2p1_nchw_x2<T, 1><<<g2, 256, 0, s>>>(g, x, y, (F)alpha, (F)beta, fU); break;
            default: pool2d_fwd_k3s2p1_nchw_x2<T, 2><<<g2, 256, 0, s>>>(g, x, y, (F)alpha, (F)beta, fU); break;
            }
            return;
        }
        const T *x = (const T *)X;
        T *y = (T *)O;
        switch (pool_mode(g, false)) {
        case 0: pool2d_fwd_k3s2p1_nchw<T, 0><<<grid, 256, 0, s>>>(g, x, y, NULL, (F)alpha, (F)beta); break;
        case 1: pool2d_fwd_k3s2p1_nchw<T, 1><<<grid, 256, 0, s>>>(g, x, y, NULL, (F)alpha, (F)beta); break;
        default: pool2d_fwd_k3s2p1_nchw<T, 2><<<grid, 256, 0, s>>>(g, x, y, NULL, (F)alpha, (F)beta); break;
        }
        return;
    }
    if (fwd && pool_k3s2_nhwc_go<T, VL>(h, g, (const T *)X, (T *)O, NULL, (F)alpha, (F)beta)) return;
    /* NCHW 2x2 / 2 tiling x exactly, W % 4 == 0: two outputs per thread (as the backward below) */
    const bool k2x2 = VL == 1 && k == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 && !g.xnhwc && !g.ynhwc && !g.onhwc &&
                      g.H == 2 * g.OH && g.W == 2 * g.OW && g.W % 4 == 0 && (uintptr_t)X % (4 * sizeof(T)) == 0 && !pool_x1_only();
    if (fwd && k2x2 && (uintptr_t)O % (2 * sizeof(T)) == 0) {
        const unsigned units = g.total / 2, g2 = fdnn_ewd::dense_grid(h, units);
        const fdnn_ewd::FDiv fU = fdnn_ewd::mk_fdiv(g.OW / 2);
        const T *x = (const T *)X;
        T *y = (T *)O;
        switch (pool_mode(g, false)) {
        case 0: pool2d_fwd_k2s2_nchw_x2<T, 0><<<g2, 256, 0, s>>>(g, x, y, units, fU, (F)alpha, (F)beta); break;
        case 1: pool2d_fwd_k2s2_nchw_x2<T, 1><<<g2, 256, 0, s>>>(g, x, y, units, fU, (F)alpha, (F)beta); break;
        default: pool2d_fwd_k2s2_nchw_x2<T, 2><<<g2, 256, 0, s>>>(g, x, y, units, fU, (F)alpha, (F)beta); break;
        }
        return;
    }
    if (fwd) {
        if (k == 2) pool_fwd_fast_go<T, VL, 2, 2>(g, grid, s, (const T *)X, (T *)O, (F)alpha, (F)beta);
        else if (k == 3) pool_fwd_fast_go<T, VL, 3, 3>(g, grid, s, (const T *)X, (T *)O, (F)alpha, (F)beta);
        else pool_fwd_fast_go<T, VL, 0, 0>(g, grid, s, (const T *)X, (T *)O, (F)alpha, (F)beta);
        return;
    }
    if (g.is_max) {
        const unsigned xi = g.C * g.H * g.W, yi = g.C * g.OH * g.OW, N = g.total / xi;
        if (g.sh >= g.wh && g.sw >= g.ww && yi > 0) { /* no overlap: dx written per stride cell (empty dy: the gather) */
            P2 gy = g;
            gy.total = N * yi;
            const unsigned gg = fdnn_ewd::dense_grid(h, gy.total / VL);
            const T *x = (const T *)X, *dy = (const T *)DY;
            T *o = (T *)O;
            /* NCHW 2x2 / 2 tiling x exactly, W % 4 == 0: two windows per thread (ops_bandwidth on the
             * H200, 32x256x56x56 FLOAT: 71% -> 108% of the copy bandwidth); FREEDNN_CUDA_POOL_X1=1 keeps
             * the one-window form */
            if (k2x2 && (uintptr_t)O % (4 * sizeof(T)) == 0 && (uintptr_t)DY % (2 * sizeof(T)) == 0) {
                const unsigned units = gy.total / 2, g2 = fdnn_ewd::dense_grid(h, units);
                const fdnn_ewd::FDiv fU = fdnn_ewd::mk_fdiv(g.OW / 2);
                if (g.prop) pool2d_maxbwd_k2s2_nchw_x2<T, 4><<<g2, 256, 0, s>>>(gy, x, dy, o, units, fU, (F)alpha, (F)beta);
                else pool2d_maxbwd_k2s2_nchw_x2<T, 3><<<g2, 256, 0, s>>>(gy, x, dy, o, units, fU, (F)alpha, (F)beta);
                return;
            }
            if (k == 2 && g.prop) pool2d_maxbwd_cell<T, VL, 2, 2, 4><<<gg, 256, 0, s>>>(gy, x, dy, o, (F)alpha, (F)beta);
            else if (k == 2) pool2d_maxbwd_cell<T, VL, 2, 2, 3><<<gg, 256, 0, s>>>(gy, x, dy, o, (F)alpha, (F)beta);
            else if (k == 3 && g.prop) pool2d_maxbwd_cell<T, VL, 3, 3, 4><<<gg, 256, 0, s>>>(gy, x, dy, o, (F)alpha, (F)beta);
            else if (k == 3) pool2d_maxbwd_cell<T, VL, 3, 3, 3><<<gg, 256, 0, s>>>(gy, x, dy, o, (F)alpha, (F)beta);
            else if (g.prop) pool2d_maxbwd_cell<T, VL, 0, 0, 4><<<gg, 256, 0, s>>>(gy, x, dy, o, (F)alpha, (F)beta);
            else pool2d_maxbwd_cell<T, VL, 0, 0, 3><<<gg, 256, 0, s>>>(gy, x, dy, o, (F)alpha, (F)beta);
            return;
        }
        fdnn_cuda_state *cs = (fdnn_cuda_state *)h->cuda;
        if (g.wh * g.ww <= 127 && yi > 0 && cs && cs->scratch && yi <= cs->scratch_bytes) { /* overlapping: argmax map in the scratch */
            const unsigned per = (unsigned)(cs->scratch_bytes / yi);
            signed char *map = (signed char *)cs->scratch;
            if (k == 2) pool_maxbwd_chunks<T, VL, 2, 2>(h, g, (const T *)X, (const T *)DY, (T *)O, (F)alpha, (F)beta, map, per);
            else if (k == 3) pool_maxbwd_chunks<T, VL, 3, 3>(h, g, (const T *)X, (const T *)DY, (T *)O, (F)alpha, (F)beta, map, per);
            else pool_maxbwd_chunks<T, VL, 0, 0>(h, g, (const T *)X, (const T *)DY, (T *)O, (F)alpha, (F)beta, map, per);
            return;
        }
    }
    if (!g.is_max && pool_bwd_quad<T, VL, false>(h, g, NULL, (const T *)DY, (T *)O, (F)alpha, (F)beta)) return;
    if (!fwd && !g.is_max && pool_k3s2p1_nchw<T, VL>(g, O, O)) {
        const unsigned cells = g.total / (g.H * g.W) * g.OH * g.OW;
        pool2d_bwd_k3s2p1_nchw_cell<T, false><<<fdnn_ewd::dense_grid(h, cells), 256, 0, s>>>(g, NULL, (const T *)DY, (T *)O, cells,
                                                                                           (F)alpha, (F)beta);
        return;
    }
    if (!g.is_max && VL == 1 && !g.ynhwc && !g.onhwc && g.W % 4 == 0 && (uintptr_t)O % (4 * sizeof(T)) == 0) {
        const fdnn_ewd::FDiv fW4 = fdnn_ewd::mk_fdiv(g.W / 4);
        const unsigned g4 = fdnn_ewd::dense_grid(h, g.total / 4);
        if (k == 2) pool2d_avgbwd_w4<T, 2, 2><<<g4, 256, 0, s>>>(g, (const T *)DY, (T *)O, (F)alpha, (F)beta, fW4);
        else if (k == 3) pool2d_avgbwd_w4<T, 3, 3><<<g4, 256, 0, s>>>(g, (const T *)DY, (T *)O, (F)alpha, (F)beta, fW4);
        else pool2d_avgbwd_w4<T, 0, 0><<<g4, 256, 0, s>>>(g, (const T *)DY, (T *)O, (F)alpha, (F)beta, fW4);
        return;
    }
    if (k == 2) pool2d_bwd_fast<T, VL, 2, 2><<<grid, 256, 0, s>>>(g, (const T *)X, (const T *)DY, (T *)O, (F)alpha, (F)beta);
    else if (k == 3) pool2d_bwd_fast<T, VL, 3, 3><<<grid, 256, 0, s>>>(g, (const T *)X, (const T *)DY, (T *)O, (F)alpha, (F)beta);
    else pool2d_bwd_fast<T, VL, 0, 0><<<grid, 256, 0, s>>>(g, (const T *)X, (const T *)DY, (T *)O, (F)alpha, (F)beta);
}

template <typename T>
cudnnStatus_t pool_fast_launch(cudnnHandle_t h, P2 g, int fwd, int vec_ok, const void *X, const void *DY, void *O, double alpha, double beta)
{
    const unsigned L = 16 / sizeof(T);
    if (vec_ok && L > 1 && g.C % L == 0) pool_go<T, 16 / sizeof(T)>(h, g, fwd, X, DY, O, alpha, beta);
    else pool_go<T, 1>(h, g, fwd, X, DY, O, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), fwd ? "pool2d_fwd_fast" : "pool2d_bwd_fast");
}

/* fwd: x -> y (O = Y). Backward: x, dy -> dx (O = DX); y is the output-side tensor (dy). */
int pool_fast(cudnnHandle_t h, const struct cudnnPoolingStruct *d, int fwd, double alpha, const struct cudnnTensorStruct *x, const void *X,
              const struct cudnnTensorStruct *y, const void *DY, double beta, const struct cudnnTensorStruct *o, void *O, cudnnStatus_t *st)
{
    if (d->nb_spatial != 2 || x->dtype != y->dtype || x->dtype != o->dtype) return 0;
    if (d->pad[0] < 0 || d->pad[1] < 0 || d->stride[0] < 1 || d->stride[1] < 1) return 0;
    const int lx = pool_layout(x), ly = pool_layout(y), lo = pool_layout(o);
    if (!lx || !ly || !lo || y->dim[0] != x->dim[0] || y->dim[1] != x->dim[1]) return 0;
    if (!fwd && (o->dim[0] != x->dim[0] || o->dim[1] != x->dim[1] || o->dim[2] != x->dim[2] || o->dim[3] != x->dim[3])) return 0;
    if (fdnn_tensor_elems(x) >= 0x7fffffffLL - (1LL << 26) || fdnn_tensor_elems(y) >= 0x7fffffffLL - (1LL << 26)) return 0;
    P2 g;
    g.total = (unsigned)fdnn_tensor_elems(fwd ? y : x);
    g.C = (unsigned)x->dim[1], g.H = (unsigned)x->dim[2], g.W = (unsigned)x->dim[3], g.OH = (unsigned)y->dim[2], g.OW = (unsigned)y->dim[3];
    g.wh = d->window[0], g.ww = d->window[1], g.ph = d->pad[0], g.pw = d->pad[1], g.sh = d->stride[0], g.sw = d->stride[1];
    const int all_nhwc = pool_nhwc_ok(x) && pool_nhwc_ok(y) && pool_nhwc_ok(o);
    const int vec_ok = all_nhwc && fdnn_ewd::aligned16(X) && fdnn_ewd::aligned16(O) && (fwd || fdnn_ewd::aligned16(DY));
    g.xnhwc = all_nhwc || lx == 2, g.ynhwc = all_nhwc || ly == 2, g.onhwc = fwd ? g.ynhwc : (all_nhwc || lo == 2);
    g.is_max = d->mode == CUDNN_POOLING_MAX || d->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    g.incl = d->mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    g.prop = d->nan_opt == CUDNN_PROPAGATE_NAN;
    if (g.total == 0) { *st = CUDNN_STATUS_SUCCESS; return 1; }
    switch (x->dtype) {
    case CUDNN_DATA_FLOAT: *st = pool_fast_launch<float>(h, g, fwd, vec_ok, X, DY, O, alpha, beta); return 1;
    case CUDNN_DATA_DOUBLE: *st = pool_fast_launch<double>(h, g, fwd, vec_ok, X, DY, O, alpha, beta); return 1;
    case CUDNN_DATA_HALF: *st = pool_fast_launch<__half>(h, g, fwd, vec_ok, X, DY, O, alpha, beta); return 1;
    case CUDNN_DATA_BFLOAT16: *st = pool_fast_launch<__nv_bfloat16>(h, g, fwd, vec_ok, X, DY, O, alpha, beta); return 1;
    default: return 0;
    }
}

} /* namespace */


extern "C" cudnnStatus_t fdnn_cuda_pooling_fwd(cudnnHandle_t h, const struct cudnnPoolingStruct *pd, double alpha,
                                               const struct cudnnTensorStruct *x, const void *X, double beta,
                                               const struct cudnnTensorStruct *y, void *Y)
{
    PGeom g = make_pgeom(pd, x, y);
    const long long total = g.planes * g.out_sz;
    if (total <= 0) return CUDNN_STATUS_SUCCESS;
    cudnnStatus_t fs;
    if (pool_fast(h, pd, 1, alpha, x, X, y, NULL, beta, y, Y, &fs)) return fs;
    pool_fwd<<<grid_for(total, 256), 256, 0, (cudaStream_t)h->stream>>>(g, pool_tv(x), X, pool_tv(y), Y, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "pool_fwd");
}

extern "C" cudnnStatus_t fdnn_cuda_pooling_bwd(cudnnHandle_t h, const struct cudnnPoolingStruct *pd, double alpha,
                                               const struct cudnnTensorStruct *dy, const void *DY, const struct cudnnTensorStruct *x,
                                               const void *X, double beta, const struct cudnnTensorStruct *dx, void *DX)
{
    PGeom g = make_pgeom(pd, x, dy);
    const long long total = g.planes * g.in_sz;
    if (total <= 0) return CUDNN_STATUS_SUCCESS;
    cudnnStatus_t fs;
    if (pool_fast(h, pd, 0, alpha, x, X, dy, DY, beta, dx, DX, &fs)) return fs;
    pool_bwd<<<grid_for(total, 256), 256, 0, (cudaStream_t)h->stream>>>(g, pool_tv(x), X, pool_tv(dy), DY, pool_tv(dx), DX, alpha,
                                                                       beta);
    return fdnn_cuda_check(cudaGetLastError(), "pool_bwd");
}
