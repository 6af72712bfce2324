/* Shared pieces of the im2col + GEMM convolution implementations. */
#include <stdio.h>
#include <string.h>
#include "conv_cpu.h"

int fdnn_cpu_conv_gemm_applicable(const fdnn_conv_problem *p, char *why, size_t n)
{
    if (!((p->xtype == CUDNN_DATA_FLOAT && p->compute_type == CUDNN_DATA_FLOAT) ||
          (p->xtype == CUDNN_DATA_DOUBLE && p->compute_type == CUDNN_DATA_DOUBLE))) {
        snprintf(why, n, "im2col+GEMM handles FLOAT and DOUBLE only, not %s", fdnn_dtype_name(p->xtype));
        return 0;
    }
    if (p->w_nhwc) {
        snprintf(why, n, "im2col+GEMM needs a KCRS (NCHW) filter");
        return 0;
    }
    if (!fdnn_cpu_spatial_packed(p, p->ys, p->out)) {
        snprintf(why, n, "im2col+GEMM needs the y/dy spatial dims packed (NCHW-like strides)");
        return 0;
    }
    return 1;
}

int fdnn_cpu_conv_is_unit(const fdnn_conv_problem *p)
{
    for (int i = 0; i < 3; i++)
        if (p->flt[i] != 1 || p->stride[i] != 1 || p->pad[i] != 0) return 0;
    return fdnn_cpu_spatial_packed(p, p->xs, p->in);
}

int fdnn_cpu_spatial_packed(const fdnn_conv_problem *p, const int64_t *s, const int *d)
{
    (void)p;
    if (d[2] > 1 && s[4] != 1) return 0;
    if (d[1] > 1 && s[3] != d[2]) return 0;
    if (d[0] > 1 && s[2] != (int64_t)d[1] * d[2]) return 0;
    return 1;
}

size_t fdnn_cpu_col_elems(const fdnn_conv_problem *p)
{
    return (size_t)(p->c / p->g) * p->flt[0] * p->flt[1] * p->flt[2] * p->out[0] * p->out[1] * p->out[2];
}

#define DEFINE_IM2COL(NAME, T)                                                                                         \
    void NAME(const fdnn_conv_problem *p, const T *x, int n, int g, T *col)                                            \
    {                                                                                                                  \
        int cg = p->c / p->g, TT = p->flt[0], R = p->flt[1], S = p->flt[2], cc = p->cross_correlation;                 \
        int64_t P = (int64_t)p->out[0] * p->out[1] * p->out[2];                                                        \
        int rows = cg * TT * R * S;                                                                                    \
        _Pragma("omp parallel for schedule(static)") for (int row = 0; row < rows; row++)                              \
        {                                                                                                              \
            int s = row % S, r = (row / S) % R, t = (row / (S * R)) % TT, c = row / (S * R * TT);                      \
            int tt = cc ? t : TT - 1 - t, rr = cc ? r : R - 1 - r, ss = cc ? s : S - 1 - s;                            \
            const T *xc = x + (int64_t)n * p->xs[0] + (int64_t)(g * cg + c) * p->xs[1];                               \
            T *cr = col + (int64_t)row * P;                                                                            \
            for (int od = 0; od < p->out[0]; od++) {                                                                   \
                int id = od * p->stride[0] - p->pad[0] + tt * p->dil[0];                                               \
                for (int oh = 0; oh < p->out[1]; oh++) {                                                               \
                    int ih = oh * p->stride[1] - p->pad[1] + rr * p->dil[1];                                           \
                    T *o = cr + ((int64_t)od * p->out[1] + oh) * p->out[2];                                            \
                    if (id < 0 || id >= p->in[0] || ih < 0 || ih >= p->in[1]) {                                        \
                        for (int ow = 0; ow < p->out[2]; ow++) o[ow] = 0;                                              \
                        continue;                                                                                      \
                    }                                                                                                  \
                    const T *xr = xc + (int64_t)id * p->xs[2] + (int64_t)ih * p->xs[3];                                \
                    /* columns ow0..ow1-1 read x, the others are padding: no test per element */                      \
                    const int st = p->stride[2], w0 = ss * p->dil[2] - p->pad[2], Q = p->out[2];                      \
                    int ow0 = w0 >= 0 ? 0 : (-w0 + st - 1) / st;                                                       \
                    int ow1 = p->in[2] - w0 <= 0 ? 0 : (p->in[2] - w0 + st - 1) / st;                                  \
                    if (ow1 > Q) ow1 = Q;                                                                              \
                    if (ow0 > ow1) ow0 = ow1;                                                                          \
                    for (int ow = 0; ow < ow0; ow++) o[ow] = 0;                                                        \
                    const int64_t sx = (int64_t)st * p->xs[4];                                                         \
                    if (ow1 > ow0) {                                                                                   \
                        const T *xw = xr + (int64_t)(ow0 * st + w0) * p->xs[4];                                        \
                        if (sx == 1) memcpy(o + ow0, xw, sizeof(T) * (size_t)(ow1 - ow0));                             \
                        else for (int ow = ow0; ow < ow1; ow++) o[ow] = xw[(int64_t)(ow - ow0) * sx];                  \
                    }                                                                                                  \
                    for (int ow = ow1; ow < Q; ow++) o[ow] = 0;                                                        \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
    }

DEFINE_IM2COL(fdnn_cpu_im2col_f, float)
DEFINE_IM2COL(fdnn_cpu_im2col_d, double)
