/* Direct convolution on the GPU: correct for every problem the API accepts (2-D/3-D, any
 * padding/stride/dilation, groups, both modes, strided x/y, KCRS or KRSC filters, FLOAT,
 * DOUBLE, HALF, BFLOAT16 and INT8 forward). Deterministic in all three directions:
 *   forward:     one thread per y element, sums over (c, t, r, s) in a fixed order;
 *   bwd data:    one thread per dx element, gathers the dy elements that read it;
 *   bwd filter:  one block per dw element, each thread sums a fixed slice of (n, p) and the
 *                block reduces with a fixed shared-memory tree.
 * Accumulation: float for FLOAT/HALF/BFLOAT16, double for DOUBLE, int32 for INT8; the
 * alpha/beta blend is done in double and rounded once. */
#include "cuda_dev.h"

using namespace fdnn_dev;

namespace {

template <typename TX, typename TW, typename TY, typename ACC>
__global__ void conv_fwd_direct_kernel(ConvGeom G, const TX *__restrict__ x, const TW *__restrict__ w, TY *y,
                                       double alpha, double beta)
{
    const long long P0 = G.out[0], P1 = G.out[1], P2 = G.out[2];
    const long long total = (long long)G.n * G.k * P0 * P1 * P2;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        long long r = idx;
        const int ow = (int)(r % P2); r /= P2;
        const int oh = (int)(r % P1); r /= P1;
        const int od = (int)(r % P0); r /= P0;
        const int k = (int)(r % G.k);
        const int n = (int)(r / G.k);
        const int gi = k / G.kg;
        const int d0 = od * G.str[0] - G.pad[0], h0 = oh * G.str[1] - G.pad[1], w0 = ow * G.str[2] - G.pad[2];
        const TX *xn = x + n * G.xs[0] + (long long)gi * G.cg * G.xs[1];
        const TW *wk = w + k * G.ws[0];
        ACC acc = 0;
        for (int c = 0; c < G.cg; c++) {
            for (int t = 0; t < G.flt[0]; t++) {
                const int id = d0 + t * G.dil[0];
                if (id < 0 || id >= G.in[0]) continue;
                const int tf = G.flip ? G.flt[0] - 1 - t : t;
                for (int rr = 0; rr < G.flt[1]; rr++) {
                    const int ih = h0 + rr * G.dil[1];
                    if (ih < 0 || ih >= G.in[1]) continue;
                    const int rf = G.flip ? G.flt[1] - 1 - rr : rr;
                    for (int s = 0; s < G.flt[2]; s++) {
                        const int iw = w0 + s * G.dil[2];
                        if (iw < 0 || iw >= G.in[2]) continue;
                        const int sf = G.flip ? G.flt[2] - 1 - s : s;
                        const ACC xv = (ACC)ld(xn + c * G.xs[1] + id * G.xs[2] + ih * G.xs[3] + iw * G.xs[4]);
                        const ACC wv = (ACC)ld(wk + c * G.ws[1] + tf * G.ws[2] + rf * G.ws[3] + sf * G.ws[4]);
                        acc += xv * wv;
                    }
                }
            }
        }
        blend(y + n * G.ys[0] + k * G.ys[1] + od * G.ys[2] + oh * G.ys[3] + ow * G.ys[4], acc, alpha, beta);
    }
}

/* dx[n,c,i] = sum over k of c's group and filter taps t with i = o*stride - pad + t*dil. */
template <typename T, typename ACC>
__global__ void conv_bwd_data_direct_kernel(ConvGeom G, T *dx, const T *__restrict__ w, const T *__restrict__ dy,
                                            double alpha, double beta)
{
    const long long I0 = G.in[0], I1 = G.in[1], I2 = G.in[2];
    const long long total = (long long)G.n * G.c * I0 * I1 * I2;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        long long r = idx;
        const int iw = (int)(r % I2); r /= I2;
        const int ih = (int)(r % I1); r /= I1;
        const int id = (int)(r % I0); r /= I0;
        const int c = (int)(r % G.c);
        const int n = (int)(r / G.c);
        const int gi = c / G.cg, cl = c % G.cg;
        const T *dyn = dy + n * G.ys[0];
        ACC acc = 0;
        for (int kk = 0; kk < G.kg; kk++) {
            const int k = gi * G.kg + kk;
            const T *wk = w + k * G.ws[0] + cl * G.ws[1];
            const T *dyk = dyn + k * G.ys[1];
            for (int t = 0; t < G.flt[0]; t++) {
                const int nd = id + G.pad[0] - t * G.dil[0];
                if (nd < 0 || nd % G.str[0]) continue;
                const int od = nd / G.str[0];
                if (od >= G.out[0]) continue;
                const int tf = G.flip ? G.flt[0] - 1 - t : t;
                for (int rr = 0; rr < G.flt[1]; rr++) {
                    const int nh = ih + G.pad[1] - rr * G.dil[1];
                    if (nh < 0 || nh % G.str[1]) continue;
                    const int oh = nh / G.str[1];
                    if (oh >= G.out[1]) continue;
                    const int rf = G.flip ? G.flt[1] - 1 - rr : rr;
                    for (int s = 0; s < G.flt[2]; s++) {
                        const int nw = iw + G.pad[2] - s * G.dil[2];
                        if (nw < 0 || nw % G.str[2]) continue;
                        const int ow = nw / G.str[2];
                        if (ow >= G.out[2]) continue;
                        const int sf = G.flip ? G.flt[2] - 1 - s : s;
                        acc += (ACC)ld(dyk + od * G.ys[2] + oh * G.ys[3] + ow * G.ys[4]) *
                               (ACC)ld(wk + tf * G.ws[2] + rf * G.ws[3] + sf * G.ws[4]);
                    }
                }
            }
        }
        blend(dx + n * G.xs[0] + c * G.xs[1] + id * G.xs[2] + ih * G.xs[3] + iw * G.xs[4], acc, alpha, beta);
    }
}

constexpr int BWF_THREADS = 256;

/* dw[k,c,t,r,s] = sum over n and output positions o of dy[n,k,o] * x[n, g*cg+c, o*stride - pad + tap*dil]
 * where tap is the (possibly flipped) filter index. One block per filter element. */
template <typename T, typename ACC>
__global__ void __launch_bounds__(BWF_THREADS)
conv_bwd_filter_direct_kernel(ConvGeom G, T *dw, const T *__restrict__ x, const T *__restrict__ dy,
                              double alpha, double beta)
{
    __shared__ ACC red[BWF_THREADS];
    const long long T0 = G.flt[0], R = G.flt[1], S = G.flt[2];
    const long long nflt = (long long)G.k * G.cg * T0 * R * S;
    const long long P0 = G.out[0], P1 = G.out[1], P2 = G.out[2];
    const long long npos = (long long)G.n * P0 * P1 * P2;
    for (long long fidx = blockIdx.x; fidx < nflt; fidx += gridDim.x) {
        long long r = fidx;
        const int sf = (int)(r % S); r /= S;
        const int rf = (int)(r % R); r /= R;
        const int tf = (int)(r % T0); r /= T0;
        const int cl = (int)(r % G.cg);
        const int k = (int)(r / G.cg);
        const int t = G.flip ? G.flt[0] - 1 - tf : tf;
        const int rr = G.flip ? G.flt[1] - 1 - rf : rf;
        const int s = G.flip ? G.flt[2] - 1 - sf : sf;
        const int c = (k / G.kg) * G.cg + cl;
        ACC acc = 0;
        for (long long pi = threadIdx.x; pi < npos; pi += BWF_THREADS) {
            long long q = pi;
            const int ow = (int)(q % P2); q /= P2;
            const int oh = (int)(q % P1); q /= P1;
            const int od = (int)(q % P0);
            const int n = (int)(q / P0);
            const int id = od * G.str[0] - G.pad[0] + t * G.dil[0];
            const int ih = oh * G.str[1] - G.pad[1] + rr * G.dil[1];
            const int iw = ow * G.str[2] - G.pad[2] + s * G.dil[2];
            if (id < 0 || id >= G.in[0] || ih < 0 || ih >= G.in[1] || iw < 0 || iw >= G.in[2]) continue;
            acc += (ACC)ld(dy + n * G.ys[0] + k * G.ys[1] + od * G.ys[2] + oh * G.ys[3] + ow * G.ys[4]) *
                   (ACC)ld(x + n * G.xs[0] + c * G.xs[1] + id * G.xs[2] + ih * G.xs[3] + iw * G.xs[4]);
        }
        red[threadIdx.x] = acc;
        __syncthreads();
        for (int half = BWF_THREADS / 2; half > 0; half >>= 1) {
            if ((int)threadIdx.x < half) red[threadIdx.x] += red[threadIdx.x + half];
            __syncthreads();
        }
        if (threadIdx.x == 0)
            blend(dw + k * G.ws[0] + cl * G.ws[1] + tf * G.ws[2] + rf * G.ws[3] + sf * G.ws[4], red[0], alpha, beta);
        __syncthreads();
    }
}

template <typename TX, typename TW, typename TY, typename ACC>
cudnnStatus_t launch_fwd(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    ConvGeom G = make_geom(p);
    const long long total = (long long)G.n * G.k * G.out[0] * G.out[1] * G.out[2];
    const int block = 256;
    conv_fwd_direct_kernel<TX, TW, TY, ACC><<<grid_for(total, block), block, 0, (cudaStream_t)h->stream>>>(
        G, (const TX *)a->x, (const TW *)a->w, (TY *)a->out, a->alpha, a->beta);
    return fdnn_cuda_check(cudaGetLastError(), "conv_fwd_direct_kernel");
}

template <typename T, typename ACC>
cudnnStatus_t launch_bwd_data(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    ConvGeom G = make_geom(p);
    const long long total = (long long)G.n * G.c * G.in[0] * G.in[1] * G.in[2];
    const int block = 256;
    conv_bwd_data_direct_kernel<T, ACC><<<grid_for(total, block), block, 0, (cudaStream_t)h->stream>>>(
        G, (T *)a->out, (const T *)a->w, (const T *)a->y, a->alpha, a->beta);
    return fdnn_cuda_check(cudaGetLastError(), "conv_bwd_data_direct_kernel");
}

template <typename T, typename ACC>
cudnnStatus_t launch_bwd_filter(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    ConvGeom G = make_geom(p);
    const long long nflt = (long long)G.k * G.cg * G.flt[0] * G.flt[1] * G.flt[2];
    long long blocks = nflt < (1LL << 30) ? nflt : (1LL << 30);
    if (blocks < 1) blocks = 1;
    conv_bwd_filter_direct_kernel<T, ACC><<<(unsigned)blocks, BWF_THREADS, 0, (cudaStream_t)h->stream>>>(
        G, (T *)a->out, (const T *)a->x, (const T *)a->y, a->alpha, a->beta);
    return fdnn_cuda_check(cudaGetLastError(), "conv_bwd_filter_direct_kernel");
}

template <typename T, typename ACC>
cudnnStatus_t dispatch_dir(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    switch (p->dir) {
    case FDNN_CONV_FWD: return launch_fwd<T, T, T, ACC>(h, p, a);
    case FDNN_CONV_BWD_DATA: return launch_bwd_data<T, ACC>(h, p, a);
    case FDNN_CONV_BWD_FILTER: return launch_bwd_filter<T, ACC>(h, p, a);
    }
    return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "unknown convolution direction %d", (int)p->dir);
}

} /* namespace */

extern "C" cudnnStatus_t fdnn_cuda_conv_direct_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    const long long outs = (long long)p->n * p->k * p->out[0] * p->out[1] * p->out[2];
    const long long ins = (long long)p->n * p->c * p->in[0] * p->in[1] * p->in[2];
    if (outs == 0 || ins == 0) return CUDNN_STATUS_SUCCESS;
    if (p->xtype == CUDNN_DATA_INT8 && p->wtype == CUDNN_DATA_INT8 && p->dir == FDNN_CONV_FWD) {
        if (p->ytype == CUDNN_DATA_INT8) return launch_fwd<int8_t, int8_t, int8_t, int>(h, p, a);
        if (p->ytype == CUDNN_DATA_FLOAT) return launch_fwd<int8_t, int8_t, float, int>(h, p, a);
    } else if (p->xtype == p->wtype && p->xtype == p->ytype) {
        switch (p->xtype) {
        case CUDNN_DATA_FLOAT: return dispatch_dir<float, float>(h, p, a);
        case CUDNN_DATA_DOUBLE: return dispatch_dir<double, double>(h, p, a);
        case CUDNN_DATA_HALF: return dispatch_dir<__half, float>(h, p, a);
        case CUDNN_DATA_BFLOAT16: return dispatch_dir<__nv_bfloat16, float>(h, p, a);
        default: break;
        }
    }
    return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "conv direct (CUDA): data types x=%s w=%s y=%s are not implemented",
                     fdnn_dtype_name(p->xtype), fdnn_dtype_name(p->wtype), fdnn_dtype_name(p->ytype));
}
