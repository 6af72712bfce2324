/* Dense fp16 tensor-core rate of this GPU, the yardstick of issue #7's target 3: a cuBLAS
 * GEMM of M = N = K = 8192 (FP16 inputs and output, FP32 accumulation, tensor-op algorithm),
 * timed with CUDA events over a few launches after a warm-up. Prints one line:
 *   gemm_peak fp16 8192^3: <TFLOP/s> TFLOP/s (<ms> ms per GEMM)
 * and bf16 / TF32 lines the same way. Usage: gemm_peak [size] */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include <cublas_v2.h>

static int run(cublasHandle_t h, int n, cudaDataType_t ab, cudaDataType_t c, cublasComputeType_t comp, const char *name)
{
    size_t es = ab == CUDA_R_32F ? 4 : 2, cs = c == CUDA_R_32F ? 4 : 2;
    void *A = NULL, *B = NULL, *C = NULL;
    if (cudaMalloc(&A, (size_t)n * n * es) || cudaMalloc(&B, (size_t)n * n * es) || cudaMalloc(&C, (size_t)n * n * cs)) {
        fprintf(stderr, "gemm_peak: out of device memory\n");
        return 1;
    }
    cudaMemset(A, 0, (size_t)n * n * es);   /* zeros: the rate does not depend on the values */
    cudaMemset(B, 0, (size_t)n * n * es);
    float one = 1, zero = 0;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const int reps = 10;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < reps + 2 && st == CUBLAS_STATUS_SUCCESS; i++) {
        if (i == 2) cudaEventRecord(e0, 0);
        st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, ab, n, B, ab, n, &zero, C, c, n, comp,
                          CUBLAS_GEMM_DEFAULT);
    }
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (st != CUBLAS_STATUS_SUCCESS) printf("gemm_peak %s %d^3: cublasGemmEx failed (%d)\n", name, n, (int)st);
    else printf("gemm_peak %s %d^3: %.1f TFLOP/s (%.3f ms per GEMM)\n", name, n, 2.0 * n * n * (double)n / (ms / reps * 1e-3) * 1e-12,
                ms / reps);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(A); cudaFree(B); cudaFree(C);
    return st != CUBLAS_STATUS_SUCCESS;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8192;
    if (n < 256 || n > 32768) { fprintf(stderr, "usage: gemm_peak [size 256..32768]\n"); return 2; }
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "gemm_peak: cublasCreate failed\n"); return 1; }
    int rc = run(h, n, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, "fp16");
    rc |= run(h, n, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, "bf16");
    rc |= run(h, n, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, "tf32");
    rc |= run(h, n, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, "fp32");
    cublasDestroy(h);
    return rc;
}
