/* NCHW depthwise convolution (groups == C == K), FLOAT, 2-D, stride 1: vectors along each
 * channel's W (conv_depthwise_nchw_avx512.c), driven by conv_depthwise_nchw.c. */
#ifndef FDNN_CPU_CONV_DEPTHWISE_NCHW_H
#define FDNN_CPU_CONV_DEPTHWISE_NCHW_H
#include <stdint.h>

#define FDNN_DWC_MAXR 7 /* filter rows and columns at most (the tap sums of the weight gradient are 49 vectors) */

/* y[n,c,oh,ow] = sum_{r,s} wt[c][r][s] * x[n,c,oh - ph + r*dh, ow - pw + s*dw] + beta * y (wt holds alpha
 * and the taps in the order they are applied: flipped for CUDNN_CONVOLUTION and for backward data);
 * x: ih x iw, rows xh apart, columns contiguous; y: p x q, rows yh apart, columns contiguous */
typedef struct fdnn_dwc_fwd {
    int n, c, ih, iw, p, q, r, s, ph, pw, dh, dw;
    const float *x;
    int64_t xn, xc, xh;
    float *y;
    int64_t yn, yc, yh;
    const float *wt;
    float beta;
} fdnn_dwc_fwd;
void fdnn_avx512_dwc_fwd(const fdnn_dwc_fwd *a);

/* sum[c][r][s] = sum_{n,oh,ow} dy[n,c,oh,ow] * x[n,c,oh - ph + r*dh, ow - pw + s*dw], each
 * channel by one thread in a fixed order (images, rows, 16-column vectors, then the 16 lanes) */
typedef struct fdnn_dwc_wgrad {
    int n, c, ih, iw, p, q, r, s, ph, pw, dh, dw;
    const float *x;
    int64_t xn, xc, xh;
    const float *dy;
    int64_t yn, yc, yh;
    float *sum;
} fdnn_dwc_wgrad;
void fdnn_avx512_dwc_wgrad(const fdnn_dwc_wgrad *a);
#endif
