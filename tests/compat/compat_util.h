/* Small helpers shared by the compat probes (conv_compat.c, ops_compat.c): host-side
 * dtype conversion, deterministic device fills and the one-line-per-case report that
 * compare.py parses: "name status NAME n N sum S asum A samples v1 ... v16".
 * Header-only (static inline functions, so a probe need not use all of them) so each probe stays a single translation unit that
 * builds against FreeDNN's or NVIDIA's cudnn.h alike. */
#ifndef COMPAT_UTIL_H
#define COMPAT_UTIL_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

static inline size_t esize(cudnnDataType_t t)
{
    return t == CUDNN_DATA_DOUBLE ? 8 : (t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_INT32) ? 4 : 2;
}

static inline unsigned short to_half(float f)
{ /* exact for the small integers / quarter-integers used here */
    unsigned u;
    memcpy(&u, &f, 4);
    if (f == 0) return (unsigned short)((u >> 16) & 0x8000);
    unsigned s = (u >> 16) & 0x8000, e = ((u >> 23) & 0xff) - 127 + 15, m = (u >> 13) & 0x3ff;
    return (unsigned short)(s | (e << 10) | m);
}
static inline float from_half(unsigned short h)
{
    unsigned s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
    if (e == 0) { float f = ldexpf((float)m, -24); return s ? -f : f; }
    if (e == 31) return m ? NAN : (s ? -INFINITY : INFINITY);
    u = s | ((e - 15 + 127) << 23) | (m << 13);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline void put(void *b, cudnnDataType_t t, size_t i, double v)
{
    if (t == CUDNN_DATA_DOUBLE) ((double *)b)[i] = v;
    else if (t == CUDNN_DATA_FLOAT) ((float *)b)[i] = (float)v;
    else if (t == CUDNN_DATA_INT32) ((int *)b)[i] = (int)v;
    else if (t == CUDNN_DATA_HALF) ((unsigned short *)b)[i] = to_half((float)v);
    else { float f = (float)v; unsigned u; memcpy(&u, &f, 4); ((unsigned short *)b)[i] = (unsigned short)(u >> 16); }
}
static inline double get(const void *b, cudnnDataType_t t, size_t i)
{
    if (t == CUDNN_DATA_DOUBLE) return ((const double *)b)[i];
    if (t == CUDNN_DATA_FLOAT) return ((const float *)b)[i];
    if (t == CUDNN_DATA_INT32) return ((const int *)b)[i];
    if (t == CUDNN_DATA_HALF) return from_half(((const unsigned short *)b)[i]);
    unsigned u = (unsigned)((const unsigned short *)b)[i] << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Uploads n values v(i) = (pseudo-random integer in [-2, 2]) * scale + offset. */
static inline void *dev_fill_so(size_t n, cudnnDataType_t t, unsigned seed, double scale, double offset)
{
    void *h = malloc(n * esize(t) + 1), *d = NULL;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        put(h, t, i, (double)((int)((seed >> 16) % 5) - 2) * scale + offset);
    }
    cudaMalloc(&d, n * esize(t) + 1);
    cudaMemcpy(d, h, n * esize(t), cudaMemcpyHostToDevice);
    free(h);
    return d;
}
static inline void *dev_fill(size_t n, cudnnDataType_t t, unsigned seed) { return dev_fill_so(n, t, seed, 1, 0); }

/* Uploads n pairwise distinct values (a permutation of 0..n-1, scaled, centred), so max
 * reductions and max pooling have no ties and their indices / gradients are unambiguous. */
static inline void *dev_fill_distinct(size_t n, cudnnDataType_t t, double scale)
{
    void *h = malloc(n * esize(t) + 1), *d = NULL;
    size_t step = 7919 % n ? 7919 : 7907; /* primes; coprime with n unless n is a multiple */
    for (size_t i = 0; i < n; i++) put(h, t, i, ((double)((i * step) % n) - (double)n / 2) * scale);
    cudaMalloc(&d, n * esize(t) + 1);
    cudaMemcpy(d, h, n * esize(t), cudaMemcpyHostToDevice);
    free(h);
    return d;
}

/* Uploads host values as they are (n elements of type t). */
static inline void *dev_upload(const void *host, size_t bytes)
{
    void *d = NULL;
    cudaMalloc(&d, bytes ? bytes : 1);
    cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice);
    return d;
}
static inline void *dev_alloc(size_t bytes)
{
    void *d = NULL;
    cudaMalloc(&d, bytes ? bytes : 1);
    return d;
}
/* dev_alloc, zero-filled: for outputs and workspaces, so no case reads uninitialised memory */
static inline void *dev_zero(size_t bytes)
{
    void *d = dev_alloc(bytes);
    cudaMemset(d, 0, bytes ? bytes : 1);
    return d;
}

/* One line: "<name>/<dir> status NAME" plus, on success, n, sum, asum and 16 samples. */
static inline void report(const char *name, const char *dir, cudnnStatus_t st, const void *d, size_t n, cudnnDataType_t t)
{
    printf("%s/%s status %s", name, dir, cudnnGetErrorString(st));
    if (st == CUDNN_STATUS_SUCCESS && n > 0) {
        void *h = malloc(n * esize(t));
        cudaDeviceSynchronize();
        cudaMemcpy(h, d, n * esize(t), cudaMemcpyDeviceToHost);
        double sum = 0, asum = 0;
        for (size_t i = 0; i < n; i++) {
            sum += get(h, t, i);
            asum += fabs(get(h, t, i));
        }
        printf(" n %zu sum %.6f asum %.6f samples", n, sum, asum);
        for (int j = 0; j < 16; j++) printf(" %.6f", get(h, t, (size_t)j * 7919u % n));
        free(h);
    }
    printf("\n");
    fflush(stdout);
}

/* report() of a host float array (values computed on the host from a library's outputs) */
static inline void report_host(const char *name, const char *dir, cudnnStatus_t st, const float *h, size_t n)
{
    void *d = dev_alloc(n * 4 + 4); /* never zero bytes; copies only the n values */
    cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice);
    report(name, dir, st, d, n, CUDNN_DATA_FLOAT);
    cudaFree(d);
}
#endif
