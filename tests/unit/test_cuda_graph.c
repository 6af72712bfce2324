/* CUDA backend calls are capturable: a convolution forward, a bias add, a batch-norm
 * inference and a batch-norm training forward (which uses the handle's device scratch) are
 * captured into a CUDA graph on the handle's stream, the graph is replayed on new input, and
 * the result equals the same calls made directly, bit for bit. Exits 77 without a GPU. */
#include <stdlib.h>
#include <string.h>
#include "th.h"
#ifdef FDNN_TEST_HAVE_CUDA
#include <cuda_runtime_api.h>

static void run_chain(cudnnHandle_t h, cudnnTensorDescriptor_t xd, void *x, cudnnFilterDescriptor_t wd, void *w,
                      cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t yd, void *y, cudnnTensorDescriptor_t bd, void *b,
                      void *ws, size_t wsz, void *z, void *u, void *rm, void *rv)
{
    float one = 1, zero = 0;
    TH_OK(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, ws, wsz, &zero, yd, y));
    TH_OK(cudnnAddTensor(h, &one, bd, b, &one, yd, y));
    TH_OK(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, yd, y, yd, z, bd, b, b, b, b, 1e-5));
    TH_OK(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, yd, z, yd, u, bd, b, b, 0.5, rm, rv, 1e-5, NULL,
                                                 NULL));
}
#endif

int main(void)
{
    th_seed(7);
    cudnnHandle_t h = th_create_handle();
    if (!th_is_gpu(h)) {
        printf("skipped: CUDA graph capture needs the CUDA backend\n");
        cudnnDestroy(h);
        return TH_SKIP;
    }
#ifdef FDNN_TEST_HAVE_CUDA
    const int N = 2, C = 8, H = 12, W = 12, K = 16;
    cudnnTensorDescriptor_t xd, yd, bd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnnCreateTensorDescriptor(&xd);
    cudnnCreateTensorDescriptor(&yd);
    cudnnCreateTensorDescriptor(&bd);
    cudnnCreateFilterDescriptor(&wd);
    cudnnCreateConvolutionDescriptor(&cd);
    TH_OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
    TH_OK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, 3, 3));
    TH_OK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    TH_OK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, K, H, W));
    TH_OK(cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, K, 1, 1));
    size_t nx = (size_t)N * C * H * W, nw = (size_t)K * C * 9, ny = (size_t)N * K * H * W, wsz = 0;
    TH_OK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &wsz));
    float *hx = malloc(nx * 4), *hw = malloc(nw * 4), *hb = malloc(K * 4), *ref = malloc(ny * 4), *got = malloc(ny * 4);
    for (size_t i = 0; i < nw; i++) hw[i] = (float)th_randint(-2, 2);
    for (int i = 0; i < K; i++) hb[i] = (float)th_randint(1, 3);
    void *x = th_alloc(h, nx * 4), *w = th_alloc(h, nw * 4), *b = th_alloc(h, K * 4), *y = th_alloc(h, ny * 4), *z = th_alloc(h, ny * 4);
    void *ws = th_alloc(h, wsz ? wsz : 1);
    void *u = th_alloc(h, ny * 4), *rm = th_alloc(h, K * 4), *rv = th_alloc(h, K * 4);
    th_upload(h, rm, hb, K * 4);
    th_upload(h, rv, hb, K * 4);
    th_upload(h, w, hw, nw * 4);
    th_upload(h, b, hb, K * 4);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    TH_OK(cudnnSetStream(h, s));

    /* capture once */
    for (size_t i = 0; i < nx; i++) hx[i] = (float)th_randint(-3, 3);
    th_upload(h, x, hx, nx * 4);
    cudaGraph_t g;
    cudaGraphExec_t ge;
    TH_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess, "begin capture");
    run_chain(h, xd, x, wd, w, cd, yd, y, bd, b, ws, wsz, z, u, rm, rv);
    TH_CHECK(cudaStreamEndCapture(s, &g) == cudaSuccess, "end capture: %s", cudaGetErrorString(cudaGetLastError()));
    TH_CHECK(cudaGraphInstantiate(&ge, g, 0) == cudaSuccess, "instantiate");
    /* replay on new input, compare with the direct calls on the same input */
    for (int rep = 0; rep < 3; rep++) {
        for (size_t i = 0; i < nx; i++) hx[i] = (float)th_randint(-3, 3);
        th_upload(h, x, hx, nx * 4);
        cudaMemset(z, 0xff, ny * 4);
        cudaMemset(u, 0xff, ny * 4);
        TH_CHECK(cudaGraphLaunch(ge, s) == cudaSuccess, "graph launch");
        cudaStreamSynchronize(s);
        th_download(h, got, u, ny * 4);
        cudaMemset(z, 0xff, ny * 4);
        cudaMemset(u, 0xff, ny * 4);
        run_chain(h, xd, x, wd, w, cd, yd, y, bd, b, ws, wsz, z, u, rm, rv);
        cudaStreamSynchronize(s);
        th_download(h, ref, u, ny * 4);
        int nonzero = 0;
        for (size_t i = 0; i < ny; i++) nonzero |= ref[i] != 0;
        TH_CHECK(nonzero, "replay %d: reference output is not all zero", rep);
        TH_CHECK(memcmp(got, ref, ny * 4) == 0, "replay %d: graph result equals the direct calls bit for bit", rep);
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudnnSetStream(h, NULL);
    cudaStreamDestroy(s);
    th_free(h, x); th_free(h, w); th_free(h, b); th_free(h, y); th_free(h, z); th_free(h, ws);
    th_free(h, u); th_free(h, rm); th_free(h, rv);
    free(hx); free(hw); free(hb); free(ref); free(got);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyTensorDescriptor(bd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
#endif
    cudnnDestroy(h);
    return th_finish();
}
