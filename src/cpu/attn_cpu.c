/* Multi-head attention engine (CPU): projections through the RNN engine's GEMM, per-head
 * windowed softmax attention, output projection, dropout masks from Philox. Math and buffer
 * layouts: docs/attention.md. */
#include <math.h>
#include <string.h>
#include "attn_cpu.h"
#include "rnn_cpu.h"
#include "../core/philox.h"
#include "../cuda/cuda_adv.h"

static int pos(int v) { return v > 0 ? v : 0; }

void fdnn_attn_geom_of(const struct cudnnAttnStruct *a, fdnn_attn_geom *g)
{
    memset(g, 0, sizeof *g);
    g->H = a->n_heads;
    g->qS = a->q_size; g->kS = a->k_size; g->vS = a->v_size;
    g->qP = pos(a->q_proj); g->kP = pos(a->k_proj); g->vP = pos(a->v_proj); g->oP = pos(a->o_proj);
    g->Qp = g->qP ? g->qP : g->qS;
    g->Kp = g->kP ? g->kP : g->kS;
    g->Vp = g->vP ? g->vP : g->vS;
    g->O = g->oP ? g->oP : g->H * g->Vp;
    g->bias = (a->mode & CUDNN_ATTN_ENABLE_PROJ_BIASES) != 0;
    g->one_to_one = (a->mode & CUDNN_ATTN_QUERYMAP_ONE_TO_ONE) != 0;
    g->scale = a->sm_scaler;
    g->Tq = a->qo_max_seq; g->Tk = a->kv_max_seq; g->B = a->max_batch; g->Mq = a->max_beam; g->Mkv = a->max_beam;
}

int64_t fdnn_attn_weight_off(const fdnn_attn_geom *g, int kind, int dims[3], int strides[3])
{
    /* kinds in order: Q, K, V, O weights, then Q, K, V, O biases. A weight matrix of kind Q
     * is stored transposed, row-major [qSize][nHeads*qProjSize]: element (head h, row p,
     * column e) of the [nHeads, qProjSize, qSize] view is at e*nHeads*qProjSize + h*qProjSize + p
     * (strides [qProjSize, 1, nHeads*qProjSize]); K and V alike. O is row-major
     * [nHeads*vProj][oProjSize]: (h, o, c) at (h*vProj + c)*oProjSize + o (strides
     * [vProj*oProjSize, 1, oProjSize]). Biases are packed [nHeads, proj, 1] ([1, oProj, 1]). */
    int64_t off = 0;
    for (int k = 0; k < 8; k++) {
        int d0 = 0, d1 = 0, d2 = 0, s0 = 0, s1 = 1, s2 = 1;
        switch (k) {
        case 0: if (g->qP) { d0 = g->H; d1 = g->qP; d2 = g->qS; s0 = g->qP; s2 = g->H * g->qP; } break;
        case 1: if (g->kP) { d0 = g->H; d1 = g->kP; d2 = g->kS; s0 = g->kP; s2 = g->H * g->kP; } break;
        case 2: if (g->vP) { d0 = g->H; d1 = g->vP; d2 = g->vS; s0 = g->vP; s2 = g->H * g->vP; } break;
        case 3: if (g->oP) { d0 = g->H; d1 = g->oP; d2 = g->Vp; s0 = g->Vp * g->oP; s2 = g->oP; } break;
        case 4: if (g->bias && g->qP) { d0 = g->H; d1 = g->qP; d2 = 1; s0 = g->qP; } break;
        case 5: if (g->bias && g->kP) { d0 = g->H; d1 = g->kP; d2 = 1; s0 = g->kP; } break;
        case 6: if (g->bias && g->vP) { d0 = g->H; d1 = g->vP; d2 = 1; s0 = g->vP; } break;
        default: if (g->bias && g->oP) { d0 = 1; d1 = g->oP; d2 = 1; s0 = g->oP; } break;
        }
        if (k == kind) {
            if (dims) { dims[0] = d0; dims[1] = d1; dims[2] = d2; }
            if (strides) { strides[0] = s0; strides[1] = s1; strides[2] = s2; }
            return d0 ? off : -1;
        }
        off += (int64_t)d0 * d1 * d2;
    }
    return off; /* kind 8: the total */
}

int64_t fdnn_attn_weight_count(const fdnn_attn_geom *g) { return fdnn_attn_weight_off(g, 8, NULL, NULL); }

/* ------------------------------------------------------------ buffer layouts (doubles) */
typedef struct {
    int64_t Sq, Skv, rq, rk; /* sequences, rows (sequence x time) of Q/O and K/V */
    int64_t nqb, nkb, nvb, npr, nhd;
} sizes_t;

static void sizes_of(const fdnn_attn_geom *g, sizes_t *z)
{
    z->Sq = (int64_t)g->B * g->Mq;
    z->Skv = (int64_t)g->B * g->Mkv;
    z->rq = z->Sq * g->Tq;
    z->rk = z->Skv * g->Tk;
    z->nqb = z->rq * g->H * g->Qp;
    z->nkb = z->rk * g->H * g->Kp;
    z->nvb = z->rk * g->H * g->Vp;
    z->npr = z->rq * g->H * g->Tk;
    z->nhd = z->rq * g->H * g->Vp;
}
static int64_t fwd_doubles(const sizes_t *z) { return z->nqb + z->nkb + z->nvb + z->npr + z->nhd; }

size_t fdnn_attn_reserve_bytes(const fdnn_attn_geom *g)
{
    sizes_t z;
    sizes_of(g, &z);
    return (size_t)(fwd_doubles(&z) + z.nqb + z.nkb + z.nvb) * sizeof(double);
}

size_t fdnn_attn_work_bytes(const fdnn_attn_geom *g)
{
    sizes_t z;
    sizes_of(g, &z);
    int64_t n = fdnn_attn_weight_count(g) + fwd_doubles(&z) + z.rq * g->qS + z.rk * (g->kS + g->vS) + z.rq * g->O + z.nhd;
    /* the CUDA engine's extra [rows x heads x Tk] buffer and its int copies of lengths and windows */
    n += z.npr + (z.Sq + z.Skv + 2 * (int64_t)g->Tq + 1) / 2 + 1;
    /* the CUDA engine's pointer arrays for its batched GEMMs over (group x head) */
    n += 3 * z.Sq * g->H + 1;
    return (size_t)n * sizeof(double);
}

typedef struct {
    double *W, *QB, *KB, *VB, *PR, *HD, *DQB, *DKB, *DVB, *XQ, *XK, *XV, *Y, *DHD;
} bufs_t;

static void bufs_of(const fdnn_attn_run *r, const sizes_t *z, bufs_t *b)
{
    double *w = r->work;
    b->W = w; w += fdnn_attn_weight_count(&r->g);
    double *f = r->res ? r->res : w;
    if (!r->res) w += fwd_doubles(z);
    b->QB = f; f += z->nqb;
    b->KB = f; f += z->nkb;
    b->VB = f; f += z->nvb;
    b->PR = f; f += z->npr;
    b->HD = f; f += z->nhd;
    b->DQB = f; f += z->nqb; /* only inside the reserve space */
    b->DKB = f; f += z->nkb;
    b->DVB = f;
    b->XQ = w; w += z->rq * r->g.qS;
    b->XK = w; w += z->rk * r->g.kS;
    b->XV = w; w += z->rk * r->g.vS;
    b->Y = w; w += z->rq * r->g.O;
    b->DHD = w;
}

/* element (s, t, 0) of sequence data; s = b*beam + m */
static int64_t sd_off(const struct cudnnSeqDataStruct *d, int64_t s, int t)
{
    int M = d->dim[CUDNN_SEQDATA_BEAM_DIM];
    return (int64_t)t * d->stride[CUDNN_SEQDATA_TIME_DIM] + (s / M) * d->stride[CUDNN_SEQDATA_BATCH_DIM] +
           (s % M) * d->stride[CUDNN_SEQDATA_BEAM_DIM];
}

/* dense rows [S][T][V] <- valid positions of x (others 0); only time step only_t when >= 0 */
static void gather(const struct cudnnSeqDataStruct *d, const void *x, cudnnDataType_t dt, int64_t S, int T, int V, const int *len, int only_t,
                   double *X)
{
    int64_t vs = d->stride[CUDNN_SEQDATA_VECT_DIM];
#pragma omp parallel for if(S * T * V > 32768)
    for (int64_t s = 0; s < S; s++)
        for (int t = 0; t < T; t++) {
            double *row = X + (s * T + t) * V;
            if (t >= len[s] || (only_t >= 0 && t != only_t)) { memset(row, 0, sizeof(double) * (size_t)V); continue; }
            int64_t o = sd_off(d, s, t);
            for (int v = 0; v < V; v++) row[v] = fdnn_load(x, dt, o + v * vs);
        }
}

/* valid positions of y <- dense rows; padding gets the descriptor's fill when it has one */
static void scatter(const struct cudnnSeqDataStruct *d, void *y, cudnnDataType_t dt, int64_t S, int T, int V, const int *len, int only_t,
                    const double *X, const double *pad_row)
{
    int64_t vs = d->stride[CUDNN_SEQDATA_VECT_DIM];
#pragma omp parallel for if(S * T * V > 32768)
    for (int64_t s = 0; s < S; s++)
        for (int t = 0; t < T; t++) {
            if (only_t >= 0 && t != only_t) continue;
            int64_t o = sd_off(d, s, t);
            if (t >= len[s]) {
                if (d->has_fill)
                    for (int v = 0; v < V; v++) fdnn_store(y, dt, o + v * vs, d->fill);
                else if (pad_row)
                    for (int v = 0; v < V; v++) fdnn_store(y, dt, o + v * vs, pad_row[v]);
                continue;
            }
            const double *row = X + (s * T + t) * V;
            for (int v = 0; v < V; v++) fdnn_store(y, dt, o + v * vs, row[v]);
        }
}

static void load_weights(const fdnn_attn_run *r, double *W)
{
    int64_t n = fdnn_attn_weight_count(&r->g);
#pragma omp parallel for if(n > 32768)
    for (int64_t i = 0; i < n; i++) W[i] = fdnn_load(r->w, r->dt, i);
}

static double drop_mult(const struct cudnnDropoutStruct *d, uint64_t offset, uint64_t idx)
{
    if (!d) return 1.0;
    return fdnn_dropout_keep(d->seed, offset, idx, d->dropout) ? 1.0 / (1.0 - (double)d->dropout) : 0.0;
}

/* out[rows][H*P] (head i at column i*P) = X[rows][in] * WT + b with WT the transposed weights
 * [in][H*P], or X copied to every head */
static void project(const double *X, int64_t rows, int in, int H, int P, int has_w, const double *WT, const double *bias, double *out)
{
    if (has_w) {
        fdnn_rnn_dgemm(0, 0, (int)rows, H * P, in, 1.0, X, in, WT, H * P, 0.0, out, H * P);
        if (bias)
            for (int64_t rr = 0; rr < rows; rr++)
                for (int c = 0; c < H * P; c++) out[rr * H * P + c] += bias[c];
        return;
    }
    for (int i = 0; i < H; i++)
        for (int64_t rr = 0; rr < rows; rr++) memcpy(out + rr * H * P + (int64_t)i * P, X + rr * in, sizeof(double) * (size_t)in);
}

static const double *wptr(const fdnn_attn_run *r, const double *W, int kind)
{
    int64_t o = fdnn_attn_weight_off(&r->g, kind, NULL, NULL);
    return o < 0 ? NULL : W + o;
}

static void window(const fdnn_attn_run *r, int t, int lenkv, int *j0, int *j1)
{
    int lo = r->lo[t], hi = r->hi[t];
    if (lo < 0) lo = 0;
    if (hi > lenkv) hi = lenkv;
    *j0 = lo;
    *j1 = hi;
}

static int64_t kv_seq(const fdnn_attn_geom *g, int64_t s)
{
    return g->one_to_one ? s : (s / g->Mq) * g->Mkv;
}

cudnnStatus_t fdnn_attn_cpu_forward(const fdnn_attn_run *r, int currIdx, const struct cudnnSeqDataStruct *qd, const void *q, const void *resid,
                           const struct cudnnSeqDataStruct *kd, const void *k, const struct cudnnSeqDataStruct *vd, const void *v,
                           const struct cudnnSeqDataStruct *od, void *out)
{
    if (r->handle && r->handle->backend == FDNN_BACKEND_CUDA) return fdnn_attn_cuda_forward(r, currIdx, qd, q, resid, kd, k, vd, v, od, out);
    const fdnn_attn_geom *g = &r->g;
    sizes_t z;
    sizes_of(g, &z);
    bufs_t b;
    bufs_of(r, &z, &b);
    load_weights(r, b.W);
    gather(qd, q, r->dt, z.Sq, g->Tq, g->qS, r->lenq, currIdx, b.XQ);
    gather(kd, k, r->dt, z.Skv, g->Tk, g->kS, r->lenkv, -1, b.XK);
    gather(vd, v, r->dt, z.Skv, g->Tk, g->vS, r->lenkv, -1, b.XV);
    project(b.XQ, z.rq, g->qS, g->H, g->Qp, g->qP > 0, wptr(r, b.W, 0), wptr(r, b.W, 4), b.QB);
    project(b.XK, z.rk, g->kS, g->H, g->Kp, g->kP > 0, wptr(r, b.W, 1), wptr(r, b.W, 5), b.KB);
    project(b.XV, z.rk, g->vS, g->H, g->Vp, g->vP > 0, wptr(r, b.W, 2), wptr(r, b.W, 6), b.VB);
    memset(b.PR, 0, sizeof(double) * (size_t)z.npr);
    memset(b.HD, 0, sizeof(double) * (size_t)z.nhd);
    const int H = g->H, Tq = g->Tq, Tk = g->Tk, Qp = g->Qp, Vp = g->Vp;
#pragma omp parallel for collapse(2) if(z.npr * Qp > 65536)
    for (int64_t s = 0; s < z.Sq; s++)
        for (int i = 0; i < H; i++) {
            int64_t sk = kv_seq(g, s);
            for (int t = 0; t < r->lenq[s]; t++) {
                if (currIdx >= 0 && t != currIdx) continue;
                int64_t row = s * Tq + t;
                const double *qb = b.QB + (row * H + i) * Qp;
                double *p = b.PR + (row * H + i) * Tk, *hd = b.HD + (row * H + i) * Vp;
                int j0, j1;
                window(r, t, r->lenkv[sk], &j0, &j1);
                if (j0 >= j1) continue;
                double mx = -INFINITY;
                for (int j = j0; j < j1; j++) {
                    const double *kb = b.KB + ((sk * Tk + j) * H + i) * Qp;
                    double d = 0;
                    for (int c = 0; c < Qp; c++) d += qb[c] * kb[c];
                    p[j] = g->scale * d;
                    if (p[j] > mx) mx = p[j];
                }
                double sum = 0;
                for (int j = j0; j < j1; j++) { p[j] = exp(p[j] - mx); sum += p[j]; }
                for (int j = j0; j < j1; j++) {
                    p[j] /= sum;
                    double pj = p[j] * drop_mult(r->attn_drop, 0, (uint64_t)(((s * H + i) * Tq + t) * Tk + j));
                    const double *vb = b.VB + ((sk * Tk + j) * H + i) * Vp;
                    for (int c = 0; c < Vp; c++) hd[c] += pj * vb[c];
                }
            }
        }
    const int O = g->O;
    if (g->oP) {
        const double *Wo = wptr(r, b.W, 3), *bo = wptr(r, b.W, 7);
        fdnn_rnn_dgemm(0, 0, (int)z.rq, O, H * Vp, 1.0, b.HD, H * Vp, Wo, O, 0.0, b.Y, O);
        if (bo)
            for (int64_t rr = 0; rr < z.rq; rr++)
                for (int c = 0; c < O; c++) b.Y[rr * O + c] += bo[c];
    } else {
        memcpy(b.Y, b.HD, sizeof(double) * (size_t)z.nhd);
    }
    int64_t rvs = qd->stride[CUDNN_SEQDATA_VECT_DIM];
#pragma omp parallel for if(z.rq * O > 32768)
    for (int64_t s = 0; s < z.Sq; s++)
        for (int t = 0; t < r->lenq[s]; t++) {
            if (currIdx >= 0 && t != currIdx) continue;
            double *y = b.Y + (s * Tq + t) * O;
            if (r->post_drop)
                for (int c = 0; c < O; c++) y[c] *= drop_mult(r->post_drop, 1, (uint64_t)((s * Tq + t) * O + c));
            if (resid) {
                int64_t o = sd_off(qd, s, t);
                for (int c = 0; c < O; c++) y[c] += fdnn_load(resid, r->dt, o + c * rvs);
            }
        }
    /* padding rows of out (no fill value): the output projection of a zero attention vector,
     * i.e. the output bias, as NVIDIA's library writes them (measured, tests/compat) */
    scatter(od, out, r->dt, z.Sq, Tq, O, r->lenq, currIdx, b.Y, g->oP ? wptr(r, b.W, 7) : NULL);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_attn_cpu_backward_data(const fdnn_attn_run *r, const struct cudnnSeqDataStruct *dod, const void *dout,
                                 const struct cudnnSeqDataStruct *dqd, void *dq, const struct cudnnSeqDataStruct *dkd, void *dk,
                                 const struct cudnnSeqDataStruct *dvd, void *dv)
{
    if (r->handle && r->handle->backend == FDNN_BACKEND_CUDA) return fdnn_attn_cuda_backward_data(r, dod, dout, dqd, dq, dkd, dk, dvd, dv);
    const fdnn_attn_geom *g = &r->g;
    sizes_t z;
    sizes_of(g, &z);
    bufs_t b;
    bufs_of(r, &z, &b);
    load_weights(r, b.W);
    const int H = g->H, Tq = g->Tq, Tk = g->Tk, Qp = g->Qp, Vp = g->Vp, O = g->O;
    gather(dod, dout, r->dt, z.Sq, Tq, O, r->lenq, -1, b.Y);
    if (r->post_drop)
        for (int64_t s = 0; s < z.Sq; s++)
            for (int t = 0; t < r->lenq[s]; t++)
                for (int c = 0; c < O; c++) b.Y[(s * Tq + t) * O + c] *= drop_mult(r->post_drop, 1, (uint64_t)((s * Tq + t) * O + c));
    if (g->oP) {
        const double *Wo = wptr(r, b.W, 3);
        fdnn_rnn_dgemm(0, 1, (int)z.rq, H * Vp, O, 1.0, b.Y, O, Wo, O, 0.0, b.DHD, H * Vp);
    } else {
        memcpy(b.DHD, b.Y, sizeof(double) * (size_t)z.nhd);
    }
    memset(b.DQB, 0, sizeof(double) * (size_t)z.nqb);
    memset(b.DKB, 0, sizeof(double) * (size_t)z.nkb);
    memset(b.DVB, 0, sizeof(double) * (size_t)z.nvb);
    /* one task per (batch entry, head): the beams of a batch entry share its K/V sequences */
#pragma omp parallel for collapse(2) if(z.npr * Qp > 65536)
    for (int bb = 0; bb < g->B; bb++)
        for (int i = 0; i < H; i++) {
            for (int m = 0; m < g->Mq; m++) {
                int64_t s = (int64_t)bb * g->Mq + m, sk = kv_seq(g, s);
                for (int t = 0; t < r->lenq[s]; t++) {
                    int64_t row = s * Tq + t;
                    const double *qb = b.QB + (row * H + i) * Qp, *p = b.PR + (row * H + i) * Tk, *dh = b.DHD + (row * H + i) * Vp;
                    double *dqb = b.DQB + (row * H + i) * Qp;
                    int j0, j1;
                    window(r, t, r->lenkv[sk], &j0, &j1);
                    double dot = 0;
                    /* first pass: dp_j (through dropout) and sum_j p_j dp_j; dV */
                    for (int j = j0; j < j1; j++) {
                        double mult = drop_mult(r->attn_drop, 0, (uint64_t)(((s * H + i) * Tq + t) * Tk + j));
                        const double *vb = b.VB + ((sk * Tk + j) * H + i) * Vp;
                        double *dvb = b.DVB + ((sk * Tk + j) * H + i) * Vp;
                        double d = 0;
                        for (int c = 0; c < Vp; c++) { d += dh[c] * vb[c]; dvb[c] += p[j] * mult * dh[c]; }
                        dot += p[j] * d * mult;
                    }
                    for (int j = j0; j < j1; j++) {
                        double mult = drop_mult(r->attn_drop, 0, (uint64_t)(((s * H + i) * Tq + t) * Tk + j));
                        const double *vb = b.VB + ((sk * Tk + j) * H + i) * Vp;
                        double d = 0;
                        for (int c = 0; c < Vp; c++) d += dh[c] * vb[c];
                        double ds = g->scale * p[j] * (d * mult - dot);
                        const double *kb = b.KB + ((sk * Tk + j) * H + i) * Qp;
                        double *dkb = b.DKB + ((sk * Tk + j) * H + i) * Qp;
                        for (int c = 0; c < Qp; c++) { dqb[c] += ds * kb[c]; dkb[c] += ds * qb[c]; }
                    }
                }
            }
        }
    /* back through the input projections */
    const double *Wq = wptr(r, b.W, 0), *Wk = wptr(r, b.W, 1), *Wv = wptr(r, b.W, 2);
    struct { const double *D; double *X; int64_t rows; int in, P, has; } st[3] = {
        {b.DQB, b.XQ, z.rq, g->qS, g->Qp, g->qP > 0}, {b.DKB, b.XK, z.rk, g->kS, g->Kp, g->kP > 0}, {b.DVB, b.XV, z.rk, g->vS, g->Vp, g->vP > 0}};
    const double *Ws[3] = {Wq, Wk, Wv};
    for (int a = 0; a < 3; a++) {
        if (st[a].has) {
            fdnn_rnn_dgemm(0, 1, (int)st[a].rows, st[a].in, H * st[a].P, 1.0, st[a].D, H * st[a].P, Ws[a], H * st[a].P, 0.0, st[a].X, st[a].in);
        } else {
            for (int64_t rr = 0; rr < st[a].rows; rr++)
                for (int c = 0; c < st[a].in; c++) {
                    double sum = 0;
                    for (int i = 0; i < H; i++) sum += st[a].D[(rr * H + i) * st[a].P + c];
                    st[a].X[rr * st[a].in + c] = sum;
                }
        }
    }
    scatter(dqd, dq, r->dt, z.Sq, Tq, g->qS, r->lenq, -1, b.XQ, NULL);
    scatter(dkd, dk, r->dt, z.Skv, Tk, g->kS, r->lenkv, -1, b.XK, NULL);
    scatter(dvd, dv, r->dt, z.Skv, Tk, g->vS, r->lenkv, -1, b.XV, NULL);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_attn_cpu_backward_weights(const fdnn_attn_run *r, int add, const struct cudnnSeqDataStruct *qd, const void *q,
                                    const struct cudnnSeqDataStruct *kd, const void *k, const struct cudnnSeqDataStruct *vd, const void *v,
                                    const struct cudnnSeqDataStruct *dod, const void *dout, void *dw)
{
    if (r->handle && r->handle->backend == FDNN_BACKEND_CUDA)
        return fdnn_attn_cuda_backward_weights(r, add, qd, q, kd, k, vd, v, dod, dout, dw);
    const fdnn_attn_geom *g = &r->g;
    sizes_t z;
    sizes_of(g, &z);
    bufs_t b;
    bufs_of(r, &z, &b);
    const int H = g->H, Tq = g->Tq, Vp = g->Vp, O = g->O;
    int64_t nw = fdnn_attn_weight_count(g);
    double *G = b.W; /* gradient accumulator in place of the weight copy */
    memset(G, 0, sizeof(double) * (size_t)nw);
    gather(qd, q, r->dt, z.Sq, Tq, g->qS, r->lenq, -1, b.XQ);
    gather(kd, k, r->dt, z.Skv, g->Tk, g->kS, r->lenkv, -1, b.XK);
    gather(vd, v, r->dt, z.Skv, g->Tk, g->vS, r->lenkv, -1, b.XV);
    gather(dod, dout, r->dt, z.Sq, Tq, O, r->lenq, -1, b.Y);
    if (r->post_drop)
        for (int64_t s = 0; s < z.Sq; s++)
            for (int t = 0; t < r->lenq[s]; t++)
                for (int c = 0; c < O; c++) b.Y[(s * Tq + t) * O + c] *= drop_mult(r->post_drop, 1, (uint64_t)((s * Tq + t) * O + c));
    struct { const double *D, *X; int64_t rows; int in, P, has, wk, bk; } st[3] = {
        {b.DQB, b.XQ, z.rq, g->qS, g->Qp, g->qP > 0, 0, 4}, {b.DKB, b.XK, z.rk, g->kS, g->Kp, g->kP > 0, 1, 5},
        {b.DVB, b.XV, z.rk, g->vS, g->Vp, g->vP > 0, 2, 6}};
    for (int a = 0; a < 3; a++) {
        if (!st[a].has) continue;
        double *gw = G + fdnn_attn_weight_off(g, st[a].wk, NULL, NULL);
        int64_t bo = fdnn_attn_weight_off(g, st[a].bk, NULL, NULL);
        int HP = H * st[a].P;
        fdnn_rnn_dgemm(1, 0, st[a].in, HP, (int)st[a].rows, 1.0, st[a].X, st[a].in, st[a].D, HP, 0.0, gw, HP);
        if (bo >= 0)
            for (int64_t rr = 0; rr < st[a].rows; rr++)
                for (int c = 0; c < HP; c++) G[bo + c] += st[a].D[rr * HP + c];
    }
    if (g->oP) {
        double *gw = G + fdnn_attn_weight_off(g, 3, NULL, NULL);
        fdnn_rnn_dgemm(1, 0, H * Vp, O, (int)z.rq, 1.0, b.HD, H * Vp, b.Y, O, 0.0, gw, O);
        int64_t bo = fdnn_attn_weight_off(g, 7, NULL, NULL);
        if (bo >= 0)
            for (int64_t rr = 0; rr < z.rq; rr++)
                for (int c = 0; c < O; c++) G[bo + c] += b.Y[rr * O + c];
        /* the padding rows of out hold the output bias when dout's descriptor has no fill (see
         * the forward), so their dout counts towards its gradient, as in NVIDIA's library */
        if (bo >= 0 && !dod->has_fill) {
            int64_t dvs = dod->stride[CUDNN_SEQDATA_VECT_DIM];
            for (int64_t s = 0; s < z.Sq; s++)
                for (int t = r->lenq[s]; t < Tq; t++) {
                    int64_t o = sd_off(dod, s, t);
                    for (int c = 0; c < O; c++) G[bo + c] += fdnn_load(dout, r->dt, o + c * dvs);
                }
        }
    }
#pragma omp parallel for if(nw > 32768)
    for (int64_t i = 0; i < nw; i++) fdnn_store(dw, r->dt, i, (add ? fdnn_load(dw, r->dt, i) : 0.0) + G[i]);
    return CUDNN_STATUS_SUCCESS;
}
