/* INT8 forward convolution on the GPU for the vectorised NCHW_VECT_C layouts (INT8x4, INT8x32)
 * and, for cudnnConvolutionBiasActivationForward, every INT8-family problem (plain INT8 too).
 * One thread per output element; int32 accumulation as cuDNN does (the sum wraps like
 * cuDNN's int32 accumulator; the CPU backend accumulates in int64, so the two only differ when
 * a sum leaves the int32 range). For the vector layouts the C vector is the innermost axis of
 * both x and w, so each aligned run of 4 channels is one 32-bit word and is summed with __dp4a;
 * misaligned base pointers fall back to byte loads.
 * Rounding is the CPU backend's, operation for operation (src/cpu/conv_fwd__direct_ref.c and
 * src/cpu/conv_epilogue.c), with the double operations written as __dmul_rn/__dadd_rn so the
 * compiler cannot contract them into FMAs:
 *   plain:  v = alpha*acc (+ beta*y when beta != 0), stored as y's type;
 *   fused:  v = (double)(float)(alpha1*acc) + bias[k] (+ alpha2*z when alpha2 != 0), then RELU
 *           or identity, stored as y's type;
 * an INT8 store rounds to nearest even (rint) and saturates to [-128, 127], NaN -> 0, like
 * fdnn_store on the CPU. */
#include <string.h>
#include "cuda_dev.h"

using namespace fdnn_dev;

namespace {

struct I8Geom {
    int n, k, cg, kg;
    int in[3], out[3], flt[3], pad[3], str[3], dil[3];
    int flip;
    int v;       /* channels per vector of x and w (1, 4 or 32) */
    int yv;      /* channels per vector of y (1, 4 or 32) */
    int aligned; /* x and w start on 4-byte boundaries: 32-bit vector loads are legal */
    long long xs[5], ys[5], ws[5]; /* N,C,D,H,W strides; C in vector units when v/yv > 1 */
};

struct I8Epi {
    int fused;
    double alpha2;
    const void *z;         /* same type and layout rule as y */
    long long zs[5];
    const void *bias;
    int bias_float;        /* 1: FLOAT bias, 0: bias of y's type */
    long long bias_stride;
    int relu, prop_nan;
};

__device__ __forceinline__ long long off5(const long long *s, int vect, int n, int c, int d, int h, int w)
{
    if (vect == 1) return n * s[0] + c * s[1] + d * s[2] + h * s[3] + w * s[4];
    return (n * s[0] + (long long)(c / vect) * s[1] + d * s[2] + h * s[3] + w * s[4]) * vect + c % vect;
}

__device__ __forceinline__ double ldd(const float *p) { return (double)*p; }
__device__ __forceinline__ double ldd(const int8_t *p) { return (double)*p; }

template <typename TY>
__global__ void conv_int8_fwd_kernel(I8Geom G, const int8_t *__restrict__ x, const int8_t *__restrict__ w, TY *y, double alpha,
                                     double beta, I8Epi E)
{
    const long long P0 = G.out[0], P1 = G.out[1], P2 = G.out[2];
    const long long total = (long long)G.n * G.k * P0 * P1 * P2;
    const int nvec = G.cg / G.v;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total; idx += (long long)gridDim.x * blockDim.x) {
        long long r = idx;
        const int ow = (int)(r % P2); r /= P2;
        const int oh = (int)(r % P1); r /= P1;
        const int od = (int)(r % P0); r /= P0;
        const int k = (int)(r % G.k);
        const int n = (int)(r / G.k);
        const int gi = k / G.kg;
        const int d0 = od * G.str[0] - G.pad[0], h0 = oh * G.str[1] - G.pad[1], w0 = ow * G.str[2] - G.pad[2];
        /* first channel (vector) of the group; cg is a multiple of v */
        const long long xn = n * G.xs[0] + (long long)(gi * G.cg / G.v) * G.xs[1];
        const long long wk = k * G.ws[0];
        int acc = 0;
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
                    const long long xo = xn + id * G.xs[2] + ih * G.xs[3] + iw * G.xs[4];
                    const long long wo = wk + tf * G.ws[2] + rf * G.ws[3] + sf * G.ws[4];
                    if (G.v == 1) {
                        for (int c = 0; c < G.cg; c++) acc += (int)x[xo + c * G.xs[1]] * (int)w[wo + c * G.ws[1]];
                    } else {
                        for (int cv = 0; cv < nvec; cv++) {
                            const int8_t *xp = x + (xo + cv * G.xs[1]) * G.v;
                            const int8_t *wp = w + (wo + cv * G.ws[1]) * G.v;
                            if (G.aligned) {
                                for (int j = 0; j < G.v; j += 4)
                                    acc = __dp4a(*(const int *)(xp + j), *(const int *)(wp + j), acc);
                            } else {
                                for (int j = 0; j < G.v; j++) acc += (int)xp[j] * (int)wp[j];
                            }
                        }
                    }
                }
            }
        }
        const long long yo = off5(G.ys, G.yv, n, k, od, oh, ow);
        double v;
        if (E.fused) {
            const float accf = (float)__dmul_rn(alpha, (double)acc);
            const double bk = E.bias_float ? ldd((const float *)E.bias + k * E.bias_stride)
                                           : ldd((const TY *)E.bias + k * E.bias_stride);
            v = __dadd_rn((double)accf, bk);
            if (E.alpha2 != 0.0) v = __dadd_rn(v, __dmul_rn(E.alpha2, ldd((const TY *)E.z + off5(E.zs, G.yv, n, k, od, oh, ow))));
            if (E.relu) v = (v != v) ? (E.prop_nan ? v : 0.0) : (v > 0.0 ? v : 0.0);
        } else {
            v = __dmul_rn(alpha, (double)acc);
            if (beta != 0.0) v = __dadd_rn(v, __dmul_rn(beta, ldd(y + yo)));
        }
        st(y + yo, v);
    }
}

I8Geom make_i8(const fdnn_conv_problem *p, const void *x, const void *w)
{
    I8Geom G;
    G.n = p->n; G.k = p->k; G.cg = p->c / p->g; G.kg = p->k / p->g;
    for (int i = 0; i < 3; i++) {
        G.in[i] = p->in[i]; G.out[i] = p->out[i]; G.flt[i] = p->flt[i]; G.pad[i] = p->pad[i];
        G.str[i] = p->stride[i] > 0 ? p->stride[i] : 1;
        G.dil[i] = p->dil[i] > 0 ? p->dil[i] : 1;
    }
    G.flip = !p->cross_correlation;
    G.v = p->x_vect;
    G.yv = p->y_vect;
    G.aligned = ((uintptr_t)x % 4 == 0) && ((uintptr_t)w % 4 == 0);
    for (int i = 0; i < 5; i++) { G.xs[i] = p->xs[i]; G.ys[i] = p->ys[i]; G.ws[i] = p->ws[i]; }
    return G;
}

cudnnStatus_t launch(cudnnHandle_t h, const fdnn_conv_problem *p, const void *x, const void *w, void *y, double alpha, double beta,
                     const I8Epi &E)
{
    if (p->xtype != p->wtype || (p->xtype != CUDNN_DATA_INT8 && p->xtype != CUDNN_DATA_INT8x4 && p->xtype != CUDNN_DATA_INT8x32))
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "conv int8 (CUDA): x=%s w=%s is not an INT8 configuration", fdnn_dtype_name(p->xtype),
                         fdnn_dtype_name(p->wtype));
    if (p->x_vect != p->w_vect || (p->x_vect > 1 && (p->c / p->g) % p->x_vect != 0))
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "conv int8 (CUDA): x and w vector lengths differ or do not divide the group's channels");
    const long long total = (long long)p->n * p->k * p->out[0] * p->out[1] * p->out[2];
    if (total == 0) return CUDNN_STATUS_SUCCESS;
    I8Geom G = make_i8(p, x, w);
    const int block = 256;
    const unsigned grid = grid_for(total, block);
    cudaStream_t s = (cudaStream_t)h->stream;
    if (p->ytype == CUDNN_DATA_FLOAT)
        conv_int8_fwd_kernel<float><<<grid, block, 0, s>>>(G, (const int8_t *)x, (const int8_t *)w, (float *)y, alpha, beta, E);
    else if (p->ytype == p->xtype)
        conv_int8_fwd_kernel<int8_t><<<grid, block, 0, s>>>(G, (const int8_t *)x, (const int8_t *)w, (int8_t *)y, alpha, beta, E);
    else
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "conv int8 (CUDA): output type %s (x %s) is not implemented", fdnn_dtype_name(p->ytype),
                         fdnn_dtype_name(p->xtype));
    return fdnn_cuda_check(cudaGetLastError(), "conv_int8_fwd_kernel");
}

} /* namespace */

extern "C" cudnnStatus_t fdnn_cuda_conv_int8_run(cudnnHandle_t h, const fdnn_conv_problem *p, const fdnn_conv_args *a)
{
    if (p->dir != FDNN_CONV_FWD)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "INT8 convolutions exist only in the forward direction");
    I8Epi E;
    memset(&E, 0, sizeof E);
    return launch(h, p, a->x, a->w, a->out, a->alpha, a->beta, E);
}

extern "C" cudnnStatus_t fdnn_cuda_conv_int8_bias_act(cudnnHandle_t h, const fdnn_conv_problem *p, const void *x, const void *w,
                                                      double alpha1, double alpha2, const void *z, const int64_t zs[5], const void *bias,
                                                      cudnnDataType_t btype, int64_t bias_stride, int relu, int prop_nan, void *y)
{
    if (p->dir != FDNN_CONV_FWD)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "INT8 convolutions exist only in the forward direction");
    I8Epi E;
    memset(&E, 0, sizeof E);
    E.fused = 1;
    E.alpha2 = alpha2;
    E.z = z;
    for (int i = 0; i < 5; i++) E.zs[i] = zs[i];
    E.bias = bias;
    E.bias_float = btype == CUDNN_DATA_FLOAT;
    if (!E.bias_float && btype != p->ytype)
        return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "bias type %s must be FLOAT or the output type %s", fdnn_dtype_name(btype),
                         fdnn_dtype_name(p->ytype));
    E.bias_stride = bias_stride;
    E.relu = relu;
    E.prop_nan = prop_nan;
    return launch(h, p, x, w, y, alpha1, 0.0, E);
}
