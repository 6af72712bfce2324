/* Naive double-precision convolution reference for the freednn tools (see freednn_ref.h). */
#include <string.h>
#include "freednn_ref.h"

int fdt_out_h(const fdt_conv *p) { return (p->h + 2 * p->ph - ((p->r - 1) * p->dh + 1)) / p->sh + 1; }
int fdt_out_w(const fdt_conv *p) { return (p->w + 2 * p->pw - ((p->s - 1) * p->dw + 1)) / p->sw + 1; }

#define XI(i0, i1, i2, i3) ((((size_t)(i0) * p->c + (i1)) * p->h + (i2)) * p->w + (i3))
#define WI(i0, i1, i2, i3) ((((size_t)(i0) * cg + (i1)) * p->r + (i2)) * p->s + (i3))
#define YI(i0, i1, i2, i3) ((((size_t)(i0) * p->k + (i1)) * P + (i2)) * Q + (i3))

/* Visit every (output, input, filter) triple that contributes; op selects the accumulation. */
static void conv_loops(const fdt_conv *p, int op, const double *a, const double *b, double *out)
{
    int P = fdt_out_h(p), Q = fdt_out_w(p);
    int cg = p->c / p->g, kg = p->k / p->g;
    size_t on = op == 0 ? (size_t)p->n * p->k * P * Q
              : op == 1 ? (size_t)p->n * p->c * p->h * p->w : (size_t)p->k * cg * p->r * p->s;
    memset(out, 0, on * sizeof(double));
    for (int n = 0; n < p->n; n++)
        for (int k = 0; k < p->k; k++) {
            int g = k / kg;
            for (int oy = 0; oy < P; oy++)
                for (int ox = 0; ox < Q; ox++)
                    for (int c = 0; c < cg; c++)
                        for (int r = 0; r < p->r; r++) {
                            int iy = oy * p->sh - p->ph + r * p->dh;
                            if (iy < 0 || iy >= p->h) continue;
                            for (int s = 0; s < p->s; s++) {
                                int ix = ox * p->sw - p->pw + s * p->dw;
                                if (ix < 0 || ix >= p->w) continue;
                                size_t xi = XI(n, g * cg + c, iy, ix), wi = WI(k, c, r, s), yi = YI(n, k, oy, ox);
                                if (op == 0) out[yi] += a[xi] * b[wi];        /* a=x b=w */
                                else if (op == 1) out[xi] += a[yi] * b[wi];   /* a=dy b=w */
                                else out[wi] += a[xi] * b[yi];                /* a=x b=dy */
                            }
                        }
        }
}

void fdt_ref_fwd(const fdt_conv *p, const double *x, const double *w, double *y) { conv_loops(p, 0, x, w, y); }
void fdt_ref_bwd_data(const fdt_conv *p, const double *dy, const double *w, double *dx) { conv_loops(p, 1, dy, w, dx); }
void fdt_ref_bwd_filter(const fdt_conv *p, const double *x, const double *dy, double *dw) { conv_loops(p, 2, x, dy, dw); }
