/* Per-handle plan cache: maps the bytes of a normalised problem (plus direction and algo)
 * to a backend plan, so a repeated call costs a hash lookup. Owned by the handle, freed
 * with it. Not thread-safe per handle, like cuDNN handles. Keys must be fully initialised
 * bytes (memset structs before filling them: padding takes part in the comparison).
 * Host memory only, so inserting during CUDA graph capture is fine. */
#ifndef FDNN_PLAN_CACHE_H
#define FDNN_PLAN_CACHE_H
#include "../core/fdnn.h"

/* At most this many entries live in one handle's cache; inserting one more clears it. */
#define FDNN_PLAN_CACHE_MAX 1024

/* Returns the cached plan for key or NULL. */
void *fdnn_plan_lookup(cudnnHandle_t h, const void *key, size_t keylen);
/* Stores plan under key (copying the key); free_fn(plan) runs when the handle dies or the
 * entry is evicted. Returns ALLOC_FAILED (and frees nothing) if memory runs out. */
cudnnStatus_t fdnn_plan_insert(cudnnHandle_t h, const void *key, size_t keylen, void *plan,
                               void (*free_fn)(void *));
/* Number of live entries (0 when the cache was never used). */
int fdnn_plan_cache_count(cudnnHandle_t h);
void fdnn_plan_cache_free(cudnnHandle_t h);
/* The cache's 64-bit hash of n bytes (also keys the CUDA backend's graph replay table). */
uint64_t fdnn_hash_bytes(const void *p, size_t n);
#endif
