/* Philox-4x32-10 counter-based generator (Salmon et al., SC'11), written from the published
 * algorithm. Dropout masks are a pure function of (seed, element index), so the CPU and the
 * GPU produce the same mask bit for bit, and restoring a dropout descriptor reproduces it.
 * Usable from C and CUDA (host and device). */
#ifndef FDNN_PHILOX_H
#define FDNN_PHILOX_H
#include <stdint.h>
#ifdef __CUDACC__
#define FDNN_HD __host__ __device__ __forceinline__
#else
#define FDNN_HD static inline
#endif

typedef struct { uint32_t v[4]; } fdnn_philox_ctr;

FDNN_HD uint32_t fdnn_mulhilo32(uint32_t a, uint32_t b, uint32_t *hi)
{
    uint64_t p = (uint64_t)a * (uint64_t)b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

/* 4 random 32-bit words for counter ctr under key (k0, k1). */
FDNN_HD fdnn_philox_ctr fdnn_philox4x32(fdnn_philox_ctr c, uint32_t k0, uint32_t k1)
{
    for (int r = 0; r < 10; r++) {
        uint32_t hi0, hi1;
        uint32_t lo0 = fdnn_mulhilo32(0xD2511F53u, c.v[0], &hi0);
        uint32_t lo1 = fdnn_mulhilo32(0xCD9E8D57u, c.v[2], &hi1);
        fdnn_philox_ctr n;
        n.v[0] = hi1 ^ c.v[1] ^ k0;
        n.v[1] = lo1;
        n.v[2] = hi0 ^ c.v[3] ^ k1;
        n.v[3] = lo0;
        c = n;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return c;
}

/* Uniform float in (0, 1] for element idx of the stream identified by (seed, offset). */
FDNN_HD float fdnn_philox_uniform(uint64_t seed, uint64_t offset, uint64_t idx)
{
    fdnn_philox_ctr c;
    uint64_t q = idx >> 2;
    c.v[0] = (uint32_t)q;
    c.v[1] = (uint32_t)(q >> 32);
    c.v[2] = (uint32_t)offset;
    c.v[3] = (uint32_t)(offset >> 32);
    fdnn_philox_ctr r = fdnn_philox4x32(c, (uint32_t)seed, (uint32_t)(seed >> 32));
    uint32_t w = r.v[idx & 3];
    return ((float)(w >> 8) + 1.0f) * (1.0f / 16777216.0f);
}

/* 1 if element idx is kept by dropout with drop probability p. */
FDNN_HD int fdnn_dropout_keep(uint64_t seed, uint64_t offset, uint64_t idx, float p)
{
    return fdnn_philox_uniform(seed, offset, idx) > p;
}
#endif
