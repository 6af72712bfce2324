/* CTC loss: descriptors, workspace queries, cudnnCTCLoss and cudnnCTCLoss_v8 against the
 * log-space forward-backward reference, finite-difference gradients, error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"
#include "ctc_ref.h"

static cudnnHandle_t h;

static void test_descriptors(void)
{
    cudnnCTCLossDescriptor_t c;
    TH_OK(cudnnCreateCTCLossDescriptor(&c));
    cudnnDataType_t dt;
    cudnnLossNormalizationMode_t nm;
    cudnnNanPropagation_t gm;
    int ml = -1;
    TH_STATUS(cudnnGetCTCLossDescriptor(c, &dt), CUDNN_STATUS_BAD_PARAM); /* never set */
    TH_OK(cudnnSetCTCLossDescriptor(c, CUDNN_DATA_FLOAT));
    TH_OK(cudnnGetCTCLossDescriptorEx(c, &dt, &nm, &gm));
    TH_CHECK(dt == CUDNN_DATA_FLOAT && nm == CUDNN_LOSS_NORMALIZATION_NONE && gm == CUDNN_NOT_PROPAGATE_NAN, "legacy setter means NONE / NOT_PROPAGATE_NAN");
    TH_OK(cudnnSetCTCLossDescriptorEx(c, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE, CUDNN_PROPAGATE_NAN));
    TH_OK(cudnnGetCTCLossDescriptor_v8(c, &dt, &nm, &gm, &ml));
    TH_CHECK(nm == CUDNN_LOSS_NORMALIZATION_NONE && gm == CUDNN_PROPAGATE_NAN && ml == 0, "Ex setter");
    TH_OK(cudnnSetCTCLossDescriptor_v8(c, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_NOT_PROPAGATE_NAN, 17));
    TH_OK(cudnnGetCTCLossDescriptor_v8(c, &dt, &nm, &gm, &ml));
    TH_CHECK(ml == 17 && nm == CUDNN_LOSS_NORMALIZATION_SOFTMAX, "v8 setter");
    TH_OK(cudnnGetCTCLossDescriptor(c, &dt));
    TH_CHECK(dt == CUDNN_DATA_FLOAT, "compType");
    TH_STATUS(cudnnSetCTCLossDescriptor(c, CUDNN_DATA_DOUBLE), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnSetCTCLossDescriptorEx(c, CUDNN_DATA_FLOAT, (cudnnLossNormalizationMode_t)7, CUDNN_PROPAGATE_NAN), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetCTCLossDescriptorEx(c, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE, (cudnnNanPropagation_t)5), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetCTCLossDescriptor_v8(c, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE, CUDNN_PROPAGATE_NAN, -1), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnGetCTCLossDescriptor_v8(c, &dt, &nm, &gm, &ml));
    TH_CHECK(ml == 17, "failed setter leaves the descriptor unchanged");
    TH_STATUS(cudnnGetCTCLossDescriptor(c, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetCTCLossDescriptorEx(c, &dt, NULL, &gm), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetCTCLossDescriptor_v8(c, &dt, &nm, &gm, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCreateCTCLossDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnSetCTCLossDescriptor(NULL, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    TH_OK(cudnnDestroyCTCLossDescriptor(c));
    TH_OK(cudnnDestroyCTCLossDescriptor(NULL));
}

typedef struct {
    int T, N, A;
    int *lab, *lablen, *inlen, total;
    double *act;   /* T x N x A in (t, n, a) order */
} prob_t;

static void make_problem(prob_t *p, int T, int N, int A, int maxL)
{
    p->T = T; p->N = N; p->A = A;
    p->lablen = malloc(sizeof(int) * N);
    p->inlen = malloc(sizeof(int) * N);
    p->total = 0;
    p->lab = malloc(sizeof(int) * (size_t)(N * (maxL + 1) + 1));
    for (int n = 0; n < N; n++) {
        p->inlen[n] = th_randint(1, T);
        int lim = maxL < p->inlen[n] ? maxL : p->inlen[n];
        int L = th_randint(0, lim), need;
        int *l = p->lab + p->total;
        /* keep the problem feasible: L labels plus one blank per adjacent repeat must fit */
        do {
            need = 0;
            for (int k = 0; k < L; k++) {
                l[k] = th_randint(1, A - 1);
                need += 1 + (k > 0 && l[k] == l[k - 1]);
            }
            if (need > p->inlen[n]) L--;
        } while (need > p->inlen[n]);
        p->lablen[n] = L;
        p->total += L;
    }
    p->act = malloc(sizeof(double) * T * N * A);
    for (int i = 0; i < T * N * A; i++) p->act[i] = (double)(float)th_uniform(-2, 2);
}

static void free_problem(prob_t *p) { free(p->lablen); free(p->inlen); free(p->lab); free(p->act); }

/* Runs one API variant; layout 0: packed (T,N,A); 1: stored N-major (strides A, T*A, 1). */
/* a library-visible copy of a host buffer (device memory on a CUDA handle) */
static void *up(const void *src, size_t bytes)
{
    void *d = th_alloc(h, bytes ? bytes : 1);
    if (bytes) th_upload(h, d, src, bytes);
    return d;
}

static cudnnStatus_t run_ctc(const prob_t *p, int v8, int softmax, int layout, cudnnCTCLossAlgo_t algo, float *costs, float *grad,
                             const float *in_override)
{
    int T = p->T, N = p->N, A = p->A;
    cudnnTensorDescriptor_t pd;
    cudnnCreateTensorDescriptor(&pd);
    int dims[3] = {T, N, A};
    int st[3] = {N * A, A, 1};
    if (layout) { st[0] = A; st[1] = T * A; }
    cudnnSetTensorNdDescriptor(pd, CUDNN_DATA_FLOAT, 3, dims, st);
    float *in = malloc(sizeof(float) * T * N * A);
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            double z = 0;
            if (!softmax) for (int a = 0; a < A; a++) z += exp(p->act[(t * N + n) * A + a]);
            for (int a = 0; a < A; a++) {
                double v = p->act[(t * N + n) * A + a];
                in[t * st[0] + n * st[1] + a] = softmax ? (float)v : (float)(exp(v) / z);
            }
        }
    if (in_override) memcpy(in, in_override, sizeof(float) * T * N * A);
    cudnnCTCLossDescriptor_t c;
    cudnnCreateCTCLossDescriptor(&c);
    int maxL = 0;
    for (int n = 0; n < N; n++) if (p->lablen[n] > maxL) maxL = p->lablen[n];
    cudnnLossNormalizationMode_t nm = softmax ? CUDNN_LOSS_NORMALIZATION_SOFTMAX : CUDNN_LOSS_NORMALIZATION_NONE;
    if (v8) cudnnSetCTCLossDescriptor_v8(c, CUDNN_DATA_FLOAT, nm, CUDNN_NOT_PROPAGATE_NAN, maxL + 1);
    else cudnnSetCTCLossDescriptorEx(c, CUDNN_DATA_FLOAT, nm, CUDNN_NOT_PROPAGATE_NAN);
    size_t ws = 0;
    cudnnStatus_t s;
    if (v8) s = cudnnGetCTCLossWorkspaceSize_v8(h, algo, c, pd, pd, &ws);
    else s = cudnnGetCTCLossWorkspaceSize(h, pd, pd, p->lab, p->lablen, p->inlen, algo, c, &ws);
    void *w = th_alloc(h, ws ? ws : 1);
    float *gtmp = malloc(sizeof(float) * T * N * A);
    for (int i = 0; i < T * N * A; i++) gtmp[i] = NAN;
    size_t pb = sizeof(float) * T * N * A;
    void *din = up(in, pb), *dg = up(gtmp, pb), *dcost = th_alloc(h, sizeof(float) * N);
    if (s == CUDNN_STATUS_SUCCESS) {
        if (v8) { /* cudnnCTCLoss_v8 takes the label arrays in device memory */
            int tot = 0;
            for (int n = 0; n < N; n++) tot += p->lablen[n];
            void *dl = up(p->lab, sizeof(int) * (size_t)tot), *dll = up(p->lablen, sizeof(int) * N), *dil = up(p->inlen, sizeof(int) * N);
            s = cudnnCTCLoss_v8(h, algo, c, pd, din, dl, dll, dil, dcost, pd, dg, ws, w);
            th_free(h, dl); th_free(h, dll); th_free(h, dil);
        } else {
            s = cudnnCTCLoss(h, pd, din, p->lab, p->lablen, p->inlen, dcost, pd, dg, algo, c, w, ws);
        }
        th_download(h, gtmp, dg, pb);
        th_download(h, costs, dcost, sizeof(float) * N);
    }
    th_free(h, din); th_free(h, dg); th_free(h, dcost);
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++)
            for (int a = 0; a < A; a++) grad[(t * N + n) * A + a] = gtmp[t * st[0] + n * st[1] + a];
    free(in); th_free(h, w); free(gtmp);
    cudnnDestroyCTCLossDescriptor(c);
    cudnnDestroyTensorDescriptor(pd);
    return s;
}

static void reference(const prob_t *p, int softmax, double *cost, double *grad)
{
    int T = p->T, N = p->N, A = p->A, off = 0;
    double *a1 = malloc(sizeof(double) * T * A), *g1 = malloc(sizeof(double) * T * A);
    for (int n = 0; n < N; n++) {
        for (int t = 0; t < T; t++) {
            double z = 0;
            for (int a = 0; a < A; a++) z += exp(p->act[(t * N + n) * A + a]);
            for (int a = 0; a < A; a++) {
                double v = p->act[(t * N + n) * A + a];
                a1[t * A + a] = softmax ? v : (double)(float)(exp(v) / z);
            }
        }
        cost[n] = ref_ctc(a1, p->inlen[n], T, A, p->lab + off, p->lablen[n], softmax, g1);
        for (int t = 0; t < T; t++)
            for (int a = 0; a < A; a++) grad[(t * N + n) * A + a] = g1[t * A + a];
        off += p->lablen[n];
    }
    free(a1); free(g1);
}

static void test_random(void)
{
    for (int it = 0; it < 40; it++) {
        prob_t p;
        int T = th_randint(1, 14), N = th_randint(1, 5), A = th_randint(2, 7);
        make_problem(&p, T, N, A, th_randint(0, 6));
        int v8 = it & 1, softmax = (it >> 1) & 1, layout = (it >> 2) & 1;
        cudnnCTCLossAlgo_t algo = (it % 5 == 0) ? CUDNN_CTC_LOSS_ALGO_NON_DETERMINISTIC : CUDNN_CTC_LOSS_ALGO_DETERMINISTIC;
        float *costs = malloc(sizeof(float) * N), *grad = malloc(sizeof(float) * T * N * A);
        double *rc = malloc(sizeof(double) * N), *rg = malloc(sizeof(double) * T * N * A);
        double *gc = malloc(sizeof(double) * N), *gg = malloc(sizeof(double) * T * N * A);
        TH_OK(run_ctc(&p, v8, softmax, layout, algo, costs, grad, NULL));
        reference(&p, softmax, rc, rg);
        for (int n = 0; n < N; n++) gc[n] = costs[n];
        for (int i = 0; i < T * N * A; i++) gg[i] = grad[i];
        char what[128];
        snprintf(what, sizeof what, "ctc costs T=%d N=%d A=%d v8=%d softmax=%d layout=%d", T, N, A, v8, softmax, layout);
        th_compare(what, gc, rc, N, 2e-5);
        snprintf(what, sizeof what, "ctc grads T=%d N=%d A=%d v8=%d softmax=%d layout=%d", T, N, A, v8, softmax, layout);
        th_compare(what, gg, rg, (size_t)T * N * A, 2e-5);
        free(costs); free(grad); free(rc); free(rg); free(gc); free(gg);
        free_problem(&p);
    }
}

/* SOFTMAX: d(sum of costs)/d activation by central differences of the library's own costs. */
static void test_fd_softmax(void)
{
    for (int it = 0; it < 4; it++) {
        prob_t p;
        int T = th_randint(3, 8), N = th_randint(1, 3), A = th_randint(3, 5);
        make_problem(&p, T, N, A, 3);
        int v8 = it & 1, n_el = T * N * A;
        float *in = malloc(sizeof(float) * n_el), *costs = malloc(sizeof(float) * N), *grad = malloc(sizeof(float) * n_el);
        float *g2 = malloc(sizeof(float) * n_el);
        for (int i = 0; i < n_el; i++) in[i] = (float)p.act[i];
        TH_OK(run_ctc(&p, v8, 1, 0, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, costs, grad, in));
        double *fd = malloc(sizeof(double) * n_el), *gd = malloc(sizeof(double) * n_el);
        const float eps = 1e-2f;
        for (int i = 0; i < n_el; i++) {
            float save = in[i];
            double cp = 0, cm = 0;
            in[i] = save + eps;
            run_ctc(&p, v8, 1, 0, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, costs, g2, in);
            for (int n = 0; n < N; n++) cp += costs[n];
            in[i] = save - eps;
            run_ctc(&p, v8, 1, 0, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, costs, g2, in);
            for (int n = 0; n < N; n++) cm += costs[n];
            in[i] = save;
            fd[i] = (cp - cm) / (2.0 * ((double)(save + eps) - (double)save));
            gd[i] = grad[i];
        }
        th_compare("ctc softmax gradient vs finite differences", gd, fd, (size_t)n_el, 2e-3);
        free(in); free(costs); free(grad); free(g2); free(fd); free(gd);
        free_problem(&p);
    }
}

/* NONE (NVIDIA's measured rule): the inputs are probabilities y; where the posterior occupancy
 * gamma of a symbol at t is > 0 the gradient is -gamma/y = d(cost)/d(y), checked by central
 * differences in y itself; where gamma == 0 the cost does not depend on y (checked: the
 * perturbed costs are bit-identical) and the gradient is y exactly; rows t >= inputLength are 0.
 * The elements are classified by the independent reference (its gradient is < 0 exactly where
 * gamma > 0, since y > 0); every problem has elements of both kinds (at t = 0 only the blank
 * and the first label are reachable, and A >= 3), and that is asserted. */
static void test_fd_none(void)
{
    for (int it = 0; it < 4; it++) {
        prob_t p;
        int T = th_randint(3, 8), N = th_randint(1, 3), A = th_randint(3, 5);
        make_problem(&p, T, N, A, 3);
        int v8 = it & 1, n_el = T * N * A;
        float *in = malloc(sizeof(float) * n_el), *costs = malloc(sizeof(float) * N), *grad = malloc(sizeof(float) * n_el);
        float *g2 = malloc(sizeof(float) * n_el);
        double *rc = malloc(sizeof(double) * N), *rg = malloc(sizeof(double) * n_el);
        for (int t = 0; t < T; t++) /* probabilities: softmax over A of the activations, rounded to float */
            for (int n = 0; n < N; n++) {
                double z = 0;
                for (int a = 0; a < A; a++) z += exp(p.act[(t * N + n) * A + a]);
                for (int a = 0; a < A; a++) in[(t * N + n) * A + a] = (float)(exp(p.act[(t * N + n) * A + a]) / z);
            }
        TH_OK(run_ctc(&p, v8, 0, 0, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, costs, grad, in));
        reference(&p, 0, rc, rg);
        double *fd = malloc(sizeof(double) * n_el), *gd = malloc(sizeof(double) * n_el);
        int n_pos = 0, n_zero = 0, zero_ok = 1, pad_ok = 1, bad_zero = -1;
        for (int i = 0; i < n_el; i++) {
            int t = i / (N * A), n = (i / A) % N;
            if (t >= p.inlen[n]) {
                pad_ok &= grad[i] == 0.0f;
                continue;
            }
            float save = in[i], h = 0.05f * save;
            double cp = 0, cm = 0;
            in[i] = save + h;
            run_ctc(&p, v8, 0, 0, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, costs, g2, in);
            for (int k = 0; k < N; k++) cp += costs[k];
            float up_v = in[i];
            in[i] = save - h;
            run_ctc(&p, v8, 0, 0, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, costs, g2, in);
            for (int k = 0; k < N; k++) cm += costs[k];
            float dn_v = in[i];
            in[i] = save;
            if (rg[i] < 0) { /* gamma > 0 */
                fd[n_pos] = (cp - cm) / ((double)up_v - (double)dn_v);
                gd[n_pos] = grad[i];
                n_pos++;
            } else { /* gamma == 0: gradient is y, and y does not influence the cost */
                n_zero++;
                if (!(grad[i] == save && cp == cm) && bad_zero < 0) bad_zero = i;
                zero_ok &= grad[i] == save && cp == cm;
            }
        }
        TH_CHECK(n_pos > 0 && n_zero > 0, "ctc NONE fd: elements with gamma > 0 (%d) and gamma == 0 (%d) both present", n_pos, n_zero);
        th_compare("ctc NONE gradient (gamma > 0) = -gamma/y vs finite differences in y", gd, fd, (size_t)n_pos, 2e-3);
        TH_CHECK(zero_ok, "ctc NONE gradient (gamma == 0) is y and the cost does not depend on y (first bad index %d: got %g, y %g)",
                 bad_zero, bad_zero >= 0 ? grad[bad_zero] : 0.0, bad_zero >= 0 ? in[bad_zero] : 0.0);
        TH_CHECK(pad_ok, "ctc NONE gradient is 0 for t >= inputLength");
        free(in); free(costs); free(grad); free(g2); free(fd); free(gd); free(rc); free(rg);
        free_problem(&p);
    }
}

static void test_infeasible(void)
{
    /* label 1,1 needs 3 frames (1, blank, 1); with T=2 no alignment exists */
    int T = 2, N = 1, A = 3, lab[2] = {1, 1}, ll[1] = {2}, il[1] = {2};
    cudnnTensorDescriptor_t pd;
    cudnnCreateTensorDescriptor(&pd);
    int dims[3] = {T, N, A}, st[3] = {N * A, A, 1};
    cudnnSetTensorNdDescriptor(pd, CUDNN_DATA_FLOAT, 3, dims, st);
    float in[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, cost = 0, g[6];
    for (int mode = 0; mode < 2; mode++) {
        cudnnCTCLossDescriptor_t c;
        cudnnCreateCTCLossDescriptor(&c);
        cudnnSetCTCLossDescriptor_v8(c, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX, mode ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN, 4);
        size_t ws;
        TH_OK(cudnnGetCTCLossWorkspaceSize_v8(h, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c, pd, pd, &ws));
        void *w = th_alloc(h, ws), *din = up(in, sizeof in), *dl = up(lab, sizeof lab), *dll = up(ll, sizeof ll), *dil = up(il, sizeof il);
        void *dg = th_alloc(h, sizeof g), *dc = th_alloc(h, sizeof cost);
        TH_OK(cudnnCTCLoss_v8(h, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c, pd, din, dl, dll, dil, dc, pd, dg, ws, w));
        th_download(h, g, dg, sizeof g);
        th_download(h, &cost, dc, sizeof cost);
        th_free(h, din); th_free(h, dl); th_free(h, dll); th_free(h, dil); th_free(h, dg); th_free(h, dc);
        TH_CHECK(isinf(cost) && cost > 0, "infeasible alignment gives +inf cost (got %g)", cost);
        int ok = 1;
        for (int i = 0; i < 6; i++) ok &= mode ? isnan(g[i]) : g[i] == 0.0f;
        TH_CHECK(ok, "infeasible gradient is %s", mode ? "NaN with PROPAGATE_NAN" : "zero with NOT_PROPAGATE_NAN");
        th_free(h, w);
        cudnnDestroyCTCLossDescriptor(c);
    }
    cudnnDestroyTensorDescriptor(pd);
}

static void test_errors(void)
{
    int T = 4, N = 2, A = 4;
    int lab[4] = {1, 2, 3, 1}, ll[2] = {2, 2}, il[2] = {4, 3};
    cudnnTensorDescriptor_t pd, bad, dbl;
    cudnnCreateTensorDescriptor(&pd);
    cudnnCreateTensorDescriptor(&bad);
    cudnnCreateTensorDescriptor(&dbl);
    int dims[3] = {T, N, A}, st[3] = {N * A, A, 1};
    int dims2[3] = {T, N, A + 1}, st2[3] = {N * (A + 1), A + 1, 1};
    cudnnSetTensorNdDescriptor(pd, CUDNN_DATA_FLOAT, 3, dims, st);
    cudnnSetTensorNdDescriptor(bad, CUDNN_DATA_FLOAT, 3, dims2, st2);
    cudnnSetTensorNdDescriptor(dbl, CUDNN_DATA_DOUBLE, 3, dims, st);
    cudnnCTCLossDescriptor_t c, unset;
    cudnnCreateCTCLossDescriptor(&c);
    cudnnCreateCTCLossDescriptor(&unset);
    cudnnSetCTCLossDescriptor_v8(c, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_NOT_PROPAGATE_NAN, 2);
    size_t ws = 0;
    TH_OK(cudnnGetCTCLossWorkspaceSize_v8(h, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c, pd, pd, &ws));
    TH_CHECK(ws > 0, "workspace size positive");
    void *w = th_alloc(h, ws);
    float in[32], costs[2] = {123, 123}, g[32];
    for (int i = 0; i < 32; i++) { in[i] = (float)(i % 5) * 0.1f; g[i] = 7; }
    const cudnnCTCLossAlgo_t D = CUDNN_CTC_LOSS_ALGO_DETERMINISTIC;
    TH_STATUS(cudnnGetCTCLossWorkspaceSize_v8(h, D, c, pd, pd, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetCTCLossWorkspaceSize_v8(h, D, unset, pd, pd, &ws), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetCTCLossWorkspaceSize_v8(h, (cudnnCTCLossAlgo_t)9, c, pd, pd, &ws), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetCTCLossWorkspaceSize_v8(h, D, c, pd, bad, &ws), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnGetCTCLossWorkspaceSize_v8(h, D, c, dbl, dbl, &ws), CUDNN_STATUS_NOT_SUPPORTED);
    TH_STATUS(cudnnGetCTCLossWorkspaceSize_v8(NULL, D, c, pd, pd, &ws), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCTCLoss_v8(h, D, c, pd, in, lab, ll, il, costs, pd, g, ws - 1, w), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCTCLoss_v8(h, D, c, pd, in, lab, ll, il, costs, pd, g, ws, NULL), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCTCLoss_v8(h, D, c, pd, NULL, lab, ll, il, costs, pd, g, ws, w), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCTCLoss_v8(h, D, c, pd, in, lab, ll, il, NULL, pd, g, ws, w), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCTCLoss_v8(h, D, c, pd, in, NULL, ll, il, costs, pd, g, ws, w), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCTCLoss_v8(h, D, c, pd, in, lab, ll, il, costs, bad, g, ws, w), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCTCLoss_v8(h, D, unset, pd, in, lab, ll, il, costs, pd, g, ws, w), CUDNN_STATUS_BAD_PARAM);
    int lab0[4] = {1, 0, 3, 1}, labA[4] = {1, 2, 4, 1}, ll3[2] = {3, 1}, llneg[2] = {-1, 2}, ilT[2] = {5, 3}, il0[2] = {0, 3};
    /* on a CUDA handle the _v8 label arrays are device memory, checked by the kernel (test_gpu_label_checks) */
    if (!th_is_gpu(h)) {
    TH_STATUS(cudnnCTCLoss_v8(h, D, c, pd, in, lab0, ll, il, costs, pd, g, ws, w), CUDNN_STATUS_BAD_PARAM);   /* blank in labels */
    TH_STATUS(cudnnCTCLoss_v8(h, D, c, pd, in, labA, ll, il, costs, pd, g, ws, w), CUDNN_STATUS_BAD_PARAM);   /* label >= A */
    TH_STATUS(cudnnCTCLoss_v8(h, D, c, pd, in, lab, ll3, il, costs, pd, g, ws, w), CUDNN_STATUS_BAD_PARAM);   /* > maxLabelLength */
    TH_STATUS(cudnnCTCLoss_v8(h, D, c, pd, in, lab, llneg, il, costs, pd, g, ws, w), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCTCLoss_v8(h, D, c, pd, in, lab, ll, ilT, costs, pd, g, ws, w), CUDNN_STATUS_BAD_PARAM);   /* > T */
    TH_STATUS(cudnnCTCLoss_v8(h, D, c, pd, in, lab, ll, il0, costs, pd, g, ws, w), CUDNN_STATUS_BAD_PARAM);
    }
    TH_STATUS(cudnnCTCLoss(h, pd, in, lab0, ll, il, costs, pd, g, D, c, w, ws), CUDNN_STATUS_BAD_PARAM);
    TH_STATUS(cudnnCTCLoss(h, dbl, in, lab, ll, il, costs, dbl, g, D, c, w, ws), CUDNN_STATUS_NOT_SUPPORTED);
    int *big = calloc(600, sizeof(int)), bl[2] = {257, 1}, bil[2] = {4, 4};
    for (int i = 0; i < 600; i++) big[i] = 1;
    TH_STATUS(cudnnGetCTCLossWorkspaceSize(h, pd, pd, big, bl, bil, D, c, &ws), CUDNN_STATUS_BAD_PARAM); /* legacy limit 256 */
    TH_STATUS(cudnnGetCTCLossWorkspaceSize(h, pd, pd, lab, ll, NULL, D, c, &ws), CUDNN_STATUS_BAD_PARAM);
    free(big);
    int ok = costs[0] == 123 && costs[1] == 123;
    for (int i = 0; i < 32; i++) ok &= g[i] == 7;
    TH_CHECK(ok, "failed calls leave costs and gradients untouched");
    /* 2-D probs */
    cudnnTensorDescriptor_t d4;
    cudnnCreateTensorDescriptor(&d4);
    cudnnSetTensor4dDescriptor(d4, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, T, N, A, 1);
    TH_STATUS(cudnnGetCTCLossWorkspaceSize_v8(h, D, c, d4, d4, &ws), CUDNN_STATUS_BAD_PARAM);
    cudnnDestroyTensorDescriptor(d4);
    th_free(h, w);
    cudnnDestroyCTCLossDescriptor(c);
    cudnnDestroyCTCLossDescriptor(unset);
    cudnnDestroyTensorDescriptor(pd);
    cudnnDestroyTensorDescriptor(bad);
    cudnnDestroyTensorDescriptor(dbl);
}

/* CUDA handle: cudnnCTCLoss_v8 cannot validate device label arrays on the host; an entry with a
 * bad label, label length or input length gets cost NaN (and NaN gradients), the others are
 * computed normally */
static void test_gpu_label_checks(void)
{
    int T = 4, N = 2, A = 4;
    int lab[4] = {1, 0, 3, 1}, ll[2] = {2, 2}, il[2] = {4, 3};
    cudnnTensorDescriptor_t pd;
    cudnnCreateTensorDescriptor(&pd);
    int dims[3] = {T, N, A}, st[3] = {N * A, A, 1};
    cudnnSetTensorNdDescriptor(pd, CUDNN_DATA_FLOAT, 3, dims, st);
    cudnnCTCLossDescriptor_t c;
    cudnnCreateCTCLossDescriptor(&c);
    cudnnSetCTCLossDescriptor_v8(c, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_NOT_PROPAGATE_NAN, 2);
    size_t ws = 0;
    TH_OK(cudnnGetCTCLossWorkspaceSize_v8(h, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c, pd, pd, &ws));
    float in[32], cost[2], g[32];
    for (int i = 0; i < 32; i++) in[i] = (float)(i % 5) * 0.1f;
    void *w = th_alloc(h, ws), *din = up(in, sizeof in), *dl = up(lab, sizeof lab), *dll = up(ll, sizeof ll), *dil = up(il, sizeof il);
    void *dg = th_alloc(h, sizeof g), *dc = th_alloc(h, sizeof cost);
    TH_OK(cudnnCTCLoss_v8(h, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c, pd, din, dl, dll, dil, dc, pd, dg, ws, w));
    th_download(h, cost, dc, sizeof cost);
    TH_CHECK(isnan(cost[0]) && isfinite(cost[1]) && cost[1] > 0, "bad label on the device: cost NaN for that entry only (%g, %g)", cost[0], cost[1]);
    th_free(h, w); th_free(h, din); th_free(h, dl); th_free(h, dll); th_free(h, dil); th_free(h, dg); th_free(h, dc);
    cudnnDestroyCTCLossDescriptor(c);
    cudnnDestroyTensorDescriptor(pd);
}

int main(void)
{
    th_seed(0xC7C);
    h = th_create_handle();
    test_descriptors();
    test_random();
    test_fd_softmax();
    test_fd_none();
    test_infeasible();
    test_errors();
    if (th_is_gpu(h)) test_gpu_label_checks();
    cudnnDestroy(h);
    return th_finish();
}
