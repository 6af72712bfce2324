/* Implementation of the test harness (see th.h). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"
#ifdef FDNN_TEST_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

int th_passed, th_failed;

int th_check(int cond, const char *file, int line, const char *fmt, ...)
{
    if (cond) {
        th_passed++;
        return 1;
    }
    th_failed++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 0;
}

int th_check_status(cudnnStatus_t got, cudnnStatus_t want, const char *expr, const char *file, int line)
{
    char msg[1024] = "";
    /* read (and so clear) the last error only on a mismatch, so that a test can still
     * inspect the message of an expected failure */
    if (got != want) cudnnGetLastErrorString(msg, sizeof msg);
    return th_check(got == want, file, line, "%s returned %s, expected %s (last error: %s)", expr, cudnnGetErrorString(got),
                    cudnnGetErrorString(want), msg);
}

int th_finish(void)
{
    printf("%d passed, %d failed\n", th_passed, th_failed);
    return th_failed ? 1 : 0;
}

static uint64_t rng_state, rng_seed;

void th_seed(uint64_t dflt)
{
    const char *s = getenv("FREEDNN_TEST_SEED");
    rng_seed = rng_state = s ? strtoull(s, NULL, 0) : dflt;
    printf("seed %llu (set FREEDNN_TEST_SEED to reproduce)\n", (unsigned long long)rng_state);
}

int th_section(int s)
{
    const char *e = getenv("FREEDNN_TEST_SHARD");
    int i = 0, n = 1;
    if (e && (sscanf(e, "%d/%d", &i, &n) != 2 || n < 1 || i < 0 || i >= n)) {
        fprintf(stderr, "FREEDNN_TEST_SHARD=%s: expected i/n with 0 <= i < n\n", e);
        exit(2);
    }
    if (s % n != i) return 0;
    rng_state = rng_seed + 0x632be59bd9b4e019ull * (uint64_t)s;
    printf("section %d (shard %d/%d)\n", s, i, n);
    return 1;
}

uint64_t th_rand(void)
{ /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int th_randint(int lo, int hi) { return lo + (int)(th_rand() % (uint64_t)(hi - lo + 1)); }
double th_uniform(double lo, double hi) { return lo + (hi - lo) * ((double)(th_rand() >> 11) / 9007199254740992.0); }

cudnnHandle_t th_create_handle(void)
{
    cudnnHandle_t h = NULL;
    cudnnStatus_t st = cudnnCreate(&h);
    const char *want = getenv("FREEDNN_BACKEND");
    if (st != CUDNN_STATUS_SUCCESS) {
        char msg[1024];
        cudnnGetLastErrorString(msg, sizeof msg);
        if (want && strcmp(want, "cuda") == 0) {
            printf("skipped: no usable CUDA backend: %s\n", msg);
            exit(TH_SKIP);
        }
        fprintf(stderr, "cudnnCreate failed: %s\n", msg);
        exit(1);
    }
    printf("backend %s\n", freednnGetBackendName(h));
    return h;
}

int th_is_gpu(cudnnHandle_t h) { return strcmp(freednnGetBackendName(h), "cuda") == 0; }

void *th_alloc(cudnnHandle_t h, size_t bytes)
{
    if (bytes == 0) bytes = 1;
#ifdef FDNN_TEST_HAVE_CUDA
    if (th_is_gpu(h)) {
        void *p = NULL;
        if (cudaMalloc(&p, bytes) != cudaSuccess) {
            fprintf(stderr, "cudaMalloc(%zu) failed\n", bytes);
            exit(1);
        }
        return p;
    }
#endif
    (void)h;
    void *p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "malloc(%zu) failed\n", bytes);
        exit(1);
    }
    return p;
}

void th_free(cudnnHandle_t h, void *p)
{
#ifdef FDNN_TEST_HAVE_CUDA
    if (th_is_gpu(h)) {
        cudaFree(p);
        return;
    }
#endif
    (void)h;
    free(p);
}

void th_upload(cudnnHandle_t h, void *dst, const void *src, size_t bytes)
{
#ifdef FDNN_TEST_HAVE_CUDA
    if (th_is_gpu(h)) {
        cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
        return;
    }
#endif
    (void)h;
    memcpy(dst, src, bytes);
}

void th_download(cudnnHandle_t h, void *dst, const void *src, size_t bytes)
{
#ifdef FDNN_TEST_HAVE_CUDA
    if (th_is_gpu(h)) {
        if (cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
            fprintf(stderr, "cudaMemcpy device->host failed: %s\n", cudaGetErrorString(cudaGetLastError()));
            exit(1);
        }
        return;
    }
#endif
    (void)h;
    memcpy(dst, src, bytes);
}

void th_sync(cudnnHandle_t h)
{
#ifdef FDNN_TEST_HAVE_CUDA
    if (th_is_gpu(h)) cudaDeviceSynchronize();
#endif
    (void)h;
}

size_t th_dtype_size(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_DOUBLE: case CUDNN_DATA_INT64: return 8;
    case CUDNN_DATA_FLOAT: case CUDNN_DATA_INT32: return 4;
    case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16: return 2;
    default: return 1;
    }
}

const char *th_dtype_name(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return "float";
    case CUDNN_DATA_DOUBLE: return "double";
    case CUDNN_DATA_HALF: return "half";
    case CUDNN_DATA_BFLOAT16: return "bfloat16";
    case CUDNN_DATA_INT8: return "int8";
    case CUDNN_DATA_UINT8: return "uint8";
    case CUDNN_DATA_INT32: return "int32";
    case CUDNN_DATA_INT8x4: return "int8x4";
    case CUDNN_DATA_INT8x32: return "int8x32";
    default: return "other";
    }
}

/* The harness has its own fp16/bf16 conversions, written independently of src/core. */
static double half_bits_to_double(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0) v = ldexp(m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

static uint16_t double_to_half_bits(double d)
{
    /* search-free: scale into the target grid and round half to even with rint */
    uint16_t s = signbit(d) ? 0x8000 : 0;
    double a = fabs(d);
    if (isnan(d)) return 0x7e00;
    if (a >= 65520.0) return s | 0x7c00;
    if (a < ldexp(1, -14)) {
        double q = rint(a * ldexp(1, 24));
        return s | (uint16_t)q; /* q may reach 1024 = smallest normal, still right */
    }
    int e;
    frexp(a, &e); /* a = f*2^e, f in [0.5,1) */
    double q = rint(ldexp(a, 11 - e)); /* 1024..2048 */
    if (q >= 2048) { q /= 2; e++; }
    if (e - 1 + 15 >= 31) return s | 0x7c00;
    return s | (uint16_t)(((e - 1 + 15) << 10) | ((int)q - 1024));
}

static double bf16_bits_to_double(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t double_to_bf16_bits(double d)
{
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, 4);
    if (isnan(f)) return 0x7fc0;
    uint32_t r = u + 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(r >> 16);
}

void th_to_double(const void *src, cudnnDataType_t t, double *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case CUDNN_DATA_FLOAT: dst[i] = ((const float *)src)[i]; break;
        case CUDNN_DATA_DOUBLE: dst[i] = ((const double *)src)[i]; break;
        case CUDNN_DATA_HALF: dst[i] = half_bits_to_double(((const uint16_t *)src)[i]); break;
        case CUDNN_DATA_BFLOAT16: dst[i] = bf16_bits_to_double(((const uint16_t *)src)[i]); break;
        case CUDNN_DATA_INT32: dst[i] = ((const int32_t *)src)[i]; break;
        case CUDNN_DATA_UINT8: dst[i] = ((const uint8_t *)src)[i]; break;
        default: dst[i] = ((const int8_t *)src)[i]; break;
        }
    }
}

static double clampr(double v, double lo, double hi)
{
    v = rint(v);
    return v < lo ? lo : v > hi ? hi : v;
}

void th_from_double(const double *src, cudnnDataType_t t, void *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case CUDNN_DATA_FLOAT: ((float *)dst)[i] = (float)src[i]; break;
        case CUDNN_DATA_DOUBLE: ((double *)dst)[i] = src[i]; break;
        case CUDNN_DATA_HALF: ((uint16_t *)dst)[i] = double_to_half_bits(src[i]); break;
        case CUDNN_DATA_BFLOAT16: ((uint16_t *)dst)[i] = double_to_bf16_bits(src[i]); break;
        case CUDNN_DATA_INT32: ((int32_t *)dst)[i] = (int32_t)clampr(src[i], -2147483648.0, 2147483647.0); break;
        case CUDNN_DATA_UINT8: ((uint8_t *)dst)[i] = (uint8_t)clampr(src[i], 0, 255); break;
        default: ((int8_t *)dst)[i] = (int8_t)clampr(src[i], -128, 127); break;
        }
    }
}

void th_fill_int(double *dst, size_t n, int lo, int hi)
{
    for (size_t i = 0; i < n; i++) dst[i] = th_randint(lo, hi);
}

void th_fill_uniform(double *dst, size_t n, double lo, double hi)
{
    for (size_t i = 0; i < n; i++) dst[i] = th_uniform(lo, hi);
}

/* The one tolerance table. Entries are relative to max(1, max|reference|) of the compared
 * tensor. FLOAT results are float-accumulated; HALF/BFLOAT16 outputs are rounded to 11/8
 * significant bits, so their entries reflect one output rounding plus accumulation. */
double th_tolerance(const char *op, cudnnDataType_t t)
{
    int is_conv = strncmp(op, "conv", 4) == 0;
    switch (t) {
    case CUDNN_DATA_DOUBLE: return 1e-12;
    case CUDNN_DATA_FLOAT: return is_conv ? 1e-5 : 1e-5;
    /* TF32 on GPU tensor cores keeps 10 mantissa bits of each input */
    case CUDNN_DATA_HALF: return 2e-3;     /* 11-bit output rounding (4.9e-4) plus accumulation order */
    case CUDNN_DATA_BFLOAT16: return 1e-2; /* 8-bit output rounding (3.9e-3) plus accumulation order */
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_INT32:
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_INT8x4:
    case CUDNN_DATA_INT8x32: return 0;     /* integer results are exact */
    default: return 1e-5;
    }
}

double th_max_error(const double *got, const double *want, size_t n, double tol, long *bad_index)
{
    double scale = 1.0;
    for (size_t i = 0; i < n; i++)
        if (fabs(want[i]) > scale) scale = fabs(want[i]);
    double worst = 0;
    *bad_index = -1;
    for (size_t i = 0; i < n; i++) {
        double e = fabs(got[i] - want[i]) / scale;
        if (isnan(got[i]) != isnan(want[i])) e = INFINITY;
        if (e > worst) worst = e;
        if (e > tol && *bad_index < 0) *bad_index = (long)i;
    }
    return worst;
}

int th_compare(const char *what, const double *got, const double *want, size_t n, double tol)
{
    long bad;
    double err = th_max_error(got, want, n, tol, &bad);
    int nonzero = 0;
    for (size_t i = 0; i < n && !nonzero; i++) nonzero = want[i] != 0;
    if (!th_check(nonzero, __FILE__, __LINE__, "%s: reference is all zero, the comparison proves nothing", what)) return 0;
    return th_check(bad < 0, __FILE__, __LINE__, "%s: max error %.3g > tol %.3g (first bad index %ld: got %.9g want %.9g)", what, err,
                    tol, bad, bad >= 0 ? got[bad] : 0.0, bad >= 0 ? want[bad] : 0.0);
}

int th_compare_nonfinite(const char *what, double *got, double *want, size_t n, double tol)
{
    long bad = -1;
    int nonzero = 0;
    for (size_t i = 0; i < n; i++) {
        const int special = !isfinite(got[i]) || !isfinite(want[i]);
        if (special && bad < 0 && !(isnan(got[i]) ? isnan(want[i]) : got[i] == want[i])) bad = (long)i;
        if (special) got[i] = want[i] = 0;
        nonzero |= want[i] != 0;
    }
    if (!th_check(bad < 0, __FILE__, __LINE__, "%s: NaN or infinity at %ld in one result only", what, bad)) return 0;
    return !nonzero || th_compare(what, got, want, n, tol);
}

void th_cpu_fast_path(const char *mode)
{
    if (mode) setenv("FREEDNN_CPU_FAST_PATH", mode, 1);
    else unsetenv("FREEDNN_CPU_FAST_PATH");
}
