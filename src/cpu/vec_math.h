/* Branch-free float math for the CPU ops' loops: written with selects and integer bit moves only, so
 * that GCC vectorizes the loops that call it (SSE2 on the baseline target). */
#ifndef FDNN_CPU_VEC_MATH_H
#define FDNN_CPU_VEC_MATH_H
#include <stdint.h>
#include <string.h>

static inline float fdnn_bits_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline uint32_t fdnn_f_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* e^r for |r| <= ln2/2: fdnn_expf's degree-6 polynomial */
static inline __attribute__((always_inline)) float fdnn_expf_reduced(float r)
{
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    return p * (r * r) + r + 1.f;
}

/* e^x in float, within 1 ulp where the result is normal (0.98 ulp at worst over every 7th float in
 * [-87.3, 88.7]): x = k ln2 + r with |r| <= ln2/2 (ln2 split in two parts so k ln2 is exact), a
 * degree-6 polynomial for e^r, then 2^k applied as two exponent-built factors so that the whole
 * range, subnormal results included, needs no branch. NaN gives NaN, x > 88.72 gives +inf,
 * x < -103.98 gives 0. */
static inline __attribute__((always_inline)) float fdnn_expf(float x)
{
    const float hi = 88.72283935546875f, lo = -103.97208f;
    float xc = x > hi ? hi : x;
    xc = xc < lo ? lo : xc;
    xc = xc == xc ? xc : 0.f;
    const float shifter = 12582912.f; /* 1.5 * 2^23: adding it rounds to an integer in the low mantissa bits */
    const float t = xc * 1.44269504088896341f + shifter;
    const float kf = t - shifter;
    const int32_t k = (int32_t)(fdnn_f_bits(t) - fdnn_f_bits(shifter));
    float r = xc - kf * 0.693359375f;
    r = r - kf * -2.12194440e-4f;
    float p = fdnn_expf_reduced(r);
    const int32_t k1 = k >> 1, k2 = k - k1; /* each within [-75, 64]: 2^k1 and 2^k2 are normal floats */
    p = p * fdnn_bits_f((uint32_t)(k1 + 127) << 23) * fdnn_bits_f((uint32_t)(k2 + 127) << 23);
    p = x > hi ? __builtin_inff() : p;
    p = x < lo ? 0.f : p;
    return x == x ? p : x;
}

/* fdnn_expf for x in [-87, 88] (and NaN, which gives NaN), bit for bit, without the range handling: there
 * k = round(x / ln2) is within [-126, 127], so 2^k is one normal float, and p * 2^k rounds once as
 * fdnn_expf's p * 2^k1 * 2^k2 does (its first product is exact). About half of fdnn_expf's operations. */
static inline __attribute__((always_inline)) float fdnn_expf_inrange(float x)
{
    const float shifter = 12582912.f;
    const float t = x * 1.44269504088896341f + shifter;
    const float kf = t - shifter;
    const uint32_t k = fdnn_f_bits(t) - fdnn_f_bits(shifter); /* k mod 2^32; NaN: anything, p is NaN */
    float r = x - kf * 0.693359375f;
    r = r - kf * -2.12194440e-4f;
    return fdnn_expf_reduced(r) * fdnn_bits_f((k + 127u) << 23);
}
#define FDNN_EXPF_INRANGE_LO (-87.f)
#define FDNN_EXPF_INRANGE_HI 88.f
#endif
