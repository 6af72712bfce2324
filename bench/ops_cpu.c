/* Memory-bound ops on the CPU backend (issue #4): activation (RELU, SIGMOID, TANH, ELU, SWISH), softmax, max pooling, batch norm, the
 * whole-tensor ops (add, op, transform, scale, set), cudnnReduceTensor, LRN, divisive normalization and the
 * spatial transformer's sampler on one FLOAT NCHW (or NHWC) tensor, each timed as the
 * minimum over repeated calls with the benchmark's OpenMP threads, printed as ms and as GB/s of the bytes
 * the op must move at least (each tensor read or written once). Compare with `cpu_mem_floor B B` (B = the
 * tensor's bytes): a copy of the same size.
 *   ops_cpu [N [C [H [W [reps [nchw|nhwc [filter]]]]]]]   (default 8 64 56 56, 30 repetitions, nchw; filter:
 *   only the rows whose name contains it, e.g. softmax) */
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <cudnn.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define CK(x)                                                                                                                    \
    do {                                                                                                                         \
        cudnnStatus_t s_ = (x);                                                                                                  \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                                                        \
            fprintf(stderr, "ops_cpu: %s failed: %s\n", #x, cudnnGetErrorString(s_));                                            \
            exit(1);                                                                                                             \
        }                                                                                                                        \
    } while (0)

enum { OP_ACT_FWD, OP_ACT_BWD, OP_SIG_FWD, OP_SIG_BWD, OP_TANH_FWD, OP_TANH_BWD, OP_ELU_FWD, OP_ELU_BWD, OP_SWISH_FWD, OP_SWISH_BWD, OP_SM_CHAN, OP_SM_INST, OP_SM_BWD, OP_SM_FAST, OP_SM_LOG, OP_SM_LOG_INST, OP_SM_BWD_INST, OP_SM_BWD_LOG, OP_SM_BWD_LOG_INST, OP_POOL, OP_POOL_BWD, OP_AVG, OP_MAX3_BWD, OP_AVG_BWD, OP_BN_TRAIN, OP_BN_BWD,
       OP_ADD_BIAS, OP_ADD_SAME, OP_OPT_ADD, OP_OPT_MUL_BIAS, OP_XFORM_SAME, OP_XFORM_OTHER, OP_SCALE, OP_SET,
       OP_RED_C, OP_RED_NC, OP_RED_ALL, OP_RED_MAX_NC, OP_LRN, OP_LRN_BWD, OP_DIVN, OP_DIVN_BWD, OP_STF, OP_STF_BWD, OP_COUNT };

int main(int argc, char **argv)
{
    const int N = argc > 1 ? atoi(argv[1]) : 8, C = argc > 2 ? atoi(argv[2]) : 64, H = argc > 3 ? atoi(argv[3]) : 56,
              W = argc > 4 ? atoi(argv[4]) : 56, reps = argc > 5 ? atoi(argv[5]) : 30;
    const int nhwc = argc > 6 && strcmp(argv[6], "nhwc") == 0;
    if (N < 1 || C < 1 || H < 2 || W < 2 || reps < 1 || (argc > 6 && !nhwc && strcmp(argv[6], "nchw") != 0)) {
        fprintf(stderr, "usage: ops_cpu [N [C [H [W [reps [nchw|nhwc [filter]]]]]]] (H, W >= 2)\n");
        return 2;
    }
    const size_t n = (size_t)N * C * H * W;
    float *x = malloc(n * 4), *y = malloc(n * 4), *dy = malloc(n * 4), *dx = malloc(n * 4), *mu = malloc(n * 4), *tmp = malloc(n * 4);
    float *prm = malloc((size_t)C * 4 * 6), *grid = malloc((size_t)N * H * W * 2 * 4), *dgrid = malloc((size_t)N * H * W * 2 * 4);
    if (!x || !y || !dy || !dx || !mu || !tmp || !prm || !grid || !dgrid) {
        fprintf(stderr, "ops_cpu: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)((i * 7919) % 1000) / 500.f - 1.f;
        dy[i] = (float)((i * 104729) % 1000) / 1000.f;
        y[i] = dx[i] = 0.f;
        mu[i] = (float)((i * 31) % 100) / 200.f - 0.25f;
    }
    for (int i = 0; i < N * H * W; i++) { /* a sampling grid rotated by about 10 degrees and shrunk by 5% */
        const float xs = -1.f + 2.f * (float)(i % W) / (float)(W - 1), ys = -1.f + 2.f * (float)(i / W % H) / (float)(H - 1);
        grid[2 * i] = 0.94f * xs - 0.16f * ys;
        grid[2 * i + 1] = 0.16f * xs + 0.94f * ys;
    }
    float *scale = prm, *bias = prm + C, *rmean = prm + 2 * C, *rvar = prm + 3 * C, *smean = prm + 4 * C, *sinv = prm + 5 * C;
    for (int c = 0; c < C; c++) scale[c] = 1.f, bias[c] = rmean[c] = 0.f, rvar[c] = 1.f;

    cudnnHandle_t h;
    CK(cudnnCreate(&h));
    cudnnTensorDescriptor_t t, tp, tbn;
    CK(cudnnCreateTensorDescriptor(&t));
    CK(cudnnCreateTensorDescriptor(&tp));
    CK(cudnnCreateTensorDescriptor(&tbn));
    const cudnnTensorFormat_t fmt = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    CK(cudnnSetTensor4dDescriptor(t, fmt, CUDNN_DATA_FLOAT, N, C, H, W));
    CK(cudnnSetTensor4dDescriptor(tp, fmt, CUDNN_DATA_FLOAT, N, C, H / 2, W / 2));
    CK(cudnnSetTensor4dDescriptor(tbn, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, C, 1, 1));
    cudnnActivationDescriptor_t ad;
    CK(cudnnCreateActivationDescriptor(&ad));
    CK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
    cudnnActivationDescriptor_t ads[4]; /* SIGMOID, TANH, ELU (alpha 1), SWISH (beta 1) */
    const cudnnActivationMode_t amodes[4] = {CUDNN_ACTIVATION_SIGMOID, CUDNN_ACTIVATION_TANH, CUDNN_ACTIVATION_ELU, CUDNN_ACTIVATION_SWISH};
    for (int i = 0; i < 4; i++) {
        CK(cudnnCreateActivationDescriptor(&ads[i]));
        CK(cudnnSetActivationDescriptor(ads[i], amodes[i], CUDNN_NOT_PROPAGATE_NAN, 1.0));
    }
    cudnnPoolingDescriptor_t pd, avgd;
    CK(cudnnCreatePoolingDescriptor(&pd));
    CK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2));
    CK(cudnnCreatePoolingDescriptor(&avgd)); /* ResNet's 3x3/2 pad 1 window shape, averaged */
    CK(cudnnSetPooling2dDescriptor(avgd, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, CUDNN_NOT_PROPAGATE_NAN, 3, 3, 1, 1, 2, 2));
    cudnnPoolingDescriptor_t maxd3; /* the same window, max (overlapping windows backward) */
    CK(cudnnCreatePoolingDescriptor(&maxd3));
    CK(cudnnSetPooling2dDescriptor(maxd3, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, 3, 1, 1, 2, 2));
    cudnnTensorDescriptor_t ta, tother; /* tother: the same tensor in the other layout (NHWC for NCHW and back) */
    CK(cudnnCreateTensorDescriptor(&ta));
    CK(cudnnSetTensor4dDescriptor(ta, fmt, CUDNN_DATA_FLOAT, N, C, (H - 1) / 2 + 1, (W - 1) / 2 + 1));
    CK(cudnnCreateTensorDescriptor(&tother));
    CK(cudnnSetTensor4dDescriptor(tother, nhwc ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, N, C, H, W));
    cudnnOpTensorDescriptor_t oadd, omul;
    CK(cudnnCreateOpTensorDescriptor(&oadd));
    CK(cudnnSetOpTensorDescriptor(oadd, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
    CK(cudnnCreateOpTensorDescriptor(&omul));
    CK(cudnnSetOpTensorDescriptor(omul, CUDNN_OP_TENSOR_MUL, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
    cudnnReduceTensorDescriptor_t radd, rmax;
    CK(cudnnCreateReduceTensorDescriptor(&radd));
    CK(cudnnSetReduceTensorDescriptor(radd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES,
                                      CUDNN_32BIT_INDICES));
    CK(cudnnCreateReduceTensorDescriptor(&rmax));
    CK(cudnnSetReduceTensorDescriptor(rmax, CUDNN_REDUCE_TENSOR_MAX, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                      CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES));
    cudnnTensorDescriptor_t tnc, t1; /* reduction outputs NxCx1x1 and 1x1x1x1 */
    CK(cudnnCreateTensorDescriptor(&tnc));
    CK(cudnnSetTensor4dDescriptor(tnc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, 1, 1));
    CK(cudnnCreateTensorDescriptor(&t1));
    CK(cudnnSetTensor4dDescriptor(t1, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, 1));
    cudnnLRNDescriptor_t lrnd; /* cuDNN's defaults: n = 5, alpha = 1e-4, beta = 0.75, k = 2 */
    CK(cudnnCreateLRNDescriptor(&lrnd));
    cudnnSpatialTransformerDescriptor_t std_;
    CK(cudnnCreateSpatialTransformerDescriptor(&std_));
    const int stdim[4] = {N, C, H, W};
    CK(cudnnSetSpatialTransformerNdDescriptor(std_, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, stdim));
    int *ridx = malloc((size_t)N * C * sizeof(int));
    if (!ridx) {
        fprintf(stderr, "ops_cpu: out of memory\n");
        return 1;
    }

    const char *names[OP_COUNT] = {"activation fwd (RELU)",
                                   "activation bwd (RELU)",
                                   "activation fwd (SIGMOID)",
                                   "activation bwd (SIGMOID)",
                                   "activation fwd (TANH)",
                                   "activation bwd (TANH)",
                                   "activation fwd (ELU)",
                                   "activation bwd (ELU)",
                                   "activation fwd (SWISH)",
                                   "activation bwd (SWISH)",
                                   "softmax fwd (ACCURATE, CHANNEL)",
                                   "softmax fwd (ACCURATE, INSTANCE)",
                                   "softmax bwd (ACCURATE, CHANNEL)",
                                   "softmax fwd (FAST, CHANNEL)",
                                   "softmax fwd (LOG, CHANNEL)",
                                   "softmax fwd (LOG, INSTANCE)",
                                   "softmax bwd (ACCURATE, INSTANCE)",
                                   "softmax bwd (LOG, CHANNEL)",
                                   "softmax bwd (LOG, INSTANCE)",
                                   "max pooling fwd 2x2/2",
                                   "max pooling bwd 2x2/2",
                                   "avg pooling fwd 3x3/2 pad 1",
                                   "max pooling bwd 3x3/2 pad 1",
                                   "avg pooling bwd 3x3/2 pad 1",
                                   "bn fwd training (SPATIAL)",
                                   "bn bwd (SPATIAL, saved stats)",
                                   "add tensor (bias 1xCx1x1)",
                                   "add tensor (same layout)",
                                   "op tensor ADD (same layout)",
                                   "op tensor MUL (bias 1xCx1x1)",
                                   "transform (same layout)",
                                   nhwc ? "transform NHWC->NCHW" : "transform NCHW->NHWC",
                                   "scale tensor",
                                   "set tensor",
                                   "reduce ADD -> 1xCx1x1",
                                   "reduce ADD -> NxCx1x1",
                                   "reduce ADD -> 1x1x1x1",
                                   "reduce MAX+indices -> NxCx1x1",
                                   "LRN fwd (n 5)",
                                   "LRN bwd (n 5)",
                                   "divisive norm fwd (n 5, means)",
                                   "divisive norm bwd (n 5, means)",
                                   "spatial tf sampler fwd",
                                   "spatial tf sampler bwd"};
    const double tb = 4.0 * (double)n; /* bytes of one tensor */
    const double bytes[OP_COUNT] = {2 * tb, 4 * tb, 2 * tb, 4 * tb, 2 * tb, 4 * tb, 2 * tb, 4 * tb, 2 * tb, 4 * tb, 2 * tb, 2 * tb, 3 * tb, 2 * tb, 2 * tb, 2 * tb, 3 * tb, 3 * tb, 3 * tb, 1.25 * tb, 2.5 * tb, 1.25 * tb, 2.5 * tb, 1.25 * tb, 2 * tb, 3 * tb,
                                    2 * tb, 3 * tb, 3 * tb, 2 * tb, 2 * tb, 2 * tb, 2 * tb, 1 * tb, tb, tb, tb, tb,
                                    2 * tb, 3 * tb, 3 * tb, 5 * tb, 2 * tb, 3 * tb};
#ifdef _OPENMP
    const int threads = omp_get_max_threads();
#else
    const int threads = 1;
#endif
    printf("FreeDNN CPU ops: FLOAT %s %dx%dx%dx%d (%.1f MB per tensor), %d thread(s), min of %d calls\n", nhwc ? "NHWC" : "NCHW", N, C, H, W, tb * 1e-6, threads,
           reps);
    const float one = 1.f, zero = 0.f;
    const char *filter = argc > 7 ? argv[7] : "";
    for (int op = 0; op < OP_COUNT; op++) {
        if (!strstr(names[op], filter)) continue;
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            const double t0 = now();
            switch (op) {
            case OP_ACT_FWD: CK(cudnnActivationForward(h, ad, &one, t, x, &zero, t, y)); break;
            case OP_ACT_BWD: CK(cudnnActivationBackward(h, ad, &one, t, y, t, dy, t, x, &zero, t, dx)); break;
            case OP_SIG_FWD:
            case OP_TANH_FWD:
            case OP_ELU_FWD:
            case OP_SWISH_FWD: CK(cudnnActivationForward(h, ads[(op - OP_SIG_FWD) / 2], &one, t, x, &zero, t, y)); break;
            case OP_SIG_BWD:
            case OP_TANH_BWD:
            case OP_ELU_BWD:
            case OP_SWISH_BWD: CK(cudnnActivationBackward(h, ads[(op - OP_SIG_FWD) / 2], &one, t, y, t, dy, t, x, &zero, t, dx)); break;
            case OP_SM_CHAN: CK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, t, x, &zero, t, y)); break;
            case OP_SM_INST: CK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one, t, x, &zero, t, y)); break;
            case OP_SM_BWD:
                CK(cudnnSoftmaxBackward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, t, y, t, dy, &zero, t, dx));
                break;
            case OP_SM_FAST: CK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_MODE_CHANNEL, &one, t, x, &zero, t, y)); break;
            case OP_SM_LOG: CK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &one, t, x, &zero, t, y)); break;
            case OP_SM_LOG_INST: CK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_INSTANCE, &one, t, x, &zero, t, y)); break;
            case OP_SM_BWD_INST:
                CK(cudnnSoftmaxBackward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one, t, y, t, dy, &zero, t, dx));
                break;
            case OP_SM_BWD_LOG: /* y: the LOG rows above left log-probabilities there */
                CK(cudnnSoftmaxBackward(h, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &one, t, y, t, dy, &zero, t, dx));
                break;
            case OP_SM_BWD_LOG_INST:
                CK(cudnnSoftmaxBackward(h, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_INSTANCE, &one, t, y, t, dy, &zero, t, dx));
                break;
            case OP_POOL: CK(cudnnPoolingForward(h, pd, &one, t, x, &zero, tp, y)); break;
            case OP_POOL_BWD: CK(cudnnPoolingBackward(h, pd, &one, tp, y, tp, dy, t, x, &zero, t, dx)); break;
            case OP_AVG: CK(cudnnPoolingForward(h, avgd, &one, t, x, &zero, ta, y)); break;
            case OP_MAX3_BWD: CK(cudnnPoolingBackward(h, maxd3, &one, ta, y, ta, dy, t, x, &zero, t, dx)); break;
            case OP_AVG_BWD: CK(cudnnPoolingBackward(h, avgd, &one, ta, y, ta, dy, t, x, &zero, t, dx)); break;
            case OP_BN_TRAIN:
                CK(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, t, x, t, y, tbn, scale, bias, 0.1, rmean, rvar,
                                                          1e-5, smean, sinv));
                break;
            case OP_BN_BWD:
                CK(cudnnBatchNormalizationBackward(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, t, x, t, dy, t, dx, tbn, scale, rmean,
                                                   rvar, 1e-5, smean, sinv));
                break;
            case OP_ADD_BIAS: CK(cudnnAddTensor(h, &one, tbn, scale, &one, t, y)); break;
            case OP_ADD_SAME: CK(cudnnAddTensor(h, &one, t, x, &one, t, y)); break;
            case OP_OPT_ADD: CK(cudnnOpTensor(h, oadd, &one, t, x, &one, t, dy, &zero, t, y)); break;
            case OP_OPT_MUL_BIAS: CK(cudnnOpTensor(h, omul, &one, t, x, &one, tbn, scale, &zero, t, y)); break;
            case OP_XFORM_SAME: CK(cudnnTransformTensor(h, &one, t, x, &zero, t, y)); break;
            case OP_XFORM_OTHER: CK(cudnnTransformTensor(h, &one, t, x, &zero, tother, y)); break;
            case OP_SCALE: CK(cudnnScaleTensor(h, t, y, &one)); break;
            case OP_SET: CK(cudnnSetTensor(h, t, y, &zero)); break;
            case OP_RED_C: CK(cudnnReduceTensor(h, radd, NULL, 0, NULL, 0, &one, t, x, &zero, tbn, y)); break;
            case OP_RED_NC: CK(cudnnReduceTensor(h, radd, NULL, 0, NULL, 0, &one, t, x, &zero, tnc, y)); break;
            case OP_RED_ALL: CK(cudnnReduceTensor(h, radd, NULL, 0, NULL, 0, &one, t, x, &zero, t1, y)); break;
            case OP_RED_MAX_NC: CK(cudnnReduceTensor(h, rmax, ridx, (size_t)N * C * sizeof(int), NULL, 0, &one, t, x, &zero, tnc, y)); break;
            case OP_LRN: CK(cudnnLRNCrossChannelForward(h, lrnd, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, t, x, &zero, t, y)); break;
            case OP_LRN_BWD: CK(cudnnLRNCrossChannelBackward(h, lrnd, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, t, y, t, dy, t, x, &zero, t, dx)); break;
            case OP_DIVN:
                CK(cudnnDivisiveNormalizationForward(h, lrnd, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, t, x, mu, tmp, tmp, &zero, t, y));
                break;
            case OP_DIVN_BWD: /* dx and dMeans: two outputs */
                CK(cudnnDivisiveNormalizationBackward(h, lrnd, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, t, x, mu, dy, tmp, tmp, &zero, t, dx, y));
                break;
            case OP_STF: CK(cudnnSpatialTfSamplerForward(h, std_, &one, t, x, grid, &zero, t, y)); break;
            default: CK(cudnnSpatialTfSamplerBackward(h, std_, &one, t, x, &zero, t, dx, &one, t, dy, grid, &zero, dgrid)); break;
            }
            const double d = now() - t0;
            if (d < best) best = d;
        }
        printf("  %-34s %9.3f ms %8.2f GB/s\n", names[op], best * 1e3, bytes[op] / best * 1e-9);
    }
    cudnnDestroyLRNDescriptor(lrnd);
    cudnnDestroySpatialTransformerDescriptor(std_);
    cudnnDestroyActivationDescriptor(ad);
    for (int i = 0; i < 4; i++) cudnnDestroyActivationDescriptor(ads[i]);
    cudnnDestroyPoolingDescriptor(pd);
    cudnnDestroyPoolingDescriptor(avgd);
    cudnnDestroyPoolingDescriptor(maxd3);
    cudnnDestroyOpTensorDescriptor(oadd);
    cudnnDestroyOpTensorDescriptor(omul);
    cudnnDestroyReduceTensorDescriptor(radd);
    cudnnDestroyReduceTensorDescriptor(rmax);
    cudnnDestroyTensorDescriptor(tnc);
    cudnnDestroyTensorDescriptor(t1);
    cudnnDestroyTensorDescriptor(ta);
    cudnnDestroyTensorDescriptor(tother);
    cudnnDestroyTensorDescriptor(t);
    cudnnDestroyTensorDescriptor(tp);
    cudnnDestroyTensorDescriptor(tbn);
    cudnnDestroy(h);
    free(x), free(y), free(dy), free(dx), free(mu), free(tmp), free(prm), free(grid), free(dgrid), free(ridx);
    return 0;
}
