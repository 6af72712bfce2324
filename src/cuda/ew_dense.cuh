/* Dense fast path of the CUDA element-wise ops: when every operand is packed in the same
 * dimension order (NCHW, NHWC or any other permutation, identical strides, no broadcast, no
 * NCHW_VECT_C) the logical index does not matter and the op runs over the flat memory span.
 * The kernel is templated on the element type (no per-element type switch), computes in float
 * for FLOAT/HALF/BFLOAT16 and in double for DOUBLE, moves 16 bytes per operand and iteration
 * when every pointer is 16-byte aligned, and uses a grid of about 4 waves of the SMs. */
#ifndef FDNN_CUDA_EW_DENSE_CUH
#define FDNN_CUDA_EW_DENSE_CUH
#ifndef __CUDACC__
#error "ew_dense.cuh is for .cu files only"
#endif
#include <stdint.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" {
#include "../core/fdnn.h"
#include "cuda_backend.h"
#include "cuda_internal.h"
}

namespace fdnn_ewd {

/* Packed in some dimension order: the non-unit dims sorted by stride have strides 1, d0, d0*d1, ... */
static inline int dense_any_order(const struct cudnnTensorStruct *t)
{
    if (!t || t->vect > 1 || t->nb_dims < 1 || t->nb_dims > CUDNN_DIM_MAX) return 0;
    long long s[CUDNN_DIM_MAX], d[CUDNN_DIM_MAX];
    int k = 0;
    for (int i = 0; i < t->nb_dims; i++) {
        if (t->dim[i] < 1) return 0;
        if (t->dim[i] == 1) continue;
        long long st = t->stride[i], dm = t->dim[i];
        int j = k++;
        while (j > 0 && s[j - 1] > st) { s[j] = s[j - 1]; d[j] = d[j - 1]; j--; }
        s[j] = st; d[j] = dm;
    }
    long long want = 1;
    for (int i = 0; i < k; i++) {
        if (s[i] != want) return 0;
        want *= d[i];
    }
    return 1;
}

/* b has a's dims, strides (on non-unit dims) and element type. */
static inline int same_geom(const struct cudnnTensorStruct *a, const struct cudnnTensorStruct *b)
{
    if (!a || !b || a->nb_dims != b->nb_dims || a->dtype != b->dtype || a->vect > 1 || b->vect > 1) return 0;
    for (int i = 0; i < a->nb_dims; i++) {
        if (a->dim[i] != b->dim[i]) return 0;
        if (a->dim[i] != 1 && a->stride[i] != b->stride[i]) return 0;
    }
    return 1;
}

/* About 4 waves of 256-thread blocks (8 resident per SM), fewer when the work is small. */
static inline unsigned dense_grid(cudnnHandle_t h, long long work_items)
{
    long long need = (work_items + 255) / 256;
    long long cap = (long long)fdnn_cuda_sm_count(h) * 8 * 4;
    if (need > cap) need = cap;
    if (need < 1) need = 1;
    return (unsigned)need;
}

/* Unsigned division by a run-time constant d (1 <= d < 2^31; 0 is taken as 1) as a multiply-high and a shift
 * (round-up multiplier method); exact for every n < 2^31. */
struct FDiv {
    unsigned d, m, s;
};
static inline FDiv mk_fdiv(unsigned d)
{
    FDiv f;
    if (d == 0) d = 1; /* an empty extent: never divided by */
    unsigned s = 0;
    while ((1ull << s) < d) s++;
    f.d = d, f.s = s;
    f.m = (unsigned)(((1ull << 32) * ((1ull << s) - d)) / d + 1);
    return f;
}
__device__ __forceinline__ unsigned fdiv(const FDiv &f, unsigned n) { return (__umulhi(n, f.m) + n) >> f.s; }
__device__ __forceinline__ unsigned fmod_(const FDiv &f, unsigned n) { return n - fdiv(f, n) * f.d; }

static inline int aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }
static inline int aligned4(const void *p) { return ((uintptr_t)p & 3) == 0; }

/* Two adjacent elements moved as one load / store (16-bit types: one 32-bit access) */
template <typename T> struct alignas(2 * sizeof(T)) Pair2 {
    T a, b;
};

template <typename T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };

__device__ __forceinline__ float to_a(float v) { return v; }
__device__ __forceinline__ double to_a(double v) { return v; }
__device__ __forceinline__ float to_a(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_a(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_a(typename Acc<T>::type v);
template <> __device__ __forceinline__ float from_a<float>(float v) { return v; }
template <> __device__ __forceinline__ double from_a<double>(double v) { return v; }
template <> __device__ __forceinline__ __half from_a<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_a<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

template <typename T> struct alignas(16) V16 {
    T e[16 / sizeof(T)];
};

/* O[i] = alpha*op(A[i],B[i],C[i]) + beta*O[i] over n elements (beta == 0 never reads O).
 * NIN inputs are read (0..3); OP is a functor class with static r(p, a, b, c). */
template <typename T, int NIN, class OP, typename IDX>
__global__ void __launch_bounds__(256) dense_kernel(IDX n, typename OP::P p, typename Acc<T>::type alpha, typename Acc<T>::type beta,
                                                    T *O, const T *A, const T *B, const T *C, int vec)
{
    typedef typename Acc<T>::type F;
    const IDX tid = (IDX)blockIdx.x * blockDim.x + threadIdx.x, nth = (IDX)gridDim.x * blockDim.x;
    IDX start = 0;
    if (vec) {
        const int L = 16 / sizeof(T);
        const IDX nv = n / L;
        for (IDX i = tid; i < nv; i += nth) {
            V16<T> a, b, c, o;
            if (NIN > 0) a = reinterpret_cast<const V16<T> *>(A)[i];
            if (NIN > 1) b = reinterpret_cast<const V16<T> *>(B)[i];
            if (NIN > 2) c = reinterpret_cast<const V16<T> *>(C)[i];
            if (beta != F(0)) o = reinterpret_cast<const V16<T> *>(O)[i];
#pragma unroll
            for (int k = 0; k < L; k++) {
                F v = alpha * OP::r(p, NIN > 0 ? to_a(a.e[k]) : F(0), NIN > 1 ? to_a(b.e[k]) : F(0), NIN > 2 ? to_a(c.e[k]) : F(0));
                if (beta != F(0)) v += beta * to_a(o.e[k]);
                o.e[k] = from_a<T>(v);
            }
            reinterpret_cast<V16<T> *>(O)[i] = o;
        }
        start = nv * L;
    }
    for (IDX i = start + tid; i < n; i += nth) {
        F v = alpha * OP::r(p, NIN > 0 ? to_a(A[i]) : F(0), NIN > 1 ? to_a(B[i]) : F(0), NIN > 2 ? to_a(C[i]) : F(0));
        if (beta != F(0)) v += beta * to_a(O[i]);
        O[i] = from_a<T>(v);
    }
}

template <typename T, int NIN, class OP>
cudnnStatus_t dense_launch(cudnnHandle_t h, const char *name, long long n, const typename OP::P &p, double alpha, double beta, void *O,
                           const void *A, const void *B, const void *C)
{
    if (n <= 0) return CUDNN_STATUS_SUCCESS;
    typedef typename Acc<T>::type F;
    const int vec = aligned16(O) && (NIN < 1 || aligned16(A)) && (NIN < 2 || aligned16(B)) && (NIN < 3 || aligned16(C));
    const long long items = vec ? (n + (16 / (long long)sizeof(T)) - 1) / (16 / (long long)sizeof(T)) : n;
    const unsigned grid = dense_grid(h, items);
    cudaStream_t s = (cudaStream_t)h->stream;
    if (n < 0x7fffffffLL - 2LL * grid * 256)
        dense_kernel<T, NIN, OP, unsigned><<<grid, 256, 0, s>>>((unsigned)n, p, (F)alpha, (F)beta, (T *)O, (const T *)A, (const T *)B,
                                                                 (const T *)C, vec);
    else
        dense_kernel<T, NIN, OP, long long><<<grid, 256, 0, s>>>(n, p, (F)alpha, (F)beta, (T *)O, (const T *)A, (const T *)B,
                                                                  (const T *)C, vec);
    return fdnn_cuda_check(cudaGetLastError(), name);
}

/* Dispatch on the element type; returns 0 (and launches nothing) for types without a fast path. */
template <int NIN, template <typename> class OPT>
int dense_dispatch(cudnnHandle_t h, const char *name, int dtype, long long n, const typename OPT<float>::P &pf,
                   const typename OPT<double>::P &pd, double alpha, double beta, void *O, const void *A, const void *B, const void *C,
                   cudnnStatus_t *st)
{
    switch (dtype) {
    case CUDNN_DATA_FLOAT: *st = dense_launch<float, NIN, OPT<float> >(h, name, n, pf, alpha, beta, O, A, B, C); return 1;
    case CUDNN_DATA_DOUBLE: *st = dense_launch<double, NIN, OPT<double> >(h, name, n, pd, alpha, beta, O, A, B, C); return 1;
    case CUDNN_DATA_HALF: *st = dense_launch<__half, NIN, OPT<float> >(h, name, n, pf, alpha, beta, O, A, B, C); return 1;
    case CUDNN_DATA_BFLOAT16: *st = dense_launch<__nv_bfloat16, NIN, OPT<float> >(h, name, n, pf, alpha, beta, O, A, B, C); return 1;
    default: return 0;
    }
}

/* Common functors (F = float or double). */
template <typename F> struct OpCopy {
    struct P { int unused; };
    static __device__ __forceinline__ F r(const P &, F a, F, F) { return a; }
};
template <typename F> struct OpValue {
    struct P { F value; };
    static __device__ __forceinline__ F r(const P &p, F, F, F) { return p.value; }
};

} /* namespace fdnn_ewd */
#endif
