/* The vectorised CPU convolution kernels (forward IMPLICIT_PRECOMP_GEMM, backward-data ALGO_1,
 * backward-filter ALGO_3 on CPUs with AVX-512) against the independent reference: randomized,
 * seeded 2-D FLOAT problems over the shapes they accept (groups 1, any stride / padding /
 * dilation, both modes, channel counts that are not multiples of the 16/32-channel blocks,
 * output widths covering every register-tile width), NCHW and NHWC activations, KCRS and
 * KRSC filters, alpha/beta with NaN-prefilled outputs for beta = 0. Integer-valued data, so
 * results are exact. On other backends or CPUs the same forced algorithms run whatever
 * implements them (or report NOT_SUPPORTED, which is then skipped). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"
#include "conv_ref.h"

static int skipped;
static cudnnConvolutionFwdAlgo_t g_fwd_algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
static cudnnConvolutionBwdFilterAlgo_t g_bwf_algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
/* data type of x, w, y and the convolution's compute type (HALF / BFLOAT16: the CPU backend
 * widens them to float for the kernels above, conv_cvt_f32.c) */
static cudnnDataType_t g_type = CUDNN_DATA_FLOAT, g_ctype = CUDNN_DATA_FLOAT;

static const char *fdnn_test_type_name(cudnnDataType_t t)
{
    return t == CUDNN_DATA_HALF ? "half" : t == CUDNN_DATA_BFLOAT16 ? "bf16" : "float";
}

typedef struct {
    int n, c, k, h, w, r, s, ph, pw, sh, sw, dh, dw, p, q, flip, nhwc, wnhwc;
    int g; /* 0 or 1: dense; C == K == g: depthwise */
} prob;

static void layout(int nhwc, int n, int c, int h, int w, ref_conv_layout *l)
{
    (void)n;
    l->vect = 1;
    l->s[2] = 0;
    if (nhwc) { l->s[1] = 1; l->s[4] = c; l->s[3] = (int64_t)w * c; l->s[0] = (int64_t)h * w * c; }
    else { l->s[4] = 1; l->s[3] = w; l->s[1] = (int64_t)h * w; l->s[0] = (int64_t)c * h * w; }
}

/* the four descriptors of a case */
static void descs_create(cudnnTensorDescriptor_t *xd, cudnnTensorDescriptor_t *yd, cudnnFilterDescriptor_t *wd, cudnnConvolutionDescriptor_t *cd)
{
    TH_OK(cudnnCreateTensorDescriptor(xd));
    TH_OK(cudnnCreateTensorDescriptor(yd));
    TH_OK(cudnnCreateFilterDescriptor(wd));
    TH_OK(cudnnCreateConvolutionDescriptor(cd));
}
static void descs_destroy(cudnnTensorDescriptor_t xd, cudnnTensorDescriptor_t yd, cudnnFilterDescriptor_t wd, cudnnConvolutionDescriptor_t cd)
{
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
}

static int run_case(cudnnHandle_t h, const prob *pb, int dir, double alpha, double beta)
{
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    descs_create(&xd, &yd, &wd, &cd);
    cudnnTensorFormat_t f = pb->nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    TH_OK(cudnnSetTensor4dDescriptor(xd, f, g_type, pb->n, pb->c, pb->h, pb->w));
    TH_OK(cudnnSetTensor4dDescriptor(yd, f, g_type, pb->n, pb->k, pb->p, pb->q));
    int g = pb->g > 1 ? pb->g : 1, cg = pb->c / g;
    TH_OK(cudnnSetFilter4dDescriptor(wd, g_type, pb->wnhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, pb->k, cg, pb->r, pb->s));
    TH_OK(cudnnSetConvolution2dDescriptor(cd, pb->ph, pb->pw, pb->sh, pb->sw, pb->dh, pb->dw,
                                          pb->flip ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION, g_ctype));
    TH_OK(cudnnSetConvolutionGroupCount(cd, g));
    size_t nx = (size_t)pb->n * pb->c * pb->h * pb->w, nw = (size_t)pb->k * cg * pb->r * pb->s, ny = (size_t)pb->n * pb->k * pb->p * pb->q;
    double *x = malloc(nx * 8), *w = malloc(nw * 8), *y = malloc(ny * 8);
    th_fill_int(x, nx, -3, 3);
    th_fill_int(w, nw, -3, 3);
    th_fill_int(y, ny, -3, 3);
    size_t nout = dir == 0 ? ny : dir == 1 ? nx : nw;
    double *want = malloc(nout * 8), *got = malloc(nout * 8), *prev = malloc(nout * 8);
    float *hb = malloc((nx > nw ? (nx > ny ? nx : ny) : (nw > ny ? nw : ny)) * 4);
    th_fill_int(prev, nout, -3, 3);
    if (beta == 0) for (size_t i = 0; i < nout; i++) prev[i] = NAN;
    memcpy(want, prev, nout * 8);
    ref_conv rc = { .n = pb->n, .c = pb->c, .k = pb->k, .g = g, .in = { 1, pb->h, pb->w }, .out = { 1, pb->p, pb->q },
                    .flt = { 1, pb->r, pb->s }, .pad = { 0, pb->ph, pb->pw }, .stride = { 1, pb->sh, pb->sw },
                    .dil = { 1, pb->dh, pb->dw }, .flip = pb->flip };
    ref_conv_layout xl, yl, wl;
    layout(pb->nhwc, pb->n, pb->c, pb->h, pb->w, &xl);
    layout(pb->nhwc, pb->n, pb->k, pb->p, pb->q, &yl);
    layout(pb->wnhwc, pb->k, cg, pb->r, pb->s, &wl);
    if (dir == 0) ref_conv_fwd(&rc, x, &xl, w, &wl, want, &yl, alpha, beta);
    else if (dir == 1) ref_conv_bwd_data(&rc, want, &xl, w, &wl, y, &yl, alpha, beta);
    else ref_conv_bwd_filter(&rc, x, &xl, want, &wl, y, &yl, alpha, beta);
    int nonzero = 0;
    for (size_t i = 0; i < nout; i++) nonzero |= want[i] != 0 && !isnan(want[i]);
    if (!nonzero) {   /* every tap in the padding: a degenerate problem proves nothing, draw another */
        free(x); free(w); free(y); free(want); free(got); free(prev); free(hb);
        descs_destroy(xd, yd, wd, cd);
        return 0;
    }
    /* the reference works on the layouts directly, so the flat arrays already are in them */
    const size_t es = g_type == CUDNN_DATA_FLOAT ? 4 : 2;
    void *bx = th_alloc(h, nx * es), *bw = th_alloc(h, nw * es), *by = th_alloc(h, ny * es);
    void *bo = dir == 0 ? by : dir == 1 ? bx : bw;
    th_from_double(x, g_type, hb, nx); th_upload(h, bx, hb, nx * es);
    th_from_double(w, g_type, hb, nw); th_upload(h, bw, hb, nw * es);
    th_from_double(y, g_type, hb, ny); th_upload(h, by, hb, ny * es);
    th_from_double(prev, g_type, hb, nout); th_upload(h, bo, hb, nout * es);
    size_t ws = 0;
    float fa = (float)alpha, fb = (float)beta;
    cudnnStatus_t st;
    if (dir == 0) st = cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, g_fwd_algo, &ws);
    else if (dir == 1) st = cudnnGetConvolutionBackwardDataWorkspaceSize(h, wd, yd, cd, xd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, &ws);
    else st = cudnnGetConvolutionBackwardFilterWorkspaceSize(h, xd, yd, cd, wd, g_bwf_algo, &ws);
    if (st == CUDNN_STATUS_NOT_SUPPORTED) {
        skipped++;
    } else {
        { char em[300] = ""; cudnnGetLastErrorString(em, sizeof em); TH_CHECK(st == CUDNN_STATUS_SUCCESS, "workspace query: status %d %s", (int)st, em); }
        void *wsb = ws ? th_alloc(h, ws) : NULL;
        if (dir == 0) st = cudnnConvolutionForward(h, &fa, xd, bx, wd, bw, cd, g_fwd_algo, wsb, ws, &fb, yd, by);
        else if (dir == 1) st = cudnnConvolutionBackwardData(h, &fa, wd, bw, yd, by, cd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, wsb, ws, &fb, xd, bx);
        else st = cudnnConvolutionBackwardFilter(h, &fa, xd, bx, yd, by, cd, g_bwf_algo, wsb, ws, &fb, wd, bw);
        char what[200];
        snprintf(what, sizeof what, "%s %s g%d n%d c%d k%d %dx%d f%dx%d pad%d,%d str%d,%d dil%d,%d %s %s %s a%g b%g",
                 fdnn_test_type_name(g_type), dir == 0 ? "fwd" : dir == 1 ? "bwd-data" : "bwd-filter", g, pb->n, pb->c, pb->k, pb->h, pb->w, pb->r, pb->s, pb->ph, pb->pw,
                 pb->sh, pb->sw, pb->dh, pb->dw, pb->flip ? "conv" : "xcorr", pb->nhwc ? "nhwc" : "nchw", pb->wnhwc ? "krsc" : "kcrs", alpha, beta);
        if (TH_CHECK(st == CUDNN_STATUS_SUCCESS, "%s: status %d %s", what, (int)st, cudnnGetErrorString(st))) {
            th_download(h, hb, bo, nout * es);
            th_to_double(hb, g_type, got, nout);
            th_compare(what, got, want, nout, th_tolerance("conv", g_type));
            if (ws) {   /* too little workspace: BAD_PARAM, output untouched */
                th_upload(h, bo, hb, nout * es);
                if (dir == 0) st = cudnnConvolutionForward(h, &fa, xd, bx, wd, bw, cd, g_fwd_algo, wsb, ws - 1, &fb, yd, by);
                else if (dir == 1) st = cudnnConvolutionBackwardData(h, &fa, wd, bw, yd, by, cd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, wsb, ws - 1, &fb, xd, bx);
                else st = cudnnConvolutionBackwardFilter(h, &fa, xd, bx, yd, by, cd, g_bwf_algo, wsb, ws - 1, &fb, wd, bw);
                TH_CHECK(st == CUDNN_STATUS_BAD_PARAM, "%s: workspace-1 gives %d, want BAD_PARAM", what, (int)st);
                float *chk = malloc(nout * es);
                th_download(h, chk, bo, nout * es);
                TH_CHECK(memcmp(chk, hb, nout * es) == 0, "%s: output changed by a failed call", what);
                free(chk);
            }
        }
        th_free(h, wsb);
    }
    th_free(h, bx); th_free(h, bw); th_free(h, by);
    free(x); free(w); free(y); free(want); free(got); free(prev); free(hb);
    descs_destroy(xd, yd, wd, cd);
    return 1;
}

static int random_prob(prob *pb, int dir)
{
    static const int chans[] = { 1, 3, 8, 16, 17, 31, 32, 40, 64, 70 };
    pb->n = th_randint(1, 3);
    pb->c = chans[th_randint(0, 9)];
    pb->k = chans[th_randint(0, 9)];
    pb->h = th_randint(1, 12);
    pb->w = th_randint(1, 20);
    pb->r = th_randint(1, 4);
    pb->s = th_randint(1, 4);
    pb->dh = th_randint(1, 2);
    pb->dw = th_randint(1, 2);
    pb->sh = th_randint(1, 3);
    pb->sw = th_randint(1, 3);
    int mh = (pb->r - 1) * pb->dh, mw = (pb->s - 1) * pb->dw;
    pb->ph = th_randint(0, dir == 1 ? mh : mh + 1);
    pb->pw = th_randint(0, dir == 1 ? mw : mw + 1);
    pb->flip = th_randint(0, 1);
    pb->g = 1;
    if (th_randint(0, 3) == 0) pb->g = pb->k = pb->c;   /* depthwise */
    pb->nhwc = th_randint(0, 2) > 0;
    pb->wnhwc = th_randint(0, 1);
    pb->p = ref_conv_out_dim(pb->h, pb->ph, pb->r, pb->dh, pb->sh);
    pb->q = ref_conv_out_dim(pb->w, pb->pw, pb->s, pb->dw, pb->sw);
    return pb->p >= 1 && pb->q >= 1;
}

/* Every HALF / BFLOAT16 bit pattern through a 1x1 convolution with one channel and weight v
 * (alpha 1, beta 0): the float product x*v is exact, so y must be the harness's own rounding of
 * it (to nearest even), bit for bit, with NaN staying NaN; v = 1 gives back x itself. Checks the
 * widening and the final rounding of the HALF / BFLOAT16 entries on every input, subnormals,
 * overflow to infinity and ties included (zeros by value: the sum starts at +0). */
static void every_bit_pattern(cudnnHandle_t h, cudnnDataType_t t, double v, int nhwc)
{
    const int H = 256, W = 256;
    const size_t n = (size_t)H * W;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    descs_create(&xd, &yd, &wd, &cd);
    const cudnnTensorFormat_t f = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    TH_OK(cudnnSetTensor4dDescriptor(xd, f, t, 1, 1, H, W));
    TH_OK(cudnnSetTensor4dDescriptor(yd, f, t, 1, 1, H, W));
    TH_OK(cudnnSetFilter4dDescriptor(wd, t, f, 1, 1, 1, 1));
    TH_OK(cudnnSetConvolution2dDescriptor(cd, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    uint16_t *hx = malloc(n * 2), *hy = malloc(n * 2), *want = malloc(n * 2), hw;
    double *dx = malloc(n * 8), *dy = malloc(n * 8);
    for (size_t i = 0; i < n; i++) hx[i] = (uint16_t)i;
    th_to_double(hx, t, dx, n);
    for (size_t i = 0; i < n; i++) dy[i] = dx[i] * v;
    th_from_double(dy, t, want, n);
    th_from_double(&v, t, &hw, 1);
    void *bx = th_alloc(h, n * 2), *by = th_alloc(h, n * 2), *bw = th_alloc(h, 2);
    th_upload(h, bx, hx, n * 2);
    th_upload(h, bw, &hw, 2);
    const float one = 1, zero = 0;
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int got = 0;
    TH_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, 8, &got, perf));
    size_t ws = 0;
    TH_OK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, perf[0].algo, &ws));
    void *wsb = ws ? th_alloc(h, ws) : NULL;
    TH_OK(cudnnConvolutionForward(h, &one, xd, bx, wd, bw, cd, perf[0].algo, wsb, ws, &zero, yd, by));
    th_download(h, hy, by, n * 2);
    int bad = 0;
    size_t first = 0;
    for (size_t i = 0; i < n; i++) {
        const int nan_want = dy[i] != dy[i];
        double g;
        th_to_double(&hy[i], t, &g, 1);
        /* a sum starts from +0, so -0 * v comes out +0: zeros compare by value */
        const int ok = nan_want ? g != g : hy[i] == want[i] || (g == 0 && dy[i] == 0);
        if (!ok && !bad++) first = i;
    }
    TH_CHECK(bad == 0, "%s %s every bit pattern times %g: %d wrong, first input 0x%04x gave 0x%04x, want 0x%04x",
             t == CUDNN_DATA_HALF ? "half" : "bf16", nhwc ? "nhwc" : "nchw", v, bad, (unsigned)first, hy[first], want[first]);
    th_free(h, wsb); th_free(h, bx); th_free(h, by); th_free(h, bw);
    free(hx); free(hy); free(want); free(dx); free(dy);
    descs_destroy(xd, yd, wd, cd);
}

int main(void)
{
    th_seed(8);
    cudnnHandle_t h = th_create_handle();
    /* fixed shapes: ResNet-like 3x3 and 1x1 with widths 7/14 and a strided 7x7 */
    prob fixed[] = {
        { 2, 64, 64, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 14, 14, 0, 1, 1, 1 },
        { 1, 64, 96, 7, 7, 1, 1, 0, 0, 1, 1, 1, 1, 7, 7, 0, 0, 0, 1 },
        { 1, 3, 32, 23, 23, 7, 7, 3, 3, 2, 2, 1, 1, 12, 12, 1, 1, 0, 1 },
        { 2, 48, 40, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 9, 11, 0, 0, 1, 1 },
        { 1, 40, 40, 12, 19, 3, 3, 1, 1, 1, 1, 1, 1, 12, 19, 0, 1, 1, 40 },   /* depthwise */
        { 2, 24, 24, 9, 9, 3, 3, 1, 1, 2, 2, 1, 1, 5, 5, 1, 0, 0, 24 },
        /* depthwise 3x3 stride 1 NHWC with >= 64 output rows: the unpadded-input kernels, the
         * backward filter's row chunks, a channel remainder, padding 2/0 */
        { 2, 37, 37, 40, 16, 3, 3, 1, 1, 1, 1, 1, 1, 40, 16, 0, 1, 1, 37 },
        { 1, 20, 20, 70, 9, 3, 3, 2, 0, 1, 1, 1, 1, 72, 7, 1, 1, 0, 20 },
        /* more than 32 channel blocks (the AVX2 Winograd kernel's chunks of u on the stack),
         * a partial last block, widths with and without interior column pairs */
        { 1, 300, 300, 6, 11, 3, 3, 1, 1, 1, 1, 1, 1, 6, 11, 0, 1, 0, 300 },
        { 2, 264, 264, 3, 4, 3, 3, 1, 0, 1, 1, 1, 1, 3, 2, 1, 1, 1, 264 },
    };
    static const double ab[][2] = { { 1, 0 }, { 2, 0 }, { 1, 1 }, { 0.5, -2 } };
    for (int dir = 0; dir < 3; dir++) {
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
            run_case(h, &fixed[i], dir, 1, 0);
            run_case(h, &fixed[i], dir, 0.5, -2);
        }
        for (int t = 0; t < 50; t++) {
            prob pb;
            int a = th_randint(0, 3);
            if (!random_prob(&pb, dir) || !run_case(h, &pb, dir, ab[a][0], ab[a][1])) t--;
        }
    }
    /* Packed filters beyond the forward kernel's L2 limit (768 KB), forward and backward data:
     * the AVX-512 kernel then packs each 32-channel block in the thread that runs it, into a
     * slot of the workspace of its own. 64-channel pairs (wide) and single blocks with row pairs,
     * output channels off the 32-channel block, KRSC and KCRS filters (the register transpose,
     * the scalar tiles and, in backward data, the row pieces), NCHW activations, stride 2, and a
     * single block (more threads than slots: the whole filter packed first). */
    {
        prob big[] = {
            { 1, 160, 176, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 6, 6, 0, 1, 1, 1 },
            { 1, 160, 176, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 6, 6, 1, 1, 0, 1 },
            { 1, 300, 100, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5, 5, 1, 1, 1, 1 },
            { 1, 300, 100, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5, 5, 0, 0, 0, 1 },
            { 2, 700, 32, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 4, 4, 0, 0, 1, 1 },
            { 1, 2048, 100, 7, 7, 1, 1, 0, 0, 1, 1, 1, 1, 7, 7, 0, 1, 1, 1 },
            { 1, 2048, 100, 5, 5, 1, 1, 0, 0, 2, 2, 1, 1, 3, 3, 0, 1, 1, 1 },
        };
        for (int dir = 0; dir < 2; dir++)
            for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) run_case(h, &big[i], dir, ab[(i + dir) % 4][0], ab[(i + dir) % 4][1]);
    }
    /* NHWC backward filter (ALGO_3) with few tasks: where the tasks (taps x vector blocks x
     * broadcast blocks) do not divide evenly over 2 or 3 threads, the driver takes one more,
     * smaller broadcast block: 64 output channels over 64-channel vectors (11 blocks -> 12) and
     * 56 over 32-channel vectors (7 -> 8), block sizes spread (5 and 6 channels); KRSC and KCRS
     * filters, NCHW x, every alpha/beta pair. One thread runs the plain blocks. */
    {
        prob few[] = {
            { 1, 64, 64, 9, 10, 1, 1, 0, 0, 1, 1, 1, 1, 9, 10, 0, 1, 1, 1 },
            { 2, 20, 56, 7, 7, 1, 1, 0, 0, 1, 1, 1, 1, 7, 7, 1, 1, 0, 1 },
            { 1, 64, 64, 6, 5, 1, 1, 0, 0, 1, 1, 1, 1, 6, 5, 0, 0, 0, 1 },
        };
        for (size_t i = 0; i < sizeof few / sizeof few[0]; i++)
            for (int a = 0; a < 4; a++) run_case(h, &few[i], 2, ab[a][0], ab[a][1]);
    }
    /* NCHW outputs with rows of at least 16 positions, forward and backward data (the direct
     * kernel's output): the AVX-512 tiles fill a channel-innermost buffer that is stored
     * transposed (16 x 16 blocks, scalar edges, beta blended there): 70 positions (two buffer
     * flushes), exactly 16, 19 with stride 2, 40 and 100 output channels (block remainders,
     * 64-channel pairs), every alpha/beta pair. */
    {
        prob rowt[] = {
            { 1, 24, 40, 5, 70, 3, 3, 1, 1, 1, 1, 1, 1, 5, 70, 0, 0, 0, 1 },
            { 2, 16, 100, 3, 16, 1, 1, 0, 0, 1, 1, 1, 1, 3, 16, 1, 0, 1, 1 },
            { 1, 33, 64, 4, 37, 3, 3, 1, 1, 1, 2, 1, 1, 4, 19, 0, 0, 0, 1 },
        };
        for (int dir = 0; dir < 2; dir++)
            for (size_t i = 0; i < sizeof rowt / sizeof rowt[0]; i++)
                for (int a = 0; a < 4; a++) run_case(h, &rowt[i], dir, ab[a][0], ab[a][1]);
    }
    /* NCHW FLOAT through the GEMM forms (forward ALGO_GEMM, backward data ALGO_1), whose
     * GEMMs with B not transposed, at least one panel of columns and a reduction of <= 256 run
     * the streamed-B kernel (AVX-512: 48-column panels, 8-row tiles; AVX2: 24 and 4) on CPUs
     * that have it: 1x1 (the no-copy form) and 3x3 with C*9 <= 256 (im2col), output sizes that
     * are not multiples of either panel (48 is two AVX2 panels), row counts that are not
     * multiples of either tile, one image (columns split over threads) and three (one image
     * per thread); the forward 3x3 with C = 40 (reduction 360) stays with BLAS. K = 160: at least
     * 8 row tiles a thread over column panels that do not divide evenly over 2 threads (15x15: five
     * 48-column panels; AVX2: other sizes), which then
     * split rows instead. */
    {
        g_fwd_algo = CUDNN_CONVOLUTION_FWD_ALGO_GEMM;
        static const int sp[][2] = { { 8, 6 }, { 7, 7 }, { 10, 10 }, { 13, 12 }, { 15, 15 } };
        static const int ck[][2] = { { 5, 13 }, { 64, 64 }, { 70, 9 }, { 17, 28 }, { 28, 64 }, { 40, 24 }, { 24, 160 } };
        int t = 0;
        for (int dir = 0; dir < 2; dir++)
            for (size_t a = 0; a < sizeof ck / sizeof ck[0]; a++)
                for (size_t b = 0; b < sizeof sp / sizeof sp[0]; b++, t++) {
                    const int three = ck[a][0] == 40 || ((ck[a][0] == 17 || ck[a][0] == 28) && t % 2 == 0);
                    const int H = sp[b][0], W = sp[b][1], f = three ? 3 : 1;
                    prob pb = { t % 2 ? 3 : 1, ck[a][0], ck[a][1], H, W, f, f, f / 2, f / 2, 1, 1, 1, 1, H, W, t % 3 == 0, 0, 0, 1 };
                    run_case(h, &pb, dir, ab[t % 4][0], ab[t % 4][1]);
                }
        g_fwd_algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    }
    /* NCHW FLOAT 1x1 backward filter, ALGO_1 (im2col + GEMM): with at most 256 output pixels per
     * image and at least 48 input channels, x is transposed into the workspace and the product
     * runs with B not transposed (the streamed-B AVX-512 kernel on CPUs that have it); channel
     * counts off the 48-column panel and the 8-row tile, one and three images (beta = 1 after
     * the first), 16x16 = 256 pixels (the limit) and 17x16 (the plain BLAS form), and the
     * too-small-workspace check of run_case. 32x33 and 40x41 pixels: where the streamed-B
     * kernel runs (weak BLAS), a reduction of at least 256 a thread over a small dW is split
     * along the pixels, each thread transposing its own share of x (16 x 16 / 8 x 8 register
     * blocks; 37 channels leave edges) and the partial sums added in thread order. */
    {
        g_bwf_algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
        static const int sp[][2] = { { 7, 7 }, { 13, 12 }, { 16, 16 }, { 17, 16 }, { 32, 33 }, { 40, 41 } };
        static const int ck[][2] = { { 64, 64 }, { 48, 13 }, { 70, 9 }, { 100, 24 }, { 37, 20 } };
        int t = 0;
        for (size_t a = 0; a < sizeof ck / sizeof ck[0]; a++)
            for (size_t b = 0; b < sizeof sp / sizeof sp[0]; b++, t++) {
                const int H = sp[b][0], W = sp[b][1];
                prob pb = { t % 2 ? 3 : 1, ck[a][0], ck[a][1], H, W, 1, 1, 0, 0, 1, 1, 1, 1, H, W, t % 3 == 0, 0, 0, 1 };
                run_case(h, &pb, 2, ab[t % 4][0], ab[t % 4][1]);
            }
        g_bwf_algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
    }
    /* NCHW depthwise, stride 1 (conv_depthwise_nchw.c on AVX-512 / AVX2 CPUs: vectors along W,
     * masked loads at the image's left and right edges): 3x3 through the sliding-window kernels (padding
     * 0 / 1 / 2, row dilation 2), other filters (5x5, 3x5, 7x7, column dilation 2) through the
     * generic loops; widths below, at and above one 16-column vector, one to three images, both
     * filter formats, convolution and cross-correlation, all three directions (backward data with
     * pad <= (filter-1)*dilation), every alpha/beta pair. */
    {
        static const int cs[][10] = { /* n, c, h, w, r, s, ph, pw, dh, dw */
            { 1, 144, 9, 56, 3, 3, 1, 1, 1, 1 }, { 2, 5, 11, 7, 3, 3, 1, 1, 1, 1 },  { 3, 3, 6, 16, 3, 3, 0, 0, 1, 1 },
            { 1, 4, 13, 17, 3, 3, 2, 2, 1, 1 },  { 2, 6, 12, 40, 3, 3, 2, 1, 2, 1 }, { 1, 7, 10, 21, 5, 5, 2, 2, 1, 1 },
            { 2, 3, 9, 33, 3, 5, 1, 2, 1, 1 },   { 1, 2, 14, 19, 7, 7, 3, 3, 1, 1 }, { 1, 4, 9, 23, 3, 3, 2, 2, 1, 2 } };
        int t = 0;
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
            for (int dir = 0; dir < 3; dir++, t++) {
                const int *c = cs[i];
                const int P = c[2] + 2 * c[6] - c[8] * (c[4] - 1), Q = c[3] + 2 * c[7] - c[9] * (c[5] - 1);
                prob pb = { c[0], c[1], c[1], c[2], c[3], c[4], c[5], c[6], c[7], 1, 1, c[8], c[9], P, Q, t % 2, 0, t % 3 == 0, c[1] };
                run_case(h, &pb, dir, ab[t % 4][0], ab[t % 4][1]);
                run_case(h, &pb, dir, ab[(t + 1) % 4][0], ab[(t + 1) % 4][1]);
            }
        /* column stride 2 (row stride 2 or 1) on the NCHW kernels, forward and weight gradient (even
         * lanes of two loads a tap) and backward data (dy spread to every other lane): outputs of 1 to 35
         * columns (two 16-column strips and a tail), 3x3, 5x5 and dilated taps, odd widths whose
         * last output reads the right padding */
        static const int c2[][11] = { /* n, c, h, w, r, s, ph, pw, dh, dw, sh */
            { 1, 144, 12, 56, 3, 3, 1, 1, 1, 1, 2 }, { 2, 5, 9, 70, 3, 3, 1, 1, 1, 1, 2 }, { 1, 3, 7, 33, 3, 3, 0, 0, 1, 1, 1 },
            { 3, 4, 11, 2, 3, 3, 1, 1, 1, 1, 2 },    { 1, 6, 13, 41, 5, 5, 2, 2, 1, 1, 2 }, { 2, 2, 10, 29, 3, 3, 2, 2, 2, 2, 2 },
            /* the right padding column in the second load of a strip (AVX-512: column 21, AVX2: 13) */
            { 1, 3, 8, 21, 3, 3, 1, 1, 1, 1, 2 },    { 2, 4, 6, 13, 3, 3, 1, 1, 1, 1, 2 } };
        for (size_t i = 0; i < sizeof c2 / sizeof c2[0]; i++)
            for (int dir = 0; dir < 3; dir++, t++) {
                const int *c = c2[i];
                const int P = (c[2] + 2 * c[6] - c[8] * (c[4] - 1) - 1) / c[10] + 1, Q = (c[3] + 2 * c[7] - c[9] * (c[5] - 1) - 1) / 2 + 1;
                prob pb = { c[0], c[1], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[10], 2, c[8], c[9], P, Q, t % 2, 0, t % 3 == 0, c[1] };
                run_case(h, &pb, dir, ab[t % 4][0], ab[t % 4][1]);
                /* the same in NHWC: backward data through the NHWC kernels over dy zero-inserted
                 * into the workspace (stride 3 too), forward and weight gradient through their
                 * generic strided kernels */
                prob pn = pb;
                pn.nhwc = pn.wnhwc = 1;
                if (i == 2) pn.sh = pn.sw = 3, pn.p = (c[2] + 2 * c[6] - c[8] * (c[4] - 1) - 1) / 3 + 1, pn.q = (c[3] + 2 * c[7] - c[9] * (c[5] - 1) - 1) / 3 + 1;
                run_case(h, &pn, dir, ab[(t + 1) % 4][0], ab[(t + 1) % 4][1]);
            }
    }
    /* NCHW FLOAT strided 1x1 backward filter, ALGO_1: with at least 16 channels per group x's
     * strided positions are gathered transposed straight into the workspace (16-channel blocks,
     * rows of up to 256 output columns: 300 columns take two pieces) and the product runs with
     * B not transposed; strides 2 and 3 (and 2 x 1), channel counts off the 16 block, two groups,
     * one and three images (beta = 1 after the first), every alpha/beta pair. */
    {
        g_bwf_algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
        static const int cs[][7] = { /* n, c, k, h, w, sh, sw */
            { 1, 16, 24, 9, 11, 2, 2 }, { 3, 37, 20, 10, 13, 3, 3 }, { 1, 64, 48, 3, 600, 2, 2 }, { 2, 40, 33, 8, 7, 2, 1 } };
        int t = 0;
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
            for (int a = 0; a < 4; a++, t++) {
                const int *c = cs[i];
                const int P = (c[3] - 1) / c[5] + 1, Q = (c[4] - 1) / c[6] + 1;
                prob pb = { c[0], c[1], c[2], c[3], c[4], 1, 1, 0, 0, c[5], c[6], 1, 1, P, Q, t % 2, 0, 0, 1 };
                run_case(h, &pb, 2, ab[a][0], ab[a][1]);
            }
        /* two groups of 16 channels */
        prob pg = { 2, 32, 32, 9, 9, 1, 1, 0, 0, 2, 2, 1, 1, 5, 5, 0, 0, 0, 2 };
        run_case(h, &pg, 2, 0.5, -2);
        g_bwf_algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
    }
    /* NCHW FLOAT backward data, ALGO_1, through the GEMM forms the heuristic prefers there:
     * strided unpadded 1x1 (stride 2 and 3; beta == 0 takes the row memset and strided stores,
     * beta != 0 the blending copy; K = 300 > 256 with at least 384 output pixels runs the
     * streamed-B kernel in two reduction chunks, K = 40 in one) and C < 16 with 7x7 stride-2
     * padded, 3x3 dilated and 5x5 stride-3 filters (the row-parallel col2im), one to three images,
     * both modes, every alpha/beta pair. */
    {
        static const int cs[][9] = { /* n, c, k, h, w, r, stride, pad, dil */
            { 1, 24, 300, 40, 41, 1, 2, 0, 1 }, { 3, 16, 40, 13, 12, 1, 3, 0, 1 }, { 3, 20, 300, 45, 40, 1, 2, 0, 1 },
            { 1, 3, 20, 24, 22, 7, 2, 3, 1 },   { 3, 5, 12, 15, 17, 3, 1, 2, 2 },  { 2, 7, 33, 19, 18, 5, 3, 1, 1 } };
        int t = 0;
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
            for (int a = 0; a < 4; a++, t++) {
                const int *c = cs[i];
                const int P = (c[3] + 2 * c[7] - c[8] * (c[5] - 1) - 1) / c[6] + 1, Q = (c[4] + 2 * c[7] - c[8] * (c[5] - 1) - 1) / c[6] + 1;
                prob pb = { c[0], c[1], c[2], c[3], c[4], c[5], c[5], c[7], c[7], c[6], c[6], c[8], c[8], P, Q, t % 2, 0, 0, 1 };
                run_case(h, &pb, 1, ab[a][0], ab[a][1]);
            }
    }
    printf("skipped (NOT_SUPPORTED): %d\n", skipped);
    /* HALF and BFLOAT16 (compute FLOAT, or the same type) on the same forced algorithms: the CPU
     * backend widens them into the workspace and runs the FLOAT kernels (direct NHWC, depthwise,
     * the GEMM forms), then rounds once; integer data, the type's tolerance (sums beyond the
     * type's exact integers round), NaN-prefilled outputs for beta = 0, too-small workspace */
    {
        static const cudnnDataType_t types[2] = { CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16 };
        for (int ti = 0; ti < 2; ti++)
            for (int dir = 0; dir < 3; dir++)
                for (int t = 0; t < 12; t++) {
                    g_type = types[ti];
                    g_ctype = t % 3 == 2 ? types[ti] : CUDNN_DATA_FLOAT;
                    g_fwd_algo = t % 4 == 3 ? CUDNN_CONVOLUTION_FWD_ALGO_GEMM : CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
                    g_bwf_algo = t % 4 == 3 ? CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
                    prob pb;
                    int a = th_randint(0, 3);
                    if (!random_prob(&pb, dir)) { t--; continue; }
                    if (t % 4 == 3) pb.nhwc = pb.wnhwc = 0, pb.g = 1; /* the GEMM forms: NCHW, KCRS */
                    if (pb.g > 1) pb.k = pb.c;
                    if (!run_case(h, &pb, dir, ab[a][0], ab[a][1])) t--;
                }
        g_type = g_ctype = CUDNN_DATA_FLOAT;
        g_fwd_algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
        g_bwf_algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
        static const double vs[3] = { 1.0, 0.75, -1.5 };
        for (int ti = 0; ti < 2; ti++)
            for (int vi = 0; vi < 3; vi++) every_bit_pattern(h, types[ti], vs[vi], vi == 1);
    }
    cudnnDestroy(h);
    return th_finish();
}
