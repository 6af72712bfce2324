/* Cross-channel LRN and divisive normalisation on the GPU, with the CPU backend's formulas
 * (src/cpu/ops_lrn.h): tensors are viewed as [outer][a0][a1][a2][inner] in logical order,
 * m = means (NULL = 0; NVIDIA's divisive normalisation as measured on an H200, cuDNN 9.19),
 *   D_i = k + sc * sum_{j in W(i)} (x_j - m_i)^2,  y_i = x_i * D_i^-beta,  t_i = dy_i*x_i*D_i^(-beta-1),
 *   dx_p = dy_p*D_p^-beta - 2*beta*sc * sum_{i: W(i) holds p} t_i*(x_p - m_i),
 *   dm_i = 2*beta*sc * t_i * sum_{j in W(i)} (x_j - m_i).
 * One thread per element, windows summed directly. Backward of LRN (no scratch given)
 * recomputes D_i of each neighbour (cost ~ lrnN^2 per element); divisive normalisation, whose
 * caller passes temp/temp2, runs two passes: t_i into the scratch, then the reversed-window
 * sums. Every output is written by one thread, sums run in the CPU's order (deterministic).
 * Computed in double (the scratch holds float for 16-bit types, split over temp/temp2, and
 * the element type otherwise). */
#include <math.h>
#include "ops_dev.cuh"

using namespace fdnn_ops;

namespace {

struct NGeom {
    long long outer, inner, n;
    int ax[3], lo[3], hi[3]; /* forward window: [i+lo, i+hi] per axis */
    double k, sc, beta;
};

struct NIn {
    TV tx, tm, tdy;
    const void *X, *M, *DY;
};

__device__ __forceinline__ double x_at(const NIn &in, long long p) { return ldv(in.X, in.tx.dtype, off_lin(in.tx, p)); }
__device__ __forceinline__ double m_at(const NIn &in, long long p) { return in.M ? ldv(in.M, in.tm.dtype, off_lin(in.tm, p)) : 0.0; }

/* Decompose p into (base, i0, i1, i2, q) with p = (((base + i0)*A1 + i1)*A2 + i2)*inner + q. */
__device__ __forceinline__ void split(const NGeom &g, long long p, long long &base, int *i, long long &q)
{
    q = p % g.inner;
    long long r = p / g.inner;
    i[2] = (int)(r % g.ax[2]); r /= g.ax[2];
    i[1] = (int)(r % g.ax[1]); r /= g.ax[1];
    i[0] = (int)(r % g.ax[0]); r /= g.ax[0];
    base = r * g.ax[0];
}

__device__ __forceinline__ long long join(const NGeom &g, long long base, int a, int b, int c, long long q)
{
    return (((base + a) * g.ax[1] + b) * g.ax[2] + c) * g.inner + q;
}

/* D = k + sc * sum of (x_j - m_p)^2 over the forward window of p; *s1 (if given) = sum of (x_j - m_p). */
__device__ double s_at(const NGeom &g, const NIn &in, long long p, double *s1 = NULL)
{
    long long base, q;
    int i[3];
    split(g, p, base, i, q);
    const double mp = m_at(in, p);
    double s = 0.0, l = 0.0;
    int b0[3], b1[3];
    for (int k = 0; k < 3; k++) {
        b0[k] = max(i[k] + g.lo[k], 0);
        b1[k] = min(i[k] + g.hi[k], g.ax[k] - 1);
    }
    for (int a = b0[0]; a <= b1[0]; a++) {
        for (int b = b0[1]; b <= b1[1]; b++) {
            for (int c = b0[2]; c <= b1[2]; c++) {
                const double u = x_at(in, join(g, base, a, b, c, q)) - mp;
                l += u;
                s += u * u;
            }
        }
    }
    if (s1) *s1 = l;
    return g.k + g.sc * s;
}

__global__ void norm_fwd(NGeom g, NIn in, TV ty, void *Y, double alpha, double beta)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < g.n; p += (long long)gridDim.x * blockDim.x) {
        const double r = x_at(in, p) * pow(s_at(g, in, p), -g.beta);
        blendv(Y, ty.dtype, off_lin(ty, p), r, alpha, beta);
    }
}

/* dx_p from the reversed-window sums t = sum t_i and tm = sum t_i*m_i, and dm_p from p's own window. */
__device__ void finish_bwd(const NGeom &g, const NIn &in, long long p, double t, double tm, const TV &tdx, void *DX, void *DM, double alpha,
                           double beta)
{
    const double x = x_at(in, p), dy = ldv(in.DY, in.tdy.dtype, off_lin(in.tdy, p));
    double s1 = 0.0;
    const double D = s_at(g, in, p, &s1), f = 2.0 * g.beta * g.sc;
    const double dx = dy * pow(D, -g.beta) - (in.M ? f * (x * t - tm) : f * x * t);
    const long long o = off_lin(tdx, p);
    blendv(DX, tdx.dtype, o, dx, alpha, beta);
    if (DM) blendv(DM, tdx.dtype, o, f * dy * x * pow(D, -g.beta - 1.0) * s1, alpha, beta);
}

__global__ void norm_bwd(NGeom g, NIn in, TV tdx, void *DX, void *DM, double alpha, double beta)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < g.n; p += (long long)gridDim.x * blockDim.x) {
        long long base, q;
        int i[3];
        split(g, p, base, i, q);
        /* j's forward window holds p  <=>  j in [p - hi, p - lo] per axis */
        double t = 0.0, tm = 0.0;
        int b0[3], b1[3];
        for (int k = 0; k < 3; k++) {
            b0[k] = max(i[k] - g.hi[k], 0);
            b1[k] = min(i[k] - g.lo[k], g.ax[k] - 1);
        }
        for (int a = b0[0]; a <= b1[0]; a++) {
            for (int b = b0[1]; b <= b1[1]; b++) {
                for (int c = b0[2]; c <= b1[2]; c++) {
                    const long long j = join(g, base, a, b, c, q);
                    const double tj = ldv(in.DY, in.tdy.dtype, off_lin(in.tdy, j)) * x_at(in, j) * pow(s_at(g, in, j), -g.beta - 1.0);
                    t += tj;
                    if (in.M) tm += tj * m_at(in, j);
                }
            }
        }
        finish_bwd(g, in, p, t, tm, tdx, DX, DM, alpha, beta);
    }
}

/* Scratch for the two-pass backward of divisive normalisation, kept in the caller's temp and
 * temp2 buffers (each at least xDesc's size): DOUBLE/FLOAT store t in temp in that type;
 * 16-bit types store the float bits split over temp (high half) and temp2 (low half). */
__device__ __forceinline__ void tmp_st(void *T1, void *T2, int dt, long long p, double v)
{
    if (dt == CUDNN_DATA_DOUBLE) ((double *)T1)[p] = v;
    else if (dt == CUDNN_DATA_FLOAT) ((float *)T1)[p] = (float)v;
    else {
        const unsigned b = __float_as_uint((float)v);
        ((unsigned short *)T1)[p] = (unsigned short)(b >> 16);
        ((unsigned short *)T2)[p] = (unsigned short)(b & 0xffffu);
    }
}
__device__ __forceinline__ double tmp_ld(const void *T1, const void *T2, int dt, long long p)
{
    if (dt == CUDNN_DATA_DOUBLE) return ((const double *)T1)[p];
    if (dt == CUDNN_DATA_FLOAT) return ((const float *)T1)[p];
    return __uint_as_float(((unsigned)((const unsigned short *)T1)[p] << 16) | ((const unsigned short *)T2)[p]);
}

/* Pass 1: t_j = dy_j * x_j * D_j^(-beta-1) into the scratch. */
__global__ void norm_bwd_t(NGeom g, NIn in, void *T1, void *T2)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < g.n; p += (long long)gridDim.x * blockDim.x) {
        const double t = ldv(in.DY, in.tdy.dtype, off_lin(in.tdy, p)) * x_at(in, p) * pow(s_at(g, in, p), -g.beta - 1.0);
        tmp_st(T1, T2, in.tx.dtype, p, t);
    }
}

/* Pass 2: dx (reversed-window sums of t and t*m) and dm. */
__global__ void norm_bwd_du(NGeom g, NIn in, const void *T1, const void *T2, TV tdx, void *DX, void *DM, double alpha, double beta)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < g.n; p += (long long)gridDim.x * blockDim.x) {
        long long base, q;
        int i[3], b0[3], b1[3];
        split(g, p, base, i, q);
        for (int k = 0; k < 3; k++) {
            b0[k] = max(i[k] - g.hi[k], 0);
            b1[k] = min(i[k] - g.lo[k], g.ax[k] - 1);
        }
        double t = 0.0, tm = 0.0;
        for (int a = b0[0]; a <= b1[0]; a++)
            for (int b = b0[1]; b <= b1[1]; b++)
                for (int c = b0[2]; c <= b1[2]; c++) {
                    const long long j = join(g, base, a, b, c, q);
                    const double tj = tmp_ld(T1, T2, in.tx.dtype, j);
                    t += tj;
                    if (in.M) tm += tj * m_at(in, j);
                }
        finish_bwd(g, in, p, t, tm, tdx, DX, DM, alpha, beta);
    }
}

NGeom make_ngeom(const struct cudnnTensorStruct *t, const struct cudnnLRNStruct *d, bool divnorm)
{
    NGeom g;
    int win[3];
    if (!divnorm) {
        g.outer = t->dim[0];
        g.inner = 1;
        for (int i = 2; i < t->nb_dims; i++) g.inner *= t->dim[i];
        g.ax[0] = t->dim[1]; g.ax[1] = 1; g.ax[2] = 1;
        win[0] = (int)d->n; win[1] = 1; win[2] = 1;
    } else {
        const bool five = t->nb_dims == 5;
        g.outer = (long long)t->dim[0] * t->dim[1];
        g.inner = 1;
        g.ax[0] = five ? t->dim[2] : 1;
        g.ax[1] = t->dim[t->nb_dims - 2];
        g.ax[2] = t->dim[t->nb_dims - 1];
        win[0] = five ? (int)d->n : 1;
        win[1] = win[2] = (int)d->n;
    }
    for (int i = 0; i < 3; i++) {
        const int behind = (win[i] - 1) / 2, ahead = win[i] - 1 - behind;
        g.lo[i] = -behind;
        g.hi[i] = ahead;
    }
    g.n = g.outer * g.ax[0] * g.ax[1] * g.ax[2] * g.inner;
    g.k = d->k;
    g.beta = d->beta;
    g.sc = d->alpha / ((double)win[0] * win[1] * win[2]);
    return g;
}

NIn make_in(const struct cudnnTensorStruct *x, const void *X, const void *M, const struct cudnnTensorStruct *dy, const void *DY)
{
    NIn in;
    in.tx = make_tv(x);
    in.tm = in.tx;
    in.tdy = dy ? make_tv(dy) : in.tx;
    in.X = X;
    in.M = M;
    in.DY = DY;
    return in;
}

} /* namespace */

extern "C" cudnnStatus_t fdnn_cuda_norm_fwd(cudnnHandle_t h, const struct cudnnLRNStruct *d, int divnorm, double alpha,
                                            const struct cudnnTensorStruct *x, const void *X, const void *means, double beta,
                                            const struct cudnnTensorStruct *y, void *Y)
{
    NGeom g = make_ngeom(x, d, divnorm != 0);
    if (g.n <= 0) return CUDNN_STATUS_SUCCESS;
    norm_fwd<<<grid_for(g.n, 256), 256, 0, (cudaStream_t)h->stream>>>(g, make_in(x, X, means, NULL, NULL), make_tv(y), Y, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "norm_fwd");
}

extern "C" cudnnStatus_t fdnn_cuda_norm_bwd(cudnnHandle_t h, const struct cudnnLRNStruct *d, int divnorm, double alpha,
                                            const struct cudnnTensorStruct *x, const void *X, const void *means,
                                            const struct cudnnTensorStruct *dy, const void *DY, double beta,
                                            const struct cudnnTensorStruct *dx, void *DX, void *dMeans, void *temp, void *temp2)
{
    NGeom g = make_ngeom(x, d, divnorm != 0);
    if (g.n <= 0) return CUDNN_STATUS_SUCCESS;
    const bool scratch_fits = temp && temp2 && fdnn_tensor_span(x) >= g.n &&
                              (x->dtype == CUDNN_DATA_FLOAT || x->dtype == CUDNN_DATA_DOUBLE || x->dtype == CUDNN_DATA_HALF ||
                               x->dtype == CUDNN_DATA_BFLOAT16);
    if (scratch_fits) {
        const NIn in = make_in(x, X, means, dy, DY);
        cudaStream_t st = (cudaStream_t)h->stream;
        norm_bwd_t<<<grid_for(g.n, 256), 256, 0, st>>>(g, in, temp, temp2);
        cudnnStatus_t s1 = fdnn_cuda_check(cudaGetLastError(), "norm_bwd_t");
        if (s1 != CUDNN_STATUS_SUCCESS) return s1;
        norm_bwd_du<<<grid_for(g.n, 256), 256, 0, st>>>(g, in, temp, temp2, make_tv(dx), DX, dMeans, alpha, beta);
        return fdnn_cuda_check(cudaGetLastError(), "norm_bwd_du");
    }
    norm_bwd<<<grid_for(g.n, 128), 128, 0, (cudaStream_t)h->stream>>>(g, make_in(x, X, means, dy, DY), make_tv(dx), DX, dMeans, alpha,
                                                                     beta);
    return fdnn_cuda_check(cudaGetLastError(), "norm_bwd");
}
