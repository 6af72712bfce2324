/* Backward-filter convolution, direct AVX-512 reduction over N*P*Q (NHWC; other layouts
 * transposed through the workspace): FLOAT, 2-D, groups 1, any stride / padding / dilation.
 * Deterministic: every filter element is summed by one thread in a fixed order. Reported as
 * BWD_FILTER_ALGO_3. See conv_direct_nhwc_common.c. */
#include "conv_nhwc.h"

static cudnnStatus_t run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    (void)h;
    return fdnn_nhwc_direct_run(p, a);
}

const fdnn_conv_impl fdnn_conv_bwd_filter__direct_nhwc = {
    "conv_bwd_filter__direct_nhwc", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, 1, CUDNN_FMA_MATH,
    fdnn_nhwc_direct_applicable, fdnn_nhwc_direct_workspace, run,
};
