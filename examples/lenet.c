/* lenet: trains a small LeNet-style convolutional network with nothing but the cuDNN API, on a
 * synthetic digits dataset this program draws itself, and prints the loss falling.
 *
 *   input 1x16x16 -> conv 5x5 (8, pad 2) -> bias -> ReLU -> max pool 2x2
 *                 -> conv 5x5 (16)       -> bias -> ReLU -> max pool 2x2
 *                 -> fully connected 64 -> 10, as a convolution whose 2x2 filter covers its whole input
 *                 -> bias -> log-softmax, cross-entropy loss
 *
 * Forward: cudnnConvolutionForward, cudnnAddTensor (bias), cudnnActivationForward,
 * cudnnPoolingForward, cudnnSoftmaxForward (CUDNN_SOFTMAX_LOG). Backward: cudnnSoftmaxBackward,
 * cudnnConvolutionBackwardBias / BackwardFilter / BackwardData, cudnnPoolingBackward,
 * cudnnActivationBackward. SGD update: cudnnAddTensor(alpha = -lr, dW, beta = 1, W).
 * The host only draws the data, writes the one-hot loss gradient and reads the log-probabilities.
 *
 * Runs on either FreeDNN backend (FREEDNN_BACKEND=cpu|cuda): on the CUDA backend every buffer is
 * device memory (cudaMalloc; compiled in when built with -DLENET_HAVE_CUDART and the CUDA
 * headers, as examples/CMakeLists.txt does when FreeDNN has its CUDA backend).
 *
 * Exit status: 0 when the loss fell by at least half and the training accuracy is >= 80%,
 * 1 otherwise, 77 when the requested backend cannot be used (a test skip).
 *   build: cc lenet.c -Iinclude -Llib -lcudnn -lm
 *   run:   ./lenet [steps]                (default 200) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cudnn.h"
#include "freednn.h"

#if defined(LENET_HAVE_CUDART) && defined(__has_include)
#if __has_include(<cuda_runtime_api.h>)
#include <cuda_runtime_api.h>
#define LENET_CUDA 1
#endif
#endif

#define CLASSES 10
#define IMG 16
#define NTRAIN 640
#define NTEST 320
#define BATCH 32

static int on_gpu = 0;

/* ------------------------------------------------------------ error handling */
static cudnnHandle_t handle;
static void fail_status(const char *what, cudnnStatus_t s)
{
    char msg[512] = "";
    cudnnGetLastErrorString(msg, sizeof msg);
    fprintf(stderr, "lenet: %s: %s (%s)\n", what, cudnnGetErrorString(s), msg);
    if (s == CUDNN_STATUS_NOT_SUPPORTED && on_gpu) {
        fprintf(stderr, "lenet: skipped: this FreeDNN build lacks a function on the CUDA backend\n");
        exit(77);
    }
    exit(1);
}
#define CK(call)                                      \
    do {                                              \
        cudnnStatus_t s_ = (call);                    \
        if (s_ != CUDNN_STATUS_SUCCESS) fail_status(#call, s_); \
    } while (0)

/* ------------------------------------------------------------ buffers on either backend */
static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0) bytes = 4;
#ifdef LENET_CUDA
    if (on_gpu) {
        if (cudaMalloc(&p, bytes) != cudaSuccess) { fprintf(stderr, "lenet: cudaMalloc(%zu) failed\n", bytes); exit(1); }
        if (cudaMemset(p, 0, bytes) != cudaSuccess) { fprintf(stderr, "lenet: cudaMemset failed\n"); exit(1); }
        return p;
    }
#endif
    p = calloc(1, bytes);
    if (!p) { fprintf(stderr, "lenet: out of memory\n"); exit(1); }
    return p;
}
static void dev_free(void *p)
{
#ifdef LENET_CUDA
    if (on_gpu) { cudaFree(p); return; }
#endif
    free(p);
}
static void upload(void *dst, const void *src, size_t bytes)
{
#ifdef LENET_CUDA
    if (on_gpu) {
        if (cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess) { fprintf(stderr, "lenet: upload failed\n"); exit(1); }
        return;
    }
#endif
    memcpy(dst, src, bytes);
}
static void download(void *dst, const void *src, size_t bytes)
{
#ifdef LENET_CUDA
    if (on_gpu) {
        if (cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) { fprintf(stderr, "lenet: download failed\n"); exit(1); }
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

/* ------------------------------------------------------------ seeded random numbers */
static unsigned long long rng = 0x2545F4914F6CDD1Dull;
static double urand(void) /* [0, 1) */
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}
static double nrand(void)
{
    double u = urand() + 1e-12, v = urand();
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* ------------------------------------------------------------ synthetic digits */
/* Each class is a template of 3 strokes (thick line segments) at seeded positions; a sample is
 * its template shifted by up to one pixel, with a random stroke intensity and Gaussian noise. */
static float templ[CLASSES][IMG][IMG];

static void draw_segment(float img[IMG][IMG], double x0, double y0, double x1, double y1)
{
    for (int i = 0; i < IMG; i++)
        for (int j = 0; j < IMG; j++) {
            double dx = x1 - x0, dy = y1 - y0, l2 = dx * dx + dy * dy;
            double t = l2 > 0 ? ((j - x0) * dx + (i - y0) * dy) / l2 : 0;
            if (t < 0) t = 0;
            if (t > 1) t = 1;
            double px = x0 + t * dx - j, py = y0 + t * dy - i, d = sqrt(px * px + py * py);
            double v = d < 0.8 ? 1.0 : d < 1.6 ? 1.6 - d : 0.0;
            if (v > img[i][j]) img[i][j] = (float)v;
        }
}

static void make_templates(void)
{
    memset(templ, 0, sizeof templ);
    for (int c = 0; c < CLASSES; c++)
        for (int s = 0; s < 3; s++)
            draw_segment(templ[c], 2 + 11 * urand(), 2 + 11 * urand(), 2 + 11 * urand(), 2 + 11 * urand());
}

static void make_sample(float *img, int cls)
{
    int sx = (int)(urand() * 3) - 1, sy = (int)(urand() * 3) - 1;
    double gain = 0.7 + 0.6 * urand();
    for (int i = 0; i < IMG; i++)
        for (int j = 0; j < IMG; j++) {
            int ti = i - sy, tj = j - sx;
            double v = ti >= 0 && ti < IMG && tj >= 0 && tj < IMG ? templ[cls][ti][tj] : 0.0;
            img[i * IMG + j] = (float)(gain * v + 0.25 * nrand() - 0.2);
        }
}

/* ------------------------------------------------------------ layers */
typedef struct {
    int k, c, r, pad;                      /* filters, input channels, filter size, padding */
    cudnnFilterDescriptor_t wdesc;
    cudnnTensorDescriptor_t wtens, bdesc;  /* the filter as a tensor (for the update), the bias */
    cudnnConvolutionDescriptor_t conv;
    cudnnTensorDescriptor_t in, out;       /* input and conv output descriptors */
    int oh;
    float *w, *b, *dw, *db;                /* backend buffers */
    float *z, *dz;                         /* conv + bias output and its gradient */
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwd_data;
    cudnnConvolutionBwdFilterAlgo_t bwd_filter;
} conv_layer;

static size_t ws_size = 0;

static void conv_init(conv_layer *L, cudnnTensorDescriptor_t in, int n, int c, int h, int k, int r, int pad)
{
    L->k = k; L->c = c; L->r = r; L->pad = pad; L->in = in;
    CK(cudnnCreateFilterDescriptor(&L->wdesc));
    CK(cudnnSetFilter4dDescriptor(L->wdesc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, k, c, r, r));
    CK(cudnnCreateTensorDescriptor(&L->wtens));
    CK(cudnnSetTensor4dDescriptor(L->wtens, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, k, c, r, r));
    CK(cudnnCreateTensorDescriptor(&L->bdesc));
    CK(cudnnSetTensor4dDescriptor(L->bdesc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, k, 1, 1));
    CK(cudnnCreateConvolutionDescriptor(&L->conv));
    CK(cudnnSetConvolution2dDescriptor(L->conv, pad, pad, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    int on, oc, oh, ow;
    CK(cudnnGetConvolution2dForwardOutputDim(L->conv, in, L->wdesc, &on, &oc, &oh, &ow));
    L->oh = oh;
    CK(cudnnCreateTensorDescriptor(&L->out));
    CK(cudnnSetTensor4dDescriptor(L->out, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, oc, oh, ow));
    (void)n; (void)h;

    /* the preferred algorithm of each direction, as the heuristics list them */
    int got = 0;
    size_t s;
    cudnnConvolutionFwdAlgoPerf_t pf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    CK(cudnnGetConvolutionForwardAlgorithm_v7(handle, in, L->wdesc, L->conv, L->out, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, pf));
    if (got < 1 || pf[0].status != CUDNN_STATUS_SUCCESS) fail_status("no forward algorithm", CUDNN_STATUS_NOT_SUPPORTED);
    L->fwd = pf[0].algo;
    CK(cudnnGetConvolutionForwardWorkspaceSize(handle, in, L->wdesc, L->conv, L->out, L->fwd, &s));
    if (s > ws_size) ws_size = s;
    cudnnConvolutionBwdDataAlgoPerf_t pd[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    CK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, L->wdesc, L->out, L->conv, in, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, pd));
    if (got < 1 || pd[0].status != CUDNN_STATUS_SUCCESS) fail_status("no backward-data algorithm", CUDNN_STATUS_NOT_SUPPORTED);
    L->bwd_data = pd[0].algo;
    CK(cudnnGetConvolutionBackwardDataWorkspaceSize(handle, L->wdesc, L->out, L->conv, in, L->bwd_data, &s));
    if (s > ws_size) ws_size = s;
    cudnnConvolutionBwdFilterAlgoPerf_t pw[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    CK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, in, L->out, L->conv, L->wdesc, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, pw));
    if (got < 1 || pw[0].status != CUDNN_STATUS_SUCCESS) fail_status("no backward-filter algorithm", CUDNN_STATUS_NOT_SUPPORTED);
    L->bwd_filter = pw[0].algo;
    CK(cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, in, L->out, L->conv, L->wdesc, L->bwd_filter, &s));
    if (s > ws_size) ws_size = s;

    /* He-initialised weights, zero biases */
    size_t nw = (size_t)k * c * r * r;
    float *hw = malloc(nw * sizeof(float));
    double sd = sqrt(2.0 / (c * r * r));
    for (size_t i = 0; i < nw; i++) hw[i] = (float)(sd * nrand());
    L->w = dev_alloc(nw * sizeof(float));
    upload(L->w, hw, nw * sizeof(float));
    free(hw);
    L->dw = dev_alloc(nw * sizeof(float));
    L->b = dev_alloc((size_t)k * sizeof(float));
    L->db = dev_alloc((size_t)k * sizeof(float));
    L->z = dev_alloc((size_t)on * oc * oh * ow * sizeof(float));
    L->dz = dev_alloc((size_t)on * oc * oh * ow * sizeof(float));
}

static void conv_free(conv_layer *L)
{
    dev_free(L->w); dev_free(L->dw); dev_free(L->b); dev_free(L->db); dev_free(L->z); dev_free(L->dz);
    cudnnDestroyFilterDescriptor(L->wdesc);
    cudnnDestroyTensorDescriptor(L->wtens);
    cudnnDestroyTensorDescriptor(L->bdesc);
    cudnnDestroyConvolutionDescriptor(L->conv);
    cudnnDestroyTensorDescriptor(L->out);
}

static const float one = 1.0f, zero = 0.0f;
static void *ws = NULL;

static void conv_forward(conv_layer *L, const float *x)
{
    CK(cudnnConvolutionForward(handle, &one, L->in, x, L->wdesc, L->w, L->conv, L->fwd, ws, ws_size, &zero, L->out, L->z));
    CK(cudnnAddTensor(handle, &one, L->bdesc, L->b, &one, L->out, L->z));
}

/* from dz: the bias and filter gradients, and dx when wanted */
static void conv_backward(conv_layer *L, const float *x, float *dx)
{
    CK(cudnnConvolutionBackwardBias(handle, &one, L->out, L->dz, &zero, L->bdesc, L->db));
    CK(cudnnConvolutionBackwardFilter(handle, &one, L->in, x, L->out, L->dz, L->conv, L->bwd_filter, ws, ws_size, &zero, L->wdesc, L->dw));
    if (dx)
        CK(cudnnConvolutionBackwardData(handle, &one, L->wdesc, L->w, L->out, L->dz, L->conv, L->bwd_data, ws, ws_size, &zero, L->in, dx));
}

static void sgd(conv_layer *L, float lr)
{
    float a = -lr;
    CK(cudnnAddTensor(handle, &a, L->wtens, L->dw, &one, L->wtens, L->w));
    CK(cudnnAddTensor(handle, &a, L->bdesc, L->db, &one, L->bdesc, L->b));
}

static cudnnTensorDescriptor_t tensor(int n, int c, int h, int w)
{
    cudnnTensorDescriptor_t t;
    CK(cudnnCreateTensorDescriptor(&t));
    CK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
    return t;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 200;
    if (steps < 1) { fprintf(stderr, "usage: lenet [steps]\n"); return 2; }
    cudnnStatus_t st = cudnnCreate(&handle);
    if (st != CUDNN_STATUS_SUCCESS) {
        char msg[512] = "";
        cudnnGetLastErrorString(msg, sizeof msg);
        fprintf(stderr, "lenet: skipped: cudnnCreate: %s (%s)\n", cudnnGetErrorString(st), msg);
        return 77;
    }
    const char *backend = freednnGetBackendName(handle);
    on_gpu = strcmp(backend, "cuda") == 0;
#ifndef LENET_CUDA
    if (on_gpu) {
        fprintf(stderr, "lenet: skipped: the CUDA backend needs device buffers, but lenet was built without the CUDA runtime\n");
        cudnnDestroy(handle);
        return 77;
    }
#endif
    printf("lenet on the %s backend: %d steps of SGD, batch %d, %d training images of %dx%d, %d classes\n", backend, steps,
           BATCH, NTRAIN, IMG, IMG, CLASSES);

    /* data */
    make_templates();
    float *train = malloc(sizeof(float) * NTRAIN * IMG * IMG), *test = malloc(sizeof(float) * NTEST * IMG * IMG);
    int *train_y = malloc(sizeof(int) * NTRAIN), *test_y = malloc(sizeof(int) * NTEST);
    for (int i = 0; i < NTRAIN; i++) { train_y[i] = i % CLASSES; make_sample(train + (size_t)i * IMG * IMG, train_y[i]); }
    for (int i = 0; i < NTEST; i++) { test_y[i] = (i * 7) % CLASSES; make_sample(test + (size_t)i * IMG * IMG, test_y[i]); }

    /* network */
    cudnnTensorDescriptor_t xdesc = tensor(BATCH, 1, IMG, IMG);
    conv_layer c1, c2, fc;
    conv_init(&c1, xdesc, BATCH, 1, IMG, 8, 5, 2);               /* 8 x 16 x 16 */
    cudnnTensorDescriptor_t p1desc = tensor(BATCH, 8, 8, 8);     /* after pooling */
    conv_init(&c2, p1desc, BATCH, 8, 8, 16, 5, 0);               /* 16 x 4 x 4 */
    cudnnTensorDescriptor_t p2desc = tensor(BATCH, 16, 2, 2);
    conv_init(&fc, p2desc, BATCH, 16, 2, CLASSES, 2, 0);         /* 10 x 1 x 1 */
    ws = dev_alloc(ws_size);

    cudnnActivationDescriptor_t relu;
    CK(cudnnCreateActivationDescriptor(&relu));
    CK(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    cudnnPoolingDescriptor_t pool;
    CK(cudnnCreatePoolingDescriptor(&pool));
    CK(cudnnSetPooling2dDescriptor(pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2));

    size_t n1 = (size_t)BATCH * 8 * 16 * 16, np1 = (size_t)BATCH * 8 * 8 * 8, n2 = (size_t)BATCH * 16 * 4 * 4,
           np2 = (size_t)BATCH * 16 * 2 * 2, nout = (size_t)BATCH * CLASSES;
    float *x = dev_alloc(sizeof(float) * BATCH * IMG * IMG);
    float *a1 = dev_alloc(sizeof(float) * n1), *da1 = dev_alloc(sizeof(float) * n1);
    float *p1 = dev_alloc(sizeof(float) * np1), *dp1 = dev_alloc(sizeof(float) * np1);
    float *a2 = dev_alloc(sizeof(float) * n2), *da2 = dev_alloc(sizeof(float) * n2);
    float *p2 = dev_alloc(sizeof(float) * np2), *dp2 = dev_alloc(sizeof(float) * np2);
    float *logp = dev_alloc(sizeof(float) * nout), *dlogp = dev_alloc(sizeof(float) * nout);
    float hbatch[BATCH * IMG * IMG], hlogp[BATCH * CLASSES], hd[BATCH * CLASSES];
    int labels[BATCH];

    /* forward of one batch up to the log-probabilities; returns the mean loss, counts hits */
#define FORWARD()                                                                                              \
    do {                                                                                                       \
        conv_forward(&c1, x);                                                                                  \
        CK(cudnnActivationForward(handle, relu, &one, c1.out, c1.z, &zero, c1.out, a1));                      \
        CK(cudnnPoolingForward(handle, pool, &one, c1.out, a1, &zero, p1desc, p1));                           \
        conv_forward(&c2, p1);                                                                                 \
        CK(cudnnActivationForward(handle, relu, &one, c2.out, c2.z, &zero, c2.out, a2));                      \
        CK(cudnnPoolingForward(handle, pool, &one, c2.out, a2, &zero, p2desc, p2));                           \
        conv_forward(&fc, p2);                                                                                 \
        CK(cudnnSoftmaxForward(handle, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &one, fc.out, fc.z, &zero, \
                               fc.out, logp));                                                                 \
        download(hlogp, logp, sizeof hlogp);                                                                   \
    } while (0)

    const float lr = 0.05f;
    double first_loss = -1, last_loss = 0, window = 0;
    int wn = 0, every = steps >= 10 ? steps / 10 : 1;
    for (int step = 0; step < steps; step++) {
        for (int b = 0; b < BATCH; b++) {
            int i = (int)(urand() * NTRAIN);
            labels[b] = train_y[i];
            memcpy(hbatch + (size_t)b * IMG * IMG, train + (size_t)i * IMG * IMG, sizeof(float) * IMG * IMG);
        }
        upload(x, hbatch, sizeof hbatch);
        FORWARD();
        double loss = 0;
        for (int b = 0; b < BATCH; b++) loss -= hlogp[b * CLASSES + labels[b]];
        loss /= BATCH;
        if (!isfinite(loss)) { fprintf(stderr, "lenet: loss is not finite at step %d\n", step); return 1; }
        if (first_loss < 0) first_loss = loss;
        window += loss; wn++;

        /* d(loss)/d(log p) = -1/B at the label: cudnnSoftmaxBackward (LOG) turns it into p - onehot */
        memset(hd, 0, sizeof hd);
        for (int b = 0; b < BATCH; b++) hd[b * CLASSES + labels[b]] = -1.0f / BATCH;
        upload(dlogp, hd, sizeof hd);
        CK(cudnnSoftmaxBackward(handle, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &one, fc.out, logp, fc.out, dlogp, &zero,
                                fc.out, fc.dz));
        conv_backward(&fc, p2, dp2);
        CK(cudnnPoolingBackward(handle, pool, &one, p2desc, p2, p2desc, dp2, c2.out, a2, &zero, c2.out, da2));
        CK(cudnnActivationBackward(handle, relu, &one, c2.out, a2, c2.out, da2, c2.out, c2.z, &zero, c2.out, c2.dz));
        conv_backward(&c2, p1, dp1);
        CK(cudnnPoolingBackward(handle, pool, &one, p1desc, p1, p1desc, dp1, c1.out, a1, &zero, c1.out, da1));
        CK(cudnnActivationBackward(handle, relu, &one, c1.out, a1, c1.out, da1, c1.out, c1.z, &zero, c1.out, c1.dz));
        conv_backward(&c1, x, NULL);
        sgd(&c1, lr);
        sgd(&c2, lr);
        sgd(&fc, lr);

        if ((step + 1) % every == 0 || step + 1 == steps) {
            last_loss = window / wn;
            printf("step %4d  loss %.4f\n", step + 1, last_loss);
            fflush(stdout);
            window = 0; wn = 0;
        }
    }

    /* accuracy over the whole training set and over held-out samples */
    double acc[2];
    for (int set = 0; set < 2; set++) {
        const float *data = set ? test : train;
        const int *ys = set ? test_y : train_y;
        int n = set ? NTEST : NTRAIN, hits = 0;
        for (int i0 = 0; i0 + BATCH <= n; i0 += BATCH) {
            upload(x, data + (size_t)i0 * IMG * IMG, sizeof hbatch);
            FORWARD();
            for (int b = 0; b < BATCH; b++) {
                int best = 0;
                for (int k = 1; k < CLASSES; k++)
                    if (hlogp[b * CLASSES + k] > hlogp[b * CLASSES + best]) best = k;
                hits += best == ys[i0 + b];
            }
        }
        acc[set] = (double)hits / (n / BATCH * BATCH);
    }
    printf("first loss %.4f, final loss %.4f; training accuracy %.1f%%, held-out accuracy %.1f%%\n", first_loss, last_loss,
           100 * acc[0], 100 * acc[1]);

    int ok = last_loss < 0.5 * first_loss && acc[0] >= 0.8;
    printf("%s\n", ok ? "PASSED: the loss fell by more than half and the training accuracy is at least 80%"
                      : "FAILED: the loss did not fall by half or the training accuracy is below 80%");

    dev_free(x); dev_free(a1); dev_free(da1); dev_free(p1); dev_free(dp1); dev_free(a2); dev_free(da2);
    dev_free(p2); dev_free(dp2); dev_free(logp); dev_free(dlogp); dev_free(ws);
    conv_free(&c1); conv_free(&c2); conv_free(&fc);
    cudnnDestroyTensorDescriptor(xdesc);
    cudnnDestroyTensorDescriptor(p1desc);
    cudnnDestroyTensorDescriptor(p2desc);
    cudnnDestroyActivationDescriptor(relu);
    cudnnDestroyPoolingDescriptor(pool);
    cudnnDestroy(handle);
    free(train); free(test); free(train_y); free(test_y);
    return ok ? 0 : 1;
}
