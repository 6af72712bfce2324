/* FREEDNN_LOG_BENCH: for each convolution call an application makes, print the `freednn bench`
 * command line that replays it (same shape, type, layout, direction and algorithm).
 *
 *   FREEDNN_LOG_BENCH=1   one line per call
 *   FREEDNN_LOG_BENCH=2   one line per distinct command (the first call that needs it)
 *
 * The lines go to CUDNN_LOGDEST_DBG when it is set (stdout, stderr or a file name, appended),
 * otherwise to stderr. The variables are read once, at the first convolution call. Problems the
 * bench flags cannot express exactly (non-square filter, stride, padding or dilation) are
 * printed as a benchdnn-style descriptor the bench accepts; those it cannot run at all (3-D,
 * strided or vectorised tensors, type combinations it has no --type for) are reported as
 * "not expressible" with the reason. Only descriptors are read, never data pointers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include "../core/fdnn.h"

void fdnn_conv_logbench(cudnnHandle_t h, int dir, const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                        const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *y, int algo);

static int lb_mode = 0;          /* 0 off, 1 every call, 2 distinct commands */
static FILE *lb_dest = NULL;
static pthread_once_t lb_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lb_lock = PTHREAD_MUTEX_INITIALIZER;
#define LB_SEEN_MAX 4096
static unsigned long long lb_seen[LB_SEEN_MAX];
static int lb_nseen = 0;

static void lb_init(void)
{
    const char *e = getenv("FREEDNN_LOG_BENCH");
    if (!e || !*e || !strcmp(e, "0")) return;
    lb_mode = atoi(e) == 2 ? 2 : 1;
    const char *dest = getenv("CUDNN_LOGDEST_DBG");
    if (!dest || !*dest || !strcmp(dest, "stderr")) lb_dest = stderr;
    else if (!strcmp(dest, "stdout")) lb_dest = stdout;
    else {
        lb_dest = fopen(dest, "a");
        if (!lb_dest) lb_dest = stderr;
    }
}

/* The packed orders the tensor's memory matches: bit 0 NCHW, bit 1 NHWC, 0 when neither (strided).
 * Strides of size-1 dimensions do not matter (with C = 1 both orders hold). */
static int packed_layouts(const struct cudnnTensorStruct *t)
{
    if (t->nb_dims != 4 || t->vect != 1) return 0;
    static const int order[2][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}}; /* outermost to innermost */
    int mask = 0;
    for (int o = 0; o < 2; o++) {
        long long expect = 1;
        int ok = 1;
        for (int i = 3; i >= 0; i--) {
            int d = order[o][i];
            if (t->dim[d] > 1 && t->stride[d] != expect) ok = 0;
            expect *= t->dim[d];
        }
        if (ok) mask |= 1 << o;
    }
    return mask;
}

/* The bench --type for this configuration, or NULL with the reason in why. */
static const char *bench_type(int dir, const struct cudnnTensorStruct *x, const struct cudnnTensorStruct *y,
                              const struct cudnnConvolutionStruct *c, char *why, size_t n)
{
    cudnnDataType_t xt = x->dtype, yt = y->dtype, ct = c->compute_type;
    if (xt == CUDNN_DATA_FLOAT && yt == CUDNN_DATA_FLOAT && ct == CUDNN_DATA_FLOAT)
        return c->math_type == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ? "tf32" : "fp32";
    if (xt == CUDNN_DATA_DOUBLE && yt == CUDNN_DATA_DOUBLE && ct == CUDNN_DATA_DOUBLE) return "fp64";
    if (xt == CUDNN_DATA_HALF && yt == CUDNN_DATA_HALF && ct == CUDNN_DATA_FLOAT) return "fp16";
    if (xt == CUDNN_DATA_BFLOAT16 && yt == CUDNN_DATA_BFLOAT16 && ct == CUDNN_DATA_FLOAT) return "bf16";
    if (dir == 0 && xt == CUDNN_DATA_INT8 && yt == CUDNN_DATA_FLOAT && ct == CUDNN_DATA_INT32) return "int8";
    snprintf(why, n, "x type %s, y type %s, compute type %s has no --type (fp32 tf32 fp16 bf16 fp64 with FLOAT "
                     "accumulation for fp16/bf16, int8 forward to FLOAT)",
             fdnn_dtype_name(xt), fdnn_dtype_name(yt), fdnn_dtype_name(ct));
    return NULL;
}

static const char *const LB_DIR[] = {"fwd", "bwd-data", "bwd-filter"};
static const char *const LB_API[] = {"cudnnConvolutionForward", "cudnnConvolutionBackwardData",
                                     "cudnnConvolutionBackwardFilter"};

/* Builds the replay command (1) or the not-expressible reason (0) into out. */
static int describe(cudnnHandle_t h, int dir, const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                    const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *y, int algo, char *out,
                    size_t n)
{
    if (c->nb_spatial != 2 || x->nb_dims != 4)
        return snprintf(out, n, "%d-D convolution (the bench runs 2-D problems only)", c->nb_spatial), 0;
    if (x->vect != 1 || y->vect != 1 || w->vect != 1)
        return snprintf(out, n, "vectorised NCHW_VECT_C tensors (the bench uses NCHW or NHWC)"), 0;
    int mx = packed_layouts(x), my = packed_layouts(y);
    if (!mx || !my)
        return snprintf(out, n, "%s tensor is strided, not packed NCHW or NHWC", !mx ? (dir == 1 ? "dx" : "x") : (dir == 0 ? "y" : "dy")), 0;
    int mw = w->format == CUDNN_TENSOR_NHWC ? 2 : 1;
    if (!(mx & my & mw))
        return snprintf(out, n, "mixed layouts (x %s, y %s, filter %s; the bench uses one --layout for all)",
                        mx & 1 ? "NCHW" : "NHWC", my & 1 ? "NCHW" : "NHWC", mw == 2 ? "NHWC" : "NCHW"), 0;
    int lx = mw;
    char why[256];
    const char *type = bench_type(dir, x, y, c, why, sizeof why);
    if (!type) return snprintf(out, n, "%s", why), 0;
    int N = x->dim[0], C = x->dim[1], H = x->dim[2], W = x->dim[3], K = w->dim[0], R = w->dim[2], S = w->dim[3];
    int g = c->group_count;
    int square = R == S && c->stride[0] == c->stride[1] && c->pad[0] == c->pad[1] && c->dilation[0] == c->dilation[1];
    size_t m;
    if (square) {
        m = (size_t)snprintf(out, n, "freednn bench -b %d -c %d -h %d -w %d -k %d -r %d -s %d -p %d", N, C, H, W, K, R,
                             c->stride[0], c->pad[0]);
        if (c->dilation[0] != 1 && m < n) m += (size_t)snprintf(out + m, n - m, " --dilation %d", c->dilation[0]);
        if (g != 1 && m < n) m += (size_t)snprintf(out + m, n - m, " --groups %d", g);
    } else {
        m = (size_t)snprintf(out, n, "freednn bench g%dmb%dic%dih%diw%doc%dkh%dkw%dsh%dsw%dph%dpw%ddh%ddw%d", g, N, C, H, W,
                             K, R, S, c->stride[0], c->stride[1], c->pad[0], c->pad[1], c->dilation[0] - 1,
                             c->dilation[1] - 1);
    }
    if (m < n)
        m += (size_t)snprintf(out + m, n - m, " --type %s --layout %s --dir %s --algo %d --backend %s", type,
                              lx == 2 ? "nhwc" : "nchw", LB_DIR[dir], algo,
                              h->backend == FDNN_BACKEND_CUDA ? "cuda" : "cpu");
    if (c->mode == CUDNN_CONVOLUTION && m < n)
        snprintf(out + m, n - m, "   # the call used CUDNN_CONVOLUTION (flipped filter); the bench runs "
                                 "CUDNN_CROSS_CORRELATION, the same work");
    return 1;
}

static unsigned long long hash_str(const char *s)
{
    unsigned long long v = 1469598103934665603ull;
    for (; *s; s++) v = (v ^ (unsigned char)*s) * 1099511628211ull;
    return v;
}

void fdnn_conv_logbench(cudnnHandle_t h, int dir, const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                        const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *y, int algo)
{
    pthread_once(&lb_once, lb_init);
    if (!lb_mode || dir < 0 || dir > 2) return;
    char line[1024];
    int ok = describe(h, dir, x, w, c, y, algo, line, sizeof line);
    const char *api = fdnn_current_api();
    if (!api || strncmp(api, "cudnnConvolution", 16) != 0) api = LB_API[dir];
    pthread_mutex_lock(&lb_lock);
    int print = 1;
    if (lb_mode == 2) {
        char key[1200];
        snprintf(key, sizeof key, "%s|%s", api, line);
        unsigned long long v = hash_str(key);
        for (int i = 0; i < lb_nseen; i++)
            if (lb_seen[i] == v) { print = 0; break; }
        if (print && lb_nseen < LB_SEEN_MAX) lb_seen[lb_nseen++] = v;
    }
    if (print) {
        if (ok) fprintf(lb_dest, "FreeDNN bench: %s: %s\n", api, line);
        else fprintf(lb_dest, "FreeDNN bench: %s: not expressible as a freednn bench command: %s\n", api, line);
        fflush(lb_dest);
    }
    pthread_mutex_unlock(&lb_lock);
}
