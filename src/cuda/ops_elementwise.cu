/* Element-wise tensor ops on the GPU with the CPU backend's exact semantics: cudnnSetTensor,
 * cudnnScaleTensor, cudnnTransformTensor (any layout/type pair, NCHW_VECT_C included),
 * cudnnOpTensor (B broadcast) and cudnnActivationForward/Backward. One grid-stride kernel:
 * each thread takes logical elements, maps them through every operand's strides (direct
 * indexing when an operand is packed NCHW-order), computes in double as the CPU does and
 * rounds once on store. Deterministic: no atomics, every output written by one thread.
 * Dense fast path first (ew_dense.cuh): operands packed in the same dimension order with
 * equal strides and element type run a typed, vectorised flat kernel in float (double for
 * DOUBLE) -- within th_tolerance of the double reference. */
#include "ops_dev.cuh"
#include "ew_dense.cuh"

using namespace fdnn_ops;
using namespace fdnn_ewd;

namespace {

/* ---- dense fast path (ew_dense.cuh): float math for FLOAT/HALF/BFLOAT16, double for DOUBLE ---- */
__device__ __forceinline__ float fexp(float x) { return expf(x); }
__device__ __forceinline__ double fexp(double x) { return exp(x); }
__device__ __forceinline__ float ftanh(float x) { return tanhf(x); }
__device__ __forceinline__ double ftanh(double x) { return tanh(x); }
__device__ __forceinline__ float fsqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double fsqrt(double x) { return sqrt(x); }
template <typename F> __device__ __forceinline__ F fnan();
template <> __device__ __forceinline__ float fnan<float>() { return __int_as_float(0x7fc00000); }
template <> __device__ __forceinline__ double fnan<double>() { return __longlong_as_double(0x7ff8000000000000LL); }

template <typename F> struct OpActFwd {
    struct P { F coef, sb; int mode, prop; };
    static __device__ __forceinline__ F r(const P &p, F x, F, F)
    {
        if (x != x) return (p.prop || (p.mode != CUDNN_ACTIVATION_RELU && p.mode != CUDNN_ACTIVATION_CLIPPED_RELU)) ? x : F(0);
        switch (p.mode) {
        case CUDNN_ACTIVATION_SIGMOID: return F(1) / (F(1) + fexp(-x));
        case CUDNN_ACTIVATION_RELU: return x > F(0) ? x : F(0);
        case CUDNN_ACTIVATION_TANH: return ftanh(x);
        case CUDNN_ACTIVATION_CLIPPED_RELU: return x <= F(0) ? F(0) : (x >= p.coef ? p.coef : x);
        case CUDNN_ACTIVATION_ELU: return x > F(0) ? x : p.coef * (fexp(x) - F(1));
        case CUDNN_ACTIVATION_SWISH: return x / (F(1) + fexp(-p.sb * x));
        default: return x;
        }
    }
};

/* a = y, b = dy, c = x */
template <typename F> struct OpActBwd {
    struct P { F coef, sb; int mode; };
    static __device__ __forceinline__ F r(const P &p, F y, F dy, F x)
    {
        switch (p.mode) {
        case CUDNN_ACTIVATION_SIGMOID: return dy * y * (F(1) - y);
        case CUDNN_ACTIVATION_RELU: return x > F(0) ? dy : F(0);
        case CUDNN_ACTIVATION_TANH: return dy * (F(1) - y * y);
        case CUDNN_ACTIVATION_CLIPPED_RELU: return (x > F(0) && x < p.coef) ? dy : F(0);
        case CUDNN_ACTIVATION_ELU: return x > F(0) ? dy : dy * (y + p.coef);
        case CUDNN_ACTIVATION_SWISH: {
            const F s = F(1) / (F(1) + fexp(-p.sb * x));
            return dy * (s + p.sb * x * s * (F(1) - s));
        }
        default: return dy;
        }
    }
};

template <typename F> struct OpTens {
    struct P { F a1, a2; int mode, prop; };
    static __device__ __forceinline__ F r(const P &p, F a, F b, F)
    {
        const F x = p.a1 * a;
        if (p.mode == CUDNN_OP_TENSOR_SQRT) return fsqrt(x);
        if (p.mode == CUDNN_OP_TENSOR_NOT) return F(1) - x;
        const F y = p.a2 * b;
        switch (p.mode) {
        case CUDNN_OP_TENSOR_ADD: return x + y;
        case CUDNN_OP_TENSOR_MUL: return x * y;
        default: {
            if (x != x || y != y) return p.prop ? fnan<F>() : (x != x ? y : x);
            const int is_max = p.mode != CUDNN_OP_TENSOR_MIN;
            return is_max ? (x > y ? x : y) : (x < y ? x : y);
        }
        }
    }
};

enum { EW_SET, EW_SCALE, EW_COPY, EW_OPT, EW_ACT_FWD, EW_ACT_BWD };

struct EwParams {
    double alpha, beta, alpha2, value, coef, sb;
    int mode, prop;
};

__device__ __forceinline__ double act_fwd(int mode, double coef, double sb, int prop, double x)
{
    if (x != x) return (prop || (mode != CUDNN_ACTIVATION_RELU && mode != CUDNN_ACTIVATION_CLIPPED_RELU)) ? x : 0.0;
    switch (mode) {
    case CUDNN_ACTIVATION_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case CUDNN_ACTIVATION_RELU: return x > 0 ? x : 0.0;
    case CUDNN_ACTIVATION_TANH: return tanh(x);
    case CUDNN_ACTIVATION_CLIPPED_RELU: return x <= 0 ? 0.0 : (x >= coef ? coef : x);
    case CUDNN_ACTIVATION_ELU: return x > 0 ? x : coef * (exp(x) - 1.0);
    case CUDNN_ACTIVATION_SWISH: return x / (1.0 + exp(-sb * x));
    default: return x;
    }
}

__device__ __forceinline__ double act_bwd(int mode, double coef, double sb, double x, double y, double dy)
{
    switch (mode) {
    case CUDNN_ACTIVATION_SIGMOID: return dy * y * (1.0 - y);
    case CUDNN_ACTIVATION_RELU: return x > 0 ? dy : 0.0;
    case CUDNN_ACTIVATION_TANH: return dy * (1.0 - y * y);
    case CUDNN_ACTIVATION_CLIPPED_RELU: return (x > 0 && x < coef) ? dy : 0.0;
    case CUDNN_ACTIVATION_ELU: return x > 0 ? dy : dy * (y + coef);
    case CUDNN_ACTIVATION_SWISH: {
        const double s = 1.0 / (1.0 + exp(-sb * x));
        return dy * (s + sb * x * s * (1.0 - s));
    }
    default: return dy;
    }
}

__device__ __forceinline__ double op_minmax(double a, double b, int prop, int is_max)
{
    if (a != a || b != b) return prop ? __longlong_as_double(0x7ff8000000000000LL) : (a != a ? b : a);
    return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

template <int OP>
__global__ void ew_kernel(TV to, void *O, TV t0, const void *I0, TV t1, const void *I1, TV t2, const void *I2, long long n, EwParams p)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const long long oo = off_lin(to, i);
        if (OP == EW_SET) {
            stv(O, to.dtype, oo, p.value);
        } else if (OP == EW_SCALE) {
            stv(O, to.dtype, oo, p.alpha * ldv(O, to.dtype, oo));
        } else if (OP == EW_COPY) {
            blendv(O, to.dtype, oo, ldv(I0, t0.dtype, off_lin(t0, i)), p.alpha, p.beta);
        } else if (OP == EW_OPT) {
            const double x = p.alpha * ldv(I0, t0.dtype, off_lin(t0, i));
            double r;
            if (p.mode == CUDNN_OP_TENSOR_SQRT) r = sqrt(x);
            else if (p.mode == CUDNN_OP_TENSOR_NOT) r = 1.0 - x;
            else {
                const double y = p.alpha2 * ldv(I1, t1.dtype, off_lin(t1, i));
                switch (p.mode) {
                case CUDNN_OP_TENSOR_ADD: r = x + y; break;
                case CUDNN_OP_TENSOR_MUL: r = x * y; break;
                case CUDNN_OP_TENSOR_MIN: r = op_minmax(x, y, p.prop, 0); break;
                default: r = op_minmax(x, y, p.prop, 1); break;
                }
            }
            blendv(O, to.dtype, oo, r, 1.0, p.beta);
        } else if (OP == EW_ACT_FWD) {
            const double x = ldv(I0, t0.dtype, off_lin(t0, i));
            blendv(O, to.dtype, oo, act_fwd(p.mode, p.coef, p.sb, p.prop, x), p.alpha, p.beta);
        } else { /* EW_ACT_BWD: I0 = y, I1 = dy, I2 = x */
            const double y = ldv(I0, t0.dtype, off_lin(t0, i));
            const double dy = ldv(I1, t1.dtype, off_lin(t1, i));
            const double x = ldv(I2, t2.dtype, off_lin(t2, i));
            blendv(O, to.dtype, oo, act_bwd(p.mode, p.coef, p.sb, x, y, dy), p.alpha, p.beta);
        }
    }
}

template <int OP>
cudnnStatus_t launch(cudnnHandle_t h, const char *name, const struct cudnnTensorStruct *od, void *O, TV t0, const void *I0, TV t1,
                     const void *I1, TV t2, const void *I2, const EwParams &p)
{
    const long long n = fdnn_tensor_elems(od);
    if (n <= 0) return CUDNN_STATUS_SUCCESS;
    const int block = 256;
    ew_kernel<OP><<<grid_for(n, block), block, 0, (cudaStream_t)h->stream>>>(make_tv(od), O, t0, I0, t1, I1, t2, I2, n, p);
    return fdnn_cuda_check(cudaGetLastError(), name);
}

EwParams params(double alpha, double beta)
{
    EwParams p;
    p.alpha = alpha; p.beta = beta; p.alpha2 = 0; p.value = 0; p.coef = 0; p.sb = 0; p.mode = 0; p.prop = 0;
    return p;
}

} /* namespace */

extern "C" cudnnStatus_t fdnn_cuda_set_tensor(cudnnHandle_t h, const struct cudnnTensorStruct *y, void *Y, double value)
{
    if (dense_any_order(y)) {
        OpValue<float>::P pf; pf.value = (float)value;
        OpValue<double>::P pd; pd.value = value;
        cudnnStatus_t st;
        if (dense_dispatch<0, OpValue>(h, "dense_kernel<set>", y->dtype, fdnn_tensor_elems(y), pf, pd, 1.0, 0.0, Y, NULL, NULL, NULL, &st))
            return st;
    }
    EwParams p = params(1, 0);
    p.value = value;
    TV z = make_tv(y);
    return launch<EW_SET>(h, "ew_kernel<set>", y, Y, z, NULL, z, NULL, z, NULL, p);
}

extern "C" cudnnStatus_t fdnn_cuda_scale_tensor(cudnnHandle_t h, const struct cudnnTensorStruct *y, void *Y, double alpha)
{
    if (dense_any_order(y)) {
        OpCopy<float>::P pf = {0}; OpCopy<double>::P pd = {0};
        cudnnStatus_t st;
        if (dense_dispatch<1, OpCopy>(h, "dense_kernel<scale>", y->dtype, fdnn_tensor_elems(y), pf, pd, alpha, 0.0, Y, Y, NULL, NULL, &st))
            return st;
    }
    TV z = make_tv(y);
    return launch<EW_SCALE>(h, "ew_kernel<scale>", y, Y, z, NULL, z, NULL, z, NULL, params(alpha, 0));
}

extern "C" cudnnStatus_t fdnn_cuda_transform_tensor(cudnnHandle_t h, double alpha, const struct cudnnTensorStruct *x, const void *X, double beta,
                                                    const struct cudnnTensorStruct *y, void *Y)
{
    if (dense_any_order(y) && same_geom(y, x)) {
        OpCopy<float>::P pf = {0}; OpCopy<double>::P pd = {0};
        cudnnStatus_t st;
        if (dense_dispatch<1, OpCopy>(h, "dense_kernel<transform>", y->dtype, fdnn_tensor_elems(y), pf, pd, alpha, beta, Y, X, NULL, NULL,
                                      &st))
            return st;
    }
    TV tx = make_tv(x);
    return launch<EW_COPY>(h, "ew_kernel<transform>", y, Y, tx, X, tx, NULL, tx, NULL, params(alpha, beta));
}

extern "C" cudnnStatus_t fdnn_cuda_op_tensor(cudnnHandle_t h, int op, int propagate_nan, double alpha1, const struct cudnnTensorStruct *a,
                                             const void *A, double alpha2, const struct cudnnTensorStruct *b, const void *B, double beta,
                                             const struct cudnnTensorStruct *c, void *C)
{
    const int unary = op == CUDNN_OP_TENSOR_SQRT || op == CUDNN_OP_TENSOR_NOT;
    if (dense_any_order(c) && same_geom(c, a) && (unary || (b && same_geom(c, b)))) {
        OpTens<float>::P pf; pf.a1 = (float)alpha1; pf.a2 = (float)alpha2; pf.mode = op; pf.prop = propagate_nan;
        OpTens<double>::P pd; pd.a1 = alpha1; pd.a2 = alpha2; pd.mode = op; pd.prop = propagate_nan;
        cudnnStatus_t st;
        const long long n = fdnn_tensor_elems(c);
        if (unary ? dense_dispatch<1, OpTens>(h, "dense_kernel<op_tensor>", c->dtype, n, pf, pd, 1.0, beta, C, A, NULL, NULL, &st)
                  : dense_dispatch<2, OpTens>(h, "dense_kernel<op_tensor>", c->dtype, n, pf, pd, 1.0, beta, C, A, B, NULL, &st))
            return st;
    }
    EwParams p = params(alpha1, beta);
    p.alpha2 = alpha2;
    p.mode = op;
    p.prop = propagate_nan;
    TV ta = make_tv(a), tb = b ? broadcast_tv(b, c) : ta;
    return launch<EW_OPT>(h, "ew_kernel<op_tensor>", c, C, ta, A, tb, b ? B : NULL, ta, NULL, p);
}

extern "C" cudnnStatus_t fdnn_cuda_activation_fwd(cudnnHandle_t h, int mode, double coef, double swish_beta, int propagate_nan, double alpha,
                                                  const struct cudnnTensorStruct *x, const void *X, double beta,
                                                  const struct cudnnTensorStruct *y, void *Y)
{
    if (dense_any_order(y) && same_geom(y, x)) {
        OpActFwd<float>::P pf; pf.coef = (float)coef; pf.sb = (float)swish_beta; pf.mode = mode; pf.prop = propagate_nan;
        OpActFwd<double>::P pd; pd.coef = coef; pd.sb = swish_beta; pd.mode = mode; pd.prop = propagate_nan;
        cudnnStatus_t st;
        if (dense_dispatch<1, OpActFwd>(h, "dense_kernel<activation_fwd>", y->dtype, fdnn_tensor_elems(y), pf, pd, alpha, beta, Y, X, NULL,
                                        NULL, &st))
            return st;
    }
    EwParams p = params(alpha, beta);
    p.mode = mode; p.coef = coef; p.sb = swish_beta; p.prop = propagate_nan;
    TV tx = make_tv(x);
    return launch<EW_ACT_FWD>(h, "ew_kernel<activation_fwd>", y, Y, tx, X, tx, NULL, tx, NULL, p);
}

extern "C" cudnnStatus_t fdnn_cuda_activation_bwd(cudnnHandle_t h, int mode, double coef, double swish_beta, double alpha,
                                                  const struct cudnnTensorStruct *y, const void *Y, const struct cudnnTensorStruct *dy,
                                                  const void *DY, const struct cudnnTensorStruct *x, const void *X, double beta,
                                                  const struct cudnnTensorStruct *dx, void *DX)
{
    if (dense_any_order(dx) && same_geom(dx, y) && same_geom(dx, dy) && same_geom(dx, x)) {
        OpActBwd<float>::P pf; pf.coef = (float)coef; pf.sb = (float)swish_beta; pf.mode = mode;
        OpActBwd<double>::P pd; pd.coef = coef; pd.sb = swish_beta; pd.mode = mode;
        cudnnStatus_t st;
        if (dense_dispatch<3, OpActBwd>(h, "dense_kernel<activation_bwd>", dx->dtype, fdnn_tensor_elems(dx), pf, pd, alpha, beta, DX, Y,
                                        DY, X, &st))
            return st;
    }
    EwParams p = params(alpha, beta);
    p.mode = mode; p.coef = coef; p.sb = swish_beta;
    return launch<EW_ACT_BWD>(h, "ew_kernel<activation_bwd>", dx, DX, make_tv(y), Y, make_tv(dy), DY, make_tv(x), X, p);
}

/* C = alpha*A + beta*C with A broadcast over C (any element type the loads support, e.g. the
 * INT8 case of cudnnAddTensor that fdnn_cuda_add_tensor does not take). */
extern "C" cudnnStatus_t fdnn_cuda_add_broadcast(cudnnHandle_t h, double alpha, const struct cudnnTensorStruct *a, const void *A, double beta,
                                                 const struct cudnnTensorStruct *c, void *C)
{
    if (dense_any_order(c) && same_geom(c, a)) {
        OpCopy<float>::P pf = {0}; OpCopy<double>::P pd = {0};
        cudnnStatus_t st;
        if (dense_dispatch<1, OpCopy>(h, "dense_kernel<add>", c->dtype, fdnn_tensor_elems(c), pf, pd, alpha, beta, C, A, NULL, NULL, &st))
            return st;
    }
    TV ta = broadcast_tv(a, c);
    return launch<EW_COPY>(h, "ew_kernel<add_broadcast>", c, C, ta, A, ta, NULL, ta, NULL, params(alpha, beta));
}
