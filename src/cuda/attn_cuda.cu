/* Multi-head attention on the CUDA backend: the math, buffer layouts and dropout masks of the
 * CPU engine (src/cpu/attn_cpu.c, docs/attention.md), computed in double for DOUBLE data and in
 * FP32 for FLOAT and HALF data (CUBLAS_COMPUTE_32F, default math: no TF32).
 *
 * Projections are single GEMMs over all rows; the per-head products Q K^T, P V and their
 * gradients are cublasGemmStridedBatchedEx calls, one per head, batched over the K/V sequences
 * (a group is one query sequence under ONE_TO_ONE, all beams of a batch entry under ALL_TO_ONE,
 * so the beams' sum over a shared K/V sequence happens inside the GEMM's reduction). The
 * windowed softmax, its gradient and the dropout masks are kernels (one thread per query row and
 * head). The workspace holds one more [rows x heads x Tk] buffer than the CPU engine needs
 * (dropped-out probabilities, score gradients) and the device copies of the sequence lengths and
 * windows; fdnn_attn_work_bytes includes both on every backend. */
#include <stdint.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include "cuda_adv.h"
#include "cublas_loader.h"
#include "../core/philox.h"
extern "C" {
#include "cuda_backend.h"
}

namespace {

const int BLK = 256;

template <typename T> struct CT;
template <> struct CT<float> {
    static const cudaDataType dt = CUDA_R_32F;
    static const cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
};
template <> struct CT<double> {
    static const cudaDataType dt = CUDA_R_64F;
    static const cublasComputeType_t ct = CUBLAS_COMPUTE_64F;
};

__device__ __forceinline__ float ldT(const float *p) { return *p; }
__device__ __forceinline__ double ldT(const double *p) { return *p; }
__device__ __forceinline__ float ldT(const __half *p) { return __half2float(*p); }
__device__ __forceinline__ void stT(float *p, double v) { *p = (float)v; }
__device__ __forceinline__ void stT(double *p, double v) { *p = v; }
__device__ __forceinline__ void stT(__half *p, double v) { *p = __double2half(v); }
__device__ __forceinline__ float expT(float x) { return expf(x); }
__device__ __forceinline__ double expT(double x) { return exp(x); }

inline unsigned grid_for(long long total)
{
    long long b = (total + BLK - 1) / BLK;
    if (b > 65535LL * 32) b = 65535LL * 32;
    if (b < 1) b = 1;
    return (unsigned)b;
}

#define GRID_LOOP(i, total) for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (total); i += (long long)gridDim.x * blockDim.x)

struct SeqDev {
    long long st_t, st_b, st_m, st_v;
    int M, has_fill;
    double fill;
};

__device__ __forceinline__ long long sd_off(const SeqDev &d, long long s, int t) { return t * d.st_t + (s / d.M) * d.st_b + (s % d.M) * d.st_m; }

struct Drop {
    unsigned long long seed;
    float p;
    int on;
};

__device__ __forceinline__ double drop_mult(const Drop &d, uint64_t offset, uint64_t idx)
{
    if (!d.on) return 1.0;
    return fdnn_dropout_keep(d.seed, offset, idx, d.p) ? 1.0 / (1.0 - (double)d.p) : 0.0;
}

template <typename DT, typename T> __global__ void k_convert(const DT *src, T *dst, long long n)
{
    GRID_LOOP(i, n) dst[i] = (T)ldT(src + i);
}

template <typename DT, typename T> __global__ void k_gather(SeqDev d, const DT *x, long long S, int Tn, int V, const int *len, int only_t, T *X)
{
    GRID_LOOP(i, S * Tn * V)
    {
        int v = (int)(i % V);
        long long st = i / V;
        int t = (int)(st % Tn);
        long long s = st / Tn;
        X[i] = (t < len[s] && (only_t < 0 || t == only_t)) ? (T)ldT(x + sd_off(d, s, t) + v * d.st_v) : (T)0;
    }
}

template <typename DT, typename T> __global__ void k_scatter(SeqDev d, DT *y, long long S, int Tn, int V, const int *len, int only_t, const T *X)
{
    GRID_LOOP(i, S * Tn * V)
    {
        int v = (int)(i % V);
        long long st = i / V;
        int t = (int)(st % Tn);
        long long s = st / Tn;
        if (only_t >= 0 && t != only_t) continue;
        long long o = sd_off(d, s, t) + v * d.st_v;
        if (t < len[s]) stT(y + o, (double)X[i]);
        else if (d.has_fill) stT(y + o, d.fill);
    }
}

template <typename T> __global__ void k_bias_rows(T *out, long long rows, int cols, const T *b)
{
    GRID_LOOP(i, rows * cols) out[i] += b[i % cols];
}

template <typename T> __global__ void k_copy_heads(const T *X, long long rows, int in, int H, T *out)
{
    GRID_LOOP(i, rows * H * in)
    {
        int c = (int)(i % in);
        long long r = i / ((long long)H * in);
        out[i] = X[r * in + c];
    }
}

template <typename T> __global__ void k_sum_heads(const T *D, long long rows, int in, int H, T *X)
{
    GRID_LOOP(i, rows * in)
    {
        int c = (int)(i % in);
        long long r = i / in;
        T s = 0;
        for (int h = 0; h < H; h++) s += D[(r * H + h) * in + c];
        X[i] = s;
    }
}

template <typename T> __global__ void k_colsum(const T *src, long long ld, long long rows, int cols, T *dst)
{
    GRID_LOOP(c, (long long)cols)
    {
        T s = 0;
        for (long long r = 0; r < rows; r++) s += src[r * ld + c];
        dst[c] += s;
    }
}

template <typename DT, typename T> __global__ void k_acc_store(const T *g, DT *dw, long long n, int add)
{
    GRID_LOOP(i, n) stT(dw + i, (add ? (double)ldT(dw + i) : 0.0) + (double)g[i]);
}

struct AttnDev {
    int H, Tq, Tk, Mq, Mkv, one_to_one, currIdx;
    long long Sq;
    const int *lenq, *lenkv, *lo, *hi;
};

__device__ __forceinline__ long long kv_seq(const AttnDev &a, long long s) { return a.one_to_one ? s : (s / a.Mq) * a.Mkv; }

/* row valid and window [j0, j1); 0 when nothing to attend */
__device__ __forceinline__ int row_window(const AttnDev &a, long long s, int t, int *j0, int *j1)
{
    if (t >= a.lenq[s] || (a.currIdx >= 0 && t != a.currIdx)) return 0;
    int lo = a.lo[t], hi = a.hi[t], lk = a.lenkv[kv_seq(a, s)];
    if (lo < 0) lo = 0;
    if (hi > lk) hi = lk;
    *j0 = lo;
    *j1 = hi;
    return lo < hi;
}

/* PR holds scale*<q, k>; softmax over the window, 0 elsewhere */
template <typename T> __global__ void k_softmax(AttnDev a, T *PR)
{
    GRID_LOOP(e, a.Sq * a.Tq * a.H)
    {
        int i = (int)(e % a.H);
        long long row = e / a.H;
        long long s = row / a.Tq;
        int t = (int)(row % a.Tq);
        T *p = PR + e * a.Tk;
        int j0 = 0, j1 = 0;
        if (!row_window(a, s, t, &j0, &j1)) {
            for (int j = 0; j < a.Tk; j++) p[j] = 0;
            continue;
        }
        (void)i;
        T mx = p[j0];
        for (int j = j0 + 1; j < j1; j++) mx = p[j] > mx ? p[j] : mx;
        T sum = 0;
        for (int j = j0; j < j1; j++) { p[j] = expT(p[j] - mx); sum += p[j]; }
        for (int j = 0; j < a.Tk; j++) p[j] = (j >= j0 && j < j1) ? p[j] / sum : (T)0;
    }
}

/* X = PR with the attention dropout mask applied */
template <typename T> __global__ void k_attn_drop(AttnDev a, Drop d, const T *PR, T *X)
{
    GRID_LOOP(e, a.Sq * a.Tq * a.H * a.Tk)
    {
        int j = (int)(e % a.Tk);
        long long rh = e / a.Tk;
        int i = (int)(rh % a.H);
        long long row = rh / a.H;
        long long s = row / a.Tq;
        int t = (int)(row % a.Tq);
        X[e] = (T)((double)PR[e] * drop_mult(d, 0, (uint64_t)(((s * a.H + i) * a.Tq + t) * a.Tk + j)));
    }
}

/* X holds dp = <dh, v>; replaced by ds = scale * p * (dp*mult - sum_k p_k dp_k mult_k) */
template <typename T> __global__ void k_ds(AttnDev a, Drop d, double scale, const T *PR, T *X)
{
    GRID_LOOP(e, a.Sq * a.Tq * a.H)
    {
        int i = (int)(e % a.H);
        long long row = e / a.H;
        long long s = row / a.Tq;
        int t = (int)(row % a.Tq);
        const T *p = PR + e * a.Tk;
        T *x = X + e * a.Tk;
        int j0 = 0, j1 = 0;
        if (!row_window(a, s, t, &j0, &j1)) {
            for (int j = 0; j < a.Tk; j++) x[j] = 0;
            continue;
        }
        uint64_t base = (uint64_t)(((s * a.H + i) * a.Tq + t) * a.Tk);
        T dot = 0;
        for (int j = j0; j < j1; j++) dot += p[j] * x[j] * (T)drop_mult(d, 0, base + j);
        for (int j = 0; j < a.Tk; j++)
            x[j] = (j >= j0 && j < j1) ? (T)scale * p[j] * (x[j] * (T)drop_mult(d, 0, base + j) - dot) : (T)0;
    }
}

/* output rows: post dropout, then the residual */
template <typename DT, typename T> __global__ void k_post(AttnDev a, Drop d, int O, T *Y, const DT *resid, SeqDev qd)
{
    GRID_LOOP(e, a.Sq * a.Tq * O)
    {
        int c = (int)(e % O);
        long long row = e / O;
        long long s = row / a.Tq;
        int t = (int)(row % a.Tq);
        if (t >= a.lenq[s] || (a.currIdx >= 0 && t != a.currIdx)) continue;
        double y = (double)Y[e] * drop_mult(d, 1, (uint64_t)e);
        if (resid) y += (double)ldT(resid + sd_off(qd, s, t) + c * qd.st_v);
        Y[e] = (T)y;
    }
}

SeqDev seqdev(const struct cudnnSeqDataStruct *d)
{
    SeqDev r;
    r.st_t = d->stride[CUDNN_SEQDATA_TIME_DIM];
    r.st_b = d->stride[CUDNN_SEQDATA_BATCH_DIM];
    r.st_m = d->stride[CUDNN_SEQDATA_BEAM_DIM];
    r.st_v = d->stride[CUDNN_SEQDATA_VECT_DIM];
    r.M = d->dim[CUDNN_SEQDATA_BEAM_DIM];
    r.has_fill = d->has_fill;
    r.fill = d->fill;
    return r;
}

Drop dropdev(const struct cudnnDropoutStruct *d)
{
    Drop r;
    r.on = d != NULL;
    r.seed = d ? (unsigned long long)d->seed : 0;
    r.p = d ? d->dropout : 0.0f;
    return r;
}

template <typename T> struct Eng {
    const fdnn_attn_run *r;
    const fdnn_attn_geom *g;
    cudaStream_t st;
    const fdnn_cublas_api *cb;
    cublasHandle_t ch;
    T *W, *QB, *KB, *VB, *PR, *HD, *DQB, *DKB, *DVB, *XQ, *XK, *XV, *Y, *DHD, *X;
    long long Sq, Skv, rq, rk, nqb, nkb, nvb, npr, nhd;
    int groups, Mrows;
    AttnDev ad;

    cudnnStatus_t init(const fdnn_attn_run *run, int currIdx)
    {
        r = run;
        g = &run->g;
        st = (cudaStream_t)run->handle->stream;
        FDNN_CHECK(fdnn_cublas_handle(run->handle, &cb, &ch));
        Sq = (long long)g->B * g->Mq; Skv = (long long)g->B * g->Mkv;
        rq = Sq * g->Tq; rk = Skv * g->Tk;
        nqb = rq * g->H * g->Qp; nkb = rk * g->H * g->Kp; nvb = rk * g->H * g->Vp;
        npr = rq * g->H * g->Tk; nhd = rq * g->H * g->Vp;
        T *w = (T *)run->work;
        W = w; w += fdnn_attn_weight_count(g);
        T *f = run->res ? (T *)run->res : w;
        if (!run->res) w += nqb + nkb + nvb + npr + nhd;
        QB = f; f += nqb; KB = f; f += nkb; VB = f; f += nvb; PR = f; f += npr; HD = f; f += nhd;
        DQB = f; f += nqb; DKB = f; f += nkb; DVB = f;
        XQ = w; w += rq * g->qS; XK = w; w += rk * g->kS; XV = w; w += rk * g->vS;
        Y = w; w += rq * g->O; DHD = w; w += nhd; X = w; w += npr;
        int *ints = (int *)w;
        ad.H = g->H; ad.Tq = g->Tq; ad.Tk = g->Tk; ad.Mq = g->Mq; ad.Mkv = g->Mkv; ad.one_to_one = g->one_to_one; ad.currIdx = currIdx;
        ad.Sq = Sq;
        ad.lenq = ints; ad.lenkv = ints + Sq; ad.lo = ints + Sq + Skv; ad.hi = ints + Sq + Skv + g->Tq;
        groups = g->one_to_one ? (int)Sq : g->B;
        Mrows = g->one_to_one ? g->Tq : g->Mq * g->Tq;
        cudaError_t e = cudaMemcpyAsync(ints, run->lenq, sizeof(int) * (size_t)Sq, cudaMemcpyHostToDevice, st);
        if (e == cudaSuccess) e = cudaMemcpyAsync(ints + Sq, run->lenkv, sizeof(int) * (size_t)Skv, cudaMemcpyHostToDevice, st);
        if (e == cudaSuccess && run->lo) e = cudaMemcpyAsync(ints + Sq + Skv, run->lo, sizeof(int) * (size_t)g->Tq, cudaMemcpyHostToDevice, st);
        if (e == cudaSuccess && run->hi)
            e = cudaMemcpyAsync(ints + Sq + Skv + g->Tq, run->hi, sizeof(int) * (size_t)g->Tq, cudaMemcpyHostToDevice, st);
        return fdnn_cuda_check(e, "attention: copying sequence lengths and windows");
    }

    const T *wp(int kind) const
    {
        int64_t o = fdnn_attn_weight_off(g, kind, NULL, NULL);
        return o < 0 ? NULL : W + o;
    }

    /* row-major C[M x N] = alpha op(A) op(B) + beta C */
    cudnnStatus_t gemm(int ta, int tb, long long M, long long N, long long K, T alpha, const T *A, long long lda, const T *B, long long ldb, T beta,
                       T *C, long long ldc)
    {
        if (M <= 0 || N <= 0) return CUDNN_STATUS_SUCCESS;
        return fdnn_cublas_check(cb->gemm_ex(ch, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)N, (int)M, (int)K, &alpha, B,
                                             CT<T>::dt, (int)ldb, A, CT<T>::dt, (int)lda, &beta, C, CT<T>::dt, (int)ldc, CT<T>::ct,
                                             CUBLAS_GEMM_DEFAULT),
                                 "attention: cublasGemmEx");
    }

    /* column-major strided batched GEMM over the groups */
    cudnnStatus_t sb(int ta, int tb, long long m, long long n, long long k, T alpha, const T *A, long long lda, long long sA, const T *B,
                     long long ldb, long long sB, T *C, long long ldc, long long sC)
    {
        T beta = 0;
        return fdnn_cublas_check(cb->gemm_strided_batched_ex(ch, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, (int)m, (int)n,
                                                             (int)k, &alpha, A, CT<T>::dt, (int)lda, sA, B, CT<T>::dt, (int)ldb, sB, &beta, C,
                                                             CT<T>::dt, (int)ldc, sC, groups, CT<T>::ct, CUBLAS_GEMM_DEFAULT),
                                 "attention: cublasGemmStridedBatchedEx");
    }

    cudnnStatus_t project(const T *Xin, long long rows, int in, int P, int has_w, const T *WT, const T *bias, T *out)
    {
        int H = g->H;
        if (has_w) {
            FDNN_CHECK(gemm(0, 0, rows, (long long)H * P, in, 1, Xin, in, WT, (long long)H * P, 0, out, (long long)H * P));
            if (bias) k_bias_rows<T><<<grid_for(rows * H * P), BLK, 0, st>>>(out, rows, H * P, bias);
        } else {
            k_copy_heads<T><<<grid_for(rows * H * in), BLK, 0, st>>>(Xin, rows, in, H, out);
        }
        return CUDNN_STATUS_SUCCESS;
    }

    template <typename DT> void load_weights()
    {
        long long nw = fdnn_attn_weight_count(g);
        if (nw) k_convert<DT, T><<<grid_for(nw), BLK, 0, st>>>((const DT *)r->w, W, nw);
    }

    cudnnStatus_t launched(const char *what) { return fdnn_cuda_check(cudaGetLastError(), what); }

    template <typename DT>
    cudnnStatus_t forward(int currIdx, const struct cudnnSeqDataStruct *qd, const DT *q, const DT *resid, const struct cudnnSeqDataStruct *kd,
                          const DT *k, const struct cudnnSeqDataStruct *vd, const DT *v, const struct cudnnSeqDataStruct *od, DT *out)
    {
        FDNN_CHECK(init(r, currIdx));
        load_weights<DT>();
        const int H = g->H, Tq = g->Tq, Tk = g->Tk, Qp = g->Qp, Vp = g->Vp, O = g->O;
        k_gather<DT, T><<<grid_for(rq * g->qS), BLK, 0, st>>>(seqdev(qd), q, Sq, Tq, g->qS, ad.lenq, currIdx, XQ);
        k_gather<DT, T><<<grid_for(rk * g->kS), BLK, 0, st>>>(seqdev(kd), k, Skv, Tk, g->kS, ad.lenkv, -1, XK);
        k_gather<DT, T><<<grid_for(rk * g->vS), BLK, 0, st>>>(seqdev(vd), v, Skv, Tk, g->vS, ad.lenkv, -1, XV);
        FDNN_CHECK(project(XQ, rq, g->qS, Qp, g->qP > 0, wp(0), wp(4), QB));
        FDNN_CHECK(project(XK, rk, g->kS, g->Kp, g->kP > 0, wp(1), wp(5), KB));
        FDNN_CHECK(project(XV, rk, g->vS, Vp, g->vP > 0, wp(2), wp(6), VB));
        const long long HQ = (long long)H * Qp, HV = (long long)H * Vp, HT = (long long)H * Tk;
        for (int i = 0; i < H; i++)
            FDNN_CHECK(sb(1, 0, Tk, Mrows, Qp, (T)g->scale, KB + (long long)i * Qp, HQ, Tk * HQ, QB + (long long)i * Qp, HQ, Mrows * HQ,
                          PR + (long long)i * Tk, HT, Mrows * HT));
        k_softmax<T><<<grid_for(rq * H), BLK, 0, st>>>(ad, PR);
        const T *P = PR;
        if (r->attn_drop) {
            k_attn_drop<T><<<grid_for(npr), BLK, 0, st>>>(ad, dropdev(r->attn_drop), PR, X);
            P = X;
        }
        for (int i = 0; i < H; i++)
            FDNN_CHECK(sb(0, 0, Vp, Mrows, Tk, 1, VB + (long long)i * Vp, HV, Tk * HV, P + (long long)i * Tk, HT, Mrows * HT, HD + (long long)i * Vp,
                          HV, Mrows * HV));
        if (g->oP) {
            FDNN_CHECK(gemm(0, 0, rq, O, HV, 1, HD, HV, wp(3), O, 0, Y, O));
            if (wp(7)) k_bias_rows<T><<<grid_for(rq * O), BLK, 0, st>>>(Y, rq, O, wp(7));
        } else {
            cudaMemcpyAsync(Y, HD, sizeof(T) * (size_t)nhd, cudaMemcpyDeviceToDevice, st);
        }
        k_post<DT, T><<<grid_for(rq * O), BLK, 0, st>>>(ad, dropdev(r->post_drop), O, Y, resid, seqdev(qd));
        k_scatter<DT, T><<<grid_for(rq * O), BLK, 0, st>>>(seqdev(od), out, Sq, Tq, O, ad.lenq, currIdx, Y);
        return launched("attention forward");
    }

    template <typename DT>
    cudnnStatus_t backward_data(const struct cudnnSeqDataStruct *dod, const DT *dout, const struct cudnnSeqDataStruct *dqd, DT *dq,
                                const struct cudnnSeqDataStruct *dkd, DT *dk, const struct cudnnSeqDataStruct *dvd, DT *dv)
    {
        FDNN_CHECK(init(r, -1));
        load_weights<DT>();
        const int H = g->H, Tq = g->Tq, Tk = g->Tk, Qp = g->Qp, Vp = g->Vp, O = g->O;
        const long long HQ = (long long)H * Qp, HV = (long long)H * Vp, HT = (long long)H * Tk;
        k_gather<DT, T><<<grid_for(rq * O), BLK, 0, st>>>(seqdev(dod), dout, Sq, Tq, O, ad.lenq, -1, Y);
        if (r->post_drop) k_post<DT, T><<<grid_for(rq * O), BLK, 0, st>>>(ad, dropdev(r->post_drop), O, Y, (const DT *)NULL, seqdev(dod));
        if (g->oP) FDNN_CHECK(gemm(0, 1, rq, HV, O, 1, Y, O, wp(3), O, 0, DHD, HV));
        else cudaMemcpyAsync(DHD, Y, sizeof(T) * (size_t)nhd, cudaMemcpyDeviceToDevice, st);
        const T *P = PR;
        if (r->attn_drop) {
            k_attn_drop<T><<<grid_for(npr), BLK, 0, st>>>(ad, dropdev(r->attn_drop), PR, X);
            P = X;
        }
        for (int i = 0; i < H; i++) /* dV = P'^T dH */
            FDNN_CHECK(sb(0, 1, Vp, Tk, Mrows, 1, DHD + (long long)i * Vp, HV, Mrows * HV, P + (long long)i * Tk, HT, Mrows * HT,
                          DVB + (long long)i * Vp, HV, Tk * HV));
        for (int i = 0; i < H; i++) /* dP = dH V^T */
            FDNN_CHECK(sb(1, 0, Tk, Mrows, Vp, 1, VB + (long long)i * Vp, HV, Tk * HV, DHD + (long long)i * Vp, HV, Mrows * HV, X + (long long)i * Tk,
                          HT, Mrows * HT));
        k_ds<T><<<grid_for(rq * H), BLK, 0, st>>>(ad, dropdev(r->attn_drop), g->scale, PR, X);
        for (int i = 0; i < H; i++) { /* dQ = dS K, dK = dS^T Q */
            FDNN_CHECK(sb(0, 0, Qp, Mrows, Tk, 1, KB + (long long)i * Qp, HQ, Tk * HQ, X + (long long)i * Tk, HT, Mrows * HT, DQB + (long long)i * Qp,
                          HQ, Mrows * HQ));
            FDNN_CHECK(sb(0, 1, Qp, Tk, Mrows, 1, QB + (long long)i * Qp, HQ, Mrows * HQ, X + (long long)i * Tk, HT, Mrows * HT, DKB + (long long)i * Qp,
                          HQ, Tk * HQ));
        }
        struct { const T *D; T *Xa; long long rows; int in, P, has, wk; } sd[3] = {
            {DQB, XQ, rq, g->qS, Qp, g->qP > 0, 0}, {DKB, XK, rk, g->kS, g->Kp, g->kP > 0, 1}, {DVB, XV, rk, g->vS, Vp, g->vP > 0, 2}};
        for (int a = 0; a < 3; a++) {
            long long HP = (long long)H * sd[a].P;
            if (sd[a].has) FDNN_CHECK(gemm(0, 1, sd[a].rows, sd[a].in, HP, 1, sd[a].D, HP, wp(sd[a].wk), HP, 0, sd[a].Xa, sd[a].in));
            else k_sum_heads<T><<<grid_for(sd[a].rows * sd[a].in), BLK, 0, st>>>(sd[a].D, sd[a].rows, sd[a].in, H, sd[a].Xa);
        }
        k_scatter<DT, T><<<grid_for(rq * g->qS), BLK, 0, st>>>(seqdev(dqd), dq, Sq, Tq, g->qS, ad.lenq, -1, XQ);
        k_scatter<DT, T><<<grid_for(rk * g->kS), BLK, 0, st>>>(seqdev(dkd), dk, Skv, Tk, g->kS, ad.lenkv, -1, XK);
        k_scatter<DT, T><<<grid_for(rk * g->vS), BLK, 0, st>>>(seqdev(dvd), dv, Skv, Tk, g->vS, ad.lenkv, -1, XV);
        return launched("attention backward data");
    }

    template <typename DT>
    cudnnStatus_t backward_weights(int add, const struct cudnnSeqDataStruct *qd, const DT *q, const struct cudnnSeqDataStruct *kd, const DT *k,
                                   const struct cudnnSeqDataStruct *vd, const DT *v, const struct cudnnSeqDataStruct *dod, const DT *dout, DT *dw)
    {
        FDNN_CHECK(init(r, -1));
        const int H = g->H, Tq = g->Tq, Vp = g->Vp, O = g->O;
        long long nw = fdnn_attn_weight_count(g);
        T *G = W;
        cudaMemsetAsync(G, 0, sizeof(T) * (size_t)nw, st);
        k_gather<DT, T><<<grid_for(rq * g->qS), BLK, 0, st>>>(seqdev(qd), q, Sq, Tq, g->qS, ad.lenq, -1, XQ);
        k_gather<DT, T><<<grid_for(rk * g->kS), BLK, 0, st>>>(seqdev(kd), k, Skv, g->Tk, g->kS, ad.lenkv, -1, XK);
        k_gather<DT, T><<<grid_for(rk * g->vS), BLK, 0, st>>>(seqdev(vd), v, Skv, g->Tk, g->vS, ad.lenkv, -1, XV);
        k_gather<DT, T><<<grid_for(rq * O), BLK, 0, st>>>(seqdev(dod), dout, Sq, Tq, O, ad.lenq, -1, Y);
        if (r->post_drop) k_post<DT, T><<<grid_for(rq * O), BLK, 0, st>>>(ad, dropdev(r->post_drop), O, Y, (const DT *)NULL, seqdev(dod));
        struct { const T *D, *Xa; long long rows; int in, P, has, wk, bk; } sd[3] = {
            {DQB, XQ, rq, g->qS, g->Qp, g->qP > 0, 0, 4}, {DKB, XK, rk, g->kS, g->Kp, g->kP > 0, 1, 5}, {DVB, XV, rk, g->vS, Vp, g->vP > 0, 2, 6}};
        for (int a = 0; a < 3; a++) {
            if (!sd[a].has) continue;
            long long HP = (long long)H * sd[a].P;
            T *gw = G + fdnn_attn_weight_off(g, sd[a].wk, NULL, NULL);
            int64_t bo = fdnn_attn_weight_off(g, sd[a].bk, NULL, NULL);
            FDNN_CHECK(gemm(1, 0, sd[a].in, HP, sd[a].rows, 1, sd[a].Xa, sd[a].in, sd[a].D, HP, 0, gw, HP));
            if (bo >= 0) k_colsum<T><<<grid_for(HP), BLK, 0, st>>>(sd[a].D, HP, sd[a].rows, (int)HP, G + bo);
        }
        if (g->oP) {
            long long HV = (long long)H * Vp;
            FDNN_CHECK(gemm(1, 0, HV, O, rq, 1, HD, HV, Y, O, 0, G + fdnn_attn_weight_off(g, 3, NULL, NULL), O));
            int64_t bo = fdnn_attn_weight_off(g, 7, NULL, NULL);
            if (bo >= 0) k_colsum<T><<<grid_for(O), BLK, 0, st>>>(Y, O, rq, O, G + bo);
        }
        if (nw) k_acc_store<DT, T><<<grid_for(nw), BLK, 0, st>>>(G, dw, nw, add);
        return launched("attention backward weights");
    }
};

} // namespace

#define ATTN_DISPATCH(CALL)                                                                                                               \
    switch (r->dt) {                                                                                                                       \
    case CUDNN_DATA_DOUBLE: { Eng<double> e; e.r = r; typedef double DT; return e.CALL; }                                                  \
    case CUDNN_DATA_FLOAT: { Eng<float> e; e.r = r; typedef float DT; return e.CALL; }                                                     \
    case CUDNN_DATA_HALF: { Eng<float> e; e.r = r; typedef __half DT; return e.CALL; }                                                     \
    default: return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "attention data type %s is not supported on the CUDA backend", fdnn_dtype_name(r->dt)); \
    }

extern "C" cudnnStatus_t fdnn_attn_cuda_forward(const fdnn_attn_run *r, int currIdx, const struct cudnnSeqDataStruct *qd, const void *q,
                                                const void *resid, const struct cudnnSeqDataStruct *kd, const void *k,
                                                const struct cudnnSeqDataStruct *vd, const void *v, const struct cudnnSeqDataStruct *od, void *out)
{
    ATTN_DISPATCH(template forward<DT>(currIdx, qd, (const DT *)q, (const DT *)resid, kd, (const DT *)k, vd, (const DT *)v, od, (DT *)out))
}

extern "C" cudnnStatus_t fdnn_attn_cuda_backward_data(const fdnn_attn_run *r, const struct cudnnSeqDataStruct *dod, const void *dout,
                                                      const struct cudnnSeqDataStruct *dqd, void *dq, const struct cudnnSeqDataStruct *dkd, void *dk,
                                                      const struct cudnnSeqDataStruct *dvd, void *dv)
{
    ATTN_DISPATCH(template backward_data<DT>(dod, (const DT *)dout, dqd, (DT *)dq, dkd, (DT *)dk, dvd, (DT *)dv))
}

extern "C" cudnnStatus_t fdnn_attn_cuda_backward_weights(const fdnn_attn_run *r, int add, const struct cudnnSeqDataStruct *qd, const void *q,
                                                         const struct cudnnSeqDataStruct *kd, const void *k, const struct cudnnSeqDataStruct *vd,
                                                         const void *v, const struct cudnnSeqDataStruct *dod, const void *dout, void *dw)
{
    ATTN_DISPATCH(template backward_weights<DT>(add, qd, (const DT *)q, kd, (const DT *)k, vd, (const DT *)v, dod, (const DT *)dout, (DT *)dw))
}
