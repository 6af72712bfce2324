/* AVX2 + F16C widening (HALF / BFLOAT16 -> float) and rounding (float -> HALF / BFLOAT16, to
 * nearest even) of contiguous runs: the AVX2 twins of cvt_avx512.c, with the same results
 * (equal to fdnn_half_to_float / fdnn_float_to_half / fdnn_bf16_to_float / fdnn_float_to_bf16 on
 * every non-NaN input; NaN stays a quiet NaN). Compiled with -mavx2 -mfma -mf16c (*avx2*.c),
 * called only after fdnn_cpu_has_avx2() said yes. Tails shorter than 8 go through the scalar
 * conversions. */
#include "conv_cpu.h"
#ifdef __AVX2__
#include <immintrin.h>

void fdnn_avx2_widen16(const uint16_t *s, int half, size_t n, float *d)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128((const __m128i *)(s + i));
        const __m256 f = half ? _mm256_cvtph_ps(h) : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
        _mm256_storeu_ps(d + i, f);
    }
    for (; i < n; i++) d[i] = half ? fdnn_half_to_float(s[i]) : fdnn_bf16_to_float(s[i]);
}

void fdnn_avx2_narrow16(const float *s, int half, size_t n, uint16_t *d)
{
    const __m256i qnan = _mm256_set1_epi32(0x400000), one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
    const __m256i absmask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 f = _mm256_loadu_ps(s + i);
        __m128i h;
        if (half) {
            h = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        } else {
            const __m256i x = _mm256_castps_si256(f);
            /* |x| > inf as signed 32-bit integers: both sides are non-negative */
            const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, absmask), inf);
            __m256i r = _mm256_add_epi32(x, _mm256_add_epi32(bias, _mm256_and_si256(_mm256_srli_epi32(x, 16), one)));
            r = _mm256_blendv_epi8(r, _mm256_or_si256(x, qnan), nan); /* NaN: the top half with the quiet bit set */
            r = _mm256_srli_epi32(r, 16);
            /* 8 x 32 -> 8 x 16: packus works within 128-bit lanes, then the two lanes' halves meet */
            const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
            h = _mm256_castsi256_si128(p);
        }
        _mm_storeu_si128((__m128i *)(d + i), h);
    }
    for (; i < n; i++) d[i] = half ? fdnn_float_to_half(s[i]) : fdnn_float_to_bf16(s[i]);
}
#endif
