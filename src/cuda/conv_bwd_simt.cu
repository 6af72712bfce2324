/* Backward convolutions as tiled implicit GEMMs on CUDA cores (FLOAT, DOUBLE, HALF, BFLOAT16;
 * float accumulation except double for DOUBLE). 64x64 tiles, 256 threads, 4x4 per thread, BK=8.
 *
 * Backward data, per group gi:  rows m = (n, id, ih, iw) of dx, cols = c within the group,
 *   reduction kd = (k within group, t, r, s):
 *   dx[m, c] = sum_kd dy[n, k, o] * w[k, c, t', r', s'] where o = (i + pad - tap*dil) / stride
 *   when that division is exact and in range (0 otherwise). Any stride; deterministic.
 * Backward filter, per group gi: rows = k within the group, cols j = (c, t, r, s),
 *   reduction q = (n, od, oh, ow): dw[k, j] = sum_q dy[n, k, o] * x[n, c, o*stride - pad + tap*dil].
 *   The reduction is split into a fixed number of slices (a function of the shape only) whose
 *   partial sums go to the workspace and are added in slice order by a second kernel, so the
 *   result is deterministic. */
#include "conv_igemm_common.h"

using namespace fdnn_dev;

namespace {

constexpr int BM = 64, BN = 64, BK = 8, NT = 256, TM = 4, TN = 4;

/* --------------------------------------------------------------------------- bwd data */
struct DxRows {
    long long xbase[BM];   /* n*xs0 + id*xs2 + ih*xs3 + iw*xs4 (without the channel); -1 past M */
    long long ybase[BM];   /* n*ys0 + gi*kg*ys1 */
    int d[BM], h[BM], w[BM]; /* i + pad */
};

template <typename T, typename ACC>
__global__ void __launch_bounds__(NT, 2)
conv_bwd_data_simt_kernel(ConvGeom G, T *dx, const T *__restrict__ w, const T *__restrict__ dy, double alpha, double beta,
                          long long M, int Kdim, int kfast)
{
    __shared__ DxRows R;
    __shared__ ACC As[BK][BM];
    __shared__ ACC Bs[BK][BN];
    const int gi = blockIdx.z;
    const long long m0 = (long long)blockIdx.x * BM;
    const int n0 = blockIdx.y * BN;
    const int tid = threadIdx.x;
    for (int i = tid; i < BM; i += NT) {
        const long long m = m0 + i;
        if (m < M) {
            long long r = m;
            const int iw = (int)(r % G.in[2]); r /= G.in[2];
            const int ih = (int)(r % G.in[1]); r /= G.in[1];
            const int id = (int)(r % G.in[0]);
            const int n = (int)(r / G.in[0]);
            R.xbase[i] = n * G.xs[0] + id * G.xs[2] + ih * G.xs[3] + iw * G.xs[4];
            R.ybase[i] = n * G.ys[0] + (long long)gi * G.kg * G.ys[1];
            R.d[i] = id + G.pad[0]; R.h[i] = ih + G.pad[1]; R.w[i] = iw + G.pad[2];
        } else {
            R.xbase[i] = -1; R.ybase[i] = 0; R.d[i] = R.h[i] = R.w[i] = 0;
        }
    }
    __syncthreads();
    const int lk = tid % BK, lr = tid / BK;
    const int tx = tid % 16, ty = tid / 16;
    ACC acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = ACC(0);
    const T *wg = w + (long long)gi * G.kg * G.ws[0];
    const int T0 = G.flt[0], R1 = G.flt[1], S2 = G.flt[2];
    for (int k0 = 0; k0 < Kdim; k0 += BK) {
        /* decode kd = (k, t, r, s) (k fastest when dy is channels-last) */
        const int kd = k0 + lk;
        const bool kv = kd < Kdim;
        int k = 0, t = 0, r = 0, s = 0;
        if (kv) {
            int q = kd;
            if (kfast) { k = q % G.kg; q /= G.kg; s = q % S2; q /= S2; r = q % R1; t = q / R1; }
            else { s = q % S2; q /= S2; r = q % R1; q /= R1; t = q % T0; k = q / T0; }
        }
        const int tf = G.flip ? T0 - 1 - t : t, rf = G.flip ? R1 - 1 - r : r, sf = G.flip ? S2 - 1 - s : s;
        const long long woff = k * G.ws[0] + tf * G.ws[2] + rf * G.ws[3] + sf * G.ws[4];
        const long long yk = k * G.ys[1];
        const int td = t * G.dil[0], rd = r * G.dil[1], sd = s * G.dil[2];
#pragma unroll
        for (int i = 0; i < BM / (NT / BK); i++) {
            const int row = lr + i * (NT / BK);
            ACC v = ACC(0);
            if (kv && R.xbase[row] >= 0) {
                const int nd = R.d[row] - td, nh = R.h[row] - rd, nw = R.w[row] - sd;
                if (nd >= 0 && nh >= 0 && nw >= 0 && nd % G.str[0] == 0 && nh % G.str[1] == 0 && nw % G.str[2] == 0) {
                    const int od = nd / G.str[0], oh = nh / G.str[1], ow = nw / G.str[2];
                    if (od < G.out[0] && oh < G.out[1] && ow < G.out[2])
                        v = (ACC)ld(dy + R.ybase[row] + yk + od * G.ys[2] + oh * G.ys[3] + ow * G.ys[4]);
                }
            }
            As[lk][row] = v;
        }
#pragma unroll
        for (int i = 0; i < BN / (NT / BK); i++) {
            const int col = lr + i * (NT / BK);
            const int c = n0 + col;
            Bs[lk][col] = (kv && c < G.cg) ? (ACC)ld(wg + woff + c * G.ws[1]) : ACC(0);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            ACC a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++) a[i] = As[kk][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < TN; j++) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++) {
        const int row = ty + 16 * i;
        if (R.xbase[row] < 0) continue;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            const int c = n0 + tx + 16 * j;
            if (c >= G.cg) continue;
            blend(dx + R.xbase[row] + ((long long)gi * G.cg + c) * G.xs[1], acc[i][j], alpha, beta);
        }
    }
}

/* ------------------------------------------------------------------------- bwd filter */
struct DwCols {
    long long xoff[BN];    /* (gi*cg + c)*xs1; -1 past the column count */
    long long woff[BN];    /* offset of dw[., c, t', r', s'] without the k part */
    int td[BN], rd[BN], sd[BN];
};

/* Output of a slice: either dw directly (one slice) or the workspace partial buffer laid out
 * [slice][k][j] with j = (c, t', r', s') in filter order. */
template <typename T, typename ACC>
__global__ void __launch_bounds__(NT, 2)
conv_bwd_filter_simt_kernel(ConvGeom G, T *dw, const T *__restrict__ x, const T *__restrict__ dy, double alpha, double beta,
                            long long NP, int splits, long long slice, ACC *part)
{
    __shared__ DwCols Cc;
    __shared__ ACC As[BK][BM];
    __shared__ ACC Bs[BK][BN];
    const int gi = blockIdx.z / splits, sp = blockIdx.z % splits;
    const int m0 = blockIdx.x * BM;   /* k within group */
    const int n0 = blockIdx.y * BN;   /* j */
    const int tid = threadIdx.x;
    const int T0 = G.flt[0], R1 = G.flt[1], S2 = G.flt[2];
    const int J = G.cg * T0 * R1 * S2;
    for (int i = tid; i < BN; i += NT) {
        const int j = n0 + i;
        if (j < J) {
            int q = j;
            const int sf = q % S2; q /= S2;
            const int rf = q % R1; q /= R1;
            const int tf = q % T0;
            const int c = q / T0;
            const int t = G.flip ? T0 - 1 - tf : tf, r = G.flip ? R1 - 1 - rf : rf, s = G.flip ? S2 - 1 - sf : sf;
            Cc.xoff[i] = ((long long)gi * G.cg + c) * G.xs[1];
            Cc.woff[i] = c * G.ws[1] + tf * G.ws[2] + rf * G.ws[3] + sf * G.ws[4];
            Cc.td[i] = t * G.dil[0]; Cc.rd[i] = r * G.dil[1]; Cc.sd[i] = s * G.dil[2];
        } else {
            Cc.xoff[i] = -1; Cc.woff[i] = 0; Cc.td[i] = Cc.rd[i] = Cc.sd[i] = 0;
        }
    }
    __syncthreads();
    const int lk = tid % BK, lr = tid / BK;
    const int tx = tid % 16, ty = tid / 16;
    ACC acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = ACC(0);
    const long long q0 = sp * slice, q1 = q0 + slice < NP ? q0 + slice : NP;
    for (long long qb = q0; qb < q1; qb += BK) {
        const long long q = qb + lk;
        const bool qv = q < q1;
        int n = 0, od = 0, oh = 0, ow = 0;
        if (qv) {
            long long r = q;
            ow = (int)(r % G.out[2]); r /= G.out[2];
            oh = (int)(r % G.out[1]); r /= G.out[1];
            od = (int)(r % G.out[0]);
            n = (int)(r / G.out[0]);
        }
        const long long ybase = n * G.ys[0] + od * G.ys[2] + oh * G.ys[3] + ow * G.ys[4] + (long long)gi * G.kg * G.ys[1];
        const long long xbase = n * G.xs[0];
        const int d0 = od * G.str[0] - G.pad[0], h0 = oh * G.str[1] - G.pad[1], w0 = ow * G.str[2] - G.pad[2];
#pragma unroll
        for (int i = 0; i < BM / (NT / BK); i++) {
            const int row = lr + i * (NT / BK);
            const int k = m0 + row;
            As[lk][row] = (qv && k < G.kg) ? (ACC)ld(dy + ybase + k * G.ys[1]) : ACC(0);
        }
#pragma unroll
        for (int i = 0; i < BN / (NT / BK); i++) {
            const int col = lr + i * (NT / BK);
            ACC v = ACC(0);
            if (qv && Cc.xoff[col] >= 0) {
                const int d = d0 + Cc.td[col], h = h0 + Cc.rd[col], ww = w0 + Cc.sd[col];
                if ((unsigned)d < (unsigned)G.in[0] && (unsigned)h < (unsigned)G.in[1] && (unsigned)ww < (unsigned)G.in[2])
                    v = (ACC)ld(x + xbase + Cc.xoff[col] + d * G.xs[2] + h * G.xs[3] + ww * G.xs[4]);
            }
            Bs[lk][col] = v;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            ACC a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++) a[i] = As[kk][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < TN; j++) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++) {
        const int k = m0 + ty + 16 * i;
        if (k >= G.kg) continue;
        const long long kg = (long long)gi * G.kg + k;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            const int col = tx + 16 * j;
            if (n0 + col >= J) continue;
            if (splits == 1) blend(dw + kg * G.ws[0] + Cc.woff[col], acc[i][j], alpha, beta);
            else part[((long long)sp * G.k + kg) * J + n0 + col] = acc[i][j];
        }
    }
}

/* dw = alpha * sum over slices (in slice order) + beta * dw. */
template <typename T, typename ACC>
__global__ void conv_bwd_filter_reduce_kernel(ConvGeom G, T *dw, const ACC *__restrict__ part, int splits, double alpha, double beta)
{
    const int T0 = G.flt[0], R1 = G.flt[1], S2 = G.flt[2];
    const long long J = (long long)G.cg * T0 * R1 * S2, total = (long long)G.k * J;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
        ACC sum = part[e];
        for (int s = 1; s < splits; s++) sum += part[(long long)s * total + e];
        const long long k = e / J;
        int q = (int)(e % J);
        const int sf = q % S2; q /= S2;
        const int rf = q % R1; q /= R1;
        const int tf = q % T0;
        const int c = q / T0;
        blend(dw + k * G.ws[0] + c * G.ws[1] + tf * G.ws[2] + rf * G.ws[3] + sf * G.ws[4], sum, alpha, beta);
    }
}

/* Number of reduction slices: enough blocks to fill a large GPU (~2 waves of 132 SMs), each
 * slice at least 256 reduction steps, gridDim.z = g*splits <= 65535. Shape-only, so the
 * workspace query and the run agree. */
int bwf_splits(const fdnn_conv_problem *p)
{
    const long long kg = p->k / p->g, J = (long long)(p->c / p->g) * p->flt[0] * p->flt[1] * p->flt[2];
    const long long NP = (long long)p->n * p->out[0] * p->out[1] * p->out[2];
    const long long tiles = ((kg + BM - 1) / BM) * ((J + BN - 1) / BN) * p->g;
    long long s = (264 + tiles - 1) / tiles;
    const long long maxs = (NP + 255) / 256;
    if (s > maxs) s = maxs;
    if (s > 65535 / p->g) s = 65535 / p->g;
    if (s > 64) s = 64;
    return s < 1 ? 1 : (int)s;
}

size_t acc_size(cudnnDataType_t t) { return t == CUDNN_DATA_DOUBLE ? sizeof(double) : sizeof(float); }

template <typename T, typename ACC>
cudnnStatus_t launch_bwd_data(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    ConvGeom G = make_geom(p);
    const long long M = (long long)G.n * G.in[0] * G.in[1] * G.in[2];
    const int Kdim = G.kg * G.flt[0] * G.flt[1] * G.flt[2];
    if (M == 0 || G.cg == 0) return CUDNN_STATUS_SUCCESS;
    const int kfast = p->ys[1] == 1 && G.kg > 1;
    dim3 grid((unsigned)((M + BM - 1) / BM), (unsigned)((G.cg + BN - 1) / BN), (unsigned)G.g);
    conv_bwd_data_simt_kernel<T, ACC><<<grid, NT, 0, (cudaStream_t)h->stream>>>(G, (T *)a->out, (const T *)a->w,
                                                                                (const T *)a->y, a->alpha, a->beta, M, Kdim, kfast);
    return fdnn_cuda_check(cudaGetLastError(), "conv_bwd_data_simt_kernel");
}

template <typename T, typename ACC>
cudnnStatus_t launch_bwd_filter(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    ConvGeom G = make_geom(p);
    const long long NP = (long long)G.n * G.out[0] * G.out[1] * G.out[2];
    const long long J = (long long)G.cg * G.flt[0] * G.flt[1] * G.flt[2];
    if (J == 0 || G.kg == 0) return CUDNN_STATUS_SUCCESS;
    const int splits = bwf_splits(p);
    const size_t need = splits > 1 ? (size_t)splits * G.k * J * sizeof(ACC) : 0;
    if (need > 0 && (a->workspace == NULL || a->workspace_size < need))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "conv_bwd_filter__implicit_gemm_simt needs %zu bytes of workspace (got %zu)", need,
                         a->workspace ? a->workspace_size : (size_t)0);
    long long slice = (NP + splits - 1) / splits;
    if (slice < 1) slice = 1;
    dim3 grid((unsigned)((G.kg + BM - 1) / BM), (unsigned)((J + BN - 1) / BN), (unsigned)(G.g * splits));
    conv_bwd_filter_simt_kernel<T, ACC><<<grid, NT, 0, (cudaStream_t)h->stream>>>(
        G, (T *)a->out, (const T *)a->x, (const T *)a->y, a->alpha, a->beta, NP, splits, slice, (ACC *)a->workspace);
    cudnnStatus_t st = fdnn_cuda_check(cudaGetLastError(), "conv_bwd_filter_simt_kernel");
    if (st != CUDNN_STATUS_SUCCESS || splits == 1) return st;
    const long long total = (long long)G.k * J;
    conv_bwd_filter_reduce_kernel<T, ACC><<<grid_for(total, 256), 256, 0, (cudaStream_t)h->stream>>>(
        G, (T *)a->out, (const ACC *)a->workspace, splits, a->alpha, a->beta);
    return fdnn_cuda_check(cudaGetLastError(), "conv_bwd_filter_reduce_kernel");
}

template <typename T, typename ACC>
cudnnStatus_t dispatch(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    if (p->dir == FDNN_CONV_BWD_DATA) return launch_bwd_data<T, ACC>(h, p, a);
    if (p->dir == FDNN_CONV_BWD_FILTER) return launch_bwd_filter<T, ACC>(h, p, a);
    return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "conv bwd SIMT: direction %d is not a backward direction", (int)p->dir);
}

} /* namespace */

extern "C" size_t fdnn_cuda_conv_bwd_filter_simt_workspace(const fdnn_conv_problem *p)
{
    if (p->g < 1) return 0;
    const int splits = bwf_splits(p);
    if (splits <= 1) return 0;
    const size_t J = (size_t)(p->c / p->g) * p->flt[0] * p->flt[1] * p->flt[2];
    return (size_t)splits * p->k * J * acc_size(p->xtype);
}

extern "C" cudnnStatus_t fdnn_cuda_conv_bwd_simt_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    switch (p->xtype) {
    case CUDNN_DATA_FLOAT: return dispatch<float, float>(h, p, a);
    case CUDNN_DATA_DOUBLE: return dispatch<double, double>(h, p, a);
    case CUDNN_DATA_HALF: return dispatch<__half, float>(h, p, a);
    case CUDNN_DATA_BFLOAT16: return dispatch<__nv_bfloat16, float>(h, p, a);
    default: break;
    }
    return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "conv bwd SIMT: data type %s is not implemented", fdnn_dtype_name(p->xtype));
}
