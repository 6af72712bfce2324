/* The 2-D geometry of a convolution problem (2-D, or 3-D with D = T = 1) copied into a kernel
 * parameter struct that names it as the implicit-GEMM kernels do: n, h, w_, c, k (input image,
 * channels), r, s (filter), p, q (output), sh, sw (strides), ph, pw (padding), dh, dw (dilations)
 * and flip (1 for CUDNN_CONVOLUTION). */
#pragma once
#include "conv_cuda.h"

template <typename G> static inline void fdnn_conv_geom2d(G &P, const fdnn_conv_problem *p)
{
    P.n = p->n;
    P.h = p->in[1];
    P.w_ = p->in[2];
    P.c = p->c;
    P.k = p->k;
    P.r = p->flt[1];
    P.s = p->flt[2];
    P.p = p->out[1];
    P.q = p->out[2];
    P.sh = p->stride[1];
    P.sw = p->stride[2];
    P.ph = p->pad[1];
    P.pw = p->pad[2];
    P.dh = p->dil[1];
    P.dw = p->dil[2];
    P.flip = !p->cross_correlation;
}
