/* The AVX-512 streamed-B GEMM (gemm_panel_avx512.c, built with -mavx512*): columns j0..j1-1 of
 * C[m x n] = alpha * op(A) * B + beta * C, B and C row-major with contiguous rows (ta: A
 * transposed). Single-threaded; fdnn_sgemm (gemm.c) splits the columns over OpenMP threads in
 * whole FDNN_PANEL_NB panels. Only after fdnn_cpu_has_avx512(). */
#ifndef FDNN_CPU_GEMM_PANEL_H
#define FDNN_CPU_GEMM_PANEL_H
#include <stdint.h>

#define FDNN_PANEL_NB 48
#define FDNN_PANEL_KC 256 /* reduction rows of a B panel per pass */

void fdnn_sgemm_panel_avx512(int ta, int m, int j0, int j1, int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                             float beta, float *c, int64_t ldc);

/* The AVX2 + FMA twin (gemm_panel_avx2.c): 24-column panels, reduction chunks of 64 rows. Only
 * after fdnn_cpu_has_avx2(). */
#define FDNN_PANEL2_NB 24
#define FDNN_PANEL2_KC 64
void fdnn_sgemm_panel_avx2(int ta, int m, int j0, int j1, int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                           float beta, float *c, int64_t ldc);
#endif
