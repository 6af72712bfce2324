/* Dropout: descriptors, states/reserve sizes, forward/backward against an independent
 * Philox-4x32-10 (tests/ref/norm_ref.c, checked against the published known-answer vectors),
 * mask bit for bit in every layout and type, restore, and the error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"
#include "norm_ref.h"

#include "test_norm_util.h"

static void test_philox_kat(void)
{
    /* Random123 known-answer vectors for philox4x32_10 */
    struct { uint32_t c[4], k[2], o[4]; } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
        {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu},
         {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
        {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u},
         {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t o[4];
        ref_philox4x32_10(kat[i].c, kat[i].k, o);
        TH_CHECK(memcmp(o, kat[i].o, sizeof o) == 0, "philox KAT %d: %08x %08x %08x %08x", i, o[0], o[1], o[2], o[3]);
    }
}

static cudnnDropoutDescriptor_t make_drop(float p, unsigned long long seed, void **states)
{
    size_t ss = 0;
    TH_OK(cudnnDropoutGetStatesSize(H, &ss));
    TH_CHECK(ss > 0 && ss <= 4096, "states size %zu", ss);
    *states = th_alloc(H, ss);
    cudnnDropoutDescriptor_t d;
    TH_OK(cudnnCreateDropoutDescriptor(&d));
    TH_OK(cudnnSetDropoutDescriptor(d, H, p, *states, ss, seed));
    return d;
}

static int g_c4; /* same_layout: 1 = C a multiple of 4 (the GPU's 4-channel NHWC kernel), 2 = odd C, 3 = C and W over
                   * several of the GPU NHWC kernel's 32-channel x 32-w tiles, with partial last tiles */

/* same: every tensor in `layout`, 4-D with W a multiple of 4 (the GPU's dense NHWC path) */
static void sweep_one(cudnnDataType_t t, int layout, float p, int same_layout)
{
    int nd = same_layout ? 4 : th_randint(4, 5), dim[5];
    for (int i = 0; i < nd; i++) dim[i] = th_randint(1, 7);
    dim[0] = th_randint(2, 4), dim[2] = th_randint(4, 7), dim[3] = th_randint(2, 7), dim[1] = th_randint(4, 7); /* >= 128 elements */
    if (same_layout) dim[3] = 4 * th_randint(1, 3), dim[1] = th_randint(3, 19);
    if (same_layout && g_c4) dim[1] = g_c4 == 1 ? 4 * th_randint(1, 5) : 2 * th_randint(1, 9) + 1;
    if (same_layout && g_c4 == 3) dim[0] = 2, dim[1] = th_randint(33, 70), dim[2] = 2, dim[3] = 4 * th_randint(9, 17);
    tns x, y, dyt, dxt;
    tns_make(&x, t, nd, dim, layout);
    tns_make(&y, t, nd, dim, same_layout ? layout : (layout + 1) % 3);
    tns_make(&dyt, t, nd, dim, same_layout ? layout : (layout + 2) % 3);
    tns_make(&dxt, t, nd, dim, layout);
    unsigned long long seed = th_rand();
    void *st;
    cudnnDropoutDescriptor_t d = make_drop(p, seed, &st);
    size_t rs = 0;
    TH_OK(cudnnDropoutGetReserveSpaceSize(x.d, &rs));
    TH_CHECK(rs >= (size_t)x.n, "reserve %zu for %lld elements", rs, (long long)x.n);
    void *res = th_alloc(H, rs);
    double *hx = dalloc(x.n), *hdy = dalloc(x.n), *got = dalloc(x.n), *want = dalloc(x.n);
    for (int64_t e = 0; e < x.n; e++) hx[e] = th_randint(1, 8) * (th_randint(0, 1) ? 1 : -1), hdy[e] = th_randint(1, 8);
    void *dx_ = tns_buf(&x, hx, 0), *dy = tns_buf(&y, NULL, NAN);
    TH_OK(cudnnDropoutForward(H, d, x.d, dx_, y.d, dy, res, rs));
    tns_get(&y, dy, got);
    double sc = 1.0 / (1.0 - (double)p);
    long bad = 0;
    for (int64_t e = 0; e < x.n; e++) {
        int k = ref_dropout_keep(seed, (uint64_t)e, p);
        want[e] = k ? hx[e] * sc : 0;
        if ((got[e] != 0) != k) bad++;
    }
    TH_CHECK(bad == 0, "%s layout %d p %g: %ld mask bits differ from the reference Philox", th_dtype_name(t), layout, (double)p, bad);
    char w[100];
    snprintf(w, sizeof w, "dropout fwd %s layout %d p %g", th_dtype_name(t), layout, (double)p);
    th_compare(w, got, want, (size_t)x.n, th_tolerance("dropout", t));
    /* backward reproduces the mask from the reserve space */
    void *ddy = tns_buf(&dyt, hdy, 0), *ddx = tns_buf(&dxt, NULL, NAN);
    TH_OK(cudnnDropoutBackward(H, d, dyt.d, ddy, dxt.d, ddx, res, rs));
    tns_get(&dxt, ddx, got);
    for (int64_t e = 0; e < x.n; e++) want[e] = ref_dropout_keep(seed, (uint64_t)e, p) ? hdy[e] * sc : 0;
    snprintf(w, sizeof w, "dropout bwd %s layout %d p %g", th_dtype_name(t), layout, (double)p);
    th_compare(w, got, want, (size_t)x.n, th_tolerance("dropout", t));
    /* restore with the same seed reproduces y bit for bit */
    cudnnDropoutDescriptor_t d2;
    TH_OK(cudnnCreateDropoutDescriptor(&d2));
    size_t ss = 0;
    TH_OK(cudnnDropoutGetStatesSize(H, &ss));
    TH_OK(cudnnRestoreDropoutDescriptor(d2, H, p, st, ss, seed));
    size_t yb = th_dtype_size(t) * y.span;
    char *y1 = malloc(yb), *y2 = malloc(yb);
    th_download(H, y1, dy, yb);
    void *dy2 = tns_buf(&y, NULL, NAN), *res2 = th_alloc(H, rs);
    TH_OK(cudnnDropoutForward(H, d2, x.d, dx_, y.d, dy2, res2, rs));
    th_download(H, y2, dy2, yb);
    int same = 1;
    for (int64_t e = 0; e < y.n; e++) same &= memcmp(y1 + tns_off(&y, e) * th_dtype_size(t), y2 + tns_off(&y, e) * th_dtype_size(t), th_dtype_size(t)) == 0;
    TH_CHECK(same, "restored descriptor gives a different y");
    float gp;
    void *gs;
    unsigned long long gseed;
    TH_OK(cudnnGetDropoutDescriptor(d2, H, &gp, &gs, &gseed));
    TH_CHECK(gp == p && gs == st && gseed == seed, "cudnnGetDropoutDescriptor returned other values");
    free(y1), free(y2);
    th_free(H, dx_), th_free(H, dy), th_free(H, ddy), th_free(H, ddx), th_free(H, res), th_free(H, dy2), th_free(H, res2), th_free(H, st);
    free(hx), free(hdy), free(got), free(want);
    cudnnDestroyDropoutDescriptor(d), cudnnDestroyDropoutDescriptor(d2);
    cudnnDestroyTensorDescriptor(x.d), cudnnDestroyTensorDescriptor(y.d), cudnnDestroyTensorDescriptor(dyt.d), cudnnDestroyTensorDescriptor(dxt.d);
}

static void test_statistics(void)
{
    /* large tensor: kept fraction near 1-p, different seeds give different masks, in place works */
    int dim[4] = {4, 8, 32, 32};
    tns x;
    tns_make(&x, CUDNN_DATA_FLOAT, 4, dim, 0);
    double *hx = dalloc(x.n), *a = dalloc(x.n), *b = dalloc(x.n);
    for (int64_t e = 0; e < x.n; e++) hx[e] = 1;
    size_t rs;
    TH_OK(cudnnDropoutGetReserveSpaceSize(x.d, &rs));
    void *res = th_alloc(H, rs);
    float ps[] = {0.0f, 0.1f, 0.5f, 0.9f};
    for (int i = 0; i < 4; i++) {
        void *st, *st2;
        cudnnDropoutDescriptor_t d = make_drop(ps[i], 1234, &st), d2 = make_drop(ps[i], 1235, &st2);
        void *buf = tns_buf(&x, hx, 0);
        TH_OK(cudnnDropoutForward(H, d, x.d, buf, x.d, buf, res, rs)); /* in place */
        tns_get(&x, buf, a);
        void *buf2 = tns_buf(&x, hx, 0);
        TH_OK(cudnnDropoutForward(H, d2, x.d, buf2, x.d, buf2, res, rs));
        tns_get(&x, buf2, b);
        int64_t kept = 0, diff = 0;
        for (int64_t e = 0; e < x.n; e++) kept += a[e] != 0, diff += (a[e] != 0) != (b[e] != 0);
        double frac = (double)kept / (double)x.n, sd = sqrt(ps[i] * (1 - ps[i]) / (double)x.n);
        TH_CHECK(fabs(frac - (1 - ps[i])) <= 5 * sd + 1e-12, "p %g: kept fraction %g", (double)ps[i], frac);
        if (ps[i] == 0) TH_CHECK(diff == 0 && kept == x.n && a[0] == 1.0, "p == 0 must be the identity");
        else TH_CHECK(diff > 0, "p %g: seeds 1234 and 1235 give the same mask", (double)ps[i]);
        th_free(H, buf), th_free(H, buf2), th_free(H, st), th_free(H, st2);
        cudnnDestroyDropoutDescriptor(d), cudnnDestroyDropoutDescriptor(d2);
    }
    th_free(H, res);
    free(hx), free(a), free(b);
    cudnnDestroyTensorDescriptor(x.d);
}

static void test_errors(void)
{
    int dim[4] = {2, 3, 4, 5}, dim2[4] = {2, 3, 4, 6};
    tns x, y, yh, y2, xi;
    tns_make(&x, CUDNN_DATA_FLOAT, 4, dim, 0);
    tns_make(&y, CUDNN_DATA_FLOAT, 4, dim, 1);
    tns_make(&yh, CUDNN_DATA_HALF, 4, dim, 0);
    tns_make(&y2, CUDNN_DATA_FLOAT, 4, dim2, 0);
    tns_make(&xi, CUDNN_DATA_INT8, 4, dim, 0);
    size_t ss, rs;
    TH_OK(cudnnDropoutGetStatesSize(H, &ss));
    TH_OK(cudnnDropoutGetReserveSpaceSize(x.d, &rs));
    TH_STATUS(cudnnDropoutGetStatesSize(NULL, &ss), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDropoutGetStatesSize(H, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDropoutGetReserveSpaceSize(NULL, &rs), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCreateDropoutDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    void *st = th_alloc(H, ss), *res = th_alloc(H, rs);
    cudnnDropoutDescriptor_t d;
    TH_OK(cudnnCreateDropoutDescriptor(&d));
    double *hx = dalloc(x.n);
    th_fill_int(hx, x.n, 1, 5);
    void *dx_ = tns_buf(&x, hx, 0), *dy = tns_buf(&y, NULL, 3);
    size_t yb = sizeof(float) * y.span;
    char *before = malloc(yb);
    th_download(H, before, dy, yb);
    float gp;
    void *gs;
    unsigned long long gseed;
    TH_STATUS(cudnnGetDropoutDescriptor(d, H, &gp, &gs, &gseed), CUDNN_STATUS_BAD_PARAM); /* never set */
    TH_STATUS(cudnnDropoutForward(H, d, x.d, dx_, y.d, dy, res, rs), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetDropoutDescriptor(d, H, 1.0f, st, ss, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetDropoutDescriptor(d, H, -0.1f, st, ss, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetDropoutDescriptor(d, H, NAN, st, ss, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetDropoutDescriptor(d, H, 0.5f, st, ss - 1, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetDropoutDescriptor(d, NULL, 0.5f, st, ss, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetDropoutDescriptor(NULL, H, 0.5f, st, ss, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnRestoreDropoutDescriptor(d, H, 2.0f, st, ss, 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetDropoutDescriptor(d, H, &gp, &gs, &gseed), CUDNN_STATUS_BAD_PARAM); /* failed sets leave it unset */
    TH_OK(cudnnSetDropoutDescriptor(d, H, 0.5f, NULL, 0, 1)); /* NULL states: allowed to set, not to run */
    TH_STATUS(cudnnDropoutForward(H, d, x.d, dx_, y.d, dy, res, rs), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnSetDropoutDescriptor(d, H, 0.5f, st, ss, 1));
    TH_STATUS(cudnnGetDropoutDescriptor(d, H, NULL, &gs, &gseed), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDropoutForward(H, d, x.d, dx_, y.d, dy, res, rs - 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDropoutForward(H, d, x.d, dx_, y.d, dy, NULL, rs), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDropoutForward(H, d, x.d, dx_, yh.d, dy, res, rs), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDropoutForward(H, d, x.d, dx_, y2.d, dy, res, rs), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDropoutForward(H, d, xi.d, dx_, xi.d, dy, res, rs), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnDropoutForward(H, d, x.d, NULL, y.d, dy, res, rs), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDropoutForward(H, d, x.d, dy, y.d, dy, res, rs), CUDNN_STATUS_BAD_PARAM); /* in place, strides differ */
    TH_STATUS(cudnnDropoutForward(NULL, d, x.d, dx_, y.d, dy, res, rs), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDropoutForward(H, NULL, x.d, dx_, y.d, dy, res, rs), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDropoutBackward(H, d, x.d, dx_, y.d, dy, res, rs - 1), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnDropoutBackward(H, d, x.d, dx_, y2.d, dy, res, rs), CUDNN_STATUS_BAD_PARAM);
    TH_CHECK(same_bytes(&y, dy, before), "output changed on error");
    TH_OK(cudnnDestroyDropoutDescriptor(d));
    TH_OK(cudnnDestroyDropoutDescriptor(NULL));
    th_free(H, st), th_free(H, res), th_free(H, dx_), th_free(H, dy);
    free(before), free(hx);
    cudnnDestroyTensorDescriptor(x.d), cudnnDestroyTensorDescriptor(y.d), cudnnDestroyTensorDescriptor(yh.d);
    cudnnDestroyTensorDescriptor(y2.d), cudnnDestroyTensorDescriptor(xi.d);
}

int main(void)
{
    th_seed(7331);
    H = th_create_handle();
    test_philox_kat();
    float ps[] = {0.0f, 0.3f, 0.5f, 0.875f};
    for (int ti = 0; ti < 4; ti++)
        for (int layout = 0; layout < 3; layout++)
            for (int pi = 0; pi < 4; pi++) sweep_one(types[ti], layout, ps[pi], 0);
    for (int ti = 0; ti < 4; ti++)
        for (int pi = 0; pi < 4; pi++) sweep_one(types[ti], 1, ps[pi], 1), sweep_one(types[ti], 0, ps[pi], 1);
    for (g_c4 = 1; g_c4 <= 3; g_c4++)
        for (int ti = 0; ti < 4; ti++) sweep_one(types[ti], 1, ti & 1 ? 0.5f : 0.3f, 1);
    g_c4 = 0;
    test_statistics();
    test_errors();
    cudnnDestroy(H);
    return th_finish();
}
