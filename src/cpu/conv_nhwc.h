/* Direct convolution over channel-innermost ("NHWC") float tensors: the AVX-512 kernels
 * (conv_nhwc_avx512.c, built with -mavx512*), the AVX2 + FMA kernels (conv_nhwc_avx2.c, built
 * with -mavx2 -mfma) with the same interface, and the portable driver that packs weights,
 * pads / transposes activations into the workspace and dispatches to the kernel set of the CPU
 * it runs on (conv_direct_nhwc_common.c, fdnn_nhwc_kernels_get). Relies on ../dispatch/conv.h. */
#ifndef FDNN_CPU_CONV_NHWC_H
#define FDNN_CPU_CONV_NHWC_H
#include "../dispatch/conv.h"

/* Channel block of the packed filter: output channels are grouped by 32 (two zmm, four ymm). */
#define FDNN_NHWC_KB 32

/* Register-tile width of the AVX2 forward kernel: from hi down to lo, whichever wastes least on
 * a row of q output positions (larger on ties). The AVX-512 kernel instead cuts each row into
 * ceil(q / widest) tiles of near-equal width. */
static inline int fdnn_nhwc_pick_nw(int q, int hi, int lo)
{
    if (q <= hi) return q;
    int best = hi, waste = (q + hi - 1) / hi * hi - q;
    for (int nw = hi - 1; nw >= lo; nw--) {
        int w = (q + nw - 1) / nw * nw - q;
        if (w < waste) { best = nw; waste = w; }
    }
    return best;
}

/* 2-D forward direct convolution, x already zero-padded (no bounds checks): y[n,p,q,co] =
 * alpha * sum_{r,s,ci} x[n, p*sh + r*dh, q*sw + s*dw, ci] * wp[co/32][r][s][ci][co%32]
 * + beta * y (beta == 0: y not read). Channel stride 1 in x; y's channel stride is yc
 * (1: vector stores, else scalar stores of each register tile). */
typedef struct fdnn_nhwc_fwd {
    int n, ci, co, p, q, r, s, sh, sw, dh, dw;
    const float *x;
    int64_t xn, xh, xw;
    float *y;
    int64_t yn, yh, yw, yc;
    const float *wp;
    float alpha, beta;
    /* Optional (AVX-512 only; NULL for the AVX2 kernel, which needs wp packed): pack filter
     * block kb (FDNN_NHWC_KB output channels, every tap) into dst, laid out as one block of wp.
     * When set, wp is unused and wbuf is workspace of the whole packed size: the kernel packs
     * every block into it first where the packed filter fits in L2, else each thread packs the
     * blocks it runs into a slot of wbuf of its own right before running them, so they are read
     * from L2 and the packed filter never travels to L3 and back. */
    void (*pack)(const void *ctx, int kb, float *dst);
    const void *pack_ctx;
    float *wbuf;
    /* Optional, with pack: block kb's source is the pf_blk floats at pf_base + kb * pf_blk (the
     * forward's filter rows are contiguous per output channel); the kernel prefetches a thread's
     * next blocks while it computes. pf_blk == 0: no prefetch. */
    const float *pf_base;
    int64_t pf_blk;
} fdnn_nhwc_fwd;
void fdnn_avx512_nhwc_fwd(const fdnn_nhwc_fwd *a);

/* Weight gradient, x zero-padded: sum[r][s][b][v] = sum_{n,p,q} dy[n,p,q,co] *
 * x[n, p*sh + r*dh, q*sw + s*dw, ci], where (b, v) = (co, ci), or with swap (better for few
 * input channels) (ci, co), reduced over fixed chunks of output rows: out[r*or + s*os + b*ob + v]
 * = alpha * sum_chunk0 + beta * out (beta == 0: out not read), then += alpha * sum_chunk for
 * each later chunk, in order (v contiguous). Each element is owned by one thread and summed in a
 * fixed order, so the result does not depend on the thread count. */
typedef struct fdnn_nhwc_wgrad {
    int n, ci, co, p, q, r, s, sh, sw, dh, dw;
    const float *x;
    int64_t xn, xh, xw;
    const float *dy;
    int64_t yn, yh, yw;
    int swap;
    float *out;
    int64_t or_, os, ob;
    float alpha, beta;
} fdnn_nhwc_wgrad;
void fdnn_avx512_nhwc_wgrad(const fdnn_nhwc_wgrad *a);
/* One register tile of the weight gradient: the sums of output rows [row0, row1) for tap (r, s),
 * broadcast channels b0.. (the count is the tile's) and vector channels v0.. (one block), stored
 * at st (rows stb apart) as ab[0] * sum + ab[1] * st (ab[1] == 0: st not read). */
typedef void (*fdnn_nhwc_wg_tile)(const fdnn_nhwc_wgrad *a, int r, int s, int b0, int v0, int64_t row0, int64_t row1, float *st, int64_t stb,
                                  const float *ab);
/* The portable driver both instruction sets' wgrad entries share (conv_direct_nhwc_common.c):
 * chunks of whole output rows of about chunk_pos positions, tasks (tap, vector block of vb
 * channels, broadcast block of kbn) statically over the threads, full[cnt] / partial[cnt] (cnt =
 * 1..kbn broadcast channels; partial where the vector block is short) for each; the task order
 * keeps the vector source in L2 where one chunk of it is at most l2_bytes. */
void fdnn_nhwc_wgrad_drive(const fdnn_nhwc_wgrad *a, int vb, int kbn, int chunk_pos, double l2_bytes, const fdnn_nhwc_wg_tile *full,
                           const fdnn_nhwc_wg_tile *partial);

/* Filter pack of the forward direction: d[c*32 + j] = src[j*sco + c] for c < ci, j < nj, and 0
 * for nj <= j < 32 (src: nj filter rows with unit stride along c). */
void fdnn_avx512_nhwc_pack_rows(const float *src, int64_t sco, int nj, int ci, float *d);

/* Filter pack by gathers, for filters whose kernel output channels are not adjacent (KCRS, and
 * every backward-data filter but KRSC's 1x1): d[t*dts + c*32 + j] = src[j*sco + c*sci + toff[t]]
 * for t < nt, c < ci, j < nj, and 0 for nj <= j < 32. Channels outer, taps inner: each channel's
 * source lines come from L1 for all its taps. */
static inline void fdnn_nhwc_pack_gather_scalar(const float *src, int64_t sco, int64_t sci, const int64_t *toff, int nt, int nj, int ci,
                                                int64_t dts, float *d)
{
    for (int c = 0; c < ci; c++)
        for (int t = 0; t < nt; t++)
            for (int j = 0; j < FDNN_NHWC_KB; j++)
                d[t * dts + (int64_t)c * FDNN_NHWC_KB + j] = j < nj ? src[j * sco + c * sci + toff[t]] : 0.0f;
}
void fdnn_avx512_nhwc_pack_gather(const float *src, int64_t sco, int64_t sci, const int64_t *toff, int nt, int nj, int ci, int64_t dts,
                                  float *d);

/* Depthwise (groups == C == K): y[n,p,q,c] = alpha * sum_{r,s} x[n, p*sh + r*dh, q*sw + s*dw, c]
 * * wp[r][s][c] + beta * y, x zero-padded with channel stride 1, y channel stride yc. */
typedef struct fdnn_dw_fwd {
    int n, c, p, q, r, s, sh, sw, dh, dw;
    const float *x;
    int64_t xn, xh, xw;
    float *y;
    int64_t yn, yh, yw, yc;
    const float *wp;
    float alpha, beta;
} fdnn_dw_fwd;
void fdnn_avx512_dw_fwd(const fdnn_dw_fwd *a);
/* The same for a 3x3 stride-1 undilated filter straight from the unpadded input (no padded
 * copy): x is ih x iw (channel stride 1), zero padding ph/pw handled in the kernel; y channel
 * stride 1. Each input vector loaded feeds up to 3 outputs; the 9 filter vectors stay in
 * registers for a whole output row. */
void fdnn_avx512_dw_fwd_3x3s1(const fdnn_dw_fwd *a, int ih, int iw, int ph, int pw);
/* The same 3x3 stride-1 case as Winograd F(2,3) along W, blocks of T (1..4) output rows: wp
 * holds u[r][k][c] (12 * c floats, see fdnn_dw_wino_filter), alpha already applied. */
void fdnn_avx512_dw_fwd_3x3s1_wino(const fdnn_dw_fwd *a, int ih, int iw, int ph, int pw, int T);
void fdnn_avx512_dw_fwd_u(const fdnn_dw_fwd *a, int ih, int iw, int ph, int pw);
/* Depthwise weight gradient: acc[r][s][c] = sum_{n,p,q} dy[n,p,q,c] * x[n, p*sh + r*dh, q*sw + s*dw, c]
 * (x padded, dy and x channel stride 1); one thread per 16-channel block, fixed order. */
typedef struct fdnn_dw_wgrad {
    int n, c, p, q, r, s, sh, sw, dh, dw;
    const float *x;
    int64_t xn, xh, xw;
    const float *dy;
    int64_t yn, yh, yw;
    float *acc;
} fdnn_dw_wgrad;
void fdnn_avx512_dw_wgrad(const fdnn_dw_wgrad *a);
/* The same for a 3x3 stride-1 undilated filter straight from the unpadded x (ih x iw, zero
 * padding ph/pw handled in the kernel). The n*p output rows are cut into nchunk fixed chunks;
 * chunk j's sums go to acc + j*9*c, and the caller adds the chunks in order (so the result does
 * not depend on the thread count). Its loop is an orphaned `omp for` (implicit barrier at the
 * end): called inside a parallel region it shares the work out over that region's threads (the
 * caller then blends in the same region), outside one it runs on the calling thread alone. */
void fdnn_avx512_dw_wgrad_3x3s1(const fdnn_dw_wgrad *a, int ih, int iw, int ph, int pw, int nchunk);
/* For output row `row` (n * p + oh) of the unpadded 3x3 stride-1 weight gradient: x's three input
 * rows at channel c0 (NULL where the row lies in the padding, ph rows above the image); returns
 * dy's row at c0. Shared by the AVX-512 and AVX2 kernels. */
static inline const float *fdnn_dw3_wg_rows(const fdnn_dw_wgrad *a, int64_t row, int ih, int ph, int c0, const float *xr[3])
{
    int n = (int)(row / a->p), oh = (int)(row % a->p);
    for (int r = 0; r < 3; r++) {
        int y = oh - ph + r;
        xr[r] = (y >= 0 && y < ih) ? a->x + n * a->xn + (int64_t)y * a->xh + c0 : NULL;
    }
    return a->dy + n * a->yn + oh * a->yh + c0;
}

/* The AVX2 + FMA kernels: the same contracts as the AVX-512 ones above */
void fdnn_avx2_nhwc_fwd(const fdnn_nhwc_fwd *a);
void fdnn_avx2_nhwc_wgrad(const fdnn_nhwc_wgrad *a);
void fdnn_avx2_nhwc_pack_rows(const float *src, int64_t sco, int nj, int ci, float *d);
void fdnn_avx2_nhwc_pack_gather(const float *src, int64_t sco, int64_t sci, const int64_t *toff, int nt, int nj, int ci, int64_t dts,
                                float *d);
void fdnn_avx2_dw_fwd(const fdnn_dw_fwd *a);
void fdnn_avx2_dw_fwd_3x3s1(const fdnn_dw_fwd *a, int ih, int iw, int ph, int pw);
void fdnn_avx2_dw_fwd_3x3s1_wino(const fdnn_dw_fwd *a, int ih, int iw, int ph, int pw, int T);
void fdnn_avx2_dw_wgrad(const fdnn_dw_wgrad *a);
void fdnn_avx2_dw_wgrad_3x3s1(const fdnn_dw_wgrad *a, int ih, int iw, int ph, int pw, int nchunk);

/* One instruction set's kernels, picked at run time */
typedef struct fdnn_nhwc_kernels {
    const char *isa;   /* "AVX-512" or "AVX2" */
    int vec;           /* floats per vector: 16 or 8 */
    int fwd_packs;     /* fwd packs the filter itself through fdnn_nhwc_fwd.pack */
    void (*fwd)(const fdnn_nhwc_fwd *a);
    void (*wgrad)(const fdnn_nhwc_wgrad *a);
    void (*pack_rows)(const float *src, int64_t sco, int nj, int ci, float *d);
    void (*pack_gather)(const float *src, int64_t sco, int64_t sci, const int64_t *toff, int nt, int nj, int ci, int64_t dts, float *d);
    void (*dw_fwd)(const fdnn_dw_fwd *a);
    void (*dw_fwd_3x3s1)(const fdnn_dw_fwd *a, int ih, int iw, int ph, int pw);
    void (*dw_fwd_3x3s1_wino)(const fdnn_dw_fwd *a, int ih, int iw, int ph, int pw, int T);
    void (*dw_wgrad)(const fdnn_dw_wgrad *a);
    void (*dw_wgrad_3x3s1)(const fdnn_dw_wgrad *a, int ih, int iw, int ph, int pw, int nchunk);
    /* HALF (half != 0) / BFLOAT16 runs to float and back (cvt_avx512.c, cvt_avx2.c) */
    void (*widen16)(const uint16_t *s, int half, size_t n, float *d);
    void (*narrow16)(const float *s, int half, size_t n, uint16_t *d);
    /* d[c*ldd + r] = s[r*lds + c] (gemm_panel_avx512.c / gemm_panel_avx2.c) */
    void (*transpose)(const float *s, int64_t lds, int rows, int cols, float *d, int64_t ldd);
    /* Optional (AVX-512; NULL for AVX2): dw_fwd straight from the unpadded channel-innermost x
     * (ih x iw, padding ph / pw in the kernel), any stride and dilation, filters up to
     * FDNN_DWU_MAXR rows */
    void (*dw_fwd_u)(const fdnn_dw_fwd *a, int ih, int iw, int ph, int pw);
} fdnn_nhwc_kernels;
#define FDNN_DWU_MAXR 16
/* AVX-512 where fdnn_cpu_has_avx512(), else AVX2 where fdnn_cpu_has_avx2(), else NULL (the
 * direct and depthwise implementations are then not applicable) */
const fdnn_nhwc_kernels *fdnn_nhwc_kernels_get(void);

/* dst[n][hh+2ph][ww+2pw][ch] = src (strides s: N, C, D, H, W) with zero borders */
void fdnn_nhwc_pad_copy(const float *src, const int64_t *s, int nb, int ch, int hh, int ww, int ph, int pw, float *dst);
/* dst[n][hb][wb][ch]: zero except dst[n][ph + i*ish][pw + j*isw] = src[n][i][j] (zero insertion
 * for strided backward data) */
void fdnn_nhwc_spread_copy(const float *src, const int64_t *s, int nb, int ch, int hh, int ww, int ph, int pw, int hb, int wb, int ish,
                           int isw, float *dst);

/* Portable driver shared by the three conv_*__direct_nhwc implementations. */
int fdnn_nhwc_direct_applicable(const fdnn_conv_problem *p, char *why, size_t n);
size_t fdnn_nhwc_direct_workspace(const fdnn_conv_problem *p);
cudnnStatus_t fdnn_nhwc_direct_run(const fdnn_conv_problem *p, const fdnn_conv_args *a);
/* The depthwise driver (conv_depthwise_nhwc.c): groups == C == K, FLOAT, 2-D; backward data
 * with pad <= (filter-1)*dilation (stride > 1 through a zero-inserted copy of dy). */
int fdnn_dw_applicable(const fdnn_conv_problem *p, char *why, size_t n);
size_t fdnn_dw_workspace(const fdnn_conv_problem *p);
cudnnStatus_t fdnn_dw_run(const fdnn_conv_problem *p, const fdnn_conv_args *a);
#endif
