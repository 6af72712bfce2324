// Compile-only C++ test: the opaque handle typedefs must point to structs
// with exactly the cuDNN 8.9 tag names, because C++ callers (e.g. PyTorch)
// bake those tags into mangled symbol names.  The functions below are
// defined (not just declared) so that `nm` on the object file shows the
// mangled names; test_headers_compile.sh greps them.
//
// Build: c++ -std=c++11 -I<include> -c test_cxx_mangle.cpp

#include <cudnn.h>

#include <type_traits>

#define SAME(a, b) static_assert(std::is_same<a, b>::value, #a " is not " #b)

SAME(cudnnHandle_t, cudnnContext *);
SAME(cudnnTensorDescriptor_t, cudnnTensorStruct *);
SAME(cudnnPoolingDescriptor_t, cudnnPoolingStruct *);
SAME(cudnnFilterDescriptor_t, cudnnFilterStruct *);
SAME(cudnnLRNDescriptor_t, cudnnLRNStruct *);
SAME(cudnnActivationDescriptor_t, cudnnActivationStruct *);
SAME(cudnnSpatialTransformerDescriptor_t, cudnnSpatialTransformerStruct *);
SAME(cudnnOpTensorDescriptor_t, cudnnOpTensorStruct *);
SAME(cudnnReduceTensorDescriptor_t, cudnnReduceTensorStruct *);
SAME(cudnnCTCLossDescriptor_t, cudnnCTCLossStruct *);
SAME(cudnnTensorTransformDescriptor_t, cudnnTensorTransformStruct *);
SAME(cudnnDropoutDescriptor_t, cudnnDropoutStruct *);
SAME(cudnnAlgorithmDescriptor_t, cudnnAlgorithmStruct *);
SAME(cudnnAlgorithmPerformance_t, cudnnAlgorithmPerformanceStruct *);
SAME(cudnnRuntimeTag_t, struct cudnnRuntimeTag_t);
SAME(cudnnConvolutionDescriptor_t, cudnnConvolutionStruct *);
SAME(cudnnFusedOpsConstParamPack_t, cudnnFusedOpsConstParamStruct *);
SAME(cudnnFusedOpsVariantParamPack_t, cudnnFusedOpsVariantParamStruct *);
SAME(cudnnFusedOpsPlan_t, cudnnFusedOpsPlanStruct *);
SAME(cudnnRNNDescriptor_t, cudnnRNNStruct *);
SAME(cudnnPersistentRNNPlan_t, cudnnPersistentRNNPlan *);
SAME(cudnnRNNDataDescriptor_t, cudnnRNNDataStruct *);
SAME(cudnnSeqDataDescriptor_t, cudnnSeqDataStruct *);
SAME(cudnnAttnDescriptor_t, cudnnAttnStruct *);
SAME(cudnnBackendDescriptor_t, void *);
SAME(cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgoPerfStruct);
SAME(cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgoPerfStruct);
SAME(cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgoPerfStruct);
SAME(cudnnDebug_t, cudnnDebugStruct);
SAME(cudnnAlgorithm_t, cudnnAlgorithmUnionStruct);
SAME(cudnnFraction_t, cudnnFractionStruct);

// Functions with C++ linkage whose mangled names embed the struct tags.
namespace freednn_mangle_test {
void takes_handle(cudnnContext *) {}
void takes_tensor(cudnnTensorStruct *) {}
void takes_filter(cudnnFilterStruct *) {}
void takes_conv(cudnnConvolutionStruct *) {}
void takes_dropout(cudnnDropoutStruct *) {}
void takes_rnn(cudnnRNNStruct *) {}
void takes_ctc(cudnnCTCLossStruct *) {}
void takes_st(cudnnSpatialTransformerStruct *) {}
void takes_rnn_data(cudnnRNNDataStruct *) {}
void takes_attn(cudnnAttnStruct *) {}
void takes_seq_data(cudnnSeqDataStruct *) {}
void takes_perf(cudnnConvolutionFwdAlgoPerfStruct *) {}
void takes_tag(cudnnRuntimeTag_t *) {}
} // namespace freednn_mangle_test
