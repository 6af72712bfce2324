/* Spatial transformer on CUDA (the GPU twin of src/cpu/spatial_tf_cpu.c, same conventions):
 * affine grid generator forward/backward and the bilinear sampler forward/backward.
 * - grid forward: one thread per output pixel;
 * - grid backward: one block per image, a fixed-order block reduction of the 6 sums
 *   (deterministic);
 * - sampler forward: one thread per output pixel (n, h, w), looping over channels, so the grid
 *   is read once per pixel and y is written coalesced along w;
 * - sampler backward: dx is first set to beta*dx (0 when beta == 0, never read), then each
 *   output pixel adds alpha * its bilinear contributions with atomicAdd in dx's own type; the
 *   order of those additions varies, so dx is NOT bitwise deterministic (as cuDNN documents
 *   for its sampler backward), and HALF/BFLOAT16 dx round after every addition. dgrid is
 *   computed per output pixel (sequential over channels) and is deterministic.
 * Arithmetic is in float (double for DOUBLE). */
#include <cuda_runtime.h>
#include <math.h>
#include <string.h>
#include "cuda_norm.h"
extern "C" {
#include "cuda_backend.h"
#include "cuda_internal.h"
}

using namespace fdnn_nrm;

namespace {

struct T4 {
    long long s[4]; /* strides of n, c, h, w */
    int d[4];
};

T4 mk4(const struct cudnnTensorStruct *t)
{
    T4 r;
    for (int i = 0; i < 4; i++) r.s[i] = t->stride[i], r.d[i] = t->dim[i];
    return r;
}

template <typename A> __device__ __forceinline__ A lin(int i, int n) { return n > 1 ? A(-1) + A(2) * A(i) / A(n - 1) : A(0); }

int blocks_for(long long n, int bs)
{
    long long b = (n + bs - 1) / bs;
    if (b < 1) b = 1;
    return (int)(b < (1LL << 20) ? b : (1LL << 20));
}

template <typename T> __global__ void grid_fwd_kernel(const T *theta, T *grid, int N, int H, int W)
{
    typedef typename acc_of<T>::type A;
    long long total = (long long)N * H * W;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        int w = (int)(i % W), h = (int)(i / W % H);
        long long n = i / ((long long)W * H);
        const T *th = theta + 6 * n;
        A xs = lin<A>(w, W), ys = lin<A>(h, H);
        grid[2 * i] = conv<T>::from(to_acc<A>(th[0]) * xs + to_acc<A>(th[1]) * ys + to_acc<A>(th[2]));
        grid[2 * i + 1] = conv<T>::from(to_acc<A>(th[3]) * xs + to_acc<A>(th[4]) * ys + to_acc<A>(th[5]));
    }
}

/* One block (256 threads) per image. */
template <typename T> __global__ void grid_bwd_kernel(const T *dgrid, T *dtheta, int H, int W)
{
    typedef typename acc_of<T>::type A;
    __shared__ A sh[6][256];
    int n = blockIdx.x;
    long long hw = (long long)H * W;
    const T *g = dgrid + 2 * hw * n;
    A d[6] = {0, 0, 0, 0, 0, 0};
    for (long long i = threadIdx.x; i < hw; i += blockDim.x) {
        int w = (int)(i % W), h = (int)(i / W);
        A xs = lin<A>(w, W), ys = lin<A>(h, H), gx = to_acc<A>(g[2 * i]), gy = to_acc<A>(g[2 * i + 1]);
        d[0] += gx * xs, d[1] += gx * ys, d[2] += gx;
        d[3] += gy * xs, d[4] += gy * ys, d[5] += gy;
    }
    for (int k = 0; k < 6; k++) sh[k][threadIdx.x] = d[k];
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            for (int k = 0; k < 6; k++) sh[k][threadIdx.x] += sh[k][threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x < 6) dtheta[6LL * n + threadIdx.x] = conv<T>::from(sh[threadIdx.x][0]);
}

/* Source position in input pixel units, clamped to [-2, size+1] so that far-away or NaN
 * positions (all four neighbours outside, zero contribution) cannot overflow the int cast. */
template <typename A> __device__ __forceinline__ A src(A g, int size)
{
    A p = (g + A(1)) * A(size - 1) * A(0.5);
    return fmax(fmin(p, A(size + 1)), A(-2));
}

template <typename T, typename A>
__global__ void sampler_fwd_kernel(const T *x, T4 lx, const T *grid, T *y, T4 ly, A alpha, A beta)
{
    int N = ly.d[0], C = ly.d[1], Ho = ly.d[2], Wo = ly.d[3], Hi = lx.d[2], Wi = lx.d[3];
    long long total = (long long)N * Ho * Wo;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        int w = (int)(i % Wo), h = (int)(i / Wo % Ho);
        long long n = i / ((long long)Wo * Ho);
        A px = src(to_acc<A>(grid[2 * i]), Wi), py = src(to_acc<A>(grid[2 * i + 1]), Hi);
        A fx0 = floor(px), fy0 = floor(py);
        int x0 = (int)fx0, y0 = (int)fy0;
        A fx = px - fx0, fy = py - fy0;
        bool okx0 = x0 >= 0 && x0 < Wi, okx1 = x0 + 1 >= 0 && x0 + 1 < Wi, oky0 = y0 >= 0 && y0 < Hi, oky1 = y0 + 1 >= 0 && y0 + 1 < Hi;
        long long bx = n * lx.s[0], by = n * ly.s[0] + h * ly.s[2] + w * ly.s[3];
        long long o00 = bx + (long long)y0 * lx.s[2] + (long long)x0 * lx.s[3];
        for (int c = 0; c < C; c++) {
            long long o = o00 + c * lx.s[1]; /* top-left neighbour; only in-range neighbours are read */
            A acc = 0;
            if (oky0 && okx0) acc += (A(1) - fx) * (A(1) - fy) * to_acc<A>(x[o]);
            if (oky0 && okx1) acc += fx * (A(1) - fy) * to_acc<A>(x[o + lx.s[3]]);
            if (oky1 && okx0) acc += (A(1) - fx) * fy * to_acc<A>(x[o + lx.s[2]]);
            if (oky1 && okx1) acc += fx * fy * to_acc<A>(x[o + lx.s[2] + lx.s[3]]);
            T *yp = y + by + c * ly.s[1];
            A out = alpha * acc;
            if (beta != A(0)) out += beta * to_acc<A>(*yp);
            *yp = conv<T>::from(out);
        }
    }
}

/* dx = beta*dx over every element of dx (0 without reading when beta == 0). */
template <typename T, typename A> __global__ void scale_kernel(T *dx, T4 l, A beta)
{
    long long total = (long long)l.d[0] * l.d[1] * l.d[2] * l.d[3];
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        long long w = i % l.d[3], h = i / l.d[3] % l.d[2], c = i / ((long long)l.d[3] * l.d[2]) % l.d[1],
                  n = i / ((long long)l.d[3] * l.d[2] * l.d[1]);
        T *p = dx + n * l.s[0] + c * l.s[1] + h * l.s[2] + w * l.s[3];
        *p = conv<T>::from(beta != A(0) ? beta * to_acc<A>(*p) : A(0));
    }
}

__device__ __forceinline__ void atom_add(float *p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atom_add(double *p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atom_add(__half *p, float v) { atomicAdd(p, __float2half_rn(v)); }
__device__ __forceinline__ void atom_add(__nv_bfloat16 *p, float v) { atomicAdd(p, __float2bfloat16_rn(v)); }

template <typename T, typename A>
__global__ void sampler_bwd_kernel(const T *x, T4 lx, T *dx, T4 ldx, const T *dy, T4 ldy, const T *grid, T *dgrid, A alpha, A alphaDg,
                                   A betaDg)
{
    int N = ldy.d[0], C = ldy.d[1], Ho = ldy.d[2], Wo = ldy.d[3], Hi = lx.d[2], Wi = lx.d[3];
    long long total = (long long)N * Ho * Wo;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        int w = (int)(i % Wo), h = (int)(i / Wo % Ho);
        long long n = i / ((long long)Wo * Ho);
        A px = src(to_acc<A>(grid[2 * i]), Wi), py = src(to_acc<A>(grid[2 * i + 1]), Hi);
        A fx0 = floor(px), fy0 = floor(py);
        int x0 = (int)fx0, y0 = (int)fy0;
        A fx = px - fx0, fy = py - fy0, dpx = 0, dpy = 0;
        for (int c = 0; c < C; c++) {
            A g = to_acc<A>(dy[n * ldy.s[0] + c * ldy.s[1] + h * ldy.s[2] + w * ldy.s[3]]);
            for (int j = 0; j < 4; j++) {
                int ddx = j & 1, ddy = j >> 1, xx = x0 + ddx, yy = y0 + ddy;
                if (xx < 0 || xx >= Wi || yy < 0 || yy >= Hi) continue;
                A wx = ddx ? fx : A(1) - fx, wy = ddy ? fy : A(1) - fy;
                A v = to_acc<A>(x[n * lx.s[0] + c * lx.s[1] + yy * lx.s[2] + xx * lx.s[3]]);
                atom_add(dx + n * ldx.s[0] + c * ldx.s[1] + yy * ldx.s[2] + xx * ldx.s[3], alpha * g * wx * wy);
                dpx += g * v * wy * (ddx ? A(1) : A(-1));
                dpy += g * v * wx * (ddy ? A(1) : A(-1));
            }
        }
        A r0 = alphaDg * dpx * A(Wi - 1) * A(0.5), r1 = alphaDg * dpy * A(Hi - 1) * A(0.5);
        if (betaDg != A(0)) r0 += betaDg * to_acc<A>(dgrid[2 * i]), r1 += betaDg * to_acc<A>(dgrid[2 * i + 1]);
        dgrid[2 * i] = conv<T>::from(r0);
        dgrid[2 * i + 1] = conv<T>::from(r1);
    }
}

template <typename T> cudnnStatus_t grid_fwd(cudnnHandle_t h, const struct cudnnSpatialTransformerStruct *st, const void *theta, void *grid)
{
    long long total = (long long)st->dim[0] * st->dim[2] * st->dim[3];
    grid_fwd_kernel<T><<<blocks_for(total, 256), 256, 0, fdnn_cuda_stream(h)>>>((const T *)theta, (T *)grid, st->dim[0], st->dim[2], st->dim[3]);
    return fdnn_cuda_check(cudaGetLastError(), "grid_fwd_kernel");
}

template <typename T> cudnnStatus_t grid_bwd(cudnnHandle_t h, const struct cudnnSpatialTransformerStruct *st, const void *dgrid, void *dtheta)
{
    if (st->dim[0] > 0x7fffffff) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "too many images");
    grid_bwd_kernel<T><<<st->dim[0], 256, 0, fdnn_cuda_stream(h)>>>((const T *)dgrid, (T *)dtheta, st->dim[2], st->dim[3]);
    return fdnn_cuda_check(cudaGetLastError(), "grid_bwd_kernel");
}

template <typename T>
cudnnStatus_t sfwd(cudnnHandle_t h, double alpha, const struct cudnnTensorStruct *xd, const void *x, const void *grid, double beta,
                   const struct cudnnTensorStruct *yd, void *y)
{
    typedef typename acc_of<T>::type A;
    long long total = (long long)yd->dim[0] * yd->dim[2] * yd->dim[3];
    sampler_fwd_kernel<T, A><<<blocks_for(total, 256), 256, 0, fdnn_cuda_stream(h)>>>((const T *)x, mk4(xd), (const T *)grid, (T *)y, mk4(yd),
                                                                                       (A)alpha, (A)beta);
    return fdnn_cuda_check(cudaGetLastError(), "sampler_fwd_kernel");
}

template <typename T>
cudnnStatus_t sbwd(cudnnHandle_t h, double alpha, const struct cudnnTensorStruct *xd, const void *x, double beta,
                   const struct cudnnTensorStruct *dxd, void *dx, double alphaDg, const struct cudnnTensorStruct *dyd, const void *dy,
                   const void *grid, double betaDg, void *dgrid)
{
    typedef typename acc_of<T>::type A;
    cudaStream_t s = fdnn_cuda_stream(h);
    T4 ldx = mk4(dxd);
    scale_kernel<T, A><<<blocks_for(fdnn_tensor_elems(dxd), 256), 256, 0, s>>>((T *)dx, ldx, (A)beta);
    cudnnStatus_t st = fdnn_cuda_check(cudaGetLastError(), "scale_kernel");
    if (st != CUDNN_STATUS_SUCCESS) return st;
    long long total = (long long)dyd->dim[0] * dyd->dim[2] * dyd->dim[3];
    sampler_bwd_kernel<T, A><<<blocks_for(total, 256), 256, 0, s>>>((const T *)x, mk4(xd), (T *)dx, ldx, (const T *)dy, mk4(dyd),
                                                                    (const T *)grid, (T *)dgrid, (A)alpha, (A)alphaDg, (A)betaDg);
    return fdnn_cuda_check(cudaGetLastError(), "sampler_bwd_kernel");
}
} // namespace

extern "C" cudnnStatus_t fdnn_cuda_stf_grid_fwd(cudnnHandle_t h, const struct cudnnSpatialTransformerStruct *st, const void *theta, void *grid)
{
    switch (st->dtype) {
    case CUDNN_DATA_FLOAT: return grid_fwd<float>(h, st, theta, grid);
    case CUDNN_DATA_DOUBLE: return grid_fwd<double>(h, st, theta, grid);
    case CUDNN_DATA_HALF: return grid_fwd<__half>(h, st, theta, grid);
    case CUDNN_DATA_BFLOAT16: return grid_fwd<__nv_bfloat16>(h, st, theta, grid);
    default: return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "data type %s is not supported", fdnn_dtype_name(st->dtype));
    }
}

extern "C" cudnnStatus_t fdnn_cuda_stf_grid_bwd(cudnnHandle_t h, const struct cudnnSpatialTransformerStruct *st, const void *dgrid, void *dtheta)
{
    switch (st->dtype) {
    case CUDNN_DATA_FLOAT: return grid_bwd<float>(h, st, dgrid, dtheta);
    case CUDNN_DATA_DOUBLE: return grid_bwd<double>(h, st, dgrid, dtheta);
    case CUDNN_DATA_HALF: return grid_bwd<__half>(h, st, dgrid, dtheta);
    case CUDNN_DATA_BFLOAT16: return grid_bwd<__nv_bfloat16>(h, st, dgrid, dtheta);
    default: return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "data type %s is not supported", fdnn_dtype_name(st->dtype));
    }
}

extern "C" cudnnStatus_t fdnn_cuda_stf_sampler_fwd(cudnnHandle_t h, const struct cudnnSpatialTransformerStruct *st, double alpha,
                                                   const struct cudnnTensorStruct *xd, const void *x, const void *grid, double beta,
                                                   const struct cudnnTensorStruct *yd, void *y)
{
    switch (st->dtype) {
    case CUDNN_DATA_FLOAT: return sfwd<float>(h, alpha, xd, x, grid, beta, yd, y);
    case CUDNN_DATA_DOUBLE: return sfwd<double>(h, alpha, xd, x, grid, beta, yd, y);
    case CUDNN_DATA_HALF: return sfwd<__half>(h, alpha, xd, x, grid, beta, yd, y);
    case CUDNN_DATA_BFLOAT16: return sfwd<__nv_bfloat16>(h, alpha, xd, x, grid, beta, yd, y);
    default: return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "data type %s is not supported", fdnn_dtype_name(st->dtype));
    }
}

extern "C" cudnnStatus_t fdnn_cuda_stf_sampler_bwd(cudnnHandle_t h, const struct cudnnSpatialTransformerStruct *st, double alpha,
                                                   const struct cudnnTensorStruct *xd, const void *x, double beta,
                                                   const struct cudnnTensorStruct *dxd, void *dx, double alphaDg,
                                                   const struct cudnnTensorStruct *dyd, const void *dy, const void *grid, double betaDg,
                                                   void *dgrid)
{
    switch (st->dtype) {
    case CUDNN_DATA_FLOAT: return sbwd<float>(h, alpha, xd, x, beta, dxd, dx, alphaDg, dyd, dy, grid, betaDg, dgrid);
    case CUDNN_DATA_DOUBLE: return sbwd<double>(h, alpha, xd, x, beta, dxd, dx, alphaDg, dyd, dy, grid, betaDg, dgrid);
    case CUDNN_DATA_HALF: return sbwd<__half>(h, alpha, xd, x, beta, dxd, dx, alphaDg, dyd, dy, grid, betaDg, dgrid);
    case CUDNN_DATA_BFLOAT16: return sbwd<__nv_bfloat16>(h, alpha, xd, x, beta, dxd, dx, alphaDg, dyd, dy, grid, betaDg, dgrid);
    default: return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "data type %s is not supported", fdnn_dtype_name(st->dtype));
    }
}
