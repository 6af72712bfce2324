/* Independent reference for the tensor ops; see ops_ref.h. */
#include <math.h>
#include <stdlib.h>
#include "ops_ref.h"

static void unravel(const int *dim, int nd, int64_t lin, int *idx)
{
    for (int i = nd - 1; i >= 0; i--) { idx[i] = (int)(lin % dim[i]); lin /= dim[i]; }
}

void ref_broadcast(int nd, const int *adim, const int *cdim, const double *a, double *c)
{
    int64_t n = 1;
    for (int i = 0; i < nd; i++) n *= cdim[i];
    for (int64_t i = 0; i < n; i++) {
        int idx[8];
        unravel(cdim, nd, i, idx);
        int64_t o = 0;
        for (int d = 0; d < nd; d++) o = o * adim[d] + (adim[d] == 1 ? 0 : idx[d]);
        c[i] = a[o];
    }
}

double ref_op(int op, int prop, double a, double b)
{
    switch (op) {
    case RO_ADD: return a + b;
    case RO_MUL: return a * b;
    case RO_MIN:
        if (isnan(a) || isnan(b)) return prop ? NAN : (isnan(a) ? b : a);
        return a <= b ? a : b;
    case RO_MAX:
        if (isnan(a) || isnan(b)) return prop ? NAN : (isnan(a) ? b : a);
        return a >= b ? a : b;
    case RO_SQRT: return sqrt(a);
    default: return 1.0 - a;
    }
}

static double sigm(double v) { return 1.0 / (1.0 + exp(-v)); }

double ref_act(int mode, double coef, double sb, int prop, double x)
{
    if (isnan(x)) {
        if ((mode == RA_RELU || mode == RA_CLIPPED) && !prop) return 0.0;
        return NAN;
    }
    switch (mode) {
    case RA_SIGMOID: return sigm(x);
    case RA_RELU: return x < 0 ? 0.0 : x;
    case RA_TANH: return tanh(x);
    case RA_CLIPPED: return x < 0 ? 0.0 : (x > coef ? coef : x);
    case RA_ELU: return x >= 0 ? x : coef * expm1(x);
    case RA_SWISH: return x * sigm(sb * x);
    default: return x;
    }
}

double ref_act_grad(int mode, double coef, double sb, double x)
{
    switch (mode) {
    case RA_SIGMOID: return sigm(x) * (1 - sigm(x));
    case RA_RELU: return x > 0 ? 1.0 : 0.0;
    case RA_TANH: return 1 - tanh(x) * tanh(x);
    case RA_CLIPPED: return (x > 0 && x < coef) ? 1.0 : 0.0;
    case RA_ELU: return x > 0 ? 1.0 : coef * exp(x);
    case RA_SWISH: { double s = sigm(sb * x); return s + sb * x * s * (1 - s); }
    default: return 1.0;
    }
}

/* element j of group g */
static int64_t sm_at(int mode, int C, int64_t S, int64_t g, int64_t j)
{
    if (mode == RS_INSTANCE) return g * C * S + j;
    return (g / S) * C * S + j * S + g % S;
}

void ref_softmax_fwd(int algo, int mode, int N, int C, int64_t S, const double *x, double *y)
{
    int64_t groups = mode == RS_INSTANCE ? N : N * S, len = mode == RS_INSTANCE ? C * S : C;
    for (int64_t g = 0; g < groups; g++) {
        double mx = -INFINITY;
        for (int64_t j = 0; j < len; j++) mx = fmax(mx, x[sm_at(mode, C, S, g, j)]);
        double z = 0;
        for (int64_t j = 0; j < len; j++) z += exp(x[sm_at(mode, C, S, g, j)] - mx);
        for (int64_t j = 0; j < len; j++) {
            int64_t o = sm_at(mode, C, S, g, j);
            y[o] = algo == RS_LOG ? x[o] - mx - log(z) : exp(x[o] - mx) / z;
        }
    }
}

void ref_softmax_bwd(int algo, int mode, int N, int C, int64_t S, const double *y, const double *dy, double *dx)
{
    int64_t groups = mode == RS_INSTANCE ? N : N * S, len = mode == RS_INSTANCE ? C * S : C;
    for (int64_t g = 0; g < groups; g++) {
        /* Jacobian-vector product written out: dx_i = sum_j dy_j dy_j/dx_i */
        for (int64_t i = 0; i < len; i++) {
            int64_t oi = sm_at(mode, C, S, g, i);
            double acc = 0;
            for (int64_t j = 0; j < len; j++) {
                int64_t oj = sm_at(mode, C, S, g, j);
                double J;
                if (algo == RS_LOG) J = (i == j ? 1.0 : 0.0) - exp(y[oi]);      /* d logsm_j / dx_i */
                else J = y[oj] * ((i == j ? 1.0 : 0.0) - y[oi]);                 /* d sm_j / dx_i */
                acc += dy[oj] * J;
            }
            dx[oi] = acc;
        }
    }
}

void ref_softmax_bwd_closed(int algo, int mode, int N, int C, int64_t S, const double *y, const double *dy, double *dx, double *s)
{
    int64_t groups = mode == RS_INSTANCE ? N : N * S, len = mode == RS_INSTANCE ? C * S : C;
    for (int64_t g = 0; g < groups; g++) {
        double acc = 0;
        for (int64_t j = 0; j < len; j++) {
            int64_t o = sm_at(mode, C, S, g, j);
            acc += algo == RS_LOG ? dy[o] : dy[o] * y[o];
        }
        for (int64_t i = 0; i < len; i++) {
            int64_t o = sm_at(mode, C, S, g, i);
            dx[o] = algo == RS_LOG ? dy[o] - exp(y[o]) * acc : y[o] * (dy[o] - acc);
        }
        if (s) s[g] = acc;
    }
}

void ref_pool_out_dims(int ns, const int *in, const int *win, const int *pad, const int *str, int *out)
{
    for (int i = 0; i < ns; i++) out[i] = (in[i] + 2 * pad[i] - win[i]) / str[i] + 1;
}

/* Iterate window positions of output o; calls back through arrays: returns count, fills list */
static int window_list(int ns, const int *in, const int *out, const int *win, const int *pad, const int *str, int64_t o, int64_t *list,
                        int *total)
{
    int oi[3] = {0, 0, 0}, W[3] = {1, 1, 1}, I[3] = {1, 1, 1}, O[3] = {1, 1, 1}, P[3] = {0, 0, 0}, T[3] = {1, 1, 1};
    for (int i = 0; i < ns; i++) { W[i] = win[i]; I[i] = in[i]; O[i] = out[i]; P[i] = pad[i]; T[i] = str[i]; }
    unravel(O, 3, o, oi);
    int cnt = 0;
    *total = W[0] * W[1] * W[2];
    for (int a = 0; a < W[0]; a++)
        for (int b = 0; b < W[1]; b++)
            for (int c = 0; c < W[2]; c++) {
                int p0 = oi[0] * T[0] - P[0] + a, p1 = oi[1] * T[1] - P[1] + b, p2 = oi[2] * T[2] - P[2] + c;
                if (p0 < 0 || p1 < 0 || p2 < 0 || p0 >= I[0] || p1 >= I[1] || p2 >= I[2]) continue;
                list[cnt++] = ((int64_t)p0 * I[1] + p1) * I[2] + p2;
            }
    return cnt;
}

static int64_t prod(int ns, const int *d)
{
    int64_t p = 1;
    for (int i = 0; i < ns; i++) p *= d[i];
    return p;
}

/* index (within plane) of the selected max, -1 if none */
static int64_t pick_max(const double *xp, const int64_t *list, int cnt, int prop)
{
    int64_t best = -1;
    for (int k = 0; k < cnt; k++) {
        double v = xp[list[k]];
        if (isnan(v)) {
            if (prop) return list[k];
            continue;
        }
        if (best < 0 || v > xp[best]) best = list[k];
    }
    return best;
}

void ref_pool_fwd(int mode, int prop, int ns, int64_t planes, const int *in, const int *out, const int *win, const int *pad,
                  const int *str, const double *x, double *y)
{
    int64_t isz = prod(ns, in), osz = prod(ns, out);
    int64_t *list = malloc(sizeof(int64_t) * (size_t)prod(ns, win));
    for (int64_t p = 0; p < planes; p++)
        for (int64_t o = 0; o < osz; o++) {
            int total, cnt = window_list(ns, in, out, win, pad, str, o, list, &total);
            const double *xp = x + p * isz;
            double r;
            if (mode == RP_MAX || mode == RP_MAX_DET) {
                int64_t b = pick_max(xp, list, cnt, prop);
                r = b < 0 ? (cnt ? NAN : 0.0) : xp[b];
            } else {
                double s = 0;
                for (int k = 0; k < cnt; k++) s += xp[list[k]];
                r = cnt ? s / (mode == RP_AVG_INCL ? total : cnt) : 0.0; /* a window wholly in padding gives 0 */
            }
            y[p * osz + o] = r;
        }
    free(list);
}

void ref_pool_bwd(int mode, int ns, int64_t planes, const int *in, const int *out, const int *win, const int *pad, const int *str,
                  const double *x, const double *dy, double *dx)
{
    int64_t isz = prod(ns, in), osz = prod(ns, out);
    int64_t *list = malloc(sizeof(int64_t) * (size_t)prod(ns, win));
    for (int64_t i = 0; i < planes * isz; i++) dx[i] = 0;
    for (int64_t p = 0; p < planes; p++)
        for (int64_t o = 0; o < osz; o++) {
            int total, cnt = window_list(ns, in, out, win, pad, str, o, list, &total);
            double g = dy[p * osz + o];
            if (mode == RP_MAX || mode == RP_MAX_DET) {
                int64_t b = pick_max(x + p * isz, list, cnt, 0);
                if (b >= 0) dx[p * isz + b] += g;
            } else {
                for (int k = 0; k < cnt; k++) dx[p * isz + list[k]] += g / (mode == RP_AVG_INCL ? total : cnt);
            }
        }
    free(list);
}

void ref_lrn_fwd(int N, int C, int64_t S, unsigned n, double alpha, double beta, double k, const double *x, double *y)
{
    int behind = (int)(n - 1) / 2, ahead = (int)n - 1 - behind;
    for (int b = 0; b < N; b++)
        for (int c = 0; c < C; c++)
            for (int64_t s = 0; s < S; s++) {
                double sum = 0;
                for (int j = c - behind; j <= c + ahead; j++)
                    if (j >= 0 && j < C) {
                        double v = x[((int64_t)b * C + j) * S + s];
                        sum += v * v;
                    }
                int64_t o = ((int64_t)b * C + c) * S + s;
                y[o] = x[o] / pow(k + alpha / n * sum, beta);
            }
}

void ref_divnorm_fwd(int ns, int64_t planes, const int *sp, unsigned n, double alpha, double beta, double k, const double *x,
                     const double *m, double *y)
{
    int behind = (int)(n - 1) / 2, ahead = (int)n - 1 - behind;
    int D = ns == 3 ? sp[0] : 1, H = sp[ns - 2], W = sp[ns - 1];
    double wsz = ns == 3 ? (double)n * n * n : (double)n * n;
    int64_t psz = (int64_t)D * H * W;
    for (int64_t p = 0; p < planes; p++)
        for (int d = 0; d < D; d++)
            for (int h = 0; h < H; h++)
                for (int w = 0; w < W; w++) {
                    int64_t o = p * psz + ((int64_t)d * H + h) * W + w;
                    double mo = m ? m[o] : 0.0, sum = 0;
                    int d0 = ns == 3 ? d - behind : d, d1 = ns == 3 ? d + ahead : d;
                    for (int dd = d0; dd <= d1; dd++)
                        for (int hh = h - behind; hh <= h + ahead; hh++)
                            for (int ww = w - behind; ww <= w + ahead; ww++) {
                                if (dd < 0 || dd >= D || hh < 0 || hh >= H || ww < 0 || ww >= W) continue;
                                int64_t q = p * psz + ((int64_t)dd * H + hh) * W + ww;
                                double u = x[q] - mo; /* the centre's mean, for every window element */
                                sum += u * u;
                            }
                    y[o] = x[o] / pow(k + alpha / wsz * sum, beta);
                }
}

void ref_reduce(int op, int prop, int nd, const int *adim, const int *cdim, const double *a, double *c, int64_t *idx)
{
    int64_t cn = 1, rn = 1;
    int rdim[8], rk = 0, rpos[8];
    for (int i = 0; i < nd; i++) {
        cn *= cdim[i];
        if (cdim[i] == 1 && adim[i] != 1) { rdim[rk] = adim[i]; rpos[rk++] = i; rn *= adim[i]; }
    }
    for (int64_t ci = 0; ci < cn; ci++) {
        int cidx[8], ridx[8], full[8];
        unravel(cdim, nd, ci, cidx);
        double acc = 0, best = 0;
        int64_t bi = 0;
        int nz = 0, seen = 0, hasnan = 0;
        if (op == RR_MUL || op == RR_MUL_NO_ZEROS) acc = 1;
        for (int64_t r = 0; r < rn; r++) {
            unravel(rdim, rk, r, ridx);
            for (int i = 0; i < nd; i++) full[i] = cidx[i];
            for (int j = 0; j < rk; j++) full[rpos[j]] = ridx[j];
            int64_t o = 0;
            for (int i = 0; i < nd; i++) o = o * adim[i] + full[i];
            double v = a[o];
            if (isnan(v)) hasnan = 1;
            switch (op) {
            case RR_ADD: case RR_AVG: acc += v; break;
            case RR_MUL: acc *= v; break;
            case RR_MUL_NO_ZEROS: if (v != 0) { acc *= v; nz++; } break;
            case RR_NORM1: acc += fabs(v); break;
            case RR_NORM2: acc += v * v; break;
            default: {
                double key = op == RR_AMAX ? fabs(v) : v;
                if (isnan(key)) {
                    if (prop && !isnan(best)) { best = key; bi = r; seen = 1; }
                    break;
                }
                if (seen && isnan(best)) break;
                if (!seen || (op == RR_MIN ? key < best : key > best)) { best = key; bi = r; seen = 1; }
            }
            }
        }
        if (op == RR_AVG) acc /= (double)rn;
        if (op == RR_NORM2) acc = sqrt(acc);
        if (op == RR_MIN || op == RR_MAX || op == RR_AMAX) { acc = seen ? best : NAN; if (idx) idx[ci] = bi; }
        if (hasnan && prop) acc = NAN;
        c[ci] = acc;
    }
}

void ref_fold(int nb, const int *sdim, const int *pb, const int *pa, const unsigned *fold, const double *src, const int *ddim, double *dst)
{
    int pdim[8];
    int64_t dn = 1, pn = 1;
    for (int i = 0; i < nb; i++) {
        pdim[i] = sdim[i] + pb[i] + pa[i];
        dn *= ddim[i];
        pn *= pdim[i];
    }
    for (int64_t i = 0; i < dn; i++) dst[i] = 0;
    for (int64_t p = 0; p < pn; p++) {
        int pi[8], si[8], di[8];
        unravel(pdim, nb, p, pi);
        int inside = 1;
        for (int k = 0; k < nb; k++) {
            si[k] = pi[k] - pb[k];
            if (si[k] < 0 || si[k] >= sdim[k]) inside = 0;
        }
        double v = 0;
        if (inside) {
            int64_t o = 0;
            for (int k = 0; k < nb; k++) o = o * sdim[k] + si[k];
            v = src[o];
        }
        int64_t phase = 0;
        for (int k = 2; k < nb; k++) {
            phase = phase * fold[k - 2] + pi[k] % fold[k - 2];
            di[k] = pi[k] / (int)fold[k - 2];
        }
        di[0] = pi[0];
        di[1] = (int)(phase * pdim[1] + pi[1]); /* phase-major: all channels of phase 0, then phase 1, ... */
        int64_t o = 0;
        for (int k = 0; k < nb; k++) o = o * ddim[k] + di[k];
        dst[o] = v;
    }
}
