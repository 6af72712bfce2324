/* Depthwise convolution on the GPU (groups == C, K = m*C: one input channel per group, channel
 * multiplier m). 2-D problems (3-D ones only with a unit depth axis: D = T = 1, no D padding),
 * any padding/stride/dilation, both modes, arbitrary x/y strides, FLOAT, DOUBLE, HALF and
 * BFLOAT16 (float accumulation; double for DOUBLE). Deterministic in all three directions:
 *   forward:     one thread per (n, output row, CV channels, QV adjacent output columns); the
 *                thread keeps CV*QV accumulators and walks the R*S taps. When y is channels-last
 *                the channel index is fastest across threads (loads of x and stores of y are
 *                coalesced), otherwise the column index is. CV = 2 (half2 / bfloat162 / float2
 *                loads) for packed-channel NHWC tensors with m == 1 and even C;
 *   bwd data:    the same shape over dx: each thread gathers, for CV channels and QV adjacent
 *                input columns, every (dy position, tap) that reads it (no atomics);
 *   3x3 fwd / bwd data (stride 1, dilation 1, m == 1, channel pairs in channels-last tensors):
 *                row-tiled, each thread 4 x 4 outputs of two channels from its 6 input rows
 *                (dw3_rows_kernel; backward data as a forward pass over dy with padding 2 - p);
 *   3x3 bwd filter (dilation 1, stride 1 or 2, channels innermost): tiled, each thread CV
 *                channels over tiles of 4 output rows x a run of columns, a sliding 3-column
 *                register window of the input rows, 9*CV accumulators; block sums in slot order,
 *                per-block partials in the workspace and an ordered warp reduction when there is
 *                more than one tile group (dw_bwf_tiled_kernel / _finish);
 *   bwd filter otherwise: grid (channel chunk, split of the N*P*Q positions, group of up to 9 taps);
 *                each thread accumulates up to 9 taps of one channel over a fixed slice of the
 *                positions, the block reduces them with a fixed shared-memory tree; with more
 *                than one split the partial sums go to the workspace and a second kernel adds
 *                them in split order. The split count depends only on the problem, so the
 *                result is bitwise reproducible.
 * alpha/beta blend as everywhere else (double, beta == 0 does not read the output).
 * FREEDNN_CUDA_DW_OLD=1 turns the 3x3 forms off (the general kernels run), for timing. */
#include "cuda_dev.h"

using namespace fdnn_dev;

namespace {

/* ---- loads of CV adjacent channels, widened to the accumulation type ---- */
/* generic: CV scalar loads of adjacent channels (channel stride 1 whenever CV > 1) */
template <typename T, typename ACC, int CV> struct VecLd {
    static __device__ __forceinline__ void load(const T *p, ACC *v)
    {
#pragma unroll
        for (int i = 0; i < CV; i++) v[i] = (ACC)ld(p + i);
    }
};
template <> struct VecLd<float, float, 2> {
    static __device__ __forceinline__ void load(const float *p, float *v)
    {
        const float2 f = *reinterpret_cast<const float2 *>(p);
        v[0] = f.x;
        v[1] = f.y;
    }
};
template <> struct VecLd<__half, float, 2> {
    static __device__ __forceinline__ void load(const __half *p, float *v)
    {
        const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(p));
        v[0] = f.x;
        v[1] = f.y;
    }
};
template <> struct VecLd<__nv_bfloat16, float, 2> {
    static __device__ __forceinline__ void load(const __nv_bfloat16 *p, float *v)
    {
        const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(p));
        v[0] = f.x;
        v[1] = f.y;
    }
};

template <> struct VecLd<float, float, 4> {
    static __device__ __forceinline__ void load(const float *p, float *v)
    {
        const float4 f = *reinterpret_cast<const float4 *>(p);
        v[0] = f.x;
        v[1] = f.y;
        v[2] = f.z;
        v[3] = f.w;
    }
};
/* 16-bit types: one 8-byte load of two pairs */
template <typename T> struct VecLd4x16 {
    static __device__ __forceinline__ void load(const T *p, float *v)
    {
        const uint2 u = *reinterpret_cast<const uint2 *>(p);
        VecLd<T, float, 2>::load(reinterpret_cast<const T *>(&u.x), v);
        VecLd<T, float, 2>::load(reinterpret_cast<const T *>(&u.y), v + 2);
    }
};
template <> struct VecLd<__half, float, 4> : VecLd4x16<__half> {};
template <> struct VecLd<__nv_bfloat16, float, 4> : VecLd4x16<__nv_bfloat16> {};

/* SMW: the block first copies the whole filter into shared memory as [tap][k] (accumulation
 * type), so that the threads of a warp, which hold consecutive channels when CF, read
 * consecutive words instead of taps R*S elements apart. The launcher enables it when K*R*S
 * values fit in DW_SMEM_MAX bytes. Called by every thread before any early exit. */
constexpr int DW_SMEM_MAX = 32 * 1024;
extern __shared__ __align__(16) unsigned char dw_smem[];

template <typename T, typename ACC>
__device__ __forceinline__ void stage_filter(const ConvGeom &G, const T *__restrict__ w)
{
    ACC *wsm = reinterpret_cast<ACC *>(dw_smem);
    const int S = G.flt[2], RS = G.flt[1] * G.flt[2];
    const int nw = G.k * RS; /* < DW_SMEM_MAX */
    for (int i = (int)threadIdx.x; i < nw; i += (int)blockDim.x) {
        const int k = i / RS, t = i % RS;
        wsm[t * G.k + k] = (ACC)ld(w + k * G.ws[0] + (t / S) * G.ws[3] + (t % S) * G.ws[4]);
    }
    __syncthreads();
}

/* filter element (k, rf, sf) */
template <typename T, typename ACC, bool SMW>
__device__ __forceinline__ ACC wtap(const ConvGeom &G, const T *__restrict__ w, int k, int rf, int sf)
{
    if constexpr (SMW) return reinterpret_cast<const ACC *>(dw_smem)[(rf * G.flt[2] + sf) * G.k + k];
    else return (ACC)ld(w + k * G.ws[0] + rf * G.ws[3] + sf * G.ws[4]);
}

/* Forward. Output channel k reads input channel k / m (m = G.kg). KS > 0: R = S = KS known at
 * compile time. SW > 0 (only with KS > 0): the W stride is SW and the W dilation 1, so each
 * filter row reads one segment of (QV-1)*SW + KS input columns, loaded once into registers.
 * CF: channel fastest across threads. CV > 1 only with m == 1, K % CV == 0 and channel
 * stride 1 in x and y (checked by the launcher, with alignment). */
template <typename T, typename ACC, int CV, int QV, int KS, int SW, bool CF, bool SMW>
__global__ void __launch_bounds__(256)
dw_fwd_kernel(ConvGeom G, const T *__restrict__ x, const T *__restrict__ w, T *y, double alpha, double beta)
{
    const int R = KS ? KS : G.flt[1], S = KS ? KS : G.flt[2];
    const int P = G.out[1], Q = G.out[2], H = G.in[1], W = G.in[2];
    const int m = G.kg;
    if constexpr (SMW) stage_filter<T, ACC>(G, w);
    const long long kv = G.k / CV, qn = (Q + QV - 1) / QV;
    const long long total = (long long)G.n * P * qn * kv;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        long long r = idx;
        int kvi, qi, oh, n;
        if (CF) {
            kvi = (int)(r % kv); r /= kv;
            qi = (int)(r % qn); r /= qn;
            oh = (int)(r % P);
            n = (int)(r / P);
        } else {
            qi = (int)(r % qn); r /= qn;
            oh = (int)(r % P); r /= P;
            kvi = (int)(r % kv);
            n = (int)(r / kv);
        }
        const int k0 = kvi * CV;
        const int c0 = k0 / m; /* CV > 1 implies m == 1 */
        const int q0 = qi * QV;
        const T *xn = x + n * G.xs[0] + c0 * G.xs[1];
        ACC acc[CV][QV];
#pragma unroll
        for (int v = 0; v < CV; v++)
#pragma unroll
            for (int j = 0; j < QV; j++) acc[v][j] = 0;
        const int h0 = oh * G.str[1] - G.pad[1];
        const int w0 = q0 * G.str[2] - G.pad[2];
#pragma unroll
        for (int rr = 0; rr < R; rr++) {
            const int ih = h0 + rr * G.dil[1];
            if (ih < 0 || ih >= H) continue;
            const int rf = G.flip ? R - 1 - rr : rr;
            const T *xrow = xn + ih * G.xs[3];
            if constexpr (SW > 0) {
                constexpr int L = (QV - 1) * SW + (KS > 0 ? KS : 1);
                ACC seg[L][CV];
#pragma unroll
                for (int i = 0; i < L; i++) {
                    const int iw = w0 + i;
                    if (iw >= 0 && iw < W) VecLd<T, ACC, CV>::load(xrow + iw * G.xs[4], seg[i]);
                    else
#pragma unroll
                        for (int v = 0; v < CV; v++) seg[i][v] = 0;
                }
#pragma unroll
                for (int s = 0; s < S; s++) {
                    const int sf = G.flip ? S - 1 - s : s;
                    ACC wv[CV];
#pragma unroll
                    for (int v = 0; v < CV; v++) wv[v] = wtap<T, ACC, SMW>(G, w, k0 + v, rf, sf);
#pragma unroll
                    for (int j = 0; j < QV; j++)
#pragma unroll
                        for (int v = 0; v < CV; v++) acc[v][j] += seg[j * SW + s][v] * wv[v];
                }
            } else {
#pragma unroll
                for (int s = 0; s < S; s++) {
                    const int sf = G.flip ? S - 1 - s : s;
                    ACC wv[CV];
#pragma unroll
                    for (int v = 0; v < CV; v++) wv[v] = wtap<T, ACC, SMW>(G, w, k0 + v, rf, sf);
#pragma unroll
                    for (int j = 0; j < QV; j++) {
                        const int iw = w0 + j * G.str[2] + s * G.dil[2];
                        if (q0 + j >= Q || iw < 0 || iw >= W) continue;
                        ACC xv[CV];
                        VecLd<T, ACC, CV>::load(xrow + iw * G.xs[4], xv);
#pragma unroll
                        for (int v = 0; v < CV; v++) acc[v][j] += xv[v] * wv[v];
                    }
                }
            }
        }
        T *yo = y + n * G.ys[0] + k0 * G.ys[1] + oh * G.ys[3];
#pragma unroll
        for (int j = 0; j < QV; j++) {
            if (q0 + j >= Q) continue;
#pragma unroll
            for (int v = 0; v < CV; v++) blend(yo + v * G.ys[1] + (q0 + j) * G.ys[4], acc[v][j], alpha, beta);
        }
    }
}

/* Backward data: dx[n,c,ih,iw] = sum over k = c*m .. c*m+m-1 and taps (r, s) with
 * ih = oh*sh - ph + r*dh, iw = ow*sw - pw + s*dw of dy[n,k,oh,ow] * w[k, rf, sf]. Thread shape
 * as in the forward kernel, over dx (channels c, columns iw). SW == 1 (only with KS > 0): W stride
 * and dilation 1, so each filter row reads one segment of QV + KS - 1 dy columns, loaded once. */
template <typename T, typename ACC, int CV, int QV, int KS, int SW, bool CF, bool SMW>
__global__ void __launch_bounds__(256)
dw_bwd_data_kernel(ConvGeom G, T *dx, const T *__restrict__ w, const T *__restrict__ dy, double alpha, double beta)
{
    const int R = KS ? KS : G.flt[1], S = KS ? KS : G.flt[2];
    const int P = G.out[1], Q = G.out[2], H = G.in[1], W = G.in[2];
    const int m = G.kg;
    if constexpr (SMW) stage_filter<T, ACC>(G, w);
    const long long cv = G.c / CV, wn = (W + QV - 1) / QV;
    const long long total = (long long)G.n * H * wn * cv;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        long long r = idx;
        int cvi, wi, ih, n;
        if (CF) {
            cvi = (int)(r % cv); r /= cv;
            wi = (int)(r % wn); r /= wn;
            ih = (int)(r % H);
            n = (int)(r / H);
        } else {
            wi = (int)(r % wn); r /= wn;
            ih = (int)(r % H); r /= H;
            cvi = (int)(r % cv);
            n = (int)(r / cv);
        }
        const int c0 = cvi * CV;
        const int i0 = wi * QV;
        ACC acc[CV][QV];
#pragma unroll
        for (int v = 0; v < CV; v++)
#pragma unroll
            for (int j = 0; j < QV; j++) acc[v][j] = 0;
        for (int kk = 0; kk < m; kk++) {
            const int k0 = c0 * m + kk; /* CV > 1 implies m == 1: channels k0 .. k0+CV-1 */
            const T *dyn = dy + n * G.ys[0] + k0 * G.ys[1];
#pragma unroll
            for (int rr = 0; rr < R; rr++) {
                const int nh = ih + G.pad[1] - rr * G.dil[1];
                if (nh < 0 || nh % G.str[1]) continue;
                const int oh = nh / G.str[1];
                if (oh >= P) continue;
                const int rf = G.flip ? R - 1 - rr : rr;
                const T *dyrow = dyn + oh * G.ys[3];
                if constexpr (SW > 0) {
                    /* ow = i0 + j + pw - s: segment ow0 = i0 + pw - (KS-1) .. i0 + pw + QV - 1 */
                    constexpr int KK = KS > 0 ? KS : 1, L = QV + KK - 1;
                    const int ow0 = i0 + G.pad[2] - (KK - 1);
                    ACC seg[L][CV];
#pragma unroll
                    for (int i = 0; i < L; i++) {
                        const int ow = ow0 + i;
                        if (ow >= 0 && ow < Q) VecLd<T, ACC, CV>::load(dyrow + ow * G.ys[4], seg[i]);
                        else
#pragma unroll
                            for (int v = 0; v < CV; v++) seg[i][v] = 0;
                    }
#pragma unroll
                    for (int s = 0; s < KK; s++) {
                        const int sf = G.flip ? KK - 1 - s : s;
                        ACC wv[CV];
#pragma unroll
                        for (int v = 0; v < CV; v++) wv[v] = wtap<T, ACC, SMW>(G, w, k0 + v, rf, sf);
#pragma unroll
                        for (int j = 0; j < QV; j++)
#pragma unroll
                            for (int v = 0; v < CV; v++) acc[v][j] += seg[j + KK - 1 - s][v] * wv[v];
                    }
                } else {
#pragma unroll
                    for (int s = 0; s < S; s++) {
                        const int sf = G.flip ? S - 1 - s : s;
                        ACC wv[CV];
#pragma unroll
                        for (int v = 0; v < CV; v++) wv[v] = wtap<T, ACC, SMW>(G, w, k0 + v, rf, sf);
#pragma unroll
                        for (int j = 0; j < QV; j++) {
                            const int nw = i0 + j + G.pad[2] - s * G.dil[2];
                            if (i0 + j >= W || nw < 0 || nw % G.str[2]) continue;
                            const int ow = nw / G.str[2];
                            if (ow >= Q) continue;
                            ACC gv[CV];
                            VecLd<T, ACC, CV>::load(dyrow + ow * G.ys[4], gv);
#pragma unroll
                            for (int v = 0; v < CV; v++) acc[v][j] += gv[v] * wv[v];
                        }
                    }
                }
            }
        }
        T *xo = dx + n * G.xs[0] + c0 * G.xs[1] + ih * G.xs[3];
#pragma unroll
        for (int j = 0; j < QV; j++) {
            if (i0 + j >= W) continue;
#pragma unroll
            for (int v = 0; v < CV; v++) blend(xo + v * G.xs[1] + (i0 + j) * G.xs[4], acc[v][j], alpha, beta);
        }
    }
}

/* ---- forward / backward data, row-tiled form: 3x3, stride 1, dilation 1, m == 1, channel
 * pairs (CV = 2) of channels-last tensors ---- */
constexpr int DW3_RV = 4; /* output rows per thread */
constexpr int DW3_QV = 4; /* output columns per thread */

struct Dw3Args {
    int n, c, hi, wi, ho, wo, ph, pw, flip;
    long long is[5], os[5]; /* N, C, D, H, W strides of in and out (elements) */
};

/* out[n,c,oh,ow] = alpha * sum over r, s of in[n,c,oh-ph+r,ow-pw+s] * w[c,rf,sf] + beta * out,
 * (rf, sf) = (r, s), or (2-r, 2-s) when flip. Forward: (in, out) = (x, y) with the problem's
 * padding and flip. Backward data of a stride-1 problem: (in, out) = (dy, dx), padding 2 - p and
 * the flip inverted, since dx[ih] = sum_r dy[ih+ph-r] w[rf(r)] = sum_r' dy[ih-(2-ph)+r'] w[rf(2-r')].
 * Thread: channels c0, c0+1 (the pair index fastest across threads), output rows oh0 .. oh0+RV-1
 * and columns ow0 .. ow0+QV-1; it reads the RV+2 input rows once each, QV+2 columns per row.
 * SMW: the filter is staged in shared memory first (G: the problem's geometry, for the filter). */
template <typename T, bool SMW>
__global__ void __launch_bounds__(256)
dw3_rows_kernel(Dw3Args A, ConvGeom G, const T *__restrict__ in, const T *__restrict__ w, T *out, double alpha, double beta)
{
    constexpr int RV = DW3_RV, QV = DW3_QV, L = QV + 2;
    if constexpr (SMW) stage_filter<T, float>(G, w);
    const long long cv = A.c / 2, qn = (A.wo + QV - 1) / QV, pn = (A.ho + RV - 1) / RV;
    const long long total = (long long)A.n * pn * qn * cv;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        long long rest = idx;
        const int ci = (int)(rest % cv); rest /= cv;
        const int qi = (int)(rest % qn); rest /= qn;
        const int pi = (int)(rest % pn);
        const int n = (int)(rest / pn);
        const int c0 = ci * 2, oh0 = pi * RV, ow0 = qi * QV;
        float wt[9][2];
#pragma unroll
        for (int t = 0; t < 9; t++) {
            const int r = t / 3, s = t % 3;
            const int rf = A.flip ? 2 - r : r, sf = A.flip ? 2 - s : s;
#pragma unroll
            for (int v = 0; v < 2; v++) wt[t][v] = wtap<T, float, SMW>(G, w, c0 + v, rf, sf);
        }
        float acc[RV][QV][2];
#pragma unroll
        for (int j = 0; j < RV; j++)
#pragma unroll
            for (int q = 0; q < QV; q++) acc[j][q][0] = acc[j][q][1] = 0;
        const T *inn = in + n * A.is[0] + c0 * A.is[1];
        const int ih0 = oh0 - A.ph, iw0 = ow0 - A.pw;
#pragma unroll
        for (int i = 0; i < RV + 2; i++) { /* input row ih0 + i feeds output row j with tap r = i - j */
            const int ih = ih0 + i;
            if (ih < 0 || ih >= A.hi) continue;
            const T *row = inn + ih * A.is[3];
            float seg[L][2];
#pragma unroll
            for (int u = 0; u < L; u++) {
                const int iw = iw0 + u;
                if (iw >= 0 && iw < A.wi) VecLd<T, float, 2>::load(row + iw * A.is[4], seg[u]);
                else seg[u][0] = seg[u][1] = 0;
            }
#pragma unroll
            for (int j = 0; j < RV; j++) {
                const int r = i - j;
                if (r < 0 || r > 2) continue; /* known at compile time */
#pragma unroll
                for (int s = 0; s < 3; s++)
#pragma unroll
                    for (int q = 0; q < QV; q++)
#pragma unroll
                        for (int v = 0; v < 2; v++) acc[j][q][v] += seg[q + s][v] * wt[r * 3 + s][v];
            }
        }
        T *o = out + n * A.os[0] + c0 * A.os[1];
#pragma unroll
        for (int j = 0; j < RV; j++) {
            if (oh0 + j >= A.ho) continue;
#pragma unroll
            for (int q = 0; q < QV; q++) {
                if (ow0 + q >= A.wo) continue;
#pragma unroll
                for (int v = 0; v < 2; v++)
                    blend(o + v * A.os[1] + (oh0 + j) * A.os[3] + (ow0 + q) * A.os[4], acc[j][q][v], alpha, beta);
            }
        }
    }
}

/* ---- backward filter ---- */
constexpr int BWF_THREADS = 256;
constexpr int BWF_TAPS = 9;       /* taps per block (grid.z walks groups of taps) */
constexpr int BWF_TARGET = 1024;  /* blocks the split aims for */

struct BwfPlan {
    int ch;             /* channels per block: 32 when channels are innermost, else 1 */
    long long chunks;   /* ceil(K / ch) */
    int splits;         /* slices of the N*P*Q positions, each reduced by one block */
    long long per;      /* positions per split */
    int tapgroups;      /* ceil(R*S / BWF_TAPS) */
};

/* Depends only on the problem (never on the device), so results and the workspace size are
 * reproducible. */
static BwfPlan bwf_plan(const fdnn_conv_problem *p)
{
    BwfPlan b;
    b.ch = p->xs[1] <= p->xs[4] && p->ys[1] <= p->ys[4] ? 32 : 1;
    b.chunks = (p->k + b.ch - 1) / b.ch;
    const long long npq = (long long)p->n * p->out[1] * p->out[2];
    const int slices = BWF_THREADS / b.ch;
    long long s = (BWF_TARGET + b.chunks - 1) / b.chunks;
    const long long most = (npq + slices * 8LL - 1) / (slices * 8LL); /* >= 8 positions per thread */
    if (s > most) s = most;
    if (s > 4096) s = 4096;
    if (s < 1) s = 1;
    b.per = (npq + s - 1) / s;
    b.splits = (int)((npq + b.per - 1) / b.per); /* no empty split */
    if (b.splits < 1) b.splits = 1;
    b.tapgroups = (p->flt[1] * p->flt[2] + BWF_TAPS - 1) / BWF_TAPS;
    return b;
}

/* Block (chunk, split, tapgroup). Thread: channel k = chunk*CH + tid % CH, slice tid / CH walks
 * positions split*per + slice, + SL, ... (positions ordered n, oh, ow with ow fastest). acc[i]
 * is the sum for input tap t = tapgroup*9 + i (x read at oh*sh - ph + r*dh, ...); it lands in
 * filter element (rf, sf) (flipped for CUDNN_CONVOLUTION). DIRECT: blend into dw, else store
 * the partial into part[(split*K + k)*RS + t]. */
template <typename T, typename ACC, int CH, bool DIRECT>
__global__ void __launch_bounds__(BWF_THREADS)
dw_bwd_filter_kernel(ConvGeom G, long long per, const T *__restrict__ x, const T *__restrict__ dy, T *dw, ACC *part,
                     double alpha, double beta)
{
    constexpr int SL = BWF_THREADS / CH;
    __shared__ ACC red[BWF_THREADS];
    const int R = G.flt[1], S = G.flt[2], RS = R * S;
    const int P = G.out[1], Q = G.out[2], H = G.in[1], W = G.in[2];
    const int lane = (int)threadIdx.x % CH, slice = (int)threadIdx.x / CH;
    const long long k = (long long)blockIdx.x * CH + lane;
    const bool kok = k < G.k;
    const int c = kok ? (int)(k / G.kg) : 0;
    const int t0 = (int)blockIdx.z * BWF_TAPS;
    int tr[BWF_TAPS], ts[BWF_TAPS];
#pragma unroll
    for (int i = 0; i < BWF_TAPS; i++) {
        const int t = t0 + i < RS ? t0 + i : RS - 1;
        tr[i] = (t / S) * G.dil[1];
        ts[i] = (t % S) * G.dil[2];
    }
    ACC acc[BWF_TAPS];
#pragma unroll
    for (int i = 0; i < BWF_TAPS; i++) acc[i] = 0;
    const long long npq = (long long)G.n * P * Q;
    const long long beg = (long long)blockIdx.y * per;
    long long end = beg + per;
    if (end > npq) end = npq;
    if (kok) {
        const T *dyk = dy + k * G.ys[1];
        const T *xc = x + (long long)c * G.xs[1];
        for (long long pos = beg + slice; pos < end; pos += SL) {
            long long q = pos;
            const int ow = (int)(q % Q); q /= Q;
            const int oh = (int)(q % P);
            const int n = (int)(q / P);
            const ACC g = (ACC)ld(dyk + n * G.ys[0] + oh * G.ys[3] + ow * G.ys[4]);
            const T *xn = xc + n * G.xs[0];
            const int h0 = oh * G.str[1] - G.pad[1], w0 = ow * G.str[2] - G.pad[2];
#pragma unroll
            for (int i = 0; i < BWF_TAPS; i++) {
                const int ih = h0 + tr[i], iw = w0 + ts[i];
                if (t0 + i < RS && ih >= 0 && ih < H && iw >= 0 && iw < W)
                    acc[i] += g * (ACC)ld(xn + ih * G.xs[3] + iw * G.xs[4]);
            }
        }
    }
    /* fixed-order tree over the SL slices of each channel, one tap at a time */
#pragma unroll
    for (int i = 0; i < BWF_TAPS; i++) {
        if (t0 + i >= RS) break; /* uniform across the block */
        red[threadIdx.x] = acc[i];
        __syncthreads();
        for (int half = SL / 2; half > 0; half >>= 1) {
            if (slice < half) red[threadIdx.x] += red[threadIdx.x + half * CH];
            __syncthreads();
        }
        if (slice == 0 && kok) {
            const int t = t0 + i, rr = t / S, s = t % S;
            if (DIRECT) {
                const int rf = G.flip ? R - 1 - rr : rr, sf = G.flip ? S - 1 - s : s;
                blend(dw + k * G.ws[0] + rf * G.ws[3] + sf * G.ws[4], red[threadIdx.x], alpha, beta);
            } else {
                part[((long long)blockIdx.y * G.k + k) * RS + t] = red[threadIdx.x];
            }
        }
        __syncthreads();
    }
}

/* Second pass: dw[k, tap] = alpha * sum over splits (in order) of the partials + beta * dw. */
template <typename T, typename ACC>
__global__ void dw_bwd_filter_finish(ConvGeom G, int splits, const ACC *__restrict__ part, T *dw, double alpha, double beta)
{
    const int R = G.flt[1], S = G.flt[2], RS = R * S;
    const long long total = (long long)G.k * RS;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long k = idx / RS;
        const int t = (int)(idx % RS), rr = t / S, s = t % S;
        ACC sum = 0;
        for (int sp = 0; sp < splits; sp++) sum += part[(long long)sp * total + idx];
        const int rf = G.flip ? R - 1 - rr : rr, sf = G.flip ? S - 1 - s : s;
        blend(dw + k * G.ws[0] + rf * G.ws[3] + sf * G.ws[4], sum, alpha, beta);
    }
}

/* ---- backward filter, tiled form: 3x3, dilation 1, stride 1 or 2 (both axes), channels
 * innermost in x and dy ---- */
constexpr int BWT_THREADS = 256;  /* most threads per block */
constexpr int BWT_TARGET = 1024;  /* blocks the plan aims for */

struct BwtPlan {
    bool use;         /* the problem takes the tiled kernel */
    int st;           /* stride of both axes (1 or 2) */
    int cv;           /* channels per thread the plan is made for (the launch may use fewer, see below) */
    int rows;         /* output rows per tile (2 or 4) */
    int bx, by;       /* block: bx channel vectors (threadIdx.x) by by tile slots (threadIdx.y) */
    int tp, tq, qw;   /* row bands per image (ceil(P / rows)), column tiles per band, columns per tile */
    long long tiles;  /* N * tp * tq */
    int gy;           /* grid.y; > 1: per-block partial sums in the workspace, reduced by a second kernel */
};

/* FREEDNN_CUDA_DW_OLD=1: the general kernels instead of the 3x3 tiled / row-tiled ones, for timing
 * the two against each other (bench/kernels/dw_lab.cu sets it before its first call). Read once
 * per process (a C++11 function-local static: thread-safe initialisation), so the workspace
 * query and the run always agree. */
static bool dw_old_kernels()
{
    static const bool old = fdnn_env_int("FREEDNN_CUDA_DW_OLD", 0) == 1;
    return old;
}

/* FREEDNN_CUDA_DW_BWT="cv,rows,bx" overrides the tiled backward filter's channels per thread (1, 2
 * or 4), rows per tile (2 or 4) and block width (1..256) for the lab's sweeps (a 0 or a missing
 * field keeps the plan's choice). Read once per process, like FREEDNN_CUDA_DW_OLD. */
struct BwtKnob {
    int cv, rows, bx;
};
static BwtKnob bwt_knob()
{
    static const BwtKnob k = [] {
        BwtKnob r = {0, 0, 0};
        const char *v = fdnn_getenv("FREEDNN_CUDA_DW_BWT");
        if (v && sscanf(v, "%d,%d,%d", &r.cv, &r.rows, &r.bx) < 1) r = BwtKnob{0, 0, 0};
        if (r.cv != 1 && r.cv != 2 && r.cv != 4) r.cv = 0;
        if (r.rows != 2 && r.rows != 4) r.rows = 0;
        if (r.bx < 1 || r.bx > BWT_THREADS) r.bx = 0;
        return r;
    }();
    return k;
}

/* Depends only on the problem (never on the device or the pointers), so results and the workspace
 * size are reproducible. The plan is made for cv channels per thread: 4 when K is a multiple of 4
 * (one 8- or 16-byte load), else 2 (1 for DOUBLE). The block width bx spreads the K / cv channel
 * vectors evenly over the fewest blocks of at most 32 lanes, so that K = 144 takes 2 x 18 lanes, not
 * 2 x 32 with 28 idle. When the pointers or strides do not allow cv-wide loads the launch uses fewer
 * channels per thread with the same bx, by and grid.y (more blocks along x), so every channel is
 * summed in the same order either way. */
static BwtPlan bwt_plan(const fdnn_conv_problem *p)
{
    BwtPlan b = {};
    const bool cf = p->xs[1] <= p->xs[4] && p->ys[1] <= p->ys[4];
    const int st = p->stride[1];
    b.use = !dw_old_kernels() && cf && p->flt[1] == 3 && p->flt[2] == 3 && p->dil[1] == 1 && p->dil[2] == 1 && p->stride[2] == st &&
            (st == 1 || st == 2);
    if (!b.use) return b;
    const BwtKnob kn = bwt_knob();
    const int esz = (int)fdnn_dtype_size(p->xtype);
    b.st = st;
    b.cv = esz == 8 ? 1 : p->k % 4 == 0 ? 4 : 2;
    if (kn.cv && esz != 8) b.cv = kn.cv;
    const int P = p->out[1], Q = p->out[2];
    /* 4-row tiles pay on large stride-1 outputs (fewer x rows loaded twice); 2 rows elsewhere give
     * more threads (bench/kernels/dw_lab.cu's sweep on the H200) */
    b.rows = kn.rows ? kn.rows : st == 1 && P * Q >= 56 * 56 ? 4 : 2;
    if (b.cv == 4 && st == 2) b.rows = 2; /* 4 rows of 4 channels at stride 2 spill */
    const long long kvp = (p->k + b.cv - 1) / b.cv;
    const long long nch = (kvp + 31) / 32;
    b.bx = kn.bx ? kn.bx : (int)((kvp + nch - 1) / nch);
    b.by = BWT_THREADS / b.bx < 16 ? BWT_THREADS / b.bx : 16;
    if (b.by < 1) b.by = 1;
    b.tp = (P + b.rows - 1) / b.rows;
    int tq = 1; /* split rows into column tiles (of >= 8 columns) until ~128K threads have work */
    while (tq < 8 && Q / (tq * 2) >= 8 && kvp * p->n * b.tp * tq < 131072) tq *= 2;
    b.qw = (Q + tq - 1) / tq;
    b.tq = (Q + b.qw - 1) / b.qw; /* no empty tile */
    b.tiles = (long long)p->n * b.tp * b.tq;
    const long long chunks = (p->k + (long long)b.bx * b.cv - 1) / ((long long)b.bx * b.cv);
    long long gy = (BWT_TARGET + chunks - 1) / chunks;
    const long long most = (b.tiles + b.by - 1) / b.by; /* every thread row has a tile */
    if (gy > most) gy = most;
    if (gy > 65535) gy = 65535;
    if (gy < 1) gy = 1;
    b.gy = (int)gy;
    return b;
}

/* The raw bits of CV adjacent channels (one load of sizeof(T)*CV bytes), widened to the
 * accumulation type only after every load of a step is issued. Converting each value as it
 * arrives let NVCC reuse the load's register for the next load, so 16-bit types issued their
 * loads two at a time and waited on each pair (the 16-bit tiled kernel ran 1.7x slower than the
 * FLOAT one on the same tiles). */
template <int B> struct BitsOf;
template <> struct BitsOf<2> { using type = unsigned short; };
template <> struct BitsOf<4> { using type = unsigned int; };
template <> struct BitsOf<8> { using type = unsigned long long; };
template <> struct BitsOf<16> { using type = uint4; };

template <typename T, typename ACC, int CV> struct RawVec {
    using R = typename BitsOf<sizeof(T) * CV>::type;
    static __device__ __forceinline__ R load(const T *p) { return *reinterpret_cast<const R *>(p); }
    /* R{} is all zero bits: 0.0 in every type */
    static __device__ __forceinline__ R load_if(bool ok, const T *p) { return ok ? load(p) : R{}; }
    static __device__ __forceinline__ void widen(const R &r, ACC *v) { VecLd<T, ACC, CV>::load(reinterpret_cast<const T *>(&r), v); }
};

/* Block (channel chunk, tile group) of blockDim.x = bx channel vectors (tx) by blockDim.y = by tile
 * slots (ty). Thread: channels k0 = (blockIdx.x*bx + tx)*CV .. k0+CV-1 (input channel k0 / m;
 * CV > 1 only with m == 1), tiles t = blockIdx.y*by + ty, + gridDim.y*by, ... (t -> (n, row band,
 * column tile), column tile fastest). A tile is output rows p0 .. p0+TP-1 (dy zero past P) and
 * columns qa .. qb-1; the thread walks its columns left to right, keeping the 3 input columns
 * iw = q*ST - pw + s (s = 0..2) of the LH input rows ih = p0*ST - ph + i in registers (win[s][i]),
 * so each x element of the tile is loaded once; after the products of column q, the dy values and
 * new x columns of column q+1 are all loaded raw before any is widened. acc[v*9 + r*3 + s] = sum of dy[p][q] *
 * x[p*ST - ph + r][q*ST - pw + s] for channel k0+v. The block then adds its by tile slots in slot
 * order (dynamic shared memory, by*9*CV*bx accumulators) and either blends into dw (gridDim.y == 1)
 * or stores the partial into part[(blockIdx.y*K + k)*9 + tap]. */
template <typename T, typename ACC, int CV, int ST, int TP>
__global__ void __launch_bounds__(BWT_THREADS)
dw_bwf_tiled_kernel(ConvGeom G, int tp, int tq, int qw, long long tiles, const T *__restrict__ x, const T *__restrict__ dy,
                    T *dw, ACC *part, double alpha, double beta)
{
    using RV = RawVec<T, ACC, CV>;
    using R = typename RV::R;
    constexpr int LH = (TP - 1) * ST + 3;
    constexpr int NA = 9 * CV;
    ACC *red = reinterpret_cast<ACC *>(dw_smem); /* [by][NA][bx] */
    const int P = G.out[1], Q = G.out[2], H = G.in[1], W = G.in[2];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y, bx = (int)blockDim.x, by = (int)blockDim.y;
    const long long k0 = ((long long)blockIdx.x * bx + tx) * CV;
    ACC acc[NA];
#pragma unroll
    for (int i = 0; i < NA; i++) acc[i] = 0;
    if (k0 < G.k) { /* CV > 1 implies K % CV == 0: k0 + CV - 1 < K too */
        const T *xc = x + (k0 / G.kg) * G.xs[1];
        const T *dyk = dy + k0 * G.ys[1];
        for (long long t = (long long)blockIdx.y * by + ty; t < tiles; t += (long long)gridDim.y * by) {
            const int qt = (int)(t % tq);
            const long long rest = t / tq;
            const int pt = (int)(rest % tp);
            const int n = (int)(rest / tp);
            const int p0 = pt * TP, qa = qt * qw;
            const int qb = qa + qw < Q ? qa + qw : Q;
            const T *xn = xc + n * G.xs[0];
            const T *dyn = dyk + n * G.ys[0];
            const int h0 = p0 * ST - G.pad[1];
            /* x (ih, iw), zero outside the image */
            auto ldx = [&](int ih, int iw) { return RV::load_if(ih >= 0 && ih < H && iw >= 0 && iw < W, xn + ih * G.xs[3] + iw * G.xs[4]); };
            ACC win[3][LH][CV];
            R gr[TP];
            {
                R xr[3][LH];
#pragma unroll
                for (int s = 0; s < 3; s++)
#pragma unroll
                    for (int i = 0; i < LH; i++) xr[s][i] = ldx(h0 + i, qa * ST - G.pad[2] + s);
#pragma unroll
                for (int j = 0; j < TP; j++) gr[j] = RV::load_if(p0 + j < P, dyn + (p0 + j) * G.ys[3] + qa * G.ys[4]);
#pragma unroll
                for (int s = 0; s < 3; s++)
#pragma unroll
                    for (int i = 0; i < LH; i++) RV::widen(xr[s][i], win[s][i]);
            }
            for (int q = qa; q < qb; q++) {
                ACC g[TP][CV];
#pragma unroll
                for (int j = 0; j < TP; j++) RV::widen(gr[j], g[j]);
#pragma unroll
                for (int j = 0; j < TP; j++)
#pragma unroll
                    for (int r = 0; r < 3; r++)
#pragma unroll
                        for (int s = 0; s < 3; s++)
#pragma unroll
                            for (int v = 0; v < CV; v++) acc[v * 9 + r * 3 + s] += g[j][v] * win[s][j * ST + r][v];
                if (q + 1 < qb) {
                    /* column q+1: its dy and the ST new x columns (slots 3-ST .. 2 after the slide),
                     * all loads issued before any is widened */
                    R nx[ST][LH];
                    const int wn = (q + 1) * ST - G.pad[2];
#pragma unroll
                    for (int s = 0; s < ST; s++)
#pragma unroll
                        for (int i = 0; i < LH; i++) nx[s][i] = ldx(h0 + i, wn + 3 - ST + s);
#pragma unroll
                    for (int j = 0; j < TP; j++) gr[j] = RV::load_if(p0 + j < P, dyn + (p0 + j) * G.ys[3] + (q + 1) * G.ys[4]);
                    /* slide: slot s of column q+1 is slot s+ST of column q */
#pragma unroll
                    for (int s = 0; s < 3 - ST; s++)
#pragma unroll
                        for (int i = 0; i < LH; i++)
#pragma unroll
                            for (int v = 0; v < CV; v++) win[s][i][v] = win[s + ST][i][v];
#pragma unroll
                    for (int s = 0; s < ST; s++)
#pragma unroll
                        for (int i = 0; i < LH; i++) RV::widen(nx[s][i], win[3 - ST + s][i]);
                }
            }
        }
    }
#pragma unroll
    for (int i = 0; i < NA; i++) red[(ty * NA + i) * bx + tx] = acc[i];
    __syncthreads();
    for (int e = ty * bx + tx; e < NA * bx; e += bx * by) {
        const int ex = e % bx, ei = e / bx;
        ACC sum = red[ei * bx + ex];
        for (int yy = 1; yy < by; yy++) sum += red[(yy * NA + ei) * bx + ex];
        const int v = ei / 9, tap = ei % 9;
        const long long k = ((long long)blockIdx.x * bx + ex) * CV + v;
        if (k >= G.k) continue;
        if (gridDim.y == 1) {
            const int r = tap / 3, s = tap % 3;
            const int rf = G.flip ? 2 - r : r, sf = G.flip ? 2 - s : s;
            blend(dw + k * G.ws[0] + rf * G.ws[3] + sf * G.ws[4], sum, alpha, beta);
        } else {
            part[((long long)blockIdx.y * G.k + k) * 9 + tap] = sum;
        }
    }
}

/* Second pass of the tiled form: one warp per (k, tap); lane l adds the partials of tile groups
 * l, l+32, ... in order, then a fixed shuffle tree adds the lanes; dw = alpha*sum + beta*dw. */
template <typename T, typename ACC>
__global__ void __launch_bounds__(256)
dw_bwf_tiled_finish(ConvGeom G, int splits, const ACC *__restrict__ part, T *dw, double alpha, double beta)
{
    const long long total = (long long)G.k * 9;
    const int lane = (int)threadIdx.x % 32;
    /* the loop bound is uniform across each warp (blockDim is a multiple of 32) */
    for (long long idx = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; idx < total;
         idx += (long long)gridDim.x * blockDim.x / 32) {
        ACC sum = 0;
        for (int sp = lane; sp < splits; sp += 32) sum += part[(long long)sp * total + idx];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
        if (lane == 0) {
            const long long k = idx / 9;
            const int tap = (int)(idx % 9), r = tap / 3, s = tap % 3;
            const int rf = G.flip ? 2 - r : r, sf = G.flip ? 2 - s : s;
            blend(dw + k * G.ws[0] + rf * G.ws[3] + sf * G.ws[4], sum, alpha, beta);
        }
    }
}

/* ---- launchers ---- */
static bool aligned(const void *ptr, size_t a) { return ((uintptr_t)ptr % a) == 0; }

/* CV adjacent channels per thread for packed-channel tensors with m == 1: the channel group
 * (CV*i .. CV*i+CV-1) is one aligned vector in both tensors a and b (strides in elements). */
template <typename T>
static bool can_vec(const fdnn_conv_problem *p, int cv, const int64_t *as, const void *a, const int64_t *bs, const void *b)
{
    if (sizeof(T) == 8 || p->k != p->c || p->c % cv) return false;
    if (as[1] != 1 || bs[1] != 1) return false;
    for (int i = 0; i < 5; i++)
        if (i != 1 && ((as[i] % cv) || (bs[i] % cv))) return false;
    return aligned(a, cv * sizeof(T)) && aligned(b, cv * sizeof(T));
}
template <typename T>
static bool can_vec2(const fdnn_conv_problem *p, const int64_t *as, const void *a, const int64_t *bs, const void *b)
{
    return can_vec<T>(p, 2, as, a, bs, b);
}

/* with the shared-memory filter, at most DW_SMW_BLOCKS blocks (grid-stride) amortise the copy */
constexpr unsigned DW_SMW_BLOCKS = 2048;
#define DW_LAUNCH(KERNEL, CV, KS, SW, CF, ...)                                                                          \
    do {                                                                                                                 \
        if (smw)                                                                                                         \
            KERNEL<T, ACC, CV, QV, KS, SW, CF, true><<<grid_for(total, 256) < DW_SMW_BLOCKS ? grid_for(total, 256)        \
                                                                                             : DW_SMW_BLOCKS,            \
                                                       256, smem, (cudaStream_t)h->stream>>>(__VA_ARGS__);               \
        else                                                                                                             \
            KERNEL<T, ACC, CV, QV, KS, SW, CF, false><<<grid_for(total, 256), 256, 0, (cudaStream_t)h->stream>>>(__VA_ARGS__); \
    } while (0)

/* KS: 3 or 5 for square 3x3 / 5x5 filters, else 0 (runtime R, S). SW: the W stride when the
 * segment form applies (KS > 0, W dilation 1, W stride 1 or 2 (forward) / 1 (backward data)),
 * else 0. The variants are instantiated for each (CV, CF) layout form; a backward data kernel
 * with SW > 0 assumes stride 1. */
#define DW_VARIANTS2(KERNEL, CV, CF, ...)                                                                                 \
    do {                                                                                                                 \
        if (ks == 3 && sw == 1) DW_LAUNCH(KERNEL, CV, 3, 1, CF, __VA_ARGS__);                                            \
        else if (ks == 3 && sw == 2) DW_LAUNCH(KERNEL, CV, 3, 2, CF, __VA_ARGS__);                                       \
        else if (ks == 5 && sw == 1) DW_LAUNCH(KERNEL, CV, 5, 1, CF, __VA_ARGS__);                                       \
        else if (ks == 5 && sw == 2) DW_LAUNCH(KERNEL, CV, 5, 2, CF, __VA_ARGS__);                                       \
        else DW_LAUNCH(KERNEL, CV, 0, 0, CF, __VA_ARGS__);                                                                \
    } while (0)
#define DW_VARIANTS1(KERNEL, CV, CF, ...)                                                                                 \
    do {                                                                                                                 \
        if (ks == 3 && sw == 1) DW_LAUNCH(KERNEL, CV, 3, 1, CF, __VA_ARGS__);                                            \
        else if (ks == 5 && sw == 1) DW_LAUNCH(KERNEL, CV, 5, 1, CF, __VA_ARGS__);                                       \
        else DW_LAUNCH(KERNEL, CV, 0, 0, CF, __VA_ARGS__);                                                                \
    } while (0)

/* MAXSW: 2 (forward) or 1 (backward data) */
#define DW_DISPATCH(KERNEL, MAXSW, ...)                                                                              \
    do {                                                                                                                 \
        const int ks = p->flt[1] == p->flt[2] && (p->flt[1] == 3 || p->flt[1] == 5) ? p->flt[1] : 0;                    \
        const int sw = ks && p->dil[2] == 1 && p->stride[2] >= 1 && p->stride[2] <= MAXSW ? p->stride[2] : 0;            \
        const size_t smem = (size_t)p->k * p->flt[1] * p->flt[2] * sizeof(ACC);                                          \
        const bool smw = (vec || cf) && smem <= (size_t)DW_SMEM_MAX;                                                     \
        if (vec) DW_VARIANTS##MAXSW(KERNEL, 2, true, __VA_ARGS__);                                                       \
        else if (cf) DW_VARIANTS##MAXSW(KERNEL, 1, true, __VA_ARGS__);                                                   \
        else DW_VARIANTS##MAXSW(KERNEL, 1, false, __VA_ARGS__); /* smw is false here */                                 \
    } while (0)

/* The row-tiled kernel applies: 3x3, stride 1, dilation 1, channel pairs (can_vec2 on in / out) */
static bool dw3_rows_ok(const fdnn_conv_problem *p)
{
    return !dw_old_kernels() && p->flt[1] == 3 && p->flt[2] == 3 && p->stride[1] == 1 && p->stride[2] == 1 && p->dil[1] == 1 &&
           p->dil[2] == 1;
}

/* in / out: x / y (forward) or dy / dx (backward data, bwd = true) */
template <typename T>
static cudnnStatus_t dw3_rows_launch(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a, bool bwd)
{
    const ConvGeom G = make_geom(p);
    Dw3Args A;
    A.n = p->n;
    A.c = p->c;
    A.hi = bwd ? p->out[1] : p->in[1];
    A.wi = bwd ? p->out[2] : p->in[2];
    A.ho = bwd ? p->in[1] : p->out[1];
    A.wo = bwd ? p->in[2] : p->out[2];
    A.ph = bwd ? 2 - p->pad[1] : p->pad[1];
    A.pw = bwd ? 2 - p->pad[2] : p->pad[2];
    A.flip = bwd ? G.flip == 0 : G.flip;
    for (int i = 0; i < 5; i++) {
        A.is[i] = bwd ? p->ys[i] : p->xs[i];
        A.os[i] = bwd ? p->xs[i] : p->ys[i];
    }
    const long long total = (long long)A.n * ((A.ho + DW3_RV - 1) / DW3_RV) * ((A.wo + DW3_QV - 1) / DW3_QV) * (A.c / 2);
    const T *in = (const T *)(bwd ? a->y : a->x), *w = (const T *)a->w;
    cudaStream_t st = (cudaStream_t)h->stream;
    /* the filter in shared memory as [tap][k] (lanes read adjacent words) when it fits; then at
     * most DW_SMW_BLOCKS blocks (grid-stride) amortise the copy */
    const size_t smem = (size_t)p->k * 9 * sizeof(float);
    if (smem <= (size_t)DW_SMEM_MAX) {
        const unsigned grid = grid_for(total, 256) < DW_SMW_BLOCKS ? grid_for(total, 256) : DW_SMW_BLOCKS;
        dw3_rows_kernel<T, true><<<grid, 256, smem, st>>>(A, G, in, w, (T *)a->out, a->alpha, a->beta);
    } else {
        dw3_rows_kernel<T, false><<<grid_for(total, 256), 256, 0, st>>>(A, G, in, w, (T *)a->out, a->alpha, a->beta);
    }
    return fdnn_cuda_check(cudaGetLastError(), "dw3_rows_kernel");
}

template <typename T, typename ACC>
cudnnStatus_t launch_fwd(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    if constexpr (sizeof(T) != 8) {
        if (dw3_rows_ok(p) && can_vec2<T>(p, p->xs, a->x, p->ys, a->out)) return dw3_rows_launch<T>(h, p, a, false);
    }
    constexpr int QV = 4;
    ConvGeom G = make_geom(p);
    const bool vec = can_vec2<T>(p, p->xs, a->x, p->ys, a->out);
    const bool cf = p->ys[1] <= p->ys[4];
    const long long total = (long long)p->n * p->out[1] * ((p->out[2] + QV - 1) / QV) * (p->k / (vec ? 2 : 1));
    DW_DISPATCH(dw_fwd_kernel, 2, G, (const T *)a->x, (const T *)a->w, (T *)a->out, a->alpha, a->beta);
    return fdnn_cuda_check(cudaGetLastError(), "dw_fwd_kernel");
}

template <typename T, typename ACC>
cudnnStatus_t launch_bwd_data(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    if constexpr (sizeof(T) != 8) {
        if (dw3_rows_ok(p) && can_vec2<T>(p, p->xs, a->out, p->ys, a->y)) return dw3_rows_launch<T>(h, p, a, true);
    }
    constexpr int QV = 4;
    ConvGeom G = make_geom(p);
    const bool vec = can_vec2<T>(p, p->xs, a->out, p->ys, a->y);
    const bool cf = p->xs[1] <= p->xs[4];
    const long long total = (long long)p->n * p->in[1] * ((p->in[2] + QV - 1) / QV) * (p->c / (vec ? 2 : 1));
    DW_DISPATCH(dw_bwd_data_kernel, 1, G, (T *)a->out, (const T *)a->w, (const T *)a->y, a->alpha, a->beta);
    return fdnn_cuda_check(cudaGetLastError(), "dw_bwd_data_kernel");
}

template <typename T, typename ACC, int CV, int ST, int TP>
static void bwt_launch(cudaStream_t st, const BwtPlan &b, const ConvGeom &G, const fdnn_conv_args *a, ACC *part)
{
    const long long kv = G.k / CV;
    const dim3 grid((unsigned)((kv + b.bx - 1) / b.bx), (unsigned)b.gy), block((unsigned)b.bx, (unsigned)b.by);
    const size_t smem = (size_t)b.bx * b.by * 9 * CV * sizeof(ACC);
    dw_bwf_tiled_kernel<T, ACC, CV, ST, TP><<<grid, block, smem, st>>>(G, b.tp, b.tq, b.qw, b.tiles, (const T *)a->x,
                                                                       (const T *)a->y, (T *)a->out, part, a->alpha, a->beta);
}

template <typename T, typename ACC, int CV>
static void bwt_launch_cv(cudaStream_t st, const BwtPlan &b, const ConvGeom &G, const fdnn_conv_args *a, ACC *part)
{
    if (b.st == 1) {
        if (b.rows == 2) bwt_launch<T, ACC, CV, 1, 2>(st, b, G, a, part);
        else bwt_launch<T, ACC, CV, 1, 4>(st, b, G, a, part);
    } else if constexpr (CV == 4) { /* the plan gives 4 channels at stride 2 two rows (4 rows spill) */
        bwt_launch<T, ACC, CV, 2, 2>(st, b, G, a, part);
    } else {
        if (b.rows == 2) bwt_launch<T, ACC, CV, 2, 2>(st, b, G, a, part);
        else bwt_launch<T, ACC, CV, 2, 4>(st, b, G, a, part);
    }
}

template <typename T, typename ACC>
cudnnStatus_t launch_bwd_filter_tiled(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a, const BwtPlan &b)
{
    const ConvGeom G = make_geom(p);
    cudaStream_t st = (cudaStream_t)h->stream;
    ACC *part = (ACC *)a->workspace;
    if (b.gy > 1 && (!part || a->workspace_size < fdnn_cuda_conv_depthwise_workspace(p)))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "depthwise backward filter needs %zu bytes of workspace (got %zu)",
                         fdnn_cuda_conv_depthwise_workspace(p), a->workspace_size);
    if constexpr (sizeof(T) != 8) {
        if (b.cv == 4 && can_vec<T>(p, 4, p->xs, a->x, p->ys, a->y)) bwt_launch_cv<T, ACC, 4>(st, b, G, a, part);
        else if (b.cv >= 2 && can_vec<T>(p, 2, p->xs, a->x, p->ys, a->y)) bwt_launch_cv<T, ACC, 2>(st, b, G, a, part);
        else bwt_launch_cv<T, ACC, 1>(st, b, G, a, part);
    } else {
        bwt_launch_cv<T, ACC, 1>(st, b, G, a, part);
    }
    cudnnStatus_t s = fdnn_cuda_check(cudaGetLastError(), "dw_bwf_tiled_kernel");
    if (s != CUDNN_STATUS_SUCCESS || b.gy == 1) return s;
    const long long warps = (long long)p->k * 9;
    dw_bwf_tiled_finish<T, ACC><<<grid_for(warps * 32, 256), 256, 0, st>>>(G, b.gy, part, (T *)a->out, a->alpha, a->beta);
    return fdnn_cuda_check(cudaGetLastError(), "dw_bwf_tiled_finish");
}

template <typename T, typename ACC>
cudnnStatus_t launch_bwd_filter(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    const BwtPlan bt = bwt_plan(p);
    if (bt.use) return launch_bwd_filter_tiled<T, ACC>(h, p, a, bt);
    ConvGeom G = make_geom(p);
    const BwfPlan b = bwf_plan(p);
    const dim3 grid((unsigned)b.chunks, (unsigned)b.splits, (unsigned)b.tapgroups);
    cudaStream_t st = (cudaStream_t)h->stream;
    const T *x = (const T *)a->x, *dy = (const T *)a->y;
    T *dw = (T *)a->out;
    ACC *part = (ACC *)a->workspace;
    if (b.splits == 1) {
        if (b.ch == 32) dw_bwd_filter_kernel<T, ACC, 32, true><<<grid, BWF_THREADS, 0, st>>>(G, b.per, x, dy, dw, part, a->alpha, a->beta);
        else dw_bwd_filter_kernel<T, ACC, 1, true><<<grid, BWF_THREADS, 0, st>>>(G, b.per, x, dy, dw, part, a->alpha, a->beta);
        return fdnn_cuda_check(cudaGetLastError(), "dw_bwd_filter_kernel");
    }
    if (!part || a->workspace_size < fdnn_cuda_conv_depthwise_workspace(p))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "depthwise backward filter needs %zu bytes of workspace (got %zu)",
                         fdnn_cuda_conv_depthwise_workspace(p), a->workspace_size);
    if (b.ch == 32) dw_bwd_filter_kernel<T, ACC, 32, false><<<grid, BWF_THREADS, 0, st>>>(G, b.per, x, dy, dw, part, a->alpha, a->beta);
    else dw_bwd_filter_kernel<T, ACC, 1, false><<<grid, BWF_THREADS, 0, st>>>(G, b.per, x, dy, dw, part, a->alpha, a->beta);
    cudnnStatus_t s = fdnn_cuda_check(cudaGetLastError(), "dw_bwd_filter_kernel");
    if (s != CUDNN_STATUS_SUCCESS) return s;
    const long long total = (long long)p->k * p->flt[1] * p->flt[2];
    dw_bwd_filter_finish<T, ACC><<<grid_for(total, 256), 256, 0, st>>>(G, b.splits, part, dw, a->alpha, a->beta);
    return fdnn_cuda_check(cudaGetLastError(), "dw_bwd_filter_finish");
}

template <typename T, typename ACC>
cudnnStatus_t dispatch_dir(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    switch (p->dir) {
    case FDNN_CONV_FWD: return launch_fwd<T, ACC>(h, p, a);
    case FDNN_CONV_BWD_DATA: return launch_bwd_data<T, ACC>(h, p, a);
    case FDNN_CONV_BWD_FILTER: return launch_bwd_filter<T, ACC>(h, p, a);
    }
    return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "unknown convolution direction %d", (int)p->dir);
}

} /* namespace */

extern "C" size_t fdnn_cuda_conv_depthwise_workspace(const fdnn_conv_problem *p)
{
    if (p->dir != FDNN_CONV_BWD_FILTER) return 0;
    const size_t acc = p->xtype == CUDNN_DATA_DOUBLE ? sizeof(double) : sizeof(float);
    const BwtPlan bt = bwt_plan(p);
    if (bt.use) return bt.gy > 1 ? (size_t)bt.gy * (size_t)p->k * 9 * acc : 0;
    const BwfPlan b = bwf_plan(p);
    if (b.splits <= 1) return 0;
    return (size_t)b.splits * (size_t)p->k * (size_t)p->flt[1] * (size_t)p->flt[2] * acc;
}

extern "C" cudnnStatus_t fdnn_cuda_conv_depthwise_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    const long long outs = (long long)p->n * p->k * p->out[1] * p->out[2];
    const long long ins = (long long)p->n * p->c * p->in[1] * p->in[2];
    if (outs == 0 || ins == 0) return CUDNN_STATUS_SUCCESS;
    if (p->xtype == p->wtype && p->xtype == p->ytype) {
        switch (p->xtype) {
        case CUDNN_DATA_FLOAT: return dispatch_dir<float, float>(h, p, a);
        case CUDNN_DATA_DOUBLE: return dispatch_dir<double, double>(h, p, a);
        case CUDNN_DATA_HALF: return dispatch_dir<__half, float>(h, p, a);
        case CUDNN_DATA_BFLOAT16: return dispatch_dir<__nv_bfloat16, float>(h, p, a);
        default: break;
        }
    }
    return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "conv depthwise (CUDA): data types x=%s w=%s y=%s are not implemented",
                     fdnn_dtype_name(p->xtype), fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
}
