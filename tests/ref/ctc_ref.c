#include <math.h>
#include <stdlib.h>
#include "ctc_ref.h"

static double lse(double a, double b)
{
    if (a == -INFINITY) return b;
    if (b == -INFINITY) return a;
    return a > b ? a + log(1 + exp(b - a)) : b + log(1 + exp(a - b));
}

double ref_ctc(const double *act, int Tn, int T, int A, const int *label, int L, int softmax, double *grad)
{
    int S = 2 * L + 1;
    int *ext = malloc(sizeof(int) * (size_t)S);
    double *lp = malloc(sizeof(double) * (size_t)T * A);
    double *fa = calloc((size_t)T * S, sizeof(double));
    double *fb = calloc((size_t)T * S, sizeof(double));
    for (int s = 0; s < S; s++) ext[s] = (s % 2 == 0) ? 0 : label[s / 2];
    for (int t = 0; t < Tn; t++) {
        double z = 0;
        if (softmax) {
            double m = act[t * A];
            for (int a = 1; a < A; a++) m = fmax(m, act[t * A + a]);
            for (int a = 0; a < A; a++) z += exp(act[t * A + a] - m);
            z = m + log(z);
        }
        for (int a = 0; a < A; a++) lp[t * A + a] = softmax ? act[t * A + a] - z : log(act[t * A + a]);
    }
    /* forward: fa[t][s] = log sum of prefixes ending in state s at t (including emission at t) */
    for (int t = 0; t < Tn; t++)
        for (int s = 0; s < S; s++) {
            double v;
            if (t == 0) v = (s <= 1) ? 0.0 : -INFINITY;
            else {
                v = fa[(t - 1) * S + s];
                if (s > 0) v = lse(v, fa[(t - 1) * S + s - 1]);
                if (s > 1 && ext[s] != 0 && ext[s] != ext[s - 2]) v = lse(v, fa[(t - 1) * S + s - 2]);
            }
            fa[t * S + s] = v + lp[t * A + ext[s]];
        }
    /* backward: fb[t][s] = log sum of suffixes starting in state s at t (including emission at t) */
    for (int t = Tn - 1; t >= 0; t--)
        for (int s = S - 1; s >= 0; s--) {
            double v;
            if (t == Tn - 1) v = (s >= S - 2) ? 0.0 : -INFINITY;
            else {
                v = fb[(t + 1) * S + s];
                if (s < S - 1) v = lse(v, fb[(t + 1) * S + s + 1]);
                if (s < S - 2 && ext[s] != 0 && ext[s] != ext[s + 2]) v = lse(v, fb[(t + 1) * S + s + 2]);
            }
            fb[t * S + s] = v + lp[t * A + ext[s]];
        }
    double logp = fa[(Tn - 1) * S + S - 1];
    if (S > 1) logp = lse(logp, fa[(Tn - 1) * S + S - 2]);
    if (grad) {
        for (int t = 0; t < T; t++)
            for (int a = 0; a < A; a++) grad[t * A + a] = 0;
        for (int t = 0; t < Tn; t++) {
            for (int a = 0; a < A; a++) {
                double occ = -INFINITY;
                int used = 0; /* some state with symbol a lies on a complete path at t: gamma > 0 */
                for (int s = 0; s < S; s++)
                    if (ext[s] == a && fa[t * S + s] > -INFINITY && fb[t * S + s] > -INFINITY) {
                        used = 1;
                        occ = lse(occ, fa[t * S + s] + fb[t * S + s] - lp[t * A + a]);
                    }
                double gamma = exp(occ - logp); /* posterior occupancy of symbol a at t */
                if (softmax)
                    grad[t * A + a] = exp(lp[t * A + a]) - gamma;
                else /* NVIDIA's NONE-mode rule (measured): d loss / d y where gamma > 0, else y itself */
                    grad[t * A + a] = used ? -gamma / act[t * A + a] : act[t * A + a];
            }
        }
    }
    free(ext); free(lp); free(fa); free(fb);
    return -logp;
}
