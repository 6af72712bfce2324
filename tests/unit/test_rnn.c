/* RNN v8 API: descriptors, weight layout (through cudnnGetRNNWeightParams), forward against
 * the unrolled double reference for every cell/direction/layout/dtype, finite-difference
 * checks of cudnnRNNBackwardData_v8 and cudnnRNNBackwardWeights_v8, error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"
#include "rnn_ref.h"
#include "norm_ref.h"

static cudnnHandle_t h;

typedef struct {
    int mode, D, L, in, H, P, bias, skip, T, N, clip;
    cudnnDataType_t dt;
    cudnnRNNDataLayout_t layout;
    int len[16];
    cudnnRNNDescriptor_t rnn;
    cudnnDropoutDescriptor_t drop; /* NULL: no dropout */
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd, cd;
    size_t wbytes, work, res;
    void *w;
    double *wd;           /* double copy of the weight space */
    ref_rnn_layer *layers;
    ref_rnn ref;
} cfg_t;

static size_t esz(cudnnDataType_t t) { return th_dtype_size(t); }

static void setup(cfg_t *c)
{
    cudnnCreateRNNDescriptor(&c->rnn);
    TH_OK(cudnnSetRNNDescriptor_v8(c->rnn, CUDNN_RNN_ALGO_STANDARD, (cudnnRNNMode_t)c->mode, (cudnnRNNBiasMode_t)c->bias,
                                   c->D == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, c->skip ? CUDNN_SKIP_INPUT : CUDNN_LINEAR_INPUT, c->dt,
                                   c->dt == CUDNN_DATA_HALF ? CUDNN_DATA_FLOAT : c->dt, CUDNN_DEFAULT_MATH, c->in, c->H, c->P, c->L, c->drop,
                                   CUDNN_RNN_PADDED_IO_ENABLED));
    if (c->clip) TH_OK(cudnnRNNSetClip_v8(c->rnn, CUDNN_RNN_CLIP_MINMAX, CUDNN_NOT_PROPAGATE_NAN, -0.3, 0.35));
    cudnnCreateRNNDataDescriptor(&c->xd);
    cudnnCreateRNNDataDescriptor(&c->yd);
    double fill = -7;
    float ffill = -7;
    uint16_t hfill;
    th_from_double(&fill, CUDNN_DATA_HALF, &hfill, 1);
    void *fp = c->dt == CUDNN_DATA_DOUBLE ? (void *)&fill : c->dt == CUDNN_DATA_HALF ? (void *)&hfill : (void *)&ffill;
    TH_OK(cudnnSetRNNDataDescriptor(c->xd, c->dt, c->layout, c->T, c->N, c->in, c->len, NULL));
    TH_OK(cudnnSetRNNDataDescriptor(c->yd, c->dt, c->layout, c->T, c->N, c->D * c->P, c->len, fp));
    cudnnCreateTensorDescriptor(&c->hd);
    cudnnCreateTensorDescriptor(&c->cd);
    int hdim[3] = {c->L * c->D, c->N, c->P}, hst[3] = {c->N * c->P, c->P, 1};
    int cdim[3] = {c->L * c->D, c->N, c->H}, cst[3] = {c->N * c->H, c->H, 1};
    cudnnSetTensorNdDescriptor(c->hd, c->dt, 3, hdim, hst);
    cudnnSetTensorNdDescriptor(c->cd, c->dt, 3, cdim, cst);
    TH_OK(cudnnGetRNNWeightSpaceSize(h, c->rnn, &c->wbytes));
    size_t nw = c->wbytes / esz(c->dt);
    c->w = malloc(c->wbytes);
    c->wd = calloc(nw, sizeof(double));
    size_t r1, w0;
    TH_OK(cudnnGetRNNTempSpaceSizes(h, c->rnn, CUDNN_FWD_MODE_TRAINING, c->xd, &c->work, &c->res));
    TH_OK(cudnnGetRNNTempSpaceSizes(h, c->rnn, CUDNN_FWD_MODE_INFERENCE, c->xd, &w0, &r1));
    TH_CHECK(r1 == 0, "no reserve space for inference");
    if (w0 > c->work) c->work = w0;
    /* fill every parameter through the pointers the API reports; check they tile the space */
    unsigned char *seen = calloc(nw, 1);
    int G = c->mode == 2 ? 4 : c->mode == 3 ? 3 : 1;
    c->layers = calloc((size_t)(c->L * c->D), sizeof(ref_rnn_layer));
    cudnnTensorDescriptor_t md, bd;
    cudnnCreateTensorDescriptor(&md);
    cudnnCreateTensorDescriptor(&bd);
    int overlap = 0;
    for (int pl = 0; pl < c->L * c->D; pl++) {
        int nid = 2 * G + (c->P < c->H ? 1 : 0);
        for (int q = 0; q < nid; q++) {
            int id = q < 2 * G ? q : 8;
            void *ma = NULL, *ba = NULL;
            TH_OK(cudnnGetRNNWeightParams(h, c->rnn, pl, c->wbytes, c->w, id, md, &ma, bd, &ba));
            for (int which = 0; which < 2; which++) {
                void *a = which ? ba : ma;
                if (!a) continue;
                cudnnDataType_t t;
                int nd, dims[8], st[8];
                cudnnGetTensorNdDescriptor(which ? bd : md, 8, &t, &nd, dims, st);
                size_t cnt = (size_t)dims[0] * dims[1] * dims[2];
                size_t off = (size_t)((char *)a - (char *)c->w) / esz(c->dt);
                for (size_t i = 0; i < cnt; i++) {
                    overlap |= seen[off + i];
                    seen[off + i] = 1;
                    c->wd[off + i] = th_uniform(-0.6, 0.6);
                }
                th_from_double(c->wd + off, c->dt, (char *)c->w + off * esz(c->dt), cnt);
                th_to_double((char *)c->w + off * esz(c->dt), c->dt, c->wd + off, cnt);
                const double *p = c->wd + off;
                ref_rnn_layer *ly = &c->layers[pl];
                if (id == 8) ly->Proj = p;
                else if (which == 0) { if (id < G) ly->W[id] = p; else ly->R[id - G] = p; }
                else { if (id < G) ly->bW[id] = p; else ly->bR[id - G] = p; }
            }
        }
    }
    size_t unseen = 0;
    for (size_t i = 0; i < nw; i++) unseen += !seen[i];
    TH_CHECK(!overlap && unseen == 0, "weight params tile the weight space (overlap %d, %zu elements unreported)", overlap, unseen);
    free(seen);
    cudnnDestroyTensorDescriptor(md);
    cudnnDestroyTensorDescriptor(bd);
    c->ref.mode = c->mode; c->ref.H = c->H; c->ref.P = c->P; c->ref.L = c->L; c->ref.D = c->D; c->ref.in0 = c->in;
    c->ref.layers = c->layers; c->ref.clip = c->clip; c->ref.lclip = -0.3; c->ref.rclip = 0.35;
    c->ref.keep = NULL;
}

static void teardown(cfg_t *c)
{
    cudnnDestroyRNNDescriptor(c->rnn);
    cudnnDestroyRNNDataDescriptor(c->xd);
    cudnnDestroyRNNDataDescriptor(c->yd);
    cudnnDestroyTensorDescriptor(c->hd);
    cudnnDestroyTensorDescriptor(c->cd);
    free(c->w); free(c->wd); free(c->layers);
}

static long io_off(const cfg_t *c, int t, int n, int V)
{
    if (c->layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED) return ((long)t * c->N + n) * V;
    if (c->layout == CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED) return ((long)n * c->T + t) * V;
    long o = 0;
    for (int tt = 0; tt < t; tt++) for (int k = 0; k < c->N; k++) o += c->len[k] > tt;
    return (o + n) * V;
}
static long io_count(const cfg_t *c, int V)
{
    if (c->layout != CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED) return (long)c->T * c->N * V;
    long o = 0;
    for (int k = 0; k < c->N; k++) o += c->len[k];
    return o * V;
}
/* dense t-major [T][N][V] <-> layout */
static void to_layout(const cfg_t *c, const double *dense, double *lay, int V)
{
    for (int n = 0; n < c->N; n++)
        for (int t = 0; t < c->len[n]; t++)
            for (int v = 0; v < V; v++) lay[io_off(c, t, n, V) + v] = dense[((long)t * c->N + n) * V + v];
}

/* th_compare, except that an all-zero reference (a ReLU network whose units are all off) is
 * checked for an all-zero result instead of being rejected */
static void cmp(const char *what, const double *got, const double *want, long n, double tol)
{
    int nz = 0;
    for (long i = 0; i < n; i++) nz |= want[i] != 0;
    if (nz) { th_compare(what, got, want, (size_t)n, tol); return; }
    double m = 0;
    for (long i = 0; i < n; i++) m = fmax(m, fabs(got[i]));
    TH_CHECK(m <= tol, "%s: reference all zero, result up to %g", what, m);
}


/* FLOAT tolerance: the CPU engine computes in double; the CUDA engine in FP32 (no TF32) */
static double tol_of(cudnnDataType_t dt)
{
    if (dt == CUDNN_DATA_HALF) return 5e-3;
    if (dt == CUDNN_DATA_DOUBLE) return 1e-12;
    return th_is_gpu(h) ? 2e-5 : 2e-6;
}

/* a library-visible buffer holding host doubles converted to dt (NULL stays NULL) */
static void *dev_of(const double *src, cudnnDataType_t dt, long n)
{
    if (!src) return NULL;
    size_t bytes = (size_t)n * th_dtype_size(dt);
    void *hb = malloc(bytes ? bytes : 1), *d = th_alloc(h, bytes ? bytes : 1);
    th_from_double(src, dt, hb, (size_t)n);
    th_upload(h, d, hb, bytes);
    free(hb);
    return d;
}
static void host_of(const void *d, cudnnDataType_t dt, double *dst, long n)
{
    size_t bytes = (size_t)n * th_dtype_size(dt);
    void *hb = malloc(bytes ? bytes : 1);
    th_download(h, hb, d, bytes);
    th_to_double(hb, dt, dst, (size_t)n);
    free(hb);
}

typedef struct { double *y, *hy, *cy; } outs_t;

/* runs cudnnRNNForward with host doubles converted to the config's type; res is a
 * library-visible buffer (th_alloc) */
static cudnnStatus_t fwd(cfg_t *c, int training, const double *xl, const double *hx, const double *cx, const double *wd, outs_t *o, void *res)
{
    int Vy = c->D * c->P;
    long nx = io_count(c, c->in), ny = c->layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED ? io_count(c, Vy) : (long)c->T * c->N * Vy;
    long nh = (long)c->L * c->D * c->N * c->P, nc = (long)c->L * c->D * c->N * c->H;
    size_t es = esz(c->dt), nw = c->wbytes / es;
    void *x = dev_of(xl, c->dt, nx), *hxb = dev_of(hx, c->dt, nh), *cxb = dev_of(cx, c->dt, nc), *w = dev_of(wd, c->dt, (long)nw);
    void *y = th_alloc(h, ny * es), *hyb = th_alloc(h, nh * es), *cyb = th_alloc(h, nc * es), *ws = th_alloc(h, c->work);
    void *ff = malloc(ny * es);
    memset(ff, 0xff, ny * es);
    th_upload(h, y, ff, ny * es);
    free(ff);
    cudnnStatus_t s = cudnnRNNForward(h, c->rnn, training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE, c->len, c->xd, x, c->yd, y, c->hd,
                                      hxb, hyb, c->cd, cxb, cyb, c->wbytes, w, c->work, ws, training ? c->res : 0, res);
    host_of(y, c->dt, o->y, ny);
    host_of(hyb, c->dt, o->hy, nh);
    if (c->mode == 2) host_of(cyb, c->dt, o->cy, nc);
    th_free(h, x); th_free(h, y); th_free(h, hxb); th_free(h, hyb); th_free(h, cxb); th_free(h, cyb); th_free(h, w); th_free(h, ws);
    return s;
}

/* backward data then backward weights (SET into dw, ADD onto 0.5 into dw2 when dw2 != NULL),
 * all with host doubles; res holds the reserve of the preceding training forward */
static void bwd(cfg_t *c, void *res, const double *yv, const double *dyv, const double *hx, const double *dhy, const double *cx, const double *dcy,
                const double *xl, double *dx, double *dhx, double *dcx, double *dw, double *dw2)
{
    int Vy = c->D * c->P;
    long nx = io_count(c, c->in), ny = c->layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED ? io_count(c, Vy) : (long)c->T * c->N * Vy;
    long nh = (long)c->L * c->D * c->N * c->P, nc = (long)c->L * c->D * c->N * c->H;
    long nw = (long)(c->wbytes / esz(c->dt));
    void *yb = dev_of(yv, c->dt, ny), *dyb = dev_of(dyv, c->dt, ny), *hxb = dev_of(hx, c->dt, nh), *dhyb = dev_of(dhy, c->dt, nh);
    void *cxb = dev_of(cx, c->dt, nc), *dcyb = dev_of(dcy, c->dt, nc), *w = dev_of(c->wd, c->dt, nw), *xb = dev_of(xl, c->dt, nx);
    void *dxb = th_alloc(h, nx * esz(c->dt)), *dhxb = th_alloc(h, nh * esz(c->dt)), *dcxb = th_alloc(h, nc * esz(c->dt)), *ws = th_alloc(h, c->work);
    TH_OK(cudnnRNNBackwardData_v8(h, c->rnn, c->len, c->yd, yb, dyb, c->xd, dxb, c->hd, hxb, dhyb, dhxb, c->cd, cxb, dcyb, dcxb, c->wbytes, w, c->work,
                                  ws, c->res, res));
    host_of(dxb, c->dt, dx, nx);
    host_of(dhxb, c->dt, dhx, nh);
    if (c->mode == 2) host_of(dcxb, c->dt, dcx, nc);
    double *init = malloc(nw * 8);
    for (long i = 0; i < nw; i++) init[i] = 1000.0;
    void *dwb = dev_of(init, c->dt, nw);
    TH_OK(cudnnRNNBackwardWeights_v8(h, c->rnn, CUDNN_WGRAD_MODE_SET, c->len, c->xd, xb, c->hd, hxb, c->yd, yb, c->wbytes, dwb, c->work, ws, c->res, res));
    host_of(dwb, c->dt, dw, nw);
    if (dw2) {
        for (long i = 0; i < nw; i++) init[i] = 0.5;
        th_free(h, dwb);
        dwb = dev_of(init, c->dt, nw);
        TH_OK(cudnnRNNBackwardWeights_v8(h, c->rnn, CUDNN_WGRAD_MODE_ADD, c->len, c->xd, xb, c->hd, hxb, c->yd, yb, c->wbytes, dwb, c->work, ws, c->res,
                                         res));
        host_of(dwb, c->dt, dw2, nw);
    }
    free(init);
    void *bufs[] = {yb, dyb, hxb, dhyb, cxb, dcyb, w, xb, dxb, dhxb, dcxb, ws, dwb};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) th_free(h, bufs[i]);
}

static void random_cfg(cfg_t *c, int mode, cudnnDataType_t dt)
{
    memset(c, 0, sizeof *c);
    c->mode = mode;
    c->dt = dt;
    c->D = th_randint(1, 2);
    c->L = th_randint(1, 3);
    c->H = th_randint(1, 6);
    c->skip = th_randint(0, 4) == 0;
    c->in = c->skip ? c->H : th_randint(1, 6);
    c->P = (mode == 2 && th_randint(0, 1)) ? th_randint(1, c->H) : c->H;
    c->bias = th_randint(0, 3);
    c->T = th_randint(1, 6);
    c->N = th_randint(1, 4);
    c->layout = (cudnnRNNDataLayout_t)th_randint(0, 2);
    c->clip = mode == 2 && th_randint(0, 2) == 0;
    for (int n = 0; n < c->N; n++) c->len[n] = th_randint(1, c->T);
    if (c->layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED) /* non-increasing */
        for (int a = 0; a < c->N; a++)
            for (int b = a + 1; b < c->N; b++)
                if (c->len[b] > c->len[a]) { int t = c->len[a]; c->len[a] = c->len[b]; c->len[b] = t; }
}

static void test_forward(void)
{
    cudnnDataType_t dts[3] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF};
    for (int it = 0; it < 72; it++) {
        cfg_t c;
        random_cfg(&c, it % 4, dts[(it / 4) % 3]);
        setup(&c);
        int Vy = c.D * c.P, useh = th_randint(0, 1);
        long TNx = (long)c.T * c.N * c.in, TNy = (long)c.T * c.N * Vy;
        long nh = (long)c.L * c.D * c.N * c.P, nc = (long)c.L * c.D * c.N * c.H;
        double *xd = calloc(TNx, sizeof(double)), *xl = calloc(TNx, sizeof(double));
        double *hx = malloc(nh * sizeof(double)), *cx = malloc(nc * sizeof(double));
        for (int n = 0; n < c.N; n++)
            for (int t = 0; t < c.len[n]; t++)
                for (int v = 0; v < c.in; v++) xd[((long)t * c.N + n) * c.in + v] = th_uniform(-1, 1);
        th_fill_uniform(hx, nh, -1, 1);
        th_fill_uniform(cx, nc, -1, 1);
        /* round inputs to the type so the reference sees what the library sees */
        void *tmp = malloc((TNx + nh + nc) * 8);
        th_from_double(xd, c.dt, tmp, TNx); th_to_double(tmp, c.dt, xd, TNx);
        th_from_double(hx, c.dt, tmp, nh); th_to_double(tmp, c.dt, hx, nh);
        th_from_double(cx, c.dt, tmp, nc); th_to_double(tmp, c.dt, cx, nc);
        free(tmp);
        to_layout(&c, xd, xl, c.in);
        double *ry = calloc(TNy, sizeof(double)), *rhy = malloc(nh * 8), *rcy = malloc(nc * 8);
        ref_rnn_forward(&c.ref, c.T, c.N, c.len, xd, useh ? hx : NULL, useh ? cx : NULL, ry, rhy, rcy);
        /* expected y in the layout, padding = fill (-7) for unpacked */
        double *ey = malloc(TNy * 8);
        for (long i = 0; i < TNy; i++) ey[i] = -7;
        to_layout(&c, ry, ey, Vy);
        long ny = c.layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED ? io_count(&c, Vy) : TNy;
        outs_t o = {malloc(TNy * 8), malloc(nh * 8), malloc(nc * 8)};
        void *res = th_alloc(h, c.res);
        int training = it & 1;
        TH_OK(fwd(&c, training, xl, useh ? hx : NULL, useh ? cx : NULL, c.wd, &o, res));
        double tol = tol_of(c.dt);
        char what[160];
        snprintf(what, sizeof what, "rnn y mode=%d %s D=%d L=%d in=%d H=%d P=%d bias=%d skip=%d layout=%d clip=%d", c.mode, th_dtype_name(c.dt), c.D,
                 c.L, c.in, c.H, c.P, c.bias, c.skip, (int)c.layout, c.clip);
        int nz = 0;
        for (long i = 0; i < ny; i++) nz |= ey[i] != 0 && ey[i] != -7;
        if (nz) cmp(what, o.y, ey, ny, tol);
        else { /* e.g. ReLU with every unit off: compare exactly */
            int same = 1;
            for (long i = 0; i < ny; i++) same &= o.y[i] == ey[i];
            TH_CHECK(same, "%s: all-zero output", what);
        }
        snprintf(what, sizeof what, "rnn hy mode=%d %s", c.mode, th_dtype_name(c.dt));
        if (nz) cmp(what, o.hy, rhy, nh, tol);
        if (c.mode == 2) cmp("rnn cy", o.cy, rcy, nc, tol);
        free(xd); free(xl); free(hx); free(cx); free(ry); free(rhy); free(rcy); free(ey); free(o.y); free(o.hy); free(o.cy); th_free(h, res);
        teardown(&c);
    }
}

/* loss = sum(wy*y) + sum(wh*hy) + sum(wc*cy), all in DOUBLE */
static double loss_of(cfg_t *c, const double *xl, const double *hx, const double *cx, const double *wd, const double *wy, const double *wh,
                      const double *wc)
{
    long ny = c->layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED ? io_count(c, c->D * c->P) : (long)c->T * c->N * c->D * c->P;
    long nh = (long)c->L * c->D * c->N * c->P, nc = (long)c->L * c->D * c->N * c->H;
    outs_t o = {malloc(ny * 8), malloc(nh * 8), malloc(nc * 8)};
    void *res = th_alloc(h, c->res);
    fwd(c, 1, xl, hx, cx, wd, &o, res);
    double s = 0;
    for (int n = 0; n < c->N; n++)
        for (int t = 0; t < c->len[n]; t++)
            for (int v = 0; v < c->D * c->P; v++) { long k = io_off(c, t, n, c->D * c->P) + v; s += wy[k] * o.y[k]; }
    for (long i = 0; i < nh; i++) s += wh[i] * o.hy[i];
    if (c->mode == 2) for (long i = 0; i < nc; i++) s += wc[i] * o.cy[i];
    free(o.y); free(o.hy); free(o.cy); th_free(h, res);
    return s;
}

static void test_gradients(void)
{
    for (int it = 0; it < 16; it++) {
        cfg_t c;
        random_cfg(&c, it % 4, CUDNN_DATA_DOUBLE);
        c.clip = 0; /* clipping kinks make finite differences unreliable */
        if (it >= 8) { c.L = 2; c.D = 2; }
        setup(&c);
        int Vy = c.D * c.P;
        long nx = io_count(&c, c.in), ny = c.layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED ? io_count(&c, Vy) : (long)c.T * c.N * Vy;
        long nh = (long)c.L * c.D * c.N * c.P, nc = (long)c.L * c.D * c.N * c.H, nw = (long)(c.wbytes / 8);
        double *xl = calloc(nx, 8), *hx = malloc(nh * 8), *cx = malloc(nc * 8), *wy = calloc(ny, 8), *wh = malloc(nh * 8), *wc = malloc(nc * 8);
        for (int n = 0; n < c.N; n++)
            for (int t = 0; t < c.len[n]; t++) {
                for (int v = 0; v < c.in; v++) xl[io_off(&c, t, n, c.in) + v] = th_uniform(-1, 1);
                for (int v = 0; v < Vy; v++) wy[io_off(&c, t, n, Vy) + v] = th_uniform(-1, 1);
            }
        th_fill_uniform(hx, nh, -1, 1); th_fill_uniform(cx, nc, -1, 1);
        th_fill_uniform(wh, nh, -1, 1); th_fill_uniform(wc, nc, -1, 1);
        /* analytic */
        void *res = th_alloc(h, c.res);
        outs_t o = {malloc(ny * 8), malloc(nh * 8), malloc(nc * 8)};
        TH_OK(fwd(&c, 1, xl, hx, cx, c.wd, &o, res));
        double *dx = malloc(nx * 8), *dhx = malloc(nh * 8), *dcx = malloc(nc * 8), *dw = malloc(nw * 8), *ydummy = calloc(ny, 8);
        double *dw2 = malloc(nw * 8);
        bwd(&c, res, o.y, wy, hx, wh, cx, wc, xl, dx, dhx, dcx, dw, dw2);
        int addok = 1;
        for (long i = 0; i < nw; i++) addok &= fabs(dw2[i] - 0.5 - dw[i]) < 1e-12;
        TH_CHECK(addok, "WGRAD_MODE_ADD adds to the existing gradient");
        /* numeric */
        const double eps = 1e-6;
        double *fx = calloc(nx, 8), *fh = malloc(nh * 8), *fc = malloc(nc * 8), *fw = malloc(nw * 8);
        double *ax = calloc(nx, 8);
        for (long i = 0; i < nx; i++) {
            double s = xl[i];
            xl[i] = s + eps; double lp = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
            xl[i] = s - eps; double lm = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
            xl[i] = s;
            fx[i] = (lp - lm) / (2 * eps);
        }
        for (int n = 0; n < c.N; n++) /* only valid positions of dx are defined */
            for (int t = 0; t < c.len[n]; t++)
                for (int v = 0; v < c.in; v++) ax[io_off(&c, t, n, c.in) + v] = dx[io_off(&c, t, n, c.in) + v];
        for (long i = 0; i < nh; i++) {
            double s = hx[i];
            hx[i] = s + eps; double lp = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
            hx[i] = s - eps; double lm = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
            hx[i] = s;
            fh[i] = (lp - lm) / (2 * eps);
        }
        for (long i = 0; i < nc && c.mode == 2; i++) {
            double s = cx[i];
            cx[i] = s + eps; double lp = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
            cx[i] = s - eps; double lm = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
            cx[i] = s;
            fc[i] = (lp - lm) / (2 * eps);
        }
        for (long i = 0; i < nw; i++) {
            double s = c.wd[i];
            c.wd[i] = s + eps; double lp = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
            c.wd[i] = s - eps; double lm = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
            c.wd[i] = s;
            fw[i] = (lp - lm) / (2 * eps);
        }
        char what[160];
        snprintf(what, sizeof what, "dx vs FD mode=%d D=%d L=%d H=%d P=%d bias=%d skip=%d layout=%d", c.mode, c.D, c.L, c.H, c.P, c.bias, c.skip,
                 (int)c.layout);
        cmp(what, ax, fx, nx, 1e-6);
        cmp("dhx vs FD", dhx, fh, nh, 1e-6);
        if (c.mode == 2) cmp("dcx vs FD", dcx, fc, nc, 1e-6);
        snprintf(what, sizeof what, "dw vs FD mode=%d D=%d L=%d H=%d P=%d bias=%d skip=%d", c.mode, c.D, c.L, c.H, c.P, c.bias, c.skip);
        cmp(what, dw, fw, nw, 1e-6);
        free(xl); free(hx); free(cx); free(wy); free(wh); free(wc); th_free(h, res); free(o.y); free(o.hy); free(o.cy);
        free(dx); free(dhx); free(dcx); free(dw); free(dw2); free(ydummy); free(fx); free(fh); free(fc); free(fw); free(ax);
        teardown(&c);
    }
}

/* ---------------------------------------------------------------- dropout between layers */
/* The mask rule of docs/rnn.md, restated from the Philox definition: element idx (dense
 * t-major index over T x N x D*P) of the output of layer l is kept iff word idx%4 of
 * philox(ctr = {idx/4 lo, idx/4 hi, l lo, l hi}, key = seed) gives u = ((w>>8)+1)/2^24 > p. */
typedef struct { uint64_t seed; float p; long kept, total; } drop_ctx;
static double drop_keep(void *ctx, int layer, long idx)
{
    drop_ctx *d = ctx;
    uint32_t ctr[4] = {(uint32_t)((uint64_t)idx >> 2), (uint32_t)((uint64_t)idx >> 34), (uint32_t)layer, 0};
    uint32_t key[2] = {(uint32_t)d->seed, (uint32_t)(d->seed >> 32)}, out[4];
    ref_philox4x32_10(ctr, key, out);
    float u = ((float)(out[idx & 3] >> 8) + 1.0f) * (1.0f / 16777216.0f);
    int keep = u > d->p;
    d->kept += keep;
    d->total++;
    return keep ? 1.0 / (1.0 - (double)d->p) : 0.0;
}

static void test_dropout(void)
{
    cudnnDropoutDescriptor_t dd;
    TH_OK(cudnnCreateDropoutDescriptor(&dd));
    size_t ssz;
    TH_OK(cudnnDropoutGetStatesSize(h, &ssz));
    void *states = malloc(ssz);
    cudnnDataType_t dts[3] = {CUDNN_DATA_DOUBLE, CUDNN_DATA_FLOAT, CUDNN_DATA_HALF};
    long kept = 0, total = 0;
    /* forward (training applies the mask, inference does not) against the masked reference */
    for (int it = 0; it < 24; it++) {
        drop_ctx dc = {0x1234567ull + (uint64_t)it * 7919u, 0.5f, 0, 0};
        TH_OK(cudnnSetDropoutDescriptor(dd, h, dc.p, states, ssz, dc.seed));
        cfg_t c;
        random_cfg(&c, it % 4, dts[it % 3]);
        c.L = th_randint(2, 3);
        c.T = th_randint(3, 6);
        c.N = th_randint(2, 4);
        for (int n = 0; n < c.N; n++) c.len[n] = th_randint(1, c.T);
        c.layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED;
        c.drop = dd;
        setup(&c);
        int Vy = c.D * c.P;
        long TNx = (long)c.T * c.N * c.in, TNy = (long)c.T * c.N * Vy;
        long nh = (long)c.L * c.D * c.N * c.P, nc = (long)c.L * c.D * c.N * c.H;
        double *xd = calloc(TNx, 8), *hx = malloc(nh * 8), *cx = malloc(nc * 8);
        for (int n = 0; n < c.N; n++)
            for (int t = 0; t < c.len[n]; t++)
                for (int v = 0; v < c.in; v++) xd[((long)t * c.N + n) * c.in + v] = th_uniform(-1, 1);
        th_fill_uniform(hx, nh, -1, 1);
        th_fill_uniform(cx, nc, -1, 1);
        void *tmp = malloc((TNx + nh + nc) * 8);
        th_from_double(xd, c.dt, tmp, TNx); th_to_double(tmp, c.dt, xd, TNx);
        th_from_double(hx, c.dt, tmp, nh); th_to_double(tmp, c.dt, hx, nh);
        th_from_double(cx, c.dt, tmp, nc); th_to_double(tmp, c.dt, cx, nc);
        free(tmp);
        double tol = tol_of(c.dt);
        for (int training = 0; training < 2; training++) {
            double *ry = calloc(TNy, 8), *rhy = malloc(nh * 8), *rcy = malloc(nc * 8), *ey = malloc(TNy * 8);
            c.ref.keep = training ? drop_keep : NULL;
            c.ref.keep_ctx = &dc;
            ref_rnn_forward(&c.ref, c.T, c.N, c.len, xd, hx, cx, ry, rhy, rcy);
            for (long i = 0; i < TNy; i++) ey[i] = -7;
            to_layout(&c, ry, ey, Vy);
            outs_t o = {malloc(TNy * 8), malloc(nh * 8), malloc(nc * 8)};
            void *res = th_alloc(h, c.res);
            TH_OK(fwd(&c, training, xd, hx, cx, c.wd, &o, res));
            char what[160];
            snprintf(what, sizeof what, "rnn dropout %s y mode=%d %s D=%d L=%d H=%d P=%d", training ? "training" : "inference", c.mode,
                     th_dtype_name(c.dt), c.D, c.L, c.H, c.P);
            cmp(what, o.y, ey, TNy, tol);
            cmp("rnn dropout hy", o.hy, rhy, nh, tol);
            if (c.mode == 2) cmp("rnn dropout cy", o.cy, rcy, nc, tol);
            free(ry); free(rhy); free(rcy); free(ey); free(o.y); free(o.hy); free(o.cy); th_free(h, res);
        }
        kept += dc.kept;
        total += dc.total;
        c.ref.keep = NULL;
        free(xd); free(hx); free(cx);
        teardown(&c);
    }
    TH_CHECK(total > 200 && kept > total / 3 && kept < 2 * total / 3, "p=0.5 keeps about half (%ld of %ld)", kept, total);
    /* backward with the fixed mask against finite differences of the (masked) training forward */
    for (int it = 0; it < 8; it++) {
        TH_OK(cudnnSetDropoutDescriptor(dd, h, 0.5f, states, ssz, 99 + (unsigned long long)it));
        cfg_t c;
        random_cfg(&c, it % 4, CUDNN_DATA_DOUBLE);
        c.clip = 0;
        c.L = 2 + (it & 1);
        c.drop = dd;
        setup(&c);
        int Vy = c.D * c.P;
        long nx = io_count(&c, c.in), ny = c.layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED ? io_count(&c, Vy) : (long)c.T * c.N * Vy;
        long nh = (long)c.L * c.D * c.N * c.P, nc = (long)c.L * c.D * c.N * c.H, nw = (long)(c.wbytes / 8);
        double *xl = calloc(nx, 8), *hx = malloc(nh * 8), *cx = malloc(nc * 8), *wy = calloc(ny, 8), *wh = malloc(nh * 8), *wc = malloc(nc * 8);
        for (int n = 0; n < c.N; n++)
            for (int t = 0; t < c.len[n]; t++) {
                for (int v = 0; v < c.in; v++) xl[io_off(&c, t, n, c.in) + v] = th_uniform(-1, 1);
                for (int v = 0; v < Vy; v++) wy[io_off(&c, t, n, Vy) + v] = th_uniform(-1, 1);
            }
        th_fill_uniform(hx, nh, -1, 1); th_fill_uniform(cx, nc, -1, 1);
        th_fill_uniform(wh, nh, -1, 1); th_fill_uniform(wc, nc, -1, 1);
        void *res = th_alloc(h, c.res);
        outs_t o = {malloc(ny * 8), malloc(nh * 8), malloc(nc * 8)};
        TH_OK(fwd(&c, 1, xl, hx, cx, c.wd, &o, res));
        double *dx = malloc(nx * 8), *dhx = malloc(nh * 8), *dcx = malloc(nc * 8), *dw = malloc(nw * 8);
        bwd(&c, res, o.y, wy, hx, wh, cx, wc, xl, dx, dhx, dcx, dw, NULL);
        const double eps = 1e-6;
        double *fx = calloc(nx, 8), *ax = calloc(nx, 8), *fh = malloc(nh * 8), *fw = malloc(nw * 8);
        for (int n = 0; n < c.N; n++)
            for (int t = 0; t < c.len[n]; t++)
                for (int v = 0; v < c.in; v++) {
                    long i = io_off(&c, t, n, c.in) + v;
                    double s = xl[i];
                    xl[i] = s + eps; double lp = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
                    xl[i] = s - eps; double lm = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
                    xl[i] = s;
                    fx[i] = (lp - lm) / (2 * eps);
                    ax[i] = dx[i];
                }
        for (long i = 0; i < nh; i++) {
            double s = hx[i];
            hx[i] = s + eps; double lp = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
            hx[i] = s - eps; double lm = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
            hx[i] = s;
            fh[i] = (lp - lm) / (2 * eps);
        }
        for (long i = 0; i < nw; i++) {
            double s = c.wd[i];
            c.wd[i] = s + eps; double lp = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
            c.wd[i] = s - eps; double lm = loss_of(&c, xl, hx, cx, c.wd, wy, wh, wc);
            c.wd[i] = s;
            fw[i] = (lp - lm) / (2 * eps);
        }
        char what[160];
        snprintf(what, sizeof what, "dropout dx vs FD mode=%d D=%d L=%d H=%d P=%d layout=%d", c.mode, c.D, c.L, c.H, c.P, (int)c.layout);
        cmp(what, ax, fx, nx, 1e-6);
        cmp("dropout dhx vs FD", dhx, fh, nh, 1e-6);
        snprintf(what, sizeof what, "dropout dw vs FD mode=%d D=%d L=%d H=%d P=%d", c.mode, c.D, c.L, c.H, c.P);
        cmp(what, dw, fw, nw, 1e-6);
        free(xl); free(hx); free(cx); free(wy); free(wh); free(wc); th_free(h, res); free(o.y); free(o.hy); free(o.cy);
        free(dx); free(dhx); free(dcx); free(dw); free(fx); free(ax); free(fh); free(fw);
        teardown(&c);
    }
    TH_OK(cudnnDestroyDropoutDescriptor(dd));
    free(states);
}

static void test_desc_errors(void)
{
    cudnnRNNDescriptor_t r;
    TH_OK(cudnnCreateRNNDescriptor(&r));
    cudnnRNNMode_t cm;
    TH_STATUS(cudnnGetRNNDescriptor_v8(r, NULL, &cm, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), CUDNN_STATUS_BAD_PARAM);
#define SET(mode, bias, in, hid, proj, L, dt, prec, aux) \
    cudnnSetRNNDescriptor_v8(r, CUDNN_RNN_ALGO_STANDARD, mode, bias, CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, dt, prec, CUDNN_DEFAULT_MATH, in, hid, proj, L, NULL, aux)
    TH_OK(SET(CUDNN_GRU, CUDNN_RNN_DOUBLE_BIAS, 3, 4, 4, 2, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 0));
    int32_t in, hid, proj, L;
    uint32_t aux;
    TH_OK(cudnnGetRNNDescriptor_v8(r, NULL, &cm, NULL, NULL, NULL, NULL, NULL, NULL, &in, &hid, &proj, &L, NULL, &aux));
    TH_CHECK(cm == CUDNN_GRU && in == 3 && hid == 4 && proj == 4 && L == 2 && aux == 0, "v8 getter");
    TH_STATUS(SET(CUDNN_GRU, CUDNN_RNN_DOUBLE_BIAS, 3, 4, 2, 2, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 0), CUDNN_STATUS_BAD_PARAM); /* proj on GRU */
    TH_STATUS(SET(CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, 3, 4, 5, 2, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 0), CUDNN_STATUS_BAD_PARAM); /* proj > hidden */
    TH_STATUS(SET(CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, 0, 4, 4, 2, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 0), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SET(CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, 3, 4, 4, 0, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 0), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SET((cudnnRNNMode_t)9, CUDNN_RNN_DOUBLE_BIAS, 3, 4, 4, 1, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 0), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SET(CUDNN_LSTM, (cudnnRNNBiasMode_t)9, 3, 4, 4, 1, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 0), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SET(CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, 3, 4, 4, 1, CUDNN_DATA_INT8, CUDNN_DATA_FLOAT, 0), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(SET(CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, 3, 4, 4, 1, CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, 0), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(SET(CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, 3, 4, 4, 1, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 6), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnGetRNNDescriptor_v8(r, NULL, &cm, NULL, NULL, NULL, NULL, NULL, NULL, &in, &hid, &proj, &L, NULL, &aux));
    TH_CHECK(cm == CUDNN_GRU && in == 3, "failed setters leave the descriptor unchanged");
    TH_STATUS(cudnnRNNSetClip_v8(r, CUDNN_RNN_CLIP_MINMAX, CUDNN_NOT_PROPAGATE_NAN, -1, 1), CUDNN_STATUS_BAD_PARAM); /* GRU */
    TH_OK(SET(CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, 3, 4, 2, 1, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 0));
    TH_STATUS(cudnnRNNSetClip_v8(r, CUDNN_RNN_CLIP_MINMAX, CUDNN_NOT_PROPAGATE_NAN, 1, -1), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnRNNSetClip_v8(r, CUDNN_RNN_CLIP_MINMAX, CUDNN_PROPAGATE_NAN, -2, 3));
    cudnnRNNClipMode_t clm; cudnnNanPropagation_t nn; double lc, rc;
    TH_OK(cudnnRNNGetClip_v8(r, &clm, &nn, &lc, &rc));
    TH_CHECK(clm == CUDNN_RNN_CLIP_MINMAX && nn == CUDNN_PROPAGATE_NAN && lc == -2 && rc == 3, "clip getter");
    TH_OK(cudnnBuildRNNDynamic(h, r, 8));
    TH_STATUS(cudnnBuildRNNDynamic(h, r, 0), CUDNN_STATUS_BAD_PARAM);
    /* weight params */
    size_t wb;
    TH_OK(cudnnGetRNNWeightSpaceSize(h, r, &wb));
    TH_CHECK(wb == sizeof(float) * (4 * 4 * 3 + 4 * 4 * 2 + 2 * 4 + 8 * 4), "LSTM weight space size with projection (%zu)", wb);
    void *w = malloc(wb), *ma, *ba;
    cudnnTensorDescriptor_t md, bd;
    cudnnCreateTensorDescriptor(&md); cudnnCreateTensorDescriptor(&bd);
    TH_STATUS(cudnnGetRNNWeightParams(h, r, 1, wb, w, 0, md, &ma, bd, &ba), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetRNNWeightParams(h, r, 0, wb, w, 9, md, &ma, bd, &ba), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetRNNWeightParams(h, r, 0, wb - 1, w, 0, md, &ma, bd, &ba), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnGetRNNWeightParams(h, r, 0, wb, w, 8, md, &ma, bd, &ba));
    TH_CHECK(ma == (char *)w + sizeof(float) * (48 + 32) && ba == NULL, "projection matrix follows the recurrent matrices, has no bias");
    TH_OK(cudnnGetRNNWeightParams(h, r, 0, wb, w, 5, md, &ma, bd, &ba));
    TH_CHECK(ma == (char *)w + sizeof(float) * (48 + 8) && ba == (char *)w + sizeof(float) * (48 + 32 + 8 + 20), "R_f and its bias");
    free(w);
    cudnnDestroyTensorDescriptor(md); cudnnDestroyTensorDescriptor(bd);
    /* data descriptors */
    cudnnRNNDataDescriptor_t d;
    TH_OK(cudnnCreateRNNDataDescriptor(&d));
    int lens[3] = {2, 3, 1}, bad[3] = {2, 4, 1}, back[3];
    float fill = 1.5f, gf = 0;
    TH_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 3, 3, 4, lens, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 3, 3, 4, bad, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 3, 3, 4, NULL, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_INT8, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 3, 3, 4, lens, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, (cudnnRNNDataLayout_t)5, 3, 3, 4, lens, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, 3, 3, 4, lens, &fill));
    cudnnDataType_t dt; cudnnRNNDataLayout_t lay; int ms, bs, vs;
    TH_OK(cudnnGetRNNDataDescriptor(d, &dt, &lay, &ms, &bs, &vs, 3, back, &gf));
    TH_CHECK(dt == CUDNN_DATA_FLOAT && lay == CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED && ms == 3 && bs == 3 && vs == 4 && back[1] == 3 && gf == 1.5f,
             "data descriptor getter");
    /* forward errors */
    TH_OK(SET(CUDNN_RNN_TANH, CUDNN_RNN_DOUBLE_BIAS, 4, 2, 2, 1, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 0));
    cudnnRNNDataDescriptor_t yd;
    cudnnCreateRNNDataDescriptor(&yd);
    cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, 3, 3, 2, lens, NULL);
    cudnnTensorDescriptor_t hd;
    cudnnCreateTensorDescriptor(&hd);
    int hdim[3] = {1, 3, 2}, hst[3] = {6, 2, 1};
    cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, hdim, hst);
    size_t ws, rs;
    TH_OK(cudnnGetRNNWeightSpaceSize(h, r, &wb));
    TH_OK(cudnnGetRNNTempSpaceSizes(h, r, CUDNN_FWD_MODE_TRAINING, d, &ws, &rs));
    TH_STATUS(cudnnGetRNNTempSpaceSizes(h, r, (cudnnForwardMode_t)3, d, &ws, &rs), CUDNN_STATUS_BAD_PARAM);
    float x[36], y[18], hy[6], *wsp = malloc(ws), *rsp = malloc(rs), *wt = calloc(wb, 1);
    for (int i = 0; i < 36; i++) x[i] = 0.1f * i;
    for (int i = 0; i < 18; i++) y[i] = 42;
    const cudnnForwardMode_t TR = CUDNN_FWD_MODE_TRAINING;
    TH_STATUS(cudnnRNNForward(h, r, TR, lens, d, x, yd, y, hd, NULL, hy, NULL, NULL, NULL, wb, wt, ws, wsp, rs - 1, rsp), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnRNNForward(h, r, TR, lens, d, x, yd, y, hd, NULL, hy, NULL, NULL, NULL, wb, wt, ws - 1, wsp, rs, rsp), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnRNNForward(h, r, TR, lens, d, x, yd, y, hd, NULL, hy, NULL, NULL, NULL, wb - 4, wt, ws, wsp, rs, rsp), CUDNN_STATUS_BAD_PARAM);
    if (!th_is_gpu(h)) /* on a CUDA handle devSeqLengths is device memory and is not read */
        TH_STATUS(cudnnRNNForward(h, r, TR, bad, d, x, yd, y, hd, NULL, hy, NULL, NULL, NULL, wb, wt, ws, wsp, rs, rsp), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnRNNForward(h, r, TR, NULL, d, x, yd, y, hd, NULL, hy, NULL, NULL, NULL, wb, wt, ws, wsp, rs, rsp), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnRNNForward(h, r, TR, lens, d, x, d, y, hd, NULL, hy, NULL, NULL, NULL, wb, wt, ws, wsp, rs, rsp), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnRNNForward(h, r, (cudnnForwardMode_t)7, lens, d, x, yd, y, hd, NULL, hy, NULL, NULL, NULL, wb, wt, ws, wsp, rs, rsp), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnRNNForward(h, r, TR, lens, d, NULL, yd, y, hd, NULL, hy, NULL, NULL, NULL, wb, wt, ws, wsp, rs, rsp), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnRNNForward(h, r, TR, lens, d, x, yd, y, yd == NULL ? NULL : (cudnnTensorDescriptor_t)hd, NULL, hy, NULL, NULL, NULL, wb, NULL, ws, wsp, rs, rsp), CUDNN_STATUS_BAD_PARAM);
    int hdim2[3] = {2, 3, 2};
    cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, hdim2, hst);
    TH_STATUS(cudnnRNNForward(h, r, TR, lens, d, x, yd, y, hd, NULL, hy, NULL, NULL, NULL, wb, wt, ws, wsp, rs, rsp), CUDNN_STATUS_BAD_PARAM);
    int ok = 1;
    for (int i = 0; i < 18; i++) ok &= y[i] == 42;
    TH_CHECK(ok, "failed forward leaves y untouched");
    TH_STATUS(cudnnRNNBackwardWeights_v8(h, r, (cudnnWgradMode_t)4, lens, d, x, hd, NULL, yd, y, wb, wt, ws, wsp, rs, rsp), CUDNN_STATUS_BAD_PARAM);
    free(wsp); free(rsp); free(wt);
    cudnnDestroyTensorDescriptor(hd);
    cudnnDestroyRNNDataDescriptor(yd);
    TH_OK(cudnnDestroyRNNDataDescriptor(d));
    TH_OK(cudnnDestroyRNNDescriptor(r));
    TH_OK(cudnnDestroyRNNDescriptor(NULL));
    TH_STATUS(cudnnCreateRNNDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
#undef SET
}

int main(void)
{
    th_seed(0x5EED);
    h = th_create_handle();
    test_desc_errors();
    test_forward();
    test_gradients();
    test_dropout();
    cudnnDestroy(h);
    return th_finish();
}
