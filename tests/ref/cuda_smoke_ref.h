/* Tiny double-precision reference for the CUDA convolution / add-tensor smoke test
 * (tests/unit/test_cuda_conv_smoke.c). Plain loops over explicit strides; includes nothing
 * from src/ or the cuDNN headers. */
#ifndef FDNN_TEST_CUDA_SMOKE_REF_H
#define FDNN_TEST_CUDA_SMOKE_REF_H
#include <stdint.h>

/* A convolution with 3 spatial dims (2-D problems use D = 1, pad 0, stride 1, dil 1). */
typedef struct csr_conv {
    int n, c, k, g;
    int in[3], out[3], flt[3], pad[3], str[3], dil[3];
    int flip;              /* 1: convolution (filter flipped), 0: cross-correlation */
    int64_t xs[5], ys[5];  /* N, C, D, H, W strides of x and y */
    int w_channels_last;   /* filter stored K, T, R, S, C/g instead of K, C/g, T, R, S */
} csr_conv;

/* Output extent of one spatial dim. */
int csr_out_dim(int in, int flt, int pad, int str, int dil);
/* Offset of filter element (k, c, t, r, s) (c within the group). */
int64_t csr_w_index(const csr_conv *p, int k, int c, int t, int r, int s);
/* out = alpha*result + beta*out over the logical elements of out (beta == 0: out not read). */
void csr_conv_fwd(const csr_conv *p, const double *x, const double *w, double *y, double alpha, double beta);
void csr_conv_bwd_data(const csr_conv *p, double *dx, const double *w, const double *dy, double alpha, double beta);
void csr_conv_bwd_filter(const csr_conv *p, const double *x, double *dw, const double *dy, double alpha, double beta);
/* C = alpha*A + beta*C; A broadcast along dims where adim[d] == 1. */
void csr_add_tensor(int nd, const int *cdim, const int64_t *cstride, double *c, const int *adim, const int64_t *astride,
                    const double *a, double alpha, double beta);
#endif
