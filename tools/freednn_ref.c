/* Naive double-precision convolution reference for the freednn tools (see freednn_ref.h). */
#include "freednn_ref.h"

int fdt_out_h(const fdt_conv *p) { return (p->h + 2 * p->ph - ((p->r - 1) * p->dh + 1)) / p->sh + 1; }
int fdt_out_w(const fdt_conv *p) { return (p->w + 2 * p->pw - ((p->s - 1) * p->dw + 1)) / p->sw + 1; }

#define XI(i0, i1, i2, i3) ((((size_t)(i0) * p->c + (i1)) * p->h + (i2)) * p->w + (i3))
#define WI(i0, i1, i2, i3) ((((size_t)(i0) * cg + (i1)) * p->r + (i2)) * p->s + (i3))
#define YI(i0, i1, i2, i3) ((((size_t)(i0) * p->k + (i1)) * P + (i2)) * Q + (i3))

/* The whole output of op (0 fwd, 1 bwd data, 2 bwd filter), one element at a time through
 * fdt_ref_point (below): one piece of code computes both the full and the sampled reference. */
static void conv_all(const fdt_conv *p, int op, const double *a, const double *b, double *out)
{
    int P = fdt_out_h(p), Q = fdt_out_w(p), cg = p->c / p->g;
    size_t on = op == 0 ? (size_t)p->n * p->k * P * Q
              : op == 1 ? (size_t)p->n * p->c * p->h * p->w : (size_t)p->k * cg * p->r * p->s;
    for (size_t i = 0; i < on; i++) out[i] = fdt_ref_point(p, op, a, b, i);
}

void fdt_ref_fwd(const fdt_conv *p, const double *x, const double *w, double *y) { conv_all(p, 0, x, w, y); }
void fdt_ref_bwd_data(const fdt_conv *p, const double *dy, const double *w, double *dx) { conv_all(p, 1, dy, w, dx); }
void fdt_ref_bwd_filter(const fdt_conv *p, const double *x, const double *dy, double *dw) { conv_all(p, 2, x, dy, dw); }

/* One output element, index in the NCHW / KCRS order of fdt_ref_* (the same sums). */
double fdt_ref_point(const fdt_conv *p, int op, const double *a, const double *b, size_t idx)
{
    int P = fdt_out_h(p), Q = fdt_out_w(p);
    int cg = p->c / p->g, kg = p->k / p->g;
    double acc = 0;
    if (op == 0) {            /* y[n,k,oy,ox]: a = x, b = w */
        int ox = (int)(idx % Q), oy = (int)(idx / Q % P), k = (int)(idx / ((size_t)P * Q) % p->k);
        int n = (int)(idx / ((size_t)P * Q * p->k)), g = k / kg;
        for (int c = 0; c < cg; c++)
            for (int r = 0; r < p->r; r++) {
                int iy = oy * p->sh - p->ph + r * p->dh;
                if (iy < 0 || iy >= p->h) continue;
                for (int s = 0; s < p->s; s++) {
                    int ix = ox * p->sw - p->pw + s * p->dw;
                    if (ix >= 0 && ix < p->w) acc += a[XI(n, g * cg + c, iy, ix)] * b[WI(k, c, r, s)];
                }
            }
    } else if (op == 1) {     /* dx[n,c,iy,ix]: a = dy, b = w */
        int ix = (int)(idx % p->w), iy = (int)(idx / p->w % p->h), c = (int)(idx / ((size_t)p->h * p->w) % p->c);
        int n = (int)(idx / ((size_t)p->h * p->w * p->c)), g = c / cg;
        for (int kk = 0; kk < kg; kk++)
            for (int r = 0; r < p->r; r++) {
                int ty = iy + p->ph - r * p->dh;
                if (ty < 0 || ty % p->sh || ty / p->sh >= P) continue;
                for (int s = 0; s < p->s; s++) {
                    int tx = ix + p->pw - s * p->dw;
                    if (tx < 0 || tx % p->sw || tx / p->sw >= Q) continue;
                    int k = g * kg + kk;
                    acc += a[YI(n, k, ty / p->sh, tx / p->sw)] * b[WI(k, c - g * cg, r, s)];
                }
            }
    } else {                  /* dw[k,c,r,s]: a = x, b = dy */
        int s = (int)(idx % p->s), r = (int)(idx / p->s % p->r), c = (int)(idx / ((size_t)p->r * p->s) % cg);
        int k = (int)(idx / ((size_t)p->r * p->s * cg)), g = k / kg;
        for (int n = 0; n < p->n; n++)
            for (int oy = 0; oy < P; oy++) {
                int iy = oy * p->sh - p->ph + r * p->dh;
                if (iy < 0 || iy >= p->h) continue;
                for (int ox = 0; ox < Q; ox++) {
                    int ix = ox * p->sw - p->pw + s * p->dw;
                    if (ix >= 0 && ix < p->w) acc += a[XI(n, g * cg + c, iy, ix)] * b[YI(n, k, oy, ox)];
                }
            }
    }
    return acc;
}
