/* The CPU backend's convolution implementation lists, in heuristic order (first applicable
 * wins when no algorithm is forced; Get*_v7 reports them in this order). */
#include "conv_cpu.h"

/* vectorised kernels (AVX-512, run-time checked): conv_fwd__direct_nhwc.c etc. and conv_depthwise_nhwc.c */
extern const fdnn_conv_impl fdnn_conv_fwd__direct_nhwc, fdnn_conv_bwd_data__direct_nhwc, fdnn_conv_bwd_filter__direct_nhwc;
extern const fdnn_conv_impl fdnn_conv_fwd__depthwise_nhwc, fdnn_conv_bwd_data__depthwise_nhwc, fdnn_conv_bwd_filter__depthwise_nhwc;
/* NCHW depthwise, stride 1 (conv_depthwise_nchw.c): before the NHWC kernels, which would transpose */
extern const fdnn_conv_impl fdnn_conv_fwd__depthwise_nchw, fdnn_conv_bwd_data__depthwise_nchw, fdnn_conv_bwd_filter__depthwise_nchw;
/* GEMM entries applicable only where GEMM beats the direct kernels (conv_gemm_pref.c) */
extern const fdnn_conv_impl fdnn_conv_fwd__gemm_pref, fdnn_conv_bwd_data__gemm_pref, fdnn_conv_bwd_filter__gemm_pref;
extern const fdnn_conv_impl fdnn_conv_fwd__gemm_nhwc_1x1, fdnn_conv_bwd_data__gemm_nhwc_1x1, fdnn_conv_bwd_filter__gemm_nhwc_1x1;
extern const fdnn_conv_impl fdnn_conv_fwd__gemm_nhwc_col, fdnn_conv_bwd_data__gemm_nhwc_col, fdnn_conv_bwd_filter__gemm_nhwc_col;
/* HALF / BFLOAT16 on the FLOAT kernels above, widened through the workspace (conv_cvt_f32.c) */
#define FDNN_CVT(DIR)                                                                                                  \
    extern const fdnn_conv_impl fdnn_conv_##DIR##__gemm_pref_f32, fdnn_conv_##DIR##__gemm_nhwc_1x1_f32, fdnn_conv_##DIR##__gemm_nhwc_col_f32, \
        fdnn_conv_##DIR##__direct_nhwc_f32, fdnn_conv_##DIR##__depthwise_nchw_f32, fdnn_conv_##DIR##__depthwise_nhwc_f32,           \
        fdnn_conv_##DIR##__im2col_gemm_f32;
FDNN_CVT(fwd)
FDNN_CVT(bwd_data)
FDNN_CVT(bwd_filter)
#define FDNN_CVT_LIST(DIR)                                                                                             \
    &fdnn_conv_##DIR##__gemm_pref_f32, &fdnn_conv_##DIR##__gemm_nhwc_1x1_f32, &fdnn_conv_##DIR##__gemm_nhwc_col_f32,   \
        &fdnn_conv_##DIR##__direct_nhwc_f32, &fdnn_conv_##DIR##__depthwise_nchw_f32, &fdnn_conv_##DIR##__depthwise_nhwc_f32, \
        &fdnn_conv_##DIR##__im2col_gemm_f32

static const fdnn_conv_impl *const fwd[] = {&fdnn_conv_fwd__gemm_pref, &fdnn_conv_fwd__gemm_nhwc_1x1, &fdnn_conv_fwd__gemm_nhwc_col, &fdnn_conv_fwd__direct_nhwc, &fdnn_conv_fwd__depthwise_nchw, &fdnn_conv_fwd__depthwise_nhwc, &fdnn_conv_fwd__im2col_gemm, FDNN_CVT_LIST(fwd), &fdnn_conv_fwd__direct_ref, NULL};
static const fdnn_conv_impl *const bwd_data[] = {&fdnn_conv_bwd_data__gemm_pref, &fdnn_conv_bwd_data__gemm_nhwc_1x1, &fdnn_conv_bwd_data__gemm_nhwc_col, &fdnn_conv_bwd_data__direct_nhwc, &fdnn_conv_bwd_data__depthwise_nchw, &fdnn_conv_bwd_data__depthwise_nhwc, &fdnn_conv_bwd_data__im2col_gemm, FDNN_CVT_LIST(bwd_data), &fdnn_conv_bwd_data__direct_ref, NULL};
static const fdnn_conv_impl *const bwd_filter[] = {&fdnn_conv_bwd_filter__gemm_pref, &fdnn_conv_bwd_filter__gemm_nhwc_1x1, &fdnn_conv_bwd_filter__gemm_nhwc_col, &fdnn_conv_bwd_filter__direct_nhwc, &fdnn_conv_bwd_filter__depthwise_nchw, &fdnn_conv_bwd_filter__depthwise_nhwc, &fdnn_conv_bwd_filter__im2col_gemm, FDNN_CVT_LIST(bwd_filter), &fdnn_conv_bwd_filter__direct_ref, NULL};

const fdnn_conv_impl *const *fdnn_cpu_conv_impls(fdnn_conv_dir dir)
{
    switch (dir) {
    case FDNN_CONV_FWD: return fwd;
    case FDNN_CONV_BWD_DATA: return bwd_data;
    case FDNN_CONV_BWD_FILTER: return bwd_filter;
    }
    static const fdnn_conv_impl *const none[] = {NULL};
    return none;
}
