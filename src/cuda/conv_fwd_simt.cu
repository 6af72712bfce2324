/* Forward convolution as a tiled implicit GEMM on CUDA cores (FLOAT, DOUBLE; HALF and BFLOAT16
 * with float accumulation; INT8 with int32 accumulation and INT8 or FLOAT output): a 64x64 output
 * tile per block of 256 threads, each thread owning a 4x4 register block, reduction in steps of
 * BK through shared memory. x is gathered through its strides (im2col on the fly), so every
 * layout, padding, stride, dilation and group count works. Deterministic: the summation order
 * is fixed by the tile shapes. */
#include "conv_igemm_common.h"

using namespace fdnn_dev;

namespace {

constexpr int BM = 64, BN = 64, BK = 8, NT = 256, TM = 4, TN = 4;

template <typename T, typename TY, typename ACC>
__global__ void __launch_bounds__(NT, 2)
conv_fwd_simt_kernel(ConvGeom G, const T *__restrict__ x, const T *__restrict__ w, TY *y, double alpha, double beta,
                     long long M, int Kdim, int cfast)
{
    __shared__ RowInfo<BM> R;
    __shared__ ACC As[BK][BM];
    __shared__ ACC Bs[BK][BN];
    const int gi = blockIdx.z;
    const long long m0 = (long long)blockIdx.x * BM;
    const int n0 = blockIdx.y * BN;
    const int tid = threadIdx.x;
    fill_rows<BM>(R, G, m0, M, gi);
    __syncthreads();

    const int lk = tid % BK;   /* this thread's reduction column in the tiles */
    const int lr = tid / BK;   /* 0..31: first row / column it loads */
    const int tx = tid % 16, ty = tid / 16;
    ACC acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = ACC(0);

    const T *wg = w + (long long)gi * G.kg * G.ws[0];
    for (int k0 = 0; k0 < Kdim; k0 += BK) {
        const KdInfo K = decode_kd(G, k0 + lk, Kdim, cfast);
#pragma unroll
        for (int i = 0; i < BM / (NT / BK); i++) {
            const int row = lr + i * (NT / BK);
            const T v = load_x<BM, T>(x, R, row, K, G);
            As[lk][row] = (ACC)ld(&v);
        }
#pragma unroll
        for (int i = 0; i < BN / (NT / BK); i++) {
            const int col = lr + i * (NT / BK);
            const int kk = n0 + col;
            Bs[lk][col] = (K.valid && kk < G.kg) ? (ACC)ld(wg + kk * G.ws[0] + K.woff) : ACC(0);
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
        if (R.ybase[row] < 0) continue;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            const int kk = n0 + tx + 16 * j;
            if (kk >= G.kg) continue;
            const long long k = (long long)gi * G.kg + kk;
            blend(y + R.ybase[row] + k * G.ys[1], acc[i][j], alpha, beta);
        }
    }
}

template <typename T, typename TY, typename ACC>
cudnnStatus_t launch(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    ConvGeom G = make_geom(p);
    const long long M = (long long)G.n * G.out[0] * G.out[1] * G.out[2];
    const int Kdim = G.cg * G.flt[0] * G.flt[1] * G.flt[2];
    if (M == 0 || G.kg == 0) return CUDNN_STATUS_SUCCESS;
    const int cfast = p->xs[1] == 1 && G.cg > 1;
    dim3 grid((unsigned)((M + BM - 1) / BM), (unsigned)((G.kg + BN - 1) / BN), (unsigned)G.g);
    conv_fwd_simt_kernel<T, TY, ACC><<<grid, NT, 0, (cudaStream_t)h->stream>>>(G, (const T *)a->x, (const T *)a->w,
                                                                                (TY *)a->out, a->alpha, a->beta, M, Kdim, cfast);
    return fdnn_cuda_check(cudaGetLastError(), "conv_fwd_simt_kernel");
}

} /* namespace */

extern "C" cudnnStatus_t fdnn_cuda_conv_fwd_simt_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    if (p->xtype == CUDNN_DATA_INT8 && p->wtype == CUDNN_DATA_INT8) {
        if (p->ytype == CUDNN_DATA_INT8) return launch<int8_t, int8_t, int>(h, p, a);
        if (p->ytype == CUDNN_DATA_FLOAT) return launch<int8_t, float, int>(h, p, a);
    } else if (p->xtype == p->wtype && p->xtype == p->ytype) {
        switch (p->xtype) {
        case CUDNN_DATA_FLOAT: return launch<float, float, float>(h, p, a);
        case CUDNN_DATA_DOUBLE: return launch<double, double, double>(h, p, a);
        case CUDNN_DATA_HALF: return launch<__half, __half, float>(h, p, a);
        case CUDNN_DATA_BFLOAT16: return launch<__nv_bfloat16, __nv_bfloat16, float>(h, p, a);
        default: break;
        }
    }
    return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "conv_fwd__implicit_gemm_simt: data types x=%s w=%s y=%s are not implemented",
                     fdnn_dtype_name(p->xtype), fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
}
