/* AVX-512 microkernels of the NHWC direct convolution (see conv_nhwc.h). This file alone is
 * compiled with -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma (top-level CMakeLists.txt);
 * it is only called after fdnn_cpu_has_avx512() said yes. Without those flags it is empty.
 *
 * Forward: a register tile of NW output positions of one output row x 32 or 64 output channels
 * (2*NW or 4*NW zmm accumulators); per input channel the filter vectors are loaded and each of
 * the NW input values is broadcast into 2 or 4 FMAs. OpenMP over (channel block, image, row).
 * Weight gradient: a tile of NK broadcast channels x 32 or 64 vector channels, reduced over
 * chunks of output positions; OpenMP over tiles, every thread walks the chunks in the same
 * order, so each sum has a fixed order: the first chunk writes alpha * sum + beta * out, the
 * others add alpha * their sums.
 * alpha / beta reach the tiles through memory, so no registers are held for them in the loop
 * (as float arguments they made the compiler spill a filter vector in the 24-sum tiles). */
#include "conv_nhwc.h"
#ifdef __AVX512F__
#include <immintrin.h>
#ifdef FDNN_HAVE_OPENMP
#include <omp.h>
#endif

#include "simd_util.h"

/* NV / 2 packed 32-channel filter blocks (wp, wp + wblk) x NR rows of NW output positions (x rows
 * xr apart, y rows yr apart): NV*NR*NW sums */
ALWAYS_INLINE void fwd_tile(const int NV, const int NR, const int NW, const float *x, int64_t xs, int64_t xr, int64_t xh, int64_t xw,
                            int R, int S, int dh, int dw, int C, const float *wp, int64_t wblk, float *y, int64_t yw, int64_t yr,
                            int64_t yc, int nleft, const float *ab, const char *pf, int64_t pfs)
{
    __m512 acc[4][14];
#pragma GCC unroll 14
    for (int i = 0; i < NR * NW; i++)
#pragma GCC unroll 4
        for (int u = 0; u < NV; u++) acc[u][i] = _mm512_setzero_ps();
    /* with dilation 1 and packed channels the taps of one filter row are contiguous in x and
     * in wp: one reduction loop of S*C */
    int fuse = dw == 1 && xw == C;
    int S2 = fuse ? 1 : S, C2 = fuse ? S * C : C;
    for (int r = 0; r < R; r++)
        for (int s = 0; s < S2; s++) {
            const float *xp = x + (int64_t)r * dh * xh + (int64_t)s * dw * xw;
            const float *wq = wp + (int64_t)(r * S + s) * C * FDNN_NHWC_KB;
#pragma GCC unroll 4
            for (int c = 0; c < C2; c++) {
                /* the next filter group's source, pfs bytes a step, into L2 (pfs == 0: one line again) */
                _mm_prefetch(pf + (int64_t)c * pfs, _MM_HINT_T1);
                __m512 w[4];
#pragma GCC unroll 4
                for (int u = 0; u < NV; u++) w[u] = _mm512_loadu_ps(wq + (u / 2) * wblk + (int64_t)c * FDNN_NHWC_KB + 16 * (u % 2));
#pragma GCC unroll 14
                for (int i = 0; i < NR * NW; i++) {
                    __m512 xb = _mm512_set1_ps(xp[(i / NW) * xr + (i % NW) * xs + c]);
#pragma GCC unroll 4
                    for (int u = 0; u < NV; u++) acc[u][i] = _mm512_fmadd_ps(xb, w[u], acc[u][i]);
                }
            }
            pf += (int64_t)C2 * pfs;
        }
    float alpha = ab[0], beta = ab[1];   /* read after the loop (as arguments they would hold two registers) */
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    __mmask16 m[4];
#pragma GCC unroll 4
    for (int u = 0; u < NV; u++) m[u] = fdnn_mask16(nleft - 16 * u);
#pragma GCC unroll 14
    for (int i = 0; i < NR * NW; i++) {
        float *yp = y + (i / NW) * yr + (i % NW) * yw;
        if (yc == 1) {
#pragma GCC unroll 4
            for (int u = 0; u < NV; u++) {
                __m512 v = _mm512_mul_ps(va, acc[u][i]);
                if (beta != 0) v = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m[u], yp + 16 * u), v);
                _mm512_mask_storeu_ps(yp + 16 * u, m[u], v);
            }
        } else {   /* channels not innermost (NCHW): scalar stores of the tile */
            float buf[64];
#pragma GCC unroll 4
            for (int u = 0; u < NV; u++) _mm512_storeu_ps(buf + 16 * u, _mm512_mul_ps(va, acc[u][i]));
            for (int j = 0; j < nleft; j++) {
                float v = buf[j];
                if (beta != 0) v += beta * yp[j * yc];
                yp[j * yc] = v;
            }
        }
    }
}

#define FWD_ARGS const float *x, int64_t xs, int64_t xr, int64_t xh, int64_t xw, int R, int S, int dh, int dw, int C, const float *wp, \
                 int64_t wblk, float *y, int64_t yw, int64_t yr, int64_t yc, int nleft, const float *ab, const char *pf, int64_t pfs
#define FWD_PASS x, xs, xr, xh, xw, R, S, dh, dw, C, wp, wblk, y, yw, yr, yc, nleft, ab, pf, pfs
#define FWD_VARIANT(NV, NR, NW) static void fwd_tile_##NV##_##NR##_##NW(FWD_ARGS) { fwd_tile(NV, NR, NW, FWD_PASS); }
FWD_VARIANT(2, 1, 1) FWD_VARIANT(2, 1, 2) FWD_VARIANT(2, 1, 3) FWD_VARIANT(2, 1, 4) FWD_VARIANT(2, 1, 5) FWD_VARIANT(2, 1, 6)
FWD_VARIANT(2, 1, 7) FWD_VARIANT(2, 1, 8) FWD_VARIANT(4, 1, 1) FWD_VARIANT(4, 1, 2) FWD_VARIANT(4, 1, 3) FWD_VARIANT(4, 1, 4)
FWD_VARIANT(4, 1, 5) FWD_VARIANT(4, 1, 6) FWD_VARIANT(2, 2, 1) FWD_VARIANT(2, 2, 2) FWD_VARIANT(2, 2, 3) FWD_VARIANT(2, 2, 4)
FWD_VARIANT(2, 2, 5) FWD_VARIANT(2, 2, 6) FWD_VARIANT(2, 2, 7)
typedef void (*fwd_fn)(FWD_ARGS);
/* [NV / 4][NW]: 32 channels x up to 8 positions (16 sums), or 64 x up to 6 (24 sums: each
 * broadcast of x feeds 4 FMAs instead of 2); [2][NW]: 32 channels x two rows of up to 7 (short
 * rows, 7x7 layers: 28 sums instead of 14 per pair of filter loads) */
static const fwd_fn fwd_tiles[3][9] = {
    { NULL, fwd_tile_2_1_1, fwd_tile_2_1_2, fwd_tile_2_1_3, fwd_tile_2_1_4, fwd_tile_2_1_5, fwd_tile_2_1_6, fwd_tile_2_1_7, fwd_tile_2_1_8 },
    { NULL, fwd_tile_4_1_1, fwd_tile_4_1_2, fwd_tile_4_1_3, fwd_tile_4_1_4, fwd_tile_4_1_5, fwd_tile_4_1_6, NULL, NULL },
    { NULL, fwd_tile_2_2_1, fwd_tile_2_2_2, fwd_tile_2_2_3, fwd_tile_2_2_4, fwd_tile_2_2_5, fwd_tile_2_2_6, fwd_tile_2_2_7, NULL },
};

/* The blocking of one forward call: tasks of (channel-block group tb, image n, output row pair
 * or row oh), ordered channel groups innermost or outermost */
typedef struct fwd_plan {
    int nkb, wide, bpt, ntb, rstep, np, kb_inner;
    int64_t wblk, tasks;
} fwd_plan;

static void fwd_plan_make(const fdnn_nhwc_fwd *a, fwd_plan *f)
{
    f->nkb = (a->co + FDNN_NHWC_KB - 1) / FDNN_NHWC_KB;
    f->wblk = (int64_t)a->r * a->s * a->ci * FDNN_NHWC_KB;
    /* pairs of 32-channel blocks (64 x 5 tiles; a lone last block runs 32 x 8) where two filter
     * blocks fit in L2 with room to spare. Measured (1 thread, ms, 32 -> 64 wide): 1x1 64->64
     * 56x56 N=8 2.40 -> 1.95, 1x1 64->256 N=8 10.9 -> 9.8, conv1 N=8 20.8 -> 18.7, 3x3 128 28x28
     * and 256 14x14 even; 3x3 512 7x7 (2 x 590 KB of filter) 2.60 -> 3.39, so that one stays narrow */
    f->wide = a->co >= 48 && 2 * f->wblk * (int64_t)sizeof(float) <= 600 * 1024;
    f->bpt = f->wide ? 2 : 1;
    f->ntb = (f->nkb + f->bpt - 1) / f->bpt;
    /* rows of at most 7 positions on 32-channel blocks: two rows per register tile */
    int pair = !f->wide && a->q <= 7 && a->p >= 2;
    f->rstep = pair ? 2 : 1;
    f->np = (a->p + f->rstep - 1) / f->rstep;
    f->tasks = (int64_t)f->ntb * a->n * f->np;
    /* the whole packed filter fits in L2: channel blocks innermost (each input row is read
     * once); else channel blocks outermost (each filter block is read once) */
    f->kb_inner = (double)f->wblk * f->nkb * sizeof(float) <= 768.0 * 1024;
}

/* y[j*yc + i] = buf[i*64 + j] + beta * y[j*yc + i] (beta == 0: y not read) for i < npos, j < nch:
 * 16 x 16 register transposes, edges scalar */
static void store_rows_t(const float *buf, int npos, int nch, float *y, int64_t yc, float beta)
{
    const __m512 vb = _mm512_set1_ps(beta);
    for (int j0 = 0; j0 < nch; j0 += 16) {
        const int jn = nch - j0 < 16 ? nch - j0 : 16;
        int i0 = 0;
        if (jn == 16)
            for (; i0 + 16 <= npos; i0 += 16) {
                float t[256];
                fdnn_transpose16_avx512(buf + (int64_t)i0 * 64 + j0, 64, t, 16);
                for (int j = 0; j < 16; j++) {
                    float *yp = y + (int64_t)(j0 + j) * yc + i0;
                    __m512 v = _mm512_loadu_ps(t + 16 * j);
                    if (beta != 0) v = _mm512_fmadd_ps(vb, _mm512_loadu_ps(yp), v);
                    _mm512_storeu_ps(yp, v);
                }
            }
        for (int j = j0; j < j0 + jn; j++)
            for (int i = i0; i < npos; i++) {
                float v = buf[(int64_t)i * 64 + j];
                if (beta != 0) v += beta * y[(int64_t)j * yc + i];
                y[(int64_t)j * yc + i] = v;
            }
    }
}

/* Task t of the plan with the filter blocks of its channel group at wg; pf / pfb: pfb bytes at pf
 * to bring into L2 while it runs (spread over its tiles; pfb == 0: none) */
static void fwd_task(const fdnn_nhwc_fwd *a, const fwd_plan *f, int64_t t, const float *wg, const float *ab, const char *pf, int64_t pfb)
{
    int oh, n, tb;
    if (f->kb_inner) {
        tb = (int)(t % f->ntb); oh = (int)((t / f->ntb) % f->np); n = (int)(t / ((int64_t)f->ntb * f->np));
    } else {
        oh = (int)(t % f->np); n = (int)((t / f->np) % a->n); tb = (int)(t / ((int64_t)f->np * a->n));
    }
    oh *= f->rstep;
    int kb = tb * f->bpt, nv = kb + 1 < f->nkb && f->wide ? 4 : 2, tw = nv == 4 ? 6 : 8;   /* widest tile of each table row */
    int rows = oh + f->rstep <= a->p ? f->rstep : 1;
    int left = a->co - kb * FDNN_NHWC_KB, lim = nv * 16;
    const float *xr = a->x + n * a->xn + (int64_t)oh * a->sh * a->xh;
    float *yr = a->y + n * a->yn + oh * a->yh + (int64_t)kb * FDNN_NHWC_KB * a->yc;
    int64_t xs = (int64_t)a->sw * a->xw, xrow = (int64_t)a->sh * a->xh;
    /* the row in ceil(q / tw) tiles of near-equal width (64 x 6 and 64 x 5 rather than a
     * row of 64 x 4 where 4 divides q: fewer loads per FMA) */
    int nt = (a->q + tw - 1) / tw, base = a->q / nt, extra = a->q % nt;
    const int nleft = left < lim ? left : lim;
    /* NCHW output rows of at least 16: the tiles go channel-innermost into a buffer of up to
     * RB_POS positions, which is stored transposed, 16 positions of a channel a vector.
     * Scalar stores straight from the tiles touch one plane (a page or more apart) per channel
     * per position: 3x3 64->64 224x224 NCHW forward 21.2 ms, NHWC 11.7 */
    enum { RB_POS = 64 };
    const int buffered = a->yc != 1 && a->yw == 1 && rows == 1 && a->q >= 16;
    float buf[(RB_POS + 8) * 64];
    const float abuf[2] = { ab[0], 0.0f };
    int seg = 0; /* first position in buf */
    /* prefetch: pfs bytes per reduction step of a tile (at most a line, rounded up to 16) */
    const int64_t steps = (int64_t)a->r * a->s * a->ci, per = pfb / nt; /* reduction steps of a tile */
    int64_t pfs = pfb > 0 && steps > 0 ? ((per + steps - 1) / steps + 15) / 16 * 16 : 0;
    if (pfs > 64) pfs = 64;
    if (!pfs) pf = (const char *)wg;
    for (int ti = 0, ow = 0; ti < nt; ti++) {
        int cnt = base + (ti < extra);
        fwd_tiles[rows == 2 ? 2 : nv == 4][cnt](xr + ow * xs, xs, xrow, a->xh, a->xw, a->r, a->s, a->dh, a->dw, a->ci, wg, f->wblk,
                                                buffered ? buf + (int64_t)(ow - seg) * 64 : yr + ow * a->yw, buffered ? 64 : a->yw,
                                                a->yh, buffered ? 1 : a->yc, nleft, buffered ? abuf : ab, pf + (pfs ? ti * per : 0), pfs);
        ow += cnt;
        if (buffered && (ow - seg >= RB_POS || ti == nt - 1)) {
            store_rows_t(buf, ow - seg, nleft, yr + seg, a->yc, ab[1]);
            seg = ow;
        }
    }
}

void fdnn_avx512_nhwc_fwd(const fdnn_nhwc_fwd *a)
{
    fwd_plan f;
    fwd_plan_make(a, &f);
    const float ab[2] = { a->alpha, a->beta };
    const float *wp = a->wp;
    if (a->pack) {
        int nth = 1;
#ifdef FDNN_HAVE_OPENMP
        nth = omp_get_max_threads();
#endif
        /* Packed filter beyond L2 (channel groups outermost): each thread packs the blocks of
         * the groups it runs into its own slot of wbuf as it reaches them and reads them back
         * from L2; the whole packed filter used to go out to L3 and come back (3x3 512->512 7x7,
         * N=1: the pack took 37% of the call). Needs a slot of bpt blocks per thread. */
        if (!f.kb_inner && (int64_t)nth * f.bpt <= f.nkb) {
#pragma omp parallel num_threads(nth)
            {
                int tid = 0;
#ifdef FDNN_HAVE_OPENMP
                tid = omp_get_thread_num();
#endif
                float *slot = a->wbuf + (int64_t)tid * f.bpt * f.wblk;
                int64_t have = -1;
                /* this thread's tasks (a static split); where the filter blocks' sources are
                 * contiguous (pf_blk), the tasks of one group bring the source of the thread's
                 * next group into L2, so that its pack reads L2 rather than L3 (3x3 512->512 7x7
                 * N=1: the pack was a quarter of the call, its source 590 KB a block) */
                const int64_t per_g = (int64_t)f.np * a->n, t0 = f.tasks * tid / nth, t1 = f.tasks * (tid + 1) / nth;
                for (int64_t t = t0; t < t1; t++) {
                    int64_t tb = t / per_g;
                    if (tb != have) {
                        for (int b = 0; b < f.bpt && tb * f.bpt + b < f.nkb; b++)
                            a->pack(a->pack_ctx, (int)(tb * f.bpt + b), slot + b * f.wblk);
                        have = tb;
                    }
                    const char *pf = NULL;
                    int64_t pfb = 0;
                    const int64_t nb0 = (tb + 1) * f.bpt;
                    if (a->pf_blk > 0 && (tb + 1) * per_g < t1 && nb0 < f.nkb) {
                        const int64_t nch = a->co - nb0 * FDNN_NHWC_KB < f.bpt * FDNN_NHWC_KB ? a->co - nb0 * FDNN_NHWC_KB : f.bpt * FDNN_NHWC_KB;
                        const int64_t gb = nch * (a->pf_blk / FDNN_NHWC_KB) * (int64_t)sizeof(float), tk = t - tb * per_g;
                        pf = (const char *)(a->pf_base + nb0 * a->pf_blk) + gb * tk / per_g;
                        pfb = gb * (tk + 1) / per_g - gb * tk / per_g;
                    }
                    fwd_task(a, &f, t, slot, ab, pf, pfb);
                }
            }
            return;
        }
        a->pack(a->pack_ctx, -1, a->wbuf);
        wp = a->wbuf;
    }
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < f.tasks; t++) {
        int tb = (int)(f.kb_inner ? t % f.ntb : t / ((int64_t)f.np * a->n));
        fwd_task(a, &f, t, wp + (int64_t)tb * f.bpt * f.wblk, ab, NULL, 0);
    }
}

/* ---------------------------------------------------------------- filter pack */
/* d[c*32 + j] = src[j*sco + c] (c < ci, j < nj), 0 for nj <= j < 32: 16x16 blocks transposed
 * in registers (unpack within 128-bit lanes, then lane shuffles), edges scalar. */
void fdnn_avx512_nhwc_pack_rows(const float *src, int64_t sco, int nj, int ci, float *d)
{
    for (int j0 = 0; j0 < FDNN_NHWC_KB; j0 += 16) {
        int jn = nj - j0 < 0 ? 0 : nj - j0 < 16 ? nj - j0 : 16;
        int c0 = 0;
        if (jn == 16)
            for (; c0 + 16 <= ci; c0 += 16) fdnn_transpose16_avx512(src + (int64_t)j0 * sco + c0, sco, d + (int64_t)c0 * FDNN_NHWC_KB + j0, FDNN_NHWC_KB);
        for (; c0 < ci; c0++)
            for (int j = 0; j < 16; j++) d[(int64_t)c0 * FDNN_NHWC_KB + j0 + j] = j < jn ? src[(int64_t)(j0 + j) * sco + c0] : 0.0f;
    }
}

/* fdnn_avx512_nhwc_pack_gather: two 16-lane gathers per (channel, tap), lanes past nj masked to
 * zero. Indices are 32-bit: strides whose 31st row is beyond them take the scalar loop. */
void fdnn_avx512_nhwc_pack_gather(const float *src, int64_t sco, int64_t sci, const int64_t *toff, int nt, int nj, int ci, int64_t dts,
                                  float *d)
{
    if (sco <= 0 || sco > INT32_MAX / FDNN_NHWC_KB) {
        fdnn_nhwc_pack_gather_scalar(src, sco, sci, toff, nt, nj, ci, dts, d);
        return;
    }
    const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32((int)sco));
    const __mmask16 m0 = fdnn_mask16(nj), m1 = fdnn_mask16(nj - 16);
    const __m512 z = _mm512_setzero_ps();
    for (int c = 0; c < ci; c++) {
        const float *sc = src + c * sci;
        float *dc = d + (int64_t)c * FDNN_NHWC_KB;
        for (int t = 0; t < nt; t++) {
            const float *p = sc + toff[t];
            _mm512_storeu_ps(dc + t * dts, _mm512_mask_i32gather_ps(z, m0, idx, p, 4));
            _mm512_storeu_ps(dc + t * dts + 16, m1 ? _mm512_mask_i32gather_ps(z, m1, idx, p + 16 * sco, 4) : z);
        }
    }
}

/* ---------------------------------------------------------------- weight gradient */
/* swap == 0: vectors of x's input channels, broadcasts of NK output channels of dy; swap == 1
 * (few input channels): vectors of dy's output channels, broadcasts of NK input channels of x.
 * v0 / b0: first vector / broadcast channel. The sums of rows row0..row1 end as
 * st = alpha * sum + beta * st (stride stb per broadcast channel; beta == 0: st not read). */
ALWAYS_INLINE void wgrad_tile(const int NV, const int NK, const int FULL, const fdnn_nhwc_wgrad *a, int r, int s, int b0, int v0,
                              int64_t row0, int64_t row1, float *st, int64_t stb, const float *ab)
{
    /* alpha, beta (ab) read only after the loop: as arguments they would hold two registers */
    int swap = a->swap, vn = swap ? a->co : a->ci;
    __mmask16 m[4];
#pragma GCC unroll 4
    for (int u = 0; u < NV; u++) m[u] = fdnn_mask16(vn - v0 - 16 * u);
    __m512 c[4][8];
#pragma GCC unroll 8
    for (int j = 0; j < NK; j++)
#pragma GCC unroll 4
        for (int u = 0; u < NV; u++) c[u][j] = _mm512_setzero_ps();
    int64_t xs = (int64_t)a->sw * a->xw;
    int64_t vs = swap ? a->yw : xs, bs = swap ? xs : a->yw;
    int n = (int)(row0 / a->p), oh = (int)(row0 % a->p);   /* no divisions per row: short rows (7x7) made them count */
    for (int64_t row = row0; row < row1; row++) {
        const float *xr = a->x + n * a->xn + ((int64_t)oh * a->sh + (int64_t)r * a->dh) * a->xh + (int64_t)s * a->dw * a->xw;
        const float *yr = a->dy + n * a->yn + oh * a->yh;
        const float *vr = (swap ? yr : xr) + v0, *br = (swap ? xr : yr) + b0;
        if (++oh == a->p) {
            oh = 0;
            n++;
        }
#pragma GCC unroll 8
        for (int ow = 0; ow < a->q; ow++) {
            __m512 xv[4];
#pragma GCC unroll 4
            for (int u = 0; u < NV; u++) xv[u] = FULL ? _mm512_loadu_ps(vr + ow * vs + 16 * u) : _mm512_maskz_loadu_ps(m[u], vr + ow * vs + 16 * u);
            const float *bp = br + ow * bs;
#pragma GCC unroll 8
            for (int j = 0; j < NK; j++) {
                __m512 yb = _mm512_set1_ps(bp[j]);
#pragma GCC unroll 4
                for (int u = 0; u < NV; u++) c[u][j] = _mm512_fmadd_ps(yb, xv[u], c[u][j]);
            }
        }
    }
    float alpha = ab[0], beta = ab[1];
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 8
    for (int j = 0; j < NK; j++) {
        float *o = st + (int64_t)j * stb;
#pragma GCC unroll 4
        for (int u = 0; u < NV; u++) {
            __m512 e = c[u][j];
            if (alpha != 1.0f) e = _mm512_mul_ps(va, e);
            if (beta != 0) e = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m[u], o + 16 * u), e);
            _mm512_mask_storeu_ps(o + 16 * u, m[u], e);
        }
    }
}

#define WG_ARGS const fdnn_nhwc_wgrad *a, int r, int s, int b0, int v0, int64_t row0, int64_t row1, float *st, int64_t stb, const float *ab
#define WG_VARIANT(NV, NK) \
    static void wgrad_tile_##NV##_##NK(WG_ARGS) { wgrad_tile(NV, NK, 0, a, r, s, b0, v0, row0, row1, st, stb, ab); } \
    static void wgrad_full_##NV##_##NK(WG_ARGS) { wgrad_tile(NV, NK, 1, a, r, s, b0, v0, row0, row1, st, stb, ab); }
WG_VARIANT(2, 1) WG_VARIANT(2, 2) WG_VARIANT(2, 3) WG_VARIANT(2, 4) WG_VARIANT(2, 5) WG_VARIANT(2, 6) WG_VARIANT(2, 7) WG_VARIANT(2, 8)
WG_VARIANT(4, 1) WG_VARIANT(4, 2) WG_VARIANT(4, 3) WG_VARIANT(4, 4) WG_VARIANT(4, 5) WG_VARIANT(4, 6)
/* [NV / 4][NK]: 32 vector channels x up to 8 broadcasts (16 sums), or 64 x up to 6 (24 sums:
 * 10 loads per 24 FMAs instead of per 16); masked loads for a partial vector block, plain ones
 * for whole blocks */
static const fdnn_nhwc_wg_tile wg_tiles[2][9] = {
    { NULL, wgrad_tile_2_1, wgrad_tile_2_2, wgrad_tile_2_3, wgrad_tile_2_4, wgrad_tile_2_5, wgrad_tile_2_6, wgrad_tile_2_7, wgrad_tile_2_8 },
    { NULL, wgrad_tile_4_1, wgrad_tile_4_2, wgrad_tile_4_3, wgrad_tile_4_4, wgrad_tile_4_5, wgrad_tile_4_6, NULL, NULL },
};
static const fdnn_nhwc_wg_tile wg_full[2][9] = {
    { NULL, wgrad_full_2_1, wgrad_full_2_2, wgrad_full_2_3, wgrad_full_2_4, wgrad_full_2_5, wgrad_full_2_6, wgrad_full_2_7, wgrad_full_2_8 },
    { NULL, wgrad_full_4_1, wgrad_full_4_2, wgrad_full_4_3, wgrad_full_4_4, wgrad_full_4_5, wgrad_full_4_6, NULL, NULL },
};

void fdnn_avx512_nhwc_wgrad(const fdnn_nhwc_wgrad *a)
{
    /* 64 x 6 tiles where there are >= 48 vector channels: 10 loads per 24 FMAs instead of per 16
     * (1x1 64->256 56x56 N=8, 2 threads: 7.1 -> 4.7 ms); masked loads make one table serve
     * partial vector blocks too. Task order (fdnn_nhwc_wgrad_drive): vector source in L2 where one
     * chunk of it is at most 768 KB (3x3 512->512 7x7 N=1, 1 thread, 3.26 -> 2.47 ms), else
     * broadcast blocks innermost (1x1 2048->512 7x7 N=8, 2 MB of x per chunk, 10.5 -> 9.6 ms). */
    int vn = a->swap ? a->co : a->ci, wide = vn >= 48;
    fdnn_nhwc_wgrad_drive(a, wide ? 64 : 32, wide ? 6 : 8, 256, 768.0 * 1024, wg_full[wide], wg_tiles[wide]);
}

/* ---------------------------------------------------------------- depthwise */
ALWAYS_INLINE void dw_tile(const int NW, const fdnn_dw_fwd *a, const float *x, int64_t xs, float *y, int c0, __mmask16 m)
{
    __m512 acc[8];
#pragma GCC unroll 8
    for (int i = 0; i < NW; i++) acc[i] = _mm512_setzero_ps();
    for (int r = 0; r < a->r; r++)
        for (int s = 0; s < a->s; s++) {
            __m512 wv = _mm512_maskz_loadu_ps(m, a->wp + (int64_t)(r * a->s + s) * a->c + c0);
            const float *xp = x + (int64_t)r * a->dh * a->xh + (int64_t)s * a->dw * a->xw;
#pragma GCC unroll 8
            for (int i = 0; i < NW; i++) acc[i] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, xp + i * xs), wv, acc[i]);
        }
    __m512 va = _mm512_set1_ps(a->alpha), vb = _mm512_set1_ps(a->beta);
    int nleft = a->c - c0 < 16 ? a->c - c0 : 16;
#pragma GCC unroll 8
    for (int i = 0; i < NW; i++) {
        float *yp = y + i * a->yw;
        __m512 v = _mm512_mul_ps(va, acc[i]);
        if (a->yc == 1) {
            if (a->beta != 0) v = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, yp), v);
            _mm512_mask_storeu_ps(yp, m, v);
        } else {
            float buf[16];
            _mm512_storeu_ps(buf, v);
            for (int j = 0; j < nleft; j++) yp[j * a->yc] = a->beta != 0 ? buf[j] + a->beta * yp[j * a->yc] : buf[j];
        }
    }
}
static void dw_tile_8(const fdnn_dw_fwd *a, const float *x, int64_t xs, float *y, int c0, __mmask16 m) { dw_tile(8, a, x, xs, y, c0, m); }
static void dw_tile_1(const fdnn_dw_fwd *a, const float *x, int64_t xs, float *y, int c0, __mmask16 m) { dw_tile(1, a, x, xs, y, c0, m); }

void fdnn_avx512_dw_fwd(const fdnn_dw_fwd *a)
{
    int64_t rows = (int64_t)a->n * a->p;
    int ncb = (a->c + 15) / 16;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < rows; t++) {
        int n = (int)(t / a->p), oh = (int)(t % a->p);
        const float *xr = a->x + n * a->xn + (int64_t)oh * a->sh * a->xh;
        float *yr = a->y + n * a->yn + oh * a->yh;
        int64_t xs = (int64_t)a->sw * a->xw;
        for (int cb = 0; cb < ncb; cb++) {
            int c0 = cb * 16;
            __mmask16 m = fdnn_mask16(a->c - c0);
            int ow = 0;
            for (; ow + 8 <= a->q; ow += 8) dw_tile_8(a, xr + ow * xs + c0, xs, yr + ow * a->yw + c0 * a->yc, c0, m);
            for (; ow < a->q; ow++) dw_tile_1(a, xr + ow * xs + c0, xs, yr + ow * a->yw + c0 * a->yc, c0, m);
        }
    }
}

/* y[i * yw] = alpha * acc[i] + beta * y[i * yw] for the NW positions of a depthwise tile into
 * channel-innermost y (beta == 0: y not read) */
ALWAYS_INLINE void dw_store(const int NW, const fdnn_dw_fwd *a, const __m512 *acc, float *y, __mmask16 m)
{
    const __m512 va = _mm512_set1_ps(a->alpha), vb = _mm512_set1_ps(a->beta);
#pragma GCC unroll 8
    for (int i = 0; i < NW; i++) {
        float *yp = y + i * a->yw;
        __m512 v = _mm512_mul_ps(va, acc[i]);
        if (a->beta != 0) v = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, yp), v);
        _mm512_mask_storeu_ps(yp, m, v);
    }
}

/* Any filter, stride and dilation from the unpadded channel-innermost x: NW output positions of
 * one row and one 16-channel block; xr[r]: x's row for filter row r (NULL outside the image),
 * col0: the column of position 0's first tap; CHECK: positions whose taps may fall left or right
 * of the image (those taps skipped). The padded copy of x it replaces took as long as the
 * convolution (3x3 stride 2, 144 channels 56x56 NHWC forward: 0.078 ms, oneDNN 0.021). */
ALWAYS_INLINE void dwu_tile(const int NW, const int CHECK, const fdnn_dw_fwd *a, const float *const *xr, int col0, int iw, float *y, int c0,
                            __mmask16 m)
{
    __m512 acc[8];
#pragma GCC unroll 8
    for (int i = 0; i < NW; i++) acc[i] = _mm512_setzero_ps();
    const int sw = a->sw;
    const int64_t xs = (int64_t)sw * a->xw;
    for (int r = 0; r < a->r; r++) {
        if (!xr[r]) continue;
        for (int s = 0; s < a->s; s++) {
            const __m512 wv = _mm512_maskz_loadu_ps(m, a->wp + (int64_t)(r * a->s + s) * a->c + c0);
            const int col = col0 + s * a->dw;
            const float *xp = xr[r] + (int64_t)col * a->xw;
#pragma GCC unroll 8
            for (int i = 0; i < NW; i++) {
                if (CHECK && (col + i * sw < 0 || col + i * sw >= iw)) continue;
                acc[i] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, xp + i * xs), wv, acc[i]);
            }
        }
    }
    dw_store(NW, a, acc, y, m);
}

/* channel-innermost y (yc == 1) */
void fdnn_avx512_dw_fwd_u(const fdnn_dw_fwd *a, int ih, int iw, int ph, int pw)
{
    const int64_t rows = (int64_t)a->n * a->p;
    const int ncb = (a->c + 15) / 16;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < rows; t++) {
        const int n = (int)(t / a->p), oh = (int)(t % a->p);
        const float *xr[FDNN_DWU_MAXR];
        for (int r = 0; r < a->r; r++) {
            const int y = oh * a->sh - ph + r * a->dh;
            xr[r] = y >= 0 && y < ih ? a->x + n * a->xn + (int64_t)y * a->xh : NULL;
        }
        float *yr = a->y + n * a->yn + oh * a->yh;
        for (int cb = 0; cb < ncb; cb++) {
            const int c0 = cb * 16;
            const __mmask16 m = fdnn_mask16(a->c - c0);
            const float *xc[FDNN_DWU_MAXR];
            for (int r = 0; r < a->r; r++) xc[r] = xr[r] ? xr[r] + c0 : NULL;
            int ow = 0;
            for (; ow + 8 <= a->q; ow += 8) {
                const int col0 = ow * a->sw - pw;
                if (col0 >= 0 && col0 + 7 * a->sw + (a->s - 1) * a->dw < iw) dwu_tile(8, 0, a, xc, col0, iw, yr + ow * a->yw + c0, c0, m);
                else dwu_tile(8, 1, a, xc, col0, iw, yr + ow * a->yw + c0, c0, m);
            }
            for (; ow < a->q; ow++) dwu_tile(1, 1, a, xc, ow * a->sw - pw, iw, yr + ow * a->yw + c0, c0, m);
        }
    }
}

/* 3x3 stride 1 from the unpadded input: NW outputs from NW+2 input vectors per filter row */
ALWAYS_INLINE void dw3_tile(const int NW, const int CHECK, const fdnn_dw_fwd *a, const float *const xr[3], int col0, int iw,
                            const __m512 w[9], float *y, __mmask16 m)
{
    __m512 acc[8];
#pragma GCC unroll 8
    for (int i = 0; i < NW; i++) acc[i] = _mm512_setzero_ps();
#pragma GCC unroll 3
    for (int r = 0; r < 3; r++) {
        if (!xr[r]) continue;
#pragma GCC unroll 10
        for (int j = 0; j < NW + 2; j++) {
            int col = col0 + j;
            __m512 xv;
            if (CHECK && (col < 0 || col >= iw)) continue;
            xv = _mm512_maskz_loadu_ps(m, xr[r] + (int64_t)col * a->xw);
#pragma GCC unroll 3
            for (int s = 0; s < 3; s++) {
                int i = j - s;
                if (i >= 0 && i < NW) acc[i] = _mm512_fmadd_ps(xv, w[r * 3 + s], acc[i]);
            }
        }
    }
    dw_store(NW, a, acc, y, m);
}

void fdnn_avx512_dw_fwd_3x3s1(const fdnn_dw_fwd *a, int ih, int iw, int ph, int pw)
{
    int64_t rows = (int64_t)a->n * a->p;
    int ncb = (a->c + 15) / 16;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < rows; t++) {
        int n = (int)(t / a->p), oh = (int)(t % a->p);
        float *yr = a->y + n * a->yn + oh * a->yh;
        for (int cb = 0; cb < ncb; cb++) {
            int c0 = cb * 16;
            __mmask16 m = fdnn_mask16(a->c - c0);
            __m512 w[9];
            for (int i = 0; i < 9; i++) w[i] = _mm512_maskz_loadu_ps(m, a->wp + (int64_t)i * a->c + c0);
            const float *xr[3];
            for (int r = 0; r < 3; r++) {
                int y = oh - ph + r;
                xr[r] = (y >= 0 && y < ih) ? a->x + n * a->xn + (int64_t)y * a->xh + c0 : NULL;
            }
            int ow = 0;
            for (; ow + 8 <= a->q; ow += 8) {
                int col0 = ow - pw;
                if (col0 >= 0 && col0 + 10 <= iw) dw3_tile(8, 0, a, xr, col0, iw, w, yr + ow * a->yw + c0, m);
                else dw3_tile(8, 1, a, xr, col0, iw, w, yr + ow * a->yw + c0, m);
            }
            for (; ow < a->q; ow++) dw3_tile(1, 1, a, xr, ow - pw, iw, w, yr + ow * a->yw + c0, m);
        }
    }
}

/* A whole 16-channel block's mask as a constant: the depthwise kernels are inlined once with it
 * (the compiler then emits plain loads and stores) and once with the run-time mask of a partial
 * block. Masked loads ran the FMA loops measurably slower on Emerald Rapids (the NHWC weight
 * gradient's 64 x 6 tile: 1.3 -> 1.05-1.1 times oneDNN with plain loads). */
#define FULL16 ((__mmask16)0xFFFF)

/* 3x3 stride 1 as Winograd F(2,3) along W: per filter row r and output column pair the four
 * products u[r][k] * v[k] (v = B^T of the 4 input columns) replace six FMAs; the input transform
 * of one input row is shared by the T output rows of the block, and the output transform
 * (y0 = m0+m1+m2, y1 = m1-m2-m3) is adds, which run beside the FMAs. u holds alpha. */
ALWAYS_INLINE void dw3w_pair(const int T, const int CHECK, const float *const *xr, int col0, int iw, int64_t xw, const __m512 *u,
                             float *const *yr, int64_t yo, int64_t yw, int two, float beta, __mmask16 m)
{
    /* element offsets of the pair's four input columns, shared by every row (no per-load multiply) */
    const int64_t xo[4] = { (int64_t)col0 * xw, (int64_t)col0 * xw + xw, (int64_t)col0 * xw + 2 * xw, (int64_t)col0 * xw + 3 * xw };
    __m512 acc[4][4];
#pragma GCC unroll 4
    for (int t = 0; t < T; t++)
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) acc[t][k] = _mm512_setzero_ps();
#pragma GCC unroll 6
    for (int i = 0; i < T + 2; i++) {
        if (!xr[i]) continue;
        __m512 d[4];
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++)
            d[k] = (!CHECK || (col0 + k >= 0 && col0 + k < iw)) ? _mm512_maskz_loadu_ps(m, xr[i] + xo[k]) : _mm512_setzero_ps();
        __m512 v[4] = { _mm512_sub_ps(d[0], d[2]), _mm512_add_ps(d[1], d[2]), _mm512_sub_ps(d[2], d[1]), _mm512_sub_ps(d[1], d[3]) };
#pragma GCC unroll 4
        for (int t = 0; t < T; t++) {
            int r = i - t;
            if (r < 0 || r > 2) continue;
#pragma GCC unroll 4
            for (int k = 0; k < 4; k++) acc[t][k] = _mm512_fmadd_ps(u[r * 4 + k], v[k], acc[t][k]);
        }
    }
    __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 4
    for (int t = 0; t < T; t++) {
        __m512 y0 = _mm512_add_ps(_mm512_add_ps(acc[t][0], acc[t][1]), acc[t][2]);
        __m512 y1 = _mm512_sub_ps(_mm512_sub_ps(acc[t][1], acc[t][2]), acc[t][3]);
        float *yp = yr[t] + yo;
        if (beta != 0) y0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, yp), y0);
        _mm512_mask_storeu_ps(yp, m, y0);
        if (two) {
            if (beta != 0) y1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, yp + yw), y1);
            _mm512_mask_storeu_ps(yp + yw, m, y1);
        }
    }
}

/* one block of T output rows (T + 2 input rows, NULL = outside the image), one channel block:
 * boundary column pairs checked, the rest not; an odd last column stores only y0 */
ALWAYS_INLINE void dw3w_rows(const int T, const fdnn_dw_fwd *a, const float *const *xr, float *const *yr0, int iw, int pw,
                             const __m512 *u, __mmask16 m)
{
    int q = a->q, npairs = (q + 1) / 2, full = q / 2;
    int jlo = (pw + 1) / 2 < npairs ? (pw + 1) / 2 : npairs;
    int jhi = iw - 4 + pw >= 0 ? (iw - 4 + pw) / 2 + 1 : 0; /* pairs j < jhi read columns < iw */
    if (jhi > full) jhi = full;
    if (jhi < jlo) jhi = jlo;
    int j = 0;
    for (; j < jlo; j++) dw3w_pair(T, 1, xr, 2 * j - pw, iw, a->xw, u, yr0, (int64_t)2 * j * a->yw, a->yw, 2 * j + 1 < q, a->beta, m);
    for (; j < jhi; j++) dw3w_pair(T, 0, xr, 2 * j - pw, iw, a->xw, u, yr0, (int64_t)2 * j * a->yw, a->yw, 1, a->beta, m);
    for (; j < npairs; j++) dw3w_pair(T, 1, xr, 2 * j - pw, iw, a->xw, u, yr0, (int64_t)2 * j * a->yw, a->yw, 2 * j + 1 < q, a->beta, m);
}
static void dw3w_rows_1(const fdnn_dw_fwd *a, const float *const *xr, float *const *yr, int iw, int pw, const __m512 *u, __mmask16 m) { if (m == FULL16) dw3w_rows(1, a, xr, yr, iw, pw, u, FULL16); else dw3w_rows(1, a, xr, yr, iw, pw, u, m); }
static void dw3w_rows_2(const fdnn_dw_fwd *a, const float *const *xr, float *const *yr, int iw, int pw, const __m512 *u, __mmask16 m) { if (m == FULL16) dw3w_rows(2, a, xr, yr, iw, pw, u, FULL16); else dw3w_rows(2, a, xr, yr, iw, pw, u, m); }
static void dw3w_rows_3(const fdnn_dw_fwd *a, const float *const *xr, float *const *yr, int iw, int pw, const __m512 *u, __mmask16 m) { if (m == FULL16) dw3w_rows(3, a, xr, yr, iw, pw, u, FULL16); else dw3w_rows(3, a, xr, yr, iw, pw, u, m); }
static void dw3w_rows_4(const fdnn_dw_fwd *a, const float *const *xr, float *const *yr, int iw, int pw, const __m512 *u, __mmask16 m) { if (m == FULL16) dw3w_rows(4, a, xr, yr, iw, pw, u, FULL16); else dw3w_rows(4, a, xr, yr, iw, pw, u, m); }

void fdnn_avx512_dw_fwd_3x3s1_wino(const fdnn_dw_fwd *a, int ih, int iw, int ph, int pw, int T)
{
    int nrb = (a->p + T - 1) / T, ncb = (a->c + 15) / 16;
    int64_t tasks = (int64_t)a->n * nrb;
#pragma omp parallel for schedule(static)
    for (int64_t tk = 0; tk < tasks; tk++) {
        int n = (int)(tk / nrb), oh0 = (int)(tk % nrb) * T, nt = a->p - oh0 < T ? a->p - oh0 : T;
        for (int cb = 0; cb < ncb; cb++) {
            int c0 = cb * 16;
            __mmask16 m = fdnn_mask16(a->c - c0);
            __m512 u[12];
            for (int i = 0; i < 12; i++) u[i] = _mm512_maskz_loadu_ps(m, a->wp + (int64_t)i * a->c + c0);
            const float *xr[6];
            float *yr[4];
            for (int i = 0; i < nt + 2; i++) {
                int y = oh0 - ph + i;
                xr[i] = (y >= 0 && y < ih) ? a->x + n * a->xn + (int64_t)y * a->xh + c0 : NULL;
            }
            for (int t = 0; t < nt; t++) yr[t] = a->y + n * a->yn + (int64_t)(oh0 + t) * a->yh + c0;
            if (nt == 4) dw3w_rows_4(a, xr, yr, iw, pw, u, m);
            else if (nt == 3) dw3w_rows_3(a, xr, yr, iw, pw, u, m);
            else if (nt == 2) dw3w_rows_2(a, xr, yr, iw, pw, u, m);
            else dw3w_rows_1(a, xr, yr, iw, pw, u, m);
        }
    }
}

static void dw_wg_3x3(const fdnn_dw_wgrad *a, int c0, int r0, __mmask16 m, int64_t rows, int64_t xs)
{
    __m512 acc[9];
#pragma GCC unroll 9
    for (int i = 0; i < 9; i++) acc[i] = _mm512_setzero_ps();
    for (int64_t row = 0; row < rows; row++) {
        int n = (int)(row / a->p), oh = (int)(row % a->p);
        const float *xr = a->x + n * a->xn + ((int64_t)oh * a->sh + (int64_t)r0 * a->dh) * a->xh + c0;
        const float *yr = a->dy + n * a->yn + oh * a->yh + c0;
        for (int ow = 0; ow < a->q; ow++) {
            __m512 yv = _mm512_maskz_loadu_ps(m, yr + ow * a->yw);
            const float *xp = xr + ow * xs;
#pragma GCC unroll 9
            for (int i = 0; i < 9; i++)
                acc[i] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, xp + (int64_t)(i / 3) * a->dh * a->xh + (int64_t)(i % 3) * a->dw * a->xw),
                                         yv, acc[i]);
        }
    }
#pragma GCC unroll 9
    for (int i = 0; i < 9; i++) _mm512_mask_storeu_ps(a->acc + ((int64_t)(r0 + i / 3) * 3 + i % 3) * a->c + c0, m, acc[i]);
}

ALWAYS_INLINE void dw3_wg_pos(const int CHECK, const float *const xr[3], int64_t xw, int col, int iw, __m512 yv, __m512 acc[9],
                              __mmask16 m)
{
#pragma GCC unroll 3
    for (int r = 0; r < 3; r++) {
        if (!xr[r]) continue;
#pragma GCC unroll 3
        for (int s = 0; s < 3; s++) {
            if (CHECK && (col + s < 0 || col + s >= iw)) continue;
            acc[r * 3 + s] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, xr[r] + (int64_t)(col + s) * xw), yv, acc[r * 3 + s]);
        }
    }
}

/* 8 interior output positions: each x vector of a filter row is loaded once and feeds up to 3
 * taps (3*10 + 8 loads for 72 FMAs instead of 80 loads) */
ALWAYS_INLINE void dw3_wg_8(const float *const xr[3], int64_t xw, int col, const float *yp, int64_t yw, __m512 acc[9], __mmask16 m)
{
    __m512 yv[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) yv[i] = _mm512_maskz_loadu_ps(m, yp + (int64_t)i * yw);
#pragma GCC unroll 3
    for (int r = 0; r < 3; r++) {
        if (!xr[r]) continue;
#pragma GCC unroll 10
        for (int j = 0; j < 10; j++) {
            __m512 xv = _mm512_maskz_loadu_ps(m, xr[r] + (int64_t)(col + j) * xw);
#pragma GCC unroll 3
            for (int s = 0; s < 3; s++) {
                int i = j - s;
                if (i >= 0 && i < 8) acc[r * 3 + s] = _mm512_fmadd_ps(xv, yv[i], acc[r * 3 + s]);
            }
        }
    }
}

/* Interior positions of an output row whose three input rows all exist, n groups of N (8 or 4)
 * from column col: the x columns of each input row are walked by pointer and the 9 sums stay in
 * registers for the run; the next output row's x and dy lines are prefetched on the way (the
 * channel block's lines are 576 bytes apart at 144 channels, a stride the L2 streamer does not
 * follow). Returns the positions done. Through dw3_wg_8 alone the compiler kept the sums on the
 * stack, folded each x load into its three FMAs and multiplied an index per load:
 * dw_3x3_144_56 backward filter 0.057-0.059 -> 0.046 ms with this (prefetch two rows ahead:
 * 0.048). */
ALWAYS_INLINE int dw3_wg_run(const int N, const float *const xr[3], int64_t xw, int col, const float *yp, int64_t yw, int n, __m512 acc[9],
                             __mmask16 m, int64_t xh, int64_t yh)
{
    __m512 s0 = acc[0], s1 = acc[1], s2 = acc[2], s3 = acc[3], s4 = acc[4], s5 = acc[5], s6 = acc[6], s7 = acc[7], s8 = acc[8];
    const float *p0 = xr[0] + (int64_t)col * xw, *p1 = xr[1] + (int64_t)col * xw, *p2 = xr[2] + (int64_t)col * xw;
    const int64_t xn = N * xw, yn = N * yw;
    for (int g = 0; g < n; g++) {
        __m512 yv[8];
#pragma GCC unroll 8
        for (int i = 0; i < N; i++) yv[i] = _mm512_maskz_loadu_ps(m, yp + i * yw);
#pragma GCC unroll 8
        for (int i = 0; i < N; i++) {
            _mm_prefetch((const char *)(p2 + xh + i * xw), _MM_HINT_T0);
            _mm_prefetch((const char *)(yp + yh + i * yw), _MM_HINT_T0);
        }
        /* filter row r: column j of the run feeds taps s = 0..2 of positions j - s */
#define DW3_ROW(P, A0, A1, A2)                                                                      \
        {                                                                                           \
            const float *q = P;                                                                     \
            _Pragma("GCC unroll 10") for (int j = 0; j < N + 2; j++) {                              \
                __m512 xv = _mm512_maskz_loadu_ps(m, q);                                            \
                /* one load for three FMAs (not three folded loads), and the next column one add   \
                 * away (not ten offsets held on the stack) */                                      \
                __asm__("" : "+v"(xv), "+r"(q));                                                    \
                q += xw;                                                                            \
                if (j < N) A0 = _mm512_fmadd_ps(xv, yv[j], A0);                                     \
                if (j >= 1 && j <= N) A1 = _mm512_fmadd_ps(xv, yv[j - 1], A1);                      \
                if (j >= 2) A2 = _mm512_fmadd_ps(xv, yv[j - 2], A2);                                \
            }                                                                                       \
        }
        DW3_ROW(p0, s0, s1, s2)
        DW3_ROW(p1, s3, s4, s5)
        DW3_ROW(p2, s6, s7, s8)
#undef DW3_ROW
        p0 += xn, p1 += xn, p2 += xn, yp += yn;
    }
    acc[0] = s0, acc[1] = s1, acc[2] = s2, acc[3] = s3, acc[4] = s4, acc[5] = s5, acc[6] = s6, acc[7] = s7, acc[8] = s8;
    return n * N;
}

/* rows r0..r1-1 of one 16-channel block into o (9 taps, a->c apart) */
ALWAYS_INLINE void dw3_wg_block(const fdnn_dw_wgrad *a, int ih, int iw, int ph, int pw, int lo, int hi, int c0, int64_t r0, int64_t r1,
                                float *o, __mmask16 m)
{
    __m512 acc[9];
    for (int i = 0; i < 9; i++) acc[i] = _mm512_setzero_ps();
    for (int64_t row = r0; row < r1; row++) {
        const float *xr[3];
        const float *yr = fdnn_dw3_wg_rows(a, row, ih, ph, c0, xr);
        int ow = 0;
        if (xr[0] && xr[1] && xr[2]) {
            for (; ow < lo; ow++) dw3_wg_pos(1, xr, a->xw, ow - pw, iw, _mm512_maskz_loadu_ps(m, yr + ow * a->yw), acc, m);
            ow += dw3_wg_run(8, xr, a->xw, ow - pw, yr + ow * a->yw, a->yw, hi > ow ? (hi - ow) / 8 : 0, acc, m, a->xh, a->yh);
            ow += dw3_wg_run(4, xr, a->xw, ow - pw, yr + ow * a->yw, a->yw, hi - ow >= 4, acc, m, a->xh, a->yh);
            for (; ow < hi; ow++) dw3_wg_pos(0, xr, a->xw, ow - pw, iw, _mm512_maskz_loadu_ps(m, yr + ow * a->yw), acc, m);
            for (; ow < a->q; ow++) dw3_wg_pos(1, xr, a->xw, ow - pw, iw, _mm512_maskz_loadu_ps(m, yr + ow * a->yw), acc, m);
            continue;
        }
        for (; ow < lo; ow++) dw3_wg_pos(1, xr, a->xw, ow - pw, iw, _mm512_maskz_loadu_ps(m, yr + ow * a->yw), acc, m);
        for (; ow + 8 <= hi; ow += 8) dw3_wg_8(xr, a->xw, ow - pw, yr + ow * a->yw, a->yw, acc, m);
        for (; ow < hi; ow++) dw3_wg_pos(0, xr, a->xw, ow - pw, iw, _mm512_maskz_loadu_ps(m, yr + ow * a->yw), acc, m);
        for (; ow < a->q; ow++) dw3_wg_pos(1, xr, a->xw, ow - pw, iw, _mm512_maskz_loadu_ps(m, yr + ow * a->yw), acc, m);
    }
    for (int i = 0; i < 9; i++) _mm512_mask_storeu_ps(o + (int64_t)i * a->c, m, acc[i]);
}

void fdnn_avx512_dw_wgrad_3x3s1(const fdnn_dw_wgrad *a, int ih, int iw, int ph, int pw, int nchunk)
{
    int ncb = (a->c + 15) / 16;
    int64_t rows = (int64_t)a->n * a->p;
    int lo = pw, hi = iw - 2 + pw; /* ow in [lo, hi) reads columns ow-pw .. ow-pw+2, all inside */
    if (hi > a->q) hi = a->q;
    if (lo > hi) lo = hi;
#pragma omp for collapse(2) schedule(static) /* orphaned: the caller's parallel region */
    for (int ch = 0; ch < nchunk; ch++)
        for (int cb = 0; cb < ncb; cb++) {
            int c0 = cb * 16;
            __mmask16 m = fdnn_mask16(a->c - c0);
            int64_t r0 = rows * ch / nchunk, r1 = rows * (ch + 1) / nchunk;
            float *o = a->acc + (int64_t)ch * 9 * a->c + c0;
            if (m == FULL16) dw3_wg_block(a, ih, iw, ph, pw, lo, hi, c0, r0, r1, o, FULL16);
            else dw3_wg_block(a, ih, iw, ph, pw, lo, hi, c0, r0, r1, o, m);
        }
}

/* one task per 16-channel block: every dy vector is loaded once and feeds all taps (up to 16
 * accumulators; larger filters go tap-row by tap-row) */
void fdnn_avx512_dw_wgrad(const fdnn_dw_wgrad *a)
{
    int ncb = (a->c + 15) / 16, S = a->s;
    int rblk = 16 / S < 1 ? 1 : 16 / S;   /* filter rows per pass */
    int64_t rows = (int64_t)a->n * a->p, xs = (int64_t)a->sw * a->xw;
#pragma omp parallel for schedule(static)
    for (int cb = 0; cb < ncb; cb++) {
        int c0 = cb * 16;
        __mmask16 m = fdnn_mask16(a->c - c0);
        for (int r0 = 0; r0 < a->r; r0 += rblk) {
            int nr = a->r - r0 < rblk ? a->r - r0 : rblk;
            if (S > 16) {   /* very wide filters: one tap at a time */
                for (int r = r0; r < r0 + nr; r++)
                    for (int s = 0; s < S; s++) {
                        __m512 acc = _mm512_setzero_ps();
                        for (int64_t row = 0; row < rows; row++) {
                            int n = (int)(row / a->p), oh = (int)(row % a->p);
                            const float *xr = a->x + n * a->xn + ((int64_t)oh * a->sh + (int64_t)r * a->dh) * a->xh + (int64_t)s * a->dw * a->xw + c0;
                            const float *yr = a->dy + n * a->yn + oh * a->yh + c0;
                            for (int ow = 0; ow < a->q; ow++)
                                acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, xr + ow * xs), _mm512_maskz_loadu_ps(m, yr + ow * a->yw), acc);
                        }
                        _mm512_mask_storeu_ps(a->acc + ((int64_t)r * S + s) * a->c + c0, m, acc);
                    }
                continue;
            }
            if (nr == 3 && S == 3) {   /* the common 3x3: constant bounds keep the 9 sums in registers */
                dw_wg_3x3(a, c0, r0, m, rows, xs);
                continue;
            }
            __m512 acc[16];
            for (int i = 0; i < 16; i++) acc[i] = _mm512_setzero_ps();
            for (int64_t row = 0; row < rows; row++) {
                int n = (int)(row / a->p), oh = (int)(row % a->p);
                const float *xr = a->x + n * a->xn + ((int64_t)oh * a->sh + (int64_t)r0 * a->dh) * a->xh + c0;
                const float *yr = a->dy + n * a->yn + oh * a->yh + c0;
                for (int ow = 0; ow < a->q; ow++) {
                    __m512 yv = _mm512_maskz_loadu_ps(m, yr + ow * a->yw);
                    const float *xp = xr + ow * xs;
                    for (int r = 0; r < nr; r++)
                        for (int s = 0; s < S; s++)
                            acc[r * S + s] = _mm512_fmadd_ps(
                                _mm512_maskz_loadu_ps(m, xp + (int64_t)r * a->dh * a->xh + (int64_t)s * a->dw * a->xw), yv, acc[r * S + s]);
                }
            }
            for (int r = 0; r < nr; r++)
                for (int s = 0; s < S; s++) _mm512_mask_storeu_ps(a->acc + ((int64_t)(r0 + r) * S + s) * a->c + c0, m, acc[r * S + s]);
        }
    }
}
#endif
