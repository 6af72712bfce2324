/* Internal structs and helpers of the normalization family (batch norm, cudnnNormalization*),
 * dropout and the spatial transformer. Batch norm and cudnnNormalization* share one engine:
 * the API files validate and fill an fdnn_norm_prob, src/cpu/norm_cpu.c does the math. */
#ifndef FDNN_NORM_DESC_H
#define FDNN_NORM_DESC_H
#include "fdnn.h"

enum { FDNN_MAGIC_SPATIAL_TF = 0x46444e53 /* "FDNS" */ };

struct cudnnSpatialTransformerStruct {
    uint32_t magic;
    int is_set;
    cudnnSamplerType_t sampler;
    cudnnDataType_t dtype;
    int nb_dims;
    int dim[4]; /* N, C, H, W of the output */
};

/* Epilogue ops, same numbering as cudnnBatchNormOps_t and cudnnNormOps_t. */
enum { FDNN_NORM_OPS_NORM = 0, FDNN_NORM_OPS_ACT = 1, FDNN_NORM_OPS_ADD_ACT = 2 };

/* One normalization call after validation. Descriptors of absent tensors are NULL.
 * Element e of x in logical N,C,spatial row-major order belongs to parameter
 * p = per_activation ? e % (C*S) : (e / S) % C, with S the product of the spatial dims. */
typedef struct fdnn_norm_prob {
    int per_activation;
    int ops;
    const struct cudnnActivationStruct *act; /* ops != NORM */
    const struct cudnnTensorStruct *x, *y, *z, *dy, *dx, *dz;
    const struct cudnnTensorStruct *sb; /* scale/bias and dscale/dbias */
    const struct cudnnTensorStruct *mv; /* mean/variance (running, estimated, saved) */
    const void *xp, *zp, *dyp, *scale, *bias;
    void *yp, *dxp, *dzp, *dscale, *dbias;
    const void *est_mean, *est_var;          /* inference */
    void *run_mean, *run_var;                /* training, NULL pair allowed */
    void *save_mean, *save_invstd;           /* training output / backward input, NULL pair allowed */
    double alpha, beta, alpha_p, beta_p, eps, factor;
    void *reserve;                           /* pre-activation values as double when ops != NORM */
} fdnn_norm_prob;

/* Reserve space the engine needs for a training call with these ops over nelem elements. */
size_t fdnn_norm_reserve_size(int ops, int64_t nelem);

cudnnStatus_t fdnn_cpu_norm_infer(const fdnn_norm_prob *p);
cudnnStatus_t fdnn_cpu_norm_train(const fdnn_norm_prob *p);
cudnnStatus_t fdnn_cpu_norm_backward(const fdnn_norm_prob *p);

/* Shared validation + dispatch used by both cudnnBatchNormalization* and cudnnNormalization*
 * (src/api/batchnorm.c). mvDesc may equal sbDesc. */
cudnnStatus_t fdnn_norm_infer_api(cudnnHandle_t handle, int per_act, int ops, const void *alpha, const void *beta,
                                  const struct cudnnTensorStruct *xDesc, const void *x, const struct cudnnTensorStruct *sbDesc,
                                  const void *scale, const void *bias, const struct cudnnTensorStruct *mvDesc, const void *mean,
                                  const void *var, const struct cudnnTensorStruct *zDesc, const void *z,
                                  const struct cudnnActivationStruct *act, const struct cudnnTensorStruct *yDesc, void *y, double eps);
cudnnStatus_t fdnn_norm_train_api(cudnnHandle_t handle, int per_act, int ops, const void *alpha, const void *beta,
                                  const struct cudnnTensorStruct *xDesc, const void *x, const struct cudnnTensorStruct *zDesc, const void *z,
                                  const struct cudnnTensorStruct *yDesc, void *y, const struct cudnnTensorStruct *sbDesc, const void *scale,
                                  const void *bias, const struct cudnnTensorStruct *mvDesc, double factor, void *run_mean, void *run_var,
                                  double eps, void *save_mean, void *save_invstd, const struct cudnnActivationStruct *act,
                                  void *reserve, size_t reserve_size);
cudnnStatus_t fdnn_norm_backward_api(cudnnHandle_t handle, int per_act, int ops, const void *alphaD, const void *betaD,
                                     const void *alphaP, const void *betaP, const struct cudnnTensorStruct *xDesc, const void *x,
                                     const struct cudnnTensorStruct *yDesc, const void *y, const struct cudnnTensorStruct *dyDesc,
                                     const void *dy, const struct cudnnTensorStruct *dzDesc, void *dz,
                                     const struct cudnnTensorStruct *dxDesc, void *dx, const struct cudnnTensorStruct *sbDesc,
                                     const void *scale, const void *bias, void *dscale, void *dbias, double eps,
                                     const struct cudnnTensorStruct *mvDesc, const void *save_mean, const void *save_invstd,
                                     const struct cudnnActivationStruct *act, void *reserve, size_t reserve_size);
/* Size/type checks of the derived parameter descriptor and the op arguments. */
cudnnStatus_t fdnn_norm_check_ops(int ops, const struct cudnnActivationStruct *act, const char *opsname);
cudnnStatus_t fdnn_norm_derive(struct cudnnTensorStruct *d, const struct cudnnTensorStruct *x, int per_act, const char *argname);

/* Dropout on the CPU: mask of logical element i is fdnn_dropout_keep(seed, 0, i, p). */
void fdnn_cpu_dropout_fwd(const struct cudnnTensorStruct *xd, const void *x, const struct cudnnTensorStruct *yd, void *y,
                          float p, unsigned long long seed, uint8_t *mask);
void fdnn_cpu_dropout_bwd(const struct cudnnTensorStruct *dyd, const void *dy, const struct cudnnTensorStruct *dxd, void *dx,
                          float p, const uint8_t *mask);

/* Spatial transformer on the CPU (bilinear, NCHW-logical x/y, grid N x H x W x 2). */
void fdnn_cpu_stf_grid_fwd(const struct cudnnSpatialTransformerStruct *st, const void *theta, void *grid);
void fdnn_cpu_stf_grid_bwd(const struct cudnnSpatialTransformerStruct *st, const void *dgrid, void *dtheta);
cudnnStatus_t fdnn_cpu_stf_sampler_fwd(const struct cudnnSpatialTransformerStruct *st, double alpha, const struct cudnnTensorStruct *xd,
                              const void *x, const void *grid, double beta, const struct cudnnTensorStruct *yd, void *y);
cudnnStatus_t fdnn_cpu_stf_sampler_bwd(const struct cudnnSpatialTransformerStruct *st, double alpha, const struct cudnnTensorStruct *xd,
                              const void *x, double beta, const struct cudnnTensorStruct *dxd, void *dx, double alphaDg,
                              const struct cudnnTensorStruct *dyd, const void *dy, const void *grid, double betaDg, void *dgrid);

/* Element offset of logical index e through a descriptor's strides (shared by the CPU files; whole
 * tensors are copied by fdnn_ops_gather_into / fdnn_ops_blend, src/cpu/ops_common.h). */
int64_t fdnn_logical_offset(const struct cudnnTensorStruct *t, int64_t e);
#endif
