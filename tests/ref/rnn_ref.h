/* Independent RNN reference: an unrolled, step-by-step RNN/LSTM/GRU in double precision with
 * explicit per-gate matrices. Constants restated here (not taken from the cuDNN headers). */
#ifndef FDNN_RNN_REF_H
#define FDNN_RNN_REF_H
enum { REF_RNN_RELU = 0, REF_RNN_TANH = 1, REF_LSTM = 2, REF_GRU = 3 };

typedef struct ref_rnn_layer {
    /* gate k: W[k] is H x in (row-major), R[k] is H x P, bW[k]/bR[k] length H (NULL = zero).
     * W[k] NULL means skip input (x added to every gate). Proj is P x H (NULL: none). */
    const double *W[4], *R[4], *bW[4], *bR[4], *Proj;
} ref_rnn_layer;

typedef struct ref_rnn {
    int mode, H, P, L, D, in0;
    const ref_rnn_layer *layers;   /* L*D pseudo layers */
    int clip; double lclip, rclip;
    /* dropout between layers: keep(l, idx) returns the multiplier for element idx of the output of layer l */
    double (*keep)(void *ctx, int layer, long idx);
    void *keep_ctx;
} ref_rnn;

/* x: T x N x in0 (t-major), len: per sequence; hx/cx: (L*D) x N x P / H (NULL = zero).
 * y: T x N x D*P (padding rows left 0), hy, cy as hx, cx. */
void ref_rnn_forward(const ref_rnn *m, int T, int N, const int *len, const double *x, const double *hx, const double *cx, double *y,
                     double *hy, double *cy);
#endif
