/* Scalar activation functions as cuDNN defines them, shared by the activation ops, the
 * convolution epilogue (cudnnConvolutionBiasActivationForward) and the normalization
 * epilogues on the CPU backend. Double in, double out; the caller converts. */
#ifndef FDNN_ACTIVATION_MATH_H
#define FDNN_ACTIVATION_MATH_H
#include <math.h>
#include "fdnn.h"

/* y = act(x). coef: ceiling for CLIPPED_RELU, alpha for ELU; beta: swish beta. */
static inline double fdnn_act_fwd(cudnnActivationMode_t mode, double coef, double beta, int propagate_nan, double x)
{
    if (isnan(x)) return (propagate_nan || (mode != CUDNN_ACTIVATION_RELU && mode != CUDNN_ACTIVATION_CLIPPED_RELU)) ? x : 0.0;
    switch (mode) {
    case CUDNN_ACTIVATION_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case CUDNN_ACTIVATION_RELU: return x > 0 ? x : 0.0;
    case CUDNN_ACTIVATION_TANH: return tanh(x);
    case CUDNN_ACTIVATION_CLIPPED_RELU: return x <= 0 ? 0.0 : x >= coef ? coef : x;
    case CUDNN_ACTIVATION_ELU: return x > 0 ? x : coef * (exp(x) - 1.0);
    case CUDNN_ACTIVATION_IDENTITY: return x;
    case CUDNN_ACTIVATION_SWISH: return x / (1.0 + exp(-beta * x));
    }
    return x;
}

/* dx = dy * act'(x), with y = act(x) given too (cuDNN passes both). */
static inline double fdnn_act_bwd(cudnnActivationMode_t mode, double coef, double beta, double x, double y, double dy)
{
    switch (mode) {
    case CUDNN_ACTIVATION_SIGMOID: return dy * y * (1.0 - y);
    case CUDNN_ACTIVATION_RELU: return x > 0 ? dy : 0.0;
    case CUDNN_ACTIVATION_TANH: return dy * (1.0 - y * y);
    case CUDNN_ACTIVATION_CLIPPED_RELU: return (x > 0 && x < coef) ? dy : 0.0;
    case CUDNN_ACTIVATION_ELU: return x > 0 ? dy : dy * (y + coef);
    case CUDNN_ACTIVATION_IDENTITY: return dy;
    case CUDNN_ACTIVATION_SWISH: {
        double s = 1.0 / (1.0 + exp(-beta * x));
        return dy * (s + beta * x * s * (1.0 - s));
    }
    }
    return dy;
}
#endif
