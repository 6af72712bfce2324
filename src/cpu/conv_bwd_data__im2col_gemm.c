/* Backward-data convolution as GEMM + col2im (FLOAT, DOUBLE): per image and group,
 * col[Cg*T*R*S x P] = W_g^T * dy[Kg x P], then each dx row adds the column entries that fall
 * on it (one thread per row, a fixed order: deterministic), blended with alpha/beta. 1x1 stride-1 unpadded
 * problems with packed dx write dx straight from the GEMM (workspace 0); other unpadded 1x1
 * problems (strided) copy the column entries to the strided positions (COL2IM_1X1). BWD_DATA_ALGO_1. */
#include "conv_cpu.h"
#include <string.h>

static int applicable(const fdnn_conv_problem *p, char *why, size_t n) { return fdnn_cpu_conv_gemm_applicable(p, why, n); }

static size_t workspace(const fdnn_conv_problem *p)
{
    if (fdnn_cpu_conv_is_unit(p)) return 0;
    return fdnn_cpu_col_elems(p) * fdnn_dtype_size(p->xtype);
}

/* col2im of a general filter: dx rows (c, id, ih) in parallel, each set to beta * dx (0 when
 * beta == 0, dx not read), then, for every filter tap (t, r) whose output row it lies on, the
 * column entries of the taps s along the row added at dx(id, ih, ow*sw + s'*dw - pw) for the ow
 * that land inside it (s' = s for cross-correlation, S-1-s for convolution). Taps go in
 * (t, r, s) order and a row belongs to one thread: deterministic. The gather it replaced (each
 * dx element over all R*S taps, a divisibility test per tap, threads over the channels only) made
 * the ResNet-50 stem (7x7 stride 2, C = 3) 6.7 ms at N=1 and 54.7 at N=8 against 1.5 and 13.0
 * now (2 threads), most of it in the col2im. */
#define COL2IM(T)                                                                                                      \
    _Pragma("omp parallel for schedule(static)") for (int64_t row = 0; row < (int64_t)cg * p->in[0] * p->in[1]; row++)  \
    {                                                                                                                  \
        const int64_t dh = (int64_t)p->in[0] * p->in[1];                                                               \
        const int c = (int)(row / dh), id = (int)((row - c * dh) / p->in[1]), ih = (int)(row - c * dh - (int64_t)id * p->in[1]); \
        const int64_t xw = p->xs[4];                                                                                   \
        T *o = dx + (int64_t)n * p->xs[0] + (int64_t)(g * cg + c) * p->xs[1] + (int64_t)id * p->xs[2] + (int64_t)ih * p->xs[3]; \
        for (int iw = 0; iw < p->in[2]; iw++) o[iw * xw] = a->beta != 0 ? (T)a->beta * o[iw * xw] : (T)0;              \
        const T alpha = (T)a->alpha;                                                                                   \
        for (int t = 0; t < TT; t++) {                                                                                 \
            const int nd = id + p->pad[0] - (cc ? t : TT - 1 - t) * p->dil[0];                                         \
            if (nd < 0 || nd % p->stride[0] || nd / p->stride[0] >= p->out[0]) continue;                               \
            for (int r = 0; r < R; r++) {                                                                              \
                const int nh = ih + p->pad[1] - (cc ? r : R - 1 - r) * p->dil[1];                                      \
                if (nh < 0 || nh % p->stride[1] || nh / p->stride[1] >= p->out[1]) continue;                           \
                const int64_t pos = ((int64_t)(nd / p->stride[0]) * p->out[1] + nh / p->stride[1]) * p->out[2];        \
                for (int s = 0; s < S; s++) {                                                                          \
                    const int sw = p->stride[2], off = (cc ? s : S - 1 - s) * p->dil[2] - p->pad[2]; /* iw = ow*sw + off */ \
                    if (p->in[2] - 1 - off < 0) continue;                                                              \
                    const int lo = off < 0 ? (-off + sw - 1) / sw : 0;                                                 \
                    const int hi = (p->in[2] - 1 - off) / sw + 1 < p->out[2] ? (p->in[2] - 1 - off) / sw + 1 : p->out[2]; \
                    const T *crow = col + (((int64_t)(c * TT + t) * R + r) * S + s) * P + pos;                         \
                    for (int ow = lo; ow < hi; ow++) o[(int64_t)(ow * sw + off) * xw] += alpha * crow[ow];             \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
    }

/* the same for an unpadded 1x1 filter (any stride): dx(id, ih, iw) is the column entry of output
 * position (id, ih, iw) / stride where every coordinate divides by its stride, else 0 */
#define COL2IM_1X1(T)                                                                                                  \
    _Pragma("omp parallel for schedule(static)") for (int c = 0; c < cg; c++)                                          \
    {                                                                                                                  \
        T *dxc = dx + (int64_t)n * p->xs[0] + (int64_t)(g * cg + c) * p->xs[1];                                        \
        const T *colc = col + (int64_t)c * P;                                                                          \
        const int sd = p->stride[0], sh = p->stride[1], sw = p->stride[2];                                             \
        for (int id = 0; id < p->in[0]; id++)                                                                          \
            for (int ih = 0; ih < p->in[1]; ih++) {                                                                    \
                const int on = id % sd == 0 && id / sd < p->out[0] && ih % sh == 0 && ih / sh < p->out[1];             \
                const T *crow = colc + ((int64_t)(id / sd) * p->out[1] + ih / sh) * p->out[2];                         \
                T *o = dxc + (int64_t)id * p->xs[2] + (int64_t)ih * p->xs[3];                                          \
                if (a->beta == 0 && p->xs[4] == 1) { /* packed rows: zero the row, then place the entries */          \
                    memset(o, 0, sizeof(T) * (size_t)p->in[2]);                                                        \
                    if (on)                                                                                            \
                        for (int q = 0; q < p->out[2] && (int64_t)q * sw < p->in[2]; q++) o[(int64_t)q * sw] = (T)a->alpha * crow[q]; \
                    continue;                                                                                          \
                }                                                                                                      \
                for (int iw = 0, q = 0, m = 0; iw < p->in[2]; iw++) {                                                  \
                    T acc = on && m == 0 && q < p->out[2] ? crow[q] : (T)0; /* m = iw % sw, q = iw / sw */            \
                    T v = (T)a->alpha * acc;                                                                           \
                    if (a->beta != 0) v += (T)a->beta * o[(int64_t)iw * p->xs[4]];                                     \
                    o[(int64_t)iw * p->xs[4]] = v;                                                                     \
                    if (++m == sw) {                                                                                   \
                        m = 0;                                                                                         \
                        q++;                                                                                           \
                    }                                                                                                  \
                }                                                                                                      \
            }                                                                                                          \
    }

#define BWD_DATA_GEMM(T, GEMM)                                                                                         \
    {                                                                                                                  \
        const T *dy = a->y, *w = a->w;                                                                                 \
        T *dx = a->out, *col = a->workspace;                                                                           \
        if (unit && p->n * p->g >= fdnn_cpu_threads()) { /* whole images per thread, one GEMM each */                 \
            _Pragma("omp parallel for schedule(static)") for (int ng = 0; ng < p->n * p->g; ng++)                      \
            {                                                                                                          \
                int n = ng / p->g, g = ng % p->g;                                                                      \
                GEMM(1, 0, cg, (int)P, kg, (T)a->alpha, w + (int64_t)g * kg * p->ws[0], p->ws[0],                      \
                     dy + (int64_t)n * p->ys[0] + (int64_t)g * kg * p->ys[1], p->ys[1], (T)a->beta,                    \
                     dx + (int64_t)n * p->xs[0] + (int64_t)g * cg * p->xs[1], p->xs[1]);                               \
            }                                                                                                          \
        } else                                                                                                         \
        for (int n = 0; n < p->n; n++)                                                                                 \
            for (int g = 0; g < p->g; g++) {                                                                           \
                const T *wg = w + (int64_t)g * kg * p->ws[0];                                                          \
                const T *dyg = dy + (int64_t)n * p->ys[0] + (int64_t)g * kg * p->ys[1];                                \
                if (unit) {                                                                                            \
                    GEMM(1, 0, cg, (int)P, kg, (T)a->alpha, wg, p->ws[0], dyg, p->ys[1], (T)a->beta,                   \
                         dx + (int64_t)n * p->xs[0] + (int64_t)g * cg * p->xs[1], p->xs[1]);                           \
                } else {                                                                                               \
                    GEMM(1, 0, kk, (int)P, kg, (T)1, wg, p->ws[0], dyg, p->ys[1], (T)0, col, P);                       \
                    if (kk == cg && p->pad[0] == 0 && p->pad[1] == 0 && p->pad[2] == 0) {                              \
                        COL2IM_1X1(T)                                                                                  \
                    } else {                                                                                           \
                        COL2IM(T)                                                                                      \
                    }                                                                                                  \
                }                                                                                                      \
            }                                                                                                          \
    }

static cudnnStatus_t run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    (void)h;
    int cg = p->c / p->g, kg = p->k / p->g, TT = p->flt[0], R = p->flt[1], S = p->flt[2], kk = cg * TT * R * S;
    int cc = p->cross_correlation;
    int64_t P = (int64_t)p->out[0] * p->out[1] * p->out[2];
    int unit = fdnn_cpu_conv_is_unit(p);
    if (!unit && a->workspace_size < workspace(p)) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "workspace too small");
    if (p->xtype == CUDNN_DATA_DOUBLE) BWD_DATA_GEMM(double, fdnn_dgemm)
    else BWD_DATA_GEMM(float, fdnn_sgemm)
    return CUDNN_STATUS_SUCCESS;
}

const fdnn_conv_impl fdnn_conv_bwd_data__im2col_gemm = {
    "conv_bwd_data__im2col_gemm", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1, CUDNN_FMA_MATH, applicable, workspace, run,
};
