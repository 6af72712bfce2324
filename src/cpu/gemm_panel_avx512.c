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

/* MR rows x 48 columns (nleft of them valid) of C; A(i, q) = a[i*sam + q*saq]; ab = {alpha, beta}
 * through memory (no registers held for them in the loop). */
ALWAYS_INLINE void tile(const int MR, int k, const float *a, int64_t sam, int64_t saq, const float *b, int64_t ldb, float *c, int64_t ldc,
                        int nleft, const float *ab)
{
    __m512 acc[8][3];
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = acc[i][2] = _mm512_setzero_ps();
    const __mmask16 m0 = fdnn_mask16(nleft), m1 = fdnn_mask16(nleft - 16), m2 = fdnn_mask16(nleft - 32);
    for (int q = 0; q < k; q++) {
        const float *bq = b + (int64_t)q * ldb;
        const __m512 b0 = _mm512_maskz_loadu_ps(m0, bq), b1 = _mm512_maskz_loadu_ps(m1, bq + 16), b2 = _mm512_maskz_loadu_ps(m2, bq + 32);
        const float *aq = a + (int64_t)q * saq;
#pragma GCC unroll 8
        for (int i = 0; i < MR; i++) {
            const __m512 av = _mm512_set1_ps(aq[(int64_t)i * sam]);
            acc[i][0] = _mm512_fmadd_ps(av, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(av, b1, acc[i][1]);
            acc[i][2] = _mm512_fmadd_ps(av, b2, acc[i][2]);
        }
    }
    const __m512 alpha = _mm512_set1_ps(ab[0]);
    const float beta = ab[1];
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++) {
        float *ci = c + (int64_t)i * ldc;
        __m512 r0 = _mm512_mul_ps(alpha, acc[i][0]), r1 = _mm512_mul_ps(alpha, acc[i][1]), r2 = _mm512_mul_ps(alpha, acc[i][2]);
        if (beta != 0.0f) { /* C is not read when beta == 0 (NaN in C must not leak through 0 * NaN) */
            const __m512 bt = _mm512_set1_ps(beta);
            r0 = _mm512_fmadd_ps(bt, _mm512_maskz_loadu_ps(m0, ci), r0);
            r1 = _mm512_fmadd_ps(bt, _mm512_maskz_loadu_ps(m1, ci + 16), r1);
            r2 = _mm512_fmadd_ps(bt, _mm512_maskz_loadu_ps(m2, ci + 32), r2);
        }
        _mm512_mask_storeu_ps(ci, m0, r0);
        _mm512_mask_storeu_ps(ci + 16, m1, r1);
        _mm512_mask_storeu_ps(ci + 32, m2, r2);
    }
}

#define TILE_FN(MR)                                                                                                    \
    static void tile##MR(int k, const float *a, int64_t sam, int64_t saq, const float *b, int64_t ldb, float *c, int64_t ldc, int nleft, \
                         const float *ab)                                                                              \
    {                                                                                                                  \
        tile(MR, k, a, sam, saq, b, ldb, c, ldc, nleft, ab);                                                           \
    }
TILE_FN(1)
TILE_FN(2)
TILE_FN(3)
TILE_FN(4)
TILE_FN(5)
TILE_FN(6)
TILE_FN(7)
TILE_FN(8)

void fdnn_sgemm_panel_avx512(int ta, int m, int j0, int j1, int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                             float beta, float *c, int64_t ldc)
{
    /* masked loads and stores throughout: one table for whole and partial panels */
    static const fdnn_panel_tile fns[9] = {NULL, tile1, tile2, tile3, tile4, tile5, tile6, tile7, tile8};
    fdnn_sgemm_panel_drive(fns, fns, FDNN_PANEL_NB, FDNN_PANEL_KC, 8, ta, m, j0, j1, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
#endif
