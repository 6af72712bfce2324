/* Shared by the RNN API files (v8 and v6/v7): checks and setters on the one descriptor. */
#ifndef FDNN_RNN_INTERNAL_H
#define FDNN_RNN_INTERNAL_H
#include "../core/adv_desc.h"
cudnnStatus_t fdnn_rnn_live(const struct cudnnRNNStruct *r, const char *name);
cudnnStatus_t fdnn_rnn_check(const struct cudnnRNNStruct *r, const char *name);
cudnnStatus_t fdnn_rnn_data_check(const struct cudnnRNNDataStruct *d, const char *name);
cudnnStatus_t fdnn_rnn_set(struct cudnnRNNStruct *r, cudnnRNNAlgo_t algo, cudnnRNNMode_t cellMode, cudnnRNNBiasMode_t biasMode,
                           cudnnDirectionMode_t dirMode, cudnnRNNInputMode_t inputMode, cudnnDataType_t dataType, cudnnDataType_t mathPrec,
                           cudnnMathType_t mathType, int inputSize, int hiddenSize, int projSize, int numLayers,
                           cudnnDropoutDescriptor_t dropoutDesc, uint32_t auxFlags);
cudnnStatus_t fdnn_rnn_set_clip(struct cudnnRNNStruct *r, cudnnRNNClipMode_t clipMode, cudnnNanPropagation_t nan, double lclip, double rclip);
void fdnn_rnn_fill_tensor(struct cudnnTensorStruct *t, cudnnDataType_t dt, int d0, int d1, int d2);
#include "../cpu/rnn_cpu.h"
cudnnStatus_t fdnn_rnn_prepare(cudnnHandle_t handle, const struct cudnnRNNStruct *rd, const int32_t *devSeqLengths,
                               const struct cudnnRNNDataStruct *xd, const struct cudnnRNNDataStruct *yd, const struct cudnnTensorStruct *hd,
                               const struct cudnnTensorStruct *cd, size_t wsize, const void *w, size_t work_size, void *work, size_t res_size,
                               void *res, int training, fdnn_rnn_run *run, fdnn_rnn_io *xio, fdnn_rnn_io *yio, int64_t **pack);
#endif
