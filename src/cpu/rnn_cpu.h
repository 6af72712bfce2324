/* The CPU RNN engine shared by the v8 and the v6/v7 APIs. All math runs in double; data of any
 * supported type (FLOAT, DOUBLE, HALF) is converted on load and store. */
#ifndef FDNN_RNN_CPU_H
#define FDNN_RNN_CPU_H
#include "../core/adv_desc.h"

/* Row-major C = alpha*op(A)*op(B) + beta*C (src/cpu/rnn_gemm.c). */
void fdnn_rnn_dgemm(int transA, int transB, int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
                    double beta, double *C, int ldc);

/* Geometry derived from an RNN descriptor. */
typedef struct fdnn_rnn_geom {
    int mode, G, H, P, L, D, in0, skip, bias_w, bias_r, has_proj;
} fdnn_rnn_geom;
void fdnn_rnn_geom_of(const struct cudnnRNNStruct *r, fdnn_rnn_geom *g);
int fdnn_rnn_layer_in(const fdnn_rnn_geom *g, int layer);
/* Element offset of a matrix (is_bias 0) or bias (1) of linear layer id in pseudo layer pl;
 * -1 when that parameter does not exist. rows/cols get its shape (cols 1 for biases). */
int64_t fdnn_rnn_param(const fdnn_rnn_geom *g, int pl, int id, int is_bias, int *rows, int *cols);
int64_t fdnn_rnn_weight_count(const fdnn_rnn_geom *g);
/* Scratch sizes in bytes for a problem of maxSeq x batch. */
size_t fdnn_rnn_reserve_bytes(const fdnn_rnn_geom *g, int T, int N);
size_t fdnn_rnn_work_bytes(const fdnn_rnn_geom *g, int T, int N, int training);
/* Size of the workspace part before the inference-time reserve, in doubles; its last N+T+2
 * doubles are left for the CUDA engine's device copy of lengths and pack offsets. */
int64_t fdnn_rnn_work_doubles(const fdnn_rnn_geom *g, int T, int N);

/* One sequence-data buffer: element (t, n, v) -> offset via layout. */
typedef struct fdnn_rnn_io {
    cudnnRNNDataLayout_t layout;
    cudnnDataType_t dtype;
    int T, N, V;
    const int *len;        /* per batch entry */
    int64_t *pack_off;     /* SEQ_MAJOR_PACKED: first row of each time step (T+1 entries) */
    int has_fill;
    double fill;
} fdnn_rnn_io;
int64_t fdnn_rnn_io_off(const fdnn_rnn_io *io, int t, int n);

typedef struct fdnn_rnn_run {
    cudnnHandle_t handle;       /* a CUDA handle sends the engine entries to src/cuda/rnn_cuda.cu */
    const struct cudnnRNNStruct *desc;
    fdnn_rnn_geom g;
    int T, N;
    const int *len;
    cudnnDataType_t dtype;      /* of weights, h and c */
    int training;
    const void *w;              /* weight space */
    void *work;                 /* workspace */
    void *reserve;              /* reserve space (training) */
} fdnn_rnn_run;

/* Engine entries: run on the CPU, or on the GPU when r->handle is a CUDA handle. */
cudnnStatus_t fdnn_rnn_cpu_forward(const fdnn_rnn_run *r, const fdnn_rnn_io *xio, const void *x, const fdnn_rnn_io *yio, void *y,
                          const void *hx, void *hy, const void *cx, void *cy);
cudnnStatus_t fdnn_rnn_cpu_backward_data(const fdnn_rnn_run *r, const fdnn_rnn_io *yio, const void *dy, const fdnn_rnn_io *xio, void *dx,
                                const void *hx, const void *dhy, void *dhx, const void *cx, const void *dcy, void *dcx);
cudnnStatus_t fdnn_rnn_cpu_backward_weights(const fdnn_rnn_run *r, int add, const void *hx, void *dw);
#endif
