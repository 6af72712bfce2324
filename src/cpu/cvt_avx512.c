/* AVX-512 widening (HALF / BFLOAT16 -> float) and rounding (float -> HALF / BFLOAT16, to nearest
 * even) of contiguous runs, for the HALF / BFLOAT16 convolution entries (conv_cvt_f32.c). Compiled
 * with the AVX-512 flags (top-level CMakeLists.txt, *avx512*.c), called only after
 * fdnn_cpu_has_avx512() said yes. The results equal fdnn_half_to_float / fdnn_float_to_half /
 * fdnn_bf16_to_float / fdnn_float_to_bf16 on every non-NaN input (IEEE round to nearest even);
 * NaN stays a quiet NaN. */
#include "conv_cpu.h"
#ifdef __AVX512F__
#include <immintrin.h>

void fdnn_avx512_widen16(const uint16_t *s, int half, size_t n, float *d)
{
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        const __m256i h = _mm256_maskz_loadu_epi16(m, s + i);
        const __m512 f = half ? _mm512_cvtph_ps(h) : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
        _mm512_mask_storeu_ps(d + i, m, f);
    }
}

void fdnn_avx512_narrow16(const float *s, int half, size_t n, uint16_t *d)
{
    const __m512i qnan = _mm512_set1_epi32(0x400000), one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff);
    const __m512i absmask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        const __m512 f = _mm512_maskz_loadu_ps(m, s + i);
        __m256i h;
        if (half) {
            h = _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        } else {
            const __m512i x = _mm512_castps_si512(f);
            const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, absmask), inf);
            __m512i r = _mm512_add_epi32(x, _mm512_add_epi32(bias, _mm512_and_si512(_mm512_srli_epi32(x, 16), one)));
            r = _mm512_mask_or_epi32(r, nan, x, qnan); /* NaN: the top half with the quiet bit set */
            h = _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
        }
        _mm256_mask_storeu_epi16(d + i, m, h);
    }
}
#endif
