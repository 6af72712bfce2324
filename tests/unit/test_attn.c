/* Multi-head attention: sequence data and attention descriptors, weight layout (through
 * cudnnGetMultiHeadAttnWeights), forward against the explicit-loop double reference (ragged
 * lengths, windows, projections on/off, biases, residuals, beams with ALL_TO_ONE/ONE_TO_ONE,
 * single-step inference, dropout), finite-difference checks of cudnnMultiHeadAttnBackwardData
 * and cudnnMultiHeadAttnBackwardWeights, error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"
#include "attn_ref.h"
#include "norm_ref.h"

static cudnnHandle_t h;

typedef struct {
    int H, qS, kS, vS, qP, kP, vP, oP, bias, o2o, O, Vp;
    double scale;
    int Tq, Tk, B, Mq, Mkv, resid;
    cudnnDataType_t dt;
    int lenq[16], lenkv[16], lo[32], hi[32];
    cudnnSeqDataAxis_t axq[4], axk[4];
    int fill;                     /* oDesc / dq / dk / dv descriptors carry a padding fill (-5) */
    float pa, pp;                 /* attention / post dropout probabilities (0 = none) */
    uint64_t seed;
    cudnnAttnDescriptor_t a;
    cudnnDropoutDescriptor_t ad, pd;
    cudnnSeqDataDescriptor_t qd, kd, vd, od;
    size_t wbytes, work, res;
    void *w;
    double *wd;
    double *packed[8];            /* per-kind row-major copies [d0][d1][d2] for the reference */
    long kind_off[8]; int kind_dims[8][3], kind_st[8][3];
    ref_attn ref;
} cfg_t;

static size_t esz(cudnnDataType_t t) { return th_dtype_size(t); }

/* Library-visible twins of host buffers (device memory on a CUDA handle): DV(p) uploads p's
 * current contents on first use, pull(p) downloads the twin into p, twins_free() drops all. */
static struct { void *host, *dev; size_t n; } twin[64];
static int ntwin;
static void track(void *host, size_t n)
{
    twin[ntwin].host = host;
    twin[ntwin].n = n;
    twin[ntwin].dev = NULL;
    ntwin++;
}
static void *DV(void *host)
{
    for (int i = 0; i < ntwin; i++)
        if (twin[i].host == host) {
            if (!twin[i].dev) {
                twin[i].dev = th_alloc(h, twin[i].n ? twin[i].n : 1);
                th_upload(h, twin[i].dev, host, twin[i].n);
            }
            return twin[i].dev;
        }
    fprintf(stderr, "untracked buffer\n");
    abort();
}
static void pull(void *host)
{
    for (int i = 0; i < ntwin; i++)
        if (twin[i].host == host) th_download(h, host, DV(host), twin[i].n);
}
static void twins_free(void)
{
    for (int i = 0; i < ntwin; i++) th_free(h, twin[i].dev);
    ntwin = 0;
}

/* ---------------------------------------------------------------- layouts (restated) */
/* dims by axis id (TIME=0, BATCH=1, BEAM=2, VECT=3), axes outermost first */
static long lay_off(const int dims[4], const cudnnSeqDataAxis_t ax[4], long s, int t)
{
    long st[4], acc = 1;
    for (int i = 3; i >= 0; i--) { st[ax[i]] = acc; acc *= dims[ax[i]]; }
    long b = s / dims[2], m = s % dims[2];
    return t * st[0] + b * st[1] + m * st[2];
}
static void dims_q(const cfg_t *c, int d[4], int V) { d[0] = c->Tq; d[1] = c->B; d[2] = c->Mq; d[3] = V; }
static void dims_k(const cfg_t *c, int d[4], int V) { d[0] = c->Tk; d[1] = c->B; d[2] = c->Mkv; d[3] = V; }

/* dense [S][T][V] valid positions -> layout buffer of the config's type; padding gets pad */
static void *to_lay(const cfg_t *c, int isq, const double *dense, int V, double pad)
{
    int d[4];
    if (isq) dims_q(c, d, V); else dims_k(c, d, V);
    long n = (long)d[0] * d[1] * d[2] * V, S = (long)d[1] * d[2];
    double *tmp = malloc(sizeof(double) * n);
    for (long i = 0; i < n; i++) tmp[i] = pad;
    const int *len = isq ? c->lenq : c->lenkv;
    for (long s = 0; s < S; s++)
        for (int t = 0; t < len[s]; t++)
            for (int v = 0; v < V; v++) tmp[lay_off(d, isq ? c->axq : c->axk, s, t) + v] = dense[(s * d[0] + t) * V + v];
    void *buf = malloc(n * esz(c->dt));
    th_from_double(tmp, c->dt, buf, n);
    free(tmp);
    return buf;
}
/* layout buffer -> doubles in layout order */
static double *lay_double(const cfg_t *c, int isq, const void *buf, int V)
{
    int d[4];
    if (isq) dims_q(c, d, V); else dims_k(c, d, V);
    long n = (long)d[0] * d[1] * d[2] * V;
    double *o = malloc(sizeof(double) * n);
    th_to_double(buf, c->dt, o, n);
    return o;
}

static void set_seq(cudnnSeqDataDescriptor_t sd, const cfg_t *c, int isq, int V, int fill)
{
    int d[4];
    if (isq) dims_q(c, d, V); else dims_k(c, d, V);
    double f = -5;
    uint64_t fb = 0;
    th_from_double(&f, c->dt, &fb, 1);
    TH_OK(cudnnSetSeqDataDescriptor(sd, c->dt, 4, d, isq ? c->axq : c->axk, (size_t)d[1] * d[2], isq ? c->lenq : c->lenkv, fill ? &fb : NULL));
}

static void round_to(cudnnDataType_t dt, double *x, long n)
{
    void *tmp = malloc(n * 8);
    th_from_double(x, dt, tmp, n);
    th_to_double(tmp, dt, x, n);
    free(tmp);
}

/* ---------------------------------------------------------------- dropout masks (restated) */
static double philox_mult(uint64_t seed, uint32_t offset, uint64_t idx, float p)
{
    uint32_t ctr[4] = {(uint32_t)(idx >> 2), (uint32_t)(idx >> 34), offset, 0}, key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)}, out[4];
    ref_philox4x32_10(ctr, key, out);
    float u = ((float)(out[idx & 3] >> 8) + 1.0f) * (1.0f / 16777216.0f);
    return u > p ? 1.0 / (1.0 - (double)p) : 0.0;
}
static double attn_mult(void *ctx, long s, int hh, int t, int j)
{
    const cfg_t *c = ctx;
    return philox_mult(c->seed, 0, (uint64_t)(((s * c->H + hh) * c->Tq + t) * c->Tk + j), c->pa);
}
static double post_mult(void *ctx, long s, int t, int cc)
{
    const cfg_t *c = ctx;
    return philox_mult(c->seed, 1, (uint64_t)((s * c->Tq + t) * c->O + cc), c->pp);
}

/* ---------------------------------------------------------------- configuration */
static void random_cfg(cfg_t *c, cudnnDataType_t dt)
{
    memset(c, 0, sizeof *c);
    c->dt = dt;
    c->H = th_randint(1, 3);
    int d = th_randint(1, 4);
    c->qP = th_randint(0, 1) ? d : 0;
    c->qS = c->qP ? th_randint(1, 5) : d;
    c->kP = th_randint(0, 1) ? d : 0;
    c->kS = c->kP ? th_randint(1, 5) : d;
    c->vS = th_randint(1, 5);
    c->vP = th_randint(0, 1) ? th_randint(1, 4) : 0;
    c->Vp = c->vP ? c->vP : c->vS;
    c->oP = th_randint(0, 2) ? th_randint(1, 5) : 0;
    c->resid = th_randint(0, 1);
    if (c->resid) {
        if (c->oP) c->oP = c->qS;
        else if (c->H * c->Vp != c->qS) c->oP = c->qS;
    }
    c->O = c->oP ? c->oP : c->H * c->Vp;
    c->bias = th_randint(0, 1);
    c->o2o = th_randint(0, 1);
    c->scale = th_uniform(0.3, 1.2);
    c->Tq = th_randint(1, 5);
    c->Tk = th_randint(1, 6);
    c->B = th_randint(1, 3);
    c->Mq = th_randint(1, 3);
    c->Mkv = c->o2o ? c->Mq : 1;
    for (int s = 0; s < c->B * c->Mq; s++) c->lenq[s] = th_randint(1, c->Tq);
    for (int s = 0; s < c->B * c->Mkv; s++) c->lenkv[s] = th_randint(0, 5) ? th_randint(1, c->Tk) : 0;
    int wmode = th_randint(0, 2);
    for (int t = 0; t < c->Tq; t++) {
        if (wmode == 0) { c->lo[t] = 0; c->hi[t] = c->Tk; }
        else if (wmode == 1) { c->lo[t] = th_randint(-1, c->Tk - 1); c->hi[t] = c->lo[t] + th_randint(1, c->Tk + 1); }
        else { c->lo[t] = 0; c->hi[t] = t + 1; } /* causal */
    }
    cudnnSeqDataAxis_t perm[3] = {CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM};
    for (int which = 0; which < 2; which++) {
        cudnnSeqDataAxis_t *ax = which ? c->axk : c->axq;
        for (int i = 0; i < 3; i++) ax[i] = perm[i];
        for (int i = 2; i > 0; i--) { int j = th_randint(0, i); cudnnSeqDataAxis_t t = ax[i]; ax[i] = ax[j]; ax[j] = t; }
        ax[3] = CUDNN_SEQDATA_VECT_DIM;
    }
    c->fill = th_randint(0, 1);
}

static void setup(cfg_t *c)
{
    cudnnCreateAttnDescriptor(&c->a);
    c->ad = c->pd = NULL;
    size_t ssz = 0;
    cudnnDropoutGetStatesSize(h, &ssz);
    static char states[4096];
    if (c->pa > 0) { cudnnCreateDropoutDescriptor(&c->ad); TH_OK(cudnnSetDropoutDescriptor(c->ad, h, c->pa, states, ssz, c->seed)); }
    if (c->pp > 0) { cudnnCreateDropoutDescriptor(&c->pd); TH_OK(cudnnSetDropoutDescriptor(c->pd, h, c->pp, states, ssz, c->seed)); }
    unsigned mode = (c->o2o ? CUDNN_ATTN_QUERYMAP_ONE_TO_ONE : CUDNN_ATTN_QUERYMAP_ALL_TO_ONE) |
                    (c->bias ? CUDNN_ATTN_ENABLE_PROJ_BIASES : CUDNN_ATTN_DISABLE_PROJ_BIASES);
    TH_OK(cudnnSetAttnDescriptor(c->a, mode, c->H, c->scale, c->dt, c->dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT,
                                 CUDNN_DEFAULT_MATH, c->ad, c->pd, c->qS, c->kS, c->vS, c->qP, c->kP, c->vP, c->oP, c->Tq + th_randint(0, 1),
                                 c->Tk + th_randint(0, 1), c->B + th_randint(0, 1), c->Mq + th_randint(0, 1)));
    cudnnCreateSeqDataDescriptor(&c->qd); cudnnCreateSeqDataDescriptor(&c->kd);
    cudnnCreateSeqDataDescriptor(&c->vd); cudnnCreateSeqDataDescriptor(&c->od);
    set_seq(c->qd, c, 1, c->qS, 0);
    set_seq(c->kd, c, 0, c->kS, 0);
    set_seq(c->vd, c, 0, c->vS, 0);
    set_seq(c->od, c, 1, c->O, c->fill);
    TH_OK(cudnnGetMultiHeadAttnBuffers(h, c->a, &c->wbytes, &c->work, &c->res));
    size_t nw = c->wbytes / esz(c->dt);
    c->w = malloc(c->wbytes ? c->wbytes : 1);
    c->wd = calloc(nw + 1, sizeof(double));
    unsigned char *seen = calloc(nw + 1, 1);
    cudnnTensorDescriptor_t wdsc;
    cudnnCreateTensorDescriptor(&wdsc);
    const double *ptrs[8] = {0};
    int ok_dims = 1, overlap = 0;
    for (int kind = 0; kind < 8; kind++) {
        void *addr = (void *)1;
        TH_OK(cudnnGetMultiHeadAttnWeights(h, c->a, (cudnnMultiHeadAttnWeightKind_t)kind, c->wbytes, c->w, wdsc, &addr));
        int P[4] = {c->qP, c->kP, c->vP, c->oP}, In[4] = {c->qS, c->kS, c->vS, c->Vp};
        int exists = P[kind % 4] > 0 && (kind < 4 || c->bias);
        if (!exists) { TH_CHECK(addr == NULL, "weight kind %d absent -> NULL", kind); continue; }
        if (!TH_CHECK(addr != NULL, "weight kind %d present", kind)) continue;
        cudnnDataType_t t;
        int nd, dims[8], st[8];
        cudnnGetTensorNdDescriptor(wdsc, 8, &t, &nd, dims, st);
        int e0 = kind == 7 ? 1 : c->H, e1 = P[kind % 4], e2 = kind < 4 ? In[kind] : 1;
        ok_dims &= nd == 3 && t == c->dt && dims[0] == e0 && dims[1] == e1 && dims[2] == e2;
        long off = (long)((char *)addr - (char *)c->w) / (long)esz(c->dt);
        c->kind_off[kind] = off;
        for (int i = 0; i < 3; i++) { c->kind_dims[kind][i] = dims[i]; c->kind_st[kind][i] = st[i]; }
        for (int i0 = 0; i0 < e0; i0++)
            for (int i1 = 0; i1 < e1; i1++)
                for (int i2 = 0; i2 < e2; i2++) {
                    long o = off + (long)i0 * st[0] + (long)i1 * st[1] + (long)i2 * st[2];
                    if (o < 0 || o >= (long)nw) { overlap = 1; continue; }
                    overlap |= seen[o];
                    seen[o] = 1;
                    c->wd[o] = th_uniform(-0.7, 0.7);
                }
        c->packed[kind] = malloc(sizeof(double) * (size_t)e0 * e1 * e2);
        ptrs[kind] = c->packed[kind];
    }
    TH_CHECK(ok_dims, "weight descriptors are [nHeads, proj, in] (O: [nHeads, oProj, vProj], O bias [1, oProj, 1])");
    size_t unseen = 0;
    for (size_t i = 0; i < nw; i++) unseen += !seen[i];
    TH_CHECK(!overlap && unseen == 0, "weight kinds tile the weight buffer (overlap %d, %zu unreported)", overlap, unseen);
    free(seen);
    cudnnDestroyTensorDescriptor(wdsc);
    round_to(c->dt, c->wd, (long)nw);
    th_from_double(c->wd, c->dt, c->w, nw);
    for (int kind = 0; kind < 8; kind++) {
        if (!c->packed[kind]) continue;
        const int *d = c->kind_dims[kind], *st = c->kind_st[kind];
        for (int i0 = 0; i0 < d[0]; i0++)
            for (int i1 = 0; i1 < d[1]; i1++)
                for (int i2 = 0; i2 < d[2]; i2++)
                    c->packed[kind][((long)i0 * d[1] + i1) * d[2] + i2] = c->wd[c->kind_off[kind] + (long)i0 * st[0] + (long)i1 * st[1] + (long)i2 * st[2]];
    }
    ref_attn *r = &c->ref;
    r->H = c->H; r->qS = c->qS; r->kS = c->kS; r->vS = c->vS; r->qP = c->qP; r->kP = c->kP; r->vP = c->vP; r->oP = c->oP;
    r->one_to_one = c->o2o; r->scale = c->scale; r->Tq = c->Tq; r->Tk = c->Tk; r->B = c->B; r->Mq = c->Mq;
    r->Wq = ptrs[0]; r->Wk = ptrs[1]; r->Wv = ptrs[2]; r->Wo = ptrs[3]; r->bq = ptrs[4]; r->bk = ptrs[5]; r->bv = ptrs[6]; r->bo = ptrs[7];
    r->lenq = c->lenq; r->lenkv = c->lenkv; r->lo = c->lo; r->hi = c->hi;
    r->ctx = c;
    r->attn_mult = NULL; r->post_mult = NULL;
}

static void teardown(cfg_t *c)
{
    cudnnDestroyAttnDescriptor(c->a);
    if (c->ad) cudnnDestroyDropoutDescriptor(c->ad);
    if (c->pd) cudnnDestroyDropoutDescriptor(c->pd);
    cudnnDestroySeqDataDescriptor(c->qd); cudnnDestroySeqDataDescriptor(c->kd);
    cudnnDestroySeqDataDescriptor(c->vd); cudnnDestroySeqDataDescriptor(c->od);
    free(c->w); free(c->wd);
    for (int k = 0; k < 8; k++) free(c->packed[k]);
}

typedef struct { double *q, *k, *v, *r; } inputs_t;

static long nq(const cfg_t *c, int V) { return (long)c->B * c->Mq * c->Tq * V; }
static long nk(const cfg_t *c, int V) { return (long)c->B * c->Mkv * c->Tk * V; }

static void random_inputs(const cfg_t *c, inputs_t *in)
{
    in->q = calloc(nq(c, c->qS), 8); in->k = calloc(nk(c, c->kS), 8); in->v = calloc(nk(c, c->vS), 8);
    in->r = c->resid ? calloc(nq(c, c->O), 8) : NULL;
    th_fill_uniform(in->q, nq(c, c->qS), -1, 1); th_fill_uniform(in->k, nk(c, c->kS), -1, 1); th_fill_uniform(in->v, nk(c, c->vS), -1, 1);
    if (in->r) th_fill_uniform(in->r, nq(c, c->O), -1, 1);
    round_to(c->dt, in->q, nq(c, c->qS)); round_to(c->dt, in->k, nk(c, c->kS)); round_to(c->dt, in->v, nk(c, c->vS));
    if (in->r) round_to(c->dt, in->r, nq(c, c->O));
}
static void free_inputs(inputs_t *in) { free(in->q); free(in->k); free(in->v); free(in->r); }

/* Forward through the library; out_lay receives the output buffer (layout order, doubles).
 * Inputs' padding holds NaN to prove it is never read; the output starts as NaN. */
static cudnnStatus_t run_fwd(const cfg_t *c, int training, int currIdx, const inputs_t *in, const double *wd, double **out_lay, void *res)
{
    void *q = to_lay(c, 1, in->q, c->qS, NAN), *k = to_lay(c, 0, in->k, c->kS, NAN), *v = to_lay(c, 0, in->v, c->vS, NAN);
    void *r = in->r ? to_lay(c, 1, in->r, c->O, NAN) : NULL;
    long no = nq(c, c->O);
    void *o = malloc(no * esz(c->dt));
    double *nan = malloc(no * 8);
    for (long i = 0; i < no; i++) nan[i] = NAN;
    th_from_double(nan, c->dt, o, no);
    free(nan);
    size_t nw = c->wbytes / esz(c->dt);
    void *w = malloc(c->wbytes ? c->wbytes : 1);
    th_from_double(wd, c->dt, w, nw);
    int ntw = ntwin; /* callers may hold twins of their own */
    long nqq = nq(c, c->qS), nkk = nk(c, c->kS), nvv = nk(c, c->vS);
    track(q, nqq * esz(c->dt)); track(k, nkk * esz(c->dt)); track(v, nvv * esz(c->dt)); track(o, no * esz(c->dt)); track(w, c->wbytes);
    if (r) track(r, no * esz(c->dt));
    void *ws = th_alloc(h, c->work);
    cudnnStatus_t s = cudnnMultiHeadAttnForward(h, c->a, currIdx, c->lo, c->hi, c->lenq, c->lenkv, c->qd, DV(q), r ? DV(r) : NULL, c->kd, DV(k), c->vd,
                                                DV(v), c->od, DV(o), c->wbytes, DV(w), c->work, ws, training ? c->res : 0, training ? res : NULL);
    pull(o);
    for (int i = ntw; i < ntwin; i++) th_free(h, twin[i].dev);
    ntwin = ntw;
    th_free(h, ws);
    *out_lay = lay_double(c, 1, o, c->O);
    free(q); free(k); free(v); free(r); free(o); free(w);
    return s;
}

/* Padding rows of the output without a fill value hold the output projection of a zero
 * attention vector, i.e. the output bias (what NVIDIA's cuDNN writes there; seen by the
 * tests/compat probe on an H200); without an output projection or bias they stay untouched. */
static int pad_rows_hold_bias(const cfg_t *c) { return !c->fill && c->oP > 0 && c->ref.bo != NULL; }

/* expected output in layout order: valid rows from the reference, padding = fill, the output
 * bias (pad_rows_hold_bias) or NaN (untouched) */
static double *expected(const cfg_t *c, const double *ref_dense, int only_t)
{
    int d[4];
    dims_q(c, d, c->O);
    long n = nq(c, c->O);
    double *e = malloc(n * 8);
    for (long i = 0; i < n; i++) e[i] = NAN;
    for (long s = 0; s < (long)c->B * c->Mq; s++)
        for (int t = 0; t < c->Tq; t++) {
            if (only_t >= 0 && t != only_t) continue;
            for (int v = 0; v < c->O; v++)
                e[lay_off(d, c->axq, s, t) + v] = t < c->lenq[s] ? ref_dense[(s * c->Tq + t) * c->O + v]
                                                  : c->fill ? -5 : pad_rows_hold_bias(c) ? c->ref.bo[v] : NAN;
        }
    return e;
}

/* compares got with want where want is a number; NaN in want requires NaN in got */
static void cmp_nan(const char *what, const double *got, const double *want, long n, double tol)
{
    long nn = 0, bad = -1;
    double *g2 = malloc(n * 8), *w2 = malloc(n * 8);
    for (long i = 0; i < n; i++) {
        if (isnan(want[i])) { if (!isnan(got[i]) && bad < 0) bad = i; continue; }
        g2[nn] = got[i]; w2[nn] = want[i]; nn++;
    }
    TH_CHECK(bad < 0, "%s: element %ld should be untouched (NaN), got %g", what, bad, bad < 0 ? 0.0 : got[bad]);
    int nz = 0;
    for (long i = 0; i < nn; i++) nz |= w2[i] != 0;
    if (nz) th_compare(what, g2, w2, (size_t)nn, tol);
    else {
        double m = 0;
        for (long i = 0; i < nn; i++) m = fmax(m, fabs(g2[i]));
        TH_CHECK(m <= tol, "%s: all-zero reference, result up to %g", what, m);
    }
    free(g2); free(w2);
}

/* FLOAT: the CPU engine computes in double, the CUDA engine in FP32 (no TF32) */
static double tol_of(cudnnDataType_t dt)
{
    if (dt == CUDNN_DATA_HALF) return 6e-3;
    if (dt == CUDNN_DATA_DOUBLE) return 1e-12;
    return th_is_gpu(h) ? 3e-5 : 3e-6;
}

static void test_forward(void)
{
    cudnnDataType_t dts[3] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF};
    for (int it = 0; it < 90; it++) {
        cfg_t c;
        random_cfg(&c, dts[it % 3]);
        if (it % 5 == 4) { c.pa = 0.3f; c.pp = 0.25f; c.seed = 777 + (uint64_t)it; }
        setup(&c);
        inputs_t in;
        random_inputs(&c, &in);
        void *res = th_alloc(h, c.res);
        char what[200];
        snprintf(what, sizeof what, "attn fwd %s H=%d q=%d/%d k=%d/%d v=%d/%d o=%d bias=%d o2o=%d T=%d/%d B=%d M=%d resid=%d drop=%g/%g", th_dtype_name(c.dt),
                 c.H, c.qS, c.qP, c.kS, c.kP, c.vS, c.vP, c.oP, c.bias, c.o2o, c.Tq, c.Tk, c.B, c.Mq, c.resid, c.pa, c.pp);
        for (int mode = 0; mode < 3; mode++) { /* 0 inference all steps, 1 training, 2 inference one step */
            if (mode == 2 && c.pa > 0) continue;
            int training = mode == 1, curr = mode == 2 ? th_randint(0, c.Tq - 1) : -1;
            c.ref.attn_mult = training && c.pa > 0 ? attn_mult : NULL;
            c.ref.post_mult = training && c.pp > 0 ? post_mult : NULL;
            double *rd = calloc(nq(&c, c.O), 8), *got;
            ref_attn_forward(&c.ref, in.q, in.k, in.v, in.r, rd);
            TH_OK(run_fwd(&c, training, curr, &in, c.wd, &got, res));
            double *e = expected(&c, rd, curr);
            char w2[240];
            snprintf(w2, sizeof w2, "%s mode=%d", what, mode);
            cmp_nan(w2, got, e, nq(&c, c.O), tol_of(c.dt));
            free(rd); free(got); free(e);
        }
        th_free(h, res);
        free_inputs(&in);
        teardown(&c);
    }
}

/* ---------------------------------------------------------------- gradients */
static double loss_of(const cfg_t *c, const inputs_t *in, const double *wd, const double *wo_lay)
{
    void *res = th_alloc(h, c->res);
    double *o;
    run_fwd(c, 1, -1, in, wd, &o, res);
    int d[4];
    dims_q(c, d, c->O);
    double s = 0;
    /* every row the forward writes from the weights: the valid rows, and the padding rows when
     * they hold the output bias */
    for (long sq = 0; sq < (long)c->B * c->Mq; sq++)
        for (int t = 0; t < (pad_rows_hold_bias(c) ? c->Tq : c->lenq[sq]); t++)
            for (int v = 0; v < c->O; v++) { long k = lay_off(d, c->axq, sq, t) + v; s += wo_lay[k] * o[k]; }
    free(o); th_free(h, res);
    return s;
}

static void fd_vec(const cfg_t *c, inputs_t *in, double *x, long n, int V, int isq, const double *wo, double *fd)
{
    const double eps = 1e-6;
    const int *len = isq ? c->lenq : c->lenkv;
    int T = isq ? c->Tq : c->Tk;
    for (long i = 0; i < n; i++) {
        long s = i / ((long)T * V);
        int t = (int)(i / V % T);
        if (t >= len[s]) { fd[i] = 0; continue; }
        double keep = x[i];
        x[i] = keep + eps; double lp = loss_of(c, in, c->wd, wo);
        x[i] = keep - eps; double lm = loss_of(c, in, c->wd, wo);
        x[i] = keep;
        fd[i] = (lp - lm) / (2 * eps);
    }
}

/* dense gradient from a layout buffer (valid positions) */
static void lay_to_dense(const cfg_t *c, int isq, const void *buf, int V, double *dense)
{
    int d[4];
    if (isq) dims_q(c, d, V); else dims_k(c, d, V);
    double *l = lay_double(c, isq, buf, V);
    const int *len = isq ? c->lenq : c->lenkv;
    long S = (long)d[1] * d[2];
    for (long s = 0; s < S; s++)
        for (int t = 0; t < d[0]; t++)
            for (int v = 0; v < V; v++) dense[(s * d[0] + t) * V + v] = t < len[s] ? l[lay_off(d, isq ? c->axq : c->axk, s, t) + v] : 0;
    free(l);
}

static int pad_ok(const cfg_t *c, int isq, const void *buf, int V)
{
    int d[4];
    if (isq) dims_q(c, d, V); else dims_k(c, d, V);
    double *l = lay_double(c, isq, buf, V);
    const int *len = isq ? c->lenq : c->lenkv;
    int ok = 1;
    for (long s = 0; s < (long)d[1] * d[2]; s++)
        for (int t = len[s]; t < d[0]; t++)
            for (int v = 0; v < V; v++) {
                double x = l[lay_off(d, isq ? c->axq : c->axk, s, t) + v];
                ok &= c->fill ? x == -5 : isnan(x);
            }
    free(l);
    return ok;
}

static void test_gradients(void)
{
    for (int it = 0; it < 24; it++) {
        cfg_t c;
        random_cfg(&c, CUDNN_DATA_DOUBLE);
        if (it % 4 == 3) { c.pa = 0.3f; c.pp = 0.2f; c.seed = 4242 + (uint64_t)it; }
        setup(&c);
        /* descriptors of the gradients carry the fill when the config says so */
        cudnnSeqDataDescriptor_t dqd, dkd, dvd;
        cudnnCreateSeqDataDescriptor(&dqd); cudnnCreateSeqDataDescriptor(&dkd); cudnnCreateSeqDataDescriptor(&dvd);
        set_seq(dqd, &c, 1, c.qS, c.fill); set_seq(dkd, &c, 0, c.kS, c.fill); set_seq(dvd, &c, 0, c.vS, c.fill);
        inputs_t in;
        random_inputs(&c, &in);
        long no = nq(&c, c.O), nqq = nq(&c, c.qS), nkk = nk(&c, c.kS), nvv = nk(&c, c.vS), nw = (long)(c.wbytes / 8);
        double *wo = malloc(no * 8);
        th_fill_uniform(wo, no, -1, 1);
        void *res = th_alloc(h, c.res), *ws = th_alloc(h, c.work);
        double *o;
        TH_OK(run_fwd(&c, 1, -1, &in, c.wd, &o, res));
        void *q = to_lay(&c, 1, in.q, c.qS, NAN), *k = to_lay(&c, 0, in.k, c.kS, NAN), *v = to_lay(&c, 0, in.v, c.vS, NAN);
        double *dq = malloc(nqq * 8), *dk = malloc(nkk * 8), *dv = malloc(nvv * 8), *dw = malloc((nw + 1) * 8), *dw2 = malloc((nw + 1) * 8);
        for (long i = 0; i < nqq; i++) dq[i] = NAN;
        for (long i = 0; i < nkk; i++) dk[i] = NAN;
        for (long i = 0; i < nvv; i++) dv[i] = NAN;
        for (long i = 0; i < nw; i++) { dw[i] = NAN; dw2[i] = 0.25; }
        track(wo, no * 8); track(dq, nqq * 8); track(dk, nkk * 8); track(dv, nvv * 8); track(q, nqq * 8); track(k, nkk * 8); track(v, nvv * 8);
        track(c.w, c.wbytes); track(dw, nw * 8); track(dw2, nw * 8);
        TH_OK(cudnnMultiHeadAttnBackwardData(h, c.a, c.lo, c.hi, c.lenq, c.lenkv, c.od, DV(wo), dqd, DV(dq), DV(q), dkd, DV(dk), DV(k), dvd, DV(dv), DV(v),
                                             c.wbytes, DV(c.w), c.work, ws, c.res, res));
        TH_OK(cudnnMultiHeadAttnBackwardWeights(h, c.a, CUDNN_WGRAD_MODE_SET, c.qd, DV(q), c.kd, DV(k), c.vd, DV(v), c.od, DV(wo), c.wbytes, DV(c.w),
                                                DV(dw), c.work, ws, c.res, res));
        TH_OK(cudnnMultiHeadAttnBackwardWeights(h, c.a, CUDNN_WGRAD_MODE_ADD, c.qd, DV(q), c.kd, DV(k), c.vd, DV(v), c.od, DV(wo), c.wbytes, DV(c.w),
                                                DV(dw2), c.work, ws, c.res, res));
        pull(dq); pull(dk); pull(dv); pull(dw); pull(dw2);
        twins_free();
        int addok = 1;
        for (long i = 0; i < nw; i++) addok &= fabs(dw2[i] - 0.25 - dw[i]) < 1e-12;
        TH_CHECK(addok, "WGRAD_MODE_ADD adds to dweights");
        TH_CHECK(pad_ok(&c, 1, dq, c.qS) && pad_ok(&c, 0, dk, c.kS) && pad_ok(&c, 0, dv, c.vS), "padding of dq/dk/dv: fill or untouched");
        double *aq = malloc(nqq * 8), *ak = malloc(nkk * 8), *av = malloc(nvv * 8);
        lay_to_dense(&c, 1, dq, c.qS, aq); lay_to_dense(&c, 0, dk, c.kS, ak); lay_to_dense(&c, 0, dv, c.vS, av);
        double *fq = malloc(nqq * 8), *fk = malloc(nkk * 8), *fv = malloc(nvv * 8), *fw = malloc((nw + 1) * 8);
        fd_vec(&c, &in, in.q, nqq, c.qS, 1, wo, fq);
        fd_vec(&c, &in, in.k, nkk, c.kS, 0, wo, fk);
        fd_vec(&c, &in, in.v, nvv, c.vS, 0, wo, fv);
        for (long i = 0; i < nw; i++) {
            double keep = c.wd[i];
            c.wd[i] = keep + 1e-6; double lp = loss_of(&c, &in, c.wd, wo);
            c.wd[i] = keep - 1e-6; double lm = loss_of(&c, &in, c.wd, wo);
            c.wd[i] = keep;
            fw[i] = (lp - lm) / 2e-6;
        }
        char what[200];
        snprintf(what, sizeof what, "H=%d q=%d/%d k=%d/%d v=%d/%d o=%d bias=%d o2o=%d T=%d/%d B=%d M=%d resid=%d drop=%g", c.H, c.qS, c.qP, c.kS, c.kP, c.vS,
                 c.vP, c.oP, c.bias, c.o2o, c.Tq, c.Tk, c.B, c.Mq, c.resid, c.pa);
        char w2[260];
        snprintf(w2, sizeof w2, "dq vs FD %s", what); cmp_nan(w2, aq, fq, nqq, 1e-6);
        snprintf(w2, sizeof w2, "dk vs FD %s", what); cmp_nan(w2, ak, fk, nkk, 1e-6);
        snprintf(w2, sizeof w2, "dv vs FD %s", what); cmp_nan(w2, av, fv, nvv, 1e-6);
        if (nw) { snprintf(w2, sizeof w2, "dw vs FD %s", what); cmp_nan(w2, dw, fw, nw, 1e-6); }
        free(o); free(q); free(k); free(v); free(dq); free(dk); free(dv); free(dw); free(dw2); free(aq); free(ak); free(av);
        free(fq); free(fk); free(fv); free(fw); free(wo); th_free(h, res); th_free(h, ws);
        free_inputs(&in);
        cudnnDestroySeqDataDescriptor(dqd); cudnnDestroySeqDataDescriptor(dkd); cudnnDestroySeqDataDescriptor(dvd);
        teardown(&c);
    }
}

/* One larger problem (exercises the threaded loops): forward against the reference, then the
 * backward results against directional finite differences along random directions. */
static void test_large(void)
{
    cfg_t c;
    random_cfg(&c, CUDNN_DATA_DOUBLE);
    c.H = 4; c.qS = 16; c.kS = 12; c.vS = 10; c.qP = 8; c.kP = 8; c.vP = 6; c.Vp = 6; c.oP = 16; c.O = 16; c.resid = 1; c.bias = 1; c.o2o = 0;
    c.Tq = 24; c.Tk = 32; c.B = 3; c.Mq = 2; c.Mkv = 1;
    c.pa = 0.2f; c.pp = 0.1f; c.seed = 99;
    for (int s = 0; s < 6; s++) c.lenq[s] = th_randint(c.Tq / 2, c.Tq);
    for (int s = 0; s < 3; s++) c.lenkv[s] = th_randint(c.Tk / 2, c.Tk);
    for (int t = 0; t < c.Tq; t++) { c.lo[t] = t / 2; c.hi[t] = t + 9; }
    setup(&c);
    inputs_t in;
    random_inputs(&c, &in);
    long no = nq(&c, c.O), nqq = nq(&c, c.qS), nkk = nk(&c, c.kS), nvv = nk(&c, c.vS), nw = (long)(c.wbytes / 8);
    void *res = th_alloc(h, c.res), *ws = th_alloc(h, c.work);
    double *rd = calloc(no, 8), *got;
    c.ref.attn_mult = attn_mult; c.ref.post_mult = post_mult;
    ref_attn_forward(&c.ref, in.q, in.k, in.v, in.r, rd);
    TH_OK(run_fwd(&c, 1, -1, &in, c.wd, &got, res));
    double *e = expected(&c, rd, -1);
    cmp_nan("large attention forward (training, dropout)", got, e, no, 1e-12);
    free(e); free(got);
    double *wo = malloc(no * 8);
    th_fill_uniform(wo, no, -1, 1);
    double *o;
    TH_OK(run_fwd(&c, 1, -1, &in, c.wd, &o, res));
    free(o);
    void *q = to_lay(&c, 1, in.q, c.qS, NAN), *k = to_lay(&c, 0, in.k, c.kS, NAN), *v = to_lay(&c, 0, in.v, c.vS, NAN);
    double *dq = malloc(nqq * 8), *dk = malloc(nkk * 8), *dv = malloc(nvv * 8), *dw = malloc(nw * 8);
    track(wo, no * 8); track(dq, nqq * 8); track(dk, nkk * 8); track(dv, nvv * 8); track(q, nqq * 8); track(k, nkk * 8); track(v, nvv * 8);
    track(c.w, c.wbytes); track(dw, nw * 8);
    TH_OK(cudnnMultiHeadAttnBackwardData(h, c.a, c.lo, c.hi, c.lenq, c.lenkv, c.od, DV(wo), c.qd, DV(dq), DV(q), c.kd, DV(dk), DV(k), c.vd, DV(dv), DV(v),
                                         c.wbytes, DV(c.w), c.work, ws, c.res, res));
    TH_OK(cudnnMultiHeadAttnBackwardWeights(h, c.a, CUDNN_WGRAD_MODE_SET, c.qd, DV(q), c.kd, DV(k), c.vd, DV(v), c.od, DV(wo), c.wbytes, DV(c.w), DV(dw),
                                            c.work, ws, c.res, res));
    pull(dq); pull(dk); pull(dv); pull(dw);
    twins_free();
    double *aq = malloc(nqq * 8), *ak = malloc(nkk * 8), *av = malloc(nvv * 8);
    lay_to_dense(&c, 1, dq, c.qS, aq); lay_to_dense(&c, 0, dk, c.kS, ak); lay_to_dense(&c, 0, dv, c.vS, av);
    struct { const char *name; double *x, *grad; long n; } tgt[4] = {{"dq", in.q, aq, nqq}, {"dk", in.k, ak, nkk}, {"dv", in.v, av, nvv}, {"dw", c.wd, dw, nw}};
    for (int a = 0; a < 4; a++) {
        double *dir = malloc(tgt[a].n * 8), *keep = malloc(tgt[a].n * 8);
        th_fill_uniform(dir, tgt[a].n, -1, 1);
        memcpy(keep, tgt[a].x, tgt[a].n * 8);
        double an = 0, eps = 1e-6;
        for (long i = 0; i < tgt[a].n; i++) an += dir[i] * tgt[a].grad[i];
        for (long i = 0; i < tgt[a].n; i++) tgt[a].x[i] = keep[i] + eps * dir[i];
        double lp = loss_of(&c, &in, c.wd, wo);
        for (long i = 0; i < tgt[a].n; i++) tgt[a].x[i] = keep[i] - eps * dir[i];
        double lm = loss_of(&c, &in, c.wd, wo);
        memcpy(tgt[a].x, keep, tgt[a].n * 8);
        double fd = (lp - lm) / (2 * eps);
        TH_CHECK(fabs(fd - an) <= 1e-6 * fmax(1.0, fabs(fd)) && fabs(an) > 1e-3, "large attention %s: directional derivative %.10g, FD %.10g",
                 tgt[a].name, an, fd);
        free(dir); free(keep);
    }
    free(q); free(k); free(v); free(dq); free(dk); free(dv); free(dw); free(aq); free(ak); free(av); free(wo); free(rd); th_free(h, res); th_free(h, ws);
    free_inputs(&in);
    teardown(&c);
}

/* ---------------------------------------------------------------- descriptors and errors */
static void test_descriptors(void)
{
    cudnnSeqDataDescriptor_t sd;
    TH_OK(cudnnCreateSeqDataDescriptor(&sd));
    int dims[4] = {4, 2, 3, 5}, lens[6] = {1, 4, 2, 3, 4, 0}, bad[6] = {1, 5, 2, 3, 4, 0};
    cudnnSeqDataAxis_t ax[4] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_VECT_DIM};
    cudnnSeqDataAxis_t axdup[4] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_VECT_DIM};
    cudnnSeqDataAxis_t axv[4] = {CUDNN_SEQDATA_VECT_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM};
    float fill = 2.5f;
    TH_STATUS(cudnnSetSeqDataDescriptor(sd, CUDNN_DATA_FLOAT, 3, dims, ax, 6, lens, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetSeqDataDescriptor(sd, CUDNN_DATA_INT8, 4, dims, ax, 6, lens, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetSeqDataDescriptor(sd, CUDNN_DATA_FLOAT, 4, dims, ax, 5, lens, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetSeqDataDescriptor(sd, CUDNN_DATA_FLOAT, 4, dims, ax, 6, bad, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetSeqDataDescriptor(sd, CUDNN_DATA_FLOAT, 4, dims, ax, 6, NULL, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetSeqDataDescriptor(sd, CUDNN_DATA_FLOAT, 4, dims, axdup, 6, lens, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetSeqDataDescriptor(sd, CUDNN_DATA_FLOAT, 4, dims, axv, 6, lens, NULL), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSetSeqDataDescriptor(sd, CUDNN_DATA_FLOAT, 4, NULL, ax, 6, lens, NULL), CUDNN_STATUS_BAD_PARAM);
    int zd[4] = {4, 0, 3, 5};
    TH_STATUS(cudnnSetSeqDataDescriptor(sd, CUDNN_DATA_FLOAT, 4, zd, ax, 0, lens, NULL), CUDNN_STATUS_BAD_PARAM);
    cudnnDataType_t dt;
    int nb, gd[4], gl[6];
    cudnnSeqDataAxis_t ga[4];
    size_t nl;
    float gf = 0;
    TH_STATUS(cudnnGetSeqDataDescriptor(sd, &dt, &nb, 4, gd, ga, &nl, 6, gl, NULL), CUDNN_STATUS_BAD_PARAM); /* never set */
    TH_OK(cudnnSetSeqDataDescriptor(sd, CUDNN_DATA_FLOAT, 4, dims, ax, 6, lens, &fill));
    TH_OK(cudnnGetSeqDataDescriptor(sd, &dt, &nb, 4, gd, ga, &nl, 6, gl, &gf));
    int same = dt == CUDNN_DATA_FLOAT && nb == 4 && nl == 6 && gf == 2.5f;
    for (int i = 0; i < 4; i++) same &= gd[i] == dims[i] && ga[i] == ax[i];
    for (int i = 0; i < 6; i++) same &= gl[i] == lens[i];
    TH_CHECK(same, "seq data getter returns what was set");
    TH_STATUS(cudnnGetSeqDataDescriptor(sd, &dt, &nb, 4, NULL, ga, &nl, 6, gl, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetSeqDataDescriptor(sd, NULL, &nb, 4, gd, ga, &nl, 6, gl, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnDestroySeqDataDescriptor(sd));
    TH_OK(cudnnDestroySeqDataDescriptor(NULL));
    TH_STATUS(cudnnCreateSeqDataDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);

    cudnnAttnDescriptor_t a;
    TH_OK(cudnnCreateAttnDescriptor(&a));
    cudnnDropoutDescriptor_t dd;
    cudnnCreateDropoutDescriptor(&dd);
    const unsigned M = CUDNN_ATTN_QUERYMAP_ONE_TO_ONE | CUDNN_ATTN_ENABLE_PROJ_BIASES;
    const cudnnDataType_t F = CUDNN_DATA_FLOAT;
#define SETA(mode, nh, sc, dt_, cp, mt, q, k, v, qp, kp, vp, op, tq, tk, b, m) \
    cudnnSetAttnDescriptor(a, mode, nh, sc, dt_, cp, mt, dd, NULL, q, k, v, qp, kp, vp, op, tq, tk, b, m)
    TH_STATUS(SETA(4u, 2, 1.0, F, F, CUDNN_DEFAULT_MATH, 4, 4, 4, 2, 2, 2, 3, 5, 6, 2, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SETA(M, 0, 1.0, F, F, CUDNN_DEFAULT_MATH, 4, 4, 4, 2, 2, 2, 3, 5, 6, 2, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SETA(M, 2, INFINITY, F, F, CUDNN_DEFAULT_MATH, 4, 4, 4, 2, 2, 2, 3, 5, 6, 2, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SETA(M, 2, 1.0, CUDNN_DATA_INT8, F, CUDNN_DEFAULT_MATH, 4, 4, 4, 2, 2, 2, 3, 5, 6, 2, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SETA(M, 2, 1.0, CUDNN_DATA_DOUBLE, F, CUDNN_DEFAULT_MATH, 4, 4, 4, 2, 2, 2, 3, 5, 6, 2, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SETA(M, 2, 1.0, F, F, (cudnnMathType_t)9, 4, 4, 4, 2, 2, 2, 3, 5, 6, 2, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SETA(M, 2, 1.0, F, F, CUDNN_DEFAULT_MATH, 0, 4, 4, 2, 2, 2, 3, 5, 6, 2, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SETA(M, 2, 1.0, F, F, CUDNN_DEFAULT_MATH, 4, 4, 4, -1, 2, 2, 3, 5, 6, 2, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SETA(M, 2, 1.0, F, F, CUDNN_DEFAULT_MATH, 4, 4, 4, 2, 3, 2, 3, 5, 6, 2, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SETA(M, 2, 1.0, F, F, CUDNN_DEFAULT_MATH, 4, 3, 4, 0, 0, 2, 3, 5, 6, 2, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SETA(M, 2, 1.0, F, F, CUDNN_DEFAULT_MATH, 4, 4, 4, 2, 2, 2, 3, 0, 6, 2, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SETA(M, 2, 1.0, F, F, CUDNN_DEFAULT_MATH, 4, 4, 4, 2, 2, 2, 3, 5, 6, 2, 0), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetAttnDescriptor(a, M, 2, 1.0, F, F, CUDNN_DEFAULT_MATH, (cudnnDropoutDescriptor_t)h, NULL, 4, 4, 4, 2, 2, 2, 3, 5, 6, 2, 1),
              CUDNN_STATUS_BAD_PARAM);
    size_t wb, wsz, rsz;
    TH_STATUS(cudnnGetMultiHeadAttnBuffers(h, a, &wb, &wsz, &rsz), CUDNN_STATUS_BAD_PARAM); /* never set */
    TH_OK(SETA(M, 2, 0.5, F, F, CUDNN_TENSOR_OP_MATH, 4, 5, 6, 2, 2, 3, 7, 5, 6, 2, 1));
    unsigned gm; int g[14]; double gs; cudnnDataType_t gdt, gcp; cudnnMathType_t gmt; cudnnDropoutDescriptor_t g1, g2;
    TH_OK(cudnnGetAttnDescriptor(a, &gm, &g[0], &gs, &gdt, &gcp, &gmt, &g1, &g2, &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7], &g[8], &g[9], &g[10],
                                 &g[11]));
    TH_CHECK(gm == M && g[0] == 2 && gs == 0.5 && gdt == F && gcp == F && gmt == CUDNN_TENSOR_OP_MATH && g1 == dd && g2 == NULL && g[1] == 4 &&
                 g[2] == 5 && g[3] == 6 && g[4] == 2 && g[5] == 2 && g[6] == 3 && g[7] == 7 && g[8] == 5 && g[9] == 6 && g[10] == 2 && g[11] == 1,
             "attention getter returns what was set");
    TH_STATUS(cudnnGetAttnDescriptor(a, NULL, &g[0], &gs, &gdt, &gcp, &gmt, &g1, &g2, &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7], &g[8], &g[9],
                                     &g[10], &g[11]),
              CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnGetMultiHeadAttnBuffers(h, a, &wb, &wsz, NULL));
    TH_OK(cudnnGetMultiHeadAttnBuffers(h, a, &wb, &wsz, &rsz));
    /* Q 2*2*4 + K 2*2*5 + V 2*3*6 + O 2*7*3 + biases 4 + 4 + 6 + 7 */
    TH_CHECK(wb == sizeof(float) * (16 + 20 + 36 + 42 + 4 + 4 + 6 + 7), "weight size %zu", wb);
    TH_CHECK(rsz > 0 && wsz > 0, "workspace and reserve sizes are positive");
    TH_STATUS(cudnnGetMultiHeadAttnBuffers(h, a, NULL, &wsz, &rsz), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetMultiHeadAttnBuffers(NULL, a, &wb, &wsz, &rsz), CUDNN_STATUS_BAD_PARAM);
    cudnnTensorDescriptor_t td;
    cudnnCreateTensorDescriptor(&td);
    float *w = calloc(wb, 1);
    void *addr = NULL;
    TH_STATUS(cudnnGetMultiHeadAttnWeights(h, a, (cudnnMultiHeadAttnWeightKind_t)8, wb, w, td, &addr), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetMultiHeadAttnWeights(h, a, CUDNN_MH_ATTN_K_WEIGHTS, wb - 4, w, td, &addr), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetMultiHeadAttnWeights(h, a, CUDNN_MH_ATTN_K_WEIGHTS, wb, NULL, td, &addr), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetMultiHeadAttnWeights(h, a, CUDNN_MH_ATTN_K_WEIGHTS, wb, w, NULL, &addr), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetMultiHeadAttnWeights(h, a, CUDNN_MH_ATTN_K_WEIGHTS, wb, w, td, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnGetMultiHeadAttnWeights(h, a, CUDNN_MH_ATTN_K_WEIGHTS, wb, w, td, &addr));
    TH_CHECK(addr == (void *)(w + 16), "K weights follow the Q weights");
    {
        cudnnDataType_t t;
        int nd, d[3], st[3];
        cudnnGetTensorNdDescriptor(td, 3, &t, &nd, d, st);
        TH_CHECK(nd == 3 && d[0] == 2 && d[1] == 2 && d[2] == 5 && st[0] == 2 && st[1] == 1 && st[2] == 4, "K weights [2,2,5] strides [2,1,4]");
        TH_OK(cudnnGetMultiHeadAttnWeights(h, a, CUDNN_MH_ATTN_O_WEIGHTS, wb, w, td, &addr));
        cudnnGetTensorNdDescriptor(td, 3, &t, &nd, d, st);
        TH_CHECK(addr == (void *)(w + 16 + 20 + 36) && nd == 3 && d[0] == 2 && d[1] == 7 && d[2] == 3 && st[0] == 21 && st[1] == 1 && st[2] == 7,
                 "O weights [2,7,3] strides [21,1,7]");
        TH_OK(cudnnGetMultiHeadAttnWeights(h, a, CUDNN_MH_ATTN_V_BIASES, wb, w, td, &addr));
        cudnnGetTensorNdDescriptor(td, 3, &t, &nd, d, st);
        TH_CHECK(addr == (void *)(w + 16 + 20 + 36 + 42 + 4 + 4) && d[0] == 2 && d[1] == 3 && d[2] == 1 && st[0] == 3 && st[1] == 1,
                 "V biases [2,3,1] packed");
    }
    TH_OK(cudnnGetMultiHeadAttnWeights(h, a, CUDNN_MH_ATTN_O_BIASES, wb, w, td, &addr));
    TH_CHECK(addr == (void *)(w + 16 + 20 + 36 + 42 + 4 + 4 + 6), "O biases are last");
    free(w);
    cudnnDestroyTensorDescriptor(td);
    TH_OK(cudnnDestroyAttnDescriptor(a));
    TH_OK(cudnnDestroyAttnDescriptor(NULL));
    TH_STATUS(cudnnCreateAttnDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    cudnnDestroyDropoutDescriptor(dd);
#undef SETA
}

static void test_call_errors(void)
{
    cfg_t c;
    random_cfg(&c, CUDNN_DATA_FLOAT);
    c.H = 2; c.qS = 4; c.qP = 3; c.kS = 5; c.kP = 3; c.vS = 3; c.vP = 2; c.Vp = 2; c.oP = 4; c.O = 4; c.resid = 1; c.o2o = 0;
    c.Tq = 3; c.Tk = 4; c.B = 2; c.Mq = 2; c.Mkv = 1;
    for (int s = 0; s < 4; s++) c.lenq[s] = 1 + s % 3;
    for (int s = 0; s < 2; s++) c.lenkv[s] = 2 + s;
    for (int t = 0; t < 3; t++) { c.lo[t] = 0; c.hi[t] = 4; }
    setup(&c);
    inputs_t in;
    random_inputs(&c, &in);
    void *q = to_lay(&c, 1, in.q, c.qS, 0), *k = to_lay(&c, 0, in.k, c.kS, 0), *v = to_lay(&c, 0, in.v, c.vS, 0), *r = to_lay(&c, 1, in.r, c.O, 0);
    long no = nq(&c, c.O);
    float *o = malloc(no * 4), *res = malloc(c.res), *ws = malloc(c.work);
    for (long i = 0; i < no; i++) o[i] = 42;
    int badlen[4] = {1, 2, 3, 3};
    const cudnnAttnDescriptor_t A = c.a;
#define FWD(curr, lo, hi, lq, lk, qd, kd, vd, od, resid, wsz, wsp, rsz, rsp) \
    cudnnMultiHeadAttnForward(h, A, curr, lo, hi, lq, lk, qd, q, resid, kd, k, vd, v, od, o, wsz, c.w, wsp, ws, rsz, rsp)
    const cudnnStatus_t BP = CUDNN_STATUS_BAD_PARAM;
    TH_STATUS(FWD(-1, c.lo, c.hi, c.lenq, c.lenkv, c.qd, c.kd, c.vd, c.od, r, c.wbytes, c.work, c.res - 1, res), BP);
    TH_STATUS(FWD(-1, c.lo, c.hi, c.lenq, c.lenkv, c.qd, c.kd, c.vd, c.od, r, c.wbytes, c.work - 1, c.res, res), BP);
    TH_STATUS(FWD(-1, c.lo, c.hi, c.lenq, c.lenkv, c.qd, c.kd, c.vd, c.od, r, c.wbytes - 4, c.work, c.res, res), BP);
    TH_STATUS(FWD(0, c.lo, c.hi, c.lenq, c.lenkv, c.qd, c.kd, c.vd, c.od, r, c.wbytes, c.work, c.res, res), BP); /* one step in training */
    TH_STATUS(FWD(3, c.lo, c.hi, c.lenq, c.lenkv, c.qd, c.kd, c.vd, c.od, r, c.wbytes, c.work, 0, NULL), BP);   /* currIdx >= Tq */
    TH_STATUS(FWD(-1, NULL, c.hi, c.lenq, c.lenkv, c.qd, c.kd, c.vd, c.od, r, c.wbytes, c.work, c.res, res), BP);
    TH_STATUS(FWD(-1, c.lo, c.hi, NULL, c.lenkv, c.qd, c.kd, c.vd, c.od, r, c.wbytes, c.work, c.res, res), BP);
    /* on a CUDA handle this file's data buffers are host memory: only calls that fail before
     * reading data run there (the device length arrays are not compared on CUDA) */
    int cpu = !th_is_gpu(h);
    if (cpu) {
        TH_STATUS(FWD(-1, c.lo, c.hi, badlen, c.lenkv, c.qd, c.kd, c.vd, c.od, r, c.wbytes, c.work, c.res, res), BP);
        TH_STATUS(FWD(-1, c.lo, c.hi, c.lenq, c.lenq, c.qd, c.kd, c.vd, c.od, r, c.wbytes, c.work, c.res, res), BP);
    }
    TH_STATUS(FWD(-1, c.lo, c.hi, c.lenq, c.lenkv, c.kd, c.kd, c.vd, c.od, r, c.wbytes, c.work, c.res, res), BP);  /* q VECT */
    TH_STATUS(FWD(-1, c.lo, c.hi, c.lenq, c.lenkv, c.qd, c.vd, c.vd, c.od, r, c.wbytes, c.work, c.res, res), BP);  /* k VECT */
    TH_STATUS(FWD(-1, c.lo, c.hi, c.lenq, c.lenkv, c.qd, c.kd, NULL, c.od, r, c.wbytes, c.work, c.res, res), BP);
    /* K/V with the query beam under ALL_TO_ONE */
    cudnnSeqDataDescriptor_t kb;
    cudnnCreateSeqDataDescriptor(&kb);
    int kdims[4] = {4, 2, 2, 5}, kl[4] = {2, 3, 2, 3};
    TH_OK(cudnnSetSeqDataDescriptor(kb, CUDNN_DATA_FLOAT, 4, kdims, c.axk, 4, kl, NULL));
    TH_STATUS(FWD(-1, c.lo, c.hi, c.lenq, kl, c.qd, kb, c.vd, c.od, r, c.wbytes, c.work, c.res, res), BP);
    /* a data type other than the attention's */
    cudnnSeqDataDescriptor_t qdd;
    cudnnCreateSeqDataDescriptor(&qdd);
    int qdims[4] = {3, 2, 2, 4};
    TH_OK(cudnnSetSeqDataDescriptor(qdd, CUDNN_DATA_DOUBLE, 4, qdims, c.axq, 4, c.lenq, NULL));
    TH_STATUS(FWD(-1, c.lo, c.hi, c.lenq, c.lenkv, qdd, c.kd, c.vd, c.od, r, c.wbytes, c.work, c.res, res), BP);
    /* TIME beyond the descriptor's qoMaxSeqLength */
    int qbig[4] = {9, 2, 2, 4}, lq9[4] = {1, 2, 3, 4};
    TH_OK(cudnnSetSeqDataDescriptor(qdd, CUDNN_DATA_FLOAT, 4, qbig, c.axq, 4, lq9, NULL));
    TH_STATUS(FWD(-1, c.lo, c.hi, lq9, c.lenkv, qdd, c.kd, c.vd, c.od, r, c.wbytes, c.work, c.res, res), BP);
    int ok = 1;
    for (long i = 0; i < no; i++) ok &= o[i] == 42;
    TH_CHECK(ok, "failed forward calls leave out untouched");
    /* residuals need O == qSize: a second descriptor with oProjSize 3 */
    cudnnAttnDescriptor_t a2;
    cudnnCreateAttnDescriptor(&a2);
    TH_OK(cudnnSetAttnDescriptor(a2, 0, 2, 1.0, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, NULL, NULL, 4, 5, 3, 3, 3, 2, 3, 3, 4, 2, 2));
    cudnnSeqDataDescriptor_t o3;
    cudnnCreateSeqDataDescriptor(&o3);
    int odims[4] = {3, 2, 2, 3};
    TH_OK(cudnnSetSeqDataDescriptor(o3, CUDNN_DATA_FLOAT, 4, odims, c.axq, 4, c.lenq, NULL));
    size_t wb2, wk2, rs2;
    TH_OK(cudnnGetMultiHeadAttnBuffers(h, a2, &wb2, &wk2, &rs2));
    void *w2 = calloc(wb2, 1), *ws2 = malloc(wk2);
    TH_STATUS(cudnnMultiHeadAttnForward(h, a2, -1, c.lo, c.hi, c.lenq, c.lenkv, c.qd, q, r, c.kd, k, c.vd, v, o3, o, wb2, w2, wk2, ws2, 0, NULL), BP);
    if (cpu) TH_OK(cudnnMultiHeadAttnForward(h, a2, -1, c.lo, c.hi, c.lenq, c.lenkv, c.qd, q, NULL, c.kd, k, c.vd, v, o3, o, wb2, w2, wk2, ws2, 0, NULL));
    free(w2); free(ws2);
    cudnnDestroySeqDataDescriptor(o3);
    cudnnDestroyAttnDescriptor(a2);
    /* backward errors */
    if (cpu) TH_OK(FWD(-1, c.lo, c.hi, c.lenq, c.lenkv, c.qd, c.kd, c.vd, c.od, r, c.wbytes, c.work, c.res, res));
    float *dq = malloc(nq(&c, c.qS) * 4), *dk = malloc(nk(&c, c.kS) * 4), *dv = malloc(nk(&c, c.vS) * 4), *dw = malloc(c.wbytes);
    for (long i = 0; i < nq(&c, c.qS); i++) dq[i] = 42;
    for (size_t i = 0; i < c.wbytes / 4; i++) dw[i] = 42;
    TH_STATUS(cudnnMultiHeadAttnBackwardData(h, A, c.lo, c.hi, c.lenq, c.lenkv, c.od, o, c.qd, dq, q, c.kd, dk, k, c.vd, dv, v, c.wbytes, c.w, c.work, ws,
                                             c.res, NULL),
              BP);
    TH_STATUS(cudnnMultiHeadAttnBackwardData(h, A, c.lo, c.hi, c.lenq, c.lenkv, c.od, NULL, c.qd, dq, q, c.kd, dk, k, c.vd, dv, v, c.wbytes, c.w, c.work,
                                             ws, c.res, res),
              BP);
    TH_STATUS(cudnnMultiHeadAttnBackwardData(h, A, c.lo, NULL, c.lenq, c.lenkv, c.od, o, c.qd, dq, q, c.kd, dk, k, c.vd, dv, v, c.wbytes, c.w, c.work, ws,
                                             c.res, res),
              BP);
    TH_STATUS(cudnnMultiHeadAttnBackwardData(h, A, c.lo, c.hi, c.lenq, c.lenkv, c.kd, o, c.qd, dq, q, c.kd, dk, k, c.vd, dv, v, c.wbytes, c.w, c.work, ws,
                                             c.res, res),
              BP);
    ok = 1;
    for (long i = 0; i < nq(&c, c.qS); i++) ok &= dq[i] == 42;
    TH_CHECK(ok, "failed backward data leaves dqueries untouched");
    TH_STATUS(cudnnMultiHeadAttnBackwardWeights(h, A, (cudnnWgradMode_t)5, c.qd, q, c.kd, k, c.vd, v, c.od, o, c.wbytes, c.w, dw, c.work, ws, c.res, res),
              BP);
    TH_STATUS(cudnnMultiHeadAttnBackwardWeights(h, A, CUDNN_WGRAD_MODE_SET, c.qd, q, c.kd, k, c.vd, v, c.od, o, c.wbytes, c.w, NULL, c.work, ws, c.res,
                                                res),
              BP);
    TH_STATUS(cudnnMultiHeadAttnBackwardWeights(h, A, CUDNN_WGRAD_MODE_SET, c.qd, q, c.kd, k, c.vd, v, c.od, o, c.wbytes, c.w, dw, c.work, ws, c.res - 8,
                                                res),
              BP);
    TH_STATUS(cudnnMultiHeadAttnBackwardWeights(h, A, CUDNN_WGRAD_MODE_SET, c.qd, q, c.kd, k, c.vd, v, c.od, o, c.wbytes, c.w, dw, c.work, ws, c.res,
                                                NULL),
              BP);
    TH_STATUS(cudnnMultiHeadAttnBackwardWeights(h, A, CUDNN_WGRAD_MODE_SET, c.qd, q, c.kd, k, c.vd, v, NULL, o, c.wbytes, c.w, dw, c.work, ws, c.res, res),
              BP);
    ok = 1;
    for (size_t i = 0; i < c.wbytes / 4; i++) ok &= dw[i] == 42;
    TH_CHECK(ok, "failed backward weights leaves dweights untouched");
    if (cpu) {
        TH_OK(cudnnMultiHeadAttnBackwardData(h, A, c.lo, c.hi, c.lenq, c.lenkv, c.od, o, c.qd, dq, q, c.kd, dk, k, c.vd, dv, v, c.wbytes, c.w, c.work,
                                             ws, c.res, res));
        TH_OK(cudnnMultiHeadAttnBackwardWeights(h, A, CUDNN_WGRAD_MODE_SET, c.qd, q, c.kd, k, c.vd, v, c.od, o, c.wbytes, c.w, dw, c.work, ws, c.res,
                                                res));
    }
#undef FWD
    free(q); free(k); free(v); free(r); free(o); free(res); free(ws); free(dq); free(dk); free(dv); free(dw);
    cudnnDestroySeqDataDescriptor(kb);
    cudnnDestroySeqDataDescriptor(qdd);
    free_inputs(&in);
    teardown(&c);
}

int main(void)
{
    th_seed(0xA77E);
    h = th_create_handle();
    test_descriptors();
    test_forward();
    test_gradients();
    test_large();
    test_call_errors();
    cudnnDestroy(h);
    return th_finish();
}
