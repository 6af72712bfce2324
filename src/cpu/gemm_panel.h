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

/* The same with 64-column panels (6 rows x 4 vectors a tile, reduction chunks of 128 rows: a
 * 32 KB B chunk), for column counts 48-column panels would leave partly idle (64, 256). */
#define FDNN_PANEL64_NB 64
#define FDNN_PANEL64_KC 128
void fdnn_sgemm_panel64_avx512(int ta, int m, int j0, int j1, int k, float alpha, const float *a, int64_t lda, const float *b,
                               int64_t ldb, float beta, float *c, int64_t ldc);

/* The AVX2 + FMA twin (gemm_panel_avx2.c): 24-column panels, reduction chunks of 64 rows. Only
 * after fdnn_cpu_has_avx2(). */
#define FDNN_PANEL2_NB 24
#define FDNN_PANEL2_KC 64
void fdnn_sgemm_panel_avx2(int ta, int m, int j0, int j1, int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                           float beta, float *c, int64_t ldc);

/* One register tile of either kernel: as many rows as its table index x one panel of C at c, nleft of
 * its columns valid; A(i, q) = a[i*sam + q*saq]; ab = {alpha, beta}. */
typedef void (*fdnn_panel_tile)(int k, const float *a, int64_t sam, int64_t saq, const float *b, int64_t ldb, float *c, int64_t ldc,
                                int nleft, const float *ab);
/* The walk both kernels share (gemm.c): nb-column panels over columns j0..j1-1, the reduction in
 * chunks of kc rows of B (a panel chunk stays in L1; later chunks add to C), row tiles of up to
 * mr rows: full[rows] where the panel is whole, part[rows] where it is not. */
void fdnn_sgemm_panel_drive(const fdnn_panel_tile *full, const fdnn_panel_tile *part, int nb, int kc, int mr, int ta, int m, int j0, int j1,
                            int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
/* d[c*ldd + r] = s[r*lds + c] for r < rows, c < cols (a transposed copy of B for the kernels above) */
void fdnn_transpose_avx512(const float *s, int64_t lds, int rows, int cols, float *d, int64_t ldd);
void fdnn_transpose_avx2(const float *s, int64_t lds, int rows, int cols, float *d, int64_t ldd);
#endif
