/* Device-side helpers shared by the CUDA kernels (C++/CUDA only): typed loads/stores that
 * widen to the accumulation type and round-to-nearest (saturating for INT8) on store, and the
 * normalised convolution geometry passed to kernels by value. */
#ifndef FDNN_CUDA_DEV_H
#define FDNN_CUDA_DEV_H
#ifndef __CUDACC__
#error "cuda_dev.h is for .cu files only"
#endif
#include <stdint.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "conv_cuda.h"

namespace fdnn_dev {

__device__ __forceinline__ float ld(const float *p) { return *p; }
__device__ __forceinline__ double ld(const double *p) { return *p; }
__device__ __forceinline__ float ld(const __half *p) { return __half2float(*p); }
__device__ __forceinline__ float ld(const __nv_bfloat16 *p) { return __bfloat162float(*p); }
__device__ __forceinline__ int ld(const int8_t *p) { return (int)*p; }

/* Store a double result rounded once to the element type. */
__device__ __forceinline__ void st(float *p, double v) { *p = (float)v; }
__device__ __forceinline__ void st(double *p, double v) { *p = v; }
__device__ __forceinline__ void st(__half *p, double v) { *p = __double2half(v); }
__device__ __forceinline__ void st(__nv_bfloat16 *p, double v) { *p = __double2bfloat16(v); }
__device__ __forceinline__ void st(int8_t *p, double v)
{
    double r = rint(v);
    if (r != r) r = 0.0;
    r = r > 127.0 ? 127.0 : (r < -128.0 ? -128.0 : r);
    *p = (int8_t)(int)r;
}

/* out = alpha*acc + beta*out (beta == 0: out is not read), computed in double. */
template <typename TO, typename ACC>
__device__ __forceinline__ void blend(TO *o, ACC acc, double alpha, double beta)
{
    double r = alpha * (double)acc;
    if (beta != 0.0) r += beta * (double)ld(o);
    st(o, r);
}

/* Convolution geometry for the kernels: filter strides are derived from the layout so
 * kernels index w[k][c][t][r][s] through ws[] whatever the storage order. */
struct ConvGeom {
    int n, c, k, g, cg, kg;
    int in[3], out[3], flt[3], pad[3], str[3], dil[3];
    int flip;                 /* 1 for CUDNN_CONVOLUTION */
    long long xs[5], ys[5];   /* N, C, D, H, W strides (elements) */
    long long ws[5];          /* K, C, T, R, S strides of the filter */
};

static inline ConvGeom make_geom(const fdnn_conv_problem *p)
{
    ConvGeom G;
    G.n = p->n; G.c = p->c; G.k = p->k; G.g = p->g;
    G.cg = p->c / p->g; G.kg = p->k / p->g;
    for (int i = 0; i < 3; i++) {
        G.in[i] = p->in[i]; G.out[i] = p->out[i]; G.flt[i] = p->flt[i];
        G.pad[i] = p->pad[i]; G.str[i] = p->stride[i] > 0 ? p->stride[i] : 1; G.dil[i] = p->dil[i] > 0 ? p->dil[i] : 1;
    }
    G.flip = !p->cross_correlation;
    for (int i = 0; i < 5; i++) { G.xs[i] = p->xs[i]; G.ys[i] = p->ys[i]; }
    /* a unit D axis may carry stride 0: harmless since its index is always 0 */
    const long long T = p->flt[0], R = p->flt[1], S = p->flt[2], C = G.cg;
    if (p->w_nhwc) { /* K, T, R, S, C */
        G.ws[1] = 1; G.ws[4] = C; G.ws[3] = C * S; G.ws[2] = C * S * R; G.ws[0] = C * S * R * T;
    } else {         /* K, C, T, R, S */
        G.ws[4] = 1; G.ws[3] = S; G.ws[2] = S * R; G.ws[1] = S * R * T; G.ws[0] = S * R * T * C;
    }
    return G;
}

/* Launch configuration of grid-stride element kernels. */
static inline unsigned grid_for(long long total, int block)
{
    long long b = (total + block - 1) / block;
    if (b > 65535LL * 32) b = 65535LL * 32;
    if (b < 1) b = 1;
    return (unsigned)b;
}

} /* namespace fdnn_dev */
#endif
