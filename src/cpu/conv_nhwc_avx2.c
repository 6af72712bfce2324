/* AVX2 + FMA microkernels of the NHWC direct convolution (see conv_nhwc.h), for CPUs without
 * AVX-512 (Zen 1-3, Intel before Skylake-X, and the many cloud parts with AVX-512 off). This
 * file alone is compiled with -mavx2 -mfma (top-level CMakeLists.txt) and only called after
 * fdnn_cpu_has_avx2() said yes; without those flags it is empty.
 *
 * AVX2 has 16 vector registers of 8 floats, half of AVX-512's 32 of 16, so the register tiles
 * are smaller than in conv_nhwc_avx512.c and shaped for it, not a port of its tiles:
 * - forward: 16 output channels (two ymm of one half of a packed 32-channel filter block) x up
 *   to 6 output positions = 12 accumulators, 2 filter loads and 6 broadcasts per 12 FMAs (the
 *   15-register tile of the classic AVX2 SGEMM kernel);
 * - weight gradient: 16 vector channels x up to 6 broadcast channels, the same shape;
 * - depthwise: 8-channel vectors, tiles sized to stay within 16 registers (4 output positions
 *   with the 9 filter vectors held; Winograd F(2,3) blocks of at most 2 output rows).
 * Masked edges use vmaskmov with a mask from a sliding table. Summation order per output element
 * is fixed (it depends on the tile shapes, not on the thread count). */
#include "conv_nhwc.h"
#ifdef __AVX2__
#include <immintrin.h>

#include "simd_util.h"

/* 8 floats at p: all lanes (P == 0: a whole 8-channel block) or the lanes of m (P == 1: the
 * last, partial block). vmaskmov is avoided where it is not needed: its stores are slow on AMD. */
ALWAYS_INLINE __m256 vld(const int P, const float *p, __m256i m) { return P ? _mm256_maskload_ps(p, m) : _mm256_loadu_ps(p); }
ALWAYS_INLINE void vst(const int P, float *p, __m256i m, __m256 v)
{
    if (P) _mm256_maskstore_ps(p, m, v);
    else _mm256_storeu_ps(p, v);
}

/* ---------------------------------------------------------------- forward */
/* NV (1 or 2) vectors of one 16-channel half of a packed filter block x NW output positions */
ALWAYS_INLINE void fwd_tile(const int NV, const int NW, const float *x, int64_t xs, int64_t xh, int64_t xw, int R, int S, int dh,
                            int dw, int C, const float *wp, float *y, int64_t yw, int64_t yc, int nleft, const float *ab)
{
    __m256 acc[2][6];
#pragma GCC unroll 6
    for (int i = 0; i < NW; i++)
#pragma GCC unroll 2
        for (int u = 0; u < NV; u++) acc[u][i] = _mm256_setzero_ps();
    /* dilation 1 and packed channels: the taps of one filter row are contiguous in x and wp */
    int fuse = dw == 1 && xw == C;
    int S2 = fuse ? 1 : S, C2 = fuse ? S * C : C;
    for (int r = 0; r < R; r++)
        for (int s = 0; s < S2; s++) {
            const float *xp = x + (int64_t)r * dh * xh + (int64_t)s * dw * xw;
            const float *wq = wp + (int64_t)(r * S + s) * C * FDNN_NHWC_KB;
#pragma GCC unroll 4
            for (int c = 0; c < C2; c++) {
                __m256 w[2];
#pragma GCC unroll 2
                for (int u = 0; u < NV; u++) w[u] = _mm256_loadu_ps(wq + (int64_t)c * FDNN_NHWC_KB + 8 * u);
#pragma GCC unroll 6
                for (int i = 0; i < NW; i++) {
                    __m256 xb = _mm256_broadcast_ss(xp + i * xs + c);
#pragma GCC unroll 2
                    for (int u = 0; u < NV; u++) acc[u][i] = _mm256_fmadd_ps(xb, w[u], acc[u][i]);
                }
            }
        }
    float alpha = ab[0], beta = ab[1];   /* read after the loop, so they hold no registers in it */
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 6
    for (int i = 0; i < NW; i++) {
        float *yp = y + i * yw;
        if (yc == 1) {
#pragma GCC unroll 2
            for (int u = 0; u < NV; u++) {
                __m256 v = _mm256_mul_ps(va, acc[u][i]);
                if (nleft >= 8 * (u + 1)) {
                    if (beta != 0) v = _mm256_fmadd_ps(vb, _mm256_loadu_ps(yp + 8 * u), v);
                    _mm256_storeu_ps(yp + 8 * u, v);
                } else {
                    __m256i m = fdnn_mask8(nleft - 8 * u);
                    if (beta != 0) v = _mm256_fmadd_ps(vb, _mm256_maskload_ps(yp + 8 * u, m), v);
                    _mm256_maskstore_ps(yp + 8 * u, m, v);
                }
            }
        } else {   /* channels not innermost (NCHW): scalar stores of the tile */
            float buf[16];
#pragma GCC unroll 2
            for (int u = 0; u < NV; u++) _mm256_storeu_ps(buf + 8 * u, _mm256_mul_ps(va, acc[u][i]));
            for (int j = 0; j < nleft && j < 8 * NV; j++) {
                float v = buf[j];
                if (beta != 0) v += beta * yp[j * yc];
                yp[j * yc] = v;
            }
        }
    }
}

#define FWD_ARGS const float *x, int64_t xs, int64_t xh, int64_t xw, int R, int S, int dh, int dw, int C, const float *wp, float *y, \
                 int64_t yw, int64_t yc, int nleft, const float *ab
#define FWD_PASS x, xs, xh, xw, R, S, dh, dw, C, wp, y, yw, yc, nleft, ab
#define FWD_VARIANT(NV, NW) static void fwd_tile_##NV##_##NW(FWD_ARGS) { fwd_tile(NV, NW, FWD_PASS); }
FWD_VARIANT(1, 1) FWD_VARIANT(1, 2) FWD_VARIANT(1, 3) FWD_VARIANT(1, 4) FWD_VARIANT(1, 5) FWD_VARIANT(1, 6)
FWD_VARIANT(2, 1) FWD_VARIANT(2, 2) FWD_VARIANT(2, 3) FWD_VARIANT(2, 4) FWD_VARIANT(2, 5) FWD_VARIANT(2, 6)
typedef void (*fwd_fn)(FWD_ARGS);
static const fwd_fn fwd_tiles[2][7] = {
    { NULL, fwd_tile_1_1, fwd_tile_1_2, fwd_tile_1_3, fwd_tile_1_4, fwd_tile_1_5, fwd_tile_1_6 },
    { NULL, fwd_tile_2_1, fwd_tile_2_2, fwd_tile_2_3, fwd_tile_2_4, fwd_tile_2_5, fwd_tile_2_6 },
};

/* Software prefetch of the input the next output row will need, issued while this row runs: the
 * input rows of the next output row (n2, oh2) that the window of (n, oh) does not hold, for
 * output columns ow .. ow+cnt-1 (the part one register tile of this row covers). A tile walks its
 * few pixels channel by channel, so a row that is in no cache arrives one group of misses at a
 * time: 1x1 64->64 56x56, one thread, takes 0.33 ms per image at N=1 (in cache) but 0.5-0.7 at
 * N=8. Measured at N=8, one thread, min of 6 interleaved runs each (ms, without -> with):
 * strided 1x1 256->512 56x56 36.9 -> 28.6 and 43.9 -> 39.9 in two sessions of runs, 1x1
 * 64->256 16.3 -> 16.4 and 17.5 -> 14.4, 1x1 64->64 and 3x3 64->64 within 2-4% (run-to-run
 * spread on this machine is 10-15%). FREEDNN_CPU_PREFETCH=0 turns it off, =2 on at every size. */
static void prefetch_next(const fdnn_nhwc_fwd *a, int n, int oh, int ow, int cnt)
{
    int n2 = n, oh2 = oh + 1;
    if (oh2 == a->p) {
        n2++;
        oh2 = 0;
    }
    if (n2 >= a->n) return;
    int first = oh2 * a->sh, last = first + (a->r - 1) * a->dh;
    if (n2 == n && first <= oh * a->sh + (a->r - 1) * a->dh) {   /* same image: only the rows below this window */
        int cur_last = oh * a->sh + (a->r - 1) * a->dh;
        first = cur_last + 1 > first ? cur_last + 1 : first;
    }
    int64_t xs = (int64_t)a->sw * a->xw;
    int contiguous = a->dw == 1 && a->xw == a->ci;   /* the S taps of a pixel are one run */
    for (int row = first; row <= last; row += a->dh) {
        const char *xr = (const char *)(a->x + n2 * a->xn + (int64_t)row * a->xh);
        if (contiguous && a->sw == 1) {
            const char *b = xr + (int64_t)ow * xs * 4, *e = xr + ((int64_t)(ow + cnt - 1) * xs + (int64_t)a->s * a->ci) * 4;
            for (; b < e; b += 64) _mm_prefetch(b, _MM_HINT_T0);
            continue;
        }
        for (int i = 0; i < cnt; i++)
            for (int s2 = 0; s2 < (contiguous ? 1 : a->s); s2++) {
                const char *b = xr + ((int64_t)(ow + i) * xs + (int64_t)s2 * a->dw * a->xw) * 4;
                const char *e = b + (int64_t)(contiguous ? a->s : 1) * a->ci * 4;
                for (; b < e; b += 64) _mm_prefetch(b, _MM_HINT_T0);
            }
    }
}

/* y[j*yc + i] = buf[i*16 + j] + beta * y[j*yc + i] (beta == 0: y not read) for i < npos, j < nch
 * <= 16: 8 x 8 register transposes, edges scalar */
static void store_rows_t(const float *buf, int npos, int nch, float *y, int64_t yc, float beta)
{
    const __m256 vb = _mm256_set1_ps(beta);
    for (int j0 = 0; j0 < nch; j0 += 8) {
        const int jn = nch - j0 < 8 ? nch - j0 : 8;
        int i0 = 0;
        if (jn == 8)
            for (; i0 + 8 <= npos; i0 += 8) {
                float t[64];
                fdnn_transpose8_avx2(buf + (int64_t)i0 * 16 + j0, 16, t, 8);
                for (int j = 0; j < 8; j++) {
                    float *yp = y + (int64_t)(j0 + j) * yc + i0;
                    __m256 v = _mm256_loadu_ps(t + 8 * j);
                    if (beta != 0) v = _mm256_fmadd_ps(vb, _mm256_loadu_ps(yp), v);
                    _mm256_storeu_ps(yp, v);
                }
            }
        for (int j = j0; j < j0 + jn; j++)
            for (int i = i0; i < npos; i++) {
                float v = buf[(int64_t)i * 16 + j];
                if (beta != 0) v += beta * y[(int64_t)j * yc + i];
                y[(int64_t)j * yc + i] = v;
            }
    }
}

void fdnn_avx2_nhwc_fwd(const fdnn_nhwc_fwd *a)
{
    int nkb = (a->co + FDNN_NHWC_KB - 1) / FDNN_NHWC_KB;
    int64_t wblk = (int64_t)a->r * a->s * a->ci * FDNN_NHWC_KB;
    int nw = fdnn_nhwc_pick_nw(a->q, 6, 5);
    int64_t tasks = (int64_t)nkb * a->n * a->p;
    /* the whole packed filter fits in L2: channel blocks innermost (each input row is read
     * once); else channel blocks outermost (each filter block is read once) */
    int kb_inner = (double)wblk * nkb * sizeof(float) <= 384.0 * 1024;
    const float ab[2] = { a->alpha, a->beta };
    int64_t xs = (int64_t)a->sw * a->xw;
    /* prefetch (once per output row) where the input is over 1 MB, so not in L2 from the last call */
    int pf_env = fdnn_env_int("FREEDNN_CPU_PREFETCH", 1);   /* 0 off, 2 on every size (tests) */
    int pf = pf_env == 2 || (pf_env && (double)a->n * a->xn * sizeof(float) > 1024.0 * 1024);
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < tasks; t++) {
        int oh, n, kb;
        if (kb_inner) {
            kb = (int)(t % nkb); oh = (int)((t / nkb) % a->p); n = (int)(t / ((int64_t)nkb * a->p));
        } else {
            oh = (int)(t % a->p); n = (int)((t / a->p) % a->n); kb = (int)(t / ((int64_t)a->p * a->n));
        }
        const float *xr = a->x + n * a->xn + (int64_t)oh * a->sh * a->xh;
        /* the two 16-channel halves of the block, each swept along the row (its filter slice
         * stays in L1/L2 for the sweep) */
        for (int h = 0; h < 2; h++) {
            int c0 = kb * FDNN_NHWC_KB + 16 * h, left = a->co - c0;
            if (left <= 0) break;
            int nv = left > 8 ? 2 : 1;
            float *yr = a->y + n * a->yn + oh * a->yh + (int64_t)c0 * a->yc;
            const float *wp = a->wp + kb * wblk + 16 * h;
            /* NCHW output rows of at least 8: tiles channel-innermost into a buffer of up to 64
             * positions, stored transposed (as in the AVX-512 kernel) */
            const int buffered = a->yc != 1 && a->yw == 1 && a->q >= 8, nch = left < 16 ? left : 16;
            float buf[(64 + 8) * 16];
            const float abuf[2] = { a->alpha, 0.0f };
            int seg = 0; /* first position in buf */
            for (int ow = 0; ow < a->q; ow += nw) {
                int cnt = a->q - ow < nw ? a->q - ow : nw;
                if (h == 0 && pf && (kb == 0 || !kb_inner)) prefetch_next(a, n, oh, ow, cnt);
                fwd_tiles[nv - 1][cnt](xr + ow * xs, xs, a->xh, a->xw, a->r, a->s, a->dh, a->dw, a->ci, wp,
                                       buffered ? buf + (ow - seg) * 16 : yr + ow * a->yw, buffered ? 16 : a->yw, buffered ? 1 : a->yc, nch,
                                       buffered ? abuf : ab);
                if (buffered && (ow + cnt - seg >= 64 || ow + cnt >= a->q)) {
                    store_rows_t(buf, ow + cnt - seg, nch, yr + seg, a->yc, a->beta);
                    seg = ow + cnt;
                }
            }
        }
    }
}

/* ---------------------------------------------------------------- filter pack */
/* d[c*32 + j] = src[j*sco + c] (c < ci, j < nj), 0 for nj <= j < 32: 8x8 blocks transposed in
 * registers, edges scalar. */
void fdnn_avx2_nhwc_pack_rows(const float *src, int64_t sco, int nj, int ci, float *d)
{
    for (int j0 = 0; j0 < FDNN_NHWC_KB; j0 += 8) {
        int jn = nj - j0 < 0 ? 0 : nj - j0 < 8 ? nj - j0 : 8;
        int c0 = 0;
        if (jn == 8)
            for (; c0 + 8 <= ci; c0 += 8) fdnn_transpose8_avx2(src + (int64_t)j0 * sco + c0, sco, d + (int64_t)c0 * FDNN_NHWC_KB + j0, FDNN_NHWC_KB);
        for (; c0 < ci; c0++)
            for (int j = 0; j < 8; j++) d[(int64_t)c0 * FDNN_NHWC_KB + j0 + j] = j < jn ? src[(int64_t)(j0 + j) * sco + c0] : 0.0f;
    }
}

/* fdnn_avx2_nhwc_pack_gather: four 8-lane gathers per (channel, tap), lanes past nj masked to
 * zero; 32-bit indices, so strides whose 31st row is beyond them take the scalar loop. */
void fdnn_avx2_nhwc_pack_gather(const float *src, int64_t sco, int64_t sci, const int64_t *toff, int nt, int nj, int ci, int64_t dts,
                                float *d)
{
    if (sco <= 0 || sco > INT32_MAX / FDNN_NHWC_KB) {
        fdnn_nhwc_pack_gather_scalar(src, sco, sci, toff, nt, nj, ci, dts, d);
        return;
    }
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)sco));
    __m256 m[4];
    for (int u = 0; u < 4; u++) m[u] = _mm256_castsi256_ps(fdnn_mask8(nj - 8 * u));
    const __m256 z = _mm256_setzero_ps();
    for (int c = 0; c < ci; c++) {
        const float *sc = src + c * sci;
        float *dc = d + (int64_t)c * FDNN_NHWC_KB;
        for (int t = 0; t < nt; t++) {
            const float *p = sc + toff[t];
            for (int u = 0; u < 4; u++)
                _mm256_storeu_ps(dc + t * dts + 8 * u, _mm256_mask_i32gather_ps(z, p + 8 * u * sco, idx, m[u], 4));
        }
    }
}

/* ---------------------------------------------------------------- weight gradient */
/* swap == 0: vectors of x's input channels, broadcasts of NK output channels of dy; swap == 1:
 * vectors of dy's output channels, broadcasts of NK input channels of x. v0 / b0: first vector /
 * broadcast channel; MASK: the 16 vector channels are not all inside. The sums of rows
 * row0..row1 end as st = alpha * sum + beta * st (stride stb per broadcast channel). */
ALWAYS_INLINE void wgrad_tile(const int NK, const int MASK, const fdnn_nhwc_wgrad *a, int r, int s, int b0, int v0, int64_t row0,
                              int64_t row1, float *st, int64_t stb, const float *ab)
{
    int swap = a->swap, vn = swap ? a->co : a->ci;
    __m256i m0 = fdnn_mask8(vn - v0), m1 = fdnn_mask8(vn - v0 - 8);
    __m256 c[2][6];
#pragma GCC unroll 6
    for (int j = 0; j < NK; j++) c[0][j] = c[1][j] = _mm256_setzero_ps();
    int64_t xs = (int64_t)a->sw * a->xw;
    int64_t vs = swap ? a->yw : xs, bs = swap ? xs : a->yw;
    int n = (int)(row0 / a->p), oh = (int)(row0 % a->p);
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
            __m256 v0v, v1v;
            if (MASK) {
                v0v = _mm256_maskload_ps(vr + ow * vs, m0);
                v1v = _mm256_maskload_ps(vr + ow * vs + 8, m1);
            } else {
                v0v = _mm256_loadu_ps(vr + ow * vs);
                v1v = _mm256_loadu_ps(vr + ow * vs + 8);
            }
            const float *bp = br + ow * bs;
#pragma GCC unroll 6
            for (int j = 0; j < NK; j++) {
                __m256 yb = _mm256_broadcast_ss(bp + j);
                c[0][j] = _mm256_fmadd_ps(yb, v0v, c[0][j]);
                c[1][j] = _mm256_fmadd_ps(yb, v1v, c[1][j]);
            }
        }
    }
    float alpha = ab[0], beta = ab[1];
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 6
    for (int j = 0; j < NK; j++) {
        float *o = st + (int64_t)j * stb;
#pragma GCC unroll 2
        for (int u = 0; u < 2; u++) {
            __m256 e = c[u][j];
            __m256i m = u ? m1 : m0;
            if (alpha != 1.0f) e = _mm256_mul_ps(va, e);
            if (MASK) {
                if (beta != 0) e = _mm256_fmadd_ps(vb, _mm256_maskload_ps(o + 8 * u, m), e);
                _mm256_maskstore_ps(o + 8 * u, m, e);
            } else {
                if (beta != 0) e = _mm256_fmadd_ps(vb, _mm256_loadu_ps(o + 8 * u), e);
                _mm256_storeu_ps(o + 8 * u, e);
            }
        }
    }
}

#define WG_ARGS const fdnn_nhwc_wgrad *a, int r, int s, int b0, int v0, int64_t row0, int64_t row1, float *st, int64_t stb, const float *ab
#define WG_VARIANT(NK, M) \
    static void wgrad_tile_##NK##_##M(WG_ARGS) { wgrad_tile(NK, M, a, r, s, b0, v0, row0, row1, st, stb, ab); }
WG_VARIANT(1, 0) WG_VARIANT(2, 0) WG_VARIANT(3, 0) WG_VARIANT(4, 0) WG_VARIANT(5, 0) WG_VARIANT(6, 0)
WG_VARIANT(1, 1) WG_VARIANT(2, 1) WG_VARIANT(3, 1) WG_VARIANT(4, 1) WG_VARIANT(5, 1) WG_VARIANT(6, 1)
static const fdnn_nhwc_wg_tile wg_tiles[2][7] = {
    { NULL, wgrad_tile_1_0, wgrad_tile_2_0, wgrad_tile_3_0, wgrad_tile_4_0, wgrad_tile_5_0, wgrad_tile_6_0 },
    { NULL, wgrad_tile_1_1, wgrad_tile_2_1, wgrad_tile_3_1, wgrad_tile_4_1, wgrad_tile_5_1, wgrad_tile_6_1 },
};

void fdnn_avx2_nhwc_wgrad(const fdnn_nhwc_wgrad *a)
{
    /* 16 x 6 tiles; plain loads where the vector block is whole, masked where it is short; the
     * task order as in the AVX-512 entry with half its L2 budget. Chunks of about 128 positions
     * (the AVX-512 entry's 256 fill a 32 KB L1 with a task's 64-byte x and dy lines; Zen 3, 2
     * threads, ms, 256 -> 112 positions: 1x1 64->64 56x56 N=1 0.199 -> 0.178, N=8 1.65 -> 1.45,
     * 1x1 64->256 N=8 6.76 -> 5.68, conv1 7x7/2 -4..-5%, the 3x3 layers within -2..+3%) */
    fdnn_nhwc_wgrad_drive(a, 16, 6, 128, 384.0 * 1024, wg_tiles[0], wg_tiles[1]);
}

/* ---------------------------------------------------------------- depthwise */
ALWAYS_INLINE void dw_tile(const int NW, const int P, const fdnn_dw_fwd *a, const float *x, int64_t xs, float *y, int c0, __m256i m)
{
    __m256 acc[8];
#pragma GCC unroll 8
    for (int i = 0; i < NW; i++) acc[i] = _mm256_setzero_ps();
    for (int r = 0; r < a->r; r++)
        for (int s = 0; s < a->s; s++) {
            __m256 wv = vld(P, a->wp + (int64_t)(r * a->s + s) * a->c + c0, m);
            const float *xp = x + (int64_t)r * a->dh * a->xh + (int64_t)s * a->dw * a->xw;
#pragma GCC unroll 8
            for (int i = 0; i < NW; i++) acc[i] = _mm256_fmadd_ps(vld(P, xp + i * xs, m), wv, acc[i]);
        }
    __m256 va = _mm256_set1_ps(a->alpha), vb = _mm256_set1_ps(a->beta);
    int nleft = a->c - c0 < 8 ? a->c - c0 : 8;
#pragma GCC unroll 8
    for (int i = 0; i < NW; i++) {
        float *yp = y + i * a->yw;
        __m256 v = _mm256_mul_ps(va, acc[i]);
        if (a->yc == 1) {
            if (a->beta != 0) v = _mm256_fmadd_ps(vb, vld(P, yp, m), v);
            vst(P, yp, m, v);
        } else {
            float buf[8];
            _mm256_storeu_ps(buf, v);
            for (int j = 0; j < nleft; j++) yp[j * a->yc] = a->beta != 0 ? buf[j] + a->beta * yp[j * a->yc] : buf[j];
        }
    }
}
#define DW_TILE(NW, P) \
    static void dw_tile_##NW##_##P(const fdnn_dw_fwd *a, const float *x, int64_t xs, float *y, int c0, __m256i m) { dw_tile(NW, P, a, x, xs, y, c0, m); }
DW_TILE(8, 0) DW_TILE(8, 1) DW_TILE(1, 0) DW_TILE(1, 1)

void fdnn_avx2_dw_fwd(const fdnn_dw_fwd *a)
{
    int64_t rows = (int64_t)a->n * a->p;
    int ncb = (a->c + 7) / 8;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < rows; t++) {
        int n = (int)(t / a->p), oh = (int)(t % a->p);
        const float *xr = a->x + n * a->xn + (int64_t)oh * a->sh * a->xh;
        float *yr = a->y + n * a->yn + oh * a->yh;
        int64_t xs = (int64_t)a->sw * a->xw;
        for (int cb = 0; cb < ncb; cb++) {
            int c0 = cb * 8;
            __m256i m = fdnn_mask8(a->c - c0);
            int ow = 0, part = a->c - c0 < 8;
            for (; ow + 8 <= a->q; ow += 8) (part ? dw_tile_8_1 : dw_tile_8_0)(a, xr + ow * xs + c0, xs, yr + ow * a->yw + c0 * a->yc, c0, m);
            for (; ow < a->q; ow++) (part ? dw_tile_1_1 : dw_tile_1_0)(a, xr + ow * xs + c0, xs, yr + ow * a->yw + c0 * a->yc, c0, m);
        }
    }
}

/* 3x3 stride 1 from the unpadded input: NW outputs from NW+2 input vectors per filter row, the 9
 * filter vectors in registers (9 + 4 sums + 1 input = 14 of the 16) */
ALWAYS_INLINE void dw3_tile(const int NW, const int CHECK, const int P, const fdnn_dw_fwd *a, const float *const xr[3], int col0, int iw,
                            const __m256 w[9], float *y, __m256i m)
{
    __m256 acc[4];
#pragma GCC unroll 4
    for (int i = 0; i < NW; i++) acc[i] = _mm256_setzero_ps();
#pragma GCC unroll 3
    for (int r = 0; r < 3; r++) {
        if (!xr[r]) continue;
#pragma GCC unroll 6
        for (int j = 0; j < NW + 2; j++) {
            int col = col0 + j;
            if (CHECK && (col < 0 || col >= iw)) continue;
            __m256 xv = vld(P, xr[r] + (int64_t)col * a->xw, m);
#pragma GCC unroll 3
            for (int s = 0; s < 3; s++) {
                int i = j - s;
                if (i >= 0 && i < NW) acc[i] = _mm256_fmadd_ps(xv, w[r * 3 + s], acc[i]);
            }
        }
    }
    __m256 va = _mm256_set1_ps(a->alpha), vb = _mm256_set1_ps(a->beta);
#pragma GCC unroll 4
    for (int i = 0; i < NW; i++) {
        float *yp = y + i * a->yw;
        __m256 v = _mm256_mul_ps(va, acc[i]);
        if (a->beta != 0) v = _mm256_fmadd_ps(vb, vld(P, yp, m), v);
        vst(P, yp, m, v);
    }
}

/* one output row of one channel block */
ALWAYS_INLINE void dw3_row(const int P, const fdnn_dw_fwd *a, const float *const xr[3], int iw, int pw, const __m256 w[9], float *yr, __m256i m)
{
    int ow = 0;
    for (; ow + 4 <= a->q; ow += 4) {
        int col0 = ow - pw;
        if (col0 >= 0 && col0 + 6 <= iw) dw3_tile(4, 0, P, a, xr, col0, iw, w, yr + ow * a->yw, m);
        else dw3_tile(4, 1, P, a, xr, col0, iw, w, yr + ow * a->yw, m);
    }
    for (; ow < a->q; ow++) dw3_tile(1, 1, P, a, xr, ow - pw, iw, w, yr + ow * a->yw, m);
}
static void dw3_row_0(const fdnn_dw_fwd *a, const float *const xr[3], int iw, int pw, const __m256 w[9], float *yr, __m256i m) { dw3_row(0, a, xr, iw, pw, w, yr, m); }
static void dw3_row_1(const fdnn_dw_fwd *a, const float *const xr[3], int iw, int pw, const __m256 w[9], float *yr, __m256i m) { dw3_row(1, a, xr, iw, pw, w, yr, m); }

void fdnn_avx2_dw_fwd_3x3s1(const fdnn_dw_fwd *a, int ih, int iw, int ph, int pw)
{
    int64_t rows = (int64_t)a->n * a->p;
    int ncb = (a->c + 7) / 8;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < rows; t++) {
        int n = (int)(t / a->p), oh = (int)(t % a->p);
        float *yr = a->y + n * a->yn + oh * a->yh;
        for (int cb = 0; cb < ncb; cb++) {
            int c0 = cb * 8;
            __m256i m = fdnn_mask8(a->c - c0);
            __m256 w[9];
            for (int i = 0; i < 9; i++) w[i] = _mm256_maskload_ps(a->wp + (int64_t)i * a->c + c0, m);
            const float *xr[3];
            for (int r = 0; r < 3; r++) {
                int y = oh - ph + r;
                xr[r] = (y >= 0 && y < ih) ? a->x + n * a->xn + (int64_t)y * a->xh + c0 : NULL;
            }
            (a->c - c0 < 8 ? dw3_row_1 : dw3_row_0)(a, xr, iw, pw, w, yr + c0, m);
        }
    }
}

/* 3x3 stride 1 as Winograd F(2,3) along W (see the AVX-512 kernel): per filter row r and output
 * column pair, four products u[r][k] * v[k] replace six FMAs. Blocks of T <= 2 output rows (the
 * 4*T sums, 4 transformed inputs and their temporaries fill the 16 registers); u is read from
 * L1 by the FMAs (12 vectors would not fit beside them). u holds alpha. */
/* Input row i of a block (its four columns d) into the sums of the output rows it feeds */
ALWAYS_INLINE void dw3w_acc(const int T, const int i, const __m256 *d, const float *u, __m256 (*acc)[4])
{
    const __m256 v[4] = {_mm256_sub_ps(d[0], d[2]), _mm256_add_ps(d[1], d[2]), _mm256_sub_ps(d[2], d[1]), _mm256_sub_ps(d[1], d[3])};
#pragma GCC unroll 2
    for (int t = 0; t < T; t++) {
        const int r = i - t;
        if (r < 0 || r > 2) continue;
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) acc[t][k] = _mm256_fmadd_ps(_mm256_load_ps(u + (r * 4 + k) * 8), v[k], acc[t][k]);
    }
}

/* The output pair of each row from its sums (two == 0: only the first column), beta applied */
ALWAYS_INLINE void dw3w_out(const int T, const int PART, const int BETA0, __m256 (*acc)[4], float *const *yr, int64_t yw, int two, __m256 vb,
                            __m256i m)
{
#pragma GCC unroll 2
    for (int t = 0; t < T; t++) {
        __m256 y0 = _mm256_add_ps(_mm256_add_ps(acc[t][0], acc[t][1]), acc[t][2]);
        __m256 y1 = _mm256_sub_ps(_mm256_sub_ps(acc[t][1], acc[t][2]), acc[t][3]);
        if (!BETA0) y0 = _mm256_fmadd_ps(vb, vld(PART, yr[t], m), y0);
        vst(PART, yr[t], m, y0);
        if (two) {
            if (!BETA0) y1 = _mm256_fmadd_ps(vb, vld(PART, yr[t] + yw, m), y1);
            vst(PART, yr[t] + yw, m, y1);
        }
    }
}

/* One output column pair of one channel block: input columns col0 .. col0 + 3 of the T + 2 rows
 * xr (CHECK: columns outside 0 .. iw - 1 read as zero), outputs yr[t] and, if two, yr[t] + yw */
ALWAYS_INLINE void dw3w_unit(const int T, const int PART, const int BETA0, const int CHECK, const float *const *xr, int col0, int iw, int64_t xw,
                             const float *u, float *const *yr, int64_t yw, int two, __m256 vb, __m256i m)
{
    __m256 acc[2][4];
#pragma GCC unroll 2
    for (int t = 0; t < T; t++)
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) acc[t][k] = _mm256_setzero_ps();
#pragma GCC unroll 4
    for (int i = 0; i < T + 2; i++) {
        if (!xr[i]) continue;
        __m256 d[4];
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++)
            d[k] = !CHECK || (col0 + k >= 0 && col0 + k < iw) ? vld(PART, xr[i] + (int64_t)(col0 + k) * xw, m) : _mm256_setzero_ps();
        dw3w_acc(T, i, d, u, acc);
    }
    dw3w_out(T, PART, BETA0, acc, yr, yw, two, vb, m);
}

/* n interior pairs (every column inside the image) of one channel block: the input and output
 * row pointers advance by two columns per pair, so the loop carries no index arithmetic */
ALWAYS_INLINE void dw3w_inner(const int T, const int PART, const int BETA0, const float *const *xr0, float *const *yr0, int n, int64_t xw,
                              const float *u, int64_t yw, float beta, __m256i m)
{
    const float *xp[4] = {NULL, NULL, NULL, NULL};
    float *yp[2] = {NULL, NULL};
#pragma GCC unroll 4
    for (int i = 0; i < T + 2; i++) xp[i] = xr0[i];
#pragma GCC unroll 2
    for (int t = 0; t < T; t++) yp[t] = yr0[t];
    const __m256 vb = _mm256_set1_ps(beta);
    for (int j = 0; j < n; j++) {
        dw3w_unit(T, PART, BETA0, 0, xp, 0, 0, xw, u, yp, yw, 1, vb, m);
#pragma GCC unroll 4
        for (int i = 0; i < T + 2; i++) xp[i] = xp[i] ? xp[i] + 2 * xw : NULL;
#pragma GCC unroll 2
        for (int t = 0; t < T; t++) yp[t] += 2 * yw;
    }
}

/* n interior pairs with the nc full channel blocks inner: pair j's four columns of the T + 2 input
 * rows for every channel block, then the next pair, so that x and y are walked in address order
 * (channel blocks outer, each row was read as nine 576-byte-strided sweeps at 144 channels); u:
 * the blocks' 12 vectors each, 96 floats a block */
ALWAYS_INLINE void dw3w_inner_cb(const int T, const int BETA0, const float *const *xr0, float *const *yr0, int n, int64_t xw, int nc, const float *ub,
                                 int64_t yw, float beta)
{
    const __m256 vb = _mm256_set1_ps(beta);
    const __m256i m = _mm256_set1_epi32(-1);
    for (int j = 0; j < n; j++) {
        const float *xp[4] = {NULL, NULL, NULL, NULL};
        float *yp[2] = {NULL, NULL};
#pragma GCC unroll 4
        for (int i = 0; i < T + 2; i++) xp[i] = xr0[i] ? xr0[i] + (int64_t)2 * j * xw : NULL;
#pragma GCC unroll 2
        for (int t = 0; t < T; t++) yp[t] = yr0[t] + (int64_t)2 * j * yw;
        const float *u = ub;
        for (int cb = 0; cb < nc; cb++, u += 96) {
            dw3w_unit(T, 0, BETA0, 0, xp, 0, 0, xw, u, yp, yw, 1, vb, m);
#pragma GCC unroll 4
            for (int i = 0; i < T + 2; i++) xp[i] = xp[i] ? xp[i] + 8 : NULL;
#pragma GCC unroll 2
            for (int t = 0; t < T; t++) yp[t] += 8;
        }
    }
}

/* one block of T output rows (T + 2 input rows, NULL = outside the image; xr and yr at the
 * chunk's first channel) over a chunk of channel blocks (cl channels, u: 96 floats a block):
 * boundary column pairs checked, the interior ones not, channel blocks inner
 * (dw3w_inner_cb; a partial last block after them, dw3w_inner); an odd last column stores only y0 */
ALWAYS_INLINE void dw3w_rows(const int T, const int BETA0, const fdnn_dw_fwd *a, const float *const *xr, float *const *yr0, int iw, int pw,
                             const float *ub, int cl)
{
    int q = a->q, npairs = (q + 1) / 2, full = q / 2, nc = (cl + 7) / 8, nfull = cl / 8;
    int jlo = (pw + 1) / 2 < npairs ? (pw + 1) / 2 : npairs;
    int jhi = iw - 4 + pw >= 0 ? (iw - 4 + pw) / 2 + 1 : 0; /* pairs j < jhi read columns < iw */
    if (jhi > full) jhi = full;
    if (jhi < jlo) jhi = jlo;
    const __m256i mfull = _mm256_set1_epi32(-1), mpart = fdnn_mask8(cl - 8 * nfull);
    const __m256 vb = _mm256_set1_ps(a->beta);
    const float *xc[4] = {NULL, NULL, NULL, NULL};
    float *yr[2];
    /* the boundary pairs, block by block */
    for (int j = 0; j < npairs; j++) {
        if (j == jlo && jlo < jhi) { /* the interior ones below */
            j = jhi - 1;
            continue;
        }
        for (int cb = 0; cb < nc; cb++) {
            for (int i = 0; i < T + 2; i++) xc[i] = xr[i] ? xr[i] + 8 * cb : NULL;
            for (int t = 0; t < T; t++) yr[t] = yr0[t] + (int64_t)2 * j * a->yw + 8 * cb;
            if (cb < nfull) dw3w_unit(T, 0, BETA0, 1, xc, 2 * j - pw, iw, a->xw, ub + 96 * cb, yr, a->yw, 2 * j + 1 < q, vb, mfull);
            else dw3w_unit(T, 1, BETA0, 1, xc, 2 * j - pw, iw, a->xw, ub + 96 * cb, yr, a->yw, 2 * j + 1 < q, vb, mpart);
        }
    }
    if (jlo < jhi) {
        for (int i = 0; i < T + 2; i++) xc[i] = xr[i] ? xr[i] + (int64_t)(2 * jlo - pw) * a->xw : NULL;
        for (int t = 0; t < T; t++) yr[t] = yr0[t] + (int64_t)2 * jlo * a->yw;
        dw3w_inner_cb(T, BETA0, xc, yr, jhi - jlo, a->xw, nfull, ub, a->yw, a->beta);
        if (nfull < nc) {
            for (int i = 0; i < T + 2; i++) xc[i] = xc[i] ? xc[i] + 8 * nfull : NULL;
            for (int t = 0; t < T; t++) yr[t] += 8 * nfull;
            dw3w_inner(T, 1, BETA0, xc, yr, jhi - jlo, a->xw, ub + 96 * nfull, a->yw, a->beta, mpart);
        }
    }
}
#define DW3W_VARIANT(T, BETA0)                                                                                                        \
    static void dw3w_rows_##T##_##BETA0(const fdnn_dw_fwd *a, const float *const *xr, float *const *yr, int iw, int pw, const float *ub, \
                                        int cl)                                                                                       \
    {                                                                                                                                 \
        dw3w_rows(T, BETA0, a, xr, yr, iw, pw, ub, cl);                                                                               \
    }
DW3W_VARIANT(1, 0) DW3W_VARIANT(2, 0) DW3W_VARIANT(1, 1) DW3W_VARIANT(2, 1)

/* channel blocks per chunk: the chunk's u vectors (96 floats a block, 12 KB) on the stack */
#define DW3W_CHUNK 32

/* T (the caller's rows per block) is capped at 2 here. Each thread copies the u vectors of a
 * chunk of channel blocks to its stack, block after block (a partial block's lanes past C zero),
 * so that the FMAs read them at constant offsets from one pointer: read from u[r][k][c] in place,
 * the 12 addresses were 12 registers, and GCC kept them on the stack and reloaded one before each
 * FMA. */
void fdnn_avx2_dw_fwd_3x3s1_wino(const fdnn_dw_fwd *a, int ih, int iw, int ph, int pw, int T)
{
    if (T > 2) T = 2;
    int nrb = (a->p + T - 1) / T, ncb = (a->c + 7) / 8;
    int64_t tasks = (int64_t)a->n * nrb;
#pragma omp parallel
    {
        float ub[DW3W_CHUNK * 96] __attribute__((aligned(32)));
        int have = -1; /* the chunk ub holds */
#pragma omp for schedule(static)
        for (int64_t tk = 0; tk < tasks; tk++) {
            int n = (int)(tk / nrb), oh0 = (int)(tk % nrb) * T, nt = a->p - oh0 < T ? a->p - oh0 : T;
            for (int cb0 = 0; cb0 < ncb; cb0 += DW3W_CHUNK) {
                int c0 = cb0 * 8, cl = a->c - c0 < DW3W_CHUNK * 8 ? a->c - c0 : DW3W_CHUNK * 8;
                if (have != cb0) {
                    for (int cb = 0; cb < (cl + 7) / 8; cb++) {
                        __m256i m = fdnn_mask8(cl - 8 * cb);
                        for (int i = 0; i < 12; i++) _mm256_store_ps(ub + 96 * cb + 8 * i, _mm256_maskload_ps(a->wp + (int64_t)i * a->c + c0 + 8 * cb, m));
                    }
                    have = cb0;
                }
                const float *xr[4];
                float *yr[2];
                for (int i = 0; i < nt + 2; i++) {
                    int y = oh0 - ph + i;
                    xr[i] = (y >= 0 && y < ih) ? a->x + n * a->xn + (int64_t)y * a->xh + c0 : NULL;
                }
                for (int t = 0; t < nt; t++) yr[t] = a->y + n * a->yn + (int64_t)(oh0 + t) * a->yh + c0;
                typedef void (*rows_fn)(const fdnn_dw_fwd *, const float *const *, float *const *, int, int, const float *, int);
                static const rows_fn fns[2][2] = {{dw3w_rows_1_0, dw3w_rows_1_1}, {dw3w_rows_2_0, dw3w_rows_2_1}};
                fns[nt == 2][a->beta == 0](a, xr, yr, iw, pw, ub, cl);
            }
        }
    }
}

ALWAYS_INLINE void dw_wg_3x3(const int P, const fdnn_dw_wgrad *a, int c0, int r0, __m256i m, int64_t rows, int64_t xs)
{
    __m256 acc[9];
#pragma GCC unroll 9
    for (int i = 0; i < 9; i++) acc[i] = _mm256_setzero_ps();
    for (int64_t row = 0; row < rows; row++) {
        int n = (int)(row / a->p), oh = (int)(row % a->p);
        const float *xr = a->x + n * a->xn + ((int64_t)oh * a->sh + (int64_t)r0 * a->dh) * a->xh + c0;
        const float *yr = a->dy + n * a->yn + oh * a->yh + c0;
        for (int ow = 0; ow < a->q; ow++) {
            __m256 yv = vld(P, yr + ow * a->yw, m);
            const float *xp = xr + ow * xs;
#pragma GCC unroll 9
            for (int i = 0; i < 9; i++)
                acc[i] = _mm256_fmadd_ps(vld(P, xp + (int64_t)(i / 3) * a->dh * a->xh + (int64_t)(i % 3) * a->dw * a->xw, m), yv, acc[i]);
        }
    }
#pragma GCC unroll 9
    for (int i = 0; i < 9; i++) vst(P, a->acc + ((int64_t)(r0 + i / 3) * 3 + i % 3) * a->c + c0, m, acc[i]);
}
static void dw_wg_3x3_0(const fdnn_dw_wgrad *a, int c0, int r0, __m256i m, int64_t rows, int64_t xs) { dw_wg_3x3(0, a, c0, r0, m, rows, xs); }
static void dw_wg_3x3_1(const fdnn_dw_wgrad *a, int c0, int r0, __m256i m, int64_t rows, int64_t xs) { dw_wg_3x3(1, a, c0, r0, m, rows, xs); }

ALWAYS_INLINE void dw3_wg_pos(const int CHECK, const int P, const float *const xr[3], int64_t xw, int col, int iw, __m256 yv, __m256 acc[9],
                              __m256i m)
{
#pragma GCC unroll 3
    for (int r = 0; r < 3; r++) {
        if (!xr[r]) continue;
#pragma GCC unroll 3
        for (int s = 0; s < 3; s++) {
            if (CHECK && (col + s < 0 || col + s >= iw)) continue;
            acc[r * 3 + s] = _mm256_fmadd_ps(vld(P, xr[r] + (int64_t)(col + s) * xw, m), yv, acc[r * 3 + s]);
        }
    }
}

/* 4 interior output positions: each x vector of a filter row is loaded once and feeds up to 3
 * taps (9 sums + 4 dy vectors + 1 input = 14 registers) */
ALWAYS_INLINE void dw3_wg_4(const int P, const float *const xr[3], int64_t xw, int col, const float *yp, int64_t yw, __m256 acc[9], __m256i m)
{
    __m256 yv[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) yv[i] = vld(P, yp + (int64_t)i * yw, m);
#pragma GCC unroll 3
    for (int r = 0; r < 3; r++) {
        if (!xr[r]) continue;
#pragma GCC unroll 6
        for (int j = 0; j < 6; j++) {
            __m256 xv = vld(P, xr[r] + (int64_t)(col + j) * xw, m);
#pragma GCC unroll 3
            for (int s = 0; s < 3; s++) {
                int i = j - s;
                if (i >= 0 && i < 4) acc[r * 3 + s] = _mm256_fmadd_ps(xv, yv[i], acc[r * 3 + s]);
            }
        }
    }
}

/* rows r0..r1 of one channel block: the 9 sums stored at o (stride c per tap) */
ALWAYS_INLINE void dw3_wg_rows(const int P, const fdnn_dw_wgrad *a, int ih, int iw, int ph, int pw, int lo, int hi, int c0, int64_t r0,
                               int64_t r1, float *o, __m256i m)
{
    __m256 acc[9];
    for (int i = 0; i < 9; i++) acc[i] = _mm256_setzero_ps();
    for (int64_t row = r0; row < r1; row++) {
        const float *xr[3];
        const float *yr = fdnn_dw3_wg_rows(a, row, ih, ph, c0, xr);
        int ow = 0;
        for (; ow < lo; ow++) dw3_wg_pos(1, P, xr, a->xw, ow - pw, iw, vld(P, yr + ow * a->yw, m), acc, m);
        for (; ow + 4 <= hi; ow += 4) dw3_wg_4(P, xr, a->xw, ow - pw, yr + ow * a->yw, a->yw, acc, m);
        for (; ow < hi; ow++) dw3_wg_pos(0, P, xr, a->xw, ow - pw, iw, vld(P, yr + ow * a->yw, m), acc, m);
        for (; ow < a->q; ow++) dw3_wg_pos(1, P, xr, a->xw, ow - pw, iw, vld(P, yr + ow * a->yw, m), acc, m);
    }
    for (int i = 0; i < 9; i++) vst(P, o + (int64_t)i * a->c, m, acc[i]);
}
#define DW3_WG_ARGS const fdnn_dw_wgrad *a, int ih, int iw, int ph, int pw, int lo, int hi, int c0, int64_t r0, int64_t r1, float *o, __m256i m
static void dw3_wg_rows_0(DW3_WG_ARGS) { dw3_wg_rows(0, a, ih, iw, ph, pw, lo, hi, c0, r0, r1, o, m); }
static void dw3_wg_rows_1(DW3_WG_ARGS) { dw3_wg_rows(1, a, ih, iw, ph, pw, lo, hi, c0, r0, r1, o, m); }

void fdnn_avx2_dw_wgrad_3x3s1(const fdnn_dw_wgrad *a, int ih, int iw, int ph, int pw, int nchunk)
{
    int ncb = (a->c + 7) / 8;
    int64_t rows = (int64_t)a->n * a->p;
    int lo = pw, hi = iw - 2 + pw; /* ow in [lo, hi) reads columns ow-pw .. ow-pw+2, all inside */
    if (hi > a->q) hi = a->q;
    if (lo > hi) lo = hi;
#pragma omp for collapse(2) schedule(static) /* orphaned: the caller's parallel region */
    for (int ch = 0; ch < nchunk; ch++)
        for (int cb = 0; cb < ncb; cb++) {
            int c0 = cb * 8;
            int64_t r0 = rows * ch / nchunk, r1 = rows * (ch + 1) / nchunk;
            (a->c - c0 < 8 ? dw3_wg_rows_1 : dw3_wg_rows_0)(a, ih, iw, ph, pw, lo, hi, c0, r0, r1, a->acc + (int64_t)ch * 9 * a->c + c0,
                                                            fdnn_mask8(a->c - c0));
        }
}

/* one task per 8-channel block: every dy vector is loaded once and feeds up to 12 taps (larger
 * filters go in passes of whole tap rows, or one tap at a time past 12 columns) */
void fdnn_avx2_dw_wgrad(const fdnn_dw_wgrad *a)
{
    int ncb = (a->c + 7) / 8, S = a->s;
    int rblk = 12 / S < 1 ? 1 : 12 / S;   /* filter rows per pass */
    int64_t rows = (int64_t)a->n * a->p, xs = (int64_t)a->sw * a->xw;
#pragma omp parallel for schedule(static)
    for (int cb = 0; cb < ncb; cb++) {
        int c0 = cb * 8;
        __m256i m = fdnn_mask8(a->c - c0);
        for (int r0 = 0; r0 < a->r; r0 += rblk) {
            int nr = a->r - r0 < rblk ? a->r - r0 : rblk;
            if (S > 12) {   /* very wide filters: one tap at a time */
                for (int r = r0; r < r0 + nr; r++)
                    for (int s = 0; s < S; s++) {
                        __m256 acc = _mm256_setzero_ps();
                        for (int64_t row = 0; row < rows; row++) {
                            int n = (int)(row / a->p), oh = (int)(row % a->p);
                            const float *xr = a->x + n * a->xn + ((int64_t)oh * a->sh + (int64_t)r * a->dh) * a->xh + (int64_t)s * a->dw * a->xw + c0;
                            const float *yr = a->dy + n * a->yn + oh * a->yh + c0;
                            for (int ow = 0; ow < a->q; ow++)
                                acc = _mm256_fmadd_ps(_mm256_maskload_ps(xr + ow * xs, m), _mm256_maskload_ps(yr + ow * a->yw, m), acc);
                        }
                        _mm256_maskstore_ps(a->acc + ((int64_t)r * S + s) * a->c + c0, m, acc);
                    }
                continue;
            }
            if (nr == 3 && S == 3) {   /* the common 3x3: constant bounds keep the 9 sums in registers */
                (a->c - c0 < 8 ? dw_wg_3x3_1 : dw_wg_3x3_0)(a, c0, r0, m, rows, xs);
                continue;
            }
            __m256 acc[12];
            for (int i = 0; i < 12; i++) acc[i] = _mm256_setzero_ps();
            for (int64_t row = 0; row < rows; row++) {
                int n = (int)(row / a->p), oh = (int)(row % a->p);
                const float *xr = a->x + n * a->xn + ((int64_t)oh * a->sh + (int64_t)r0 * a->dh) * a->xh + c0;
                const float *yr = a->dy + n * a->yn + oh * a->yh + c0;
                for (int ow = 0; ow < a->q; ow++) {
                    __m256 yv = _mm256_maskload_ps(yr + ow * a->yw, m);
                    const float *xp = xr + ow * xs;
                    for (int r = 0; r < nr; r++)
                        for (int s = 0; s < S; s++)
                            acc[r * S + s] = _mm256_fmadd_ps(
                                _mm256_maskload_ps(xp + (int64_t)r * a->dh * a->xh + (int64_t)s * a->dw * a->xw, m), yv, acc[r * S + s]);
                }
            }
            for (int r = 0; r < nr; r++)
                for (int s = 0; s < S; s++) _mm256_maskstore_ps(a->acc + ((int64_t)(r0 + r) * S + s) * a->c + c0, m, acc[r * S + s]);
        }
    }
}
#endif
