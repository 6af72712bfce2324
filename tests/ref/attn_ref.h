/* Independent multi-head attention reference: explicit loops in double, one query vector, one
 * head, one key at a time. Shares nothing with src/. */
#ifndef FDNN_ATTN_REF_H
#define FDNN_ATTN_REF_H

typedef struct ref_attn {
    int H;                      /* heads */
    int qS, kS, vS;             /* input sizes */
    int qP, kP, vP, oP;         /* projection sizes, 0 = none (identity, shared by every head) */
    int one_to_one;             /* 1: K/V sequence of query sequence b*Mq+m is b*Mq+m; 0: b */
    double scale;               /* softmax scaler */
    int Tq, Tk, B, Mq;          /* time steps of Q/O and K/V, batch, beam of Q */
    /* weights: Wq[h][r][c] = Wq[(h*qP + r)*qS + c] (Wk, Wv alike); Wo[h][r][c] = Wo[(h*oP + r)*Vp + c];
     * biases bq[h*qP + r] (bk, bv alike), bo[r]; NULL bias = zero */
    const double *Wq, *Wk, *Wv, *Wo, *bq, *bk, *bv, *bo;
    const int *lenq, *lenkv;    /* B*Mq and B*(one_to_one ? Mq : 1) lengths */
    const int *lo, *hi;         /* window of query step t: keys lo[t] <= j < hi[t] (and j < length) */
    /* dropout multipliers (NULL = none): attention probability of (query sequence s, head h, step t,
     * key j) and output element (s, t, c) */
    double (*attn_mult)(void *ctx, long s, int h, int t, int j);
    double (*post_mult)(void *ctx, long s, int t, int c);
    void *ctx;
} ref_attn;

int ref_attn_out_size(const ref_attn *m);
/* q: [B*Mq][Tq][qS] dense, k/v: [B*Mkv][Tk][kS/vS], resid: NULL or [B*Mq][Tq][O] (O = qS then).
 * out: [B*Mq][Tq][O]; only valid positions (t < lenq) are written. */
void ref_attn_forward(const ref_attn *m, const double *q, const double *k, const double *v, const double *resid, double *out);
#endif
