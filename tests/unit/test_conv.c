/* Convolution numerics: randomized seeded problems (2-D/3-D, strides, padding, dilation,
 * groups incl. depthwise, both modes, NCHW/NHWC/gapped strides, KCRS/KRSC filters, every
 * dtype configuration incl. INT8, INT8x4 and INT8x32) in all three directions, each run with
 * every algorithm cudnnGet*Algorithm_v7 reports SUCCESS for, with alpha/beta combinations,
 * against the double reference in tests/ref/conv_ref.c. */
#include "test_conv_util.h"

static int skipped;

/* INFO-log callback: counts the "... runs as <implementation>" lines (depthwise ones apart) */
static int impl_runs, dw_runs, col_runs, nhwc_direct_runs;
static void count_impl(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    (void)sev, (void)udata, (void)dbg;
    if (!msg || !strstr(msg, " runs as ")) return;
    impl_runs++;
    if (strstr(msg, "__depthwise")) dw_runs++;
    if (strstr(msg, "__gemm_nhwc_col")) col_runs++;
    if (strstr(msg, "__direct_nhwc")) nhwc_direct_runs++;
}

static const cudnnDataType_t FWD_TYPES[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16,
                                            CUDNN_DATA_INT8, CUDNN_DATA_INT8x4, CUDNN_DATA_INT8x32, CUDNN_DATA_FLOAT};
static const cudnnDataType_t BWD_TYPES[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT};

/* pick the configuration for x type xt: output type and compute type */
static void pick_types(tcase *t, cudnnDataType_t xt)
{
    t->xt = t->yt = xt;
    switch (xt) {
    case CUDNN_DATA_DOUBLE: t->ct = CUDNN_DATA_DOUBLE; break;
    case CUDNN_DATA_HALF: t->ct = th_randint(0, 1) ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT; break;
    case CUDNN_DATA_BFLOAT16: t->ct = CUDNN_DATA_FLOAT; break;
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_INT8x4:
    case CUDNN_DATA_INT8x32:
        t->ct = CUDNN_DATA_INT32;
        if (th_randint(0, 1)) t->yt = CUDNN_DATA_FLOAT;
        break;
    default: t->ct = CUDNN_DATA_FLOAT; break;
    }
    int v = tc_vect_of(xt);
    if (v > 1) { /* channels per group a multiple of the vector */
        t->g = th_randint(1, 2);
        t->c = t->g * v * (v == 4 ? th_randint(1, 2) : 1);
        t->k = t->g * th_randint(1, 3);
        if (t->yt != CUDNN_DATA_FLOAT) t->k = t->g * v;
    }
}

/* >= 0: scales() returns combos[force_scales] (sections that need both beta == 0 and beta != 0) */
static int force_scales = -1;

static void scales(cudnnDataType_t xt, double *alpha, double *beta)
{
    /* the last two give INT8 outputs exact .5 values: round to nearest even, as the CPU does */
    static const double combos[][2] = {{1, 0}, {2, 0}, {1, 1}, {0.5, -1}, {-1, 2}, {0.5, 0}, {-0.5, 1}};
    int i = th_randint(0, 4);
    if (force_scales >= 0) i = force_scales;
    if (xt == CUDNN_DATA_INT8x4 || xt == CUDNN_DATA_INT8x32 || xt == CUDNN_DATA_INT8) {
        static const int int8_combos[] = {0, 1, 2, 5, 6};
        i = int8_combos[th_randint(0, 4)];
    }
    *alpha = combos[i][0];
    *beta = combos[i][1];
}

/* A 2-D channels-last problem of the table-driven sections: tc_random_shape first (so the random
 * sequence every later case sees is that of a random case), then the given shape, with x and y
 * packed NHWC and a KRSC filter; the same stride, padding and dilation in H and W. */
static void tc_nhwc_2d(tcase *t, int n, int c, int k, int g, int h, int w, int r, int s, int str, int pad, int dil, int conv)
{
    tc_random_shape(t, 0);
    t->nsp = 2;
    t->in[0] = t->out[0] = t->flt[0] = t->stride[0] = t->dil[0] = 1;
    t->pad[0] = 0;
    t->n = n;
    t->c = c;
    t->k = k;
    t->g = g;
    t->in[1] = h;
    t->in[2] = w;
    t->flt[1] = r;
    t->flt[2] = s;
    t->mode = conv ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
    t->xlay = t->ylay = LAY_NHWC;
    t->w_nhwc = 1;
    for (int a = 1; a < 3; a++) {
        t->stride[a] = str;
        t->pad[a] = pad;
        t->dil[a] = dil;
        t->out[a] = ref_conv_out_dim(t->in[a], t->pad[a], t->flt[a], t->dil[a], t->stride[a]);
    }
}

static int run_case(cudnnHandle_t h, int dir, tcase *t)
{
    char desc[400];
    tc_str(t, desc, sizeof desc);
    if (!tc_setup(t)) {
        fprintf(stderr, "setup failed: %s\n", desc);
        tc_destroy(t);
        return 0;
    }
    int positive = t->out[0] * t->out[1] * t->out[2] < 6;
    int lo = positive ? 1 : -3, hi = 3;
    tbuf x, w, y;
    tb_init(h, &x, t->xt, t->xspan);
    tb_init(h, &w, t->xt, t->wspan);
    tb_init(h, &y, t->yt, t->yspan);
    ref_conv r = tc_ref(t);
    tbuf *outb = dir == 0 ? &y : dir == 1 ? &x : &w;
    if (dir != 1) tb_fill(&x, lo, hi);
    if (dir != 2) tb_fill(&w, lo, hi);
    if (dir != 0) tb_fill(&y, lo, hi);
    /* algorithm list */
    int cnt = 0;
    cudnnConvolutionFwdAlgoPerf_t pf[16];
    cudnnConvolutionBwdDataAlgoPerf_t pd[16];
    cudnnConvolutionBwdFilterAlgoPerf_t pw[16];
    int algos[16], nal = 0;
    cudnnStatus_t st;
    if (dir == 0) {
        st = cudnnGetConvolutionForwardAlgorithm_v7(h, t->xd, t->wd, t->cd, t->yd, 16, &cnt, pf);
        for (int i = 0; i < cnt; i++) if (pf[i].status == CUDNN_STATUS_SUCCESS) algos[nal++] = pf[i].algo;
    } else if (dir == 1) {
        st = cudnnGetConvolutionBackwardDataAlgorithm_v7(h, t->wd, t->yd, t->cd, t->xd, 16, &cnt, pd);
        for (int i = 0; i < cnt; i++) if (pd[i].status == CUDNN_STATUS_SUCCESS) algos[nal++] = pd[i].algo;
    } else {
        st = cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, t->xd, t->yd, t->cd, t->wd, 16, &cnt, pw);
        for (int i = 0; i < cnt; i++) if (pw[i].status == CUDNN_STATUS_SUCCESS) algos[nal++] = pw[i].algo;
    }
    int ok = 1;
    /* every INT8-family forward problem (INT8, INT8x4, INT8x32) must run on every backend */
    const int must_run = dir == 0 && tc_is_int(t->xt);
    if (st == CUDNN_STATUS_NOT_SUPPORTED && th_is_gpu(h) && !must_run) {
        skipped++;
        nal = 0;
    } else {
        ok &= TH_OK(st);
        if (th_is_gpu(h) && nal == 0 && !must_run) skipped++;
        else ok &= TH_CHECK(nal > 0, "no runnable algorithm for %s", desc);
    }
    for (int ai = 0; ai < nal; ai++) {
        int algo = algos[ai];
        size_t wsz = 0;
        if (dir == 0) st = cudnnGetConvolutionForwardWorkspaceSize(h, t->xd, t->wd, t->cd, t->yd, (cudnnConvolutionFwdAlgo_t)algo, &wsz);
        else if (dir == 1) st = cudnnGetConvolutionBackwardDataWorkspaceSize(h, t->wd, t->yd, t->cd, t->xd, (cudnnConvolutionBwdDataAlgo_t)algo, &wsz);
        else st = cudnnGetConvolutionBackwardFilterWorkspaceSize(h, t->xd, t->yd, t->cd, t->wd, (cudnnConvolutionBwdFilterAlgo_t)algo, &wsz);
        if (!TH_OK(st)) { ok = 0; continue; }
        void *ws = wsz ? th_alloc(h, wsz) : NULL;
        double alpha, beta;
        scales(t->xt, &alpha, &beta);
        if (beta == 0) tb_fill_poison(outb);
        else tb_fill(outb, -2, 2);
        tb_upload(h, &x);
        tb_upload(h, &w);
        tb_upload(h, &y);
        double *prior = malloc(sizeof(double) * (size_t)outb->n);
        memcpy(prior, outb->h, sizeof(double) * (size_t)outb->n);
        double ad = alpha, bd = beta;
        float af = (float)alpha, bf = (float)beta;
        const void *pa = t->xt == CUDNN_DATA_DOUBLE ? (const void *)&ad : (const void *)&af;
        const void *pb = t->xt == CUDNN_DATA_DOUBLE ? (const void *)&bd : (const void *)&bf;
        if (dir == 0) st = cudnnConvolutionForward(h, pa, t->xd, x.d, t->wd, w.d, t->cd, (cudnnConvolutionFwdAlgo_t)algo, ws, wsz, pb, t->yd, y.d);
        else if (dir == 1) st = cudnnConvolutionBackwardData(h, pa, t->wd, w.d, t->yd, y.d, t->cd, (cudnnConvolutionBwdDataAlgo_t)algo, ws, wsz, pb, t->xd, x.d);
        else st = cudnnConvolutionBackwardFilter(h, pa, t->xd, x.d, t->yd, y.d, t->cd, (cudnnConvolutionBwdFilterAlgo_t)algo, ws, wsz, pb, t->wd, w.d);
        if (st == CUDNN_STATUS_NOT_SUPPORTED && th_is_gpu(h) && !must_run) {
            skipped++;
        } else if (TH_OK(st)) {
            double *got = malloc(sizeof(double) * (size_t)outb->n);
            tb_download(h, outb, got);
            double *want = malloc(sizeof(double) * (size_t)outb->n);
            memcpy(want, prior, sizeof(double) * (size_t)outb->n);
            char what[512];
            snprintf(what, sizeof what, "%s algo %d alpha %g beta %g: %s", dir == 0 ? "fwd" : dir == 1 ? "bwd-data" : "bwd-filter", algo, alpha,
                     beta, desc);
            if (dir == 0) {
                ref_conv_fwd(&r, x.h, &t->xl, w.h, &t->wl, want, &t->yl, alpha, beta);
                int d5[5] = {t->n, t->k, t->out[0], t->out[1], t->out[2]};
                ok &= tc_compare_tensor(what, t->yt, got, want, prior, y.n, &t->yl, d5, th_tolerance("conv", t->yt));
            } else if (dir == 1) {
                ref_conv_bwd_data(&r, want, &t->xl, w.h, &t->wl, y.h, &t->yl, alpha, beta);
                int d5[5] = {t->n, t->c, t->in[0], t->in[1], t->in[2]};
                ok &= tc_compare_tensor(what, t->xt, got, want, prior, x.n, &t->xl, d5, th_tolerance("conv", t->xt));
            } else {
                ref_conv_bwd_filter(&r, x.h, &t->xl, want, &t->wl, y.h, &t->yl, alpha, beta);
                int d5[5] = {t->k, t->c / t->g, t->flt[0], t->flt[1], t->flt[2]};
                ok &= tc_compare_tensor(what, t->xt, got, want, prior, w.n, &t->wl, d5, th_tolerance("conv", t->xt));
            }
            free(got);
            free(want);
        } else
            ok = 0;
        free(prior);
        if (ws) th_free(h, ws);
    }
    tb_free(h, &x);
    tb_free(h, &w);
    tb_free(h, &y);
    tc_destroy(t);
    return ok;
}

/* The scales (indices into scales()' combos) that the table-driven sections cycle through, so
 * that each table mixes beta == 0 (NaN-filled output) and beta != 0: beta 0, -1, 0, 2, 0, 1. */
static const int BETA_MIX[6] = {0, 3, 1, 4, 5, 2};

/* One row {n, c, h, w, k, r, s, stride, pad, dil, conv} of a channels-last table (groups 1) as a
 * case of type `type` with math type `math` (0: the descriptor's default), 3-D with a unit depth
 * when unit_depth (the kernels treat it as 2-D), run in direction dir with the scales
 * BETA_MIX[mix % 6]. Returns run_case's verdict. */
static int run_row(cudnnHandle_t h, int dir, const int *b, int unit_depth, cudnnDataType_t type, int math, int mix)
{
    tcase t;
    tc_nhwc_2d(&t, b[0], b[1], b[4], 1, b[2], b[3], b[5], b[6], b[7], b[8], b[9], b[10]);
    if (unit_depth) t.nsp = 3;
    pick_types(&t, type);
    t.math = math;
    force_scales = BETA_MIX[mix % 6];
    const int ok = run_case(h, dir, &t);
    force_scales = -1;
    return ok;
}

int main(void)
{
    th_seed(20260301);
    cudnnHandle_t h = th_create_handle();
    static const char *const dn[] = {"forward", "backward-data", "backward-filter"};
    if (th_section(0)) for (int dir = 0; dir < 3; dir++) {
        int ncases = dir == 0 ? 400 : 250, fails = 0;
        for (int i = 0; i < ncases; i++) {
            tcase t;
            tc_random_shape(&t, 1);
            cudnnDataType_t xt = dir == 0 ? FWD_TYPES[i % 8] : BWD_TYPES[i % 5];
            pick_types(&t, xt);
            if (!run_case(h, dir, &t)) fails++;
        }
        printf("%s: %d cases, %d with failures\n", dn[dir], ncases, fails);
    }
    /* dense channels-last problems (packed NHWC x/y, KRSC filter, groups 1) in FLOAT / HALF /
     * BFLOAT16: the CUDA backend runs them through its cuBLAS GEMM path (im2col / col2im, the
     * no-copy 1x1 stride-1 form, strided 1x1 backward data as strided-batched GEMMs, and backward data of stride-1 problems as a forward GEMM); every
     * other case limits its column buffer to a few KiB so the chunked loops (rows, images, float
     * accumulation of the filter gradient) are exercised */
    if (th_section(1)) {
        static const cudnnDataType_t GT[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
        static const int CS[] = {1, 3, 4, 8, 16, 5};
        for (int dir = 0; dir < 3; dir++) {
            int fails = 0;
            for (int i = 0; i < 36; i++) {
                tcase t;
                tc_random_shape(&t, 1);
                t.g = 1;
                t.c = CS[i % 6];
                t.k = th_randint(1, 9);
                t.xlay = t.ylay = LAY_NHWC;
                t.w_nhwc = 1;
                if (i % 4 == 1) /* 1x1, pad 0, strides 1, 2, 3 in turn (the strided-batched backward data) */
                    for (int a = 3 - t.nsp; a < 3; a++) {
                        t.flt[a] = 1;
                        t.stride[a] = 1 + (i / 4) % 3;
                        t.pad[a] = 0;
                        t.out[a] = ref_conv_out_dim(t.in[a], t.pad[a], t.flt[a], t.dil[a], t.stride[a]);
                    }
                if (i % 4 == 3 || i % 8 == 2) /* stride 1, W filter > 1, both modes: the CUDA bwd data takes its
                                               * forward-GEMM form (transformed filter, padding dil*(S-1)-pad) */
                    for (int a = 3 - t.nsp; a < 3; a++) {
                        t.stride[a] = 1;
                        if (a == 2) t.flt[a] = 2 + (i / 4) % 2;
                        int eff = (t.flt[a] - 1) * t.dil[a] + 1;
                        if (t.pad[a] > eff - 1) t.pad[a] = eff - 1;
                        while (t.in[a] < eff) t.in[a]++;
                        t.out[a] = ref_conv_out_dim(t.in[a], t.pad[a], t.flt[a], t.dil[a], t.stride[a]);
                        t.mode = (i / 4) % 2 ? CUDNN_CROSS_CORRELATION : CUDNN_CONVOLUTION;
                    }
                pick_types(&t, GT[i % 3]);
                if (i % 2) setenv("FREEDNN_CUDA_GEMM_WS_LIMIT", "2048", 1);
                if (!run_case(h, dir, &t)) fails++;
                unsetenv("FREEDNN_CUDA_GEMM_WS_LIMIT");
            }
            printf("%s channels-last: 36 cases, %d with failures\n", dn[dir], fails);
        }
    }
    /* HALF/BFLOAT16 packed NHWC problems with C and K multiples of 8 (KRSC filter, groups 1): on
     * the CUDA backend the forward and the stride-1 backward data run on the mma.sync implicit
     * GEMM (conv_fwd_mma.cu). Shapes cover its branches: several 128-row and 64/128-column tiles
     * with partial last ones (M, K not multiples of the tile), a reduction of many 32-wide slices
     * (more than the 4 pipeline stages) and of fewer, padding, stride 2/3, dilation, both modes,
     * 3-D with D = T = 1, and alpha/beta (beta = 0 with a NaN-filled output) from scales().
     * Every third case is FLOAT with CUDNN_TENSOR_OP_MATH: the same kernel through TF32
     * (conv_fwd__implicit_gemm_mma_tf32), C a multiple of 4 (some not of 8); the inputs are small
     * integers, exact in TF32, so the FLOAT tolerance holds. */
    if (th_section(2)) {
        static const int MC[] = {8, 16, 24, 40, 72, 8};
        static const int MK[] = {8, 40, 64, 72, 136, 16};
        int fails[2] = {0, 0};
        for (int i = 0; i < 36; i++) {
            for (int dir = 0; dir < 2; dir++) {
                tcase t;
                tc_random_shape(&t, 0);
                if (i % 6 == 5) { /* 3-D with a unit depth: the kernel treats it as 2-D */
                    t.nsp = 3;
                    t.in[0] = t.out[0] = t.flt[0] = t.stride[0] = t.dil[0] = 1;
                    t.pad[0] = 0;
                }
                t.g = 1;
                t.c = MC[i % 6];
                t.k = MK[(i / 2) % 6];
                t.n = th_randint(1, 3);
                t.xlay = t.ylay = LAY_NHWC;
                t.w_nhwc = 1;
                t.mode = (i % 4 == 1 || i % 4 == 2) ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
                for (int a = 1; a < 3; a++) {
                    t.in[a] = th_randint(6, 16);
                    t.flt[a] = (i % 4 == 3) ? 1 : th_randint(2, 3) + (i % 7 == 0 && a == 2 ? 2 : 0);
                    t.dil[a] = i % 5 == 2 ? 2 : 1;
                    /* mostly stride 1 (and the forward-GEMM form of backward data) */
                    t.stride[a] = i % 3 == 0 ? th_randint(2, 3) : 1;
                    const int eff = (t.flt[a] - 1) * t.dil[a] + 1;
                    t.pad[a] = th_randint(0, eff - 1);
                    while (t.in[a] < eff) t.in[a]++;
                    t.out[a] = ref_conv_out_dim(t.in[a], t.pad[a], t.flt[a], t.dil[a], t.stride[a]);
                }
                const cudnnDataType_t mt[3] = {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT};
                pick_types(&t, mt[i % 3]);
                if (i % 3 == 2) {
                    t.math = CUDNN_TENSOR_OP_MATH;
                    if (i % 4 == 0) t.c = 12; /* C % 4 == 0, C % 8 != 0 */
                }
                if (!run_case(h, dir, &t)) fails[dir]++;
            }
        }
        printf("channels-last HALF/BFLOAT16/TF32, C%%8 = K%%8 = 0: forward 36 cases, %d with failures; backward-data 36 cases, %d with failures\n",
               fails[0], fails[1]);
    }
    /* HALF/BFLOAT16 packed NHWC problems with C a multiple of 64 (one with 96), and every third
     * case FLOAT with TENSOR_OP math (TF32, C % 32 == 0): on an H200 (sm_90a build) the forward
     * and the stride-1 backward data (whose forward view has K input channels, so K is a multiple
     * of 64 in half the backward cases) run on the warpgroup-MMA kernel (conv_fwd_wgmma.cuh). K covers each of its tile picks (<= 64: 128x64; <= 128: 256x128 or
     * 128x128; multiples of 256: 128x256; others: 128x128) with partial last column tiles (K = 72,
     * 136, 200, 264); small images with 64-512 channels give reductions long enough for split-K;
     * padding, stride 2, dilation 2, 1x1 and 5x5 filters, both modes, alpha/beta from scales(). */
    if (th_section(3)) {
        static const int WC[] = {64, 128, 96, 192, 512, 256};
        static const int WK[] = {64, 72, 128, 136, 256, 200, 8, 264};
        int fails[2] = {0, 0}, n = 0;
        for (int i = 0; i < 16; i++) {
            for (int dir = 0; dir < 2; dir++) {
                tcase t;
                tc_random_shape(&t, 0);
                t.g = 1;
                t.c = WC[i % 6];
                t.k = (dir == 1 && i % 2 == 0) ? 64 * th_randint(1, 4) : WK[i % 8];
                t.n = th_randint(1, 3);
                t.xlay = t.ylay = LAY_NHWC;
                t.w_nhwc = 1;
                t.mode = i % 3 == 1 ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
                for (int a = 1; a < 3; a++) {
                    t.in[a] = t.c >= 256 ? th_randint(4, 8) : th_randint(6, 14);
                    t.flt[a] = i % 5 == 4 ? 1 : (i % 7 == 3 ? 5 : 3);
                    t.dil[a] = i % 6 == 5 ? 2 : 1;
                    t.stride[a] = i % 4 == 3 ? 2 : 1;
                    const int eff = (t.flt[a] - 1) * t.dil[a] + 1;
                    t.pad[a] = th_randint(0, eff - 1);
                    while (t.in[a] < eff) t.in[a]++;
                    t.out[a] = ref_conv_out_dim(t.in[a], t.pad[a], t.flt[a], t.dil[a], t.stride[a]);
                }
                pick_types(&t, i % 3 == 2 ? CUDNN_DATA_FLOAT : i % 2 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF);
                if (i % 3 == 2) t.math = CUDNN_TENSOR_OP_MATH; /* TF32; the small-integer inputs are exact in it */
                if (!run_case(h, dir, &t)) fails[dir]++;
                n++;
            }
        }
        printf("channels-last HALF/BFLOAT16/TF32, C%%32 = 0: %d cases, forward %d and backward-data %d with failures\n", n, fails[0], fails[1]);
    }
    /* HALF/BFLOAT16 packed NHWC, stride 1, the shapes of the Hopper halo kernel
     * (conv_fwd_halo.cuh): forward with C = 64 and K <= 64 (K % 8 == 0), backward data with K = 64
     * and C <= 64 (its forward view swaps them); 3x3, 1x3, 3x1 and 2x2 filters, padding, dilation 2,
     * both modes, alpha/beta from scales(), and images of 24-34 pixels a side so that most of the
     * kernel's tiles are real output (the library takes it there by default; the gpu/test_conv_halo
     * rerun forces it on every shape its plan fits). Cases 8-15 give the kernel two 128-byte channel
     * planes and a 144 KiB 3x3 filter, where it keeps one window per warpgroup: FLOAT with TF32 math
     * over 64 channels (odd i), HALF/BFLOAT16 over 128 (even i). Elsewhere these are plain cases. */
    if (th_section(4)) {
        static const int HK[] = {64, 40, 64, 16, 56, 64, 8, 48};
        int fails[2] = {0, 0}, n = 0;
        for (int i = 0; i < 16; i++) {
            const int two = i >= 8, tf32 = two && i % 2;
            const int wide = two && !tf32 ? 128 : 64; /* the channels of the kernel's input */
            for (int dir = 0; dir < 2; dir++) {
                tcase t;
                tc_random_shape(&t, 0);
                t.g = 1;
                t.c = dir == 0 ? wide : 8 * th_randint(1, 8);
                t.k = dir == 0 ? HK[i % 8] : wide;
                t.n = th_randint(1, 2);
                t.xlay = t.ylay = LAY_NHWC;
                t.w_nhwc = 1;
                t.mode = i % 3 == 1 ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
                for (int a = 1; a < 3; a++) {
                    const int f = i % 8;
                    t.flt[a] = f == 6 ? 2 : (f == 3 && a == 1) || (f == 5 && a == 2) ? 1 : 3;
                    t.dil[a] = f == 4 ? 2 : 1;
                    t.stride[a] = 1;
                    const int eff = (t.flt[a] - 1) * t.dil[a] + 1;
                    t.pad[a] = th_randint(0, eff - 1);
                    t.in[a] = th_randint(24, 34);
                    t.out[a] = ref_conv_out_dim(t.in[a], t.pad[a], t.flt[a], t.dil[a], t.stride[a]);
                }
                pick_types(&t, tf32 ? CUDNN_DATA_FLOAT : i % 4 == 1 || i % 4 == 2 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF);
                if (tf32) t.math = CUDNN_TENSOR_OP_MATH; /* the small-integer inputs are exact in TF32 */
                if (!run_case(h, dir, &t)) fails[dir]++;
                n++;
            }
        }
        printf("channels-last HALF/BFLOAT16/TF32, stride 1, K <= 64 (halo shapes): %d cases, forward %d and backward-data %d with failures\n", n,
               fails[0], fails[1]);
    }
    /* backward filter of HALF/BFLOAT16 packed NHWC problems with C and K multiples of 8 (KRSC
     * filter, groups 1): on the CUDA backend ALGO_1 runs the mma.sync implicit GEMM
     * (conv_bwd_filter_mma.cu). Shapes cover its branches: several 64/128-row (K) and 64/128-column
     * (R*S*C) tiles with partial last ones, N*P*Q of a few thousand rows (the reduction split over
     * 2-9 blocks, partial sums in the workspace) and of a few dozen (one split, direct epilogue),
     * P*Q below 32 (the row step crosses images), stride 2/3, padding, dilation, 1x1, R != S, both
     * modes, 3-D with D = T = 1; alpha/beta alternate between beta == 0 (NaN-filled dw) and
     * beta != 0. On an H200 (sm_90a build) the same entry runs the warpgroup-MMA kernel
     * (conv_bwd_filter_wgmma.cuh); the last four cases reach its other branches: a 1x1 with
     * 16384 rows and an 8-column output (32 splits, the eight-warp reduction), 128x192 tiles with
     * a partial row tile (K = 136, R*S*C = 576), 64x256 tiles (R*S*C = 392) and 64x192 tiles whose
     * warpgroups split the k steps (K = 64, R*S*C = 576). Each shape runs once more in FLOAT with
     * CUDNN_TENSOR_OP_MATH: the TF32 kernels (conv_bwd_filter_tf32.cuh; on an H200
     * conv_bwd_filter_wgmma_tf32.cuh, whose four tiles the shapes reach: 64x128 for K <= 64 and
     * R*S*C <= 128, 64x256, 128x128, and 128x256 for R*S*C >= 2304 in the last case, K = 72), the
     * small-integer inputs exact in TF32. */
    if (th_section(5)) {
        /*                       n   c   h   w    k  r  s str pad dil conv */
        static const int BF[][11] = {{2, 8, 40, 40, 16, 3, 3, 1, 1, 1, 0},  {3, 16, 33, 29, 24, 3, 3, 1, 1, 2, 1},
                                     {3, 24, 20, 24, 136, 3, 3, 1, 1, 1, 1}, {1, 72, 9, 11, 40, 3, 3, 2, 1, 1, 0},
                                     {2, 8, 14, 13, 200, 5, 3, 3, 2, 1, 1}, {4, 16, 12, 12, 8, 1, 1, 2, 0, 1, 0},
                                     {2, 8, 30, 30, 32, 3, 3, 1, 1, 1, 1},  {5, 40, 7, 7, 72, 2, 2, 1, 0, 2, 0},
                                     {8, 8, 4, 5, 16, 3, 3, 1, 1, 1, 1},    {64, 8, 6, 6, 8, 3, 3, 1, 1, 1, 0},
                                     {2, 136, 6, 6, 64, 1, 1, 1, 0, 1, 1},  {2, 8, 50, 50, 8, 3, 3, 1, 0, 1, 1},
                                     {16, 8, 32, 32, 16, 1, 1, 1, 0, 1, 0}, {4, 64, 12, 12, 136, 3, 3, 1, 1, 1, 1},
                                     {3, 8, 40, 40, 64, 7, 7, 2, 3, 1, 0},  {6, 64, 20, 20, 64, 3, 3, 1, 1, 1, 0},
                                     {2, 256, 6, 6, 72, 3, 3, 1, 1, 1, 1}};
        int fails[2] = {0, 0};
        const int nbf = (int)(sizeof BF / sizeof BF[0]);
        for (int i = 0; i < nbf; i++)
            for (int tf = 0; tf < 2; tf++)
                if (!run_row(h, 2, BF[i], i == 6, tf ? CUDNN_DATA_FLOAT : i % 2 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16,
                             tf ? CUDNN_TENSOR_OP_MATH : 0, i + tf))
                    fails[tf]++;
        printf("channels-last HALF/BFLOAT16, C%%8 = K%%8 = 0: backward-filter %d cases, %d with failures; the same in TF32: %d\n", nbf,
               fails[0], fails[1]);
    }
    /* HALF/BFLOAT16 packed NHWC problems (KRSC filter, groups 1) with K % 8 == 0 but C % 8 != 0:
     * on the CUDA backend the mma.sync forward and backward-filter entries copy x (and w / dw) to
     * the workspace with C padded by zero channels to a multiple of 8 (conv_chpad.cuh), then run
     * the C % 8 == 0 kernels. Includes the ResNet-50 stem shape (7x7, stride 2, pad 3, C = 3,
     * K = 64) on a small image, N*P*Q of a few thousand rows (split backward-filter reduction in the
     * workspace after the padded pieces), 1x1, dilation, both modes, 3-D with D = T = 1; every
     * direction, alternating beta == 0 (NaN-filled output) and beta != 0. The forward and the
     * backward filter also run in FLOAT with TENSOR_OP math (TF32), whose copy unit is 4 channels:
     * C = 1, 3, 5, 7 are padded to 4 or 8, C = 12 is not. */
    if (th_section(6)) {
        /*                       n   c   h   w    k  r  s str pad dil conv */
        static const int PC[][11] = {{2, 3, 20, 22, 64, 7, 7, 2, 3, 1, 0}, {2, 1, 40, 40, 16, 3, 3, 1, 1, 1, 1},
                                     {3, 5, 12, 13, 24, 3, 3, 1, 1, 2, 0}, {1, 7, 9, 11, 72, 3, 2, 2, 1, 1, 1},
                                     {2, 12, 14, 13, 8, 5, 3, 3, 2, 1, 0}, {4, 3, 12, 12, 8, 1, 1, 1, 0, 1, 1},
                                     {2, 12, 10, 10, 32, 3, 3, 1, 1, 1, 0}, {1, 3, 32, 32, 64, 7, 7, 2, 3, 1, 0},
                                     {8, 5, 4, 5, 16, 3, 3, 1, 1, 1, 1},   {2, 7, 30, 30, 8, 3, 3, 1, 0, 1, 0}};
        const int npc = (int)(sizeof PC / sizeof PC[0]);
        int fails[5] = {0, 0, 0, 0, 0};
        for (int i = 0; i < npc; i++)
            for (int dir = 0; dir < 5; dir++) /* 3: backward filter in TF32, 4: forward in TF32 */
                if (!run_row(h, dir < 3 ? dir : dir == 3 ? 2 : 0, PC[i], i == 6,
                             dir >= 3 ? CUDNN_DATA_FLOAT : (i + dir) % 2 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16,
                             dir >= 3 ? CUDNN_TENSOR_OP_MATH : 0, i + dir))
                    fails[dir]++;
        printf("channels-last HALF/BFLOAT16, C%%8 != 0, K%%8 = 0: forward %d cases, %d with failures; backward-data %d, %d; "
               "backward-filter %d, %d; backward-filter TF32 %d, %d; forward TF32 %d, %d\n", npc, fails[0], npc, fails[1], npc, fails[2], npc,
               fails[3], npc, fails[4]);
    }
    /* FLOAT packed NHWC problems (KRSC filter, groups 1, FMA / DEFAULT math) with C % 16 == 0,
     * K % 4 == 0, K <= 128 and R*S > 1: on the CUDA backend the forward runs on the FMA implicit
     * GEMM (conv_fwd_f32.cu, 128x64 tiles), and the stride-1 backward data on it through its
     * forward view (dy with K channels as x, C <= 128 outputs, so the rows with K % 16 == 0 and
     * C % 4 == 0 reach it there). Single partial tile (M < 128), several tiles, a partial column
     * tile (K = 68, 100, 124; backward C = 68), stride 2 / 3, dilation 2, 5x3 and 2x2 filters,
     * padding, both modes, 3-D with D = T = 1, K = 4; C = 3, 5, 7 (the forward pads C to 4 in the
     * workspace, then reduces over 16-wide (tap, channel) slices, the last one partly zero);
     * beta 0 (NaN-filled output) and beta != 0. */
    if (th_section(7)) {
        /*                       n    c   h   w    k  r  s str pad dil conv */
        static const int FC[][11] = {{2, 16, 9, 7, 16, 3, 3, 1, 1, 1, 0},     {3, 32, 13, 11, 48, 3, 3, 1, 1, 1, 1},
                                     {1, 48, 17, 19, 128, 5, 3, 1, 2, 2, 0},  {4, 64, 12, 12, 64, 3, 3, 1, 1, 1, 0},
                                     {1, 128, 9, 9, 112, 2, 2, 1, 0, 1, 1},   {3, 32, 13, 11, 68, 3, 3, 2, 1, 1, 1},
                                     {2, 16, 30, 30, 100, 3, 3, 3, 0, 1, 1},  {2, 32, 20, 20, 4, 3, 3, 2, 1, 1, 0},
                                     {2, 12, 11, 10, 32, 3, 3, 1, 1, 1, 0},   {2, 68, 10, 9, 16, 3, 3, 1, 2, 2, 1},
                                     {1, 112, 8, 9, 124, 3, 3, 1, 1, 1, 0},   {2, 64, 16, 16, 64, 3, 3, 1, 1, 1, 1},
                                     {2, 3, 20, 22, 64, 7, 7, 2, 3, 1, 0},    {1, 5, 12, 13, 24, 3, 3, 1, 1, 2, 1},
                                     {2, 7, 9, 11, 8, 3, 2, 2, 1, 1, 1}};
        const int nfc = (int)(sizeof FC / sizeof FC[0]);
        int fails[2] = {0, 0};
        for (int i = 0; i < nfc; i++)
            for (int dir = 0; dir < 2; dir++)
                if (!run_row(h, dir, FC[i], i == 3, CUDNN_DATA_FLOAT, i % 2 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH, i + dir)) fails[dir]++;
        printf("channels-last FLOAT, K <= 128, R*S > 1: forward %d cases, %d with failures; backward-data %d, %d\n", nfc, fails[0], nfc,
               fails[1]);
    }
    /* FLOAT packed NHWC backward filter (KRSC dw, groups 1, FMA / DEFAULT math) with K % 4 == 0 and
     * R*S > 1: on the CUDA backend the split-K FMA implicit GEMM (conv_bwd_filter_f32.cu), its
     * 64x128 tile with 16-byte x loads for C % 4 == 0 and the 64x64 scalar-load one otherwise
     * (C = 3, 5, 7). Partial K tiles (K = 68, 4), partial R*S*C tiles (including R*S*C % 4 != 0,
     * stored element by element), N*P*Q long enough for several splits (workspace partial sums
     * and the ordered reduction) and short enough for one, stride 2 / 3, dilation 2, padding,
     * both modes, 3-D with D = T = 1; beta 0 (NaN-filled dw) and beta != 0. */
    if (th_section(8)) {
        /*                       n    c   h   w    k  r  s str pad dil conv */
        static const int BC[][11] = {{2, 16, 9, 7, 16, 3, 3, 1, 1, 1, 0},   {3, 3, 20, 22, 64, 7, 7, 2, 3, 1, 1},
                                     {4, 16, 32, 32, 16, 3, 3, 1, 1, 1, 0}, {2, 12, 11, 10, 68, 3, 3, 2, 1, 1, 1},
                                     {1, 5, 17, 19, 8, 5, 3, 1, 2, 2, 0},   {2, 64, 12, 12, 64, 3, 3, 1, 1, 1, 0},
                                     {8, 7, 16, 16, 4, 3, 2, 3, 0, 1, 1},   {2, 128, 9, 9, 128, 2, 2, 1, 0, 1, 0},
                                     {6, 32, 24, 24, 32, 3, 3, 1, 1, 1, 1}};
        const int nbc = (int)(sizeof BC / sizeof BC[0]);
        int fails = 0;
        for (int i = 0; i < nbc; i++)
            if (!run_row(h, 2, BC[i], i == 5, CUDNN_DATA_FLOAT, i % 2 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH, i)) fails++;
        printf("channels-last FLOAT backward filter, K%%4 = 0, R*S > 1: %d cases, %d with failures\n", nbc, fails);
    }
    /* depthwise problems (groups == C, K = m*C, 2-D): the CUDA backend runs them with its depthwise
     * kernels (first in every list). Packed NHWC with an even C and m == 1 takes the two-channel
     * vector path, 3x3 and 5x5 the unrolled ones, other filters / layouts the generic ones; the
     * larger spatial cases make the backward filter split its reduction (workspace partials),
     * in channels-last (32-channel blocks) and NCHW (one channel per block) form. */
    if (th_section(9)) {
        static const cudnnDataType_t DT[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_DOUBLE};
        static const int CH[] = {2, 4, 8, 6, 16, 34, 3, 5, 1, 40};
        impl_runs = dw_runs = 0;
        TH_OK(cudnnSetCallback(CUDNN_SEV_INFO_EN, NULL, count_impl));
        for (int dir = 0; dir < 3; dir++) {
            int fails = 0, ncases = 60;
            for (int i = 0; i < ncases; i++) {
                tcase t;
                tc_random_shape(&t, 0);
                const int m = i % 5 == 4 ? th_randint(2, 3) : 1;
                t.g = t.c = CH[th_randint(0, 9)];
                t.k = m * t.c;
                t.n = th_randint(1, 2);
                const int big = i % 8 == 7;
                for (int a = 1; a < 3; a++) {
                    t.flt[a] = i % 3 == 0 ? 3 : i % 3 == 1 ? 5 : th_randint(1, 4);
                    t.stride[a] = th_randint(1, 2);
                    t.dil[a] = th_randint(0, 3) == 0 ? 2 : 1;
                    const int eff = (t.flt[a] - 1) * t.dil[a] + 1;
                    t.pad[a] = th_randint(0, eff - 1 < 3 ? eff - 1 : 3);
                    t.in[a] = big ? th_randint(40, 50) : th_randint(eff, 14);
                    t.out[a] = ref_conv_out_dim(t.in[a], t.pad[a], t.flt[a], t.dil[a], t.stride[a]);
                }
                if (big) {
                    t.n = 2;
                    t.stride[1] = t.stride[2] = 1;
                    for (int a = 1; a < 3; a++) t.out[a] = ref_conv_out_dim(t.in[a], t.pad[a], t.flt[a], t.dil[a], t.stride[a]);
                }
                if (i % 2 == 0) t.xlay = t.ylay = LAY_NHWC;
                else if (i % 4 == 1) t.xlay = t.ylay = LAY_NCHW;
                if (i == ncases - 1) { /* K*R*S above the CUDA kernels' 32 KiB shared-memory filter copy */
                    t.g = t.c = t.k = 400;
                    t.n = 1;
                    t.xlay = t.ylay = LAY_NHWC;
                    for (int a = 1; a < 3; a++) {
                        t.flt[a] = 5;
                        t.dil[a] = 1;
                        t.pad[a] = 2;
                        t.in[a] = th_randint(5, 8);
                        t.out[a] = ref_conv_out_dim(t.in[a], t.pad[a], t.flt[a], t.dil[a], t.stride[a]);
                    }
                }
                pick_types(&t, DT[(i / 2) % 4]);
                if (!run_case(h, dir, &t)) fails++;
            }
            printf("%s depthwise: %d cases, %d with failures\n", dn[dir], ncases, fails);
        }
        /* 3x3, dilation 1, stride 1 (pad 1 or 0) or 2, channels-last: on the CUDA backend the
         * backward filter runs its tiled kernel (4-row x column tiles; several tile groups ->
         * workspace partials + an ordered second pass, one group -> direct blend), forward and
         * stride-1 backward data with even C and m == 1 the row-tiled kernel (4 x 4 outputs per
         * thread). P and Q not multiples of the tiles, even C with m == 1 (two-channel vectors),
         * odd C and m == 2 (one channel per thread), both modes, every dtype (HALF in every
         * direction), beta 0 (NaN-filled output) and beta != 0; C = 920 puts the filter (K*9 floats)
         * above the 32 KiB shared-memory copy of the row-tiled kernel. */
        {
            /*                       n   c  h   w  m str pad conv */
            static const int TC[][8] = {{2, 24, 30, 30, 1, 1, 1, 0}, {2, 6, 29, 31, 1, 1, 1, 1}, {1, 6, 7, 7, 1, 1, 1, 0},
                                        {3, 5, 17, 13, 1, 1, 1, 1},  {2, 4, 21, 19, 2, 1, 1, 0}, {2, 8, 33, 33, 1, 2, 1, 1},
                                        {2, 70, 20, 20, 1, 1, 0, 0}, {2, 3, 18, 26, 2, 2, 1, 0}, {1, 920, 5, 6, 1, 1, 1, 1}};
            static const cudnnDataType_t TT[] = {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16, CUDNN_DATA_DOUBLE};
            const int ntc = (int)(sizeof TC / sizeof TC[0]);
            int fails[3] = {0, 0, 0}, ncases = 0;
            for (int i = 0; i < ntc; i++)
                for (int ti = 0; ti < 6; ti++) {
                    const int *b = TC[i];
                    const int dir = ti < 2 ? 2 : ti % 2; /* backward filter twice per shape, the others twice each */
                    tcase t;
                    tc_nhwc_2d(&t, b[0], b[1], b[4] * b[1], b[1], b[2], b[3], 3, 3, b[5], b[6], 1, b[7]);
                    t.w_nhwc = (i + ti) % 2;
                    pick_types(&t, ti < 4 ? TT[(i + ti) % 4] : CUDNN_DATA_HALF);
                    force_scales = BETA_MIX[(i * 6 + ti + i / 2) % 6];
                    if (!run_case(h, dir, &t)) fails[dir]++;
                    force_scales = -1;
                    ncases++;
                }
            printf("depthwise 3x3 channels-last tiles: %d cases, failures: forward %d, backward-data %d, backward-filter %d\n",
                   ncases, fails[0], fails[1], fails[2]);
            /* the workspace rule of backward filter ALGO_0 on the first shape: on the CUDA backend
             * it needs the per-block partials (> 0 bytes); one byte less is BAD_PARAM with dw
             * untouched */
            {
                tcase t;
                tc_nhwc_2d(&t, TC[0][0], TC[0][1], TC[0][1], TC[0][1], TC[0][2], TC[0][3], 3, 3, 1, 1, 1, 0);
                pick_types(&t, CUDNN_DATA_HALF);
                if (TH_CHECK(tc_setup(&t), "setup of the depthwise workspace case failed")) {
                    size_t wsz = 0;
                    TH_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, t.xd, t.yd, t.cd, t.wd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, &wsz));
                    if (th_is_gpu(h)) TH_CHECK(wsz > 0, "depthwise 3x3 backward filter ALGO_0 workspace is 0 on the GPU, want its partials");
                    if (wsz > 0) {
                        tbuf x, w, y;
                        tb_init(h, &x, t.xt, t.xspan);
                        tb_init(h, &w, t.xt, t.wspan);
                        tb_init(h, &y, t.yt, t.yspan);
                        tb_fill(&x, -3, 3);
                        tb_fill(&y, -3, 3);
                        tb_fill(&w, -2, 2);
                        tb_upload(h, &x);
                        tb_upload(h, &y);
                        tb_upload(h, &w);
                        void *ws = th_alloc(h, wsz);
                        float one = 1, zero = 0;
                        TH_STATUS(cudnnConvolutionBackwardFilter(h, &one, t.xd, x.d, t.yd, y.d, t.cd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0,
                                                                 ws, wsz - 1, &zero, t.wd, w.d),
                                  CUDNN_STATUS_BAD_PARAM);
                        double *got = malloc(sizeof(double) * (size_t)w.n);
                        tb_download(h, &w, got);
                        int same = 1;
                        for (int64_t e = 0; e < w.n; e++) same &= got[e] == w.h[e];
                        TH_CHECK(same, "depthwise backward filter with a too-small workspace changed dw");
                        free(got);
                        th_free(h, ws);
                        tb_free(h, &x);
                        tb_free(h, &w);
                        tb_free(h, &y);
                    }
                }
                tc_destroy(&t);
            }
        }
        TH_OK(cudnnSetCallback(0, NULL, NULL));
        printf("depthwise section: %d convolution calls, %d ran a depthwise implementation\n", impl_runs, dw_runs);
        if (th_is_gpu(h)) TH_CHECK(dw_runs > 0, "no depthwise problem ran a __depthwise implementation on the GPU backend");
    }
    /* FLOAT depthwise 3x3 in packed NHWC: the CPU's AVX-512 depthwise kernels (3x3 stride 1:
     * Winograd F(2,3) forward / backward data, register-blocked backward filter). Odd and
     * even widths (a lone last output column), heights 1..3 mod the row block, C % 16 != 0,
     * pad 0/1/2, stride 2 and dilation 2 (generic kernels), N > 1, every alpha/beta combination
     * (beta == 0 with a NaN-filled output), both modes, KCRS and KRSC filters. */
    if (th_section(10)) {
        /*                        n    c   h   w str pad dil */
        static const int DW[][7] = {{1, 16, 1, 1, 1, 1, 1},  {2, 33, 5, 7, 1, 1, 1},  {1, 17, 4, 3, 1, 0, 1},  {3, 144, 9, 10, 1, 1, 1},
                                    {2, 20, 8, 13, 1, 2, 1}, {1, 48, 11, 12, 2, 1, 1}, {2, 7, 10, 9, 2, 0, 1},  {1, 40, 9, 9, 1, 1, 2},
                                    {2, 31, 6, 4, 1, 1, 1},  {1, 64, 7, 5, 1, 0, 1},  {4, 24, 3, 16, 1, 1, 1}, {1, 3, 23, 2, 1, 1, 1},
                                    {2, 65, 12, 11, 1, 1, 1}, {1, 16, 2, 6, 1, 2, 1}, {8, 18, 14, 14, 1, 1, 1}};
        const int ndw = (int)(sizeof DW / sizeof DW[0]);
        for (int dir = 0; dir < 3; dir++) {
            int fails = 0;
            for (int i = 0; i < ndw; i++) {
                const int *b = DW[i];
                tcase t;
                tc_nhwc_2d(&t, b[0], b[1], b[1], b[1], b[2], b[3], 3, 3, b[4], b[5], b[6], i % 2);
                t.w_nhwc = i % 3 == 0;
                pick_types(&t, CUDNN_DATA_FLOAT);
                force_scales = (i + dir) % 5;
                if (!run_case(h, dir, &t)) fails++;
                force_scales = -1;
            }
            printf("%s FLOAT NHWC depthwise 3x3: %d cases, %d with failures\n", dn[dir], ndw, fails);
        }
    }
    /* FLOAT packed NHWC, KRSC filter, groups 1, small outputs: the CPU's NHWC im2col + SGEMM path
     * (conv_*__gemm_nhwc_col, forced with FREEDNN_CPU_CONV_GEMM=1) and the direct AVX-512 kernels
     * with their filter packs (=0). Small P*Q (1x1 .. 7x7 outputs), N up to 3, C and K not multiples
     * of 16 or 32 (and above 32: several channel blocks), 3x3 / 2x3 / 1x1 filters, strides 1-2,
     * pad 0-2, dilation 1-2, both modes, every alpha/beta combination (beta == 0 on NaN). */
    if (th_section(11)) {
        /*                        n   c   k   h   w  r  s str pad dil */
        static const int GC[][10] = {{1, 37, 45, 7, 7, 3, 3, 1, 1, 1}, {2, 16, 33, 5, 4, 3, 3, 1, 1, 1}, {1, 5, 70, 3, 3, 3, 3, 1, 1, 1},
                                     {3, 20, 9, 6, 7, 3, 3, 2, 1, 1},  {1, 48, 64, 7, 7, 2, 3, 1, 0, 1}, {2, 19, 31, 8, 6, 3, 3, 1, 2, 2},
                                     {1, 33, 17, 1, 1, 3, 3, 1, 1, 1}, {2, 40, 40, 4, 4, 1, 1, 2, 0, 1}, {1, 64, 96, 7, 7, 3, 3, 1, 1, 1},
                                     {2, 7, 12, 9, 5, 3, 2, 2, 1, 1}};
        const int ngc = (int)(sizeof GC / sizeof GC[0]);
        for (int pass = 0; pass < 2; pass++) {
            setenv("FREEDNN_CPU_CONV_GEMM", pass ? "1" : "0", 1);
            impl_runs = col_runs = nhwc_direct_runs = 0;
            TH_OK(cudnnSetCallback(CUDNN_SEV_INFO_EN, NULL, count_impl));
            for (int dir = 0; dir < 3; dir++) {
                int fails = 0;
                for (int i = 0; i < ngc; i++) {
                    const int *b = GC[i];
                    tcase t;
                    tc_nhwc_2d(&t, b[0], b[1], b[2], 1, b[3], b[4], b[5], b[6], b[7], b[8], b[9], (i + pass) % 2);
                    for (int a = 1; a < 3; a++) { /* per dim: padding below the filter's extent, and an input it covers */
                        int eff = (t.flt[a] - 1) * t.dil[a] + 1;
                        t.pad[a] = b[8] < eff - 1 ? b[8] : eff - 1;   /* also what the direct backward data needs */
                        while (t.in[a] + 2 * t.pad[a] < eff) t.in[a]++;
                        t.out[a] = ref_conv_out_dim(t.in[a], t.pad[a], t.flt[a], t.dil[a], t.stride[a]);
                    }
                    pick_types(&t, CUDNN_DATA_FLOAT);
                    force_scales = (i + dir + pass) % 7;
                    if (!run_case(h, dir, &t)) fails++;
                    force_scales = -1;
                }
                printf("%s FLOAT NHWC small outputs (FREEDNN_CPU_CONV_GEMM=%d): %d cases, %d with failures\n", dn[dir], pass, ngc, fails);
            }
            TH_OK(cudnnSetCallback(0, NULL, NULL));
            printf("NHWC small-output section pass %d: %d calls, %d NHWC im2col GEMM, %d direct NHWC\n", pass, impl_runs, col_runs,
                   nhwc_direct_runs);
            if (!th_is_gpu(h) && pass == 1) TH_CHECK(col_runs > 0, "FREEDNN_CPU_CONV_GEMM=1 never ran conv_*__gemm_nhwc_col");
            if (!th_is_gpu(h) && pass == 0) TH_CHECK(col_runs == 0, "FREEDNN_CPU_CONV_GEMM=0 still ran conv_*__gemm_nhwc_col");
        }
        unsetenv("FREEDNN_CPU_CONV_GEMM");
    }
    /* FLOAT direct NHWC kernels on larger outputs: 64-channel register tiles (forward / backward
     * data with K resp. C >= 48, two 32-channel filter blocks plus a lone last one; backward
     * filter with >= 48 vector channels, broadcast channels not a multiple of 6), several
     * reduction chunks (N*P*Q > 256), the backward filter written straight into a KRSC filter
     * (partial sums in dw when beta == 0) or through the accumulator (KCRS), few input channels
     * (C < 16: broadcasts over filter taps and channels, dense and gapped x), NCHW outputs
     * (scalar tile stores), both modes, every alpha/beta combination (beta == 0 on NaN). */
    if (th_section(12)) {
        /*                         n   c   k   h   w  r  s str pad lay  wnhwc */
        static const int DC[][11] = {{2, 70, 45, 20, 18, 3, 3, 1, 1, LAY_NHWC, 1},      {1, 50, 80, 13, 23, 3, 3, 1, 1, LAY_NHWC, 1},
                                     {2, 3, 70, 24, 22, 7, 7, 2, 3, LAY_NHWC, 1},       {2, 5, 40, 15, 17, 5, 5, 2, 2, LAY_NHWC_GAPS, 1},
                                     {3, 64, 100, 16, 16, 1, 1, 1, 0, LAY_NHWC, 1},     {2, 49, 52, 11, 12, 3, 3, 1, 1, LAY_NHWC, 0},
                                     {1, 96, 65, 9, 14, 3, 3, 1, 1, LAY_NCHW, 1},       {2, 13, 96, 17, 13, 3, 3, 1, 1, LAY_NHWC, 1}};
        const int ndc = (int)(sizeof DC / sizeof DC[0]);
        setenv("FREEDNN_CPU_CONV_GEMM", "0", 1);
        impl_runs = nhwc_direct_runs = 0;
        TH_OK(cudnnSetCallback(CUDNN_SEV_INFO_EN, NULL, count_impl));
        for (int dir = 0; dir < 3; dir++) {
            int fails = 0;
            for (int i = 0; i < ndc; i++) {
                const int *b = DC[i];
                tcase t;
                tc_nhwc_2d(&t, b[0], b[1], b[2], 1, b[3], b[4], b[5], b[6], b[7], b[8], 1, (i + dir) % 2);
                t.xlay = t.ylay = b[9];
                t.w_nhwc = b[10];
                pick_types(&t, CUDNN_DATA_FLOAT);
                force_scales = (i + 2 * dir) % 7;
                if (!run_case(h, dir, &t)) fails++;
                force_scales = -1;
            }
            printf("%s FLOAT direct NHWC larger outputs: %d cases, %d with failures\n", dn[dir], ndc, fails);
        }
        TH_OK(cudnnSetCallback(0, NULL, NULL));
        if (!th_is_gpu(h) && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512vl"))
            TH_CHECK(nhwc_direct_runs >= 3 * ndc, "direct NHWC kernels ran %d times, want >= %d", nhwc_direct_runs, 3 * ndc);
        unsetenv("FREEDNN_CPU_CONV_GEMM");
    }
    /* larger FLOAT/DOUBLE problems: several GEMM blocks in every dimension, with OpenBLAS
     * (when built with it) and with our own kernel */
    if (th_section(13)) for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) setenv("FREEDNN_CPU_OWN_GEMM", "1", 1);
        for (int dir = 0; dir < 3; dir++)
            for (int i = 0; i < 3; i++) {
                tcase t;
                tc_random_shape(&t, 0);
                t.g = i == 2 ? 2 : 1;
                t.c = t.g * th_randint(15, 20);
                t.k = t.g * th_randint(65, 80);
                t.n = 2;
                t.in[1] = th_randint(12, 17);
                t.in[2] = th_randint(12, 17);
                for (int a = 1; a < 3; a++) {
                    t.flt[a] = i == 1 ? 1 : 3;
                    t.stride[a] = i == 1 ? 1 : t.stride[a];
                    t.pad[a] = i == 1 ? 0 : 1;
                    t.dil[a] = 1;
                    t.out[a] = ref_conv_out_dim(t.in[a], t.pad[a], t.flt[a], t.dil[a], t.stride[a]);
                }
                pick_types(&t, i == 0 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT);
                if (!run_case(h, dir, &t)) printf("large case failed (pass %d dir %d)\n", pass, dir);
            }
        unsetenv("FREEDNN_CPU_OWN_GEMM");
    }
    printf("skipped (NOT_SUPPORTED on this GPU backend): %d\n", skipped);
    cudnnDestroy(h);
    return th_finish();
}
