/* Forward convolution, direct AVX-512 kernels over NHWC (other layouts transposed through the
 * workspace): FLOAT, 2-D, groups 1. Reported as FWD_ALGO_IMPLICIT_PRECOMP_GEMM. See
 * conv_direct_nhwc_common.c. */
#include "conv_nhwc.h"

static cudnnStatus_t run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    (void)h;
    return fdnn_nhwc_direct_run(p, a);
}

const fdnn_conv_impl fdnn_conv_fwd__direct_nhwc = {
    "conv_fwd__direct_nhwc", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1, CUDNN_FMA_MATH,
    fdnn_nhwc_direct_applicable, fdnn_nhwc_direct_workspace, run,
};
