/* conv_fwd__implicit_gemm_mma(_tf32): the forward convolution of conv_fwd_mma.cuh (mma.sync
 * tensor cores, cp.async pipeline) for dense channels-last HALF / BFLOAT16 problems and FLOAT
 * ones with TENSOR_OP math (TF32), and the helper the
 * backward-data-as-forward path (conv_gemm_cublas.cu) uses to run its forward view on it.
 * Which problems it takes: fdnn_cuda_conv_fwd_mma_applicable (shape/layout) plus the dtype,
 * math-type and compute-capability checks of the list (conv_list_cuda.c).
 * C not a multiple of the kernel's 16-byte copy unit (8 channels, FLOAT 4): run() first copies x
 * and the filter to workspace with the channels padded by zeros to Cp = C rounded up to the unit
 * (conv_chpad.cuh) and runs the kernel on that padded problem, or, when S*C rounded up to the
 * unit is less than S*Cp, folds the filter's S taps into the channels instead (x' = an im2col
 * along W, conv_chpad.cuh's fold) and runs the S = 1 problem; workspace() = the padded x + the
 * padded filter (each rounded to 256 bytes), 0 when C is whole units; plus, when the tile grid is small and the reduction
 * long (fdnn_mma::mma_split), float partial sums of the K splits, summed in order by a reduction
 * kernel (deterministic). On an H200, stride-1 problems with K <= 64 whose tiles are mostly real
 * output go to the halo kernel of conv_fwd_halo.cuh (FREEDNN_CUDA_HALO: 0 never, 2 whenever its
 * plan fits, for tests; default 1), the rest with C % 64 == 0 to the wgmma kernel. */
#include "conv_fwd_halo.cuh"
#include "conv_chpad.cuh"
#include "conv_cuda.h"
#include "conv_geom.cuh"
#include "cuda_internal.h"

namespace {

fdnn_mma::MmaConvParams make_params(const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    fdnn_mma::MmaConvParams P;
    P.x = a->x;
    P.w = a->w;
    P.y = a->out;
    fdnn_conv_geom2d(P, p);
    P.alpha = (float)a->alpha;
    P.beta = (float)a->beta;
    P.m = (int)((long long)p->n * p->out[1] * p->out[2]);
    P.kg = p->flt[1] * p->flt[2] * p->c;
    P.splits = 1;
    P.kt_per = 0;
    P.ws = NULL;
    P.m_lo = 0;
    return P;
}

using fdnn_chpad::esize;

/* the split-K plan of a problem the kernel runs as it is (C whole copy units) */
fdnn_mma::MmaSplit split_of(const fdnn_conv_problem *p)
{
    return fdnn_mma::mma_split((int)((long long)p->n * p->out[1] * p->out[2]), p->k, p->flt[1] * p->flt[2] * p->c, esize(p));
}
size_t split_bytes(const fdnn_conv_problem *p)
{
    return fdnn_mma::mma_split_bytes(split_of(p), (int)((long long)p->n * p->out[1] * p->out[2]), p->k);
}

using fdnn_ptx::aligned16;

/* the Hopper warpgroup-MMA kernel (conv_fwd_wgmma.cuh) takes the problem where it may run at all
 * (fdnn_cuda_wgmma_on) and it is HALF or BFLOAT16 with C % 64 == 0 (whole 64-channel slices of
 * one filter tap), or FLOAT as TF32 (this entry runs FLOAT only with tensor-op math) with
 * C % 32 == 0, with a reduction of at least 4 slices */
int wgmma_ok(const fdnn_cuda_state *cs, const fdnn_conv_problem *p)
{
    /* a reduction of fewer than 4 slices (1x1 with C < 256) leaves the pipeline empty: the
     * mma.sync kernel, with more blocks per SM, is faster there (r50_1x1_64_256_56 0.039 ms against 0.061) */
    const int bk = p->xtype == CUDNN_DATA_FLOAT ? 32 : 64; /* elements per 128-byte slice */
    return fdnn_cuda_wgmma_on(cs) && p->c % bk == 0 && (long long)p->flt[1] * p->flt[2] * p->c >= 4 * bk &&
           (p->xtype == CUDNN_DATA_HALF || p->xtype == CUDNN_DATA_BFLOAT16 || p->xtype == CUDNN_DATA_FLOAT);
}

/* the halo kernel takes P when its plan fits and, unless FREEDNN_CUDA_HALO=2, at least 80% of its
 * computed pixels are real outputs (fp16 3x3 64->64 in igemm_lab, TFLOP/s: 224x224 at batch 32 and
 * 56x56 at batch 128, 88% real, 417 and 362 against 293 and 277 for the 128x64 wgmma tiles; 56x56
 * at batch 32, 77% real, 257 against 254, but 3% slower than those tiles in freednn bench). Where
 * the three-warpgroup plan does not fit (a 144 KiB filter) the one-window plan is tried, from 75%
 * real pixels: TF32 3x3 64->64 against the best wgmma tiles, 224x224 at batch 32 (83% real) 201
 * against 158 TFLOP/s, 56x56 at batch 128 and 32 (77%) 169 against 152 and 150 against 137. */
bool halo_pick(const fdnn_mma::MmaConvParams &P, int elem, int sms, fdnn_halo::HaloPlan &H)
{
    static const int mode = fdnn_env_int("FREEDNN_CUDA_HALO", 1);
    /* asked-for TMA mode (HaloPlan::tma): 2, TMA window copies and, for 16-bit y with K == 64 and
     * beta == 0, TMA stores (fp16 3x3 64->64 56x56 batch 128 in igemm_lab on an H100: 0.080 ms
     * with cp.async, 0.061 with TMA windows, 0.051 with TMA stores too); 0 keeps cp.async */
    static const int tma = fdnn_env_int("FREEDNN_CUDA_HALO_TMA", 2);
    if (mode == 0) return false;
    bool ok = false;
    if (fdnn_halo::halo_plan(P, elem, sms, H)) ok = mode == 2 || fdnn_halo::halo_efficiency(P, H) >= 0.8;
    else if (fdnn_halo::halo_plan(P, elem, sms, H, 2, 128, 1)) ok = mode == 2 || fdnn_halo::halo_efficiency(P, H) >= 0.75;
    H.tma = ok ? fdnn_halo::halo_tma_want(P, H, elem, tma) : 0;
    return ok;
}

/* f(T()) for the kernels' element type of x: __half, __nv_bfloat16, or float (TF32) */
template <typename F> cudaError_t by_type(cudnnDataType_t t, F f)
{
    if (t == CUDNN_DATA_HALF) return f(__half());
    if (t == CUDNN_DATA_FLOAT) return f(float());
    return f(__nv_bfloat16());
}

} // namespace

extern "C" int fdnn_cuda_wgmma_on(const fdnn_cuda_state *cs)
{
#ifdef FDNN_HAVE_SM90A
    static const bool env = fdnn_env_int("FREEDNN_CUDA_WGMMA", 1) != 0;
    return env && cs && cs->cc == 90;
#else
    (void)cs;
    return 0;
#endif
}

extern "C" int fdnn_cuda_conv_fwd_mma_applicable(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->dir != FDNN_CONV_FWD) return fdnn_conv_why(why, why_n, "forward only");
    if (p->g != 1) return fdnn_conv_why(why, why_n, "the mma implicit GEMM needs groups == 1 (got %d)", p->g);
    if (p->nb_spatial == 3 && (p->in[0] != 1 || p->flt[0] != 1 || p->out[0] != 1 || p->pad[0] != 0))
        return fdnn_conv_why(why, why_n, "the mma implicit GEMM is 2-D: a 3-D problem needs D = T = 1 and depth padding 0 (got D=%d T=%d pad=%d)",
                   p->in[0], p->flt[0], p->pad[0]);
    if (p->nb_spatial != 2 && p->nb_spatial != 3) return fdnn_conv_why(why, why_n, "2-D problems only (got %d spatial dims)", p->nb_spatial);
    if (p->x_vect > 1 || p->y_vect > 1 || p->w_vect > 1) return fdnn_conv_why(why, why_n, "vectorised layouts are not handled");
    if (!(p->xtype == p->wtype && p->xtype == p->ytype &&
          (p->xtype == CUDNN_DATA_HALF || p->xtype == CUDNN_DATA_BFLOAT16 || p->xtype == CUDNN_DATA_FLOAT)))
        return fdnn_conv_why(why, why_n, "the mma implicit GEMM handles same-type HALF, BFLOAT16 and FLOAT (TF32) (got x=%s w=%s y=%s)",
                   fdnn_dtype_name(p->xtype), fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
    if (!p->w_nhwc) return fdnn_conv_why(why, why_n, "the mma implicit GEMM needs a KRSC (NHWC) filter");
    if (p->k % 8)
        return fdnn_conv_why(why, why_n, "the mma implicit GEMM writes 8 output channels at a time: K=%d must be a multiple of 8 (C is padded to 8 through the workspace)",
                   p->k);
    if (!fdnn_conv_packed_cl(p->xs, p->n, p->c, p->in)) return fdnn_conv_why(why, why_n, "x must be densely packed NHWC");
    if (!fdnn_conv_packed_cl(p->ys, p->n, p->k, p->out)) return fdnn_conv_why(why, why_n, "y must be densely packed NHWC");
    const long long lim = (1LL << 31) - 256;
    const long long m = (long long)p->n * p->out[1] * p->out[2];
    const long long kg = (long long)p->flt[1] * p->flt[2] * fdnn_chpad::padded_c(p); /* R*S*Cp when C is padded */
    if (m >= lim || kg >= lim || (long long)p->k >= 65535LL * 64)
        return fdnn_conv_why(why, why_n, "GEMM sizes N*P*Q=%lld and R*S*C=%lld must stay below 2^31 and K=%d below 65535*64", m, kg, p->k);
    return 1;
}

extern "C" size_t fdnn_cuda_conv_fwd_mma_workspace(const fdnn_conv_problem *p)
{
    if (!fdnn_cuda_conv_fwd_mma_applicable(p, NULL, 0)) return 0;
    if (fdnn_chpad::padded_c(p) == p->c) return split_bytes(p);
    const fdnn_conv_problem q = fdnn_chpad::fwd_padded_problem(p);
    return fdnn_chpad::fwd_pad_bytes(p) + split_bytes(&q);
}

extern "C" size_t fdnn_cuda_conv_fwd_mma_split_workspace(const fdnn_conv_problem *p)
{
    return split_bytes(p);
}

extern "C" int fdnn_cuda_conv_fwd_mma_usable(const fdnn_conv_problem *p)
{
    /* callers outside the list provide no padding workspace: C % 8 == 0 only */
    if (p->c % 8 || !fdnn_cuda_conv_fwd_mma_applicable(p, NULL, 0) || p->math_type == CUDNN_FMA_MATH) return 0;
    /* FLOAT goes through TF32 only when the caller asked for tensor ops (DEFAULT math keeps FP32) */
    if (p->xtype == CUDNN_DATA_FLOAT && p->math_type != CUDNN_TENSOR_OP_MATH && p->math_type != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return 0;
    int dev = 0;
    return fdnn_cuda_device_cc_major(&dev) >= 8;
}

extern "C" int fdnn_cuda_conv_fwd_mma_aligned(const fdnn_conv_args *a)
{
    return aligned16(a->x) && aligned16(a->w) && aligned16(a->out);
}

extern "C" cudnnStatus_t fdnn_cuda_conv_fwd_mma_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    const fdnn_cuda_state *cs = (const fdnn_cuda_state *)h->cuda;
    if (cs && cs->cc < 80)
        return FDNN_FAIL(CUDNN_STATUS_ARCH_MISMATCH, "conv_fwd__implicit_gemm_mma needs compute capability 8.0 or newer (device has %d.%d)",
                         cs->cc / 10, cs->cc % 10);
    const size_t need = fdnn_cuda_conv_fwd_mma_workspace(p);
    const int cp = fdnn_chpad::padded_c(p);
    const int padded = cp != p->c;
    if (need && (!a->workspace || a->workspace_size < need))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM,
                         "conv_fwd__implicit_gemm_mma needs %zu bytes of workspace (C=%d padded to %d channels, split-K partial sums) (got %zu)",
                         need, p->c, cp, a->workspace_size);
    if (padded) {
        /* C not whole copy units: the kernel runs on x and w copied to workspace with Cp channels;
         * only y and the workspace must be 16-byte aligned (else the WMMA kernel on the original
         * problem) */
        if (!aligned16(a->out) || !aligned16(a->workspace)) return fdnn_cuda_conv_fwd_tc_run(h, p, a);
        fdnn_conv_problem q;
        fdnn_conv_args b; /* its workspace: the split partials of the padded problem, if any */
        FDNN_CHECK(fdnn_cuda_check(fdnn_chpad::pad_fwd_operands(p, a, fdnn_cuda_stream(h), &q, &b),
                                   "conv_fwd__implicit_gemm_mma: padding x and w"));
        return fdnn_cuda_conv_fwd_mma_run(h, &q, &b); /* whole copy units now: the plain path */
    }
    /* 16-byte copies need 16-byte aligned tensors; the WMMA kernel gathers element by element
     * and takes every problem this entry takes */
    if (!fdnn_cuda_conv_fwd_mma_aligned(a)) return fdnn_cuda_conv_fwd_tc_run(h, p, a);
    fdnn_mma::MmaConvParams P = make_params(p, a);
    const int sms = fdnn_cuda_sm_count(h);
    cudaStream_t st = fdnn_cuda_stream(h);
    const bool wg = wgmma_ok(cs, p) != 0;
    fdnn_halo::HaloPlan H;
    if (wg && halo_pick(P, esize(p), sms, H)) /* Hopper, K <= 64, stride 1: no split, no workspace */
        return fdnn_cuda_check(by_type(p->xtype, [&](auto z) { return fdnn_halo::halo_launch<decltype(z)>(P, H, st); }),
                               "conv_fwd__implicit_gemm_mma (wgmma halo)");
    const fdnn_mma::MmaSplit sp = split_of(p);
    if (sp.splits > 1 && aligned16(a->workspace)) { /* need > 0 checked above; unaligned: one split */
        P.splits = sp.splits;
        P.kt_per = sp.kt_per;
        P.ws = (float *)a->workspace;
    }
    cudaError_t e;
    if (wg) {
        /* Hopper: the warpgroup-MMA kernel, same problem, split plan and workspace */
        e = by_type(p->xtype, [&](auto z) { return fdnn_wg::wg_launch_auto<decltype(z)>(P, sms, st); });
        return fdnn_cuda_check(e, "conv_fwd__implicit_gemm_mma (wgmma)");
    }
    const fdnn_mma::MmaConfig cfg = fdnn_mma::mma_pick(P, sms);
    e = by_type(p->xtype, [&](auto z) { return fdnn_mma::mma_launch<decltype(z)>(P, cfg, st); });
    return fdnn_cuda_check(e, "conv_fwd__implicit_gemm_mma");
}
