/* The RNN engine's own double-precision GEMM: OpenBLAS when available, plain loops otherwise. */
#include "rnn_cpu.h"
#ifdef FDNN_HAVE_CBLAS
#include <cblas.h>
#endif

void fdnn_rnn_dgemm(int transA, int transB, int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
                    double beta, double *C, int ldc)
{
    if (M <= 0 || N <= 0) return;
#ifdef FDNN_HAVE_CBLAS
    if (K > 0) {
        cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb,
                    beta, C, ldc);
        return;
    }
#endif
    for (int i = 0; i < M; i++) {
        double *c = C + (int64_t)i * ldc;
        if (beta == 0) for (int j = 0; j < N; j++) c[j] = 0;
        else if (beta != 1) for (int j = 0; j < N; j++) c[j] *= beta;
        for (int k = 0; k < K; k++) {
            double a = alpha * (transA ? A[(int64_t)k * lda + i] : A[(int64_t)i * lda + k]);
            if (a == 0) continue;
            if (!transB) {
                const double *b = B + (int64_t)k * ldb;
                for (int j = 0; j < N; j++) c[j] += a * b[j];
            } else {
                for (int j = 0; j < N; j++) c[j] += a * B[(int64_t)j * ldb + k];
            }
        }
    }
}
