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

/* e^r - 1 for |r| <= ln2/2: fdnn_expf's degree-6 polynomial without its constant term, so that it keeps the
 * relative precision of r near 0 */
static inline __attribute__((always_inline)) float fdnn_expm1f_reduced(float r)
{
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    return p * (r * r) + r;
}

/* e^r for |r| <= ln2/2: fdnn_expf's degree-6 polynomial */
static inline __attribute__((always_inline)) float fdnn_expf_reduced(float r) { return fdnn_expm1f_reduced(r) + 1.f; }

/* The range reduction of the exps below: x = k ln2 + r with k = round(x / ln2) (returned mod 2^32; anything for
 * NaN, r then NaN) and |r| <= ln2/2, ln2 split in two parts so that k ln2 is exact */
static inline __attribute__((always_inline)) float fdnn_exp_split(float x, uint32_t *k)
{
    const float shifter = 12582912.f; /* 1.5 * 2^23: adding it rounds to an integer in the low mantissa bits */
    const float t = x * 1.44269504088896341f + shifter;
    const float kf = t - shifter;
    *k = fdnn_f_bits(t) - fdnn_f_bits(shifter);
    const float r = x - kf * 0.693359375f;
    return r - kf * -2.12194440e-4f;
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
    uint32_t ku;
    float p = fdnn_expf_reduced(fdnn_exp_split(xc, &ku));
    const int32_t k = (int32_t)ku, k1 = k >> 1, k2 = k - k1; /* each within [-75, 64]: 2^k1 and 2^k2 are normal floats */
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
    uint32_t k; /* NaN: anything, p is NaN */
    const float r = fdnn_exp_split(x, &k);
    return fdnn_expf_reduced(r) * fdnn_bits_f((k + 127u) << 23);
}
#define FDNN_EXPF_INRANGE_LO (-87.f)
#define FDNN_EXPF_INRANGE_HI 88.f

/* e^x - 1 for x <= 0 (x > 0 is taken as 0; NaN gives NaN): 2^k (e^r - 1) + (2^k - 1), e^r - 1 from
 * fdnn_expm1f_reduced, so that there is no cancellation near 0 (k = 0: the result is e^r - 1 itself). x is
 * clamped at -87 (2^k stays normal), where e^x - 1 is -1 in float. ELU through it is within 2 ulp of coef * expm1(x)
 * (src/cpu/act_fast.c). */
static inline __attribute__((always_inline)) float fdnn_expm1f_neg(float x)
{
    float xc = x < -87.f ? -87.f : x;
    xc = x > 0.f ? 0.f : xc;
    uint32_t k;
    const float r = fdnn_exp_split(xc, &k);
    const float s = fdnn_bits_f((k + 127u) << 23);
    return s * fdnn_expm1f_reduced(r) + (s - 1.f);
}

/* s * e^y for y <= 0 (NaN gives NaN): rounded as ((s 2^k1) e^r) 2^k2, k1 + k2 = k = round(y / ln2) split so that
 * both powers are normal floats for y down to -174. So s e^y keeps its precision wherever it is a normal float, e^y
 * itself subnormal included (swish takes s = 2^64 for that); below -174 the result is s * 0. */
static inline __attribute__((always_inline)) float fdnn_scaled_expf_neg(float s, float y)
{
    const float yc = y < -174.f ? -174.f : y;
    uint32_t ku;
    const float r = fdnn_exp_split(yc, &ku);
    const int32_t k = (int32_t)ku, k1 = k >> 1, k2 = k - k1;
    const float v = s * fdnn_bits_f((uint32_t)(k1 + 127) << 23) * fdnn_expf_reduced(r) * fdnn_bits_f((uint32_t)(k2 + 127) << 23);
    return y < -174.f ? s * 0.f : v;
}
#endif
