/* Softmax forward and backward straight on FLOAT tensors (the CPU backend's fast path; every other
 * case gathers into doubles in src/api/softmax.c). The work is cut into batches of G independent
 * softmaxes of L elements each: element (g, l) of a tensor sits at g*gs + l*ls. INSTANCE on a
 * dense image is one batch of G = 1, L = C*S; CHANNEL is a batch per (image, block of up to 256
 * spatial positions) with L = C, which vectorizes over the positions in NCHW (gs = 1) and over
 * the channels in NHWC (ls = 1, G = 1). exp is fdnn_expf (float, within 1 ulp); sums are double. */
#include <math.h>
#include "ops_fast.h"
#include "vec_math.h"

#define SM_BLOCK 256 /* spatial positions per CHANNEL batch */
#define INLINE static inline __attribute__((always_inline))

typedef struct { const float *p; int64_t gs, ls; } fview;  /* read-only operand */
typedef struct { float *p; int64_t gs, ls; } fview_w;      /* written operand */

/* ------------------------------------------------------------------ forward */

/* One softmax over L elements at x + l*xl (G == 1): max, then sum of exp (kept in y when beta == 0),
 * then y = alpha*softmax + beta*y */
INLINE void fwd_row(int algo, const float *x, int64_t xl, float *y, int64_t yl, int64_t L, double a, double b)
{
    float mx = 0.f; /* a NaN or +inf input turns the sum into NaN below, and with it the whole row, as in double */
    if (algo != CUDNN_SOFTMAX_FAST) {
        float m8[8];
        for (int k = 0; k < 8; k++) m8[k] = -INFINITY;
        int64_t l = 0;
        for (; l + 8 <= L; l += 8)
            for (int k = 0; k < 8; k++) m8[k] = x[(l + k) * xl] > m8[k] ? x[(l + k) * xl] : m8[k];
        for (; l < L; l++) m8[0] = x[l * xl] > m8[0] ? x[l * xl] : m8[0];
        mx = m8[0];
        for (int k = 1; k < 8; k++) mx = m8[k] > mx ? m8[k] : mx;
    }
    double s = 0;
    const int keep = algo != CUDNN_SOFTMAX_LOG && b == 0;
    if (keep) {
#pragma omp simd reduction(+ : s)
        for (int64_t l = 0; l < L; l++) {
            const float e = fdnn_expf(x[l * xl] - mx);
            y[l * yl] = e;
            s += (double)e;
        }
    } else {
#pragma omp simd reduction(+ : s)
        for (int64_t l = 0; l < L; l++) s += (double)fdnn_expf(x[l * xl] - mx);
    }
    if (algo == CUDNN_SOFTMAX_LOG) {
        const float sh = (float)((double)mx + log(s)), af = (float)a, bf = (float)b;
        if (b == 0)
            for (int64_t l = 0; l < L; l++) y[l * yl] = af * (x[l * xl] - sh);
        else
            for (int64_t l = 0; l < L; l++) y[l * yl] = af * (x[l * xl] - sh) + bf * y[l * yl];
        return;
    }
    const float f = (float)(a / s), bf = (float)b;
    if (keep)
        for (int64_t l = 0; l < L; l++) y[l * yl] *= f;
    else
        for (int64_t l = 0; l < L; l++) y[l * yl] = f * fdnn_expf(x[l * xl] - mx) + bf * y[l * yl];
}

/* G <= SM_BLOCK softmaxes side by side, the loops running over g innermost */
INLINE void fwd_cols(int algo, const float *x, int64_t xg, int64_t xl, float *y, int64_t yg, int64_t yl, int64_t G, int64_t L, double a,
                     double b)
{
    float mx[SM_BLOCK], f[SM_BLOCK];
    double s[SM_BLOCK];
    for (int64_t g = 0; g < G; g++) mx[g] = algo == CUDNN_SOFTMAX_FAST ? 0.f : -INFINITY, s[g] = 0;
    if (algo != CUDNN_SOFTMAX_FAST)
        for (int64_t l = 0; l < L; l++)
            for (int64_t g = 0; g < G; g++) mx[g] = x[g * xg + l * xl] > mx[g] ? x[g * xg + l * xl] : mx[g];
    const int keep = algo != CUDNN_SOFTMAX_LOG && b == 0;
    for (int64_t l = 0; l < L; l++) {
        if (keep)
            for (int64_t g = 0; g < G; g++) {
                const float e = fdnn_expf(x[g * xg + l * xl] - mx[g]);
                y[g * yg + l * yl] = e;
                s[g] += (double)e;
            }
        else
            for (int64_t g = 0; g < G; g++) s[g] += (double)fdnn_expf(x[g * xg + l * xl] - mx[g]);
    }
    const float af = (float)a, bf = (float)b;
    if (algo == CUDNN_SOFTMAX_LOG) {
        for (int64_t g = 0; g < G; g++) f[g] = (float)((double)mx[g] + log(s[g]));
        for (int64_t l = 0; l < L; l++)
            for (int64_t g = 0; g < G; g++) {
                const float v = af * (x[g * xg + l * xl] - f[g]);
                y[g * yg + l * yl] = b == 0 ? v : v + bf * y[g * yg + l * yl];
            }
        return;
    }
    for (int64_t g = 0; g < G; g++) f[g] = (float)(a / s[g]);
    for (int64_t l = 0; l < L; l++) {
        if (keep)
            for (int64_t g = 0; g < G; g++) y[g * yg + l * yl] *= f[g];
        else
            for (int64_t g = 0; g < G; g++) y[g * yg + l * yl] = f[g] * fdnn_expf(x[g * xg + l * xl] - mx[g]) + bf * y[g * yg + l * yl];
    }
}

FDNN_CLONES static void fwd_batch(int algo, fview x, fview_w y, int64_t G, int64_t L, double a, double b)
{
    if (G == 1) { /* the unit-stride case spelled out so that it vectorizes */
        if (x.ls == 1 && y.ls == 1) fwd_row(algo, x.p, 1, y.p, 1, L, a, b);
        else fwd_row(algo, x.p, x.ls, y.p, y.ls, L, a, b);
    } else {
        if (x.gs == 1 && y.gs == 1) fwd_cols(algo, x.p, 1, x.ls, y.p, 1, y.ls, G, L, a, b);
        else fwd_cols(algo, x.p, x.gs, x.ls, y.p, y.gs, y.ls, G, L, a, b);
    }
}

/* ------------------------------------------------------------------ backward */

/* dx = alpha*(y*(dy - sum(dy*y))) + beta*dx, or for LOG alpha*(dy - exp(y)*sum(dy)) + beta*dx */
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
    const float sf = (float)s, af = (float)a, bf = (float)b;
    if (algo == CUDNN_SOFTMAX_LOG) {
        if (b == 0)
            for (int64_t l = 0; l < L; l++) dx[l * dxl] = af * (dy[l * dyl] - fdnn_expf(y[l * yl]) * sf);
        else
            for (int64_t l = 0; l < L; l++) dx[l * dxl] = af * (dy[l * dyl] - fdnn_expf(y[l * yl]) * sf) + bf * dx[l * dxl];
    } else {
        if (b == 0)
            for (int64_t l = 0; l < L; l++) dx[l * dxl] = af * (y[l * yl] * (dy[l * dyl] - sf));
        else
            for (int64_t l = 0; l < L; l++) dx[l * dxl] = af * (y[l * yl] * (dy[l * dyl] - sf)) + bf * dx[l * dxl];
    }
}

INLINE void bwd_cols(int algo, const float *y, int64_t yg, int64_t yl, const float *dy, int64_t dyg, int64_t dyl, float *dx, int64_t dxg,
                     int64_t dxl, int64_t G, int64_t L, double a, double b)
{
    double s[SM_BLOCK];
    float sf[SM_BLOCK];
    const int log_sm = algo == CUDNN_SOFTMAX_LOG;
    for (int64_t g = 0; g < G; g++) s[g] = 0;
    for (int64_t l = 0; l < L; l++) {
        if (log_sm)
            for (int64_t g = 0; g < G; g++) s[g] += (double)dy[g * dyg + l * dyl];
        else
            for (int64_t g = 0; g < G; g++) s[g] += (double)dy[g * dyg + l * dyl] * (double)y[g * yg + l * yl];
    }
    for (int64_t g = 0; g < G; g++) sf[g] = (float)s[g];
    const float af = (float)a, bf = (float)b;
    for (int64_t l = 0; l < L; l++) {
        const float *yr = y + l * yl, *dr = dy + l * dyl;
        float *xr = dx + l * dxl;
        if (log_sm && b == 0)
            for (int64_t g = 0; g < G; g++) xr[g * dxg] = af * (dr[g * dyg] - fdnn_expf(yr[g * yg]) * sf[g]);
        else if (log_sm)
            for (int64_t g = 0; g < G; g++) xr[g * dxg] = af * (dr[g * dyg] - fdnn_expf(yr[g * yg]) * sf[g]) + bf * xr[g * dxg];
        else if (b == 0)
            for (int64_t g = 0; g < G; g++) xr[g * dxg] = af * (yr[g * yg] * (dr[g * dyg] - sf[g]));
        else
            for (int64_t g = 0; g < G; g++) xr[g * dxg] = af * (yr[g * yg] * (dr[g * dyg] - sf[g])) + bf * xr[g * dxg];
    }
}

FDNN_CLONES static void bwd_batch(int algo, fview y, fview dy, fview_w dx, int64_t G, int64_t L, double a, double b)
{
    if (G == 1) {
        if (y.ls == 1 && dy.ls == 1 && dx.ls == 1) bwd_row(algo, y.p, 1, dy.p, 1, dx.p, 1, L, a, b);
        else bwd_row(algo, y.p, y.ls, dy.p, dy.ls, dx.p, dx.ls, L, a, b);
    } else {
        if (y.gs == 1 && dy.gs == 1 && dx.gs == 1) bwd_cols(algo, y.p, 1, y.ls, dy.p, 1, dy.ls, dx.p, 1, dx.ls, G, L, a, b);
        else bwd_cols(algo, y.p, y.gs, y.ls, dy.p, dy.gs, dy.ls, dx.p, dx.gs, dx.ls, G, L, a, b);
    }
}

/* ------------------------------------------------------------------ driver */

/* The batches of the call: INSTANCE one per image (tensors dense per image, in one layout), CHANNEL one
 * per (image, block of positions) or, where the channels are innermost, per (image, position). */
typedef struct {
    int instance, per_pos;
    int64_t n, c, s, tasks, per_img;
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
        p->per_img = 1;
    } else {
        p->per_pos = v[0].sc == 1 && p->c >= 8; /* channels innermost: vectorize over them */
        p->per_img = p->per_pos ? p->s : (p->s + SM_BLOCK - 1) / SM_BLOCK;
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
    } else if (p->per_pos) {
        *off = n * v->sn + j * v->ss, *G = 1, *L = p->c, *gs = 0, *ls = v->sc;
    } else {
        const int64_t s0 = j * SM_BLOCK;
        *off = n * v->sn + s0 * v->ss, *G = p->s - s0 < SM_BLOCK ? p->s - s0 : SM_BLOCK, *L = p->c, *gs = v->ss, *ls = v->sc;
    }
}

int fdnn_cpu_softmax_fwd_f32(int algo, int mode, double a, const fdnn_tensor *xd, const void *x, double b, const fdnn_tensor *yd, void *y)
{
    const fdnn_tensor *t[2] = {xd, yd};
    fdnn_ncs v[2];
    sm_plan p;
    if (!plan(mode, t, v, 2, &p)) return 0;
#pragma omp parallel for schedule(static) if (p.n * p.c * p.s > 65536)
    for (int64_t k = 0; k < p.tasks; k++) {
        int64_t ox, oy, G, L;
        fview xv;
        fview_w yv;
        task_view(&p, &v[0], k, &ox, &G, &L, &xv.gs, &xv.ls);
        task_view(&p, &v[1], k, &oy, &G, &L, &yv.gs, &yv.ls);
        xv.p = (const float *)x + ox;
        yv.p = (float *)y + oy;
        fwd_batch(algo, xv, yv, G, L, a, b);
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
#pragma omp parallel for schedule(static) if (p.n * p.c * p.s > 65536)
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
        bwd_batch(algo, yv, dv, xv, G, L, a, b);
    }
    return 1;
}
