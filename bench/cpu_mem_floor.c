/* The memory floor of a CPU call that must read R bytes and write W bytes: the time this machine
 * takes, with the benchmark's threads (OpenMP, each thread its own contiguous share, as the
 * convolution kernels split their work), to
 *   copy   R bytes into W bytes (memcpy per thread; R == W),
 *   read   R bytes (a sum over 64-bit words, so that it cannot be skipped),
 *   write  W bytes (memset),
 * repeated on the same buffers, so that warm caches help exactly as they help a benchmark that
 * calls one layer again and again. Prints the minimum over the repetitions and the GB/s.
 *   cpu_mem_floor [read_bytes [write_bytes [reps]]]   (default: one fp32 tensor of the
 *   depthwise layer 1x144x56x56, 1806336 bytes, both ways, 2000 reps)
 * Used in docs/performance.md for issue #8's depthwise target: a depthwise 3x3 forward reads x
 * and writes y (the copy floor), its weight gradient reads x and dy (twice the read floor). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static double now(void)
{
#ifdef _OPENMP
    return omp_get_wtime();
#else
    return (double)clock() / CLOCKS_PER_SEC;
#endif
}

static int threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static int thread_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* sum of p[lo..hi): vectorised (-O3), and on x86-64 cloned for AVX-512 / AVX2 so that the read
 * runs at the width the kernels load with (SSE2 alone reads L2 about a fifth slower) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#endif
static uint64_t sum_words(const uint64_t *p, size_t lo, size_t hi)
{
    uint64_t s = 0;
    for (size_t i = lo; i < hi; i++) s += p[i];
    return s;
}

/* [lo, hi) of n bytes for thread t of nt, 64-byte aligned cuts */
static void share(size_t n, int t, int nt, size_t *lo, size_t *hi)
{
    *lo = n * (size_t)t / (size_t)nt / 64 * 64;
    *hi = t == nt - 1 ? n : n * (size_t)(t + 1) / (size_t)nt / 64 * 64;
}

int main(int argc, char **argv)
{
    size_t rb = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)144 * 56 * 56 * 4;
    size_t wb = argc > 2 ? strtoull(argv[2], NULL, 10) : rb;
    int reps = argc > 3 ? atoi(argv[3]) : 2000;
    if (rb < 64 || wb < 64 || reps < 1) {
        fprintf(stderr, "usage: cpu_mem_floor [read_bytes >= 64 [write_bytes >= 64 [reps >= 1]]]\n");
        return 2;
    }
    rb = (rb + 7) / 8 * 8;
    unsigned char *src = aligned_alloc(64, (rb + 63) / 64 * 64), *dst = aligned_alloc(64, (wb + 63) / 64 * 64);
    if (!src || !dst) {
        fprintf(stderr, "cpu_mem_floor: out of memory\n");
        return 1;
    }
    memset(src, 1, rb);
    memset(dst, 0, wb);
    const int nt = threads();
    volatile uint64_t sink = 0;
    printf("cpu_mem_floor: %d thread(s), read %zu bytes, write %zu bytes, min of %d reps\n", nt, rb, wb, reps);
    for (int mode = 0; mode < 3; mode++) {
        if (mode == 0 && rb != wb) continue;
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            double t0 = now();
#pragma omp parallel
            {
                size_t lo, hi;
                int t = thread_id();
                if (mode == 0) {
                    share(rb, t, nt, &lo, &hi);
                    memcpy(dst + lo, src + lo, hi - lo);
                } else if (mode == 1) {
                    share(rb / 8, t, nt, &lo, &hi);
                    const uint64_t s = sum_words((const uint64_t *)src, lo, hi);
                    if (s == 42) sink = s;
                } else {
                    share(wb, t, nt, &lo, &hi);
                    memset(dst + lo, r & 0xff, hi - lo);
                }
            }
            double t = now() - t0;
            if (t < best) best = t;
        }
        const double bytes = mode == 0 ? (double)rb + (double)wb : mode == 1 ? (double)rb : (double)wb;
        printf("  %-6s %9.2f us  %7.1f GB/s\n", mode == 0 ? "copy" : mode == 1 ? "read" : "write", best * 1e6, bytes / best / 1e9);
    }
    (void)sink;
    free(src);
    free(dst);
    return 0;
}
