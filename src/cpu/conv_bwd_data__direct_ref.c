/* Backward-data convolution, direct loops (gather per dx element, so deterministic): every
 * valid problem. Reported as BWD_DATA_ALGO_0 (cuDNN's ALGO_0 is documented
 * non-deterministic; ours is deterministic and says so). */
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

/* o = i*stride - pad + tap*dil  =>  i = (o + pad - tap*dil) / stride when divisible */
#define BWD_DATA_KERNEL(ACC)                                                                                          \
    _Pragma("omp parallel for collapse(2) schedule(dynamic)")                                                         \
    for (int n = 0; n < p->n; n++)                                                                                    \
        for (int c = 0; c < p->c; c++) {                                                                              \
            int g = c / cg, cl = c % cg;                                                                              \
            for (int id = 0; id < p->in[0]; id++)                                                                     \
                for (int ih = 0; ih < p->in[1]; ih++)                                                                 \
                    for (int iw = 0; iw < p->in[2]; iw++) {                                                           \
                        ACC acc = 0;                                                                                  \
                        for (int k = g * kg; k < (g + 1) * kg; k++)                                                   \
                            for (int t = 0; t < T; t++) {                                                             \
                                int nd = id + p->pad[0] - (cc ? t : T - 1 - t) * p->dil[0];                           \
                                if (nd < 0 || nd % p->stride[0]) continue;                                            \
                                int od = nd / p->stride[0];                                                           \
                                if (od >= p->out[0]) continue;                                                        \
                                for (int r = 0; r < R; r++) {                                                         \
                                    int nh = ih + p->pad[1] - (cc ? r : R - 1 - r) * p->dil[1];                       \
                                    if (nh < 0 || nh % p->stride[1]) continue;                                        \
                                    int oh = nh / p->stride[1];                                                       \
                                    if (oh >= p->out[1]) continue;                                                    \
                                    for (int s = 0; s < S; s++) {                                                     \
                                        int nw = iw + p->pad[2] - (cc ? s : S - 1 - s) * p->dil[2];                   \
                                        if (nw < 0 || nw % p->stride[2]) continue;                                    \
                                        int ow = nw / p->stride[2];                                                   \
                                        if (ow >= p->out[2]) continue;                                                \
                                        ACC yv = (ACC)fdnn_load(a->y, p->ytype, fdnn_conv_off(p->ys, p->y_vect, n, k, od, oh, ow)); \
                                        ACC wv = (ACC)fdnn_load(a->w, p->wtype, fdnn_conv_off(p->ws, p->w_vect, k, cl, t, r, s)); \
                                        acc += yv * wv;                                                               \
                                    }                                                                                 \
                                }                                                                                     \
                            }                                                                                         \
                        int64_t xo = fdnn_conv_off(p->xs, p->x_vect, n, c, id, ih, iw);                               \
                        fdnn_cpu_conv_blend(a, p->xtype, xo, (double)acc);                                            \
                    }                                                                                                 \
        }

static cudnnStatus_t run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    (void)h;
    int cg = p->c / p->g, kg = p->k / p->g, T = p->flt[0], R = p->flt[1], S = p->flt[2], cc = p->cross_correlation;
    if (p->xtype == CUDNN_DATA_DOUBLE) {
        BWD_DATA_KERNEL(double)
    } else {
        BWD_DATA_KERNEL(float)
    }
    return CUDNN_STATUS_SUCCESS;
}

const fdnn_conv_impl fdnn_conv_bwd_data__direct_ref = {
    "conv_bwd_data__direct_ref", CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, 1, CUDNN_FMA_MATH, applicable, workspace, run,
};
