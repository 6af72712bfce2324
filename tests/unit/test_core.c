/* Core API: versions, status strings, last error, logging callback, handle and stream,
 * tensor / filter / convolution / activation descriptors and their error paths. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"

static void expect_last_error_contains(const char *needle)
{
    char msg[1024];
    cudnnGetLastErrorString(msg, sizeof msg);
    TH_CHECK(strstr(msg, needle) != NULL, "last error \"%s\" does not mention \"%s\"", msg, needle);
    cudnnGetLastErrorString(msg, sizeof msg);
    TH_CHECK(msg[0] == '\0', "last error not cleared on read: \"%s\"", msg);
}

static void test_versions(void)
{
    TH_CHECK(cudnnGetVersion() == 8907, "cudnnGetVersion() = %zu", cudnnGetVersion());
    TH_CHECK(CUDNN_VERSION == 8907, "CUDNN_VERSION = %d", CUDNN_VERSION);
    int v = -1;
    TH_OK(cudnnGetProperty(MAJOR_VERSION, &v));
    TH_CHECK(v == 8, "major %d", v);
    TH_OK(cudnnGetProperty(MINOR_VERSION, &v));
    TH_CHECK(v == 9, "minor %d", v);
    TH_OK(cudnnGetProperty(PATCH_LEVEL, &v));
    TH_CHECK(v == 7, "patch %d", v);
    TH_STATUS(cudnnGetProperty((libraryPropertyType)7, &v), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetProperty(MAJOR_VERSION, NULL), CUDNN_STATUS_BAD_PARAM);
    expect_last_error_contains("value");
    TH_CHECK(cudnnGetMaxDeviceVersion() == 900, "max device version %zu", cudnnGetMaxDeviceVersion());
    TH_OK(cudnnOpsInferVersionCheck());
    TH_OK(cudnnOpsTrainVersionCheck());
    TH_OK(cudnnCnnInferVersionCheck());
    TH_OK(cudnnCnnTrainVersionCheck());
    TH_OK(cudnnAdvInferVersionCheck());
    TH_OK(cudnnAdvTrainVersionCheck());
}

static void test_error_strings(void)
{
    static const char *names[15] = {
        "CUDNN_STATUS_SUCCESS", "CUDNN_STATUS_NOT_INITIALIZED", "CUDNN_STATUS_ALLOC_FAILED", "CUDNN_STATUS_BAD_PARAM",
        "CUDNN_STATUS_INTERNAL_ERROR", "CUDNN_STATUS_INVALID_VALUE", "CUDNN_STATUS_ARCH_MISMATCH", "CUDNN_STATUS_MAPPING_ERROR",
        "CUDNN_STATUS_EXECUTION_FAILED", "CUDNN_STATUS_NOT_SUPPORTED", "CUDNN_STATUS_LICENSE_ERROR",
        "CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING", "CUDNN_STATUS_RUNTIME_IN_PROGRESS", "CUDNN_STATUS_RUNTIME_FP_OVERFLOW",
        "CUDNN_STATUS_VERSION_MISMATCH"};
    for (int i = 0; i < 15; i++)
        TH_CHECK(strcmp(cudnnGetErrorString((cudnnStatus_t)i), names[i]) == 0, "status %d -> %s", i, cudnnGetErrorString((cudnnStatus_t)i));
    TH_CHECK(strstr(cudnnGetErrorString((cudnnStatus_t)1000), "UNKNOWN") != NULL, "unknown status string");
}

static void *thread_fail(void *arg)
{
    (void)arg;
    cudnnCreate(NULL); /* records an error in this thread only */
    static char msg[1024];
    cudnnGetLastErrorString(msg, sizeof msg);
    return msg;
}

static void test_last_error(void)
{
    char msg[1024];
    cudnnGetLastErrorString(msg, sizeof msg); /* clear */
    TH_STATUS(cudnnCreate(NULL), CUDNN_STATUS_BAD_PARAM);
    cudnnGetLastErrorString(msg, sizeof msg);
    TH_CHECK(strstr(msg, "cudnnCreate") && strstr(msg, "handle is NULL"), "message names function and argument: \"%s\"", msg);
    /* truncation */
    TH_STATUS(cudnnCreate(NULL), CUDNN_STATUS_BAD_PARAM);
    char small[8];
    cudnnGetLastErrorString(small, sizeof small);
    TH_CHECK(strlen(small) == 7, "truncated to max_size-1, got %zu", strlen(small));
    /* thread-local */
    pthread_t t;
    char *other = NULL;
    pthread_create(&t, NULL, thread_fail, NULL);
    pthread_join(t, (void **)&other);
    TH_CHECK(other && strstr(other, "handle is NULL"), "error recorded in the other thread");
    cudnnGetLastErrorString(msg, sizeof msg);
    TH_CHECK(msg[0] == '\0', "main thread's last error untouched by another thread: \"%s\"", msg);
    /* unimplemented function */
    cudnnBackendDescriptor_t d = NULL;
    TH_STATUS(cudnnBackendCreateDescriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &d), CUDNN_STATUS_NOT_SUPPORTED);
    expect_last_error_contains("cudnnBackendCreateDescriptor is not implemented in FreeDNN");
}

static int cb_calls;
static char cb_msg[512];
static cudnnDebug_t cb_dbg;
static void callback(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    (void)udata;
    if (sev == CUDNN_SEV_ERROR) {
        cb_calls++;
        snprintf(cb_msg, sizeof cb_msg, "%s", msg);
        cb_dbg = *dbg;
    }
}

static void test_callback(void)
{
    int token = 5;
    TH_OK(cudnnSetCallback(CUDNN_SEV_ERROR_EN, &token, callback));
    unsigned mask = 0;
    void *ud = NULL;
    cudnnCallback_t fn = NULL;
    TH_OK(cudnnGetCallback(&mask, &ud, &fn));
    TH_CHECK(mask == CUDNN_SEV_ERROR_EN && ud == &token && fn == callback, "callback round trip");
    cudnnTensorDescriptor_t t;
    TH_OK(cudnnCreateTensorDescriptor(&t));
    TH_STATUS(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, -2, 3, 3), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(cb_calls == 1, "callback called once for the error, got %d", cb_calls);
    TH_CHECK(strstr(cb_msg, "cudnnSetTensor4dDescriptor") != NULL, "callback message names the call: %s", cb_msg);
    TH_CHECK(cb_dbg.cudnn_version == 8907 && cb_dbg.pid != 0, "cudnnDebug_t filled");
    TH_OK(cudnnSetCallback(0, NULL, NULL));
    TH_STATUS(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, -2, 3, 3), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(cb_calls == 1, "no callback after it is removed");
    TH_STATUS(cudnnGetCallback(NULL, NULL, NULL), CUDNN_STATUS_BAD_PARAM);
    cudnnDestroyTensorDescriptor(t);
    char msg[64];
    cudnnGetLastErrorString(msg, sizeof msg);
}

static void test_handle(void)
{
    cudnnHandle_t h = th_create_handle();
    cudaStream_t s = (cudaStream_t)1;
    TH_OK(cudnnGetStream(h, &s));
    TH_CHECK(s == NULL, "default stream is NULL");
    if (!th_is_gpu(h)) {
        TH_OK(cudnnSetStream(h, (cudaStream_t)0x1234));
        TH_OK(cudnnGetStream(h, &s));
        TH_CHECK(s == (cudaStream_t)0x1234, "stream round trip on the CPU backend");
        TH_OK(cudnnSetStream(h, NULL));
    }
    TH_STATUS(cudnnGetStream(h, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetStream(NULL, NULL), CUDNN_STATUS_BAD_PARAM);
    cudnnStatus_t rs = CUDNN_STATUS_INTERNAL_ERROR;
    TH_OK(cudnnQueryRuntimeError(h, &rs, CUDNN_ERRQUERY_BLOCKING, NULL));
    TH_CHECK(rs == CUDNN_STATUS_SUCCESS, "no runtime error pending");
    TH_STATUS(cudnnQueryRuntimeError(h, &rs, (cudnnErrQueryMode_t)9, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnDestroy(h));
    TH_STATUS(cudnnDestroy(NULL), CUDNN_STATUS_BAD_PARAM);
    /* backend override */
    const char *old = getenv("FREEDNN_BACKEND");
    char *saved = old ? strdup(old) : NULL;
    setenv("FREEDNN_BACKEND", "tpu", 1);
    cudnnHandle_t h2 = (cudnnHandle_t)0x1;
    TH_STATUS(cudnnCreate(&h2), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(h2 == (cudnnHandle_t)0x1, "failed cudnnCreate leaves *handle untouched");
    expect_last_error_contains("FREEDNN_BACKEND=tpu");
    setenv("FREEDNN_BACKEND", "cpu", 1);
    TH_OK(cudnnCreate(&h2));
    TH_CHECK(strcmp(freednnGetBackendName(h2), "cpu") == 0, "FREEDNN_BACKEND=cpu forces the CPU backend");
    cudnnDestroy(h2);
    if (saved) {
        setenv("FREEDNN_BACKEND", saved, 1);
        free(saved);
    } else {
        unsetenv("FREEDNN_BACKEND");
    }
}

static void test_tensor_desc(void)
{
    cudnnTensorDescriptor_t t;
    TH_OK(cudnnCreateTensorDescriptor(&t));
    cudnnDataType_t dt;
    int n, c, h, w, ns, cs, hs, ws;
    TH_STATUS(cudnnGetTensor4dDescriptor(t, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 5));
    TH_OK(cudnnGetTensor4dDescriptor(t, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws));
    TH_CHECK(dt == CUDNN_DATA_FLOAT && n == 2 && c == 3 && h == 4 && w == 5 && ns == 60 && cs == 20 && hs == 5 && ws == 1, "NCHW strides %d %d %d %d", ns, cs, hs, ws);
    size_t sz = 0;
    TH_OK(cudnnGetTensorSizeInBytes(t, &sz));
    TH_CHECK(sz == 120 * 4, "size %zu", sz);
    TH_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 2, 3, 4, 5));
    TH_OK(cudnnGetTensor4dDescriptor(t, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws));
    TH_CHECK(dt == CUDNN_DATA_HALF && ns == 60 && cs == 1 && hs == 15 && ws == 3, "NHWC strides %d %d %d %d", ns, cs, hs, ws);
    TH_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x4, 1, 8, 2, 2));
    TH_OK(cudnnGetTensor4dDescriptor(t, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws));
    TH_CHECK(c == 8 && ns == 8 && cs == 4 && hs == 2 && ws == 1, "VECT_C strides %d %d %d %d", ns, cs, hs, ws);
    TH_OK(cudnnGetTensorSizeInBytes(t, &sz));
    TH_CHECK(sz == 32, "INT8x4 size %zu", sz);
    TH_STATUS(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x4, 1, 6, 2, 2), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_FLOAT, 1, 8, 2, 2), CUDNN_STATUS_BAD_PARAM);
    /* errors leave the descriptor as it was */
    TH_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 5));
    TH_STATUS(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 0, 3, 4, 5), CUDNN_STATUS_BAD_PARAM);
    expect_last_error_contains("dimA[0]=0");
    TH_STATUS(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, -3, 4, 5), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 65536, 65536, 65536, 2), CUDNN_STATUS_BAD_PARAM);
    expect_last_error_contains("overflow");
    TH_STATUS(cudnnSetTensor4dDescriptor(t, (cudnnTensorFormat_t)7, CUDNN_DATA_FLOAT, 2, 3, 4, 5), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, (cudnnDataType_t)99, 2, 3, 4, 5), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_FLOAT, 2, 3, 4, 5, 60, 20, 0, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_FLOAT, 3, 3, 4, 5, 2000000000, 20, 5, 1), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnGetTensor4dDescriptor(t, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws));
    TH_CHECK(n == 2 && c == 3 && ns == 60, "descriptor unchanged by failed sets");
    /* Nd */
    int dims[5] = {2, 3, 4, 5, 6}, strides[5] = {1000, 200, 40, 7, 1};
    TH_OK(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_DOUBLE, 5, dims, strides));
    int nb = 0, gd[8] = {0}, gs[8] = {0};
    TH_OK(cudnnGetTensorNdDescriptor(t, 3, &dt, &nb, gd, gs));
    TH_CHECK(nb == 5 && dt == CUDNN_DATA_DOUBLE && gd[2] == 4 && gs[2] == 40 && gd[3] == 0, "Nd get with fewer dims requested");
    TH_OK(cudnnGetTensorSizeInBytes(t, &sz));
    TH_CHECK(sz == (size_t)(1 + 1000 + 400 + 120 + 28 + 5) * 8, "strided size %zu", sz);
    TH_STATUS(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 2, dims, strides), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 9, dims, strides), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 5, NULL, strides), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetTensorNdDescriptorEx(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 5, dims));
    TH_OK(cudnnGetTensorNdDescriptor(t, 5, &dt, &nb, gd, gs));
    TH_CHECK(gs[1] == 1 && gs[4] == 3 && gs[3] == 18 && gs[2] == 90 && gs[0] == 360, "NDHWC strides %d %d %d %d %d", gs[0], gs[1], gs[2], gs[3], gs[4]);
    TH_STATUS(cudnnGetTensorNdDescriptor(t, -1, &dt, &nb, gd, gs), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnDestroyTensorDescriptor(t));
    TH_OK(cudnnDestroyTensorDescriptor(NULL));
    TH_STATUS(cudnnCreateTensorDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
}

static void test_filter_desc(void)
{
    cudnnFilterDescriptor_t f;
    TH_OK(cudnnCreateFilterDescriptor(&f));
    TH_OK(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, 8, 4, 3, 3));
    cudnnDataType_t dt;
    cudnnTensorFormat_t fmt;
    int k, c, h, w;
    TH_OK(cudnnGetFilter4dDescriptor(f, &dt, &fmt, &k, &c, &h, &w));
    TH_CHECK(dt == CUDNN_DATA_HALF && fmt == CUDNN_TENSOR_NHWC && k == 8 && c == 4 && h == 3 && w == 3, "filter 4d round trip");
    size_t sz;
    TH_OK(cudnnGetFilterSizeInBytes(f, &sz));
    TH_CHECK(sz == 8 * 4 * 9 * 2, "filter size %zu", sz);
    TH_STATUS(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 8, 0, 3, 3), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NCHW_VECT_C, 8, 16, 3, 3), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NCHW_VECT_C, 8, 32, 3, 3));
    TH_OK(cudnnGetFilterSizeInBytes(f, &sz));
    TH_CHECK(sz == 8 * 32 * 9, "INT8x32 filter size %zu", sz);
    int d[5] = {4, 2, 3, 3, 3}, gd[5];
    int nb;
    TH_OK(cudnnSetFilterNdDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, d));
    TH_OK(cudnnGetFilterNdDescriptor(f, 5, &dt, &fmt, &nb, gd));
    TH_CHECK(nb == 5 && gd[4] == 3 && gd[0] == 4, "filter Nd round trip");
    TH_STATUS(cudnnGetFilter4dDescriptor(f, &dt, &fmt, &k, &c, &h, &w), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetFilterNdDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnDestroyFilterDescriptor(f));
}

static void test_conv_desc(void)
{
    cudnnConvolutionDescriptor_t cd;
    TH_OK(cudnnCreateConvolutionDescriptor(&cd));
    int g = 0;
    cudnnMathType_t mt = CUDNN_FMA_MATH;
    TH_OK(cudnnGetConvolutionGroupCount(cd, &g));
    TH_OK(cudnnGetConvolutionMathType(cd, &mt));
    TH_CHECK(g == 1 && mt == CUDNN_DEFAULT_MATH, "defaults: groups 1, DEFAULT_MATH");
    TH_OK(cudnnSetConvolution2dDescriptor(cd, 1, 2, 2, 1, 1, 3, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    int ph, pw, u, v, dh, dw;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t ct;
    TH_OK(cudnnGetConvolution2dDescriptor(cd, &ph, &pw, &u, &v, &dh, &dw, &mode, &ct));
    TH_CHECK(ph == 1 && pw == 2 && u == 2 && v == 1 && dh == 1 && dw == 3 && mode == CUDNN_CROSS_CORRELATION && ct == CUDNN_DATA_FLOAT, "conv 2d round trip");
    TH_STATUS(cudnnSetConvolution2dDescriptor(cd, -1, 0, 1, 1, 1, 1, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetConvolution2dDescriptor(cd, 0, 0, 0, 1, 1, 1, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetConvolution2dDescriptor(cd, 0, 0, 1, 1, 0, 1, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetConvolution2dDescriptor(cd, 0, 0, 1, 1, 1, 1, (cudnnConvolutionMode_t)5, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetConvolutionGroupCount(cd, 0), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetConvolutionMathType(cd, (cudnnMathType_t)9), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH));
    TH_OK(cudnnSetConvolutionReorderType(cd, CUDNN_NO_REORDER));
    cudnnReorderType_t rt;
    TH_OK(cudnnGetConvolutionReorderType(cd, &rt));
    TH_CHECK(rt == CUDNN_NO_REORDER, "reorder round trip");

    /* output dims: x 2x4x10x9, w 6x2x3x3 (groups 2), pad (1,2) stride (2,1) dilation (1,3) */
    cudnnTensorDescriptor_t x;
    cudnnFilterDescriptor_t w;
    TH_OK(cudnnCreateTensorDescriptor(&x));
    TH_OK(cudnnCreateFilterDescriptor(&w));
    TH_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 10, 9));
    TH_OK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 6, 2, 3, 3));
    TH_OK(cudnnSetConvolutionGroupCount(cd, 2));
    int on, oc, oh, ow;
    TH_OK(cudnnGetConvolution2dForwardOutputDim(cd, x, w, &on, &oc, &oh, &ow));
    /* H: 1 + (10 + 2 - 3)/2 = 5; W: 1 + (9 + 4 - 7)/1 = 7 */
    TH_CHECK(on == 2 && oc == 6 && oh == 5 && ow == 7, "output dims %d %d %d %d", on, oc, oh, ow);
    TH_OK(cudnnSetConvolutionGroupCount(cd, 3));
    TH_STATUS(cudnnGetConvolution2dForwardOutputDim(cd, x, w, &on, &oc, &oh, &ow), CUDNN_STATUS_BAD_PARAM);
    expect_last_error_contains("groupCount");
    TH_OK(cudnnSetConvolutionGroupCount(cd, 1));
    TH_STATUS(cudnnGetConvolution2dForwardOutputDim(cd, x, w, &on, &oc, &oh, &ow), CUDNN_STATUS_BAD_PARAM);
    /* Nd */
    int pad[3] = {1, 0, 2}, st[3] = {1, 2, 1}, dil[3] = {1, 1, 2};
    TH_OK(cudnnSetConvolutionNdDescriptor(cd, 3, pad, st, dil, CUDNN_CONVOLUTION, CUDNN_DATA_DOUBLE));
    int xd[5] = {1, 3, 5, 6, 7}, wd[5] = {4, 3, 3, 2, 3}, od[5];
    int xs[5] = {630, 210, 42, 7, 1};
    TH_OK(cudnnSetTensorNdDescriptor(x, CUDNN_DATA_DOUBLE, 5, xd, xs));
    TH_OK(cudnnSetFilterNdDescriptor(w, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NCHW, 5, wd));
    TH_OK(cudnnGetConvolutionNdForwardOutputDim(cd, x, w, 5, od));
    /* D: 1+(5+2-3)/1=5, H: 1+(6-2)/2=3, W: 1+(7+4-5)/1=7 */
    TH_CHECK(od[0] == 1 && od[1] == 4 && od[2] == 5 && od[3] == 3 && od[4] == 7, "Nd output dims %d %d %d %d %d", od[0], od[1], od[2], od[3], od[4]);
    int alen, gp[3], gs[3], gdl[3];
    TH_OK(cudnnGetConvolutionNdDescriptor(cd, 3, &alen, gp, gs, gdl, &mode, &ct));
    TH_CHECK(alen == 3 && gp[2] == 2 && gs[1] == 2 && gdl[2] == 2 && mode == CUDNN_CONVOLUTION && ct == CUDNN_DATA_DOUBLE, "conv Nd round trip");
    TH_STATUS(cudnnGetConvolution2dDescriptor(cd, &ph, &pw, &u, &v, &dh, &dw, &mode, &ct), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetConvolutionNdDescriptor(cd, 0, pad, st, dil, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyFilterDescriptor(w);
    TH_OK(cudnnDestroyConvolutionDescriptor(cd));
}

static void test_activation_desc(void)
{
    cudnnActivationDescriptor_t a;
    TH_OK(cudnnCreateActivationDescriptor(&a));
    TH_OK(cudnnSetActivationDescriptor(a, CUDNN_ACTIVATION_CLIPPED_RELU, CUDNN_PROPAGATE_NAN, 6.0));
    cudnnActivationMode_t m;
    cudnnNanPropagation_t np;
    double coef = 0, beta = 0;
    TH_OK(cudnnGetActivationDescriptor(a, &m, &np, &coef));
    TH_CHECK(m == CUDNN_ACTIVATION_CLIPPED_RELU && np == CUDNN_PROPAGATE_NAN && coef == 6.0, "activation round trip");
    TH_OK(cudnnSetActivationDescriptorSwishBeta(a, 1.5));
    TH_OK(cudnnGetActivationDescriptorSwishBeta(a, &beta));
    TH_CHECK(beta == 1.5, "swish beta");
    TH_STATUS(cudnnSetActivationDescriptor(a, (cudnnActivationMode_t)17, CUDNN_PROPAGATE_NAN, 0), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetActivationDescriptor(a, CUDNN_ACTIVATION_RELU, (cudnnNanPropagation_t)3, 0), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnDestroyActivationDescriptor(a));
}

int main(void)
{
    th_seed(1);
    test_versions();
    test_error_strings();
    test_last_error();
    test_callback();
    test_handle();
    test_tensor_desc();
    test_filter_desc();
    test_conv_desc();
    test_activation_desc();
    return th_finish();
}
