/* tensor_cores: which convolution algorithms run for a FP16 NCHW 32x64x224x224 input with 64
 * 3x3 filters (padding 1), and whether they use tensor-op math.
 * On a GPU it asks cudnnFindConvolutionForwardAlgorithm, which runs and times every algorithm.
 * On the CPU backend there are no tensor cores; running all algorithms on this 118 GFLOP
 * problem would take minutes, so it asks the heuristics (cudnnGetConvolutionForwardAlgorithm_v7)
 * instead, which run nothing. Uses only the cuDNN API.
 *   build: cc tensor_cores.c -I<prefix>/include -L<prefix>/lib -lcudnn
 *   run:   ./tensor_cores            (FREEDNN_BACKEND=cpu|cuda picks FreeDNN's backend) */
#include <stdio.h>
#include <string.h>
#include <cudnn.h>
#include <freednn.h>

#define CHECK(call)                                                                          \
    do {                                                                                     \
        cudnnStatus_t s_ = (call);                                                           \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                    \
            char msg_[512];                                                                  \
            cudnnGetLastErrorString(msg_, sizeof msg_);                                      \
            fprintf(stderr, "%s failed: %s\n  %s\n", #call, cudnnGetErrorString(s_), msg_);  \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

static const char *algo_name(cudnnConvolutionFwdAlgo_t a)
{
    static const char *n[] = { "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
                               "WINOGRAD", "WINOGRAD_NONFUSED" };
    return (unsigned)a < 8 ? n[a] : "?";
}

static const char *math_name(cudnnMathType_t m)
{
    switch (m) {
    case CUDNN_DEFAULT_MATH: return "DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH: return "FMA_MATH";
    default: return "?";
    }
}

int main(void)
{
    const int N = 32, C = 64, H = 224, W = 224, K = 64, R = 3, S = 3;
    cudnnHandle_t h;
    CHECK(cudnnCreate(&h));
    const char *backend = freednnGetBackendName(h);
    int on_gpu = strcmp(backend, "cuda") == 0;

    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CHECK(cudnnCreateTensorDescriptor(&xd));
    CHECK(cudnnCreateTensorDescriptor(&yd));
    CHECK(cudnnCreateFilterDescriptor(&wd));
    CHECK(cudnnCreateConvolutionDescriptor(&cd));
    CHECK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, N, C, H, W));
    CHECK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, K, C, R, S));
    /* FP16 data, FP32 accumulation; tensor-op math allowed */
    CHECK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH));
    int n, c, oh, ow;
    CHECK(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &n, &c, &oh, &ow));
    CHECK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, n, c, oh, ow));
    printf("FP16 NCHW convolution: x %dx%dx%dx%d, w %dx%dx%dx%d, pad 1 -> y %dx%dx%dx%d; backend %s\n", N, C, H, W, K,
           C, R, S, n, c, oh, ow, backend);

    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0;
    if (on_gpu) {
        printf("cudnnFindConvolutionForwardAlgorithm: runs and times every algorithm\n");
        CHECK(cudnnFindConvolutionForwardAlgorithm(h, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf));
    } else {
        printf("CPU backend: no tensor cores are used here (they exist only on NVIDIA GPUs).\n"
               "Timing every algorithm of this 118 GFLOP problem would take minutes on a CPU, so this asks\n"
               "cudnnGetConvolutionForwardAlgorithm_v7 (heuristics, nothing runs) instead of Find.\n");
        CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf));
    }
    printf("%-3s %-24s %-14s %10s %14s  %-32s %s\n", "#", "algorithm", "status", "time_ms", "workspace_B", "math",
           "tensor cores");
    int tc = 0;
    for (int i = 0; i < got; i++) {
        int uses_tc = on_gpu && perf[i].status == CUDNN_STATUS_SUCCESS &&
                      (perf[i].mathType == CUDNN_TENSOR_OP_MATH || perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
        tc += uses_tc;
        printf("%-3d %-24s %-14s %10.3f %14zu  %-32s %s\n", (int)perf[i].algo, algo_name(perf[i].algo),
               perf[i].status == CUDNN_STATUS_SUCCESS ? "runs" : cudnnGetErrorString(perf[i].status) + 13,
               on_gpu ? perf[i].time : -1.0, perf[i].memory, math_name(perf[i].mathType),
               perf[i].status != CUDNN_STATUS_SUCCESS ? "-" : uses_tc ? "yes" : "no");
    }
    if (on_gpu)
        printf("%d algorithm(s) use tensor-op math%s.\n", tc, tc ? "" : " (this GPU or build has none for FP16 here)");
    else
        printf("No tensor cores are used on the CPU backend; the math type column is what the algorithm would use on a GPU.\n");

    cudnnDestroyConvolutionDescriptor(cd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroy(h);
    return 0;
}
