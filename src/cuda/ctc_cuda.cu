/* CTC loss on the CUDA backend: one block per batch entry running the same log-space
 * forward-backward recursion as the CPU (src/cpu/ctc.c), in double, with the same workspace
 * layout (per entry: T x A log-probabilities, T x S alpha, T x S beta, A spare), so results
 * match the CPU up to the last bits of exp/log. Deterministic: every sum runs in a fixed order
 * (a row's softmax by one thread, the occupancy of a symbol by one thread in increasing s).
 *
 * cudnnCTCLoss passes host label arrays: they are copied (cudaMemcpyAsync, handle's stream)
 * into the int area at the end of the workspace. cudnnCTCLoss_v8 passes device arrays that the
 * host cannot validate without a synchronisation: the kernel checks them and an entry with an
 * input length outside [1, T], a label length outside [0, maxLabelLength] or a label outside
 * [1, A-1] (or after an entry with an invalid label length) gets cost NaN and NaN gradients
 * (the call itself returns SUCCESS). */
#include <math.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include "cuda_adv.h"
extern "C" {
#include "cuda_backend.h"
}

namespace {

__device__ __forceinline__ double lse2(double a, double b)
{
    if (a == -INFINITY) return b;
    if (b == -INFINITY) return a;
    double m = a > b ? a : b;
    return m + log1p(exp(-fabs(a - b)));
}

struct CtcArgs {
    const float *probs;
    long long st[3], gst[3];
    int T, N, A, maxL, softmax, prop_nan;
    const int *labels, *label_len, *input_len;
    float *costs, *grads;
    double *work;
};

__global__ void k_ctc(CtcArgs a)
{
    const int n = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
    const int T = a.T, A = a.A;
    __shared__ int sh_L, sh_Tn, sh_bad;
    __shared__ long long sh_loff;
    __shared__ double sh_logP;
    if (tid == 0) {
        long long loff = 0;
        int bad = 0;
        for (int k = 0; k < n; k++) { /* an invalid earlier length would misplace this entry's labels */
            int lk = a.label_len[k];
            bad |= lk < 0 || lk > a.maxL;
            loff += lk;
        }
        sh_loff = loff;
        sh_L = a.label_len[n];
        sh_Tn = a.input_len[n];
        sh_bad = bad || sh_Tn < 1 || sh_Tn > T || sh_L < 0 || sh_L > a.maxL;
    }
    __syncthreads();
    const int L = sh_L, Tn = sh_Tn, S = 2 * L + 1;
    const int *lab = a.labels + sh_loff;
    if (!sh_bad)
        for (int k = tid; k < L; k += nt)
            if (lab[k] < 1 || lab[k] >= A) sh_bad = 1; /* benign race: every writer stores 1 */
    __syncthreads();
    if (sh_bad) {
        if (tid == 0) a.costs[n] = NAN;
        if (a.grads)
            for (long long i = tid; i < (long long)T * A; i += nt) {
                int t = (int)(i / A), c = (int)(i % A);
                a.grads[t * a.gst[0] + n * a.gst[1] + c * a.gst[2]] = NAN;
            }
        return;
    }
    const size_t S_max = 2 * (size_t)a.maxL + 1;
    const size_t per = (size_t)T * A + 2 * (size_t)T * S_max + (size_t)A;
    double *lp = a.work + (size_t)n * per, *la = lp + (size_t)T * A, *lb = la + (size_t)T * S_max;
    for (int t = tid; t < Tn; t += nt) {
        const float *row = a.probs + t * a.st[0] + n * a.st[1];
        double *o = lp + (size_t)t * A;
        if (a.softmax) {
            double m = -INFINITY;
            for (int c = 0; c < A; c++) if (row[c * a.st[2]] > m) m = row[c * a.st[2]];
            double s = 0;
            for (int c = 0; c < A; c++) s += exp(row[c * a.st[2]] - m);
            double ls = m + log(s);
            for (int c = 0; c < A; c++) o[c] = row[c * a.st[2]] - ls;
        } else {
            for (int c = 0; c < A; c++) o[c] = log((double)row[c * a.st[2]]);
        }
    }
    __syncthreads();
#define LBL(s) ((s) & 1 ? lab[(s) >> 1] : 0)
    for (int s = tid; s < S; s += nt) la[s] = s == 0 ? lp[0] : s == 1 ? lp[LBL(1)] : -INFINITY;
    __syncthreads();
    for (int t = 1; t < Tn; t++) {
        double *cur = la + (size_t)t * S_max;
        const double *prev = la + (size_t)(t - 1) * S_max, *o = lp + (size_t)t * A;
        for (int s = tid; s < S; s += nt) {
            double v = prev[s];
            if (s >= 1) v = lse2(v, prev[s - 1]);
            if (s >= 2 && (s & 1) && LBL(s) != LBL(s - 2)) v = lse2(v, prev[s - 2]);
            cur[s] = v == -INFINITY ? -INFINITY : v + o[LBL(s)];
        }
        __syncthreads();
    }
    double *bl = lb + (size_t)(Tn - 1) * S_max;
    for (int s = tid; s < S; s += nt) bl[s] = (s == S - 1 || s == S - 2) ? 0.0 : -INFINITY;
    __syncthreads();
    for (int t = Tn - 2; t >= 0; t--) {
        double *cur = lb + (size_t)t * S_max;
        const double *nxt = lb + (size_t)(t + 1) * S_max, *o = lp + (size_t)(t + 1) * A;
        for (int s = tid; s < S; s += nt) {
            double v = nxt[s] + o[LBL(s)];
            if (s + 1 < S) v = lse2(v, nxt[s + 1] + o[LBL(s + 1)]);
            if (s + 2 < S && ((s + 2) & 1) && LBL(s + 2) != LBL(s)) v = lse2(v, nxt[s + 2] + o[LBL(s + 2)]);
            cur[s] = v;
        }
        __syncthreads();
    }
    if (tid == 0) {
        const double *alast = la + (size_t)(Tn - 1) * S_max;
        double logP = S > 1 ? lse2(alast[S - 1], alast[S - 2]) : alast[0];
        sh_logP = logP;
        a.costs[n] = (float)(-logP);
    }
    __syncthreads();
    if (!a.grads) return;
    const double logP = sh_logP;
    const int feasible = logP > -INFINITY;
    for (int t = 0; t < T; t++) {
        float *g = a.grads + t * a.gst[0] + n * a.gst[1];
        const double *ar = la + (size_t)t * S_max, *br = lb + (size_t)t * S_max, *o = lp + (size_t)t * A;
        for (int c = tid; c < A; c += nt) {
            float v;
            if (t >= Tn) v = 0.0f;
            else if (!feasible) v = a.prop_nan ? NAN : 0.0f;
            else {
                double occ = -INFINITY;
                if (c == 0) {
                    for (int s = 0; s < S; s += 2) occ = lse2(occ, ar[s] + br[s]);
                } else {
                    for (int k = 0; k < L; k++)
                        if (lab[k] == c) occ = lse2(occ, ar[2 * k + 1] + br[2 * k + 1]);
                }
                if (a.softmax) {
                    v = (float)(exp(o[c]) - exp(occ - logP));
                } else {
                    /* NONE: NVIDIA's measured rule (see src/cpu/ctc.c): -gamma/y where gamma > 0, y where gamma == 0 */
                    const float y = a.probs[t * a.st[0] + n * a.st[1] + c * a.st[2]];
                    v = occ == -INFINITY ? y : (float)(-exp(occ - logP) / (double)y);
                }
            }
            g[c * a.gst[2]] = v;
        }
    }
#undef LBL
}

} // namespace

extern "C" cudnnStatus_t fdnn_ctc_cuda(cudnnHandle_t h, const float *probs, const int64_t st[3], int T, int N, int A, const int *labels,
                                       const int *label_len, const int *input_len, int labels_on_host, int softmax, int propagate_nan,
                                       float *costs, float *grads, const int64_t gst[3], int max_label, void *work)
{
    cudaStream_t stream = (cudaStream_t)h->stream;
    size_t S_max = 2 * (size_t)max_label + 1;
    size_t per = (size_t)T * (size_t)A + 2 * (size_t)T * S_max + (size_t)A;
    CtcArgs a;
    a.probs = probs;
    for (int i = 0; i < 3; i++) { a.st[i] = st[i]; a.gst[i] = gst[i]; }
    a.T = T; a.N = N; a.A = A; a.maxL = max_label; a.softmax = softmax; a.prop_nan = propagate_nan;
    a.costs = costs; a.grads = grads;
    a.work = (double *)work;
    a.labels = labels; a.label_len = label_len; a.input_len = input_len;
    if (labels_on_host) {
        int *ints = (int *)((char *)work + (size_t)N * per * sizeof(double));
        long long tot = 0;
        for (int n = 0; n < N; n++) tot += label_len[n];
        cudaError_t e = cudaMemcpyAsync(ints, label_len, sizeof(int) * (size_t)N, cudaMemcpyHostToDevice, stream);
        if (e == cudaSuccess) e = cudaMemcpyAsync(ints + N, input_len, sizeof(int) * (size_t)N, cudaMemcpyHostToDevice, stream);
        if (e == cudaSuccess && tot) e = cudaMemcpyAsync(ints + 2 * N, labels, sizeof(int) * (size_t)tot, cudaMemcpyHostToDevice, stream);
        if (e != cudaSuccess) return fdnn_cuda_check(e, "CTC loss: copying the host label arrays");
        a.label_len = ints; a.input_len = ints + N; a.labels = ints + 2 * N;
    }
    k_ctc<<<N, 128, 0, stream>>>(a);
    return fdnn_cuda_check(cudaGetLastError(), "CTC loss kernel");
}
