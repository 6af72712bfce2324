/* cudnnReduceTensor straight on a dense FLOAT A (the CPU backend's fast path; every other case gathers into
 * doubles in src/api/reduce.c). A's dims (longer than 1) are sorted into runs: the kept dims by A's stride,
 * merged where A, C and C's packed index all step contiguously, and the reduced dims in their row-major
 * (flattened-index) order, merged where A steps contiguously. When A's innermost dim is reduced each output
 * walks its reduced elements as rows (a vectorized sum); when it is kept, up to RD_COLS outputs side by side
 * take one reduced element each per step (vectorized across the outputs). MIN/MAX/AMAX walk the reduced
 * elements in flattened-index order, as the general path walks them, so they keep its first-extreme and NaN
 * rules and indices exactly; the sums and products walk them in A's memory order (double, rounded to float once
 * as on the general path; they differ from it by the order of the additions). When there are few outputs the outermost reduced run is
 * cut into a fixed number of pieces (by the shape alone, not the thread count), reduced apart and combined in
 * order, so results do not depend on the thread count. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "ops_fast.h"

#ifdef __clang__
/* clang reports each `omp simd` it cannot vectorize (the MIN/MAX/AMAX selects) as a warning */
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

#define INLINE static inline __attribute__((always_inline))

#define PAR_MIN 65536   /* elements of A below which the reduction runs on one thread */
#define RD_COLS 256     /* outputs reduced side by side when A's innermost dim is kept */
#define RD_PIECES 64    /* (units x pieces) aimed at when the outputs are few */
#define RD_FEW 32       /* fewer work units than this: split the outermost reduced run */

typedef struct { int64_t len, as, is; } rd_rrun;      /* reduced run: length, A stride, flattened-index stride */
typedef struct { int64_t len, as, cs, ps; } rd_krun;  /* kept run: length, A stride, C stride, packed C index stride */

typedef struct {
    int op, prop, col;
    const float *a;
    float *c;
    int32_t *idx;
    double alpha, beta, rn;
    rd_rrun r[CUDNN_DIM_MAX];
    rd_krun k[CUDNN_DIM_MAX];
    int nr, nk;
    int64_t units, nb, pieces, chunk, w; /* work units (x pieces); col: nb blocks of up to w = RD_COLS outputs */
    double *pv;                          /* pieces > 1: partial states [unit][piece][w] */
    int64_t *pi;
} rd_plan;

enum { R_ADD = CUDNN_REDUCE_TENSOR_ADD, R_MUL = CUDNN_REDUCE_TENSOR_MUL, R_MIN = CUDNN_REDUCE_TENSOR_MIN, R_MAX = CUDNN_REDUCE_TENSOR_MAX,
       R_AMAX = CUDNN_REDUCE_TENSOR_AMAX, R_AVG = CUDNN_REDUCE_TENSOR_AVG, R_NORM1 = CUDNN_REDUCE_TENSOR_NORM1,
       R_NORM2 = CUDNN_REDUCE_TENSOR_NORM2, R_MULNZ = CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS };

static inline int is_arg(int op) { return op == R_MIN || op == R_MAX || op == R_AMAX; }

/* The empty state: s the op's identity (the worst value for MIN/MAX/AMAX), b -1 (no element taken) */
static inline double rd_init(int op) { return op == R_MUL || op == R_MULNZ ? 1.0 : op == R_MIN ? INFINITY : op == R_MAX || op == R_AMAX ? -INFINITY : 0.0; }

/* One element x of flattened index r into the state (s, b), as the general path: MIN/MAX/AMAX take a strictly
 * better value (or the first one); with prop the first NaN is taken and kept, without it NaNs are skipped */
INLINE void rd_upd(int op, int prop, double *s, int64_t *b, float x, int64_t r)
{
    double v = x;
    switch (op) {
    case R_ADD: case R_AVG: *s += v; break;
    case R_NORM1: *s += fabs(v); break;
    case R_NORM2: *s += v * v; break;
    case R_MUL: *s *= v; break;
    case R_MULNZ: *s *= v != 0 ? v : 1.0; break;
    default: {
        if (op == R_AMAX) v = fabs(v);
        const int better = op == R_MIN ? v < *s : v > *s;
        const int take = prop ? (*s == *s && (v != v || better || *b < 0)) : (better || (*b < 0 && v == v));
        *s = take ? v : *s;
        *b = take ? r : *b;
    }
    }
}

/* The state (s2, b2) of later elements (higher flattened indices) into (s, b) */
INLINE void rd_merge(int op, int prop, double *s, int64_t *b, double s2, int64_t b2)
{
    switch (op) {
    case R_ADD: case R_AVG: case R_NORM1: case R_NORM2: *s += s2; break;
    case R_MUL: case R_MULNZ: *s *= s2; break;
    default:
        if (b2 < 0) return;
        if (*b < 0 || (prop && *s == *s && s2 != s2) || (op == R_MIN ? s2 < *s : s2 > *s)) *s = s2, *b = b2;
    }
}

/* MIN / MAX / AMAX of a unit-stride row of L >= 8 (< 2^31) elements in 8 lanes, lane k taking the elements
 * i = k mod 8 in order and keeping its first extreme, then the best lane (the lowest index among equal values):
 * the row's first extreme, *v and its position *at. 0 when the row holds a NaN or +-inf (the caller walks it
 * element by element). */
INLINE int rd_row_arg8(int op, const float *p, int64_t L, float *v, int64_t *at)
{
    float m[8], ck[8];
    int32_t ix[8];
    for (int k = 0; k < 8; k++) m[k] = op == R_AMAX ? fabsf(p[k]) : p[k], ix[k] = k, ck[k] = p[k] * 0.f;
    int32_t i = 8;
    for (; i + 8 <= L; i += 8)
#pragma omp simd
        for (int k = 0; k < 8; k++) {
            const float x = op == R_AMAX ? fabsf(p[i + k]) : p[i + k];
            const int32_t take = -(int32_t)(op == R_MIN ? x < m[k] : x > m[k]); /* a select, not a masked store */
            m[k] = (op == R_MIN ? x < m[k] : x > m[k]) ? x : m[k];
            ix[k] = ((i + k) & take) | (ix[k] & ~take);
            ck[k] += x * 0.f;
        }
    for (int k = 0; i + k < L; k++) {
        const float x = op == R_AMAX ? fabsf(p[i + k]) : p[i + k];
        if (op == R_MIN ? x < m[k] : x > m[k]) m[k] = x, ix[k] = i + k;
        ck[k] += x * 0.f;
    }
    float c = 0.f;
    for (int k = 0; k < 8; k++) c += ck[k];
    if (c != 0.f) return 0;
    float bv = m[0];
    int32_t bi = ix[0];
    for (int k = 1; k < 8; k++)
        if ((op == R_MIN ? m[k] < bv : m[k] > bv) || (m[k] == bv && ix[k] < bi)) bv = m[k], bi = ix[k];
    *v = bv;
    *at = bi;
    return 1;
}

/* A row of L elements at p + i*st (flattened indices r0 + i) into (s, b) */
INLINE void rd_row(int op, int prop, const float *p, int64_t st, int64_t L, int64_t r0, double *s, int64_t *b)
{
    double acc = *s;
    switch (op) {
    case R_ADD: case R_AVG:
#pragma omp simd reduction(+ : acc)
        for (int64_t i = 0; i < L; i++) acc += (double)p[i * st];
        break;
    case R_NORM1:
#pragma omp simd reduction(+ : acc)
        for (int64_t i = 0; i < L; i++) acc += fabs((double)p[i * st]);
        break;
    case R_NORM2:
#pragma omp simd reduction(+ : acc)
        for (int64_t i = 0; i < L; i++) acc += (double)p[i * st] * (double)p[i * st];
        break;
    case R_MUL:
#pragma omp simd reduction(* : acc)
        for (int64_t i = 0; i < L; i++) acc *= (double)p[i * st];
        break;
    case R_MULNZ:
#pragma omp simd reduction(* : acc)
        for (int64_t i = 0; i < L; i++) acc *= p[i * st] != 0 ? (double)p[i * st] : 1.0;
        break;
    default: {
        float v;
        int64_t at;
        if (st == 1 && L >= 8 && L < INT32_MAX && rd_row_arg8(op, p, L, &v, &at)) rd_merge(op, prop, &acc, b, (double)v, r0 + at);
        else
            for (int64_t i = 0; i < L; i++) rd_upd(op, prop, &acc, b, p[i * st], r0 + i);
    }
    }
    *s = acc;
}

/* One reduced element (flattened index r) of w outputs side by side, p[k] the k-th output's */
INLINE void rd_cols(int op, int prop, const float *p, int64_t w, int64_t r, double *restrict s, int64_t *restrict b)
{
#pragma omp simd
    for (int64_t k = 0; k < w; k++) rd_upd(op, prop, &s[k], &b[k], p[k], r);
}

/* MIN / MAX / AMAX of w outputs side by side over n (2 <= n < 2^31) reduced elements, element i of output k at
 * p[i*as + k] with flattened index r0 + i*is: each output keeps its first extreme in float (the elements are
 * visited in order, so a strictly better value alone replaces it), merged into (s, b) as the later part of the
 * reduction. 0, with (s, b) untouched, when an element is NaN or +-inf (the caller walks them exactly). */
INLINE int rd_cols_arg(int op, int prop, const float *p, int64_t as, int64_t n, int64_t w, int64_t r0, int64_t is, double *restrict s,
                       int64_t *restrict b)
{
    float m[RD_COLS], ck[RD_COLS];
    int32_t ix[RD_COLS];
    for (int64_t k = 0; k < w; k++) m[k] = op == R_AMAX ? fabsf(p[k]) : p[k], ix[k] = 0, ck[k] = p[k] * 0.f;
    for (int32_t i = 1; i < n; i++) {
        const float *q = p + i * as;
#pragma omp simd
        for (int64_t k = 0; k < w; k++) {
            const float x = op == R_AMAX ? fabsf(q[k]) : q[k];
            const int32_t take = -(int32_t)(op == R_MIN ? x < m[k] : x > m[k]); /* a select, not a masked store */
            m[k] = (op == R_MIN ? x < m[k] : x > m[k]) ? x : m[k];
            ix[k] = (i & take) | (ix[k] & ~take);
            ck[k] += x * 0.f;
        }
    }
    float c = 0.f;
    for (int64_t k = 0; k < w; k++) c += ck[k];
    if (c != 0.f) return 0;
    for (int64_t k = 0; k < w; k++) rd_merge(op, prop, &s[k], &b[k], (double)m[k], r0 + (int64_t)ix[k] * is);
    return 1;
}

/* The reduced elements of the outputs at A offset base, the outermost reduced run limited to [lo, hi), in
 * flattened-index order: rows along the innermost run, or (col) w outputs per element */
INLINE void rd_walk(const rd_plan *p, int op, int prop, int64_t base, int64_t lo, int64_t hi, int64_t w, double *s, int64_t *b)
{
    const int nr = p->nr;
    const rd_rrun *R = p->r;
    int64_t st[CUDNN_DIM_MAX], en[CUDNN_DIM_MAX], ix[CUDNN_DIM_MAX];
    for (int j = 0; j < nr; j++) st[j] = 0, en[j] = R[j].len;
    st[nr - 1] = lo, en[nr - 1] = hi;
    for (int j = 1; j < nr; j++) ix[j] = st[j];
    for (;;) {
        int64_t off = base, r0 = 0;
        for (int j = 1; j < nr; j++) off += ix[j] * R[j].as, r0 += ix[j] * R[j].is;
        if (p->col) {
            const int64_t n = en[0] - st[0];
            if (!is_arg(op) || n < 2 || n >= INT32_MAX ||
                !rd_cols_arg(op, prop, p->a + off + st[0] * R[0].as, R[0].as, n, w, r0 + st[0] * R[0].is, R[0].is, s, b))
                for (int64_t i = st[0]; i < en[0]; i++) rd_cols(op, prop, p->a + off + i * R[0].as, w, r0 + i * R[0].is, s, b);
        } else if (R[0].as == 1) { /* contiguous rows spelled out so that they vectorize */
            rd_row(op, prop, p->a + off + st[0], 1, en[0] - st[0], r0 + st[0], s, b);
        } else {
            rd_row(op, prop, p->a + off + st[0] * R[0].as, R[0].as, en[0] - st[0], r0 + st[0], s, b);
        }
        int j = 1;
        for (; j < nr; j++) {
            if (++ix[j] < en[j]) break;
            ix[j] = st[j];
        }
        if (j >= nr) return;
    }
}

/* Work unit u's outputs: A, C and index offsets of its first, and how many (w) */
static int64_t rd_unit(const rd_plan *p, int64_t u, int64_t *ao, int64_t *co, int64_t *po)
{
    int64_t w = 1;
    int j0 = 0;
    *ao = *co = *po = 0;
    if (p->col) {
        const int64_t k0 = u % p->nb * RD_COLS;
        u /= p->nb;
        w = p->k[0].len - k0 < RD_COLS ? p->k[0].len - k0 : RD_COLS;
        *ao = k0, *co = k0 * p->k[0].cs, *po = k0 * p->k[0].ps;
        j0 = 1;
    }
    for (int j = j0; j < p->nk; j++) {
        const int64_t i = u % p->k[j].len;
        u /= p->k[j].len;
        *ao += i * p->k[j].as, *co += i * p->k[j].cs, *po += i * p->k[j].ps;
    }
    return w;
}

/* The final states of w outputs into C (c = alpha*r + beta*c, c not read when beta == 0) and the indices */
INLINE void rd_finish(const rd_plan *p, int op, int64_t w, const double *s, const int64_t *b, int64_t co, int64_t po)
{
    const int64_t cs = p->col ? p->k[0].cs : 0, ps = p->col ? p->k[0].ps : 0;
    for (int64_t k = 0; k < w; k++) {
        double r = s[k];
        if (op == R_AVG) r /= p->rn;
        else if (op == R_NORM2) r = sqrt(r);
        else if (is_arg(op) && b[k] < 0) r = NAN;
        float *c = p->c + co + k * cs;
        *c = p->beta != 0 ? (float)(p->alpha * r + p->beta * (double)*c) : (float)(p->alpha * r);
        if (p->idx && is_arg(op)) p->idx[po + k * ps] = b[k] < 0 ? 0 : (int32_t)b[k];
    }
}

/* Task t: unit t / pieces over piece t % pieces, finished into C or kept as a partial state */
INLINE void rd_task(const rd_plan *p, int op, int prop, int64_t t)
{
    double s[RD_COLS];
    int64_t b[RD_COLS];
    const int64_t u = t / p->pieces, piece = t % p->pieces, outer = p->r[p->nr - 1].len;
    int64_t ao, co, po;
    const int64_t w = rd_unit(p, u, &ao, &co, &po);
    const int64_t lo = piece * p->chunk, hi = lo + p->chunk < outer ? lo + p->chunk : outer;
    for (int64_t k = 0; k < w; k++) s[k] = rd_init(op), b[k] = -1;
    rd_walk(p, op, prop, ao, lo, hi, w, s, b);
    if (p->pieces == 1) {
        rd_finish(p, op, w, s, b, co, po);
        return;
    }
    for (int64_t k = 0; k < w; k++) p->pv[t * p->w + k] = s[k], p->pi[t * p->w + k] = b[k];
}

/* Unit u's partial states combined in piece order and finished */
INLINE void rd_combine(const rd_plan *p, int op, int prop, int64_t u)
{
    double s[RD_COLS];
    int64_t b[RD_COLS];
    int64_t ao, co, po;
    const int64_t w = rd_unit(p, u, &ao, &co, &po), t0 = u * p->pieces;
    for (int64_t k = 0; k < w; k++) s[k] = p->pv[t0 * p->w + k], b[k] = p->pi[t0 * p->w + k];
    for (int64_t q = 1; q < p->pieces; q++)
        for (int64_t k = 0; k < w; k++) rd_merge(op, prop, &s[k], &b[k], p->pv[(t0 + q) * p->w + k], p->pi[(t0 + q) * p->w + k]);
    rd_finish(p, op, w, s, b, co, po);
}

#define RD_OPS(F, ...)                                                                                                         \
    switch (p->op) {                                                                                                           \
    case R_ADD: F(p, R_ADD, 0, __VA_ARGS__); break;                                                                            \
    case R_MUL: F(p, R_MUL, 0, __VA_ARGS__); break;                                                                            \
    case R_MIN: p->prop ? F(p, R_MIN, 1, __VA_ARGS__) : F(p, R_MIN, 0, __VA_ARGS__); break;                                    \
    case R_MAX: p->prop ? F(p, R_MAX, 1, __VA_ARGS__) : F(p, R_MAX, 0, __VA_ARGS__); break;                                    \
    case R_AMAX: p->prop ? F(p, R_AMAX, 1, __VA_ARGS__) : F(p, R_AMAX, 0, __VA_ARGS__); break;                                 \
    case R_AVG: F(p, R_AVG, 0, __VA_ARGS__); break;                                                                            \
    case R_NORM1: F(p, R_NORM1, 0, __VA_ARGS__); break;                                                                        \
    case R_NORM2: F(p, R_NORM2, 0, __VA_ARGS__); break;                                                                        \
    default: F(p, R_MULNZ, 0, __VA_ARGS__); break;                                                                             \
    }

/* the task and the combine with the op and the NaN rule as constants */
FDNN_CLONES static void rd_task_any(const rd_plan *p, int64_t t) { RD_OPS(rd_task, t) }
FDNN_CLONES static void rd_combine_any(const rd_plan *p, int64_t u) { RD_OPS(rd_combine, u) }

static int cmp_by(const int64_t *key, int i, int j) { return key[i] < key[j]; }

int fdnn_cpu_reduce_f32(int op, int prop, double alpha, const fdnn_tensor *ad, const void *a, double beta, const fdnn_tensor *cd, void *c,
                        int32_t *idx)
{
    if (ad->dtype != CUDNN_DATA_FLOAT || cd->dtype != CUDNN_DATA_FLOAT || ad->nb_dims != cd->nb_dims || !fdnn_ops_dense(ad) ||
        !fdnn_ops_dense(cd))
        return 0;
    if (!fdnn_ops_apart(ad, a, cd, c)) return 0; /* A and C overlap */
    const int nd = ad->nb_dims;
    rd_plan p = {0};
    p.op = op, p.prop = prop, p.a = a, p.c = c, p.idx = idx, p.alpha = alpha, p.beta = beta;
    /* flattened-index strides of the reduced dims, packed index strides of C */
    int64_t is[CUDNN_DIM_MAX], ps[CUDNN_DIM_MAX], as[CUDNN_DIM_MAX], rn = 1, cn = 1;
    int rd[CUDNN_DIM_MAX], kd[CUDNN_DIM_MAX], nr = 0, nk = 0;
    for (int i = nd - 1; i >= 0; i--) {
        ps[i] = cn, cn *= cd->dim[i];
        as[i] = ad->stride[i];
        if (ad->dim[i] > 1 && cd->dim[i] == 1) is[i] = rn, rn *= ad->dim[i], rd[nr++] = i; /* by increasing index stride */
        else if (ad->dim[i] > 1) kd[nk++] = i;
    }
    /* kept dims by increasing A stride (insertion sort), merged into runs */
    for (int i = 1; i < nk; i++)
        for (int j = i; j > 0 && cmp_by(as, kd[j], kd[j - 1]); j--) { int t = kd[j]; kd[j] = kd[j - 1]; kd[j - 1] = t; }
    for (int i = 0; i < nk; i++) {
        const int d = kd[i];
        rd_krun *k = p.nk ? &p.k[p.nk - 1] : NULL;
        if (k && as[d] == k->as * k->len && cd->stride[d] == k->cs * k->len && ps[d] == k->ps * k->len) { k->len *= ad->dim[d]; continue; }
        p.k[p.nk++] = (rd_krun){ad->dim[d], as[d], cd->stride[d], ps[d]};
    }
    /* the sums and products need no order: their reduced dims go by A stride too (NHWC's C innermost) */
    if (!is_arg(op))
        for (int i = 1; i < nr; i++)
            for (int j = i; j > 0 && cmp_by(as, rd[j], rd[j - 1]); j--) { int t = rd[j]; rd[j] = rd[j - 1]; rd[j - 1] = t; }
    for (int i = 0; i < nr; i++) {
        const int d = rd[i];
        rd_rrun *r = p.nr ? &p.r[p.nr - 1] : NULL;
        if (r && as[d] == r->as * r->len) { r->len *= ad->dim[d]; continue; }
        p.r[p.nr++] = (rd_rrun){ad->dim[d], as[d], is[d]};
    }
    if (p.nr == 0) p.r[p.nr++] = (rd_rrun){1, 0, 0}; /* nothing reduced: one element per output */
    p.rn = (double)rn;
    p.col = p.nk > 0 && p.k[0].as == 1;
    p.nb = p.col ? (p.k[0].len + RD_COLS - 1) / RD_COLS : 1;
    p.w = p.col ? (p.k[0].len < RD_COLS ? p.k[0].len : RD_COLS) : 1;
    p.units = p.col ? cn / p.k[0].len * p.nb : cn;
    const int64_t total = cn * rn, outer = p.r[p.nr - 1].len;
    p.pieces = 1;
    if (total > PAR_MIN && p.units < RD_FEW) {
        int64_t want = (RD_PIECES + p.units - 1) / p.units;
        if (want > outer) want = outer;
        p.chunk = (outer + want - 1) / want;
        p.pieces = (outer + p.chunk - 1) / p.chunk;
    }
    if (p.pieces == 1) p.chunk = outer;
    const int64_t tasks = p.units * p.pieces;
    if (p.pieces > 1) {
        p.pv = malloc(sizeof(double) * (size_t)(tasks * p.w));
        p.pi = malloc(sizeof(int64_t) * (size_t)(tasks * p.w));
        if (!p.pv || !p.pi) {
            free(p.pv), free(p.pi);
            return 0;
        }
    }
#pragma omp parallel for schedule(static) if (total > PAR_MIN)
    for (int64_t t = 0; t < tasks; t++) rd_task_any(&p, t);
    if (p.pieces > 1) {
        for (int64_t u = 0; u < p.units; u++) rd_combine_any(&p, u);
        free(p.pv), free(p.pi);
    }
    return 1;
}
