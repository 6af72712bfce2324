/* Multi-head attention on the CUDA backend: the math, buffer layouts and dropout masks of the
 * CPU engine (src/cpu/attn_cpu.c, docs/attention.md). Engine types: S, the storage type of the
 * engine's buffers and of every GEMM operand (the data type: double, float or __half), and A,
 * the accumulation type (double for DOUBLE, float otherwise). GEMMs run with CUBLAS_COMPUTE_64F
 * for DOUBLE and CUBLAS_COMPUTE_32F otherwise (HALF: FP16 inputs on tensor cores with FP32
 * accumulation; FLOAT: plain FP32, default math, no TF32). Weights are read straight from the
 * weight space.
 *
 * Projections are single GEMMs over all rows (all tokens, all heads); the per-head products
 * Q K^T, P V and their gradients are one cublasGemmBatchedEx call each over (group x head), its
 * pointer arrays built by a small kernel (a group is one query sequence under ONE_TO_ONE, all
 * beams of a batch entry under ALL_TO_ONE, so the beams' sum over a shared K/V sequence happens
 * inside the GEMM's reduction). The scores and their gradients are kept in A (FP32 for HALF);
 * the windowed softmax (with the attention dropout) and its gradient are kernels with one warp
 * per (query row, head). Every buffer takes the CPU engine's 8 bytes per element of the
 * workspace / reserve space and uses the first sizeof(S) of them; the [rows x heads x Tk]
 * buffer X holds the S-typed probabilities / score gradients in its first half and the A-typed
 * scores / dP in its second half (DOUBLE: both in place). The workspace also holds the pointer
 * arrays and the device copies of the sequence lengths and windows; fdnn_attn_work_bytes
 * includes both on every backend. */
#include <stdint.h>
#include <string.h>
#include <math.h>
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
};
template <> struct CT<double> {
    static const cudaDataType dt = CUDA_R_64F;
};
template <> struct CT<__half> {
    static const cudaDataType dt = CUDA_R_16F;
};

__device__ __forceinline__ float ldT(const float *p) { return *p; }
__device__ __forceinline__ double ldT(const double *p) { return *p; }
__device__ __forceinline__ float ldT(const __half *p) { return __half2float(*p); }
__device__ __forceinline__ void stT(float *p, double v) { *p = (float)v; }
__device__ __forceinline__ void stT(double *p, double v) { *p = v; }
__device__ __forceinline__ void stT(__half *p, double v) { *p = __double2half(v); }
/* stores of an accumulation-type value: one hardware conversion (no trip through double) */
__device__ __forceinline__ void stA(float *p, float v) { *p = v; }
__device__ __forceinline__ void stA(double *p, double v) { *p = v; }
__device__ __forceinline__ void stA(__half *p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ float expT(float x) { return expf(x); }
__device__ __forceinline__ double expT(double x) { return exp(x); }

template <typename A> __device__ __forceinline__ A warp_sum(A v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
template <typename A> __device__ __forceinline__ A warp_max(A v)
{
    for (int o = 16; o > 0; o >>= 1) {
        A u = __shfl_xor_sync(0xffffffffu, v, o);
        v = u > v ? u : v;
    }
    return v;
}

inline unsigned grid_for(long long total)
{
    long long b = (total + BLK - 1) / BLK;
    if (b > 65535LL * 32) b = 65535LL * 32;
    if (b < 1) b = 1;
    return (unsigned)b;
}
/* one warp per item */
inline unsigned grid_warps(long long items) { return grid_for(items * 32); }

#define GRID_LOOP(i, total) for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (total); i += (long long)gridDim.x * blockDim.x)
#define WARP_LOOP(e, total)                                                                                                          \
    for (long long e = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; e < (total); e += (long long)gridDim.x * blockDim.x / 32)

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

/* element copy: a plain copy for equal types, else through double (rounded once) */
__device__ __forceinline__ void cpT(__half *d, const __half *s) { *d = *s; }
__device__ __forceinline__ void cpT(float *d, const float *s) { *d = *s; }
__device__ __forceinline__ void cpT(double *d, const double *s) { *d = *s; }
template <typename D, typename S> __device__ __forceinline__ void cpT(D *d, const S *s) { stT(d, (double)ldT(s)); }

/* one block per (sequence, time) row at a time, threads over the vector: no per-element division */
#define ROW_LOOP(row, total) for (long long row = blockIdx.x; row < (total); row += gridDim.x)
const int RBLK = 128;
inline unsigned grid_rows(long long rows) { return (unsigned)(rows < 1 ? 1 : rows > (1LL << 30) ? (1LL << 30) : rows); }

template <typename DT, typename S> __global__ void k_gather(SeqDev d, const DT *x, long long Sn, int Tn, int V, const int *len, int only_t, S *X)
{
    ROW_LOOP(row, Sn * Tn)
    {
        int t = (int)(row % Tn);
        long long s = row / Tn;
        int on = t < len[s] && (only_t < 0 || t == only_t);
        const DT *src = x + sd_off(d, s, t);
        S *dst = X + row * V;
        for (int v = threadIdx.x; v < V; v += blockDim.x) {
            if (on) cpT(dst + v, src + v * d.st_v);
            else stT(dst + v, 0.0);
        }
    }
}

/* pad: what padding rows get when d has no fill (NULL: left untouched) */
template <typename DT, typename S> __global__ void k_scatter(SeqDev d, DT *y, long long Sn, int Tn, int V, const int *len, int only_t, const S *X,
                                                             const S *pad)
{
    ROW_LOOP(row, Sn * Tn)
    {
        int t = (int)(row % Tn);
        long long s = row / Tn;
        if (only_t >= 0 && t != only_t) continue;
        int on = t < len[s];
        if (!on && !d.has_fill && !pad) continue;
        DT *dst = y + sd_off(d, s, t);
        const S *src = X + row * V;
        for (int v = threadIdx.x; v < V; v += blockDim.x) {
            if (on) cpT(dst + v * d.st_v, src + v);
            else if (d.has_fill) stT(dst + v * d.st_v, d.fill);
            else cpT(dst + v * d.st_v, pad + v);
        }
    }
}

template <typename S, typename A> __global__ void k_bias_rows(S *out, long long rows, int cols, const S *b)
{
    GRID_LOOP(i, rows * cols) stT(out + i, (double)((A)ldT(out + i) + (A)ldT(b + i % cols)));
}

template <typename S> __global__ void k_copy_heads(const S *X, long long rows, int in, int H, S *out)
{
    GRID_LOOP(i, rows * H * in)
    {
        int c = (int)(i % in);
        long long r = i / ((long long)H * in);
        out[i] = X[r * in + c];
    }
}

template <typename S, typename A> __global__ void k_sum_heads(const S *D, long long rows, int in, int H, S *X)
{
    GRID_LOOP(i, rows * in)
    {
        int c = (int)(i % in);
        long long r = i / in;
        A s = 0;
        for (int h = 0; h < H; h++) s += (A)ldT(D + (r * H + h) * in + c);
        stT(X + i, (double)s);
    }
}

/* dst[c] += sum over rows of src[r*ld + c]; blocks of 32 x 32 threads, 32 columns each, rows
 * interleaved over threadIdx.y and combined in a fixed order (deterministic) */
template <typename S, typename A> __global__ void k_colsum(const S *src, long long ld, long long rows, int cols, A *dst)
{
    __shared__ A part[32][33];
    int c = blockIdx.x * 32 + threadIdx.x;
    A s = 0;
    if (c < cols)
        for (long long r = threadIdx.y; r < rows; r += 32) s += (A)ldT(src + r * ld + c);
    part[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < cols) {
        A t = 0;
        for (int k = 0; k < 32; k++) t += part[k][threadIdx.x];
        dst[c] += t;
    }
}

/* dst[c] += dout[s, t, c] over the padding rows t >= len[s] of every sequence, one thread per
 * column in a fixed order (deterministic) */
template <typename DT, typename A> __global__ void k_colsum_pad(SeqDev d, const DT *dout, long long Sn, int Tn, int V, const int *len, A *dst)
{
    int c = blockIdx.x * 32 + threadIdx.x;
    if (c >= V) return;
    A s = 0;
    for (long long q = 0; q < Sn; q++)
        for (int t = len[q]; t < Tn; t++) s += (A)ldT(dout + sd_off(d, q, t) + (long long)c * d.st_v);
    dst[c] += s;
}

template <typename DT, typename A> __global__ void k_acc_store(const A *g, DT *dw, long long n, int add)
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

/* One warp per (query row, head) e = row*H + i: Sc holds scale*<q, k> (type A); PR gets the
 * softmax over the window (0 elsewhere); X, when given, the probabilities with the attention
 * dropout mask applied (computed from the stored PR value, as backward recomputes it). Two
 * passes over the row: the running maximum and sum of exponentials (rescaled when the maximum
 * grows), then the stores. Sc may alias X (each lane reads its element before writing it). */
template <typename S, typename A> __global__ void k_softmax(AttnDev a, Drop d, const A *Sc, S *PR, S *X)
{
    const int lane = threadIdx.x & 31;
    WARP_LOOP(e, a.Sq * a.Tq * a.H)
    {
        int i = (int)(e % a.H);
        long long row = e / a.H;
        long long s = row / a.Tq;
        int t = (int)(row % a.Tq);
        const A *sc = Sc + e * a.Tk;
        S *p = PR + e * a.Tk;
        S *x = X ? X + e * a.Tk : NULL;
        int j0 = 0, j1 = 0;
        if (!row_window(a, s, t, &j0, &j1)) {
            for (int j = lane; j < a.Tk; j += 32) {
                stA(p + j, (A)0);
                if (x) stA(x + j, (A)0);
            }
            continue;
        }
        A m = sc[j0], sum = 0; /* the window's first score: a finite start for every lane */
        for (int j = j0 + lane; j < j1; j += 32) {
            A v = sc[j];
            if (v > m) {
                sum = sum * expT(m - v) + (A)1;
                m = v;
            } else {
                sum += expT(v - m);
            }
        }
        A mx = warp_max(m);
        sum = warp_sum(sum * expT(m - mx));
        uint64_t base = (uint64_t)(((s * a.H + i) * a.Tq + t) * a.Tk);
        for (int j = lane; j < a.Tk; j += 32) {
            A v = (j >= j0 && j < j1) ? expT(sc[j] - mx) / sum : (A)0;
            stA(p + j, v);
            if (x) stA(x + j, (A)ldT(p + j) * (A)drop_mult(d, 0, base + j));
        }
    }
}

/* X = PR with the attention dropout mask applied */
template <typename S> __global__ void k_attn_drop(AttnDev a, Drop d, const S *PR, S *X)
{
    GRID_LOOP(e, a.Sq * a.Tq * a.H * a.Tk)
    {
        int j = (int)(e % a.Tk);
        long long rh = e / a.Tk;
        int i = (int)(rh % a.H);
        long long row = rh / a.H;
        long long s = row / a.Tq;
        int t = (int)(row % a.Tq);
        stT(X + e, (double)ldT(PR + e) * drop_mult(d, 0, (uint64_t)(((s * a.H + i) * a.Tq + t) * a.Tk + j)));
    }
}

/* One warp per (query row, head): DP holds dp = <dh, v> (type A); X gets
 * ds = scale * p * (dp*mult - sum_k p_k dp_k mult_k). DP may alias X. */
template <typename S, typename A> __global__ void k_ds(AttnDev a, Drop d, double scale, const S *PR, const A *DP, S *X)
{
    const int lane = threadIdx.x & 31;
    WARP_LOOP(e, a.Sq * a.Tq * a.H)
    {
        int i = (int)(e % a.H);
        long long row = e / a.H;
        long long s = row / a.Tq;
        int t = (int)(row % a.Tq);
        const S *p = PR + e * a.Tk;
        const A *dp = DP + e * a.Tk;
        S *x = X + e * a.Tk;
        int j0 = 0, j1 = 0;
        if (!row_window(a, s, t, &j0, &j1)) {
            for (int j = lane; j < a.Tk; j += 32) stA(x + j, (A)0);
            continue;
        }
        uint64_t base = (uint64_t)(((s * a.H + i) * a.Tq + t) * a.Tk);
        A dot = 0;
        for (int j = j0 + lane; j < j1; j += 32) dot += (A)ldT(p + j) * dp[j] * (A)drop_mult(d, 0, base + j);
        dot = warp_sum(dot);
        for (int j = lane; j < a.Tk; j += 32) {
            A v = (j >= j0 && j < j1) ? (A)scale * (A)ldT(p + j) * (dp[j] * (A)drop_mult(d, 0, base + j) - dot) : (A)0;
            stA(x + j, v);
        }
    }
}

/* output rows: post dropout, then the residual */
template <typename DT, typename S> __global__ void k_post(AttnDev a, Drop d, int O, S *Y, const DT *resid, SeqDev qd)
{
    ROW_LOOP(row, a.Sq * a.Tq)
    {
        long long s = row / a.Tq;
        int t = (int)(row % a.Tq);
        if (t >= a.lenq[s] || (a.currIdx >= 0 && t != a.currIdx)) continue;
        for (int c = threadIdx.x; c < O; c += blockDim.x) {
            long long e = row * O + c;
            double y = (double)ldT(Y + e) * drop_mult(d, 1, (uint64_t)e);
            if (resid) y += (double)ldT(resid + sd_off(qd, s, t) + c * qd.st_v);
            stT(Y + e, y);
        }
    }
}

/* the pointer arrays of a batched GEMM over (group g, head i), entry g*H + i: base + g*sg + i*sh (bytes) */
struct PtrSpec {
    const char *base;
    long long sg, sh;
};
__global__ void k_ptrs(PtrSpec a, PtrSpec b, PtrSpec c, int groups, int H, const void **pa, const void **pb, void **pc)
{
    GRID_LOOP(e, (long long)groups * H)
    {
        long long gi = e / H, i = e % H;
        pa[e] = a.base + gi * a.sg + i * a.sh;
        pb[e] = b.base + gi * b.sg + i * b.sh;
        pc[e] = (void *)(c.base + gi * c.sg + i * c.sh);
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

template <typename S, typename A> struct Eng {
    const fdnn_attn_run *r;
    const fdnn_attn_geom *g;
    cudaStream_t st;
    const fdnn_cublas_api *cb;
    cublasHandle_t ch;
    cublasComputeType_t ctype;
    A *Wg; /* weight gradients (backward weights) */
    S *QB, *KB, *VB, *PR, *HD, *DQB, *DKB, *DVB, *XQ, *XK, *XV, *Y, *DHD, *X;
    A *Xa; /* scores / dP: X's second half (DOUBLE: X itself) */
    void **ptrs;
    long long Sq, Skv, rq, rk, nqb, nkb, nvb, npr, nhd;
    int groups, Mrows;
    AttnDev ad;

    cudnnStatus_t init(const fdnn_attn_run *run, int currIdx)
    {
        r = run;
        g = &run->g;
        st = (cudaStream_t)run->handle->stream;
        FDNN_CHECK(fdnn_cublas_handle(run->handle, &cb, &ch));
        ctype = sizeof(A) == sizeof(double) ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
        Sq = (long long)g->B * g->Mq; Skv = (long long)g->B * g->Mkv;
        rq = Sq * g->Tq; rk = Skv * g->Tk;
        nqb = rq * g->H * g->Qp; nkb = rk * g->H * g->Kp; nvb = rk * g->H * g->Vp;
        npr = rq * g->H * g->Tk; nhd = rq * g->H * g->Vp;
        /* every buffer advances by the CPU engine's 8 bytes per element */
        const size_t E = sizeof(double);
        char *w = (char *)run->work;
        Wg = (A *)w; w += (size_t)fdnn_attn_weight_count(g) * E;
        char *f = run->res ? (char *)run->res : w;
        if (!run->res) w += (size_t)(nqb + nkb + nvb + npr + nhd) * E;
        QB = (S *)f; f += nqb * E; KB = (S *)f; f += nkb * E; VB = (S *)f; f += nvb * E; PR = (S *)f; f += npr * E; HD = (S *)f; f += nhd * E;
        DQB = (S *)f; f += nqb * E; DKB = (S *)f; f += nkb * E; DVB = (S *)f;
        XQ = (S *)w; w += (size_t)(rq * g->qS) * E; XK = (S *)w; w += (size_t)(rk * g->kS) * E; XV = (S *)w; w += (size_t)(rk * g->vS) * E;
        Y = (S *)w; w += (size_t)(rq * g->O) * E; DHD = (S *)w; w += (size_t)nhd * E;
        X = (S *)w;
        Xa = sizeof(S) + sizeof(A) <= E ? (A *)(w + (size_t)npr * (E - sizeof(A))) : (A *)w;
        w += (size_t)npr * E;
        ptrs = (void **)w; w += (size_t)(3 * Sq * g->H + 1) * E;
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

    /* a weight matrix / bias straight from the weight space (data type == S) */
    const S *wp(int kind) const
    {
        int64_t o = fdnn_attn_weight_off(g, kind, NULL, NULL);
        return o < 0 ? NULL : (const S *)r->w + o;
    }

    /* row-major C[M x N] = alpha op(A) op(B) + beta C; A and B of type S, C of type S or A (cdt) */
    cudnnStatus_t gemm(int ta, int tb, long long M, long long N, long long K, A alpha, const S *Am, long long lda, const S *B, long long ldb, A beta,
                       void *C, cudaDataType cdt, long long ldc)
    {
        if (M <= 0 || N <= 0) return CUDNN_STATUS_SUCCESS;
        return fdnn_cublas_check(cb->gemm_ex(ch, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)N, (int)M, (int)K, &alpha, B,
                                             CT<S>::dt, (int)ldb, Am, CT<S>::dt, (int)lda, &beta, C, cdt, (int)ldc, ctype, CUBLAS_GEMM_DEFAULT),
                                 "attention: cublasGemmEx");
    }

    /* column-major C = alpha op(A) op(B), one batched GEMM over (group, head): operand X of
     * entry (gi, i) at X + gi*sX + i*hX (elements of S; C of type C_) */
    template <typename C_>
    cudnnStatus_t bgemm(int ta, int tb, long long m, long long n, long long k, A alpha, const S *Am, long long lda, long long sA, long long hA,
                        const S *B, long long ldb, long long sB, long long hB, C_ *C, long long ldc, long long sC, long long hC)
    {
        const int H = g->H;
        long long nb = (long long)groups * H;
        if (nb <= 0 || m <= 0 || n <= 0) return CUDNN_STATUS_SUCCESS;
        const void **pa = (const void **)ptrs, **pb = (const void **)ptrs + nb;
        void **pc = ptrs + 2 * nb;
        PtrSpec a = {(const char *)Am, sA * (long long)sizeof(S), hA * (long long)sizeof(S)};
        PtrSpec b = {(const char *)B, sB * (long long)sizeof(S), hB * (long long)sizeof(S)};
        PtrSpec c = {(const char *)C, sC * (long long)sizeof(C_), hC * (long long)sizeof(C_)};
        k_ptrs<<<grid_for(nb), BLK, 0, st>>>(a, b, c, groups, H, pa, pb, pc);
        A beta = 0;
        return fdnn_cublas_check(cb->gemm_batched_ex(ch, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, (int)m, (int)n, (int)k,
                                                     &alpha, pa, CT<S>::dt, (int)lda, pb, CT<S>::dt, (int)ldb, &beta, pc, CT<C_>::dt, (int)ldc,
                                                     (int)nb, ctype, CUBLAS_GEMM_DEFAULT),
                                 "attention: cublasGemmBatchedEx");
    }

    cudnnStatus_t project(const S *Xin, long long rows, int in, int P, int has_w, const S *WT, const S *bias, S *out)
    {
        int H = g->H;
        if (has_w) {
            FDNN_CHECK(gemm(0, 0, rows, (long long)H * P, in, 1, Xin, in, WT, (long long)H * P, 0, out, CT<S>::dt, (long long)H * P));
            if (bias) k_bias_rows<S, A><<<grid_for(rows * H * P), BLK, 0, st>>>(out, rows, H * P, bias);
        } else {
            k_copy_heads<S><<<grid_for(rows * H * in), BLK, 0, st>>>(Xin, rows, in, H, out);
        }
        return CUDNN_STATUS_SUCCESS;
    }

    cudnnStatus_t launched(const char *what) { return fdnn_cuda_check(cudaGetLastError(), what); }

    void softmax(const A *Sc, S *Xd)
    {
        k_softmax<S, A><<<grid_warps(rq * g->H), BLK, 0, st>>>(ad, dropdev(r->attn_drop), Sc, PR, Xd);
    }

    void dsoftmax(const A *DP, S *Xd)
    {
        k_ds<S, A><<<grid_warps(rq * g->H), BLK, 0, st>>>(ad, dropdev(r->attn_drop), g->scale, PR, DP, Xd);
    }

    template <typename DT>
    cudnnStatus_t forward(int currIdx, const struct cudnnSeqDataStruct *qd, const DT *q, const DT *resid, const struct cudnnSeqDataStruct *kd,
                          const DT *k, const struct cudnnSeqDataStruct *vd, const DT *v, const struct cudnnSeqDataStruct *od, DT *out)
    {
        FDNN_CHECK(init(r, currIdx));
        const int H = g->H, Tq = g->Tq, Tk = g->Tk, Qp = g->Qp, Vp = g->Vp, O = g->O;
        k_gather<DT, S><<<grid_rows(rq), RBLK, 0, st>>>(seqdev(qd), q, Sq, Tq, g->qS, ad.lenq, currIdx, XQ);
        k_gather<DT, S><<<grid_rows(rk), RBLK, 0, st>>>(seqdev(kd), k, Skv, Tk, g->kS, ad.lenkv, -1, XK);
        k_gather<DT, S><<<grid_rows(rk), RBLK, 0, st>>>(seqdev(vd), v, Skv, Tk, g->vS, ad.lenkv, -1, XV);
        FDNN_CHECK(project(XQ, rq, g->qS, Qp, g->qP > 0, wp(0), wp(4), QB));
        FDNN_CHECK(project(XK, rk, g->kS, g->Kp, g->kP > 0, wp(1), wp(5), KB));
        FDNN_CHECK(project(XV, rk, g->vS, Vp, g->vP > 0, wp(2), wp(6), VB));
        const long long HQ = (long long)H * Qp, HV = (long long)H * Vp, HT = (long long)H * Tk;
        /* scores (type A) = scale Q K^T for all groups and heads */
        FDNN_CHECK(bgemm<A>(1, 0, Tk, Mrows, Qp, (A)g->scale, KB, HQ, Tk * HQ, Qp, QB, HQ, Mrows * HQ, Qp, Xa, HT, Mrows * HT, Tk));
        softmax(Xa, r->attn_drop ? X : (S *)NULL);
        const S *P = r->attn_drop ? X : PR;
        FDNN_CHECK(bgemm<S>(0, 0, Vp, Mrows, Tk, 1, VB, HV, Tk * HV, Vp, P, HT, Mrows * HT, Tk, HD, HV, Mrows * HV, Vp));
        if (g->oP) {
            FDNN_CHECK(gemm(0, 0, rq, O, HV, 1, HD, HV, wp(3), O, 0, Y, CT<S>::dt, O));
            if (wp(7)) k_bias_rows<S, A><<<grid_for(rq * O), BLK, 0, st>>>(Y, rq, O, wp(7));
        } else {
            cudaMemcpyAsync(Y, HD, sizeof(S) * (size_t)nhd, cudaMemcpyDeviceToDevice, st);
        }
        if (r->post_drop || resid) k_post<DT, S><<<grid_rows(rq), RBLK, 0, st>>>(ad, dropdev(r->post_drop), O, Y, resid, seqdev(qd));
        /* padding rows of out (no fill value) get the output projection of a zero attention
         * vector, i.e. the output bias, as NVIDIA's library writes them (measured, tests/compat) */
        k_scatter<DT, S><<<grid_rows(rq), RBLK, 0, st>>>(seqdev(od), out, Sq, Tq, O, ad.lenq, currIdx, Y, g->oP ? wp(7) : (const S *)NULL);
        return launched("attention forward");
    }

    template <typename DT>
    cudnnStatus_t backward_data(const struct cudnnSeqDataStruct *dod, const DT *dout, const struct cudnnSeqDataStruct *dqd, DT *dq,
                                const struct cudnnSeqDataStruct *dkd, DT *dk, const struct cudnnSeqDataStruct *dvd, DT *dv)
    {
        FDNN_CHECK(init(r, -1));
        const int H = g->H, Tq = g->Tq, Tk = g->Tk, Qp = g->Qp, Vp = g->Vp, O = g->O;
        const long long HQ = (long long)H * Qp, HV = (long long)H * Vp, HT = (long long)H * Tk;
        k_gather<DT, S><<<grid_rows(rq), RBLK, 0, st>>>(seqdev(dod), dout, Sq, Tq, O, ad.lenq, -1, Y);
        if (r->post_drop) k_post<DT, S><<<grid_rows(rq), RBLK, 0, st>>>(ad, dropdev(r->post_drop), O, Y, (const DT *)NULL, seqdev(dod));
        if (g->oP) FDNN_CHECK(gemm(0, 1, rq, HV, O, 1, Y, O, wp(3), O, 0, DHD, CT<S>::dt, HV));
        else cudaMemcpyAsync(DHD, Y, sizeof(S) * (size_t)nhd, cudaMemcpyDeviceToDevice, st);
        const S *P = PR;
        if (r->attn_drop) {
            k_attn_drop<S><<<grid_for(npr), BLK, 0, st>>>(ad, dropdev(r->attn_drop), PR, X);
            P = X;
        }
        /* dV = P'^T dH */
        FDNN_CHECK(bgemm<S>(0, 1, Vp, Tk, Mrows, 1, DHD, HV, Mrows * HV, Vp, P, HT, Mrows * HT, Tk, DVB, HV, Tk * HV, Vp));
        /* dP (type A) = dH V^T */
        FDNN_CHECK(bgemm<A>(1, 0, Tk, Mrows, Vp, 1, VB, HV, Tk * HV, Vp, DHD, HV, Mrows * HV, Vp, Xa, HT, Mrows * HT, Tk));
        dsoftmax(Xa, X);
        /* dQ = dS K, dK = dS^T Q */
        FDNN_CHECK(bgemm<S>(0, 0, Qp, Mrows, Tk, 1, KB, HQ, Tk * HQ, Qp, X, HT, Mrows * HT, Tk, DQB, HQ, Mrows * HQ, Qp));
        FDNN_CHECK(bgemm<S>(0, 1, Qp, Tk, Mrows, 1, QB, HQ, Mrows * HQ, Qp, X, HT, Mrows * HT, Tk, DKB, HQ, Tk * HQ, Qp));
        struct { const S *D; S *Xs; long long rows; int in, P, has, wk; } sd[3] = {
            {DQB, XQ, rq, g->qS, Qp, g->qP > 0, 0}, {DKB, XK, rk, g->kS, g->Kp, g->kP > 0, 1}, {DVB, XV, rk, g->vS, Vp, g->vP > 0, 2}};
        for (int a = 0; a < 3; a++) {
            long long HP = (long long)H * sd[a].P;
            if (sd[a].has) FDNN_CHECK(gemm(0, 1, sd[a].rows, sd[a].in, HP, 1, sd[a].D, HP, wp(sd[a].wk), HP, 0, sd[a].Xs, CT<S>::dt, sd[a].in));
            else k_sum_heads<S, A><<<grid_for(sd[a].rows * sd[a].in), BLK, 0, st>>>(sd[a].D, sd[a].rows, sd[a].in, H, sd[a].Xs);
        }
        k_scatter<DT, S><<<grid_rows(rq), RBLK, 0, st>>>(seqdev(dqd), dq, Sq, Tq, g->qS, ad.lenq, -1, XQ, (const S *)NULL);
        k_scatter<DT, S><<<grid_rows(rk), RBLK, 0, st>>>(seqdev(dkd), dk, Skv, Tk, g->kS, ad.lenkv, -1, XK, (const S *)NULL);
        k_scatter<DT, S><<<grid_rows(rk), RBLK, 0, st>>>(seqdev(dvd), dv, Skv, Tk, g->vS, ad.lenkv, -1, XV, (const S *)NULL);
        return launched("attention backward data");
    }

    template <typename DT>
    cudnnStatus_t backward_weights(int add, const struct cudnnSeqDataStruct *qd, const DT *q, const struct cudnnSeqDataStruct *kd, const DT *k,
                                   const struct cudnnSeqDataStruct *vd, const DT *v, const struct cudnnSeqDataStruct *dod, const DT *dout, DT *dw)
    {
        FDNN_CHECK(init(r, -1));
        const int H = g->H, Tq = g->Tq, Vp = g->Vp, O = g->O;
        long long nw = fdnn_attn_weight_count(g);
        A *G = Wg;
        cudaMemsetAsync(G, 0, sizeof(A) * (size_t)nw, st);
        k_gather<DT, S><<<grid_rows(rq), RBLK, 0, st>>>(seqdev(qd), q, Sq, Tq, g->qS, ad.lenq, -1, XQ);
        k_gather<DT, S><<<grid_rows(rk), RBLK, 0, st>>>(seqdev(kd), k, Skv, g->Tk, g->kS, ad.lenkv, -1, XK);
        k_gather<DT, S><<<grid_rows(rk), RBLK, 0, st>>>(seqdev(vd), v, Skv, g->Tk, g->vS, ad.lenkv, -1, XV);
        k_gather<DT, S><<<grid_rows(rq), RBLK, 0, st>>>(seqdev(dod), dout, Sq, Tq, O, ad.lenq, -1, Y);
        if (r->post_drop) k_post<DT, S><<<grid_rows(rq), RBLK, 0, st>>>(ad, dropdev(r->post_drop), O, Y, (const DT *)NULL, seqdev(dod));
        struct { const S *D, *Xs; long long rows; int in, P, has, wk, bk; } sd[3] = {
            {DQB, XQ, rq, g->qS, g->Qp, g->qP > 0, 0, 4}, {DKB, XK, rk, g->kS, g->Kp, g->kP > 0, 1, 5}, {DVB, XV, rk, g->vS, Vp, g->vP > 0, 2, 6}};
        const dim3 cs(32, 32);
        for (int a = 0; a < 3; a++) {
            if (!sd[a].has) continue;
            long long HP = (long long)H * sd[a].P;
            A *gw = G + fdnn_attn_weight_off(g, sd[a].wk, NULL, NULL);
            int64_t bo = fdnn_attn_weight_off(g, sd[a].bk, NULL, NULL);
            FDNN_CHECK(gemm(1, 0, sd[a].in, HP, sd[a].rows, 1, sd[a].Xs, sd[a].in, sd[a].D, HP, 0, gw, CT<A>::dt, HP));
            if (bo >= 0) k_colsum<S, A><<<(unsigned)((HP + 31) / 32), cs, 0, st>>>(sd[a].D, HP, sd[a].rows, (int)HP, G + bo);
        }
        if (g->oP) {
            long long HV = (long long)H * Vp;
            FDNN_CHECK(gemm(1, 0, HV, O, rq, 1, HD, HV, Y, O, 0, G + fdnn_attn_weight_off(g, 3, NULL, NULL), CT<A>::dt, O));
            int64_t bo = fdnn_attn_weight_off(g, 7, NULL, NULL);
            if (bo >= 0) k_colsum<S, A><<<(unsigned)((O + 31) / 32), cs, 0, st>>>(Y, O, rq, O, G + bo);
            /* the padding rows of out hold the output bias when dout's descriptor has no fill,
             * so their dout counts towards its gradient (NVIDIA's library does the same) */
            if (bo >= 0 && !dod->has_fill)
                k_colsum_pad<DT, A><<<(unsigned)((O + 31) / 32), 32, 0, st>>>(seqdev(dod), dout, Sq, Tq, O, ad.lenq, G + bo);
        }
        if (nw) k_acc_store<DT, A><<<grid_for(nw), BLK, 0, st>>>(G, dw, nw, add);
        return launched("attention backward weights");
    }
};

} // namespace

#define ATTN_DISPATCH(CALL)                                                                                                               \
    switch (r->dt) {                                                                                                                       \
    case CUDNN_DATA_DOUBLE: { Eng<double, double> e; e.r = r; typedef double DT; return e.CALL; }                                          \
    case CUDNN_DATA_FLOAT: { Eng<float, float> e; e.r = r; typedef float DT; return e.CALL; }                                              \
    case CUDNN_DATA_HALF: { Eng<__half, float> e; e.r = r; typedef __half DT; return e.CALL; }                                             \
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
