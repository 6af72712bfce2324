/* Independent Philox-4x32-10 for the dropout tests, written from Salmon, Moraes, Dror and Shaw,
 * "Parallel Random Numbers: As Easy as 1, 2, 3" (SC'11): 10 rounds of two 32x32->64 multiplies
 * (multipliers 0xD2511F53, 0xCD9E8D57) with the Weyl key schedule (0x9E3779B9, 0xBB67AE85).
 * Checked in test_dropout against the Random123 known-answer vectors. Declared in norm_ref.h. */
#include <stdint.h>
#include "norm_ref.h"

void ref_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    const uint64_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
    const uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
    uint32_t x0 = ctr[0], x1 = ctr[1], x2 = ctr[2], x3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round > 0) { k0 += W0; k1 += W1; } /* key schedule: bump before each later round */
        uint64_t p0 = M0 * x0, p1 = M1 * x2;
        uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0;
        uint32_t y1 = (uint32_t)p1;
        uint32_t y2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1;
        uint32_t y3 = (uint32_t)p0;
        x0 = y0, x1 = y1, x2 = y2, x3 = y3;
    }
    out[0] = x0, out[1] = x1, out[2] = x2, out[3] = x3;
}

int ref_dropout_keep(uint64_t seed, uint64_t idx, float p)
{
    uint64_t blk = idx / 4;
    uint32_t ctr[4] = {(uint32_t)blk, (uint32_t)(blk >> 32), 0, 0}, key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)}, out[4];
    ref_philox4x32_10(ctr, key, out);
    double u = ((double)(out[idx % 4] >> 8) + 1.0) / 16777216.0;
    return u > (double)p;
}
