/* Test harness shared by FreeDNN's test programs: seeded RNG, check macros with a
 * "N passed, N failed" summary, backend-aware buffers (host memory on the CPU backend,
 * device memory on the CUDA backend), dtype conversion to and from double, and the one
 * tolerance table. It uses only the public cuDNN API and never includes src/. */
#ifndef FDNN_TEST_HARNESS_H
#define FDNN_TEST_HARNESS_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "cudnn.h"
#include "freednn.h"

#if CUDNN_VERSION != 8907
#error "tests must compile against FreeDNN's cudnn.h"
#endif

/* ------------------------------------------------------------ results */
extern int th_passed, th_failed;
/* Record one check; prints the message on failure. Returns cond. */
int th_check(int cond, const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define TH_CHECK(cond, ...) th_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
/* Check a status; on mismatch also prints cudnnGetLastErrorString. */
int th_check_status(cudnnStatus_t got, cudnnStatus_t want, const char *expr, const char *file, int line);
#define TH_STATUS(expr, want) th_check_status((expr), (want), #expr, __FILE__, __LINE__)
#define TH_OK(expr) th_check_status((expr), CUDNN_STATUS_SUCCESS, #expr, __FILE__, __LINE__)
/* Prints "N passed, N failed" and returns the process exit code (0 if nothing failed). */
int th_finish(void);
/* Exit code that ctest reads as "skipped". */
#define TH_SKIP 77

/* --------------------------------------------------------------- RNG */
/* Seed from FREEDNN_TEST_SEED (default: the given one); prints the seed for reproduction. */
void th_seed(uint64_t dflt);
/* Section s of a test split into numbered sections: 1 when it belongs to this run's shard
 * (FREEDNN_TEST_SHARD="i/n": the sections with s % n == i; unset: all), and then the RNG restarts
 * from the seed and s, so a section draws the same cases whichever shard runs it. */
int th_section(int s);
uint64_t th_rand(void);
int th_randint(int lo, int hi);          /* inclusive */
double th_uniform(double lo, double hi);

/* ------------------------------------------------------------ handle */
/* Creates a handle on the backend FREEDNN_BACKEND names; if the CUDA backend is asked for
 * but cannot be created, prints why and exits with TH_SKIP. */
cudnnHandle_t th_create_handle(void);
int th_is_gpu(cudnnHandle_t h);

/* ------------------------------------------------ backend-aware memory */
/* Buffers live where the handle's backend wants them (device memory on CUDA). */
void *th_alloc(cudnnHandle_t h, size_t bytes);
void th_free(cudnnHandle_t h, void *p);
void th_upload(cudnnHandle_t h, void *dst, const void *host_src, size_t bytes);
void th_download(cudnnHandle_t h, void *host_dst, const void *src, size_t bytes);
void th_sync(cudnnHandle_t h);

/* ----------------------------------------------------------- dtypes */
size_t th_dtype_size(cudnnDataType_t t);
const char *th_dtype_name(cudnnDataType_t t);
/* Convert n elements between a host buffer of type t and doubles (round to nearest even). */
void th_to_double(const void *src, cudnnDataType_t t, double *dst, size_t n);
void th_from_double(const double *src, cudnnDataType_t t, void *dst, size_t n);
/* Fill with small integers in [lo, hi] (exact in every floating type). */
void th_fill_int(double *dst, size_t n, int lo, int hi);
void th_fill_uniform(double *dst, size_t n, double lo, double hi);

/* -------------------------------------------------------- tolerances */
/* Relative tolerance for comparing an op's output in dtype t against the double reference.
 * op is a short name ("conv", "pool", "bn", ...); see th.c for the table and the reasons. */
double th_tolerance(const char *op, cudnnDataType_t t);
/* Compares got against want over n values with |got-want| <= tol*(scale) where scale is
 * max(1, max|want|); returns the max normalised error, and sets *bad_index (-1 if none). */
double th_max_error(const double *got, const double *want, size_t n, double tol, long *bad_index);
/* Compare and record one check; nonzero_required demands at least one nonzero in want. */
int th_compare(const char *what, const double *got, const double *want, size_t n, double tol);
/* For results with NaN or infinities: got and want must hold them in the same places (infinities of the same
 * sign); those are then set to 0 in both and th_compare checks the rest (an all-zero rest passes). */
int th_compare_nonfinite(const char *what, double *got, double *want, size_t n, double tol);

/* ------------------------------------------------------- CPU backend */
/* Sets FREEDNN_CPU_FAST_PATH (mode NULL: unsets it): "0" the CPU backend's FLOAT fast paths that read it off,
 * "2" required (a call they do not take fails with NOT_SUPPORTED) */
void th_cpu_fast_path(const char *mode);

#endif
