/* Pooling forward and backward straight on FLOAT tensors of any strides (the CPU backend's fast path;
 * other types gather into doubles in src/api/pooling.c). The channels are worked in blocks: CB of
 * them side by side where they are innermost in memory (NHWC, NDHWC: the loops over the block
 * vectorize), one at a time otherwise. Window bounds are clamped once per output instead of tested
 * per tap. Semantics as src/api/pooling.c documents: max skips NaN (NOT_PROPAGATE) or returns it
 * (PROPAGATE), a window wholly in padding gives 0, max backward routes dy to the first maximum. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../core/ops_desc.h"
#include "ops_fast.h"

#define CB_MAX 64 /* channels per block where they are innermost */

/* element strides of an N, C, D, H, W tensor (D of a 4-D tensor: length 1, stride 0) */
typedef struct { int64_t n, c, d, h, w; } pstride;

static pstride strides_of(const fdnn_tensor *t)
{
    pstride s = {t->stride[0], t->stride[1], 0, 0, 0};
    if (t->nb_dims == 5) s.d = t->stride[2];
    s.h = t->stride[t->nb_dims - 2];
    s.w = t->stride[t->nb_dims - 1];
    return s;
}

typedef struct {
    int is_max, prop, incl;
    int64_t n, c, in[3], out[3], win[3], pad[3], str[3], win_sz;
    pstride xs, ys;       /* forward: x, y; backward: x (and dx), dy */
    pstride dxs;          /* backward: dx */
    int64_t cb;           /* channels per block */
} pplan;

static void make_plan(pplan *p, const struct cudnnPoolingStruct *d, const fdnn_tensor *x, const fdnn_tensor *y)
{
    const int ns = d->nb_spatial;
    p->is_max = d->mode == CUDNN_POOLING_MAX || d->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    p->incl = d->mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    p->prop = d->nan_opt == CUDNN_PROPAGATE_NAN;
    p->n = x->dim[0];
    p->c = x->dim[1];
    p->win_sz = 1;
    for (int i = 0; i < 3; i++) { /* dims D, H, W; a 2-D window fills H and W */
        const int k = i - (3 - ns);
        const int act = k >= 0;
        p->in[i] = act ? x->dim[2 + k] : 1;
        p->out[i] = act ? y->dim[2 + k] : 1;
        p->win[i] = act ? d->window[k] : 1;
        p->pad[i] = act ? d->pad[k] : 0;
        p->str[i] = act ? d->stride[k] : 1;
        p->win_sz *= p->win[i];
    }
    p->xs = strides_of(x);
    p->ys = strides_of(y);
}

/* the in-bounds taps of output o along dim i: [*lo, *hi) */
static inline void taps(const pplan *p, int i, int64_t o, int64_t *lo, int64_t *hi)
{
    const int64_t s = o * p->str[i] - p->pad[i];
    *lo = s < 0 ? 0 : s;
    *hi = s + p->win[i] > p->in[i] ? p->in[i] : s + p->win[i];
    if (*hi < *lo) *hi = *lo;
}

/* The exact max of one channel's window [d0,d1) x [h0,h1) x [w0,w1) (cnt taps > 0) and its first position
 * (plane index; the first NaN under PROPAGATE; -1 when every tap is NaN): the slow path the vector loops
 * below fall back to when a window holds NaN or +-inf, or nothing above -inf */
static float max_exact(const pplan *p, const float *xc, int64_t d0, int64_t d1, int64_t h0, int64_t h1, int64_t w0, int64_t w1, int64_t *best)
{
    float acc = -INFINITY;
    *best = -1;
    for (int64_t id = d0; id < d1; id++)
        for (int64_t ih = h0; ih < h1; ih++)
            for (int64_t iw = w0; iw < w1; iw++) {
                const float v = xc[id * p->xs.d + ih * p->xs.h + iw * p->xs.w];
                const int64_t at = (id * p->in[1] + ih) * p->in[2] + iw;
                if (isnan(v)) {
                    if (p->prop) {
                        *best = at;
                        return v;
                    }
                    continue;
                }
                if (*best < 0 || v > acc) acc = v, *best = at;
            }
    return *best < 0 ? NAN : acc;
}

/* ------------------------------------------------------------------ forward */

/* one row of outputs (n, channel block c0..c0+cb, od, oh, all ow). The max loop keeps, besides the
 * running max, a sum of v*0: it stays 0 unless a tap is NaN or +-inf, and such windows (and those whose
 * max stays -inf) are redone by max_exact. */
static inline __attribute__((always_inline)) void fwd_row(const pplan *p, const float *x, float *y, int64_t n, int64_t c0, int64_t cb,
                                                          int64_t od, int64_t oh, double a, double b)
{
    float acc[CB_MAX], chk[CB_MAX], v[CB_MAX];
    double sum[CB_MAX];
    const int64_t xc = p->xs.c, yc = p->ys.c;
    int64_t d0, d1, h0, h1;
    taps(p, 0, od, &d0, &d1);
    taps(p, 1, oh, &h0, &h1);
    const float af = (float)a, bf = (float)b;
    const float *xb = x + n * p->xs.n + c0 * xc;
    for (int64_t ow = 0; ow < p->out[2]; ow++) {
        int64_t w0, w1;
        taps(p, 2, ow, &w0, &w1);
        const int64_t cnt = (d1 - d0) * (h1 - h0) * (w1 - w0);
        if (p->is_max) {
            for (int64_t c = 0; c < cb; c++) acc[c] = -INFINITY, chk[c] = 0.f;
            for (int64_t id = d0; id < d1; id++)
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++) {
                        const float *xp = xb + id * p->xs.d + ih * p->xs.h + iw * p->xs.w;
                        for (int64_t c = 0; c < cb; c++) {
                            acc[c] = xp[c * xc] > acc[c] ? xp[c * xc] : acc[c];
                            chk[c] += xp[c * xc] * 0.f;
                        }
                    }
            for (int64_t c = 0; c < cb; c++) {
                v[c] = acc[c];
                if (cnt == 0) v[c] = 0.f;
                else if (chk[c] != 0.f || acc[c] == -INFINITY) {
                    int64_t at;
                    v[c] = max_exact(p, xb + c * xc, d0, d1, h0, h1, w0, w1, &at);
                }
            }
        } else {
            for (int64_t c = 0; c < cb; c++) sum[c] = 0;
            for (int64_t id = d0; id < d1; id++)
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++) {
                        const float *xp = xb + id * p->xs.d + ih * p->xs.h + iw * p->xs.w;
                        for (int64_t c = 0; c < cb; c++) sum[c] += (double)xp[c * xc];
                    }
            const double div = p->incl ? (double)p->win_sz : (double)cnt;
            for (int64_t c = 0; c < cb; c++) v[c] = cnt > 0 ? (float)(sum[c] / div) : 0.f;
        }
        float *yp = y + n * p->ys.n + c0 * yc + od * p->ys.d + oh * p->ys.h + ow * p->ys.w;
        if (b == 0)
            for (int64_t c = 0; c < cb; c++) yp[c * yc] = af * v[c];
        else
            for (int64_t c = 0; c < cb; c++) yp[c * yc] = af * v[c] + bf * yp[c * yc];
    }
}

/* the outputs o in [o0, o1) whose tap kw, at column o*str - pad + kw, is in [0, in): [*oa, *ob); 0 when none */
static inline int tap_outputs(int64_t pad, int64_t kw, int64_t str, int64_t in, int64_t o0, int64_t o1, int64_t *oa, int64_t *ob)
{
    int64_t a = pad - kw <= 0 ? 0 : (pad - kw + str - 1) / str, b = in - 1 + pad - kw < 0 ? 0 : (in - 1 + pad - kw) / str + 1;
    *oa = a < o0 ? o0 : a;
    *ob = b > o1 ? o1 : b;
    return *oa < *ob;
}

/* One row of outputs of one channel whose input rows are contiguous (NCHW): the loops run along the
 * output row, one window column kw at a time over the outputs where that tap is in bounds (input
 * stride str between outputs, a constant for the vectorizer where it is 1 or 2), in blocks of
 * ROWB outputs; the finish per output is fwd_row's. */
#define ROWB 256
static inline __attribute__((always_inline)) void fwd_row_w(const pplan *p, const float *x, float *y, int64_t n, int64_t c, int64_t od,
                                                            int64_t oh, double a, double b, int64_t str)
{
    float acc[ROWB], chk[ROWB];
    double sum[ROWB];
    int64_t d0, d1, h0, h1;
    taps(p, 0, od, &d0, &d1);
    taps(p, 1, oh, &h0, &h1);
    const float af = (float)a, bf = (float)b;
    const float *xb = x + n * p->xs.n + c * p->xs.c;
    const int64_t pad = p->pad[2], win = p->win[2], in = p->in[2];
    float *yr = y + n * p->ys.n + c * p->ys.c + od * p->ys.d + oh * p->ys.h;
    for (int64_t o0 = 0; o0 < p->out[2]; o0 += ROWB) {
        const int64_t o1 = p->out[2] - o0 < ROWB ? p->out[2] : o0 + ROWB;
        if (p->is_max)
            for (int64_t o = 0; o < o1 - o0; o++) acc[o] = -INFINITY, chk[o] = 0.f;
        else
            for (int64_t o = 0; o < o1 - o0; o++) sum[o] = 0;
        for (int64_t id = d0; id < d1; id++)
            for (int64_t ih = h0; ih < h1; ih++) {
                const float *xr = xb + id * p->xs.d + ih * p->xs.h;
                for (int64_t kw = 0; kw < win; kw++) {
                    int64_t oa, ob;
                    if (!tap_outputs(pad, kw, str, in, o0, o1, &oa, &ob)) continue;
                    const float *xs = xr + oa * str - pad + kw;
                    float *ac = acc + (oa - o0), *ck = chk + (oa - o0);
                    double *sm = sum + (oa - o0);
                    if (p->is_max)
                        for (int64_t o = 0; o < ob - oa; o++) {
                            ac[o] = xs[o * str] > ac[o] ? xs[o * str] : ac[o];
                            ck[o] += xs[o * str] * 0.f;
                        }
                    else
                        for (int64_t o = 0; o < ob - oa; o++) sm[o] += (double)xs[o * str];
                }
            }
        float *yp = yr + o0 * p->ys.w;
        const int64_t ys = p->ys.w, m = o1 - o0;
        int odd = (d1 - d0) * (h1 - h0) == 0;
        if (p->is_max) {
            /* the block straight when no window needs max_exact (a NaN or +-inf tap, nothing above -inf,
             * or no tap at all), else output by output */
            for (int64_t o = 0; o < m; o++) odd |= chk[o] != 0.f || acc[o] == -INFINITY;
            if (!odd) {
                if (ys == 1 && b == 0) /* said so for the vectorizer */
                    for (int64_t o = 0; o < m; o++) yp[o] = af * acc[o];
                else if (ys == 1)
                    for (int64_t o = 0; o < m; o++) yp[o] = af * acc[o] + bf * yp[o];
                else
                    for (int64_t o = 0; o < m; o++) yp[o * ys] = b == 0 ? af * acc[o] : af * acc[o] + bf * yp[o * ys];
                continue;
            }
        } else if (!odd) {
            /* the divisor: the window size, or the in-bounds taps (those along W clamped here) */
            const int32_t dh = (int32_t)((d1 - d0) * (h1 - h0)), st = (int32_t)str, pd = (int32_t)pad, wn = (int32_t)win, iw = (int32_t)in;
            const double ws = (double)p->win_sz;
            for (int64_t o = 0; o < m; o++) {
                const int32_t s0 = (int32_t)(o0 + o) * st - pd, w0 = s0 < 0 ? 0 : s0, w1 = s0 + wn > iw ? iw : s0 + wn;
                const int32_t cnt = w1 > w0 ? dh * (w1 - w0) : 0; /* 0: the window is all padding */
                const float v = cnt ? (float)(sum[o] / (p->incl ? ws : (double)cnt)) : 0.f;
                yp[o * ys] = b == 0 ? af * v : af * v + bf * yp[o * ys];
            }
            continue;
        }
        for (int64_t ow = o0; ow < o1; ow++) {
            int64_t w0, w1;
            taps(p, 2, ow, &w0, &w1);
            const int64_t cnt = (d1 - d0) * (h1 - h0) * (w1 - w0), o = ow - o0;
            float v;
            if (cnt == 0) v = 0.f;
            else if (!p->is_max) v = (float)(sum[o] / (p->incl ? (double)p->win_sz : (double)cnt));
            else if (chk[o] != 0.f || acc[o] == -INFINITY) { /* a NaN or +-inf tap, or nothing above -inf */
                int64_t at;
                v = max_exact(p, xb, d0, d1, h0, h1, w0, w1, &at);
            } else v = acc[o];
            float *yq = yr + ow * p->ys.w;
            *yq = b == 0 ? af * v : af * v + bf * *yq;
        }
    }
}

/* Output rows k = ((n * channel blocks + block) * out[0] + od) * out[1] + oh, each thread a contiguous share
 * (as schedule(static) cuts it), decoded once and then counted: the divisions of a decode per row cost about
 * 200 cycles of a 28-output NCHW row */
typedef struct { int64_t n, c0, od, oh; } prow;

/* the number of output rows (p->cb channels a block) */
static int64_t row_count(const pplan *p) { return p->n * ((p->c + p->cb - 1) / p->cb) * p->out[0] * p->out[1]; }

static prow row_at(const pplan *p, int64_t k)
{
    const int64_t blocks = (p->c + p->cb - 1) / p->cb;
    prow r = {k / (p->out[1] * p->out[0] * blocks), k / (p->out[1] * p->out[0]) % blocks * p->cb, k / p->out[1] % p->out[0], k % p->out[1]};
    return r;
}

static inline void row_step(const pplan *p, prow *r)
{
    if (++r->oh < p->out[1]) return;
    r->oh = 0;
    if (++r->od < p->out[0]) return;
    r->od = 0;
    r->c0 += p->cb;
    if (r->c0 < p->c) return;
    r->c0 = 0;
    r->n++;
}

FDNN_CLONES static void fwd_rows(const pplan *p, const float *x, float *y, int64_t k0, int64_t k1, double a, double b)
{
    prow r = row_at(p, k0);
    for (int64_t k = k0; k < k1; k++, row_step(p, &r)) {
        const int64_t n = r.n, c0 = r.c0, od = r.od, oh = r.oh, cb = p->c - c0 < p->cb ? p->c - c0 : p->cb;
        if (p->cb > 1) fwd_row(p, x, y, n, c0, cb, od, oh, a, b); /* channels innermost: stride 1, said so for the vectorizer */
        else if (p->xs.w != 1) fwd_row(p, x, y, n, c0, 1, od, oh, a, b);
        else if (p->str[2] == 1) fwd_row_w(p, x, y, n, c0, od, oh, a, b, 1);
        else if (p->str[2] == 2) fwd_row_w(p, x, y, n, c0, od, oh, a, b, 2);
        else fwd_row_w(p, x, y, n, c0, od, oh, a, b, p->str[2]);
    }
}

int fdnn_cpu_pool_fwd_f32(const struct cudnnPoolingStruct *d, double a, const fdnn_tensor *xd, const void *x, double b, const fdnn_tensor *yd,
                          void *y)
{
    if (xd->dtype != CUDNN_DATA_FLOAT || xd->nb_dims != d->nb_spatial + 2) return 0;
    pplan p;
    make_plan(&p, d, xd, yd);
    p.cb = xd->stride[1] == 1 && yd->stride[1] == 1 ? CB_MAX : 1;
    const int64_t tasks = row_count(&p);
#pragma omp parallel if (tasks * p.out[2] * p.win_sz > 16384)
    {
        int64_t k0, k1;
        fdnn_ops_share(tasks, &k0, &k1);
        if (k0 < k1) fwd_rows(&p, x, y, k0, k1, a, b);
    }
    return 1;
}

/* ------------------------------------------------------------------ backward */

/* the gradient of one (image, channel block) into g[spatial * cb + c], zeroed first */
static inline __attribute__((always_inline)) void bwd_grad(const pplan *p, const float *x, const float *dy, double *g, int64_t n, int64_t c0, int64_t cb)
{
    const int64_t xc = p->xs.c, yc = p->ys.c, in_sz = p->in[0] * p->in[1] * p->in[2];
    for (int64_t i = 0; i < in_sz * cb; i++) g[i] = 0;
    const float *xb = x + n * p->xs.n + c0 * xc;
    for (int64_t od = 0; od < p->out[0]; od++)
        for (int64_t oh = 0; oh < p->out[1]; oh++) {
            int64_t d0, d1, h0, h1;
            taps(p, 0, od, &d0, &d1);
            taps(p, 1, oh, &h0, &h1);
            for (int64_t ow = 0; ow < p->out[2]; ow++) {
                int64_t w0, w1;
                taps(p, 2, ow, &w0, &w1);
                const int64_t cnt = (d1 - d0) * (h1 - h0) * (w1 - w0);
                if (cnt == 0) continue;
                const float *dyp = dy + n * p->ys.n + c0 * yc + od * p->ys.d + oh * p->ys.h + ow * p->ys.w;
                if (!p->is_max) { /* every tap gets dy / divisor */
                    double gs[CB_MAX];
                    const double div = p->incl ? (double)p->win_sz : (double)cnt;
                    for (int64_t c = 0; c < cb; c++) gs[c] = (double)dyp[c * yc] / div;
                    for (int64_t id = d0; id < d1; id++)
                        for (int64_t ih = h0; ih < h1; ih++)
                            for (int64_t iw = w0; iw < w1; iw++) {
                                double *gp = g + ((id * p->in[1] + ih) * p->in[2] + iw) * cb;
                                for (int64_t c = 0; c < cb; c++) gp[c] += gs[c];
                            }
                    continue;
                }
                /* max: the first maximum in window order (strictly greater replaces), with max_exact's fallback */
                float acc[CB_MAX], chk[CB_MAX];
                int64_t best[CB_MAX];
                for (int64_t c = 0; c < cb; c++) acc[c] = -INFINITY, chk[c] = 0.f, best[c] = -1;
                for (int64_t id = d0; id < d1; id++)
                    for (int64_t ih = h0; ih < h1; ih++)
                        for (int64_t iw = w0; iw < w1; iw++) {
                            const float *xp = xb + id * p->xs.d + ih * p->xs.h + iw * p->xs.w;
                            const int64_t at = (id * p->in[1] + ih) * p->in[2] + iw;
                            for (int64_t c = 0; c < cb; c++) {
                                const int take = xp[c * xc] > acc[c];
                                acc[c] = take ? xp[c * xc] : acc[c];
                                best[c] = take ? at : best[c];
                                chk[c] += xp[c * xc] * 0.f;
                            }
                        }
                for (int64_t c = 0; c < cb; c++)
                    if (chk[c] != 0.f || best[c] < 0) /* chk is NaN or +-inf != 0 when a tap was */ max_exact(p, xb + c * xc, d0, d1, h0, h1, w0, w1, &best[c]);
                for (int64_t c = 0; c < cb; c++)
                    if (best[c] >= 0) g[best[c] * cb + c] += (double)dyp[c * yc];
            }
        }
}

FDNN_CLONES static void bwd_task(const pplan *p, const float *x, const float *dy, float *dx, double *g, int64_t k, double a, double b)
{
    const int64_t blocks = (p->c + p->cb - 1) / p->cb, n = k / blocks, c0 = k % blocks * p->cb, cb = p->c - c0 < p->cb ? p->c - c0 : p->cb;
    if (p->cb > 1) bwd_grad(p, x, dy, g, n, c0, cb);
    else bwd_grad(p, x, dy, g, n, c0, 1);
    const float af = (float)a, bf = (float)b;
    const int64_t dc = p->dxs.c;
    float *db = dx + n * p->dxs.n + c0 * dc;
    for (int64_t id = 0; id < p->in[0]; id++)
        for (int64_t ih = 0; ih < p->in[1]; ih++) {
            if (cb == 1 && p->dxs.w == 1) { /* one channel, a contiguous row (NCHW) */
                float *dp = db + id * p->dxs.d + ih * p->dxs.h;
                const double *gp = g + (id * p->in[1] + ih) * p->in[2];
                if (b == 0)
                    for (int64_t iw = 0; iw < p->in[2]; iw++) dp[iw] = af * (float)gp[iw];
                else
                    for (int64_t iw = 0; iw < p->in[2]; iw++) dp[iw] = af * (float)gp[iw] + bf * dp[iw];
                continue;
            }
            for (int64_t iw = 0; iw < p->in[2]; iw++) {
                float *dp = db + id * p->dxs.d + ih * p->dxs.h + iw * p->dxs.w;
                const double *gp = g + ((id * p->in[1] + ih) * p->in[2] + iw) * cb;
                if (b == 0)
                    for (int64_t c = 0; c < cb; c++) dp[c * dc] = af * (float)gp[c];
                else
                    for (int64_t c = 0; c < cb; c++) dp[c * dc] = af * (float)gp[c] + bf * dp[c * dc];
            }
        }
}

/* Backward where the windows do not overlap (stride >= window in every dim), so that each x element is in at
 * most one window: dx is written straight, without the gradient buffer. Task (n, channel block, od, oh) owns
 * the input rows [own(0, od), own(0, od + 1)) x [own(1, oh), own(1, oh + 1)), which hold its windows' rows,
 * and writes every dx element there; along W a block of outputs [o0, o1) owns the columns [own(2, o0),
 * own(2, o1)) the same way. Phase 1 finds each output's routed tap (max: the first maximum in window order,
 * max_exact's fallback for NaN / inf; a tap numbered (kd * wh + kh) * ww + kw from the window's unclamped
 * corner) and its gradient (dy, or dy / divisor); phase 2 walks the owned dx once, tap by tap. */
static inline int64_t own(const pplan *p, int i, int64_t o)
{
    if (o <= 0) return 0;
    if (o >= p->out[i]) return p->in[i];
    const int64_t s = o * p->str[i] - p->pad[i];
    return s < 0 ? 0 : s > p->in[i] ? p->in[i] : s;
}

#define DB 2048 /* (outputs x channels) per block of a row */

/* the routed tap of a window that max_exact resolves (plane position at, window corner (bd, bh, bw)) */
static inline int32_t tap_of(const pplan *p, int64_t at, int64_t bd, int64_t bh, int64_t bw)
{
    if (at < 0) return -1;
    const int64_t iw = at % p->in[2], ih = at / p->in[2] % p->in[1], id = at / (p->in[2] * p->in[1]);
    return (int32_t)(((id - bd) * p->win[1] + (ih - bh)) * p->win[2] + (iw - bw));
}

/* The routed taps of outputs [o0, o1) of one row (input rows [d0,d1) x [h0,h1), the windows' unclamped corner at
 * (bd, bh) in D, H) of one channel whose x rows are contiguous (NCHW) into best[0, o1 - o0) (-1: no tap), acc and
 * chk scratch of as many: the first maximum in window order, one tap at a time over the outputs (input stride str
 * between them, a constant for the vectorizer where it is 2), then max_exact for the windows with a NaN or +-inf
 * tap or nothing above -inf. Shared by both direct backward paths. */
static inline __attribute__((always_inline)) void route_w(const pplan *p, const float *xb, int64_t d0, int64_t d1, int64_t h0, int64_t h1,
                                                          int64_t bd, int64_t bh, int64_t o0, int64_t o1, int64_t str, float *acc, float *chk,
                                                          int32_t *best)
{
    const int64_t pad = p->pad[2], win = p->win[2], in = p->in[2];
    for (int64_t o = 0; o < o1 - o0; o++) acc[o] = -INFINITY, chk[o] = 0.f, best[o] = -1;
    for (int64_t id = d0; id < d1; id++)
        for (int64_t ih = h0; ih < h1; ih++) {
            const float *xr = xb + id * p->xs.d + ih * p->xs.h;
            for (int64_t kw = 0; kw < win; kw++) {
                int64_t oa, ob;
                if (!tap_outputs(pad, kw, str, in, o0, o1, &oa, &ob)) continue;
                const float *xs = xr + oa * str - pad + kw;
                float *ac = acc + (oa - o0), *ck = chk + (oa - o0);
                int32_t *bt = best + (oa - o0);
                const int32_t t = (int32_t)(((id - bd) * p->win[1] + (ih - bh)) * win + kw);
                for (int64_t o = 0; o < ob - oa; o++) { /* selects as bit operations: GCC makes a
                                                           * conditional store a masked store, slow on AMD */
                    const int32_t take = -(int32_t)(xs[o * str] > ac[o]);
                    ac[o] = xs[o * str] > ac[o] ? xs[o * str] : ac[o];
                    bt[o] = (t & take) | (bt[o] & ~take);
                    ck[o] += xs[o * str] * 0.f;
                }
            }
        }
    int odd = 0;
    for (int64_t o = 0; o < o1 - o0; o++) odd |= chk[o] != 0.f || best[o] < 0;
    for (int64_t ow = o0; ow < o1 && odd; ow++) {
        const int64_t o = ow - o0;
        if (chk[o] != 0.f || best[o] < 0) {
            int64_t w0, w1, at;
            taps(p, 2, ow, &w0, &w1);
            if ((d1 - d0) * (h1 - h0) * (w1 - w0) == 0) continue;
            max_exact(p, xb, d0, d1, h0, h1, w0, w1, &at);
            best[o] = tap_of(p, at, bd, bh, ow * str - pad);
        }
    }
}

/* one channel whose x and dx rows are contiguous (NCHW): phase 1 is route_w */
static inline __attribute__((always_inline)) void bwd_direct_w(const pplan *p, const float *x, const float *dy, float *dx, int64_t n, int64_t c,
                                                               int64_t od, int64_t oh, float af, float bf, int b0, int64_t str)
{
    float acc[DB], chk[DB], g[DB];
    int32_t best[DB];
    int64_t d0, d1, h0, h1;
    taps(p, 0, od, &d0, &d1);
    taps(p, 1, oh, &h0, &h1);
    const int64_t bd = od * p->str[0] - p->pad[0], bh = oh * p->str[1] - p->pad[1];
    const int64_t pad = p->pad[2], win = p->win[2];
    const float *xb = x + n * p->xs.n + c * p->xs.c;
    const float *dyr = dy + n * p->ys.n + c * p->ys.c + od * p->ys.d + oh * p->ys.h;
    float *dxb = dx + n * p->dxs.n + c * p->dxs.c;
    for (int64_t o0 = 0; o0 < p->out[2]; o0 += DB) {
        const int64_t o1 = p->out[2] - o0 < DB ? p->out[2] : o0 + DB;
        if (p->is_max) {
            route_w(p, xb, d0, d1, h0, h1, bd, bh, o0, o1, str, acc, chk, best);
            const int64_t ys = p->ys.w, m = o1 - o0;
            if (ys == 1)
                for (int64_t o = 0; o < m; o++) g[o] = dyr[o0 + o];
            else
                for (int64_t o = 0; o < m; o++) g[o] = dyr[(o0 + o) * ys];
        } else
            for (int64_t ow = o0; ow < o1; ow++) {
                int64_t w0, w1;
                taps(p, 2, ow, &w0, &w1);
                const int64_t cnt = (d1 - d0) * (h1 - h0) * (w1 - w0);
                g[ow - o0] = cnt > 0 ? (float)((double)dyr[ow * p->ys.w] / (p->incl ? (double)p->win_sz : (double)cnt)) : 0.f;
            }
        /* phase 2: the owned rows, over the block's columns [own(2, o0), own(2, o1)) */
        const int64_t c0 = own(p, 2, o0), c1 = own(p, 2, o1);
        for (int64_t id = own(p, 0, od); id < own(p, 0, od + 1); id++)
            for (int64_t ih = own(p, 1, oh); ih < own(p, 1, oh + 1); ih++) {
                float *dr = dxb + id * p->dxs.d + ih * p->dxs.h;
                const int inwin = id >= d0 && id < d1 && ih >= h0 && ih < h1;
                const int32_t tb = (int32_t)(((id - bd) * p->win[1] + (ih - bh)) * win);
                /* [c0, tail): one (output, kw) each; [tail, c1): past the block's last window. Outputs [oi, oj)
                 * have all their str columns in [c0, tail) and are written output by output in address order;
                 * the columns on either side of them one by one. */
                int64_t tail = o1 * str - pad;
                tail = !inwin || tail < c0 ? c0 : tail > c1 ? c1 : tail;
                int64_t oi = (c0 + pad + str - 1) / str, oj = (tail + pad) / str;
                oi = oi < o0 ? o0 : oi;
                oj = oj > o1 ? o1 : oj;
                if (!inwin || oj < oi) oi = oj = o1;
                const int64_t ci = oi < oj ? oi * str - pad : tail, cj = oi < oj ? oj * str - pad : tail;
                for (int64_t iw = c0; iw < c1; iw++) {
                    if (iw == ci) iw = cj; /* the interior, below */
                    if (iw >= c1) break;
                    float v = 0.f;
                    if (iw < tail) {
                        const int64_t o = (iw + pad) / str, kw = iw + pad - o * str;
                        if (kw < win && (!p->is_max || best[o - o0] == tb + kw)) v = g[o - o0];
                    }
                    dr[iw] = b0 ? af * v : af * v + bf * dr[iw];
                }
                float *dp = dr + ci;
                if (p->is_max)
                    for (int64_t o = oi; o < oj; o++, dp += str) {
                        const float gv = g[o - o0];
                        const int32_t bv = best[o - o0] - tb;
                        for (int64_t kw = 0; kw < str; kw++) {
                            const float v = kw < win && bv == kw ? gv : 0.f;
                            dp[kw] = b0 ? af * v : af * v + bf * dp[kw];
                        }
                    }
                else
                    for (int64_t o = oi; o < oj; o++, dp += str) {
                        const float gv = g[o - o0];
                        for (int64_t kw = 0; kw < str; kw++) {
                            const float v = kw < win ? gv : 0.f;
                            dp[kw] = b0 ? af * v : af * v + bf * dp[kw];
                        }
                    }
            }
    }
}

/* The routed taps of one window (taps [d0,d1) x [h0,h1) x [w0,w1), unclamped corner (bd, bh, bw)) of cb channels
 * innermost in x (NHWC, NDHWC) into bt[0, cb) (-1: no tap), ac and ck scratch of as many: route_w's rule over
 * the channels. Shared by both direct backward paths. */
static inline __attribute__((always_inline)) void route_c(const pplan *p, const float *xb, int64_t d0, int64_t d1, int64_t h0, int64_t h1,
                                                          int64_t w0, int64_t w1, int64_t bd, int64_t bh, int64_t bw, int64_t cb, float *ac,
                                                          float *ck, int32_t *bt)
{
    for (int64_t c = 0; c < cb; c++) ac[c] = -INFINITY, ck[c] = 0.f, bt[c] = -1;
    for (int64_t id = d0; id < d1; id++)
        for (int64_t ih = h0; ih < h1; ih++)
            for (int64_t iw = w0; iw < w1; iw++) {
                const float *xp = xb + id * p->xs.d + ih * p->xs.h + iw * p->xs.w;
                const int32_t t = (int32_t)(((id - bd) * p->win[1] + (ih - bh)) * p->win[2] + (iw - bw));
                for (int64_t c = 0; c < cb; c++) {
                    const int32_t take = -(int32_t)(xp[c] > ac[c]);
                    ac[c] = xp[c] > ac[c] ? xp[c] : ac[c];
                    bt[c] = (t & take) | (bt[c] & ~take);
                    ck[c] += xp[c] * 0.f;
                }
            }
    if ((d1 - d0) * (h1 - h0) * (w1 - w0) > 0)
        for (int64_t c = 0; c < cb; c++)
            if (ck[c] != 0.f || bt[c] < 0) {
                int64_t at;
                max_exact(p, xb + c, d0, d1, h0, h1, w0, w1, &at);
                bt[c] = tap_of(p, at, bd, bh, bw);
            }
}

/* a block of cb channels innermost in x, dy and dx (NHWC, NDHWC): the loops run over the channels */
static inline __attribute__((always_inline)) void bwd_direct_c(const pplan *p, const float *x, const float *dy, float *dx, int64_t n, int64_t c0,
                                                               int64_t cb, int64_t od, int64_t oh, float af, float bf, int b0)
{
    float acc[DB], chk[DB], g[DB];
    int32_t best[DB];
    int64_t d0, d1, h0, h1;
    taps(p, 0, od, &d0, &d1);
    taps(p, 1, oh, &h0, &h1);
    const int64_t bd = od * p->str[0] - p->pad[0], bh = oh * p->str[1] - p->pad[1];
    const int64_t pad = p->pad[2], win = p->win[2], str = p->str[2], ob_n = DB / CB_MAX;
    const float *xb = x + n * p->xs.n + c0;
    const float *dyr = dy + n * p->ys.n + c0 + od * p->ys.d + oh * p->ys.h;
    float *dxb = dx + n * p->dxs.n + c0;
    for (int64_t o0 = 0; o0 < p->out[2]; o0 += ob_n) {
        const int64_t o1 = p->out[2] - o0 < ob_n ? p->out[2] : o0 + ob_n;
        for (int64_t ow = o0; ow < o1; ow++) {
            int64_t w0, w1;
            taps(p, 2, ow, &w0, &w1);
            const int64_t cnt = (d1 - d0) * (h1 - h0) * (w1 - w0), bw = ow * str - pad;
            float *ac = acc + (ow - o0) * cb, *ck = chk + (ow - o0) * cb, *gs = g + (ow - o0) * cb;
            int32_t *bt = best + (ow - o0) * cb;
            const float *dyp = dyr + ow * p->ys.w;
            if (!p->is_max) {
                const double div = p->incl ? (double)p->win_sz : (double)cnt;
                for (int64_t c = 0; c < cb; c++) gs[c] = cnt > 0 ? (float)((double)dyp[c] / div) : 0.f;
                continue;
            }
            for (int64_t c = 0; c < cb; c++) gs[c] = dyp[c];
            route_c(p, xb, d0, d1, h0, h1, w0, w1, bd, bh, bw, cb, ac, ck, bt);
        }
        /* phase 2: the owned rows, over the block's columns */
        const int64_t c0w = own(p, 2, o0), c1w = own(p, 2, o1);
        for (int64_t id = own(p, 0, od); id < own(p, 0, od + 1); id++)
            for (int64_t ih = own(p, 1, oh); ih < own(p, 1, oh + 1); ih++) {
                float *dr = dxb + id * p->dxs.d + ih * p->dxs.h;
                const int inwin = id >= d0 && id < d1 && ih >= h0 && ih < h1;
                const int32_t tb = (int32_t)(((id - bd) * p->win[1] + (ih - bh)) * win);
                for (int64_t iw = c0w; iw < c1w; iw++) {
                    float *dp = dr + iw * p->dxs.w;
                    const int64_t o = (iw + pad) / str, kw = iw + pad - o * str;
                    if (inwin && o < o1 && kw < win) {
                        const float *gs = g + (o - o0) * cb;
                        const int32_t *bt = best + (o - o0) * cb, t = tb + (int32_t)kw;
                        if (p->is_max) {
                            if (b0)
                                for (int64_t c = 0; c < cb; c++) dp[c] = af * (bt[c] == t ? gs[c] : 0.f);
                            else
                                for (int64_t c = 0; c < cb; c++) dp[c] = af * (bt[c] == t ? gs[c] : 0.f) + bf * dp[c];
                        } else {
                            if (b0)
                                for (int64_t c = 0; c < cb; c++) dp[c] = af * gs[c];
                            else
                                for (int64_t c = 0; c < cb; c++) dp[c] = af * gs[c] + bf * dp[c];
                        }
                    } else if (b0)
                        for (int64_t c = 0; c < cb; c++) dp[c] = af * 0.f;
                    else
                        for (int64_t c = 0; c < cb; c++) dp[c] = af * 0.f + bf * dp[c];
                }
            }
    }
}

FDNN_CLONES static void bwd_direct_rows(const pplan *p, const float *x, const float *dy, float *dx, int64_t k0, int64_t k1, double a, double b)
{
    const float af = (float)a, bf = (float)b;
    prow r = row_at(p, k0);
    for (int64_t k = k0; k < k1; k++, row_step(p, &r)) {
        const int64_t cb = p->c - r.c0 < p->cb ? p->c - r.c0 : p->cb;
        if (p->cb > 1) bwd_direct_c(p, x, dy, dx, r.n, r.c0, cb, r.od, r.oh, af, bf, b == 0);
        else if (p->str[2] == 2) bwd_direct_w(p, x, dy, dx, r.n, r.c0, r.od, r.oh, af, bf, b == 0, 2);
        else bwd_direct_w(p, x, dy, dx, r.n, r.c0, r.od, r.oh, af, bf, b == 0, p->str[2]);
    }
}

/* Backward where windows overlap (stride < window in some dim), also without the gradient buffer. The dx rows
 * k = ((n * channel blocks + block) * in[0] + id) * in[1] + ih are cut into runs (whole planes where there are
 * enough) that the threads take as they come; a thread computes each dx element of its rows once, as the sum in double of the gradients of
 * the windows that cover it in raster order (od, oh, ow) -- the order the gradient buffer summed them in, so the
 * same doubles, rounded once, for any thread count. An output row is routed (ov_route: route_w / route_c, the
 * gradients as doubles) into a slot of a small per-thread cache keyed by its row number, slot (od % rd) * rh +
 * oh % rh with rd, rh the most output rows covering one input row along D, H: the rows covering one dx row have
 * distinct slots, and a thread sweeping a run routes each output row once in 2-D (output rows at the edge of
 * two runs are routed for both, each keeping its own dx rows; in 3-D once for each input plane it
 * covers). Channels innermost (NHWC): each dx pixel gathers its windows' gradients over the channel block. One
 * channel, contiguous rows (NCHW): the row is summed in str phases (column u = iw + pad = q * str + r in phase r
 * at q), each window column kw = r + str * j adding output o's gradient at q = o + j, for j descending (o
 * ascending), as contiguous vectors; columns in padding are summed too and never written. */
typedef struct {
    double *g, *row;     /* slots x (out[2] * cb) gradients; NCHW: the dx row in str phases of ov_q columns */
    int64_t *tag;        /* slots: the output row number each holds, -1 none */
    int32_t *best;       /* slots x (out[2] * cb) routed taps (max) */
    float *acc, *chk;    /* one slot's entries each: ov_route_w / route_c scratch */
    float *stage;        /* NCHW: str * ov_stage(p), ov_route_w's window row */
    int32_t *tab;        /* ov_rows' tables: covering() of each input position along D, H; each output's slot along D, H */
} ovscr;

/* the outputs whose window covers input position v along dim i: [*oa, *ob) */
static inline void covering(const pplan *p, int i, int64_t v, int64_t *oa, int64_t *ob)
{
    const int64_t lo = v + p->pad[i] - p->win[i] + 1, s = p->str[i];
    const int64_t a = lo <= 0 ? 0 : (lo + s - 1) / s, b = (v + p->pad[i]) / s + 1;
    *oa = a;
    *ob = b > p->out[i] ? p->out[i] : b < a ? a : b;
}

/* the columns of one phase of the NCHW row: every q of a column in [pad, pad + in) and of a window tap */
static int64_t ov_q(const pplan *p)
{
    const int64_t a = (p->pad[2] + p->in[2] - 1) / p->str[2] + 1, b = p->out[2] + (p->win[2] - 1) / p->str[2];
    return a > b ? a : b;
}

/* one slot's entries: out[2] * cb; NCHW out[2] rounded up to whole vectors of 8 (ov_route_w computes those) */
static int64_t ov_slot(const pplan *p) { return p->cb > 1 ? p->out[2] * p->cb : (p->out[2] + 7) / 8 * 8; }

/* NCHW: the staged window row of ov_route_w, str phases of ov_stage columns */
static int64_t ov_stage(const pplan *p) { return ov_slot(p) + (p->win[2] - 1) / p->str[2]; }

/* per-thread scratch of the overlapping path in bytes (a multiple of 64), and its carving */
static int64_t ov_bytes(const pplan *p, int64_t slots)
{
    const int64_t r = ov_slot(p), rw = p->cb > 1 ? 0 : p->str[2] * ov_q(p), st = p->cb > 1 ? 0 : p->str[2] * ov_stage(p);
    const int64_t b = slots * r * 8 + rw * 8 + slots * 8 + slots * r * 4 + 2 * r * 4 + st * 4 + (2 * (p->in[0] + p->in[1]) + p->out[0] + p->out[1]) * 4;
    return (b + 63) / 64 * 64;
}

static ovscr ov_carve(const pplan *p, int64_t slots, char *m)
{
    const int64_t r = ov_slot(p), rw = p->cb > 1 ? 0 : p->str[2] * ov_q(p);
    ovscr s;
    s.g = (double *)m;
    s.row = s.g + slots * r;
    s.tag = (int64_t *)(s.row + rw);
    s.best = (int32_t *)(s.tag + slots);
    s.acc = (float *)(s.best + slots * r);
    s.chk = s.acc + r;
    s.stage = s.chk + r;
    s.tab = (int32_t *)(s.stage + (p->cb > 1 ? 0 : p->str[2] * ov_stage(p)));
    return s;
}

/* route_w's rule for one output row of one channel whose x rows are contiguous (NCHW), over outputs [0, m8) (out[2]
 * rounded up to vectors of 8): each window row is staged in str phases (column u = iw + pad at stage[(u % str) *
 * qs + u / str], -inf where u is padding), so that window column kw reads outputs o at one contiguous run (phase
 * kw % str from kw / str) for every output, without a scalar tail. Padding is never taken (-inf is not greater
 * than the running -inf), a NaN tap is flagged by an unordered compare, and the windows with a NaN or nothing
 * above -inf go to max_exact, as in route_w; best[o] of outputs past out[2] is left undefined. */
static inline __attribute__((always_inline)) void ov_route_w(const pplan *p, const float *xb, int64_t d0, int64_t d1, int64_t h0, int64_t h1,
                                                             int64_t bd, int64_t bh, int64_t str, float *acc, int32_t *nan, int32_t *best,
                                                             float *stage)
{
    const int64_t pad = p->pad[2], win = p->win[2], in = p->in[2], m8 = ov_slot(p), qs = m8 + (win - 1) / str;
    for (int64_t o = 0; o < m8; o++) acc[o] = -INFINITY, nan[o] = 0, best[o] = -1;
    for (int64_t id = d0; id < d1; id++)
        for (int64_t ih = h0; ih < h1; ih++) {
            const float *xr = xb + id * p->xs.d + ih * p->xs.h;
            /* phase ph, column q: x[q * str + ph - pad]; the in-bounds q of each phase in one run */
            for (int64_t ph = 0; ph < str && ph < win; ph++) {
                float *sp = stage + ph * qs;
                const int64_t qa = pad - ph <= 0 ? 0 : (pad - ph + str - 1) / str, qe = in + pad - ph <= 0 ? 0 : (in + pad - ph + str - 1) / str;
                const int64_t a = qa < qs ? qa : qs, e = qe < qs ? qe : qs;
                for (int64_t q = 0; q < a; q++) sp[q] = -INFINITY;
                const float *xq = xr + ph - pad;
                for (int64_t q = a; q < e; q++) sp[q] = xq[q * str];
                for (int64_t q = e > a ? e : a; q < qs; q++) sp[q] = -INFINITY;
            }
            const int32_t tb = (int32_t)(((id - bd) * p->win[1] + (ih - bh)) * win);
            for (int64_t kw = 0; kw < win; kw++) {
                const float *xs = stage + kw % str * qs + kw / str;
                const int32_t t = tb + (int32_t)kw;
                for (int64_t o = 0; o < m8; o++) {
                    const int32_t take = -(int32_t)(xs[o] > acc[o]);
                    acc[o] = xs[o] > acc[o] ? xs[o] : acc[o];
                    best[o] = (t & take) | (best[o] & ~take);
                    nan[o] |= -(int32_t)(xs[o] != xs[o]);
                }
            }
        }
    int odd = 0;
    for (int64_t o = 0; o < p->out[2]; o++) odd |= nan[o] | (best[o] < 0);
    for (int64_t o = 0; o < p->out[2] && odd; o++)
        if (nan[o] || best[o] < 0) {
            int64_t w0, w1, at;
            taps(p, 2, o, &w0, &w1);
            if ((d1 - d0) * (h1 - h0) * (w1 - w0) == 0) continue;
            max_exact(p, xb, d0, d1, h0, h1, w0, w1, &at);
            best[o] = tap_of(p, at, bd, bh, o * str - pad);
        }
}

/* route output row (od, oh) of channels c0..c0+cb into best / g (out[2] * cb each, channel innermost); cb == 0:
 * one channel whose x rows are contiguous (NCHW) */
static inline __attribute__((always_inline)) void ov_route(const pplan *p, const float *x, const float *dy, int64_t n, int64_t c0, int64_t cb,
                                                           int64_t od, int64_t oh, int64_t str, float *acc, float *chk, int32_t *best, double *g,
                                                           float *stage)
{
    int64_t d0, d1, h0, h1;
    taps(p, 0, od, &d0, &d1);
    taps(p, 1, oh, &h0, &h1);
    const int64_t bd = od * p->str[0] - p->pad[0], bh = oh * p->str[1] - p->pad[1], ow_n = p->out[2];
    const float *xb = x + n * p->xs.n + c0 * p->xs.c;
    const float *dyr = dy + n * p->ys.n + c0 * p->ys.c + od * p->ys.d + oh * p->ys.h;
    const double ws = (double)p->win_sz;
    if (cb == 0) {
        const int64_t ys = p->ys.w;
        if (p->is_max) {
            ov_route_w(p, xb, d0, d1, h0, h1, bd, bh, str, acc, (int32_t *)chk, best, stage);
            if (ys == 1) /* said so for the vectorizer */
                for (int64_t o = 0; o < ow_n; o++) g[o] = (double)dyr[o];
            else
                for (int64_t o = 0; o < ow_n; o++) g[o] = (double)dyr[o * ys];
            return;
        }
        /* dy / the window size, or / the in-bounds taps (those along W clamped here, in 32 bits: a vector loop) */
        const int32_t dh = (int32_t)((d1 - d0) * (h1 - h0)), st = (int32_t)str, pd = (int32_t)p->pad[2], wn = (int32_t)p->win[2],
                      iw = (int32_t)p->in[2];
        for (int64_t o = 0; o < ow_n; o++) {
            const int32_t s0 = (int32_t)o * st - pd, w0 = s0 < 0 ? 0 : s0, w1 = s0 + wn > iw ? iw : s0 + wn;
            const int32_t cnt = w1 > w0 ? dh * (w1 - w0) : 0;
            const double v = (double)dyr[o * ys] / (p->incl ? ws : (double)cnt);
            g[o] = cnt ? v : 0.0;
        }
        return;
    }
    for (int64_t ow = 0; ow < ow_n; ow++) {
        int64_t w0, w1;
        taps(p, 2, ow, &w0, &w1);
        const int64_t cnt = (d1 - d0) * (h1 - h0) * (w1 - w0);
        const float *dyp = dyr + ow * p->ys.w;
        double *gs = g + ow * cb;
        if (p->is_max) {
            route_c(p, xb, d0, d1, h0, h1, w0, w1, bd, bh, ow * str - p->pad[2], cb, acc + ow * cb, chk + ow * cb, best + ow * cb);
            for (int64_t c = 0; c < cb; c++) gs[c] = (double)dyp[c];
        } else {
            const double div = p->incl ? ws : (double)cnt;
            for (int64_t c = 0; c < cb; c++) gs[c] = cnt > 0 ? (double)dyp[c] / div : 0.0;
        }
    }
}

/* v where tap == t, else +0: a bit mask, not a select (GCC makes a conditional load a masked load, slow on AMD) */
static inline double routed(int32_t tap, int32_t t, double v)
{
    int64_t i;
    memcpy(&i, &v, sizeof i);
    i &= -(int64_t)(tap == t);
    memcpy(&v, &i, sizeof v);
    return v;
}

#define OV_ROWS 64 /* the most output rows covering one input row (rd * rh; more: the gradient buffer) */

/* dx rows [k0, k1) (cbk 0: one channel, contiguous rows; else cb channels innermost) */
static inline __attribute__((always_inline)) void ov_rows(const pplan *p, const float *x, const float *dy, float *dx, int64_t k0, int64_t k1,
                                                          float af, float bf, int b0, ovscr s, int64_t rd, int64_t rh, int cbk, int64_t str)
{
    const int64_t blocks = (p->c + p->cb - 1) / p->cb, iw_n = p->in[2], ow_n = p->out[2], r = ov_slot(p), pad = p->pad[2], win = p->win[2];
    const int64_t q_n = cbk ? 0 : ov_q(p);
    const int32_t *rb[OV_ROWS];
    const double *rg[OV_ROWS];
    int32_t rt[OV_ROWS];
    for (int64_t i = 0; i < rd * rh; i++) s.tag[i] = -1;
    /* the divisions of covering() and of the slots once, not per row */
    int32_t *cov_d = s.tab, *cov_h = cov_d + 2 * p->in[0], *slot_d = cov_h + 2 * p->in[1], *slot_h = slot_d + p->out[0];
    for (int64_t v = 0; v < p->in[0]; v++) {
        int64_t oa, ob;
        covering(p, 0, v, &oa, &ob);
        cov_d[2 * v] = (int32_t)oa, cov_d[2 * v + 1] = (int32_t)ob;
    }
    for (int64_t v = 0; v < p->in[1]; v++) {
        int64_t oa, ob;
        covering(p, 1, v, &oa, &ob);
        cov_h[2 * v] = (int32_t)oa, cov_h[2 * v + 1] = (int32_t)ob;
    }
    for (int64_t o = 0; o < p->out[0]; o++) slot_d[o] = (int32_t)(o % rd * rh);
    for (int64_t o = 0; o < p->out[1]; o++) slot_h[o] = (int32_t)(o % rh);
    int64_t ih = k0 % p->in[1], id = k0 / p->in[1] % p->in[0], blk = k0 / (p->in[1] * p->in[0]) % blocks,
            n = k0 / (p->in[1] * p->in[0] * blocks);
    for (int64_t k = k0; k < k1; k++) {
        const int64_t c0 = blk * p->cb, cb = cbk ? (p->c - c0 < p->cb ? p->c - c0 : p->cb) : 0;
        const int64_t da = cov_d[2 * id], db = cov_d[2 * id + 1], ha = cov_h[2 * ih], hb = cov_h[2 * ih + 1];
        int64_t nr = 0;
        /* the output rows covering this dx row, in raster order: routed (or found in the cache) */
        for (int64_t od = da; od < db; od++)
            for (int64_t oh = ha; oh < hb; oh++, nr++) {
                const int64_t slot = slot_d[od] + slot_h[oh], key = ((n * blocks + blk) * p->out[0] + od) * p->out[1] + oh;
                int32_t *best = s.best + slot * r;
                double *g = s.g + slot * r;
                if (s.tag[slot] != key) {
                    ov_route(p, x, dy, n, c0, cb, od, oh, str, s.acc, s.chk, best, g, s.stage);
                    s.tag[slot] = key;
                }
                rb[nr] = best, rg[nr] = g;
                rt[nr] = (int32_t)(((id - (od * p->str[0] - p->pad[0])) * p->win[1] + (ih - (oh * p->str[1] - p->pad[1]))) * win);
            }
        float *dr = dx + n * p->dxs.n + c0 * p->dxs.c + id * p->dxs.d + ih * p->dxs.h;
        if (cbk) {
            /* each pixel over the channel block: its covering rows, in each its covering outputs, ow ascending */
            double sum[CB_MAX];
            for (int64_t iw = 0; iw < iw_n; iw++) {
                int64_t wa, wb;
                covering(p, 2, iw, &wa, &wb);
                for (int64_t c = 0; c < cb; c++) sum[c] = 0;
                for (int64_t i = 0; i < nr; i++)
                    for (int64_t ow = wa; ow < wb; ow++) {
                        const int32_t *bt = rb[i] + ow * cb, t = rt[i] + (int32_t)(iw + pad - ow * str);
                        const double *gs = rg[i] + ow * cb;
                        if (p->is_max)
                            for (int64_t c = 0; c < cb; c++) sum[c] += routed(bt[c], t, gs[c]);
                        else
                            for (int64_t c = 0; c < cb; c++) sum[c] += gs[c];
                    }
                float *dp = dr + iw * p->dxs.w;
                if (b0)
                    for (int64_t c = 0; c < cb; c++) dp[c] = af * (float)sum[c];
                else
                    for (int64_t c = 0; c < cb; c++) dp[c] = af * (float)sum[c] + bf * dp[c];
            }
        } else {
            double *row = s.row;
            for (int64_t i = 0; i < str * q_n; i++) row[i] = 0;
            for (int64_t i = 0; i < nr; i++)
                for (int64_t ph = 0; ph < str && ph < win; ph++)
                    for (int64_t j = (win - 1 - ph) / str; j >= 0; j--) {
                        double *rq = row + ph * q_n + j;
                        const double *gs = rg[i];
                        if (p->is_max) {
                            const int32_t *bt = rb[i], t = rt[i] + (int32_t)(ph + str * j);
                            for (int64_t o = 0; o < ow_n; o++) rq[o] += routed(bt[o], t, gs[o]);
                        } else
                            for (int64_t o = 0; o < ow_n; o++) rq[o] += gs[o];
                    }
            /* dx column iw = q * str + ph - pad: whole q runs in the middle, the columns either side one by one */
            const int64_t qa = (pad + str - 1) / str, qb = (pad + iw_n) / str;
            for (int64_t iw = 0; iw < iw_n; iw++) {
                if (qa < qb && iw == qa * str - pad) iw = qb * str - pad;
                if (iw >= iw_n) break;
                const double v = row[(iw + pad) % str * q_n + (iw + pad) / str];
                dr[iw] = b0 ? af * (float)v : af * (float)v + bf * dr[iw];
            }
            for (int64_t q = qa; q < qb; q++) {
                float *dq = dr + q * str - pad;
                if (b0)
                    for (int64_t ph = 0; ph < str; ph++) dq[ph] = af * (float)row[ph * q_n + q];
                else
                    for (int64_t ph = 0; ph < str; ph++) dq[ph] = af * (float)row[ph * q_n + q] + bf * dq[ph];
            }
        }
        if (++ih < p->in[1]) continue;
        ih = 0;
        if (++id < p->in[0]) continue;
        id = 0;
        if (++blk < blocks) continue;
        blk = 0;
        n++;
    }
}

FDNN_CLONES static void bwd_overlap_rows(const pplan *p, const float *x, const float *dy, float *dx, int64_t k0, int64_t k1, double a, double b,
                                         ovscr s, int64_t rd, int64_t rh)
{
    const float af = (float)a, bf = (float)b;
    if (p->cb > 1) ov_rows(p, x, dy, dx, k0, k1, af, bf, b == 0, s, rd, rh, 1, p->str[2]);
    else if (p->str[2] == 2) ov_rows(p, x, dy, dx, k0, k1, af, bf, b == 0, s, rd, rh, 0, 2);
    else ov_rows(p, x, dy, dx, k0, k1, af, bf, b == 0, s, rd, rh, 0, p->str[2]);
}

int fdnn_cpu_pool_bwd_f32(const struct cudnnPoolingStruct *d, double a, const fdnn_tensor *dyd, const void *dy, const fdnn_tensor *xd,
                          const void *x, double b, const fdnn_tensor *dxd, void *dx, int direct_only,
                          int *alloc_failed)
{
    *alloc_failed = 0;
    if (xd->dtype != CUDNN_DATA_FLOAT || xd->nb_dims != d->nb_spatial + 2) return 0;
    pplan p;
    make_plan(&p, d, xd, dyd);
    p.dxs = strides_of(dxd);
    const int chan_in = xd->stride[1] == 1 && dyd->stride[1] == 1 && dxd->stride[1] == 1;
    if (p.str[0] >= p.win[0] && p.str[1] >= p.win[1] && p.str[2] >= p.win[2] && (chan_in || (p.xs.w == 1 && p.dxs.w == 1))) {
        p.cb = chan_in ? CB_MAX : 1;
        const int64_t tasks = row_count(&p);
#pragma omp parallel if (tasks * p.out[2] * p.win_sz > 16384)
        {
            int64_t k0, k1;
            fdnn_ops_share(tasks, &k0, &k1);
            if (k0 < k1) bwd_direct_rows(&p, x, dy, dx, k0, k1, a, b);
        }
        return 1;
    }
    const int64_t rd = (p.win[0] + p.str[0] - 1) / p.str[0] < p.out[0] ? (p.win[0] + p.str[0] - 1) / p.str[0] : p.out[0],
                  rh = (p.win[1] + p.str[1] - 1) / p.str[1] < p.out[1] ? (p.win[1] + p.str[1] - 1) / p.str[1] : p.out[1];
    if ((chan_in || (p.xs.w == 1 && p.dxs.w == 1)) && rd * rh <= OV_ROWS) {
        p.cb = chan_in ? CB_MAX : 1;
        const int64_t per = ov_bytes(&p, rd * rh), tasks = p.n * ((p.c + p.cb - 1) / p.cb) * p.in[0] * p.in[1];
        char *m = aligned_alloc(64, (size_t)per * (size_t)fdnn_ops_max_threads());
        if (!m) {
            *alloc_failed = 1;
            return 1;
        }
        /* runs of whole planes where there are enough of them for 8 per thread, else shorter: taken as they come
         * (a thread slowed by another job takes fewer), which changes nothing in the results */
        const int64_t plane = p.in[0] * p.in[1], want = tasks / (8 * (int64_t)fdnn_ops_max_threads());
        const int64_t run = want >= plane ? plane : want > 1 ? want : 1, runs = (tasks + run - 1) / run;
#pragma omp parallel for schedule(dynamic, 1) if (tasks * p.in[2] * p.win_sz > 16384)
        for (int64_t j = 0; j < runs; j++)
            bwd_overlap_rows(&p, x, dy, dx, j * run, j + 1 < runs ? (j + 1) * run : tasks, a, b,
                             ov_carve(&p, rd * rh, m + (size_t)fdnn_ops_thread() * (size_t)per), rd, rh);
        free(m);
        return 1;
    }
    if (direct_only) return 0;
    /* blocks of 16 channels keep the per-thread gradient of a 56 x 56 image in L2 */
    p.cb = chan_in ? 16 : 1;
    const int64_t in_sz = p.in[0] * p.in[1] * p.in[2], tasks = p.n * ((p.c + p.cb - 1) / p.cb);
    double *g = malloc(sizeof(double) * (size_t)(in_sz * p.cb) * (size_t)fdnn_ops_max_threads()); /* a gradient block per thread */
    if (!g) {
        *alloc_failed = 1;
        return 1;
    }
#pragma omp parallel for schedule(static) if (tasks * in_sz > 16384)
    for (int64_t k = 0; k < tasks; k++) {
        bwd_task(&p, x, dy, dx, g + (size_t)fdnn_ops_thread() * (size_t)(in_sz * p.cb), k, a, b);
    }
    free(g);
    return 1;
}
