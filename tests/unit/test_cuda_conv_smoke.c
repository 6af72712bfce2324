/* Smoke test of the CUDA backend's convolutions and cudnnAddTensor: a few fixed problems
 * (2-D/3-D, padding/stride/dilation, groups incl. depthwise, both modes, NCHW / NHWC /
 * strided layouts) through cudnnConvolutionForward / BackwardData / BackwardFilter with every
 * algorithm enum, and cudnnAddTensor with broadcasting, against the double reference in
 * tests/ref/cuda_smoke_ref.c. Inputs are small integers so FLOAT/DOUBLE results are exact.
 * The algorithms the CUDA backend implements must succeed; the others may only answer
 * NOT_SUPPORTED (and leave the output alone). CUDA only: exits 77 on a CPU handle. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"
#include "cuda_smoke_ref.h"

typedef struct prob {
    const char *name;
    int nsp; /* 2 or 3 */
    int n, c, k, g;
    int in[3], flt[3], pad[3], str[3], dil[3];
    int flip;
} prob;

static const prob probs[] = {
    {"2d_3x3_pad1", 2, 2, 8, 6, 1, {1, 7, 6}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0},
    {"2d_grouped_stride_dil_conv", 2, 2, 4, 4, 2, {1, 9, 8}, {1, 3, 2}, {0, 1, 0}, {1, 2, 2}, {1, 2, 1}, 1},
    {"3d_depthwise", 3, 1, 3, 3, 3, {4, 5, 5}, {2, 3, 3}, {1, 1, 1}, {2, 1, 2}, {1, 1, 1}, 0},
    {"2d_bwd_filter_split", 2, 2, 2, 3, 1, {1, 20, 20}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0},
    {"2d_k70_multi_tile", 2, 3, 5, 70, 1, {1, 10, 11}, {1, 2, 2}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 1},
};

enum { LAYOUT_NCHW = 0, LAYOUT_NHWC = 1, LAYOUT_PADDED = 2 };

/* Strides of a 5-D (N, C, D, H, W) tensor in a layout. */
static void make_strides(const int *d, int layout, int64_t *st)
{
    if (layout == LAYOUT_NHWC) {
        st[1] = 1;
        st[4] = d[1];
        st[3] = st[4] * d[4];
        st[2] = st[3] * d[3];
        st[0] = st[2] * d[2];
    } else {
        int pad = layout == LAYOUT_PADDED ? 3 : 0;
        st[4] = 1;
        st[3] = d[4] + pad;
        st[2] = st[3] * (d[3] + (pad ? 1 : 0));
        st[1] = st[2] * d[2];
        st[0] = st[1] * d[1] + pad;
    }
}

static int64_t span5(const int *d, const int64_t *st)
{
    int64_t s = 1;
    for (int i = 0; i < 5; i++) s += (int64_t)(d[i] - 1) * st[i];
    return s;
}

/* Tensor descriptor of a 5-D shape: 4-D (D dropped) for 2-D problems. */
static void set_tensor(cudnnTensorDescriptor_t t, cudnnDataType_t dt, int nsp, const int *d, const int64_t *st)
{
    int dims[5], strides[5], nd = 0;
    for (int i = 0; i < 5; i++) {
        if (nsp == 2 && i == 2) continue;
        dims[nd] = d[i];
        strides[nd] = (int)st[i];
        nd++;
    }
    TH_OK(cudnnSetTensorNdDescriptor(t, dt, nd, dims, strides));
}

/* Logical elements of a strided 5-D tensor, packed in N, C, D, H, W order. */
static int64_t gather(const int *d, const int64_t *st, const double *buf, double *out)
{
    int64_t m = 0;
    for (int a = 0; a < d[0]; a++)
        for (int b = 0; b < d[1]; b++)
            for (int c = 0; c < d[2]; c++)
                for (int e = 0; e < d[3]; e++)
                    for (int f = 0; f < d[4]; f++)
                        out[m++] = buf[a * st[0] + b * st[1] + c * st[2] + e * st[3] + f * st[4]];
    return m;
}

typedef struct dev_buf {
    cudnnHandle_t h;
    cudnnDataType_t dt;
    size_t n;
    void *d;
    void *host;
} dev_buf;

static void buf_init(dev_buf *b, cudnnHandle_t h, cudnnDataType_t dt, size_t n)
{
    b->h = h;
    b->dt = dt;
    b->n = n;
    b->d = th_alloc(h, n * th_dtype_size(dt));
    b->host = malloc(n * th_dtype_size(dt) + 1);
}
static void buf_put(dev_buf *b, const double *v)
{
    th_from_double(v, b->dt, b->host, b->n);
    th_upload(b->h, b->d, b->host, b->n * th_dtype_size(b->dt));
}
static void buf_get(dev_buf *b, double *v)
{
    th_download(b->h, b->host, b->d, b->n * th_dtype_size(b->dt));
    th_to_double(b->host, b->dt, v, b->n);
}
static void buf_free(dev_buf *b)
{
    th_free(b->h, b->d);
    free(b->host);
}

static int algo_required(const prob *P, int layout, int dir, int algo, cudnnDataType_t dt, cudnnMathType_t math)
{
    /* cuBLAS explicit GEMM (fwd ALGO_GEMM): packed NHWC, KRSC, groups 1, FLOAT/HALF/BFLOAT16 (not
     * HALF/BFLOAT16 with FMA math, which forbids tensor cores) */
    const int lowp = dt == CUDNN_DATA_HALF || dt == CUDNN_DATA_BFLOAT16;
    if (dir == 0 && algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM && layout == LAYOUT_NHWC && P->g == 1 &&
        (dt == CUDNN_DATA_FLOAT || (lowp && math != CUDNN_FMA_MATH)))
        return 1;
    if (algo == 0) return 1; /* direct kernels: IMPLICIT_GEMM / BWD_DATA_ALGO_0 / BWD_FILTER_ALGO_0 */
    /* the tiled kernels leave groups of fewer than 4 channels (depthwise) to the direct ones */
    const int tiles = P->g == 1 || (P->c / P->g >= 4 && P->k / P->g >= 4);
    if (dir > 0 && algo == 1) return tiles; /* tiled backward kernels: BWD_DATA_ALGO_1 / BWD_FILTER_ALGO_1 */
    if (dir == 0 && algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) return tiles; /* tc / tf32 / simt / simt_lowp */
    (void)dt;
    (void)math;
    return 0;
}

/* One problem in one dtype / layout / math type, all directions and algorithms. */
static void run_case(cudnnHandle_t h, const prob *P, cudnnDataType_t dt, cudnnDataType_t ydt, int layout, cudnnMathType_t math)
{
    char tag[200];
    snprintf(tag, sizeof tag, "%s %s/%s layout %d math %d", P->name, th_dtype_name(dt), th_dtype_name(ydt), layout, (int)math);
    csr_conv R;
    memset(&R, 0, sizeof R);
    R.n = P->n; R.c = P->c; R.k = P->k; R.g = P->g; R.flip = P->flip;
    R.w_channels_last = layout == LAYOUT_NHWC;
    for (int i = 0; i < 3; i++) {
        R.in[i] = P->in[i]; R.flt[i] = P->flt[i]; R.pad[i] = P->pad[i]; R.str[i] = P->str[i]; R.dil[i] = P->dil[i];
        R.out[i] = csr_out_dim(P->in[i], P->flt[i], P->pad[i], P->str[i], P->dil[i]);
    }
    const int xd[5] = {P->n, P->c, P->in[0], P->in[1], P->in[2]};
    const int yd[5] = {P->n, P->k, R.out[0], R.out[1], R.out[2]};
    make_strides(xd, layout, R.xs);
    make_strides(yd, layout, R.ys);
    const int64_t xspan = span5(xd, R.xs), yspan = span5(yd, R.ys);
    const int64_t wn = (int64_t)P->k * (P->c / P->g) * P->flt[0] * P->flt[1] * P->flt[2];

    cudnnTensorDescriptor_t xdesc, ydesc;
    cudnnFilterDescriptor_t wdesc;
    cudnnConvolutionDescriptor_t cdesc;
    TH_OK(cudnnCreateTensorDescriptor(&xdesc));
    TH_OK(cudnnCreateTensorDescriptor(&ydesc));
    TH_OK(cudnnCreateFilterDescriptor(&wdesc));
    TH_OK(cudnnCreateConvolutionDescriptor(&cdesc));
    set_tensor(xdesc, dt, P->nsp, xd, R.xs);
    set_tensor(ydesc, ydt, P->nsp, yd, R.ys);
    int wdims[5] = {P->k, P->c / P->g, P->flt[0], P->flt[1], P->flt[2]};
    if (P->nsp == 2) { wdims[2] = P->flt[1]; wdims[3] = P->flt[2]; }
    TH_OK(cudnnSetFilterNdDescriptor(wdesc, dt, layout == LAYOUT_NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, P->nsp + 2, wdims));
    const int off = P->nsp == 2 ? 1 : 0;
    cudnnDataType_t ctype = dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : dt == CUDNN_DATA_INT8 ? CUDNN_DATA_INT32 : CUDNN_DATA_FLOAT;
    TH_OK(cudnnSetConvolutionNdDescriptor(cdesc, P->nsp, P->pad + off, P->str + off, P->dil + off,
                                          P->flip ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION, ctype));
    TH_OK(cudnnSetConvolutionGroupCount(cdesc, P->g));
    TH_OK(cudnnSetConvolutionMathType(cdesc, math));
    int od[5] = {0};
    TH_OK(cudnnGetConvolutionNdForwardOutputDim(cdesc, xdesc, wdesc, P->nsp + 2, od));
    TH_CHECK(od[1] == P->k && od[P->nsp + 1] == R.out[2], "%s: output dims", tag);

    double *hx = malloc(sizeof(double) * xspan), *hw = malloc(sizeof(double) * wn), *hy = malloc(sizeof(double) * yspan);
    double *init_x = malloc(sizeof(double) * xspan), *init_w = malloc(sizeof(double) * wn), *init_y = malloc(sizeof(double) * yspan);
    double *got = malloc(sizeof(double) * (xspan + wn + yspan)), *want = malloc(sizeof(double) * (xspan + wn + yspan));
    double *gl = malloc(sizeof(double) * (xspan + wn + yspan)), *wl = malloc(sizeof(double) * (xspan + wn + yspan));
    th_fill_int(hx, xspan, -2, 2);
    th_fill_int(hw, wn, -2, 2);
    th_fill_int(hy, yspan, -2, 2);
    th_fill_int(init_x, xspan, -3, 3);
    th_fill_int(init_w, wn, -3, 3);
    th_fill_int(init_y, yspan, -3, 3);
    dev_buf bx, bw, by;
    buf_init(&bx, h, dt, xspan);
    buf_init(&bw, h, dt, wn);
    buf_init(&by, h, ydt, yspan);
    void *ws = NULL;
    size_t ws_cap = 0;

    for (int dir = 0; dir < 3; dir++) {
        if (dt == CUDNN_DATA_INT8 && dir > 0) break;
        const int nalgo = dir == 0 ? CUDNN_CONVOLUTION_FWD_ALGO_COUNT
                        : dir == 1 ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
        for (int algo = 0; algo < nalgo; algo++) {
            for (int bi = 0; bi < 2; bi++) {
                const double alpha = bi ? -1.0 : 2.0, beta = bi ? 0.5 : 0.0;
                /* inputs, and the output pre-filled (NaN when beta == 0: it must not be read) */
                dev_buf *ob = dir == 0 ? &by : dir == 1 ? &bx : &bw;
                const int64_t on = dir == 0 ? yspan : dir == 1 ? xspan : wn;
                double *oinit = dir == 0 ? init_y : dir == 1 ? init_x : init_w;
                buf_put(&bx, dir == 1 ? oinit : hx);
                buf_put(&bw, dir == 2 ? oinit : hw);
                buf_put(&by, dir == 0 ? oinit : hy);
                if (beta == 0) {
                    double *nan_fill = malloc(sizeof(double) * on);
                    for (int64_t i = 0; i < on; i++) nan_fill[i] = NAN;
                    buf_put(ob, nan_fill);
                    free(nan_fill);
                }
                size_t wsz = 0;
                cudnnStatus_t qs;
                if (dir == 0) qs = cudnnGetConvolutionForwardWorkspaceSize(h, xdesc, wdesc, cdesc, ydesc, algo, &wsz);
                else if (dir == 1) qs = cudnnGetConvolutionBackwardDataWorkspaceSize(h, wdesc, ydesc, cdesc, xdesc, algo, &wsz);
                else qs = cudnnGetConvolutionBackwardFilterWorkspaceSize(h, xdesc, ydesc, cdesc, wdesc, algo, &wsz);
                if (qs != CUDNN_STATUS_SUCCESS) wsz = 0;
                if (wsz > ws_cap) {
                    if (ws) th_free(h, ws);
                    ws = th_alloc(h, wsz);
                    ws_cap = wsz;
                }
                float fa = (float)alpha, fb = (float)beta;
                const void *pa = dt == CUDNN_DATA_DOUBLE ? (const void *)&alpha : (const void *)&fa;
                const void *pb = dt == CUDNN_DATA_DOUBLE ? (const void *)&beta : (const void *)&fb;
                cudnnStatus_t st;
                if (dir == 0)
                    st = cudnnConvolutionForward(h, pa, xdesc, bx.d, wdesc, bw.d, cdesc, algo, ws, wsz, pb, ydesc, by.d);
                else if (dir == 1)
                    st = cudnnConvolutionBackwardData(h, pa, wdesc, bw.d, ydesc, by.d, cdesc, algo, ws, wsz, pb, xdesc, bx.d);
                else
                    st = cudnnConvolutionBackwardFilter(h, pa, xdesc, bx.d, ydesc, by.d, cdesc, algo, ws, wsz, pb, wdesc, bw.d);
                char what[300];
                snprintf(what, sizeof what, "%s dir %d algo %d alpha %g beta %g", tag, dir, algo, alpha, beta);
                if (algo_required(P, layout, dir, algo, dt, math)) {
                    if (!TH_OK(st)) {
                        printf("  (%s)\n", what);
                        continue;
                    }
                } else if (st != CUDNN_STATUS_SUCCESS) {
                    TH_CHECK(st == CUDNN_STATUS_NOT_SUPPORTED, "%s: status %d, want SUCCESS or NOT_SUPPORTED", what, (int)st);
                    continue;
                }
                th_sync(h);
                /* the reference on the values as rounded to the dtype */
                double *rx = malloc(sizeof(double) * xspan), *rw = malloc(sizeof(double) * wn), *ry = malloc(sizeof(double) * yspan);
                void *tmp = malloc((size_t)(xspan + wn + yspan) * 8);
                th_from_double(dir == 1 ? oinit : hx, dt, tmp, xspan); th_to_double(tmp, dt, rx, xspan);
                th_from_double(dir == 2 ? oinit : hw, dt, tmp, wn); th_to_double(tmp, dt, rw, wn);
                th_from_double(dir == 0 ? oinit : hy, ydt, tmp, yspan); th_to_double(tmp, ydt, ry, yspan);
                free(tmp);
                int64_t n = 0;
                buf_get(ob, got);
                if (dir == 0) {
                    csr_conv_fwd(&R, rx, rw, ry, alpha, beta);
                    n = gather(yd, R.ys, got, gl);
                    gather(yd, R.ys, ry, wl);
                } else if (dir == 1) {
                    csr_conv_bwd_data(&R, rx, rw, ry, alpha, beta);
                    n = gather(xd, R.xs, got, gl);
                    gather(xd, R.xs, rx, wl);
                } else {
                    csr_conv_bwd_filter(&R, rx, rw, ry, alpha, beta);
                    n = wn;
                    memcpy(gl, got, sizeof(double) * wn);
                    memcpy(wl, rw, sizeof(double) * wn);
                }
                double tol = th_tolerance("conv", ydt == CUDNN_DATA_FLOAT && dt == CUDNN_DATA_INT8 ? CUDNN_DATA_FLOAT : dt);
                th_compare(what, gl, wl, (size_t)n, tol);
                free(rx);
                free(rw);
                free(ry);
            }
        }
    }
    if (ws) th_free(h, ws);
    buf_free(&bx);
    buf_free(&bw);
    buf_free(&by);
    free(hx); free(hw); free(hy); free(init_x); free(init_w); free(init_y); free(got); free(want); free(gl); free(wl);
    cudnnDestroyTensorDescriptor(xdesc);
    cudnnDestroyTensorDescriptor(ydesc);
    cudnnDestroyFilterDescriptor(wdesc);
    cudnnDestroyConvolutionDescriptor(cdesc);
}

/* cudnnAddTensor with a broadcast A (bias-like) and a full strided A. */
static void add_case(cudnnHandle_t h, cudnnDataType_t dt, int nd, const int *cdim, const int *adim, int a_padded)
{
    int64_t cst[8], ast[8];
    int cs[8], as[8];
    int64_t s = 1, sa = 1;
    for (int d = nd - 1; d >= 0; d--) {
        cst[d] = s;
        s *= cdim[d];
        ast[d] = sa;
        sa *= adim[d] + (a_padded && d == nd - 1 ? 2 : 0);
    }
    int64_t cspan = 1, aspan = 1;
    for (int d = 0; d < nd; d++) {
        cspan += (int64_t)(cdim[d] - 1) * cst[d];
        aspan += (int64_t)(adim[d] - 1) * ast[d];
        cs[d] = (int)cst[d];
        as[d] = (int)ast[d];
    }
    cudnnTensorDescriptor_t ad, cd;
    TH_OK(cudnnCreateTensorDescriptor(&ad));
    TH_OK(cudnnCreateTensorDescriptor(&cd));
    TH_OK(cudnnSetTensorNdDescriptor(ad, dt, nd, adim, as));
    TH_OK(cudnnSetTensorNdDescriptor(cd, dt, nd, cdim, cs));
    double *ha = malloc(sizeof(double) * aspan), *hc = malloc(sizeof(double) * cspan), *got = malloc(sizeof(double) * cspan);
    th_fill_int(ha, aspan, -4, 4);
    dev_buf ba, bc;
    buf_init(&ba, h, dt, aspan);
    buf_init(&bc, h, dt, cspan);
    buf_put(&ba, ha);
    for (int bi = 0; bi < 2; bi++) {
        const double alpha = 2.0, beta = bi ? -1.0 : 0.0;
        if (beta == 0) for (int64_t i = 0; i < cspan; i++) hc[i] = NAN;
        else th_fill_int(hc, cspan, -3, 3);
        buf_put(&bc, hc);
        float fa = (float)alpha, fb = (float)beta;
        const void *pa = dt == CUDNN_DATA_DOUBLE ? (const void *)&alpha : (const void *)&fa;
        const void *pb = dt == CUDNN_DATA_DOUBLE ? (const void *)&beta : (const void *)&fb;
        char what[160];
        snprintf(what, sizeof what, "add_tensor %s %d-D a_padded %d beta %g", th_dtype_name(dt), nd, a_padded, beta);
        if (!TH_OK(cudnnAddTensor(h, pa, ad, ba.d, pb, cd, bc.d))) continue;
        th_sync(h);
        buf_get(&bc, got);
        csr_add_tensor(nd, cdim, cst, hc, adim, ast, ha, alpha, beta);
        th_compare(what, got, hc, (size_t)cspan, th_tolerance("add", dt));
    }
    buf_free(&ba);
    buf_free(&bc);
    free(ha); free(hc); free(got);
    cudnnDestroyTensorDescriptor(ad);
    cudnnDestroyTensorDescriptor(cd);
}

int main(void)
{
    th_seed(20261130);
    cudnnHandle_t h = th_create_handle();
    if (!th_is_gpu(h)) {
        printf("skipped: this test targets the CUDA backend only\n");
        cudnnDestroy(h);
        return TH_SKIP;
    }
    const cudnnDataType_t fdt[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
    for (size_t pi = 0; pi < sizeof probs / sizeof probs[0]; pi++)
        for (int layout = 0; layout < 3; layout++)
            for (int ti = 0; ti < 4; ti++) {
                const int lowp = fdt[ti] == CUDNN_DATA_HALF || fdt[ti] == CUDNN_DATA_BFLOAT16;
                run_case(h, &probs[pi], fdt[ti], fdt[ti], layout, CUDNN_DEFAULT_MATH);
                if (fdt[ti] == CUDNN_DATA_FLOAT) run_case(h, &probs[pi], fdt[ti], fdt[ti], layout, CUDNN_TENSOR_OP_MATH); /* TF32 */
                if (lowp) {
                    run_case(h, &probs[pi], fdt[ti], fdt[ti], layout, CUDNN_TENSOR_OP_MATH);
                    run_case(h, &probs[pi], fdt[ti], fdt[ti], layout, CUDNN_FMA_MATH);
                }
            }
    /* INT8 forward (INT8_EXT config: y FLOAT), NHWC with C a multiple of 4 */
    static const prob i8 = {"2d_int8_nhwc", 2, 2, 8, 4, 1, {1, 6, 7}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0};
    run_case(h, &i8, CUDNN_DATA_INT8, CUDNN_DATA_FLOAT, LAYOUT_NHWC, CUDNN_DEFAULT_MATH);

    const int c4[4] = {2, 3, 4, 5}, bias4[4] = {1, 3, 1, 1};
    const int c5[5] = {2, 3, 2, 3, 4}, a5[5] = {2, 1, 2, 1, 4};
    for (int ti = 0; ti < 4; ti++) {
        add_case(h, fdt[ti], 4, c4, bias4, 0);
        add_case(h, fdt[ti], 4, c4, c4, 1);
        add_case(h, fdt[ti], 5, c5, a5, 0);
        add_case(h, fdt[ti], 5, c5, c5, 1);
    }
    cudnnDestroy(h);
    return th_finish();
}
