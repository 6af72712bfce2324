/* Two-pass ops (statistics over a unit, then an element-wise pass over the same unit) in ONE
 * kernel whose second read of a unit comes from L2 instead of DRAM.
 *
 * A "unit" is the data one set of statistics covers (a softmax INSTANCE image). Each unit has nst statistics items, one merge item and nap apply items. A grid of
 * resident blocks takes items in ticket order from one global counter; step k of the order is
 *
 *     stats(k, 0..nst-1) | merge(k - Dm) | apply(k - D, 0..nap-1)      (Dm = ceil(D/2))
 *
 * so unit u's apply items run about D units after its statistics items read it, while its data
 * is still in L2 (D is chosen so that D units fit well inside L2). A statistics item writes its
 * partial result and counts itself (release); the merge item waits for nst counts (acquire),
 * combines the partials in a fixed order (deterministic whichever block does it), publishes the
 * unit's result and counts once more; apply items wait for nst + 1.
 *
 * Latency hiding: a block holds its current ticket and the next one, whose input loads it issues
 * before it processes the current item, and claims the one after that meanwhile.
 *
 * Progress without a cooperative launch: an item waits only for items with smaller tickets, and
 * a ticket is only claimed by a running block that holds smaller tickets first, so the smallest
 * unfinished ticket is always some running block's current item and runs.
 *
 * Counters live in the handle's zeroed sync words (fdnn_cuda_state.sync): ctr[0] the ticket,
 * ctr[1] blocks finished, ctr[2+u] unit u's count. The last block to finish puts them all back
 * to zero, so every launch (also a CUDA graph replay) starts from zero. */
#ifndef FDNN_CUDA_PIPE2_CUH
#define FDNN_CUDA_PIPE2_CUH
#ifndef __CUDACC__
#error "pipe2.cuh is for .cu files only"
#endif
#include <stdlib.h>
#include <cuda_runtime.h>
extern "C" {
#include "cuda_internal.h"
}

namespace fdnn_pipe {

struct Pipe {
    unsigned *ctr;
    unsigned units, nst, nap, D, Dm;
};

enum { K_STATS = 0, K_MERGE = 1, K_APPLY = 2 };

struct Item {
    unsigned unit, idx;
    int kind;
};

/* Room for the counters of `units` units in the handle's sync words. */
static inline bool fits(unsigned units, unsigned words) { return units + 2u <= words; }

__host__ __device__ __forceinline__ unsigned long long clampu(long long v, unsigned hi) { return v < 0 ? 0ull : v > (long long)hi ? hi : (unsigned long long)v; }

/* Tickets before step k. */
__host__ __device__ __forceinline__ unsigned long long before(const Pipe &p, unsigned k)
{
    return (unsigned long long)p.nst * clampu(k, p.units) + clampu((long long)k - p.Dm, p.units) + (unsigned long long)p.nap * clampu((long long)k - p.D, p.units);
}

static inline unsigned long long total(const Pipe &p) { return before(p, p.units + p.D); }

static inline Pipe make(unsigned *ctr, unsigned units, unsigned nst, unsigned nap, unsigned D)
{
    Pipe p;
    p.ctr = ctr, p.units = units, p.nst = nst, p.nap = nap;
    p.D = D < 1 ? 1 : D > units ? units : D;
    p.Dm = (p.D + 1) / 2;
    return p;
}

/* Tickets fit 32 bits and the counters fit the sync words. */
static inline bool usable(const Pipe &p, unsigned words) { return fits(p.units, words) && total(p) < 0xffffffffull; }

__device__ __forceinline__ Item decode(const Pipe &p, unsigned t)
{
    unsigned lo = 0, hi = p.units + p.D; /* the step: largest k with before(k) <= t */
    while (hi - lo > 1) {
        const unsigned mid = (lo + hi) / 2;
        if (before(p, mid) <= t) lo = mid;
        else hi = mid;
    }
    const unsigned k = lo;
    unsigned j = (unsigned)(t - before(p, k));
    Item it;
    if (k < p.units) {
        if (j < p.nst) {
            it.unit = k, it.idx = j, it.kind = K_STATS;
            return it;
        }
        j -= p.nst;
    }
    if (k >= p.Dm && k - p.Dm < p.units) {
        if (j == 0) {
            it.unit = k - p.Dm, it.idx = 0, it.kind = K_MERGE;
            return it;
        }
        j -= 1;
    }
    it.unit = k - p.D, it.idx = j, it.kind = K_APPLY;
    return it;
}

__device__ __forceinline__ bool leader() { return threadIdx.x == 0 && threadIdx.y == 0; }

__device__ __forceinline__ unsigned claim(const Pipe &p) { return atomicAdd(p.ctr, 1u); }

__device__ __forceinline__ unsigned load_acquire(const unsigned *a)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(a) : "memory");
    return v;
}

__device__ __forceinline__ void add_release(unsigned *a, unsigned v) { asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(a), "r"(v) : "memory"); }

/* All threads: wait until unit u's count reaches n. */
__device__ __forceinline__ void wait_count(const Pipe &p, unsigned u, unsigned n)
{
    if (leader())
        while (load_acquire(p.ctr + 2 + u) < n) __nanosleep(200);
    __syncthreads();
}

/* The pipeline. Op provides (const methods; sm: the kernel's shared scratch):
 *   struct Regs;                                  one item's raw input registers per thread
 *   void load(const Item &, Regs &)               issue the loads of a statistics or apply item
 *   void stats(const Item &, Regs &, sm)          reduce; the leader writes the partial result
 *   void merge(unsigned unit, sm)                 combine the unit's partials (read with __ldcg);
 *                                                 the leader writes the unit's result
 *   void apply(const Item &, Regs &)              outputs of the item (result read with __ldcg)
 * Every block thread calls run(); op's methods are called by all threads of the block. The op
 * stays a kernel parameter (no copy to local memory). */
template <class Op, typename S> __device__ __forceinline__ void run(const Op &op, const Pipe &p, S *sm)
{
    __shared__ unsigned s_t[2], s_last;
    __shared__ Item s_it[2];
    typename Op::Regs cur, nxt;
    const unsigned tot = (unsigned)before(p, p.units + p.D);
    /* the leader claims and decodes tickets; the block reads them from shared memory */
    if (leader()) {
        s_t[0] = claim(p), s_t[1] = claim(p);
        if (s_t[0] < tot) s_it[0] = decode(p, s_t[0]);
        if (s_t[1] < tot) s_it[1] = decode(p, s_t[1]);
    }
    __syncthreads();
    unsigned t0 = s_t[0], t1 = s_t[1];
    Item ic = s_it[0], in = s_it[1];
    __syncthreads();
    if (t0 < tot && ic.kind != K_MERGE) op.load(ic, cur);
    for (unsigned k = 0; t0 < tot; k ^= 1u) {
        const unsigned t2 = leader() ? claim(p) : 0u;
        if (t1 < tot && in.kind != K_MERGE) op.load(in, nxt);
        if (ic.kind == K_STATS) {
            op.stats(ic, cur, sm); /* the leader wrote the partial: its release orders it */
            if (leader()) add_release(p.ctr + 2 + ic.unit, 1u);
        } else if (ic.kind == K_MERGE) {
            wait_count(p, ic.unit, p.nst);
            op.merge(ic.unit, sm); /* the leader wrote the result */
            if (leader()) add_release(p.ctr + 2 + ic.unit, 1u);
        } else {
            wait_count(p, ic.unit, p.nst + 1);
            op.apply(ic, cur);
        }
        cur = nxt;
        ic = in;
        t0 = t1;
        /* slot k alternates: the next write to this slot comes after the next barrier */
        if (leader()) {
            s_t[k] = t2;
            if (t2 < tot) s_it[k] = decode(p, t2);
        }
        __syncthreads();
        t1 = s_t[k], in = s_it[k];
    }
    /* the last block to finish puts the counters back to zero */
    if (leader()) s_last = atomicAdd(p.ctr + 1, 1u) == gridDim.x - 1;
    __syncthreads();
    if (s_last) {
        __threadfence();
        const unsigned nt = blockDim.x * blockDim.y, tid = threadIdx.y * blockDim.x + threadIdx.x;
        for (unsigned i = tid; i < p.units + 2u; i += nt) p.ctr[i] = 0u;
    }
}

/* Bytes of units whose statistics may be read ahead of their apply items: half the H200's 50 MB
 * L2 (softmax INSTANCE forward / backward on 32 images of 3.2 MB, % of the copy bandwidth: 12 MB
 * 47 / 51%, 24 MB 53 / 64%, 36 MB 52 / 59%). FREEDNN_PIPE_KB overrides (tuning and tests; read
 * once). */
static inline unsigned long long window_bytes()
{
    static unsigned long long w = 0;
    if (!w) {
        const char *e = getenv("FREEDNN_PIPE_KB");
        const long long kb = e ? atoll(e) : 0;
        w = kb > 0 ? (unsigned long long)kb << 10 : 24ull << 20;
    }
    return w;
}

/* Units read ahead: as many as fit the window (at least 1). */
static inline unsigned lookahead(unsigned long long unit_bytes)
{
    const unsigned long long d = unit_bytes ? window_bytes() / unit_bytes : 1;
    return d < 1 ? 1u : d > 0xffffffu ? 0xffffffu : (unsigned)d;
}

/* Grid of a pipeline launch: the blocks that fit on the device at once (per_sm from the
 * kernel's occupancy, cached by the caller), no more than there are items. */
static inline unsigned grid_for(const fdnn_cuda_state *cs, int per_sm, unsigned long long items)
{
    unsigned long long g = (unsigned long long)(per_sm > 0 ? per_sm : 1) * (unsigned)cs->prop.multiProcessorCount;
    if (g > items) g = items;
    return g < 1 ? 1u : (unsigned)g;
}

/* Blocks of `threads` threads of kernel fn resident per SM (0 on error). */
static inline int per_sm_of(const void *fn, int threads)
{
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, threads, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

/* Raw per-thread input words: a 16-byte vector (VEC) or one element, loaded with the default
 * policy (first read: keep in L2 for the re-read) or evict-first (LAST: the final read), and
 * stores evict-first (the outputs are not read again by the op). */
template <typename T, bool VEC> struct Raw {
    typedef T type;
};
template <typename T> struct Raw<T, true> {
    typedef uint4 type;
};
template <typename T, bool VEC, bool LAST> __device__ __forceinline__ typename Raw<T, VEC>::type ld(const T *base, size_t i)
{
    if constexpr (VEC) return LAST ? __ldcs(reinterpret_cast<const uint4 *>(base) + i) : reinterpret_cast<const uint4 *>(base)[i];
    else return LAST ? __ldcs(base + i) : base[i];
}
template <typename T, bool VEC> __device__ __forceinline__ void st(T *base, size_t i, const typename Raw<T, VEC>::type &v)
{
    if constexpr (VEC) __stcs(reinterpret_cast<uint4 *>(base) + i, v);
    else base[i] = v;
}

} // namespace fdnn_pipe
#endif
