/* Backward-filter convolution as im2col + GEMM (FLOAT, DOUBLE): per group,
 * dW_g[Kg x Cg*T*R*S] = alpha * sum_n dy[n,g][Kg x P] * col[n,g]^T + beta * dW_g, the images
 * added in a fixed order (deterministic). 1x1 stride-1 unpadded problems with packed x use x
 * directly (workspace 0), or, FLOAT with a short reduction, its transpose (unit_xt below).
 * BWD_FILTER_ALGO_1. */
#include "conv_cpu.h"
#include "conv_nhwc.h"

static int applicable(const fdnn_conv_problem *p, char *why, size_t n) { return fdnn_cpu_conv_gemm_applicable(p, why, n); }

/* FLOAT 1x1 problems with a short reduction (P = output pixels per image <= 256) and at least 48
 * channels per group: each image's x block (Cg x P, pixels contiguous) is transposed into the
 * workspace, so that dW += dy * xT is a product with B not transposed, which fdnn_sgemm runs on
 * the streamed-B AVX-512 kernel where BLAS would pack B (rn50_1x1_2048_512_7 N=1, NCHW: 0.73-0.80
 * ms through BLAS with B transposed, oneDNN 0.50). Without AVX-512 the product is a BLAS call on
 * the transposed copy. */
static int unit_xt(const fdnn_conv_problem *p)
{
    int64_t P = (int64_t)p->out[0] * p->out[1] * p->out[2];
    return fdnn_cpu_conv_is_unit(p) && p->xtype == CUDNN_DATA_FLOAT && P <= 256 && p->c / p->g >= 48;
}

/* FLOAT 2-D 1x1 with a stride above 1 and no padding, x spatially packed, at least 16 channels
 * per group, on a CPU with the AVX-512 / AVX2 kernels: xt[q][c] (q = oh*Q + ow) is gathered
 * straight from x into the workspace (strided_xt below), so that dW += dy * xt is a product with
 * B not transposed. The im2col form copied x's strided positions into columns, and the GEMM then
 * copied those transposed again (rn50_1x1s2_256_512_56 N=1, NCHW: im2col 7%, the transpose 4%
 * and three parallel regions per image). */
static int strided_xt(const fdnn_conv_problem *p)
{
    if (p->xtype != CUDNN_DATA_FLOAT || p->c / p->g < 16 || !fdnn_nhwc_kernels_get()) return 0;
    if (p->in[0] != 1 || p->out[0] != 1 || p->flt[0] != 1 || p->stride[0] != 1 || p->pad[0] != 0) return 0;
    for (int i = 1; i < 3; i++)
        if (p->flt[i] != 1 || p->pad[i] != 0) return 0;
    return (p->stride[1] > 1 || p->stride[2] > 1) && fdnn_cpu_spatial_packed(p, p->xs, p->in);
}

static size_t workspace(const fdnn_conv_problem *p)
{
    if (unit_xt(p) || strided_xt(p)) return (size_t)p->out[0] * p->out[1] * p->out[2] * (size_t)(p->c / p->g) * sizeof(float);
    if (fdnn_cpu_conv_is_unit(p)) return 0;
    return fdnn_cpu_col_elems(p) * fdnn_dtype_size(p->xtype);
}

/* xt[P][cg] = x block [cg rows, stride xs1][P], in 16-channel column blocks that each walk all P
 * pixels (fdnn_nhwc_pad_copy does the same transpose one image row at a time, which with 7-pixel
 * rows rereads every channel's line 7 times: rn50_1x1_2048_512_7 0.68 ms against 0.59) */
static void transpose_x(const float *x, int64_t xs1, int cg, int64_t P, float *xt)
{
    const int nb = (cg + 15) / 16;
#pragma omp parallel for schedule(static) if (cg * P >= 65536)
    for (int b = 0; b < nb; b++) {
        const int c0 = b * 16, c1 = c0 + 16 < cg ? c0 + 16 : cg;
        for (int64_t q = 0; q < P; q++)
            for (int c = c0; c < c1; c++) xt[q * cg + c] = x[c * xs1 + q];
    }
}

/* xt[(oh*Q + ow) * cg + c] = x[c * xs1 + oh*sh*W + ow*sw] (x spatially packed, W its row): per
 * 16-channel block and output row, the strided positions of up to 256 columns into a 16 x 256
 * buffer, then the ISA's register transpose into xt */
static void strided_transpose_x(const fdnn_nhwc_kernels *K, const float *x, int64_t xs1, int cg, int P, int Q, int W, int sh, int sw,
                                float *xt)
{
    enum { QB = 256 };
    const int nb = (cg + 15) / 16;
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < nb; b++)
        for (int oh = 0; oh < P; oh++) {
            float buf[16 * QB];
            const int c0 = b * 16, nc = cg - c0 < 16 ? cg - c0 : 16;
            for (int q0 = 0; q0 < Q; q0 += QB) {
                const int nq = Q - q0 < QB ? Q - q0 : QB;
                for (int c = 0; c < nc; c++) {
                    const float *xr = x + (c0 + c) * xs1 + (int64_t)oh * sh * W + (int64_t)q0 * sw;
                    for (int q = 0; q < nq; q++) buf[c * QB + q] = xr[(int64_t)q * sw];
                }
                K->transpose(buf, QB, nc, nq, xt + ((int64_t)oh * Q + q0) * cg + c0, cg);
            }
        }
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
    if (unit_xt(p)) { /* the short-reduction 1x1 form above */
        if (!a->workspace || a->workspace_size < workspace(p))
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workspace too small: %zu bytes, need %zu (x transposed for a 1x1 filter)", a->workspace_size,
                             workspace(p));
        const float *x = a->x, *dy = a->y;
        float *dw = a->out, *xt = a->workspace;
        for (int g = 0; g < p->g; g++)
            for (int n = 0; n < p->n; n++) {
                transpose_x(x + (int64_t)n * p->xs[0] + (int64_t)g * cg * p->xs[1], p->xs[1], cg, P, xt);
                fdnn_sgemm(0, 0, kg, cg, (int)P, (float)a->alpha, dy + (int64_t)n * p->ys[0] + (int64_t)g * kg * p->ys[1], p->ys[1], xt, cg,
                           n == 0 ? (float)a->beta : 1.0f, dw + (int64_t)g * kg * p->ws[0], p->ws[0]);
            }
        return CUDNN_STATUS_SUCCESS;
    }
    if (strided_xt(p)) { /* the strided 1x1 form above */
        if (!a->workspace || a->workspace_size < workspace(p))
            return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workspace too small: %zu bytes, need %zu (x gathered transposed for a strided 1x1 filter)",
                             a->workspace_size, workspace(p));
        const fdnn_nhwc_kernels *K = fdnn_nhwc_kernels_get();
        const float *x = a->x, *dy = a->y;
        float *dw = a->out, *xt = a->workspace;
        for (int g = 0; g < p->g; g++)
            for (int n = 0; n < p->n; n++) {
                strided_transpose_x(K, x + (int64_t)n * p->xs[0] + (int64_t)g * cg * p->xs[1], p->xs[1], cg, p->out[1], p->out[2], (int)p->xs[3],
                                    p->stride[1], p->stride[2], xt);
                fdnn_sgemm(0, 0, kg, cg, (int)P, (float)a->alpha, dy + (int64_t)n * p->ys[0] + (int64_t)g * kg * p->ys[1], p->ys[1], xt, cg,
                           n == 0 ? (float)a->beta : 1.0f, dw + (int64_t)g * kg * p->ws[0], p->ws[0]);
            }
        return CUDNN_STATUS_SUCCESS;
    }
    if (p->xtype == CUDNN_DATA_DOUBLE) BWD_FILTER_GEMM(double, fdnn_dgemm, fdnn_cpu_im2col_d)
    else BWD_FILTER_GEMM(float, fdnn_sgemm, fdnn_cpu_im2col_f)
    return CUDNN_STATUS_SUCCESS;
}

const fdnn_conv_impl fdnn_conv_bwd_filter__im2col_gemm = {
    "conv_bwd_filter__im2col_gemm", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, 1, CUDNN_FMA_MATH, applicable, workspace, run,
};
