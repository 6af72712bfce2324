/* AVX2 + FMA kernels of the NCHW depthwise convolution (conv_depthwise_nchw.c), for CPUs without
 * AVX-512: the same contracts as conv_depthwise_nchw_avx512.c with 8 output columns a vector.
 * Columns outside the image are vmaskmov loads (no fault on masked-off elements, so a load may
 * start before the row); with 16 ymm registers there is no sliding window: each output vector
 * loads its R*S shifted x vectors (the 3x3 filter unrolled, its taps broadcast from memory).
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

/* rows [oh0, oh1) of one plane, one 8-column strip at ow; R, S, dw compile-time 3, 3, 1 when K3 */
ALWAYS_INLINE void dwc8_strip(const int K3, const fdnn_dwc_fwd *a, const float *xp, float *yp, const float *wt, int oh0, int oh1, int ow)
{
    const int R = K3 ? 3 : a->r, S = K3 ? 3 : a->s, dw = K3 ? 1 : a->dw;
    const int ih = a->ih, ph = a->ph, dh = a->dh;
    const int64_t xh = a->xh, yh = a->yh;
    const __m256i my = col_mask8(ow, a->q);
    const int yfull = full8(my);
    __m256i mk[FDNN_DWC_MAXR];
    for (int s = 0; s < S; s++) mk[s] = _mm256_and_si256(col_mask8(ow - a->pw + s * dw, a->iw), my);
    const float beta = a->beta;
    const __m256 vb = _mm256_set1_ps(beta);
    const float *x0 = xp + ow - a->pw;
    float *y = yp + (int64_t)oh0 * yh + ow;
    for (int oh = oh0; oh < oh1; oh++, y += yh) {
        __m256 acc = _mm256_setzero_ps();
#pragma GCC unroll 3
        for (int r = 0; r < R; r++) {
            const int yy = oh - ph + r * dh;
            if (yy < 0 || yy >= ih) continue;
            const float *xr = x0 + (int64_t)yy * xh;
#pragma GCC unroll 3
            for (int s = 0; s < S; s++) acc = _mm256_fmadd_ps(_mm256_broadcast_ss(wt + r * S + s), _mm256_maskload_ps(xr + s * dw, mk[s]), acc);
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
    const int k3 = a->r == 3 && a->s == 3 && a->dw == 1;
    for (int ow = 0; ow < a->q; ow += 8) {
        if (k3) dwc8_strip(1, a, xp, yp, wt, oh0, oh1, ow);
        else dwc8_strip(0, a, xp, yp, wt, oh0, oh1, ow);
    }
}

/* one channel's tap sums over every image, row and 8-column strip (fixed order), then the lanes */
ALWAYS_INLINE void dwc8_wg_channel(const int K3, const fdnn_dwc_wgrad *a, int c, float *sum)
{
    const int R = K3 ? 3 : a->r, S = K3 ? 3 : a->s, dh = K3 ? 1 : a->dh, dw = K3 ? 1 : a->dw;
    const int ih = a->ih, ph = a->ph;
    const int64_t xh = a->xh, yh = a->yh;
    __m256 acc[FDNN_DWC_MAXR * FDNN_DWC_MAXR];
    for (int i = 0; i < R * S; i++) acc[i] = _mm256_setzero_ps();
    for (int n = 0; n < a->n; n++) {
        const float *xp = a->x + n * a->xn + c * a->xc, *dyp = a->dy + n * a->yn + c * a->yc;
        for (int ow = 0; ow < a->q; ow += 8) {
            const __m256i my = col_mask8(ow, a->q);
            __m256i mk[FDNN_DWC_MAXR];
            for (int s = 0; s < S; s++) mk[s] = col_mask8(ow - a->pw + s * dw, a->iw);
            const float *x0 = xp + ow - a->pw, *yr = dyp + ow;
            for (int oh = 0; oh < a->p; oh++, yr += yh) {
                const __m256 g = _mm256_maskload_ps(yr, my); /* zero past q: those lanes add nothing */
#pragma GCC unroll 3
                for (int r = 0; r < R; r++) {
                    const int yy = oh - ph + r * dh;
                    if (yy < 0 || yy >= ih) continue;
                    const float *xr = x0 + (int64_t)yy * xh;
#pragma GCC unroll 3
                    for (int s = 0; s < S; s++) acc[r * S + s] = _mm256_fmadd_ps(g, _mm256_maskload_ps(xr + s * dw, mk[s]), acc[r * S + s]);
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
    if (a->r == 3 && a->s == 3 && a->dh == 1 && a->dw == 1) dwc8_wg_channel(1, a, c, sum);
    else dwc8_wg_channel(0, a, c, sum);
}
#endif
