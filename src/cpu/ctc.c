/* CTC loss on the CPU: forward-backward recursion in log space, one batch entry per thread.
 * Deterministic (no atomics); the NON_DETERMINISTIC algorithm maps to this one. */
#include <math.h>
#include <string.h>
#include "../core/adv_desc.h"

static inline double lse2(double a, double b)
{
    if (a == -INFINITY) return b;
    if (b == -INFINITY) return a;
    double m = a > b ? a : b;
    return m + log1p(exp(-fabs(a - b)));
}

size_t fdnn_ctc_cpu_work_bytes(int T, int N, int A, int max_label)
{
    size_t S = 2 * (size_t)max_label + 1;
    /* plus an int area (labels, label and input lengths) the CUDA backend copies host labels to */
    size_t ints = ((size_t)N * (size_t)max_label + 2 * (size_t)N) * sizeof(int);
    return (size_t)N * ((size_t)T * (size_t)A + 2 * (size_t)T * S + (size_t)A) * sizeof(double) + ((ints + 7) & ~(size_t)7);
}

void fdnn_ctc_cpu(const float *probs, const int64_t st[3], int T, int N, int A, const int *labels, const int *label_len,
                  const int *input_len, int softmax, int propagate_nan, float *costs, float *grads, const int64_t gst[3],
                  int max_label, void *work)
{
    size_t S_max = 2 * (size_t)max_label + 1;
    size_t per = (size_t)T * (size_t)A + 2 * (size_t)T * S_max + (size_t)A;
    double *base = (double *)work;
#pragma omp parallel for schedule(dynamic)
    for (int n = 0; n < N; n++) {
        int64_t loff = 0;
        for (int k = 0; k < n; k++) loff += label_len[k];
        const int *lab = labels + loff;
        int L = label_len[n], Tn = input_len[n], S = 2 * L + 1;
        double *lp = base + (size_t)n * per;          /* T x A log-probabilities */
        double *la = lp + (size_t)T * A;              /* T x S_max alpha */
        double *lb = la + (size_t)T * S_max;          /* T x S_max beta */
        double *occ = lb + (size_t)T * S_max;         /* A */
        for (int t = 0; t < Tn; t++) {
            const float *row = probs + t * st[0] + n * st[1];
            double *o = lp + (size_t)t * A;
            if (softmax) {
                double m = -INFINITY;
                for (int a = 0; a < A; a++) if (row[a * st[2]] > m) m = row[a * st[2]];
                double s = 0;
                for (int a = 0; a < A; a++) s += exp(row[a * st[2]] - m);
                double ls = m + log(s);
                for (int a = 0; a < A; a++) o[a] = row[a * st[2]] - ls;
            } else {
                for (int a = 0; a < A; a++) o[a] = log((double)row[a * st[2]]);
            }
        }
#define LBL(s) ((s) & 1 ? lab[(s) >> 1] : 0)
        /* alpha */
        for (int s = 0; s < S; s++) la[s] = -INFINITY;
        la[0] = lp[0];
        if (S > 1) la[1] = lp[LBL(1)];
        for (int t = 1; t < Tn; t++) {
            double *cur = la + (size_t)t * S_max, *prev = la + (size_t)(t - 1) * S_max;
            const double *o = lp + (size_t)t * A;
            for (int s = 0; s < S; s++) {
                double v = prev[s];
                if (s >= 1) v = lse2(v, prev[s - 1]);
                if (s >= 2 && (s & 1) && LBL(s) != LBL(s - 2)) v = lse2(v, prev[s - 2]);
                cur[s] = v == -INFINITY ? -INFINITY : v + o[LBL(s)];
            }
        }
        /* beta (excluding the emission at t) */
        double *bl = lb + (size_t)(Tn - 1) * S_max;
        for (int s = 0; s < S; s++) bl[s] = -INFINITY;
        bl[S - 1] = 0;
        if (S > 1) bl[S - 2] = 0;
        for (int t = Tn - 2; t >= 0; t--) {
            double *cur = lb + (size_t)t * S_max, *nxt = lb + (size_t)(t + 1) * S_max;
            const double *o = lp + (size_t)(t + 1) * A;
            for (int s = 0; s < S; s++) {
                double v = nxt[s] + o[LBL(s)];
                if (s + 1 < S) v = lse2(v, nxt[s + 1] + o[LBL(s + 1)]);
                if (s + 2 < S && ((s + 2) & 1) && LBL(s + 2) != LBL(s)) v = lse2(v, nxt[s + 2] + o[LBL(s + 2)]);
                cur[s] = v;
            }
        }
        const double *alast = la + (size_t)(Tn - 1) * S_max;
        double logP = S > 1 ? lse2(alast[S - 1], alast[S - 2]) : alast[0];
        costs[n] = (float)(-logP);
        if (!grads) continue;
        int feasible = logP > -INFINITY;
        for (int t = 0; t < T; t++) {
            float *g = grads + t * gst[0] + n * gst[1];
            if (t >= Tn) {
                for (int a = 0; a < A; a++) g[a * gst[2]] = 0.0f;
                continue;
            }
            if (!feasible) {
                for (int a = 0; a < A; a++) g[a * gst[2]] = propagate_nan ? NAN : 0.0f;
                continue;
            }
            for (int a = 0; a < A; a++) occ[a] = -INFINITY;
            const double *ar = la + (size_t)t * S_max, *br = lb + (size_t)t * S_max;
            for (int s = 0; s < S; s++) occ[LBL(s)] = lse2(occ[LBL(s)], ar[s] + br[s]);
            const double *o = lp + (size_t)t * A;
            if (softmax) {
                for (int a = 0; a < A; a++) g[a * gst[2]] = (float)(exp(o[a]) - exp(occ[a] - logP));
            } else {
                /* NONE: NVIDIA's rule, measured on cuDNN 9.19: -gamma/y (the derivative of the cost
                 * with respect to the probability y) where gamma > 0, and y itself where gamma == 0
                 * (not a derivative). A finite occ implies y > 0 (alpha at t includes log y). */
                const float *row = probs + t * st[0] + n * st[1];
                for (int a = 0; a < A; a++)
                    g[a * gst[2]] = occ[a] == -INFINITY ? row[a * st[2]]
                                                        : (float)(-exp(occ[a] - logP) / (double)row[a * st[2]]);
            }
        }
#undef LBL
    }
}
