/* CPU-only convolution extras: the fused bias + activation epilogue of
 * cudnnConvolutionBiasActivationForward, the bias gradient, and cudnnIm2Col. */
#include <stdlib.h>
#include <string.h>
#include "conv_cpu.h"
#include "../core/activation_math.h"

cudnnStatus_t fdnn_cpu_conv_bias_act(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_impl *impl, const fdnn_conv_args *a,
                                     const fdnn_bias_act_args *e)
{
    /* accumulator: the same problem with a packed FLOAT (DOUBLE for DOUBLE) output */
    fdnn_conv_problem q = *p;
    q.ytype = p->xtype == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    q.y_vect = 1;
    int64_t P = (int64_t)p->out[0] * p->out[1] * p->out[2];
    q.ys[4] = 1;
    q.ys[3] = p->out[2];
    q.ys[2] = (int64_t)p->out[1] * p->out[2];
    q.ys[1] = P;
    q.ys[0] = P * p->k;
    if (p->compute_type == CUDNN_DATA_INT32 || q.ytype != p->ytype || p->y_vect > 1) {
        /* the implementation must accept the new output type */
        char why[128];
        if (!impl->applicable(&q, why, sizeof why)) impl = &fdnn_conv_fwd__direct_ref;
    }
    size_t esz = fdnn_dtype_size(q.ytype);
    void *acc = malloc((size_t)(P * p->k * p->n) * esz);
    if (!acc) return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory for the %lld-element accumulator", (long long)(P * p->k * p->n));
    fdnn_conv_args b = *a;
    b.out = acc;
    b.alpha = e->alpha1;
    b.beta = 0;
    cudnnStatus_t st = impl->run(h, &q, &b);
    if (st != CUDNN_STATUS_SUCCESS) {
        free(acc);
        return st;
    }
    int prop = e->propagate_nan;
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < p->n; n++)
        for (int k = 0; k < p->k; k++) {
            double bk = fdnn_load(e->bias, e->btype, (int64_t)k * e->bias_stride);
            for (int od = 0; od < p->out[0]; od++)
                for (int oh = 0; oh < p->out[1]; oh++)
                    for (int ow = 0; ow < p->out[2]; ow++) {
                        int64_t ai = (((int64_t)n * p->k + k) * p->out[0] + od) * p->out[1] * p->out[2] + (int64_t)oh * p->out[2] + ow;
                        double v = fdnn_load(acc, q.ytype, ai) + bk;
                        if (e->alpha2 != 0)
                            v += e->alpha2 * fdnn_load(e->z, p->ytype, fdnn_conv_off(e->zs, p->y_vect, n, k, od, oh, ow));
                        v = fdnn_act_fwd(e->mode, e->coef, 1.0, prop, v);
                        fdnn_store(a->out, p->ytype, fdnn_conv_off(p->ys, p->y_vect, n, k, od, oh, ow), v);
                    }
        }
    free(acc);
    return CUDNN_STATUS_SUCCESS;
}

void fdnn_cpu_conv_bwd_bias(cudnnDataType_t t, int n, int k, int sp, const int64_t *s, const int *d, const void *dy, int64_t db_stride,
                            void *db, double alpha, double beta)
{
    (void)sp;
#pragma omp parallel for schedule(static)
    for (int kk = 0; kk < k; kk++) {
        double acc = 0;
        for (int i = 0; i < n; i++)
            for (int a = 0; a < d[0]; a++)
                for (int b = 0; b < d[1]; b++)
                    for (int c = 0; c < d[2]; c++) acc += fdnn_load(dy, t, i * s[0] + kk * s[1] + a * s[2] + b * s[3] + c * s[4]);
        double v = alpha * acc;
        if (beta != 0) v += beta * fdnn_load(db, t, kk * db_stride);
        fdnn_store(db, t, kk * db_stride, v);
    }
}

void fdnn_cpu_im2col_api(const fdnn_conv_problem *p, const void *x, void *col)
{
    int T = p->flt[0], R = p->flt[1], S = p->flt[2], cc = p->cross_correlation;
    int64_t P = (int64_t)p->out[0] * p->out[1] * p->out[2], rows = (int64_t)p->c * T * R * S;
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < p->n; n++)
        for (int64_t row = 0; row < rows; row++) {
            int s = (int)(row % S), r = (int)((row / S) % R), t = (int)((row / (S * R)) % T), c = (int)(row / ((int64_t)S * R * T));
            int tt = cc ? t : T - 1 - t, rr = cc ? r : R - 1 - r, ss = cc ? s : S - 1 - s;
            for (int od = 0; od < p->out[0]; od++)
                for (int oh = 0; oh < p->out[1]; oh++)
                    for (int ow = 0; ow < p->out[2]; ow++) {
                        int id = od * p->stride[0] - p->pad[0] + tt * p->dil[0];
                        int ih = oh * p->stride[1] - p->pad[1] + rr * p->dil[1];
                        int iw = ow * p->stride[2] - p->pad[2] + ss * p->dil[2];
                        double v = 0;
                        if (id >= 0 && id < p->in[0] && ih >= 0 && ih < p->in[1] && iw >= 0 && iw < p->in[2])
                            v = fdnn_load(x, p->xtype, fdnn_conv_off(p->xs, p->x_vect, n, c, id, ih, iw));
                        int64_t o = ((int64_t)n * rows + row) * P + ((int64_t)od * p->out[1] + oh) * p->out[2] + ow;
                        fdnn_store(col, p->xtype, o, v);
                    }
        }
}
