/* LRN cross-channel and divisive normalization, forward and backward, straight on FLOAT tensors (the CPU
 * backend's fast path; src/api/lrn.c gathers every other case into doubles for src/cpu/ops_lrn.c, whose header
 * gives the math). Every tensor is seen through fdnn_ops_ncs (NCHW, NHWC, NCDHW, NDHWC, gaps between images or
 * channels), each with its own strides. Window sums are double, each formed afresh from double squares (no
 * running sums); D^-beta is float (neg_pow: within 2.6e-7 of pow), or libm's pow in double where D or the power
 * is outside float's normal range (NaN, D <= 0 under a negative lrnAlpha, squares past float); each result is
 * formed in double and blended as y = alpha*r + beta*y (y not read when beta == 0), rounded once.
 *
 * LRN works on tiles of one image's C channels by P positions, kept as C x P double arrays (row c = channel c)
 * padded with zero rows so that a channel window is a sum of n whole rows, in the general path's order (the sums
 * are the general path's bit for bit): P up to 64 positions where the positions are contiguous in x (NCHW), one
 * position where the channels are (NHWC with 16 channels or more), the window sums and powers running over the
 * tile's flat C*P elements. Divisive normalization works on units of one image's L channels (L = 1, or up to 8
 * where the channels are innermost in x), kept as S x L double arrays: separable box sums, one pass per spatial
 * dim, each output a fresh sum of the n inputs of its window (zero padding, or the clipped window at a row's
 * ends). With means, the window sums of (x - r) and (x - r)^2 (r the unit's mean of x per channel) are expanded
 * around the centre's mean m: sum (x_j - m)^2 = S2 - 2 (m - r) S1 + (m - r)^2 cnt, cnt the window's in-range count;
 * where that may have cancelled (dn_denominator) the sum is taken from the window itself, as the general path does.
 * Tiles and units are split across OpenMP threads; each is computed whole by one thread, so results do not
 * depend on the thread count. An output must not overlap an input unless it is that input (same pointer and
 * view); otherwise, and for other types and strides, the general path runs. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_fast.h"
#include "vec_math.h"
#include "../core/ops_desc.h"

#define INLINE static inline __attribute__((always_inline))

enum {
    PAR_ELEMS = 65536, /* threads above this many elements */
    TILE_ELEMS = 4096, /* LRN tile: about this many elements (C x P) */
    TILE_POS = 64,     /* LRN tile: at most this many positions */
    DN_LANES = 8       /* divisive normalization: channels per unit where they are innermost */
};

/* beta split for powf_neg: hi holds beta's 12 leading significant bits (hi * e is exact in float for an
 * exponent |e| <= 128), lo the rest, all = (float)beta */
typedef struct { float hi, lo, all; } fbeta;

static fbeta split_beta(double beta)
{
    fbeta b;
    b.all = (float)beta;
    b.hi = fdnn_bits_f(fdnn_f_bits(b.all) & 0xfffff000u);
    b.lo = (float)(beta - b.hi);
    return b;
}

/* d^-beta for a positive normal float d, branch-free (it vectorizes): d = m 2^e with m in [sqrt(1/2), sqrt(2)),
 * log2 m from the Cephes logf polynomial in m - 1, then -beta log2 d = -(hi e) - lo e - beta log2 m taken apart
 * into n1 = round(hi e) (exact), an integer n2 and |r| <= 1/2: 2^r by fdnn_expf's polynomial, times 2^(n2 - n1).
 * *k = n2 - n1: the result stands where |k| <= 125 (within 2.6e-7 of pow over d in [1e-30, 1e30], beta
 * 0.01 to 3.7), else it is clamped and the caller must take libm's pow. */
INLINE float powf_neg(float d, fbeta b, int32_t *k)
{
    const uint32_t u = fdnn_f_bits(d);
    const float e0 = (float)((int32_t)(u >> 23) - 127), m0 = fdnn_bits_f((u & 0x007fffffu) | 0x3f800000u); /* d = m0 2^e0 */
    const float e = m0 > 1.41421356f ? e0 + 1.f : e0, m = m0 > 1.41421356f ? 0.5f * m0 : m0;
    const float f = m - 1.f, z = f * f;
    float p = 7.0376836292e-2f;
    p = p * f - 1.1514610310e-1f;
    p = p * f + 1.1676998740e-1f;
    p = p * f - 1.2420140846e-1f;
    p = p * f + 1.4249322787e-1f;
    p = p * f - 1.6668057665e-1f;
    p = p * f + 2.0000714765e-1f;
    p = p * f - 2.4999993993e-1f;
    p = p * f + 3.3333331174e-1f;
    const float l2 = (f + (p * f * z - 0.5f * z)) * 1.44269504088896341f;
    const float sh = 12582912.f; /* 1.5 * 2^23: adding it rounds to an integer */
    const float he = b.hi * e, n1 = (he + sh) - sh;
    const float a = (n1 - he) - b.lo * e - b.all * l2; /* -beta log2 d + n1 */
    const float n2 = (a + sh) - sh, q = fdnn_expf_reduced((a - n2) * 0.693147180559945f);
    int32_t kk = (int32_t)(n2 - n1);
    *k = kk;
    kk = kk > 125 ? 125 : kk < -125 ? -125 : kk;
    return q * fdnn_bits_f((uint32_t)(kk + 127) << 23);
}

/* 1 where d lies in float's normal range (and is not NaN) */
static inline int f_normal(double d) { return d >= FLT_MIN && d <= FLT_MAX; }

/* pw[i] = d[i]^-beta for i < len, in float: beta == 0.75 (cuDNN's default) as 1/(sqrt(d) sqrt(sqrt(d)))
 * (within 2.3e-7 of pow), any other beta by powf_neg; libm's pow in double where d is outside float's
 * normal range (NaN, D <= 0 for a negative lrnAlpha, overflowed squares) or the power leaves it */
INLINE void neg_pow(const double *restrict d, double *restrict pw, int64_t len, double beta)
{
    int bad = 0;
    if (beta == 0.75) {
        for (int64_t i = 0; i < len; i++) {
            const double di = d[i];
            const int ok = f_normal(di);
            const float s = sqrtf((float)(ok ? di : 1.0));
            pw[i] = 1.f / (s * sqrtf(s));
            bad |= !ok;
        }
        if (bad)
            for (int64_t i = 0; i < len; i++)
                if (!f_normal(d[i])) pw[i] = pow(d[i], -beta);
        return;
    }
    const fbeta b = split_beta(beta);
    for (int64_t i = 0; i < len; i++) {
        const double di = d[i];
        const int ok = f_normal(di);
        int32_t k;
        pw[i] = powf_neg((float)(ok ? di : 1.0), b, &k);
        bad |= !ok | (k > 125) | (k < -125);
    }
    if (bad)
        for (int64_t i = 0; i < len; i++) {
            int32_t k = 0;
            if (f_normal(d[i])) powf_neg((float)d[i], b, &k);
            if (!f_normal(d[i]) || k > 125 || k < -125) pw[i] = pow(d[i], -beta);
        }
}

/* dst[f] = sum_{u < n} src[f + u*step] for f < len: a window of n rows (or lanes) of a padded array */
INLINE void win_sum(const double *restrict src, double *restrict dst, int64_t len, int64_t step, int n)
{
    for (int64_t f = 0; f < len; f++) dst[f] = src[f];
    for (int u = 1; u < n; u++) {
        const double *s = src + u * step;
        for (int64_t f = 0; f < len; f++) dst[f] += s[f];
    }
}

/* A FLOAT operand of a tile or unit: element (c, p) at p[c*cs + p*ps] */
typedef struct { const float *p; int64_t cs, ps; } rview;
typedef struct { float *p; int64_t cs, ps; } wview;

/* 1 when output o may be written while input i is read element by element: no shared byte, or the same
 * tensor (pointer and view) */
static int io_ok(const fdnn_tensor *od, const void *o, const fdnn_ncs *ov, const fdnn_tensor *id, const void *i, const fdnn_ncs *iv)
{
    if (fdnn_ops_apart(od, o, id, i)) return 1;
    return o == i && ov->sn == iv->sn && ov->sc == iv->sc && ov->ss == iv->ss;
}

/* FLOAT tensors t[0..nt) (equal dims, checked by the caller) as fdnn_ops_ncs views */
static int views(const fdnn_tensor *const *t, int nt, fdnn_ncs *v)
{
    for (int i = 0; i < nt; i++)
        if (t[i]->dtype != CUDNN_DATA_FLOAT || !fdnn_ops_ncs(t[i], &v[i])) return 0;
    return 1;
}

/* ================================================================= LRN */

typedef struct {
    int64_t C, S, P, tiles_per_img; /* channels, positions, positions per tile */
    int n, lb, la;                  /* window, look behind, look ahead */
    double k, c, beta, a, b;        /* c = lrnAlpha / n; a, b the blend */
} lrn_par;

/* BODY over the tile's (c, p), the unit-stride dim innermost (p unless unit_c) */
#define TILE_LOOP(unit_c, C, P, BODY)                \
    do {                                             \
        if (unit_c)                                  \
            for (int64_t p = 0; p < (P); p++)        \
                for (int64_t c = 0; c < (C); c++) {  \
                    BODY;                            \
                }                                    \
        else                                         \
            for (int64_t c = 0; c < (C); c++)        \
                for (int64_t p = 0; p < (P); p++) {  \
                    BODY;                            \
                }                                    \
    } while (0)

/* Rows front .. front + C - 1 of the padded tile array dst (C + n - 1 rows of P) = x^2; the other rows = 0 */
INLINE void tile_squares(const lrn_par *q, int64_t P, rview x, int front, double *restrict dst)
{
    memset(dst, 0, sizeof(double) * (size_t)(front * P));
    memset(dst + (front + q->C) * P, 0, sizeof(double) * (size_t)((q->n - 1 - front) * P));
    dst += front * P;
    TILE_LOOP(x.cs == 1, q->C, P, const double v = x.p[c * x.cs + p * x.ps]; dst[c * P + p] = v * v);
}

/* D = k + c * (window sum of the squares in sq) over the tile's C*P elements, pw = D^-beta */
INLINE void tile_pow(const lrn_par *q, int64_t P, const double *sq, double *restrict d, double *restrict pw)
{
    const int64_t len = q->C * P;
    win_sum(sq, d, len, P, q->n);
    for (int64_t f = 0; f < len; f++) d[f] = q->k + q->c * d[f];
    neg_pow(d, pw, len, q->beta);
}

/* y = a * (x * pw) + b * y over the tile */
INLINE void tile_fwd_out(const lrn_par *q, int64_t P, rview x, wview y, const double *pw)
{
    TILE_LOOP(y.cs == 1, q->C, P, const double v = q->a * ((double)x.p[c * x.cs + p * x.ps] * pw[c * P + p]); float *o = y.p + c * y.cs + p * y.ps;
              *o = (float)(q->b != 0 ? v + q->b * (double)*o : v));
}

/* The unit-stride forms of view v for the tile loops: its positions (ps == 1) or its channels (cs == 1) */
#define UNIT_P(v) {(v).p, (v).cs, 1}
#define UNIT_C(v) {(v).p, 1, (v).ps}

/* One tile of the forward pass; sq, d and pw the thread's scratch */
FDNN_CLONES static void lrn_fwd_tile(const lrn_par *q, int64_t P, rview x, wview y, double *sq, double *d, double *pw)
{
    if (x.ps == 1) tile_squares(q, P, (rview)UNIT_P(x), q->lb, sq);
    else if (x.cs == 1) tile_squares(q, P, (rview)UNIT_C(x), q->lb, sq);
    else tile_squares(q, P, x, q->lb, sq);
    tile_pow(q, P, sq, d, pw);
    if (x.ps == 1 && y.ps == 1) tile_fwd_out(q, P, (rview)UNIT_P(x), (wview)UNIT_P(y), pw);
    else if (x.cs == 1 && y.cs == 1) tile_fwd_out(q, P, (rview)UNIT_C(x), (wview)UNIT_C(y), pw);
    else tile_fwd_out(q, P, x, y, pw);
}

/* Backward (ops_lrn.c), with t_i = dy_i x_i D_i^(-beta-1) in rows la .. la + C - 1 of tp:
 * dx = a * (dy * D^-beta - 2 beta c * x * sum_{i: p in W(i)} t_i) + b * dx */
INLINE void tile_bwd_t(const lrn_par *q, int64_t P, rview x, rview dy, const double *d, const double *pw, double *restrict tp)
{
    memset(tp, 0, sizeof(double) * (size_t)(q->la * P));
    memset(tp + (q->la + q->C) * P, 0, sizeof(double) * (size_t)(q->lb * P));
    tp += q->la * P;
    TILE_LOOP(x.cs == 1, q->C, P, const int64_t f = c * P + p;
              tp[f] = (double)dy.p[c * dy.cs + p * dy.ps] * (double)x.p[c * x.cs + p * x.ps] * pw[f] / d[f]);
}

INLINE void tile_bwd_out(const lrn_par *q, int64_t P, rview x, rview dy, wview dx, const double *pw, const double *rt)
{
    const double f2 = 2.0 * q->beta * q->c;
    TILE_LOOP(dx.cs == 1, q->C, P, const int64_t f = c * P + p;
              const double g = (double)dy.p[c * dy.cs + p * dy.ps] * pw[f] - f2 * (double)x.p[c * x.cs + p * x.ps] * rt[f];
              const double v = q->a * g; float *o = dx.p + c * dx.cs + p * dx.ps; *o = (float)(q->b != 0 ? v + q->b * (double)*o : v));
}

/* One tile of the backward pass; sq, d, pw and tp the thread's scratch */
FDNN_CLONES static void lrn_bwd_tile(const lrn_par *q, int64_t P, rview x, rview dy, wview dx, double *sq, double *d, double *pw, double *tp)
{
    const int unit_p = x.ps == 1 && dy.ps == 1, unit_c = x.cs == 1 && dy.cs == 1;
    if (x.ps == 1) tile_squares(q, P, (rview)UNIT_P(x), q->lb, sq);
    else if (x.cs == 1) tile_squares(q, P, (rview)UNIT_C(x), q->lb, sq);
    else tile_squares(q, P, x, q->lb, sq);
    tile_pow(q, P, sq, d, pw);
    if (unit_p) tile_bwd_t(q, P, (rview)UNIT_P(x), (rview)UNIT_P(dy), d, pw, tp);
    else if (unit_c) tile_bwd_t(q, P, (rview)UNIT_C(x), (rview)UNIT_C(dy), d, pw, tp);
    else tile_bwd_t(q, P, x, dy, d, pw, tp);
    double *rt = d; /* D is spent: the transposed window sums of t (i from p - la to p + lb) */
    win_sum(tp, rt, q->C * P, P, q->n);
    if (unit_p && dx.ps == 1) tile_bwd_out(q, P, (rview)UNIT_P(x), (rview)UNIT_P(dy), (wview)UNIT_P(dx), pw, rt);
    else if (unit_c && dx.cs == 1) tile_bwd_out(q, P, (rview)UNIT_C(x), (rview)UNIT_C(dy), (wview)UNIT_C(dx), pw, rt);
    else tile_bwd_out(q, P, x, dy, dx, pw, rt);
}

/* The tiling of x's view: P positions per tile (one where the channels are innermost and many) */
static lrn_par lrn_plan(const struct cudnnLRNStruct *d, const fdnn_ncs *x, double a, double b)
{
    lrn_par q;
    q.C = x->c;
    q.S = x->s;
    q.n = (int)d->n;
    q.lb = (q.n - 1) / 2;
    q.la = q.n - 1 - q.lb;
    q.k = d->k;
    q.c = d->alpha / q.n;
    q.beta = d->beta;
    q.a = a;
    q.b = b;
    int64_t P = TILE_ELEMS / q.C;
    P = P > TILE_POS ? TILE_POS : P < 4 ? 4 : P;
    if (x->ss != 1 && x->sc == 1 && q.C >= 16) P = 1;
    q.P = P < q.S ? P : q.S;
    q.tiles_per_img = (q.S + q.P - 1) / q.P;
    return q;
}

/* tile k of view v: its first element and position count */
static inline int64_t tile_at(const lrn_par *q, const fdnn_ncs *v, int64_t k, int64_t *P)
{
    const int64_t n = k / q->tiles_per_img, p0 = k % q->tiles_per_img * q->P;
    *P = q->S - p0 < q->P ? q->S - p0 : q->P;
    return n * v->sn + p0 * v->ss;
}

int fdnn_cpu_lrn_fwd_f32(const struct cudnnLRNStruct *d, double a, const fdnn_tensor *xd, const void *x, double b, const fdnn_tensor *yd, void *y)
{
    const fdnn_tensor *t[2] = {xd, yd};
    fdnn_ncs v[2];
    if (!views(t, 2, v) || !io_ok(yd, y, &v[1], xd, x, &v[0])) return 0;
    const lrn_par q = lrn_plan(d, &v[0], a, b);
    const int64_t rows = q.C + q.n - 1, per = rows * q.P + 2 * q.C * q.P, tiles = v[0].n * q.tiles_per_img;
    double *ws = malloc(sizeof(double) * (size_t)(per * fdnn_ops_max_threads()));
    if (!ws) return 0;
#pragma omp parallel for schedule(static) if (v[0].n * q.C * q.S > PAR_ELEMS)
    for (int64_t k = 0; k < tiles; k++) {
        double *sq = ws + fdnn_ops_thread() * per, *dd = sq + rows * q.P, *pw = dd + q.C * q.P;
        int64_t P;
        const int64_t ox = tile_at(&q, &v[0], k, &P), oy = tile_at(&q, &v[1], k, &P);
        lrn_fwd_tile(&q, P, (rview){(const float *)x + ox, v[0].sc, v[0].ss}, (wview){(float *)y + oy, v[1].sc, v[1].ss}, sq, dd, pw);
    }
    free(ws);
    return 1;
}

int fdnn_cpu_lrn_bwd_f32(const struct cudnnLRNStruct *d, double a, const fdnn_tensor *dyd, const void *dy, const fdnn_tensor *xd, const void *x,
                         double b, const fdnn_tensor *dxd, void *dx)
{
    const fdnn_tensor *t[3] = {xd, dyd, dxd};
    fdnn_ncs v[3];
    if (!views(t, 3, v) || !io_ok(dxd, dx, &v[2], xd, x, &v[0]) || !io_ok(dxd, dx, &v[2], dyd, dy, &v[1])) return 0;
    const lrn_par q = lrn_plan(d, &v[0], a, b);
    const int64_t rows = q.C + q.n - 1, per = 2 * rows * q.P + 2 * q.C * q.P, tiles = v[0].n * q.tiles_per_img;
    double *ws = malloc(sizeof(double) * (size_t)(per * fdnn_ops_max_threads()));
    if (!ws) return 0;
#pragma omp parallel for schedule(static) if (v[0].n * q.C * q.S > PAR_ELEMS)
    for (int64_t k = 0; k < tiles; k++) {
        double *sq = ws + fdnn_ops_thread() * per, *tp = sq + rows * q.P, *dd = tp + rows * q.P, *pw = dd + q.C * q.P;
        int64_t P;
        const int64_t ox = tile_at(&q, &v[0], k, &P), ody = tile_at(&q, &v[1], k, &P), odx = tile_at(&q, &v[2], k, &P);
        lrn_bwd_tile(&q, P, (rview){(const float *)x + ox, v[0].sc, v[0].ss}, (rview){(const float *)dy + ody, v[1].sc, v[1].ss},
                     (wview){(float *)dx + odx, v[2].sc, v[2].ss}, sq, dd, pw, tp);
    }
    free(ws);
    return 1;
}

/* ================================================ divisive normalization */

/* A unit: one image's L channels, all S = D0*H*W positions, as S x L doubles (element (s, l) at s*L + l) */
typedef struct {
    int64_t C, S, L, units_per_img; /* L: channels per unit (the last unit of an image may have fewer) */
    int D0, H, W, nd, n, lb, la;    /* D0 = 1 and no window in depth for 4-D */
    double k, c, beta, a, b, wsize; /* c = lrnAlpha / wsize, wsize = n^(nd-2) */
} dn_par;

/* Scratch of a unit's box sums: the sums along W with H padded, and for 5-D those along H with D padded */
typedef struct { double *bh, *bd; } dn_box;

static inline int64_t dn_box_size(const dn_par *q)
{
    const int64_t L = q->L, pad = q->n - 1;
    return (int64_t)q->D0 * (q->H + pad) * q->W * L + (q->nd == 5 ? (q->D0 + pad) * q->H * q->W * L : 0);
}

/* out = the box sums of in (both S x L), each spatial dim's window the front positions before and
 * n - 1 - front after (front = lb: the forward window; la: the transposed one) */
FDNN_CLONES static void box_sum(const dn_par *q, int64_t L, int front, const double *in, double *out, const dn_box *bx)
{
    const int n = q->n, back = n - 1 - front, D0 = q->D0, H = q->H, W = q->W, Hp = H + n - 1;
    const int64_t row = (int64_t)W * L, plane = (int64_t)H * row;
    double *const bd = q->nd == 5 ? bx->bd : NULL;
    const int mid0 = front < W ? front : W, mid1 = W - back > mid0 ? W - back : mid0; /* whole windows: [mid0, mid1) */
    for (int d = 0; d < D0; d++) {
        double *bh = bx->bh + (int64_t)d * Hp * row;
        memset(bh, 0, sizeof(double) * (size_t)(front * row));
        memset(bh + (front + H) * row, 0, sizeof(double) * (size_t)(back * row));
        for (int h = 0; h < H; h++) { /* along W, into row front + h of bh */
            const double *src = in + ((int64_t)d * H + h) * row;
            double *dst = bh + (front + h) * row;
            win_sum(src + (mid0 - front) * L, dst + mid0 * L, (int64_t)(mid1 - mid0) * L, L, n);
            for (int w = 0; w < W; w = w + 1 == mid0 ? mid1 : w + 1) { /* clipped windows at the ends */
                const int lo = w - front < 0 ? 0 : w - front, hi = w + back >= W ? W - 1 : w + back;
                for (int64_t l = 0; l < L; l++) {
                    double acc = 0;
                    for (int j = lo; j <= hi; j++) acc += src[(int64_t)j * L + l];
                    dst[(int64_t)w * L + l] = acc;
                }
            }
        }
        /* along H, into slice front + d of bd (5-D) or the output */
        win_sum(bh, bd ? bd + (front + d) * plane : out + d * plane, plane, row, n);
    }
    if (bd) { /* along D */
        memset(bd, 0, sizeof(double) * (size_t)(front * plane));
        memset(bd + (front + D0) * plane, 0, sizeof(double) * (size_t)(back * plane));
        win_sum(bd, out, D0 * plane, plane, n);
    }
}

/* cnt[s] = the number of in-range positions of s's (forward) window */
static void dn_counts(const dn_par *q, double *cnt)
{
    for (int d = 0; d < q->D0; d++)
        for (int h = 0; h < q->H; h++)
            for (int w = 0; w < q->W; w++) {
                double c = 1;
                const int ix[3] = {d, h, w}, ext[3] = {q->D0, q->H, q->W};
                for (int i = q->nd == 5 ? 0 : 1; i < 3; i++) {
                    const int lo = ix[i] - q->lb < 0 ? 0 : ix[i] - q->lb, hi = ix[i] + q->la >= ext[i] ? ext[i] - 1 : ix[i] + q->la;
                    c *= hi - lo + 1;
                }
                cnt[((int64_t)d * q->H + h) * q->W + w] = c;
            }
}

/* The unit's (operand element (l, s) of a view at p[l*cs + s*ps], array element at s*L + l):
 * u = x - r, r[l] the unit's mean of x(l, .) with means, else 0 (no shift) */
INLINE void unit_load(const dn_par *q, int64_t L, rview x, int means, double *r, double *restrict u)
{
    for (int64_t l = 0; l < L; l++) r[l] = 0;
    if (means && L == 1) { /* 8 partial sums, so that the loop vectorizes */
        double p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t s = 0;
        for (; s + 8 <= q->S; s += 8)
            for (int j = 0; j < 8; j++) p[j] += x.p[(s + j) * x.ps];
        for (; s < q->S; s++) p[0] += x.p[s * x.ps];
        r[0] = (((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]))) / (double)q->S;
    } else if (means) {
        for (int64_t s = 0; s < q->S; s++)
            for (int64_t l = 0; l < L; l++) r[l] += x.p[l * x.cs + s * x.ps];
        for (int64_t l = 0; l < L; l++) r[l] /= (double)q->S;
    }
    for (int64_t s = 0; s < q->S; s++)
        for (int64_t l = 0; l < L; l++) u[s * L + l] = (double)x.p[l * x.cs + s * x.ps] - r[l];
}

/* sum_{j in W(s)} (x_j - m_s)^2 for element (s, l) of a unit straight from the window, as the general path
 * forms it (same order) */
static double window_sqdev(const dn_par *q, rview x, rview m, int64_t s, int64_t l)
{
    const int w = (int)(s % q->W), h = (int)(s / q->W % q->H), d = (int)(s / q->W / q->H), five = q->nd == 5;
    const double mo = m.p[l * m.cs + s * m.ps];
    double sum = 0;
    for (int dd = five ? d - q->lb : d; dd <= (five ? d + q->la : d); dd++)
        for (int hh = h - q->lb; hh <= h + q->la; hh++)
            for (int ww = w - q->lb; ww <= w + q->la; ww++) {
                if (dd < 0 || dd >= q->D0 || hh < 0 || hh >= q->H || ww < 0 || ww >= q->W) continue;
                const double v = (double)x.p[l * x.cs + (((int64_t)dd * q->H + hh) * q->W + ww) * x.ps] - mo;
                sum += v * v;
            }
    return sum;
}

/* The unit's D = k + c * sum_{j in W(i)} (x_j - m_i)^2 into d, and the window sums of x - r into s1 when
 * it is not NULL (means given or dMeans wanted), from u = x - r (overwritten). With means, where the expanded
 * sum S2 - 2 (m - r) S1 + (m - r)^2 cnt may have lost more than 1e-9 of D to cancellation (x far from r but
 * near its mean over the window, k small; the rounding errors are below (cnt + 4) 2^-53 2 (S2 + (m - r)^2 cnt)),
 * the sum is taken from the window itself */
INLINE void dn_denominator(const dn_par *q, int64_t L, rview x, rview m, const double *r, const double *cnt, double *u, double *s1, double *d,
                           const dn_box *bx)
{
    const int64_t len = q->S * L;
    if (s1) box_sum(q, L, q->lb, u, s1, bx);
    for (int64_t f = 0; f < len; f++) u[f] *= u[f];
    box_sum(q, L, q->lb, u, d, bx);
    if (m.p) {
        const double gc = fabs(q->c) * (q->wsize + 4.0) * 0x1p-53 * 2.0, keep = 1e-9;
        int risky = 0;
        for (int64_t s = 0; s < q->S; s++)
            for (int64_t l = 0; l < L; l++) {
                const int64_t f = s * L + l;
                const double mr = (double)m.p[l * m.cs + s * m.ps] - r[l], s2 = d[f], sum = s2 - 2.0 * mr * s1[f] + mr * mr * cnt[s];
                u[f] = gc * (s2 + mr * mr * cnt[s]); /* c times the error bound */
                d[f] = sum;
                risky |= u[f] > keep * (q->k + q->c * sum);
            }
        if (risky)
            for (int64_t s = 0; s < q->S; s++)
                for (int64_t l = 0; l < L; l++) {
                    const int64_t f = s * L + l;
                    if (u[f] > keep * (q->k + q->c * d[f])) d[f] = window_sqdev(q, x, m, s, l);
                }
    }
    for (int64_t f = 0; f < len; f++) d[f] = q->k + q->c * d[f];
}

static dn_par dn_plan(const struct cudnnLRNStruct *d, const fdnn_tensor *xd, const fdnn_ncs *x, double a, double b)
{
    dn_par q;
    q.nd = xd->nb_dims;
    q.C = x->c;
    q.S = x->s;
    q.D0 = q.nd == 5 ? xd->dim[2] : 1;
    q.H = xd->dim[q.nd - 2];
    q.W = xd->dim[q.nd - 1];
    q.n = (int)d->n;
    q.lb = (q.n - 1) / 2;
    q.la = q.n - 1 - q.lb;
    q.k = d->k;
    q.wsize = q.nd == 5 ? (double)q.n * q.n * q.n : (double)q.n * q.n;
    q.c = d->alpha / q.wsize;
    q.beta = d->beta;
    q.a = a;
    q.b = b;
    q.L = x->sc == 1 && q.C > 1 && q.S > 1 ? (q.C < DN_LANES ? q.C : DN_LANES) : 1;
    q.units_per_img = (q.C + q.L - 1) / q.L;
    return q;
}

/* unit k of view v: its first element and channel count */
static inline int64_t unit_at(const dn_par *q, const fdnn_ncs *v, int64_t k, int64_t *L)
{
    const int64_t n = k / q->units_per_img, c0 = k % q->units_per_img * q->L;
    *L = q->C - c0 < q->L ? q->C - c0 : q->L;
    return n * v->sn + c0 * v->sc;
}

/* The divisive paths' scratch: the window counts (S doubles, shared), then per thread nbuf S x L arrays, the
 * shifts and the box sum's; *per the doubles of a thread's part */
static double *dn_scratch(const dn_par *q, int nbuf, int64_t *per)
{
    *per = nbuf * q->S * q->L + q->L + dn_box_size(q);
    double *ws = malloc(sizeof(double) * (size_t)(q->S + *per * fdnn_ops_max_threads()));
    if (ws) dn_counts(q, ws);
    return ws;
}

/* thread t's part of dn_scratch's area */
static inline double *dn_part(const dn_par *q, double *ws, int64_t per, int t) { return ws + q->S + t * per; }

static dn_box dn_box_at(const dn_par *q, double *p)
{
    const int64_t pad = q->n - 1, L = q->L;
    dn_box b = {p, p + (int64_t)q->D0 * (q->H + pad) * q->W * L};
    return b;
}

INLINE void dn_fwd_body(const dn_par *q, int64_t L, rview x, rview m, wview y, const double *cnt, double *ws)
{
    const int64_t len = q->S * L, stride = q->S * q->L;
    double *u = ws, *s1 = u + stride, *d = s1 + stride, *r = d + stride;
    const dn_box bx = dn_box_at(q, r + q->L);
    unit_load(q, L, x, m.p != NULL, r, u);
    dn_denominator(q, L, x, m, r, cnt, u, m.p ? s1 : NULL, d, &bx);
    double *pw = u;
    neg_pow(d, pw, len, q->beta);
    for (int64_t s = 0; s < q->S; s++)
        for (int64_t l = 0; l < L; l++) {
            const double v = q->a * ((double)x.p[l * x.cs + s * x.ps] * pw[s * L + l]);
            float *o = y.p + l * y.cs + s * y.ps;
            *o = (float)(q->b != 0 ? v + q->b * (double)*o : v);
        }
}

/* The unit-stride forms of a unit's view: its positions (L == 1, ps == 1) or its channels (cs == 1) */
#define DN_UNIT(v, L) {(v).p, (L) == 1 ? 0 : 1, (L) == 1 ? 1 : (v).ps}

FDNN_CLONES static void dn_fwd_unit(const dn_par *q, int64_t L, rview x, rview m, wview y, const double *cnt, double *ws)
{
    if (L == 1 && x.ps == 1 && m.ps == 1 && y.ps == 1)
        dn_fwd_body(q, 1, (rview)DN_UNIT(x, 1), (rview)DN_UNIT(m, 1), (wview)DN_UNIT(y, 1), cnt, ws);
    else if (L == DN_LANES && x.cs == 1 && m.cs == 1 && y.cs == 1)
        dn_fwd_body(q, DN_LANES, (rview)DN_UNIT(x, DN_LANES), (rview)DN_UNIT(m, DN_LANES), (wview)DN_UNIT(y, DN_LANES), cnt, ws);
    else
        dn_fwd_body(q, L, x, m, y, cnt, ws);
}

/* With t_i = dy_i x_i D_i^(-beta-1) and f = 2 beta c (ops_lrn.c):
 *   dx_p = dy_p D_p^-beta - f ((x_p - r) sum_{i: p in W(i)} t_i - sum_{i: p in W(i)} t_i (m_i - r))
 *   dm_i = f t_i sum_{j in W(i)} (x_j - m_i) = f t_i (S1_i - (m_i - r) cnt_i) */
INLINE void dn_bwd_body(const dn_par *q, int64_t L, rview x, rview m, rview dy, wview dx, wview dm, const double *cnt, double *ws)
{
    const int64_t len = q->S * L, stride = q->S * q->L;
    double *u = ws, *s1 = u + stride, *d = s1 + stride, *tt = d + stride, *tm = tt + stride, *rtm = tm + stride, *r = rtm + stride;
    const dn_box bx = dn_box_at(q, r + q->L);
    unit_load(q, L, x, m.p != NULL, r, u);
    dn_denominator(q, L, x, m, r, cnt, u, m.p || dm.p ? s1 : NULL, d, &bx);
    double *pw = u;
    neg_pow(d, pw, len, q->beta);
    for (int64_t s = 0; s < q->S; s++)
        for (int64_t l = 0; l < L; l++) {
            const int64_t f = s * L + l;
            tt[f] = (double)dy.p[l * dy.cs + s * dy.ps] * (double)x.p[l * x.cs + s * x.ps] * pw[f] / d[f];
            if (m.p) tm[f] = tt[f] * ((double)m.p[l * m.cs + s * m.ps] - r[l]);
        }
    double *rt = d; /* D is spent */
    box_sum(q, L, q->la, tt, rt, &bx);
    if (m.p) box_sum(q, L, q->la, tm, rtm, &bx);
    const double f2 = 2.0 * q->beta * q->c;
    double *gm = tm; /* spent: dMeans before the blend, so that dx and dMeans may each be x, means or dy itself */
    if (dm.p)
        for (int64_t s = 0; s < q->S; s++)
            for (int64_t l = 0; l < L; l++) {
                const int64_t f = s * L + l;
                const double mr = m.p ? (double)m.p[l * m.cs + s * m.ps] - r[l] : 0.0;
                gm[f] = f2 * tt[f] * (s1[f] - mr * cnt[s]);
            }
    for (int64_t s = 0; s < q->S; s++)
        for (int64_t l = 0; l < L; l++) {
            const int64_t f = s * L + l;
            const double xv = x.p[l * x.cs + s * x.ps];
            const double g = (double)dy.p[l * dy.cs + s * dy.ps] * pw[f] - (m.p ? f2 * ((xv - r[l]) * rt[f] - rtm[f]) : f2 * xv * rt[f]);
            const double v = q->a * g;
            float *o = dx.p + l * dx.cs + s * dx.ps;
            *o = (float)(q->b != 0 ? v + q->b * (double)*o : v);
        }
    if (dm.p)
        for (int64_t s = 0; s < q->S; s++)
            for (int64_t l = 0; l < L; l++) {
                const double v = q->a * gm[s * L + l];
                float *o = dm.p + l * dm.cs + s * dm.ps;
                *o = (float)(q->b != 0 ? v + q->b * (double)*o : v);
            }
}

FDNN_CLONES static void dn_bwd_unit(const dn_par *q, int64_t L, rview x, rview m, rview dy, wview dx, wview dm, const double *cnt, double *ws)
{
    if (L == 1 && x.ps == 1 && dy.ps == 1 && dx.ps == 1 && m.ps == 1 && dm.ps == 1)
        dn_bwd_body(q, 1, (rview)DN_UNIT(x, 1), (rview)DN_UNIT(m, 1), (rview)DN_UNIT(dy, 1), (wview)DN_UNIT(dx, 1), (wview)DN_UNIT(dm, 1), cnt, ws);
    else if (L == DN_LANES && x.cs == 1 && dy.cs == 1 && dx.cs == 1 && m.cs == 1 && dm.cs == 1)
        dn_bwd_body(q, DN_LANES, (rview)DN_UNIT(x, DN_LANES), (rview)DN_UNIT(m, DN_LANES), (rview)DN_UNIT(dy, DN_LANES), (wview)DN_UNIT(dx, DN_LANES),
                    (wview)DN_UNIT(dm, DN_LANES), cnt, ws);
    else
        dn_bwd_body(q, L, x, m, dy, dx, dm, cnt, ws);
}

/* Both divisive passes: forward (dy NULL: out = y) or backward (out = dx, dm = dMeans or NULL) */
static int dn_run(const struct cudnnLRNStruct *d, double a, const fdnn_tensor *xd, const void *x, const void *means, const void *dy, double b,
                  const fdnn_tensor *od, void *out, void *dm)
{
    const fdnn_tensor *t[2] = {xd, od};
    fdnn_ncs v[2];
    if (!views(t, 2, v)) return 0;
    const void *in[3] = {x, means, dy};
    void *outs[2] = {out, dm};
    for (int o = 0; o < 2; o++) {
        if (!outs[o]) continue;
        for (int i = 0; i < 3; i++)
            if (in[i] && !io_ok(od, outs[o], &v[1], xd, in[i], &v[0])) return 0;
    }
    if (dm && !fdnn_ops_apart(od, out, od, dm)) return 0;
    const dn_par q = dn_plan(d, xd, &v[0], a, b);
    const int64_t units = v[0].n * q.units_per_img;
    int64_t per;
    double *ws = dn_scratch(&q, dy ? 6 : 3, &per);
    if (!ws) return 0;
#pragma omp parallel for schedule(static) if (v[0].n * q.C * q.S > PAR_ELEMS)
    for (int64_t k = 0; k < units; k++) {
        int64_t L;
        const int64_t ox = unit_at(&q, &v[0], k, &L), oo = unit_at(&q, &v[1], k, &L);
        const rview xv = {(const float *)x + ox, v[0].sc, v[0].ss}, mv = {means ? (const float *)means + ox : NULL, v[0].sc, v[0].ss};
        const wview ov = {(float *)out + oo, v[1].sc, v[1].ss};
        double *mine = dn_part(&q, ws, per, fdnn_ops_thread());
        if (dy) {
            const rview dyv = {(const float *)dy + ox, v[0].sc, v[0].ss};
            const wview dmv = {dm ? (float *)dm + oo : NULL, v[1].sc, v[1].ss};
            dn_bwd_unit(&q, L, xv, mv, dyv, ov, dmv, ws, mine);
        } else {
            dn_fwd_unit(&q, L, xv, mv, ov, ws, mine);
        }
    }
    free(ws);
    return 1;
}

int fdnn_cpu_divnorm_fwd_f32(const struct cudnnLRNStruct *d, double a, const fdnn_tensor *xd, const void *x, const void *means, double b,
                             const fdnn_tensor *yd, void *y)
{
    return dn_run(d, a, xd, x, means, NULL, b, yd, y, NULL);
}

int fdnn_cpu_divnorm_bwd_f32(const struct cudnnLRNStruct *d, double a, const fdnn_tensor *xd, const void *x, const void *means, const void *dy,
                             double b, const fdnn_tensor *dxd, void *dx, void *dmeans)
{
    return dn_run(d, a, xd, x, means, dy, b, dxd, dx, dmeans);
}
