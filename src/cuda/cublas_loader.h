/* cuBLAS, loaded lazily with dlopen on first use so that libcudnn.so.8 has no DT_NEEDED on
 * libcublas and still loads on machines without CUDA. <cublas_api.h> is included for the types
 * only; every function is called through the table below. */
#ifndef FDNN_CUBLAS_LOADER_H
#define FDNN_CUBLAS_LOADER_H
#include <cublas_api.h>
#ifdef __cplusplus
extern "C" {
#endif
#include "../core/fdnn.h"

typedef struct fdnn_cublas_api {
    cublasStatus_t (*create)(cublasHandle_t *);
    cublasStatus_t (*destroy)(cublasHandle_t);
    cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
    cublasStatus_t (*set_math_mode)(cublasHandle_t, cublasMath_t);
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *, const void *,
                              cudaDataType, int, const void *, cudaDataType, int, const void *, void *, cudaDataType, int,
                              cublasComputeType_t, cublasGemmAlgo_t);
    cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                                              const void *, cudaDataType, int, long long, const void *, cudaDataType, int, long long,
                                              const void *, void *, cudaDataType, int, long long, int, cublasComputeType_t,
                                              cublasGemmAlgo_t);
    cublasStatus_t (*gemm_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *, const void *const *,
                                      cudaDataType, int, const void *const *, cudaDataType, int, const void *, void *const *, cudaDataType, int,
                                      int, cublasComputeType_t, cublasGemmAlgo_t);
    cublasStatus_t (*set_workspace)(cublasHandle_t, void *, size_t); /* NULL when the library lacks it */
} fdnn_cublas_api;

/* The loaded table, or NULL with a FDNN_FAIL(NOT_SUPPORTED) message naming the library. */
const fdnn_cublas_api *fdnn_cublas(void);
/* 1 if cuBLAS can be loaded; else 0 with the reason in why (sets no error message, so it can
 * be called from applicable() checks). */
int fdnn_cublas_available(char *why, size_t why_n);
/* The handle's cuBLAS handle (created on first use, default math: no TF32), bound to the
 * handle's stream. On failure returns a status with a message. */
cudnnStatus_t fdnn_cublas_handle(cudnnHandle_t h, const fdnn_cublas_api **api, cublasHandle_t *out);
/* Destroys the handle's cuBLAS handle (fdnn_cuda_handle_free). */
void fdnn_cublas_handle_free(void *cublas_handle);
cudnnStatus_t fdnn_cublas_check(cublasStatus_t s, const char *what);

#ifdef __cplusplus
}
#endif
#endif
