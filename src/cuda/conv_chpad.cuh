/* Channel padding for the mma.sync convolutions (conv_fwd_mma.cu, conv_bwd_filter_mma.cu), whose
 * 16-byte cp.async copies need C % 8 == 0: a dense [rows][C] tensor of 2-byte elements (HALF /
 * BFLOAT16) is copied to a dense [rows][Cp] one (Cp = C rounded up to 8) with zeros in channels
 * C..Cp-1, and back (the first C channels of each row). Also the shared pieces of the padded
 * problem: the padded channel count, the workspace piece sizes and the problem copy with c = Cp
 * and packed strides. Header-only; each including file gets its own copy. */
#ifndef FDNN_CUDA_CONV_CHPAD_CUH
#define FDNN_CUDA_CONV_CHPAD_CUH
#include <stdint.h>
#include <cuda_runtime.h>
#include "conv_cuda.h"

namespace fdnn_chpad {
namespace { /* internal linkage: every including file has its own kernels */

/* channel count padded to the 8-element (16-byte) copy unit */
static inline int padded_c(int c) { return (c + 7) / 8 * 8; }

/* workspace pieces start at multiples of 256 bytes (the kernels need 16) */
static inline size_t round256(size_t b) { return (b + 255) / 256 * 256; }

/* bytes of a dense [rows][Cp] 2-byte tensor, rounded to 256 */
static inline size_t padded_bytes(long long rows, int cp) { return round256((size_t)rows * (size_t)cp * 2); }

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

/* dst [rows][cp] (16-byte aligned, cp % 8 == 0) = src [rows][c] with zeros in channels c..cp-1;
 * one thread per 16-byte chunk of dst, grid-stride */
__global__ void pad_channels_kernel(const unsigned short *__restrict__ src, uint4 *__restrict__ dst, long long rows, int c, int cp)
{
    const int cpr = cp / 8; /* chunks per row */
    const long long total = rows * cpr;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        const long long row = i / cpr;
        const int c0 = (int)(i - row * cpr) * 8;
        const unsigned short *s = src + row * c;
        unsigned short v[8];
#pragma unroll
        for (int t = 0; t < 8; t++) v[t] = (c0 + t < c) ? s[c0 + t] : (unsigned short)0;
        uint4 o;
        o.x = (uint32_t)v[0] | ((uint32_t)v[1] << 16);
        o.y = (uint32_t)v[2] | ((uint32_t)v[3] << 16);
        o.z = (uint32_t)v[4] | ((uint32_t)v[5] << 16);
        o.w = (uint32_t)v[6] | ((uint32_t)v[7] << 16);
        dst[i] = o;
    }
}

/* dst [rows][c] = the first c channels of src [rows][cp]; one thread per dst element, grid-stride */
__global__ void unpad_channels_kernel(const unsigned short *__restrict__ src, unsigned short *__restrict__ dst, long long rows, int c, int cp)
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

static inline cudaError_t pad_channels(const void *src, void *dst, long long rows, int c, int cp, cudaStream_t st)
{
    if (rows <= 0) return cudaSuccess;
    pad_channels_kernel<<<grid_for(rows * (cp / 8)), 256, 0, st>>>((const unsigned short *)src, (uint4 *)dst, rows, c, cp);
    return cudaGetLastError();
}

static inline cudaError_t unpad_channels(const void *src, void *dst, long long rows, int c, int cp, cudaStream_t st)
{
    if (rows <= 0 || c <= 0) return cudaSuccess;
    unpad_channels_kernel<<<grid_for(rows * c), 256, 0, st>>>((const unsigned short *)src, (unsigned short *)dst, rows, c, cp);
    return cudaGetLastError();
}

} /* anonymous namespace */
} /* namespace fdnn_chpad */
#endif
