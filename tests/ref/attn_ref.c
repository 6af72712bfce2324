#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "attn_ref.h"

int ref_attn_out_size(const ref_attn *m)
{
    int Vp = m->vP ? m->vP : m->vS;
    return m->oP ? m->oP : m->H * Vp;
}

/* y = W x + b for one head's projection, or x itself when P == 0 */
static void proj(const double *W, const double *b, int h, int P, int in, const double *x, double *y)
{
    if (!P) { memcpy(y, x, sizeof(double) * (size_t)in); return; }
    for (int r = 0; r < P; r++) {
        double s = b ? b[h * P + r] : 0.0;
        for (int c = 0; c < in; c++) s += W[((long)h * P + r) * in + c] * x[c];
        y[r] = s;
    }
}

void ref_attn_forward(const ref_attn *m, const double *q, const double *k, const double *v, const double *resid, double *out)
{
    int Qp = m->qP ? m->qP : m->qS, Kp = m->kP ? m->kP : m->kS, Vp = m->vP ? m->vP : m->vS, O = ref_attn_out_size(m);
    int Mkv = m->one_to_one ? m->Mq : 1;
    double *qb = malloc(sizeof(double) * Qp), *kb = malloc(sizeof(double) * Kp), *vb = malloc(sizeof(double) * Vp);
    double *sc = malloc(sizeof(double) * (m->Tk + 1)), *heads = malloc(sizeof(double) * m->H * Vp);
    for (int b = 0; b < m->B; b++)
        for (int be = 0; be < m->Mq; be++) {
            long s = (long)b * m->Mq + be, sk = (long)b * Mkv + (m->one_to_one ? be : 0);
            for (int t = 0; t < m->lenq[s]; t++) {
                const double *qv = q + (s * m->Tq + t) * m->qS;
                for (int h = 0; h < m->H; h++) {
                    proj(m->Wq, m->bq, h, m->qP, m->qS, qv, qb);
                    int lo = m->lo[t] < 0 ? 0 : m->lo[t];
                    int hi = m->hi[t] < m->lenkv[sk] ? m->hi[t] : m->lenkv[sk];
                    double mx = -INFINITY, sum = 0;
                    for (int j = lo; j < hi; j++) {
                        proj(m->Wk, m->bk, h, m->kP, m->kS, k + (sk * m->Tk + j) * m->kS, kb);
                        double d = 0;
                        for (int c = 0; c < Qp; c++) d += qb[c] * kb[c];
                        sc[j] = m->scale * d;
                        if (sc[j] > mx) mx = sc[j];
                    }
                    for (int j = lo; j < hi; j++) sum += exp(sc[j] - mx);
                    double *hd = heads + h * Vp;
                    for (int c = 0; c < Vp; c++) hd[c] = 0;
                    for (int j = lo; j < hi; j++) {
                        double p = exp(sc[j] - mx) / sum;
                        if (m->attn_mult) p *= m->attn_mult(m->ctx, s, h, t, j);
                        proj(m->Wv, m->bv, h, m->vP, m->vS, v + (sk * m->Tk + j) * m->vS, vb);
                        for (int c = 0; c < Vp; c++) hd[c] += p * vb[c];
                    }
                }
                double *o = out + (s * m->Tq + t) * O;
                for (int r = 0; r < O; r++) {
                    double y;
                    if (m->oP) {
                        y = m->bo ? m->bo[r] : 0.0;
                        for (int h = 0; h < m->H; h++)
                            for (int c = 0; c < Vp; c++) y += m->Wo[((long)h * m->oP + r) * Vp + c] * heads[h * Vp + c];
                    } else {
                        y = heads[r];
                    }
                    if (m->post_mult) y *= m->post_mult(m->ctx, s, t, r);
                    if (resid) y += resid[(s * m->Tq + t) * O + r];
                    o[r] = y;
                }
            }
        }
    free(qb); free(kb); free(vb); free(sc); free(heads);
}
