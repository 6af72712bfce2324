/* Helpers the intrinsics files share (conv_nhwc_avx2.c, gemm_panel_avx2.c, conv_nhwc_avx512.c,
 * gemm_panel_avx512.c); each part is compiled only where the file's -m flags enable it. */
#ifndef FDNN_CPU_SIMD_UTIL_H
#define FDNN_CPU_SIMD_UTIL_H
#include <stdint.h>
#include <immintrin.h>

#define ALWAYS_INLINE static inline __attribute__((always_inline))

#ifdef __AVX2__
/* d[c*ldd + r] = s[r*lds + c] for an 8 x 8 block: unpacks within 128-bit lanes, then lane
 * permutes */
ALWAYS_INLINE void fdnn_transpose8_avx2(const float *s, int64_t lds, float *d, int64_t ldd)
{
    __m256 r[8], t[8], u[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(s + (int64_t)i * lds);
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    /* u[4b + k], 128-bit lane l: column 4l + k of rows 4b .. 4b+3 */
    for (int b = 0; b < 2; b++) {
        u[4 * b + 0] = _mm256_shuffle_ps(t[4 * b], t[4 * b + 2], 0x44);
        u[4 * b + 1] = _mm256_shuffle_ps(t[4 * b], t[4 * b + 2], 0xEE);
        u[4 * b + 2] = _mm256_shuffle_ps(t[4 * b + 1], t[4 * b + 3], 0x44);
        u[4 * b + 3] = _mm256_shuffle_ps(t[4 * b + 1], t[4 * b + 3], 0xEE);
    }
    for (int k = 0; k < 4; k++) {
        _mm256_storeu_ps(d + (int64_t)k * ldd, _mm256_permute2f128_ps(u[k], u[4 + k], 0x20));
        _mm256_storeu_ps(d + (int64_t)(4 + k) * ldd, _mm256_permute2f128_ps(u[k], u[4 + k], 0x31));
    }
}

/* lanes 0 .. left-1 of 8 on (left clamped to 0..8), for vmaskmov */
static inline __m256i fdnn_mask8(int left)
{
    static const int32_t table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    left = left < 0 ? 0 : left > 8 ? 8 : left;
    return _mm256_loadu_si256((const __m256i *)(table + 8 - left));
}
#endif

#ifdef __AVX512F__
/* lanes 0 .. left-1 of 16 on (left clamped to 0..16) */
static inline __mmask16 fdnn_mask16(int left) { return left >= 16 ? (__mmask16)0xffff : left <= 0 ? 0 : (__mmask16)((1u << left) - 1); }

/* d[c*ldd + r] = s[r*lds + c] for a 16 x 16 block: unpacks within 128-bit lanes, then lane
 * shuffles */
ALWAYS_INLINE void fdnn_transpose16_avx512(const float *s, int64_t lds, float *d, int64_t ldd)
{
    __m512 r[16], t[16], u[16];
    for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(s + (int64_t)i * lds);
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    /* u[4b + k], lane l: column 4l + k of rows 4b .. 4b+3 */
    for (int b = 0; b < 4; b++) {
        u[4 * b + 0] = _mm512_shuffle_ps(t[4 * b], t[4 * b + 2], 0x44);
        u[4 * b + 1] = _mm512_shuffle_ps(t[4 * b], t[4 * b + 2], 0xEE);
        u[4 * b + 2] = _mm512_shuffle_ps(t[4 * b + 1], t[4 * b + 3], 0x44);
        u[4 * b + 3] = _mm512_shuffle_ps(t[4 * b + 1], t[4 * b + 3], 0xEE);
    }
    for (int k = 0; k < 4; k++) {
        __m512 v0 = _mm512_shuffle_f32x4(u[k], u[4 + k], 0x88), w0 = _mm512_shuffle_f32x4(u[k], u[4 + k], 0xDD);
        __m512 v1 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0x88), w1 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0xDD);
        _mm512_storeu_ps(d + (int64_t)k * ldd, _mm512_shuffle_f32x4(v0, v1, 0x88));
        _mm512_storeu_ps(d + (int64_t)(8 + k) * ldd, _mm512_shuffle_f32x4(v0, v1, 0xDD));
        _mm512_storeu_ps(d + (int64_t)(4 + k) * ldd, _mm512_shuffle_f32x4(w0, w1, 0x88));
        _mm512_storeu_ps(d + (int64_t)(12 + k) * ldd, _mm512_shuffle_f32x4(w0, w1, 0xDD));
    }
}
#endif
#endif
