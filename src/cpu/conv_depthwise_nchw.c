/* Depthwise convolution (groups == C == K) on NCHW-like activations, FLOAT, 2-D, stride 1 (forward
 * and weight gradient also column stride 2, row stride 1 or 2), filters up to 7x7 with any padding
 * and dilation, on CPUs with AVX-512 or AVX2: each channel's plane is
 * contiguous along W, so the kernels (conv_depthwise_nchw_avx512.c, 16 columns a vector;
 * conv_depthwise_nchw_avx2.c, 8) run along W with the filter taps broadcast, straight from x / dy
 * and into y / dx: no copy into channel-innermost buffers and back, which the NHWC depthwise
 * kernels needed for NCHW tensors (dw_3x3_144_56 NCHW, 2 threads: 0.36-0.41 ms a direction
 * through them). Backward data is the forward over dy with the filter flipped and padding
 * (R-1)*dilation - pad (so pad <= (R-1)*dilation); the weight gradient reduces each channel in
 * one thread in a fixed order (deterministic) into workspace sums, then blends alpha * sum +
 * beta * dw. Listed under the same algorithm enums as the other depthwise kernels (fwd
 * IMPLICIT_PRECOMP_GEMM, bwd-data ALGO_1, bwd-filter ALGO_3), before them. */
#include <stdio.h>
#include <stdlib.h>
#include "conv_cpu.h"
#include "conv_depthwise_nchw.h"
#include "cpu_features.h"

/* the kernel set this CPU runs: 2 AVX-512, 1 AVX2 + FMA, 0 none (FREEDNN_CPU_NO_AVX512 /
 * FREEDNN_CPU_NO_AVX2 honoured by the feature checks) */
static int isa(void)
{
#ifdef FDNN_HAVE_AVX512
    if (fdnn_cpu_has_avx512()) return 2;
#endif
#ifdef FDNN_HAVE_AVX2
    if (fdnn_cpu_has_avx2()) return 1;
#endif
    return 0;
}

static int applicable(const fdnn_conv_problem *p, char *why, size_t n)
{
    if (!isa()) {
        snprintf(why, n, "the NCHW depthwise kernels need AVX-512 (F, BW, DQ, VL) or AVX2 with FMA, which this CPU or build lacks");
        return 0;
    }
    if (!fdnn_dw_shape_ok(p, "NCHW depthwise", why, n)) return 0;
    if (p->flt[1] > FDNN_DWC_MAXR || p->flt[2] > FDNN_DWC_MAXR) {
        snprintf(why, n, "the NCHW depthwise kernels handle filters up to %dx%d", FDNN_DWC_MAXR, FDNN_DWC_MAXR);
        return 0;
    }
    /* strides 1 x 1, or column stride 2 with row stride 1 or 2 (forward and weight gradient) */
    const int s11 = p->stride[1] == 1 && p->stride[2] == 1, s2 = p->stride[2] == 2 && p->stride[1] <= 2;
    if (!s11 && !s2) {
        snprintf(why, n, "the NCHW depthwise kernels need stride 1, or a column stride of 2 and a row stride of 1 or 2");
        return 0;
    }
    /* columns contiguous and channels not innermost (channel-innermost data goes to the NHWC kernels) */
    if (p->xs[4] != 1 || p->ys[4] != 1 || (p->xs[1] == 1 && p->in[2] > 1) || (p->ys[1] == 1 && p->out[2] > 1)) {
        snprintf(why, n, "the NCHW depthwise kernels need x and y with contiguous rows and channels not innermost");
        return 0;
    }
    if (p->dir == FDNN_CONV_BWD_DATA && s11 && (p->pad[1] > (p->flt[1] - 1) * p->dil[1] || p->pad[2] > (p->flt[2] - 1) * p->dil[2])) {
        snprintf(why, n, "the NCHW depthwise backward-data kernel needs pad <= (filter-1)*dilation");
        return 0;
    }
    return 1;
}

static size_t workspace(const fdnn_conv_problem *p)
{
    /* taps with alpha (forward / backward data) or the gradient sums (backward filter) */
    return (size_t)p->c * p->flt[1] * p->flt[2] * sizeof(float);
}

typedef void (*rows_fn)(const fdnn_dwc_fwd *, int, int, int, int);
typedef void (*wg_fn)(const fdnn_dwc_wgrad *, int, float *);

/* the instruction set's kernels (isa() != 0) */
static void kernels(int is, rows_fn *rows, wg_fn *wg)
{
    *rows = NULL, *wg = NULL;
#ifdef FDNN_HAVE_AVX512
    if (is == 2) *rows = fdnn_avx512_dwc_rows, *wg = fdnn_avx512_dwc_wg;
#endif
#ifdef FDNN_HAVE_AVX2
    if (is == 1) *rows = fdnn_avx2_dwc_rows, *wg = fdnn_avx2_dwc_wg;
#endif
}

/* tasks of (image, channel, block of 32 output rows), statically over the threads */
static void fwd(rows_fn rows, const fdnn_dwc_fwd *k)
{
    const int nrb = (k->p + 31) / 32;
    const int64_t tasks = (int64_t)k->n * k->c * nrb;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < tasks; t++) {
        const int64_t pl = t / nrb;
        const int oh0 = (int)(t % nrb) * 32;
        rows(k, (int)(pl / k->c), (int)(pl % k->c), oh0, oh0 + 32 < k->p ? oh0 + 32 : k->p);
    }
}

static cudnnStatus_t run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    (void)h;
    if (!a->workspace || a->workspace_size < workspace(p))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workspace too small: %zu bytes, need %zu", a->workspace_size, workspace(p));
    rows_fn rows;
    wg_fn wg;
    kernels(isa(), &rows, &wg);
    if (!rows || !wg) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the NCHW depthwise kernels need AVX-512 or AVX2 with FMA, which this CPU or build lacks");
    const int R = p->flt[1], S = p->flt[2], C = p->c, cc = p->cross_correlation;
    float *tw = a->workspace;
    if (p->dir == FDNN_CONV_BWD_FILTER) {
        fdnn_dwc_wgrad k = { .n = p->n, .c = C, .ih = p->in[1], .iw = p->in[2], .p = p->out[1], .q = p->out[2], .r = R, .s = S,
                             .ph = p->pad[1], .pw = p->pad[2], .dh = p->dil[1], .dw = p->dil[2], .sh = p->stride[1], .sw = p->stride[2],
                             .x = a->x, .xn = p->xs[0], .xc = p->xs[1],
                             .xh = p->xs[3], .dy = a->y, .yn = p->ys[0], .yc = p->ys[1], .yh = p->ys[3], .sum = tw };
        float *dw = a->out;
        const float alpha = (float)a->alpha, beta = (float)a->beta;
#pragma omp parallel for schedule(static)
        for (int c = 0; c < C; c++) {
            wg(&k, c, tw + (int64_t)c * R * S); /* each channel by one thread, in a fixed order */
            for (int r = 0; r < R; r++)
                for (int s = 0; s < S; s++) {
                    /* tap (r, s) of the sums is filter tap (r, s) for cross-correlation, flipped for convolution */
                    const int64_t wo = fdnn_conv_off(p->ws, 1, c, 0, 0, cc ? r : R - 1 - r, cc ? s : S - 1 - s);
                    float v = alpha * tw[((int64_t)c * R + r) * S + s];
                    if (beta != 0) v += beta * dw[wo];
                    dw[wo] = v;
                }
        }
        return CUDNN_STATUS_SUCCESS;
    }
    /* backward data of a strided layer runs the 'up' kernel with the forward's taps and padding */
    const int up = p->dir == FDNN_CONV_BWD_DATA && p->stride[2] == 2, bwd = p->dir == FDNN_CONV_BWD_DATA && !up;
    /* the taps in the order the kernel applies them, times alpha: x[.. + r*dh] meets w[r] for
     * cross-correlation and w[R-1-r] for convolution; backward data the other way round */
    const float *w = a->w;
    const float alpha = (float)a->alpha;
    for (int c = 0; c < C; c++)
        for (int r = 0; r < R; r++)
            for (int s = 0; s < S; s++) {
                const int same = cc ^ bwd;
                tw[((int64_t)c * R + r) * S + s] = alpha * w[fdnn_conv_off(p->ws, 1, c, 0, 0, same ? r : R - 1 - r, same ? s : S - 1 - s)];
            }
    fdnn_dwc_fwd k = { .n = p->n, .c = C, .r = R, .s = S, .dh = p->dil[1], .dw = p->dil[2], .sh = p->stride[1], .sw = p->stride[2], .wt = tw,
                       .beta = (float)a->beta };
    if (up) { /* dx from dy, the taps the forward's, its padding and strides */
        k.up = 1;
        k.ih = p->out[1], k.iw = p->out[2], k.p = p->in[1], k.q = p->in[2], k.ph = p->pad[1], k.pw = p->pad[2];
        k.x = a->y, k.xn = p->ys[0], k.xc = p->ys[1], k.xh = p->ys[3];
        k.y = a->out, k.yn = p->xs[0], k.yc = p->xs[1], k.yh = p->xs[3];
    } else if (bwd) { /* dx = the forward over dy, padding (R-1)*dil - pad */
        k.ih = p->out[1], k.iw = p->out[2], k.p = p->in[1], k.q = p->in[2];
        k.ph = (R - 1) * p->dil[1] - p->pad[1], k.pw = (S - 1) * p->dil[2] - p->pad[2];
        k.x = a->y, k.xn = p->ys[0], k.xc = p->ys[1], k.xh = p->ys[3];
        k.y = a->out, k.yn = p->xs[0], k.yc = p->xs[1], k.yh = p->xs[3];
    } else {
        k.ih = p->in[1], k.iw = p->in[2], k.p = p->out[1], k.q = p->out[2], k.ph = p->pad[1], k.pw = p->pad[2];
        k.x = a->x, k.xn = p->xs[0], k.xc = p->xs[1], k.xh = p->xs[3];
        k.y = a->out, k.yn = p->ys[0], k.yc = p->ys[1], k.yh = p->ys[3];
    }
    fwd(rows, &k);
    return CUDNN_STATUS_SUCCESS;
}

const fdnn_conv_impl fdnn_conv_fwd__depthwise_nchw = {
    "conv_fwd__depthwise_nchw", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1, CUDNN_FMA_MATH, applicable, workspace, run,
};
const fdnn_conv_impl fdnn_conv_bwd_data__depthwise_nchw = {
    "conv_bwd_data__depthwise_nchw", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1, CUDNN_FMA_MATH, applicable, workspace, run,
};
const fdnn_conv_impl fdnn_conv_bwd_filter__depthwise_nchw = {
    "conv_bwd_filter__depthwise_nchw", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, 1, CUDNN_FMA_MATH, applicable, workspace, run,
};
