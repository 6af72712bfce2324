/* Reference loops for the CUDA smoke test (see cuda_smoke_ref.h). */
#include <stdlib.h>
#include "cuda_smoke_ref.h"

int csr_out_dim(int in, int flt, int pad, int str, int dil)
{
    return (in + 2 * pad - ((flt - 1) * dil + 1)) / str + 1;
}

int64_t csr_w_index(const csr_conv *p, int k, int c, int t, int r, int s)
{
    const int64_t C = p->c / p->g, T = p->flt[0], R = p->flt[1], S = p->flt[2];
    if (p->w_channels_last) return (((k * T + t) * R + r) * S + s) * C + c;
    return (((k * C + c) * T + t) * R + r) * S + s;
}

static int64_t xoff(const csr_conv *p, int n, int c, int d, int h, int w)
{
    return n * p->xs[0] + c * p->xs[1] + d * p->xs[2] + h * p->xs[3] + w * p->xs[4];
}
static int64_t yoff(const csr_conv *p, int n, int k, int d, int h, int w)
{
    return n * p->ys[0] + k * p->ys[1] + d * p->ys[2] + h * p->ys[3] + w * p->ys[4];
}
static void blend(double *o, double v, double alpha, double beta)
{
    *o = beta == 0 ? alpha * v : alpha * v + beta * *o;
}

/* Visit every (n, k, output position, c, filter tap) pair that contributes: calls f with the
 * x offset, w offset and y offset. The filter index is flipped for convolution mode. */
typedef void (*visit_fn)(void *ctx, int64_t xo, int64_t wo, int64_t yo);
static void visit(const csr_conv *p, void *ctx, visit_fn f)
{
    const int cg = p->c / p->g, kg = p->k / p->g;
    for (int n = 0; n < p->n; n++)
        for (int k = 0; k < p->k; k++)
            for (int od = 0; od < p->out[0]; od++)
                for (int oh = 0; oh < p->out[1]; oh++)
                    for (int ow = 0; ow < p->out[2]; ow++)
                        for (int c = 0; c < cg; c++)
                            for (int t = 0; t < p->flt[0]; t++)
                                for (int r = 0; r < p->flt[1]; r++)
                                    for (int s = 0; s < p->flt[2]; s++) {
                                        int id = od * p->str[0] - p->pad[0] + t * p->dil[0];
                                        int ih = oh * p->str[1] - p->pad[1] + r * p->dil[1];
                                        int iw = ow * p->str[2] - p->pad[2] + s * p->dil[2];
                                        if (id < 0 || id >= p->in[0] || ih < 0 || ih >= p->in[1] || iw < 0 || iw >= p->in[2]) continue;
                                        int tf = p->flip ? p->flt[0] - 1 - t : t;
                                        int rf = p->flip ? p->flt[1] - 1 - r : r;
                                        int sf = p->flip ? p->flt[2] - 1 - s : s;
                                        f(ctx, xoff(p, n, (k / kg) * cg + c, id, ih, iw), csr_w_index(p, k, c, tf, rf, sf),
                                          yoff(p, n, k, od, oh, ow));
                                    }
}

/* Accumulate products into a dense scratch indexed by the target's offset. */
typedef struct acc_ctx {
    const double *a, *b;
    double *acc;
    int which; /* 0: acc[yo] += x*w, 1: acc[xo] += dy*w, 2: acc[wo] += x*dy */
} acc_ctx;
static void acc_fn(void *vctx, int64_t xo, int64_t wo, int64_t yo)
{
    acc_ctx *c = vctx;
    if (c->which == 0) c->acc[yo] += c->a[xo] * c->b[wo];
    else if (c->which == 1) c->acc[xo] += c->a[yo] * c->b[wo];
    else c->acc[wo] += c->a[xo] * c->b[yo];
}

static int64_t span5(const int *dim, const int64_t *st)
{
    int64_t s = 1;
    for (int i = 0; i < 5; i++) s += (int64_t)(dim[i] - 1) * st[i];
    return s;
}

void csr_conv_fwd(const csr_conv *p, const double *x, const double *w, double *y, double alpha, double beta)
{
    int yd[5] = {p->n, p->k, p->out[0], p->out[1], p->out[2]};
    int64_t sp = span5(yd, p->ys);
    double *acc = calloc((size_t)sp, sizeof *acc);
    acc_ctx c = {x, w, acc, 0};
    visit(p, &c, acc_fn);
    for (int n = 0; n < p->n; n++)
        for (int k = 0; k < p->k; k++)
            for (int d = 0; d < p->out[0]; d++)
                for (int h = 0; h < p->out[1]; h++)
                    for (int q = 0; q < p->out[2]; q++) {
                        int64_t o = yoff(p, n, k, d, h, q);
                        blend(&y[o], acc[o], alpha, beta);
                    }
    free(acc);
}

void csr_conv_bwd_data(const csr_conv *p, double *dx, const double *w, const double *dy, double alpha, double beta)
{
    int xd[5] = {p->n, p->c, p->in[0], p->in[1], p->in[2]};
    int64_t sp = span5(xd, p->xs);
    double *acc = calloc((size_t)sp, sizeof *acc);
    acc_ctx c = {dy, w, acc, 1};
    visit(p, &c, acc_fn);
    for (int n = 0; n < p->n; n++)
        for (int ch = 0; ch < p->c; ch++)
            for (int d = 0; d < p->in[0]; d++)
                for (int h = 0; h < p->in[1]; h++)
                    for (int q = 0; q < p->in[2]; q++) {
                        int64_t o = xoff(p, n, ch, d, h, q);
                        blend(&dx[o], acc[o], alpha, beta);
                    }
    free(acc);
}

void csr_conv_bwd_filter(const csr_conv *p, const double *x, double *dw, const double *dy, double alpha, double beta)
{
    int64_t nw = (int64_t)p->k * (p->c / p->g) * p->flt[0] * p->flt[1] * p->flt[2];
    double *acc = calloc((size_t)nw, sizeof *acc);
    acc_ctx c = {x, dy, acc, 2};
    visit(p, &c, acc_fn);
    for (int64_t i = 0; i < nw; i++) blend(&dw[i], acc[i], alpha, beta);
    free(acc);
}

void csr_add_tensor(int nd, const int *cdim, const int64_t *cstride, double *c, const int *adim, const int64_t *astride,
                    const double *a, double alpha, double beta)
{
    int64_t total = 1;
    for (int d = 0; d < nd; d++) total *= cdim[d];
    for (int64_t i = 0; i < total; i++) {
        int64_t r = i, co = 0, ao = 0;
        for (int d = nd - 1; d >= 0; d--) {
            int idx = (int)(r % cdim[d]);
            r /= cdim[d];
            co += idx * cstride[d];
            if (adim[d] != 1) ao += idx * astride[d];
        }
        blend(&c[co], a[ao], alpha, beta);
    }
}
