/* Convolution reference (see conv_ref.h): the textbook definition, one output element at a
 * time, accumulating in double. Written independently of src/cpu. */
#include "conv_ref.h"

int64_t ref_conv_off(const ref_conv_layout *l, int a, int c, int d, int h, int w)
{
    int v = l->vect > 1 ? l->vect : 1;
    int64_t o = a * l->s[0] + (int64_t)(c / v) * l->s[1] + d * l->s[2] + h * l->s[3] + w * l->s[4];
    return o * v + c % v;
}

int ref_conv_out_dim(int in, int pad, int f, int dil, int stride)
{
    int span = in + 2 * pad - ((f - 1) * dil + 1);
    if (span < 0) return -1;
    return 1 + span / stride;
}

/* input coordinate touched by output coordinate o and filter tap f (stored index) */
static int in_coord(const ref_conv *p, int axis, int o, int f)
{
    int tap = p->flip ? p->flt[axis] - 1 - f : f;
    return o * p->stride[axis] - p->pad[axis] + tap * p->dil[axis];
}

static int inside(const ref_conv *p, int d, int h, int w)
{
    return d >= 0 && d < p->in[0] && h >= 0 && h < p->in[1] && w >= 0 && w < p->in[2];
}

void ref_conv_fwd(const ref_conv *p, const double *x, const ref_conv_layout *xl, const double *w, const ref_conv_layout *wl, double *y,
                  const ref_conv_layout *yl, double alpha, double beta)
{
    int cpg = p->c / p->g, kpg = p->k / p->g;
    for (int n = 0; n < p->n; n++)
        for (int k = 0; k < p->k; k++)
            for (int od = 0; od < p->out[0]; od++)
                for (int oh = 0; oh < p->out[1]; oh++)
                    for (int ow = 0; ow < p->out[2]; ow++) {
                        double sum = 0;
                        int grp = k / kpg;
                        for (int ci = 0; ci < cpg; ci++)
                            for (int t = 0; t < p->flt[0]; t++)
                                for (int r = 0; r < p->flt[1]; r++)
                                    for (int s = 0; s < p->flt[2]; s++) {
                                        int id = in_coord(p, 0, od, t), ih = in_coord(p, 1, oh, r), iw = in_coord(p, 2, ow, s);
                                        if (!inside(p, id, ih, iw)) continue;
                                        sum += x[ref_conv_off(xl, n, grp * cpg + ci, id, ih, iw)] * w[ref_conv_off(wl, k, ci, t, r, s)];
                                    }
                        int64_t o = ref_conv_off(yl, n, k, od, oh, ow);
                        y[o] = alpha * sum + (beta != 0 ? beta * y[o] : 0.0);
                    }
}

void ref_conv_bwd_data(const ref_conv *p, double *dx, const ref_conv_layout *xl, const double *w, const ref_conv_layout *wl,
                       const double *dy, const ref_conv_layout *yl, double alpha, double beta)
{
    /* scatter formulation (differs from the library's gather): first blend, then add */
    int cpg = p->c / p->g, kpg = p->k / p->g;
    for (int n = 0; n < p->n; n++)
        for (int c = 0; c < p->c; c++)
            for (int d = 0; d < p->in[0]; d++)
                for (int h = 0; h < p->in[1]; h++)
                    for (int x = 0; x < p->in[2]; x++) {
                        int64_t o = ref_conv_off(xl, n, c, d, h, x);
                        dx[o] = beta != 0 ? beta * dx[o] : 0.0;
                    }
    for (int n = 0; n < p->n; n++)
        for (int k = 0; k < p->k; k++)
            for (int od = 0; od < p->out[0]; od++)
                for (int oh = 0; oh < p->out[1]; oh++)
                    for (int ow = 0; ow < p->out[2]; ow++) {
                        double g = dy[ref_conv_off(yl, n, k, od, oh, ow)];
                        int grp = k / kpg;
                        for (int ci = 0; ci < cpg; ci++)
                            for (int t = 0; t < p->flt[0]; t++)
                                for (int r = 0; r < p->flt[1]; r++)
                                    for (int s = 0; s < p->flt[2]; s++) {
                                        int id = in_coord(p, 0, od, t), ih = in_coord(p, 1, oh, r), iw = in_coord(p, 2, ow, s);
                                        if (!inside(p, id, ih, iw)) continue;
                                        dx[ref_conv_off(xl, n, grp * cpg + ci, id, ih, iw)] += alpha * g * w[ref_conv_off(wl, k, ci, t, r, s)];
                                    }
                    }
}

void ref_conv_bwd_filter(const ref_conv *p, const double *x, const ref_conv_layout *xl, double *dw, const ref_conv_layout *wl,
                         const double *dy, const ref_conv_layout *yl, double alpha, double beta)
{
    int cpg = p->c / p->g, kpg = p->k / p->g;
    for (int k = 0; k < p->k; k++)
        for (int ci = 0; ci < cpg; ci++)
            for (int t = 0; t < p->flt[0]; t++)
                for (int r = 0; r < p->flt[1]; r++)
                    for (int s = 0; s < p->flt[2]; s++) {
                        double sum = 0;
                        int grp = k / kpg;
                        for (int n = 0; n < p->n; n++)
                            for (int od = 0; od < p->out[0]; od++)
                                for (int oh = 0; oh < p->out[1]; oh++)
                                    for (int ow = 0; ow < p->out[2]; ow++) {
                                        int id = in_coord(p, 0, od, t), ih = in_coord(p, 1, oh, r), iw = in_coord(p, 2, ow, s);
                                        if (!inside(p, id, ih, iw)) continue;
                                        sum += x[ref_conv_off(xl, n, grp * cpg + ci, id, ih, iw)] * dy[ref_conv_off(yl, n, k, od, oh, ow)];
                                    }
                        int64_t o = ref_conv_off(wl, k, ci, t, r, s);
                        dw[o] = alpha * sum + (beta != 0 ? beta * dw[o] : 0.0);
                    }
}

void ref_conv_bwd_bias(int n, int k, const int *sp, const double *dy, const ref_conv_layout *yl, double *db, int64_t db_stride,
                       double alpha, double beta)
{
    for (int kk = 0; kk < k; kk++) {
        double sum = 0;
        for (int i = 0; i < n; i++)
            for (int d = 0; d < sp[0]; d++)
                for (int h = 0; h < sp[1]; h++)
                    for (int w = 0; w < sp[2]; w++) sum += dy[ref_conv_off(yl, i, kk, d, h, w)];
        db[kk * db_stride] = alpha * sum + (beta != 0 ? beta * db[kk * db_stride] : 0.0);
    }
}
