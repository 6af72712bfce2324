/* Graph replay of repeated CUDA convolution calls (issue #7's host-time target).
 *
 * On the H200 host one kernel launch costs about 3.5 us of host time, while relaunching a
 * captured CUDA graph of one to four kernels costs 1.8-1.9 us (bench/launch_cost.cu). A call
 * that pads its operands, transforms a filter or reduces split-K partial sums launches two to
 * four kernels: 7-20 us. Programs repeat the same call (same layer, same buffers) every
 * iteration, so the handle keeps a small table of recent calls keyed by everything the launches
 * depend on:
 *   the problem (its bytes, as the plan cache keys them), the implementation, the buffer and
 *   workspace pointers, the workspace size, alpha and beta, the handle's stream, and the GEMM
 *   entries' workspace cap (an environment variable they read on every call).
 * The first occurrence of a key runs directly and is recorded; the second is captured on a
 * private stream of the handle (the handle's stream is swapped for the capture, so every launch,
 * cuBLAS included, lands in the graph) and the instantiated graph is launched on the handle's
 * stream; later ones only launch it. Kernel arguments are values, so a replay does exactly what
 * a direct call with the same key does; buffer contents may change freely between calls.
 *
 * Direct calls instead of replay: while the handle's stream is itself being captured (the
 * caller's graph must contain the kernels), when the capture fails (an implementation that
 * calls something a capture forbids is then never captured again for that key), and when
 * FREEDNN_CUDA_GRAPH_REPLAY=0 (read once). The stream is part of the key, so a graph is only
 * relaunched on the stream its previous launch went to (stream order between launches of one
 * graph). Table entries are evicted least recently used; their graphs are destroyed then
 * (CUDA frees an executing graph when it completes) and with the handle. */
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "conv_cuda.h"
#include "cuda_internal.h"
#include "../dispatch/plan_cache.h"

#define REPLAY_SLOTS 64

typedef struct replay_key {
    fdnn_conv_problem p;
    const fdnn_conv_impl *impl;
    const void *x, *w, *y;
    void *out, *ws;
    size_t ws_size, gemm_cap;
    double alpha, beta;
    cudaStream_t stream;
} replay_key;

enum { SLOT_EMPTY = 0, SLOT_SEEN, SLOT_GRAPH, SLOT_DIRECT };

typedef struct replay_slot {
    uint64_t hash, last_use;
    int state;
    cudaGraphExec_t exec;
    replay_key key;
} replay_slot;

typedef struct fdnn_cuda_replay {
    uint64_t clock;
    cudaStream_t capture; /* private, created on the first capture */
    replay_slot slot[REPLAY_SLOTS];
} fdnn_cuda_replay;

static int replay_enabled(void)
{
    static int on = -1; /* benign race: every thread computes the same value */
    if (on < 0) on = fdnn_env_int("FREEDNN_CUDA_GRAPH_REPLAY", 1) != 0;
    return on;
}

/* Captures impl's launches for this call into an executable graph; 0 if anything fails (the
 * capture is then abandoned and the CUDA error cleared). */
static int capture(cudnnHandle_t h, fdnn_cuda_replay *r, const fdnn_conv_problem *p, const fdnn_conv_impl *impl,
                   const fdnn_conv_args *a, cudaGraphExec_t *exec, size_t *nodes)
{
    *nodes = 0;
    if (!r->capture && cudaStreamCreateWithFlags(&r->capture, cudaStreamNonBlocking) != cudaSuccess) {
        r->capture = NULL;
        (void)cudaGetLastError();
        return 0;
    }
    if (cudaStreamBeginCapture(r->capture, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    cudaStream_t user = h->stream;
    h->stream = r->capture;
    cudnnStatus_t st = impl->run(h, p, a);
    h->stream = user;
    cudaGraph_t g = NULL;
    cudaError_t e = cudaStreamEndCapture(r->capture, &g);
    int ok = st == CUDNN_STATUS_SUCCESS && e == cudaSuccess && g != NULL;
    if (ok && cudaGraphGetNodes(g, NULL, nodes) != cudaSuccess) *nodes = 0; /* for the log: each node adds launch time */
    if (ok) ok = cudaGraphInstantiate(exec, g, 0) == cudaSuccess;
    if (g) cudaGraphDestroy(g);
    if (!ok) (void)cudaGetLastError();
    return ok;
}

static void drop(replay_slot *s)
{
    if (s->exec) cudaGraphExecDestroy(s->exec);
    s->exec = NULL;
    s->state = SLOT_EMPTY;
}

cudnnStatus_t fdnn_cuda_conv_run_replayed(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_impl *impl, const fdnn_conv_args *a)
{
    fdnn_cuda_state *cs = h->cuda;
    if (!cs || !replay_enabled()) return impl->run(h, p, a);
    enum cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(fdnn_cuda_stream(h), &capturing) != cudaSuccess) {
        (void)cudaGetLastError();
        return impl->run(h, p, a);
    }
    if (capturing != cudaStreamCaptureStatusNone) return impl->run(h, p, a);
    fdnn_cuda_replay *r = cs->replay;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r) return impl->run(h, p, a);
        cs->replay = r;
    }
    replay_key k;
    memset(&k, 0, sizeof k); /* padding takes part in the comparison */
    k.p = *p;
    k.impl = impl;
    k.x = a->x;
    k.w = a->w;
    k.y = a->y;
    k.out = a->out;
    k.ws = a->workspace;
    k.ws_size = a->workspace_size;
    k.gemm_cap = fdnn_cuda_gemm_ws_limit();
    k.alpha = a->alpha;
    k.beta = a->beta;
    k.stream = fdnn_cuda_stream(h);
    const uint64_t hv = fdnn_hash_bytes(&k, sizeof k);
    replay_slot *hit = NULL, *victim = &r->slot[0];
    for (int i = 0; i < REPLAY_SLOTS; i++) {
        replay_slot *s = &r->slot[i];
        if (s->state != SLOT_EMPTY && s->hash == hv && memcmp(&s->key, &k, sizeof k) == 0) {
            hit = s;
            break;
        }
        if (s->state == SLOT_EMPTY || (victim->state != SLOT_EMPTY && s->last_use < victim->last_use)) victim = s;
    }
    if (!hit) {
        cudnnStatus_t st = impl->run(h, p, a);
        if (st == CUDNN_STATUS_SUCCESS) { /* only calls that ran are worth a graph */
            drop(victim);
            victim->hash = hv;
            victim->key = k;
            victim->state = SLOT_SEEN;
            victim->last_use = ++r->clock;
        }
        return st;
    }
    hit->last_use = ++r->clock;
    if (hit->state == SLOT_SEEN) {
        size_t nodes = 0;
        if (capture(h, r, p, impl, a, &hit->exec, &nodes)) {
            hit->state = SLOT_GRAPH;
            FDNN_API_LOG(h, "convolution captured as a CUDA graph of %zu nodes (%s); repeats of this call replay it", nodes, impl->name);
        } else {
            hit->exec = NULL;
            hit->state = SLOT_DIRECT;
            FDNN_API_LOG(h, "convolution %s could not be captured as a CUDA graph; it runs directly", impl->name);
        }
    }
    if (hit->state == SLOT_GRAPH) {
        cudaError_t e = cudaGraphLaunch(hit->exec, fdnn_cuda_stream(h));
        if (e == cudaSuccess) {
            FDNN_API_LOG(h, "convolution replayed from its CUDA graph (%s)", impl->name);
            return CUDNN_STATUS_SUCCESS;
        }
        (void)cudaGetLastError(); /* run directly from now on, which reports a real error itself */
        drop(hit);
        hit->state = SLOT_DIRECT;
    }
    return impl->run(h, p, a);
}

void fdnn_cuda_conv_replay_free(struct fdnn_cuda_state *s)
{
    fdnn_cuda_replay *r = s ? s->replay : NULL;
    if (!r) return;
    for (int i = 0; i < REPLAY_SLOTS; i++) drop(&r->slot[i]);
    if (r->capture) cudaStreamDestroy(r->capture);
    free(r);
    s->replay = NULL;
}
