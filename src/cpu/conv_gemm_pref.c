/* Heuristic-only entries placed at the head of the CPU lists: the im2col+GEMM implementations,
 * applicable only to the shapes where they beat the direct AVX-512 kernels, so that
 * cudnnGetConvolution*Algorithm_v7 (and the default pick) reports GEMM first there. Elsewhere
 * they are not applicable and the lists fall through to the direct kernels, then to the
 * general GEMM entries (the same algorithms, every shape). FREEDNN_CPU_CONV_GEMM=0 never
 * prefers GEMM, =1 always does where it applies (for measurements); unset: the rule below. */
#include "conv_cpu.h"
#include "conv_nhwc.h"
#include <stdio.h>
#include <string.h>

static int nhwc_unit(const fdnn_conv_problem *p);
static int nhwc_col(const fdnn_conv_problem *p);

/* a 1x1x1 filter with no padding (any stride) */
static int unpadded_1x1(const fdnn_conv_problem *p)
{
    return p->flt[0] == 1 && p->flt[1] == 1 && p->flt[2] == 1 && p->pad[0] == 0 && p->pad[1] == 0 && p->pad[2] == 0;
}

static int prefer_gemm(const fdnn_conv_problem *p)
{
    int force = fdnn_env_int("FREEDNN_CPU_CONV_GEMM", -1);
    if (force >= 0) return force != 0;
    if (p->xtype != CUDNN_DATA_FLOAT || p->g != 1) return 0;
    /* NCHW 1x1 stride-1 unpadded: x itself is the column matrix (one OpenBLAS SGEMM per image,
     * no transposes), where the direct kernel transposes x (and y) through the workspace.
     * Measured (ms, 2 threads, direct -> GEMM, fwd/bwd-data/bwd-filter): 64->64 56x56 N=1
     * 0.19/0.20/0.25 -> 0.15/0.15/0.15; 64->256 56x56 N=1 0.67/0.76/0.87 -> 0.58/0.54/0.56;
     * 2048->512 7x7 N=1 1.63/1.32/2.61 -> 0.60/0.66/0.67; N=8 5.8/5.7/6.9 -> 5.1/5.6/5.7. */
    /* Where BLAS is weak (gemm.c: its kernels older than the CPU, so the GEMMs run on our
     * streamed-B kernels, whose 48-column panels idle on the 49 columns of a 7x7 image), the
     * forward and backward data of 7x7 outputs go direct. Emerald Rapids (Debian's OpenBLAS on
     * Prescott kernels), 2 threads, ratio to oneDNN, GEMM (ours) against direct:
     * rn50_1x1_2048_512_7 N=8 fwd 1.64 / 0.84, bwd-data 1.94 / 0.73, N=1 bwd-data 1.71 / 1.15;
     * rn50_3x3_512_512_7 N=1 fwd 1.69 / 1.37, bwd-data 1.86 / 1.35; the backward filters (the
     * columns are input channels) stay GEMM: 1.38 / 1.79 and 1.41 / 3.47. */
    const int64_t opq = (int64_t)p->out[0] * p->out[1] * p->out[2]; /* output pixels per image */
    const int weak_small = fdnn_cpu_blas_weak() && p->dir != FDNN_CONV_BWD_FILTER && opq < 2 * 48;
    if (fdnn_cpu_conv_is_unit(p)) return !weak_small;
    /* NHWC (KRSC filter): the direct AVX-512 kernels, since their 64-channel register tiles, beat
     * OpenBLAS everywhere in bench/layers_cpu.txt. Measured (ms, 2 threads, GEMM -> direct):
     * 1x1 stride 1 (one SGEMM for the batch, nhwc_unit) 2048->512 7x7 N=1 fwd/bwd-data/bwd-filter
     * 0.82/0.70/0.73 -> 0.60/0.58/0.53, N=8 4.36/4.10/4.20 -> 4.08/4.03/4.15, and 1024->256 14x14,
     * 512->128 28x28, 256->1024 14x14 10-20% faster direct in every direction; backward filter
     * through im2col (nhwc_col) 3x3 256->256 14x14 N=1 1.16 -> 1.05, 3x3 512->512 7x7 N=1
     * 1.39 -> 1.16, N=8 9.59 -> 9.45, strided 1x1 256->512 56x56 N=1 1.06 -> 0.98;
     * but strided 1x1 at N=8 stays GEMM (best of 5 full runs 9.27 against 10.12 direct; single
     * A/B runs were even), so the backward filter of strided 1x1 filters is GEMM above
     * N*P*Q = 784. Where they do not apply (no AVX-512, 3-D) the earlier rule: nhwc_unit where the output is
     * small per image (P*Q <= 784), and the backward filter of small outputs
     * (N*P*Q <= 392) and of strided 1x1 filters. */
    if (p->w_nhwc) {
        char why[160];
        int strided_1x1 = p->flt[1] == 1 && p->flt[2] == 1 && p->pad[1] == 0 && p->pad[2] == 0 && (p->stride[1] > 1 || p->stride[2] > 1);
        if (fdnn_nhwc_direct_applicable(p, why, sizeof why)) {
            /* (with a weak BLAS the strided 1x1 too: N=8 8.85 ms on our GEMM against 7.0 direct,
             * Emerald Rapids) */
            if (fdnn_nhwc_kernels_get()->vec == 16)
                return p->dir == FDNN_CONV_BWD_FILTER && strided_1x1 && p->n * opq > 784 && !fdnn_cpu_blas_weak();
            /* AVX2 kernels (16 output channels x 6 positions per tile, half the AVX-512 tile):
             * OpenBLAS's GEMM wins on small outputs and on the strided 1x1 and small backward
             * filters. Zen 3, 2 threads, ratio to oneDNN of the min time, best of two
             * interleaved runs, direct -> GEMM: 3x3 512->512 7x7 N=1 fwd/bwd-data/bwd-filter
             * 1.16/1.31/0.80 -> 0.66/0.74/0.72, 1x1 2048->512 7x7 bwd-data 1.01 -> 0.65, 3x3
             * 256->256 14x14 bwd-filter 0.99 -> 0.74, strided 1x1 256->512 56x56 bwd-filter
             * 1.10 -> 0.75; elsewhere direct wins (e.g. 3x3 64->64 56x56 bwd-data 0.98 against
             * 1.70, the ResNet stem 1.50/0.79/0.62 against 3.60/59/1.93). */
            if (p->dir == FDNN_CONV_BWD_FILTER && (strided_1x1 || p->n * opq <= 392)) return 1;
            return opq <= 64 && p->n * opq <= 392;
        }
        if (nhwc_unit(p)) return opq <= 784;
        if (p->dir != FDNN_CONV_BWD_FILTER) return 0;
        if (p->flt[1] == 1 && p->flt[2] == 1 && p->pad[1] == 0 && p->pad[2] == 0 && (p->stride[1] > 1 || p->stride[2] > 1)) return 1;
        return (int64_t)p->n * opq <= 392;
    }
    /* NCHW strided 1x1 backward filter: the column matrix is only a subsample of x
     * (rn50_1x1s2_256_512_56 N=1: 1.15-1.29 ms vs 1.67-2.12 direct). Backward data: W^T * dy
     * into the workspace, then each dx row zeroed and the entries placed at the strided
     * positions; it went from 3x slower than the direct kernel (3.5-4.4 ms against 1.36) to
     * 1.07 at N=1 and 9.6-9.8 at N=8 (direct 1.40 / 11.5; oneDNN 1.01 / 8.4-8.7) as the 1x1
     * col2im became a strided copy, then a row memset plus stores, and the GEMM's 512-long
     * reduction moved to the streamed-B kernel (gemm.c). */
    if ((p->dir == FDNN_CONV_BWD_FILTER || p->dir == FDNN_CONV_BWD_DATA) && unpadded_1x1(p)) return 1;
    /* NCHW strided 1x1 forward with C <= 256: the subsampled column matrix times the filter is a
     * GEMM with a reduction of at most 256, which runs on the streamed-B AVX-512 kernel
     * (gemm_panel_avx512.c; the "wash" above was measured before it existed).
     * rn50_1x1s2_256_512_56 (ms, 2 threads, direct -> GEMM): N=1 1.39-1.42 -> 1.21, N=8 11.7-12.3
     * -> 9.96-10.03 (oneDNN 1.12 / 9.9-10.5). */
    if (p->dir == FDNN_CONV_FWD && unpadded_1x1(p) && (p->stride[0] > 1 || p->stride[1] > 1 || p->stride[2] > 1) && p->c <= 256) return 1;
    /* NCHW small outputs: N*P*Q <= 196 (7x7 at N <= 4), measured on rn50_3x3_512_512_7 N=1:
     * GEMM 2.06-2.10/1.98-2.48/2.14-2.17 ms vs direct 3.42-3.87/3.28-5.50/2.80-2.94 ms
     * (fwd/bwd-data/bwd-filter); at N=8 the
     * direct kernel is faster (about 170 GFLOP/s vs 110 for the per-image GEMMs) */
    /* (14x14 at N=1, also N*P*Q = 196, stays direct: GEMM was not faster there, backward data
     * 2.15-2.19 vs 1.83-2.89 ms; at N=4 the 7x7 layer is about even, GEMM slightly ahead) */
    /* NCHW backward data with fewer than 16 input channels (the ResNet-50 stem, C = 3): the direct
     * kernel's vectors run along C and stay mostly empty, while W^T * dy is a GEMM with a reduction
     * of K and the row-parallel col2im adds its entries cheaply. rn50_conv1_7x7s2 (ms, 2 threads,
     * direct -> GEMM): N=1 2.37-2.48 -> 1.45-1.54, N=8 20.8-21.1 -> 13.0 (oneDNN 1.88 / 14.4). */
    if (p->dir == FDNN_CONV_BWD_DATA && p->c < 16) return 1;
    if (opq <= 64 && p->n * opq <= 196) return !weak_small;
    /* with the AVX2 kernels the NCHW backward filter (x and dy transposed to NHWC first) loses
     * to GEMM up to N*P*Q = 784. Zen 3, 2 threads, ratio to oneDNN, best of two interleaved
     * runs, direct -> GEMM: 3x3 256->256 14x14 N=1 1.50 -> 1.00, 3x3 128->128 28x28 0.95 ->
     * 0.84, 3x3 512->512 7x7 1.61 -> 1.46; 3x3 64->64 56x56 (3136) stays direct, 0.59 against 0.88 */
    const fdnn_nhwc_kernels *k = fdnn_nhwc_kernels_get();
    if (k && k->vec == 8 && p->dir == FDNN_CONV_BWD_FILTER && p->n * opq <= 784) return 1;
    return 0;
}

/* prefer_gemm with the reason when it says no (the applicable() tail of every entry here) */
static int preferred(const fdnn_conv_problem *p, char *why, size_t n)
{
    if (prefer_gemm(p)) return 1;
    snprintf(why, n, "GEMM is preferred only where it beats the direct kernels (see conv_gemm_pref.c)");
    return 0;
}

static int applicable(const fdnn_conv_problem *p, char *why, size_t n)
{
    return fdnn_cpu_conv_gemm_applicable(p, why, n) && preferred(p, why, n);
}

static size_t ws_fwd(const fdnn_conv_problem *p) { return fdnn_conv_fwd__im2col_gemm.workspace(p); }
static size_t ws_bd(const fdnn_conv_problem *p) { return fdnn_conv_bwd_data__im2col_gemm.workspace(p); }
static size_t ws_bf(const fdnn_conv_problem *p) { return fdnn_conv_bwd_filter__im2col_gemm.workspace(p); }
static cudnnStatus_t run_fwd(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    return fdnn_conv_fwd__im2col_gemm.run(h, p, a);
}
static cudnnStatus_t run_bd(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    return fdnn_conv_bwd_data__im2col_gemm.run(h, p, a);
}
static cudnnStatus_t run_bf(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    return fdnn_conv_bwd_filter__im2col_gemm.run(h, p, a);
}

/* NHWC 1x1 stride-1 unpadded, every tensor packed (x, y: N,H,W,C with C innermost; filter
 * K,1,1,C): the whole batch is one SGEMM, x as an (N*H*W) x C matrix:
 *   fwd        y  (NHW x K) = x  (NHW x C) * W^T (C x K)
 *   bwd data   dx (NHW x C) = dy (NHW x K) * W   (K x C)
 *   bwd filter dW (K x C)   = dy^T (K x NHW) * x (NHW x C)   (one reduction over all images) */
static int nhwc_packed(const int64_t *s, const int *d, int ch, int n)
{
    return s[1] == 1 && (d[2] <= 1 || s[4] == ch) && (d[1] <= 1 || s[3] == (int64_t)d[2] * ch) &&
           (d[0] <= 1 || s[2] == (int64_t)d[1] * d[2] * ch) && (n <= 1 || s[0] == (int64_t)d[0] * d[1] * d[2] * ch);
}

/* What both NHWC SGEMM forms need: FLOAT throughout, groups 1, a KRSC filter, no vectorised
 * layouts, and x and y packed NHWC. */
static int nhwc_float_packed(const fdnn_conv_problem *p)
{
    return p->xtype == CUDNN_DATA_FLOAT && p->wtype == CUDNN_DATA_FLOAT && p->ytype == CUDNN_DATA_FLOAT &&
           p->compute_type == CUDNN_DATA_FLOAT && p->g == 1 && p->w_nhwc && p->x_vect <= 1 && p->y_vect <= 1 && p->w_vect <= 1 &&
           nhwc_packed(p->xs, p->in, p->c, p->n) && nhwc_packed(p->ys, p->out, p->k, p->n);
}

static int nhwc_unit(const fdnn_conv_problem *p)
{
    if (!nhwc_float_packed(p)) return 0;
    for (int i = 0; i < 3; i++)
        if (p->flt[i] != 1 || p->stride[i] != 1 || p->pad[i] != 0) return 0;
    if (p->ws[1] != 1 || p->ws[0] != p->c) return 0;
    return (int64_t)p->n * p->in[0] * p->in[1] * p->in[2] <= 0x7fffffff;
}

static int nhwc_applicable(const fdnn_conv_problem *p, char *why, size_t n)
{
    if (!nhwc_unit(p)) {
        snprintf(why, n, "NHWC 1x1 GEMM needs FLOAT, groups 1, a 1x1 stride-1 unpadded filter and packed NHWC x/y, KRSC filter");
        return 0;
    }
    return preferred(p, why, n);
}

static size_t ws_zero(const fdnn_conv_problem *p)
{
    (void)p;
    return 0;
}

static cudnnStatus_t nhwc_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    (void)h;
    int m = p->n * p->in[0] * p->in[1] * p->in[2], C = p->c, K = p->k;
    float al = (float)a->alpha, be = (float)a->beta;
    switch (p->dir) {
    case FDNN_CONV_FWD: fdnn_sgemm(0, 1, m, K, C, al, a->x, C, a->w, C, be, a->out, K); break;
    case FDNN_CONV_BWD_DATA: fdnn_sgemm(0, 0, m, C, K, al, a->y, K, a->w, C, be, a->out, C); break;
    case FDNN_CONV_BWD_FILTER: fdnn_sgemm(1, 0, K, C, m, al, a->y, K, a->x, C, be, a->out, C); break;
    }
    return CUDNN_STATUS_SUCCESS;
}

const fdnn_conv_impl fdnn_conv_fwd__gemm_nhwc_1x1 = {
    "conv_fwd__gemm_nhwc_1x1", CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 1, CUDNN_FMA_MATH, nhwc_applicable, ws_zero, nhwc_run,
};
const fdnn_conv_impl fdnn_conv_bwd_data__gemm_nhwc_1x1 = {
    "conv_bwd_data__gemm_nhwc_1x1", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1, CUDNN_FMA_MATH, nhwc_applicable, ws_zero, nhwc_run,
};
const fdnn_conv_impl fdnn_conv_bwd_filter__gemm_nhwc_1x1 = {
    "conv_bwd_filter__gemm_nhwc_1x1", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, 1, CUDNN_FMA_MATH, nhwc_applicable, ws_zero, nhwc_run,
};

/* NHWC, any filter size / stride / padding / dilation, every tensor packed (x, y: N,H,W,C;
 * filter K,R,S,C, so W is a row-major K x (R*S*C) matrix): im2col with channel-innermost
 * rows, then one SGEMM for the batch. The filter is read in place by the GEMM (no per-call
 * repacking of R*S*C*K floats, which the direct kernel pays and which dominates at small
 * outputs), only the activations are gathered:
 *   fwd        y  (NPQ x K)  = col (NPQ x RSC) * W^T,  col[(n,p,q)][(r,s,c)] = x tap
 *   bwd filter dW (K x RSC)  = dy^T (K x NPQ) * col (NPQ x RSC)
 *   bwd data   dx (NHW x C)  = dcol (NHW x K*R*S) * W (as a (K*R*S) x C matrix),
 *              dcol[(n,h,w)][(k,r,s)] = dy[n, p, q, k] where h = p*sh - ph + r*dh (likewise w),
 *              0 where no such p, q exists (any stride, no zero insertion)
 * Taps are flipped for CONVOLUTION mode. */
static int nhwc_col(const fdnn_conv_problem *p)
{
    if (!nhwc_float_packed(p)) return 0;
    if (p->in[0] != 1 || p->out[0] != 1 || p->flt[0] != 1) return 0;
    int R = p->flt[1], S = p->flt[2], C = p->c;
    if (p->ws[1] != 1 || p->ws[4] != C || p->ws[3] != (int64_t)S * C || p->ws[0] != (int64_t)R * S * C) return 0;
    int64_t rsc = (int64_t)R * S * C, rsk = (int64_t)R * S * p->k;
    int64_t mo = (int64_t)p->n * p->out[1] * p->out[2], mi = (int64_t)p->n * p->in[1] * p->in[2];
    return mo <= 0x7fffffff && mi <= 0x7fffffff && rsc <= 0x7fffffff && rsk <= 0x7fffffff;
}

static int col_applicable(const fdnn_conv_problem *p, char *why, size_t n)
{
    if (!nhwc_col(p)) {
        snprintf(why, n, "NHWC im2col GEMM needs FLOAT, groups 1, 2-D, packed NHWC x/y and a packed KRSC filter");
        return 0;
    }
    return preferred(p, why, n);
}

static size_t col_workspace(const fdnn_conv_problem *p)
{
    int RS = p->flt[1] * p->flt[2];
    if (p->dir == FDNN_CONV_BWD_DATA) return (size_t)p->n * p->in[1] * p->in[2] * p->k * RS * sizeof(float);
    return (size_t)p->n * p->out[1] * p->out[2] * p->c * RS * sizeof(float);
}

/* col[(n,p,q)][(r,s,c)]: the x value that multiplies W[k][r][s][c] for output (n,p,q) */
static void nhwc_im2col(const fdnn_conv_problem *p, const float *x, float *col)
{
    int R = p->flt[1], S = p->flt[2], C = p->c, H = p->in[1], W = p->in[2], P = p->out[1], Q = p->out[2];
    int cc = p->cross_correlation;
    int64_t rsc = (int64_t)R * S * C, m = (int64_t)p->n * P * Q;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < m; i++) {
        int n = (int)(i / ((int64_t)P * Q)), pp = (int)(i / Q % P), q = (int)(i % Q);
        float *row = col + i * rsc;
        for (int r = 0; r < R; r++) {
            int h = pp * p->stride[1] - p->pad[1] + (cc ? r : R - 1 - r) * p->dil[1];
            for (int s = 0; s < S; s++) {
                int w = q * p->stride[2] - p->pad[2] + (cc ? s : S - 1 - s) * p->dil[2];
                float *d = row + ((int64_t)r * S + s) * C;
                if (h < 0 || h >= H || w < 0 || w >= W) memset(d, 0, sizeof(float) * (size_t)C);
                else memcpy(d, x + n * p->xs[0] + h * p->xs[3] + w * p->xs[4], sizeof(float) * (size_t)C);
            }
        }
    }
}

/* dcol[(n,h,w)][(k,r,s)]: the dy value that multiplies W[k][r][s][c] for dx (n,h,w,c) */
static void nhwc_dcol(const fdnn_conv_problem *p, const float *dy, float *col)
{
    int R = p->flt[1], S = p->flt[2], K = p->k, H = p->in[1], W = p->in[2], P = p->out[1], Q = p->out[2];
    int cc = p->cross_correlation, RS = R * S;
    int64_t m = (int64_t)p->n * H * W, rsk = (int64_t)RS * K;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < m; i++) {
        int n = (int)(i / ((int64_t)H * W)), h = (int)(i / W % H), w = (int)(i % W);
        float *row = col + i * rsk;
        for (int r = 0; r < R; r++) {
            int u = h + p->pad[1] - (cc ? r : R - 1 - r) * p->dil[1];
            int pp = u >= 0 && u % p->stride[1] == 0 ? u / p->stride[1] : -1;
            for (int s = 0; s < S; s++) {
                int v = w + p->pad[2] - (cc ? s : S - 1 - s) * p->dil[2];
                int q = v >= 0 && v % p->stride[2] == 0 ? v / p->stride[2] : -1;
                float *d = row + r * S + s;
                if (pp < 0 || pp >= P || q < 0 || q >= Q) {
                    for (int k = 0; k < K; k++) d[(int64_t)k * RS] = 0.0f;
                } else {
                    const float *src = dy + n * p->ys[0] + pp * p->ys[3] + q * p->ys[4];
                    for (int k = 0; k < K; k++) d[(int64_t)k * RS] = src[k];
                }
            }
        }
    }
}

static cudnnStatus_t col_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    (void)h;
    if (a->workspace_size < col_workspace(p))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workspace too small: %zu bytes, need %zu", a->workspace_size, col_workspace(p));
    int RS = p->flt[1] * p->flt[2], C = p->c, K = p->k;
    int mo = p->n * p->out[1] * p->out[2], mi = p->n * p->in[1] * p->in[2];
    float al = (float)a->alpha, be = (float)a->beta, *col = a->workspace;
    switch (p->dir) {
    case FDNN_CONV_FWD:
        nhwc_im2col(p, a->x, col);
        fdnn_sgemm(0, 1, mo, K, RS * C, al, col, (int64_t)RS * C, a->w, (int64_t)RS * C, be, a->out, K);
        break;
    case FDNN_CONV_BWD_FILTER:
        nhwc_im2col(p, a->x, col);
        fdnn_sgemm(1, 0, K, RS * C, mo, al, a->y, K, col, (int64_t)RS * C, be, a->out, (int64_t)RS * C);
        break;
    case FDNN_CONV_BWD_DATA:
        nhwc_dcol(p, a->y, col);
        fdnn_sgemm(0, 0, mi, C, RS * K, al, col, (int64_t)RS * K, a->w, C, be, a->out, C);
        break;
    }
    return CUDNN_STATUS_SUCCESS;
}

const fdnn_conv_impl fdnn_conv_fwd__gemm_nhwc_col = {
    "conv_fwd__gemm_nhwc_col", CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 1, CUDNN_FMA_MATH, col_applicable, col_workspace, col_run,
};
const fdnn_conv_impl fdnn_conv_bwd_data__gemm_nhwc_col = {
    "conv_bwd_data__gemm_nhwc_col", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1, CUDNN_FMA_MATH, col_applicable, col_workspace, col_run,
};
const fdnn_conv_impl fdnn_conv_bwd_filter__gemm_nhwc_col = {
    "conv_bwd_filter__gemm_nhwc_col", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, 1, CUDNN_FMA_MATH, col_applicable, col_workspace, col_run,
};

const fdnn_conv_impl fdnn_conv_fwd__gemm_pref = {
    "conv_fwd__im2col_gemm_pref", CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 1, CUDNN_FMA_MATH, applicable, ws_fwd, run_fwd,
};
const fdnn_conv_impl fdnn_conv_bwd_data__gemm_pref = {
    "conv_bwd_data__im2col_gemm_pref", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1, CUDNN_FMA_MATH, applicable, ws_bd, run_bd,
};
const fdnn_conv_impl fdnn_conv_bwd_filter__gemm_pref = {
    "conv_bwd_filter__im2col_gemm_pref", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, 1, CUDNN_FMA_MATH, applicable, ws_bf, run_bf,
};
