/* Helpers the intrinsics files share (conv_nhwc_avx2.c, gemm_panel_avx2.c, conv_nhwc_avx512.c,
 * gemm_panel_avx512.c); each part is compiled only where the file's -m flags enable it. */
#ifndef FDNN_CPU_SIMD_UTIL_H
#define FDNN_CPU_SIMD_UTIL_H
#include <stdint.h>
#include <immintrin.h>

#define ALWAYS_INLINE static inline __attribute__((always_inline))

#ifdef __AVX2__
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
#endif
#endif
