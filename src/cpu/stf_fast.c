/* The spatial transformer straight on FLOAT data (the CPU backend's fast path; every other type goes through
 * src/cpu/spatial_tf_cpu.c, whose header comment gives the conventions). The grid generator works row by
 * row. The sampler reads x in place through its fdnn_ops_ncs view (NCHW, NHWC, gaps between images or channels):
 * each output pixel's four corners are found once per row (offsets clamped into the image, a flag for each
 * corner inside it) and used for every channel, the channels outermost (vectorized across the row's pixels)
 * unless they are innermost in x (vectorized across the channels). Every sum is double, in the general path's
 * order, so the sampler's results are the general path's: the forward sums the inside corners (00, 01, 10, 11)
 * of each pixel; the backward scatters into a per-thread double copy of each (image, block of channels) of dx,
 * pixel by pixel in order, and sums dgrid over the channels in order (rows split across threads). Results do not
 * depend on the thread count. Outputs overlapping an input or each other take the general path. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_fast.h"
#include "../core/norm_desc.h"

#define INLINE static inline __attribute__((always_inline))

enum {
    PAR_ELEMS = 65536, /* threads above this much work */
    DX_LANES = 8       /* backward: channels per dx block */
};

/* ------------------------------------------------------------ grid generator */

FDNN_CLONES static void grid_row(const double *th, double ys, int W, float *g)
{
    for (int w = 0; w < W; w++) {
        const double xs = fdnn_stf_coord(w, W);
        g[2 * w] = (float)(th[0] * xs + th[1] * ys + th[2]);
        g[2 * w + 1] = (float)(th[3] * xs + th[4] * ys + th[5]);
    }
}

int fdnn_cpu_stf_grid_fwd_f32(const struct cudnnSpatialTransformerStruct *st, const void *theta, void *grid)
{
    if (st->dtype != CUDNN_DATA_FLOAT) return 0;
    const int N = st->dim[0], H = st->dim[2], W = st->dim[3];
#pragma omp parallel for schedule(static) if ((int64_t)N * H * W > PAR_ELEMS)
    for (int64_t r = 0; r < (int64_t)N * H; r++) {
        const float *t = (const float *)theta + 6 * (r / H);
        const double th[6] = {t[0], t[1], t[2], t[3], t[4], t[5]};
        grid_row(th, fdnn_stf_coord((int)(r % H), H), W, (float *)grid + r * W * 2);
    }
    return 1;
}

/* d[0..6) = the sums over image n's grid of dgrid times (xs, ys, 1) for x and then y */
FDNN_CLONES static void grid_bwd_img(int H, int W, const float *dg, double *d)
{
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0;
    for (int h = 0; h < H; h++) {
        const double ys = fdnn_stf_coord(h, H);
        const float *g = dg + (int64_t)h * W * 2;
#pragma omp simd reduction(+ : a0, a1, a2, a3, a4, a5)
        for (int w = 0; w < W; w++) {
            const double xs = fdnn_stf_coord(w, W), gx = g[2 * w], gy = g[2 * w + 1];
            a0 += gx * xs, a1 += gx * ys, a2 += gx;
            a3 += gy * xs, a4 += gy * ys, a5 += gy;
        }
    }
    d[0] = a0, d[1] = a1, d[2] = a2, d[3] = a3, d[4] = a4, d[5] = a5;
}

int fdnn_cpu_stf_grid_bwd_f32(const struct cudnnSpatialTransformerStruct *st, const void *dgrid, void *dtheta)
{
    if (st->dtype != CUDNN_DATA_FLOAT) return 0;
    const int N = st->dim[0], H = st->dim[2], W = st->dim[3];
#pragma omp parallel for schedule(static) if ((int64_t)N * H * W > PAR_ELEMS)
    for (int n = 0; n < N; n++) {
        double d[6];
        grid_bwd_img(H, W, (const float *)dgrid + (int64_t)n * H * W * 2, d);
        for (int k = 0; k < 6; k++) ((float *)dtheta)[6 * (int64_t)n + k] = (float)d[k];
    }
    return 1;
}

/* ------------------------------------------------------------------ sampler */

/* Where output pixel with grid entry g samples an Hi x Wi input: corner (x0, y0) and the fractions. A source
 * position outside [-2, W + 1] (or NaN) becomes -2: no corner inside, as outside any such range. */
static inline void src_corner(const float *g, int Hi, int Wi, int *x0, int *y0, double *fx, double *fy)
{
    double px = ((double)g[0] + 1.0) * (Wi - 1) * 0.5, py = ((double)g[1] + 1.0) * (Hi - 1) * 0.5;
    px = px >= -2.0 && px <= Wi + 1.0 ? px : -2.0;
    py = py >= -2.0 && py <= Hi + 1.0 ? py : -2.0;
    *x0 = (int)floor(px), *y0 = (int)floor(py);
    *fx = px - *x0, *fy = py - *y0;
}

/* Output pixels' corners: for corner k (0: (x0, y0), 1: (x0+1, y0), 2: (x0, y0+1), 3: (x0+1, y0+1)) of pixel i,
 * clamped inside (always safe to read), its spatial index yy*Wi + xx at idx[k*np + i] and its element offset in
 * an image of x (the index times x's spatial stride; the callers check that it fits in 32 bits: gathers with
 * 32-bit indices vectorize) at off[k*np + i], ok[k*np + i] = 1 where the corner lies inside; the bilinear
 * factors wx0 = 1 - fx, wx1 = fx, wy0 = 1 - fy, wy1 = fy; np pixels */
typedef struct {
    int64_t np;
    int32_t *idx, *off, *ok;
    double *wx0, *wx1, *wy0, *wy1;
} corners;

static inline int64_t corner_slots(int64_t np) { return 10 * np; } /* doubles holding a corners */

static corners corners_at(double *p, int64_t np)
{
    int32_t *q = (int32_t *)(p + 4 * np);
    corners k = {np, q, q + 4 * np, q + 8 * np, p, p + np, p + 2 * np, p + 3 * np};
    return k;
}

/* 1 when every element offset of an Hi x Wi image of a view with spatial stride ss fits in 32 bits */
static inline int offsets_fit(int Hi, int Wi, int64_t ss) { return ((int64_t)Hi * Wi - 1) * ss < INT32_MAX; }

/* pixels i0 .. i0 + cnt - 1 of k from their grid entries g (2 floats each, the first pixel's first), ss the
 * spatial stride of x */
static void find_corners(const float *g, int64_t i0, int64_t cnt, int Hi, int Wi, int64_t ss, const corners *k)
{
    for (int64_t i = i0; i < i0 + cnt; i++, g += 2) {
        int x0, y0;
        double fx, fy;
        src_corner(g, Hi, Wi, &x0, &y0, &fx, &fy);
        for (int c = 0; c < 4; c++) {
            const int xx = x0 + (c & 1), yy = y0 + (c >> 1), in = xx >= 0 && xx < Wi && yy >= 0 && yy < Hi;
            const int xc = xx < 0 ? 0 : xx >= Wi ? Wi - 1 : xx, yc = yy < 0 ? 0 : yy >= Hi ? Hi - 1 : yy;
            k->idx[c * k->np + i] = yc * Wi + xc;
            k->off[c * k->np + i] = (int32_t)((int64_t)(yc * Wi + xc) * ss);
            k->ok[c * k->np + i] = in;
        }
        k->wx0[i] = 1 - fx, k->wx1[i] = fx, k->wy0[i] = 1 - fy, k->wy1[i] = fy;
    }
}

/* The sum over the inside corners of pixel i of weight * x (xp an image plane, ss its spatial stride): k's
 * arrays from its pixel i0, an outside corner adding nothing (its clamped element is read but not used: NaN
 * there stays out) */
typedef struct {
    int64_t np;
    const int32_t *restrict off, *restrict ok;
    const double *restrict wx0, *restrict wx1, *restrict wy0, *restrict wy1;
} corners_r;

static inline corners_r corners_from(const corners *k, int64_t i0)
{
    corners_r r = {k->np, k->off + i0, k->ok + i0, k->wx0 + i0, k->wx1 + i0, k->wy0 + i0, k->wy1 + i0};
    return r;
}

static inline double bilinear(const corners_r *k, int64_t i, const float *xp)
{
    const int64_t np = k->np;
    const double v0 = xp[k->off[i]], v1 = xp[k->off[np + i]], v2 = xp[k->off[2 * np + i]], v3 = xp[k->off[3 * np + i]];
    double acc = 0;
    acc += k->wx0[i] * k->wy0[i] * (k->ok[i] ? v0 : 0.0);
    acc += k->wx1[i] * k->wy0[i] * (k->ok[np + i] ? v1 : 0.0);
    acc += k->wx0[i] * k->wy1[i] * (k->ok[2 * np + i] ? v2 : 0.0);
    acc += k->wx1[i] * k->wy1[i] * (k->ok[3 * np + i] ? v3 : 0.0);
    return acc;
}

static inline void blend_store(float *o, double v, double a, double b)
{
    v *= a;
    *o = (float)(b != 0 ? v + b * (double)*o : v);
}

/* One output row of pixels i0 .. i0 + Wo - 1 of k (x at the row's image, y at the row's first pixel) */
FDNN_CLONES static void sample_row(const corners *kk, int64_t i0, int Wo, int64_t C, const float *restrict x, const fdnn_ncs *xv, float *restrict y,
                                   const fdnn_ncs *yv, double a, double b)
{
    const corners_r k = corners_from(kk, i0);
    if (xv->sc == 1 && C > 1) /* channels innermost in x: the channels side by side */
        for (int w = 0; w < Wo; w++)
            for (int64_t c = 0; c < C; c++) blend_store(y + c * yv->sc + w * yv->ss, bilinear(&k, w, x + c), a, b);
    else if (yv->ss == 1)
        for (int64_t c = 0; c < C; c++) {
            float *restrict yr = y + c * yv->sc;
            const float *restrict xp = x + c * xv->sc;
            for (int w = 0; w < Wo; w++) blend_store(yr + w, bilinear(&k, w, xp), a, b);
        }
    else
        for (int64_t c = 0; c < C; c++)
            for (int w = 0; w < Wo; w++) blend_store(y + c * yv->sc + w * yv->ss, bilinear(&k, w, x + c * xv->sc), a, b);
}

int fdnn_cpu_stf_sampler_fwd_f32(const struct cudnnSpatialTransformerStruct *st, double a, const fdnn_tensor *xd, const void *x, const void *grid,
                                 double b, const fdnn_tensor *yd, void *y)
{
    fdnn_ncs xv, yv;
    if (st->dtype != CUDNN_DATA_FLOAT || !fdnn_ops_ncs(xd, &xv) || !fdnn_ops_ncs(yd, &yv) || !fdnn_ops_apart(yd, y, xd, x)) return 0;
    const int N = yd->dim[0], Ho = yd->dim[2], Wo = yd->dim[3], Hi = xd->dim[2], Wi = xd->dim[3];
    if (!offsets_fit(Hi, Wi, xv.ss)) return 0;
    const int64_t C = yd->dim[1], per = corner_slots(Wo);
    if (!fdnn_ops_bytes_apart(y, fdnn_tensor_span(yd) * 4, grid, (int64_t)N * Ho * Wo * 8)) return 0;
    double *ws = malloc(sizeof(double) * (size_t)(per * fdnn_ops_max_threads()));
    if (!ws) return 0;
#pragma omp parallel for schedule(static) if ((int64_t)N * C * Ho * Wo > PAR_ELEMS)
    for (int64_t r = 0; r < (int64_t)N * Ho; r++) {
        const int64_t n = r / Ho, h = r % Ho;
        const corners k = corners_at(ws + fdnn_ops_thread() * per, Wo);
        find_corners((const float *)grid + r * Wo * 2, 0, Wo, Hi, Wi, xv.ss, &k);
        sample_row(&k, 0, Wo, C, (const float *)x + n * xv.sn, &xv, (float *)y + n * yv.sn + h * Wo * yv.ss, &yv, a, b);
    }
    free(ws);
    return 1;
}

/* dgrid of one output row, pixels i0 .. i0 + Wo - 1 of k (x at the row's image, dy at the row's first pixel):
 * per pixel the sums over the channels of dy times the derivative of the bilinear sample along x and along y
 * (in the general path's order: channel by channel, corner by corner), scaled to normalised units and blended;
 * dp: 2 * Wo doubles of scratch */
FDNN_CLONES static void dgrid_row(const corners *k, int64_t i0, int Wo, int64_t C, const float *restrict x, const fdnn_ncs *xv,
                                  const float *restrict dy, const fdnn_ncs *dv, double *dp, int Hi, int Wi, double a, double b, float *restrict dg)
{
    double *restrict dpx = dp, *restrict dpy = dp + Wo;
    const int64_t np = k->np;
    const int32_t *restrict ok = k->ok + i0, *restrict off = k->off + i0;
    const double *restrict wx0 = k->wx0 + i0, *restrict wx1 = k->wx1 + i0, *restrict wy0 = k->wy0 + i0, *restrict wy1 = k->wy1 + i0;
    for (int w = 0; w < Wo; w++) dpx[w] = dpy[w] = 0;
    for (int64_t c = 0; c < C; c++) {
        const float *xp = x + c * xv->sc, *gp = dy + c * dv->sc;
        for (int w = 0; w < Wo; w++) {
            const double g = gp[w * dv->ss];
            const double v0 = xp[off[w]], v1 = xp[off[np + w]], v2 = xp[off[2 * np + w]], v3 = xp[off[3 * np + w]];
            double px = dpx[w], py = dpy[w];
            px += ok[w] ? -(g * v0 * wy0[w]) : 0.0;
            py += ok[w] ? -(g * v0 * wx0[w]) : 0.0;
            px += ok[np + w] ? g * v1 * wy0[w] : 0.0;
            py += ok[np + w] ? -(g * v1 * wx1[w]) : 0.0;
            px += ok[2 * np + w] ? -(g * v2 * wy1[w]) : 0.0;
            py += ok[2 * np + w] ? g * v2 * wx0[w] : 0.0;
            px += ok[3 * np + w] ? g * v3 * wy1[w] : 0.0;
            py += ok[3 * np + w] ? g * v3 * wx1[w] : 0.0;
            dpx[w] = px, dpy[w] = py;
        }
    }
    for (int w = 0; w < Wo; w++) {
        double r0 = a * dpx[w] * (Wi - 1) * 0.5, r1 = a * dpy[w] * (Hi - 1) * 0.5;
        if (b != 0) r0 += b * (double)dg[2 * w], r1 += b * (double)dg[2 * w + 1];
        dg[2 * w] = (float)r0, dg[2 * w + 1] = (float)r1;
    }
}

/* dx of one image's channels c0 .. c0 + L - 1 (dy, dx at the image's channel c0), k the image's corners: acc
 * (Hi*Wi*L doubles, element (s, l) at s*L + l: the channels side by side whatever the layout) = the scatter of dy
 * times the bilinear weights, pixel by pixel in order, then dx = a * acc + b * dx */
INLINE void dx_scatter(const corners *k, int64_t L, int64_t S, const float *restrict dy, const fdnn_ncs *dv, double *restrict acc)
{
    const int64_t np = k->np;
    memset(acc, 0, sizeof(double) * (size_t)(S * L));
    for (int64_t i = 0; i < np; i++) {
        const float *g = dy + i * dv->ss;
        const double wx[2] = {k->wx0[i], k->wx1[i]}, wy[2] = {k->wy0[i], k->wy1[i]};
        for (int c = 0; c < 4; c++) {
            if (!k->ok[c * np + i]) continue;
            double *ap = acc + (int64_t)k->idx[c * np + i] * L;
            for (int64_t l = 0; l < L; l++) ap[l] += (double)g[l * dv->sc] * wx[c & 1] * wy[c >> 1];
        }
    }
}

FDNN_CLONES static void dx_block(const corners *k, int64_t L, int Hi, int Wi, const float *dy, const fdnn_ncs *dv, double *acc, double a, double b,
                                 float *dx, const fdnn_ncs *dxv)
{
    const int64_t S = (int64_t)Hi * Wi;
    if (L == DX_LANES) dx_scatter(k, DX_LANES, S, dy, dv, acc);
    else dx_scatter(k, L, S, dy, dv, acc);
    if (dxv->sc == 1)
        for (int64_t s = 0; s < S; s++)
            for (int64_t l = 0; l < L; l++) blend_store(dx + l + s * dxv->ss, acc[s * L + l], a, b);
    else
        for (int64_t l = 0; l < L; l++)
            for (int64_t s = 0; s < S; s++) blend_store(dx + l * dxv->sc + s * dxv->ss, acc[s * L + l], a, b);
}

int fdnn_cpu_stf_sampler_bwd_f32(const struct cudnnSpatialTransformerStruct *st, double a, const fdnn_tensor *xd, const void *x, double b,
                                 const fdnn_tensor *dxd, void *dx, double a_dg, const fdnn_tensor *dyd, const void *dy, const void *grid,
                                 double b_dg, void *dgrid)
{
    fdnn_ncs xv, dxv, dyv;
    if (st->dtype != CUDNN_DATA_FLOAT || !fdnn_ops_ncs(xd, &xv) || !fdnn_ops_ncs(dxd, &dxv) || !fdnn_ops_ncs(dyd, &dyv)) return 0;
    const int N = dyd->dim[0], Ho = dyd->dim[2], Wo = dyd->dim[3], Hi = xd->dim[2], Wi = xd->dim[3];
    const int64_t C = dyd->dim[1], np = (int64_t)Ho * Wo, gbytes = N * np * 8;
    if (!offsets_fit(Hi, Wi, xv.ss)) return 0;
    /* no output may share a byte with an input or the other output (the grids are packed N x Ho x Wo x 2) */
    const void *in[3] = {x, dy, grid};
    const int64_t inb[3] = {fdnn_tensor_span(xd) * 4, fdnn_tensor_span(dyd) * 4, gbytes}, dxb = fdnn_tensor_span(dxd) * 4;
    for (int i = 0; i < 3; i++)
        if (!fdnn_ops_bytes_apart(dx, dxb, in[i], inb[i]) || !fdnn_ops_bytes_apart(dgrid, gbytes, in[i], inb[i])) return 0;
    if (!fdnn_ops_bytes_apart(dx, dxb, dgrid, gbytes)) return 0;
    const int64_t L = C < DX_LANES ? C : DX_LANES, blocks = (C + L - 1) / L;
    const int64_t per = 2 * (int64_t)Wo + (int64_t)Hi * Wi * L; /* a thread's: dgrid sums, a dx block */
    double *ws = malloc(sizeof(double) * (size_t)(corner_slots(np) + per * fdnn_ops_max_threads()));
    if (!ws) return 0;
    const corners k = corners_at(ws, np); /* one image's, shared */
    const int par = C * (np + (int64_t)Hi * Wi) > PAR_ELEMS;
    for (int n = 0; n < N; n++) {
        const float *gn = (const float *)grid + n * np * 2, *xn = (const float *)x + n * xv.sn, *dyn = (const float *)dy + n * dyv.sn;
#pragma omp parallel if (par)
        {
            double *mine = ws + corner_slots(np) + fdnn_ops_thread() * per;
#pragma omp for schedule(static)
            for (int h = 0; h < Ho; h++) find_corners(gn + (int64_t)h * Wo * 2, (int64_t)h * Wo, Wo, Hi, Wi, xv.ss, &k);
#pragma omp for schedule(static)
            for (int h = 0; h < Ho; h++)
                dgrid_row(&k, (int64_t)h * Wo, Wo, C, xn, &xv, dyn + (int64_t)h * Wo * dyv.ss, &dyv, mine, Hi, Wi, a_dg, b_dg,
                          (float *)dgrid + (n * np + (int64_t)h * Wo) * 2);
#pragma omp for schedule(static)
            for (int64_t t = 0; t < blocks; t++) {
                const int64_t c0 = t * L, nl = C - c0 < L ? C - c0 : L;
                dx_block(&k, nl, Hi, Wi, dyn + c0 * dyv.sc, &dyv, mine + 2 * Wo, a, b, (float *)dx + n * dxv.sn + c0 * dxv.sc, &dxv);
            }
        }
    }
    free(ws);
    return 1;
}
