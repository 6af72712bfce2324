/* Backward-data convolution, stride 1, as the forward direct AVX-512 kernel over dy with the
 * transposed, flipped filter: FLOAT, 2-D, groups 1, pad <= (filter-1)*dilation. Reported as
 * BWD_DATA_ALGO_1 (listed before conv_bwd_data__im2col_gemm, which runs ALGO_1 where this
 * one does not apply). See conv_direct_nhwc_common.c. */
#include "conv_nhwc.h"

static cudnnStatus_t run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    (void)h;
    return fdnn_nhwc_direct_run(p, a);
}

const fdnn_conv_impl fdnn_conv_bwd_data__direct_nhwc = {
    "conv_bwd_data__direct_nhwc", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1, CUDNN_FMA_MATH,
    fdnn_nhwc_direct_applicable, fdnn_nhwc_direct_workspace, run,
};
