/* Row-major single/double GEMM. With FDNN_HAVE_CBLAS the public entries call OpenBLAS (unless
 * FREEDNN_CPU_OWN_GEMM=1); our
 * own kernel (always built) packs a K x N panel of op(B) and a block of op(A) rows, then runs
 * an i-k-j loop whose inner j loop the compiler vectorises; OpenMP over row blocks. */
#include <stdlib.h>
#include <string.h>
#include "conv_cpu.h"
#ifdef FDNN_HAVE_CBLAS
#include <cblas.h>
#endif

#define GEMM_MB 64
#define GEMM_NB 256
#define GEMM_KB 128

#define DEFINE_OWN_GEMM(NAME, T)                                                                                       \
    void NAME(int ta, int tb, int m, int n, int k, T alpha, const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c, \
              int64_t ldc)                                                                                             \
    {                                                                                                                  \
        _Pragma("omp parallel for schedule(static)") for (int i = 0; i < m; i++)                                       \
        {                                                                                                              \
            T *cr = c + (int64_t)i * ldc;                                                                              \
            if (beta == 0)                                                                                             \
                for (int j = 0; j < n; j++) cr[j] = 0;                                                                 \
            else if (beta != 1)                                                                                        \
                for (int j = 0; j < n; j++) cr[j] *= beta;                                                             \
        }                                                                                                              \
        if (k == 0 || alpha == 0) return;                                                                              \
        for (int j0 = 0; j0 < n; j0 += GEMM_NB) {                                                                      \
            int nb = n - j0 < GEMM_NB ? n - j0 : GEMM_NB;                                                              \
            for (int p0 = 0; p0 < k; p0 += GEMM_KB) {                                                                  \
                int kb = k - p0 < GEMM_KB ? k - p0 : GEMM_KB;                                                          \
                T bp[GEMM_KB * GEMM_NB];                                                                               \
                /* pack op(B)[p0.., j0..] as kb rows of nb */                                                          \
                for (int p = 0; p < kb; p++)                                                                           \
                    for (int j = 0; j < nb; j++)                                                                       \
                        bp[p * nb + j] = tb ? b[(int64_t)(j0 + j) * ldb + p0 + p] : b[(int64_t)(p0 + p) * ldb + j0 + j]; \
                _Pragma("omp parallel for schedule(static)") for (int i0 = 0; i0 < m; i0 += GEMM_MB)                   \
                {                                                                                                      \
                    int mb = m - i0 < GEMM_MB ? m - i0 : GEMM_MB;                                                      \
                    T acc[GEMM_NB];                                                                                    \
                    for (int i = 0; i < mb; i++) {                                                                     \
                        for (int j = 0; j < nb; j++) acc[j] = 0;                                                       \
                        for (int p = 0; p < kb; p++) {                                                                 \
                            T av = ta ? a[(int64_t)(p0 + p) * lda + i0 + i] : a[(int64_t)(i0 + i) * lda + p0 + p];     \
                            const T *br = bp + p * nb;                                                                 \
                            for (int j = 0; j < nb; j++) acc[j] += av * br[j];                                         \
                        }                                                                                              \
                        T *cr = c + (int64_t)(i0 + i) * ldc + j0;                                                      \
                        for (int j = 0; j < nb; j++) cr[j] += alpha * acc[j];                                          \
                    }                                                                                                  \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
    }

DEFINE_OWN_GEMM(fdnn_sgemm_own, float)
DEFINE_OWN_GEMM(fdnn_dgemm_own, double)

/* BLAS insists on ld >= the row length even where only one row exists, and rejects the
 * overlapping (ld smaller than the row) inputs our own kernel handles; normalise, or report
 * that BLAS cannot take it. */
static int blas_ok(int ta, int tb, int m, int n, int k, int64_t *lda, int64_t *ldb, int64_t *ldc)
{
    if (fdnn_env_int("FREEDNN_CPU_OWN_GEMM", 0)) return 0; /* force our kernel (tests, comparisons) */
    int64_t arow = ta ? m : k, brow = tb ? k : n;
    if ((ta ? k : m) == 1) *lda = arow;
    if ((tb ? n : k) == 1) *ldb = brow;
    if (m == 1) *ldc = n;
    return *lda >= arow && *ldb >= brow && *ldc >= n && *lda <= 0x7fffffff && *ldb <= 0x7fffffff && *ldc <= 0x7fffffff;
}

void fdnn_sgemm(int ta, int tb, int m, int n, int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                float *c, int64_t ldc)
{
    if (m <= 0 || n <= 0) return;
#ifdef FDNN_HAVE_CBLAS
    int64_t la = lda, lb = ldb, lc = ldc;
    if (k > 0 && blas_ok(ta, tb, m, n, k, &la, &lb, &lc)) {
        if (beta == 0) /* zero C ourselves so NaN in C can never leak through 0*NaN */
            for (int i = 0; i < m; i++) memset(c + (int64_t)i * ldc, 0, sizeof(float) * (size_t)n);
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, (int)la, b, (int)lb,
                    beta, c, (int)lc);
        return;
    }
#endif
    fdnn_sgemm_own(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void fdnn_dgemm(int ta, int tb, int m, int n, int k, double alpha, const double *a, int64_t lda, const double *b, int64_t ldb,
                double beta, double *c, int64_t ldc)
{
    if (m <= 0 || n <= 0) return;
#ifdef FDNN_HAVE_CBLAS
    int64_t la = lda, lb = ldb, lc = ldc;
    if (k > 0 && blas_ok(ta, tb, m, n, k, &la, &lb, &lc)) {
        if (beta == 0)
            for (int i = 0; i < m; i++) memset(c + (int64_t)i * ldc, 0, sizeof(double) * (size_t)n);
        cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, (int)la, b, (int)lb,
                    beta, c, (int)lc);
        return;
    }
#endif
    fdnn_dgemm_own(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
