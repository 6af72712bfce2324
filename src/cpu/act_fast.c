/* cudnnActivationForward/Backward on dense FLOAT tensors in one layout (the CPU backend's fast path; FREEDNN_CPU_FAST_PATH=0
 * runs src/api/activation.c's per-element double loop instead): y = alpha*act(x) + beta*y and
 * dx = alpha*dy*act'(x) + beta*dx computed in float lanes, one loop per mode (a constant in a shared row kernel), built for
 * AVX-512F, AVX2 and the baseline (FDNN_CLONES512: with AVX2's 16 registers the exp's constants spilled; the AVX-512
 * build ran SIGMOID, TANH, ELU and SWISH forward about 2x faster on a Zen 4, the bounds below the same within 2 ulp). The semantics are core/activation_math.h's (fdnn_act_fwd / fdnn_act_bwd), NaN,
 * infinities and signed zeros included; the double path rounds once, this one a few times:
 *
 * Measured against the double path with bench/act_ulp.c (through the API, FREEDNN_CPU_FAST_PATH=0 vs 2): every
 * 2^12-th float over the whole range plus every float of dense windows around 0 (each power of two down to 2^-149),
 * the saturation points and the exp over/underflow thresholds; coef 0.7 and 1 (ELU), 2.5 and 0.7 (CLIPPED_RELU),
 * swish beta 1, 1.3 and 0.5; alpha 1, beta 0, dy 1, y the double path's forward), max error in ulps of the result
 * where it is a normal float, AVX2 clone:
 *   forward:  SIGMOID 2, TANH 2, ELU 2, RELU / CLIPPED_RELU 0 (exact), SWISH 3 with sb 1 and 0.5 (sb x exact in
 *             float), 103 with sb 1.3 (at z = sb x = -80: z rounded to float, about |z| ulp of e^z for z < 0)
 *   backward: SIGMOID 1, TANH 1, ELU 1, RELU / CLIPPED_RELU 0, SWISH 4 ulps of the larger of its terms s and
 *             z s (1 - s) with sb 1 and 0.5, 112 with sb 1.3 (z = -87); the terms cancel near its zero at
 *             z = -1.2785 (12 ulp of the result for |z + 1.2785| > 0.25 with sb 1, unbounded relative error at the
 *             zero itself, where the double path keeps 2^-29 more)
 * NaN, infinities and zeros from special inputs (x +-0, +-inf, NaN) are the double path's, bit for bit; results below
 * FLT_MIN may differ by a subnormal step or in the sign of an underflowed zero. tanh(x), sigmoid near 0.5 and
 * e^x - 1 near 0 keep their relative precision down to subnormal x (no 1 - y or e^x - 1 cancellation). ELU's double
 * path forms exp(x) - 1.0, which loses relative precision for |x| below ~1e-4 (and gives +0 for |x| < 1.1e-16): there
 * this path is the more accurate one, and the figure above is against coef * expm1(x). Swish's x sigmoid(sb x) keeps
 * its precision where sigmoid(sb x) is subnormal (sb < 1: x e^z formed scaled), its backward for |dy| < 1e17; swish
 * beta outside [1e-10, FLT_MAX] in magnitude takes the double path. Alpha and beta add a float rounding each
 * (y = alpha*act + beta*y in float). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include "ops_fast.h"
#include "vec_math.h"

#define INLINE static inline __attribute__((always_inline))

#define PAR_MIN 65536 /* elements below which the ops run on one thread */

typedef struct {
    float a, b;     /* alpha, beta */
    float c;        /* coef: the clip ceiling (+inf for RELU) or ELU's alpha, rounded to float */
    float c_lo;     /* coef - c: ELU's backward forms y + coef, which cancels where y nears -coef */
    float c_up;     /* the least float above coef (CLIPPED_RELU backward's x < coef), c itself if coef <= c */
    float sb;       /* swish beta, rounded to float */
    int prop;       /* PROPAGATE_NAN (RELU and CLIPPED_RELU forward) */
} act_par;

/* Swish's z = sb x in float (sb rounded to float; act_setup sends |sb| outside [1e-10, FLT_MAX] to the double path):
 * e^-|z| then carries a relative error of up to about |z| 2^-23 from z's rounding, which only matters where z < 0 and
 * the result, x e^z / (1 + e^z), is already small against x (16 + 2|z| ulp of the result). A double z (exact) made
 * the forward about 2x slower (double vectors of 4 lanes and conversions). */
typedef struct {
    float nah; /* -|z| */
    float z;   /* z as a multiplier */
} swish_z;

INLINE swish_z swish_split(float sb, float x)
{
    const float z = sb * x;
    /* z as a multiplier capped at +-FLT_MAX where x is finite (sb x may overflow float: the double path then gives a
     * zero term, not NaN); x = +-inf keeps z infinite, as the double path */
    const float zf = z > FLT_MAX ? FLT_MAX : z < -FLT_MAX ? -FLT_MAX : z, zc = fabsf(x) == INFINITY ? z : zf;
    return (swish_z){-fabsf(z), zc};
}

/* act(x) for mode m, as fdnn_act_fwd */
INLINE float act_fwd(int m, act_par p, float x)
{
    switch (m) {
    case CUDNN_ACTIVATION_SIGMOID: { /* 1 / (1 + e^-x) = e^x / (1 + e^x): e = e^-|x| <= 1 never overflows */
        const float e = fdnn_scaled_expf_neg(1.f, -fabsf(x));
        return (x >= 0.f ? 1.f : e) / (1.f + e);
    }
    case CUDNN_ACTIVATION_TANH: { /* tanh|x| = -t / (t + 2), t = e^-2|x| - 1 */
        const float t = fdnn_expm1f_neg(-2.f * fabsf(x));
        return copysignf(-t / (t + 2.f), x);
    }
    case CUDNN_ACTIVATION_ELU: /* + 0: a -0 from e^-0 - 1 is +0, as the double path's exp(x) - 1.0 gives */
        return x > 0.f ? x : p.c * (fdnn_expm1f_neg(x) + 0.f);
    case CUDNN_ACTIVATION_SWISH: { /* x / (1 + e^-z) = x e^z / (1 + e^z) for z < 0 */
        /* e^-|z| 2^64 (a normal float down to z = -131): x e^z keeps its precision where e^z is subnormal (|sb| >= 1e-10
         * puts every result of z < -131 below one subnormal step). One exp: two scaled ones cost 3x the time */
        const swish_z z = swish_split(p.sb, x);
        const float ep = fdnn_scaled_expf_neg(0x1p64f, z.nah);
        return (z.z >= 0.f ? x : (x * ep) * 0x1p-64f) / (1.f + ep * 0x1p-64f); /* +-inf: x (sb x = +inf) or +-inf * 0 = NaN, as the double path */
    }
    default: { /* RELU (c = +inf), CLIPPED_RELU; NaN fails every compare */
        const float v = x <= 0.f ? 0.f : x >= p.c ? p.c : x;
        return x == x || p.prop ? v : 0.f;
    }
    }
}

/* dy * act'(x) for mode m, as fdnn_act_bwd (y = act(x) as given) */
INLINE float act_bwd(int m, act_par p, float x, float y, float dy)
{
    switch (m) {
    case CUDNN_ACTIVATION_SIGMOID: return dy * (y * (1.f - y)); /* 1 - y exact for y in [0.5, 1] */
    case CUDNN_ACTIVATION_TANH: return dy * ((1.f - y) * (1.f + y)); /* not 1 - y*y, which cancels as |y| nears 1 */
    case CUDNN_ACTIVATION_ELU: return x > 0.f ? dy : dy * ((y + p.c) + p.c_lo);
    case CUDNN_ACTIVATION_SWISH: { /* s + z s (1 - s), s = sigmoid(z), 1 - s = sigmoid(-z) without cancellation */
        const swish_z zs = swish_split(p.sb, x);
        /* one exp, e^-|z| 2^64, as in the forward: e = e^-|z| itself where s is not small */
        const float ep = fdnn_scaled_expf_neg(0x1p64f, zs.nah), z = zs.z, e = ep * 0x1p-64f, inv = 1.f / (1.f + e);
        /* s below e^-60: s and the derivative scaled by 2^64 (back after the product with dy), so that they stay
         * normal floats where dy * act' is one (|dy| < 1e17). Where even the scaled derivative underflows, it is
         * still negative in the double path (until s = 0 there, z < -709.78): -2^-149 keeps that sign, so that
         * dy = +-inf gives -+inf and dy = +-0 gives -+0 as there */
        const int small = z < -60.f;
        const float sp = (z >= 0.f ? 1.f : small ? ep : e) * inv, sm = (z >= 0.f ? e : 1.f) * inv;
        float g = sp + z * sp * sm;
        {   /* (the constant chosen first, then one select on g == 0: the form GCC vectorizes; g == 0 is +0 here) */
            const float t0 = z > -709.78f ? -0x1p-149f : 0.f, t = small ? t0 : 0.f;
            g = g == 0.f ? t : g;
        }
        return dy * g * (small ? 0x1p-64f : 1.f);
    }
    case CUDNN_ACTIVATION_RELU: return x > 0.f ? dy : 0.f;
    default: return x > 0.f && x < p.c_up ? dy : 0.f; /* CLIPPED_RELU */
    }
}

/* out[i] = a * act + b * out[i] (out not read when !blend) over [lo, hi) */
INLINE void act_rows(int bwd, int m, int blend, const act_par *pp, const float *x, const float *y, const float *dy, float *out, int64_t lo,
                     int64_t hi)
{
    const act_par p = *pp; /* by value: out may not alias it */
    if (blend) {
#pragma omp simd
        for (int64_t i = lo; i < hi; i++) out[i] = p.a * (bwd ? act_bwd(m, p, x[i], y[i], dy[i]) : act_fwd(m, p, x[i])) + p.b * out[i];
    } else {
#pragma omp simd
        for (int64_t i = lo; i < hi; i++) out[i] = p.a * (bwd ? act_bwd(m, p, x[i], y[i], dy[i]) : act_fwd(m, p, x[i]));
    }
}

#define ACT_ROWS(M)                                                                                                                          \
    (bwd ? (blend ? act_rows(1, M, 1, p, x, y, dy, out, lo, hi) : act_rows(1, M, 0, p, x, y, dy, out, lo, hi))                               \
         : (blend ? act_rows(0, M, 1, p, x, y, dy, out, lo, hi) : act_rows(0, M, 0, p, x, y, dy, out, lo, hi)))

/* act_rows with the direction, the mode and the blend as constants */
FDNN_CLONES512 static void act_span(int bwd, int m, int blend, const act_par *p, const float *x, const float *y, const float *dy, float *out,
                                 int64_t lo, int64_t hi)
{
    switch (m) {
    case CUDNN_ACTIVATION_SIGMOID: ACT_ROWS(CUDNN_ACTIVATION_SIGMOID); break;
    case CUDNN_ACTIVATION_TANH: ACT_ROWS(CUDNN_ACTIVATION_TANH); break;
    case CUDNN_ACTIVATION_ELU: ACT_ROWS(CUDNN_ACTIVATION_ELU); break;
    case CUDNN_ACTIVATION_SWISH: ACT_ROWS(CUDNN_ACTIVATION_SWISH); break;
    case CUDNN_ACTIVATION_RELU: /* the forward is CLIPPED_RELU's with c = +inf */
        bwd ? ACT_ROWS(CUDNN_ACTIVATION_RELU) : ACT_ROWS(CUDNN_ACTIVATION_CLIPPED_RELU);
        break;
    default: ACT_ROWS(CUDNN_ACTIVATION_CLIPPED_RELU); break;
    }
}

/* The parameters as floats; 0 where the mode is not served or a parameter does not fit a float (the double path then) */
static int act_setup(int mode, double coef, double sb, int prop, double a, double b, act_par *p)
{
    switch (mode) {
    case CUDNN_ACTIVATION_SIGMOID:
    case CUDNN_ACTIVATION_RELU:
    case CUDNN_ACTIVATION_TANH:
    case CUDNN_ACTIVATION_CLIPPED_RELU:
    case CUDNN_ACTIVATION_ELU:
    case CUDNN_ACTIVATION_SWISH: break;
    default: return 0;
    }
    if (!(fabs(coef) <= FLT_MAX)) return 0;
    if (mode == CUDNN_ACTIVATION_SWISH && !(fabs(sb) >= 1e-10 && fabs(sb) <= FLT_MAX)) return 0;
    p->a = (float)a, p->b = (float)b; /* the FLOAT tensors' alpha and beta are floats */
    p->c = mode == CUDNN_ACTIVATION_RELU ? INFINITY : (float)coef;
    p->c_lo = (float)(coef - (double)p->c);
    p->c_up = (double)p->c < coef ? nextafterf(p->c, INFINITY) : p->c;
    p->sb = (float)sb;
    p->prop = prop;
    return 1;
}

/* out over n elements, in blocks of 16384 shared by the threads */
static void act_run(int bwd, int mode, const act_par *p, const float *x, const float *y, const float *dy, float *out, int64_t n)
{
    const int64_t blk = 16384, nb = (n + blk - 1) / blk;
    const int blend = p->b != 0.f;
#pragma omp parallel for schedule(static) if (n > PAR_MIN)
    for (int64_t k = 0; k < nb; k++) act_span(bwd, mode, blend, p, x, y, dy, out, k * blk, k + 1 < nb ? (k + 1) * blk : n);
}

int fdnn_cpu_act_fwd_f32(int mode, double coef, double sb, int prop, double a, const fdnn_tensor *xd, const void *x, double b,
                         const fdnn_tensor *yd, void *y)
{
    if (xd->dtype != CUDNN_DATA_FLOAT || !fdnn_ops_flat(xd, yd)) return 0;
    const int64_t n = fdnn_tensor_elems(xd);
    if (mode == CUDNN_ACTIVATION_RELU && !prop && b == 0) { /* exact: alpha times x or +0 */
        fdnn_cpu_relu_f32(x, x, y, n, (float)a);
        return 1;
    }
    act_par p;
    if (!act_setup(mode, coef, sb, prop, a, b, &p)) return 0;
    act_run(0, mode, &p, x, NULL, NULL, y, n);
    return 1;
}

int fdnn_cpu_act_bwd_f32(int mode, double coef, double sb, double a, const fdnn_tensor *yd, const void *y, const fdnn_tensor *dyd, const void *dy,
                         const fdnn_tensor *xd, const void *x, double b, const fdnn_tensor *dxd, void *dx)
{
    if (dxd->dtype != CUDNN_DATA_FLOAT || !fdnn_ops_flat(yd, dxd) || !fdnn_ops_flat(dyd, dxd) || !fdnn_ops_flat(xd, dxd)) return 0;
    const int64_t n = fdnn_tensor_elems(dxd);
    if (mode == CUDNN_ACTIVATION_RELU && b == 0) {
        fdnn_cpu_relu_f32(dy, x, dx, n, (float)a);
        return 1;
    }
    act_par p;
    if (!act_setup(mode, coef, sb, 0, a, b, &p)) return 0;
    act_run(1, mode, &p, x, y, dy, dx, n);
    return 1;
}
