/* cudnnTransformTensorEx / cudnnTransformFilter on the GPU: dest = alpha*T(src) + beta*dest
 * with T = fold(pad(.)) or its inverse, exactly as the CPU backend defines it (see
 * src/api/transform.c). One thread per destination element computes the source element it
 * holds (or zero for padding / positions past the source) and blends it; both operands are
 * addressed through their strides (NCHW_VECT_C included). Deterministic, no scratch. */
#include "ops_dev.cuh"

using namespace fdnn_ops;

namespace {

struct XGeom {
    int nb, fold_dir;
    long long F;
    int pad_before[CUDNN_DIM_MAX], fold[CUDNN_DIM_MAX], sdim[CUDNN_DIM_MAX];
};

__global__ void transform_ex(XGeom g, TV ts, const void *S, TV td, void *D, long long n, double alpha, double beta)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        int di[CUDNN_DIM_MAX], si[CUDNN_DIM_MAX];
        long long r = i;
        for (int k = g.nb - 1; k >= 0; k--) { di[k] = (int)(r % td.dim[k]); r /= td.dim[k]; }
        bool ok = true;
        if (g.fold_dir) {
            const long long cp = td.dim[1] / g.F; /* padded source channels (phase-major, transform.c) */
            long long q = di[1] / cp;
            si[1] = (int)(di[1] % cp);
            si[0] = di[0];
            for (int k = g.nb - 1; k >= 2; k--) {
                const int rk = (int)(q % g.fold[k]);
                q /= g.fold[k];
                si[k] = di[k] * g.fold[k] + rk;
            }
            for (int k = 0; k < g.nb; k++) {
                si[k] -= g.pad_before[k];
                if (si[k] < 0 || si[k] >= g.sdim[k]) ok = false;
            }
        } else {
            int u[CUDNN_DIM_MAX];
            for (int k = 0; k < g.nb; k++) u[k] = di[k] + g.pad_before[k];
            long long q = 0;
            for (int k = 2; k < g.nb; k++) {
                q = q * g.fold[k] + u[k] % g.fold[k];
                si[k] = u[k] / g.fold[k];
            }
            const long long cu = g.sdim[1] / g.F; /* channels of one phase of the folded source */
            si[0] = u[0];
            si[1] = (int)(q * cu + u[1]);
            if (u[1] >= cu) ok = false;
            for (int k = 0; k < g.nb; k++)
                if (si[k] >= g.sdim[k]) ok = false;
        }
        const double v = ok ? ldv(S, ts.dtype, off_idx(ts, si)) : 0.0;
        blendv(D, td.dtype, off_idx(td, di), v, alpha, beta);
    }
}

} /* namespace */

extern "C" cudnnStatus_t fdnn_cuda_transform_ex(cudnnHandle_t h, const struct cudnnTensorTransformStruct *d, double alpha,
                                                const struct cudnnTensorStruct *s, const void *S, double beta,
                                                const struct cudnnTensorStruct *t, void *D)
{
    XGeom g;
    g.nb = s->nb_dims;
    g.fold_dir = d->direction == CUDNN_TRANSFORM_FOLD;
    g.F = 1;
    for (int i = 2; i < d->nb_dims; i++) g.F *= d->fold[i];
    for (int i = 0; i < CUDNN_DIM_MAX; i++) {
        g.pad_before[i] = i < g.nb ? d->pad_before[i] : 0;
        g.fold[i] = i < g.nb && d->fold[i] > 0 ? (int)d->fold[i] : 1;
        g.sdim[i] = i < g.nb ? s->dim[i] : 1;
    }
    const long long n = fdnn_tensor_elems(t);
    if (n <= 0) return CUDNN_STATUS_SUCCESS;
    transform_ex<<<grid_for(n, 256), 256, 0, (cudaStream_t)h->stream>>>(g, make_tv(s), S, make_tv(t), D, n, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "transform_ex");
}
