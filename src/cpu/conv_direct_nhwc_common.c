/* Portable driver of the NHWC direct convolution (kernels in conv_nhwc_avx512.c and
 * conv_nhwc_avx2.c, whichever the CPU runs; fdnn_nhwc_kernels_get): FLOAT,
 * 2-D, groups == 1, any stride / padding / dilation, any x/y/w strides (NHWC runs in place;
 * other layouts are transposed through the workspace). Per call it
 *   1. packs the filter into wp[co/32][r][s][ci][32] (flipped / transposed as the direction
 *      needs) inside the workspace; nothing is cached between calls. Where the kernel can
 *      (K->fwd_packs: the AVX-512 one), it packs per 32-channel block itself, each thread
 *      the blocks it is about to use, into its own slot of the workspace (pack_block), so
 *      the packing is spread over the threads and the block is still in cache when used;
 *   2. copies the input activations into a zero-padded NHWC buffer unless they are already
 *      channel-innermost and the padding is 0;
 *   3. runs the kernel straight into y (vector stores when y is channel-innermost, else
 *      scalar stores of each register tile), so y's strides do not change the workspace.
 * Backward data is the forward convolution (stride 1) of dy with the transposed, flipped
 * filter and padding (R-1)*dil - pad; for stride > 1, dy is first spread with zeros between
 * its elements (stride*stride times the FLOPs, but the same fast kernel). Backward filter: the
 * kernel writes alpha * dW + beta * dw straight into a KRSC filter (any 1x1 filter too), else it
 * reduces into a float [r][s][k][c] accumulator in the workspace, then blends into dw. Workspace
 * sizes are exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conv_nhwc.h"
#include "conv_cpu.h"
#include "cpu_features.h"
#include "gemm_panel.h"

/* The convolution as the forward kernel sees it: input i (channels ci), output o. */
typedef struct {
    int nb, ci, co, ih, iw, oh, ow, ph, pw, sh, sw, dh, dw, R, S;
    const int64_t *is, *os;
    int copy_in, tmp_out;
    int unit_bwd;           /* bwd data, 1x1, no padding, stride > 1: strided output, no zero insertion */
    int col_bwd;            /* bwd data with few input channels (C < 16): GEMM into columns + gather */
    int hb, wb, ish, isw;   /* kernel input buffer dims; zero-insertion strides (bwd data) */
} geo;

static void make_geo(const fdnn_conv_problem *p, geo *g)
{
    memset(g, 0, sizeof *g);
    g->nb = p->n;
    g->R = p->flt[1];
    g->S = p->flt[2];
    g->dh = p->dil[1];
    g->dw = p->dil[2];
    if (p->dir == FDNN_CONV_BWD_DATA) {
        g->ci = p->k; g->co = p->c;
        g->ih = p->out[1]; g->iw = p->out[2]; g->oh = p->in[1]; g->ow = p->in[2];
        g->ph = (g->R - 1) * g->dh - p->pad[1];
        g->pw = (g->S - 1) * g->dw - p->pad[2];
        g->sh = g->sw = 1;
        g->ish = p->stride[1]; g->isw = p->stride[2];
        g->hb = g->oh + (g->R - 1) * g->dh; g->wb = g->ow + (g->S - 1) * g->dw;
        g->is = p->ys; g->os = p->xs;
        if (g->R == 1 && g->S == 1 && p->pad[1] == 0 && p->pad[2] == 0 && (g->ish > 1 || g->isw > 1)) {
            g->unit_bwd = 1;
            g->ish = g->isw = 1;
            g->oh = p->out[1]; g->ow = p->out[2];   /* kernel output: the dx positions that dy touches */
            g->hb = g->ih; g->wb = g->iw;
        }
    } else {
        g->ci = p->c; g->co = p->k;
        g->ih = p->in[1]; g->iw = p->in[2]; g->oh = p->out[1]; g->ow = p->out[2];
        g->ph = p->pad[1]; g->pw = p->pad[2];
        g->sh = p->stride[1]; g->sw = p->stride[2];
        g->ish = g->isw = 1;
        g->hb = g->ih + 2 * g->ph; g->wb = g->iw + 2 * g->pw;
        g->is = p->xs; g->os = p->ys;
    }
    if (p->dir == FDNN_CONV_BWD_DATA && p->c < 16 && !g->unit_bwd) {
        /* columns[pos][tap] = dy[pos][:] . w[:][tap] needs a packed filter and dy packed per image */
        int64_t rsc = (int64_t)p->c * g->R * g->S;
        int dy_nhwc = p->ys[1] == 1 && p->ys[4] == p->k && p->ys[3] == (int64_t)p->out[2] * p->k;
        int dy_nchw = p->ys[4] == 1 && p->ys[3] == p->out[2] && p->ys[1] == (int64_t)p->out[1] * p->out[2];
        g->col_bwd = p->ws[0] == rsc && (dy_nhwc || dy_nchw);
    }
    g->copy_in = g->ph != 0 || g->pw != 0 || g->ish > 1 || g->isw > 1 || g->hb != g->ih || g->wb != g->iw || (g->is[1] != 1 && g->ci > 1);
    g->tmp_out = g->os[1] != 1 && g->co > 1;
}

#ifdef FDNN_HAVE_AVX512
static const fdnn_nhwc_kernels k_avx512 = {
    "AVX-512", 16, 1, fdnn_avx512_nhwc_fwd, fdnn_avx512_nhwc_wgrad, fdnn_avx512_nhwc_pack_rows, fdnn_avx512_nhwc_pack_gather,
    fdnn_avx512_dw_fwd, fdnn_avx512_dw_fwd_3x3s1,
    fdnn_avx512_dw_fwd_3x3s1_wino, fdnn_avx512_dw_wgrad, fdnn_avx512_dw_wgrad_3x3s1, fdnn_avx512_widen16, fdnn_avx512_narrow16,
    fdnn_transpose_avx512, fdnn_avx512_dw_fwd_u,
};
#endif
#ifdef FDNN_HAVE_AVX2
static const fdnn_nhwc_kernels k_avx2 = {
    "AVX2", 8, 0, fdnn_avx2_nhwc_fwd, fdnn_avx2_nhwc_wgrad, fdnn_avx2_nhwc_pack_rows, fdnn_avx2_nhwc_pack_gather, fdnn_avx2_dw_fwd, fdnn_avx2_dw_fwd_3x3s1,
    fdnn_avx2_dw_fwd_3x3s1_wino, fdnn_avx2_dw_wgrad, fdnn_avx2_dw_wgrad_3x3s1, fdnn_avx2_widen16, fdnn_avx2_narrow16,
    fdnn_transpose_avx2, NULL,
};
#endif

const fdnn_nhwc_kernels *fdnn_nhwc_kernels_get(void)
{
#ifdef FDNN_HAVE_AVX512
    if (fdnn_cpu_has_avx512()) return &k_avx512;
#endif
#ifdef FDNN_HAVE_AVX2
    if (fdnn_cpu_has_avx2()) return &k_avx2;
#endif
    return NULL;
}

void fdnn_nhwc_wgrad_drive(const fdnn_nhwc_wgrad *a, int vb, int kbn, int chunk_pos, double l2_bytes, const fdnn_nhwc_wg_tile *full,
                           const fdnn_nhwc_wg_tile *partial)
{
    int bn = a->swap ? a->ci : a->co, vn = a->swap ? a->co : a->ci;   /* broadcast / vector channel counts */
    /* nk broadcast blocks of near-equal size, the larger ones spread evenly (block kb is
     * bn*kb/nk .. bn*(kb+1)/nk: 64 = 11 blocks of 5-6, no narrow last tile). Where the tasks
     * would not divide evenly over the threads and there are few of them, one or more blocks
     * more, if they keep at least kbn - 1 channels (1x1 64->64: 11 tasks split 6 / 5 over two
     * threads, so 36 / 28 channels; 12 blocks of 5-6 split 32 / 32). Which tile computes an
     * element does not change its sum (rows in a fixed order), so results do not depend on it. */
    int nk = (bn + kbn - 1) / kbn, nc = (vn + vb - 1) / vb, rs = a->r * a->s;
    const int nt = fdnn_cpu_threads();
    if (nt > 1 && ((int64_t)rs * nc * nk) % nt && (int64_t)rs * nc * nk < 8 * nt)
        for (int k2 = nk + 1; k2 <= nk + nt && bn / k2 >= kbn - 1; k2++)
            if (((int64_t)rs * nc * k2) % nt == 0) {
                nk = k2;
                break;
            }
    int64_t tasks = (int64_t)rs * nc * nk, rows = (int64_t)a->n * a->p;
    int64_t rows_per_chunk = chunk_pos / a->q;
    if (rows_per_chunk < 1) rows_per_chunk = 1;
    int64_t chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;
    /* chunk 0 stores alpha * sum + beta * out, every later chunk adds alpha * its sum */
    const float ab_first[2] = { a->alpha, a->beta }, ab_next[2] = { a->alpha, 1.0f };
    /* task order. Taps and vector blocks innermost (each thread keeps its broadcast channels in
     * L1 and writes its rows of a KRSC dw front to back) where one chunk of the vector source
     * fits in L2, as it is then read once per broadcast block; else broadcast blocks innermost
     * (the vector slice stays in L1 and the broadcast source is read once per vector block) */
    int64_t crow = rows_per_chunk < rows ? rows_per_chunk : rows;
    int order = (double)crow * (a->swap ? a->yh : a->sh * a->xh) * sizeof(float) <= l2_bytes;
#pragma omp parallel
    {
        for (int64_t ch = 0; ch < chunks; ch++) {
            int64_t row0 = ch * rows_per_chunk, row1 = row0 + rows_per_chunk < rows ? row0 + rows_per_chunk : rows;
            /* static schedule over the same count: every thread owns the same tasks in every chunk */
#pragma omp for schedule(static) nowait
            for (int64_t t = 0; t < tasks; t++) {
                int kb, cb, tap;
                if (order) {
                    cb = (int)(t % nc); tap = (int)((t / nc) % rs); kb = (int)(t / ((int64_t)nc * rs));
                } else {
                    kb = (int)(t % nk); cb = (int)((t / nk) % nc); tap = (int)(t / ((int64_t)nk * nc));
                }
                int r = tap / a->s, s = tap % a->s, v0 = cb * vb;
                int b0 = (int)((int64_t)bn * kb / nk), cnt = (int)((int64_t)bn * (kb + 1) / nk) - b0;
                float *o = a->out + r * a->or_ + s * a->os + b0 * a->ob + v0;
                (vn - v0 < vb ? partial : full)[cnt](a, r, s, b0, v0, row0, row1, o, a->ob, ch == 0 ? ab_first : ab_next);
            }
        }
    }
}

int fdnn_nhwc_direct_applicable(const fdnn_conv_problem *p, char *why, size_t n)
{
    if (!fdnn_nhwc_kernels_get()) {
        snprintf(why, n, "the direct NHWC kernels need AVX-512 (F, BW, DQ, VL) or AVX2 with FMA and F16C, which this CPU or build lacks");
        return 0;
    }
    if (p->xtype != CUDNN_DATA_FLOAT || p->wtype != CUDNN_DATA_FLOAT || p->ytype != CUDNN_DATA_FLOAT || p->compute_type != CUDNN_DATA_FLOAT) {
        snprintf(why, n, "the direct NHWC kernels handle FLOAT only");
        return 0;
    }
    if (p->g != 1) {
        snprintf(why, n, "the direct NHWC kernels need groups == 1");
        return 0;
    }
    if (p->flt[0] != 1 || p->in[0] != 1 || p->out[0] != 1 || p->x_vect > 1 || p->y_vect > 1 || p->w_vect > 1) {
        snprintf(why, n, "the direct NHWC kernels handle 2-D, non-vectorised tensors only");
        return 0;
    }
    if (p->dir == FDNN_CONV_BWD_DATA) {
        if (p->pad[1] > (p->flt[1] - 1) * p->dil[1] || p->pad[2] > (p->flt[2] - 1) * p->dil[2]) {
            snprintf(why, n, "the direct NHWC backward-data kernel needs pad <= (filter-1)*dilation");
            return 0;
        }
    }
    return 1;
}

static size_t al(size_t floats) { return (floats + 16) * sizeof(float); } /* + 64 bytes to align */

static float *take(char **cur, size_t floats)
{
    uintptr_t v = ((uintptr_t)*cur + 63) & ~(uintptr_t)63;
    *cur = (char *)v + floats * sizeof(float);
    return (float *)v;
}

/* backward filter: vectors along x's channels (wg_swap == 0) unless there are few of them */
static int wg_swap(const geo *g) { return g->ci < 16 && g->co >= 32; }
/* backward filter written by the kernel straight into dw: vectors along c and c contiguous in
 * the filter (KRSC, or any 1x1); else through a float [r][s][k][c] ([r][s][c][k] with swap)
 * accumulator in the workspace */
static int wg_direct(const fdnn_conv_problem *p, const geo *g) { return !wg_swap(g) && p->ws[1] == 1; }

size_t fdnn_nhwc_direct_workspace(const fdnn_conv_problem *p)
{
    geo g;
    make_geo(p, &g);
    size_t padded = g.copy_in ? (size_t)g.nb * g.hb * g.wb * g.ci : 0;
    if (p->dir == FDNN_CONV_BWD_FILTER) {
        size_t dyt = g.tmp_out ? (size_t)g.nb * g.oh * g.ow * g.co : 0;
        return (padded ? al(padded) : 0) + (dyt ? al(dyt) : 0) + (wg_direct(p, &g) ? 0 : al((size_t)g.R * g.S * g.co * g.ci));
    }
    if (g.col_bwd) return al((size_t)p->out[1] * p->out[2] * p->c * g.R * g.S);
    size_t packed = (size_t)(g.co + FDNN_NHWC_KB - 1) / FDNN_NHWC_KB * FDNN_NHWC_KB * g.R * g.S * g.ci;
    return al(packed) + (padded ? al(padded) : 0);
}

void fdnn_nhwc_pad_copy(const float *src, const int64_t *s, int nb, int ch, int hh, int ww, int ph, int pw, float *dst)
{
    int Hp = hh + 2 * ph, Wp = ww + 2 * pw;
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < nb; n++)
        for (int y = 0; y < Hp; y++) {
            float *d = dst + (((int64_t)n * Hp + y) * Wp) * ch;
            int iy = y - ph;
            if (iy < 0 || iy >= hh) {
                memset(d, 0, sizeof(float) * (size_t)Wp * ch);
                continue;
            }
            memset(d, 0, sizeof(float) * (size_t)pw * ch);
            memset(d + (int64_t)(pw + ww) * ch, 0, sizeof(float) * (size_t)pw * ch);
            const float *sr = src + n * s[0] + iy * s[3];
            float *dd = d + (int64_t)pw * ch;
            if (s[1] == 1 || ch == 1) {
                for (int x = 0; x < ww; x++) memcpy(dd + (int64_t)x * ch, sr + x * s[4], sizeof(float) * (size_t)ch);
            } else {
                for (int c0 = 0; c0 < ch; c0 += 16) {   /* blocked transpose */
                    int c1 = c0 + 16 < ch ? c0 + 16 : ch;
                    for (int x = 0; x < ww; x++)
                        for (int c = c0; c < c1; c++) dd[(int64_t)x * ch + c] = sr[c * s[1] + x * s[4]];
                }
            }
        }
}

void fdnn_nhwc_spread_copy(const float *src, const int64_t *s, int nb, int ch, int hh, int ww, int ph, int pw, int hb, int wb, int ish,
                           int isw, float *dst)
{
    const fdnn_nhwc_kernels *K = fdnn_nhwc_kernels_get();
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < nb; n++)
        for (int y = 0; y < hb; y++) {
            float *d = dst + (((int64_t)n * hb + y) * wb) * ch;
            memset(d, 0, sizeof(float) * (size_t)wb * ch);
            int u = y - ph;
            if (u < 0 || u % ish || u / ish >= hh) continue;
            const float *sr = src + n * s[0] + (int64_t)(u / ish) * s[3];
            if (s[1] != 1 && s[4] == 1 && isw == 1 && K) {
                /* NCHW rows: register transposes (seed 3x3 64 224x224 NCHW N=1 forward 13.5 -> 12.8 ms;
                 * in fdnn_nhwc_pad_copy, for the weight gradient, they measured 3% slower than its
                 * 16-channel blocked loop, so it keeps that) */
                K->transpose(sr, s[1], ch, ww, d + (int64_t)pw * ch, ch);
                continue;
            }
            for (int x = 0; x < ww; x++) {
                float *dd = d + ((int64_t)pw + (int64_t)x * isw) * ch;
                const float *ss = sr + x * s[4];
                if (s[1] == 1) memcpy(dd, ss, sizeof(float) * (size_t)ch);
                else for (int c = 0; c < ch; c++) dd[c] = ss[c * s[1]];
            }
        }
}

/* wp[co/32][r][s][ci][32]: for the forward direction w(k=co, c=ci, tap), for backward data
 * w(k=ci, c=co, flipped tap); zero for channels beyond co. This runs on every call and moves
 * R*S*C*K floats (9.4 MB at 512->512 3x3). The AVX-512 kernel asks for it block by block
 * (pack_block: each thread packs the blocks it runs right before running them, when the packed
 * filter does not fit in L2) or whole (pack_filter, below: kb = -1); the AVX2 kernel gets it
 * whole. */
typedef struct pack_job {
    const fdnn_nhwc_kernels *K;
    const fdnn_conv_problem *p;
    const geo *g;
    const float *w;
} pack_job;

/* w strides along the kernel's ci / co; same: w tap (r, s) at kernel tap (r, s) */
static void pack_strides(const pack_job *j, int64_t *sci, int64_t *sco, int *same)
{
    int bwd = j->p->dir == FDNN_CONV_BWD_DATA;
    *same = j->p->cross_correlation ^ bwd;
    *sci = bwd ? j->p->ws[0] : j->p->ws[1];
    *sco = bwd ? j->p->ws[1] : j->p->ws[0];
}

/* block kb into d ([r][s][ci][32]) for w with sco != 1 */
static void pack_block_strided(const pack_job *j, int kb, float *d)
{
    const geo *g = j->g;
    const int64_t *ws = j->p->ws;
    int64_t sci, sco;
    int same;
    pack_strides(j, &sci, &sco, &same);
    const int R = g->R, S = g->S, ci = g->ci;
    const int nj = g->co - kb * FDNN_NHWC_KB < FDNN_NHWC_KB ? g->co - kb * FDNN_NHWC_KB : FDNN_NHWC_KB;
    const int64_t dts = (int64_t)ci * FDNN_NHWC_KB;
    const float *src = j->w + (int64_t)kb * FDNN_NHWC_KB * sco;
    enum { TAPS = 64 };
    int64_t toff[TAPS];
    for (int t0 = 0; t0 < R * S; t0 += TAPS) {
        const int nt = R * S - t0 < TAPS ? R * S - t0 : TAPS;
        for (int t = 0; t < nt; t++) {
            const int r = (t0 + t) / S, s = (t0 + t) % S;
            toff[t] = (same ? r : R - 1 - r) * ws[3] + (same ? s : S - 1 - s) * ws[4];
        }
        if (sci == 1) {   /* KRSC forward: rows contiguous along c, 16x16 transposes in registers */
            for (int t = 0; t < nt; t++) j->K->pack_rows(src + toff[t], sco, nj, ci, d + (t0 + t) * dts);
        } else {          /* KCRS, backward data: gathers, channel by channel over all taps */
            j->K->pack_gather(src, sco, sci, toff, nt, nj, ci, dts, d + t0 * dts);
        }
    }
}

/* 32-channel piece of w at src (n valid floats) into d, zero-filled to 32 */
static inline void pack_piece(const float *src, int n, float *d)
{
    if (n == FDNN_NHWC_KB) {
        memcpy(d, src, sizeof(float) * FDNN_NHWC_KB);
    } else {
        memcpy(d, src, sizeof(float) * (size_t)n);
        memset(d + n, 0, sizeof(float) * (size_t)(FDNN_NHWC_KB - n));
    }
}

static void pack_filter(const pack_job *j, float *wp)
{
    const geo *g = j->g;
    const int64_t *ws = j->p->ws;
    int nkb = (g->co + FDNN_NHWC_KB - 1) / FDNN_NHWC_KB, R = g->R, S = g->S, ci = g->ci, co = g->co;
    int64_t sci, sco;
    int same;
    pack_strides(j, &sci, &sco, &same);
    if (sco == 1) {
        /* tiles of PACK_ROWS kernel input channels (w rows, R*S*co floats each, 295 KB for 16
         * rows at 512->512 3x3: they stay in L2 while the tile is copied): for each destination
         * block (kb, r, s) the tile's rows land in one contiguous 2 KB run. Walking w row by row
         * instead scattered every row over nkb*R*S destination streams 590 KB apart (1.2 ms of
         * the 2.4 ms backward data of 512->512 7x7 at N=1; the forward took 1.2 ms in all). */
        enum { PACK_ROWS = 16 };
        const int ntile = (ci + PACK_ROWS - 1) / PACK_ROWS;
        const float *w = j->w;
#pragma omp parallel for schedule(static)
        for (int t = 0; t < ntile; t++) {
            const int c0 = t * PACK_ROWS, c1 = c0 + PACK_ROWS < ci ? c0 + PACK_ROWS : ci;
            for (int r = 0; r < R; r++)
                for (int s = 0; s < S; s++) {
                    int rr = same ? r : R - 1 - r, ss = same ? s : S - 1 - s;
                    for (int kb = 0; kb < nkb; kb++) {
                        const float *src = w + c0 * sci + rr * ws[3] + ss * ws[4] + (int64_t)kb * FDNN_NHWC_KB;
                        float *d = wp + ((((int64_t)kb * R + r) * S + s) * ci + c0) * FDNN_NHWC_KB;
                        int n = co - kb * FDNN_NHWC_KB < FDNN_NHWC_KB ? co - kb * FDNN_NHWC_KB : FDNN_NHWC_KB;
                        for (int c = c0; c < c1; c++, src += sci, d += FDNN_NHWC_KB) pack_piece(src, n, d);
                    }
                }
        }
        return;
    }
#pragma omp parallel for schedule(static)
    for (int kb = 0; kb < nkb; kb++) pack_block_strided(j, kb, wp + (int64_t)kb * R * S * ci * FDNN_NHWC_KB);
}

/* fdnn_nhwc_fwd.pack: block kb into d ([r][s][ci][32]), or with kb = -1 the whole filter
 * (pack_filter, threads of its own) */
static void pack_block(const void *ctx, int kb, float *d)
{
    const pack_job *j = ctx;
    if (kb < 0) {
        pack_filter(j, d);
        return;
    }
    const geo *g = j->g;
    const int64_t *ws = j->p->ws;
    int R = g->R, S = g->S, ci = g->ci;
    int64_t sci, sco;
    int same;
    pack_strides(j, &sci, &sco, &same);
    if (sco == 1) {   /* along each kernel input channel's w row: R*S pieces of 32 floats */
        int n = g->co - kb * FDNN_NHWC_KB < FDNN_NHWC_KB ? g->co - kb * FDNN_NHWC_KB : FDNN_NHWC_KB;
        const float *w = j->w + (int64_t)kb * FDNN_NHWC_KB;
        /* the pieces of row c + PD asked for ahead: a block takes 128 bytes a tap from each w row (backward data:
         * rows of R*S*C floats), a stride the hardware prefetchers do not follow, so the loop waited on L3 */
        enum { PD = 8 };
        for (int c = 0; c < ci; c++)
            for (int r = 0; r < R; r++)
                for (int s = 0; s < S; s++) {
                    int rr = same ? r : R - 1 - r, ss = same ? s : S - 1 - s;
                    const float *src = w + c * sci + rr * ws[3] + ss * ws[4];
                    if (c + PD < ci) {
                        __builtin_prefetch(src + PD * sci);
                        __builtin_prefetch(src + PD * sci + 16);
                    }
                    pack_piece(src, n, d + (((int64_t)r * S + s) * ci + c) * FDNN_NHWC_KB);
                }
        return;
    }
    pack_block_strided(j, kb, d);
}

/* Backward-data gather table of one spatial dim (extent X, filter T, output extent O): for each
 * input position x the (filter tap, output position) pairs that reach it, in filter order,
 * tab[2*(x*T + j)] / tab[2*(x*T + j) + 1] for j < cnt[x]; cc: cross-correlation (else taps flipped). */
static void tap_table(int X, int T, int O, int pad, int dil, int str, int cc, int *tab, int *cnt)
{
    for (int x = 0; x < X; x++) {
        cnt[x] = 0;
        for (int t = 0; t < T; t++) {
            int o = x + pad - (cc ? t : T - 1 - t) * dil;
            if (o < 0 || o % str || o / str >= O) continue;
            tab[2 * ((size_t)x * T + cnt[x])] = t;
            tab[2 * ((size_t)x * T + cnt[x]) + 1] = o / str;
            cnt[x]++;
        }
    }
}

/* The col_bwd gather: dx[h, x, c] = alpha * (sum over the taps reaching (h, x), row taps outer,
 * column taps inner, in filter order, of cols[output pixel][c, r, s]) + beta * dx (beta == 0: dx
 * not read). C < 16; with C a constant the sums stay in registers. */
typedef struct col_gather_args {
    const float *cols;
    int rsc, Q, R, S;
    int64_t ws1, ws3, ws4;
    const int *ht, *hn, *wt, *wn;
    float *dx;
    int64_t xc, xh, xw;
    float alpha, beta;
} col_gather_args;
static inline __attribute__((always_inline)) void col_gather_px(const int C, const col_gather_args *g, int h, int x)
{
    float acc[16] = { 0 };
    for (int i = 0; i < g->hn[h]; i++) {
        const int *eh = g->ht + 2 * ((size_t)h * g->R + i);
        const float *crow = g->cols + (int64_t)eh[1] * g->Q * g->rsc + eh[0] * g->ws3;
        for (int j = 0; j < g->wn[x]; j++) {
            const int *e = g->wt + 2 * ((size_t)x * g->S + j);
            const float *cr = crow + (int64_t)e[1] * g->rsc + e[0] * g->ws4;
            for (int c = 0; c < C; c++) acc[c] += cr[c * g->ws1];
        }
    }
    float *d = g->dx + h * g->xh + x * g->xw;
    for (int c = 0; c < C; c++) d[c * g->xc] = g->beta != 0 ? g->alpha * acc[c] + g->beta * d[c * g->xc] : g->alpha * acc[c];
}

cudnnStatus_t fdnn_nhwc_direct_run(const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    if (a->workspace_size < fdnn_nhwc_direct_workspace(p))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workspace too small: %zu bytes, need %zu", a->workspace_size, fdnn_nhwc_direct_workspace(p));
    const fdnn_nhwc_kernels *K = fdnn_nhwc_kernels_get();
    if (!K) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the direct NHWC kernels need AVX-512 or AVX2, which this CPU or build lacks");
    geo g;
    make_geo(p, &g);
    char *cur = a->workspace;
    int Hp = g.hb, Wp = g.wb;
    if (p->dir == FDNN_CONV_BWD_FILTER) {
        const float *x = a->x, *dy = a->y;
        float *xp = NULL, *dyt = NULL;
        if (g.copy_in) xp = take(&cur, (size_t)g.nb * Hp * Wp * g.ci);
        if (g.tmp_out) dyt = take(&cur, (size_t)g.nb * g.oh * g.ow * g.co);
        int direct = wg_direct(p, &g);
        float *acc = direct ? NULL : take(&cur, (size_t)g.R * g.S * g.co * g.ci);
        fdnn_nhwc_wgrad k = { .n = g.nb, .ci = g.ci, .co = g.co, .p = g.oh, .q = g.ow, .r = g.R, .s = g.S, .sh = g.sh, .sw = g.sw,
                              .dh = g.dh, .dw = g.dw, .swap = wg_swap(&g) };
        if (g.copy_in) {
            fdnn_nhwc_pad_copy(x, p->xs, g.nb, g.ci, g.ih, g.iw, g.ph, g.pw, xp);
            k.x = xp; k.xn = (int64_t)Hp * Wp * g.ci; k.xh = (int64_t)Wp * g.ci; k.xw = g.ci;
        } else {
            k.x = x; k.xn = p->xs[0]; k.xh = p->xs[3]; k.xw = p->xs[4];
        }
        if (g.tmp_out) {
            fdnn_nhwc_pad_copy(dy, p->ys, g.nb, g.co, g.oh, g.ow, 0, 0, dyt);
            k.dy = dyt; k.yn = (int64_t)g.oh * g.ow * g.co; k.yh = (int64_t)g.ow * g.co; k.yw = g.co;
        } else {
            k.dy = dy; k.yn = p->ys[0]; k.yh = p->ys[3]; k.yw = p->ys[4];
        }
        float *dw = a->out;
        float alpha = (float)a->alpha, beta = (float)a->beta;
        int R = g.R, S = g.S, cc = p->cross_correlation;
        /* few input channels, dilation 1, x channel-packed: the S taps of a filter row are
         * contiguous in x, so the broadcast channels run over (s, c) (S*C of them, acc[r][s][c][co]
         * unchanged): full 8-wide register tiles for C = 3 */
        if (k.swap && g.dw == 1 && k.xw == g.ci && S > 1) {
            k.ci = S * g.ci;
            k.s = 1;
        }
        int bn = k.swap ? k.ci : k.co, vn = k.swap ? k.co : k.ci;
        if (direct) {
            k.out = dw + (cc ? 0 : (R - 1) * p->ws[3] + (S - 1) * p->ws[4]);
            k.or_ = cc ? p->ws[3] : -p->ws[3];
            k.os = cc ? p->ws[4] : -p->ws[4];
            k.ob = p->ws[0];
            k.alpha = alpha;
            k.beta = beta;
        } else {
            k.out = acc;
            k.or_ = (int64_t)k.s * bn * vn;
            k.os = (int64_t)bn * vn;
            k.ob = vn;
            k.alpha = 1.0f;
            k.beta = 0.0f;
        }
        K->wgrad(&k);
        if (direct) return CUDNN_STATUS_SUCCESS;
        /* dw = alpha * acc + beta * dw, acc read along its contiguous channel (rows of
         * [r][s][co][ci], or [r][s][ci][co] with swap) and dw written within one of its rows
         * (L1): walking dw in its own order instead read acc R*S times 1 MB apart per element
         * (3x3 256->256 14x14 NCHW, N=1: 37% of the call) */
        const int64_t ws0 = p->ws[0], ws1 = p->ws[1], ws3 = p->ws[3], ws4 = p->ws[4];
        const int nout = k.swap ? g.ci : g.co, nin = k.swap ? g.co : g.ci;
        const int64_t so = k.swap ? ws1 : ws0, si = k.swap ? ws0 : ws1;
#pragma omp parallel for schedule(static)
        for (int o = 0; o < nout; o++)
            for (int rs = 0; rs < R * S; rs++) {
                const int r = rs / S, s = rs % S, rr = cc ? r : R - 1 - r, ss = cc ? s : S - 1 - s;
                const float *ar = acc + ((int64_t)rs * nout + o) * nin;
                float *wr = dw + o * so + rr * ws3 + ss * ws4;
                for (int i = 0; i < nin; i++) {
                    float v = alpha * ar[i];
                    if (beta != 0) v += beta * wr[i * si];
                    wr[i * si] = v;
                }
            }
        return CUDNN_STATUS_SUCCESS;
    }
    if (g.col_bwd) {
        /* per image: cols[P*Q][C*R*S] = dy_n (as [P*Q][K]) x w ([K][C*R*S] in the filter's own
         * order), then every dx element gathers its taps (fixed order, deterministic) */
        int P = p->out[1], Q = p->out[2], K = p->k, C = p->c, H = p->in[1], W = p->in[2], R = g.R, S = g.S, cc = p->cross_correlation;
        int rsc = C * R * S, nhwc_dy = p->ys[1] == 1;
        float *cols = take(&cur, (size_t)P * Q * rsc);
        const float *dy = a->y, *w = a->w;
        float *dx = a->out, alpha = (float)a->alpha, beta = (float)a->beta;
        /* tap tables, so the gather has no divisions: for each dx column x the (filter column,
         * output column) pairs that reach it, likewise for rows; entries in filter order */
        int *wt = malloc(sizeof(int) * 2 * ((size_t)W * S + (size_t)H * R)), *ht = wt ? wt + 2 * (size_t)W * S : NULL;
        int *wn = malloc(sizeof(int) * ((size_t)W + H)), *hn = wn ? wn + W : NULL;
        if (!wt || !wn) {
            free(wt);
            free(wn);
            return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "no memory for the backward-data tap tables");
        }
        tap_table(W, S, Q, p->pad[2], p->dil[2], p->stride[2], cc, wt, wn);
        tap_table(H, R, P, p->pad[1], p->dil[1], p->stride[1], cc, ht, hn);
        const int64_t ws1 = p->ws[1], ws3 = p->ws[3], ws4 = p->ws[4];
        for (int n = 0; n < p->n; n++) {
            const float *dyn = dy + n * p->ys[0];
            fdnn_sgemm(!nhwc_dy, 0, P * Q, rsc, K, 1.0f, dyn, nhwc_dy ? K : (int64_t)P * Q, w, rsc, 0.0f, cols, rsc);
            const col_gather_args ga = { cols, rsc, Q, R, S, ws1, ws3, ws4, ht, hn, wt, wn, dx + n * p->xs[0], p->xs[1], p->xs[3], p->xs[4],
                                         alpha, beta };
#pragma omp parallel for schedule(static)
            for (int h = 0; h < H; h++)
                for (int x = 0; x < W; x++) {
                    /* three channels (the RGB stem) with the count known at compile time: the sums
                     * stay in registers (0.4 of the stem's NHWC backward data time went to this loop
                     * with acc[] in memory) */
                    if (C == 3) col_gather_px(3, &ga, h, x);
                    else col_gather_px(C, &ga, h, x);
                }
        }
        free(wt);
        free(wn);
        return CUDNN_STATUS_SUCCESS;
    }
    const float *in = p->dir == FDNN_CONV_BWD_DATA ? a->y : a->x;
    float *wp = take(&cur, (size_t)(g.co + FDNN_NHWC_KB - 1) / FDNN_NHWC_KB * FDNN_NHWC_KB * g.R * g.S * g.ci);
    const pack_job job = { K, p, &g, a->w };
    fdnn_nhwc_fwd k = { .n = g.nb, .ci = g.ci, .co = g.co, .p = g.oh, .q = g.ow, .r = g.R, .s = g.S, .sh = g.sh, .sw = g.sw,
                        .dh = g.dh, .dw = g.dw, .alpha = (float)a->alpha, .beta = (float)a->beta };
    if (K->fwd_packs) {
        k.pack = pack_block;
        k.pack_ctx = &job;
        k.wbuf = wp;
        /* forward: output channel kb*32.. of w is 32 rows of ws[0] floats each, one after another
         * (filters are packed), so a block's source is contiguous; the last block is shorter.
         * Only where each filter block serves few output positions (at most 64), so its pack is
         * a large share of the call: interleaved A/B, 2 threads, NHWC N=1 forward ms: 3x3
         * 512->512 7x7 0.958-1.03 -> 0.921-0.977, 1x1 2048->512 7x7 0.435-0.51 -> 0.432-0.439;
         * on 3x3 256->256 14x14 (196 positions) it cost 1-2% (more of L2 taken) */
        if (p->dir == FDNN_CONV_FWD && p->ws[0] == (int64_t)g.ci * g.R * g.S && (int64_t)g.nb * g.oh * g.ow <= 64) {
            k.pf_base = a->w;
            k.pf_blk = (int64_t)FDNN_NHWC_KB * p->ws[0];
        }
    } else {
        pack_filter(&job, wp);
        k.wp = wp;
    }
    if (g.copy_in) {
        float *xp = take(&cur, (size_t)g.nb * Hp * Wp * g.ci);
        fdnn_nhwc_spread_copy(in, g.is, g.nb, g.ci, g.ih, g.iw, g.ph, g.pw, Hp, Wp, g.ish, g.isw, xp);
        k.x = xp; k.xn = (int64_t)Hp * Wp * g.ci; k.xh = (int64_t)Wp * g.ci; k.xw = g.ci;
    } else {
        k.x = in; k.xn = g.is[0]; k.xh = g.is[3]; k.xw = g.is[4];
    }
    k.y = a->out; k.yn = g.os[0]; k.yh = g.os[3]; k.yw = g.os[4]; k.yc = g.os[1];
    if (g.unit_bwd) {
        int sh = p->stride[1], sw = p->stride[2], H = p->in[1], W = p->in[2], C = p->c;
        k.yh *= sh;
        k.yw *= sw;
        /* dx positions no dy element reaches: alpha * 0 + beta * dx */
        float *dx = a->out, beta = (float)a->beta;
        const int64_t *xs = p->xs;
#pragma omp parallel for collapse(2) schedule(static)
        for (int n = 0; n < p->n; n++)
            for (int h = 0; h < H; h++)
                for (int w = 0; w < W; w++) {
                    if (h % sh == 0 && w % sw == 0) continue;
                    float *d = dx + n * xs[0] + h * xs[3] + w * xs[4];
                    for (int c = 0; c < C; c++) d[c * xs[1]] = beta != 0 ? beta * d[c * xs[1]] : 0.0f;
                }
    }
    K->fwd(&k);
    return CUDNN_STATUS_SUCCESS;
}
