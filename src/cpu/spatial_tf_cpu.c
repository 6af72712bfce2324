/* Spatial transformer on the CPU: affine grid generation and bilinear sampling (zero outside),
 * with their backward passes. x/y are NCHW-logical (any strides, through their descriptors);
 * theta is N x 2 x 3 and the grid N x H x W x 2, both packed in the descriptor's type.
 * Normalised coordinates: -1 is the centre of the first pixel, +1 the centre of the last. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../core/norm_desc.h"
#include "ops_common.h"

void fdnn_cpu_stf_grid_fwd(const struct cudnnSpatialTransformerStruct *st, const void *theta, void *grid)
{
    int N = st->dim[0], H = st->dim[2], W = st->dim[3];
    cudnnDataType_t t = st->dtype;
    for (int n = 0; n < N; n++) {
        double th[6];
        for (int k = 0; k < 6; k++) th[k] = fdnn_load(theta, t, 6 * (int64_t)n + k);
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
                double xs = fdnn_stf_coord(w, W), ys = fdnn_stf_coord(h, H);
                int64_t o = (((int64_t)n * H + h) * W + w) * 2;
                fdnn_store(grid, t, o, th[0] * xs + th[1] * ys + th[2]);
                fdnn_store(grid, t, o + 1, th[3] * xs + th[4] * ys + th[5]);
            }
    }
}

void fdnn_cpu_stf_grid_bwd(const struct cudnnSpatialTransformerStruct *st, const void *dgrid, void *dtheta)
{
    int N = st->dim[0], H = st->dim[2], W = st->dim[3];
    cudnnDataType_t t = st->dtype;
    for (int n = 0; n < N; n++) {
        double d[6] = {0, 0, 0, 0, 0, 0};
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
                double xs = fdnn_stf_coord(w, W), ys = fdnn_stf_coord(h, H);
                int64_t o = (((int64_t)n * H + h) * W + w) * 2;
                double gx = fdnn_load(dgrid, t, o), gy = fdnn_load(dgrid, t, o + 1);
                d[0] += gx * xs, d[1] += gx * ys, d[2] += gx;
                d[3] += gy * xs, d[4] += gy * ys, d[5] += gy;
            }
        for (int k = 0; k < 6; k++) fdnn_store(dtheta, t, 6 * (int64_t)n + k, d[k]);
    }
}

/* Source position of output pixel (n, h, w) in input pixel units. One outside [-2, W + 1] (or NaN), which
 * samples nothing, becomes -2 (also nothing), so that its floor converts to int. */
static void src_pos(const void *grid, cudnnDataType_t t, int64_t o, int Hi, int Wi, double *px, double *py)
{
    *px = (fdnn_load(grid, t, o) + 1.0) * (Wi - 1) * 0.5;
    *py = (fdnn_load(grid, t, o + 1) + 1.0) * (Hi - 1) * 0.5;
    *px = *px >= -2.0 && *px <= Wi + 1.0 ? *px : -2.0;
    *py = *py >= -2.0 && *py <= Hi + 1.0 ? *py : -2.0;
}

cudnnStatus_t fdnn_cpu_stf_sampler_fwd(const struct cudnnSpatialTransformerStruct *st, double alpha, const struct cudnnTensorStruct *xd,
                              const void *x, const void *grid, double beta, const struct cudnnTensorStruct *yd, void *y)
{
    int N = yd->dim[0], C = yd->dim[1], Ho = yd->dim[2], Wo = yd->dim[3], Hi = xd->dim[2], Wi = xd->dim[3];
    double *xv = malloc(sizeof(double) * (size_t)fdnn_tensor_elems(xd)), *yv = malloc(sizeof(double) * (size_t)fdnn_tensor_elems(yd));
    if (!xv || !yv) {
        free(xv), free(yv);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
    fdnn_ops_gather_into(xd, x, xv);
#pragma omp parallel for collapse(2) if ((int64_t)N * Ho * Wo > 16384)
    for (int n = 0; n < N; n++)
        for (int h = 0; h < Ho; h++)
            for (int w = 0; w < Wo; w++) {
                double px, py;
                src_pos(grid, st->dtype, (((int64_t)n * Ho + h) * Wo + w) * 2, Hi, Wi, &px, &py);
                int x0 = (int)floor(px), y0 = (int)floor(py);
                double fx = px - x0, fy = py - y0;
                for (int c = 0; c < C; c++) {
                    const double *xp = xv + ((int64_t)n * C + c) * Hi * Wi;
                    double acc = 0;
                    for (int dy = 0; dy < 2; dy++)
                        for (int dx = 0; dx < 2; dx++) {
                            int xx = x0 + dx, yy = y0 + dy;
                            if (xx < 0 || xx >= Wi || yy < 0 || yy >= Hi) continue;
                            acc += (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy) * xp[(int64_t)yy * Wi + xx];
                        }
                    yv[(((int64_t)n * C + c) * Ho + h) * Wo + w] = acc;
                }
            }
    fdnn_ops_blend(yd, y, yv, alpha, beta);
    free(xv), free(yv);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fdnn_cpu_stf_sampler_bwd(const struct cudnnSpatialTransformerStruct *st, double alpha, const struct cudnnTensorStruct *xd,
                              const void *x, double beta, const struct cudnnTensorStruct *dxd, void *dx, double alphaDg,
                              const struct cudnnTensorStruct *dyd, const void *dy, const void *grid, double betaDg, void *dgrid)
{
    int N = dyd->dim[0], C = dyd->dim[1], Ho = dyd->dim[2], Wo = dyd->dim[3], Hi = xd->dim[2], Wi = xd->dim[3];
    int64_t nx = fdnn_tensor_elems(xd);
    double *xv = malloc(sizeof(double) * (size_t)nx), *gx = calloc((size_t)nx, sizeof(double));
    double *dyv = malloc(sizeof(double) * (size_t)fdnn_tensor_elems(dyd));
    if (!xv || !gx || !dyv) {
        free(xv), free(gx), free(dyv);
        return FDNN_FAIL(CUDNN_STATUS_ALLOC_FAILED, "out of host memory");
    }
    fdnn_ops_gather_into(xd, x, xv);
    fdnn_ops_gather_into(dyd, dy, dyv);
    cudnnDataType_t t = st->dtype;
    /* sequential over n,h,w: scattering into dx must not race */
    for (int n = 0; n < N; n++)
        for (int h = 0; h < Ho; h++)
            for (int w = 0; w < Wo; w++) {
                int64_t o = (((int64_t)n * Ho + h) * Wo + w) * 2;
                double px, py;
                src_pos(grid, t, o, Hi, Wi, &px, &py);
                int x0 = (int)floor(px), y0 = (int)floor(py);
                double fx = px - x0, fy = py - y0, dpx = 0, dpy = 0;
                for (int c = 0; c < C; c++) {
                    int64_t base = ((int64_t)n * C + c) * Hi * Wi;
                    double g = dyv[(((int64_t)n * C + c) * Ho + h) * Wo + w];
                    for (int dy_ = 0; dy_ < 2; dy_++)
                        for (int dx_ = 0; dx_ < 2; dx_++) {
                            int xx = x0 + dx_, yy = y0 + dy_;
                            if (xx < 0 || xx >= Wi || yy < 0 || yy >= Hi) continue;
                            double wx = dx_ ? fx : 1 - fx, wy = dy_ ? fy : 1 - fy, v = xv[base + (int64_t)yy * Wi + xx];
                            gx[base + (int64_t)yy * Wi + xx] += g * wx * wy;
                            dpx += g * v * wy * (dx_ ? 1 : -1);
                            dpy += g * v * wx * (dy_ ? 1 : -1);
                        }
                }
                double r0 = alphaDg * dpx * (Wi - 1) * 0.5, r1 = alphaDg * dpy * (Hi - 1) * 0.5;
                if (betaDg != 0) r0 += betaDg * fdnn_load(dgrid, t, o), r1 += betaDg * fdnn_load(dgrid, t, o + 1);
                fdnn_store(dgrid, t, o, r0);
                fdnn_store(dgrid, t, o + 1, r1);
            }
    fdnn_ops_blend(dxd, dx, gx, alpha, beta);
    free(xv), free(gx), free(dyv);
    return CUDNN_STATUS_SUCCESS;
}
