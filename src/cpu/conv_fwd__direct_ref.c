/* Forward convolution, direct loops: accepts every valid problem (2-D/3-D, any stride,
 * padding, dilation, groups, both modes, strided NCHW/NHWC/NCHW_VECT_C tensors, KCRS/KRSC
 * filters, every dtype configuration). Accumulates in double for DOUBLE, int64 for the INT8
 * family (exact INT32 semantics without overflow), float otherwise. Reported as IMPLICIT_GEMM. */
#include "conv_cpu.h"

static int applicable(const fdnn_conv_problem *p, char *why, size_t n)
{
    (void)p; (void)why; (void)n;
    return 1;
}

static size_t workspace(const fdnn_conv_problem *p)
{
    (void)p;
    return 0;
}

#define FWD_KERNEL(ACC)                                                                                               \
    _Pragma("omp parallel for collapse(2) schedule(dynamic)")                                                         \
    for (int n = 0; n < p->n; n++)                                                                                    \
        for (int k = 0; k < p->k; k++) {                                                                              \
            int g = k / kg, c0 = g * cg;                                                                              \
            for (int od = 0; od < p->out[0]; od++)                                                                    \
                for (int oh = 0; oh < p->out[1]; oh++)                                                                \
                    for (int ow = 0; ow < p->out[2]; ow++) {                                                          \
                        ACC acc = 0;                                                                                  \
                        for (int c = 0; c < cg; c++)                                                                  \
                            for (int t = 0; t < T; t++) {                                                             \
                                int id = od * p->stride[0] - p->pad[0] + (cc ? t : T - 1 - t) * p->dil[0];            \
                                if (id < 0 || id >= p->in[0]) continue;                                               \
                                for (int r = 0; r < R; r++) {                                                         \
                                    int ih = oh * p->stride[1] - p->pad[1] + (cc ? r : R - 1 - r) * p->dil[1];        \
                                    if (ih < 0 || ih >= p->in[1]) continue;                                           \
                                    for (int s = 0; s < S; s++) {                                                     \
                                        int iw = ow * p->stride[2] - p->pad[2] + (cc ? s : S - 1 - s) * p->dil[2];    \
                                        if (iw < 0 || iw >= p->in[2]) continue;                                       \
                                        ACC xv = (ACC)fdnn_load(a->x, p->xtype, fdnn_conv_off(p->xs, p->x_vect, n, c0 + c, id, ih, iw)); \
                                        ACC wv = (ACC)fdnn_load(a->w, p->wtype, fdnn_conv_off(p->ws, p->w_vect, k, c, t, r, s)); \
                                        acc += xv * wv;                                                               \
                                    }                                                                                 \
                                }                                                                                     \
                            }                                                                                         \
                        int64_t yo = fdnn_conv_off(p->ys, p->y_vect, n, k, od, oh, ow);                               \
                        fdnn_cpu_conv_blend(a, p->ytype, yo, (double)acc);                                            \
                    }                                                                                                 \
        }

static cudnnStatus_t run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    (void)h;
    int cg = p->c / p->g, kg = p->k / p->g, T = p->flt[0], R = p->flt[1], S = p->flt[2], cc = p->cross_correlation;
    if (p->xtype == CUDNN_DATA_DOUBLE) {
        FWD_KERNEL(double)
    } else if (p->compute_type == CUDNN_DATA_INT32) {
        FWD_KERNEL(int64_t)
    } else {
        FWD_KERNEL(float)
    }
    return CUDNN_STATUS_SUCCESS;
}

const fdnn_conv_impl fdnn_conv_fwd__direct_ref = {
    "conv_fwd__direct_ref", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 1, CUDNN_FMA_MATH, applicable, workspace, run,
};
