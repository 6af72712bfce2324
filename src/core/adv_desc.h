/* Internal structs of the "adv" family (RNN, RNN data, CTC loss, sequence data, attention,
 * persistent RNN plan) and the CPU kernels the API files call. Owned by the RNN/CTC area. */
#ifndef FDNN_ADV_DESC_H
#define FDNN_ADV_DESC_H
#include "fdnn.h"

enum {
    FDNN_MAGIC_RNN = 0x46444e52,      /* "FDNR" */
    FDNN_MAGIC_RNNDATA = 0x46444e64,  /* "FDNd" */
    FDNN_MAGIC_CTC = 0x46444e4c,      /* "FDNL" */
    FDNN_MAGIC_SEQDATA = 0x46444e51,  /* "FDNQ" */
    FDNN_MAGIC_ATTN = 0x46444e4d,     /* "FDNM" */
    FDNN_MAGIC_RNNPLAN = 0x46444e50   /* "FDNP" */
};

struct cudnnCTCLossStruct {
    uint32_t magic;
    int is_set;
    cudnnDataType_t comp_type;
    cudnnLossNormalizationMode_t norm_mode;
    cudnnNanPropagation_t grad_mode;
    int max_label_length;             /* 0 when set through the pre-v8 setters */
};

struct cudnnRNNStruct {
    uint32_t magic;
    int is_set;
    cudnnRNNAlgo_t algo;
    cudnnRNNMode_t cell_mode;
    cudnnRNNBiasMode_t bias_mode;
    cudnnDirectionMode_t dir_mode;
    cudnnRNNInputMode_t input_mode;
    cudnnDataType_t data_type;
    cudnnDataType_t math_prec;
    cudnnMathType_t math_type;
    int input_size, hidden_size, proj_size, num_layers;
    cudnnDropoutDescriptor_t dropout;   /* may be NULL: no dropout */
    uint32_t aux_flags;
    cudnnRNNClipMode_t clip_mode;
    cudnnNanPropagation_t clip_nan;
    double lclip, rclip;
};

struct cudnnRNNDataStruct {
    uint32_t magic;
    int is_set;
    cudnnDataType_t dtype;
    cudnnRNNDataLayout_t layout;
    int max_seq, batch, vec;
    int *seq_len;                       /* batch entries */
    double fill;                        /* padding fill value */
    int has_fill;
};

struct cudnnPersistentRNNPlan {
    uint32_t magic;
    cudnnRNNDescriptor_t rnn;
    int batch;
    cudnnDataType_t dtype;
};

/* ---------------------------------------------------------------- CTC (src/cpu/ctc.c) */
/* One CTC problem on host memory. probs/grads are FLOAT with element strides st/gst over
 * (T, N, A); labels are packed (concatenated) per batch entry; blank is label 0.
 * work holds ctc_cpu_work_bytes(T, N, A, maxL) bytes. grads may be NULL. */
size_t fdnn_ctc_cpu_work_bytes(int T, int N, int A, int max_label);
void fdnn_ctc_cpu(const float *probs, const int64_t st[3], int T, int N, int A, const int *labels, const int *label_len,
                  const int *input_len, int softmax, int propagate_nan, float *costs, float *grads, const int64_t gst[3],
                  int max_label, void *work);
/* ------------------------------------------------ sequence data and multi-head attention */
/* Sequence data: dim[] and stride[] are indexed by cudnnSeqDataAxis_t (TIME, BATCH, BEAM,
 * VECT); axes[0] is the outermost axis, axes[3] the innermost (VECT). seq_len holds
 * batch*beam lengths, entry b*beam + m. */
struct cudnnSeqDataStruct {
    uint32_t magic;
    int is_set;
    cudnnDataType_t dtype;
    int dim[4];
    cudnnSeqDataAxis_t axes[4];
    int64_t stride[4];
    int *seq_len;
    size_t n_len;
    int has_fill;
    double fill;
};

struct cudnnAttnStruct {
    uint32_t magic;
    int is_set;
    unsigned mode;                        /* CUDNN_ATTN_QUERYMAP_* | CUDNN_ATTN_*_PROJ_BIASES */
    int n_heads;
    double sm_scaler;
    cudnnDataType_t data_type, comp_prec;
    cudnnMathType_t math_type;
    cudnnDropoutDescriptor_t attn_dropout, post_dropout; /* may be NULL */
    int q_size, k_size, v_size, q_proj, k_proj, v_proj, o_proj;
    int qo_max_seq, kv_max_seq, max_batch, max_beam;
};
#endif
