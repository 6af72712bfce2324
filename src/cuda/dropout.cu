/* Dropout on CUDA, bit-identical to the CPU path (src/cpu/dropout_cpu.c): the mask of logical
 * element e (N,C,... row-major index of the descriptor's dims, whatever the strides) is
 * fdnn_dropout_keep(seed, 0, e, p) of src/core/philox.h. One Philox-4x32-10 block yields the
 * words of 4 consecutive elements, so each thread handles a group of 4 logical elements and runs
 * the generator once for them (fdnn_dropout_keep's formula applied to the 4 words). Kept values
 * are multiplied by 1/(1-p) in double, as on the CPU, so y matches it bit for bit. The reserve
 * space gets one mask byte per element at its logical index. Packed tensors (strides equal to
 * the packed row-major ones, any type) take a vectorised path; others index through their
 * strides. NHWC-dense tensors take a kernel that walks memory in NHWC order while computing
 * the same logical-order mask (dropout_nhwc_kernel, a 32-channel x 32-w tile per block). */
#include <cuda_runtime.h>
#include <string.h>
#include "cuda_norm.h"
#include "../core/philox.h"
extern "C" {
#include "cuda_backend.h"
#include "cuda_internal.h"
}

using namespace fdnn_nrm;

namespace {

struct TL {
    int nd;
    int dim[CUDNN_DIM_MAX];
    long long st[CUDNN_DIM_MAX];
};

__device__ __forceinline__ long long loff(const TL &L, long long e)
{
    long long o = 0;
#pragma unroll
    for (int d = CUDNN_DIM_MAX - 1; d >= 0; d--) /* constant indices: the layout stays in the parameter bank */
        if (d < L.nd) {
            o += (e % L.dim[d]) * L.st[d];
            e /= L.dim[d];
        }
    return o;
}

/* The 4 keep bits of group g (elements 4g..4g+3), as fdnn_dropout_keep computes each. */
__device__ __forceinline__ unsigned keep4(unsigned long long seed, unsigned long long g, float p)
{
    fdnn_philox_ctr c;
    c.v[0] = (uint32_t)g;
    c.v[1] = (uint32_t)(g >> 32);
    c.v[2] = 0;
    c.v[3] = 0;
    fdnn_philox_ctr r = fdnn_philox4x32(c, (uint32_t)seed, (uint32_t)(seed >> 32));
    unsigned bits = 0;
    for (int k = 0; k < 4; k++) {
        float u = __fmul_rn(__fadd_rn((float)(r.v[k] >> 8), 1.0f), 1.0f / 16777216.0f);
        bits |= (unsigned)(u > p) << k;
    }
    return bits;
}

template <typename T> struct alignas(4 * sizeof(T)) V4 {
    T v[4];
};

template <typename T> __device__ __forceinline__ T scaled(T v, bool keep, double scale)
{
    return conv<T>::from(keep ? to_acc<double>(v) * scale : 0.0);
}

/* Forward (x may equal y: each thread reads its elements before writing them). vec: x and y packed and 4*sizeof(T)-aligned (use V4 loads for full groups). */
template <typename T, bool PACKED>
__global__ void dropout_fwd_kernel(const T *x, TL lx, T *y, TL ly, long long n, float p, double scale,
                                   unsigned long long seed, uint8_t *__restrict__ mask, int vec, int mask4)
{
    long long ng = (n + 3) / 4;
    for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < ng; g += (long long)gridDim.x * blockDim.x) {
        unsigned bits = keep4(seed, (unsigned long long)g, p);
        long long e0 = 4 * g;
        bool full = e0 + 4 <= n;
        if (full && mask4) {
            reinterpret_cast<uint32_t *>(mask)[g] = (bits & 1) | ((bits >> 1 & 1) << 8) | ((bits >> 2 & 1) << 16) | ((bits >> 3 & 1) << 24);
        } else {
            for (int k = 0; k < 4 && e0 + k < n; k++) mask[e0 + k] = (uint8_t)((bits >> k) & 1);
        }
        if (PACKED && full && vec) {
            V4<T> a = reinterpret_cast<const V4<T> *>(x)[g], b;
            for (int k = 0; k < 4; k++) b.v[k] = scaled(a.v[k], (bits >> k) & 1, scale);
            reinterpret_cast<V4<T> *>(y)[g] = b;
        } else {
            for (int k = 0; k < 4 && e0 + k < n; k++) {
                long long e = e0 + k;
                long long ox = PACKED ? e : loff(lx, e), oy = PACKED ? e : loff(ly, e);
                y[oy] = scaled(x[ox], (bits >> k) & 1, scale);
            }
        }
    }
}

template <typename T, bool PACKED>
__global__ void dropout_bwd_kernel(const T *dy, TL ldy, T *dx, TL ldx, long long n, double scale,
                                   const uint8_t *__restrict__ mask, int vec, int mask4)
{
    long long ng = (n + 3) / 4;
    for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < ng; g += (long long)gridDim.x * blockDim.x) {
        long long e0 = 4 * g;
        bool full = e0 + 4 <= n;
        unsigned bits = 0;
        if (full && mask4) {
            uint32_t w = reinterpret_cast<const uint32_t *>(mask)[g];
            bits = (w & 0xff ? 1u : 0u) | (w & 0xff00 ? 2u : 0u) | (w & 0xff0000 ? 4u : 0u) | (w & 0xff000000u ? 8u : 0u);
        } else {
            for (int k = 0; k < 4 && e0 + k < n; k++) bits |= (mask[e0 + k] ? 1u : 0u) << k;
        }
        if (PACKED && full && vec) {
            V4<T> a = reinterpret_cast<const V4<T> *>(dy)[g], b;
            for (int k = 0; k < 4; k++) b.v[k] = scaled(a.v[k], (bits >> k) & 1, scale);
            reinterpret_cast<V4<T> *>(dx)[g] = b;
        } else {
            for (int k = 0; k < 4 && e0 + k < n; k++) {
                long long e = e0 + k;
                long long oa = PACKED ? e : loff(ldy, e), ob = PACKED ? e : loff(ldx, e);
                dx[ob] = scaled(dy[oa], (bits >> k) & 1, scale);
            }
        }
    }
}

void mk(const struct cudnnTensorStruct *t, TL *L)
{
    memset(L, 0, sizeof *L);
    L->nd = t->nb_dims;
    for (int i = 0; i < t->nb_dims; i++) L->dim[i] = t->dim[i], L->st[i] = t->stride[i];
}

int packed(const struct cudnnTensorStruct *t)
{
    long long s = 1;
    for (int i = t->nb_dims - 1; i >= 0; i--) {
        if (t->dim[i] != 1 && t->stride[i] != s) return 0;
        s *= t->dim[i];
    }
    return 1;
}

int grid_for(long long groups)
{
    long long b = (groups + 255) / 256;
    if (b < 1) b = 1;
    return (int)(b < 65536 * 8 ? b : 65536 * 8);
}


/* NHWC-dense tensors (x and y with the same channels-innermost strides, W a multiple of 4): the
 * mask stays defined over the logical NCHW index, so memory order (c fastest) and mask order (w
 * fastest) differ by a transpose. One block per tile of 32 channels x 32 w of one (n, h) row:
 *  phase 1, mask order: thread (c_local = t / 8, wg = t % 8) owns the logical group of 4 elements
 *  (n, c, h, w0 + 4*wg .. +3) -- one Philox block, one 32-bit mask word at logical e0 / 4; the 8
 *  lanes of a channel write 32 contiguous mask bytes (whole sectors). The 4 keep bits go to
 *  shared memory.
 *  phase 2, memory order: thread (c_local = t % 32, wg = t / 32) moves the elements of group
 *  (c, wg), (w0 + 4*wg + j, c) for j = 0..3 at ((n*H + h)*W + w)*C + c, with one shared-memory
 *  read for its 4 keep bits: a warp covers 32 contiguous channels (a whole 128-byte line for
 *  FLOAT). (Each thread taking w_sub + 8*j instead, one bit lookup per element, measured 60% of
 *  the copy bandwidth on the H200.)
 * The earlier mapping (8 channels x 4 w-groups per warp) touched only 32 bytes of every line per
 * access and wrote the mask in 16-byte pieces. Each element is read and written by one thread
 * (x may equal y). 32-bit index math (the caller checks the sizes). */
template <typename T, bool FWD>
__global__ void __launch_bounds__(256) dropout_nhwc_kernel(const T *in, T *out, unsigned C, unsigned H, unsigned W, unsigned CT, unsigned WT,
                                                           float p, double scale, unsigned long long seed, uint8_t *mask)
{
    __shared__ unsigned char kb[32][9]; /* keep bits of (c_local, wg); 9: fewer bank conflicts */
    unsigned b = blockIdx.x;
    const unsigned wt = b % WT;
    b /= WT;
    const unsigned ct = b % CT;
    b /= CT;
    const unsigned h = b % H, n = b / H;
    const unsigned w0 = wt * 32, c0 = ct * 32;
    const unsigned wn = W - w0 < 32 ? W - w0 : 32; /* a multiple of 4 (W and w0 are) */
    const unsigned t = threadIdx.x;
    /* phase 2's loads first, so that they are in flight while phase 1 runs Philox (or loads the
     * mask) */
    const unsigned cl2 = t & 31, wg2 = t >> 5, c2 = c0 + cl2;
    const bool mine = c2 < C && 4 * wg2 < wn; /* wn is a multiple of 4: the group is whole */
    const unsigned base = ((n * H + h) * W + w0 + 4 * wg2) * C + c2;
    T v[4];
    if (mine)
#pragma unroll
        for (int j = 0; j < 4; j++) v[j] = in[base + j * C];
    {
        const unsigned cl = t >> 3, wg = t & 7, c = c0 + cl;
        if (c < C && 4 * wg < wn) {
            const unsigned e0 = ((n * C + c) * H + h) * W + w0 + 4 * wg; /* a multiple of 4 */
            unsigned bits;
            if (FWD) {
                bits = keep4(seed, (unsigned long long)(e0 >> 2), p);
                reinterpret_cast<uint32_t *>(mask)[e0 >> 2] =
                    (bits & 1) | ((bits >> 1 & 1) << 8) | ((bits >> 2 & 1) << 16) | ((bits >> 3 & 1) << 24);
            } else {
                const uint32_t m = reinterpret_cast<const uint32_t *>(mask)[e0 >> 2];
                bits = (m & 0xff ? 1u : 0u) | (m & 0xff00 ? 2u : 0u) | (m & 0xff0000 ? 4u : 0u) | (m & 0xff000000u ? 8u : 0u);
            }
            kb[cl][wg] = (unsigned char)bits;
        }
    }
    __syncthreads();
    if (!mine) return;
    const unsigned bits = kb[cl2][wg2];
#pragma unroll
    for (int j = 0; j < 4; j++) out[base + j * C] = scaled(v[j], (bits >> j) & 1, scale);
}

/* 4-D, NHWC-dense (channel stride 1) with these exact strides on non-unit dims. */
int nhwc_dense(const struct cudnnTensorStruct *t)
{
    if (t->nb_dims != 4 || t->vect > 1) return 0;
    const long long C = t->dim[1], H = t->dim[2], W = t->dim[3];
    const long long want[4] = {H * W * C, 1, W * C, C};
    for (int i = 0; i < 4; i++)
        if (t->dim[i] != 1 && t->stride[i] != want[i]) return 0;
    return 1;
}

int same_strides(const struct cudnnTensorStruct *a, const struct cudnnTensorStruct *b)
{
    if (a->nb_dims != b->nb_dims) return 0;
    for (int i = 0; i < a->nb_dims; i++)
        if (a->dim[i] != b->dim[i] || (a->dim[i] != 1 && a->stride[i] != b->stride[i])) return 0;
    return 1;
}

/* Launches the NHWC kernel when it applies; returns 0 otherwise. */
template <typename T, bool FWD>
int try_nhwc(cudnnHandle_t h, const struct cudnnTensorStruct *xd, const void *x, const struct cudnnTensorStruct *yd, void *y, float p,
             double scale, unsigned long long seed, uint8_t *mask, cudnnStatus_t *st)
{
    if (!nhwc_dense(xd) || !same_strides(xd, yd) || (uintptr_t)mask % 4 != 0) return 0;
    const unsigned long long N = xd->dim[0], C = xd->dim[1], H = xd->dim[2], W = xd->dim[3];
    if (W % 4 != 0 || N * C * H * W >= 0x7fffffffULL) return 0;
    const unsigned long long CT = (C + 31) / 32, WT = (W + 31) / 32, blocks = N * H * CT * WT;
    if (blocks >= 0x7fffffffULL) return 0;
    dropout_nhwc_kernel<T, FWD><<<(unsigned)blocks, 256, 0, fdnn_cuda_stream(h)>>>((const T *)x, (T *)y, (unsigned)C, (unsigned)H, (unsigned)W,
                                                                                  (unsigned)CT, (unsigned)WT, p, scale, seed, mask);
    *st = fdnn_cuda_check(cudaGetLastError(), FWD ? "dropout_nhwc_kernel<fwd>" : "dropout_nhwc_kernel<bwd>");
    return 1;
}

template <typename T>
cudnnStatus_t fwd(cudnnHandle_t h, const struct cudnnTensorStruct *xd, const void *x, const struct cudnnTensorStruct *yd, void *y, float p,
                  unsigned long long seed, uint8_t *mask)
{
    long long n = fdnn_tensor_elems(xd);
    if (n == 0) return CUDNN_STATUS_SUCCESS;
    TL lx, ly;
    mk(xd, &lx), mk(yd, &ly);
    double scale = 1.0 / (1.0 - (double)p);
    cudnnStatus_t st;
    if (try_nhwc<T, true>(h, xd, x, yd, y, p, scale, seed, mask, &st)) return st;
    int pk = packed(xd) && packed(yd);
    size_t al = 4 * sizeof(T);
    int vec = pk && ((uintptr_t)x % al == 0) && ((uintptr_t)y % al == 0);
    int m4 = (uintptr_t)mask % 4 == 0;
    cudaStream_t s = fdnn_cuda_stream(h);
    int g = grid_for((n + 3) / 4);
    if (pk) dropout_fwd_kernel<T, true><<<g, 256, 0, s>>>((const T *)x, lx, (T *)y, ly, n, p, scale, seed, mask, vec, m4);
    else dropout_fwd_kernel<T, false><<<g, 256, 0, s>>>((const T *)x, lx, (T *)y, ly, n, p, scale, seed, mask, vec, m4);
    return fdnn_cuda_check(cudaGetLastError(), "dropout_fwd_kernel");
}

template <typename T>
cudnnStatus_t bwd(cudnnHandle_t h, const struct cudnnTensorStruct *dyd, const void *dy, const struct cudnnTensorStruct *dxd, void *dx, float p,
                  const uint8_t *mask)
{
    long long n = fdnn_tensor_elems(dyd);
    if (n == 0) return CUDNN_STATUS_SUCCESS;
    TL la, lb;
    mk(dyd, &la), mk(dxd, &lb);
    double scale = 1.0 / (1.0 - (double)p);
    cudnnStatus_t st;
    if (try_nhwc<T, false>(h, dyd, dy, dxd, dx, p, scale, 0, (uint8_t *)mask, &st)) return st;
    int pk = packed(dyd) && packed(dxd);
    size_t al = 4 * sizeof(T);
    int vec = pk && ((uintptr_t)dy % al == 0) && ((uintptr_t)dx % al == 0);
    int m4 = (uintptr_t)mask % 4 == 0;
    cudaStream_t s = fdnn_cuda_stream(h);
    int g = grid_for((n + 3) / 4);
    if (pk) dropout_bwd_kernel<T, true><<<g, 256, 0, s>>>((const T *)dy, la, (T *)dx, lb, n, scale, mask, vec, m4);
    else dropout_bwd_kernel<T, false><<<g, 256, 0, s>>>((const T *)dy, la, (T *)dx, lb, n, scale, mask, vec, m4);
    return fdnn_cuda_check(cudaGetLastError(), "dropout_bwd_kernel");
}
} // namespace

extern "C" cudnnStatus_t fdnn_cuda_dropout_fwd(cudnnHandle_t h, const struct cudnnTensorStruct *xd, const void *x,
                                               const struct cudnnTensorStruct *yd, void *y, float p, unsigned long long seed, uint8_t *mask)
{
    switch (xd->dtype) {
    case CUDNN_DATA_FLOAT: return fwd<float>(h, xd, x, yd, y, p, seed, mask);
    case CUDNN_DATA_DOUBLE: return fwd<double>(h, xd, x, yd, y, p, seed, mask);
    case CUDNN_DATA_HALF: return fwd<__half>(h, xd, x, yd, y, p, seed, mask);
    case CUDNN_DATA_BFLOAT16: return fwd<__nv_bfloat16>(h, xd, x, yd, y, p, seed, mask);
    default: return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "data type %s is not supported", fdnn_dtype_name(xd->dtype));
    }
}

extern "C" cudnnStatus_t fdnn_cuda_dropout_bwd(cudnnHandle_t h, const struct cudnnTensorStruct *dyd, const void *dy,
                                               const struct cudnnTensorStruct *dxd, void *dx, float p, const uint8_t *mask)
{
    switch (dyd->dtype) {
    case CUDNN_DATA_FLOAT: return bwd<float>(h, dyd, dy, dxd, dx, p, mask);
    case CUDNN_DATA_DOUBLE: return bwd<double>(h, dyd, dy, dxd, dx, p, mask);
    case CUDNN_DATA_HALF: return bwd<__half>(h, dyd, dy, dxd, dx, p, mask);
    case CUDNN_DATA_BFLOAT16: return bwd<__nv_bfloat16>(h, dyd, dy, dxd, dx, p, mask);
    default: return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "data type %s is not supported", fdnn_dtype_name(dyd->dtype));
    }
}
