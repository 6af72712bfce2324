/* A stand-in "second cuDNN" for testing `freednn bench --vs-lib` on machines without a GPU:
 * the cuDNN entry points bench resolves, with cuDNN 9 status numbering (SUCCESS 0,
 * BAD_PARAM 2000, NOT_SUPPORTED 3000) so that bench must compare statuses by name, and a
 * plain direct convolution (all three directions, NCHW/NHWC, groups, stride, padding,
 * dilation, FLOAT/DOUBLE/HALF/BFLOAT16/INT8 data). FAKE_CUDNN_WRONG=1 perturbs one output
 * element so that a test can check that --verify catches it. Shares nothing with src/ or
 * tools/ and does not include the cuDNN headers. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { ST_OK = 0, ST_BAD = 2000, ST_NS = 3000 };
enum { T_FLOAT = 0, T_DOUBLE = 1, T_HALF = 2, T_INT8 = 3, T_INT32 = 4, T_BF16 = 9 };
typedef struct { int fmt, type, n, c, h, w; } tdesc;        /* tensors and filters (n=k) */
typedef struct { int ph, pw, sh, sw, dh, dw, g, math; } cdesc;
typedef struct { int algo, status; float time; size_t memory; int determinism, math, reserved[3]; } perf;

size_t cudnnGetVersion(void) { return 90100; }
const char *cudnnGetErrorString(int s)
{
    return s == ST_OK ? "CUDNN_STATUS_SUCCESS" : s == ST_BAD ? "CUDNN_STATUS_BAD_PARAM"
         : s == ST_NS ? "CUDNN_STATUS_NOT_SUPPORTED" : "CUDNN_STATUS_INTERNAL_ERROR";
}
int cudnnCreate(void **h) { *h = malloc(1); return ST_OK; }
int cudnnDestroy(void *h) { free(h); return ST_OK; }
int cudnnCreateTensorDescriptor(tdesc **d) { *d = calloc(1, sizeof **d); return ST_OK; }
int cudnnDestroyTensorDescriptor(tdesc *d) { free(d); return ST_OK; }
int cudnnCreateFilterDescriptor(tdesc **d) { *d = calloc(1, sizeof **d); return ST_OK; }
int cudnnDestroyFilterDescriptor(tdesc *d) { free(d); return ST_OK; }
/* internal calls go through static functions: a global cudnn* of the process (FreeDNN, linked
 * into freednn) would otherwise interpose on them */
static int set4d(tdesc *d, int fmt, int type, int n, int c, int h, int w)
{
    if (n < 1 || c < 1 || h < 1 || w < 1 || fmt > 1) return ST_BAD;
    *d = (tdesc){ fmt, type, n, c, h, w };
    return ST_OK;
}
int cudnnSetTensor4dDescriptor(tdesc *d, int fmt, int type, int n, int c, int h, int w) { return set4d(d, fmt, type, n, c, h, w); }
int cudnnSetFilter4dDescriptor(tdesc *d, int type, int fmt, int k, int c, int r, int s) { return set4d(d, fmt, type, k, c, r, s); }
int cudnnCreateConvolutionDescriptor(cdesc **d) { *d = calloc(1, sizeof **d); (*d)->g = 1; return ST_OK; }
int cudnnDestroyConvolutionDescriptor(cdesc *d) { free(d); return ST_OK; }
int cudnnSetConvolution2dDescriptor(cdesc *d, int ph, int pw, int sh, int sw, int dh, int dw, int mode, int ct)
{
    (void)ct;
    if (mode != 1) return ST_NS;   /* cross-correlation only */
    d->ph = ph; d->pw = pw; d->sh = sh; d->sw = sw; d->dh = dh; d->dw = dw;
    return ST_OK;
}
int cudnnSetConvolutionGroupCount(cdesc *d, int g) { d->g = g; return ST_OK; }
int cudnnSetConvolutionMathType(cdesc *d, int m) { d->math = m; return ST_OK; }

static size_t idx(const tdesc *d, int n, int c, int h, int w)
{
    return d->fmt == 1 ? (((size_t)n * d->h + h) * d->w + w) * d->c + c : (((size_t)n * d->c + c) * d->h + h) * d->w + w;
}
static double ld(const void *p, int t, size_t i)
{
    switch (t) {
    case T_DOUBLE: return ((const double *)p)[i];
    case T_HALF: return (double)((const _Float16 *)p)[i];
    case T_BF16: { uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16; float f; memcpy(&f, &u, 4); return f; }
    case T_INT8: return ((const int8_t *)p)[i];
    default: return ((const float *)p)[i];
    }
}
static void st(void *p, int t, size_t i, double v)
{
    switch (t) {
    case T_DOUBLE: ((double *)p)[i] = v; break;
    case T_HALF: ((_Float16 *)p)[i] = (_Float16)v; break;
    case T_BF16: { float f = (float)v; uint32_t u; memcpy(&u, &f, 4); u += 0x7fff + ((u >> 16) & 1); ((uint16_t *)p)[i] = (uint16_t)(u >> 16); break; }
    case T_INT8: ((int8_t *)p)[i] = (int8_t)(v > 127 ? 127 : v < -128 ? -128 : lrint(v)); break;
    default: ((float *)p)[i] = (float)v; break;
    }
}

/* dir 0: y = conv(x, w); 1: dx = conv^T(dy, w); 2: dw = corr(x, dy) */
static int conv(int dir, const tdesc *xd, void *x, const tdesc *wd, void *w, const cdesc *cd, const tdesc *yd, void *y,
                const float *alpha, const float *beta)
{
    int G = cd->g, cg = xd->c / G, kg = wd->n / G;
    if (wd->c != cg || yd->c != wd->n || xd->c % G) return ST_BAD;
    size_t nx = (size_t)xd->n * xd->c * xd->h * xd->w, nw = (size_t)wd->n * wd->c * wd->h * wd->w,
           ny = (size_t)yd->n * yd->c * yd->h * yd->w;
    size_t nout = dir == 0 ? ny : dir == 1 ? nx : nw;
    double *acc = calloc(nout, sizeof(double));
    for (int n = 0; n < xd->n; n++)
        for (int k = 0; k < wd->n; k++)
            for (int p = 0; p < yd->h; p++)
                for (int q = 0; q < yd->w; q++)
                    for (int c = 0; c < cg; c++)
                        for (int r = 0; r < wd->h; r++)
                            for (int s = 0; s < wd->w; s++) {
                                int ih = p * cd->sh - cd->ph + r * cd->dh, iw = q * cd->sw - cd->pw + s * cd->dw;
                                if (ih < 0 || iw < 0 || ih >= xd->h || iw >= xd->w) continue;
                                size_t xi = idx(xd, n, (k / kg) * cg + c, ih, iw), wi = idx(wd, k, c, r, s), yi = idx(yd, n, k, p, q);
                                if (dir == 0) acc[yi] += ld(x, xd->type, xi) * ld(w, wd->type, wi);
                                else if (dir == 1) acc[xi] += ld(y, yd->type, yi) * ld(w, wd->type, wi);
                                else acc[wi] += ld(x, xd->type, xi) * ld(y, yd->type, yi);
                            }
    void *o = dir == 0 ? y : dir == 1 ? x : w;
    int ot = dir == 0 ? yd->type : dir == 1 ? xd->type : wd->type;
    int dbl = xd->type == T_DOUBLE;
    double a = dbl ? *(const double *)(const void *)alpha : *alpha, b = dbl ? *(const double *)(const void *)beta : *beta;
    for (size_t i = 0; i < nout; i++) st(o, ot, i, a * acc[i] + (b != 0 ? b * ld(o, ot, i) : 0));
    if (getenv("FAKE_CUDNN_WRONG")) st(o, ot, nout / 2, ld(o, ot, nout / 2) + 1.0);
    free(acc);
    return ST_OK;
}

static int list(int n_req, int *n, perf *pr, int math)
{
    int m = n_req < 2 ? n_req : 2;
    for (int i = 0; i < m; i++) pr[i] = (perf){ .algo = i, .status = ST_OK, .time = -1, .memory = 0, .determinism = 1, .math = math };
    *n = m;
    return ST_OK;
}
int cudnnGetConvolutionForwardAlgorithm_v7(void *h, tdesc *x, tdesc *w, cdesc *c, tdesc *y, int r, int *n, perf *p)
{ (void)h; (void)x; (void)w; (void)y; return list(r, n, p, c->math); }
int cudnnGetConvolutionBackwardDataAlgorithm_v7(void *h, tdesc *w, tdesc *dy, cdesc *c, tdesc *dx, int r, int *n, perf *p)
{ (void)h; (void)w; (void)dy; (void)dx; return list(r, n, p, c->math); }
int cudnnGetConvolutionBackwardFilterAlgorithm_v7(void *h, tdesc *x, tdesc *dy, cdesc *c, tdesc *dw, int r, int *n, perf *p)
{ (void)h; (void)x; (void)dy; (void)dw; return list(r, n, p, c->math); }
static int ws(int algo, size_t *s) { *s = 64 * (size_t)algo; return algo < 2 ? ST_OK : ST_NS; }
int cudnnGetConvolutionForwardWorkspaceSize(void *h, void *x, void *w, void *c, void *y, int a, size_t *s)
{ (void)h; (void)x; (void)w; (void)c; (void)y; return ws(a, s); }
int cudnnGetConvolutionBackwardDataWorkspaceSize(void *h, void *w, void *dy, void *c, void *dx, int a, size_t *s)
{ (void)h; (void)w; (void)dy; (void)c; (void)dx; return ws(a, s); }
int cudnnGetConvolutionBackwardFilterWorkspaceSize(void *h, void *x, void *dy, void *c, void *dw, int a, size_t *s)
{ (void)h; (void)x; (void)dy; (void)c; (void)dw; return ws(a, s); }
int cudnnConvolutionForward(void *h, const float *al, tdesc *xd, void *x, tdesc *wd, void *w, cdesc *cd, int a, void *wsp,
                            size_t wss, const float *be, tdesc *yd, void *y)
{ (void)h; (void)wsp; (void)wss; return a < 2 ? conv(0, xd, x, wd, w, cd, yd, y, al, be) : ST_NS; }
int cudnnConvolutionBackwardData(void *h, const float *al, tdesc *wd, void *w, tdesc *yd, void *y, cdesc *cd, int a,
                                 void *wsp, size_t wss, const float *be, tdesc *xd, void *x)
{ (void)h; (void)wsp; (void)wss; return a < 2 ? conv(1, xd, x, wd, w, cd, yd, y, al, be) : ST_NS; }
int cudnnConvolutionBackwardFilter(void *h, const float *al, tdesc *xd, void *x, tdesc *yd, void *y, cdesc *cd, int a,
                                   void *wsp, size_t wss, const float *be, tdesc *wd, void *w)
{ (void)h; (void)wsp; (void)wss; return a < 2 ? conv(2, xd, x, wd, w, cd, yd, y, al, be) : ST_NS; }
/* FreeDNN's extension, so that bench gives this library host buffers */
const char *freednnGetBackendName(void *h) { (void)h; return "cpu"; }
