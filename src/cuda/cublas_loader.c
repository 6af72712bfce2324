/* Lazy dlopen of cuBLAS (see cublas_loader.h). The library is opened once per process, the
 * first time a call needs it; a failure is remembered and reported by every later call. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "cublas_loader.h"
#include "cuda_internal.h"

static fdnn_cublas_api g_api;
static int g_ok;
static char g_err[512];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void *sym(void *lib, const char *name, int required, int *bad)
{
    void *p = dlsym(lib, name);
    if (!p && required && !*bad) {
        *bad = 1;
        snprintf(g_err, sizeof g_err, "cuBLAS was loaded but has no symbol %s", name);
    }
    return p;
}

static void load_once(void)
{
    static const char *names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(g_err, sizeof g_err, "cuBLAS (libcublas.so.13, libcublas.so.12 or libcublas.so) could not be loaded: %s",
                 e ? e : "not found");
        return;
    }
    int bad = 0;
    *(void **)&g_api.create = sym(lib, "cublasCreate_v2", 1, &bad);
    *(void **)&g_api.destroy = sym(lib, "cublasDestroy_v2", 1, &bad);
    *(void **)&g_api.set_stream = sym(lib, "cublasSetStream_v2", 1, &bad);
    *(void **)&g_api.set_math_mode = sym(lib, "cublasSetMathMode", 1, &bad);
    *(void **)&g_api.gemm_ex = sym(lib, "cublasGemmEx", 1, &bad);
    *(void **)&g_api.gemm_strided_batched_ex = sym(lib, "cublasGemmStridedBatchedEx", 1, &bad);
    *(void **)&g_api.gemm_batched_ex = sym(lib, "cublasGemmBatchedEx", 1, &bad);
    *(void **)&g_api.set_workspace = sym(lib, "cublasSetWorkspace_v2", 0, &bad);
    if (bad) {
        dlclose(lib);
        return;
    }
    g_ok = 1;
}

const fdnn_cublas_api *fdnn_cublas(void)
{
    pthread_once(&g_once, load_once);
    if (!g_ok) {
        FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s", g_err);
        return NULL;
    }
    return &g_api;
}

int fdnn_cublas_available(char *why, size_t why_n)
{
    pthread_once(&g_once, load_once);
    if (!g_ok && why && why_n) snprintf(why, why_n, "%s", g_err);
    return g_ok;
}

cudnnStatus_t fdnn_cublas_check(cublasStatus_t s, const char *what)
{
    if (s == CUBLAS_STATUS_SUCCESS) return CUDNN_STATUS_SUCCESS;
    cudnnStatus_t st = s == CUBLAS_STATUS_ALLOC_FAILED ? CUDNN_STATUS_ALLOC_FAILED
                       : s == CUBLAS_STATUS_NOT_SUPPORTED ? CUDNN_STATUS_NOT_SUPPORTED
                       : s == CUBLAS_STATUS_ARCH_MISMATCH ? CUDNN_STATUS_ARCH_MISMATCH
                       : s == CUBLAS_STATUS_INVALID_VALUE ? CUDNN_STATUS_BAD_PARAM
                       : CUDNN_STATUS_EXECUTION_FAILED;
    return FDNN_FAIL(st, "%s: cuBLAS status %d", what, (int)s);
}

cudnnStatus_t fdnn_cublas_handle(cudnnHandle_t h, const fdnn_cublas_api **api, cublasHandle_t *out)
{
    const fdnn_cublas_api *a = fdnn_cublas();
    if (!a) return CUDNN_STATUS_NOT_SUPPORTED;
    fdnn_cuda_state *s = h->cuda;
    if (!s) return FDNN_FAIL(CUDNN_STATUS_NOT_INITIALIZED, "the handle has no CUDA state");
    if (!s->cublas) {
        cublasHandle_t c = NULL;
        FDNN_CHECK(fdnn_cublas_check(a->create(&c), "cublasCreate"));
        /* default math: FP32 products stay FP32 (no TF32), as the compute types requested say */
        cublasStatus_t e = a->set_math_mode(c, CUBLAS_DEFAULT_MATH);
        if (e != CUBLAS_STATUS_SUCCESS) {
            a->destroy(c);
            return fdnn_cublas_check(e, "cublasSetMathMode");
        }
        s->cublas = c;
    }
    cublasHandle_t c = (cublasHandle_t)s->cublas;
    FDNN_CHECK(fdnn_cublas_check(a->set_stream(c, fdnn_cuda_stream(h)), "cublasSetStream"));
    *api = a;
    *out = c;
    return CUDNN_STATUS_SUCCESS;
}

void fdnn_cublas_handle_free(void *cublas_handle)
{
    if (!cublas_handle || !g_ok) return;
    g_api.destroy((cublasHandle_t)cublas_handle);
}
