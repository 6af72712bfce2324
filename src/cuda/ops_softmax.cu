/* cudnnSoftmaxForward/Backward on the GPU with the CPU backend's formulas (double math).
 * INSTANCE mode: one block per image reduces over C*spatial with a deterministic tree
 * (max, then sum of exp; or sum of dy*y / dy). CHANNEL mode: one thread per (n, spatial
 * position) loops over C, so neighbouring threads read neighbouring addresses on NCHW.
 * The max keeps NaN (a NaN in the row makes the whole row NaN, like the CPU loop). */
#include <math.h>
#include "ops_dev.cuh"

using namespace fdnn_ops;

namespace {

struct SmGeom {
    long long groups, len, S;
    int algo, mode;
};

/* Logical linear index of element i of group g. */
__device__ __forceinline__ long long sm_lin(const SmGeom &g, long long grp, long long i)
{
    if (g.mode == CUDNN_SOFTMAX_MODE_INSTANCE) return grp * g.len + i;
    return (grp / g.S) * g.len * g.S + grp % g.S + i * g.S;
}

__device__ __forceinline__ double nanmax(double a, double b) { return (a != a || b != b) ? (a != a ? a : b) : (a > b ? a : b); }

const int SM_BLOCK = 256;

__global__ void sm_fwd_block(SmGeom g, TV tx, const void *X, TV ty, void *Y, double alpha, double beta)
{
    __shared__ double sh[SM_BLOCK];
    for (long long grp = blockIdx.x; grp < g.groups; grp += gridDim.x) {
        double mx = 0.0;
        if (g.algo != CUDNN_SOFTMAX_FAST) {
            double m = -INFINITY;
            for (long long i = threadIdx.x; i < g.len; i += blockDim.x) m = nanmax(m, ldv(X, tx.dtype, off_lin(tx, sm_lin(g, grp, i))));
            sh[threadIdx.x] = m;
            __syncthreads();
            for (int s = blockDim.x / 2; s > 0; s >>= 1) {
                if ((int)threadIdx.x < s) sh[threadIdx.x] = nanmax(sh[threadIdx.x], sh[threadIdx.x + s]);
                __syncthreads();
            }
            mx = sh[0];
            __syncthreads();
        }
        double s = 0.0;
        for (long long i = threadIdx.x; i < g.len; i += blockDim.x) s += exp(ldv(X, tx.dtype, off_lin(tx, sm_lin(g, grp, i))) - mx);
        s = block_sum(s, sh);
        const double ls = log(s);
        for (long long i = threadIdx.x; i < g.len; i += blockDim.x) {
            const long long l = sm_lin(g, grp, i);
            const double v = ldv(X, tx.dtype, off_lin(tx, l));
            const double r = g.algo == CUDNN_SOFTMAX_LOG ? v - mx - ls : exp(v - mx) / s;
            blendv(Y, ty.dtype, off_lin(ty, l), r, alpha, beta);
        }
    }
}

__global__ void sm_fwd_thread(SmGeom g, TV tx, const void *X, TV ty, void *Y, double alpha, double beta)
{
    for (long long grp = blockIdx.x * (long long)blockDim.x + threadIdx.x; grp < g.groups; grp += (long long)gridDim.x * blockDim.x) {
        double mx = 0.0;
        if (g.algo != CUDNN_SOFTMAX_FAST) {
            mx = -INFINITY;
            for (long long i = 0; i < g.len; i++) mx = nanmax(mx, ldv(X, tx.dtype, off_lin(tx, sm_lin(g, grp, i))));
        }
        double s = 0.0;
        for (long long i = 0; i < g.len; i++) s += exp(ldv(X, tx.dtype, off_lin(tx, sm_lin(g, grp, i))) - mx);
        const double ls = log(s);
        for (long long i = 0; i < g.len; i++) {
            const long long l = sm_lin(g, grp, i);
            const double v = ldv(X, tx.dtype, off_lin(tx, l));
            const double r = g.algo == CUDNN_SOFTMAX_LOG ? v - mx - ls : exp(v - mx) / s;
            blendv(Y, ty.dtype, off_lin(ty, l), r, alpha, beta);
        }
    }
}

__device__ __forceinline__ double bwd_term(int algo, double y, double dy) { return algo == CUDNN_SOFTMAX_LOG ? dy : dy * y; }
__device__ __forceinline__ double bwd_out(int algo, double y, double dy, double s)
{
    return algo == CUDNN_SOFTMAX_LOG ? dy - exp(y) * s : y * (dy - s);
}

__global__ void sm_bwd_block(SmGeom g, TV ty, const void *Y, TV td, const void *DY, TV tx, void *DX, double alpha, double beta)
{
    __shared__ double sh[SM_BLOCK];
    for (long long grp = blockIdx.x; grp < g.groups; grp += gridDim.x) {
        double s = 0.0;
        for (long long i = threadIdx.x; i < g.len; i += blockDim.x) {
            const long long l = sm_lin(g, grp, i);
            s += bwd_term(g.algo, ldv(Y, ty.dtype, off_lin(ty, l)), ldv(DY, td.dtype, off_lin(td, l)));
        }
        s = block_sum(s, sh);
        for (long long i = threadIdx.x; i < g.len; i += blockDim.x) {
            const long long l = sm_lin(g, grp, i);
            const double r = bwd_out(g.algo, ldv(Y, ty.dtype, off_lin(ty, l)), ldv(DY, td.dtype, off_lin(td, l)), s);
            blendv(DX, tx.dtype, off_lin(tx, l), r, alpha, beta);
        }
    }
}

__global__ void sm_bwd_thread(SmGeom g, TV ty, const void *Y, TV td, const void *DY, TV tx, void *DX, double alpha, double beta)
{
    for (long long grp = blockIdx.x * (long long)blockDim.x + threadIdx.x; grp < g.groups; grp += (long long)gridDim.x * blockDim.x) {
        double s = 0.0;
        for (long long i = 0; i < g.len; i++) {
            const long long l = sm_lin(g, grp, i);
            s += bwd_term(g.algo, ldv(Y, ty.dtype, off_lin(ty, l)), ldv(DY, td.dtype, off_lin(td, l)));
        }
        for (long long i = 0; i < g.len; i++) {
            const long long l = sm_lin(g, grp, i);
            const double r = bwd_out(g.algo, ldv(Y, ty.dtype, off_lin(ty, l)), ldv(DY, td.dtype, off_lin(td, l)), s);
            blendv(DX, tx.dtype, off_lin(tx, l), r, alpha, beta);
        }
    }
}

SmGeom sm_geom(const struct cudnnTensorStruct *t, int algo, int mode)
{
    SmGeom g;
    long long N = t->dim[0], C = t->nb_dims > 1 ? t->dim[1] : 1, S = 1;
    for (int i = 2; i < t->nb_dims; i++) S *= t->dim[i];
    g.S = S;
    g.algo = algo;
    g.mode = mode;
    if (mode == CUDNN_SOFTMAX_MODE_INSTANCE) { g.groups = N; g.len = C * S; }
    else { g.groups = N * S; g.len = C; }
    return g;
}

/* One block per row when rows are long (or few); one thread per row otherwise. */
bool use_block(const SmGeom &g) { return g.mode == CUDNN_SOFTMAX_MODE_INSTANCE ? g.len > 32 : (g.len > 1024 && g.groups < 65536); }

} /* namespace */

extern "C" cudnnStatus_t fdnn_cuda_softmax_fwd(cudnnHandle_t h, int algo, int mode, double alpha, const struct cudnnTensorStruct *x,
                                               const void *X, double beta, const struct cudnnTensorStruct *y, void *Y)
{
    SmGeom g = sm_geom(x, algo, mode);
    if (g.groups <= 0 || g.len <= 0) return CUDNN_STATUS_SUCCESS;
    cudaStream_t st = (cudaStream_t)h->stream;
    if (use_block(g)) {
        unsigned grid = (unsigned)(g.groups < 65535LL * 16 ? g.groups : 65535LL * 16);
        sm_fwd_block<<<grid, SM_BLOCK, 0, st>>>(g, make_tv(x), X, make_tv(y), Y, alpha, beta);
        return fdnn_cuda_check(cudaGetLastError(), "sm_fwd_block");
    }
    sm_fwd_thread<<<grid_for(g.groups, 128), 128, 0, st>>>(g, make_tv(x), X, make_tv(y), Y, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "sm_fwd_thread");
}

extern "C" cudnnStatus_t fdnn_cuda_softmax_bwd(cudnnHandle_t h, int algo, int mode, double alpha, const struct cudnnTensorStruct *y,
                                               const void *Y, const struct cudnnTensorStruct *dy, const void *DY, double beta,
                                               const struct cudnnTensorStruct *dx, void *DX)
{
    SmGeom g = sm_geom(y, algo, mode);
    if (g.groups <= 0 || g.len <= 0) return CUDNN_STATUS_SUCCESS;
    cudaStream_t st = (cudaStream_t)h->stream;
    if (use_block(g)) {
        unsigned grid = (unsigned)(g.groups < 65535LL * 16 ? g.groups : 65535LL * 16);
        sm_bwd_block<<<grid, SM_BLOCK, 0, st>>>(g, make_tv(y), Y, make_tv(dy), DY, make_tv(dx), DX, alpha, beta);
        return fdnn_cuda_check(cudaGetLastError(), "sm_bwd_block");
    }
    sm_bwd_thread<<<grid_for(g.groups, 128), 128, 0, st>>>(g, make_tv(y), Y, make_tv(dy), DY, make_tv(dx), DX, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "sm_bwd_thread");
}
