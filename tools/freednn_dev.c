/* Memory, dtype conversion and timing helpers of the freednn tools (see freednn_dev.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef FREEDNN_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include "freednn_dev.h"

size_t fdt_dtype_size(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_DOUBLE: return 8;
    case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16: return 2;
    case CUDNN_DATA_INT8: case CUDNN_DATA_UINT8: return 1;
    default: return 4;
    }
}

static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* float -> IEEE half, round to nearest even */
static uint16_t to_half(float f)
{
    uint32_t u = f2u(f), sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);          /* overflow -> inf */
    if (a < 0x38800000u) {                                              /* subnormal or zero */
        float v = u2f(a) * 16777216.0f;                                  /* / 2^-24 */
        return (uint16_t)(sign | (uint32_t)lrintf(v));
    }
    uint32_t m = a + 0xc8000fffu + ((a >> 13) & 1u);                     /* rebias, round */
    return (uint16_t)(sign | (m >> 13));
}
static float from_half(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0) return u2f(sign) + (sign ? -1.0f : 1.0f) * ldexpf((float)m, -24);
    if (e == 31) return u2f(sign | 0x7f800000u | (m << 13));
    return u2f(sign | ((e + 112) << 23) | (m << 13));
}
static uint16_t to_bf16(float f)
{
    uint32_t u = f2u(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static float from_bf16(uint16_t b) { return u2f((uint32_t)b << 16); }

void fdt_from_double(const double *src, cudnnDataType_t t, void *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case CUDNN_DATA_DOUBLE: ((double *)dst)[i] = src[i]; break;
        case CUDNN_DATA_HALF: ((uint16_t *)dst)[i] = to_half((float)src[i]); break;
        case CUDNN_DATA_BFLOAT16: ((uint16_t *)dst)[i] = to_bf16((float)src[i]); break;
        case CUDNN_DATA_INT8: {
            double v = nearbyint(src[i]);
            ((int8_t *)dst)[i] = (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
            break;
        }
        case CUDNN_DATA_INT32: ((int32_t *)dst)[i] = (int32_t)nearbyint(src[i]); break;
        default: ((float *)dst)[i] = (float)src[i]; break;
        }
    }
}

void fdt_to_double(const void *src, cudnnDataType_t t, double *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case CUDNN_DATA_DOUBLE: dst[i] = ((const double *)src)[i]; break;
        case CUDNN_DATA_HALF: dst[i] = from_half(((const uint16_t *)src)[i]); break;
        case CUDNN_DATA_BFLOAT16: dst[i] = from_bf16(((const uint16_t *)src)[i]); break;
        case CUDNN_DATA_INT8: dst[i] = ((const int8_t *)src)[i]; break;
        case CUDNN_DATA_INT32: dst[i] = ((const int32_t *)src)[i]; break;
        default: dst[i] = ((const float *)src)[i]; break;
        }
    }
}

int fdt_have_cuda(void)
{
#ifdef FREEDNN_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

void *fdt_alloc(int on_device, size_t bytes)
{
    if (bytes == 0) bytes = 1;
#ifdef FREEDNN_HAVE_CUDA
    if (on_device) {
        void *p = NULL;
        return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
    }
#else
    if (on_device) return NULL;
#endif
    /* 64-byte aligned, as the host allocators of frameworks (PyTorch, oneDNN) hand buffers to a
     * CPU library; plain malloc's large blocks start 16 bytes into a page, which splits every
     * 64-byte vector access across two cache lines */
    return aligned_alloc(64, (bytes + 63) & ~(size_t)63);
}

void fdt_free(int on_device, void *p)
{
    if (!p) return;
#ifdef FREEDNN_HAVE_CUDA
    if (on_device) { cudaFree(p); return; }
#endif
    (void)on_device;
    free(p);
}

int fdt_upload(int on_device, void *dst, const void *src, size_t bytes)
{
#ifdef FREEDNN_HAVE_CUDA
    if (on_device) return cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
#endif
    if (on_device) return -1;
    memcpy(dst, src, bytes);
    return 0;
}

int fdt_download(int on_device, void *dst, const void *src, size_t bytes)
{
#ifdef FREEDNN_HAVE_CUDA
    if (on_device) return cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) == cudaSuccess ? 0 : -1;
#endif
    if (on_device) return -1;
    memcpy(dst, src, bytes);
    return 0;
}

void fdt_sync(int on_device)
{
#ifdef FREEDNN_HAVE_CUDA
    if (on_device) cudaDeviceSynchronize();
#endif
    (void)on_device;
}

double fdt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void *fdt_stream_create(void)
{
#ifdef FREEDNN_HAVE_CUDA
    cudaStream_t s = NULL;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess) return (void *)s;
    cudaGetLastError();
#endif
    return NULL;
}
void fdt_stream_destroy(void *stream)
{
#ifdef FREEDNN_HAVE_CUDA
    if (stream) cudaStreamDestroy((cudaStream_t)stream);
#endif
    (void)stream;
}
void fdt_stream_sync(void *stream)
{
#ifdef FREEDNN_HAVE_CUDA
    cudaStreamSynchronize((cudaStream_t)stream);
#endif
    (void)stream;
}

int fdt_graph_begin(void *stream, char *why, size_t why_n)
{
#ifdef FREEDNN_HAVE_CUDA
    cudaError_t e = cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeRelaxed);
    if (e == cudaSuccess) return 0;
    snprintf(why, why_n, "cudaStreamBeginCapture: %s", cudaGetErrorString(e));
    cudaGetLastError();
#else
    snprintf(why, why_n, "built without CUDA");
#endif
    (void)stream;
    return -1;
}
int fdt_graph_end(void *stream, void **exec, char *why, size_t why_n)
{
    *exec = NULL;
#ifdef FREEDNN_HAVE_CUDA
    cudaGraph_t g = NULL;
    cudaError_t e = cudaStreamEndCapture((cudaStream_t)stream, &g);
    if (e != cudaSuccess || !g) {
        snprintf(why, why_n, "capture failed: %s", cudaGetErrorString(e));
        cudaGetLastError();
        if (g) cudaGraphDestroy(g);
        return -1;
    }
    cudaGraphExec_t x = NULL;
    e = cudaGraphInstantiateWithFlags(&x, g, 0);
    cudaGraphDestroy(g);
    if (e != cudaSuccess) {
        snprintf(why, why_n, "cudaGraphInstantiate: %s", cudaGetErrorString(e));
        cudaGetLastError();
        return -1;
    }
    *exec = (void *)x;
    return 0;
#else
    (void)stream;
    snprintf(why, why_n, "built without CUDA");
    return -1;
#endif
}
int fdt_graph_launch(void *exec, void *stream)
{
#ifdef FREEDNN_HAVE_CUDA
    return cudaGraphLaunch((cudaGraphExec_t)exec, (cudaStream_t)stream) == cudaSuccess ? 0 : -1;
#else
    (void)exec; (void)stream;
    return -1;
#endif
}
void fdt_graph_destroy(void *exec)
{
#ifdef FREEDNN_HAVE_CUDA
    if (exec) cudaGraphExecDestroy((cudaGraphExec_t)exec);
#endif
    (void)exec;
}

struct fdt_gpu_timer {
    int n;
#ifdef FREEDNN_HAVE_CUDA
    cudaEvent_t *ev;
    cudaStream_t stream;
#endif
};

fdt_gpu_timer *fdt_gpu_timer_create(int n, void *stream)
{
    fdt_gpu_timer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->n = n;
    (void)stream;
#ifdef FREEDNN_HAVE_CUDA
    t->stream = (cudaStream_t)stream;
    t->ev = calloc((size_t)2 * n, sizeof(cudaEvent_t));
    for (int i = 0; i < 2 * n; i++) cudaEventCreate(&t->ev[i]);
#endif
    return t;
}
void fdt_gpu_timer_start(fdt_gpu_timer *t, int i)
{
#ifdef FREEDNN_HAVE_CUDA
    cudaEventRecord(t->ev[2 * i], t->stream);
#endif
    (void)t; (void)i;
}
void fdt_gpu_timer_stop(fdt_gpu_timer *t, int i)
{
#ifdef FREEDNN_HAVE_CUDA
    cudaEventRecord(t->ev[2 * i + 1], t->stream);
#endif
    (void)t; (void)i;
}
void fdt_gpu_timer_read(fdt_gpu_timer *t, double *secs)
{
#ifdef FREEDNN_HAVE_CUDA
    cudaEventSynchronize(t->ev[2 * t->n - 1]);
    for (int i = 0; i < t->n; i++) {
        float ms = 0;
        cudaEventElapsedTime(&ms, t->ev[2 * i], t->ev[2 * i + 1]);
        secs[i] = ms * 1e-3;
    }
#else
    for (int i = 0; i < t->n; i++) secs[i] = 0;
#endif
}
void fdt_gpu_timer_destroy(fdt_gpu_timer *t)
{
    if (!t) return;
#ifdef FREEDNN_HAVE_CUDA
    for (int i = 0; i < 2 * t->n; i++) cudaEventDestroy(t->ev[i]);
    free(t->ev);
#endif
    free(t);
}
