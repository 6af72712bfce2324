/* Row-major single/double GEMM. With FDNN_HAVE_CBLAS the public entries call OpenBLAS (unless
 * FREEDNN_CPU_OWN_GEMM=1); our
 * own kernel (always built) packs a K x N panel of op(B) and a block of op(A) rows, then runs
 * an i-k-j loop whose inner j loop the compiler vectorises; OpenMP over row blocks. */
#include <stdlib.h>
#include <string.h>
#include "conv_cpu.h"
#include "cpu_features.h"
#include "gemm_panel.h"
#ifdef FDNN_HAVE_CBLAS
#include <cblas.h>
#endif
#ifdef FDNN_HAVE_OPENMP
#include <omp.h>
#endif

static inline int fdnn_in_parallel(void)
{
#ifdef FDNN_HAVE_OPENMP
    return omp_in_parallel();
#else
    return 0;
#endif
}

/* threads for an m x n x k product: one when it is small or already inside a parallel region
 * (images split over threads), else all */
static inline int gemm_threads(int m, int n, int k) { return (double)m * n * k < 262144.0 || fdnn_in_parallel() ? 1 : fdnn_cpu_threads(); }

#define GEMM_MB 64
#define GEMM_NB 128
#define GEMM_KB 128

/* C tile (mb x nb) += alpha * Ap (mb x kb, packed rows) * Bp (kb x nb, packed rows), four
 * rows at a time so every loaded B value feeds four multiply-adds. */
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
        int mt = (m + GEMM_MB - 1) / GEMM_MB, nt = (n + GEMM_NB - 1) / GEMM_NB;                                        \
        _Pragma("omp parallel")                                                                                        \
        {                                                                                                              \
            T *ap = malloc(sizeof(T) * GEMM_MB * GEMM_KB), *bp = malloc(sizeof(T) * GEMM_KB * GEMM_NB);                \
            T *acc = malloc(sizeof(T) * 4 * GEMM_NB);                                                                  \
            _Pragma("omp for collapse(2) schedule(static)") for (int ti = 0; ti < mt; ti++)                            \
            for (int tj = 0; tj < nt; tj++) {                                                                          \
                int i0 = ti * GEMM_MB, j0 = tj * GEMM_NB;                                                              \
                int mb = m - i0 < GEMM_MB ? m - i0 : GEMM_MB, nb = n - j0 < GEMM_NB ? n - j0 : GEMM_NB;                \
                for (int p0 = 0; p0 < k; p0 += GEMM_KB) {                                                              \
                    int kb = k - p0 < GEMM_KB ? k - p0 : GEMM_KB;                                                      \
                    if (tb)                                                                                            \
                        for (int j = 0; j < nb; j++)                                                                   \
                            for (int p = 0; p < kb; p++) bp[p * nb + j] = b[(int64_t)(j0 + j) * ldb + p0 + p];         \
                    else                                                                                               \
                        for (int p = 0; p < kb; p++)                                                                   \
                            for (int j = 0; j < nb; j++) bp[p * nb + j] = b[(int64_t)(p0 + p) * ldb + j0 + j];         \
                    if (ta)                                                                                            \
                        for (int p = 0; p < kb; p++)                                                                   \
                            for (int i = 0; i < mb; i++) ap[i * kb + p] = a[(int64_t)(p0 + p) * lda + i0 + i];         \
                    else                                                                                               \
                        for (int i = 0; i < mb; i++)                                                                   \
                            for (int p = 0; p < kb; p++) ap[i * kb + p] = a[(int64_t)(i0 + i) * lda + p0 + p];         \
                    for (int i = 0; i < mb; i += 4) {                                                                  \
                        int rows = mb - i < 4 ? mb - i : 4;                                                            \
                        T *c0 = acc, *c1 = acc + GEMM_NB, *c2 = acc + 2 * GEMM_NB, *c3 = acc + 3 * GEMM_NB;            \
                        for (int j = 0; j < 4 * GEMM_NB; j++) acc[j] = 0;                                              \
                        const T *a0 = ap + i * kb, *a1 = rows > 1 ? a0 + kb : a0, *a2 = rows > 2 ? a0 + 2 * kb : a0;   \
                        const T *a3 = rows > 3 ? a0 + 3 * kb : a0;                                                     \
                        for (int p = 0; p < kb; p++) {                                                                 \
                            const T *br = bp + p * nb;                                                                 \
                            T v0 = a0[p], v1 = a1[p], v2 = a2[p], v3 = a3[p];                                          \
                            for (int j = 0; j < nb; j++) {                                                             \
                                T bv = br[j];                                                                          \
                                c0[j] += v0 * bv;                                                                      \
                                c1[j] += v1 * bv;                                                                      \
                                c2[j] += v2 * bv;                                                                      \
                                c3[j] += v3 * bv;                                                                      \
                            }                                                                                          \
                        }                                                                                              \
                        for (int r = 0; r < rows; r++) {                                                               \
                            T *cr = c + (int64_t)(i0 + i + r) * ldc + j0;                                              \
                            const T *ar = acc + r * GEMM_NB;                                                           \
                            for (int j = 0; j < nb; j++) cr[j] += alpha * ar[j];                                       \
                        }                                                                                              \
                    }                                                                                                  \
                }                                                                                                      \
            }                                                                                                          \
            free(ap);                                                                                                  \
            free(bp);                                                                                                  \
            free(acc);                                                                                                 \
        }                                                                                                              \
    }

DEFINE_OWN_GEMM(fdnn_sgemm_own, float)
DEFINE_OWN_GEMM(fdnn_dgemm_own, double)

#ifdef FDNN_HAVE_CBLAS
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

/* A pthreads OpenBLAS and our OpenMP regions fight for the cores (OpenMP workers spin after
 * each region while OpenBLAS wakes its own pool), which cost 3x on a 2-core machine. So we
 * make OpenBLAS single-threaded once and split the GEMM over OpenMP threads ourselves. */
static void blas_single_thread(void)
{
    static int done;
    if (!done) {
#pragma omp critical(fdnn_blas_init)
        if (!done) {
            if (openblas_get_parallel() != 0) openblas_set_num_threads(1);
            done = 1;
        }
    }
}

#define DEFINE_BLAS_SPLIT(NAME, T, CBLAS)                                                                              \
    static void NAME(int ta, int tb, int m, int n, int k, T alpha, const T *a, int64_t lda, const T *b, int64_t ldb, T beta, \
                     T *c, int64_t ldc)                                                                                \
    {                                                                                                                  \
        blas_single_thread();                                                                                          \
        /* split the larger of m and n into column/row panels, one per thread */                                       \
        /* small, or called from inside a parallel region (images split over threads): one call */                   \
        int nt = gemm_threads(m, n, k);                                                                                \
        int split_n = n >= m;                                                                                          \
        int len = split_n ? n : m;                                                                                     \
        int chunk = (len + nt - 1) / nt;                                                                               \
        if (chunk < 16) chunk = 16;                                                                                    \
        int parts = (len + chunk - 1) / chunk;                                                                         \
        /* beta == 0: each part zeroes its own C block and BLAS adds to it (beta = 1), so that */                    \
        /* NaN in C can never leak through 0*NaN and OpenBLAS skips its own, slower, pass over C */                     \
        const int zero = beta == 0;                                                                                    \
        const T bb = zero ? (T)1 : beta;                                                                               \
        _Pragma("omp parallel for schedule(static) if (parts > 1)") for (int pi = 0; pi < parts; pi++)                 \
        {                                                                                                              \
            int o = pi * chunk, l = len - o < chunk ? len - o : chunk;                                                 \
            const int rows = split_n ? m : l, cols = split_n ? l : n;                                                  \
            T *cp = split_n ? c + o : c + (int64_t)o * ldc;                                                            \
            if (zero)                                                                                                  \
                for (int i = 0; i < rows; i++) memset(cp + (int64_t)i * ldc, 0, sizeof(T) * (size_t)cols);            \
            if (split_n)                                                                                               \
                CBLAS(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, l, k, alpha, a, (int)lda, \
                      tb ? b + (int64_t)o * ldb : b + o, (int)ldb, bb, cp, (int)ldc);                                  \
            else                                                                                                       \
                CBLAS(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, l, n, k, alpha,   \
                      ta ? a + o : a + (int64_t)o * lda, (int)lda, b, (int)ldb, bb, cp, (int)ldc);                     \
        }                                                                                                              \
    }

DEFINE_BLAS_SPLIT(blas_sgemm, float, cblas_sgemm)
DEFINE_BLAS_SPLIT(blas_dgemm, double, cblas_dgemm)
#endif

int fdnn_cpu_threads(void)
{
#ifdef FDNN_HAVE_OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* The streamed-B kernels (gemm_panel_avx512.c, gemm_panel_avx2.c) where BLAS's packing of B
 * dominates: B not transposed with at least one full panel (48 columns for AVX-512, 24 for AVX2),
 * a reduction short enough for a B panel to stay in L1 (k <= 256), leading dimensions at least
 * the row lengths. Longer reductions up to 1024 go through it too, in chunks of 256 B rows, when
 * C has at least eight panels: NCHW strided 1x1 backward data (256 x 784 x 512 per image,
 * rn50_1x1s2_256_512_56) 1.14 -> 1.07 ms at N=1 (level at N=8), while the 49 columns of
 * rn50_1x1_2048_512_7's backward data ran at 0.11 TFLOP/s through it against 0.15 through BLAS
 * (whence the eight panels; AVX-512 figures). Columns split over the OpenMP threads in whole
 * panels (one call when already inside a parallel region). FREEDNN_CPU_PANEL_GEMM=0 turns it
 * off, FREEDNN_CPU_PANEL_KMAX sets the longest reduction (comparisons; read once). Returns 1 when
 * it ran. */
#if defined(FDNN_HAVE_AVX512) || defined(FDNN_HAVE_AVX2)
void fdnn_sgemm_panel_drive(const fdnn_panel_tile *full, const fdnn_panel_tile *part, int nb, int kc, int mr, int ta, int m, int j0, int j1,
                            int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    const int64_t sam = ta ? 1 : lda, saq = ta ? lda : 1; /* A(i, q) = a[i*sam + q*saq] */
    for (int j = j0; j < j1; j += nb) {
        const int nleft = j1 - j < nb ? j1 - j : nb;
        const fdnn_panel_tile *fns = nleft == nb ? full : part;
        for (int q0 = 0; q0 < k; q0 += kc) {
            const int kn = k - q0 < kc ? k - q0 : kc;
            const float ab[2] = {alpha, q0 ? 1.0f : beta};
            for (int i = 0; i < m; i += mr) {
                const int rows = m - i < mr ? m - i : mr;
                fns[rows](kn, a + (int64_t)i * sam + (int64_t)q0 * saq, sam, saq, b + (int64_t)q0 * ldb + j, ldb, c + (int64_t)i * ldc + j, ldc,
                          nleft, ab);
            }
        }
    }
}

typedef void (*panel_fn)(int, int, int, int, int, float, const float *, int64_t, const float *, int64_t, float, float *, int64_t);
/* Rows of C split over nt threads in blocks of whole mr-row tiles, each thread over all columns */
static void row_blocks(panel_fn fn, int mr, int nt, int ta, int m, int n, int k, float alpha, const float *a, int64_t lda, const float *b,
                       int64_t ldb, float beta, float *c, int64_t ldc)
{
    const int per = (m / nt + mr - 1) / mr * mr;
    _Pragma("omp parallel for schedule(static)") for (int t = 0; t < nt; t++)
    {
        const int i0 = t * per, i1 = t == nt - 1 || (t + 1) * per > m ? m : (t + 1) * per;
        if (i0 < i1) fn(ta, i1 - i0, 0, n, k, alpha, ta ? a + i0 : a + (int64_t)i0 * lda, lda, b, ldb, beta, c + (int64_t)i0 * ldc, ldc);
    }
}

/* Columns of C split over nt threads (at most one a panel) in whole nb-column panels; where the
 * panels do not divide evenly over the threads and there are at least 8 row tiles a thread, rows
 * instead (NCHW strided 1x1 forward, 784 columns = 17 panels of 48: 9 / 8 left one thread idle
 * 6% of the call) */
static void panel_columns(panel_fn fn, int nb, int mr, int nt, int ta, int m, int n, int k, float alpha, const float *a, int64_t lda,
                          const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    const int panels = (n + nb - 1) / nb;
    if (nt > panels) nt = panels;
    const int per = (panels + nt - 1) / nt;
    if (nt > 1 && per * nt > panels && m >= 8 * mr * nt) {
        row_blocks(fn, mr, nt, ta, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    _Pragma("omp parallel for schedule(static) if (nt > 1)") for (int t = 0; t < nt; t++)
    {
        const int j0 = t * per * nb, j1 = (t + 1) * per * nb < n ? (t + 1) * per * nb : n;
        if (j0 < j1) fn(ta, m, j0, j1, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
}
static int panel_sgemm(int ta, int tb, int m, int n, int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                       float *c, int64_t ldc)
{
    static int isa = -1; /* 0: off, 1: AVX2, 2: AVX-512 */
    if (isa < 0) {
        const int on = fdnn_env_int("FREEDNN_CPU_PANEL_GEMM", 1) && !fdnn_env_int("FREEDNN_CPU_OWN_GEMM", 0);
        isa = !on ? 0 : fdnn_cpu_has_avx512() ? 2 : fdnn_cpu_has_avx2() ? 1 : 0;
    }
    static int kmax = -1;
    if (kmax < 0) kmax = fdnn_env_int("FREEDNN_CPU_PANEL_KMAX", 1024);
    panel_fn fn = NULL;
    int nb = 0;
#ifdef FDNN_HAVE_AVX512
    if (isa == 2) fn = fdnn_sgemm_panel_avx512, nb = FDNN_PANEL_NB;
#endif
#ifdef FDNN_HAVE_AVX2
    if (isa == 1) fn = fdnn_sgemm_panel_avx2, nb = FDNN_PANEL2_NB;
#endif
    if (!fn || tb || n < nb || k < 1 || k > kmax) return 0;
    if (k > FDNN_PANEL_KC && n < 8 * nb) return 0; /* see above */
    /* AVX2: one reduction chunk (k <= 64), and at most 256 rows or 256 columns, else BLAS. Zen 3,
     * 2 threads, BLAS -> streamed, ms: NCHW 1x1 64->64 56x56 forward N=1 0.207 -> 0.142, N=8 1.65 -> 1.14,
     * 64->256 forward 0.77 -> 0.54, backward data 64->64 0.205 -> 0.152, the stem's backward
     * data 2.26 -> 1.82; but longer reductions re-read C per chunk (strided 1x1 256->512
     * backward data, k = 512: N=8 10.6 -> 12.2; 1x1 2048->512 7x7 backward filter N=8, k = 392:
     * 5.3 -> 9.5) and 512 rows x 2048 columns (the same N=1, k = 49: 0.89 -> 0.98) lose, while
     * many rows over few columns win (the stem's NHWC backward data, 12544 x 147, k = 64: N=1
     * 3.18 -> 2.96, N=8 25.9 -> 24.0) */
    if (isa == 1 && (k > FDNN_PANEL2_KC || (m > 256 && n > 256))) return 0;
    if (ldb < n || ldc < n || lda < (ta ? m : k)) return 0;
    panel_columns(fn, nb, isa == 2 ? 8 : 4, gemm_threads(m, n, k), ta, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return 1;
}
#endif

#if defined(FDNN_HAVE_AVX512) || defined(FDNN_HAVE_AVX2)
/* 1 when OpenBLAS would run a kernel older than the CPU's SIMD: an OpenBLAS built with
 * DYNAMIC_ARCH picks its kernels by CPU model and falls back to SSE3 ("Prescott") on models newer
 * than itself (Debian 12's 0.3.21 on Emerald Rapids, model 207), where its SGEMM runs 3-5x
 * slower than oneDNN. No BLAS at all counts too. FREEDNN_CPU_BLAS_WEAK=0/1 overrides (tests,
 * comparisons); read once. 0 where no streamed-B kernel is built (conv_cpu.h). */
int fdnn_cpu_blas_weak(void)
{
    static int weak = -1;
    if (weak < 0) {
        int w = fdnn_env_int("FREEDNN_CPU_BLAS_WEAK", -1);
        if (w < 0) {
            w = 1;
#ifdef FDNN_HAVE_CBLAS
            w = fdnn_cpu_has_avx2() && !fdnn_cpu_blas_core_ok(openblas_get_corename());
#endif
        }
        weak = w != 0;
    }
    return weak;
}

typedef void (*transpose_fn)(const float *s, int64_t lds, int rows, int cols, float *d, int64_t ldd);
/* Rows q0..q1-1 of op(B) into bt (row stride n): a transposed B through the ISA's register
 * transposes (tr), anything else element by element */
static void copy_b(transpose_fn tr, int tb, const float *b, int64_t ldb, int q0, int q1, int n, float *bt)
{
    if (tb) {
        tr(b + q0, ldb, n, q1 - q0, bt + (int64_t)q0 * n, n);
        return;
    }
    for (int q = q0; q < q1; q++)
        for (int j = 0; j < n; j++) bt[(int64_t)q * n + j] = b[(int64_t)q * ldb + j];
}

/* Where BLAS is weak: every FLOAT GEMM on the streamed-B kernels. A transposed B is copied into
 * a k x n buffer first (one transpose, as BLAS's packing would do); any reduction length runs in
 * the kernel's chunks. Threads take whole panels of columns where there are at least two panels
 * a thread; a small C over a long reduction is split along the reduction (below); otherwise
 * blocks of rows. Returns 0 (nothing done) where the kernels are off or the allocation fails. */
static int panel_sgemm_any(int ta, int tb, int m, int n, int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                           float beta, float *c, int64_t ldc)
{
    panel_fn fn = NULL;
    transpose_fn tr = NULL;
    int nb = 0, mr = 8;
#ifdef FDNN_HAVE_AVX512
    if (fdnn_cpu_has_avx512()) {
        /* 64-column panels where they leave fewer columns idle than 48-column ones: NCHW 1x1
         * backward filter (n = C), Emerald Rapids, ratio to oneDNN: 64->64 56x56 N=1 2.02 -> 1.66,
         * N=8 2.02 -> 1.68, 64->256 1.79 -> 1.29 / 1.36 */
        const int p48 = (n + FDNN_PANEL_NB - 1) / FDNN_PANEL_NB * FDNN_PANEL_NB, p64 = (n + FDNN_PANEL64_NB - 1) / FDNN_PANEL64_NB * FDNN_PANEL64_NB;
        static int use64 = -1; /* FREEDNN_CPU_PANEL64=0: 48 columns always (comparisons; read once) */
        if (use64 < 0) use64 = fdnn_env_int("FREEDNN_CPU_PANEL64", 1) != 0;
        if (use64 && p64 < p48) fn = fdnn_sgemm_panel64_avx512, nb = FDNN_PANEL64_NB, mr = 6;
        else fn = fdnn_sgemm_panel_avx512, nb = FDNN_PANEL_NB;
        tr = fdnn_transpose_avx512;
    }
#endif
#ifdef FDNN_HAVE_AVX2
    if (!fn && fdnn_cpu_has_avx2()) fn = fdnn_sgemm_panel_avx2, nb = FDNN_PANEL2_NB, mr = 4, tr = fdnn_transpose_avx2;
#endif
    if (!fn || k < 1 || fdnn_env_int("FREEDNN_CPU_OWN_GEMM", 0) || lda < (ta ? m : k) || ldc < n) return 0;
    const int copy = tb || ldb < n, panels = (n + nb - 1) / nb, nt = gemm_threads(m, n, k);
    if (nt > 1 && panels < 2 * nt && (double)m * n <= 65536.0 && k >= 256 * nt) {
        /* A small C over a long reduction (NCHW 1x1 weight gradients, 64 x 64 over 3136 pixels:
         * one panel, and 64 rows split 36 / 28 in 6-row tiles): each thread takes a slice of the
         * reduction, copies its own rows of B and sums into its own C (thread 0 into C with
         * beta, the others into scratch), then the slices are added in thread order
         * (deterministic for a given thread count) */
        const int per = ((k + nt - 1) / nt + 15) / 16 * 16;
        const size_t nbt = copy ? (size_t)k * n : 0, mn = (size_t)m * n;
        float *buf = malloc(sizeof(float) * (nbt + (size_t)(nt - 1) * mn));
        if (!buf) return 0;
        float *bt = buf, *part = buf + nbt;
        _Pragma("omp parallel for schedule(static) num_threads(nt)") for (int t = 0; t < nt; t++)
        {
            const int q0 = t * per < k ? t * per : k, q1 = q0 + per < k ? q0 + per : k;
            float *ct = t ? part + (size_t)(t - 1) * mn : c;
            const int64_t ldct = t ? n : ldc;
            if (q0 >= q1) {
                if (t) memset(ct, 0, sizeof(float) * mn);
            } else {
                const float *bb = b + (int64_t)q0 * ldb;
                int64_t ldbb = ldb;
                if (copy) {
                    copy_b(tr, tb, b, ldb, q0, q1, n, bt);
                    bb = bt + (int64_t)q0 * n, ldbb = n;
                }
                fn(ta, m, 0, n, q1 - q0, alpha, ta ? a + (int64_t)q0 * lda : a + q0, lda, bb, ldbb, t ? 0.0f : beta, ct, ldct);
            }
        }
        _Pragma("omp parallel for schedule(static) num_threads(nt)") for (int i = 0; i < m; i++)
            for (int t = 1; t < nt; t++) {
                const float *pr = part + (size_t)(t - 1) * mn + (size_t)i * n;
                for (int j = 0; j < n; j++) c[(int64_t)i * ldc + j] += pr[j];
            }
        free(buf);
        return 1;
    }
    float *bt = NULL;
    if (copy) {
        bt = malloc(sizeof(float) * (size_t)k * (size_t)n);
        if (!bt) return 0;
        const int chunks = (k + 63) / 64;
        _Pragma("omp parallel for schedule(static) if ((double)k * n > 65536.0 && !fdnn_in_parallel())")
        for (int qc = 0; qc < chunks; qc++) copy_b(tr, tb, b, ldb, qc * 64, qc * 64 + 64 < k ? qc * 64 + 64 : k, n, bt);
        b = bt, ldb = n;
    }
    if (nt > 1 && panels < 2 * nt && m >= 2 * mr * nt) row_blocks(fn, mr, nt, ta, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); /* few panels */
    else panel_columns(fn, nb, mr, nt, ta, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    free(bt);
    return 1;
}
#else
int fdnn_cpu_blas_weak(void) { return 0; }
#endif

void fdnn_sgemm(int ta, int tb, int m, int n, int k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                float *c, int64_t ldc)
{
    if (m <= 0 || n <= 0) return;
#if defined(FDNN_HAVE_AVX512) || defined(FDNN_HAVE_AVX2)
    if (fdnn_cpu_blas_weak() && panel_sgemm_any(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
    if (panel_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
#endif
#ifdef FDNN_HAVE_CBLAS
    int64_t la = lda, lb = ldb, lc = ldc;
    if (k > 0 && blas_ok(ta, tb, m, n, k, &la, &lb, &lc)) {
        blas_sgemm(ta, tb, m, n, k, alpha, a, la, b, lb, beta, c, lc);
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
        blas_dgemm(ta, tb, m, n, k, alpha, a, la, b, lb, beta, c, lc);
        return;
    }
#endif
    fdnn_dgemm_own(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
