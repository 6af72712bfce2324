/* Independent reference for normalization, dropout and the spatial transformer (see norm_ref.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "norm_ref.h"

double norm_ref_act(int mode, double coef, double v)
{
    switch (mode) {
    case REF_ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case REF_ACT_RELU: return v > 0 ? v : 0;
    case REF_ACT_TANH: return tanh(v);
    case REF_ACT_CLIPPED_RELU: return v < 0 ? 0 : (v > coef ? coef : v);
    case REF_ACT_ELU: return v > 0 ? v : coef * expm1(v);
    case REF_ACT_SWISH: return v / (1.0 + exp(-v));
    default: return v;
    }
}

double ref_act_deriv(int mode, double coef, double v)
{
    switch (mode) {
    case REF_ACT_SIGMOID: { double sg = 1.0 / (1.0 + exp(-v)); return sg * (1 - sg); }
    case REF_ACT_RELU: return v > 0 ? 1 : 0;
    case REF_ACT_TANH: { double t = tanh(v); return 1 - t * t; }
    case REF_ACT_CLIPPED_RELU: return (v > 0 && v < coef) ? 1 : 0;
    case REF_ACT_ELU: return v > 0 ? 1 : coef * exp(v);
    case REF_ACT_SWISH: { double sg = 1.0 / (1.0 + exp(-v)); return sg + v * sg * (1 - sg); }
    default: return 1;
    }
}

static int par(int c, int s, int per_act, int ci, int si) { (void)c; return per_act ? ci * s + si : ci; }

void ref_norm_train(int n, int c, int s, int per_act, const double *x, const double *scale, const double *bias, const double *z, int act,
                    double coef, double eps, double *y, double *pre, double *mean, double *var_biased, double *var_unbiased,
                    double *invstd)
{
    int np = per_act ? c * s : c;
    for (int q = 0; q < np; q++) {
        /* gather the members of parameter q and do textbook two-pass statistics */
        double sum = 0;
        int m = 0;
        for (int ni = 0; ni < n; ni++)
            for (int ci = 0; ci < c; ci++)
                for (int si = 0; si < s; si++)
                    if (par(c, s, per_act, ci, si) == q) {
                        sum += x[((size_t)ni * c + ci) * s + si];
                        m++;
                    }
        double mu = sum / m, ss = 0;
        for (int ni = 0; ni < n; ni++)
            for (int ci = 0; ci < c; ci++)
                for (int si = 0; si < s; si++)
                    if (par(c, s, per_act, ci, si) == q) {
                        double d = x[((size_t)ni * c + ci) * s + si] - mu;
                        ss += d * d;
                    }
        mean[q] = mu;
        var_biased[q] = ss / m;
        var_unbiased[q] = m > 1 ? ss / (m - 1) : 0;
        invstd[q] = 1.0 / sqrt(ss / m + eps);
    }
    ref_norm_infer(n, c, s, per_act, x, scale, bias, mean, var_biased, z, act, coef, eps, y);
    if (pre) ref_norm_infer(n, c, s, per_act, x, scale, bias, mean, var_biased, z, REF_ACT_NONE, coef, eps, pre);
}

void ref_norm_infer(int n, int c, int s, int per_act, const double *x, const double *scale, const double *bias, const double *mean,
                    const double *var, const double *z, int act, double coef, double eps, double *y)
{
    for (int ni = 0; ni < n; ni++)
        for (int ci = 0; ci < c; ci++)
            for (int si = 0; si < s; si++) {
                size_t e = ((size_t)ni * c + ci) * s + si;
                int q = par(c, s, per_act, ci, si);
                double v = (x[e] - mean[q]) / sqrt(var[q] + eps) * scale[q] + bias[q];
                if (z) v += z[e];
                y[e] = act == REF_ACT_NONE ? v : norm_ref_act(act, coef, v);
            }
}

void ref_norm_bwd(int n, int c, int s, int per_act, const double *x, const double *g, const double *scale, const double *mean,
                  const double *invstd, double *dx, double *dscale, double *dbias)
{
    int np = per_act ? c * s : c;
    int m = per_act ? n : n * s;
    for (int q = 0; q < np; q++) dscale[q] = dbias[q] = 0;
    for (int ni = 0; ni < n; ni++)
        for (int ci = 0; ci < c; ci++)
            for (int si = 0; si < s; si++) {
                size_t e = ((size_t)ni * c + ci) * s + si;
                int q = par(c, s, per_act, ci, si);
                dbias[q] += g[e];
                dscale[q] += g[e] * (x[e] - mean[q]) * invstd[q];
            }
    for (int ni = 0; ni < n; ni++)
        for (int ci = 0; ci < c; ci++)
            for (int si = 0; si < s; si++) {
                size_t e = ((size_t)ni * c + ci) * s + si;
                int q = par(c, s, per_act, ci, si);
                double xh = (x[e] - mean[q]) * invstd[q];
                /* dL/dx = scale*invstd*(g - mean(g) - xhat*mean(g*xhat)) */
                dx[e] = scale[q] * invstd[q] * (g[e] - dbias[q] / m - xh * dscale[q] / m);
            }
}

void ref_stf_grid(int n, int h, int w, const double *theta, double *grid)
{
    for (int ni = 0; ni < n; ni++)
        for (int hi = 0; hi < h; hi++)
            for (int wi = 0; wi < w; wi++) {
                double xs = w > 1 ? -1.0 + 2.0 * wi / (w - 1) : 0.0;
                double ys = h > 1 ? -1.0 + 2.0 * hi / (h - 1) : 0.0;
                const double *t = theta + 6 * ni;
                double *g = grid + (((size_t)ni * h + hi) * w + wi) * 2;
                g[0] = t[0] * xs + t[1] * ys + t[2];
                g[1] = t[3] * xs + t[4] * ys + t[5];
            }
}

void ref_stf_sample(int n, int c, int hi, int wi, int ho, int wo, const double *x, const double *grid, double *y)
{
    for (int ni = 0; ni < n; ni++)
        for (int oh = 0; oh < ho; oh++)
            for (int ow = 0; ow < wo; ow++) {
                const double *g = grid + (((size_t)ni * ho + oh) * wo + ow) * 2;
                double px = (g[0] + 1) * (wi - 1) / 2.0, py = (g[1] + 1) * (hi - 1) / 2.0;
                double fx = floor(px), fy = floor(py);
                for (int ci = 0; ci < c; ci++) {
                    double acc = 0;
                    for (int dyy = 0; dyy < 2; dyy++)
                        for (int dxx = 0; dxx < 2; dxx++) {
                            int xx = (int)fx + dxx, yy = (int)fy + dyy;
                            double wgt = (1 - fabs(px - xx)) * (1 - fabs(py - yy));
                            if (xx >= 0 && xx < wi && yy >= 0 && yy < hi) acc += wgt * x[(((size_t)ni * c + ci) * hi + yy) * wi + xx];
                        }
                    y[(((size_t)ni * c + ci) * ho + oh) * wo + ow] = acc;
                }
            }
}
