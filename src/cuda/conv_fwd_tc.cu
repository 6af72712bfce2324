/* Forward convolution as a tensor-core implicit GEMM with float accumulation: HALF and
 * BFLOAT16 with WMMA 16x16x16 fragments, and FLOAT through TF32 (16x16x8, inputs rounded to
 * TF32's 10-bit mantissa) when the math type asks for tensor ops. A block of 4 warps computes a 64x64 output tile;
 * each warp owns 32x32 (2x2 fragments). Operands are gathered through the tensor strides into
 * shared memory (any layout, padding, stride, dilation, groups), the accumulators are staged
 * through shared memory for the alpha/beta epilogue and the strided store. Deterministic. */
#include <mma.h>
#include "conv_igemm_common.h"
#include "cuda_internal.h"

using namespace fdnn_dev;
using namespace nvcuda;

namespace {

constexpr int BM = 64, BN = 64, BK = 32, NT = 128;
constexpr int LDC = BN + 4;

/* Per-type fragment element type and WMMA K extent. */
template <typename T> struct TcTraits;
template <> struct TcTraits<__half> { typedef __half frag; static constexpr int WK = 16; };
template <> struct TcTraits<__nv_bfloat16> { typedef __nv_bfloat16 frag; static constexpr int WK = 16; };
template <> struct TcTraits<float> { typedef wmma::precision::tf32 frag; static constexpr int WK = 8; };

template <typename Frag>
__device__ __forceinline__ void to_tf32(Frag &f, float) {
    for (int t = 0; t < f.num_elements; t++) f.x[t] = wmma::__float_to_tf32(f.x[t]);
}
template <typename Frag, typename T>
__device__ __forceinline__ void to_tf32(Frag &, T) {}

template <typename T>
__global__ void __launch_bounds__(NT)
conv_fwd_tc_kernel(ConvGeom G, const T *__restrict__ x, const T *__restrict__ w, T *y, double alpha, double beta,
                   long long M, int Kdim, int cfast)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    typedef typename TcTraits<T>::frag FT;
    constexpr int WK = TcTraits<T>::WK;
    constexpr int PADE = 32 / sizeof(T);            /* 32 bytes of padding per row */
    constexpr int LDA = BK + PADE, LDB = BN + PADE;
    __shared__ RowInfo<BM> R;
    __shared__ __align__(32) T As[BM * LDA];
    __shared__ __align__(32) T Bs[BK * LDB];
    __shared__ __align__(32) float Cs[BM * LDC];
    const int gi = blockIdx.z;
    const long long m0 = (long long)blockIdx.x * BM;
    const int n0 = blockIdx.y * BN;
    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int wm = warp / 2, wn = warp % 2;
    fill_rows<BM>(R, G, m0, M, gi);
    __syncthreads();

    wmma::fragment<wmma::accumulator, 16, 16, WK, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);

    const int lk = tid % BK, lr = tid / BK;
    constexpr int RSTEP = NT / BK;
    const T *wg = w + (long long)gi * G.kg * G.ws[0];
    const T zero = T(0.0f);
    for (int k0 = 0; k0 < Kdim; k0 += BK) {
        const KdInfo K = decode_kd(G, k0 + lk, Kdim, cfast);
#pragma unroll 4
        for (int i = 0; i < BM / RSTEP; i++) {
            const int row = lr + i * RSTEP;
            As[row * LDA + lk] = load_x<BM, T>(x, R, row, K, G);
        }
#pragma unroll 4
        for (int i = 0; i < BN / RSTEP; i++) {
            const int col = lr + i * RSTEP;
            const int kk = n0 + col;
            Bs[lk * LDB + col] = (K.valid && kk < G.kg) ? wg[kk * G.ws[0] + K.woff] : zero;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += WK) {
            wmma::fragment<wmma::matrix_a, 16, 16, WK, FT, wmma::row_major> af[2];
            wmma::fragment<wmma::matrix_b, 16, 16, WK, FT, wmma::row_major> bf[2];
#pragma unroll
            for (int i = 0; i < 2; i++) {
                wmma::load_matrix_sync(af[i], As + (wm * 32 + i * 16) * LDA + kk, LDA);
                to_tf32(af[i], T());
            }
#pragma unroll
            for (int j = 0; j < 2; j++) {
                wmma::load_matrix_sync(bf[j], Bs + kk * LDB + wn * 32 + j * 16, LDB);
                to_tf32(bf[j], T());
            }
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(Cs + (wm * 32 + i * 16) * LDC + wn * 32 + j * 16, acc[i][j], LDC, wmma::mem_row_major);
    __syncthreads();
    /* rows fastest when y is channels-first (consecutive ow are adjacent), columns otherwise */
    const int rows_fast = G.ys[1] != 1;
    for (int e = tid; e < BM * BN; e += NT) {
        const int row = rows_fast ? e % BM : e / BN;
        const int col = rows_fast ? e / BM : e % BN;
        const int kk = n0 + col;
        if (R.ybase[row] < 0 || kk >= G.kg) continue;
        const long long k = (long long)gi * G.kg + kk;
        blend(y + R.ybase[row] + k * G.ys[1], Cs[row * LDC + col], alpha, beta);
    }
#endif
}

template <typename T>
cudnnStatus_t launch(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    ConvGeom G = make_geom(p);
    const long long M = (long long)G.n * G.out[0] * G.out[1] * G.out[2];
    const int Kdim = G.cg * G.flt[0] * G.flt[1] * G.flt[2];
    if (M == 0 || G.kg == 0) return CUDNN_STATUS_SUCCESS;
    const int cfast = p->xs[1] == 1 && G.cg > 1;
    dim3 grid((unsigned)((M + BM - 1) / BM), (unsigned)((G.kg + BN - 1) / BN), (unsigned)G.g);
    conv_fwd_tc_kernel<T><<<grid, NT, 0, (cudaStream_t)h->stream>>>(G, (const T *)a->x, (const T *)a->w, (T *)a->out,
                                                                    a->alpha, a->beta, M, Kdim, cfast);
    return fdnn_cuda_check(cudaGetLastError(), "conv_fwd_tc_kernel");
}

} /* namespace */

extern "C" cudnnStatus_t fdnn_cuda_conv_fwd_tc_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    const fdnn_cuda_state *cs = (const fdnn_cuda_state *)h->cuda;
    if (cs && cs->cc < 80)
        return FDNN_FAIL(CUDNN_STATUS_ARCH_MISMATCH, "conv_fwd__implicit_gemm_tc needs compute capability 8.0 or newer (device has %d.%d)",
                         cs->cc / 10, cs->cc % 10);
    if (p->xtype == CUDNN_DATA_HALF) return launch<__half>(h, p, a);
    if (p->xtype == CUDNN_DATA_BFLOAT16) return launch<__nv_bfloat16>(h, p, a);
    if (p->xtype == CUDNN_DATA_FLOAT) return launch<float>(h, p, a);
    return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "conv_fwd__implicit_gemm_tc: data type %s is not implemented",
                     fdnn_dtype_name(p->xtype));
}
