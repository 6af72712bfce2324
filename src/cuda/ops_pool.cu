/* cudnnPoolingForward/Backward on the GPU, 2-D and 3-D, every mode, with the CPU backend's
 * rules: max never selects padding, NOT_PROPAGATE_NAN skips NaN inputs, PROPAGATE_NAN lets
 * the first NaN win, ties go to the first maximum in row-major window order; averages divide
 * by the window size (INCLUDE_PADDING) or the in-bounds count (EXCLUDE_PADDING).
 * Forward: one thread per output element. Backward is a deterministic gather: one thread per
 * input element visits, in ascending output order, the output windows that cover it; for
 * max it re-runs that window's forward selection and takes dy only where it picked this
 * element, for averages it adds dy/divisor. No atomics; results are independent of timing. */
#include <math.h>
#include "ops_dev.cuh"

using namespace fdnn_ops;

namespace {

struct PGeom {
    int ns, is_max, prop, incl, C;
    int in[3], out[3], win[3], pad[3], str[3];
    long long in_sz, out_sz, win_sz, planes;
};

/* Reduce the window of output o (spatial multi-index oi) in plane (n, c). */
__device__ double pool_one(const PGeom &g, const TV &tx, const void *X, int n, int c, const int *oi, long long *arg, double *cnt)
{
    double acc = g.is_max ? -INFINITY : 0.0;
    long long best = -1, cntin = 0;
    bool found_nan = false;
    int idx[5];
    idx[0] = n;
    idx[1] = c;
    for (int a = 0; a < g.win[0]; a++) {
        const int i0 = oi[0] * g.str[0] - g.pad[0] + a;
        if (i0 < 0 || i0 >= g.in[0]) continue;
        for (int b = 0; b < g.win[1]; b++) {
            const int i1 = oi[1] * g.str[1] - g.pad[1] + b;
            if (i1 < 0 || i1 >= g.in[1]) continue;
            for (int e = 0; e < g.win[2]; e++) {
                const int i2 = oi[2] * g.str[2] - g.pad[2] + e;
                if (i2 < 0 || i2 >= g.in[2]) continue;
                idx[2] = i0; idx[3] = i1; idx[4] = i2;
                const double v = ldv(X, tx.dtype, off_idx(tx, idx));
                const long long ii = ((long long)i0 * g.in[1] + i1) * g.in[2] + i2;
                cntin++;
                if (g.is_max) {
                    if (found_nan) continue;
                    if (v != v) {
                        if (g.prop) { found_nan = true; acc = v; best = ii; }
                        continue;
                    }
                    if (best < 0 || v > acc) { acc = v; best = ii; }
                } else {
                    acc += v;
                }
            }
        }
    }
    *arg = best;
    if (g.is_max) {
        if (best < 0) acc = cntin ? __longlong_as_double(0x7ff8000000000000LL) : 0.0;
        *cnt = 1;
    } else {
        *cnt = g.incl ? (double)g.win_sz : (double)cntin;
        acc = *cnt > 0 ? acc / *cnt : 0.0;
    }
    return acc;
}

__device__ __forceinline__ void unravel3(const int *ext, long long r, int *o)
{
    for (int i = 2; i >= 0; i--) { o[i] = (int)(r % ext[i]); r /= ext[i]; }
}

/* 5-entry index (n, c, s0, s1, s2) -> offset; 4-D tensors ignore s2 (always 0 there). */
__device__ __forceinline__ long long off5(const TV &t, int n, int c, const int *s)
{
    int idx[5] = {n, c, s[0], s[1], s[2]};
    return off_idx(t, idx);
}

__global__ void pool_fwd(PGeom g, TV tx, const void *X, TV ty, void *Y, double alpha, double beta)
{
    const long long total = g.planes * g.out_sz;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total; k += (long long)gridDim.x * blockDim.x) {
        const long long p = k / g.out_sz, o = k - p * g.out_sz;
        const int n = (int)(p / g.C), c = (int)(p % g.C);
        int oi[3];
        unravel3(g.out, o, oi);
        long long arg;
        double cnt;
        const double v = pool_one(g, tx, X, n, c, oi, &arg, &cnt);
        blendv(Y, ty.dtype, off5(ty, n, c, oi), v, alpha, beta);
    }
}

__global__ void pool_bwd(PGeom g, TV tx, const void *X, TV tdy, const void *DY, TV tdx, void *DX, double alpha, double beta)
{
    const long long total = g.planes * g.in_sz;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total; k += (long long)gridDim.x * blockDim.x) {
        const long long p = k / g.in_sz, ii = k - p * g.in_sz;
        const int n = (int)(p / g.C), c = (int)(p % g.C);
        int xi[3], lo[3], hi[3];
        unravel3(g.in, ii, xi);
        for (int a = 0; a < 3; a++) {
            /* outputs o with o*str - pad <= xi <= o*str - pad + win - 1 */
            const int t = xi[a] + g.pad[a] - g.win[a] + 1;
            int l = t <= 0 ? 0 : (t + g.str[a] - 1) / g.str[a];
            int u = (xi[a] + g.pad[a]) / g.str[a];
            if (u > g.out[a] - 1) u = g.out[a] - 1;
            lo[a] = l;
            hi[a] = u;
        }
        double acc = 0.0;
        int oi[3];
        for (oi[0] = lo[0]; oi[0] <= hi[0]; oi[0]++)
            for (oi[1] = lo[1]; oi[1] <= hi[1]; oi[1]++)
                for (oi[2] = lo[2]; oi[2] <= hi[2]; oi[2]++) {
                    double cnt;
                    if (g.is_max) {
                        long long arg;
                        pool_one(g, tx, X, n, c, oi, &arg, &cnt);
                        if (arg != ii) continue;
                        acc += ldv(DY, tdy.dtype, off5(tdy, n, c, oi));
                    } else {
                        if (g.incl) cnt = (double)g.win_sz;
                        else {
                            cnt = 1.0;
                            for (int a = 0; a < 3; a++) {
                                const int s = oi[a] * g.str[a] - g.pad[a];
                                const int b0 = s < 0 ? 0 : s, b1 = s + g.win[a] < g.in[a] ? s + g.win[a] : g.in[a];
                                cnt *= (double)(b1 - b0);
                            }
                        }
                        if (cnt <= 0) continue;
                        acc += ldv(DY, tdy.dtype, off5(tdy, n, c, oi)) / cnt;
                    }
                }
        blendv(DX, tdx.dtype, off5(tdx, n, c, xi), acc, alpha, beta);
    }
}

PGeom make_pgeom(const struct cudnnPoolingStruct *d, const struct cudnnTensorStruct *x, const struct cudnnTensorStruct *y)
{
    PGeom g;
    g.ns = d->nb_spatial;
    g.is_max = d->mode == CUDNN_POOLING_MAX || d->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    g.incl = d->mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    g.prop = d->nan_opt == CUDNN_PROPAGATE_NAN;
    g.C = x->dim[1];
    g.planes = (long long)x->dim[0] * x->dim[1];
    g.in_sz = g.out_sz = g.win_sz = 1;
    for (int i = 0; i < 3; i++) {
        const bool act = i < g.ns;
        g.in[i] = act ? x->dim[i + 2] : 1;
        g.out[i] = act ? y->dim[i + 2] : 1;
        g.win[i] = act ? d->window[i] : 1;
        g.pad[i] = act ? d->pad[i] : 0;
        g.str[i] = act ? d->stride[i] : 1;
        g.in_sz *= g.in[i];
        g.out_sz *= g.out[i];
        g.win_sz *= g.win[i];
    }
    return g;
}

/* A view whose index list is (n, c, s0, s1, s2): 4-D tensors get a unit third spatial dim. */
TV pool_tv(const struct cudnnTensorStruct *t)
{
    TV v = make_tv(t);
    if (v.nd == 4) { v.nd = 5; v.dim[4] = 1; v.st[4] = 0; }
    v.packed = 0;
    return v;
}

} /* namespace */

extern "C" cudnnStatus_t fdnn_cuda_pooling_fwd(cudnnHandle_t h, const struct cudnnPoolingStruct *pd, double alpha,
                                               const struct cudnnTensorStruct *x, const void *X, double beta,
                                               const struct cudnnTensorStruct *y, void *Y)
{
    PGeom g = make_pgeom(pd, x, y);
    const long long total = g.planes * g.out_sz;
    if (total <= 0) return CUDNN_STATUS_SUCCESS;
    pool_fwd<<<grid_for(total, 256), 256, 0, (cudaStream_t)h->stream>>>(g, pool_tv(x), X, pool_tv(y), Y, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "pool_fwd");
}

extern "C" cudnnStatus_t fdnn_cuda_pooling_bwd(cudnnHandle_t h, const struct cudnnPoolingStruct *pd, double alpha,
                                               const struct cudnnTensorStruct *dy, const void *DY, const struct cudnnTensorStruct *x,
                                               const void *X, double beta, const struct cudnnTensorStruct *dx, void *DX)
{
    PGeom g = make_pgeom(pd, x, dy);
    const long long total = g.planes * g.in_sz;
    if (total <= 0) return CUDNN_STATUS_SUCCESS;
    pool_bwd<<<grid_for(total, 256), 256, 0, (cudaStream_t)h->stream>>>(g, pool_tv(x), X, pool_tv(dy), DY, pool_tv(dx), DX, alpha,
                                                                       beta);
    return fdnn_cuda_check(cudaGetLastError(), "pool_bwd");
}
