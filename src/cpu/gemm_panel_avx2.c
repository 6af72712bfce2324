/* AVX2 + FMA twin of gemm_panel_avx512.c for CPUs without AVX-512: C[m x n] = alpha * op(A) * B +
 * beta * C with a row-major B streamed as is (no packing), B and C rows contiguous: the NCHW 1x1
 * convolution (y = W * x[n], dx = W^T * dy[n]), where BLAS's packing of B on every call costs
 * about as much as the product when the reduction is short. Compiled with the AVX2 flags
 * (top-level CMakeLists.txt, *avx2*.c); only called after fdnn_cpu_has_avx2() said yes.
 *
 * Register tile: MR <= 4 rows of C x 24 columns (3 ymm per row, 12 accumulators; with the 3 B
 * vectors and one broadcast, the 16 ymm registers); per reduction step the 3 B vectors are loaded
 * once and each of the MR A values is broadcast into 3 FMAs. A 24-column panel of B in chunks of
 * FDNN_PANEL2_KC = 64 rows stays in L1 while every row tile of C passes over it (256-row chunks,
 * as for AVX-512, miss in Zen 3's 32 KB L1 when B's rows are a multiple of 4 KB apart plus a
 * little: NCHW 1x1 64->256 56x56 backward data N=1 0.83 ms against 0.64 with 64 rows). Each C
 * element is one fixed-order sum over k whatever the thread split (threads take whole panels). */
#include "gemm_panel.h"
#ifdef __AVX2__
#include <immintrin.h>

#include "simd_util.h"

/* MR rows x 24 columns of C, nleft of them valid (FULL: all 24, plain loads and stores);
 * A(i, q) = a[i*sam + q*saq]; ab = {alpha, beta} through memory. */
ALWAYS_INLINE void tile(const int MR, const int FULL, int k, const float *a, int64_t sam, int64_t saq, const float *b, int64_t ldb, float *c,
                        int64_t ldc, int nleft, const float *ab)
{
    __m256 acc[4][3];
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = acc[i][2] = _mm256_setzero_ps();
    const __m256i m0 = fdnn_mask8(nleft), m1 = fdnn_mask8(nleft - 8), m2 = fdnn_mask8(nleft - 16);
    for (int q = 0; q < k; q++) {
        const float *bq = b + (int64_t)q * ldb;
        __m256 b0, b1, b2;
        if (FULL) {
            b0 = _mm256_loadu_ps(bq), b1 = _mm256_loadu_ps(bq + 8), b2 = _mm256_loadu_ps(bq + 16);
        } else {
            b0 = _mm256_maskload_ps(bq, m0), b1 = _mm256_maskload_ps(bq + 8, m1), b2 = _mm256_maskload_ps(bq + 16, m2);
        }
        const float *aq = a + (int64_t)q * saq;
#pragma GCC unroll 4
        for (int i = 0; i < MR; i++) {
            const __m256 av = _mm256_broadcast_ss(aq + (int64_t)i * sam);
            acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);
            acc[i][2] = _mm256_fmadd_ps(av, b2, acc[i][2]);
        }
    }
    const __m256 alpha = _mm256_set1_ps(ab[0]);
    const float beta = ab[1];
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++) {
        float *ci = c + (int64_t)i * ldc;
        __m256 r[3] = {_mm256_mul_ps(alpha, acc[i][0]), _mm256_mul_ps(alpha, acc[i][1]), _mm256_mul_ps(alpha, acc[i][2])};
        const __m256i mk[3] = {m0, m1, m2};
        if (beta != 0.0f) { /* C is not read when beta == 0 (NaN in C must not leak through 0 * NaN) */
            const __m256 bt = _mm256_set1_ps(beta);
#pragma GCC unroll 3
            for (int u = 0; u < 3; u++)
                r[u] = _mm256_fmadd_ps(bt, FULL ? _mm256_loadu_ps(ci + 8 * u) : _mm256_maskload_ps(ci + 8 * u, mk[u]), r[u]);
        }
#pragma GCC unroll 3
        for (int u = 0; u < 3; u++) {
            if (FULL) _mm256_storeu_ps(ci + 8 * u, r[u]);
            else _mm256_maskstore_ps(ci + 8 * u, mk[u], r[u]);
        }
    }
}

#define TILE_FN(MR, FULL)                                                                                              \
    static void tile##MR##_##FULL(int k, const float *a, int64_t sam, int64_t saq, const float *b, int64_t ldb, float *c, int64_t ldc, \
                                  int nleft, const float *ab)                                                          \
    {                                                                                                                  \
        tile(MR, FULL, k, a, sam, saq, b, ldb, c, ldc, nleft, ab);                                                     \
    }
TILE_FN(1, 0) TILE_FN(2, 0) TILE_FN(3, 0) TILE_FN(4, 0)
TILE_FN(1, 1) TILE_FN(2, 1) TILE_FN(3, 1) TILE_FN(4, 1)

void fdnn_sgemm_panel_avx2(int ta, int m, int j0, int j1, int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                           float beta, float *c, int64_t ldc)
{
    static const fdnn_panel_tile full[5] = {NULL, tile1_1, tile2_1, tile3_1, tile4_1}, part[5] = {NULL, tile1_0, tile2_0, tile3_0, tile4_0};
    fdnn_sgemm_panel_drive(full, part, FDNN_PANEL2_NB, FDNN_PANEL2_KC, 4, ta, m, j0, j1, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
/* fdnn_transpose_avx2: 8 x 8 blocks in registers, edges scalar */
void fdnn_transpose_avx2(const float *s, int64_t lds, int rows, int cols, float *d, int64_t ldd)
{
    int r0 = 0;
    for (; r0 + 8 <= rows; r0 += 8) {
        int c0 = 0;
        for (; c0 + 8 <= cols; c0 += 8) fdnn_transpose8_avx2(s + (int64_t)r0 * lds + c0, lds, d + (int64_t)c0 * ldd + r0, ldd);
        for (; c0 < cols; c0++)
            for (int r = r0; r < r0 + 8; r++) d[(int64_t)c0 * ldd + r] = s[(int64_t)r * lds + c0];
    }
    for (; r0 < rows; r0++)
        for (int c = 0; c < cols; c++) d[(int64_t)c * ldd + r0] = s[(int64_t)r0 * lds + c];
}
#endif
