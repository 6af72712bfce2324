/* Device helpers of the CUDA tensor ops (src/cuda/ops_*.cu): a by-value strided tensor view
 * (dims, strides, NCHW_VECT_C lanes, element type decided at run time), typed loads that
 * widen to double and stores that round exactly like the CPU backend's fdnn_store (double ->
 * float -> half/bf16; integers round-to-nearest-even and saturate, NaN -> 0), and
 * deterministic block reductions. Per-element type switches are warp-uniform. */
#ifndef FDNN_CUDA_OPS_DEV_CUH
#define FDNN_CUDA_OPS_DEV_CUH
#ifndef __CUDACC__
#error "ops_dev.cuh is for .cu files only"
#endif
#include <stdint.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "cuda_ops.h"
extern "C" {
#include "../core/ops_desc.h"
#include "cuda_backend.h"
}

namespace fdnn_ops {

struct TV {
    int nd, vect, dtype, packed; /* packed: offset == logical linear index */
    int dim[CUDNN_DIM_MAX];
    long long st[CUDNN_DIM_MAX];
};

static inline TV make_tv(const struct cudnnTensorStruct *t)
{
    TV v;
    v.nd = t->nb_dims;
    v.vect = t->vect > 1 ? t->vect : 1;
    v.dtype = (int)t->dtype;
    long long s = 1;
    int packed = v.vect == 1;
    for (int i = CUDNN_DIM_MAX - 1; i >= 0; i--) {
        v.dim[i] = i < v.nd ? t->dim[i] : 1;
        v.st[i] = i < v.nd ? t->stride[i] : 0;
    }
    for (int i = v.nd - 1; i >= 0; i--) {
        if (v.dim[i] != 1 && v.st[i] != s) packed = 0;
        s *= v.dim[i];
    }
    v.packed = packed;
    return v;
}

/* Same view with dims taken from `like` and stride 0 where this tensor has dim 1 (broadcast). */
static inline TV broadcast_tv(const struct cudnnTensorStruct *t, const struct cudnnTensorStruct *like)
{
    TV v = make_tv(t);
    int packed = v.packed;
    for (int i = 0; i < v.nd; i++) {
        if (t->dim[i] == 1 && like->dim[i] != 1) { v.st[i] = 0; packed = 0; }
        v.dim[i] = like->dim[i];
    }
    v.packed = packed;
    return v;
}

/* Scalar offset of multi-index idx. */
__device__ __forceinline__ long long off_idx(const TV &t, const int *idx)
{
    long long o = 0;
    if (t.vect > 1) {
        for (int i = 0; i < t.nd; i++) o += (long long)(i == 1 ? idx[i] / t.vect : idx[i]) * t.st[i];
        return o * t.vect + idx[1] % t.vect;
    }
    for (int i = 0; i < t.nd; i++) o += (long long)idx[i] * t.st[i];
    return o;
}

/* Scalar offset of the logical (row-major over dim) linear index lin. */
__device__ __forceinline__ long long off_lin(const TV &t, long long lin)
{
    if (t.packed) return lin;
    if (t.vect > 1) {
        int idx[CUDNN_DIM_MAX];
        for (int i = t.nd - 1; i >= 0; i--) { idx[i] = (int)(lin % t.dim[i]); lin /= t.dim[i]; }
        return off_idx(t, idx);
    }
    long long o = 0;
    if (lin <= 0xffffffffLL) { /* 32-bit division is several times cheaper */
        unsigned l = (unsigned)lin;
        for (int i = t.nd - 1; i >= 0; i--) {
            const unsigned q = l / (unsigned)t.dim[i];
            o += (long long)(l - q * (unsigned)t.dim[i]) * t.st[i];
            l = q;
        }
        return o;
    }
    for (int i = t.nd - 1; i >= 0; i--) {
        const long long q = lin / t.dim[i];
        o += (lin - q * t.dim[i]) * t.st[i];
        lin = q;
    }
    return o;
}

__device__ __forceinline__ double ldv(const void *p, int dt, long long i)
{
    switch (dt) {
    case CUDNN_DATA_FLOAT: return ((const float *)p)[i];
    case CUDNN_DATA_DOUBLE: return ((const double *)p)[i];
    case CUDNN_DATA_HALF: return __half2float(((const __half *)p)[i]);
    case CUDNN_DATA_BFLOAT16: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_INT8x4:
    case CUDNN_DATA_INT8x32: return ((const int8_t *)p)[i];
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_UINT8x4:
    case CUDNN_DATA_BOOLEAN: return ((const uint8_t *)p)[i];
    case CUDNN_DATA_INT32: return ((const int32_t *)p)[i];
    case CUDNN_DATA_INT64: return (double)((const long long *)p)[i];
    default: return 0.0;
    }
}

__device__ __forceinline__ double sat(double v, double lo, double hi)
{
    if (v != v) return 0.0;
    v = rint(v);
    return v < lo ? lo : (v > hi ? hi : v);
}

__device__ __forceinline__ void stv(void *p, int dt, long long i, double v)
{
    switch (dt) {
    case CUDNN_DATA_FLOAT: ((float *)p)[i] = (float)v; break;
    case CUDNN_DATA_DOUBLE: ((double *)p)[i] = v; break;
    case CUDNN_DATA_HALF: ((__half *)p)[i] = __float2half_rn((float)v); break;
    case CUDNN_DATA_BFLOAT16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn((float)v); break;
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_INT8x4:
    case CUDNN_DATA_INT8x32: ((int8_t *)p)[i] = (int8_t)(int)sat(v, -128.0, 127.0); break;
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_UINT8x4: ((uint8_t *)p)[i] = (uint8_t)(int)sat(v, 0.0, 255.0); break;
    case CUDNN_DATA_BOOLEAN: ((uint8_t *)p)[i] = v != 0.0; break;
    case CUDNN_DATA_INT32: ((int32_t *)p)[i] = (int32_t)(long long)sat(v, -2147483648.0, 2147483647.0); break;
    case CUDNN_DATA_INT64: ((long long *)p)[i] = (long long)rint(v); break;
    default: break;
    }
}

/* out = alpha*r + beta*out; beta == 0 never reads out. */
__device__ __forceinline__ void blendv(void *p, int dt, long long i, double r, double alpha, double beta)
{
    double v = alpha * r;
    if (beta != 0.0) v += beta * ldv(p, dt, i);
    stv(p, dt, i, v);
}

static inline unsigned grid_for(long long total, int block)
{
    long long b = (total + block - 1) / block;
    if (b > 65535LL * 32) b = 65535LL * 32;
    if (b < 1) b = 1;
    return (unsigned)b;
}

/* Deterministic sum over the block (blockDim.x a power of two <= 1024); sh holds blockDim.x
 * doubles. Every thread gets the total. */
__device__ __forceinline__ double block_sum(double v, double *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    double r = sh[0];
    __syncthreads();
    return r;
}

} /* namespace fdnn_ops */
#endif
