/* Independent double-precision reference for convolutions (forward, backward data, backward
 * filter, bias gradient) over arbitrarily strided tensors. Includes nothing from src/ or the
 * cuDNN headers. Every tensor is addressed through a ref_conv_layout; all spatial shapes
 * are 3-D (D, H, W) with D = 1 for 2-D problems. */
#ifndef FDNN_TEST_CONV_REF_H
#define FDNN_TEST_CONV_REF_H
#include <stdint.h>

/* Scalar offset of element (a, c, d, h, w): with vect == 1 the plain dot product with s;
 * with vect > 1 (NCHW_VECT_C) the strides count vectors of `vect` channels and the vector is
 * innermost: (a*s0 + (c/vect)*s1 + d*s2 + h*s3 + w*s4)*vect + c%vect. */
typedef struct ref_conv_layout {
    int64_t s[5];
    int vect;
} ref_conv_layout;
int64_t ref_conv_off(const ref_conv_layout *l, int a, int c, int d, int h, int w);

typedef struct ref_conv {
    int n, c, k, g;           /* batch, input channels, output channels, groups */
    int in[3], out[3], flt[3];
    int pad[3], stride[3], dil[3];
    int flip;                 /* 1: true convolution (filter flipped), 0: cross-correlation */
} ref_conv;

/* out = 1 + (in + 2 pad - ((f - 1) dil + 1)) / stride, or -1 if the filter does not fit */
int ref_conv_out_dim(int in, int pad, int f, int dil, int stride);

/* y = alpha * conv(x, w) + beta * y (beta == 0: y not read). w is indexed (k, c_in_group, t, r, s). */
void ref_conv_fwd(const ref_conv *p, const double *x, const ref_conv_layout *xl, const double *w, const ref_conv_layout *wl, double *y,
                  const ref_conv_layout *yl, double alpha, double beta);
/* dx = alpha * conv^T(dy, w) + beta * dx */
void ref_conv_bwd_data(const ref_conv *p, double *dx, const ref_conv_layout *xl, const double *w, const ref_conv_layout *wl,
                       const double *dy, const ref_conv_layout *yl, double alpha, double beta);
/* dw = alpha * sum x (*) dy + beta * dw */
void ref_conv_bwd_filter(const ref_conv *p, const double *x, const ref_conv_layout *xl, double *dw, const ref_conv_layout *wl,
                         const double *dy, const ref_conv_layout *yl, double alpha, double beta);
/* db[k*db_stride] = alpha * sum over n, d, h, w of dy + beta * db */
void ref_conv_bwd_bias(int n, int k, const int *sp, const double *dy, const ref_conv_layout *yl, double *db, int64_t db_stride,
                       double alpha, double beta);
#endif
