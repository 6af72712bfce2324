/* FreeDNN internal core: the descriptor structs behind cuDNN's opaque handles, error and
 * last-error helpers, logging, data-type helpers. Every library source file includes this.
 * It relies only on our own public headers (include/), never on NVIDIA's. */
#ifndef FDNN_CORE_H
#define FDNN_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include "cudnn.h"
#include "freednn.h"

#if CUDNN_VERSION != 8907
#error "FreeDNN sources must see FreeDNN's own cudnn.h (CUDNN_VERSION 8907), not another cuDNN's"
#endif

#define FDNN_EXPORT __attribute__((visibility("default")))

/* ---------------------------------------------------------------- backends */
enum { FDNN_BACKEND_CPU = 0, FDNN_BACKEND_CUDA = 1, FDNN_BACKEND_COUNT = 2 };

/* Magic values tag every live object so that a destroyed or foreign pointer is caught as
 * BAD_PARAM instead of being used. */
enum {
    FDNN_MAGIC_HANDLE = 0x46444e48,   /* "FDNH" */
    FDNN_MAGIC_TENSOR = 0x46444e54,
    FDNN_MAGIC_FILTER = 0x46444e46,
    FDNN_MAGIC_CONV = 0x46444e43,
    FDNN_MAGIC_ACT = 0x46444e41,
    FDNN_MAGIC_DROPOUT = 0x46444e44,
    FDNN_MAGIC_DEAD = 0x44454144
};

typedef struct fdnn_plan_cache fdnn_plan_cache;

struct cudnnContext {
    uint32_t magic;
    int backend;              /* FDNN_BACKEND_* */
    cudaStream_t stream;      /* user stream (CUDA backend); NULL = default stream */
    int device;               /* CUDA device ordinal, -1 on CPU */
    int nthreads;             /* CPU threads used by this handle (OpenMP) */
    void *cuda;               /* CUDA backend private state (src/cuda), NULL on CPU */
    fdnn_plan_cache *plans;   /* per-handle plan cache, backend specific */
};

/* A tensor: 3..8 dims in N, C, (D,) H, W order, strides in elements. */
struct cudnnTensorStruct {
    uint32_t magic;
    int is_set;
    cudnnDataType_t dtype;
    cudnnTensorFormat_t format; /* as given to a format-taking setter; NCHW otherwise */
    int nb_dims;
    int dim[CUDNN_DIM_MAX];
    int stride[CUDNN_DIM_MAX];
    int vect;                   /* channels per vector for NCHW_VECT_C (4 or 32), else 1 */
};

/* A filter: K, C, (D,) R, S; packed, KCRS when format is NCHW, KRSC when NHWC. */
struct cudnnFilterStruct {
    uint32_t magic;
    int is_set;
    cudnnDataType_t dtype;
    cudnnTensorFormat_t format;
    int nb_dims;
    int dim[CUDNN_DIM_MAX];
    int vect;
};

#define FDNN_MAX_SPATIAL 6  /* CUDNN_DIM_MAX - 2 */

struct cudnnConvolutionStruct {
    uint32_t magic;
    int is_set;
    int nb_spatial;                 /* 2 for 2-D, 3 for 3-D, ... */
    int pad[FDNN_MAX_SPATIAL];
    int stride[FDNN_MAX_SPATIAL];
    int dilation[FDNN_MAX_SPATIAL];
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute_type;
    int group_count;
    cudnnMathType_t math_type;
    cudnnReorderType_t reorder_type;
};

struct cudnnActivationStruct {
    uint32_t magic;
    int is_set;
    cudnnActivationMode_t mode;
    cudnnNanPropagation_t nan_opt;
    double coef;
    double swish_beta;
};

/* Dropout: the mask of element i is fdnn_dropout_keep(seed, 0, i, dropout) (src/core/philox.h);
 * states memory holds nothing the mask depends on, so restore only needs the seed. */
struct cudnnDropoutStruct {
    uint32_t magic;
    int is_set;
    cudnnHandle_t handle;
    float dropout;
    unsigned long long seed;
    void *states;
    size_t state_size;
};

/* --------------------------------------------------------------- errors */
/* Record `fmt` as the calling thread's last error (prefixed by the API function being
 * executed), log it at error level, and return `status`. Use through FDNN_FAIL. */
cudnnStatus_t fdnn_error(cudnnStatus_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#define FDNN_FAIL(status, ...) fdnn_error((status), __VA_ARGS__)

/* The function every unimplemented API entry returns through. */
cudnnStatus_t fdnn_not_implemented(const char *func);

/* Name of the public function currently executing on this thread (set by FDNN_API_ENTER). */
const char *fdnn_current_api(void);
void fdnn_set_current_api(const char *name);

/* ---------------------------------------------------------------- logging */
extern int fdnn_log_mask;   /* bit CUDNN_SEV_* set when that level is enabled; read once */
void fdnn_log_init(void);
void fdnn_log(cudnnSeverity_t sev, cudnnHandle_t handle, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline int fdnn_log_on(cudnnSeverity_t sev) { return (fdnn_log_mask >> sev) & 1; }

/* Every public function starts with FDNN_API_ENTER(): it names the call for error messages
 * and, at info level, logs "function X() called" (one line per API call). FDNN_API_LOG adds the
 * call's arguments and descriptor contents as indented lines below it, as cuDNN's log does.
 * Nothing is formatted unless info logging is on. */
void fdnn_log_call(const char *func);
#define FDNN_API_ENTER()                                                     \
    do {                                                                     \
        fdnn_set_current_api(__func__);                                      \
        if (fdnn_log_on(CUDNN_SEV_INFO)) fdnn_log_call(__func__);            \
    } while (0)
#define FDNN_API_LOG(handle, ...)                                            \
    do {                                                                     \
        if (fdnn_log_on(CUDNN_SEV_INFO)) fdnn_log(CUDNN_SEV_INFO, handle, __VA_ARGS__); \
    } while (0)

/* Descriptor pretty-printers for logs and messages (write into buf, return buf). */
const char *fdnn_tensor_str(const struct cudnnTensorStruct *t, char *buf, size_t n);
const char *fdnn_filter_str(const struct cudnnFilterStruct *f, char *buf, size_t n);
const char *fdnn_conv_str(const struct cudnnConvolutionStruct *c, char *buf, size_t n);

/* ----------------------------------------------------------- validation */
cudnnStatus_t fdnn_check_handle(cudnnHandle_t h, const char *argname);
cudnnStatus_t fdnn_check_tensor(const struct cudnnTensorStruct *t, const char *argname);
cudnnStatus_t fdnn_check_filter(const struct cudnnFilterStruct *f, const char *argname);
cudnnStatus_t fdnn_check_conv(const struct cudnnConvolutionStruct *c, const char *argname);
cudnnStatus_t fdnn_check_activation(const struct cudnnActivationStruct *a, const char *argname);
#define FDNN_CHECK(expr)                          \
    do {                                          \
        cudnnStatus_t fdnn_st_ = (expr);          \
        if (fdnn_st_ != CUDNN_STATUS_SUCCESS) return fdnn_st_; \
    } while (0)
#define FDNN_CHECK_PTR(p, name)                                                        \
    do {                                                                               \
        if ((p) == NULL) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", name); \
    } while (0)

/* ---------------------------------------------------------------- dtypes */
size_t fdnn_dtype_size(cudnnDataType_t t);      /* bytes per element (per vector for x4/x32); 0 if unknown */
const char *fdnn_dtype_name(cudnnDataType_t t); /* "FLOAT", "HALF", ... */
int fdnn_dtype_vect(cudnnDataType_t t);         /* 4 for INT8x4/UINT8x4, 32 for INT8x32, else 1 */
int fdnn_dtype_is_float_scaling(cudnnDataType_t t); /* alpha/beta are float (not double) */
float fdnn_half_to_float(uint16_t h);
uint16_t fdnn_float_to_half(float f);
float fdnn_bf16_to_float(uint16_t h);
uint16_t fdnn_float_to_bf16(float f);
/* Element load/store through the type tag, for generic (reference) paths. Index is in elements
 * of the scalar type (INT8x4 counts each int8). Stores round to nearest and saturate ints. */
double fdnn_load(const void *base, cudnnDataType_t t, int64_t idx);
void fdnn_store(void *base, cudnnDataType_t t, int64_t idx, double v);
/* alpha/beta scaling factors: float* for all types except DOUBLE, per cuDNN. */
double fdnn_scalar(const void *p, cudnnDataType_t tensor_type);

/* Number of elements spanned and the packed element count of a tensor. */
int64_t fdnn_tensor_elems(const struct cudnnTensorStruct *t);
int64_t fdnn_tensor_span(const struct cudnnTensorStruct *t); /* 1 + max offset */
int64_t fdnn_filter_elems(const struct cudnnFilterStruct *f);

/* --------------------------------------------------------------- env */
const char *fdnn_getenv(const char *name);
int fdnn_env_int(const char *name, int dflt);

#endif
