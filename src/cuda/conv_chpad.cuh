/* Channel padding for the mma.sync convolutions (conv_fwd_mma.cu, conv_bwd_filter_mma.cu), whose
 * 16-byte cp.async copies need C to be a multiple of 16 / element size (8 for HALF / BFLOAT16, 4
 * for FLOAT): a dense [rows][C] tensor is copied to a dense [rows][Cp] one (Cp = C rounded up to
 * that unit) with zeros in channels C..Cp-1, and back (the first C channels of each row). Also the shared pieces of the padded
 * problem: the padded channel count, the workspace piece sizes and the problem copy with c = Cp
 * and packed strides. Header-only; each including file gets its own copy. */
#ifndef FDNN_CUDA_CONV_CHPAD_CUH
#define FDNN_CUDA_CONV_CHPAD_CUH
#include <stdint.h>
#include <cuda_runtime.h>
#include "conv_cuda.h"

namespace fdnn_chpad {
namespace { /* internal linkage: every including file has its own kernels */

/* channel count padded to the 16-byte copy unit of esize-byte elements (2 or 4) */
static inline int padded_c(int c, int esize = 2)
{
    const int unit = 16 / esize;
    return (c + unit - 1) / unit * unit;
}

/* bytes of one element of the mma entries' problems: FLOAT (TF32) 4, HALF / BFLOAT16 2 */
static inline int esize(const fdnn_conv_problem *p) { return p->xtype == CUDNN_DATA_FLOAT ? 4 : 2; }

/* the problem's C padded to its copy unit (C itself when it is whole units) */
static inline int padded_c(const fdnn_conv_problem *p) { return padded_c(p->c, esize(p)); }

/* workspace pieces start at multiples of 256 bytes (the kernels need 16) */
static inline size_t round256(size_t b) { return (b + 255) / 256 * 256; }

/* bytes of a dense [rows][Cp] tensor of esize-byte elements, rounded to 256 */
static inline size_t padded_bytes(long long rows, int cp, int esize = 2) { return round256((size_t)rows * (size_t)cp * (size_t)esize); }

/* rows of x (N*D*H*W) and of the KRSC filter (K*T*R*S) */
static inline long long x_rows(const fdnn_conv_problem *p) { return (long long)p->n * p->in[0] * p->in[1] * p->in[2]; }
static inline long long w_rows(const fdnn_conv_problem *p) { return (long long)p->k * p->flt[0] * p->flt[1] * p->flt[2]; }

/* p with c = cp and the strides of densely packed channels-last x [N][D][H][W][Cp] and KRSC
 * filter [K][T][R][S][Cp] (y / dy keep theirs: K is unchanged) */
static inline fdnn_conv_problem padded_problem(const fdnn_conv_problem *p, int cp)
{
    fdnn_conv_problem q = *p;
    q.c = cp;
    q.xs[1] = 1;
    q.xs[4] = cp;
    q.xs[3] = (int64_t)cp * p->in[2];
    q.xs[2] = q.xs[3] * p->in[1];
    q.xs[0] = q.xs[2] * p->in[0];
    q.ws[1] = 1;
    q.ws[4] = cp;
    q.ws[3] = (int64_t)cp * p->flt[2];
    q.ws[2] = q.ws[3] * p->flt[1];
    q.ws[0] = q.ws[2] * p->flt[0];
    return q;
}

/* dst [rows][cp] (16-byte aligned, cp a multiple of the 16-byte unit) = src [rows][c] with zeros
 * in channels c..cp-1; U = the element's bits (unsigned short or unsigned int); one thread per
 * 16-byte chunk of dst, grid-stride */
template <typename U>
__global__ void pad_channels_kernel(const U *__restrict__ src, uint4 *__restrict__ dst, long long rows, int c, int cp)
{
    constexpr int EPC = 16 / (int)sizeof(U);
    const int cpr = cp / EPC; /* chunks per row */
    const long long total = rows * cpr;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        const long long row = i / cpr;
        const int c0 = (int)(i - row * cpr) * EPC;
        const U *s = src + row * c;
        union {
            uint4 q;
            U e[EPC];
        } o;
#pragma unroll
        for (int t = 0; t < EPC; t++) o.e[t] = (c0 + t < c) ? s[c0 + t] : (U)0;
        dst[i] = o.q;
    }
}

/* dst [rows][c] = the first c channels of src [rows][cp]; one thread per dst element, grid-stride */
template <typename U>
__global__ void unpad_channels_kernel(const U *__restrict__ src, U *__restrict__ dst, long long rows, int c, int cp)
{
    const long long total = rows * c;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        const long long row = i / c;
        const int ch = (int)(i - row * c);
        dst[i] = src[row * cp + ch];
    }
}

static inline unsigned grid_for(long long work)
{
    long long b = (work + 255) / 256;
    if (b > 8192) b = 8192;
    if (b < 1) b = 1;
    return (unsigned)b;
}

/* esize: bytes of one element, 2 (HALF / BFLOAT16) or 4 (FLOAT) */
static inline cudaError_t pad_channels(const void *src, void *dst, long long rows, int c, int cp, cudaStream_t st, int esize = 2)
{
    if (rows <= 0) return cudaSuccess;
    const unsigned grid = grid_for(rows * (cp * esize / 16));
    if (esize == 4) pad_channels_kernel<unsigned><<<grid, 256, 0, st>>>((const unsigned *)src, (uint4 *)dst, rows, c, cp);
    else pad_channels_kernel<unsigned short><<<grid, 256, 0, st>>>((const unsigned short *)src, (uint4 *)dst, rows, c, cp);
    return cudaGetLastError();
}

static inline cudaError_t unpad_channels(const void *src, void *dst, long long rows, int c, int cp, cudaStream_t st, int esize = 2)
{
    if (rows <= 0 || c <= 0) return cudaSuccess;
    if (esize == 4) unpad_channels_kernel<unsigned><<<grid_for(rows * c), 256, 0, st>>>((const unsigned *)src, (unsigned *)dst, rows, c, cp);
    else unpad_channels_kernel<unsigned short><<<grid_for(rows * c), 256, 0, st>>>((const unsigned short *)src, (unsigned short *)dst, rows, c, cp);
    return cudaGetLastError();
}

/* ---- W-fold (forward only): when C is not a copy unit and the filter is wider than 1, the S taps
 * of a filter row are folded into the channels: x'[n][d][h][q][j] = x[n][d][h][q*sw - pw + s*dw][c]
 * for j = s*C + c < S*C (zero outside the image and for j >= S*C, up to Cf = S*C rounded up to the
 * copy unit), w'[k][t][r][0][j] = w[k][t][r][S-1-s or s][c] (the S flip of CUDNN_CONVOLUTION is
 * done here; the kernel still flips R), and the problem becomes an S = 1 convolution over x' with
 * W = Q, stride, padding and dilation 1 along W: R*Cf reduction elements instead of R*S*Cp
 * (the ResNet stem, C = 3, 7x7, HALF: 168 instead of 392). */

/* Cf: S*C rounded up to the copy unit */
static inline int folded_c(const fdnn_conv_problem *p) { return padded_c(p->flt[2] * p->c, esize(p)); }

/* fold when C needs padding and folding leaves less reduction than padding */
static inline bool fold_pays(const fdnn_conv_problem *p)
{
    return p->flt[2] > 1 && padded_c(p) != p->c && folded_c(p) < p->flt[2] * padded_c(p);
}

/* the folded problem (packed channels-last x' and filter with c = Cf, S = 1, W = Q) */
static inline fdnn_conv_problem folded_problem(const fdnn_conv_problem *p)
{
    fdnn_conv_problem q = *p;
    q.flt[2] = 1;
    q.in[2] = p->out[2];
    q.stride[2] = 1;
    q.pad[2] = 0;
    q.dil[2] = 1;
    q.c = p->c; /* padded_problem sets c = Cf and packs the strides of q's extents */
    return padded_problem(&q, folded_c(p));
}

/* x' rows (N*D*H*Q) of Cf elements: one thread per 16-byte chunk, grid-stride */
template <typename U>
__global__ void fold_x_kernel(const U *__restrict__ x, uint4 *__restrict__ dst, long long rows, int Q, int W, int C, int S, int sw, int pw,
                              int dw, int cf)
{
    constexpr int EPC = 16 / (int)sizeof(U);
    const int cpr = cf / EPC, sc = S * C;
    const long long total = rows * cpr;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        const long long row = i / cpr;
        const int j0 = (int)(i - row * cpr) * EPC;
        const long long line = row / Q; /* (n, d, h) */
        const int q = (int)(row - line * Q);
        const U *xl = x + line * W * C;
        union {
            uint4 v;
            U e[EPC];
        } o;
#pragma unroll
        for (int t = 0; t < EPC; t++) {
            const int j = j0 + t, s = j / C, c = j - s * C, iw = q * sw - pw + s * dw;
            o.e[t] = (j < sc && iw >= 0 && iw < W) ? xl[(long long)iw * C + c] : (U)0;
        }
        dst[i] = o.v;
    }
}

/* w' rows (K*T*R) of Cf elements: one thread per element, grid-stride */
template <typename U>
__global__ void fold_w_kernel(const U *__restrict__ w, U *__restrict__ dst, long long rows, int C, int S, int flip, int cf)
{
    const int sc = S * C;
    const long long total = rows * cf;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        const long long row = i / cf;
        const int j = (int)(i - row * cf), s = j / C, c = j - s * C;
        dst[i] = j < sc ? w[(row * S + (flip ? S - 1 - s : s)) * C + c] : (U)0;
    }
}

/* x' and w' of folded_problem(p) into xf / wf (16-byte aligned) */
static inline cudaError_t fold(const fdnn_conv_problem *p, const void *x, const void *w, void *xf, void *wf, cudaStream_t st)
{
    const int es = esize(p), cf = folded_c(p);
    const long long xr = (long long)p->n * p->in[0] * p->in[1] * p->out[2], wr = (long long)p->k * p->flt[0] * p->flt[1];
    const int W = p->in[2], Q = p->out[2], C = p->c, S = p->flt[2], flip = !p->cross_correlation;
    const unsigned gx = grid_for(xr * (cf * es / 16)), gw = grid_for(wr * cf);
    if (es == 4) {
        fold_x_kernel<unsigned><<<gx, 256, 0, st>>>((const unsigned *)x, (uint4 *)xf, xr, Q, W, C, S, p->stride[2], p->pad[2], p->dil[2], cf);
        fold_w_kernel<unsigned><<<gw, 256, 0, st>>>((const unsigned *)w, (unsigned *)wf, wr, C, S, flip, cf);
    } else {
        fold_x_kernel<unsigned short><<<gx, 256, 0, st>>>((const unsigned short *)x, (uint4 *)xf, xr, Q, W, C, S, p->stride[2], p->pad[2],
                                                          p->dil[2], cf);
        fold_w_kernel<unsigned short><<<gw, 256, 0, st>>>((const unsigned short *)w, (unsigned short *)wf, wr, C, S, flip, cf);
    }
    return cudaGetLastError();
}

/* The forward entries' padding: the problem they run when C is not a copy unit (folded when
 * fold_pays, else padded), and the workspace bytes of its x and w (x first, then w) */
static inline fdnn_conv_problem fwd_padded_problem(const fdnn_conv_problem *p)
{
    return fold_pays(p) ? folded_problem(p) : padded_problem(p, padded_c(p));
}
static inline size_t fwd_pad_bytes(const fdnn_conv_problem *p)
{
    const fdnn_conv_problem q = fwd_padded_problem(p);
    const int es = esize(p);
    return padded_bytes(x_rows(&q), q.c, es) + padded_bytes(w_rows(&q), q.c, es);
}

/* ... and the copies (or the fold): x and w into a->workspace (16-byte aligned, at least fwd_pad_bytes(p)),
 * *q = fwd_padded_problem(p), *b = a with x and w replaced and the workspace past the copies */
static inline cudaError_t pad_fwd_operands(const fdnn_conv_problem *p, const fdnn_conv_args *a, cudaStream_t st, fdnn_conv_problem *q,
                                           fdnn_conv_args *b)
{
    *q = fwd_padded_problem(p);
    const int es = esize(p);
    const long long xr = x_rows(q), wr = w_rows(q);
    void *xp = a->workspace;
    void *wp = (char *)a->workspace + padded_bytes(xr, q->c, es);
    cudaError_t e;
    if (fold_pays(p)) {
        e = fold(p, a->x, a->w, xp, wp, st);
    } else {
        e = pad_channels(a->x, xp, xr, p->c, q->c, st, es);
        if (e == cudaSuccess) e = pad_channels(a->w, wp, wr, p->c, q->c, st, es);
    }
    const size_t used = fwd_pad_bytes(p);
    *b = *a;
    b->x = xp;
    b->w = wp;
    b->workspace = (char *)a->workspace + used;
    b->workspace_size = a->workspace_size - used;
    return e;
}

} /* anonymous namespace */
} /* namespace fdnn_chpad */
#endif
