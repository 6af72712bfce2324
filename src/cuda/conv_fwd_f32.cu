/* FLOAT forward convolution as an implicit GEMM on CUDA cores (FMA math, no tensor cores), for
 * the problems where it beats im2col + cuBLAS SGEMM: packed NHWC x / y, KRSC filter, groups 1,
 * 2-D (or 3-D with D = T = 1), K % 4 == 0, K <= 128, R*S > 1. C % 4 != 0 (the ResNet stem's C = 3)
 * copies x and w to the workspace with C padded by zeros to a multiple of 4, or folds the filter's
 * S taps into the channels when that leaves less reduction (conv_chpad.cuh). Also
 * the stride-1 backward data through its forward view when K % 4 == 0 (conv_gemm_cublas.cu,
 * fdnn_cuda_conv_bwd_data_fwd_gemm_run).
 *
 * GEMM view: y[M = N*P*Q, K] = Xcol[M, R*S*C] * W[K, R*S*C]^T. Block tile 128 (M) x 64 (K), 128
 * threads, each an 8 x 8 register block made of 2 x 2 groups of 4 x 4: thread (tx = tid % 8,
 * ty = tid / 8) owns rows {0, 64} + ty*4 + 0..3 and columns {0, 32} + tx*4 + 0..3, so a warp's
 * 16-byte shared reads are contiguous. The reduction goes in slices of 16: with C % 16 == 0, 16
 * channels of one filter tap; else (C % 4 == 0) 16 consecutive (tap, channel) indices whose 4-channel
 * quads each lie in one tap, the last slice zero-filled. Slices are staged transposed in shared memory (As[k][m],
 * Bs[k][n], rows padded by 4 floats) and double-buffered: the next slice's 16-byte global loads
 * go to registers before this slice's FMAs and to the other buffer after them, one barrier per
 * slice. Each thread's four A rows have their pixel decoded once per block. Epilogue: alpha /
 * beta in float (beta == 0: y is not read), 16-byte stores. Deterministic (fixed order).
 *
 * Developed in bench/kernels/f32_igemm_lab.cu, where seven tile shapes were timed on the H200:
 * this one reaches 35-36 TFLOP/s on the 64- and 128-channel ResNet 3x3 layers (NVIDIA cuDNN 9:
 * 36; im2col + cuBLAS: 19-28). With K > 128 the grid of small images is too short for it and the
 * cuBLAS entry stays first; 1x1 problems are plain GEMMs that cuBLAS runs without a copy. */
#include "conv_chpad.cuh"
#include "conv_fwd_f32.cuh"
#include "conv_cuda.h"
#include "conv_mma_ptx.cuh"
#include "conv_geom.cuh"
#include "cuda_internal.h"

namespace {

using namespace fdnn_f32fw;

using fdnn_ptx::aligned16;

} // namespace

extern "C" int fdnn_cuda_conv_f32_nhwc_ok(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->xtype != CUDNN_DATA_FLOAT || p->wtype != CUDNN_DATA_FLOAT || p->ytype != CUDNN_DATA_FLOAT)
        return fdnn_conv_why(why, why_n, "the FLOAT implicit GEMMs handle FLOAT x, w and y (got x=%s w=%s y=%s)", fdnn_dtype_name(p->xtype),
                             fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
    if (p->math_type == CUDNN_TENSOR_OP_MATH || p->math_type == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
        return fdnn_conv_why(why, why_n, "the FLOAT implicit GEMMs are pure FP32 (FLOAT with TENSOR_OP math runs on the TF32 tensor-core entries)");
    if (p->g != 1) return fdnn_conv_why(why, why_n, "the FLOAT implicit GEMMs need groups == 1 (got %d)", p->g);
    if (p->nb_spatial != 2 && p->nb_spatial != 3) return fdnn_conv_why(why, why_n, "2-D problems only (got %d spatial dims)", p->nb_spatial);
    if (p->nb_spatial == 3 && (p->in[0] != 1 || p->flt[0] != 1 || p->out[0] != 1 || p->pad[0] != 0))
        return fdnn_conv_why(why, why_n, "the FLOAT implicit GEMMs are 2-D: a 3-D problem needs D = T = 1 and depth padding 0 (got D=%d T=%d pad=%d)",
                             p->in[0], p->flt[0], p->pad[0]);
    if (p->x_vect > 1 || p->y_vect > 1 || p->w_vect > 1) return fdnn_conv_why(why, why_n, "vectorised layouts are not handled");
    if (!p->w_nhwc) return fdnn_conv_why(why, why_n, "the FLOAT implicit GEMMs need a KRSC (NHWC) filter");
    if (!fdnn_conv_packed_cl(p->xs, p->n, p->c, p->in)) return fdnn_conv_why(why, why_n, "x must be densely packed NHWC");
    if (!fdnn_conv_packed_cl(p->ys, p->n, p->k, p->out)) return fdnn_conv_why(why, why_n, "y must be densely packed NHWC");
    if (p->k % 4) return fdnn_conv_why(why, why_n, "the FLOAT implicit GEMMs move 4 output channels at a time: K=%d must be a multiple of 4", p->k);
    if (p->flt[1] * p->flt[2] == 1)
        return fdnn_conv_why(why, why_n, "a 1x1 filter is a plain GEMM: the cuBLAS entry runs it without a copy, faster");
    return 1;
}

extern "C" int fdnn_cuda_conv_fwd_f32_applicable(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->dir != FDNN_CONV_FWD) return fdnn_conv_why(why, why_n, "forward only");
    if (!fdnn_cuda_conv_f32_nhwc_ok(p, why, why_n)) return 0;
    if (p->k > 128)
        return fdnn_conv_why(why, why_n, "K=%d > 128: the im2col + cuBLAS entry is faster there (the 128x64 tile grid is short)", p->k);
    const long long lim = (1LL << 31) - 256;
    const long long m = (long long)p->n * p->out[1] * p->out[2];
    const long long kg = (long long)p->flt[1] * p->flt[2] * fdnn_chpad::padded_c(p);
    if (m >= lim || kg * p->k >= lim)
        return fdnn_conv_why(why, why_n, "GEMM sizes N*P*Q=%lld and K*R*S*C=%lld must stay below 2^31", m, kg * p->k);
    return 1;
}

extern "C" size_t fdnn_cuda_conv_fwd_f32_workspace(const fdnn_conv_problem *p)
{
    if (fdnn_chpad::padded_c(p) == p->c || !fdnn_cuda_conv_fwd_f32_applicable(p, NULL, 0)) return 0;
    return fdnn_chpad::fwd_pad_bytes(p);
}

extern "C" cudnnStatus_t fdnn_cuda_conv_fwd_f32_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    const int cp = fdnn_chpad::padded_c(p);
    if (cp != p->c) {
        /* C % 4 != 0: x and w copied to the workspace with C padded by zero channels to Cp (a
         * multiple of 4), then the kernel on that problem */
        const size_t need = fdnn_chpad::fwd_pad_bytes(p);
        if (!a->workspace || a->workspace_size < need)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "conv_fwd__implicit_gemm_f32 needs %zu bytes of workspace (C=%d padded to %d channels) (got %zu)",
                             need, p->c, cp, a->workspace_size);
        if (!aligned16(a->workspace) || !aligned16(a->out)) return fdnn_cuda_conv_fwd_simt_run(h, p, a);
        fdnn_conv_problem q;
        fdnn_conv_args b;
        FDNN_CHECK(fdnn_cuda_check(fdnn_chpad::pad_fwd_operands(p, a, fdnn_cuda_stream(h), &q, &b),
                                   "conv_fwd__implicit_gemm_f32: padding x and w"));
        return fdnn_cuda_conv_fwd_f32_run(h, &q, &b); /* whole quads now: the plain path */
    }
    /* 16-byte loads and stores: a tensor that is not 16-byte aligned goes to the SIMT kernel,
     * which gathers element by element and takes every problem this entry takes */
    if (!aligned16(a->x) || !aligned16(a->w) || !aligned16(a->out)) return fdnn_cuda_conv_fwd_simt_run(h, p, a);
    F32Conv P;
    P.x = (const float *)a->x;
    P.w = (const float *)a->w;
    P.y = (float *)a->out;
    fdnn_conv_geom2d(P, p);
    P.alpha = (float)a->alpha;
    P.beta = (float)a->beta;
    P.m = (int)((long long)p->n * p->out[1] * p->out[2]);
    if (P.m == 0) return CUDNN_STATUS_SUCCESS;
    const dim3 grid((unsigned)((P.m + 127) / 128), (unsigned)((P.k + 63) / 64));
    if (P.c % 16 == 0)
        conv_fwd_f32_kernel<128, 64, 8, 8, 128, 3, true><<<grid, 128, 0, fdnn_cuda_stream(h)>>>(P);
    else
        conv_fwd_f32_kernel<128, 64, 8, 8, 128, 3, false><<<grid, 128, 0, fdnn_cuda_stream(h)>>>(P);
    return fdnn_cuda_check(cudaGetLastError(), "conv_fwd__implicit_gemm_f32");
}
