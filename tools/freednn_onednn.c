/* oneDNN glue of freednn bench --vs-onednn (see freednn_onednn.h): plain memory descriptors
 * for the activations (nchw/nhwc, never format `any`: the layout the cuDNN API hands us), a
 * convolution primitive per direction, executed on the caller's buffers. The filter is plain
 * too (oihw/ohwi) at the API; oneDNN's JIT kernels only take their blocked filter format
 * (with a plain one it falls back to its reference loops), so the primitive gets `any` for
 * the filter and every timed call includes the reorder from/to the caller's plain filter, as
 * FreeDNN packs its filter on every call. Plus the FMA peak measurement. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <oneapi/dnnl/dnnl.h>
#include "freednn_dev.h"
#include "freednn_onednn.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

const char *fdt_onednn_version(void)
{
    static char buf[32];
    const dnnl_version_t *v = dnnl_version();
    snprintf(buf, sizeof buf, "%d.%d.%d", v->major, v->minor, v->patch);
    return buf;
}

#define CK(call)                                                                            \
    do {                                                                                    \
        dnnl_status_t s_ = (call);                                                          \
        if (s_ != dnnl_success) {                                                           \
            snprintf(err, err_n, "oneDNN: %s failed with status %d", #call, (int)s_);       \
            goto out;                                                                       \
        }                                                                                   \
    } while (0)

int fdt_onednn_time(int dir, const fdt_conv *c, int nhwc, void *x, void *w, void *y, int warmup, int iters, double *tmin,
                    double *tmed, char *err, size_t err_n)
{
    int rc = -1;
    dnnl_engine_t eng = NULL;
    dnnl_stream_t st = NULL;
    dnnl_primitive_desc_t fpd = NULL, pd = NULL;
    dnnl_primitive_t prim = NULL;
    dnnl_memory_t mx = NULL, mw = NULL, my = NULL, mwp = NULL;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t reo = NULL;
    double *t = NULL;
    int P = fdt_out_h(c), Q = fdt_out_w(c), g = c->g;
    dnnl_memory_desc_t xmd, wmd, ymd;
    dnnl_dims_t xd = { c->n, c->c, c->h, c->w }, yd = { c->n, c->k, P, Q };
    dnnl_dims_t wd1 = { c->k, c->c, c->r, c->s }, wdg = { g, c->k / g, c->c / g, c->r, c->s };
    dnnl_dims_t strides = { c->sh, c->sw }, dil = { c->dh - 1, c->dw - 1 }, pl = { c->ph, c->pw };
    dnnl_dims_t pr = { (P - 1) * c->sh + (c->r - 1) * c->dh + 1 - c->h - c->ph, (Q - 1) * c->sw + (c->s - 1) * c->dw + 1 - c->w - c->pw };
    CK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    CK(dnnl_stream_create(&st, eng, dnnl_stream_default_flags));
    CK(dnnl_memory_desc_init_by_tag(&xmd, 4, xd, dnnl_f32, nhwc ? dnnl_nhwc : dnnl_nchw));
    CK(dnnl_memory_desc_init_by_tag(&ymd, 4, yd, dnnl_f32, nhwc ? dnnl_nhwc : dnnl_nchw));
    if (g == 1) CK(dnnl_memory_desc_init_by_tag(&wmd, 4, wd1, dnnl_f32, nhwc ? dnnl_ohwi : dnnl_oihw));
    else CK(dnnl_memory_desc_init_by_tag(&wmd, 5, wdg, dnnl_f32, nhwc ? dnnl_gohwi : dnnl_goihw));
    dnnl_memory_desc_t wany;
    CK(dnnl_memory_desc_init_by_tag(&wany, g == 1 ? 4 : 5, g == 1 ? wd1 : wdg, dnnl_f32, dnnl_format_tag_any));
    dnnl_convolution_desc_t fd, bd;
    CK(dnnl_dilated_convolution_forward_desc_init(&fd, dir == 0 ? dnnl_forward_inference : dnnl_forward_training, dnnl_convolution_direct,
                                                  &xmd, &wany, NULL, &ymd, strides, dil, pl, pr));
    CK(dnnl_primitive_desc_create(&fpd, &fd, NULL, eng, NULL));
    if (dir == 0) {
        pd = fpd;
        fpd = NULL;
    } else if (dir == 1) {
        CK(dnnl_dilated_convolution_backward_data_desc_init(&bd, dnnl_convolution_direct, &xmd, &wany, &ymd, strides, dil, pl, pr));
        CK(dnnl_primitive_desc_create(&pd, &bd, NULL, eng, fpd));
    } else {
        CK(dnnl_dilated_convolution_backward_weights_desc_init(&bd, dnnl_convolution_direct, &xmd, &wany, NULL, &ymd, strides, dil, pl, pr));
        CK(dnnl_primitive_desc_create(&pd, &bd, NULL, eng, fpd));
    }
    CK(dnnl_primitive_create(&prim, pd));
    CK(dnnl_memory_create(&mx, &xmd, eng, x));
    CK(dnnl_memory_create(&mw, &wmd, eng, w));
    const dnnl_memory_desc_t *pwmd = dnnl_primitive_desc_query_md(pd, dir == 2 ? dnnl_query_diff_weights_md : dnnl_query_weights_md, 0);
    int need_reorder = !dnnl_memory_desc_equal(pwmd, &wmd);
    if (need_reorder) {
        CK(dnnl_memory_create(&mwp, pwmd, eng, DNNL_MEMORY_ALLOCATE));
        if (dir == 2) CK(dnnl_reorder_primitive_desc_create(&rpd, pwmd, eng, &wmd, eng, NULL));
        else CK(dnnl_reorder_primitive_desc_create(&rpd, &wmd, eng, pwmd, eng, NULL));
        CK(dnnl_primitive_create(&reo, rpd));
    }
    dnnl_exec_arg_t rargs[2] = { { DNNL_ARG_FROM, dir == 2 ? mwp : mw }, { DNNL_ARG_TO, dir == 2 ? mw : mwp } };
    dnnl_memory_t wuse = need_reorder ? mwp : mw;
    CK(dnnl_memory_create(&my, &ymd, eng, y));
    dnnl_exec_arg_t args[3];
    if (dir == 0) {
        args[0] = (dnnl_exec_arg_t){ DNNL_ARG_SRC, mx };
        args[1] = (dnnl_exec_arg_t){ DNNL_ARG_WEIGHTS, wuse };
        args[2] = (dnnl_exec_arg_t){ DNNL_ARG_DST, my };
    } else if (dir == 1) {
        args[0] = (dnnl_exec_arg_t){ DNNL_ARG_DIFF_SRC, mx };
        args[1] = (dnnl_exec_arg_t){ DNNL_ARG_WEIGHTS, wuse };
        args[2] = (dnnl_exec_arg_t){ DNNL_ARG_DIFF_DST, my };
    } else {
        args[0] = (dnnl_exec_arg_t){ DNNL_ARG_SRC, mx };
        args[1] = (dnnl_exec_arg_t){ DNNL_ARG_DIFF_WEIGHTS, wuse };
        args[2] = (dnnl_exec_arg_t){ DNNL_ARG_DIFF_DST, my };
    }
#define ONE_CALL()                                                                           \
    do {                                                                                     \
        if (reo && dir != 2) CK(dnnl_primitive_execute(reo, st, 2, rargs));                  \
        CK(dnnl_primitive_execute(prim, st, 3, args));                                       \
        if (reo && dir == 2) CK(dnnl_primitive_execute(reo, st, 2, rargs));                  \
        CK(dnnl_stream_wait(st));                                                            \
    } while (0)
    for (int i = 0; i < warmup + 1; i++) ONE_CALL();
    t = malloc(sizeof(double) * (size_t)iters);
    for (int i = 0; i < iters; i++) {
        double t0 = fdt_now();
        ONE_CALL();
        t[i] = fdt_now() - t0;
    }
    qsort(t, (size_t)iters, sizeof(double), cmp_d);
    *tmin = t[0];
    *tmed = iters % 2 ? t[iters / 2] : 0.5 * (t[iters / 2 - 1] + t[iters / 2]);
    rc = 0;
out:
    free(t);
    if (reo) dnnl_primitive_destroy(reo);
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    if (mwp) dnnl_memory_destroy(mwp);
    if (mx) dnnl_memory_destroy(mx);
    if (mw) dnnl_memory_destroy(mw);
    if (my) dnnl_memory_destroy(my);
    if (prim) dnnl_primitive_destroy(prim);
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (fpd) dnnl_primitive_desc_destroy(fpd);
    if (st) dnnl_stream_destroy(st);
    if (eng) dnnl_engine_destroy(eng);
    return rc;
}

/* ------------------------------------------------------------------ FMA peak */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PEAK_ITERS 4000000L
/* 12 independent chains of 16-lane (8-lane) FMAs a_i = a_i * m + b: enough to cover latency x
 * throughput of two pipes. The FMAs are written in one asm statement so that the compiler
 * issues exactly twelve per iteration. With intrinsics and equal starting values it used to
 * merge the chains it could see through (six were pinned by an empty asm, the other six
 * computed the same values): the loop ran 7 FMAs while 12 were counted, which read 1.5 times
 * the real rate on 4-cycle-latency cores (513 instead of about 350 GFLOP/s on 2 Emerald
 * Rapids vCPUs; docs/performance.md, twentieth session). */
#define FMA12_ASM(I)                                                                                       \
    __asm__ volatile(I " %[m], %[b], %[a0]\n\t" I " %[m], %[b], %[a1]\n\t" I " %[m], %[b], %[a2]\n\t"     \
                     I " %[m], %[b], %[a3]\n\t" I " %[m], %[b], %[a4]\n\t" I " %[m], %[b], %[a5]\n\t"     \
                     I " %[m], %[b], %[a6]\n\t" I " %[m], %[b], %[a7]\n\t" I " %[m], %[b], %[a8]\n\t"     \
                     I " %[m], %[b], %[a9]\n\t" I " %[m], %[b], %[a10]\n\t" I " %[m], %[b], %[a11]"         \
                     : [a0] "+v"(a0), [a1] "+v"(a1), [a2] "+v"(a2), [a3] "+v"(a3), [a4] "+v"(a4),             \
                       [a5] "+v"(a5), [a6] "+v"(a6), [a7] "+v"(a7), [a8] "+v"(a8), [a9] "+v"(a9),             \
                       [a10] "+v"(a10), [a11] "+v"(a11)                                                      \
                     : [m] "v"(m), [b] "v"(b))
__attribute__((target("avx512f"))) static float fma512(float seed)
{
    const __m512 m = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    __m512 a0 = _mm512_set1_ps(seed), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0,
           a11 = a0;
    for (long it = 0; it < PEAK_ITERS; it++) FMA12_ASM("vfmadd132ps");
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    return _mm512_reduce_add_ps(s);
}
__attribute__((target("avx2,fma"))) static float fma256(float seed)
{
    const __m256 m = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    __m256 a0 = _mm256_set1_ps(seed), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0,
           a11 = a0;
    for (long it = 0; it < PEAK_ITERS; it++) FMA12_ASM("vfmadd132ps");
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
    float o[8], r = 0;
    _mm256_storeu_ps(o, s);
    for (int i = 0; i < 8; i++) r += o[i];
    return r;
}
static int use512;
static volatile float sink;
static void *peak_thread(void *arg)
{
    (void)arg;
    sink = use512 ? fma512(1.0f) : fma256(1.0f);
    return NULL;
}
/* With OMP_PROC_BIND set, libgomp binds the main thread to one CPU as it loads, and threads it
 * creates inherit that, so the measuring threads below would share one core (a 2-thread peak
 * read as a 1-thread one: 255 instead of 484 GFLOP/s on a 2-vCPU Xeon). Thread i is placed on
 * online CPU i instead (unplaced where the system refuses that CPU). */
#include <sched.h>
#include <unistd.h>

/* Runs fn on nthreads threads at once, five times; the best GFLOP/s for flops per thread. */
static double best_rate(int nthreads, void *(*fn)(void *), double flops)
{
    if (nthreads < 1) nthreads = 1;
    if (nthreads > 256) nthreads = 256;
    pthread_t th[256];
    double best = 0;
    const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    for (int rep = 0; rep < 5; rep++) {
        double t0 = fdt_now();
        for (int i = 0; i < nthreads; i++) {
            pthread_attr_t at;
            int placed = 0;
            if (ncpu >= nthreads && pthread_attr_init(&at) == 0) {
                cpu_set_t one;
                CPU_ZERO(&one);
                CPU_SET(i, &one);
                placed = pthread_attr_setaffinity_np(&at, sizeof one, &one) == 0 && pthread_create(&th[i], &at, fn, NULL) == 0;
                pthread_attr_destroy(&at);
            }
            if (!placed) pthread_create(&th[i], NULL, fn, NULL);
        }
        for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
        double gf = (double)nthreads * flops / (fdt_now() - t0) * 1e-9;
        if (gf > best) best = gf;
    }
    return best;
}
double fdt_fma_peak(int nthreads, const char **isa)
{
    __builtin_cpu_init();
    use512 = __builtin_cpu_supports("avx512f");
    int have256 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    *isa = use512 ? "AVX-512" : have256 ? "AVX2" : "none";
    if (!use512 && !have256) return 0;
    return best_rate(nthreads, peak_thread, (double)PEAK_ITERS * 12 * (use512 ? 16 : 8) * 2);
}

/* A GEMM inner loop with its operands in L1: a 48x8 register tile (3 vector loads and 8
 * broadcasts per 24 FMAs), K = 64 (a 12 KiB panel), run as long as the FMA loop: the practical
 * ceiling of a convolution's inner loop. Against the corrected register-only loop it runs at
 * 97-98% on 2 Emerald Rapids vCPUs (the 54-67% read in earlier sessions was against the
 * overstated peak above). */
#define L1_K 64
#define L1_REPS (PEAK_ITERS * 12 / (24 * L1_K))
__attribute__((target("avx512f"))) static float tile512(const float *A, const float *B)
{
    __m512 c[24];
    for (int i = 0; i < 24; i++) c[i] = _mm512_setzero_ps();
    for (long r = 0; r < L1_REPS; r++) {
        const float *a = A, *b = B;
        for (int k = 0; k < L1_K; k++, a += 48, b += 8) {
            const __m512 a0 = _mm512_load_ps(a), a1 = _mm512_load_ps(a + 16), a2 = _mm512_load_ps(a + 32);
#pragma GCC unroll 8
            for (int j = 0; j < 8; j++) {
                const __m512 x = _mm512_set1_ps(b[j]);
                c[3 * j] = _mm512_fmadd_ps(a0, x, c[3 * j]);
                c[3 * j + 1] = _mm512_fmadd_ps(a1, x, c[3 * j + 1]);
                c[3 * j + 2] = _mm512_fmadd_ps(a2, x, c[3 * j + 2]);
            }
        }
        __asm__ volatile("" : "+v"(c[0]), "+v"(c[1]), "+v"(c[2]));
    }
    __m512 s = c[0];
    for (int i = 1; i < 24; i++) s = _mm512_add_ps(s, c[i]);
    return _mm512_reduce_add_ps(s);
}
static void *tile_thread(void *arg)
{
    (void)arg;
    float *A = aligned_alloc(64, sizeof(float) * 48 * L1_K), *B = aligned_alloc(64, sizeof(float) * 8 * L1_K);
    if (A && B) {
        for (int i = 0; i < 48 * L1_K; i++) A[i] = 1e-3f * (float)(i % 7);
        for (int i = 0; i < 8 * L1_K; i++) B[i] = 1e-3f * (float)(i % 5);
        sink = tile512(A, B);
    }
    free(A);
    free(B);
    return NULL;
}
double fdt_l1_tile_peak(int nthreads)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f")) return 0;
    return best_rate(nthreads, tile_thread, (double)L1_REPS * L1_K * 24 * 16 * 2);
}
#else
double fdt_fma_peak(int nthreads, const char **isa)
{
    (void)nthreads;
    *isa = "none";
    return 0;
}
double fdt_l1_tile_peak(int nthreads)
{
    (void)nthreads;
    return 0;
}
#endif
