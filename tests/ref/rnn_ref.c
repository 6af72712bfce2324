#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rnn_ref.h"

static double sg(double v) { return 1.0 / (1.0 + exp(-v)); }

/* one gate pre-activation pieces */
static double wx(const ref_rnn_layer *ly, int k, int i, const double *x, int in)
{
    double s = 0;
    if (!ly->W[k]) return x[i] + (ly->bW[k] ? ly->bW[k][i] : 0);
    for (int j = 0; j < in; j++) s += ly->W[k][i * in + j] * x[j];
    return s + (ly->bW[k] ? ly->bW[k][i] : 0);
}
static double rh(const ref_rnn_layer *ly, int k, int i, const double *h, int P)
{
    double s = 0;
    for (int j = 0; j < P; j++) s += ly->R[k][i * P + j] * h[j];
    return s + (ly->bR[k] ? ly->bR[k][i] : 0);
}

void ref_rnn_forward(const ref_rnn *m, int T, int N, const int *len, const double *x, const double *hx, const double *cx, double *y,
                     double *hy, double *cy)
{
    int H = m->H, P = m->P, D = m->D;
    int maxin = m->in0 > D * P ? m->in0 : D * P;
    double *in = calloc((size_t)T * N * maxin, sizeof(double));
    double *out = calloc((size_t)T * N * D * P, sizeof(double));
    double *h = malloc(sizeof(double) * P), *c = malloc(sizeof(double) * H), *hn = malloc(sizeof(double) * H), *g = malloc(sizeof(double) * 4 * H);
    for (int i = 0; i < T * N * m->in0; i++) in[i] = x[i];
    int insz = m->in0;
    for (int l = 0; l < m->L; l++) {
        memset(out, 0, sizeof(double) * (size_t)T * N * D * P);
        for (int d = 0; d < D; d++) {
            int pl = l * D + d;
            const ref_rnn_layer *ly = &m->layers[pl];
            for (int n = 0; n < N; n++) {
                for (int j = 0; j < P; j++) h[j] = hx ? hx[(pl * N + n) * P + j] : 0;
                for (int j = 0; j < H; j++) c[j] = cx ? cx[(pl * N + n) * H + j] : 0;
                for (int s = 0; s < len[n]; s++) {
                    int t = d == 0 ? s : len[n] - 1 - s;
                    const double *xv = in + ((long)t * N + n) * insz;
                    if (m->mode == REF_LSTM) {
                        for (int i = 0; i < H; i++) {
                            double gi = sg(wx(ly, 0, i, xv, insz) + rh(ly, 0, i, h, P));
                            double gf = sg(wx(ly, 1, i, xv, insz) + rh(ly, 1, i, h, P));
                            double gg = tanh(wx(ly, 2, i, xv, insz) + rh(ly, 2, i, h, P));
                            double go = sg(wx(ly, 3, i, xv, insz) + rh(ly, 3, i, h, P));
                            double cn = gf * c[i] + gi * gg;
                            if (m->clip) cn = cn < m->lclip ? m->lclip : cn > m->rclip ? m->rclip : cn;
                            g[i] = cn;
                            hn[i] = go * tanh(cn);
                        }
                        for (int i = 0; i < H; i++) c[i] = g[i];
                        if (ly->Proj) {
                            for (int j = 0; j < P; j++) {
                                double s2 = 0;
                                for (int i = 0; i < H; i++) s2 += ly->Proj[j * H + i] * hn[i];
                                h[j] = s2;
                            }
                        } else memcpy(h, hn, sizeof(double) * H);
                    } else if (m->mode == REF_GRU) {
                        for (int i = 0; i < H; i++) {
                            double r = sg(wx(ly, 0, i, xv, insz) + rh(ly, 0, i, h, P));
                            double z = sg(wx(ly, 1, i, xv, insz) + rh(ly, 1, i, h, P));
                            double ht = tanh(wx(ly, 2, i, xv, insz) + r * rh(ly, 2, i, h, P));
                            hn[i] = (1 - z) * ht + z * h[i];
                        }
                        memcpy(h, hn, sizeof(double) * H);
                    } else {
                        for (int i = 0; i < H; i++) {
                            double p = wx(ly, 0, i, xv, insz) + rh(ly, 0, i, h, P);
                            hn[i] = m->mode == REF_RNN_RELU ? (p > 0 ? p : 0) : tanh(p);
                        }
                        memcpy(h, hn, sizeof(double) * H);
                    }
                    for (int j = 0; j < P; j++) out[((long)t * N + n) * D * P + d * P + j] = h[j];
                }
                if (hy) for (int j = 0; j < P; j++) hy[(pl * N + n) * P + j] = h[j];
                if (cy) for (int j = 0; j < H; j++) cy[(pl * N + n) * H + j] = c[j];
            }
        }
        insz = D * P;
        memset(in, 0, sizeof(double) * (size_t)T * N * maxin);
        for (long i = 0; i < (long)T * N * D * P; i++) in[i] = out[i] * ((l + 1 < m->L && m->keep) ? m->keep(m->keep_ctx, l, i) : 1.0);
    }
    memcpy(y, out, sizeof(double) * (size_t)T * N * D * P);
    free(in); free(out); free(h); free(c); free(hn); free(g);
}
