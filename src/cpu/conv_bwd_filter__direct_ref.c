/* Backward-filter convolution, direct loops (one thread per filter element, fixed summation
 * order, so deterministic): every valid problem. Reported as BWD_FILTER_ALGO_0 (cuDNN's is
 * documented non-deterministic; ours is deterministic and says so). */
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

#define BWD_FILTER_KERNEL(ACC)                                                                                        \
    _Pragma("omp parallel for collapse(2) schedule(dynamic)")                                                         \
    for (int k = 0; k < p->k; k++)                                                                                    \
        for (int cl = 0; cl < cg; cl++) {                                                                             \
            int c = (k / kg) * cg + cl;                                                                               \
            for (int t = 0; t < T; t++)                                                                               \
                for (int r = 0; r < R; r++)                                                                           \
                    for (int s = 0; s < S; s++) {                                                                     \
                        int tt = cc ? t : T - 1 - t, rr = cc ? r : R - 1 - r, ss = cc ? s : S - 1 - s;                \
                        ACC acc = 0;                                                                                  \
                        for (int n = 0; n < p->n; n++)                                                                \
                            for (int od = 0; od < p->out[0]; od++) {                                                  \
                                int id = od * p->stride[0] - p->pad[0] + tt * p->dil[0];                              \
                                if (id < 0 || id >= p->in[0]) continue;                                               \
                                for (int oh = 0; oh < p->out[1]; oh++) {                                              \
                                    int ih = oh * p->stride[1] - p->pad[1] + rr * p->dil[1];                          \
                                    if (ih < 0 || ih >= p->in[1]) continue;                                           \
                                    for (int ow = 0; ow < p->out[2]; ow++) {                                          \
                                        int iw = ow * p->stride[2] - p->pad[2] + ss * p->dil[2];                      \
                                        if (iw < 0 || iw >= p->in[2]) continue;                                       \
                                        ACC xv = (ACC)fdnn_load(a->x, p->xtype, fdnn_conv_off(p->xs, p->x_vect, n, c, id, ih, iw)); \
                                        ACC yv = (ACC)fdnn_load(a->y, p->ytype, fdnn_conv_off(p->ys, p->y_vect, n, k, od, oh, ow)); \
                                        acc += xv * yv;                                                               \
                                    }                                                                                 \
                                }                                                                                     \
                            }                                                                                         \
                        int64_t wo = fdnn_conv_off(p->ws, p->w_vect, k, cl, t, r, s);                                 \
                        fdnn_cpu_conv_blend(a, p->wtype, wo, (double)acc);                                            \
                    }                                                                                                 \
        }

static cudnnStatus_t run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    (void)h;
    int cg = p->c / p->g, kg = p->k / p->g, T = p->flt[0], R = p->flt[1], S = p->flt[2], cc = p->cross_correlation;
    if (p->xtype == CUDNN_DATA_DOUBLE) {
        BWD_FILTER_KERNEL(double)
    } else {
        BWD_FILTER_KERNEL(float)
    }
    return CUDNN_STATUS_SUCCESS;
}

const fdnn_conv_impl fdnn_conv_bwd_filter__direct_ref = {
    "conv_bwd_filter__direct_ref", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, 1, CUDNN_FMA_MATH, applicable, workspace, run,
};
