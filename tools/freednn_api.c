/* Function-pointer table over a cuDNN library: FreeDNN linked in, or another one dlopen'ed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "freednn.h"
#include "freednn_api.h"

void fdt_api_ours(fdt_api *a)
{
    memset(a, 0, sizeof *a);
    a->label = "FreeDNN";
    a->GetVersion = cudnnGetVersion;
    a->GetErrorString = cudnnGetErrorString;
    a->Create = cudnnCreate;
    a->Destroy = cudnnDestroy;
    a->CreateTensorDescriptor = cudnnCreateTensorDescriptor;
    a->SetTensor4dDescriptor = cudnnSetTensor4dDescriptor;
    a->DestroyTensorDescriptor = cudnnDestroyTensorDescriptor;
    a->CreateFilterDescriptor = cudnnCreateFilterDescriptor;
    a->SetFilter4dDescriptor = cudnnSetFilter4dDescriptor;
    a->DestroyFilterDescriptor = cudnnDestroyFilterDescriptor;
    a->CreateConvolutionDescriptor = cudnnCreateConvolutionDescriptor;
    a->SetConvolution2dDescriptor = cudnnSetConvolution2dDescriptor;
    a->SetConvolutionGroupCount = cudnnSetConvolutionGroupCount;
    a->SetConvolutionMathType = cudnnSetConvolutionMathType;
    a->DestroyConvolutionDescriptor = cudnnDestroyConvolutionDescriptor;
    a->GetFwdAlgo_v7 = cudnnGetConvolutionForwardAlgorithm_v7;
    a->GetBwdDataAlgo_v7 = cudnnGetConvolutionBackwardDataAlgorithm_v7;
    a->GetBwdFilterAlgo_v7 = cudnnGetConvolutionBackwardFilterAlgorithm_v7;
    a->GetFwdWs = cudnnGetConvolutionForwardWorkspaceSize;
    a->GetBwdDataWs = cudnnGetConvolutionBackwardDataWorkspaceSize;
    a->GetBwdFilterWs = cudnnGetConvolutionBackwardFilterWorkspaceSize;
    a->Fwd = cudnnConvolutionForward;
    a->BwdData = cudnnConvolutionBackwardData;
    a->BwdFilter = cudnnConvolutionBackwardFilter;
    a->SetStream = cudnnSetStream;
    a->GetBackendName = freednnGetBackendName;
    a->GetLastErrorString = cudnnGetLastErrorString;
}

int fdt_api_load(fdt_api *a, const char *path, char *why, size_t why_n)
{
    memset(a, 0, sizeof *a);
    a->label = path;
    /* RTLD_DEEPBIND: the other library's references to its own cudnn* functions must bind to
     * itself, not to FreeDNN's global ones (NVIDIA's libcudnn.so.8 even has the same symbol
     * version node as ours). AddressSanitizer does not support DEEPBIND. */
    int flags = RTLD_LOCAL | RTLD_NOW;
#if !defined(__SANITIZE_ADDRESS__)
    flags |= RTLD_DEEPBIND;
#endif
    a->dl = dlopen(path, flags);
    if (!a->dl) {
        snprintf(why, why_n, "cannot load %s: %s", path, dlerror());
        return -1;
    }
    struct { void **slot; const char *name; int optional; } t[] = {
#define E(f, n) { (void **)&a->f, n, 0 }
        E(GetVersion, "cudnnGetVersion"), E(GetErrorString, "cudnnGetErrorString"), E(Create, "cudnnCreate"),
        E(Destroy, "cudnnDestroy"), E(CreateTensorDescriptor, "cudnnCreateTensorDescriptor"),
        E(SetTensor4dDescriptor, "cudnnSetTensor4dDescriptor"), E(DestroyTensorDescriptor, "cudnnDestroyTensorDescriptor"),
        E(CreateFilterDescriptor, "cudnnCreateFilterDescriptor"), E(SetFilter4dDescriptor, "cudnnSetFilter4dDescriptor"),
        E(DestroyFilterDescriptor, "cudnnDestroyFilterDescriptor"),
        E(CreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor"),
        E(SetConvolution2dDescriptor, "cudnnSetConvolution2dDescriptor"),
        E(SetConvolutionGroupCount, "cudnnSetConvolutionGroupCount"),
        E(SetConvolutionMathType, "cudnnSetConvolutionMathType"),
        E(DestroyConvolutionDescriptor, "cudnnDestroyConvolutionDescriptor"),
        E(GetFwdAlgo_v7, "cudnnGetConvolutionForwardAlgorithm_v7"),
        E(GetBwdDataAlgo_v7, "cudnnGetConvolutionBackwardDataAlgorithm_v7"),
        E(GetBwdFilterAlgo_v7, "cudnnGetConvolutionBackwardFilterAlgorithm_v7"),
        E(GetFwdWs, "cudnnGetConvolutionForwardWorkspaceSize"),
        E(GetBwdDataWs, "cudnnGetConvolutionBackwardDataWorkspaceSize"),
        E(GetBwdFilterWs, "cudnnGetConvolutionBackwardFilterWorkspaceSize"),
        E(Fwd, "cudnnConvolutionForward"), E(BwdData, "cudnnConvolutionBackwardData"),
        E(BwdFilter, "cudnnConvolutionBackwardFilter"),
#undef E
        { (void **)&a->SetStream, "cudnnSetStream", 1 },
        { (void **)&a->GetBackendName, "freednnGetBackendName", 1 },
        { (void **)&a->GetLastErrorString, "cudnnGetLastErrorString", 1 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        *t[i].slot = dlsym(a->dl, t[i].name);
        if (!*t[i].slot && !t[i].optional) {
            snprintf(why, why_n, "%s does not export %s", path, t[i].name);
            dlclose(a->dl);
            a->dl = NULL;
            return -1;
        }
    }
    return 0;
}

void fdt_api_close(fdt_api *a)
{
    if (a->dl) dlclose(a->dl);
    a->dl = NULL;
}

int fdt_ok(const fdt_api *a, cudnnStatus_t st)
{
    const char *s = a->GetErrorString(st);
    return s && strcmp(s, "CUDNN_STATUS_SUCCESS") == 0;
}

const char *fdt_status(const fdt_api *a, cudnnStatus_t st)
{
    const char *s = a->GetErrorString(st);
    if (!s) return "UNKNOWN";
    return strncmp(s, "CUDNN_STATUS_", 13) == 0 ? s + 13 : s;
}

const char *fdt_last_error(const fdt_api *a)
{
    static _Thread_local char buf[512];
    buf[0] = 0;
    if (a->GetLastErrorString) a->GetLastErrorString(buf, sizeof buf);
    return buf;
}
