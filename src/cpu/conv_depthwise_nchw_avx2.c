/* AVX2 + FMA kernels of the NCHW depthwise convolution (conv_depthwise_nchw.c), for CPUs without
 * AVX-512: the same contracts as conv_depthwise_nchw_avx512.c with 8 output columns a vector.
 * Columns outside the image are vmaskmov loads (no fault on masked-off elements, so a load may
 * start before the row); with 16 ymm registers there is no sliding window: each output vector
 * loads its R*S shifted x vectors (the 3x3 filter unrolled, its taps broadcast from memory); with
 * column stride 2 each is the even lanes of two loads.
 * This file alone is compiled with -mavx2 -mfma; only called after fdnn_cpu_has_avx2() said yes. */
#include "conv_depthwise_nchw.h"
#ifdef __AVX2__
#include <immintrin.h>

#include "simd_util.h"

/* lanes of an 8-column load at column col that lie inside [0, w), as a vmaskmov mask */
static inline __m256i col_mask8(int col, int w)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i ge = _mm256_cmpgt_epi32(idx, _mm256_set1_epi32(-col - 1)); /* col + l >= 0 */
    const __m256i lt = _mm256_cmpgt_epi32(_mm256_set1_epi32(w - col), idx); /* col + l < w */
    return _mm256_and_si256(ge, lt);
}

static inline int full8(__m256i m) { return _mm256_movemask_ps(_mm256_castsi256_ps(m)) == 0xFF; }

/* One tap's columns for an 8-column output strip at ow. MODE 1 (stride 1): x columns off .. off+7
 * (mask m1); 2 (forward, column stride 2): the even ones of off .. off+15 (masks m1, m2 for the two
 * halves); 3 (backward data of a column-stride-2 layer): output column i takes dy column
 * (i + pw - s*dw) / 2 where exact: 4 values at off (mask m1) spread to the lanes of m2 */
typedef struct dwc8_tap {
    int off;
    __m256i m1, m2, ix; /* ix: MODE 3, lane l takes element ix[l] */
} dwc8_tap;

ALWAYS_INLINE void dwc8_tap_make(const int MODE, int ow, int s, int pw, int dw, int iw, dwc8_tap *t)
{
    if (MODE == 3) {
        const int t0 = ow + pw - s * dw, e = t0 & 1; /* lanes l with t0 + l even take element (l - e) / 2 */
        t->off = (t0 + e) / 2;
        t->m1 = _mm256_and_si256(col_mask8(t->off, iw), _mm256_setr_epi32(-1, -1, -1, -1, 0, 0, 0, 0));
        t->m2 = e ? _mm256_setr_epi32(0, -1, 0, -1, 0, -1, 0, -1) : _mm256_setr_epi32(-1, 0, -1, 0, -1, 0, -1, 0);
        t->ix = e ? _mm256_setr_epi32(0, 0, 0, 1, 1, 2, 2, 3) : _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
        return;
    }
    t->off = ow * (MODE == 2 ? 2 : 1) - pw + s * dw;
    t->m1 = col_mask8(t->off, iw);
    t->m2 = col_mask8(t->off + 8, iw);
    t->ix = _mm256_setzero_si256();
}

ALWAYS_INLINE __m256 dwc8_tap_load(const int MODE, const float *xr, const dwc8_tap *t)
{
    if (MODE == 1) return _mm256_maskload_ps(xr + t->off, t->m1);
    if (MODE == 3) /* spread, then zero the lanes outside m2 */
        return _mm256_and_ps(_mm256_castsi256_ps(t->m2), _mm256_permutevar8x32_ps(_mm256_maskload_ps(xr + t->off, t->m1), t->ix));
    const __m256i ia = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m256 lo = _mm256_permutevar8x32_ps(_mm256_maskload_ps(xr + t->off, t->m1), ia);
    const __m256 hi = _mm256_permutevar8x32_ps(_mm256_maskload_ps(xr + t->off + 8, t->m2), ia);
    return _mm256_blend_ps(lo, hi, 0xF0);
}

/* the x row output row oh meets at filter row r, -1 where none (MODE 3: (oh + ph - r*dh) / sh
 * where exact, else oh*sh - ph + r*dh) */
ALWAYS_INLINE int dwc8_row(const int MODE, int oh, int r, int sh, int ph, int dh, int ih)
{
    int yy = oh * sh - ph + r * dh;
    if (MODE == 3) {
        const int t = oh + ph - r * dh;
        if (t < 0 || t % sh) return -1;
        yy = t / sh;
    }
    return yy >= 0 && yy < ih ? yy : -1;
}

/* rows [oh0, oh1) of one plane, one 8-column strip at ow; R, S compile-time 3 when K3 */
ALWAYS_INLINE void dwc8_strip(const int K3, const int MODE, const fdnn_dwc_fwd *a, const float *xp, float *yp, const float *wt, int oh0,
                              int oh1, int ow)
{
    const int R = K3 ? 3 : a->r, S = K3 ? 3 : a->s;
    const int ih = a->ih, ph = a->ph, dh = a->dh, sh = a->sh;
    const int64_t xh = a->xh, yh = a->yh;
    const __m256i my = col_mask8(ow, a->q);
    const int yfull = full8(my);
    dwc8_tap tp[FDNN_DWC_MAXR];
    for (int s = 0; s < S; s++) dwc8_tap_make(MODE, ow, s, a->pw, a->dw, a->iw, &tp[s]);
    const float beta = a->beta;
    const __m256 vb = _mm256_set1_ps(beta);
    float *y = yp + (int64_t)oh0 * yh + ow;
    for (int oh = oh0; oh < oh1; oh++, y += yh) {
        __m256 acc = _mm256_setzero_ps();
#pragma GCC unroll 3
        for (int r = 0; r < R; r++) {
            const int yy = dwc8_row(MODE, oh, r, sh, ph, dh, ih);
            if (yy < 0) continue;
            const float *xr = xp + (int64_t)yy * xh;
#pragma GCC unroll 3
            for (int s = 0; s < S; s++) acc = _mm256_fmadd_ps(_mm256_broadcast_ss(wt + r * S + s), dwc8_tap_load(MODE, xr, &tp[s]), acc);
        }
        if (beta != 0) acc = _mm256_fmadd_ps(vb, _mm256_maskload_ps(y, my), acc);
        if (yfull) _mm256_storeu_ps(y, acc);
        else _mm256_maskstore_ps(y, my, acc);
    }
}

void fdnn_avx2_dwc_rows(const fdnn_dwc_fwd *a, int n, int c, int oh0, int oh1)
{
    const float *wt = a->wt + (int64_t)c * a->r * a->s, *xp = a->x + n * a->xn + c * a->xc;
    float *yp = a->y + n * a->yn + c * a->yc;
    const int k3 = a->r == 3 && a->s == 3, mode = a->up ? 3 : a->sw == 2 ? 2 : 1;
    for (int ow = 0; ow < a->q; ow += 8) {
        if (mode == 1) {
            if (k3) dwc8_strip(1, 1, a, xp, yp, wt, oh0, oh1, ow);
            else dwc8_strip(0, 1, a, xp, yp, wt, oh0, oh1, ow);
        } else if (mode == 2) {
            if (k3) dwc8_strip(1, 2, a, xp, yp, wt, oh0, oh1, ow);
            else dwc8_strip(0, 2, a, xp, yp, wt, oh0, oh1, ow);
        } else {
            if (k3) dwc8_strip(1, 3, a, xp, yp, wt, oh0, oh1, ow);
            else dwc8_strip(0, 3, a, xp, yp, wt, oh0, oh1, ow);
        }
    }
}

/* one channel's tap sums over every image, row and 8-column strip (fixed order), then the lanes */
ALWAYS_INLINE void dwc8_wg_channel(const int K3, const int SW, const fdnn_dwc_wgrad *a, int c, float *sum)
{
    const int R = K3 ? 3 : a->r, S = K3 ? 3 : a->s, dh = a->dh, sh = a->sh;
    const int ih = a->ih, ph = a->ph;
    const int64_t xh = a->xh, yh = a->yh;
    __m256 acc[FDNN_DWC_MAXR * FDNN_DWC_MAXR];
    for (int i = 0; i < R * S; i++) acc[i] = _mm256_setzero_ps();
    for (int n = 0; n < a->n; n++) {
        const float *xp = a->x + n * a->xn + c * a->xc, *dyp = a->dy + n * a->yn + c * a->yc;
        for (int ow = 0; ow < a->q; ow += 8) {
            const __m256i my = col_mask8(ow, a->q);
            dwc8_tap tp[FDNN_DWC_MAXR];
            for (int s = 0; s < S; s++) dwc8_tap_make(SW, ow, s, a->pw, a->dw, a->iw, &tp[s]);
            const float *yr = dyp + ow;
            for (int oh = 0; oh < a->p; oh++, yr += yh) {
                const __m256 g = _mm256_maskload_ps(yr, my); /* zero past q: those lanes add nothing */
#pragma GCC unroll 3
                for (int r = 0; r < R; r++) {
                    const int yy = oh * sh - ph + r * dh;
                    if (yy < 0 || yy >= ih) continue;
                    const float *xr = xp + (int64_t)yy * xh;
#pragma GCC unroll 3
                    for (int s = 0; s < S; s++) acc[r * S + s] = _mm256_fmadd_ps(g, dwc8_tap_load(SW, xr, &tp[s]), acc[r * S + s]);
                }
            }
        }
    }
    for (int i = 0; i < R * S; i++) {
        const __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc[i]), _mm256_extractf128_ps(acc[i], 1));
        const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
        sum[i] = _mm_cvtss_f32(_mm_add_ss(q, _mm_shuffle_ps(q, q, 1)));
    }
}

void fdnn_avx2_dwc_wg(const fdnn_dwc_wgrad *a, int c, float *sum)
{
    const int k3 = a->r == 3 && a->s == 3;
    if (a->sw == 2) {
        if (k3) dwc8_wg_channel(1, 2, a, c, sum);
        else dwc8_wg_channel(0, 2, a, c, sum);
    } else {
        if (k3) dwc8_wg_channel(1, 1, a, c, sum);
        else dwc8_wg_channel(0, 1, a, c, sum);
    }
}
#endif
