/* NCHW depthwise convolution (groups == C == K), FLOAT, 2-D, stride 1 (or 2): vectors along each
 * channel's W (conv_depthwise_nchw_avx512.c, conv_depthwise_nchw_avx2.c), driven by
 * conv_depthwise_nchw.c. */
#ifndef FDNN_CPU_CONV_DEPTHWISE_NCHW_H
#define FDNN_CPU_CONV_DEPTHWISE_NCHW_H
#include <stdint.h>

#define FDNN_DWC_MAXR 7 /* filter rows and columns at most (the tap sums of the weight gradient are 49 vectors) */

/* y[n,c,oh,ow] = sum_{r,s} wt[c][r][s] * x[n,c,oh*sh - ph + r*dh, ow*sw - pw + s*dw] + beta * y (wt holds alpha
 * and the taps in the order they are applied: flipped for CUDNN_CONVOLUTION and for backward data);
 * x: ih x iw, rows xh apart, columns contiguous; y: p x q, rows yh apart, columns contiguous */
typedef struct fdnn_dwc_fwd {
    int n, c, ih, iw, p, q, r, s, ph, pw, dh, dw;
    int sh, sw; /* strides: 1 x 1, or column stride 2 with row stride 1 or 2 */
    /* up: backward data of a column-stride-2 layer instead: y (dx, p x q) [oh, ow] = sum_{r,s}
     * wt[c][r][s] * x (dy, ih x iw) [(oh + ph - r*dh) / sh, (ow + pw - s*dw) / 2] over the taps
     * where the divisions are exact and land inside x (wt: the taps as the forward applies them,
     * times alpha) */
    int up;
    const float *x;
    int64_t xn, xc, xh;
    float *y;
    int64_t yn, yc, yh;
    const float *wt;
    float beta;
} fdnn_dwc_fwd;
/* output rows [oh0, oh1) of image n, channel c (AVX2: the same, 8 columns a vector) */
void fdnn_avx512_dwc_rows(const fdnn_dwc_fwd *a, int n, int c, int oh0, int oh1);
void fdnn_avx2_dwc_rows(const fdnn_dwc_fwd *a, int n, int c, int oh0, int oh1);

/* sum[c][r][s] = sum_{n,oh,ow} dy[n,c,oh,ow] * x[n,c,oh*sh - ph + r*dh, ow*sw - pw + s*dw], each
 * channel by one thread in a fixed order (images, 16- or 8-column strips, rows, then the lanes) */
typedef struct fdnn_dwc_wgrad {
    int n, c, ih, iw, p, q, r, s, ph, pw, dh, dw;
    int sh, sw; /* as in fdnn_dwc_fwd */
    const float *x;
    int64_t xn, xc, xh;
    const float *dy;
    int64_t yn, yc, yh;
    float *sum;
} fdnn_dwc_wgrad;
/* the R*S sums of channel c into sum */
void fdnn_avx512_dwc_wg(const fdnn_dwc_wgrad *a, int c, float *sum);
void fdnn_avx2_dwc_wg(const fdnn_dwc_wgrad *a, int c, float *sum);
#endif
