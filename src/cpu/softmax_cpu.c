/* Softmax forward and backward straight on FLOAT tensors (the CPU backend's fast path; every other
 * case gathers into doubles in src/api/softmax.c). The work is cut into batches of G independent
 * softmaxes of L elements each: element (g, l) of a tensor sits at g*gs + l*ls. INSTANCE on a
 * dense image is one row of L = C*S (a long one cut into fixed chunks that the threads may share,
 * see "long INSTANCE rows"); CHANNEL is a batch per (image, block of spatial positions)
 * with L = C: rows one after the other where the channels are innermost (NHWC), else side by side,
 * vectorized over the positions (NCHW). Forward: a max (and min) pass, the exps and their sum, a
 * scale pass. exp is fdnn_expf (float, within 1 ulp) or, where the group's inputs allow, its
 * bit-identical in-range form fdnn_expf_inrange; sums are double. Nothing depends on the block
 * sizes or the thread count (a long INSTANCE row's results on its fixed chunk size only). The loop
 * functions are built for AVX-512F, AVX2 and the baseline (FDNN_CLONES512; the AVX-512F build
 * contracts to FMA, so its last bits may differ from the others'; Zen 4, 8x64x56x56, 2 threads:
 * NCHW CHANNEL forward 0.64 -> 0.36 ms, LOG backward 0.60 -> 0.36 ms, NHWC LOG backward 0.69 ->
 * 0.45 ms, the rest unchanged). */
#include <math.h>
#include <stdlib.h>
#include "ops_fast.h"
#include "vec_math.h"

#define SM_BLOCK 1024 /* most spatial positions per CHANNEL batch side by side (NCHW) */
#define SM_ROWS 256   /* most spatial positions per CHANNEL batch of rows (NHWC) */
#define SM_PARALLEL(p) ((p)->n * (p)->c * (p)->s > 65536)
#define INLINE static inline __attribute__((always_inline))

typedef struct { const float *p; int64_t gs, ls; } fview;  /* read-only operand */
typedef struct { float *p; int64_t gs, ls; } fview_w;      /* written operand */

/* ------------------------------------------------------------------ forward */

/* Each exp runs as fdnn_expf_inrange where the group's range allows (every shifted input within
 * [FDNN_EXPF_INRANGE_LO, FDNN_EXPF_INRANGE_HI], the same value bit for bit at half the cost), else as
 * fdnn_expf: the choice is made per softmax (per channel row of a CHANNEL block in backward LOG), from
 * the data alone, so results do not depend on the thread count. */
#define SM_EXP(fast, v) ((fast) ? fdnn_expf_inrange(v) : fdnn_expf(v))
#define SM_VL 8 /* lanes of the row reductions (an AVX2 vector of floats) */

/* Whether e^v may use fdnn_expf_inrange for every v in [mn, mx] (no shift: FAST forward, LOG backward) */
INLINE int exp_inrange(float mn, float mx) { return mn >= FDNN_EXPF_INRANGE_LO && mx <= FDNN_EXPF_INRANGE_HI; }

/* Whether e^(x - m) may use fdnn_expf_inrange for every x of a group whose non-NaN inputs lie in [mn, mx] (mx
 * -inf, mn +inf: none), m the shift (mx, or 0 for FAST). NaN inputs give NaN either way. */
INLINE int sm_inrange(int algo, float mn, float mx)
{
    if (algo == CUDNN_SOFTMAX_FAST) return exp_inrange(mn, mx);
    return mn - mx >= FDNN_EXPF_INRANGE_LO; /* false for inf - inf (+inf or only -inf inputs) */
}

/* max and min of the non-NaN elements of x[l*xl], l < L (-inf and +inf when there are none) */
INLINE void row_range(const float *x, int64_t xl, int64_t L, float *mxo, float *mno)
{
    float mx[SM_VL], mn[SM_VL];
    for (int k = 0; k < SM_VL; k++) mx[k] = -INFINITY, mn[k] = INFINITY;
    int64_t l = 0;
    for (; l + SM_VL <= L; l += SM_VL)
#pragma omp simd
        for (int k = 0; k < SM_VL; k++) {
            const float v = x[(l + k) * xl];
            mx[k] = v > mx[k] ? v : mx[k];
            mn[k] = v < mn[k] ? v : mn[k];
        }
    for (int k = 0; l + k < L; k++) {
        const float v = x[(l + k) * xl];
        mx[k] = v > mx[k] ? v : mx[k];
        mn[k] = v < mn[k] ? v : mn[k];
    }
    for (int k = 0; k < SM_VL / 2; k++) {
        mx[k] = mx[k + SM_VL / 2] > mx[k] ? mx[k + SM_VL / 2] : mx[k];
        mn[k] = mn[k + SM_VL / 2] < mn[k] ? mn[k + SM_VL / 2] : mn[k];
    }
    float a = mx[0], b = mn[0];
    for (int k = 1; k < SM_VL / 2; k++) a = mx[k] > a ? mx[k] : a, b = mn[k] < b ? mn[k] : b;
    *mxo = a, *mno = b;
}

/* the SM_VL double lanes of a row sum added up, in a fixed order */
INLINE double lanes_sum(const double s[SM_VL]) { return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7])); }

/* sum of e^(x - m) over the row in SM_VL double lanes (lane k the elements l = k mod SM_VL, in order), each
 * e^(x - m) also stored to y when y != NULL */
INLINE double row_exp_sum(int fast, const float *x, int64_t xl, float m, float *y, int64_t yl, int64_t L)
{
    double s[SM_VL];
    for (int k = 0; k < SM_VL; k++) s[k] = 0;
    int64_t l = 0;
    if (y)
        for (; l + SM_VL <= L; l += SM_VL)
#pragma omp simd
            for (int k = 0; k < SM_VL; k++) {
                const float e = SM_EXP(fast, x[(l + k) * xl] - m);
                y[(l + k) * yl] = e;
                s[k] += (double)e;
            }
    else
        for (; l + SM_VL <= L; l += SM_VL)
#pragma omp simd
            for (int k = 0; k < SM_VL; k++) s[k] += (double)SM_EXP(fast, x[(l + k) * xl] - m);
    for (int k = 0; l + k < L; k++) {
        const float e = SM_EXP(fast, x[(l + k) * xl] - m);
        if (y) y[(l + k) * yl] = e;
        s[k] += (double)e;
    }
    return lanes_sum(s);
}

/* The outputs of one softmax over L elements at x + l*xl (or of a piece of one: a chunk of a long INSTANCE row)
 * from its shift mx and sum of exps s: y = alpha*softmax + beta*y, where y holds the exps already when beta == 0
 * (not LOG). A NaN or +inf input turns the sum into NaN, and with it the whole row, as in double. */
INLINE void fwd_out(int fast, int algo, const float *x, int64_t xl, float *y, int64_t yl, int64_t L, float mx, double s, double a, double b)
{
    const float af = (float)a, bf = (float)b;
    if (algo == CUDNN_SOFTMAX_LOG) {
        const float sh = (float)((double)mx + log(s));
        if (b == 0)
            for (int64_t l = 0; l < L; l++) y[l * yl] = af * (x[l * xl] - sh);
        else
            for (int64_t l = 0; l < L; l++) y[l * yl] = af * (x[l * xl] - sh) + bf * y[l * yl];
        return;
    }
    const float f = (float)(a / s);
    if (b == 0)
        for (int64_t l = 0; l < L; l++) y[l * yl] *= f;
    else
        for (int64_t l = 0; l < L; l++) y[l * yl] = f * SM_EXP(fast, x[l * xl] - mx) + bf * y[l * yl];
}

/* Whether the sum-of-exps pass stores the exps in y for fwd_out to scale */
#define SM_KEEP(algo, b) ((algo) != CUDNN_SOFTMAX_LOG && (b) == 0)

/* One softmax over L elements at x + l*xl: max (and min, for the exp's range), then the sum of exp (kept in y
 * when beta == 0), then y = alpha*softmax + beta*y */
INLINE void fwd_row_k(int fast, int algo, const float *x, int64_t xl, float *y, int64_t yl, int64_t L, float mx, double a, double b)
{
    const double s = row_exp_sum(fast, x, xl, mx, SM_KEEP(algo, b) ? y : NULL, yl, L);
    fwd_out(fast, algo, x, xl, y, yl, L, mx, s, a, b);
}

INLINE void fwd_row(int algo, const float *x, int64_t xl, float *y, int64_t yl, int64_t L, double a, double b)
{
    float mx, mn;
    row_range(x, xl, L, &mx, &mn);
    const int fast = sm_inrange(algo, mn, mx);
    if (algo == CUDNN_SOFTMAX_FAST) mx = 0.f;
    if (fast) fwd_row_k(1, algo, x, xl, y, yl, L, mx, a, b);
    else fwd_row_k(0, algo, x, xl, y, yl, L, mx, a, b);
}

/* G <= SM_BLOCK softmaxes side by side, the loops running over g innermost; the range and sum loops take
 * four l at a time (one load and store of the per-g state per four elements), adding in the same order */
INLINE void fwd_cols_k(int fast, int algo, const float *x, int64_t xg, int64_t xl, float *y, int64_t yg, int64_t yl, int64_t G, int64_t L,
                       const float *mx, double a, double b)
{
    float f[SM_BLOCK];
    double s[SM_BLOCK];
    for (int64_t g = 0; g < G; g++) s[g] = 0;
    const int keep = algo != CUDNN_SOFTMAX_LOG && b == 0;
    int64_t l = 0;
#define SM_E(j) SM_EXP(fast, x[g * xg + (l + (j)) * xl] - mx[g])
    for (; l + 4 <= L; l += 4) {
        if (keep) /* simd: x and y are the same tensor or apart, so that no y row overlaps another row of x */
#pragma omp simd
            for (int64_t g = 0; g < G; g++) {
                const float e0 = SM_E(0), e1 = SM_E(1), e2 = SM_E(2), e3 = SM_E(3);
                y[g * yg + l * yl] = e0, y[g * yg + (l + 1) * yl] = e1, y[g * yg + (l + 2) * yl] = e2, y[g * yg + (l + 3) * yl] = e3;
                s[g] = s[g] + (double)e0 + (double)e1 + (double)e2 + (double)e3;
            }
        else
            for (int64_t g = 0; g < G; g++) s[g] = s[g] + (double)SM_E(0) + (double)SM_E(1) + (double)SM_E(2) + (double)SM_E(3);
    }
    for (; l < L; l++) {
        if (keep)
            for (int64_t g = 0; g < G; g++) {
                const float e = SM_E(0);
                y[g * yg + l * yl] = e;
                s[g] += (double)e;
            }
        else
            for (int64_t g = 0; g < G; g++) s[g] += (double)SM_E(0);
    }
#undef SM_E
    const float af = (float)a, bf = (float)b;
    if (algo == CUDNN_SOFTMAX_LOG) {
        for (int64_t g = 0; g < G; g++) f[g] = (float)((double)mx[g] + log(s[g]));
        for (l = 0; l < L; l++) {
            if (b == 0)
                for (int64_t g = 0; g < G; g++) y[g * yg + l * yl] = af * (x[g * xg + l * xl] - f[g]);
            else
                for (int64_t g = 0; g < G; g++) y[g * yg + l * yl] = af * (x[g * xg + l * xl] - f[g]) + bf * y[g * yg + l * yl];
        }
        return;
    }
    for (int64_t g = 0; g < G; g++) f[g] = (float)(a / s[g]);
    for (l = 0; l < L; l++) {
        if (keep)
            for (int64_t g = 0; g < G; g++) y[g * yg + l * yl] *= f[g];
        else
            for (int64_t g = 0; g < G; g++) y[g * yg + l * yl] = f[g] * SM_EXP(fast, x[g * xg + l * xl] - mx[g]) + bf * y[g * yg + l * yl];
    }
}

INLINE void fwd_cols(int algo, const float *x, int64_t xg, int64_t xl, float *y, int64_t yg, int64_t yl, int64_t G, int64_t L, double a,
                     double b)
{
    float mx[SM_BLOCK], mn[SM_BLOCK];
    for (int64_t g = 0; g < G; g++) mx[g] = -INFINITY, mn[g] = INFINITY;
    int64_t l = 0;
#define SM_MAX(u, v) ((v) > (u) ? (v) : (u))
#define SM_MIN(u, v) ((v) < (u) ? (v) : (u))
    for (; l + 4 <= L; l += 4)
        for (int64_t g = 0; g < G; g++) {
            const float v0 = x[g * xg + l * xl], v1 = x[g * xg + (l + 1) * xl], v2 = x[g * xg + (l + 2) * xl], v3 = x[g * xg + (l + 3) * xl];
            mx[g] = SM_MAX(SM_MAX(SM_MAX(SM_MAX(mx[g], v0), v1), v2), v3);
            mn[g] = SM_MIN(SM_MIN(SM_MIN(SM_MIN(mn[g], v0), v1), v2), v3);
        }
    for (; l < L; l++)
        for (int64_t g = 0; g < G; g++) {
            const float v = x[g * xg + l * xl];
            mx[g] = SM_MAX(mx[g], v);
            mn[g] = SM_MIN(mn[g], v);
        }
#undef SM_MAX
#undef SM_MIN
    int slow = 0;
    for (int64_t g = 0; g < G; g++) slow |= !sm_inrange(algo, mn[g], mx[g]);
    if (algo == CUDNN_SOFTMAX_FAST)
        for (int64_t g = 0; g < G; g++) mx[g] = 0.f;
    if (!slow) fwd_cols_k(1, algo, x, xg, xl, y, yg, yl, G, L, mx, a, b);
    else fwd_cols_k(0, algo, x, xg, xl, y, yg, yl, G, L, mx, a, b);
}

/* G softmaxes of L elements, at x.p + g*x.gs + l*x.ls: rows (each softmax's elements side by side: INSTANCE,
 * NHWC CHANNEL) one after the other, else side by side (NCHW CHANNEL, G <= SM_BLOCK); the unit-stride cases
 * spelled out so that they vectorize */
FDNN_CLONES512 static void fwd_batch(int algo, int rows, fview x, fview_w y, int64_t G, int64_t L, double a, double b)
{
    if (rows) {
        if (x.ls == 1 && y.ls == 1)
            for (int64_t g = 0; g < G; g++) fwd_row(algo, x.p + g * x.gs, 1, y.p + g * y.gs, 1, L, a, b);
        else
            for (int64_t g = 0; g < G; g++) fwd_row(algo, x.p + g * x.gs, x.ls, y.p + g * y.gs, y.ls, L, a, b);
    } else {
        if (x.gs == 1 && y.gs == 1) fwd_cols(algo, x.p, 1, x.ls, y.p, 1, y.ls, G, L, a, b);
        else fwd_cols(algo, x.p, x.gs, x.ls, y.p, y.gs, y.ls, G, L, a, b);
    }
}

/* ------------------------------------------------------------------ backward */

/* dx = alpha*(y*(dy - sum(dy*y))) + beta*dx, or for LOG alpha*(dy - exp(y)*sum(dy)) + beta*dx, over n
 * elements with the sum sf given; LOG picks the exp by the range of these n y */
INLINE void bwd_apply(int algo, const float *y, int64_t yl, const float *dy, int64_t dyl, float *dx, int64_t dxl, int64_t n, float sf, float af,
                      float bf, int beta)
{
    if (algo == CUDNN_SOFTMAX_LOG) {
        float mx, mn;
        row_range(y, yl, n, &mx, &mn);
        const int fast = exp_inrange(mn, mx);
#define SM_BWD_LOG(F)                                                                                                                        \
    do {                                                                                                                                     \
        if (!beta)                                                                                                                           \
            for (int64_t l = 0; l < n; l++) dx[l * dxl] = af * (dy[l * dyl] - SM_EXP(F, y[l * yl]) * sf);                                    \
        else                                                                                                                                 \
            for (int64_t l = 0; l < n; l++) dx[l * dxl] = af * (dy[l * dyl] - SM_EXP(F, y[l * yl]) * sf) + bf * dx[l * dxl];                 \
    } while (0)
        if (fast) SM_BWD_LOG(1);
        else SM_BWD_LOG(0);
#undef SM_BWD_LOG
    } else {
        if (!beta)
            for (int64_t l = 0; l < n; l++) dx[l * dxl] = af * (y[l * yl] * (dy[l * dyl] - sf));
        else
            for (int64_t l = 0; l < n; l++) dx[l * dxl] = af * (y[l * yl] * (dy[l * dyl] - sf)) + bf * dx[l * dxl];
    }
}

#define SM_BWD_CHUNK 256 /* LOG: elements of a row whose exp range is checked together */

/* dx over L elements from the row sum sf, SM_BWD_CHUNK elements at a time (LOG: each chunk's exp picked by its
 * range of y) */
INLINE void bwd_out(int algo, const float *y, int64_t yl, const float *dy, int64_t dyl, float *dx, int64_t dxl, int64_t L, float sf, double a, double b)
{
    const float af = (float)a, bf = (float)b;
    const int64_t chunk = algo == CUDNN_SOFTMAX_LOG ? SM_BWD_CHUNK : L;
    for (int64_t l0 = 0; l0 < L; l0 += chunk) {
        const int64_t n = L - l0 < chunk ? L - l0 : chunk;
        bwd_apply(algo, y + l0 * yl, yl, dy + l0 * dyl, dyl, dx + l0 * dxl, dxl, n, sf, af, bf, b != 0);
    }
}

INLINE void bwd_row(int algo, const float *y, int64_t yl, const float *dy, int64_t dyl, float *dx, int64_t dxl, int64_t L, double a, double b)
{
    double s = 0;
    if (algo == CUDNN_SOFTMAX_LOG) {
#pragma omp simd reduction(+ : s)
        for (int64_t l = 0; l < L; l++) s += (double)dy[l * dyl];
    } else {
#pragma omp simd reduction(+ : s)
        for (int64_t l = 0; l < L; l++) s += (double)dy[l * dyl] * (double)y[l * yl];
    }
    bwd_out(algo, y, yl, dy, dyl, dx, dxl, L, (float)s, a, b);
}

INLINE void bwd_cols(int algo, const float *y, int64_t yg, int64_t yl, const float *dy, int64_t dyg, int64_t dyl, float *dx, int64_t dxg,
                     int64_t dxl, int64_t G, int64_t L, double a, double b)
{
    double s[SM_BLOCK];
    float sf[SM_BLOCK];
    const int log_sm = algo == CUDNN_SOFTMAX_LOG;
    for (int64_t g = 0; g < G; g++) s[g] = 0;
    int64_t l = 0; /* four l at a time, adding in the same order; each loop below is written once per branch of
                    * log_sm, so that SM_T's test of it is a constant there */
#define SM_T(j) (log_sm ? (double)dy[g * dyg + (l + (j)) * dyl] : (double)dy[g * dyg + (l + (j)) * dyl] * (double)y[g * yg + (l + (j)) * yl])
    for (; l + 4 <= L; l += 4) {
        if (log_sm)
            for (int64_t g = 0; g < G; g++) s[g] = s[g] + SM_T(0) + SM_T(1) + SM_T(2) + SM_T(3);
        else
            for (int64_t g = 0; g < G; g++) s[g] = s[g] + SM_T(0) + SM_T(1) + SM_T(2) + SM_T(3);
    }
    for (; l < L; l++) {
        if (log_sm)
            for (int64_t g = 0; g < G; g++) s[g] += SM_T(0);
        else
            for (int64_t g = 0; g < G; g++) s[g] += SM_T(0);
    }
#undef SM_T
    for (int64_t g = 0; g < G; g++) sf[g] = (float)s[g];
    const float af = (float)a, bf = (float)b;
    for (l = 0; l < L; l++) {
        const float *yr = y + l * yl, *dr = dy + l * dyl;
        float *xr = dx + l * dxl;
        if (log_sm) {
            float mx, mn;
            row_range(yr, yg, G, &mx, &mn);
            const int fast = exp_inrange(mn, mx);
#define SM_BWD_LOG(F)                                                                                                                        \
    do {                                                                                                                                     \
        if (b == 0)                                                                                                                          \
            for (int64_t g = 0; g < G; g++) xr[g * dxg] = af * (dr[g * dyg] - SM_EXP(F, yr[g * yg]) * sf[g]);                                \
        else                                                                                                                                 \
            for (int64_t g = 0; g < G; g++) xr[g * dxg] = af * (dr[g * dyg] - SM_EXP(F, yr[g * yg]) * sf[g]) + bf * xr[g * dxg];             \
    } while (0)
            if (fast) SM_BWD_LOG(1);
            else SM_BWD_LOG(0);
#undef SM_BWD_LOG
        } else if (b == 0)
            for (int64_t g = 0; g < G; g++) xr[g * dxg] = af * (yr[g * yg] * (dr[g * dyg] - sf[g]));
        else
            for (int64_t g = 0; g < G; g++) xr[g * dxg] = af * (yr[g * yg] * (dr[g * dyg] - sf[g])) + bf * xr[g * dxg];
    }
}

FDNN_CLONES512 static void bwd_batch(int algo, int rows, fview y, fview dy, fview_w dx, int64_t G, int64_t L, double a, double b)
{
    if (rows) {
        if (y.ls == 1 && dy.ls == 1 && dx.ls == 1)
            for (int64_t g = 0; g < G; g++) bwd_row(algo, y.p + g * y.gs, 1, dy.p + g * dy.gs, 1, dx.p + g * dx.gs, 1, L, a, b);
        else
            for (int64_t g = 0; g < G; g++) bwd_row(algo, y.p + g * y.gs, y.ls, dy.p + g * dy.gs, dy.ls, dx.p + g * dx.gs, dx.ls, L, a, b);
    } else {
        if (y.gs == 1 && dy.gs == 1 && dx.gs == 1) bwd_cols(algo, y.p, 1, y.ls, dy.p, 1, dy.ls, dx.p, 1, dx.ls, G, L, a, b);
        else bwd_cols(algo, y.p, y.gs, y.ls, dy.p, dy.gs, dy.ls, dx.p, dx.gs, dx.ls, G, L, a, b);
    }
}

/* ------------------------------------------------------------------ long INSTANCE rows */

/* An INSTANCE row of at least SM_LONG elements (dense, unit stride in every tensor) is cut into chunks of SM_CHUNK
 * elements (the last one shorter): each pass computes every chunk's partial result (range; sum in SM_VL double
 * lanes) and the next pass combines them in chunk order, so that the results depend on the fixed chunk size alone.
 * Who computes a chunk is then free: the images spread whole over the threads as far as they go round, and the
 * n % threads left over (all of them when n < threads: one image on one thread was the whole call) are each shared
 * by all threads, each taking the same contiguous share of the chunks in every pass. Sharing every image instead,
 * so that a thread's chunks of one pass are still in its L2 for the next, measured no faster than whole images at
 * 8x64x56x56 on 2 Zen 3 cores (the passes are bound by the exps, not by the L3): the barriers cost what L2 saved. */
#define SM_CHUNK 2048
#define SM_LONG (16 * SM_CHUNK)
_Static_assert(SM_CHUNK % SM_VL == 0 && SM_CHUNK % SM_BWD_CHUNK == 0, "chunks keep the row's lanes and LOG backward exp chunks");

typedef struct { float mx, mn; double s; } sm_part; /* a chunk's range and sum (of exps, or backward's) */

/* length of chunk c of a row of L elements */
static inline int64_t chunk_len(int64_t L, int64_t c) { return L - c * SM_CHUNK < SM_CHUNK ? L - c * SM_CHUNK : SM_CHUNK; }

/* The passes over the chunks [c0, c1) of a row of L elements: each chunk's range; its sum of e^(x - m) (the exps
 * stored to y when y != NULL); backward's sum of dy (LOG) or dy*y, in SM_VL double lanes as row_exp_sum's; the
 * outputs, element by element */
FDNN_CLONES512 static void chunks_range(const float *x, int64_t L, int64_t c0, int64_t c1, sm_part *cp)
{
    for (int64_t c = c0; c < c1; c++) row_range(x + c * SM_CHUNK, 1, chunk_len(L, c), &cp[c].mx, &cp[c].mn);
}

FDNN_CLONES512 static void chunks_exp_sum(int fast, const float *x, float m, float *y, int64_t L, int64_t c0, int64_t c1, sm_part *cp)
{
    for (int64_t c = c0; c < c1; c++) {
        const int64_t o = c * SM_CHUNK, n = chunk_len(L, c);
        cp[c].s = fast ? row_exp_sum(1, x + o, 1, m, y ? y + o : NULL, 1, n) : row_exp_sum(0, x + o, 1, m, y ? y + o : NULL, 1, n);
    }
}

FDNN_CLONES512 static void chunks_fwd_out(int fast, int algo, const float *x, float *y, int64_t L, int64_t c0, int64_t c1, float mx, double s, double a,
                                       double b)
{
    const int64_t o = c0 * SM_CHUNK, n = (c1 * SM_CHUNK < L ? c1 * SM_CHUNK : L) - o;
    if (fast) fwd_out(1, algo, x + o, 1, y + o, 1, n, mx, s, a, b);
    else fwd_out(0, algo, x + o, 1, y + o, 1, n, mx, s, a, b);
}

FDNN_CLONES512 static void chunks_bwd_sum(int log_sm, const float *y, const float *dy, int64_t L, int64_t c0, int64_t c1, sm_part *cp)
{
    for (int64_t c = c0; c < c1; c++) {
        const float *yc = y + c * SM_CHUNK, *dc = dy + c * SM_CHUNK;
        const int64_t n = chunk_len(L, c);
        double s[SM_VL];
        for (int k = 0; k < SM_VL; k++) s[k] = 0;
        int64_t l = 0;
        if (log_sm)
            for (; l + SM_VL <= n; l += SM_VL)
#pragma omp simd
                for (int k = 0; k < SM_VL; k++) s[k] += (double)dc[l + k];
        else
            for (; l + SM_VL <= n; l += SM_VL)
#pragma omp simd
                for (int k = 0; k < SM_VL; k++) s[k] += (double)dc[l + k] * (double)yc[l + k];
        for (int k = 0; l + k < n; k++) s[k] += log_sm ? (double)dc[l + k] : (double)dc[l + k] * (double)yc[l + k];
        cp[c].s = lanes_sum(s);
    }
}

/* (bwd_out's LOG exp chunks start at multiples of SM_BWD_CHUNK in the row, as in bwd_row) */
FDNN_CLONES512 static void chunks_bwd_out(int algo, const float *y, const float *dy, float *dx, int64_t L, int64_t c0, int64_t c1, float sf, double a,
                                       double b)
{
    const int64_t o = c0 * SM_CHUNK, n = (c1 * SM_CHUNK < L ? c1 * SM_CHUNK : L) - o;
    bwd_out(algo, y + o, 1, dy + o, 1, dx + o, 1, n, sf, a, b);
}

/* ------------------------------------------------------------------ driver */

/* The batches of the call: INSTANCE one per image (tensors dense per image, in one layout), CHANNEL one per
 * (image, block of blk positions): rows where the channels are innermost, else side by side. The blocks are at
 * most SM_ROWS or SM_BLOCK positions and small enough for two tasks a thread; the results do not depend on them. */
typedef struct {
    int instance, rows;
    int64_t n, c, s, blk, tasks, per_img;
} sm_plan;

static int plan(int mode, const fdnn_tensor *const *t, fdnn_ncs *v, int nt, sm_plan *p)
{
    for (int i = 0; i < nt; i++)
        if (t[i]->dtype != CUDNN_DATA_FLOAT || !fdnn_ops_ncs(t[i], &v[i])) return 0;
    p->n = v[0].n;
    p->c = v[0].c;
    p->s = v[0].s;
    p->instance = mode == CUDNN_SOFTMAX_MODE_INSTANCE;
    if (p->instance) { /* one run of C*S floats per image, in the same order in every tensor */
        for (int i = 0; i < nt; i++)
            if (!fdnn_ops_flat(t[i], t[0]) || v[i].sn != p->c * p->s) return 0;
        p->rows = 1;
        p->per_img = 1;
    } else {
        p->rows = v[0].sc == 1 && p->c >= 8; /* channels innermost: vectorize over them */
        const int64_t cap = p->rows ? SM_ROWS : SM_BLOCK, threads = SM_PARALLEL(p) ? fdnn_ops_max_threads() : 1;
        int64_t nb = (p->s + cap - 1) / cap;
        const int64_t want = (2 * threads + p->n - 1) / p->n; /* blocks per image for two tasks a thread */
        if (nb < want) nb = want < p->s ? want : p->s;
        int64_t blk = (p->s + nb - 1) / nb;
        blk = (blk + 15) / 16 * 16;
        p->blk = blk < cap ? blk : cap;
        p->per_img = (p->s + p->blk - 1) / p->blk;
    }
    p->tasks = p->n * p->per_img;
    return 1;
}

/* task k of the plan as (first image element offset, G, L, gs, ls) for view v */
static void task_view(const sm_plan *p, const fdnn_ncs *v, int64_t k, int64_t *off, int64_t *G, int64_t *L, int64_t *gs, int64_t *ls)
{
    const int64_t n = k / p->per_img, j = k % p->per_img;
    if (p->instance) {
        *off = n * v->sn, *G = 1, *L = p->c * p->s, *gs = 0, *ls = 1;
    } else {
        const int64_t s0 = j * p->blk;
        *off = n * v->sn + s0 * v->ss, *G = p->s - s0 < p->blk ? p->s - s0 : p->blk, *L = p->c, *gs = v->ss, *ls = v->sc;
    }
}

/* The chunks [*c0, *c1) of nc that the calling thread takes of an image: all of them, or when the team shares the
 * image (every thread calls for the same image) its share, the same share in every pass. */
static void chunk_share(int shared, int64_t nc, int64_t *c0, int64_t *c1)
{
    *c0 = 0, *c1 = nc;
    if (shared) fdnn_ops_share(nc, c0, c1);
}

/* the images [*lo, *hi) that the calling thread takes whole, one team's worth per thread; the last n % team
 * images (*rest on) are shared by the whole team, chunk by chunk */
static void image_share(int64_t n, int64_t *lo, int64_t *hi, int64_t *rest)
{
    *rest = n - n % fdnn_ops_team();
    fdnn_ops_share(*rest, lo, hi);
}

/* A call on long INSTANCE rows: forward x (u) into y (w), backward y (u) and dy (d) into dx (w) */
typedef struct {
    const sm_plan *p;
    const fdnn_ncs *v;
    int algo, bwd;
    double a, b;
    const float *u, *d;
    float *w;
} sm_long;

/* Forward of image n: every chunk's range into cp, then (the whole row's range picking the exp, as fwd_row does)
 * every chunk's sum of exps, then the outputs from the sums added in chunk order. Shared: one barrier after each
 * of the first two passes, so that a thread reads cp only between them. */
static void fwd_image(const sm_long *k, int64_t n, sm_part *cp, int shared)
{
    const int algo = k->algo;
    const int64_t L = k->p->c * k->p->s, nc = (L + SM_CHUNK - 1) / SM_CHUNK;
    const float *xn = k->u + n * k->v[0].sn;
    float *yn = k->w + n * k->v[1].sn;
    int64_t c0, c1;
    chunk_share(shared, nc, &c0, &c1);
    chunks_range(xn, L, c0, c1, cp);
    if (shared) {
#pragma omp barrier
    }
    float mx = -INFINITY, mn = INFINITY;
    for (int64_t c = 0; c < nc; c++) mx = cp[c].mx > mx ? cp[c].mx : mx, mn = cp[c].mn < mn ? cp[c].mn : mn;
    const int fast = sm_inrange(algo, mn, mx);
    if (algo == CUDNN_SOFTMAX_FAST) mx = 0.f;
    chunks_exp_sum(fast, xn, mx, SM_KEEP(algo, k->b) ? yn : NULL, L, c0, c1, cp);
    if (shared) {
#pragma omp barrier
    }
    double s = 0;
    for (int64_t c = 0; c < nc; c++) s += cp[c].s;
    chunks_fwd_out(fast, algo, xn, yn, L, c0, c1, mx, s, k->a, k->b);
}

/* Backward of image n: every chunk's sum into cp, then dx from the sums added in chunk order. Shared: one barrier,
 * after the sums. */
static void bwd_image(const sm_long *k, int64_t n, sm_part *cp, int shared)
{
    const int64_t L = k->p->c * k->p->s, nc = (L + SM_CHUNK - 1) / SM_CHUNK;
    const float *yn = k->u + n * k->v[0].sn, *dn = k->d + n * k->v[1].sn;
    float *xn = k->w + n * k->v[2].sn;
    int64_t c0, c1;
    chunk_share(shared, nc, &c0, &c1);
    chunks_bwd_sum(k->algo == CUDNN_SOFTMAX_LOG, yn, dn, L, c0, c1, cp);
    if (shared) {
#pragma omp barrier
    }
    double s = 0;
    for (int64_t c = 0; c < nc; c++) s += cp[c].s;
    chunks_bwd_out(k->algo, yn, dn, xn, L, c0, c1, (float)s, k->a, k->b);
}

/* A call on long INSTANCE rows: the images spread whole over the threads, each thread its own area of chunk
 * results, then the images left over shared by all, their chunk results in two shared areas in turn: a thread may
 * write the next image's (after its last pass, which has no barrier) while another still reads this one's, but
 * not the image's after that, whose writes wait for every thread at the next image's first barrier. Returns 0 when
 * the scratch cannot be had (the general path then runs). */
static int sm_long_run(const sm_long *k)
{
    const int64_t nc = (k->p->c * k->p->s + SM_CHUNK - 1) / SM_CHUNK, areas = 2 + (SM_PARALLEL(k->p) ? fdnn_ops_max_threads() : 1);
    sm_part *cp = malloc((size_t)(areas * nc) * sizeof *cp);
    if (!cp) return 0;
#pragma omp parallel if (SM_PARALLEL(k->p))
    {
        int64_t lo, hi, rest;
        image_share(k->p->n, &lo, &hi, &rest);
        sm_part *own = cp + (2 + fdnn_ops_thread()) * nc;
        for (int64_t n = lo; n < hi; n++) k->bwd ? bwd_image(k, n, own, 0) : fwd_image(k, n, own, 0);
        for (int64_t n = rest; n < k->p->n; n++) k->bwd ? bwd_image(k, n, cp + (n % 2) * nc, 1) : fwd_image(k, n, cp + (n % 2) * nc, 1);
    }
    free(cp);
    return 1;
}

int fdnn_cpu_softmax_fwd_f32(int algo, int mode, double a, const fdnn_tensor *xd, const void *x, double b, const fdnn_tensor *yd, void *y)
{
    const fdnn_tensor *t[2] = {xd, yd};
    fdnn_ncs v[2];
    sm_plan p;
    if (!plan(mode, t, v, 2, &p)) return 0;
    if (p.instance && p.c * p.s >= SM_LONG) {
        const sm_long k = {&p, v, algo, 0, a, b, x, NULL, y};
        return sm_long_run(&k);
    }
#pragma omp parallel for schedule(static) if (SM_PARALLEL(&p))
    for (int64_t k = 0; k < p.tasks; k++) {
        int64_t ox, oy, G, L;
        fview xv;
        fview_w yv;
        task_view(&p, &v[0], k, &ox, &G, &L, &xv.gs, &xv.ls);
        task_view(&p, &v[1], k, &oy, &G, &L, &yv.gs, &yv.ls);
        xv.p = (const float *)x + ox;
        yv.p = (float *)y + oy;
        fwd_batch(algo, p.rows, xv, yv, G, L, a, b);
    }
    return 1;
}

int fdnn_cpu_softmax_bwd_f32(int algo, int mode, double a, const fdnn_tensor *yd, const void *y, const fdnn_tensor *dyd, const void *dy,
                             double b, const fdnn_tensor *dxd, void *dx)
{
    const fdnn_tensor *t[3] = {yd, dyd, dxd};
    fdnn_ncs v[3];
    sm_plan p;
    if (!plan(mode, t, v, 3, &p)) return 0;
    if (p.instance && p.c * p.s >= SM_LONG) {
        const sm_long k = {&p, v, algo, 1, a, b, y, dy, dx};
        return sm_long_run(&k);
    }
#pragma omp parallel for schedule(static) if (SM_PARALLEL(&p))
    for (int64_t k = 0; k < p.tasks; k++) {
        int64_t oy, od, ox, G, L;
        fview yv, dv;
        fview_w xv;
        task_view(&p, &v[0], k, &oy, &G, &L, &yv.gs, &yv.ls);
        task_view(&p, &v[1], k, &od, &G, &L, &dv.gs, &dv.ls);
        task_view(&p, &v[2], k, &ox, &G, &L, &xv.gs, &xv.ls);
        yv.p = (const float *)y + oy;
        dv.p = (const float *)dy + od;
        xv.p = (float *)dx + ox;
        bwd_batch(algo, p.rows, yv, dv, xv, G, L, a, b);
    }
    return 1;
}
