/* Explicit-GEMM convolutions on tensor cores through cuBLAS (loaded lazily, cublas_loader.h),
 * for dense channels-last problems: x and y packed NHWC (NDHWC), KRSC (KTRSC) filter,
 * groups == 1, HALF / BFLOAT16 (CUBLAS_COMPUTE_32F, tensor cores) and FLOAT (TF32 only when the
 * math type is TENSOR_OP*, else pure FP32). Rows of every GEMM are output positions (n, o),
 * so with channels innermost all operands are plain row-major matrices:
 *   forward:     y[NPQ, K]  = col[NPQ, TRSC] * w[K, TRSC]^T      (1x1/s1/p0: col = x, no copy)
 *   bwd data, stride 1 (conv_bwd_data__fwd_gemm_cublas): the forward path above on dy with the
 *                filter transposed to [C, TRS, K] (flipped for cross-correlation) in the workspace
 *                and padding dil*(flt-1) - pad; when the mma implicit GEMM (conv_fwd_mma.cu)
 *                takes that forward view, it runs it instead of im2col + cuBLAS;
 *   bwd data:    col[NPQ, TRSC] = dy[NPQ, K] * w[K, TRSC] (float), then a gathering col2im
 *                (each dx element sums its contributions in a fixed order: no atomics); for
 *                C <= 8 the GEMM writes col transposed and one thread gathers a whole dx pixel
 *                (1x1/s1/p0: dx[NHW, C] = dy * w directly; 1x1/p0 with strides: one GEMM
 *                tmp[NPQ, C] = dy * w (float) into the workspace and a scatter kernel that writes
 *                every row of dx (hit rows alpha * tmp + beta * dx, the others beta * dx); with
 *                less workspace, or tmp above the column-buffer bound, strided-batched GEMMs
 *                write the hit rows in place and a fill kernel the others)
 *   bwd filter:  dw[K, TRSC] = dy^T[K, NPQ] * col[NPQ, TRSC]     (1x1/s1/p0: col = x)
 * im2col is chunked over rows (forward, bwd filter) or images (bwd data) so that the column
 * buffer stays below a bound (256 MiB, or FREEDNN_CUDA_GEMM_WS_LIMIT bytes for tests); the
 * chunked bwd filter accumulates in a float buffer and blends alpha/beta once at the end.
 * Everything runs on the handle's stream; no allocation, no host synchronisation. */
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdarg.h>
#include "conv_cuda.h"
#include "cublas_loader.h"
#include "cuda_internal.h"

namespace {

const size_t DEFAULT_LIMIT = (size_t)256 << 20;

/* bwd data with C up to this many channels takes the transposed column buffer and the
 * pixel-per-thread col2im (col2im_small_c_kernel) */
#define COL2IM_SMALL_C 8

/* FREEDNN_CUDA_GEMM_WS_LIMIT: read on every call, not once per process, because test_conv sets
 * and unsets it between cases of one run; parsed with atoll (a 64-bit byte count, leading
 * whitespace and trailing characters accepted), which fdnn_env_int (int, whole string) cannot
 * replace; a value <= 0 keeps the default. */
size_t ws_limit()
{
    const char *e = fdnn_getenv("FREEDNN_CUDA_GEMM_WS_LIMIT"); /* NULL when unset or empty */
    if (e) {
        long long v = atoll(e);
        if (v > 0) return (size_t)v;
    }
    return DEFAULT_LIMIT;
}

size_t esize(cudnnDataType_t t) { return t == CUDNN_DATA_FLOAT ? 4 : 2; }

size_t align256(size_t v) { return (v + 255) & ~(size_t)255; }

/* Sizes shared by workspace() and run(). */
struct Plan {
    int one;              /* 1x1, stride 1, pad 0: no im2col */
    int one_strided;      /* bwd data, 1x1, pad 0, some stride > 1: GEMM + scatter (total > 0) or strided-batched GEMMs */
    long long npq, rsc, pq;
    long long rows_chunk; /* forward / bwd filter: GEMM rows per chunk */
    long long imgs_chunk; /* bwd data: images per chunk */
    long long nchunks;
    size_t col_bytes;     /* column buffer at workspace offset 0 */
    size_t acc_off;       /* bwd filter, chunked: float accumulator offset */
    size_t total;
};

Plan make_plan(const fdnn_conv_problem *p)
{
    Plan P = {};
    P.one = fdnn_cuda_conv_gemm_in_place(p);
    P.pq = (long long)p->out[0] * p->out[1] * p->out[2];
    P.npq = P.pq * p->n;
    P.rsc = (long long)p->flt[0] * p->flt[1] * p->flt[2] * p->c;
    P.nchunks = 1;
    if (P.one) return P;
    if (p->dir == FDNN_CONV_BWD_DATA) {
        P.one_strided = 1;
        for (int i = 0; i < 3; i++)
            if (p->flt[i] != 1 || p->pad[i] != 0) P.one_strided = 0;
        if (P.one_strided) {
            /* the GEMM + scatter form: tmp of NPQ*C floats, dx rows indexed in 32 bits */
            const size_t tmp = (size_t)P.npq * (size_t)p->c * sizeof(float);
            const long long xrows = (long long)p->n * p->in[0] * p->in[1] * p->in[2];
            if (tmp <= ws_limit() && xrows < (1LL << 31)) P.total = align256(tmp);
            return P;
        }
    }
    const size_t lim = ws_limit();
    if (p->dir == FDNN_CONV_BWD_DATA) {
        size_t per_img = (size_t)P.pq * (size_t)P.rsc * sizeof(float);
        long long k = per_img ? (long long)(lim / per_img) : p->n;
        if (k < 1) k = 1;
        if (k > p->n) k = p->n;
        P.imgs_chunk = k;
        P.nchunks = (p->n + k - 1) / k;
        P.col_bytes = (size_t)k * per_img;
        P.total = P.col_bytes;
        return P;
    }
    size_t per_row = (size_t)P.rsc * esize(p->xtype);
    long long r = (long long)(lim / per_row);
    if (r > 256) r -= r % 256; /* keeps the row offsets of y / dy well aligned */
    if (r < 1) r = 1;
    if (r > P.npq) r = P.npq;
    P.rows_chunk = r;
    P.nchunks = (P.npq + r - 1) / r;
    P.col_bytes = (size_t)r * per_row;
    P.total = P.col_bytes;
    if (p->dir == FDNN_CONV_BWD_FILTER && P.nchunks > 1) {
        P.acc_off = align256(P.col_bytes);
        P.total = P.acc_off + (size_t)p->k * (size_t)P.rsc * sizeof(float);
    }
    return P;
}



/* ------------------------------------------------------------------ kernels */

struct Geo {
    int n, Cu;           /* channels in copy units (im2col) or elements (col2im) */
    int D, H, W;         /* input extents */
    int O0, O1, O2;      /* output extents */
    int T, R, S;
    int pad0, pad1, pad2, st0, st1, st2, dl0, dl1, dl2;
    int flip;
    long long rscu;      /* columns of col in units */
};

/* col[row - row0][tap*Cu + c] = x[n, in(o, tap), c] (zero outside); block = bx threads over the
 * columns of by rows. U is the copy unit (1..16 bytes of consecutive channels). */
template <typename U>
__global__ void im2col_kernel(const U *__restrict__ x, U *__restrict__ col, Geo g, long long row0, long long row_end)
{
    const long long row = row0 + (long long)blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= row_end) return;
    /* rows (N*P) and columns (T*R*S*C) are below 2^31 (applicable()): 32-bit index math */
    const int pq = g.O0 * g.O1 * g.O2;
    const int n = (int)row / pq;
    int rem = (int)row - n * pq;
    const int o2 = rem % g.O2;
    rem /= g.O2;
    const int o1 = rem % g.O1, o0 = rem / g.O1;
    const int b0 = o0 * g.st0 - g.pad0, b1 = o1 * g.st1 - g.pad1, b2 = o2 * g.st2 - g.pad2;
    U *dst = col + (row - row0) * g.rscu;
    const U *img = x + (long long)n * ((long long)g.D * g.H * g.W * g.Cu);
    const int rscu = (int)g.rscu;
    for (int j = threadIdx.x; j < rscu; j += blockDim.x) {
        int tap = j / g.Cu;
        const int c = j - tap * g.Cu;
        const int s = tap % g.S;
        tap /= g.S;
        const int r = tap % g.R, t = tap / g.R;
        const int i0 = b0 + (g.flip ? g.T - 1 - t : t) * g.dl0;
        const int i1 = b1 + (g.flip ? g.R - 1 - r : r) * g.dl1;
        const int i2 = b2 + (g.flip ? g.S - 1 - s : s) * g.dl2;
        U v = U();
        if ((unsigned)i0 < (unsigned)g.D && (unsigned)i1 < (unsigned)g.H && (unsigned)i2 < (unsigned)g.W)
            v = img[(((long long)i0 * g.H + i1) * g.W + i2) * g.Cu + c];
        dst[j] = v;
    }
}

__device__ __forceinline__ float tof(float v) { return v; }
__device__ __forceinline__ float tof(__half v) { return __half2float(v); }
__device__ __forceinline__ float tof(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void fromf(float *p, float v) { *p = v; }
__device__ __forceinline__ void fromf(__half *p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void fromf(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }

/* Output positions o of one dimension that input index i receives from: o*st + f*dl - pad = i
 * for a filter index f in [0, F), i.e. o in [ceil((i + pad - (F-1)*dl) / st), floor((i + pad) /
 * st)] within [0, O), with (i + pad - o*st) a multiple of dl (then f = that / dl). The col2im
 * kernels walk these instead of testing every tap for divisibility by the stride. */
__device__ __forceinline__ int floor_div(int a, int b) { return a >= 0 ? a / b : -((b - 1 - a) / b); }
struct TapRange {
    int lo, hi;
};
__device__ __forceinline__ TapRange tap_range(int i, int pad, int F, int dl, int st, int O)
{
    TapRange t;
    t.lo = -floor_div(-(i + pad - (F - 1) * dl), st);
    if (t.lo < 0) t.lo = 0;
    t.hi = floor_div(i + pad, st);
    if (t.hi > O - 1) t.hi = O - 1;
    return t;
}
/* the filter index of output position o along one dimension (o from tap_range), or -1 when the
 * offset is not a multiple of the dilation */
__device__ __forceinline__ int tap_of(int i, int pad, int o, int st, int dl, int F, int flip)
{
    const int nf = i + pad - o * st;
    if (nf % dl) return -1;
    return flip ? F - 1 - nf / dl : nf / dl;
}
/* a dx pixel index of the chunk (N*D*H*W < 2^31, applicable()) as (image, i0, i1, i2) */
struct Pixel {
    int nl, i0, i1, i2;
};
__device__ __forceinline__ Pixel pixel_of(int pos, const Geo &g)
{
    Pixel q;
    q.i2 = pos % g.W;
    pos /= g.W;
    q.i1 = pos % g.H;
    pos /= g.H;
    q.i0 = pos % g.D;
    q.nl = pos / g.D;
    return q;
}

/* f(tap, orow) for every (filter tap, output position of the image) pair that reaches pixel q, taps
 * as (t*R + r)*S + s, orow as (o0*O1 + o1)*O2 + o2; output positions ascending */
template <typename F>
__device__ __forceinline__ void for_each_tap(const Pixel &q, const Geo &g, F f)
{
    const TapRange r0 = tap_range(q.i0, g.pad0, g.T, g.dl0, g.st0, g.O0);
    const TapRange r1 = tap_range(q.i1, g.pad1, g.R, g.dl1, g.st1, g.O1);
    const TapRange r2 = tap_range(q.i2, g.pad2, g.S, g.dl2, g.st2, g.O2);
    for (int o0 = r0.lo; o0 <= r0.hi; o0++) {
        const int t = tap_of(q.i0, g.pad0, o0, g.st0, g.dl0, g.T, g.flip);
        if (t < 0) continue;
        for (int o1 = r1.lo; o1 <= r1.hi; o1++) {
            const int r = tap_of(q.i1, g.pad1, o1, g.st1, g.dl1, g.R, g.flip);
            if (r < 0) continue;
            const long long row01 = ((long long)o0 * g.O1 + o1) * g.O2;
            for (int o2 = r2.lo; o2 <= r2.hi; o2++) {
                const int s = tap_of(q.i2, g.pad2, o2, g.st2, g.dl2, g.S, g.flip);
                if (s >= 0) f((t * g.R + r) * g.S + s, row01 + o2);
            }
        }
    }
}

/* dx[n0 + nl, i, c] = alpha * sum over taps of col[nl, o(i, tap), tap, c] + beta * dx; one thread
 * per dx element of the chunk, fixed tap order per element. g.Cu is C in elements here. */
template <typename T>
__global__ void col2im_kernel(const float *__restrict__ col, T *dx, Geo g, long long n0, long long total, float alpha, float beta)
{
    const long long rsc = g.rscu;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
        const long long pos64 = e / g.Cu;
        const int c = (int)(e - pos64 * g.Cu);
        const Pixel q = pixel_of((int)pos64, g);
        const float *base = col + (long long)q.nl * ((long long)g.O0 * g.O1 * g.O2) * rsc + c;
        float acc = 0.f;
        for_each_tap(q, g, [&](int tap, long long orow) { acc += base[orow * rsc + (long long)tap * g.Cu]; });
        T *d = dx + n0 * ((long long)g.D * g.H * g.W * g.Cu) + e;
        float v = alpha * acc;
        if (beta != 0.f) v += beta * tof(*d);
        fromf(d, v);
    }
}

/* The same gather for C <= COL2IM_SMALL_C with the column buffer transposed, colT[tap*C + c][row]
 * (rows = the chunk's output positions, contiguous): one thread per dx pixel keeps its C sums in
 * registers, and for each tap the threads of a warp (consecutive pixels along W) read
 * consecutive rows, where the [row][tap*C + c] layout above strides them by TRSC floats. The
 * ResNet stem's backward data (C = 3, 7x7, stride 2) was 0.76 ms in fp16 through the kernel above
 * against NVIDIA's 0.49. */
template <typename T>
__global__ void col2im_small_c_kernel(const float *__restrict__ colT, T *dx, Geo g, long long n0, long long pixels, long long rows,
                                      float alpha, float beta)
{
    const int C = g.Cu;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < pixels; e += (long long)gridDim.x * blockDim.x) {
        const Pixel q = pixel_of((int)e, g);
        const long long rbase = (long long)q.nl * ((long long)g.O0 * g.O1 * g.O2);
        float acc[COL2IM_SMALL_C];
#pragma unroll
        for (int c = 0; c < COL2IM_SMALL_C; c++) acc[c] = 0.f;
        for_each_tap(q, g, [&](int tap, long long orow) {
            const float *src = colT + (long long)tap * C * rows + rbase + orow;
#pragma unroll
            for (int c = 0; c < COL2IM_SMALL_C; c++)
                if (c < C) acc[c] += src[(long long)c * rows];
        });
        T *d = dx + (n0 * ((long long)g.D * g.H * g.W) + e) * C;
#pragma unroll
        for (int c = 0; c < COL2IM_SMALL_C; c++)
            if (c < C) {
                float v = alpha * acc[c];
                if (beta != 0.f) v += beta * tof(d[c]);
                fromf(d + c, v);
            }
    }
}

/* Strided 1x1 backward data: every dx row (n, i0, i1, i2) that no output position hits
 * (some i not a multiple of its stride, or i / stride beyond the output) gets beta * dx (0 when
 * beta == 0, dx not read); the hit rows are left to the GEMMs. One thread per unit U of a row
 * (Cu units per row). */
template <typename U, typename T>
__global__ void fill_unhit_kernel(U *dx, Geo g, long long rows, float beta)
{
    const long long total = rows * g.Cu;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
        long long row = e / g.Cu;
        const int i2 = (int)(row % g.W);
        row /= g.W;
        const int i1 = (int)(row % g.H);
        row /= g.H;
        const int i0 = (int)(row % g.D);
        const bool hit = i0 % g.st0 == 0 && i0 / g.st0 < g.O0 && i1 % g.st1 == 0 && i1 / g.st1 < g.O1 && i2 % g.st2 == 0 &&
                         i2 / g.st2 < g.O2;
        if (hit) continue;
        if (beta == 0.f) {
            dx[e] = U();
        } else {
            T *t = (T *)(dx + e); /* beta != 0 launches with U == T */
            fromf(t, beta * tof(*t));
        }
    }
}

/* Strided 1x1 backward data, scatter: dx row `row` (pixel (n, i0, i1, i2)) = alpha * tmp[the
 * output row that hits it] + beta * dx, or beta * dx when no output hits it (beta == 0: dx not
 * read). One warp per row (grid-stride over rows by warps), its lanes along the channels, V
 * channels per lane and step (V = 4 when C % 4 == 0 and dx is 16-byte aligned: float4 tmp reads,
 * 4-element dx accesses; else 1), so a row is decoded once per warp with 32-bit divisions (rows
 * below 2^31, make_plan) and the decode is spread over C / 32 elements per lane. */
template <typename T, int V>
__global__ void scatter_1x1_kernel(const float *__restrict__ tmp, T *dx, Geo g, int rows, int C, float alpha, float beta)
{
    const int lane = threadIdx.x & 31;
    const int warps = (int)(gridDim.x * (blockDim.x >> 5));
    for (int row = (int)(blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)); row < rows; row += warps) {
        int r = row;
        const int i2 = r % g.W;
        r /= g.W;
        const int i1 = r % g.H;
        r /= g.H;
        const int i0 = r % g.D;
        const int n = r / g.D;
        const bool hit = i0 % g.st0 == 0 && i0 / g.st0 < g.O0 && i1 % g.st1 == 0 && i1 / g.st1 < g.O1 && i2 % g.st2 == 0 &&
                         i2 / g.st2 < g.O2;
        const long long orow = hit ? ((long long)(n * g.O0 + i0 / g.st0) * g.O1 + i1 / g.st1) * g.O2 + i2 / g.st2 : 0;
        const float *src = tmp + orow * C;
        T *d = dx + (long long)row * C;
        for (int c = lane * V; c < C; c += 32 * V) {
            float v[V];
            if constexpr (V == 4) {
                const float4 q = hit ? *(const float4 *)(src + c) : make_float4(0.f, 0.f, 0.f, 0.f);
                v[0] = alpha * q.x;
                v[1] = alpha * q.y;
                v[2] = alpha * q.z;
                v[3] = alpha * q.w;
            } else {
                v[0] = hit ? alpha * src[c] : 0.f;
            }
            if (beta != 0.f) {
#pragma unroll
                for (int u = 0; u < V; u++) v[u] += beta * tof(d[c + u]);
            }
#pragma unroll
            for (int u = 0; u < V; u++) fromf(d + c + u, v[u]);
        }
    }
}

/* out[i] = alpha * acc[i] + beta * out[i] (beta == 0: out not read) */
template <typename T>
__global__ void blend_kernel(const float *__restrict__ acc, T *out, long long n, float alpha, float beta)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float v = alpha * acc[i];
        if (beta != 0.f) v += beta * tof(out[i]);
        fromf(out + i, v);
    }
}

unsigned blocks_for(long long total, int bs)
{
    long long b = (total + bs - 1) / bs;
    if (b > (1LL << 20)) b = 1LL << 20; /* grid-stride loops cover the rest */
    return (unsigned)(b < 1 ? 1 : b);
}

Geo make_geo(const fdnn_conv_problem *p, int cu, long long rscu)
{
    Geo g;
    g.n = p->n;
    g.Cu = cu;
    g.D = p->in[0]; g.H = p->in[1]; g.W = p->in[2];
    g.O0 = p->out[0]; g.O1 = p->out[1]; g.O2 = p->out[2];
    g.T = p->flt[0]; g.R = p->flt[1]; g.S = p->flt[2];
    g.pad0 = p->pad[0]; g.pad1 = p->pad[1]; g.pad2 = p->pad[2];
    g.st0 = p->stride[0]; g.st1 = p->stride[1]; g.st2 = p->stride[2];
    g.dl0 = p->dil[0]; g.dl1 = p->dil[1]; g.dl2 = p->dil[2];
    g.flip = !p->cross_correlation;
    g.rscu = rscu;
    return g;
}

template <typename U>
void launch_im2col_u(const fdnn_conv_problem *p, const void *x, void *col, long long row0, long long rows, cudaStream_t st)
{
    const int es = (int)esize(p->xtype);
    const int cu = (int)((long long)p->c * es / (long long)sizeof(U));
    const long long rscu = (long long)p->flt[0] * p->flt[1] * p->flt[2] * cu;
    int bx = 32;
    while (bx < rscu && bx < 256) bx *= 2;
    const int by = 256 / bx;
    dim3 block(bx, by);
    long long nb = (rows + by - 1) / by;
    im2col_kernel<U><<<(unsigned)nb, block, 0, st>>>((const U *)x, (U *)col, make_geo(p, cu, rscu), row0, row0 + rows);
}

/* Picks the widest copy unit the channel count and both pointers allow. */
void launch_im2col(const fdnn_conv_problem *p, const void *x, void *col, long long row0, long long rows, cudaStream_t st)
{
    const size_t cb = (size_t)p->c * esize(p->xtype);
    const uintptr_t a = (uintptr_t)x | (uintptr_t)col;
    if (cb % 16 == 0 && a % 16 == 0) launch_im2col_u<uint4>(p, x, col, row0, rows, st);
    else if (cb % 8 == 0 && a % 8 == 0) launch_im2col_u<uint2>(p, x, col, row0, rows, st);
    else if (cb % 4 == 0 && a % 4 == 0) launch_im2col_u<unsigned>(p, x, col, row0, rows, st);
    else launch_im2col_u<unsigned short>(p, x, col, row0, rows, st);
}

cudaDataType cuda_type(cudnnDataType_t t)
{
    return t == CUDNN_DATA_HALF ? CUDA_R_16F : t == CUDNN_DATA_BFLOAT16 ? CUDA_R_16BF : CUDA_R_32F;
}

cublasComputeType_t compute_type(const fdnn_conv_problem *p)
{
    if (p->xtype == CUDNN_DATA_FLOAT &&
        (p->math_type == CUDNN_TENSOR_OP_MATH || p->math_type == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
        return CUBLAS_COMPUTE_32F_FAST_TF32;
    return CUBLAS_COMPUTE_32F;
}

/* column-major C[m x n] = alpha op(A) op(B) + beta C */
struct Gemm {
    const fdnn_cublas_api *cb;
    cublasHandle_t ch;
    cublasComputeType_t ct;
    cudaDataType dt;
    cudnnStatus_t operator()(cublasOperation_t ta, cublasOperation_t tb, long long m, long long n, long long k, float alpha, const void *A,
                             long long lda, const void *B, long long ldb, float beta, void *C, cudaDataType ctype, long long ldc,
                             const char *what) const
    {
        if (m <= 0 || n <= 0) return CUDNN_STATUS_SUCCESS;
        cublasStatus_t s = cb->gemm_ex(ch, ta, tb, (int)m, (int)n, (int)k, &alpha, A, dt, (int)lda, B, dt, (int)ldb, &beta, C, ctype,
                                       (int)ldc, ct, CUBLAS_GEMM_DEFAULT);
        if (s == CUBLAS_STATUS_SUCCESS) return CUDNN_STATUS_SUCCESS;
        return FDNN_FAIL(CUDNN_STATUS_EXECUTION_FAILED, "%s: cublasGemmEx failed with cuBLAS status %d (m=%lld n=%lld k=%lld)", what, (int)s,
                         m, n, k);
    }
};

cudnnStatus_t make_gemm(cudnnHandle_t h, const fdnn_conv_problem *p, Gemm *G)
{
    FDNN_CHECK(fdnn_cublas_handle(h, &G->cb, &G->ch));
    G->ct = compute_type(p);
    G->dt = cuda_type(p->xtype);
    return CUDNN_STATUS_SUCCESS;
}

template <typename T>
cudnnStatus_t launch_col2im(const fdnn_conv_problem *p, const float *col, void *dx, long long n0, long long nimg, float alpha, float beta,
                            cudaStream_t st)
{
    const long long total = nimg * p->in[0] * p->in[1] * p->in[2] * (long long)p->c;
    const long long rsc = (long long)p->flt[0] * p->flt[1] * p->flt[2] * p->c;
    col2im_kernel<T><<<blocks_for(total, 256), 256, 0, st>>>(col, (T *)dx, make_geo(p, p->c, rsc), n0, total, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "conv_bwd_data__cublas_col2im: col2im kernel");
}

template <typename T>
cudnnStatus_t launch_col2im_small_c(const fdnn_conv_problem *p, const float *colT, void *dx, long long n0, long long nimg, long long rows,
                                    float alpha, float beta, cudaStream_t st)
{
    const long long pixels = nimg * p->in[0] * p->in[1] * p->in[2];
    const long long rsc = (long long)p->flt[0] * p->flt[1] * p->flt[2] * p->c;
    col2im_small_c_kernel<T><<<blocks_for(pixels, 256), 256, 0, st>>>(colT, (T *)dx, make_geo(p, p->c, rsc), n0, pixels, rows, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "conv_bwd_data__cublas_col2im: col2im kernel (small C)");
}

template <typename T>
cudnnStatus_t launch_blend(const float *acc, void *out, long long n, float alpha, float beta, cudaStream_t st)
{
    blend_kernel<T><<<blocks_for(n, 256), 256, 0, st>>>(acc, (T *)out, n, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "conv_bwd_filter__im2col_cublas: alpha/beta blend kernel");
}

/* The forward im2col + GEMM (also run by the backward-data-as-forward entry on its derived
 * problem); what names the entry in error messages. Each chunk of rows writes its own rows of
 * out with the API's alpha/beta, so they apply exactly once per element. */
cudnnStatus_t run_fwd(const Gemm &G, const fdnn_conv_problem *p, const fdnn_conv_args *a, const Plan &P, cudaStream_t st,
                      const char *what)
{
    const float alpha = (float)a->alpha, beta = (float)a->beta;
    const long long K = p->k;
    if (P.one) /* y^T[K, NPQ] = w[C, K]^T * x^T[C, NPQ] (column-major views) */
        return G(CUBLAS_OP_T, CUBLAS_OP_N, K, P.npq, P.rsc, alpha, a->w, P.rsc, a->x, P.rsc, beta, a->out, G.dt, K, what);
    const size_t es = esize(p->ytype);
    for (long long r0 = 0; r0 < P.npq; r0 += P.rows_chunk) {
        const long long rows = P.npq - r0 < P.rows_chunk ? P.npq - r0 : P.rows_chunk;
        launch_im2col(p, a->x, a->workspace, r0, rows, st);
        FDNN_CHECK(fdnn_cuda_check(cudaGetLastError(), what));
        FDNN_CHECK(G(CUBLAS_OP_T, CUBLAS_OP_N, K, rows, P.rsc, alpha, a->w, P.rsc, a->workspace, P.rsc, beta,
                     (char *)a->out + (size_t)r0 * (size_t)K * es, G.dt, K, what));
    }
    return CUDNN_STATUS_SUCCESS;
}

/* The tall GEMMs of backward data (rows: every input position, k: the output channels) often
 * have output tiles to spare, yet with a workspace cuBLAS splits k for some of them (TF32,
 * k >= 256 on the H200): a memset, the GEMM and a reduction, so a replayed call's graph has four
 * nodes instead of one and its host time goes above 5 us. Where the m x n output holds at least
 * two waves of 128 x 128 tiles, splitting k buys nothing, and cuBLAS without a workspace runs one
 * kernel (H200, TF32, dx of 1x1 64->256 at 56x56 N=32: 0.0456 -> 0.0376 ms, one node instead of
 * four; 1x1 2048->512 at 7x7, 208 tiles, keeps its split: 0.0219 ms with it, 0.0266 without).
 * fdnn_cublas_handle's cublasSetStream gives the next call the default workspace back. */
void gemm_without_workspace_if_wide(cudnnHandle_t h, const Gemm &G, long long m, long long n)
{
    const long long sms = fdnn_cuda_sm_count(h);
    if (((m + 127) / 128) * ((n + 127) / 128) >= 2 * sms && G.cb->set_workspace) (void)G.cb->set_workspace(G.ch, NULL, 0);
}

/* 1x1, stride 1, pad 0: dx^T[C, NHW] = w^T[C, K] * dy^T[K, NHW], no copy */
cudnnStatus_t run_bwd_data_1x1(cudnnHandle_t h, const Gemm &G, const fdnn_conv_problem *p, const fdnn_conv_args *a, const Plan &P,
                               const char *what)
{
    const long long K = p->k;
    gemm_without_workspace_if_wide(h, G, P.rsc, P.npq);
    return G(CUBLAS_OP_N, CUBLAS_OP_N, P.rsc, P.npq, K, (float)a->alpha, a->w, P.rsc, a->y, K, (float)a->beta, a->out, G.dt, P.rsc, what);
}

template <typename T>
cudnnStatus_t launch_fill_unhit(const fdnn_conv_problem *p, void *dx, float beta, cudaStream_t st)
{
    const long long rows = (long long)p->n * p->in[0] * p->in[1] * p->in[2];
    const size_t rb = (size_t)p->c * sizeof(T);
    if (beta == 0.f && rb % 16 == 0 && (uintptr_t)dx % 16 == 0) {
        const long long total = rows * (long long)(rb / 16);
        fill_unhit_kernel<uint4, T><<<blocks_for(total, 256), 256, 0, st>>>((uint4 *)dx, make_geo(p, (int)(rb / 16), 0), rows, beta);
    } else {
        fill_unhit_kernel<T, T><<<blocks_for(rows * p->c, 256), 256, 0, st>>>((T *)dx, make_geo(p, p->c, 0), rows, beta);
    }
    return fdnn_cuda_check(cudaGetLastError(), "conv_bwd_data__cublas_col2im (strided 1x1): fill kernel");
}

template <typename T>
cudnnStatus_t launch_scatter_1x1(const fdnn_conv_problem *p, const float *tmp, void *dx, float alpha, float beta, cudaStream_t st)
{
    const long long rows = (long long)p->n * p->in[0] * p->in[1] * p->in[2]; /* < 2^31 (make_plan) */
    long long blocks = (rows + 7) / 8;                                         /* 8 warps per block */
    if (blocks > 132 * 64) blocks = 132 * 64;
    if (blocks < 1) blocks = 1;
    const Geo g = make_geo(p, p->c, 0);
    if (p->c % 4 == 0 && ((uintptr_t)dx & 15) == 0)
        scatter_1x1_kernel<T, 4><<<(unsigned)blocks, 256, 0, st>>>(tmp, (T *)dx, g, (int)rows, p->c, alpha, beta);
    else
        scatter_1x1_kernel<T, 1><<<(unsigned)blocks, 256, 0, st>>>(tmp, (T *)dx, g, (int)rows, p->c, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "conv_bwd_data__cublas_col2im (strided 1x1): scatter kernel");
}

/* 1x1, pad 0, strides s: dx[n, o*s, c] = alpha * sum_k dy[n, o, k] w[k, c] + beta * dx, the
 * other rows beta * dx. With the plan's workspace (P.total, 16-byte aligned): one GEMM
 * tmp^T[C, NPQ] = w^T[C, K] * dy^T[K, NPQ] in float, then scatter_1x1_kernel over every row of
 * dx (one rounding). Otherwise, in place: for each (n, o0, o1) the O2 outputs of a line write dx
 * rows s2*C apart, one GEMM of a strided batch: column-major dx^T[C, O2] (ldc s2*C) = w^T[C, K] *
 * dy^T[K, O2]. Consecutive lines are a uniform s1*W*C apart when H == s1*O1 and O0 == D (2-D
 * problems, or a depth stride of 1), so then one call covers everything; otherwise one call per
 * (n, o0); a fill kernel writes the other rows. */
cudnnStatus_t run_bwd_data_1x1_strided(cudnnHandle_t h, const Gemm &G, const fdnn_conv_problem *p, const fdnn_conv_args *a, const Plan &P,
                                       cudaStream_t st)
{
    static const char what[] = "conv_bwd_data__cublas_col2im (strided 1x1)";
    const float alpha = (float)a->alpha, beta = (float)a->beta;
    gemm_without_workspace_if_wide(h, G, p->c, P.npq);
    if (P.total && a->workspace && a->workspace_size >= P.total && ((uintptr_t)a->workspace & 15) == 0) {
        FDNN_CHECK(G(CUBLAS_OP_N, CUBLAS_OP_N, p->c, P.npq, p->k, 1.0f, a->w, p->c, a->y, p->k, 0.0f, a->workspace, CUDA_R_32F, p->c, what));
        const float *tmp = (const float *)a->workspace;
        if (p->xtype == CUDNN_DATA_HALF) return launch_scatter_1x1<__half>(p, tmp, a->out, alpha, beta, st);
        if (p->xtype == CUDNN_DATA_BFLOAT16) return launch_scatter_1x1<__nv_bfloat16>(p, tmp, a->out, alpha, beta, st);
        return launch_scatter_1x1<float>(p, tmp, a->out, alpha, beta, st);
    }
    cudnnStatus_t s;
    if (p->xtype == CUDNN_DATA_HALF) s = launch_fill_unhit<__half>(p, a->out, beta, st);
    else if (p->xtype == CUDNN_DATA_BFLOAT16) s = launch_fill_unhit<__nv_bfloat16>(p, a->out, beta, st);
    else s = launch_fill_unhit<float>(p, a->out, beta, st);
    FDNN_CHECK(s);
    const long long C = p->c, K = p->k, es = (long long)esize(p->xtype);
    const long long W = p->in[2], H = p->in[1], D = p->in[0];
    const long long O0 = p->out[0], O1 = p->out[1], O2 = p->out[2];
    const long long ldc = p->stride[2] * C, line = p->stride[1] * W * C; /* elements */
    const int uniform = H == p->stride[1] * O1 && O0 == D;
    const long long calls = uniform ? 1 : (long long)p->n * O0;
    const long long batch = uniform ? (long long)p->n * O0 * O1 : O1;
    for (long long b = 0; b < calls; b++) {
        const long long n = b / O0, o0 = b % O0;
        const char *dy = (const char *)a->y + (size_t)(b * O1 * O2 * K * es);
        char *dx = (char *)a->out + (size_t)(((n * D + o0 * p->stride[0]) * H * W * C) * es);
        cublasStatus_t cs = G.cb->gemm_strided_batched_ex(G.ch, CUBLAS_OP_N, CUBLAS_OP_N, (int)C, (int)O2, (int)K, &alpha, a->w, G.dt, (int)C, 0,
                                                          dy, G.dt, (int)K, O2 * K, &beta, dx, G.dt, (int)ldc, line, (int)batch, G.ct,
                                                          CUBLAS_GEMM_DEFAULT);
        if (cs != CUBLAS_STATUS_SUCCESS)
            return FDNN_FAIL(CUDNN_STATUS_EXECUTION_FAILED, "%s: cublasGemmStridedBatchedEx failed with cuBLAS status %d", what, (int)cs);
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t run_bwd_data(cudnnHandle_t h, const Gemm &G, const fdnn_conv_problem *p, const fdnn_conv_args *a, const Plan &P, cudaStream_t st)
{
    const float alpha = (float)a->alpha, beta = (float)a->beta;
    const long long K = p->k;
    if (P.one) return run_bwd_data_1x1(h, G, p, a, P, "conv_bwd_data__cublas_col2im (1x1)");
    if (P.one_strided) return run_bwd_data_1x1_strided(h, G, p, a, P, st);
    const size_t es = esize(p->ytype);
    const bool small_c = p->c <= COL2IM_SMALL_C;
    for (long long n0 = 0; n0 < p->n; n0 += P.imgs_chunk) {
        const long long nimg = p->n - n0 < P.imgs_chunk ? p->n - n0 : P.imgs_chunk;
        const long long rows = nimg * P.pq;
        const void *dy = (const char *)a->y + (size_t)(n0 * P.pq) * (size_t)K * es;
        const float *col = (const float *)a->workspace;
        cudnnStatus_t s;
        if (small_c) { /* colT[rows x TRSC] (column-major) = dy[rows x K] * w[K x TRSC] */
            FDNN_CHECK(G(CUBLAS_OP_T, CUBLAS_OP_T, rows, P.rsc, K, 1.0f, dy, K, a->w, P.rsc, 0.0f, a->workspace, CUDA_R_32F, rows,
                         "conv_bwd_data__cublas_col2im"));
            if (p->xtype == CUDNN_DATA_HALF) s = launch_col2im_small_c<__half>(p, col, a->out, n0, nimg, rows, alpha, beta, st);
            else if (p->xtype == CUDNN_DATA_BFLOAT16) s = launch_col2im_small_c<__nv_bfloat16>(p, col, a->out, n0, nimg, rows, alpha, beta, st);
            else s = launch_col2im_small_c<float>(p, col, a->out, n0, nimg, rows, alpha, beta, st);
            FDNN_CHECK(s);
            continue;
        }
        FDNN_CHECK(G(CUBLAS_OP_N, CUBLAS_OP_N, P.rsc, rows, K, 1.0f, a->w, P.rsc, dy, K, 0.0f, a->workspace, CUDA_R_32F, P.rsc,
                     "conv_bwd_data__cublas_col2im"));
        if (p->xtype == CUDNN_DATA_HALF) s = launch_col2im<__half>(p, col, a->out, n0, nimg, alpha, beta, st);
        else if (p->xtype == CUDNN_DATA_BFLOAT16) s = launch_col2im<__nv_bfloat16>(p, col, a->out, n0, nimg, alpha, beta, st);
        else s = launch_col2im<float>(p, col, a->out, n0, nimg, alpha, beta, st);
        FDNN_CHECK(s);
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t run_bwd_filter(const Gemm &G, const fdnn_conv_problem *p, const fdnn_conv_args *a, const Plan &P, cudaStream_t st)
{
    const float alpha = (float)a->alpha, beta = (float)a->beta;
    const long long K = p->k;
    if (P.one) /* dw^T[C, K] = x^T[C, NHW] * dy[NHW, K] */
        return G(CUBLAS_OP_N, CUBLAS_OP_T, P.rsc, K, P.npq, alpha, a->x, P.rsc, a->y, K, beta, a->out, G.dt, P.rsc,
                 "conv_bwd_filter__im2col_cublas (1x1)");
    const size_t es = esize(p->ytype);
    const int chunked = P.nchunks > 1;
    void *acc = chunked ? (void *)((char *)a->workspace + P.acc_off) : a->out;
    for (long long r0 = 0; r0 < P.npq; r0 += P.rows_chunk) {
        const long long rows = P.npq - r0 < P.rows_chunk ? P.npq - r0 : P.rows_chunk;
        launch_im2col(p, a->x, a->workspace, r0, rows, st);
        FDNN_CHECK(fdnn_cuda_check(cudaGetLastError(), "conv_bwd_filter__im2col_cublas: im2col kernel"));
        const float al = chunked ? 1.0f : alpha, be = chunked ? (r0 ? 1.0f : 0.0f) : beta;
        FDNN_CHECK(G(CUBLAS_OP_N, CUBLAS_OP_T, P.rsc, K, rows, al, a->workspace, P.rsc, (const char *)a->y + (size_t)r0 * (size_t)K * es, K,
                     be, acc, chunked ? CUDA_R_32F : G.dt, P.rsc, "conv_bwd_filter__im2col_cublas"));
    }
    if (!chunked) return CUDNN_STATUS_SUCCESS;
    const long long nw = K * P.rsc;
    if (p->wtype == CUDNN_DATA_HALF) return launch_blend<__half>((const float *)acc, a->out, nw, alpha, beta, st);
    if (p->wtype == CUDNN_DATA_BFLOAT16) return launch_blend<__nv_bfloat16>((const float *)acc, a->out, nw, alpha, beta, st);
    return launch_blend<float>((const float *)acc, a->out, nw, alpha, beta, st);
}

/* Backward data of a stride-1 convolution as a forward one (run_fwd on fwd_view(p)): the filter
 * with K and C swapped, wt[c][tap][k] = w[k][flip ? taps-1-tap : tap][c] (reversing the linear
 * tap index flips T, R and S at once). 32x32 tiles through shared memory so that both the reads
 * (along c) and the writes (along k) are coalesced; blockIdx.z is the output tap. */
template <typename E>
__global__ void flip_transpose_kernel(const E *__restrict__ w, E *__restrict__ wt, int K, int C, int taps, int flip)
{
    __shared__ E tile[32][33];
    const int tap = blockIdx.z, src = flip ? taps - 1 - tap : tap;
    const int c0 = blockIdx.x * 32, k0 = blockIdx.y * 32;
    for (int j = threadIdx.y; j < 32; j += blockDim.y) {
        const int k = k0 + j, c = c0 + threadIdx.x;
        if (k < K && c < C) tile[j][threadIdx.x] = w[((long long)k * taps + src) * C + c];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < 32; j += blockDim.y) {
        const int c = c0 + j, k = k0 + threadIdx.x;
        if (c < C && k < K) wt[((long long)c * taps + tap) * K + k] = tile[threadIdx.x][j];
    }
}

/* The forward problem whose output is dx: x := dy (K channels), y := dx (C channels), filter
 * C x TRS x K, padding dil*(flt-1) - pad, stride 1, cross-correlation (the flip, if any, is done
 * by flip_transpose_kernel). */
fdnn_conv_problem fwd_view(const fdnn_conv_problem *p)
{
    fdnn_conv_problem q = *p;
    q.dir = FDNN_CONV_FWD;
    q.c = p->k;
    q.k = p->c;
    for (int i = 0; i < 3; i++) {
        q.in[i] = p->out[i];
        q.out[i] = p->in[i];
        q.pad[i] = p->dil[i] * (p->flt[i] - 1) - p->pad[i];
        q.stride[i] = 1;
    }
    for (int i = 0; i < 5; i++) {
        q.xs[i] = p->ys[i];
        q.ys[i] = p->xs[i];
    }
    q.cross_correlation = 1;
    return q;
}

/* the FLOAT implicit GEMM takes the forward view without a padding workspace (dy's K channels a
 * multiple of 4) */
bool f32_fits(const fdnn_conv_problem *q) { return q->c % 4 == 0 && fdnn_cuda_conv_fwd_f32_applicable(q, NULL, 0); }

/* workspace of the bwd-data-as-forward entry: transformed filter at offset 0, then the forward
 * column buffer; the no-copy 1x1 form needs none */
size_t fwdview_wt_bytes(const fdnn_conv_problem *p)
{
    return align256((size_t)p->k * (size_t)p->flt[0] * p->flt[1] * p->flt[2] * (size_t)p->c * esize(p->wtype));
}

} // namespace

extern "C" size_t fdnn_cuda_gemm_ws_limit(void) { return ws_limit(); }

extern "C" int fdnn_cuda_conv_gemm_applicable(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->nb_spatial < 2 || p->nb_spatial > 3)
        return fdnn_conv_why(why, why_n, "the cuBLAS GEMM convolution handles 2-D and 3-D problems (got %d spatial dims)", p->nb_spatial);
    if (p->x_vect > 1 || p->y_vect > 1 || p->w_vect > 1) return fdnn_conv_why(why, why_n, "vectorised layouts are not handled by the cuBLAS GEMM path");
    if (p->g != 1) return fdnn_conv_why(why, why_n, "the cuBLAS GEMM convolution needs groups == 1 (got %d)", p->g);
    if (!(p->xtype == p->wtype && p->xtype == p->ytype &&
          (p->xtype == CUDNN_DATA_HALF || p->xtype == CUDNN_DATA_BFLOAT16 || p->xtype == CUDNN_DATA_FLOAT)))
        return fdnn_conv_why(why, why_n, "the cuBLAS GEMM convolution handles same-type HALF, BFLOAT16 and FLOAT (got x=%s w=%s y=%s)",
                   fdnn_dtype_name(p->xtype), fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
    if (p->xtype != CUDNN_DATA_FLOAT && p->math_type == CUDNN_FMA_MATH)
        return fdnn_conv_why(why, why_n, "math type CUDNN_FMA_MATH forbids tensor cores for HALF/BFLOAT16");
    if (!p->w_nhwc) return fdnn_conv_why(why, why_n, "the cuBLAS GEMM convolution needs a KRSC (NHWC) filter");
    if (!fdnn_conv_packed_cl(p->xs, p->n, p->c, p->in)) return fdnn_conv_why(why, why_n, "x must be densely packed channels-last (NHWC/NDHWC)");
    if (!fdnn_conv_packed_cl(p->ys, p->n, p->k, p->out)) return fdnn_conv_why(why, why_n, "y must be densely packed channels-last (NHWC/NDHWC)");
    const long long lim = (1LL << 31) - 1;
    const long long pq = (long long)p->out[0] * p->out[1] * p->out[2];
    const long long npq = pq * p->n, rsc = (long long)p->flt[0] * p->flt[1] * p->flt[2] * p->c;
    const long long ndhw = (long long)p->n * p->in[0] * p->in[1] * p->in[2];
    if (npq >= lim || rsc >= lim || ndhw >= lim || (long long)p->k >= lim || pq * rsc >= lim * 4 || rsc * p->k >= lim)
        return fdnn_conv_why(why, why_n, "GEMM dimensions (N*P=%lld, T*R*S*C=%lld, K=%d) are too large for the cuBLAS GEMM path", npq, rsc, p->k);
    if (p->dir == FDNN_CONV_BWD_DATA && !make_plan(p).one && pq * rsc * (long long)sizeof(float) > (1LL << 30))
        return fdnn_conv_why(why, why_n, "one image's float column buffer (%lld x %lld) would exceed 1 GiB", pq, rsc);
    if (!fdnn_cublas_available(why, why_n)) return 0;
    return 1;
}

extern "C" int fdnn_cuda_conv_gemm_in_place(const fdnn_conv_problem *p)
{
    for (int i = 0; i < 3; i++)
        if (p->flt[i] != 1 || p->stride[i] != 1 || p->pad[i] != 0) return 0;
    return 1;
}

extern "C" size_t fdnn_cuda_conv_gemm_workspace(const fdnn_conv_problem *p)
{
    return make_plan(p).total;
}

extern "C" cudnnStatus_t fdnn_cuda_conv_gemm_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    const Plan P = make_plan(p);
    /* the strided 1x1 backward data runs in place (strided-batched GEMMs) with less workspace */
    if (P.total && !P.one_strided && (!a->workspace || a->workspace_size < P.total))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "the cuBLAS GEMM convolution needs %zu bytes of workspace (got %zu)", P.total,
                         a->workspace_size);
    Gemm G;
    FDNN_CHECK(make_gemm(h, p, &G));
    cudaStream_t st = fdnn_cuda_stream(h);
    switch (p->dir) {
    case FDNN_CONV_FWD: return run_fwd(G, p, a, P, st, "conv_fwd__im2col_cublas");
    case FDNN_CONV_BWD_DATA: return run_bwd_data(h, G, p, a, P, st);
    case FDNN_CONV_BWD_FILTER: return run_bwd_filter(G, p, a, P, st);
    }
    return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "unknown convolution direction %d", (int)p->dir);
}

extern "C" int fdnn_cuda_conv_bwd_data_fwd_gemm_applicable(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->dir != FDNN_CONV_BWD_DATA) return fdnn_conv_why(why, why_n, "backward data only");
    if (p->nb_spatial < 2 || p->nb_spatial > 3)
        return fdnn_conv_why(why, why_n, "backward data as a forward GEMM handles 2-D and 3-D problems (got %d spatial dims)", p->nb_spatial);
    for (int i = 0; i < 3; i++) {
        if (p->stride[i] != 1)
            return fdnn_conv_why(why, why_n, "backward data as a forward GEMM needs stride 1 (got %d); the col2im entry handles strides", p->stride[i]);
        if (p->dil[i] * (p->flt[i] - 1) - p->pad[i] < 0)
            return fdnn_conv_why(why, why_n, "padding %d exceeds dilation*(filter-1) = %d: the equivalent forward padding would be negative", p->pad[i],
                       p->dil[i] * (p->flt[i] - 1));
    }
    const long long taps = (long long)p->flt[0] * p->flt[1] * p->flt[2];
    if (taps > 65535 || (p->k + 31) / 32 > 65535)
        return fdnn_conv_why(why, why_n, "the filter transform grid is limited to 65535 taps and 65535*32 output channels (got %lld, %d)", taps, p->k);
    const fdnn_conv_problem q = fwd_view(p);
    return fdnn_cuda_conv_gemm_applicable(&q, why, why_n);
}

extern "C" size_t fdnn_cuda_conv_bwd_data_fwd_gemm_workspace(const fdnn_conv_problem *p)
{
    if (make_plan(p).one) return 0;
    const fdnn_conv_problem q = fwd_view(p);
    /* the mma implicit GEMM needs no column buffer, only its split-K partial sums (if any); the
     * FLOAT one none */
    if (fdnn_cuda_conv_fwd_mma_usable(&q)) return fwdview_wt_bytes(p) + fdnn_cuda_conv_fwd_mma_split_workspace(&q);
    if (f32_fits(&q)) return fwdview_wt_bytes(p);
    return fwdview_wt_bytes(p) + make_plan(&q).total;
}

extern "C" cudnnStatus_t fdnn_cuda_conv_bwd_data_fwd_gemm_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    static const char name[] = "conv_bwd_data__fwd_gemm_cublas";
    const size_t need = fdnn_cuda_conv_bwd_data_fwd_gemm_workspace(p);
    if (need && (!a->workspace || a->workspace_size < need))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s needs %zu bytes of workspace (got %zu)", name, need, a->workspace_size);
    Gemm G;
    FDNN_CHECK(make_gemm(h, p, &G));
    const Plan P = make_plan(p);
    if (P.one) return run_bwd_data_1x1(h, G, p, a, P, name);
    cudaStream_t st = fdnn_cuda_stream(h);
    const int taps = p->flt[0] * p->flt[1] * p->flt[2];
    dim3 grid((unsigned)((p->c + 31) / 32), (unsigned)((p->k + 31) / 32), (unsigned)taps), block(32, 8);
    if (esize(p->wtype) == 4)
        flip_transpose_kernel<float><<<grid, block, 0, st>>>((const float *)a->w, (float *)a->workspace, p->k, p->c, taps, p->cross_correlation);
    else
        flip_transpose_kernel<unsigned short><<<grid, block, 0, st>>>((const unsigned short *)a->w, (unsigned short *)a->workspace, p->k, p->c,
                                                                      taps, p->cross_correlation);
    FDNN_CHECK(fdnn_cuda_check(cudaGetLastError(), "conv_bwd_data__fwd_gemm_cublas: filter transform kernel"));
    const fdnn_conv_problem q = fwd_view(p);
    const Plan Q = make_plan(&q);
    const size_t woff = fwdview_wt_bytes(p);
    fdnn_conv_args f = *a;
    f.x = a->y;
    f.w = a->workspace;
    f.y = NULL;
    f.out = a->out;
    f.workspace = (char *)a->workspace + woff;
    f.workspace_size = a->workspace_size - woff;
    /* the tensor-core implicit GEMM when it takes the forward view (same test as workspace()) */
    if (fdnn_cuda_conv_fwd_mma_usable(&q)) return fdnn_cuda_conv_fwd_mma_run(h, &q, &f);
    if (f32_fits(&q)) return fdnn_cuda_conv_fwd_f32_run(h, &q, &f);
    return run_fwd(G, &q, &f, Q, st, name);
}
