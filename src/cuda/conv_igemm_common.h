/* Pieces shared by the tiled implicit-GEMM forward kernels (C++/CUDA only).
 * GEMM view of a forward convolution, per group gi:
 *   rows m  = (n, od, oh, ow)            M = N*P (all output positions)
 *   cols j  = output channel k - gi*K/g  Ngemm = K/g
 *   red. kd = (c, t, r, s)               Kdim = C/g*T*R*S (c fastest when x is channels-last)
 *   y[m, j] = sum_kd x[n, gi*C/g + c, od*str - pad + t*dil, ...] * w[k, c, t', r', s']
 * with t' = T-1-t (and so on) for CUDNN_CONVOLUTION. */
#ifndef FDNN_CUDA_IGEMM_COMMON_H
#define FDNN_CUDA_IGEMM_COMMON_H
#include "cuda_dev.h"

namespace fdnn_dev {

/* Per-row (output position) data of a block tile, computed once per block. */
template <int BM>
struct RowInfo {
    long long xbase[BM];   /* n*xs[0] + gi*cg*xs[1]; -1 when the row is past M */
    long long ybase[BM];   /* n*ys[0] + od*ys[2] + oh*ys[3] + ow*ys[4] */
    int d0[BM], h0[BM], w0[BM];
};

template <int BM>
__device__ __forceinline__ void fill_rows(RowInfo<BM> &R, const ConvGeom &G, long long m0, long long M, int gi)
{
    for (int i = threadIdx.x; i < BM; i += blockDim.x) {
        const long long m = m0 + i;
        if (m < M) {
            long long r = m;
            const int ow = (int)(r % G.out[2]); r /= G.out[2];
            const int oh = (int)(r % G.out[1]); r /= G.out[1];
            const int od = (int)(r % G.out[0]);
            const int n = (int)(r / G.out[0]);
            R.xbase[i] = n * G.xs[0] + (long long)gi * G.cg * G.xs[1];
            R.ybase[i] = n * G.ys[0] + od * G.ys[2] + oh * G.ys[3] + ow * G.ys[4];
            R.d0[i] = od * G.str[0] - G.pad[0];
            R.h0[i] = oh * G.str[1] - G.pad[1];
            R.w0[i] = ow * G.str[2] - G.pad[2];
        } else {
            R.xbase[i] = -1;
            R.ybase[i] = -1;
            R.d0[i] = R.h0[i] = R.w0[i] = 0;
        }
    }
}

/* Decoded reduction index: offsets into x (channel part) and into w (without the k part),
 * and the dilated tap offsets. valid = 0 past Kdim. */
struct KdInfo {
    long long xoff, woff;
    int td, rd, sd;
    int valid;
};

__device__ __forceinline__ KdInfo decode_kd(const ConvGeom &G, int kd, int Kdim, int cfast)
{
    KdInfo K;
    K.valid = kd < Kdim;
    if (!K.valid) { K.xoff = K.woff = 0; K.td = K.rd = K.sd = 0; return K; }
    const int T = G.flt[0], R = G.flt[1], S = G.flt[2];
    int c, t, r, s, q = kd;
    if (cfast) {
        c = q % G.cg; q /= G.cg;
        s = q % S; q /= S;
        r = q % R; t = q / R;
    } else {
        s = q % S; q /= S;
        r = q % R; q /= R;
        t = q % T; c = q / T;
    }
    const int tf = G.flip ? T - 1 - t : t, rf = G.flip ? R - 1 - r : r, sf = G.flip ? S - 1 - s : s;
    K.xoff = c * G.xs[1];
    K.woff = c * G.ws[1] + tf * G.ws[2] + rf * G.ws[3] + sf * G.ws[4];
    K.td = t * G.dil[0]; K.rd = r * G.dil[1]; K.sd = s * G.dil[2];
    return K;
}

/* x element of row i and reduction index K, 0 outside the image or the tile. */
template <int BM, typename T>
__device__ __forceinline__ T load_x(const T *__restrict__ x, const RowInfo<BM> &R, int i, const KdInfo &K, const ConvGeom &G)
{
    if (!K.valid || R.xbase[i] < 0) return T(0);
    const int d = R.d0[i] + K.td, h = R.h0[i] + K.rd, w = R.w0[i] + K.sd;
    if ((unsigned)d >= (unsigned)G.in[0] || (unsigned)h >= (unsigned)G.in[1] || (unsigned)w >= (unsigned)G.in[2]) return T(0);
    return x[R.xbase[i] + K.xoff + d * G.xs[2] + h * G.xs[3] + w * G.xs[4]];
}

} /* namespace fdnn_dev */
#endif
