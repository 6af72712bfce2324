/* Naive double-precision convolution reference used by `freednn bench --verify` and
 * `freednn doctor`. Plain loops, NCHW / KCRS layouts in double, cross-correlation, groups,
 * stride, padding, dilation. Shares no code with the library. */
#ifndef FREEDNN_TOOLS_REF_H
#define FREEDNN_TOOLS_REF_H
#include <stddef.h>

typedef struct {
    int n, c, h, w;       /* input */
    int k, r, s;          /* filter: k output channels, r x s */
    int sh, sw, ph, pw, dh, dw, g;
} fdt_conv;

int fdt_out_h(const fdt_conv *p);
int fdt_out_w(const fdt_conv *p);
/* y[n,k,p,q] = sum x*w  (y is N,K,P,Q) */
void fdt_ref_fwd(const fdt_conv *p, const double *x, const double *w, double *y);
/* dx[n,c,h,w] = sum dy*w */
void fdt_ref_bwd_data(const fdt_conv *p, const double *dy, const double *w, double *dx);
/* dw[k,c/g,r,s] = sum dy*x */
void fdt_ref_bwd_filter(const fdt_conv *p, const double *x, const double *dy, double *dw);
/* One element of the output of fdt_ref_fwd (op 0: a = x, b = w), fdt_ref_bwd_data (op 1:
 * a = dy, b = w) or fdt_ref_bwd_filter (op 2: a = x, b = dy), idx in that output's order:
 * what `freednn bench --verify` checks on sampled points of problems too large for the
 * whole reference. */
double fdt_ref_point(const fdt_conv *p, int op, const double *a, const double *b, size_t idx);

#endif
