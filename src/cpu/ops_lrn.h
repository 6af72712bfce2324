/* Windowed normalisation kernels shared by LRN (window over channels) and divisive
 * normalisation (window over the spatial dims), on packed double arrays viewed as
 * [outer][a0][a1][a2][inner] with a centred window w[i] along axis a_i:
 * lookBehind = (w-1)/2, lookAhead = w-1-lookBehind (out-of-range terms are zero).
 *   s = k + alpha/wsize * sum_window u^2,  y = u * s^-beta  (wsize = w0*w1*w2)
 * and its exact gradient with respect to u. */
#ifndef FDNN_CPU_OPS_LRN_H
#define FDNN_CPU_OPS_LRN_H
#include <stdint.h>

typedef struct {
    int64_t outer, inner;
    int ax[3], win[3];
    double alpha, beta, k;
} fdnn_norm_geom;

/* y = u * s^-beta (y may alias nothing). Returns 0, or -1 when out of memory. */
int fdnn_norm_fwd(const fdnn_norm_geom *g, const double *u, double *y);
/* du = d(sum dy*y)/du. Returns 0, or -1 when out of memory. */
int fdnn_norm_bwd(const fdnn_norm_geom *g, const double *u, const double *dy, double *du);
#endif
