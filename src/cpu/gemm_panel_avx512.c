/* AVX-512 GEMM for a row-major B streamed as is (no packing): C[m x n] = alpha * op(A) * B +
 * beta * C with B and C rows contiguous. This is the shape of the NCHW 1x1 convolution
 * (y = W * x[n], dx = W^T * dy[n]) and of im2col GEMMs with a short reduction, where packing B
 * (as BLAS does on every call) costs as much as the product. Compiled with the AVX-512 flags
 * (top-level CMakeLists.txt, *avx512*.c); only called after fdnn_cpu_has_avx512() said yes.
 *
 * Register tile: MR <= 8 rows of C x 48 columns (3 zmm per row, 24 accumulators); per
 * reduction step the 3 B vectors are loaded once and each of the MR A values is broadcast into 3
 * FMAs. A 48-column panel of B (k x 48 floats, 12 KB for k = 64) stays in L1 while every row
 * tile of C passes over it. Each C element is one fixed-order sum over k, whatever the thread
 * split (threads take whole 48-column panels), so results are deterministic. */
#include "gemm_panel.h"
#ifdef __AVX512F__
#include <immintrin.h>

#include "simd_util.h"

/* MR rows x 16*NV columns (nleft of them valid) of C; A(i, q) = a[i*sam + q*saq]; ab = {alpha,
 * beta} through memory (no registers held for them in the loop). NV = 3: 48 columns, MR <= 8;
 * NV = 4: 64 columns, MR <= 6 (24 accumulators either way). */
ALWAYS_INLINE void tile(const int NV, const int MR, const int FULL, int k, const float *a, int64_t sam, int64_t saq, const float *b, int64_t ldb, float *c,
                        int64_t ldc, int nleft, const float *ab)
{
    __m512 acc[8][4];
    __mmask16 m[4];
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) m[v] = fdnn_mask16(nleft - 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) acc[i][v] = _mm512_setzero_ps();
    for (int q = 0; q < k; q++) {
        const float *bq = b + (int64_t)q * ldb;
        __m512 bv[4];
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) bv[v] = FULL ? _mm512_loadu_ps(bq + 16 * v) : _mm512_maskz_loadu_ps(m[v], bq + 16 * v);
        const float *aq = a + (int64_t)q * saq;
#pragma GCC unroll 8
        for (int i = 0; i < MR; i++) {
            const __m512 av = _mm512_set1_ps(aq[(int64_t)i * sam]);
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
        }
    }
    const __m512 alpha = _mm512_set1_ps(ab[0]);
    const float beta = ab[1];
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++) {
        float *ci = c + (int64_t)i * ldc;
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) {
            __m512 r = _mm512_mul_ps(alpha, acc[i][v]);
            /* C is not read when beta == 0 (NaN in C must not leak through 0 * NaN) */
            if (beta != 0.0f) r = _mm512_fmadd_ps(_mm512_set1_ps(beta), _mm512_maskz_loadu_ps(m[v], ci + 16 * v), r);
            _mm512_mask_storeu_ps(ci + 16 * v, m[v], r);
        }
    }
}

/* FULL: a whole panel, B loaded without masks (the masked loads of the partial tiles ran the
 * loop measurably slower on Emerald Rapids, see conv_nhwc_avx512.c's weight gradient) */
#define TILE_FN(NV, MR)                                                                                                \
    static void tile##NV##_##MR(int k, const float *a, int64_t sam, int64_t saq, const float *b, int64_t ldb, float *c, int64_t ldc, \
                                int nleft, const float *ab)                                                            \
    {                                                                                                                  \
        tile(NV, MR, 0, k, a, sam, saq, b, ldb, c, ldc, nleft, ab);                                                    \
    }                                                                                                                  \
    static void full##NV##_##MR(int k, const float *a, int64_t sam, int64_t saq, const float *b, int64_t ldb, float *c, int64_t ldc, \
                                int nleft, const float *ab)                                                            \
    {                                                                                                                  \
        tile(NV, MR, 1, k, a, sam, saq, b, ldb, c, ldc, nleft, ab);                                                    \
    }
TILE_FN(3, 1) TILE_FN(3, 2) TILE_FN(3, 3) TILE_FN(3, 4) TILE_FN(3, 5) TILE_FN(3, 6) TILE_FN(3, 7) TILE_FN(3, 8)
TILE_FN(4, 1) TILE_FN(4, 2) TILE_FN(4, 3) TILE_FN(4, 4) TILE_FN(4, 5) TILE_FN(4, 6)

void fdnn_sgemm_panel_avx512(int ta, int m, int j0, int j1, int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                             float beta, float *c, int64_t ldc)
{
    static const fdnn_panel_tile part[9] = {NULL, tile3_1, tile3_2, tile3_3, tile3_4, tile3_5, tile3_6, tile3_7, tile3_8};
    static const fdnn_panel_tile full[9] = {NULL, full3_1, full3_2, full3_3, full3_4, full3_5, full3_6, full3_7, full3_8};
    fdnn_sgemm_panel_drive(full, part, FDNN_PANEL_NB, FDNN_PANEL_KC, 8, ta, m, j0, j1, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void fdnn_sgemm_panel64_avx512(int ta, int m, int j0, int j1, int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                               float beta, float *c, int64_t ldc)
{
    static const fdnn_panel_tile part[7] = {NULL, tile4_1, tile4_2, tile4_3, tile4_4, tile4_5, tile4_6};
    static const fdnn_panel_tile full[7] = {NULL, full4_1, full4_2, full4_3, full4_4, full4_5, full4_6};
    fdnn_sgemm_panel_drive(full, part, FDNN_PANEL64_NB, FDNN_PANEL64_KC, 6, ta, m, j0, j1, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
/* fdnn_transpose_avx512: 16 x 16 blocks in registers, edges scalar */
void fdnn_transpose_avx512(const float *s, int64_t lds, int rows, int cols, float *d, int64_t ldd)
{
    int r0 = 0;
    for (; r0 + 16 <= rows; r0 += 16) {
        int c0 = 0;
        for (; c0 + 16 <= cols; c0 += 16) fdnn_transpose16_avx512(s + (int64_t)r0 * lds + c0, lds, d + (int64_t)c0 * ldd + r0, ldd);
        for (; c0 < cols; c0++)
            for (int r = r0; r < r0 + 16; r++) d[(int64_t)c0 * ldd + r] = s[(int64_t)r * lds + c0];
    }
    for (; r0 < rows; r0++)
        for (int c = 0; c < cols; c++) d[(int64_t)c * ldd + r0] = s[(int64_t)r0 * lds + c];
}
#endif
