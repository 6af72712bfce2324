/* Windowed normalisation kernels (see ops_lrn.h). */
#include <math.h>
#include <stdlib.h>
#include "ops_lrn.h"

static int64_t total(const fdnn_norm_geom *g) { return g->outer * g->ax[0] * g->ax[1] * g->ax[2] * g->inner; }

/* out = window sum of v; reversed = 1 sums over the transposed window (for gradients). */
static void win_sum(const fdnn_norm_geom *g, const double *v, double *out, int reversed)
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
        double s = 0;
        for (int a = i0 + lo[0]; a <= i0 + hi[0]; a++) {
            if (a < 0 || a >= A0) continue;
            for (int b = i1 + lo[1]; b <= i1 + hi[1]; b++) {
                if (b < 0 || b >= A1) continue;
                for (int c = i2 + lo[2]; c <= i2 + hi[2]; c++) {
                    if (c < 0 || c >= A2) continue;
                    s += v[(((base + a) * A1 + b) * A2 + c) * in + q];
                }
            }
        }
        out[p] = s;
    }
}

int fdnn_norm_fwd(const fdnn_norm_geom *g, const double *u, double *y)
{
    int64_t n = total(g);
    double *sq = malloc(sizeof(double) * (size_t)n), *s = malloc(sizeof(double) * (size_t)n);
    if (!sq || !s) { free(sq); free(s); return -1; }
    for (int64_t i = 0; i < n; i++) sq[i] = u[i] * u[i];
    win_sum(g, sq, s, 0);
    const double sc = g->alpha / ((double)g->win[0] * g->win[1] * g->win[2]);
    for (int64_t i = 0; i < n; i++) y[i] = u[i] * pow(g->k + sc * s[i], -g->beta);
    free(sq);
    free(s);
    return 0;
}

int fdnn_norm_bwd(const fdnn_norm_geom *g, const double *u, const double *dy, double *du)
{
    int64_t n = total(g);
    double *sq = malloc(sizeof(double) * (size_t)n), *s = malloc(sizeof(double) * (size_t)n), *t = malloc(sizeof(double) * (size_t)n);
    if (!sq || !s || !t) { free(sq); free(s); free(t); return -1; }
    for (int64_t i = 0; i < n; i++) sq[i] = u[i] * u[i];
    win_sum(g, sq, s, 0);
    const double sc = g->alpha / ((double)g->win[0] * g->win[1] * g->win[2]);
    for (int64_t i = 0; i < n; i++) {
        s[i] = g->k + sc * s[i];
        t[i] = dy[i] * u[i] * pow(s[i], -g->beta - 1.0);
    }
    win_sum(g, t, sq, 1); /* sq := sum over outputs whose window holds i */
    for (int64_t i = 0; i < n; i++) du[i] = dy[i] * pow(s[i], -g->beta) - 2.0 * g->beta * sc * u[i] * sq[i];
    free(sq);
    free(s);
    free(t);
    return 0;
}
