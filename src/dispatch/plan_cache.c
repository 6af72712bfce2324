/* Open-addressing hash table (linear probing, load factor <= 1/2) of plans keyed by problem
 * bytes. When FDNN_PLAN_CACHE_MAX entries are live, the next insert clears the table rather
 * than growing it: a working set of more than a thousand distinct problems on one handle is
 * unusual, clearing keeps the memory bound, and it needs no deletion tombstones. */
#include <stdlib.h>
#include <string.h>
#include "plan_cache.h"

#define FDNN_PLAN_SLOTS (2 * FDNN_PLAN_CACHE_MAX) /* power of two */

typedef struct {
    uint64_t hash;
    void *key;
    size_t keylen;
    void *plan;
    void (*free_fn)(void *);
} plan_slot;

struct fdnn_plan_cache {
    int used;
    plan_slot slot[FDNN_PLAN_SLOTS];
};

/* Four independent 8-byte lanes per 32-byte step (keys are a few hundred bytes; a byte-wise
 * hash was a visible part of a cache hit, and one lane is a serial multiply chain), then the
 * tail; final avalanche so the low bits index well. */
uint64_t fdnn_hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    const uint64_t m = 0x9e3779b97f4a7c15ull;
    uint64_t h[4] = {n * 0xff51afd7ed558ccdull, 1, 2, 3};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int l = 0; l < 4; l++) {
            uint64_t w;
            memcpy(&w, b + i + 8 * l, 8);
            h[l] = (h[l] ^ w) * m;
            h[l] ^= h[l] >> 31;
        }
    uint64_t r = h[0] ^ (h[1] * 0xc2b2ae3d27d4eb4full) ^ (h[2] * 0x165667b19e3779f9ull) ^ (h[3] * 0x27d4eb2f165667c5ull);
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        r = (r ^ w) * m;
        r ^= r >> 31;
    }
    for (; i < n; i++) r = (r ^ b[i]) * 0x100000001b3ull;
    r ^= r >> 33;
    r *= 0xc4ceb9fe1a85ec53ull;
    r ^= r >> 33;
    return r;
}

void *fdnn_plan_lookup(cudnnHandle_t h, const void *key, size_t keylen)
{
    struct fdnn_plan_cache *c = h->plans;
    if (!c || c->used == 0) return NULL;
    uint64_t hv = fdnn_hash_bytes(key, keylen);
    for (size_t i = 0; i < FDNN_PLAN_SLOTS; i++) {
        plan_slot *s = &c->slot[(hv + i) & (FDNN_PLAN_SLOTS - 1)];
        if (!s->key) return NULL;
        if (s->hash == hv && s->keylen == keylen && memcmp(s->key, key, keylen) == 0) return s->plan;
    }
    return NULL;
}

static void clear_slots(struct fdnn_plan_cache *c)
{
    for (int i = 0; i < FDNN_PLAN_SLOTS; i++) {
        plan_slot *s = &c->slot[i];
        if (s->key) {
            if (s->free_fn) s->free_fn(s->plan);
            free(s->key);
        }
    }
    memset(c->slot, 0, sizeof c->slot);
    c->used = 0;
}

cudnnStatus_t fdnn_plan_insert(cudnnHandle_t h, const void *key, size_t keylen, void *plan,
                               void (*free_fn)(void *))
{
    if (!h->plans) {
        h->plans = calloc(1, sizeof *h->plans);
        if (!h->plans) return CUDNN_STATUS_ALLOC_FAILED;
    }
    struct fdnn_plan_cache *c = h->plans;
    void *k = malloc(keylen ? keylen : 1);
    if (!k) return CUDNN_STATUS_ALLOC_FAILED;
    memcpy(k, key, keylen);
    if (c->used >= FDNN_PLAN_CACHE_MAX) clear_slots(c);
    uint64_t hv = fdnn_hash_bytes(key, keylen);
    for (size_t i = 0;; i++) { /* terminates: used < SLOTS / 2, so a free slot exists */
        plan_slot *s = &c->slot[(hv + i) & (FDNN_PLAN_SLOTS - 1)];
        if (!s->key) {
            s->hash = hv;
            s->key = k;
            s->keylen = keylen;
            s->plan = plan;
            s->free_fn = free_fn;
            c->used++;
            return CUDNN_STATUS_SUCCESS;
        }
    }
}

int fdnn_plan_cache_count(cudnnHandle_t h) { return h->plans ? h->plans->used : 0; }

void fdnn_plan_cache_free(cudnnHandle_t h)
{
    if (!h->plans) return;
    clear_slots(h->plans);
    free(h->plans);
    h->plans = NULL;
}
