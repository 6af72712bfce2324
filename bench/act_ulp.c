/* Accuracy of the CPU FLOAT activation fast path (src/cpu/act_fast.c) against the double path
 * (FREEDNN_CPU_FAST_PATH=0), through the public API: every 2^12-th float over the whole range (both signs) plus
 * every float of dense windows around 0, the saturation points, the exp over/underflow thresholds and the
 * coefs, for each mode forward (x) and backward (x, y = the double path's forward, dy = 1), alpha 1, beta 0.
 * (ELU's forward: against coef * expm1(x) in double, see below.)
 * Prints per mode the max error in ulps of the float result where that result is a normal float, where it
 * happens, and the count of results whose class differs (NaN / inf / zero sign / finite).
 *   act_ulp [step_log2]   (default 12) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cudnn.h>

#define CK(x)                                                                                                                    \
    do {                                                                                                                         \
        cudnnStatus_t s_ = (x);                                                                                                  \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                                                        \
            fprintf(stderr, "act_ulp: %s failed: %s\n", #x, cudnnGetErrorString(s_));                                            \
            exit(1);                                                                                                             \
        }                                                                                                                        \
    } while (0)

static float bits_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t f_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float *pts;
static size_t npts, cap;
static void add(float v)
{
    if (npts == cap) {
        cap = cap ? 2 * cap : 1 << 20;
        pts = realloc(pts, cap * sizeof *pts);
        if (!pts) exit(1);
    }
    pts[npts++] = v;
}
/* w floats on each side of c (by representation), both signs of c */
static void window(float c, int w)
{
    for (int s = 0; s < 2; s++) {
        const uint32_t b = f_bits(s ? -c : c);
        for (int i = -w; i <= w; i++) add(bits_f(b + (uint32_t)i));
    }
}

static const char *mname(int m)
{
    static const char *n[] = {"SIGMOID", "RELU", "TANH", "CLIPPED_RELU", "ELU", "IDENTITY", "SWISH"};
    return n[m];
}

/* 0 same class, 1: NaN-ness or infinities differ, or a zero against a normal or a zero of the other sign where the
 * input is special (x +-0, +-inf); 2: both below FLT_MIN (an underflowed result: subnormal, or a zero's sign) but
 * unequal */
static int class_differs(float g, float w, float x)
{
    if (isnan(g) || isnan(w)) return isnan(g) != isnan(w);
    if (isinf(g) || isinf(w)) return g != w;
    if (fabsf(g) < 0x1p-126f && fabsf(w) < 0x1p-126f) {
        const int same = g == w && signbit(g) == signbit(w);
        return same ? 0 : (x == 0 || isinf(x)) ? 1 : 2;
    }
    return (g == 0 || w == 0) && g != w;
}

int main(int argc, char **argv)
{
    const int step = argc > 1 ? atoi(argv[1]) : 12;
    for (uint64_t u = 0; u < (1ull << 32); u += 1ull << step) add(bits_f((uint32_t)u));
    for (int e = -149; e <= 0; e += 3) window(ldexpf(1.f, e), 512); /* tiny |x|: relative precision */
    static const float centres[] = {0.1f,   0.17328679f, 0.34657359f, 0.5f,   0.69314718f, 1.f,    1.2785f, 2.f,    2.5f,   0.7f,
                                    4.f,    8.3177662f,  9.f,         15.f,   17.328680f,  20.f,   43.5f,   80.f,   87.f,   87.336544f,
                                    88.f,   88.722839f,  89.f,        100.f,  103.97208f,  104.f,  133.8f,  174.f,  200.f,  1e4f};
    for (size_t i = 0; i < sizeof centres / sizeof *centres; i++) window(centres[i], 1 << 14);
    for (size_t i = 0; i < sizeof centres / sizeof *centres; i++) window(centres[i] / 1.3f, 1 << 12); /* swish beta 1.3 */
    const int n = (int)npts;
    printf("%d points (every 2^%d-th float plus dense windows)\n", n, step);
    cudnnHandle_t h;
    CK(cudnnCreate(&h));
    cudnnTensorDescriptor_t t;
    CK(cudnnCreateTensorDescriptor(&t));
    CK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, n));
    cudnnActivationDescriptor_t ad;
    CK(cudnnCreateActivationDescriptor(&ad));
    float *yf = malloc(npts * 4), *yd = malloc(npts * 4), *dy = malloc(npts * 4), *gf = malloc(npts * 4), *gd = malloc(npts * 4);
    for (int i = 0; i < n; i++) dy[i] = 1.f;
    const float one = 1, zero = 0;
    static const struct { int mode; double coef, sb; int prop; } cases[] = {
        {CUDNN_ACTIVATION_SIGMOID, 0, 1, 1},   {CUDNN_ACTIVATION_TANH, 0, 1, 1},   {CUDNN_ACTIVATION_ELU, 0.7, 1, 1},
        {CUDNN_ACTIVATION_ELU, 1.0, 1, 1},     {CUDNN_ACTIVATION_SWISH, 0, 1, 1},  {CUDNN_ACTIVATION_SWISH, 0, 1.3, 1},
        {CUDNN_ACTIVATION_SWISH, 0, 0.5, 1},   {CUDNN_ACTIVATION_RELU, 0, 1, 1},   {CUDNN_ACTIVATION_CLIPPED_RELU, 2.5, 1, 0},
        {CUDNN_ACTIVATION_CLIPPED_RELU, 0.7, 1, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        CK(cudnnSetActivationDescriptor(ad, (cudnnActivationMode_t)cases[c].mode, cases[c].prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN,
                                        cases[c].coef));
        CK(cudnnSetActivationDescriptorSwishBeta(ad, cases[c].sb));
        setenv("FREEDNN_CPU_FAST_PATH", "0", 1);
        CK(cudnnActivationForward(h, ad, &one, t, pts, &zero, t, yd));
        CK(cudnnActivationBackward(h, ad, &one, t, yd, t, dy, t, pts, &zero, t, gd));
        setenv("FREEDNN_CPU_FAST_PATH", "2", 1);
        CK(cudnnActivationForward(h, ad, &one, t, pts, &zero, t, yf));
        CK(cudnnActivationBackward(h, ad, &one, t, yd, t, dy, t, pts, &zero, t, gf));
        /* ELU's double path forms exp(x) - 1.0, which loses relative precision near 0: its forward is measured
         * against coef * expm1(x) instead */
        if (cases[c].mode == CUDNN_ACTIVATION_ELU)
            for (int i = 0; i < n; i++) yd[i] = !(pts[i] < 0) ? yd[i] : (float)(cases[c].coef * expm1((double)pts[i]));
        for (int dir = 0; dir < 2; dir++) {
            const float *got = dir ? gf : yf, *want = dir ? gd : yd;
            double worst = 0, worst_far = 0, worst_term = 0;
            int at = -1, at_far = -1, cls = 0, cls_at = -1, under = 0;
            for (int i = 0; i < n; i++) {
                const int d = class_differs(got[i], want[i], pts[i]);
                if (d == 1 && cls++ == 0) cls_at = i;
                under += d == 2;
                if (d) continue;
                if (!(fabsf(want[i]) >= 0x1p-126f) || isinf(want[i])) continue;
                int e;
                frexpf(want[i], &e);
                const double u = fabs((double)got[i] - (double)want[i]) / ldexp(1.0, e - 24);
                if (u > worst) worst = u, at = i;
                /* swish backward: away from the zero of its derivative (z near -1.2785), and everywhere in ulps of the
                 * larger of its two terms s and z s (1 - s) */
                const double z = cases[c].sb * (double)pts[i], sg = 1 / (1 + exp(-z));
                if ((cases[c].mode != CUDNN_ACTIVATION_SWISH || !dir || fabs(z + 1.2785) > 0.25) && u > worst_far) worst_far = u, at_far = i;
                const double term = fmax(sg, fabs(z * sg * (1 - sg)));
                if (dir && cases[c].mode == CUDNN_ACTIVATION_SWISH && term >= 0x1p-126) {
                    frexp(term, &e);
                    worst_term = fmax(worst_term, fabs((double)got[i] - (double)want[i]) / ldexp(1.0, e - 24));
                }
            }
            printf("%-12s coef %-4g sb %-4g %s: max %6.2f ulp at x=%-14.9g (got %.9g want %.9g)", mname(cases[c].mode), cases[c].coef, cases[c].sb,
                   dir ? "bwd" : "fwd", worst, at >= 0 ? pts[at] : 0, at >= 0 ? got[at] : 0, at >= 0 ? want[at] : 0);
            if (cases[c].mode == CUDNN_ACTIVATION_SWISH && dir)
                printf("\n%50s %.2f ulp outside |z+1.2785|<0.25 (x=%.9g), %.2f ulp of the larger term", "", worst_far, at_far >= 0 ? pts[at_far] : 0,
                       worst_term);
            if (cls) printf("; %d class mismatches, first x=%.9g got %.9g want %.9g", cls, pts[cls_at], got[cls_at], want[cls_at]);
            if (under) printf("; %d underflowed results differ", under);
            printf("\n");
        }
    }
    cudnnDestroyActivationDescriptor(ad);
    cudnnDestroyTensorDescriptor(t);
    cudnnDestroy(h);
    free(yf), free(yd), free(dy), free(gf), free(gd), free(pts);
    return 0;
}
