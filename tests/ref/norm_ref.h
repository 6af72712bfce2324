/* Independent double reference for batch normalization / cudnnNormalization*, dropout
 * (an own Philox-4x32-10) and the spatial transformer. Tensors are logical row-major
 * arrays: x is N x C x S (S = product of spatial dims); parameters have P entries,
 * P = C (per channel) or C*S (per activation). Constants are restated, not included. */
#ifndef FDNN_TEST_NORM_REF_H
#define FDNN_TEST_NORM_REF_H
#include <stdint.h>

/* activation modes, as cudnnActivationMode_t numbers them */
enum { REF_ACT_NONE = -1, REF_ACT_SIGMOID = 0, REF_ACT_RELU = 1, REF_ACT_TANH = 2, REF_ACT_CLIPPED_RELU = 3, REF_ACT_ELU = 4,
       REF_ACT_IDENTITY = 5, REF_ACT_SWISH = 6 };
double norm_ref_act(int mode, double coef, double v);
double ref_act_deriv(int mode, double coef, double v); /* d act / d v at v */

/* Training forward: batch mean, biased var, unbiased var, inverse std, and
 * y = act(scale*(x-mean)*invstd + bias + z); pre (may be NULL) gets the pre-activation value.
 * z may be NULL; act = REF_ACT_NONE for no activation. */
void ref_norm_train(int n, int c, int s, int per_act, const double *x, const double *scale, const double *bias, const double *z, int act,
                    double coef, double eps, double *y, double *pre, double *mean, double *var_biased, double *var_unbiased,
                    double *invstd);
/* Inference forward with given mean and variance. */
void ref_norm_infer(int n, int c, int s, int per_act, const double *x, const double *scale, const double *bias, const double *mean,
                    const double *var, const double *z, int act, double coef, double eps, double *y);
/* Backward of y = scale*xhat + bias with batch statistics (mean, invstd); g = dL/d(pre-activation). */
void ref_norm_bwd(int n, int c, int s, int per_act, const double *x, const double *g, const double *scale, const double *mean,
                  const double *invstd, double *dx, double *dscale, double *dbias);

/* Philox-4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11): 4 output words for counter ctr, key k. */
void ref_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* Dropout keep decision for element idx as FreeDNN specifies it (docs/ops-norm.md):
 * word idx%4 of philox(ctr = {idx/4 lo, idx/4 hi, 0, 0}, key = {seed lo, seed hi}),
 * u = ((w >> 8) + 1) / 2^24, kept iff u > p (p as a float). */
int ref_dropout_keep(uint64_t seed, uint64_t idx, float p);

/* Spatial transformer: grid[n][h][w][0..1] = theta[n] (2x3) * (x_w, y_h, 1), x_w = -1 + 2w/(W-1). */
void ref_stf_grid(int n, int h, int w, const double *theta, double *grid);
/* Bilinear sampling of x (N x C x Hi x Wi) at grid (N x Ho x Wo x 2), zero outside. */
void ref_stf_sample(int n, int c, int hi, int wi, int ho, int wo, const double *x, const double *grid, double *y);
#endif
