/* Open-addressing hash table of plans keyed by problem bytes (FNV-1a). When full, the
 * table is cleared rather than grown: a working set of more than 4096 distinct problems on
 * one handle is unusual, and clearing keeps the memory bound. */
#include <stdlib.h>
#include <string.h>
#include "plan_cache.h"

#define FDNN_PLAN_SLOTS 4096

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

static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

void *fdnn_plan_lookup(cudnnHandle_t h, const void *key, size_t keylen)
{
    struct fdnn_plan_cache *c = h->plans;
    if (!c) return NULL;
    uint64_t hv = fnv1a(key, keylen);
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
    if (c->used >= FDNN_PLAN_SLOTS / 2) clear_slots(c);
    void *k = malloc(keylen);
    if (!k) return CUDNN_STATUS_ALLOC_FAILED;
    memcpy(k, key, keylen);
    uint64_t hv = fnv1a(key, keylen);
    for (size_t i = 0;; i++) {
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

void fdnn_plan_cache_free(cudnnHandle_t h)
{
    if (!h->plans) return;
    clear_slots(h->plans);
    free(h->plans);
    h->plans = NULL;
}
