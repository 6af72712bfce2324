/* HALF and BFLOAT16 convolutions on the CPU through the FLOAT kernels: each entry here wraps
 * one FLOAT implementation (direct NHWC, depthwise, the GEMM forms). The inputs are widened to
 * float into the workspace with their own strides (the whole span of each tensor, so the
 * wrapped kernel sees the same layout), the wrapped kernel runs on the FLOAT problem with the
 * caller's alpha / beta (the output, widened first when beta != 0), and its float result is
 * rounded once to the output type, element by element, so nothing outside the tensor's
 * elements is written. Accumulation is in float whatever the compute type (HALF compute is
 * never less accurate this way). The conversions of contiguous runs use AVX-512 where the CPU has
 * it (cvt_avx512.c), else AVX2 + F16C (cvt_avx2.c). Not done: widening inside the microkernels (AVX512_BF16), which would save
 * the copies. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "conv_cpu.h"
#include "conv_nhwc.h"

extern const fdnn_conv_impl fdnn_conv_fwd__direct_nhwc, fdnn_conv_bwd_data__direct_nhwc, fdnn_conv_bwd_filter__direct_nhwc;
extern const fdnn_conv_impl fdnn_conv_fwd__depthwise_nhwc, fdnn_conv_bwd_data__depthwise_nhwc, fdnn_conv_bwd_filter__depthwise_nhwc;
extern const fdnn_conv_impl fdnn_conv_fwd__depthwise_nchw, fdnn_conv_bwd_data__depthwise_nchw, fdnn_conv_bwd_filter__depthwise_nchw;
extern const fdnn_conv_impl fdnn_conv_fwd__gemm_pref, fdnn_conv_bwd_data__gemm_pref, fdnn_conv_bwd_filter__gemm_pref;
extern const fdnn_conv_impl fdnn_conv_fwd__gemm_nhwc_1x1, fdnn_conv_bwd_data__gemm_nhwc_1x1, fdnn_conv_bwd_filter__gemm_nhwc_1x1;
extern const fdnn_conv_impl fdnn_conv_fwd__gemm_nhwc_col, fdnn_conv_bwd_data__gemm_nhwc_col, fdnn_conv_bwd_filter__gemm_nhwc_col;

/* the FLOAT problem the wrapped kernel runs: 0 (and why) unless p is HALF or BFLOAT16 with
 * float or same-type compute, plain (not vectorised) tensors */
static int f32_problem(const fdnn_conv_problem *p, fdnn_conv_problem *q, char *why, size_t n)
{
    const cudnnDataType_t t = p->xtype;
    if ((t != CUDNN_DATA_HALF && t != CUDNN_DATA_BFLOAT16) || p->wtype != t || p->ytype != t ||
        (p->compute_type != CUDNN_DATA_FLOAT && p->compute_type != t)) {
        snprintf(why, n, "the float-widening entries take HALF or BFLOAT16 x, w and y (got x=%s w=%s y=%s compute=%s)",
                 fdnn_dtype_name(p->xtype), fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype), fdnn_dtype_name(p->compute_type));
        return 0;
    }
    if (p->x_vect > 1 || p->y_vect > 1 || p->w_vect > 1) {
        snprintf(why, n, "the float-widening entries take non-vectorised layouts only");
        return 0;
    }
    *q = *p;
    q->xtype = q->wtype = q->ytype = q->compute_type = CUDNN_DATA_FLOAT;
    return 1;
}

/* the 5 extents of x, y or w in the order of their strides (N, C, D, H, W / K, C per group, T, R, S) */
static void dims_of(const fdnn_conv_problem *p, int which, int d[5])
{
    const int *sp = which == 0 ? p->in : which == 1 ? p->out : p->flt;
    d[0] = which == 2 ? p->k : p->n;
    d[1] = which == 0 ? p->c : which == 1 ? p->k : p->c / p->g;
    for (int i = 0; i < 3; i++) d[2 + i] = sp[i];
}
static const int64_t *strides_of(const fdnn_conv_problem *p, int which) { return which == 0 ? p->xs : which == 1 ? p->ys : p->ws; }

/* elements from the first to the last element of the tensor, inclusive (0 if it is empty) */
static size_t span_of(const fdnn_conv_problem *p, int which)
{
    int d[5];
    dims_of(p, which, d);
    const int64_t *s = strides_of(p, which);
    size_t last = 0;
    for (int i = 0; i < 5; i++) {
        if (d[i] <= 0) return 0;
        last += (size_t)(d[i] - 1) * (size_t)s[i];
    }
    return last + 1;
}

static size_t round64(size_t b) { return (b + 63) & ~(size_t)63; }

static int cvt_applicable(const fdnn_conv_impl *in, const fdnn_conv_problem *p, char *why, size_t n)
{
    fdnn_conv_problem q;
    return f32_problem(p, &q, why, n) && in->applicable(&q, why, n);
}

static size_t cvt_workspace(const fdnn_conv_impl *in, const fdnn_conv_problem *p)
{
    fdnn_conv_problem q;
    char why[8];
    if (!f32_problem(p, &q, why, sizeof why)) return 0;
    size_t b = 64; /* room to align the caller's pointer */
    for (int w = 0; w < 3; w++) b += round64(span_of(p, w) * sizeof(float));
    return b + in->workspace(&q);
}

/* a contiguous run converted with the CPU's vector kernels (fdnn_nhwc_kernels_get) in chunks
 * over the threads; 0 where the CPU or the build has none */
static int run_simd(const void *src, void *dst, int to_float, int half, size_t n)
{
    const fdnn_nhwc_kernels *K = fdnn_nhwc_kernels_get();
    if (!K) return 0;
    const int64_t chunks = (int64_t)((n + 16383) / 16384);
#pragma omp parallel for schedule(static) if (chunks > 4)
    for (int64_t ch = 0; ch < chunks; ch++) {
        const size_t a = (size_t)ch * 16384, len = n - a < 16384 ? n - a : 16384;
        if (to_float) K->widen16((const uint16_t *)src + a, half, len, (float *)dst + a);
        else K->narrow16((const float *)src + a, half, len, (uint16_t *)dst + a);
    }
    return 1;
}

/* dst[i] = src[i] widened, i < n (the whole span: gaps between elements are copied too, harmlessly) */
static void widen(const void *src, cudnnDataType_t t, size_t n, float *dst)
{
    const uint16_t *s = src;
    if (run_simd(src, dst, 1, t == CUDNN_DATA_HALF, n)) return;
#pragma omp parallel for schedule(static) if (n > 65536)
    for (size_t i = 0; i < n; i++) dst[i] = t == CUDNN_DATA_HALF ? fdnn_half_to_float(s[i]) : fdnn_bf16_to_float(s[i]);
}

/* the tensor's elements of src rounded to t in dst (same strides); nothing between them touched */
static void narrow(const fdnn_conv_problem *p, int which, const float *src, cudnnDataType_t t, void *dst)
{
    int d[5];
    dims_of(p, which, d);
    const int64_t *s = strides_of(p, which);
    uint16_t *o = dst;
    const int64_t outer = (int64_t)d[0] * d[1], elems = outer * d[2] * d[3] * d[4];
    const size_t span = span_of(p, which);
    /* a packed tensor (no gaps: its span is its element count) converts as one run */
    if ((size_t)elems == span && run_simd(src, dst, 0, t == CUDNN_DATA_HALF, span)) return;
#pragma omp parallel for schedule(static) if (elems > 65536)
    for (int64_t nc = 0; nc < outer; nc++)
        for (int a = 0; a < d[2]; a++)
            for (int b = 0; b < d[3]; b++)
                for (int c = 0; c < d[4]; c++) {
                    const int64_t off = fdnn_conv_off(s, 1, (int)(nc / d[1]), (int)(nc % d[1]), a, b, c);
                    o[off] = t == CUDNN_DATA_HALF ? fdnn_float_to_half(src[off]) : fdnn_float_to_bf16(src[off]);
                }
}

static cudnnStatus_t cvt_run(const fdnn_conv_impl *in, cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    fdnn_conv_problem q;
    char why[200];
    if (!f32_problem(p, &q, why, sizeof why)) return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s (widened): %s", in->name, why);
    const size_t need = cvt_workspace(in, p); /* never 0: the float copies */
    if (!a->workspace || a->workspace_size < need)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "%s on HALF/BFLOAT16 needs %zu bytes of workspace (float copies of x, w, y) (got %zu)", in->name,
                         need, a->workspace_size);
    /* float copies of x (0), y (1), w (2) at the workspace's first 64-byte boundary, then the
     * wrapped kernel's own workspace */
    char *cur = (char *)(((uintptr_t)a->workspace + 63) & ~(uintptr_t)63);
    float *f[3];
    for (int w = 0; w < 3; w++) {
        f[w] = (float *)cur;
        cur += round64(span_of(p, w) * sizeof(float));
    }
    /* the written tensor: y forward, x backward data, w backward filter */
    const int out = p->dir == FDNN_CONV_FWD ? 1 : p->dir == FDNN_CONV_BWD_DATA ? 0 : 2;
    const void *src[3] = {a->x, a->y, a->w};
    src[out] = a->out;
    for (int w = 0; w < 3; w++)
        if (w != out || a->beta != 0) widen(src[w], p->xtype, span_of(p, w), f[w]);
    fdnn_conv_args b = *a;
    b.x = f[0];
    b.y = f[1];
    b.w = f[2];
    b.out = f[out];
    b.workspace = cur;
    b.workspace_size = a->workspace_size - (size_t)(cur - (char *)a->workspace);
    FDNN_CHECK(in->run(h, &q, &b));
    narrow(p, out, f[out], p->xtype, a->out);
    return CUDNN_STATUS_SUCCESS;
}

/* one wrapper per FLOAT implementation: same algorithm number, name + "_f32" */
#define CVT_ENTRY(DIR, INNER, ALGO)                                                                                   \
    static int DIR##_##INNER##_app(const fdnn_conv_problem *p, char *why, size_t n)                                   \
    {                                                                                                                  \
        return cvt_applicable(&fdnn_conv_##DIR##__##INNER, p, why, n);                                                 \
    }                                                                                                                  \
    static size_t DIR##_##INNER##_ws(const fdnn_conv_problem *p) { return cvt_workspace(&fdnn_conv_##DIR##__##INNER, p); } \
    static cudnnStatus_t DIR##_##INNER##_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)    \
    {                                                                                                                  \
        return cvt_run(&fdnn_conv_##DIR##__##INNER, h, p, a);                                                          \
    }                                                                                                                  \
    const fdnn_conv_impl fdnn_conv_##DIR##__##INNER##_f32 = {"conv_" #DIR "__" #INNER "_f32", ALGO, 1, CUDNN_FMA_MATH,  \
                                                            DIR##_##INNER##_app, DIR##_##INNER##_ws, DIR##_##INNER##_run};

CVT_ENTRY(fwd, gemm_pref, CUDNN_CONVOLUTION_FWD_ALGO_GEMM)
CVT_ENTRY(fwd, gemm_nhwc_1x1, CUDNN_CONVOLUTION_FWD_ALGO_GEMM)
CVT_ENTRY(fwd, gemm_nhwc_col, CUDNN_CONVOLUTION_FWD_ALGO_GEMM)
CVT_ENTRY(fwd, direct_nhwc, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
CVT_ENTRY(fwd, depthwise_nchw, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
CVT_ENTRY(fwd, depthwise_nhwc, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
CVT_ENTRY(fwd, im2col_gemm, CUDNN_CONVOLUTION_FWD_ALGO_GEMM)
CVT_ENTRY(bwd_data, gemm_pref, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1)
CVT_ENTRY(bwd_data, gemm_nhwc_1x1, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1)
CVT_ENTRY(bwd_data, gemm_nhwc_col, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1)
CVT_ENTRY(bwd_data, direct_nhwc, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1)
CVT_ENTRY(bwd_data, depthwise_nchw, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1)
CVT_ENTRY(bwd_data, depthwise_nhwc, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1)
CVT_ENTRY(bwd_data, im2col_gemm, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1)
CVT_ENTRY(bwd_filter, gemm_pref, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1)
CVT_ENTRY(bwd_filter, gemm_nhwc_1x1, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1)
CVT_ENTRY(bwd_filter, gemm_nhwc_col, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1)
CVT_ENTRY(bwd_filter, direct_nhwc, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3)
CVT_ENTRY(bwd_filter, depthwise_nchw, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3)
CVT_ENTRY(bwd_filter, depthwise_nhwc, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3)
CVT_ENTRY(bwd_filter, im2col_gemm, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1)
