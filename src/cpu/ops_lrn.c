/* Windowed normalisation kernels (see ops_lrn.h). */
#include <math.h>
#include <stdlib.h>
#include "ops_lrn.h"

static int64_t total(const fdnn_norm_geom *g) { return g->outer * g->ax[0] * g->ax[1] * g->ax[2] * g->inner; }

/* Window sums around every position p (m may be NULL = 0):
 *   reversed = 0: s2[p] = sum_{j in W(p)} (v_j - m_p)^2 and, when s1 is not NULL,
 *                 s1[p] = sum_{j in W(p)} (v_j - m_p);
 *   reversed = 1: s1[p] = sum_{i : p in W(i)} v_i (the transposed window; m and s2 unused). */
static void win_sums(const fdnn_norm_geom *g, const double *v, const double *m, double *s2, double *s1, int reversed)
{
    int64_t n = total(g);
    const int A0 = g->ax[0], A1 = g->ax[1], A2 = g->ax[2];
    const int64_t in = g->inner;
    int lo[3], hi[3];
    for (int i = 0; i < 3; i++) {
        int behind = (g->win[i] - 1) / 2, ahead = g->win[i] - 1 - behind;
        lo[i] = reversed ? -ahead : -behind;
        hi[i] = reversed ? behind : ahead;
    }
#pragma omp parallel for schedule(static) if (n > 16384)
    for (int64_t p = 0; p < n; p++) {
        int64_t r = p;
        int64_t q = r % in; r /= in;
        int i2 = (int)(r % A2); r /= A2;
        int i1 = (int)(r % A1); r /= A1;
        int i0 = (int)(r % A0); r /= A0;
        int64_t base = r * A0;
        const double mp = (m && !reversed) ? m[p] : 0.0;
        double a1 = 0, a2 = 0;
        for (int a = i0 + lo[0]; a <= i0 + hi[0]; a++) {
            if (a < 0 || a >= A0) continue;
            for (int b = i1 + lo[1]; b <= i1 + hi[1]; b++) {
                if (b < 0 || b >= A1) continue;
                for (int c = i2 + lo[2]; c <= i2 + hi[2]; c++) {
                    if (c < 0 || c >= A2) continue;
                    const double d = v[(((base + a) * A1 + b) * A2 + c) * in + q] - mp;
                    a1 += d;
                    a2 += d * d;
                }
            }
        }
        if (s1) s1[p] = a1;
        if (s2) s2[p] = a2;
    }
}

static double scale(const fdnn_norm_geom *g) { return g->alpha / ((double)g->win[0] * g->win[1] * g->win[2]); }

int fdnn_norm_fwd(const fdnn_norm_geom *g, const double *x, const double *m, double *y)
{
    int64_t n = total(g);
    double *s = malloc(sizeof(double) * (size_t)n);
    if (!s) return -1;
    win_sums(g, x, m, s, NULL, 0);
    const double sc = scale(g);
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * pow(g->k + sc * s[i], -g->beta);
    free(s);
    return 0;
}

/* With D_i = k + c*S_i and t_i = dy_i * x_i * D_i^(-beta-1):
 *   dx_p = dy_p * D_p^-beta - 2*beta*c * (x_p * sum_{i: p in W(i)} t_i - sum_{i: p in W(i)} t_i*m_i)
 *   dm_i = 2*beta*c * t_i * sum_{j in W(i)} (x_j - m_i) */
int fdnn_norm_bwd(const fdnn_norm_geom *g, const double *x, const double *m, const double *dy, double *dx, double *dm)
{
    int64_t n = total(g);
    const size_t bytes = sizeof(double) * (size_t)n;
    double *s = malloc(bytes), *s1 = dm ? malloc(bytes) : NULL, *t = malloc(bytes), *rt = malloc(bytes);
    double *tm = m ? malloc(bytes) : NULL, *rtm = m ? malloc(bytes) : NULL;
    if (!s || (dm && !s1) || !t || !rt || (m && (!tm || !rtm))) { free(s); free(s1); free(t); free(rt); free(tm); free(rtm); return -1; }
    win_sums(g, x, m, s, s1, 0);
    const double sc = scale(g);
    for (int64_t i = 0; i < n; i++) {
        s[i] = g->k + sc * s[i];
        t[i] = dy[i] * x[i] * pow(s[i], -g->beta - 1.0);
        if (m) tm[i] = t[i] * m[i];
    }
    win_sums(g, t, NULL, NULL, rt, 1);
    if (m) win_sums(g, tm, NULL, NULL, rtm, 1);
    const double f = 2.0 * g->beta * sc;
    for (int64_t i = 0; i < n; i++) dx[i] = dy[i] * pow(s[i], -g->beta) - (m ? f * (x[i] * rt[i] - rtm[i]) : f * x[i] * rt[i]);
    if (dm)
        for (int64_t i = 0; i < n; i++) dm[i] = f * t[i] * s1[i];
    free(s); free(s1); free(t); free(rt); free(tm); free(rtm);
    return 0;
}
