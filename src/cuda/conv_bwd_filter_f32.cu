/* FLOAT backward filter as a split-K implicit GEMM on CUDA cores (FMA math, no tensor cores):
 * packed NHWC x / dy, KRSC dw, groups 1, 2-D (or 3-D with D = T = 1), K % 4 == 0, R*S > 1.
 * GEMM view dW[K x RSC] = dY^T[K x NPQ] * Xcol[NPQ x RSC], Xcol column j = (r*S + s)*C + c (the
 * KRSC order). Developed in bench/kernels/f32_bwdf_lab.cu (the design is described there in
 * full); on the H200 it runs the ResNet 3x3 layers at 32-40 TFLOP/s and the 7x7 stem (C = 3) at
 * 22, against im2col + cuBLAS at 7-44 and NVIDIA cuDNN 9 at 15-37.
 *
 * Block tile 64 (K) x 128 (RSC), 128 threads of 8x8 (C % 4 == 0: 16-byte x loads), or 64 x 64 with
 * 8x4 per thread and scalar x loads for any C. Slices of 16 npq rows, both operands stored
 * reduction-major in shared memory without a transpose, double-buffered, one barrier per slice;
 * each slice's npq rows are decoded once into a shared table, two slices ahead. The reduction
 * over N*P*Q is split over gridDim.z blocks when the tile grid is short (split_plan: about 2-4
 * waves at a nominal 132 SMs, at least 256 rows per split, a function of the problem alone so
 * that workspace() needs no device); the splits' float partial sums go to the workspace
 * [splits][K][RSC] and bwdf_f32_reduce_kernel adds them in a fixed order and applies alpha /
 * beta (deterministic). One split: the kernel applies alpha / beta itself (beta == 0: dw is not
 * read). 32-bit indexing: x and dy below 2^30 elements (applicable()). */
#include "conv_bwd_filter_f32.cuh"
#include "conv_cuda.h"
#include "conv_mma_ptx.cuh"
#include "conv_geom.cuh"
#include "cuda_internal.h"

namespace {

using namespace fdnn_f32bw;

/* the two configurations: tile, resident blocks per SM (from the launch bounds) */
struct Cfg {
    int bm, bn, occ;
};
constexpr Cfg CFG_VEC = {64, 128, 3}, CFG_GEN = {64, 64, 4};
inline Cfg cfg_of(const fdnn_conv_problem *p) { return p->c % 4 == 0 ? CFG_VEC : CFG_GEN; }

constexpr int NOMINAL_SMS = 132;

void plan_of(const fdnn_conv_problem *p, int *splits, int *chunk)
{
    const long long npq = (long long)p->n * p->out[1] * p->out[2];
    const Cfg V = cfg_of(p);
    split_plan(V.bm, V.bn, V.occ, NOMINAL_SMS, npq, p->k, (long long)p->flt[1] * p->flt[2] * p->c, 0, splits, chunk);
}

/* bytes of the float partial sums of `splits` splits (none with one) */
size_t split_bytes(const fdnn_conv_problem *p, int splits)
{
    return splits > 1 ? (size_t)splits * p->k * p->flt[1] * p->flt[2] * p->c * sizeof(float) : 0;
}

using fdnn_ptx::aligned16;

} // namespace

extern "C" int fdnn_cuda_conv_bwd_filter_f32_applicable(const fdnn_conv_problem *p, char *why, size_t why_n)
{
    if (p->dir != FDNN_CONV_BWD_FILTER) return fdnn_conv_why(why, why_n, "backward filter only");
    if (!fdnn_cuda_conv_f32_nhwc_ok(p, why, why_n)) return 0;
    const long long nx = (long long)p->n * p->in[1] * p->in[2] * p->c, ndy = (long long)p->n * p->out[1] * p->out[2] * p->k;
    const long long ndw = (long long)p->k * p->flt[1] * p->flt[2] * p->c;
    if (nx >= (1LL << 30) || ndy >= (1LL << 30) || ndw >= (1LL << 30))
        return fdnn_conv_why(why, why_n, "x (%lld), dy (%lld) and dw (%lld elements) must stay below 2^30 elements (32-bit indexing)", nx, ndy, ndw);
    return 1;
}

extern "C" size_t fdnn_cuda_conv_bwd_filter_f32_workspace(const fdnn_conv_problem *p)
{
    if (!fdnn_cuda_conv_bwd_filter_f32_applicable(p, NULL, 0)) return 0;
    int splits, chunk;
    plan_of(p, &splits, &chunk);
    return split_bytes(p, splits);
}

extern "C" cudnnStatus_t fdnn_cuda_conv_bwd_filter_f32_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    int splits, chunk;
    plan_of(p, &splits, &chunk);
    const size_t need = split_bytes(p, splits);
    if (need && (!a->workspace || a->workspace_size < need))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "conv_bwd_filter__implicit_gemm_f32 needs %zu bytes of workspace (split-K partial sums) (got %zu)",
                         need, a->workspace_size);
    const bool vec = p->c % 4 == 0;
    /* 16-byte loads of dy (and x) and stores of dw / the workspace; otherwise the direct kernel,
     * which takes every problem and needs no workspace */
    if (!aligned16(a->y) || !aligned16(a->out) || (vec && !aligned16(a->x)) || (need && !aligned16(a->workspace)))
        return fdnn_cuda_conv_direct_run(h, p, a);
    BwdfF32 P;
    P.x = (const float *)a->x;
    P.dy = (const float *)a->y;
    P.out = (float *)a->out;
    P.ws = (float *)a->workspace;
    fdnn_conv_geom2d(P, p);
    P.alpha = (float)a->alpha;
    P.beta = (float)a->beta;
    P.npq = p->n * p->out[1] * p->out[2];
    P.rsc = p->flt[1] * p->flt[2] * p->c;
    P.splits = splits;
    P.chunk = chunk;
    const Cfg V = cfg_of(p);
    cudaStream_t st = fdnn_cuda_stream(h);
    const dim3 grid((unsigned)((P.rsc + V.bn - 1) / V.bn), (unsigned)((P.k + V.bm - 1) / V.bm), (unsigned)P.splits);
    if (vec)
        conv_bwd_filter_f32_kernel<64, 128, 8, 8, 128, 3, true><<<grid, 128, 0, st>>>(P);
    else
        conv_bwd_filter_f32_kernel<64, 64, 8, 4, 128, 4, false><<<grid, 128, 0, st>>>(P);
    FDNN_CHECK(fdnn_cuda_check(cudaGetLastError(), "conv_bwd_filter__implicit_gemm_f32"));
    if (P.splits > 1) {
        const int n4 = P.k * P.rsc / 4; /* K % 4 == 0 */
        int blocks = (n4 + 255) / 256;
        if (blocks > NOMINAL_SMS * 8) blocks = NOMINAL_SMS * 8;
        bwdf_f32_reduce_kernel<<<blocks, 256, 0, st>>>((const float4 *)P.ws, (float4 *)P.out, n4, P.splits, P.alpha, P.beta);
        FDNN_CHECK(fdnn_cuda_check(cudaGetLastError(), "conv_bwd_filter__implicit_gemm_f32: split reduction"));
    }
    return CUDNN_STATUS_SUCCESS;
}
