/* Depthwise convolution (groups == C == K), FLOAT, 2-D, through the depthwise kernels of
 * conv_nhwc_avx512.c (vectors over 16 channels, 8 output positions per register tile) or
 * conv_nhwc_avx2.c (8 channels, tiles for 16 registers), whichever the CPU runs.
 * Per call the filter is packed into wp[r][s][c] inside the workspace and the input is copied
 * into a zero-padded NHWC buffer unless it is channel-innermost with no padding. 3x3 stride 1
 * forward / backward data runs as Winograd F(2,3) along W (6 instead of 9 FMAs per output, the
 * transforms are adds; filter transform u[r][k][c] with alpha, in the workspace). Backward data
 * is the forward kernel over dy with the flipped filter and padding (R-1)*dil - pad; with a
 * stride above 1 over dy zero-inserted into the workspace first (dy[o] at o * stride of an
 * H + 2 pad - (R-1) dil buffer: 3x3 stride 2, 144 channels 56x56, 7.97 ms on the reference
 * kernel -> 0.096); backward filter reduces each 16-channel block and tap in one thread (fixed
 * order). Listed under the same algorithm enums as the dense direct kernels (fwd
 * IMPLICIT_PRECOMP_GEMM, bwd-data ALGO_1, bwd-filter ALGO_3), after them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conv_nhwc.h"
#include "cpu_features.h"

typedef struct {
    int nb, c, ih, iw, oh, ow, ph, pw, sh, sw, dh, dw, R, S;
    const int64_t *is, *os;
    int copy_in, copy_dy, fast3, nchunk, wino;
    /* backward data with stride > 1: dy zero-inserted into an hu x wu channel-innermost buffer
     * (dy[o] at o * stride), its strides ups; then the stride-1 path over it */
    int up, hu, wu;
    int64_t ups[5];
    int unpad; /* forward / backward data through dw_fwd_u (padding in the kernel) */
} dgeo;

static int direct_forced(void) { return fdnn_env_int("FREEDNN_DW_DIRECT", 0) == 1; }

static void make(const fdnn_conv_problem *p, dgeo *g)
{
    memset(g, 0, sizeof *g);
    g->nb = p->n; g->c = p->c; g->R = p->flt[1]; g->S = p->flt[2]; g->dh = p->dil[1]; g->dw = p->dil[2];
    if (p->dir == FDNN_CONV_BWD_DATA) {
        g->ih = p->out[1]; g->iw = p->out[2]; g->oh = p->in[1]; g->ow = p->in[2];
        g->ph = (g->R - 1) * g->dh - p->pad[1]; g->pw = (g->S - 1) * g->dw - p->pad[2];
        g->sh = g->sw = 1;
        g->is = p->ys; g->os = p->xs;
        if (p->stride[1] > 1 || p->stride[2] > 1) {
            /* dx = the stride-1 forward (flipped taps, padding (R-1)*dil - pad) over dy spread out
             * to the positions o * stride of an H + 2 pad - (R-1) dil buffer (output size H) */
            g->up = 1;
            g->hu = p->in[1] + 2 * p->pad[1] - (g->R - 1) * g->dh;
            g->wu = p->in[2] + 2 * p->pad[2] - (g->S - 1) * g->dw;
            g->ih = g->hu, g->iw = g->wu;
            g->ups[0] = (int64_t)g->hu * g->wu * g->c, g->ups[1] = 1, g->ups[2] = 0, g->ups[3] = (int64_t)g->wu * g->c, g->ups[4] = g->c;
            g->is = g->ups;
        }
    } else {
        g->ih = p->in[1]; g->iw = p->in[2]; g->oh = p->out[1]; g->ow = p->out[2];
        g->ph = p->pad[1]; g->pw = p->pad[2]; g->sh = p->stride[1]; g->sw = p->stride[2];
        g->is = p->xs; g->os = p->ys;
    }
    /* 3x3 stride-1 forward / backward data into channel-innermost y: padding in the kernel */
    g->fast3 = p->dir != FDNN_CONV_BWD_FILTER && g->R == 3 && g->S == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 &&
               (g->os[1] == 1 || g->c == 1) && (g->is[1] == 1 || g->c == 1) && g->ph >= 0 && g->pw >= 0;
    /* 3x3 stride-1 backward filter from the unpadded channel-innermost x, rows cut into
     * fixed chunks (partial sums added in order) so both threads stay busy: 8, or 2 from 16
     * rows on (dw_3x3_144_56: 9 channel blocks alone split 5 / 4 over two threads; 2 chunks:
     * 0.072 -> 0.059 ms) */
    if (p->dir == FDNN_CONV_BWD_FILTER && g->R == 3 && g->S == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 &&
        (g->is[1] == 1 || g->c == 1)) {
        g->fast3 = 1;
        g->nchunk = g->nb * g->oh >= 64 ? 8 : g->nb * g->oh >= 16 ? 2 : 1;
    }
    /* forward / backward data 3x3 stride 1: Winograd F(2,3) along W (FREEDNN_DW_DIRECT=1: the
     * direct 3x3 kernel, for comparison) */
    g->wino = g->fast3 && p->dir != FDNN_CONV_BWD_FILTER && !direct_forced();
    g->copy_in = !g->fast3 && (g->ph || g->pw || (g->is[1] != 1 && g->c > 1));
    /* forward / backward data from channel-innermost x into channel-innermost y: padding in the
     * kernel where the instruction set has one (dw_fwd_u), no padded copy */
    const fdnn_nhwc_kernels *K = fdnn_nhwc_kernels_get();
    if (g->copy_in && p->dir != FDNN_CONV_BWD_FILTER && K && K->dw_fwd_u && (g->is[1] == 1 || g->c == 1) && (g->os[1] == 1 || g->c == 1) &&
        g->R <= FDNN_DWU_MAXR && g->ph >= 0 && g->pw >= 0) {
        g->copy_in = 0;
        g->unpad = 1;
    }
    g->copy_dy = p->dir == FDNN_CONV_BWD_FILTER && p->ys[1] != 1 && g->c > 1;
}

int fdnn_dw_shape_ok(const fdnn_conv_problem *p, const char *who, char *why, size_t n)
{
    if (p->xtype != CUDNN_DATA_FLOAT || p->wtype != CUDNN_DATA_FLOAT || p->ytype != CUDNN_DATA_FLOAT || p->compute_type != CUDNN_DATA_FLOAT) {
        snprintf(why, n, "the %s kernels handle FLOAT only", who);
        return 0;
    }
    if (p->g != p->c || p->k != p->c || p->g == 1) {
        snprintf(why, n, "the %s kernels need groups == C == K > 1", who);
        return 0;
    }
    if (p->flt[0] != 1 || p->in[0] != 1 || p->out[0] != 1 || p->x_vect > 1 || p->y_vect > 1 || p->w_vect > 1) {
        snprintf(why, n, "the %s kernels handle 2-D, non-vectorised tensors only", who);
        return 0;
    }
    return 1;
}

int fdnn_dw_applicable(const fdnn_conv_problem *p, char *why, size_t n)
{
    if (!fdnn_nhwc_kernels_get()) {
        snprintf(why, n, "the depthwise kernels need AVX-512 (F, BW, DQ, VL) or AVX2 with FMA and F16C, which this CPU or build lacks");
        return 0;
    }
    if (!fdnn_dw_shape_ok(p, "depthwise", why, n)) return 0;
    if (p->dir == FDNN_CONV_BWD_DATA && (p->pad[1] > (p->flt[1] - 1) * p->dil[1] || p->pad[2] > (p->flt[2] - 1) * p->dil[2])) {
        snprintf(why, n, "the depthwise backward-data kernel needs pad <= (filter-1)*dilation");
        return 0;
    }
    return 1;
}

static size_t al(size_t floats) { return floats ? (floats + 16) * sizeof(float) : 0; }

static float *take(char **cur, size_t floats)
{
    uintptr_t v = ((uintptr_t)*cur + 63) & ~(uintptr_t)63;
    *cur = (char *)v + floats * sizeof(float);
    return (float *)v;
}

size_t fdnn_dw_workspace(const fdnn_conv_problem *p)
{
    dgeo g;
    make(p, &g);
    size_t padded = g.copy_in ? (size_t)g.nb * (g.ih + 2 * g.ph) * (g.iw + 2 * g.pw) * g.c : 0;
    size_t dyc = g.copy_dy ? (size_t)g.nb * g.oh * g.ow * g.c : 0;
    const size_t upb = g.up ? (size_t)g.nb * g.hu * g.wu * g.c : 0;
    return al((size_t)g.R * g.S * g.c * (g.nchunk > 1 ? g.nchunk : 1)) + al(padded) + al(dyc) + al(g.wino ? (size_t)12 * g.c : 0) + al(upb);
}

cudnnStatus_t fdnn_dw_run(const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    if (a->workspace_size < fdnn_dw_workspace(p))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workspace too small: %zu bytes, need %zu", a->workspace_size, fdnn_dw_workspace(p));
    dgeo g;
    make(p, &g);
    const fdnn_nhwc_kernels *K = fdnn_nhwc_kernels_get();
    if (!K) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the depthwise kernels need AVX-512 or AVX2, which this CPU or build lacks");
    char *cur = a->workspace;
    int Hp = g.ih + 2 * g.ph, Wp = g.iw + 2 * g.pw, R = g.R, S = g.S, cc = p->cross_correlation, bwd = p->dir == FDNN_CONV_BWD_DATA;
    float *wp = take(&cur, (size_t)R * S * g.c * (g.nchunk > 1 ? g.nchunk : 1)); /* packed filter, or the gradient accumulator(s) */
    const float *in = bwd ? a->y : a->x;
    if (g.up) { /* zero-inserted dy: dy[n, o_h, o_w, c] at row o_h * stride, column o_w * stride */
        float *u = take(&cur, (size_t)g.nb * g.hu * g.wu * g.c);
        const int P = p->out[1], Q = p->out[2], sh = p->stride[1], sw = p->stride[2], C = g.c;
        const int64_t *ys = p->ys;
#pragma omp parallel for collapse(2) schedule(static)
        for (int n = 0; n < g.nb; n++)
            for (int h = 0; h < g.hu; h++) {
                float *d = u + ((int64_t)n * g.hu + h) * g.wu * C;
                memset(d, 0, sizeof(float) * (size_t)g.wu * C);
                if (h % sh || h / sh >= P) continue;
                const float *sr = (const float *)a->y + n * ys[0] + (int64_t)(h / sh) * ys[3];
                for (int o = 0; o < Q && o * sw < g.wu; o++)
                    for (int c = 0; c < C; c++) d[(int64_t)o * sw * C + c] = sr[o * ys[4] + c * ys[1]];
            }
        in = u;
    }
    const float *xx = in;
    int64_t xn = g.is[0], xh = g.is[3], xw = g.is[4];
    if (g.copy_in) {
        float *xp = take(&cur, (size_t)g.nb * Hp * Wp * g.c);
        fdnn_nhwc_pad_copy(in, g.is, g.nb, g.c, g.ih, g.iw, g.ph, g.pw, xp);
        xx = xp; xn = (int64_t)Hp * Wp * g.c; xh = (int64_t)Wp * g.c; xw = g.c;
    }
    if (p->dir == FDNN_CONV_BWD_FILTER) {
        fdnn_dw_wgrad k = { .n = g.nb, .c = g.c, .p = g.oh, .q = g.ow, .r = R, .s = S, .sh = g.sh, .sw = g.sw, .dh = g.dh, .dw = g.dw,
                            .x = xx, .xn = xn, .xh = xh, .xw = xw, .acc = wp };
        if (g.copy_dy) {
            float *d = take(&cur, (size_t)g.nb * g.oh * g.ow * g.c);
            fdnn_nhwc_pad_copy(a->y, p->ys, g.nb, g.c, g.oh, g.ow, 0, 0, d);
            k.dy = d; k.yn = (int64_t)g.oh * g.ow * g.c; k.yh = (int64_t)g.ow * g.c; k.yw = g.c;
        } else {
            k.dy = a->y; k.yn = p->ys[0]; k.yh = p->ys[3]; k.yw = p->ys[4];
        }
        float *dw = a->out, alpha = (float)a->alpha, beta = (float)a->beta;
        const int nch = g.fast3 && g.nchunk > 1 ? g.nchunk : 1;
        const int64_t rsc = (int64_t)R * S * g.c;
        /* one parallel region: the kernel's orphaned loop, its barrier, then the blend (the
         * chunk sums added in fixed order, j = 0, 1, ...); a region of its own each cost the
         * 0.04 ms call a few microseconds */
        if (!g.fast3) K->dw_wgrad(&k); /* a parallel region of its own */
#pragma omp parallel
        {
            if (g.fast3) K->dw_wgrad_3x3s1(&k, g.ih, g.iw, g.ph, g.pw, nch);
#pragma omp for schedule(static)
            for (int c = 0; c < g.c; c++)
                for (int r = 0; r < R; r++)
                    for (int s = 0; s < S; s++) {
                        int64_t wo = fdnn_conv_off(p->ws, 1, c, 0, 0, cc ? r : R - 1 - r, cc ? s : S - 1 - s);
                        const int64_t i = ((int64_t)r * S + s) * g.c + c;
                        float sum = wp[i];
                        for (int j = 1; j < nch; j++) sum += wp[(int64_t)j * rsc + i];
                        float v = alpha * sum;
                        if (beta != 0) v += beta * dw[wo];
                        dw[wo] = v;
                    }
        }
        return CUDNN_STATUS_SUCCESS;
    }
    const float *w = a->w;
    for (int r = 0; r < R; r++)
        for (int s = 0; s < S; s++) {
            int rr = (cc ^ bwd) ? r : R - 1 - r, ss = (cc ^ bwd) ? s : S - 1 - s;
            for (int c = 0; c < g.c; c++) wp[((int64_t)r * S + s) * g.c + c] = w[fdnn_conv_off(p->ws, 1, c, 0, 0, rr, ss)];
        }
    fdnn_dw_fwd k = { .n = g.nb, .c = g.c, .p = g.oh, .q = g.ow, .r = R, .s = S, .sh = g.sh, .sw = g.sw, .dh = g.dh, .dw = g.dw,
                      .x = xx, .xn = xn, .xh = xh, .xw = xw, .y = a->out, .yn = g.os[0], .yh = g.os[3], .yw = g.os[4], .yc = g.os[1],
                      .wp = wp, .alpha = (float)a->alpha, .beta = (float)a->beta };
    if (g.wino) {   /* u[r][k][c]: F(2,3) filter transform of wp row r, times alpha */
        float *u = take(&cur, (size_t)12 * g.c), al2 = 0.5f * (float)a->alpha;
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < g.c; c++) {
                float g0 = wp[(r * 3 + 0) * g.c + c], g1 = wp[(r * 3 + 1) * g.c + c], g2 = wp[(r * 3 + 2) * g.c + c];
                u[(r * 4 + 0) * g.c + c] = (float)a->alpha * g0;
                u[(r * 4 + 1) * g.c + c] = al2 * (g0 + g1 + g2);
                u[(r * 4 + 2) * g.c + c] = al2 * (g0 - g1 + g2);
                u[(r * 4 + 3) * g.c + c] = (float)a->alpha * g2;
            }
        k.wp = u;
        k.yc = 1;
        /* 4 output rows per task: 6 input rows transformed per 4 (3 rows: 5 per 3, and 56-row
         * images split 10 / 9 over two threads); dw_3x3_144_56 forward 0.064 -> 0.056 ms */
        K->dw_fwd_3x3s1_wino(&k, g.ih, g.iw, g.ph, g.pw, 4);
    } else if (g.fast3) {
        k.yc = 1;
        K->dw_fwd_3x3s1(&k, g.ih, g.iw, g.ph, g.pw);
    } else if (g.unpad) {
        K->dw_fwd_u(&k, g.ih, g.iw, g.ph, g.pw);
    } else {
        K->dw_fwd(&k);
    }
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    (void)h;
    return fdnn_dw_run(p, a);
}

const fdnn_conv_impl fdnn_conv_fwd__depthwise_nhwc = {
    "conv_fwd__depthwise_nhwc", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1, CUDNN_FMA_MATH, fdnn_dw_applicable, fdnn_dw_workspace, run,
};
const fdnn_conv_impl fdnn_conv_bwd_data__depthwise_nhwc = {
    "conv_bwd_data__depthwise_nhwc", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1, CUDNN_FMA_MATH, fdnn_dw_applicable, fdnn_dw_workspace, run,
};
const fdnn_conv_impl fdnn_conv_bwd_filter__depthwise_nhwc = {
    "conv_bwd_filter__depthwise_nhwc", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, 1, CUDNN_FMA_MATH, fdnn_dw_applicable, fdnn_dw_workspace, run,
};
