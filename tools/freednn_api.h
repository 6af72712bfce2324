/* The cuDNN entry points the freednn tools use, as a table of function pointers, so that the
 * same code drives FreeDNN (linked in) and a second cuDNN loaded with dlopen(RTLD_LOCAL)
 * (`freednn bench --vs-lib`). Status codes are compared by name through the library's own
 * cudnnGetErrorString, since cuDNN 9 renumbered them. */
#ifndef FREEDNN_TOOLS_API_H
#define FREEDNN_TOOLS_API_H
#include "cudnn.h"

typedef struct fdt_api {
    const char *label;        /* "FreeDNN" or the path given */
    void *dl;                 /* dlopen handle, NULL for the linked-in FreeDNN */
    size_t (*GetVersion)(void);
    const char *(*GetErrorString)(cudnnStatus_t);
    cudnnStatus_t (*Create)(cudnnHandle_t *);
    cudnnStatus_t (*Destroy)(cudnnHandle_t);
    cudnnStatus_t (*CreateTensorDescriptor)(cudnnTensorDescriptor_t *);
    cudnnStatus_t (*SetTensor4dDescriptor)(cudnnTensorDescriptor_t, cudnnTensorFormat_t, cudnnDataType_t, int, int, int, int);
    cudnnStatus_t (*DestroyTensorDescriptor)(cudnnTensorDescriptor_t);
    cudnnStatus_t (*CreateFilterDescriptor)(cudnnFilterDescriptor_t *);
    cudnnStatus_t (*SetFilter4dDescriptor)(cudnnFilterDescriptor_t, cudnnDataType_t, cudnnTensorFormat_t, int, int, int, int);
    cudnnStatus_t (*DestroyFilterDescriptor)(cudnnFilterDescriptor_t);
    cudnnStatus_t (*CreateConvolutionDescriptor)(cudnnConvolutionDescriptor_t *);
    cudnnStatus_t (*SetConvolution2dDescriptor)(cudnnConvolutionDescriptor_t, int, int, int, int, int, int,
                                                cudnnConvolutionMode_t, cudnnDataType_t);
    cudnnStatus_t (*SetConvolutionGroupCount)(cudnnConvolutionDescriptor_t, int);
    cudnnStatus_t (*SetConvolutionMathType)(cudnnConvolutionDescriptor_t, cudnnMathType_t);
    cudnnStatus_t (*DestroyConvolutionDescriptor)(cudnnConvolutionDescriptor_t);
    cudnnStatus_t (*GetFwdAlgo_v7)(cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
                                   cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, int *,
                                   cudnnConvolutionFwdAlgoPerf_t *);
    cudnnStatus_t (*GetBwdDataAlgo_v7)(cudnnHandle_t, cudnnFilterDescriptor_t, cudnnTensorDescriptor_t,
                                       cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, int *,
                                       cudnnConvolutionBwdDataAlgoPerf_t *);
    cudnnStatus_t (*GetBwdFilterAlgo_v7)(cudnnHandle_t, cudnnTensorDescriptor_t, cudnnTensorDescriptor_t,
                                         cudnnConvolutionDescriptor_t, cudnnFilterDescriptor_t, int, int *,
                                         cudnnConvolutionBwdFilterAlgoPerf_t *);
    cudnnStatus_t (*GetFwdWs)(cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
                              cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionFwdAlgo_t, size_t *);
    cudnnStatus_t (*GetBwdDataWs)(cudnnHandle_t, cudnnFilterDescriptor_t, cudnnTensorDescriptor_t,
                                  cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionBwdDataAlgo_t, size_t *);
    cudnnStatus_t (*GetBwdFilterWs)(cudnnHandle_t, cudnnTensorDescriptor_t, cudnnTensorDescriptor_t,
                                    cudnnConvolutionDescriptor_t, cudnnFilterDescriptor_t, cudnnConvolutionBwdFilterAlgo_t, size_t *);
    cudnnStatus_t (*Fwd)(cudnnHandle_t, const void *, cudnnTensorDescriptor_t, const void *, cudnnFilterDescriptor_t,
                         const void *, cudnnConvolutionDescriptor_t, cudnnConvolutionFwdAlgo_t, void *, size_t,
                         const void *, cudnnTensorDescriptor_t, void *);
    cudnnStatus_t (*BwdData)(cudnnHandle_t, const void *, cudnnFilterDescriptor_t, const void *, cudnnTensorDescriptor_t,
                             const void *, cudnnConvolutionDescriptor_t, cudnnConvolutionBwdDataAlgo_t, void *, size_t,
                             const void *, cudnnTensorDescriptor_t, void *);
    cudnnStatus_t (*BwdFilter)(cudnnHandle_t, const void *, cudnnTensorDescriptor_t, const void *, cudnnTensorDescriptor_t,
                               const void *, cudnnConvolutionDescriptor_t, cudnnConvolutionBwdFilterAlgo_t, void *, size_t,
                               const void *, cudnnFilterDescriptor_t, void *);
    cudnnStatus_t (*SetStream)(cudnnHandle_t, cudaStream_t);   /* NULL if the library lacks it */
    /* FreeDNN only (NULL elsewhere) */
    const char *(*GetBackendName)(cudnnHandle_t);
    void (*GetLastErrorString)(char *, size_t);
} fdt_api;

/* The FreeDNN this program is linked with. */
void fdt_api_ours(fdt_api *a);
/* dlopen(path, RTLD_LOCAL|RTLD_NOW) and resolve every entry; 0 on success, else -1 with why. */
int fdt_api_load(fdt_api *a, const char *path, char *why, size_t why_n);
void fdt_api_close(fdt_api *a);
/* 1 if st is CUDNN_STATUS_SUCCESS in a's numbering */
int fdt_ok(const fdt_api *a, cudnnStatus_t st);
/* Status name without the CUDNN_STATUS_ prefix */
const char *fdt_status(const fdt_api *a, cudnnStatus_t st);
/* Last error message of FreeDNN, or "" */
const char *fdt_last_error(const fdt_api *a);

#endif
