/* Repeated convolution calls: the CUDA backend replays a call it has seen twice (same problem,
 * algorithm, buffers, alpha/beta, stream) from a captured CUDA graph (src/cuda/conv_replay.c).
 * Each problem and algorithm is called in a sequence that new inputs are uploaded before every
 * step of: the same buffers three times (direct, capture, replay), a second buffer set with
 * alpha 2 and beta 1 twice, the first set again, the first set on another stream three times,
 * and once inside the caller's own graph capture of that stream (which must get the kernels,
 * not a replay), then once more directly. Every result is compared with the double reference
 * (tests/ref/conv_ref.c). On the GPU the INFO log must show replays and no failed capture.
 * Shapes cover the multi-kernel paths: channel padding / filter-tap folding (C = 3), split-K
 * backward filter, the strided 1x1 backward data's GEMM + scatter, cuBLAS GEMMs, TF32 and FP32
 * implicit GEMMs, depthwise, and random shapes in every layout. The CPU backend runs the same
 * sequence (repeated calls must be correct there too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_conv_util.h"
#ifdef FDNN_TEST_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static int replays, failed_captures;
static void count_log(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    (void)sev, (void)udata, (void)dbg;
    if (!msg) return;
    if (strstr(msg, "replayed from its CUDA graph")) replays++;
    if (strstr(msg, "could not be captured")) failed_captures++;
}

typedef struct bufset {
    tbuf x, w, y;
} bufset;

typedef struct step {
    int set;          /* 0 or 1 */
    double alpha, beta;
    int stream;       /* 0: the handle's first stream, 1: the second */
    int user_capture; /* the caller captures this call into its own graph */
} step;

static const step SEQ[] = {
    {0, 1, 0, 0, 0}, {0, 1, 0, 0, 0}, {0, 1, 0, 0, 0}, {1, 2, 1, 0, 0}, {1, 2, 1, 0, 0}, {0, 1, 0, 0, 0},
    {0, 1, 0, 1, 0}, {0, 1, 0, 1, 0}, {0, 1, 0, 1, 0}, {0, 1, 0, 1, 1}, {0, 1, 0, 1, 0},
};
#define NSTEPS ((int)(sizeof SEQ / sizeof SEQ[0]))

static cudnnStatus_t call(cudnnHandle_t h, int dir, const tcase *t, int algo, bufset *b, void *ws, size_t wsz, double alpha, double beta)
{
    double ad = alpha, bd = beta;
    float af = (float)alpha, bf = (float)beta;
    const void *pa = t->xt == CUDNN_DATA_DOUBLE ? (const void *)&ad : (const void *)&af;
    const void *pb = t->xt == CUDNN_DATA_DOUBLE ? (const void *)&bd : (const void *)&bf;
    if (dir == 0)
        return cudnnConvolutionForward(h, pa, t->xd, b->x.d, t->wd, b->w.d, t->cd, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz, pb, t->yd, b->y.d);
    if (dir == 1)
        return cudnnConvolutionBackwardData(h, pa, t->wd, b->w.d, t->yd, b->y.d, t->cd, (cudnnConvolutionBwdDataAlgo_t)algo, ws, wsz, pb, t->xd,
                                            b->x.d);
    return cudnnConvolutionBackwardFilter(h, pa, t->xd, b->x.d, t->yd, b->y.d, t->cd, (cudnnConvolutionBwdFilterAlgo_t)algo, ws, wsz, pb, t->wd,
                                          b->w.d);
}

#ifdef FDNN_TEST_HAVE_CUDA
static cudaStream_t streams[2];
#endif

/* One step: new inputs, the call (directly or inside a user capture), the comparison. */
static int run_step(cudnnHandle_t h, int dir, tcase *t, int algo, bufset *sets, void *ws, size_t wsz, const step *s, const char *desc)
{
    bufset *b = &sets[s->set];
    tbuf *outb = dir == 0 ? &b->y : dir == 1 ? &b->x : &b->w;
    if (dir != 1) tb_fill(&b->x, -3, 3);
    if (dir != 2) tb_fill(&b->w, -3, 3);
    if (dir != 0) tb_fill(&b->y, -3, 3);
    if (s->beta == 0) tb_fill_poison(outb);
    else tb_fill(outb, -2, 2);
    tb_upload(h, &b->x);
    tb_upload(h, &b->w);
    tb_upload(h, &b->y);
    th_sync(h);
    double *prior = malloc(sizeof(double) * (size_t)outb->n);
    memcpy(prior, outb->h, sizeof(double) * (size_t)outb->n);
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    int ok = 1;
#ifdef FDNN_TEST_HAVE_CUDA
    if (th_is_gpu(h)) TH_OK(cudnnSetStream(h, streams[s->stream]));
    if (th_is_gpu(h) && s->user_capture) {
        cudaGraph_t g = NULL;
        cudaGraphExec_t ge = NULL;
        ok &= TH_CHECK(cudaStreamBeginCapture(streams[s->stream], cudaStreamCaptureModeGlobal) == cudaSuccess, "begin capture");
        st = call(h, dir, t, algo, b, ws, wsz, s->alpha, s->beta);
        ok &= TH_CHECK(cudaStreamEndCapture(streams[s->stream], &g) == cudaSuccess && g, "end capture");
        if (g) {
            size_t nodes = 0;
            cudaGraphGetNodes(g, NULL, &nodes);
            ok &= TH_CHECK(nodes > 0, "the caller's capture got no nodes (%s)", desc);
            ok &= TH_CHECK(cudaGraphInstantiate(&ge, g, 0) == cudaSuccess, "instantiate");
            if (ge) ok &= TH_CHECK(cudaGraphLaunch(ge, streams[s->stream]) == cudaSuccess, "launch");
            cudaStreamSynchronize(streams[s->stream]);
            if (ge) cudaGraphExecDestroy(ge);
            cudaGraphDestroy(g);
        }
    } else
#endif
        st = call(h, dir, t, algo, b, ws, wsz, s->alpha, s->beta);
    th_sync(h);
    if (TH_OK(st)) {
        double *got = malloc(sizeof(double) * (size_t)outb->n), *want = malloc(sizeof(double) * (size_t)outb->n);
        tb_download(h, outb, got);
        memcpy(want, prior, sizeof(double) * (size_t)outb->n);
        ref_conv r = tc_ref(t);
        char what[512];
        snprintf(what, sizeof what, "%s algo %d set %d alpha %g beta %g stream %d%s: %s", dir == 0 ? "fwd" : dir == 1 ? "bwd-data" : "bwd-filter",
                 algo, s->set, s->alpha, s->beta, s->stream, s->user_capture ? " (user capture)" : "", desc);
        if (dir == 0) {
            ref_conv_fwd(&r, b->x.h, &t->xl, b->w.h, &t->wl, want, &t->yl, s->alpha, s->beta);
            int d5[5] = {t->n, t->k, t->out[0], t->out[1], t->out[2]};
            ok &= tc_compare_tensor(what, t->yt, got, want, prior, b->y.n, &t->yl, d5, th_tolerance("conv", t->yt));
        } else if (dir == 1) {
            ref_conv_bwd_data(&r, want, &t->xl, b->w.h, &t->wl, b->y.h, &t->yl, s->alpha, s->beta);
            int d5[5] = {t->n, t->c, t->in[0], t->in[1], t->in[2]};
            ok &= tc_compare_tensor(what, t->xt, got, want, prior, b->x.n, &t->xl, d5, th_tolerance("conv", t->xt));
        } else {
            ref_conv_bwd_filter(&r, b->x.h, &t->xl, want, &t->wl, b->y.h, &t->yl, s->alpha, s->beta);
            int d5[5] = {t->k, t->c / t->g, t->flt[0], t->flt[1], t->flt[2]};
            ok &= tc_compare_tensor(what, t->xt, got, want, prior, b->w.n, &t->wl, d5, th_tolerance("conv", t->xt));
        }
        free(got);
        free(want);
    } else {
        ok = 0;
    }
    free(prior);
    return ok;
}

static int algos_of(cudnnHandle_t h, int dir, const tcase *t, int *algos)
{
    int cnt = 0, n = 0;
    cudnnConvolutionFwdAlgoPerf_t pf[16];
    cudnnConvolutionBwdDataAlgoPerf_t pd[16];
    cudnnConvolutionBwdFilterAlgoPerf_t pw[16];
    if (dir == 0) {
        if (cudnnGetConvolutionForwardAlgorithm_v7(h, t->xd, t->wd, t->cd, t->yd, 16, &cnt, pf) != CUDNN_STATUS_SUCCESS) return 0;
        for (int i = 0; i < cnt; i++) if (pf[i].status == CUDNN_STATUS_SUCCESS) algos[n++] = pf[i].algo;
    } else if (dir == 1) {
        if (cudnnGetConvolutionBackwardDataAlgorithm_v7(h, t->wd, t->yd, t->cd, t->xd, 16, &cnt, pd) != CUDNN_STATUS_SUCCESS) return 0;
        for (int i = 0; i < cnt; i++) if (pd[i].status == CUDNN_STATUS_SUCCESS) algos[n++] = pd[i].algo;
    } else {
        if (cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, t->xd, t->yd, t->cd, t->wd, 16, &cnt, pw) != CUDNN_STATUS_SUCCESS) return 0;
        for (int i = 0; i < cnt; i++) if (pw[i].status == CUDNN_STATUS_SUCCESS) algos[n++] = pw[i].algo;
    }
    return n;
}

static size_t ws_of(cudnnHandle_t h, int dir, const tcase *t, int algo)
{
    size_t wsz = 0;
    cudnnStatus_t st;
    if (dir == 0) st = cudnnGetConvolutionForwardWorkspaceSize(h, t->xd, t->wd, t->cd, t->yd, (cudnnConvolutionFwdAlgo_t)algo, &wsz);
    else if (dir == 1) st = cudnnGetConvolutionBackwardDataWorkspaceSize(h, t->wd, t->yd, t->cd, t->xd, (cudnnConvolutionBwdDataAlgo_t)algo, &wsz);
    else st = cudnnGetConvolutionBackwardFilterWorkspaceSize(h, t->xd, t->yd, t->cd, t->wd, (cudnnConvolutionBwdFilterAlgo_t)algo, &wsz);
    TH_OK(st);
    return wsz;
}

static int run_case(cudnnHandle_t h, tcase *t, int *calls)
{
    char desc[400];
    tc_str(t, desc, sizeof desc);
    if (!tc_setup(t)) {
        tc_destroy(t);
        return TH_CHECK(0, "setup failed: %s", desc);
    }
    int ok = 1;
    bufset sets[2];
    for (int i = 0; i < 2; i++) {
        tb_init(h, &sets[i].x, t->xt, t->xspan);
        tb_init(h, &sets[i].w, t->xt, t->wspan);
        tb_init(h, &sets[i].y, t->yt, t->yspan);
    }
    for (int dir = 0; dir < 3; dir++) {
        int algos[16];
        const int nal = algos_of(h, dir, t, algos);
        for (int ai = 0; ai < nal; ai++) {
            const size_t wsz = ws_of(h, dir, t, algos[ai]);
            void *ws = wsz ? th_alloc(h, wsz) : NULL;
            for (int s = 0; s < NSTEPS; s++) {
                ok &= run_step(h, dir, t, algos[ai], sets, ws, wsz, &SEQ[s], desc);
                (*calls)++;
            }
            if (ws) th_free(h, ws);
        }
    }
    for (int i = 0; i < 2; i++) {
        tb_free(h, &sets[i].x);
        tb_free(h, &sets[i].w);
        tb_free(h, &sets[i].y);
    }
    tc_destroy(t);
    return ok;
}

/* A 2-D packed NHWC problem with a KRSC filter (the tensor-core and GEMM paths' layout). */
static tcase nhwc_case(cudnnDataType_t t, int math, int n, int c, int k, int hw, int f, int stride, int pad, int g)
{
    tcase tc;
    memset(&tc, 0, sizeof tc);
    tc.nsp = 2;
    tc.n = n, tc.c = c, tc.k = k, tc.g = g;
    for (int i = 0; i < 3; i++) {
        tc.in[i] = tc.out[i] = tc.flt[i] = tc.stride[i] = tc.dil[i] = 1;
        tc.pad[i] = 0;
    }
    for (int i = 1; i < 3; i++) {
        tc.in[i] = hw, tc.flt[i] = f, tc.stride[i] = stride, tc.pad[i] = pad;
        tc.out[i] = ref_conv_out_dim(hw, pad, f, 1, stride);
    }
    tc.mode = CUDNN_CROSS_CORRELATION;
    tc.xt = tc.yt = t;
    tc.ct = CUDNN_DATA_FLOAT;
    tc.xlay = tc.ylay = LAY_NHWC;
    tc.w_nhwc = 1;
    tc.math = math;
    return tc;
}

int main(void)
{
    th_seed(20261201);
    cudnnHandle_t h = th_create_handle();
    const int gpu = th_is_gpu(h);
#ifdef FDNN_TEST_HAVE_CUDA
    cudaStream_t initial = NULL;
    if (gpu) {
        TH_OK(cudnnGetStream(h, &initial));
        cudaStreamCreate(&streams[0]);
        cudaStreamCreate(&streams[1]);
    }
#endif
    TH_OK(cudnnSetCallback(CUDNN_SEV_INFO_EN, NULL, count_log));
    const cudnnDataType_t HF = CUDNN_DATA_HALF, BF = CUDNN_DATA_BFLOAT16, F = CUDNN_DATA_FLOAT;
    tcase fixed[] = {
        nhwc_case(HF, 0, 2, 3, 16, 19, 7, 2, 3, 1),                  /* stem: C padded / filter taps folded */
        nhwc_case(HF, 0, 2, 16, 32, 10, 3, 1, 1, 1),                 /* 3x3: split-K bwd filter, bwd data */
        nhwc_case(BF, 0, 2, 32, 16, 12, 1, 2, 0, 1),                 /* strided 1x1: GEMM + scatter bwd data */
        nhwc_case(F, CUDNN_TENSOR_OP_MATH, 2, 8, 16, 9, 3, 1, 1, 1), /* TF32 */
        nhwc_case(F, CUDNN_FMA_MATH, 2, 3, 8, 11, 3, 1, 1, 1),       /* FP32 implicit GEMM, C padded to 4 */
        nhwc_case(F, CUDNN_FMA_MATH, 2, 32, 32, 8, 1, 1, 0, 1),      /* FP32 1x1: cuBLAS */
        nhwc_case(F, CUDNN_FMA_MATH, 2, 32, 16, 9, 1, 2, 0, 1),      /* FP32 strided 1x1 */
        nhwc_case(HF, 0, 2, 16, 16, 10, 3, 1, 1, 16),                /* depthwise */
    };
    int calls = 0, fails = 0;
    const int nfixed = (int)(sizeof fixed / sizeof fixed[0]);
    for (int i = 0; i < nfixed; i++)
        if (!run_case(h, &fixed[i], &calls)) fails++;
    static const cudnnDataType_t RT[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_DOUBLE, CUDNN_DATA_BFLOAT16};
    for (int i = 0; i < 8; i++) {
        tcase t;
        tc_random_shape(&t, 1);
        t.xt = t.yt = RT[i % 4];
        t.ct = t.xt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
        if (!run_case(h, &t, &calls)) fails++;
    }
    TH_OK(cudnnSetCallback(0, NULL, NULL));
    printf("%d problems, %d calls (%d steps each per algorithm), %d problems with failures; %d replays from a CUDA graph, %d failed captures\n",
           nfixed + 8, calls, NSTEPS, fails, replays, failed_captures);
    if (gpu) {
        /* per algorithm, steps 2, 3, 5, 6, 8, 9 and 11 launch a graph (2, 5 and 8 right after capturing it) */
        TH_CHECK(replays == calls / NSTEPS * 7, "only %d replays for %d calls", replays, calls);
        TH_CHECK(failed_captures == 0, "%d calls could not be captured", failed_captures);
    } else {
        TH_CHECK(replays == 0, "the CPU backend has no graphs to replay (%d)", replays);
    }
#ifdef FDNN_TEST_HAVE_CUDA
    if (gpu) {
        TH_OK(cudnnSetStream(h, initial));
        cudaStreamDestroy(streams[0]);
        cudaStreamDestroy(streams[1]);
    }
#endif
    cudnnDestroy(h);
    return th_finish();
}
