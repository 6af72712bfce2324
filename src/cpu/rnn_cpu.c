/* CPU RNN engine: RNN_RELU, RNN_TANH, LSTM (cell clipping, recurrent projection), GRU;
 * uni/bidirectional, several layers, LINEAR/SKIP input, all bias modes, dropout between layers,
 * ragged sequences. Forward keeps every intermediate in the reserve space (as doubles);
 * backward data stores the pre-activation gate gradients there for backward weights.
 *
 * Weight space, per pseudo layer (layer*dirs + dir): the matrices of linear ids 0..G-1 (on the
 * layer input, [H x in]), then G..2G-1 (on the recurrent state, [H x P]), then the LSTM
 * projection (id 8, [P x H]) when projSize < hiddenSize, then the biases of ids 0..G-1, then of
 * ids G..2G-1 (each [H]), the biases present according to the bias mode. Gate order: LSTM
 * i, f, g, o; GRU r, z, h~. Matrices are row-major. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rnn_cpu.h"
#include "../core/philox.h"
#include "../cuda/cuda_adv.h"

void fdnn_rnn_geom_of(const struct cudnnRNNStruct *r, fdnn_rnn_geom *g)
{
    g->mode = r->cell_mode;
    g->G = r->cell_mode == CUDNN_LSTM ? 4 : r->cell_mode == CUDNN_GRU ? 3 : 1;
    g->H = r->hidden_size;
    g->has_proj = r->cell_mode == CUDNN_LSTM && r->proj_size < r->hidden_size;
    g->P = g->has_proj ? r->proj_size : r->hidden_size;
    g->L = r->num_layers;
    g->D = r->dir_mode == CUDNN_BIDIRECTIONAL ? 2 : 1;
    g->in0 = r->input_size;
    g->skip = r->input_mode == CUDNN_SKIP_INPUT;
    g->bias_w = r->bias_mode == CUDNN_RNN_SINGLE_INP_BIAS || r->bias_mode == CUDNN_RNN_DOUBLE_BIAS;
    g->bias_r = r->bias_mode == CUDNN_RNN_SINGLE_REC_BIAS || r->bias_mode == CUDNN_RNN_DOUBLE_BIAS;
}

int fdnn_rnn_layer_in(const fdnn_rnn_geom *g, int layer) { return layer == 0 ? g->in0 : g->D * g->P; }

static int64_t pl_count(const fdnn_rnn_geom *g, int layer)
{
    int64_t n = 0, GH = (int64_t)g->G * g->H;
    if (!(g->skip && layer == 0)) n += GH * fdnn_rnn_layer_in(g, layer);
    n += GH * g->P;
    if (g->has_proj) n += (int64_t)g->P * g->H;
    if (g->bias_w) n += GH;
    if (g->bias_r) n += GH;
    return n;
}

int64_t fdnn_rnn_weight_count(const fdnn_rnn_geom *g)
{
    int64_t n = 0;
    for (int l = 0; l < g->L; l++) n += g->D * pl_count(g, l);
    return n;
}

int64_t fdnn_rnn_param(const fdnn_rnn_geom *g, int pl, int id, int is_bias, int *rows, int *cols)
{
    int layer = pl / g->D, G = g->G, H = g->H, P = g->P;
    int64_t base = 0;
    for (int q = 0; q < pl; q++) base += pl_count(g, q / g->D);
    int in = fdnn_rnn_layer_in(g, layer);
    int64_t wsz = (g->skip && layer == 0) ? 0 : (int64_t)H * in;
    int64_t o = base;
    if (g->has_proj && id == 8) {
        if (is_bias) return -1;
        *rows = P; *cols = H;
        return base + G * wsz + (int64_t)G * H * P;
    }
    if (id < 0 || id >= 2 * G) return -1;
    if (!is_bias) {
        if (id < G) {
            if (wsz == 0) return -1;
            *rows = H; *cols = in;
            return o + id * wsz;
        }
        *rows = H; *cols = P;
        return o + G * wsz + (int64_t)(id - G) * H * P;
    }
    o += G * wsz + (int64_t)G * H * P + (g->has_proj ? (int64_t)P * H : 0);
    *rows = H; *cols = 1;
    if (id < G) return g->bias_w ? o + (int64_t)id * H : -1;
    if (!g->bias_r) return -1;
    return o + (g->bias_w ? (int64_t)G * H : 0) + (int64_t)(id - G) * H;
}

/* ---------------------------------------------------------------- scratch layout */
typedef struct {
    int64_t X[64], gates[128], c[128], craw[128], hh[128], hp[128], ghr[128], dpre[128], dproj[128], total;
} res_layout;

static int64_t res_build(const fdnn_rnn_geom *g, int T, int N, res_layout *rl)
{
    int64_t o = 0, TN = (int64_t)T * N;
    for (int l = 0; l < g->L; l++) {
        if (rl) rl->X[l] = o;
        o += TN * fdnn_rnn_layer_in(g, l);
        for (int d = 0; d < g->D; d++) {
            int pl = l * g->D + d;
            if (rl) { rl->gates[pl] = o; } o += TN * g->G * g->H;
            if (rl) { rl->c[pl] = o; } o += TN * g->H;
            if (rl) { rl->craw[pl] = o; } o += TN * g->H;
            if (rl) { rl->hh[pl] = o; } o += TN * g->H;
            if (rl) { rl->hp[pl] = o; } o += TN * g->P;
            if (rl) { rl->ghr[pl] = o; } o += TN * g->H;
            if (rl) { rl->dpre[pl] = o; } o += TN * g->G * g->H;
            if (rl) { rl->dproj[pl] = o; } o += TN * g->P;
        }
    }
    if (rl) rl->total = o;
    return o;
}

size_t fdnn_rnn_reserve_bytes(const fdnn_rnn_geom *g, int T, int N) { return (size_t)res_build(g, T, N, NULL) * sizeof(double); }

static int max_in(const fdnn_rnn_geom *g) { return g->in0 > g->D * g->P ? g->in0 : g->D * g->P; }

/* workspace: weights (double) | dY (T*N*D*P) | dX (T*N*maxin) | Rh N*G*H | h N*P | c N*H | dh N*P | dc N*H | tmp N*G*H | [reserve] */
static int64_t work_doubles(const fdnn_rnn_geom *g, int T, int N)
{
    int64_t TN = (int64_t)T * N;
    return fdnn_rnn_weight_count(g) + TN * g->D * g->P + TN * max_in(g) + (int64_t)N * (2 * g->G * g->H + 2 * g->P + 2 * g->H) + 16 +
           (N + T + 2);
}

int64_t fdnn_rnn_work_doubles(const fdnn_rnn_geom *g, int T, int N) { return work_doubles(g, T, N); }

size_t fdnn_rnn_work_bytes(const fdnn_rnn_geom *g, int T, int N, int training)
{
    size_t b = (size_t)work_doubles(g, T, N) * sizeof(double);
    if (!training) b += fdnn_rnn_reserve_bytes(g, T, N);
    return b;
}

int64_t fdnn_rnn_io_off(const fdnn_rnn_io *io, int t, int n)
{
    switch (io->layout) {
    case CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED: return ((int64_t)t * io->N + n) * io->V;
    case CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED: return ((int64_t)n * io->T + t) * io->V;
    default: return (io->pack_off[t] + n) * io->V;
    }
}

/* ---------------------------------------------------------------- helpers */
static inline double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

typedef struct {
    const fdnn_rnn_run *r;
    res_layout rl;
    double *res, *W, *dY, *dX, *Rh, *hs, *cs, *dh, *dc, *tmp;
} ctx_t;

static void ctx_init(ctx_t *c, const fdnn_rnn_run *r)
{
    const fdnn_rnn_geom *g = &r->g;
    c->r = r;
    res_build(g, r->T, r->N, &c->rl);
    double *w = (double *)r->work;
    int64_t TN = (int64_t)r->T * r->N, o = 0;
    c->W = w + o; o += fdnn_rnn_weight_count(g);
    c->dY = w + o; o += TN * g->D * g->P;
    c->dX = w + o; o += TN * max_in(g);
    c->Rh = w + o; o += (int64_t)r->N * g->G * g->H;
    c->hs = w + o; o += (int64_t)r->N * g->P;
    c->cs = w + o; o += (int64_t)r->N * g->H;
    c->dh = w + o; o += (int64_t)r->N * g->P;
    c->dc = w + o; o += (int64_t)r->N * g->H;
    c->tmp = w + o; o += (int64_t)r->N * g->G * g->H;
    c->res = r->training ? (double *)r->reserve : w + work_doubles(g, r->T, r->N);
    int64_t nw = fdnn_rnn_weight_count(g);
    for (int64_t i = 0; i < nw; i++) c->W[i] = fdnn_load(r->w, r->dtype, i);
}

static const double *param(const ctx_t *c, int pl, int id, int is_bias)
{
    int rows, cols;
    int64_t o = fdnn_rnn_param(&c->r->g, pl, id, is_bias, &rows, &cols);
    return o < 0 ? NULL : c->W + o;
}

/* time index of step s of sequence n in direction d; -1 when the sequence is finished */
static inline int tidx(int d, int s, int len) { return s < len ? (d == 0 ? s : len - 1 - s) : -1; }

static void fill_padding(const fdnn_rnn_io *io, void *p)
{
    if (!io->has_fill || io->layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED) return;
    for (int n = 0; n < io->N; n++)
        for (int t = io->len[n]; t < io->T; t++) {
            int64_t o = fdnn_rnn_io_off(io, t, n);
            for (int v = 0; v < io->V; v++) fdnn_store(p, io->dtype, o + v, io->fill);
        }
}

static int dropout_on(const fdnn_rnn_run *r)
{
    const struct cudnnDropoutStruct *dd = r->desc->dropout;
    return dd && dd->magic == FDNN_MAGIC_DROPOUT && dd->is_set && dd->dropout > 0 && r->g.L > 1;
}

/* mask of element (t, n, v) of the output of layer l: Philox stream offset l, index (t*N+n)*V+v */
static inline double drop_scale(const fdnn_rnn_run *r, int l, int64_t idx)
{
    const struct cudnnDropoutStruct *dd = r->desc->dropout;
    if (dd->dropout >= 1.0f) return 0.0;
    return fdnn_dropout_keep(dd->seed, (uint64_t)l, (uint64_t)idx, dd->dropout) ? 1.0 / (1.0 - dd->dropout) : 0.0;
}

/* ---------------------------------------------------------------- forward */
cudnnStatus_t fdnn_rnn_cpu_forward(const fdnn_rnn_run *r, const fdnn_rnn_io *xio, const void *x, const fdnn_rnn_io *yio, void *y,
                                   const void *hx, void *hy, const void *cx, void *cy)
{
    if (r->handle && r->handle->backend == FDNN_BACKEND_CUDA) return fdnn_rnn_cuda_forward(r, xio, x, yio, y, hx, hy, cx, cy);
    ctx_t c;
    ctx_init(&c, r);
    const fdnn_rnn_geom *g = &r->g;
    int T = r->T, N = r->N, G = g->G, H = g->H, P = g->P, D = g->D, GH = G * H;
    int64_t TN = (int64_t)T * N;
    int lstm = g->mode == CUDNN_LSTM, gru = g->mode == CUDNN_GRU;
    const struct cudnnRNNStruct *rd = r->desc;
    int clip = lstm && rd->clip_mode == CUDNN_RNN_CLIP_MINMAX;
    /* layer 0 input */
    double *X0 = c.res + c.rl.X[0];
    memset(X0, 0, sizeof(double) * (size_t)(TN * g->in0));
    for (int n = 0; n < N; n++)
        for (int t = 0; t < r->len[n]; t++) {
            int64_t o = fdnn_rnn_io_off(xio, t, n);
            for (int v = 0; v < g->in0; v++) X0[((int64_t)t * N + n) * g->in0 + v] = fdnn_load(x, xio->dtype, o + v);
        }
    for (int l = 0; l < g->L; l++) {
        int in = fdnn_rnn_layer_in(g, l);
        const double *X = c.res + c.rl.X[l];
        double *Y = l + 1 < g->L ? c.res + c.rl.X[l + 1] : c.dY; /* layer output (T*N*D*P) */
        memset(Y, 0, sizeof(double) * (size_t)(TN * D * P));
        for (int d = 0; d < D; d++) {
            int pl = l * D + d;
            double *gates = c.res + c.rl.gates[pl], *cc = c.res + c.rl.c[pl], *craw = c.res + c.rl.craw[pl];
            double *hh = c.res + c.rl.hh[pl], *hp = c.res + c.rl.hp[pl], *ghr = c.res + c.rl.ghr[pl];
            /* input contributions for all steps: gates = X W^T + bW */
            if (g->skip && l == 0) {
                for (int64_t rI = 0; rI < TN; rI++)
                    for (int k = 0; k < G; k++)
                        for (int i = 0; i < H; i++) gates[rI * GH + k * H + i] = X[rI * in + i];
            } else {
                for (int k = 0; k < G; k++)
                    fdnn_rnn_dgemm(0, 1, (int)TN, H, in, 1.0, X, in, param(&c, pl, k, 0), in, 0.0, gates + k * H, GH);
            }
            if (g->bias_w)
                for (int k = 0; k < G; k++) {
                    const double *b = param(&c, pl, k, 1);
                    for (int64_t rI = 0; rI < TN; rI++)
                        for (int i = 0; i < H; i++) gates[rI * GH + k * H + i] += b[i];
                }
            /* initial state */
            for (int n = 0; n < N; n++) {
                for (int j = 0; j < P; j++) c.hs[n * P + j] = hx ? fdnn_load(hx, r->dtype, ((int64_t)pl * N + n) * P + j) : 0.0;
                for (int j = 0; j < H; j++) c.cs[n * H + j] = (lstm && cx) ? fdnn_load(cx, r->dtype, ((int64_t)pl * N + n) * H + j) : 0.0;
            }
            for (int s = 0; s < T; s++) {
                /* Rh = h R^T (+ bR) for every gate */
                for (int k = 0; k < G; k++)
                    fdnn_rnn_dgemm(0, 1, N, H, P, 1.0, c.hs, P, param(&c, pl, G + k, 0), P, 0.0, c.Rh + k * H, GH);
                if (g->bias_r)
                    for (int k = 0; k < G; k++) {
                        const double *b = param(&c, pl, G + k, 1);
                        for (int n = 0; n < N; n++)
                            for (int i = 0; i < H; i++) c.Rh[n * GH + k * H + i] += b[i];
                    }
                for (int n = 0; n < N; n++) {
                    int t = tidx(d, s, r->len[n]);
                    if (t < 0) continue;
                    int64_t row = (int64_t)t * N + n;
                    double *gt = gates + row * GH, *rh = c.Rh + (int64_t)n * GH;
                    double *hcur = hh + row * H;
                    if (lstm) {
                        for (int i = 0; i < H; i++) {
                            double ig = sigm(gt[i] + rh[i]), fg = sigm(gt[H + i] + rh[H + i]);
                            double gg = tanh(gt[2 * H + i] + rh[2 * H + i]), og = sigm(gt[3 * H + i] + rh[3 * H + i]);
                            double cn = fg * c.cs[n * H + i] + ig * gg;
                            craw[row * H + i] = cn;
                            if (clip) {
                                if (cn < rd->lclip) cn = rd->lclip;
                                else if (cn > rd->rclip) cn = rd->rclip;
                            }
                            gt[i] = ig; gt[H + i] = fg; gt[2 * H + i] = gg; gt[3 * H + i] = og;
                            cc[row * H + i] = cn;
                            c.cs[n * H + i] = cn;
                            hcur[i] = og * tanh(cn);
                        }
                    } else if (gru) {
                        for (int i = 0; i < H; i++) {
                            double rg = sigm(gt[i] + rh[i]), zg = sigm(gt[H + i] + rh[H + i]);
                            double hn = tanh(gt[2 * H + i] + rg * rh[2 * H + i]);
                            ghr[row * H + i] = rh[2 * H + i];
                            gt[i] = rg; gt[H + i] = zg; gt[2 * H + i] = hn;
                            hcur[i] = (1 - zg) * hn + zg * c.hs[n * P + i];
                        }
                    } else {
                        for (int i = 0; i < H; i++) {
                            double p = gt[i] + rh[i];
                            double v = g->mode == CUDNN_RNN_RELU ? (p > 0 ? p : 0) : tanh(p);
                            gt[i] = v;
                            hcur[i] = v;
                        }
                    }
                    double *hout = hp + row * P;
                    if (g->has_proj) fdnn_rnn_dgemm(0, 1, 1, P, H, 1.0, hcur, H, param(&c, pl, 8, 0), H, 0.0, hout, P);
                    else memcpy(hout, hcur, sizeof(double) * (size_t)H);
                    memcpy(c.hs + (int64_t)n * P, hout, sizeof(double) * (size_t)P);
                    memcpy(Y + row * D * P + d * P, hout, sizeof(double) * (size_t)P);
                }
            }
            for (int n = 0; n < N; n++) {
                if (hy) for (int j = 0; j < P; j++) fdnn_store(hy, r->dtype, ((int64_t)pl * N + n) * P + j, c.hs[n * P + j]);
                if (lstm && cy) for (int j = 0; j < H; j++) fdnn_store(cy, r->dtype, ((int64_t)pl * N + n) * H + j, c.cs[n * H + j]);
            }
        }
        if (l + 1 < g->L && r->training && dropout_on(r)) {
            for (int n = 0; n < N; n++)
                for (int t = 0; t < r->len[n]; t++)
                    for (int v = 0; v < D * P; v++) {
                        int64_t idx = ((int64_t)t * N + n) * D * P + v;
                        Y[idx] *= drop_scale(r, l, idx);
                    }
        }
    }
    for (int n = 0; n < N; n++)
        for (int t = 0; t < r->len[n]; t++) {
            int64_t o = fdnn_rnn_io_off(yio, t, n);
            for (int v = 0; v < D * P; v++) fdnn_store(y, yio->dtype, o + v, c.dY[((int64_t)t * N + n) * D * P + v]);
        }
    fill_padding(yio, y);
    return CUDNN_STATUS_SUCCESS;
}

/* ---------------------------------------------------------------- backward data */
cudnnStatus_t fdnn_rnn_cpu_backward_data(const fdnn_rnn_run *r, const fdnn_rnn_io *yio, const void *dy, const fdnn_rnn_io *xio, void *dx,
                                         const void *hx, const void *dhy, void *dhx, const void *cx, const void *dcy, void *dcx)
{
    if (r->handle && r->handle->backend == FDNN_BACKEND_CUDA)
        return fdnn_rnn_cuda_backward_data(r, yio, dy, xio, dx, hx, dhy, dhx, cx, dcy, dcx);
    ctx_t c;
    ctx_init(&c, r);
    const fdnn_rnn_geom *g = &r->g;
    int T = r->T, N = r->N, G = g->G, H = g->H, P = g->P, D = g->D, GH = G * H;
    int64_t TN = (int64_t)T * N;
    int lstm = g->mode == CUDNN_LSTM, gru = g->mode == CUDNN_GRU;
    const struct cudnnRNNStruct *rd = r->desc;
    int clip = lstm && rd->clip_mode == CUDNN_RNN_CLIP_MINMAX;
    /* dY of the top layer */
    memset(c.dY, 0, sizeof(double) * (size_t)(TN * D * P));
    for (int n = 0; n < N; n++)
        for (int t = 0; t < r->len[n]; t++) {
            int64_t o = fdnn_rnn_io_off(yio, t, n);
            for (int v = 0; v < D * P; v++) c.dY[((int64_t)t * N + n) * D * P + v] = fdnn_load(dy, yio->dtype, o + v);
        }
    for (int l = g->L - 1; l >= 0; l--) {
        int in = fdnn_rnn_layer_in(g, l);
        memset(c.dX, 0, sizeof(double) * (size_t)(TN * in));
        for (int d = 0; d < D; d++) {
            int pl = l * D + d;
            double *gates = c.res + c.rl.gates[pl], *cc = c.res + c.rl.c[pl], *craw = c.res + c.rl.craw[pl];
            double *hh = c.res + c.rl.hh[pl], *hp = c.res + c.rl.hp[pl], *ghr = c.res + c.rl.ghr[pl];
            double *dpre = c.res + c.rl.dpre[pl], *dproj = c.res + c.rl.dproj[pl];
            memset(dpre, 0, sizeof(double) * (size_t)(TN * GH));
            memset(dproj, 0, sizeof(double) * (size_t)(TN * P));
            for (int n = 0; n < N; n++) {
                for (int j = 0; j < P; j++) c.dh[n * P + j] = dhy ? fdnn_load(dhy, r->dtype, ((int64_t)pl * N + n) * P + j) : 0.0;
                for (int j = 0; j < H; j++) c.dc[n * H + j] = (lstm && dcy) ? fdnn_load(dcy, r->dtype, ((int64_t)pl * N + n) * H + j) : 0.0;
            }
            for (int s = T - 1; s >= 0; s--) {
                memset(c.tmp, 0, sizeof(double) * (size_t)N * GH); /* R-side pre-activation gradients */
                for (int n = 0; n < N; n++) {
                    int t = tidx(d, s, r->len[n]);
                    if (t < 0) continue;
                    int tp = d == 0 ? t - 1 : t + 1; /* previous step in processing order */
                    int first = s == 0;
                    int64_t row = (int64_t)t * N + n, prow = (int64_t)tp * N + n;
                    double *dhp = dproj + row * P, *gt = gates + row * GH, *dp = dpre + row * GH, *dr = c.tmp + (int64_t)n * GH;
                    for (int j = 0; j < P; j++) dhp[j] = c.dY[row * D * P + d * P + j] + c.dh[n * P + j];
                    double *dhh = c.Rh + (int64_t)n * GH; /* scratch of H entries */
                    if (g->has_proj) fdnn_rnn_dgemm(0, 0, 1, H, P, 1.0, dhp, P, param(&c, pl, 8, 0), H, 0.0, dhh, H);
                    else memcpy(dhh, dhp, sizeof(double) * (size_t)H);
                    if (lstm) {
                        for (int i = 0; i < H; i++) {
                            double ig = gt[i], fg = gt[H + i], gg = gt[2 * H + i], og = gt[3 * H + i];
                            double ct = cc[row * H + i], th = tanh(ct);
                            double cprev = first ? (cx ? fdnn_load(cx, r->dtype, ((int64_t)pl * N + n) * H + i) : 0.0) : cc[prow * H + i];
                            double dct = c.dc[n * H + i] + dhh[i] * og * (1 - th * th);
                            if (clip && (craw[row * H + i] < rd->lclip || craw[row * H + i] > rd->rclip)) dct = 0;
                            dp[i] = dct * gg * ig * (1 - ig);
                            dp[H + i] = dct * cprev * fg * (1 - fg);
                            dp[2 * H + i] = dct * ig * (1 - gg * gg);
                            dp[3 * H + i] = dhh[i] * th * og * (1 - og);
                            c.dc[n * H + i] = dct * fg;
                        }
                        memcpy(dr, dp, sizeof(double) * (size_t)GH);
                    } else if (gru) {
                        for (int i = 0; i < H; i++) {
                            double rg = gt[i], zg = gt[H + i], hn = gt[2 * H + i];
                            double hprev = first ? (hx ? fdnn_load(hx, r->dtype, ((int64_t)pl * N + n) * P + i) : 0.0) : hp[prow * P + i];
                            double dhn = dhh[i] * (1 - zg), dz = dhh[i] * (hprev - hn);
                            double dph = dhn * (1 - hn * hn);
                            dp[2 * H + i] = dph;
                            dr[2 * H + i] = dph * rg;
                            double drg = dph * ghr[row * H + i];
                            dp[i] = dr[i] = drg * rg * (1 - rg);
                            dp[H + i] = dr[H + i] = dz * zg * (1 - zg);
                            c.dh[n * P + i] = dhh[i] * zg; /* direct path; R^T part added below */
                        }
                    } else {
                        for (int i = 0; i < H; i++) {
                            double v = gt[i];
                            double der = g->mode == CUDNN_RNN_RELU ? (v > 0 ? 1.0 : 0.0) : 1 - v * v;
                            dp[i] = dr[i] = dhh[i] * der;
                        }
                    }
                    (void)hh;
                }
                /* dh_prev = dr R (summed over gates) (+ GRU direct path) */
                for (int n = 0; n < N; n++)
                    if (tidx(d, s, r->len[n]) >= 0 && !gru) memset(c.dh + (int64_t)n * P, 0, sizeof(double) * (size_t)P);
                for (int n = 0; n < N; n++) {
                    if (tidx(d, s, r->len[n]) < 0) continue;
                    for (int k = 0; k < G; k++)
                        fdnn_rnn_dgemm(0, 0, 1, P, H, 1.0, c.tmp + (int64_t)n * GH + k * H, H, param(&c, pl, G + k, 0), P, 1.0, c.dh + (int64_t)n * P, P);
                }
            }
            for (int n = 0; n < N; n++) {
                if (dhx) for (int j = 0; j < P; j++) fdnn_store(dhx, r->dtype, ((int64_t)pl * N + n) * P + j, c.dh[n * P + j]);
                if (lstm && dcx) for (int j = 0; j < H; j++) fdnn_store(dcx, r->dtype, ((int64_t)pl * N + n) * H + j, c.dc[n * H + j]);
            }
            /* dX += dpre W */
            if (g->skip && l == 0) {
                for (int64_t rI = 0; rI < TN; rI++)
                    for (int k = 0; k < G; k++)
                        for (int i = 0; i < H; i++) c.dX[rI * in + i] += dpre[rI * GH + k * H + i];
            } else {
                for (int k = 0; k < G; k++)
                    fdnn_rnn_dgemm(0, 0, (int)TN, in, H, 1.0, dpre + k * H, GH, param(&c, pl, k, 0), in, 1.0, c.dX, in);
            }
        }
        if (l > 0) {
            /* dY of the layer below: through its dropout */
            memcpy(c.dY, c.dX, sizeof(double) * (size_t)(TN * in));
            if (r->training && dropout_on(r))
                for (int64_t i = 0; i < TN * in; i++) c.dY[i] *= drop_scale(r, l - 1, i);
        }
    }
    for (int n = 0; n < N; n++)
        for (int t = 0; t < r->len[n]; t++) {
            int64_t o = fdnn_rnn_io_off(xio, t, n);
            for (int v = 0; v < g->in0; v++) fdnn_store(dx, xio->dtype, o + v, c.dX[((int64_t)t * N + n) * g->in0 + v]);
        }
    fill_padding(xio, dx);
    return CUDNN_STATUS_SUCCESS;
}

/* ---------------------------------------------------------------- backward weights */
static void acc_store(void *dw, cudnnDataType_t dt, int64_t o, double v, int add)
{
    fdnn_store(dw, dt, o, add ? fdnn_load(dw, dt, o) + v : v);
}

cudnnStatus_t fdnn_rnn_cpu_backward_weights(const fdnn_rnn_run *r, int add, const void *hx, void *dw)
{
    if (r->handle && r->handle->backend == FDNN_BACKEND_CUDA) return fdnn_rnn_cuda_backward_weights(r, add, hx, dw);
    ctx_t c;
    ctx_init(&c, r);
    const fdnn_rnn_geom *g = &r->g;
    int T = r->T, N = r->N, G = g->G, H = g->H, P = g->P, D = g->D, GH = G * H;
    int64_t TN = (int64_t)T * N;
    double *grad = c.W; /* reuse the weight copy as the gradient accumulator */
    int64_t nw = fdnn_rnn_weight_count(g);
    memset(grad, 0, sizeof(double) * (size_t)nw);
    double *hprev = c.dY; /* T*N*P <= T*N*D*P */
    for (int l = 0; l < g->L; l++) {
        int in = fdnn_rnn_layer_in(g, l);
        const double *X = c.res + c.rl.X[l];
        for (int d = 0; d < D; d++) {
            int pl = l * D + d, rows, cols;
            double *gates = c.res + c.rl.gates[pl], *hh = c.res + c.rl.hh[pl], *hp = c.res + c.rl.hp[pl];
            double *dpre = c.res + c.rl.dpre[pl], *dproj = c.res + c.rl.dproj[pl];
            /* previous states */
            memset(hprev, 0, sizeof(double) * (size_t)(TN * P));
            for (int n = 0; n < N; n++)
                for (int s = 0; s < r->len[n]; s++) {
                    int t = tidx(d, s, r->len[n]);
                    int tp = d == 0 ? t - 1 : t + 1;
                    for (int j = 0; j < P; j++)
                        hprev[((int64_t)t * N + n) * P + j] =
                            s == 0 ? (hx ? fdnn_load(hx, r->dtype, ((int64_t)pl * N + n) * P + j) : 0.0) : hp[((int64_t)tp * N + n) * P + j];
                }
            for (int k = 0; k < G; k++) {
                int64_t o = fdnn_rnn_param(g, pl, k, 0, &rows, &cols);
                if (o >= 0) fdnn_rnn_dgemm(1, 0, H, in, (int)TN, 1.0, dpre + k * H, GH, X, in, 0.0, grad + o, in);
                o = fdnn_rnn_param(g, pl, k, 1, &rows, &cols);
                if (o >= 0)
                    for (int64_t rI = 0; rI < TN; rI++)
                        for (int i = 0; i < H; i++) grad[o + i] += dpre[rI * GH + k * H + i];
            }
            /* R-side gradients: equal to dpre except the GRU candidate gate (times r) */
            double *gru_dr = NULL;
            if (g->mode == CUDNN_GRU) {
                gru_dr = malloc(sizeof(double) * (size_t)(TN * H));
                for (int64_t rI = 0; rI < TN; rI++)
                    for (int i = 0; i < H; i++) gru_dr[rI * H + i] = dpre[rI * GH + 2 * H + i] * gates[rI * GH + i];
            }
            for (int k = 0; k < G; k++) {
                const double *src = (gru_dr && k == 2) ? gru_dr : dpre + k * H;
                int lds = (gru_dr && k == 2) ? H : GH;
                int64_t o = fdnn_rnn_param(g, pl, G + k, 0, &rows, &cols);
                fdnn_rnn_dgemm(1, 0, H, P, (int)TN, 1.0, src, lds, hprev, P, 0.0, grad + o, P);
                o = fdnn_rnn_param(g, pl, G + k, 1, &rows, &cols);
                if (o >= 0)
                    for (int64_t rI = 0; rI < TN; rI++)
                        for (int i = 0; i < H; i++) grad[o + i] += src[rI * lds + i];
            }
            free(gru_dr);
            if (g->has_proj) {
                int64_t o = fdnn_rnn_param(g, pl, 8, 0, &rows, &cols);
                fdnn_rnn_dgemm(1, 0, P, H, (int)TN, 1.0, dproj, P, hh, H, 0.0, grad + o, H);
            }
        }
    }
    for (int64_t i = 0; i < nw; i++) acc_store(dw, r->dtype, i, grad[i], add);
    return CUDNN_STATUS_SUCCESS;
}
