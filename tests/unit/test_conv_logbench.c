/* FREEDNN_LOG_BENCH: the library prints, for each convolution call, the `freednn bench` command
 * that replays it. The program re-runs itself as a child ("child" argument) that makes a set of
 * convolution calls with the variable set, its stderr (or CUDNN_LOGDEST_DBG file) captured in a
 * temporary file; the parent checks every printed line, the once-per-command mode, the
 * destination, the silence without the variable, and runs printed commands through the built
 * `freednn bench` (FDNN_TEST_BENCH, from CMake) with --verify. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "th.h"

/* ------------------------------------------------------------------ child */
static cudnnHandle_t H;

static cudnnTensorDescriptor_t tens4(cudnnTensorFormat_t f, cudnnDataType_t t, int n, int c, int h, int w)
{
    cudnnTensorDescriptor_t d;
    TH_OK(cudnnCreateTensorDescriptor(&d));
    TH_OK(cudnnSetTensor4dDescriptor(d, f, t, n, c, h, w));
    return d;
}

/* one 2-D call in direction dir (0 fwd, 1 bwd-data, 2 bwd-filter, 3 bias-activation fwd) */
static void conv2d(int dir, cudnnTensorFormat_t f, cudnnDataType_t t, cudnnMathType_t math, int n, int c, int h, int w, int k,
                   int r, int s, int ph, int pw, int sh, int sw, int dh, int dw, int g, cudnnTensorDescriptor_t xs)
{
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    TH_OK(cudnnCreateFilterDescriptor(&wd));
    TH_OK(cudnnSetFilter4dDescriptor(wd, t, f, k, c / g, r, s));
    TH_OK(cudnnCreateConvolutionDescriptor(&cd));
    TH_OK(cudnnSetConvolution2dDescriptor(cd, ph, pw, sh, sw, dh, dw, CUDNN_CROSS_CORRELATION, t));
    TH_OK(cudnnSetConvolutionGroupCount(cd, g));
    TH_OK(cudnnSetConvolutionMathType(cd, math));
    cudnnTensorDescriptor_t xd = xs ? xs : tens4(f, t, n, c, h, w);
    int on, oc, oh, ow;
    TH_OK(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &oc, &oh, &ow));
    cudnnTensorDescriptor_t yd = tens4(f, t, on, oc, oh, ow);
    size_t es = t == CUDNN_DATA_DOUBLE ? 8 : 4;
    size_t xb = (size_t)n * c * h * w * es * 2, wb = (size_t)k * (c / g) * r * s * es, yb = (size_t)on * oc * oh * ow * es;
    void *x = th_alloc(H, xb), *wp = th_alloc(H, wb), *y = th_alloc(H, yb), *ws = th_alloc(H, 1 << 16);
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    const void *a = t == CUDNN_DATA_DOUBLE ? (const void *)&one : (const void *)&onef;
    const void *b = t == CUDNN_DATA_DOUBLE ? (const void *)&zero : (const void *)&zerof;
    if (dir == 0) TH_OK(cudnnConvolutionForward(H, a, xd, x, wd, wp, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, ws, 1 << 16, b, yd, y));
    if (dir == 1) TH_OK(cudnnConvolutionBackwardData(H, a, wd, wp, yd, y, cd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, ws, 1 << 16, b, xd, x));
    if (dir == 2)
        TH_OK(cudnnConvolutionBackwardFilter(H, a, xd, x, yd, y, cd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, ws, 1 << 16, b, wd, wp));
    if (dir == 3) {
        cudnnTensorDescriptor_t bd = tens4(CUDNN_TENSOR_NCHW, t, 1, oc, 1, 1);
        void *bias = th_alloc(H, (size_t)oc * es), *z = th_alloc(H, yb);
        cudnnActivationDescriptor_t act;
        TH_OK(cudnnCreateActivationDescriptor(&act));
        TH_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
        TH_OK(cudnnConvolutionBiasActivationForward(H, a, xd, x, wd, wp, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, ws, 1 << 16, b, yd,
                                                    z, bd, bias, act, yd, y));
        cudnnDestroyActivationDescriptor(act);
        cudnnDestroyTensorDescriptor(bd);
        th_free(H, bias);
        th_free(H, z);
    }
    th_free(H, x); th_free(H, wp); th_free(H, y); th_free(H, ws);
    cudnnDestroyTensorDescriptor(yd);
    if (!xs) cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
}

static int child(void)
{
    H = th_create_handle();
    const cudnnTensorFormat_t NCHW = CUDNN_TENSOR_NCHW, NHWC = CUDNN_TENSOR_NHWC;
    const cudnnDataType_t F = CUDNN_DATA_FLOAT;
    /* 1: square problem with groups and stride -> flags */
    conv2d(0, NCHW, F, CUDNN_DEFAULT_MATH, 2, 4, 9, 7, 6, 3, 3, 1, 1, 2, 2, 1, 1, 2, NULL);
    /* 2: backward data with dilation -> --dilation */
    conv2d(1, NCHW, F, CUDNN_DEFAULT_MATH, 1, 3, 8, 8, 5, 3, 3, 2, 2, 1, 1, 2, 2, 1, NULL);
    /* 3: backward filter, non-square filter, padding and stride -> descriptor */
    conv2d(2, NCHW, F, CUDNN_DEFAULT_MATH, 2, 4, 9, 7, 6, 3, 1, 1, 0, 2, 1, 1, 1, 1, NULL);
    /* 4: NHWC, TF32 allowed -> --type tf32 --layout nhwc */
    conv2d(0, NHWC, F, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, 1, 8, 6, 6, 4, 1, 1, 0, 0, 1, 1, 1, 1, 1, NULL);
    /* 5: DOUBLE -> fp64 */
    conv2d(0, NCHW, CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH, 1, 2, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, NULL);
    /* 6: strided x (rows padded to 8) -> not expressible */
    cudnnTensorDescriptor_t xs;
    TH_OK(cudnnCreateTensorDescriptor(&xs));
    TH_OK(cudnnSetTensor4dDescriptorEx(xs, F, 1, 2, 5, 5, 2 * 5 * 8, 5 * 8, 8, 1));
    conv2d(0, NCHW, F, CUDNN_DEFAULT_MATH, 1, 2, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, xs);
    cudnnDestroyTensorDescriptor(xs);
    /* 7: the first call again (printed twice with =1, once with =2) */
    conv2d(0, NCHW, F, CUDNN_DEFAULT_MATH, 2, 4, 9, 7, 6, 3, 3, 1, 1, 2, 2, 1, 1, 2, NULL);
    /* 8: bias + activation forward */
    conv2d(3, NCHW, F, CUDNN_DEFAULT_MATH, 1, 4, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, NULL);
    /* 9: 3-D convolution -> not expressible */
    {
        cudnnTensorDescriptor_t xd, yd;
        cudnnFilterDescriptor_t wd;
        cudnnConvolutionDescriptor_t cd;
        int xdim[5] = {1, 2, 4, 4, 4}, xst[5] = {128, 64, 16, 4, 1}, wdim[5] = {3, 2, 3, 3, 3};
        int pad[3] = {1, 1, 1}, str[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, ydim[5], yst[5];
        TH_OK(cudnnCreateTensorDescriptor(&xd));
        TH_OK(cudnnSetTensorNdDescriptor(xd, F, 5, xdim, xst));
        TH_OK(cudnnCreateFilterDescriptor(&wd));
        TH_OK(cudnnSetFilterNdDescriptor(wd, F, NCHW, 5, wdim));
        TH_OK(cudnnCreateConvolutionDescriptor(&cd));
        TH_OK(cudnnSetConvolutionNdDescriptor(cd, 3, pad, str, dil, CUDNN_CROSS_CORRELATION, F));
        TH_OK(cudnnGetConvolutionNdForwardOutputDim(cd, xd, wd, 5, ydim));
        yst[4] = 1;
        for (int i = 3; i >= 0; i--) yst[i] = yst[i + 1] * ydim[i + 1];
        TH_OK(cudnnCreateTensorDescriptor(&yd));
        TH_OK(cudnnSetTensorNdDescriptor(yd, F, 5, ydim, yst));
        void *x = th_alloc(H, 128 * 4), *w = th_alloc(H, 162 * 4), *y = th_alloc(H, (size_t)yst[0] * ydim[0] * 4);
        float one = 1, zero = 0;
        TH_OK(cudnnConvolutionForward(H, &one, xd, x, wd, w, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &zero, yd, y));
        th_free(H, x); th_free(H, w); th_free(H, y);
        cudnnDestroyTensorDescriptor(xd);
        cudnnDestroyTensorDescriptor(yd);
        cudnnDestroyFilterDescriptor(wd);
        cudnnDestroyConvolutionDescriptor(cd);
    }
    /* 10: x NHWC with NCHW filter and y -> not expressible (mixed layouts) */
    TH_OK(cudnnCreateTensorDescriptor(&xs));
    TH_OK(cudnnSetTensor4dDescriptor(xs, NHWC, F, 1, 4, 5, 5));
    conv2d(0, NCHW, F, CUDNN_DEFAULT_MATH, 1, 4, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, xs);
    cudnnDestroyTensorDescriptor(xs);
    /* 11: one input channel: an NCHW x is also NHWC memory -> expressible as nhwc with an NHWC filter */
    TH_OK(cudnnCreateTensorDescriptor(&xs));
    TH_OK(cudnnSetTensor4dDescriptor(xs, NCHW, F, 1, 1, 6, 6));
    conv2d(0, NHWC, F, CUDNN_DEFAULT_MATH, 1, 1, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, xs);
    cudnnDestroyTensorDescriptor(xs);
    /* a call that fails validation prints nothing */
    float one = 1, zero = 0;
    TH_STATUS(cudnnConvolutionForward(H, &one, NULL, NULL, NULL, NULL, NULL, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &zero,
                                      NULL, NULL),
              CUDNN_STATUS_BAD_PARAM);
    cudnnDestroy(H);
    return th_finish();
}

/* ------------------------------------------------------------------ parent */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

static int count(const char *hay, const char *needle)
{
    int c = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) c++;
    return c;
}

static int run_cmd(const char *cmd)
{
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static const char *const EXPECT[] = {
    "FreeDNN bench: cudnnConvolutionForward: freednn bench -b 2 -c 4 -h 9 -w 7 -k 6 -r 3 -s 2 -p 1 --groups 2 --type fp32 "
    "--layout nchw --dir fwd --algo 0 --backend cpu\n",
    "FreeDNN bench: cudnnConvolutionBackwardData: freednn bench -b 1 -c 3 -h 8 -w 8 -k 5 -r 3 -s 1 -p 2 --dilation 2 --type fp32 "
    "--layout nchw --dir bwd-data --algo 0 --backend cpu\n",
    "FreeDNN bench: cudnnConvolutionBackwardFilter: freednn bench g1mb2ic4ih9iw7oc6kh3kw1sh2sw1ph1pw0dh0dw0 --type fp32 "
    "--layout nchw --dir bwd-filter --algo 0 --backend cpu\n",
    "FreeDNN bench: cudnnConvolutionForward: freednn bench -b 1 -c 8 -h 6 -w 6 -k 4 -r 1 -s 1 -p 0 --type tf32 --layout nhwc "
    "--dir fwd --algo 0 --backend cpu\n",
    "FreeDNN bench: cudnnConvolutionForward: freednn bench -b 1 -c 2 -h 5 -w 5 -k 3 -r 3 -s 1 -p 1 --type fp64 --layout nchw "
    "--dir fwd --algo 0 --backend cpu\n",
    "FreeDNN bench: cudnnConvolutionForward: not expressible as a freednn bench command: x tensor is strided, not packed NCHW or NHWC\n",
    "FreeDNN bench: cudnnConvolutionBiasActivationForward: freednn bench -b 1 -c 4 -h 6 -w 6 -k 4 -r 3 -s 1 -p 1 --type fp32 "
    "--layout nchw --dir fwd --algo 0 --backend cpu\n",
    "FreeDNN bench: cudnnConvolutionForward: not expressible as a freednn bench command: 3-D convolution (the bench runs 2-D "
    "problems only)\n",
    "FreeDNN bench: cudnnConvolutionForward: not expressible as a freednn bench command: mixed layouts (x NHWC, y NCHW, "
    "filter NCHW; the bench uses one --layout for all)\n",
    "FreeDNN bench: cudnnConvolutionForward: freednn bench -b 1 -c 1 -h 6 -w 6 -k 4 -r 3 -s 1 -p 1 --type fp32 --layout nhwc "
    "--dir fwd --algo 0 --backend cpu\n",
};
#define NEXPECT (int)(sizeof EXPECT / sizeof EXPECT[0])

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child")) return child();
    const char *be = getenv("FREEDNN_BACKEND");
    if (be && strcmp(be, "cpu") != 0) {
        printf("SKIP: the expected lines name the cpu backend\n");
        return 77;
    }
    char dir[] = "/tmp/fdnn_logbench_XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    char cmd[4096], err[512], dest[512];
    snprintf(err, sizeof err, "%s/err", dir);
    snprintf(dest, sizeof dest, "%s/dest", dir);

    /* =1: every call on stderr, in call order */
    snprintf(cmd, sizeof cmd, "env -u CUDNN_LOGDEST_DBG FREEDNN_BACKEND=cpu FREEDNN_LOG_BENCH=1 '%s' child > /dev/null 2> '%s'", argv[0], err);
    TH_CHECK(run_cmd(cmd) == 0, "child with FREEDNN_LOG_BENCH=1 failed");
    char *s = slurp(err);
    TH_CHECK(s != NULL, "no stderr file");
    if (s) {
        const char *p = s;
        for (int i = 0; i < NEXPECT; i++) {
            const char *q = strstr(p, EXPECT[i]);
            TH_CHECK(q != NULL, "line %d missing or out of order: %s--- got:\n%s", i, EXPECT[i], s);
            if (q) p = q + strlen(EXPECT[i]);
        }
        TH_CHECK(count(s, EXPECT[0]) == 2, "the repeated call must be printed twice with =1 (got %d)", count(s, EXPECT[0]));
        TH_CHECK(count(s, "FreeDNN bench: ") == NEXPECT + 1, "%d lines printed, want %d (a failed call prints nothing)",
                 count(s, "FreeDNN bench: "), NEXPECT + 1);
        free(s);
    }

    /* =2 with CUDNN_LOGDEST_DBG=file: each distinct command once, in the file, nothing on stderr */
    snprintf(cmd, sizeof cmd, "FREEDNN_BACKEND=cpu FREEDNN_LOG_BENCH=2 CUDNN_LOGDEST_DBG='%s' '%s' child > /dev/null 2> '%s'", dest,
             argv[0], err);
    TH_CHECK(run_cmd(cmd) == 0, "child with FREEDNN_LOG_BENCH=2 failed");
    s = slurp(dest);
    TH_CHECK(s != NULL, "CUDNN_LOGDEST_DBG file not written");
    if (s) {
        for (int i = 0; i < NEXPECT; i++) TH_CHECK(count(s, EXPECT[i]) == 1, "=2: line %d printed %d times", i, count(s, EXPECT[i]));
        TH_CHECK(count(s, "FreeDNN bench: ") == NEXPECT, "=2: %d lines, want %d", count(s, "FreeDNN bench: "), NEXPECT);
        free(s);
    }
    s = slurp(err);
    TH_CHECK(s && !strstr(s, "FreeDNN bench"), "with a CUDNN_LOGDEST_DBG file nothing goes to stderr");
    free(s);

    /* unset or 0: silent */
    snprintf(cmd, sizeof cmd, "FREEDNN_BACKEND=cpu FREEDNN_LOG_BENCH=0 '%s' child > /dev/null 2> '%s'", argv[0], err);
    TH_CHECK(run_cmd(cmd) == 0, "child with FREEDNN_LOG_BENCH=0 failed");
    s = slurp(err);
    TH_CHECK(s && !strstr(s, "FreeDNN bench"), "FREEDNN_LOG_BENCH=0 must print nothing");
    free(s);

    /* the printed commands replay through the real bench (flag form and descriptor form) */
#ifdef FDNN_TEST_BENCH
    const int replay[] = {0, 1, 2, 3, 9};
    for (size_t i = 0; i < sizeof replay / sizeof replay[0]; i++) {
        const char *line = strstr(EXPECT[replay[i]], "freednn bench ") + strlen("freednn bench ");
        char args[512];
        snprintf(args, sizeof args, "%.*s", (int)(strcspn(line, "\n")), line);
        snprintf(cmd, sizeof cmd, "'%s' bench -n 1 --warmup 0 --verify %s > '%s' 2>&1", FDNN_TEST_BENCH, args, err);
        int rc = run_cmd(cmd);
        s = slurp(err);
        TH_CHECK(rc == 0 && s && strstr(s, "Conv") && strstr(s, ", ok)") && !strstr(s, "NOT_SUPPORTED"),
                 "replaying '%s' failed (rc %d):\n%s", args, rc, s ? s : "");
        free(s);
    }
#else
    printf("note: FDNN_TEST_BENCH not defined (freednn not built); the replay through the bench is skipped\n");
#endif
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (run_cmd(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return th_finish();
}
