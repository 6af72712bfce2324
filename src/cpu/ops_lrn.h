/* Windowed normalisation kernels shared by LRN (window over channels) and divisive
 * normalisation (window over the spatial dims), on packed double arrays viewed as
 * [outer][a0][a1][a2][inner] with a centred window W(i) of w[i] positions along axis a_i:
 * lookBehind = (w-1)/2, lookAhead = w-1-lookBehind (out-of-range positions are skipped).
 * With c = alpha/wsize (wsize = w0*w1*w2, not the clipped count) and m the optional means
 * (NULL = 0; NVIDIA cuDNN's divisive normalisation, measured on an H200 with cuDNN 9.19):
 *   D_i = k + c * sum_{j in W(i)} (x_j - m_i)^2,   y_i = x_i * D_i^-beta
 * (the numerator is x itself; the centre element's mean m_i is subtracted for every j).
 * With m NULL this is cuDNN's LRN / divisive normalisation without means. */
#ifndef FDNN_CPU_OPS_LRN_H
#define FDNN_CPU_OPS_LRN_H
#include <stdint.h>

typedef struct {
    int64_t outer, inner;
    int ax[3], win[3];
    double alpha, beta, k;
} fdnn_norm_geom;

/* y = x * D^-beta; m may be NULL. Returns 0, or -1 when out of memory. */
int fdnn_norm_fwd(const fdnn_norm_geom *g, const double *x, const double *m, double *y);
/* dx = d(sum dy*y)/dx and, when dm is not NULL, dm = d(sum dy*y)/dm (m NULL is taken as 0).
 * Returns 0, or -1 when out of memory. */
int fdnn_norm_bwd(const fdnn_norm_geom *g, const double *x, const double *m, const double *dy, double *dx, double *dm);
#endif
