/* CUDA implementations of the "adv" family (RNN engine, CTC loss), called from the engine
 * entries in src/cpu/rnn_cpu.c and from src/api/ctc.c when the handle is a CUDA handle. Without
 * the CUDA backend these are inline NOT_SUPPORTED versions. */
#ifndef FDNN_CUDA_ADV_H
#define FDNN_CUDA_ADV_H
#ifdef __cplusplus
extern "C" {
#endif
#include "../cpu/rnn_cpu.h"
#include "../cpu/attn_cpu.h"

#ifdef FDNN_HAVE_CUDA
cudnnStatus_t fdnn_rnn_cuda_forward(const fdnn_rnn_run *r, const fdnn_rnn_io *xio, const void *x, const fdnn_rnn_io *yio, void *y,
                                    const void *hx, void *hy, const void *cx, void *cy);
cudnnStatus_t fdnn_rnn_cuda_backward_data(const fdnn_rnn_run *r, const fdnn_rnn_io *yio, const void *dy, const fdnn_rnn_io *xio, void *dx,
                                          const void *hx, const void *dhy, void *dhx, const void *cx, const void *dcy, void *dcx);
cudnnStatus_t fdnn_rnn_cuda_backward_weights(const fdnn_rnn_run *r, int add, const void *hx, void *dw);
/* CTC loss (src/cuda/ctc_cuda.cu); arguments as fdnn_ctc_cpu. labels_on_host: the three label
 * arrays are host memory (cudnnCTCLoss) and are copied into the workspace's int area;
 * otherwise they are device memory (cudnnCTCLoss_v8) and validated by the kernel. */
cudnnStatus_t fdnn_ctc_cuda(cudnnHandle_t h, const float *probs, const int64_t st[3], int T, int N, int A, const int *labels,
                            const int *label_len, const int *input_len, int labels_on_host, int softmax, int propagate_nan, float *costs,
                            float *grads, const int64_t gst[3], int max_label, void *work);
/* multi-head attention engine (src/cuda/attn_cuda.cu), arguments as the CPU engine's */
cudnnStatus_t fdnn_attn_cuda_forward(const fdnn_attn_run *r, int currIdx, const struct cudnnSeqDataStruct *qd, const void *q, const void *resid,
                                     const struct cudnnSeqDataStruct *kd, const void *k, const struct cudnnSeqDataStruct *vd, const void *v,
                                     const struct cudnnSeqDataStruct *od, void *out);
cudnnStatus_t fdnn_attn_cuda_backward_data(const fdnn_attn_run *r, const struct cudnnSeqDataStruct *dod, const void *dout,
                                           const struct cudnnSeqDataStruct *dqd, void *dq, const struct cudnnSeqDataStruct *dkd, void *dk,
                                           const struct cudnnSeqDataStruct *dvd, void *dv);
cudnnStatus_t fdnn_attn_cuda_backward_weights(const fdnn_attn_run *r, int add, const struct cudnnSeqDataStruct *qd, const void *q,
                                              const struct cudnnSeqDataStruct *kd, const void *k, const struct cudnnSeqDataStruct *vd, const void *v,
                                              const struct cudnnSeqDataStruct *dod, const void *dout, void *dw);
#else
static inline cudnnStatus_t fdnn_rnn_cuda_unavailable(void)
{
    return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "FreeDNN was built without the CUDA backend");
}
#define fdnn_rnn_cuda_forward(...) fdnn_rnn_cuda_unavailable()
#define fdnn_rnn_cuda_backward_data(...) fdnn_rnn_cuda_unavailable()
#define fdnn_rnn_cuda_backward_weights(...) fdnn_rnn_cuda_unavailable()
#define fdnn_ctc_cuda(...) fdnn_rnn_cuda_unavailable()
#define fdnn_attn_cuda_forward(...) fdnn_rnn_cuda_unavailable()
#define fdnn_attn_cuda_backward_data(...) fdnn_rnn_cuda_unavailable()
#define fdnn_attn_cuda_backward_weights(...) fdnn_rnn_cuda_unavailable()
#endif

#ifdef __cplusplus
}
#endif
#endif
