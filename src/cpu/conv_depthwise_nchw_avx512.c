/* AVX-512 kernels of the NCHW depthwise convolution (conv_depthwise_nchw.c): each channel's plane
 * is contiguous along W, so vectors run along W (16 output columns) and the filter taps are
 * broadcast scalars; x columns left or right of the image are masked loads (AVX-512 suppresses
 * faults on masked-off lanes, so a load may start before the row). This file alone is compiled
 * with -mavx512*; it is only called after fdnn_cpu_has_avx512() said yes. */
#include "conv_depthwise_nchw.h"
#ifdef __AVX512F__
#include <immintrin.h>

#include "simd_util.h"

/* lanes l of a 16-column load at column col that lie inside [0, w) */
static inline __mmask16 col_mask(int col, int w)
{
    const int lo = col < 0 ? -col : 0;
    int hi = w - col;
    if (hi > 16) hi = 16;
    if (hi <= lo) return 0;
    return (__mmask16)((0xFFFFu >> (16 - hi)) & ~((1u << lo) - 1u));
}

/* x's row y of a strip at x0 (x0 + y * xh), at column shifts 0, 1, 2 under the tap masks; zeros
 * where the row lies outside the image */
ALWAYS_INLINE void dwc_load3(const float *x0, int y, int ih, int64_t xh, __mmask16 m0, __mmask16 m1, __mmask16 m2, __m512 *v0, __m512 *v1,
                             __m512 *v2)
{
    if (y >= 0 && y < ih) {
        const float *xr = x0 + (int64_t)y * xh;
        *v0 = _mm512_maskz_loadu_ps(m0, xr), *v1 = _mm512_maskz_loadu_ps(m1, xr + 1), *v2 = _mm512_maskz_loadu_ps(m2, xr + 2);
    } else {
        *v0 = *v1 = *v2 = _mm512_setzero_ps();
    }
}

/* Output rows [oh0, oh1) of one plane, one 16-column strip at ow (lanes past q masked), 3x3
 * stride 1 with column dilation 1: the load masks of the strip's taps are found once, then a
 * window of the three input rows' x vectors (3 shifts each) slides down the strip (the plane is
 * small enough to stay in L1), so each output vector costs 3 loads and 9 FMAs with the 9 taps in
 * registers. Other filters and strides: dwc_strip_taps. wt holds alpha; beta == 0: y not read. */
ALWAYS_INLINE void dwc_strip3(const fdnn_dwc_fwd *a, const float *xp, float *yp, const __m512 *w9, int oh0, int oh1, int ow)
{
    const __mmask16 my = col_mask(ow, a->q);
    const __m512 vb = _mm512_set1_ps(a->beta);
    const float beta = a->beta;
    {
        /* locals, so that the stores to y (which may alias *a as far as the compiler knows) do
         * not force reloads; the three tap masks in mask registers */
        const float *x0 = xp + ow - a->pw;
        const int ih = a->ih, dh = a->dh, ph = a->ph;
        const int64_t xh = a->xh, yh = a->yh;
        const __mmask16 m0 = col_mask(ow - a->pw, a->iw) & my, m1 = col_mask(ow - a->pw + 1, a->iw) & my, m2 = col_mask(ow - a->pw + 2, a->iw) & my;
        const __m512 w0 = w9[0], w1 = w9[1], w2 = w9[2], w3 = w9[3], w4 = w9[4], w5 = w9[5], w6 = w9[6], w7 = w9[7], w8 = w9[8];
        __m512 a0, a1, a2, b0, b1, b2, c0, c1, c2;
        /* the window for output row oh holds input rows oh - ph + {0, dh, 2 dh} (zeros outside) */
        dwc_load3(x0, oh0 - ph, ih, xh, m0, m1, m2, &a0, &a1, &a2);
        dwc_load3(x0, oh0 - ph + dh, ih, xh, m0, m1, m2, &b0, &b1, &b2);
        float *y = yp + (int64_t)oh0 * yh + ow;
        for (int oh = oh0; oh < oh1; oh++, y += yh) {
            dwc_load3(x0, oh - ph + 2 * dh, ih, xh, m0, m1, m2, &c0, &c1, &c2);
            /* three independent chains (one per filter row), not one of 9 dependent FMAs */
            __m512 p0 = _mm512_mul_ps(w0, a0), p1 = _mm512_mul_ps(w3, b0), p2 = _mm512_mul_ps(w6, c0);
            p0 = _mm512_fmadd_ps(w1, a1, p0), p1 = _mm512_fmadd_ps(w4, b1, p1), p2 = _mm512_fmadd_ps(w7, c1, p2);
            p0 = _mm512_fmadd_ps(w2, a2, p0), p1 = _mm512_fmadd_ps(w5, b2, p1), p2 = _mm512_fmadd_ps(w8, c2, p2);
            __m512 acc = _mm512_add_ps(_mm512_add_ps(p0, p1), p2);
            if (beta != 0) acc = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(my, y), acc);
            _mm512_mask_storeu_ps(y, my, acc);
            if (dh == 1) {
                a0 = b0, a1 = b1, a2 = b2, b0 = c0, b1 = c1, b2 = c2;
            } else { /* dilated rows: reload the window */
                dwc_load3(x0, oh + 1 - ph, ih, xh, m0, m1, m2, &a0, &a1, &a2);
                dwc_load3(x0, oh + 1 - ph + dh, ih, xh, m0, m1, m2, &b0, &b1, &b2);
            }
        }
    }
}

/* the x row output row oh meets at filter row r, -1 where none: MODE 3 (backward data of a
 * column-stride-2 layer) (oh + ph - r*dh) / sh where exact, else oh*sh - ph + r*dh */
ALWAYS_INLINE int dwc_row(const int MODE, int oh, int r, int sh, int ph, int dh, int ih)
{
    int yy = oh * sh - ph + r * dh;
    if (MODE == 3) {
        const int t = oh + ph - r * dh;
        if (t < 0 || t % sh) return -1;
        yy = t / sh;
    }
    return yy >= 0 && yy < ih ? yy : -1;
}

/* One tap's columns for a 16-column output strip at ow (the modes of the AVX2 file's dwc8_tap).
 * MODE 1 (stride 1): x columns off .. off+15, mask m1. MODE 2 (forward, column stride 2): output
 * column ow + l reads x column 2*(ow + l) - pw + s*dw, the even lanes (ix) of two 16-column loads
 * at off (masks m1, m2). MODE 3 (backward data of such a layer): output column i takes dy column
 * (i + pw - s*dw) / 2 where exact: 8 values at off (mask m1) spread by ix to the lanes m2, the
 * others zero. */
typedef struct dwc_tap {
    int off;
    __mmask16 m1, m2;
    __m512i ix;
} dwc_tap;

ALWAYS_INLINE void dwc_tap_make(const int MODE, int ow, int s, int pw, int dw, int iw, dwc_tap *t)
{
    if (MODE == 3) {
        const int t0 = ow + pw - s * dw, e = t0 & 1; /* lanes l with t0 + l even take element (l - e) / 2 */
        t->off = (t0 + e) / 2;
        t->m1 = col_mask(t->off, iw) & 0xFF;
        t->m2 = e ? 0xAAAA : 0x5555;
        t->ix = e ? _mm512_setr_epi32(0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7) : _mm512_setr_epi32(0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0);
        return;
    }
    t->off = ow * (MODE == 2 ? 2 : 1) - pw + s * dw;
    t->m1 = col_mask(t->off, iw), t->m2 = col_mask(t->off + 16, iw);
    t->ix = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
}

ALWAYS_INLINE __m512 dwc_tap_load(const int MODE, const float *xr, const dwc_tap *t)
{
    if (MODE == 1) return _mm512_maskz_loadu_ps(t->m1, xr + t->off);
    if (MODE == 3) return _mm512_maskz_permutexvar_ps(t->m2, t->ix, _mm512_maskz_loadu_ps(t->m1, xr + t->off));
    return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(t->m1, xr + t->off), t->ix, _mm512_maskz_loadu_ps(t->m2, xr + t->off + 16));
}

/* rows [oh0, oh1) of one plane, one 16-column strip at ow, each output vector R*S tap loads (MODE
 * as dwc_tap) and FMAs with the taps broadcast from memory; K3: the 3x3 filter unrolled */
ALWAYS_INLINE void dwc_strip_taps(const int K3, const int MODE, const fdnn_dwc_fwd *a, const float *xp, float *yp, const float *wt, int oh0,
                                  int oh1, int ow)
{
    const int R = K3 ? 3 : a->r, S = K3 ? 3 : a->s, ih = a->ih, sh = a->sh, ph = a->ph, dh = a->dh;
    const int64_t xh = a->xh, yh = a->yh;
    const __mmask16 my = col_mask(ow, a->q);
    dwc_tap tp[FDNN_DWC_MAXR];
    for (int s = 0; s < S; s++) dwc_tap_make(MODE, ow, s, a->pw, a->dw, a->iw, &tp[s]);
    const float beta = a->beta;
    const __m512 vb = _mm512_set1_ps(beta);
    float *y = yp + (int64_t)oh0 * yh + ow;
    for (int oh = oh0; oh < oh1; oh++, y += yh) {
        __m512 acc = _mm512_setzero_ps();
#pragma GCC unroll 3
        for (int r = 0; r < R; r++) {
            const int yy = dwc_row(MODE, oh, r, sh, ph, dh, ih);
            if (yy < 0) continue;
            const float *xr = xp + (int64_t)yy * xh;
#pragma GCC unroll 3
            for (int s = 0; s < S; s++) acc = _mm512_fmadd_ps(_mm512_set1_ps(wt[r * S + s]), dwc_tap_load(MODE, xr, &tp[s]), acc);
        }
        if (beta != 0) acc = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(my, y), acc);
        _mm512_mask_storeu_ps(y, my, acc);
    }
}

void fdnn_avx512_dwc_rows(const fdnn_dwc_fwd *a, int n, int c, int oh0, int oh1)
{
    const float *wt = a->wt + (int64_t)c * a->r * a->s, *xp = a->x + n * a->xn + c * a->xc;
    float *yp = a->y + n * a->yn + c * a->yc;
    const int k3 = a->r == 3 && a->s == 3, mode = a->up ? 3 : a->sw == 2 ? 2 : 1;
    if (mode == 1 && k3 && a->dw == 1) {
        __m512 w9[9];
        for (int i = 0; i < 9; i++) w9[i] = _mm512_set1_ps(wt[i]);
        for (int ow = 0; ow < a->q; ow += 16) dwc_strip3(a, xp, yp, w9, oh0, oh1, ow);
        return;
    }
    for (int ow = 0; ow < a->q; ow += 16) {
        if (mode == 1) {
            if (k3) dwc_strip_taps(1, 1, a, xp, yp, wt, oh0, oh1, ow);
            else dwc_strip_taps(0, 1, a, xp, yp, wt, oh0, oh1, ow);
        } else if (mode == 2) {
            if (k3) dwc_strip_taps(1, 2, a, xp, yp, wt, oh0, oh1, ow);
            else dwc_strip_taps(0, 2, a, xp, yp, wt, oh0, oh1, ow);
        } else {
            if (k3) dwc_strip_taps(1, 3, a, xp, yp, wt, oh0, oh1, ow);
            else dwc_strip_taps(0, 3, a, xp, yp, wt, oh0, oh1, ow);
        }
    }
}

/* The sums of one channel, 3x3 stride 1 undilated, over every image and output row, one 16-column
 * strip at a time with its tap masks found once: x row y feeds output rows y + ph - r, so each x
 * row is loaded once (3 shifts) into a sliding window and each output row costs 4 loads for 9
 * FMAs, the 9 sums in registers. Other filters and strides: dwc_wg_taps. */
static void dwc_wg3(const fdnn_dwc_wgrad *a, int c, float *sum)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0, s8 = s0;
    const int ih = a->ih, ph = a->ph, P = a->p;
    const int64_t xh = a->xh, yh = a->yh;
    for (int n = 0; n < a->n; n++) {
        const float *xp = a->x + n * a->xn + c * a->xc, *dyp = a->dy + n * a->yn + c * a->yc;
        for (int ow = 0; ow < a->q; ow += 16) {
            const __mmask16 my = col_mask(ow, a->q);
            const __mmask16 m0 = col_mask(ow - a->pw, a->iw), m1 = col_mask(ow - a->pw + 1, a->iw), m2 = col_mask(ow - a->pw + 2, a->iw);
            const float *x0 = xp + ow - a->pw;
            __m512 a0, a1, a2, b0, b1, b2, c0, c1, c2;
            dwc_load3(x0, -ph, ih, xh, m0, m1, m2, &a0, &a1, &a2);
            dwc_load3(x0, 1 - ph, ih, xh, m0, m1, m2, &b0, &b1, &b2);
            const float *yr = dyp + ow;
            for (int oh = 0; oh < P; oh++, yr += yh) {
                dwc_load3(x0, oh - ph + 2, ih, xh, m0, m1, m2, &c0, &c1, &c2);
                const __m512 g = _mm512_maskz_loadu_ps(my, yr); /* zero past q */
                s0 = _mm512_fmadd_ps(g, a0, s0), s1 = _mm512_fmadd_ps(g, a1, s1), s2 = _mm512_fmadd_ps(g, a2, s2);
                s3 = _mm512_fmadd_ps(g, b0, s3), s4 = _mm512_fmadd_ps(g, b1, s4), s5 = _mm512_fmadd_ps(g, b2, s5);
                s6 = _mm512_fmadd_ps(g, c0, s6), s7 = _mm512_fmadd_ps(g, c1, s7), s8 = _mm512_fmadd_ps(g, c2, s8);
                a0 = b0, a1 = b1, a2 = b2, b0 = c0, b1 = c1, b2 = c2;
            }
        }
    }
    const __m512 acc[9] = { s0, s1, s2, s3, s4, s5, s6, s7, s8 };
    for (int i = 0; i < 9; i++) sum[i] = _mm512_reduce_add_ps(acc[i]);
}

/* The tap sums of one channel, each output vector R*S tap loads (MODE 1 or 2 as dwc_tap); K3: the
 * 3x3 filter unrolled */
ALWAYS_INLINE void dwc_wg_taps(const int K3, const int MODE, const fdnn_dwc_wgrad *a, int c, float *sum)
{
    const int R = K3 ? 3 : a->r, S = K3 ? 3 : a->s, ih = a->ih, sh = a->sh, ph = a->ph, dh = a->dh;
    __m512 acc[FDNN_DWC_MAXR * FDNN_DWC_MAXR];
    for (int i = 0; i < R * S; i++) acc[i] = _mm512_setzero_ps();
    for (int n = 0; n < a->n; n++) {
        const float *xp = a->x + n * a->xn + c * a->xc, *dyp = a->dy + n * a->yn + c * a->yc;
        for (int ow = 0; ow < a->q; ow += 16) {
            const __mmask16 my = col_mask(ow, a->q);
            dwc_tap tp[FDNN_DWC_MAXR];
            for (int s = 0; s < S; s++) dwc_tap_make(MODE, ow, s, a->pw, a->dw, a->iw, &tp[s]);
            for (int oh = 0; oh < a->p; oh++) {
                const __m512 g = _mm512_maskz_loadu_ps(my, dyp + (int64_t)oh * a->yh + ow); /* zero past q */
#pragma GCC unroll 3
                for (int r = 0; r < R; r++) {
                    const int yy = dwc_row(MODE, oh, r, sh, ph, dh, ih);
                    if (yy < 0) continue;
                    const float *xr = xp + (int64_t)yy * a->xh;
#pragma GCC unroll 3
                    for (int s = 0; s < S; s++) acc[r * S + s] = _mm512_fmadd_ps(g, dwc_tap_load(MODE, xr, &tp[s]), acc[r * S + s]);
                }
            }
        }
    }
    for (int i = 0; i < R * S; i++) sum[i] = _mm512_reduce_add_ps(acc[i]);
}

void fdnn_avx512_dwc_wg(const fdnn_dwc_wgrad *a, int c, float *sum)
{
    const int k3 = a->r == 3 && a->s == 3;
    if (a->sw == 2) {
        if (k3) dwc_wg_taps(1, 2, a, c, sum);
        else dwc_wg_taps(0, 2, a, c, sum);
    } else if (k3 && a->dh == 1 && a->dw == 1) {
        dwc_wg3(a, c, sum);
    } else {
        dwc_wg_taps(0, 1, a, c, sum);
    }
}
#endif
