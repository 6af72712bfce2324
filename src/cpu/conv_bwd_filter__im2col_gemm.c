/* Backward-filter convolution as im2col + GEMM (FLOAT, DOUBLE): per group,
 * dW_g[Kg x Cg*T*R*S] = alpha * sum_n dy[n,g][Kg x P] * col[n,g]^T + beta * dW_g, the images
 * added in a fixed order (deterministic). 1x1 stride-1 unpadded problems with packed x use x
 * directly (workspace 0). BWD_FILTER_ALGO_1. */
#include "conv_cpu.h"

static int applicable(const fdnn_conv_problem *p, char *why, size_t n) { return fdnn_cpu_conv_gemm_applicable(p, why, n); }

static size_t workspace(const fdnn_conv_problem *p)
{
    if (fdnn_cpu_conv_is_unit(p)) return 0;
    return fdnn_cpu_col_elems(p) * fdnn_dtype_size(p->xtype);
}

#define BWD_FILTER_GEMM(T, GEMM, IM2COL)                                                                               \
    {                                                                                                                  \
        const T *x = a->x, *dy = a->y;                                                                                 \
        T *dw = a->out, *col = a->workspace;                                                                           \
        for (int g = 0; g < p->g; g++)                                                                                 \
            for (int n = 0; n < p->n; n++) {                                                                           \
                const T *bm;                                                                                           \
                int64_t ldb;                                                                                           \
                if (unit) {                                                                                            \
                    bm = x + (int64_t)n * p->xs[0] + (int64_t)g * cg * p->xs[1];                                       \
                    ldb = p->xs[1];                                                                                    \
                } else {                                                                                               \
                    IM2COL(p, x, n, g, col);                                                                           \
                    bm = col;                                                                                          \
                    ldb = P;                                                                                           \
                }                                                                                                      \
                GEMM(0, 1, kg, kk, (int)P, (T)a->alpha, dy + (int64_t)n * p->ys[0] + (int64_t)g * kg * p->ys[1], p->ys[1], bm, \
                     ldb, n == 0 ? (T)a->beta : (T)1, dw + (int64_t)g * kg * p->ws[0], p->ws[0]);                      \
            }                                                                                                          \
    }

static cudnnStatus_t run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    (void)h;
    int cg = p->c / p->g, kg = p->k / p->g, kk = cg * p->flt[0] * p->flt[1] * p->flt[2];
    int64_t P = (int64_t)p->out[0] * p->out[1] * p->out[2];
    int unit = fdnn_cpu_conv_is_unit(p);
    if (!unit && a->workspace_size < workspace(p)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workspace too small");
    if (p->xtype == CUDNN_DATA_DOUBLE) BWD_FILTER_GEMM(double, fdnn_dgemm, fdnn_cpu_im2col_d)
    else BWD_FILTER_GEMM(float, fdnn_sgemm, fdnn_cpu_im2col_f)
    return CUDNN_STATUS_SUCCESS;
}

const fdnn_conv_impl fdnn_conv_bwd_filter__im2col_gemm = {
    "conv_bwd_filter__im2col_gemm", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, 1, CUDNN_FMA_MATH, applicable, workspace, run,
};
