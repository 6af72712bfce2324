/* conv_bwd_filter__implicit_gemm_mma (HALF / BFLOAT16) and conv_bwd_filter__implicit_gemm_mma_tf32
 * (FLOAT through TF32, conv_bwd_filter_tf32.cuh): the backward-filter convolution of
 * conv_bwd_filter_mma.cuh (mma.sync tensor cores, cp.async pipeline, split-K with an ordered float
 * reduction) for dense channels-last problems. Which problems it takes:
 * fdnn_cuda_conv_bwd_filter_mma_applicable (shape/layout) plus the dtype, math-type and
 * compute-capability checks of the list (conv_list_cuda.c). The workspace (float partial sums of
 * the splits) is a function of the problem only: fdnn_cuda_conv_bwd_filter_mma_workspace.
 * The kernels copy 16 bytes (8 channels, FLOAT 4) at a time; when C is not a multiple of that
 * unit, run() copies x to workspace with the channels padded by zeros to Cp = C rounded up to the
 * unit (conv_chpad.cuh), runs the kernel on the padded
 * problem into a padded dw buffer [K][R][S][Cp] of the filter type in workspace (when beta != 0
 * it first holds dw padded, so the kernel's epilogue applies alpha/beta with its one rounding as
 * on the unpadded path), then copies the first C channels of each (k, r, s) to dw (exact).
 * Workspace then = padded x + padded dw (each rounded to 256 bytes) + the kernel's split
 * workspace of the padded problem.
 * On a compute capability 9.0 device of a build with sm_90a code the same problems run on the
 * Hopper warpgroup-MMA kernel of conv_bwd_filter_wgmma.cuh (FREEDNN_CUDA_WGMMA=0 keeps mma.sync);
 * the workspace query has no device, so it reports the larger of the two kernels' split
 * workspaces. FLOAT runs the TF32 forms: conv_bwd_filter_tf32.cuh (mma.sync) or, on the Hopper
 * device, conv_bwd_filter_wgmma_tf32.cuh (wgmma with A from registers and B transposed in shared
 * memory). */
#include "conv_bwd_filter_wgmma_tf32.cuh"
#include "conv_chpad.cuh"
#include "conv_cuda.h"
#include "conv_geom.cuh"
#include "cuda_internal.h"

namespace {

int gemm_npq(const fdnn_conv_problem *p) { return (int)((long long)p->n * p->out[1] * p->out[2]); }
int gemm_rsc(const fdnn_conv_problem *p) { return p->flt[1] * p->flt[2] * p->c; }

fdnn_bwdf::BwdfPlan plan_of(const fdnn_conv_problem *p) { return fdnn_bwdf::bwdf_plan(gemm_npq(p), p->k, gemm_rsc(p)); }
fdnn_bwdf::BwdfPlan wg_plan_of(const fdnn_conv_problem *p)
{
    if (p->xtype == CUDNN_DATA_FLOAT) return fdnn_bwdf_wg::twg_plan(gemm_npq(p), p->k, gemm_rsc(p));
    return fdnn_bwdf_wg::wgb_plan(gemm_npq(p), p->k, gemm_rsc(p));
}

using fdnn_ptx::aligned16;

using fdnn_chpad::esize;

} // namespace

extern "C" int fdnn_cuda_conv_bwd_filter_mma_applicable(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->dir != FDNN_CONV_BWD_FILTER) return fdnn_conv_why(why, why_n, "backward filter only");
    if (p->g != 1) return fdnn_conv_why(why, why_n, "the mma implicit GEMM needs groups == 1 (got %d)", p->g);
    if (p->nb_spatial == 3 && (p->in[0] != 1 || p->flt[0] != 1 || p->out[0] != 1 || p->pad[0] != 0))
        return fdnn_conv_why(why, why_n, "the mma implicit GEMM is 2-D: a 3-D problem needs D = T = 1 and depth padding 0 (got D=%d T=%d pad=%d)",
                   p->in[0], p->flt[0], p->pad[0]);
    if (p->nb_spatial != 2 && p->nb_spatial != 3) return fdnn_conv_why(why, why_n, "2-D problems only (got %d spatial dims)", p->nb_spatial);
    if (p->x_vect > 1 || p->y_vect > 1 || p->w_vect > 1) return fdnn_conv_why(why, why_n, "vectorised layouts are not handled");
    if (!(p->xtype == p->wtype && p->xtype == p->ytype &&
          (p->xtype == CUDNN_DATA_HALF || p->xtype == CUDNN_DATA_BFLOAT16 || p->xtype == CUDNN_DATA_FLOAT)))
        return fdnn_conv_why(why, why_n, "the mma implicit GEMM handles same-type HALF, BFLOAT16 and FLOAT (got x=%s w=%s y=%s)",
                   fdnn_dtype_name(p->xtype), fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
    if (!p->w_nhwc) return fdnn_conv_why(why, why_n, "the mma implicit GEMM needs a KRSC (NHWC) filter");
    const int unit = 16 / esize(p);
    if (p->k % unit)
        return fdnn_conv_why(why, why_n, "the mma implicit GEMM copies %d channels at a time: K=%d must be a multiple of %d (C is padded through the workspace)",
                   unit, p->k, unit);
    if (!fdnn_conv_packed_cl(p->xs, p->n, p->c, p->in)) return fdnn_conv_why(why, why_n, "x must be densely packed NHWC");
    if (!fdnn_conv_packed_cl(p->ys, p->n, p->k, p->out)) return fdnn_conv_why(why, why_n, "dy must be densely packed NHWC");
    const long long lim = (1LL << 31) - 256;
    const long long npq = (long long)p->n * p->out[1] * p->out[2];
    const long long rsc = (long long)p->flt[1] * p->flt[2] * fdnn_chpad::padded_c(p); /* R*S*Cp when C is padded */
    if (npq >= lim || rsc >= lim || (long long)p->k >= 65535LL * 64)
        return fdnn_conv_why(why, why_n, "GEMM sizes N*P*Q=%lld and R*S*C=%lld must stay below 2^31 and K=%d below 65535*64", npq, rsc, p->k);
    return 1;
}

/* the split workspace of the kernel for a problem with whole copy units of C (either kernel's) */
static size_t kernel_workspace(const fdnn_conv_problem *p)
{
    const size_t a = fdnn_bwdf::bwdf_workspace_bytes(plan_of(p), p->k, gemm_rsc(p));
#ifdef FDNN_HAVE_SM90A
    const size_t b = fdnn_bwdf::bwdf_workspace_bytes(wg_plan_of(p), p->k, gemm_rsc(p));
    return a > b ? a : b;
#else
    return a;
#endif
}

extern "C" size_t fdnn_cuda_conv_bwd_filter_mma_workspace(const fdnn_conv_problem *p)
{
    if (!fdnn_cuda_conv_bwd_filter_mma_applicable(p, NULL, 0)) return 0;
    const int cp = fdnn_chpad::padded_c(p), es = esize(p);
    if (cp == p->c) return kernel_workspace(p);
    const fdnn_conv_problem q = fdnn_chpad::padded_problem(p, cp);
    return fdnn_chpad::padded_bytes(fdnn_chpad::x_rows(p), cp, es) + fdnn_chpad::padded_bytes(fdnn_chpad::w_rows(p), cp, es) +
           kernel_workspace(&q);
}

extern "C" cudnnStatus_t fdnn_cuda_conv_bwd_filter_mma_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    const fdnn_cuda_state *cs = (const fdnn_cuda_state *)h->cuda;
    if (cs && cs->cc < 80)
        return FDNN_FAIL(CUDNN_STATUS_ARCH_MISMATCH,
                         "conv_bwd_filter__implicit_gemm_mma needs compute capability 8.0 or newer (device has %d.%d)", cs->cc / 10,
                         cs->cc % 10);
    const int cp = fdnn_chpad::padded_c(p), es = esize(p);
    if (cp != p->c) {
        const size_t need = fdnn_cuda_conv_bwd_filter_mma_workspace(p);
        if (!a->workspace || a->workspace_size < need)
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM,
                             "conv_bwd_filter__implicit_gemm_mma needs %zu bytes of workspace for C=%d padded to %d channels (got %zu)", need,
                             p->c, cp, a->workspace_size);
        /* the kernel reads dy in place and x / dw from the workspace: the direct kernel on the
         * original problem when dy or the workspace is not 16-byte aligned */
        if (!aligned16(a->y) || !aligned16(a->workspace)) return fdnn_cuda_conv_direct_run(h, p, a);
        const long long xr = fdnn_chpad::x_rows(p), wr = fdnn_chpad::w_rows(p);
        const size_t xb = fdnn_chpad::padded_bytes(xr, cp, es), wb = fdnn_chpad::padded_bytes(wr, cp, es);
        void *xp = a->workspace;
        void *dwp = (char *)a->workspace + xb;
        cudaStream_t st = fdnn_cuda_stream(h);
        FDNN_CHECK(fdnn_cuda_check(fdnn_chpad::pad_channels(a->x, xp, xr, p->c, cp, st, es), "conv_bwd_filter__implicit_gemm_mma: padding x"));
        /* beta != 0: the epilogue reads the old dw from the padded buffer (beta == 0 reads nothing) */
        if (a->beta != 0.0)
            FDNN_CHECK(fdnn_cuda_check(fdnn_chpad::pad_channels(a->out, dwp, wr, p->c, cp, st, es), "conv_bwd_filter__implicit_gemm_mma: padding dw"));
        const fdnn_conv_problem q = fdnn_chpad::padded_problem(p, cp);
        fdnn_conv_args b = *a;
        b.x = xp;
        b.out = dwp;
        b.workspace = (char *)a->workspace + xb + wb;
        b.workspace_size = a->workspace_size - xb - wb;
        FDNN_CHECK(fdnn_cuda_conv_bwd_filter_mma_run(h, &q, &b)); /* whole copy units now: the plain path */
        return fdnn_cuda_check(fdnn_chpad::unpad_channels(dwp, a->out, wr, p->c, cp, st, es), "conv_bwd_filter__implicit_gemm_mma: copying dw back");
    }
    const bool tf32 = p->xtype == CUDNN_DATA_FLOAT;
    const bool wg = fdnn_cuda_wgmma_on(cs) != 0; /* the Hopper kernels take every problem of this entry */
    const fdnn_bwdf::BwdfPlan pl = wg ? wg_plan_of(p) : plan_of(p);
    const size_t need = fdnn_bwdf::bwdf_workspace_bytes(pl, p->k, gemm_rsc(p));
    if (need && (!a->workspace || a->workspace_size < need))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "conv_bwd_filter__implicit_gemm_mma needs %zu bytes of workspace (got %zu)", need,
                         a->workspace_size);
    /* 16-byte copies need 16-byte aligned tensors (and the float2 partial sums an aligned
     * workspace); the direct kernel takes every problem, without workspace */
    if (!aligned16(a->x) || !aligned16(a->y) || !aligned16(a->out) || (need && !aligned16(a->workspace)))
        return fdnn_cuda_conv_direct_run(h, p, a);
    fdnn_bwdf::BwdfParams P;
    P.x = a->x;
    P.dy = a->y;
    P.out = a->out;
    P.ws = need ? (float *)a->workspace : NULL;
    fdnn_conv_geom2d(P, p);
    P.alpha = (float)a->alpha;
    P.beta = (float)a->beta;
    P.npq = gemm_npq(p);
    P.rsc = gemm_rsc(p);
    P.chunk = pl.chunk;
    P.splits = pl.splits;
    P.step_n = P.step_p = P.step_q = 0; /* set by bwdf_launch */
    cudaError_t e;
    if (tf32) {
        e = wg ? fdnn_bwdf_wg::twg_launch(P, (fdnn_bwdf_wg::TwgConfig)pl.cfg, fdnn_cuda_stream(h))
               : fdnn_bwdf::bwdf_tf32_launch(P, pl.cfg, fdnn_cuda_stream(h));
        return fdnn_cuda_check(e, wg ? "conv_bwd_filter__implicit_gemm_mma_tf32 (wgmma)" : "conv_bwd_filter__implicit_gemm_mma_tf32");
    }
    if (wg) {
        const fdnn_bwdf_wg::WgbConfig wc = (fdnn_bwdf_wg::WgbConfig)pl.cfg;
        if (p->xtype == CUDNN_DATA_HALF) e = fdnn_bwdf_wg::wgb_launch<__half>(P, wc, fdnn_cuda_stream(h));
        else e = fdnn_bwdf_wg::wgb_launch<__nv_bfloat16>(P, wc, fdnn_cuda_stream(h));
        return fdnn_cuda_check(e, "conv_bwd_filter__implicit_gemm_mma (wgmma)");
    }
    if (p->xtype == CUDNN_DATA_HALF) e = fdnn_bwdf::bwdf_launch<__half>(P, pl.cfg, fdnn_cuda_stream(h));
    else e = fdnn_bwdf::bwdf_launch<__nv_bfloat16>(P, pl.cfg, fdnn_cuda_stream(h));
    return fdnn_cuda_check(e, "conv_bwd_filter__implicit_gemm_mma");
}
