/* Multi-head attention on the CPU backend (math in docs/attention.md). All arithmetic is in
 * double; FLOAT, DOUBLE and HALF data are converted on load and store. */
#ifndef FDNN_ATTN_CPU_H
#define FDNN_ATTN_CPU_H
#include "../core/adv_desc.h"

/* Sizes derived from an attention descriptor and a problem (or the descriptor's maxima). */
typedef struct fdnn_attn_geom {
    int H;                 /* heads */
    int qS, kS, vS;        /* input vector sizes */
    int qP, kP, vP, oP;    /* projection sizes as given (0 = none) */
    int Qp, Kp, Vp, O;     /* per-head sizes after projection, output vector size */
    int bias;              /* projection biases enabled */
    int one_to_one;        /* CUDNN_ATTN_QUERYMAP_ONE_TO_ONE */
    double scale;          /* smScaler */
    int Tq, Tk, B, Mq, Mkv; /* time steps of Q/O and K/V, batch, beams of Q and K/V */
} fdnn_attn_geom;

/* Geometry at the descriptor's maxima (Tq/Tk/B/Mq/Mkv = qoMax, kvMax, maxBatch, maxBeam). */
void fdnn_attn_geom_of(const struct cudnnAttnStruct *a, fdnn_attn_geom *g);
/* Element offset in the weight buffer of weight kind (cudnnMultiHeadAttnWeightKind_t), its dims
 * and strides (docs/attention.md); -1 when that kind does not exist. */
int64_t fdnn_attn_weight_off(const fdnn_attn_geom *g, int kind, int dims[3], int strides[3]);
int64_t fdnn_attn_weight_count(const fdnn_attn_geom *g);
size_t fdnn_attn_work_bytes(const fdnn_attn_geom *g);
size_t fdnn_attn_reserve_bytes(const fdnn_attn_geom *g);

typedef struct fdnn_attn_run {
    cudnnHandle_t handle;             /* a CUDA handle sends the engine entries to src/cuda/attn_cuda.cu */
    fdnn_attn_geom g;                 /* with the problem's Tq, Tk, B, Mq, Mkv */
    cudnnDataType_t dt;
    const int *lenq, *lenkv;          /* B*Mq and B*Mkv sequence lengths */
    const int *lo, *hi;               /* attention window per query time step (Tq entries) */
    const struct cudnnDropoutStruct *attn_drop, *post_drop; /* NULL: none (or not training) */
    const void *w;
    double *work;                     /* fdnn_attn_work_bytes of the problem */
    double *res;                      /* reserve space; NULL in inference */
} fdnn_attn_run;

/* Engine entries: CPU, or the GPU when r->handle is a CUDA handle. */
cudnnStatus_t fdnn_attn_cpu_forward(const fdnn_attn_run *r, int currIdx, const struct cudnnSeqDataStruct *qd, const void *q, const void *resid,
                           const struct cudnnSeqDataStruct *kd, const void *k, const struct cudnnSeqDataStruct *vd, const void *v,
                           const struct cudnnSeqDataStruct *od, void *out);
cudnnStatus_t fdnn_attn_cpu_backward_data(const fdnn_attn_run *r, const struct cudnnSeqDataStruct *dod, const void *dout,
                                 const struct cudnnSeqDataStruct *dqd, void *dq, const struct cudnnSeqDataStruct *dkd, void *dk,
                                 const struct cudnnSeqDataStruct *dvd, void *dv);
cudnnStatus_t fdnn_attn_cpu_backward_weights(const fdnn_attn_run *r, int add, const struct cudnnSeqDataStruct *qd, const void *q,
                                    const struct cudnnSeqDataStruct *kd, const void *k, const struct cudnnSeqDataStruct *vd, const void *v,
                                    const struct cudnnSeqDataStruct *dod, const void *dout, void *dw);
#endif
