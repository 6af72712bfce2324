/* The whole-tensor ops straight on FLOAT tensors (the CPU backend's fast paths for cudnnAddTensor,
 * cudnnOpTensor, cudnnScaleTensor, cudnnSetTensor and cudnnTransformTensor; every other case gathers
 * into doubles in src/api/tensor_ops.c and op_tensor.c). The elementwise ops run over rows of
 * contiguous elements: one row for tensors dense in one layout, else rows of the N x C x S view
 * (src/cpu/ops_common.h) along S (NCHW-like) or along C (NHWC-like), an operand broadcast over the
 * row (a per-channel bias in NCHW) read once per row. NCHW <-> NHWC transforms are a transpose of
 * each image in square tiles. The arithmetic is float, as cuDNN's for FLOAT tensors (the general
 * path rounds once from double: the results differ by float roundings). */
#include <stdint.h>
#include <string.h>
#include "ops_fast.h"

#ifdef __clang__
/* clang cannot vectorize the SQRT rows (a libm call) and reports each `omp simd` it drops as a warning */
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

#define INLINE static inline __attribute__((always_inline))

#define PAR_MIN 65536 /* elements below which the ops run on one thread */

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ------------------------------------------------------------------ elementwise: c = op(a1*a, a2*b) + beta*c */

/* An input's element (i, j, k) of the row walk sits at p + i*s1 + j*s2 + k*unit (unit 0: one value per row) */
typedef struct {
    const float *p;
    int64_t s1, s2;
    int unit;
} ew_in;

typedef struct {
    int op, prop;
    ew_in a, b;   /* b.p NULL: no second operand */
    float *c;     /* element (i, j, k) at c + i*c1 + j*c2 + k */
    int64_t c1, c2;
    int64_t r2, len; /* rows (i, j) with j < r2, of len elements each */
    float a1, a2, beta;
} ew_plan;

/* The op (FDNN_OP_COPY included) in float: the shared double op on float operands gives the float op's result once
 * rounded (double carries more than twice float's precision), and GCC narrows its +, * and sqrt back to float */
INLINE float ew_f(int op, int prop, float x, float y) { return op == FDNN_OP_COPY ? x : (float)fdnn_ops_tensor_op(op, prop, x, y); }

/* One row of len elements. au: a contiguous (1) or one value (0); bu: the same for b, -1 without b */
INLINE void ew_row(int op, int prop, int au, int bu, int64_t len, const float *a, const float *b, float *c, float a1, float a2, float beta)
{
    const float xs = a1 * a[0], ys = bu < 0 ? 0.f : a2 * b[0];
    if (beta != 0) {
#pragma omp simd
        for (int64_t k = 0; k < len; k++) c[k] = ew_f(op, prop, au ? a1 * a[k] : xs, bu > 0 ? a2 * b[k] : ys) + beta * c[k];
    } else {
#pragma omp simd
        for (int64_t k = 0; k < len; k++) c[k] = ew_f(op, prop, au ? a1 * a[k] : xs, bu > 0 ? a2 * b[k] : ys);
    }
}

/* The elements [lo, hi) of the row walk, row piece by row piece */
INLINE void ew_walk(const ew_plan *p, int op, int au, int bu, int64_t lo, int64_t hi)
{
    const int64_t len = p->len, r = lo / len;
    int64_t i = r / p->r2, j = r % p->r2, k0 = lo % len;
    for (int64_t e = lo; e < hi; k0 = 0) {
        const int64_t cnt = min64(len - k0, hi - e);
        const float *a = p->a.p + i * p->a.s1 + j * p->a.s2 + (au ? k0 : 0);
        const float *b = bu < 0 ? NULL : p->b.p + i * p->b.s1 + j * p->b.s2 + (bu ? k0 : 0);
        ew_row(op, p->prop, au, bu, cnt, a, b, p->c + i * p->c1 + j * p->c2 + k0, p->a1, p->a2, p->beta);
        e += cnt;
        if (++j == p->r2) j = 0, i++;
    }
}

#define EW_BINARY(OP) (bu ? ew_walk(p, OP, 1, 1, lo, hi) : ew_walk(p, OP, 1, 0, lo, hi))

/* ew_walk with the op and the operands' kinds as constants (a is contiguous for every op but the copy) */
FDNN_CLONES static void ew_span(const ew_plan *p, int64_t lo, int64_t hi)
{
    const int bu = p->b.p ? p->b.unit : -1;
    switch (p->op) {
    case FDNN_OP_COPY: p->a.unit ? ew_walk(p, FDNN_OP_COPY, 1, -1, lo, hi) : ew_walk(p, FDNN_OP_COPY, 0, -1, lo, hi); break;
    case CUDNN_OP_TENSOR_ADD: EW_BINARY(CUDNN_OP_TENSOR_ADD); break;
    case CUDNN_OP_TENSOR_MUL: EW_BINARY(CUDNN_OP_TENSOR_MUL); break;
    case CUDNN_OP_TENSOR_MIN: EW_BINARY(CUDNN_OP_TENSOR_MIN); break;
    case CUDNN_OP_TENSOR_MAX: EW_BINARY(CUDNN_OP_TENSOR_MAX); break;
    case CUDNN_OP_TENSOR_SQRT: ew_walk(p, CUDNN_OP_TENSOR_SQRT, 1, -1, lo, hi); break;
    default: ew_walk(p, CUDNN_OP_TENSOR_NOT, 1, -1, lo, hi); break;
    }
}

/* fdnn_ops_ncs of t with the strides of its size-1 dims zeroed */
static int ncs_view(const fdnn_tensor *t, fdnn_ncs *v)
{
    if (!fdnn_ops_ncs(t, v)) return 0;
    if (v->n == 1) v->sn = 0;
    if (v->c == 1) v->sc = 0;
    if (v->s == 1) v->ss = 0;
    return 1;
}

/* ncs_view of an operand broadcast to the view cv: each of N, C and S (the spatial dims together) cv's or 1 */
static int bcast_view(const fdnn_tensor *t, const fdnn_ncs *cv, fdnn_ncs *v)
{
    return ncs_view(t, v) && (v->n == cv->n || v->n == 1) && (v->c == cv->c || v->c == 1) && (v->s == cv->s || v->s == 1);
}

/* 1 when no two elements of the view share an offset: its dims longer than 1, by increasing stride, each step
 * over all the earlier ones */
static int view_disjoint(const fdnn_ncs *v)
{
    int64_t len[3] = {v->n, v->c, v->s}, st[3] = {v->sn, v->sc, v->ss}, reach = 0;
    for (int done = 0; done < 3; done++) {
        int best = -1;
        for (int i = 0; i < 3; i++)
            if (len[i] > 0 && (best < 0 || st[i] < st[best])) best = i;
        if (len[best] > 1 && st[best] < reach) return 0;
        if (len[best] > 1) reach = st[best] * len[best];
        len[best] = 0;
    }
    return 1;
}

/* 1 when x's elements may be read while c's are written: they share no byte, or x is c itself (same_view: x's
 * view is c's), updated in place */
static int may_read(const fdnn_tensor *xd, const void *x, const fdnn_tensor *cd, const void *c, int same_view)
{
    return fdnn_ops_apart(xd, x, cd, c) || (x == c && same_view);
}

/* The input x of the row walk in the view along S (along_s) or along C; 0 when its stride along the row is
 * neither 1 nor 0 */
static int walk_input(const fdnn_ncs *v, int along_s, int64_t len, ew_in *in)
{
    const int64_t inner = along_s ? v->ss : v->sc;
    if (inner > 1) return 0;
    in->s1 = v->sn;
    in->s2 = along_s ? v->sc : v->ss;
    in->unit = len == 1 || inner == 1;
    return 1;
}

/* Fills p's rows and inputs for c and the inputs a and b (bd NULL: none); 0 when the tensors are outside the walk */
static int ew_layout(ew_plan *p, const fdnn_tensor *ad, const fdnn_tensor *bd, const fdnn_tensor *cd, const void *c)
{
    const fdnn_tensor *in[2] = {ad, bd};
    const void *ptr[2] = {p->a.p, p->b.p};
    ew_in *w[2] = {&p->a, &p->b};
    const int nin = bd ? 2 : 1;
    int flat = 1;
    for (int i = 0; i < nin; i++) flat &= fdnn_ops_flat(in[i], cd);
    fdnn_ncs cv, v[2];
    if (flat) { /* dense in one layout: a single row over the raw offsets */
        for (int i = 0; i < nin; i++) {
            if (!may_read(in[i], ptr[i], cd, c, 1)) return 0;
            w[i]->s1 = w[i]->s2 = 0;
            w[i]->unit = 1;
        }
        p->c1 = p->c2 = 0;
        p->r2 = 1;
        p->len = fdnn_tensor_elems(cd);
        return 1;
    }
    if (!ncs_view(cd, &cv) || !view_disjoint(&cv)) return 0;
    for (int i = 0; i < nin; i++)
        if (!bcast_view(in[i], &cv, &v[i]) || !may_read(in[i], ptr[i], cd, c, memcmp(&v[i], &cv, sizeof cv) == 0)) return 0;
    /* rows along S or along C, the longer one where both serve */
    for (int pass = 0; pass < 2; pass++) {
        const int along_s = (pass == 0) == (cv.s >= cv.c);
        const int64_t len = along_s ? cv.s : cv.c;
        ew_in cw;
        int ok = walk_input(&cv, along_s, len, &cw);
        for (int i = 0; i < nin && ok; i++) ok = walk_input(&v[i], along_s, len, w[i]);
        if (!ok) continue;
        p->c1 = cw.s1;
        p->c2 = cw.s2;
        p->r2 = along_s ? cv.c : cv.s;
        p->len = len;
        return 1;
    }
    return 0;
}

int fdnn_cpu_op_f32(int op, int prop, double a1, const fdnn_tensor *ad, const void *a, double a2, const fdnn_tensor *bd, const void *b, double beta,
                    const fdnn_tensor *cd, void *c)
{
    if (cd->dtype != CUDNN_DATA_FLOAT || ad->dtype != CUDNN_DATA_FLOAT || (bd && bd->dtype != CUDNN_DATA_FLOAT)) return 0;
    ew_plan p = {op, prop, {a, 0, 0, 1}, {bd ? b : NULL, 0, 0, 1}, c, 0, 0, 1, 1, (float)a1, (float)a2, (float)beta};
    if (!ew_layout(&p, ad, bd, cd, c)) return 0;
    const int64_t n = fdnn_tensor_elems(cd);
#pragma omp parallel if (n > PAR_MIN)
    {
        int64_t lo, hi;
        fdnn_ops_share(n, &lo, &hi);
        ew_span(&p, lo, hi);
    }
    return 1;
}

/* ------------------------------------------------------------------ NCHW <-> NHWC transform */

#define TILE 64 /* tile side of the transpose, a multiple of 8 */

/* y(p, q) = a*x(p, q) + b*y(p, q) over one image's P x Q matrix, x(p, q) at x + p*xp + q and y(p, q) at y + p + q*yq */
typedef struct {
    const float *x;
    float *y;
    int64_t xn, yn, xp, yq, P, Q, tp, tq; /* image strides; tp x tq tiles per image */
    float a, b;
} tp_plan;

typedef float v8f __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t v8i __attribute__((vector_size(32)));
#ifdef __clang__
#define SHUF(u, v, ...) __builtin_shufflevector(u, v, __VA_ARGS__)
#else
#define SHUF(u, v, ...) __builtin_shuffle(u, v, (v8i){__VA_ARGS__})
#endif

/* y(p, q) = a*x(p, q) + b*y(p, q) over an 8 x 8 block: the rows of x loaded whole and transposed in registers
 * (the unpack, shuffle and lane-swap steps of the AVX idiom), y written by whole rows */
INLINE void tp_block8(const float *x, int64_t xp, float *y, int64_t yq, float a, float b)
{
    v8f r[8], t[8], u[8];
    for (int i = 0; i < 8; i++) r[i] = *(const v8f *)(x + i * xp);
    for (int i = 0; i < 8; i += 2) {
        t[i] = SHUF(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[i + 1] = SHUF(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
    for (int i = 0; i < 8; i += 4)
        for (int k = 0; k < 2; k++) {
            u[i + 2 * k] = SHUF(t[i + k], t[i + k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
            u[i + 2 * k + 1] = SHUF(t[i + k], t[i + k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
    for (int j = 0; j < 4; j++) { /* u[j] holds columns j and j + 4 of rows 0-3, u[j + 4] those of rows 4-7 */
        r[j] = SHUF(u[j], u[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        r[j + 4] = SHUF(u[j], u[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
    for (int j = 0; j < 8; j++) {
        v8f *yr = (v8f *)(y + j * yq);
        *yr = b != 0 ? a * r[j] + b * *yr : a * r[j];
    }
}

/* The tile k (image, tile row, tile column) of the transpose: 8 x 8 blocks, the ragged edges element by element */
FDNN_CLONES static void tp_tile(const tp_plan *t, int64_t k)
{
    const int64_t n = k / (t->tp * t->tq), p0 = k / t->tq % t->tp * TILE, q0 = k % t->tq * TILE;
    const int64_t pn = min64(TILE, t->P - p0), qn = min64(TILE, t->Q - q0), xp = t->xp, yq = t->yq, p8 = pn & ~7, q8 = qn & ~7;
    const float *x = t->x + n * t->xn + p0 * xp + q0;
    float *y = t->y + n * t->yn + p0 + q0 * yq;
    const float a = t->a, b = t->b;
    for (int64_t q = 0; q < q8; q += 8)
        for (int64_t p = 0; p < p8; p += 8) tp_block8(x + p * xp + q, xp, y + p + q * yq, yq, a, b);
    for (int64_t q = 0; q < qn; q++)
        for (int64_t p = q < q8 ? p8 : 0; p < pn; p++) y[p + q * yq] = b != 0 ? a * x[p * xp + q] + b * y[p + q * yq] : a * x[p * xp + q];
}

int fdnn_cpu_transform_f32(double a, const fdnn_tensor *xd, const void *x, double b, const fdnn_tensor *yd, void *y)
{
    if (fdnn_cpu_op_f32(FDNN_OP_COPY, 0, a, xd, x, 0.0, NULL, NULL, b, yd, y)) return 1;
    fdnn_ncs xv, yv;
    if (xd->dtype != CUDNN_DATA_FLOAT || yd->dtype != CUDNN_DATA_FLOAT || !fdnn_ops_ncs(xd, &xv) || !fdnn_ops_ncs(yd, &yv) || !view_disjoint(&yv) ||
        !fdnn_ops_apart(xd, x, yd, y))
        return 0;
    tp_plan t = {x, y, xv.sn, yv.sn, 0, 0, 0, 0, 0, 0, (float)a, (float)b};
    if (xv.ss == 1 && yv.sc == 1) { /* NCHW -> NHWC: p = channel, q = position */
        t.xp = xv.sc, t.yq = yv.ss, t.P = xv.c, t.Q = xv.s;
    } else if (xv.sc == 1 && yv.ss == 1) { /* NHWC -> NCHW: p = position, q = channel */
        t.xp = xv.ss, t.yq = yv.sc, t.P = xv.s, t.Q = xv.c;
    } else {
        return 0;
    }
    t.tp = (t.P + TILE - 1) / TILE;
    t.tq = (t.Q + TILE - 1) / TILE;
    const int64_t tiles = xv.n * t.tp * t.tq;
#pragma omp parallel for schedule(static) if (xv.n * xv.c * xv.s > PAR_MIN)
    for (int64_t k = 0; k < tiles; k++) tp_tile(&t, k);
    return 1;
}

/* ------------------------------------------------------------------ set */

int fdnn_cpu_set_f32(const fdnn_tensor *yd, void *y, double v)
{
    if (yd->dtype != CUDNN_DATA_FLOAT || !fdnn_ops_dense(yd)) return 0;
    const int64_t n = fdnn_tensor_elems(yd);
    const float f = (float)v;
    float *yf = y;
#pragma omp parallel for simd schedule(static) if (n > PAR_MIN)
    for (int64_t i = 0; i < n; i++) yf[i] = f;
    return 1;
}

/* y = a * (gate > 0 ? v : +0) elementwise over [lo, hi): RELU forward (v = gate = x) and backward (v = dy, gate = x)
 * with NOT_PROPAGATE_NAN semantics (a NaN gate is not > 0) */
FDNN_CLONES static void relu_span(const float *v, const float *gate, float *y, int64_t lo, int64_t hi, float a)
{
#pragma omp simd
    for (int64_t i = lo; i < hi; i++) y[i] = a * (gate[i] > 0.f ? v[i] : 0.f);
}

void fdnn_cpu_relu_f32(const float *v, const float *gate, float *y, int64_t n, float a)
{
    const int64_t blk = 16384, nb = (n + blk - 1) / blk;
#pragma omp parallel for schedule(static) if (n > PAR_MIN)
    for (int64_t k = 0; k < nb; k++) relu_span(v, gate, y, k * blk, k + 1 < nb ? (k + 1) * blk : n, a);
}
