/* cudnnReduceTensor on the GPU with the CPU backend's semantics: every op (ADD, MUL, MIN,
 * MAX, AMAX, AVG, NORM1, NORM2, MUL_NO_ZEROS), 32-bit flattened indices (position within the
 * reduced dims, row-major; ties and NaN: the first occurrence), NaN handling as on the CPU.
 * Deterministic: a short reduction runs sequentially in one thread per output; a long one
 * uses one block per output, each thread folding a fixed strided subset, then a fixed
 * shared-memory tree. No workspace is needed. Computed in double. */
#include <math.h>
#include "ops_dev.cuh"

using namespace fdnn_ops;

namespace {

struct RGeom {
    int op, prop, nd, rk;
    int cdim[CUDNN_DIM_MAX];     /* C's dims (logical output index) */
    int rdim[CUDNN_DIM_MAX], rpos[CUDNN_DIM_MAX];
    long long rn, cn;
};

struct RState {
    double acc;
    long long best;
    int seen, nan;
};

__device__ __forceinline__ bool is_arg(int op)
{
    return op == CUDNN_REDUCE_TENSOR_MIN || op == CUDNN_REDUCE_TENSOR_MAX || op == CUDNN_REDUCE_TENSOR_AMAX;
}

__device__ __forceinline__ RState r_init(int op)
{
    RState s;
    s.acc = (op == CUDNN_REDUCE_TENSOR_MUL || op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS) ? 1.0 : 0.0;
    s.best = 0;
    s.seen = 0;
    s.nan = 0;
    return s;
}

__device__ __forceinline__ bool better(int op, double a, double b) { return op == CUDNN_REDUCE_TENSOR_MIN ? a < b : a > b; }

__device__ __forceinline__ void r_add(const RGeom &g, RState &s, double v, long long r)
{
    switch (g.op) {
    case CUDNN_REDUCE_TENSOR_ADD:
    case CUDNN_REDUCE_TENSOR_AVG: s.acc += v; break;
    case CUDNN_REDUCE_TENSOR_MUL: s.acc *= v; break;
    case CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS: if (v != 0) s.acc *= v; break;
    case CUDNN_REDUCE_TENSOR_NORM1: s.acc += fabs(v); break;
    case CUDNN_REDUCE_TENSOR_NORM2: s.acc += v * v; break;
    default:
        if (g.op == CUDNN_REDUCE_TENSOR_AMAX) v = fabs(v);
        if (s.nan) return;
        if (v != v) {
            if (g.prop) { s.nan = 1; s.acc = v; s.best = r; s.seen = 1; }
            return;
        }
        if (!s.seen || better(g.op, v, s.acc)) { s.acc = v; s.best = r; s.seen = 1; }
    }
}

/* Combine two partial states over disjoint index sets (result as if in index order). */
__device__ __forceinline__ RState r_comb(const RGeom &g, const RState &a, const RState &b)
{
    if (!is_arg(g.op)) {
        RState s = a;
        if (g.op == CUDNN_REDUCE_TENSOR_MUL || g.op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS) s.acc = a.acc * b.acc;
        else s.acc = a.acc + b.acc;
        return s;
    }
    if (a.nan || b.nan) {
        if (a.nan && b.nan) return a.best <= b.best ? a : b;
        return a.nan ? a : b;
    }
    if (!a.seen) return b;
    if (!b.seen) return a;
    if (better(g.op, b.acc, a.acc)) return b;
    if (better(g.op, a.acc, b.acc)) return a;
    return a.best <= b.best ? a : b;
}

/* A's offset of reduced element r for output ci. */
__device__ __forceinline__ long long a_off(const RGeom &g, const TV &ta, const int *cidx, long long r)
{
    int idx[CUDNN_DIM_MAX];
    for (int i = 0; i < g.nd; i++) idx[i] = cidx[i];
    for (int j = g.rk - 1; j >= 0; j--) {
        idx[g.rpos[j]] = (int)(r % g.rdim[j]);
        r /= g.rdim[j];
    }
    return off_idx(ta, idx);
}

__device__ __forceinline__ void r_finish(const RGeom &g, const RState &s, long long ci, TV tc, void *C, int *ind, double alpha, double beta)
{
    double acc = s.acc;
    if (g.op == CUDNN_REDUCE_TENSOR_AVG) acc /= (double)g.rn;
    else if (g.op == CUDNN_REDUCE_TENSOR_NORM2) acc = sqrt(acc);
    else if (is_arg(g.op)) {
        if (!s.seen) acc = __longlong_as_double(0x7ff8000000000000LL);
        if (ind) ind[ci] = (int)(s.seen ? s.best : 0);
    }
    blendv(C, tc.dtype, off_lin(tc, ci), acc, alpha, beta);
}

__device__ __forceinline__ void c_unravel(const RGeom &g, long long ci, int *cidx)
{
    for (int i = g.nd - 1; i >= 0; i--) { cidx[i] = (int)(ci % g.cdim[i]); ci /= g.cdim[i]; }
}

__global__ void reduce_thread(RGeom g, TV ta, const void *A, TV tc, void *C, int *ind, double alpha, double beta)
{
    for (long long ci = blockIdx.x * (long long)blockDim.x + threadIdx.x; ci < g.cn; ci += (long long)gridDim.x * blockDim.x) {
        int cidx[CUDNN_DIM_MAX];
        c_unravel(g, ci, cidx);
        RState s = r_init(g.op);
        for (long long r = 0; r < g.rn; r++) {
            r_add(g, s, ldv(A, ta.dtype, a_off(g, ta, cidx, r)), r);
            if (s.nan) break;
        }
        r_finish(g, s, ci, tc, C, ind, alpha, beta);
    }
}

const int R_BLOCK = 256;

__global__ void reduce_block(RGeom g, TV ta, const void *A, TV tc, void *C, int *ind, double alpha, double beta)
{
    __shared__ RState sh[R_BLOCK];
    for (long long ci = blockIdx.x; ci < g.cn; ci += gridDim.x) {
        int cidx[CUDNN_DIM_MAX];
        c_unravel(g, ci, cidx);
        RState s = r_init(g.op);
        /* interleaved subsets (coalesced); r_comb breaks ties by index, so order is fixed */
        for (long long r = threadIdx.x; r < g.rn; r += blockDim.x) {
            r_add(g, s, ldv(A, ta.dtype, a_off(g, ta, cidx, r)), r);
            if (s.nan) break;
        }
        sh[threadIdx.x] = s;
        __syncthreads();
        for (int k = blockDim.x / 2; k > 0; k >>= 1) {
            if ((int)threadIdx.x < k) sh[threadIdx.x] = r_comb(g, sh[threadIdx.x], sh[threadIdx.x + k]);
            __syncthreads();
        }
        if (threadIdx.x == 0) r_finish(g, sh[0], ci, tc, C, ind, alpha, beta);
        __syncthreads();
    }
}

} /* namespace */

extern "C" cudnnStatus_t fdnn_cuda_reduce_tensor(cudnnHandle_t h, int op, int propagate_nan, int *indices, double alpha,
                                                 const struct cudnnTensorStruct *a, const void *A, double beta,
                                                 const struct cudnnTensorStruct *c, void *C)
{
    RGeom g;
    g.op = op;
    g.prop = propagate_nan;
    g.nd = a->nb_dims;
    g.rk = 0;
    g.rn = 1;
    g.cn = 1;
    for (int i = 0; i < g.nd; i++) {
        g.cdim[i] = c->dim[i];
        g.cn *= c->dim[i];
        if (c->dim[i] == 1 && a->dim[i] != 1) {
            g.rdim[g.rk] = a->dim[i];
            g.rpos[g.rk++] = i;
            g.rn *= a->dim[i];
        }
    }
    if (g.cn <= 0) return CUDNN_STATUS_SUCCESS;
    cudaStream_t st = (cudaStream_t)h->stream;
    /* block per output when each reduction is long and outputs too few to fill the GPU with threads */
    if (g.rn >= 256 && g.cn < 262144) {
        unsigned grid = (unsigned)(g.cn < 65535LL * 16 ? g.cn : 65535LL * 16);
        reduce_block<<<grid, R_BLOCK, 0, st>>>(g, make_tv(a), A, make_tv(c), C, indices, alpha, beta);
        return fdnn_cuda_check(cudaGetLastError(), "reduce_block");
    }
    reduce_thread<<<grid_for(g.cn, 128), 128, 0, st>>>(g, make_tv(a), A, make_tv(c), C, indices, alpha, beta);
    return fdnn_cuda_check(cudaGetLastError(), "reduce_thread");
}
