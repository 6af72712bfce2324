/* Forward convolution as im2col + GEMM (FLOAT, DOUBLE): per image and group,
 * y[Kg x P] = W_g[Kg x Cg*T*R*S] * col[Cg*T*R*S x P]. The column matrix lives in the
 * workspace; a 1x1, stride-1, unpadded convolution over spatially packed x uses x directly
 * (workspace 0). Reported as FWD_ALGO_GEMM. */
#include "conv_cpu.h"

static int applicable(const fdnn_conv_problem *p, char *why, size_t n) { return fdnn_cpu_conv_gemm_applicable(p, why, n); }

static size_t workspace(const fdnn_conv_problem *p)
{
    if (fdnn_cpu_conv_is_unit(p)) return 0;
    return fdnn_cpu_col_elems(p) * fdnn_dtype_size(p->xtype);
}

#define FWD_GEMM(T, GEMM, IM2COL)                                                                                      \
    {                                                                                                                  \
        const T *x = a->x, *w = a->w;                                                                                  \
        T *y = a->out, *col = a->workspace;                                                                            \
        if (unit && p->n * p->g >= fdnn_cpu_threads()) { /* whole images per thread, one GEMM each */                 \
            _Pragma("omp parallel for schedule(static)") for (int ng = 0; ng < p->n * p->g; ng++)                      \
            {                                                                                                          \
                int n = ng / p->g, g = ng % p->g;                                                                      \
                GEMM(0, 0, kg, (int)P, kk, (T)a->alpha, w + (int64_t)g * kg * p->ws[0], p->ws[0],                      \
                     x + (int64_t)n * p->xs[0] + (int64_t)g * cg * p->xs[1], p->xs[1], (T)a->beta,                     \
                     y + (int64_t)n * p->ys[0] + (int64_t)g * kg * p->ys[1], p->ys[1]);                                \
            }                                                                                                          \
        } else                                                                                                         \
        for (int n = 0; n < p->n; n++)                                                                                 \
            for (int g = 0; g < p->g; g++) {                                                                           \
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
                GEMM(0, 0, kg, (int)P, kk, (T)a->alpha, w + (int64_t)g * kg * p->ws[0], p->ws[0], bm, ldb, (T)a->beta, \
                     y + (int64_t)n * p->ys[0] + (int64_t)g * kg * p->ys[1], p->ys[1]);                                \
            }                                                                                                          \
    }

static cudnnStatus_t run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    (void)h;
    int cg = p->c / p->g, kg = p->k / p->g, kk = cg * p->flt[0] * p->flt[1] * p->flt[2];
    int64_t P = (int64_t)p->out[0] * p->out[1] * p->out[2];
    int unit = fdnn_cpu_conv_is_unit(p);
    if (!unit && a->workspace_size < workspace(p)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workspace too small");
    if (p->xtype == CUDNN_DATA_DOUBLE) FWD_GEMM(double, fdnn_dgemm, fdnn_cpu_im2col_d)
    else FWD_GEMM(float, fdnn_sgemm, fdnn_cpu_im2col_f)
    return CUDNN_STATUS_SUCCESS;
}

const fdnn_conv_impl fdnn_conv_fwd__im2col_gemm = {
    "conv_fwd__im2col_gemm", CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 1, CUDNN_FMA_MATH, applicable, workspace, run,
};
