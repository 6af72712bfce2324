/* freednn bench: times convolutions through the cuDNN API (FreeDNN, and optionally a second
 * cuDNN loaded with --vs-lib), per problem, direction and algorithm. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cudnn.h"
#include "freednn_api.h"
#include "freednn_dev.h"
#include "freednn_ref.h"
#include "freednn_tools.h"
#ifdef FREEDNN_HAVE_ONEDNN
#include "freednn_onednn.h"
#endif

#define MAX_ALGOS 16

typedef struct {
    char name[64];
    fdt_conv cv;
} problem;

typedef enum { D_FWD = 0, D_BWD_DATA = 1, D_BWD_FILTER = 2 } dirn;
static const char *dir_name[3] = { "fwd", "bwd-data", "bwd-filter" };
static const char *dir_label[3] = { "ConvFwdAlgo", "ConvBwdDataAlgo", "ConvBwdFilterAlgo" };
static const int algo_count[3] = { 8, 6, 7 };
static const char *fwd_algos[] = { "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
                                   "WINOGRAD", "WINOGRAD_NONFUSED" };
static const char *bwd_data_algos[] = { "0", "1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED" };
static const char *bwd_filter_algos[] = { "0", "1", "FFT", "3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING" };

static void algo_enum_name(dirn d, int a, char *buf, size_t n)
{
    const char *pre = d == D_FWD ? "CUDNN_CONVOLUTION_FWD_ALGO_" : d == D_BWD_DATA ? "CUDNN_CONVOLUTION_BWD_DATA_ALGO_"
                                                                                    : "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_";
    const char **t = d == D_FWD ? fwd_algos : d == D_BWD_DATA ? bwd_data_algos : bwd_filter_algos;
    if (a >= 0 && a < algo_count[d]) snprintf(buf, n, "%s%s", pre, t[a]);
    else snprintf(buf, n, "%s%d", pre, a);
}

static const char *math_name(cudnnMathType_t m)
{
    switch (m) {
    case CUDNN_DEFAULT_MATH: return "CUDNN_DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH: return "CUDNN_TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH: return "CUDNN_FMA_MATH";
    default: return "?";
    }
}

/* ------------------------------------------------------------------ options */
typedef struct {
    int iters, warmup, dirs, algo /* -1 default, -2 all */, nhwc, verify, csv, json, vs_onednn, graph;
    double peak_gflops; /* measured FMA peak (--vs-onednn), 0 if not measured */
    const char *type, *backend, *vslib;
    cudnnDataType_t xt, yt, ct;
    cudnnMathType_t math;
} options;

static int parse_int(const char *s, const char *what, int lo, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > 1000000000L) {
        fprintf(stderr, "freednn bench: %s must be an integer >= %d, got '%s'\n", what, lo, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int set_type(options *o, const char *t)
{
    o->type = t;
    o->math = CUDNN_DEFAULT_MATH;
    if (!strcmp(t, "fp32")) { o->xt = o->yt = o->ct = CUDNN_DATA_FLOAT; o->math = CUDNN_FMA_MATH; }
    else if (!strcmp(t, "tf32")) { o->xt = o->yt = o->ct = CUDNN_DATA_FLOAT; o->math = CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION; }
    else if (!strcmp(t, "fp16")) { o->xt = o->yt = CUDNN_DATA_HALF; o->ct = CUDNN_DATA_FLOAT; o->math = CUDNN_TENSOR_OP_MATH; }
    else if (!strcmp(t, "bf16")) { o->xt = o->yt = CUDNN_DATA_BFLOAT16; o->ct = CUDNN_DATA_FLOAT; o->math = CUDNN_TENSOR_OP_MATH; }
    else if (!strcmp(t, "fp64")) { o->xt = o->yt = o->ct = CUDNN_DATA_DOUBLE; }
    else if (!strcmp(t, "int8")) { o->xt = CUDNN_DATA_INT8; o->yt = CUDNN_DATA_FLOAT; o->ct = CUDNN_DATA_INT32; }
    else {
        fprintf(stderr, "freednn bench: --type must be one of fp32, tf32, fp16, bf16, fp64, int8, got '%s'\n", t);
        return -1;
    }
    return 0;
}

/* benchdnn-style descriptor: mb32ic64ih224oc64kh3ph1 (keys g mb ic ih iw oc oh ow kh kw sh sw
 * ph pw dh dw, and n"name" / _name); unset w-keys copy the h-keys; dh/dw are benchdnn
 * dilations (0 = dense, cuDNN dilation = d + 1). */
int fdt_parse_descriptor(const char *str, char *name, size_t name_n, fdt_conv *cv, char *err, size_t err_n)
{
    int g = 1, mb = 2, ic = -1, ih = -1, iw = -1, oc = -1, oh = -1, ow = -1, kh = -1, kw = -1, sh = -1, sw = -1,
        ph = -1, pw = -1, dh = -1, dw = -1;
    struct { const char *k; int *v; } keys[] = { { "mb", &mb }, { "ic", &ic }, { "ih", &ih }, { "iw", &iw },
        { "oc", &oc }, { "oh", &oh }, { "ow", &ow }, { "kh", &kh }, { "kw", &kw }, { "sh", &sh }, { "sw", &sw },
        { "ph", &ph }, { "pw", &pw }, { "dh", &dh }, { "dw", &dw }, { "g", &g } };
    const char *p = str;
    if (name_n) name[0] = 0;
    while (*p) {
        if (*p == '_' || (*p == 'n' && p[1] == '"')) {   /* name to the end */
            const char *s = *p == '_' ? p + 1 : p + 2;
            size_t l = strcspn(s, "\"");
            if (l >= name_n) l = name_n - 1;
            memcpy(name, s, l);
            name[l] = 0;
            break;
        }
        size_t i;
        for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            size_t kl = strlen(keys[i].k);
            if (!strncmp(p, keys[i].k, kl) && isdigit((unsigned char)p[kl])) break;
        }
        if (i == sizeof keys / sizeof keys[0]) {
            snprintf(err, err_n, "descriptor '%s': unknown key at '%s' (keys: g mb ic ih iw oc oh ow kh kw sh sw ph pw dh dw, _name)", str, p);
            return -1;
        }
        p += strlen(keys[i].k);
        char *end;
        long v = strtol(p, &end, 10);
        if (v > 1000000) { snprintf(err, err_n, "descriptor '%s': value too large", str); return -1; }
        *keys[i].v = (int)v;
        p = end;
    }
    if (ic <= 0 || oc <= 0 || ih <= 0) {
        snprintf(err, err_n, "descriptor '%s': ic, oc and ih are required and must be positive", str);
        return -1;
    }
    if (iw < 0) iw = ih;
    if (kh < 0) kh = 1;
    if (kw < 0) kw = kh;
    if (sh < 0) sh = 1;
    if (sw < 0) sw = sh;
    if (ph < 0) ph = 0;
    if (pw < 0) pw = ph;
    if (dh < 0) dh = 0;
    if (dw < 0) dw = dh;
    fdt_conv c = { .n = mb, .c = ic, .h = ih, .w = iw, .k = oc, .r = kh, .s = kw, .sh = sh, .sw = sw, .ph = ph,
                   .pw = pw, .dh = dh + 1, .dw = dw + 1, .g = g };
    if (fdt_check_conv(&c, err, err_n)) return -1;
    if ((oh >= 0 && oh != fdt_out_h(&c)) || (ow >= 0 && ow != fdt_out_w(&c))) {
        snprintf(err, err_n, "descriptor '%s': oh/ow given as %d/%d but the shape gives %d/%d", str, oh, ow,
                 fdt_out_h(&c), fdt_out_w(&c));
        return -1;
    }
    *cv = c;
    if (!name[0] && name_n) snprintf(name, name_n, "%s", str);
    return 0;
}

int fdt_check_conv(const fdt_conv *c, char *err, size_t err_n)
{
    if (c->n < 1 || c->c < 1 || c->h < 1 || c->w < 1 || c->k < 1 || c->r < 1 || c->s < 1 || c->sh < 1 || c->sw < 1 ||
        c->ph < 0 || c->pw < 0 || c->dh < 1 || c->dw < 1 || c->g < 1) {
        snprintf(err, err_n, "sizes, stride, dilation and groups must be >= 1 and padding >= 0");
        return -1;
    }
    if (c->c % c->g || c->k % c->g) {
        snprintf(err, err_n, "channels C=%d and K=%d must both be divisible by groups=%d", c->c, c->k, c->g);
        return -1;
    }
    if (fdt_out_h(c) < 1 || fdt_out_w(c) < 1) {
        snprintf(err, err_n, "the filter (%dx%d, dilation %d/%d) does not fit the padded input %dx%d (pad %d/%d)", c->r,
                 c->s, c->dh, c->dw, c->h, c->w, c->ph, c->pw);
        return -1;
    }
    return 0;
}

/* layers file: name N C H W K R S stride pad groups; '#' comments */
static int read_layers(const char *path, problem **ps, int *np)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "freednn bench: cannot open layers file %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[512];
    int ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        char *h = strchr(line, '#');
        if (h) *h = 0;
        char nm[64];
        int v[10], extra;
        char tail[8];
        int got = sscanf(line, "%63s %d %d %d %d %d %d %d %d %d %d %7s", nm, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                         &v[6], &v[7], &v[8], &v[9], tail);
        if (got <= 0) continue;
        (void)extra;
        if (got != 11) {
            fprintf(stderr, "freednn bench: %s:%d: expected 'name N C H W K R S stride pad groups'\n", path, ln);
            fclose(f);
            return -1;
        }
        fdt_conv c = { .n = v[0], .c = v[1], .h = v[2], .w = v[3], .k = v[4], .r = v[5], .s = v[6], .sh = v[7],
                       .sw = v[7], .ph = v[8], .pw = v[8], .dh = 1, .dw = 1, .g = v[9] };
        char err[256];
        if (fdt_check_conv(&c, err, sizeof err)) {
            fprintf(stderr, "freednn bench: %s:%d: %s\n", path, ln, err);
            fclose(f);
            return -1;
        }
        *ps = realloc(*ps, sizeof(problem) * (size_t)(*np + 1));
        snprintf((*ps)[*np].name, sizeof (*ps)[*np].name, "%s", nm);
        (*ps)[*np].cv = c;
        (*np)++;
    }
    fclose(f);
    return 0;
}

/* ------------------------------------------------------------------ results */
typedef struct {
    const char *lib;
    int prob, dir, algo;
    char status[256];
    char message[256];
    size_t ws;
    cudnnMathType_t math;
    int det;
    double tmin, tmed, tavg, host, tflops, gbs, maxerr, tol;
    double host_mean; /* enqueue loop duration / N (host is the median enqueue time) */
    int verified; /* 0 no, 1 yes passed, -1 failed, 2 skipped (no memory for the reference) */
    size_t vpoints; /* verified on this many sampled points (0: the whole output) */
    double their_med; /* vs-lib median, 0 if none */
    int have_their;
    int their_algo;   /* the algorithm their median belongs to */
    double dnnl_min, dnnl_med; /* --vs-onednn: oneDNN times, have_dnnl 1; -1 with dnnl_err on failure */
    int have_dnnl;
    char dnnl_err[160];
    double peak_frac; /* our FLOP rate (min time) / measured peak */
    double tloop;     /* events around N back-to-back calls / N (GPU; wall clock on the CPU) */
    double tgraph;    /* --graph: N calls captured in one CUDA graph, launch time / N; 0 not measured */
    char graph_err[160]; /* why the capture failed, when it did */
    double their_loop, their_graph, their_host;
} result;

static result *results;
static int nresults;

static result *new_result(void)
{
    results = realloc(results, sizeof(result) * (size_t)(nresults + 1));
    memset(&results[nresults], 0, sizeof(result));
    return &results[nresults++];
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------------ one library run */
typedef struct {
    const fdt_api *api;
    cudnnHandle_t h;
    int dev;   /* buffers in device memory */
    void *stream; /* the handle's stream (device libraries): timed, and captured with --graph */
    const void *self0; /* &libs[0]: the FreeDNN library (the one compared with oneDNN) */
} lib_ctx;

/* A device library's handle runs on its own non-blocking stream (so that its calls can be
 * captured into a CUDA graph; the legacy default stream cannot be). */
static void attach_stream(lib_ctx *L)
{
    L->stream = NULL;
    if (!L->dev || !L->api->SetStream) return;
    L->stream = fdt_stream_create();
    if (L->stream && !fdt_ok(L->api, L->api->SetStream(L->h, (cudaStream_t)L->stream))) {
        fdt_stream_destroy(L->stream);
        L->stream = NULL;
    }
}

static void rng_fill(double *d, size_t n, uint64_t seed, int lo, int hi, double scale)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        d[i] = (double)(lo + (int)(s % (uint64_t)(hi - lo + 1))) * scale;
    }
}

/* NCHW double <-> layout of the tensor (nhwc: N,H,W,C) */
static void to_layout(const double *src, double *dst, int n, int c, int h, int w, int nhwc)
{
    if (!nhwc) { memcpy(dst, src, sizeof(double) * (size_t)n * c * h * w); return; }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < c; b++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    dst[(((size_t)a * h + y) * w + x) * c + b] = src[(((size_t)a * c + b) * h + y) * w + x];
}
static void from_layout(const double *src, double *dst, int n, int c, int h, int w, int nhwc)
{
    if (!nhwc) { memcpy(dst, src, sizeof(double) * (size_t)n * c * h * w); return; }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < c; b++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    dst[(((size_t)a * c + b) * h + y) * w + x] = src[(((size_t)a * h + y) * w + x) * c + b];
}

static double unit_roundoff(const char *type)
{
    if (!strcmp(type, "fp64")) return ldexp(1, -53);
    if (!strcmp(type, "tf32")) return ldexp(1, -11);
    if (!strcmp(type, "fp16")) return ldexp(1, -11);
    if (!strcmp(type, "bf16")) return ldexp(1, -8);
    if (!strcmp(type, "int8")) return 0;
    return ldexp(1, -24);
}

static const double VERIFY_FLOP_LIMIT = 5e8; /* above it: sampled points (the naive double reference runs at about 1 GFLOP/s) */

/* Runs every requested algorithm of one direction of problem pi through one library. */
static void run_dir(const options *o, lib_ctx *L, const problem *pb, int pi, dirn d, int *nprog, int ntot)
{
    const fdt_api *A = L->api;
    const fdt_conv *c = &pb->cv;
    int first_result = nresults;
    int P = fdt_out_h(c), Q = fdt_out_w(c), cg = c->c / c->g;
    size_t nx = (size_t)c->n * c->c * c->h * c->w, nw = (size_t)c->k * cg * c->r * c->s,
           ny = (size_t)c->n * c->k * P * Q;
    cudnnDataType_t xt = o->xt, yt = o->yt, wt = o->xt;
    cudnnTensorFormat_t fmt = o->nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    double flops = 2.0 * c->n * c->k * (double)cg * c->r * c->s * P * Q;
    size_t bytes = nx * fdt_dtype_size(xt) + nw * fdt_dtype_size(wt) + ny * fdt_dtype_size(yt);

    cudnnTensorDescriptor_t xd = NULL, yd = NULL;
    cudnnFilterDescriptor_t wd = NULL;
    cudnnConvolutionDescriptor_t cd = NULL;
    void *xb = NULL, *wb = NULL, *yb = NULL, *hostbuf = NULL;
    double *dx = NULL, *dw = NULL, *dy = NULL, *ref = NULL, *tmp = NULL;
    size_t nsample = 0, *sidx = NULL;
    char setup_err[256] = "";
    cudnnStatus_t st;

#define SETUP(call)                                                                                      \
    do {                                                                                                 \
        st = (call);                                                                                     \
        if (!fdt_ok(A, st)) {                                                                            \
            snprintf(setup_err, sizeof setup_err, "%s: %s %s", #call, fdt_status(A, st), fdt_last_error(A)); \
            goto fail;                                                                                   \
        }                                                                                                \
    } while (0)
    SETUP(A->CreateTensorDescriptor(&xd));
    SETUP(A->CreateTensorDescriptor(&yd));
    SETUP(A->CreateFilterDescriptor(&wd));
    SETUP(A->CreateConvolutionDescriptor(&cd));
    SETUP(A->SetTensor4dDescriptor(xd, fmt, xt, c->n, c->c, c->h, c->w));
    SETUP(A->SetTensor4dDescriptor(yd, fmt, yt, c->n, c->k, P, Q));
    SETUP(A->SetFilter4dDescriptor(wd, wt, fmt, c->k, cg, c->r, c->s));
    SETUP(A->SetConvolution2dDescriptor(cd, c->ph, c->pw, c->sh, c->sw, c->dh, c->dw, CUDNN_CROSS_CORRELATION, o->ct));
    SETUP(A->SetConvolutionGroupCount(cd, c->g));
    SETUP(A->SetConvolutionMathType(cd, o->math));
#undef SETUP

    /* data: small multiples of 1/8 (exact in every type); int8: small integers */
    dx = malloc(sizeof(double) * nx); dw = malloc(sizeof(double) * nw); dy = malloc(sizeof(double) * ny);
    size_t nmax = nx > nw ? (nx > ny ? nx : ny) : (nw > ny ? nw : ny);
    tmp = malloc(sizeof(double) * nmax);
    hostbuf = malloc(nmax * 8);
    int is_int8 = xt == CUDNN_DATA_INT8;
    rng_fill(dx, nx, 1 + (uint64_t)pi, is_int8 ? -3 : -8, is_int8 ? 3 : 8, is_int8 ? 1 : 0.125);
    rng_fill(dw, nw, 101 + (uint64_t)pi, is_int8 ? -3 : -8, is_int8 ? 3 : 8, is_int8 ? 1 : 0.125);
    rng_fill(dy, ny, 201 + (uint64_t)pi, is_int8 ? -3 : -8, is_int8 ? 3 : 8, is_int8 ? 1 : 0.125);
    xb = fdt_alloc(L->dev, nx * fdt_dtype_size(xt));
    wb = fdt_alloc(L->dev, nw * fdt_dtype_size(wt));
    yb = fdt_alloc(L->dev, ny * fdt_dtype_size(yt));
    if (!dx || !dw || !dy || !tmp || !hostbuf || !xb || !wb || !yb) {
        snprintf(setup_err, sizeof setup_err, "out of %s memory for the tensors", L->dev ? "device" : "host");
        goto fail;
    }
    /* upload x, w, dy in their layouts (w uses the filter layout: KCRS or KRSC) */
    to_layout(dx, tmp, c->n, c->c, c->h, c->w, o->nhwc);
    fdt_from_double(tmp, xt, hostbuf, nx);
    fdt_upload(L->dev, xb, hostbuf, nx * fdt_dtype_size(xt));
    to_layout(dw, tmp, c->k, cg, c->r, c->s, o->nhwc);
    fdt_from_double(tmp, wt, hostbuf, nw);
    fdt_upload(L->dev, wb, hostbuf, nw * fdt_dtype_size(wt));
    to_layout(dy, tmp, c->n, c->k, P, Q, o->nhwc);
    fdt_from_double(tmp, yt, hostbuf, ny);
    fdt_upload(L->dev, yb, hostbuf, ny * fdt_dtype_size(yt));
    if (d == D_BWD_DATA) {
        /* bwd-data reads dy, writes dx: dy in yb was uploaded above */
    }

    /* the algorithm list */
    int algos[MAX_ALGOS], nalg = 0;
    cudnnMathType_t amath[MAX_ALGOS];
    int adet[MAX_ALGOS];
    char alist_err[256] = "";
    if (o->algo >= 0) {
        algos[nalg] = o->algo; amath[nalg] = o->math; adet[nalg] = -1; nalg++;
    } else {
        int got = 0;
        cudnnStatus_t s2;
        if (d == D_FWD) {
            cudnnConvolutionFwdAlgoPerf_t pr[MAX_ALGOS];
            s2 = A->GetFwdAlgo_v7(L->h, xd, wd, cd, yd, MAX_ALGOS, &got, pr);
            for (int i = 0; fdt_ok(A, s2) && i < got; i++)
                if (fdt_ok(A, pr[i].status)) { algos[nalg] = pr[i].algo; amath[nalg] = pr[i].mathType; adet[nalg] = pr[i].determinism == CUDNN_DETERMINISTIC; nalg++; }
        } else if (d == D_BWD_DATA) {
            cudnnConvolutionBwdDataAlgoPerf_t pr[MAX_ALGOS];
            s2 = A->GetBwdDataAlgo_v7(L->h, wd, yd, cd, xd, MAX_ALGOS, &got, pr);
            for (int i = 0; fdt_ok(A, s2) && i < got; i++)
                if (fdt_ok(A, pr[i].status)) { algos[nalg] = pr[i].algo; amath[nalg] = pr[i].mathType; adet[nalg] = pr[i].determinism == CUDNN_DETERMINISTIC; nalg++; }
        } else {
            cudnnConvolutionBwdFilterAlgoPerf_t pr[MAX_ALGOS];
            s2 = A->GetBwdFilterAlgo_v7(L->h, xd, yd, cd, wd, MAX_ALGOS, &got, pr);
            for (int i = 0; fdt_ok(A, s2) && i < got; i++)
                if (fdt_ok(A, pr[i].status)) { algos[nalg] = pr[i].algo; amath[nalg] = pr[i].mathType; adet[nalg] = pr[i].determinism == CUDNN_DETERMINISTIC; nalg++; }
        }
        if (!fdt_ok(A, s2)) {
            snprintf(alist_err, sizeof alist_err, "%s", fdt_status(A, s2));
            if (o->algo == -2) {   /* all: try every enum value */
                for (int a = 0; a < algo_count[d]; a++) { algos[nalg] = a; amath[nalg] = o->math; adet[nalg] = -1; nalg++; }
            } else {
                result *r = new_result();
                r->lib = A->label; r->prob = pi; r->dir = d; r->algo = -1;
                snprintf(r->status, sizeof r->status, "%s", alist_err);
                snprintf(r->message, sizeof r->message, "algorithm query failed: %s", fdt_last_error(A));
                goto done;
            }
        } else if (o->algo == -1 && nalg > 1) {
            nalg = 1;  /* default: the first (preferred) algorithm */
        }
        if (nalg == 0) {
            result *r = new_result();
            r->lib = A->label; r->prob = pi; r->dir = d; r->algo = -1;
            snprintf(r->status, sizeof r->status, "NOT_SUPPORTED");
            snprintf(r->message, sizeof r->message, "no algorithm reported as usable for this problem");
            goto done;
        }
    }

    /* reference for --verify: the whole output up to VERIFY_FLOP_LIMIT, else sampled points
     * (as many as about 3e8 multiply-adds of reference allow, 32 to 2048, first and last
     * element included) */
    int do_verify = o->verify;
    const long red_len = d == D_FWD ? (long)cg * c->r * c->s : d == D_BWD_DATA ? (long)(c->k / c->g) * c->r * c->s
                                                                              : (long)c->n * P * Q;
    if (do_verify) {
        size_t nout = d == D_FWD ? ny : d == D_BWD_DATA ? nx : nw;
        const double *ra = d == D_BWD_DATA ? dy : dx, *rb = d == D_BWD_FILTER ? dy : dw;
        if (flops <= VERIFY_FLOP_LIMIT) {
            ref = malloc(sizeof(double) * nout);
            if (!ref) do_verify = 0;
            else if (d == D_FWD) fdt_ref_fwd(c, dx, dw, ref);
            else if (d == D_BWD_DATA) fdt_ref_bwd_data(c, dy, dw, ref);
            else fdt_ref_bwd_filter(c, dx, dy, ref);
        } else {
            double want = 3e8 / (double)(red_len > 0 ? red_len : 1);
            nsample = want < 32 ? 32 : want > 2048 ? 2048 : (size_t)want;
            if (nsample > nout) nsample = nout;
            sidx = malloc(sizeof(size_t) * nsample);
            ref = malloc(sizeof(double) * nsample);
            if (!sidx || !ref) do_verify = 0;
            uint64_t st = 0x243f6a8885a308d3ULL ^ (uint64_t)nout;
            for (size_t i = 0; do_verify && i < nsample; i++) {
                st ^= st << 13; st ^= st >> 7; st ^= st << 17;
                sidx[i] = i == 0 ? 0 : i == 1 ? nout - 1 : (size_t)(st % nout);
                ref[i] = fdt_ref_point(c, (int)d, ra, rb, sidx[i]);
            }
        }
    }

    for (int ai = 0; ai < nalg; ai++) {
        result *r = new_result();
        r->lib = A->label; r->prob = pi; r->dir = d; r->algo = algos[ai]; r->math = amath[ai]; r->det = adet[ai];
        (*nprog)++;
        if (isatty(2) && !o->csv && !o->json) {
            fprintf(stderr, "\r[%d/%d] %s %s %s algo %d ...   ", *nprog, ntot, A->label == NULL ? "" : A->label, pb->name,
                    dir_name[d], algos[ai]);
            fflush(stderr);
        }
        A->SetConvolutionMathType(cd, amath[ai]);
        size_t ws = 0;
        cudnnStatus_t s3 = d == D_FWD ? A->GetFwdWs(L->h, xd, wd, cd, yd, (cudnnConvolutionFwdAlgo_t)algos[ai], &ws)
                         : d == D_BWD_DATA ? A->GetBwdDataWs(L->h, wd, yd, cd, xd, (cudnnConvolutionBwdDataAlgo_t)algos[ai], &ws)
                                           : A->GetBwdFilterWs(L->h, xd, yd, cd, wd, (cudnnConvolutionBwdFilterAlgo_t)algos[ai], &ws);
        if (!fdt_ok(A, s3)) {
            snprintf(r->status, sizeof r->status, "%s", fdt_status(A, s3));
            snprintf(r->message, sizeof r->message, "workspace query: %s", fdt_last_error(A));
            continue;
        }
        r->ws = ws;
        void *wsb = ws ? fdt_alloc(L->dev, ws) : NULL;
        if (ws && !wsb) {
            snprintf(r->status, sizeof r->status, "ALLOC_FAILED");
            snprintf(r->message, sizeof r->message, "cannot allocate %zu bytes of workspace", ws);
            continue;
        }
        double alpha_d = 1, beta_d = 0;
        float alpha_f = 1, beta_f = 0;
        const void *al = xt == CUDNN_DATA_DOUBLE ? (const void *)&alpha_d : (const void *)&alpha_f;
        const void *be = xt == CUDNN_DATA_DOUBLE ? (const void *)&beta_d : (const void *)&beta_f;
#define CALL()                                                                                               \
    (d == D_FWD ? A->Fwd(L->h, al, xd, xb, wd, wb, cd, (cudnnConvolutionFwdAlgo_t)algos[ai], wsb, ws, be, yd, yb) \
     : d == D_BWD_DATA ? A->BwdData(L->h, al, wd, wb, yd, yb, cd, (cudnnConvolutionBwdDataAlgo_t)algos[ai], wsb, ws, be, xd, xb) \
                       : A->BwdFilter(L->h, al, xd, xb, yd, yb, cd, (cudnnConvolutionBwdFilterAlgo_t)algos[ai], wsb, ws, be, wd, wb))
        cudnnStatus_t s4 = CALL();
        if (!fdt_ok(A, s4)) {
            snprintf(r->status, sizeof r->status, "%s", fdt_status(A, s4));
            snprintf(r->message, sizeof r->message, "%s", fdt_last_error(A));
            fdt_free(L->dev, wsb);
            continue;
        }
        fdt_sync(L->dev);
        /* verify the first call's output */
        if (o->verify && !do_verify) r->verified = 2;
        r->vpoints = nsample;
        if (do_verify) {
            int oc = d == D_BWD_FILTER ? c->k : c->n, ocn = d == D_FWD ? c->k : d == D_BWD_DATA ? c->c : cg;
            int oh = d == D_FWD ? P : d == D_BWD_DATA ? c->h : c->r, ow = d == D_FWD ? Q : d == D_BWD_DATA ? c->w : c->s;
            size_t nout = (size_t)oc * ocn * oh * ow;
            cudnnDataType_t ot = d == D_FWD ? yt : d == D_BWD_DATA ? xt : wt;
            void *ob = d == D_FWD ? yb : d == D_BWD_DATA ? xb : wb;
            fdt_download(L->dev, hostbuf, ob, nout * fdt_dtype_size(ot));
            fdt_to_double(hostbuf, ot, tmp, nout);
            double *got = malloc(sizeof(double) * nout);
            from_layout(tmp, got, oc, ocn, oh, ow, o->nhwc);
            long red = red_len;
            double me = 0;
            for (size_t i = 0; i < (nsample ? nsample : nout); i++) {
                double e = nsample ? fabs(got[sidx[i]] - ref[i]) : fabs(got[i] - ref[i]);
                if (!(e <= me)) me = e;   /* NaN propagates */
            }
            double u = unit_roundoff(o->type);
            /* |x|,|w| <= 1: each term's rounding is bounded by u, plus rounding of the result */
            r->tol = 4.0 * u * (double)red + 2 * u * (double)red;
            r->maxerr = me;
            r->verified = me <= r->tol ? 1 : -1;
            free(got);
        }
        /* warm-up */
        for (int i = 0; i < o->warmup; i++) CALL();
        fdt_sync(L->dev);
        /* back-to-back calls as a program makes them: events (GPU) around the whole loop, and
         * the host time of each enqueue (clock reads only, no per-call events); the host time
         * per call is their median, so that one descheduled call does not move it by
         * microseconds, and host_mean the loop's duration / N */
        {
            fdt_gpu_timer *lt = L->dev ? fdt_gpu_timer_create(1, L->stream) : NULL;
            double *hc = malloc(sizeof(double) * (size_t)o->iters);
            double l0 = fdt_now();
            if (lt) fdt_gpu_timer_start(lt, 0);
            for (int i = 0; i < o->iters; i++) {
                const double c0 = fdt_now();
                CALL();
                if (hc) hc[i] = fdt_now() - c0;
            }
            double l1 = fdt_now();
            if (lt) {
                double tl = 0;
                fdt_gpu_timer_stop(lt, 0);
                fdt_gpu_timer_read(lt, &tl);
                fdt_gpu_timer_destroy(lt);
                r->tloop = tl / o->iters;
            } else {
                r->tloop = (l1 - l0) / o->iters;
            }
            r->host_mean = (l1 - l0) / o->iters;
            r->host = r->host_mean;
            if (hc) {
                qsort(hc, (size_t)o->iters, sizeof(double), cmp_d);
                r->host = o->iters % 2 ? hc[o->iters / 2] : 0.5 * (hc[o->iters / 2 - 1] + hc[o->iters / 2]);
                free(hc);
            }
        }
        /* GPU time alone: the same N calls captured into one CUDA graph and launched */
        if (o->graph && L->dev && L->stream) {
            void *exec = NULL;
            char gwhy[160] = "";
            cudnnStatus_t gs = CUDNN_STATUS_SUCCESS;
            if (fdt_graph_begin(L->stream, gwhy, sizeof gwhy) == 0) {
                for (int i = 0; i < o->iters; i++) {
                    cudnnStatus_t si = CALL();
                    if (!fdt_ok(A, si) && fdt_ok(A, gs)) gs = si;
                }
                if (fdt_graph_end(L->stream, &exec, gwhy, sizeof gwhy) == 0 && !fdt_ok(A, gs)) {
                    snprintf(gwhy, sizeof gwhy, "a call failed during capture: %s", fdt_status(A, gs));
                    fdt_graph_destroy(exec);
                    exec = NULL;
                }
            }
            if (exec) {
                fdt_gpu_timer *ct = fdt_gpu_timer_create(1, L->stream);
                double tg = 0;
                fdt_graph_launch(exec, L->stream);   /* upload / first launch */
                fdt_stream_sync(L->stream);
                fdt_gpu_timer_start(ct, 0);
                int lr = fdt_graph_launch(exec, L->stream);
                fdt_gpu_timer_stop(ct, 0);
                fdt_gpu_timer_read(ct, &tg);
                fdt_gpu_timer_destroy(ct);
                fdt_graph_destroy(exec);
                if (lr == 0) r->tgraph = tg / o->iters;
                else snprintf(r->graph_err, sizeof r->graph_err, "cudaGraphLaunch failed");
            } else {
                snprintf(r->graph_err, sizeof r->graph_err, "%s", gwhy[0] ? gwhy : "capture failed");
            }
            fdt_sync(L->dev);
        }
        /* per-call times: events around each call; nothing allocated inside */
        double *t = malloc(sizeof(double) * (size_t)o->iters);
        fdt_gpu_timer *gt = L->dev ? fdt_gpu_timer_create(o->iters, L->stream) : NULL;
        for (int i = 0; i < o->iters; i++) {
            if (gt) {
                fdt_gpu_timer_start(gt, i);
                CALL();
                fdt_gpu_timer_stop(gt, i);
            } else {
                double t0 = fdt_now();
                CALL();
                t[i] = fdt_now() - t0;
            }
        }
        if (gt) {
            fdt_gpu_timer_read(gt, t);
            fdt_gpu_timer_destroy(gt);
        }
#undef CALL
        double sum = 0;
        for (int i = 0; i < o->iters; i++) sum += t[i];
        qsort(t, (size_t)o->iters, sizeof(double), cmp_d);
        r->tmin = t[0];
        r->tmed = o->iters % 2 ? t[o->iters / 2] : 0.5 * (t[o->iters / 2 - 1] + t[o->iters / 2]);
        r->tavg = sum / o->iters;
        r->tflops = r->tmed > 0 ? flops / r->tmed * 1e-12 : 0;
        r->gbs = r->tmed > 0 ? (double)bytes / r->tmed * 1e-9 : 0;
        snprintf(r->status, sizeof r->status, "SUCCESS");
        free(t);
        fdt_free(L->dev, wsb);
        if (o->peak_gflops > 0 && r->tmin > 0) r->peak_frac = flops / r->tmin * 1e-9 / o->peak_gflops;
    }
#ifdef FREEDNN_HAVE_ONEDNN
    /* --vs-onednn: the same direction through oneDNN on the same host buffers, after ours */
    if (o->vs_onednn && !L->dev && L == L->self0) {
        double tmn = 0, tmd = 0;
        char e[160] = "";
        int ok = xt == CUDNN_DATA_FLOAT ? fdt_onednn_time((int)d, c, o->nhwc, xb, wb, yb, o->warmup, o->iters, &tmn, &tmd, e, sizeof e)
                                        : (snprintf(e, sizeof e, "--vs-onednn compares fp32 only"), -1);
        for (int i = first_result; i < nresults; i++) {
            results[i].have_dnnl = ok == 0 ? 1 : -1;
            results[i].dnnl_min = tmn;
            results[i].dnnl_med = tmd;
            snprintf(results[i].dnnl_err, sizeof results[i].dnnl_err, "%s", e);
        }
    }
#else
    (void)first_result;
#endif
    goto done;

fail:;
    result *r = new_result();
    r->lib = A->label; r->prob = pi; r->dir = d; r->algo = -1;
    snprintf(r->status, sizeof r->status, "SETUP_FAILED");
    snprintf(r->message, sizeof r->message, "%s", setup_err);
done:
    if (xd) A->DestroyTensorDescriptor(xd);
    if (yd) A->DestroyTensorDescriptor(yd);
    if (wd) A->DestroyFilterDescriptor(wd);
    if (cd) A->DestroyConvolutionDescriptor(cd);
    fdt_free(L->dev, xb); fdt_free(L->dev, wb); fdt_free(L->dev, yb);
    free(hostbuf); free(dx); free(dw); free(dy); free(ref); free(sidx); free(tmp);
}

/* ------------------------------------------------------------------ output */
static void print_summary(FILE *f, const result *r, const problem *ps)
{
    char an[80];
    algo_enum_name((dirn)r->dir, r->algo, an, sizeof an);
    fprintf(f, "%s: %d (%s) lib: %s problem: %s", dir_label[r->dir], r->algo, r->algo >= 0 ? an : "none", r->lib,
            ps[r->prob].name);
    if (strcmp(r->status, "SUCCESS")) {
        fprintf(f, " Status: %s%s%s%s\n", r->status, r->message[0] ? " (" : "", r->message, r->message[0] ? ")" : "");
        return;
    }
    fprintf(f, " Workspace: %zu B Math: %s Deterministic: %s MinTime: %.4f ms MedianTime: %.4f ms TFLOP/s: %.4f GB/s: %.3f"
               " HostTime/call: %.2f us",
            r->ws, math_name(r->math), r->det < 0 ? "unknown" : r->det ? "yes" : "no", r->tmin * 1e3, r->tmed * 1e3,
            r->tflops, r->gbs, r->host * 1e6);
    fprintf(f, " LoopTime/call: %.4f ms", r->tloop * 1e3);
    if (r->tgraph > 0) fprintf(f, " GraphTime/call: %.4f ms", r->tgraph * 1e3);
    else if (r->graph_err[0]) fprintf(f, " GraphTime: n/a (%s)", r->graph_err);
    if (r->verified == 1 || r->verified == -1)
    {
        fprintf(f, " MaxError: %.3g (tolerance %.3g, %s", r->maxerr, r->tol, r->verified == 1 ? "ok" : "FAILED");
        if (r->vpoints) fprintf(f, ", %zu sampled points", r->vpoints);
        fputc(')', f);
    } else if (r->verified == 2)
        fprintf(f, " MaxError: skipped (out of memory for the reference)");
    if (r->have_their) {
        fprintf(f, " Theirs: %.4f ms (algo %d) Ratio(ours/theirs): %.3f", r->their_med * 1e3, r->their_algo, r->tmed / r->their_med);
        if (r->their_loop > 0) fprintf(f, " TheirLoop: %.4f ms LoopRatio: %.3f TheirHost: %.2f us", r->their_loop * 1e3,
                                       r->tloop / r->their_loop, r->their_host * 1e6);
        if (r->their_graph > 0 && r->tgraph > 0)
            fprintf(f, " TheirGraph: %.4f ms GraphRatio: %.3f", r->their_graph * 1e3, r->tgraph / r->their_graph);
    }
    if (r->peak_frac > 0) fprintf(f, " PeakFraction: %.1f%%", 100 * r->peak_frac);
    if (r->have_dnnl == 1)
        fprintf(f, " oneDNN MinTime: %.4f ms MedianTime: %.4f ms Ratio(FreeDNN/oneDNN, min): %.3f", r->dnnl_min * 1e3,
                r->dnnl_med * 1e3, r->tmin / r->dnnl_min);
    else if (r->have_dnnl == -1) fprintf(f, " oneDNN: %s", r->dnnl_err);
    fprintf(f, " AvgTime: %.4f ms\n", r->tavg * 1e3);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static void csv_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('"', f);
}

static void print_machine(const options *o, const problem *ps)
{
    FILE *f = stdout;
    if (o->csv)
        fprintf(f, "lib,problem,n,c,h,w,k,r,s,stride_h,stride_w,pad_h,pad_w,dil_h,dil_w,groups,type,layout,dir,algo,"
                   "algo_name,status,message,workspace_bytes,math,deterministic,min_ms,median_ms,avg_ms,tflops,gbs,"
                   "host_us,max_error,tolerance,verified,theirs_median_ms,theirs_algo,ratio,onednn_min_ms,onednn_median_ms,onednn_ratio_min,peak_fraction,"
                   "loop_ms,graph_ms,theirs_loop_ms,theirs_graph_ms,theirs_host_us\n");
    else fprintf(f, "[\n");
    for (int i = 0; i < nresults; i++) {
        const result *r = &results[i];
        const fdt_conv *c = &ps[r->prob].cv;
        char an[80];
        if (r->algo >= 0) algo_enum_name((dirn)r->dir, r->algo, an, sizeof an);
        else snprintf(an, sizeof an, "none");
        const char *ver = r->verified == 1 ? "ok" : r->verified == -1 ? "failed" : r->verified == 2 ? "skipped" : "no";
        const char *det = r->det < 0 ? "unknown" : r->det ? "yes" : "no";
        if (o->csv) {
            csv_str(f, r->lib); fputc(',', f); csv_str(f, ps[r->prob].name);
            fprintf(f, ",%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%s,%s,%d,%s,%s,", c->n, c->c, c->h, c->w, c->k,
                    c->r, c->s, c->sh, c->sw, c->ph, c->pw, c->dh, c->dw, c->g, o->type, o->nhwc ? "nhwc" : "nchw",
                    dir_name[r->dir], r->algo, an, r->status);
            csv_str(f, r->message);
            fprintf(f, ",%zu,%s,%s,%.6f,%.6f,%.6f,%.6f,%.4f,%.3f,%.6g,%.6g,%s,%.6f,%d,%.4f,%.6f,%.6f,%.4f,%.4f,%.6f,%.6f,%.6f,%.6f,%.3f\n",
                    r->ws, math_name(r->math),
                    det, r->tmin * 1e3, r->tmed * 1e3, r->tavg * 1e3, r->tflops, r->gbs, r->host * 1e6, r->maxerr,
                    r->tol, ver, r->have_their ? r->their_med * 1e3 : 0.0, r->have_their ? r->their_algo : -1,
                    r->have_their && r->their_med > 0 ? r->tmed / r->their_med : 0.0,
                    r->have_dnnl == 1 ? r->dnnl_min * 1e3 : 0.0, r->have_dnnl == 1 ? r->dnnl_med * 1e3 : 0.0,
                    r->have_dnnl == 1 ? r->tmin / r->dnnl_min : 0.0, r->peak_frac, r->tloop * 1e3, r->tgraph * 1e3,
                    r->their_loop * 1e3, r->their_graph * 1e3, r->their_host * 1e6);
        } else {
            fprintf(f, "  {\"lib\": ");
            json_str(f, r->lib);
            fprintf(f, ", \"problem\": ");
            json_str(f, ps[r->prob].name);
            fprintf(f, ", \"n\": %d, \"c\": %d, \"h\": %d, \"w\": %d, \"k\": %d, \"r\": %d, \"s\": %d, \"stride\": [%d, %d],"
                       " \"pad\": [%d, %d], \"dilation\": [%d, %d], \"groups\": %d, \"type\": \"%s\", \"layout\": \"%s\","
                       " \"dir\": \"%s\", \"algo\": %d, \"algo_name\": \"%s\", \"status\": \"%s\", \"message\": ",
                    c->n, c->c, c->h, c->w, c->k, c->r, c->s, c->sh, c->sw, c->ph, c->pw, c->dh, c->dw, c->g, o->type,
                    o->nhwc ? "nhwc" : "nchw", dir_name[r->dir], r->algo, an, r->status);
            json_str(f, r->message);
            fprintf(f, ", \"workspace_bytes\": %zu, \"math\": \"%s\", \"deterministic\": \"%s\", \"min_ms\": %.6f,"
                       " \"median_ms\": %.6f, \"avg_ms\": %.6f, \"tflops\": %.6f, \"gbs\": %.4f, \"host_us\": %.3f,"
                       " \"max_error\": %.6g, \"tolerance\": %.6g, \"verified\": \"%s\", \"verify_points\": %zu",
                    r->ws, math_name(r->math), det, r->tmin * 1e3, r->tmed * 1e3, r->tavg * 1e3, r->tflops, r->gbs,
                    r->host * 1e6, isfinite(r->maxerr) ? r->maxerr : 1e308, r->tol, ver, r->vpoints);
            if (r->have_their)
                fprintf(f, ", \"theirs_median_ms\": %.6f, \"theirs_algo\": %d, \"ratio\": %.4f", r->their_med * 1e3,
                        r->their_algo, r->their_med > 0 ? r->tmed / r->their_med : 0.0);
            if (r->have_dnnl == 1)
                fprintf(f, ", \"onednn_min_ms\": %.6f, \"onednn_median_ms\": %.6f, \"onednn_ratio_min\": %.4f", r->dnnl_min * 1e3,
                        r->dnnl_med * 1e3, r->tmin / r->dnnl_min);
            if (r->peak_frac > 0) fprintf(f, ", \"peak_fraction\": %.4f", r->peak_frac);
            fprintf(f, ", \"loop_ms\": %.6f, \"host_mean_us\": %.3f", r->tloop * 1e3, r->host_mean * 1e6);
            if (r->tgraph > 0) fprintf(f, ", \"graph_ms\": %.6f", r->tgraph * 1e3);
            if (r->graph_err[0]) { fprintf(f, ", \"graph_error\": "); json_str(f, r->graph_err); }
            if (r->have_their && r->their_loop > 0)
                fprintf(f, ", \"theirs_loop_ms\": %.6f, \"theirs_host_us\": %.3f", r->their_loop * 1e3, r->their_host * 1e6);
            if (r->have_their && r->their_graph > 0) fprintf(f, ", \"theirs_graph_ms\": %.6f", r->their_graph * 1e3);
            fprintf(f, "}%s\n", i + 1 < nresults ? "," : "");
        }
    }
    if (!o->csv) fprintf(f, "]\n");
}

static void print_table(const problem *ps)
{
    printf("\nResults\n%-10s %-28s %-10s %4s %-14s %12s %10s %10s %9s %9s %s\n", "lib", "problem", "dir", "algo",
           "status", "workspace", "min_ms", "median_ms", "TFLOP/s", "GB/s", "verify / vs-lib");
    for (int i = 0; i < nresults; i++) {
        const result *r = &results[i];
        char lib[11];
        snprintf(lib, sizeof lib, "%s", r->lib);
        printf("%-10s %-28.28s %-10s %4d %-14.14s %12zu %10.4f %10.4f %9.4f %9.3f", lib, ps[r->prob].name,
               dir_name[r->dir], r->algo, r->status, r->ws, r->tmin * 1e3, r->tmed * 1e3, r->tflops, r->gbs);
        if (r->verified == 1 || r->verified == -1) printf(" err %.2g/%.2g %s", r->maxerr, r->tol, r->verified == 1 ? "ok" : "FAILED");
        else if (r->verified == 2) printf(" verify skipped");
        if (r->have_their) printf(" theirs %.4f ms (algo %d) ratio %.3f", r->their_med * 1e3, r->their_algo, r->tmed / r->their_med);
        if (r->peak_frac > 0) printf(" peak %.0f%%", 100 * r->peak_frac);
        if (r->have_dnnl == 1) printf(" onednn %.4f ms ratio %.3f", r->dnnl_min * 1e3, r->tmin / r->dnnl_min);
        else if (r->have_dnnl == -1) printf(" onednn: %s", r->dnnl_err);
        printf("\n");
    }
}

/* ------------------------------------------------------------------ main */
static void usage(FILE *f)
{
    fprintf(f,
"usage: freednn bench [options] [DESCRIPTOR...]\n"
"Times convolutions through the cuDNN API, for each problem, direction and algorithm.\n"
"\n"
"Problem (classic cuDNN benchmark flags; used when no DESCRIPTOR/--layers is given, or when any is set):\n"
"  -n N            timed iterations (default 10)\n"
"  -b N            batch size N (default 1)\n"
"  -c C            input channels (default 64)\n"
"  -h H, -w W      input height and width (default 56)\n"
"  -k K            output channels (default 64)\n"
"  -r R            filter size R x R (default 3)\n"
"  -s S            stride (default 1)\n"
"  -p P            zero padding on H and W (default 1)\n"
"  --dilation D    dilation (default 1)\n"
"  --groups G      groups (default 1; C and K divisible by G)\n"
"  DESCRIPTOR      benchdnn style, e.g. mb32ic64ih224oc64kh3ph1; keys g mb ic ih iw oc oh ow kh kw sh sw\n"
"                  ph pw dh dw and _name at the end; w keys default to the h keys, mb to 2, dh/dw are\n"
"                  benchdnn dilations (0 = dense, cuDNN dilation = d + 1)\n"
"  --layers FILE   one layer per line: name N C H W K R S stride pad groups ('#' comments),\n"
"                  as in bench/layers_cpu.txt and bench/layers_gpu.txt\n"
"\n"
"What to run:\n"
"  --dir D         fwd | bwd-data | bwd-filter | all (default fwd)\n"
"  --type T        fp32 | tf32 | fp16 | bf16 | fp64 | int8 (default fp32; int8 is forward only,\n"
"                  INT8 x/w, FLOAT y, INT32 compute)\n"
"  --layout L      nchw | nhwc (default nchw; the filter uses the same layout)\n"
"  --algo A        N (force that algorithm enum value) | all (every algorithm the library lists)\n"
"                  default: the first algorithm cudnnGet*Algorithm_v7 reports\n"
"  --backend B     cpu | cuda: sets FREEDNN_BACKEND before cudnnCreate\n"
"  --warmup N      untimed calls before the timed loop (default 2)\n"
"  --verify        compare the first call's output with a naive double-precision reference\n"
"                  (above %.0e FLOP: on 32-2048 sampled output points)\n"
"  --vs-lib PATH   also run every problem through another cuDNN (e.g. libcudnn.so.9) loaded with\n"
"                  dlopen(RTLD_LOCAL) and print both times and the ratio ours/theirs\n"
"  --vs-onednn     (built with oneDNN only) also run each problem through oneDNN in this process on\n"
"                  the same host buffers and plain layouts (fp32, CPU backend), print its min/median\n"
"                  time and the ratio FreeDNN/oneDNN of the min times, plus the measured FMA peak\n"
"                  and FreeDNN's fraction of it (FLOP rate at the min time)\n"
"  --graph         (GPU) also capture the N timed calls into one CUDA graph per library and\n"
"                  report its launch time / N: the GPU time without host overhead\n"
"  --dry-run       list the problems (sizes, output size, GFLOP) and exit without running\n"
"  --csv, --json   machine-readable results on stdout (summary lines then go to stderr)\n"
"  --help          this text\n"
"\n"
"Reported per algorithm: enum name and number, workspace bytes, math type, determinism, min and\n"
"median time, TFLOP/s, GB/s, host time per call, and with --verify the max error and tolerance.\n"
"TFLOP/s counts direct-convolution FLOPs:  FLOP = 2*N*K*(C/G)*R*S*P*Q, with output size\n"
"P = (H + 2*pad - ((R-1)*dil + 1))/stride + 1, Q likewise, whatever the algorithm does.\n"
"GB/s counts bytes of x + w + y once per call. CPU times: clock_gettime around each call;\n"
"GPU times: CUDA events around each call (min, median); LoopTime = events around N\n"
"back-to-back calls / N, as a program sees it; host time = median time to enqueue one call\n"
"in that loop (JSON host_mean_us: the loop's duration / N).\n"
"Each library's handle gets its own non-blocking stream (cudnnSetStream).\n"
"Exit status: 0 when every result verified (or --verify not given), 1 on a verification\n"
"failure, 2 on a usage error. Entries the library does not support are reported with their\n"
"status and do not change the exit status.\n", VERIFY_FLOP_LIMIT);
}

int fdt_bench_main(int argc, char **argv)
{
    options o = { .iters = 10, .warmup = 2, .dirs = 1, .algo = -1 };
    set_type(&o, "fp32");
    fdt_conv fc = { .n = 1, .c = 64, .h = 56, .w = 56, .k = 64, .r = 3, .s = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1,
                    .dh = 1, .dw = 1, .g = 1 };
    int flag_problem = 0, wset = 0;
    problem *ps = NULL;
    int np = 0;
    const char *layers[16];
    int nlayers = 0;
    enum { O_DIR = 256, O_TYPE, O_LAYOUT, O_DIL, O_GROUPS, O_ALGO, O_BACKEND, O_WARMUP, O_VERIFY, O_CSV, O_JSON,
           O_HELP, O_LAYERS, O_VSLIB, O_DRYRUN, O_VSONEDNN, O_GRAPH };
    int dry_run = 0;
    static const struct option lo[] = {
        { "dir", required_argument, 0, O_DIR }, { "type", required_argument, 0, O_TYPE },
        { "layout", required_argument, 0, O_LAYOUT }, { "dilation", required_argument, 0, O_DIL },
        { "groups", required_argument, 0, O_GROUPS }, { "algo", required_argument, 0, O_ALGO },
        { "backend", required_argument, 0, O_BACKEND }, { "warmup", required_argument, 0, O_WARMUP },
        { "verify", no_argument, 0, O_VERIFY }, { "csv", no_argument, 0, O_CSV }, { "json", no_argument, 0, O_JSON },
        { "help", no_argument, 0, O_HELP }, { "layers", required_argument, 0, O_LAYERS },
        { "vs-lib", required_argument, 0, O_VSLIB }, { "dry-run", no_argument, 0, O_DRYRUN },
        { "graph", no_argument, 0, O_GRAPH },
        { "vs-onednn", no_argument, 0, O_VSONEDNN }, { 0, 0, 0, 0 } };
    optind = 1;
    opterr = 0;
    int ch, v;
    while ((ch = getopt_long(argc, argv, ":n:b:c:h:w:k:r:s:p:", lo, NULL)) != -1) {
        switch (ch) {
        case 'n': if (parse_int(optarg, "-n (iterations)", 1, &o.iters)) return 2; break;
        case 'b': if (parse_int(optarg, "-b (batch)", 1, &fc.n)) return 2; flag_problem = 1; break;
        case 'c': if (parse_int(optarg, "-c (input channels)", 1, &fc.c)) return 2; flag_problem = 1; break;
        case 'h': if (parse_int(optarg, "-h (height)", 1, &fc.h)) return 2; flag_problem = 1; break;
        case 'w': if (parse_int(optarg, "-w (width)", 1, &fc.w)) return 2; flag_problem = 1; wset = 1; break;
        case 'k': if (parse_int(optarg, "-k (output channels)", 1, &fc.k)) return 2; flag_problem = 1; break;
        case 'r': if (parse_int(optarg, "-r (filter size)", 1, &v)) return 2; fc.r = fc.s = v; flag_problem = 1; break;
        case 's': if (parse_int(optarg, "-s (stride)", 1, &v)) return 2; fc.sh = fc.sw = v; flag_problem = 1; break;
        case 'p': if (parse_int(optarg, "-p (padding)", 0, &v)) return 2; fc.ph = fc.pw = v; flag_problem = 1; break;
        case O_DIL: if (parse_int(optarg, "--dilation", 1, &v)) return 2; fc.dh = fc.dw = v; flag_problem = 1; break;
        case O_GROUPS: if (parse_int(optarg, "--groups", 1, &fc.g)) return 2; flag_problem = 1; break;
        case O_WARMUP: if (parse_int(optarg, "--warmup", 0, &o.warmup)) return 2; break;
        case O_DIR:
            if (!strcmp(optarg, "fwd")) o.dirs = 1;
            else if (!strcmp(optarg, "bwd-data")) o.dirs = 2;
            else if (!strcmp(optarg, "bwd-filter")) o.dirs = 4;
            else if (!strcmp(optarg, "all")) o.dirs = 7;
            else { fprintf(stderr, "freednn bench: --dir must be fwd, bwd-data, bwd-filter or all, got '%s'\n", optarg); return 2; }
            break;
        case O_TYPE: if (set_type(&o, optarg)) return 2; break;
        case O_LAYOUT:
            if (!strcmp(optarg, "nchw")) o.nhwc = 0;
            else if (!strcmp(optarg, "nhwc")) o.nhwc = 1;
            else { fprintf(stderr, "freednn bench: --layout must be nchw or nhwc, got '%s'\n", optarg); return 2; }
            break;
        case O_ALGO:
            if (!strcmp(optarg, "all")) o.algo = -2;
            else if (parse_int(optarg, "--algo (an algorithm number or 'all')", 0, &o.algo)) return 2;
            break;
        case O_BACKEND:
            if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda")) {
                fprintf(stderr, "freednn bench: --backend must be cpu or cuda, got '%s'\n", optarg);
                return 2;
            }
            o.backend = optarg;
            break;
        case O_VERIFY: o.verify = 1; break;
        case O_CSV: o.csv = 1; break;
        case O_JSON: o.json = 1; break;
        case O_HELP: usage(stdout); return 0;
        case O_LAYERS:
            if (nlayers == 16) { fprintf(stderr, "freednn bench: at most 16 --layers files\n"); return 2; }
            layers[nlayers++] = optarg;
            break;
        case O_VSLIB: o.vslib = optarg; break;
        case O_GRAPH: o.graph = 1; break;
        case O_DRYRUN: dry_run = 1; break;
        case O_VSONEDNN:
#ifdef FREEDNN_HAVE_ONEDNN
            o.vs_onednn = 1;
            break;
#else
            fprintf(stderr, "freednn bench: --vs-onednn needs a build with oneDNN (libdnnl-dev found at configure time)\n");
            return 2;
#endif
        case ':':
            fprintf(stderr, "freednn bench: option %s needs a value (see freednn bench --help)\n", argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr, "freednn bench: unknown option '%s' (see freednn bench --help)\n", argv[optind - 1]);
            return 2;
        }
    }
    if (o.csv && o.json) { fprintf(stderr, "freednn bench: --csv and --json exclude each other\n"); return 2; }
    if (!wset) fc.w = fc.h;
    if (!strcmp(o.type, "int8") && o.dirs != 1) {
        fprintf(stderr, "freednn bench: --type int8 is forward only (use --dir fwd)\n");
        return 2;
    }
    for (int i = optind; i < argc; i++) {
        ps = realloc(ps, sizeof(problem) * (size_t)(np + 1));
        char err[300];
        if (fdt_parse_descriptor(argv[i], ps[np].name, sizeof ps[np].name, &ps[np].cv, err, sizeof err)) {
            fprintf(stderr, "freednn bench: %s\n", err);
            free(ps);
            return 2;
        }
        np++;
    }
    for (int i = 0; i < nlayers; i++)
        if (read_layers(layers[i], &ps, &np)) { free(ps); return 2; }
    if (flag_problem || np == 0) {
        char err[300];
        if (fdt_check_conv(&fc, err, sizeof err)) {
            fprintf(stderr, "freednn bench: %s\n", err);
            free(ps);
            return 2;
        }
        ps = realloc(ps, sizeof(problem) * (size_t)(np + 1));
        memmove(ps + 1, ps, sizeof(problem) * (size_t)np);
        snprintf(ps[0].name, sizeof ps[0].name, "b%dc%dh%dw%dk%dr%ds%dp%d%s", fc.n, fc.c, fc.h, fc.w, fc.k, fc.r, fc.sh,
                 fc.ph, fc.g > 1 ? "g" : "");
        if (fc.g > 1 || fc.dh > 1) {
            size_t l = strlen(ps[0].name);
            snprintf(ps[0].name + l, sizeof ps[0].name - l, "%s%d", fc.g > 1 ? "" : "d", fc.g > 1 ? fc.g : fc.dh);
        }
        ps[0].cv = fc;
        np++;
    }

    if (dry_run) {   /* list the problems and their FLOP counts, run nothing */
        for (int i = 0; i < np; i++) {
            const fdt_conv *c = &ps[i].cv;
            printf("%-28s N=%d C=%d H=%d W=%d K=%d R=%d S=%d stride=%d,%d pad=%d,%d dil=%d,%d groups=%d -> P=%d Q=%d "
                   "GFLOP=%.4f\n", ps[i].name, c->n, c->c, c->h, c->w, c->k, c->r, c->s, c->sh, c->sw, c->ph, c->pw,
                   c->dh, c->dw, c->g, fdt_out_h(c), fdt_out_w(c),
                   2e-9 * c->n * c->k * (double)(c->c / c->g) * c->r * c->s * fdt_out_h(c) * fdt_out_w(c));
        }
        free(ps);
        return 0;
    }
    if (o.backend) setenv("FREEDNN_BACKEND", o.backend, 1);
    fdt_api ours, theirs;
    fdt_api_ours(&ours);
    lib_ctx libs[2];
    int nlibs = 0;
    cudnnStatus_t st = ours.Create(&libs[0].h);
    if (!fdt_ok(&ours, st)) {
        fprintf(stderr, "freednn bench: cudnnCreate failed: %s: %s\n", fdt_status(&ours, st), fdt_last_error(&ours));
        free(ps);
        return 1;
    }
    libs[0].api = &ours;
    libs[0].self0 = &libs[0];
    libs[1].self0 = &libs[0];
    libs[0].dev = strcmp(ours.GetBackendName(libs[0].h), "cuda") == 0;
    if (libs[0].dev && !fdt_have_cuda()) {
        fprintf(stderr, "freednn bench: the CUDA backend was chosen but these tools were built without CUDA; use --backend cpu\n");
        ours.Destroy(libs[0].h);
        free(ps);
        return 1;
    }
    nlibs = 1;
    attach_stream(&libs[0]);
    FILE *info = (o.csv || o.json) ? stderr : stdout;
    fprintf(info, "FreeDNN %zu, backend %s, type %s, layout %s, %d iterations after %d warm-up\n", ours.GetVersion(),
            ours.GetBackendName(libs[0].h), o.type, o.nhwc ? "nhwc" : "nchw", o.iters, o.warmup);
    if (o.vslib) {
        char why[512];
        if (fdt_api_load(&theirs, o.vslib, why, sizeof why)) {
            fprintf(stderr, "freednn bench: --vs-lib: %s\n", why);
            ours.Destroy(libs[0].h);
            free(ps);
            return 2;
        }
        st = theirs.Create(&libs[1].h);
        if (!fdt_ok(&theirs, st)) {
            fprintf(stderr, "freednn bench: --vs-lib %s: cudnnCreate failed: %s\n", o.vslib, fdt_status(&theirs, st));
            fdt_api_close(&theirs);
            ours.Destroy(libs[0].h);
            free(ps);
            return 2;
        }
        libs[1].api = &theirs;
        libs[1].dev = theirs.GetBackendName ? strcmp(theirs.GetBackendName(libs[1].h), "cuda") == 0 : 1;
        if (libs[1].dev && !fdt_have_cuda()) {
            fprintf(stderr, "freednn bench: --vs-lib needs device memory but these tools were built without CUDA\n");
            theirs.Destroy(libs[1].h);
            fdt_api_close(&theirs);
            ours.Destroy(libs[0].h);
            free(ps);
            return 2;
        }
        fprintf(info, "vs-lib %s: cuDNN version %zu, %s buffers%s%s\n", o.vslib, theirs.GetVersion(),
                libs[1].dev ? "device" : "host", theirs.GetBackendName ? ", backend " : "",
                theirs.GetBackendName ? theirs.GetBackendName(libs[1].h) : "");
        nlibs = 2;
        attach_stream(&libs[1]);
    }

#ifdef FREEDNN_HAVE_ONEDNN
    if (o.vs_onednn) {
        if (libs[0].dev) {
            fprintf(stderr, "freednn bench: --vs-onednn compares the CPU backend; use --backend cpu\n");
            ours.Destroy(libs[0].h);
            free(ps);
            return 2;
        }
        const char *env = getenv("OMP_NUM_THREADS");
        int nth = env && atoi(env) > 0 ? atoi(env) : (int)sysconf(_SC_NPROCESSORS_ONLN);
        const char *isa = "none";
        o.peak_gflops = fdt_fma_peak(nth, &isa);
        const double tile = fdt_l1_tile_peak(nth);
        fprintf(info, "oneDNN %s in this process; measured %s FMA peak %.1f GFLOP/s on %d threads (fp32)\n",
                fdt_onednn_version(), isa, o.peak_gflops, nth);
        if (tile > 0)
            fprintf(info, "48x8 AVX-512 GEMM tile from L1: %.1f GFLOP/s on %d threads (%.0f%% of the FMA peak)\n", tile, nth,
                    o.peak_gflops > 0 ? 100 * tile / o.peak_gflops : 0.0);
    }
#endif
    int ndirs = (o.dirs & 1) + !!(o.dirs & 2) + !!(o.dirs & 4);
    int ntot = np * ndirs * nlibs * (o.algo == -2 ? 8 : 1), prog = 0;
    for (int pi = 0; pi < np; pi++)
        for (int d = 0; d < 3; d++) {
            if (!(o.dirs & (1 << d))) continue;
            int first = nresults;
            run_dir(&o, &libs[0], &ps[pi], pi, (dirn)d, &prog, ntot);
            int mid = nresults;
            if (nlibs == 2) {
                run_dir(&o, &libs[1], &ps[pi], pi, (dirn)d, &prog, ntot);
                /* attach their median to our result: with the heuristic default (no --algo) our
                 * default pick against theirs, whatever the algorithm numbers; with --algo all
                 * or N, the result of the same algorithm number */
                for (int i = first; i < mid; i++)
                    for (int j = mid; j < nresults; j++)
                        if ((o.algo == -1 || results[j].algo == results[i].algo) && !strcmp(results[i].status, "SUCCESS") &&
                            !strcmp(results[j].status, "SUCCESS")) {
                            results[i].their_med = results[j].tmed;
                            results[i].their_algo = results[j].algo;
                            results[i].their_loop = results[j].tloop;
                            results[i].their_graph = results[j].tgraph;
                            results[i].their_host = results[j].host;
                            results[i].have_their = results[j].tmed > 0;
                            break;
                        }
            }
            if (isatty(2) && !o.csv && !o.json) fprintf(stderr, "\r%60s\r", "");
            for (int i = first; i < nresults; i++) print_summary(info, &results[i], ps);
        }
    if (o.csv || o.json) print_machine(&o, ps);
    else print_table(ps);

    int rc = 0;
    for (int i = 0; i < nresults; i++)
        if (results[i].verified == -1) rc = 1;
    ours.Destroy(libs[0].h);
    fdt_stream_destroy(libs[0].stream);
    if (nlibs == 2) {
        theirs.Destroy(libs[1].h);
        fdt_stream_destroy(libs[1].stream);
        fdt_api_close(&theirs);
    }
    free(results);
    results = NULL;
    nresults = 0;
    free(ps);
    return rc;
}
