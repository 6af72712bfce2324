/* CUDA engine of batch normalization and cudnnNormalization* (the GPU twin of
 * src/cpu/norm_cpu.c, same semantics). The problem is a matrix of P parameters (channels for
 * SPATIAL, C*spatial positions for PER_ACTIVATION) by M members each. One kernel per call does
 * everything for a group of parameters: the reductions (mean and biased variance in one
 * shifted pass; for backward sum(g) and sum(g*xhat)) as fixed-order block tree reductions, so
 * results are deterministic, then the elementwise pass (training forward reads x twice). Two block shapes:
 *   row mode (1 x 32..1024): one block per parameter, threads stride over its members; used when
 *     a parameter's members are contiguous-ish (SPATIAL on NCHW-like layouts);
 *   column mode: adjacent parameters per block, the thread rows split the members; used when
 *     adjacent parameters are adjacent in memory, so warps read coalesced rows: PER_ACTIVATION
 *     (32 x 16) and SPATIAL with channel stride 1, i.e. NHWC (32 bytes of channels x up to
 *     1024/width rows, so small C still gets C*sizeof(T)/32 blocks of 1024 threads).
 * Dense packed NCHW/NHWC fast paths: inference is a per-channel coefficient kernel and one flat
 * element-wise pass (bn_prep_infer_kernel + bn_apply_kernel; bn_infer_dense_kernel without
 * scratch). SPATIAL training forward and backward on packed NCHW, FLOAT/HALF/BFLOAT16, on sm_90+:
 * one kernel whose thread-block clusters each own a channel, keep its members (x, and dy) in the
 * blocks' shared memory after a single DRAM read and exchange the partial sums through distributed
 * shared memory (try_bn_cluster; FREEDNN_BN_CLUSTER=0 turns it off). Otherwise, or when a channel
 * does not fit in 8 blocks' shared memory: a partial-sum kernel over
 * many blocks per channel, a per-channel finalize and the flat element-wise pass, with the partial
 * sums in the handle's device scratch (try_bn_fast); when that does not apply, training with
 * beta == 0 falls back to one cooperative kernel that keeps its partial sums in the y buffer
 * (bn_train_coop_kernel). No workspace from the caller is needed; the reserve space holds the
 * pre-activation value of every element as
 * a double at its logical N,C,spatial index, exactly as on the CPU (the backward reads it). */
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <math.h>
#include <string.h>
#include "cuda_norm.h"
#include "ew_dense.cuh"
#include "conv_mma_ptx.cuh"
#include "cluster.cuh"
#include "pdl.cuh"
extern "C" {
#include "cuda_backend.h"
#include "cuda_internal.h"
}

using namespace fdnn_nrm;
using fdnn_ewd::FDiv;
using fdnn_ewd::mk_fdiv;
using fdnn_ewd::fdiv;
using fdnn_ewd::fmod_;

namespace {

/* A data tensor (x, y, z, dy, dx, dz) seen as n, c, flattened spatial index. When the spatial
 * dims are mergeable (uniform inner stride), the spatial offset is s * sst. */
struct DLay {
    long long sn, sc, sst;
    int merged, ns;
    int sd[3];
    long long ss[3];
};
/* A parameter tensor: generic logical offset through up to 5 dims. */
struct PLay {
    int nd;
    int dim[5];
    long long st[5];
};
struct Act {
    int mode, prop_nan;
    double coef, swish;
};

__device__ __forceinline__ long long doff(const DLay &L, long long n, long long c, long long s)
{
    long long o = n * L.sn + c * L.sc;
    if (L.merged) return o + s * L.sst;
    for (int d = L.ns - 1; d >= 0; d--) {
        o += (s % L.sd[d]) * L.ss[d];
        s /= L.sd[d];
    }
    return o;
}

__device__ __forceinline__ long long poff(const PLay &L, long long q)
{
    long long o = 0;
    for (int d = L.nd - 1; d >= 0; d--) {
        o += (q % L.dim[d]) * L.st[d];
        q /= L.dim[d];
    }
    return o;
}

template <typename A> __device__ A act_fwd(const Act &a, A x)
{
    if (isnan(x)) return (a.prop_nan || (a.mode != CUDNN_ACTIVATION_RELU && a.mode != CUDNN_ACTIVATION_CLIPPED_RELU)) ? x : A(0);
    switch (a.mode) {
    case CUDNN_ACTIVATION_SIGMOID: return A(1) / (A(1) + exp(-x));
    case CUDNN_ACTIVATION_RELU: return x > A(0) ? x : A(0);
    case CUDNN_ACTIVATION_TANH: return tanh(x);
    case CUDNN_ACTIVATION_CLIPPED_RELU: return x <= A(0) ? A(0) : x >= A(a.coef) ? A(a.coef) : x;
    case CUDNN_ACTIVATION_ELU: return x > A(0) ? x : A(a.coef) * (exp(x) - A(1));
    case CUDNN_ACTIVATION_SWISH: return x / (A(1) + exp(-A(a.swish) * x));
    default: return x;
    }
}

template <typename A> __device__ A act_bwd(const Act &a, A x, A y, A dy)
{
    switch (a.mode) {
    case CUDNN_ACTIVATION_SIGMOID: return dy * y * (A(1) - y);
    case CUDNN_ACTIVATION_RELU: return x > A(0) ? dy : A(0);
    case CUDNN_ACTIVATION_TANH: return dy * (A(1) - y * y);
    case CUDNN_ACTIVATION_CLIPPED_RELU: return (x > A(0) && x < A(a.coef)) ? dy : A(0);
    case CUDNN_ACTIVATION_ELU: return x > A(0) ? dy : dy * (y + A(a.coef));
    case CUDNN_ACTIVATION_SWISH: {
        A s = A(1) / (A(1) + exp(-A(a.swish) * x));
        return dy * (s + A(a.swish) * x * s * (A(1) - s));
    }
    default: return dy;
    }
}

template <typename T, typename A> struct NP {
    const T *x, *z, *dy;
    T *y, *dx, *dz;
    const A *scale, *bias, *est_mean, *est_var, *saved_mean, *saved_inv;
    A *run_mean, *run_var, *save_mean, *save_inv, *dscale, *dbias;
    double *reserve;
    DLay lx, ly, lz, ldy, ldx, ldz;
    PLay lsb, lmv;
    long long C, S, P;
    unsigned M, N; /* members per parameter; images (M = N*S for SPATIAL, N for PER_ACTIVATION) */
    int pa, ops;
    Act act;
    A alpha, beta, alpha_p, beta_p;
    double eps, factor;
};

/* Sum of v over the block's thread rows (threadIdx.y), per column; fixed order, all threads
 * of the block must call it. */
template <typename A> __device__ A col_sum(A v, A *sh)
{
    int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x;
    sh[ty * bx + tx] = v;
    __syncthreads();
    for (int k = blockDim.y / 2; k > 0; k >>= 1) {
        if (ty < k) sh[ty * bx + tx] += sh[(ty + k) * bx + tx];
        __syncthreads();
    }
    A r = sh[tx];
    __syncthreads();
    return r;
}

/* Member m of parameter q -> n, c, s, walked without a division per element: the cursor holds
 * (n, s) for SPATIAL (m = n*S + s) or (n, 0) for PER_ACTIVATION (m = n) and steps by the thread
 * row count. */
struct Pos {
    long long n, c, s;
};
struct Cur {
    unsigned n, s, dn, ds, S;
};
__device__ __forceinline__ Cur cur_init(int pa, long long S, unsigned m0, unsigned step)
{
    Cur k;
    k.S = pa ? 1u : (unsigned)S;
    k.n = m0 / k.S, k.s = m0 - k.n * k.S;
    k.dn = step / k.S, k.ds = step - k.dn * k.S;
    return k;
}
__device__ __forceinline__ void cur_step(Cur &k)
{
    k.s += k.ds, k.n += k.dn;
    if (k.s >= k.S) k.s -= k.S, k.n++;
}
__device__ __forceinline__ Pos cur_pos(const Cur &k, int pa, long long q, long long cq, long long sq)
{
    Pos r;
    r.n = k.n;
    r.c = pa ? cq : q;
    r.s = pa ? sq : (long long)k.s;
    return r;
}
/* Mean and biased variance from the shifted sums t1 = sum(x-K), t2 = sum((x-K)^2) over M
 * members; rounding can make the variance slightly negative, so it is clamped at 0 (NaN stays NaN). */
template <typename A> __device__ __forceinline__ void shifted_moments(A K, A t1, A t2, A Mf, A *mean, A *var)
{
    const A m1 = t1 / Mf, m2 = t2 / Mf, v = m2 - m1 * m1;
    *var = v < A(0) ? A(0) : v;
    *mean = K + m1;
}

/* Training forward's outputs of the parameter at offset o: the running averages (factor f, the
 * variance unbiased by M/(M-1), the biased value when M == 1) and the saved mean and inverse. */
template <typename T, typename A> __device__ void store_batch_stats(const NP<T, A> &p, long long o, A mean, A var, double invd)
{
    if (p.run_mean) {
        const double f = p.factor, unb = p.M > 1 ? (double)p.M / (double)(p.M - 1) : 1.0;
        p.run_mean[o] = (A)((double)p.run_mean[o] * (1.0 - f) + (double)mean * f);
        p.run_var[o] = (A)((double)p.run_var[o] * (1.0 - f) + (double)var * unb * f);
    }
    if (p.save_mean) {
        p.save_mean[o] = mean;
        p.save_inv[o] = (A)invd;
    }
}

/* dscale, dbias of the parameter at offset ob: alpha_p * d + beta_p * old (beta_p == 0 never reads). */
template <typename T, typename A> __device__ void store_param_grads(const NP<T, A> &p, long long ob, A ds, A db)
{
    A vs = p.alpha_p * ds, vb = p.alpha_p * db;
    if (p.beta_p != A(0)) vs += p.beta_p * p.dscale[ob], vb += p.beta_p * p.dbias[ob];
    p.dscale[ob] = vs;
    p.dbias[ob] = vb;
}

/* Batch mean and biased variance of parameter q in one pass over x, shifted by K = the first
 * member's value (sums of x-K and (x-K)^2; the shift keeps the cancellation small when the mean
 * is large against the spread). Every thread of the block gets the result. */
template <typename T, typename A>
__device__ void batch_stats(const NP<T, A> &p, bool on, long long q, long long cq, long long sq, A *sh, A *mean, A *var)
{
    A s1 = 0, s2 = 0, K = 0;
    if (on) {
        Pos r0;
        r0.n = 0, r0.c = p.pa ? cq : q, r0.s = p.pa ? sq : 0;
        K = to_acc<A>(p.x[doff(p.lx, r0.n, r0.c, r0.s)]);
        for (Cur k = cur_init(p.pa, p.S, threadIdx.y, blockDim.y); k.n < p.N; cur_step(k)) {
            Pos r = cur_pos(k, p.pa, q, cq, sq);
            A d = to_acc<A>(p.x[doff(p.lx, r.n, r.c, r.s)]) - K;
            s1 += d;
            s2 += d * d;
        }
    }
    const A t1 = col_sum(s1, sh), t2 = col_sum(s2, sh);
    shifted_moments(K, t1, t2, (A)p.M, mean, var);
}

template <typename T, typename A, bool TRAIN> __global__ void __launch_bounds__(1024) norm_fwd_kernel(NP<T, A> p)
{
    extern __shared__ __align__(16) unsigned char smraw[];
    A *sh = reinterpret_cast<A *>(smraw);
    for (long long qb = (long long)blockIdx.x * blockDim.x; qb < p.P; qb += (long long)gridDim.x * blockDim.x) {
        long long q = qb + threadIdx.x;
        bool on = q < p.P;
        long long cq = 0, sq = 0;
        if (p.pa && on) cq = q / p.S, sq = q % p.S;
        A mean = 0, inv = 0;
        if (TRAIN) {
            A var;
            batch_stats(p, on, q, cq, sq, sh, &mean, &var);
            double invd = 1.0 / sqrt((double)var + p.eps);
            inv = (A)invd;
            if (on && threadIdx.y == 0) store_batch_stats(p, poff(p.lmv, q), mean, var, invd);
        } else if (on) {
            long long o = poff(p.lmv, q);
            mean = p.est_mean[o];
            inv = (A)(1.0 / sqrt((double)p.est_var[o] + p.eps));
        }
        if (!on) continue;
        long long ob = poff(p.lsb, q);
        A sc = p.scale[ob], bi = p.bias[ob];
        for (Cur k = cur_init(p.pa, p.S, threadIdx.y, blockDim.y); k.n < p.N; cur_step(k)) {
            Pos r = cur_pos(k, p.pa, q, cq, sq);
            A v = sc * (to_acc<A>(p.x[doff(p.lx, r.n, r.c, r.s)]) - mean) * inv + bi;
            if (p.ops == FDNN_NORM_OPS_ADD_ACT) v += to_acc<A>(p.z[doff(p.lz, r.n, r.c, r.s)]);
            if (p.ops != FDNN_NORM_OPS_NORM) {
                if (p.reserve) p.reserve[(r.n * p.C + r.c) * p.S + r.s] = (double)v;
                v = act_fwd(p.act, v);
            }
            long long oy = doff(p.ly, r.n, r.c, r.s);
            A out = p.alpha * v;
            if (p.beta != A(0)) out += p.beta * to_acc<A>(p.y[oy]);
            p.y[oy] = conv<T>::from(out);
        }
    }
}

/* Gradient w.r.t. the pre-activation value (dy itself for plain normalization). */
template <typename T, typename A> __device__ __forceinline__ A grad_at(const NP<T, A> &p, const Pos &r)
{
    A g = to_acc<A>(p.dy[doff(p.ldy, r.n, r.c, r.s)]);
    if (p.ops != FDNN_NORM_OPS_NORM) {
        A pre = (A)p.reserve[(r.n * p.C + r.c) * p.S + r.s];
        g = act_bwd(p.act, pre, act_fwd(p.act, pre), g);
    }
    return g;
}

template <typename T, typename A> __global__ void __launch_bounds__(1024) norm_bwd_kernel(NP<T, A> p)
{
    extern __shared__ __align__(16) unsigned char smraw[];
    A *sh = reinterpret_cast<A *>(smraw);
    for (long long qb = (long long)blockIdx.x * blockDim.x; qb < p.P; qb += (long long)gridDim.x * blockDim.x) {
        long long q = qb + threadIdx.x;
        bool on = q < p.P;
        long long cq = 0, sq = 0;
        if (p.pa && on) cq = q / p.S, sq = q % p.S;
        A mean = 0, inv = 0;
        if (p.saved_mean) {
            if (on) {
                long long o = poff(p.lmv, q);
                mean = p.saved_mean[o];
                inv = p.saved_inv[o];
            }
        } else {
            A var;
            batch_stats(p, on, q, cq, sq, sh, &mean, &var);
            inv = (A)(1.0 / sqrt((double)var + p.eps));
        }
        A db = 0, ds = 0;
        if (on)
            for (Cur k = cur_init(p.pa, p.S, threadIdx.y, blockDim.y); k.n < p.N; cur_step(k)) {
                Pos r = cur_pos(k, p.pa, q, cq, sq);
                A g = grad_at(p, r);
                if (p.ops == FDNN_NORM_OPS_ADD_ACT) p.dz[doff(p.ldz, r.n, r.c, r.s)] = conv<T>::from(g);
                db += g;
                ds += g * (to_acc<A>(p.x[doff(p.lx, r.n, r.c, r.s)]) - mean) * inv;
            }
        db = col_sum(db, sh);
        ds = col_sum(ds, sh);
        if (!on) continue;
        long long ob = poff(p.lsb, q);
        A sc = p.scale[ob], Mf = (A)p.M;
        for (Cur k = cur_init(p.pa, p.S, threadIdx.y, blockDim.y); k.n < p.N; cur_step(k)) {
            Pos r = cur_pos(k, p.pa, q, cq, sq);
            A g = grad_at(p, r);
            A xh = (to_acc<A>(p.x[doff(p.lx, r.n, r.c, r.s)]) - mean) * inv;
            A v = sc * inv * (g - db / Mf - xh * ds / Mf);
            long long od = doff(p.ldx, r.n, r.c, r.s);
            A out = p.alpha * v;
            if (p.beta != A(0)) out += p.beta * to_acc<A>(p.dx[od]);
            p.dx[od] = conv<T>::from(out);
        }
        if (threadIdx.y == 0) store_param_grads(p, ob, ds, db);
    }
}

void mk_dlay(const struct cudnnTensorStruct *t, DLay *L)
{
    memset(L, 0, sizeof *L);
    if (!t) return;
    L->sn = t->stride[0];
    L->sc = t->stride[1];
    L->ns = t->nb_dims - 2;
    long long inner = 1;
    for (int i = 0; i < L->ns; i++) L->sd[i] = t->dim[2 + i], L->ss[i] = t->stride[2 + i];
    L->sst = 1;
    for (int i = L->ns - 1; i >= 0; i--)
        if (L->sd[i] > 1) {
            L->sst = L->ss[i];
            break;
        }
    L->merged = 1;
    for (int i = L->ns - 1; i >= 0; i--) {
        if (L->sd[i] > 1 && L->ss[i] != L->sst * inner) L->merged = 0;
        inner *= L->sd[i];
    }
}

void mk_play(const struct cudnnTensorStruct *t, PLay *L)
{
    L->nd = t->nb_dims;
    for (int i = 0; i < t->nb_dims; i++) L->dim[i] = t->dim[i], L->st[i] = t->stride[i];
}

/* Inference, SPATIAL, plain normalization, x and y with equal packed NCHW or NHWC strides: a
 * flat element-wise pass. Each block first stages scale, bias, mean and 1/sqrt(var+eps) (the
 * same double formula as norm_fwd_kernel) of every channel in shared memory; the channel of
 * flat index i is i % C (NHWC) or (i / S) % C (NCHW), 32-bit. 16-byte loads/stores when aligned. */
template <typename T, typename A>
__global__ void __launch_bounds__(256) bn_infer_dense_kernel(const T *x, T *y, unsigned n, unsigned C, unsigned S, int nhwc, const A *scale,
                                                             const A *bias, const A *mean, const A *var, PLay lsb, PLay lmv, double eps,
                                                             A alpha, A beta, int vec)
{
    extern __shared__ __align__(16) unsigned char smraw[];
    A *sc = reinterpret_cast<A *>(smraw), *bi = sc + C, *mu = bi + C, *iv = mu + C;
    for (unsigned c = threadIdx.x; c < C; c += blockDim.x) {
        const long long ob = poff(lsb, c), om = poff(lmv, c);
        sc[c] = scale[ob], bi[c] = bias[ob], mu[c] = mean[om];
        iv[c] = (A)(1.0 / sqrt((double)var[om] + eps));
    }
    __syncthreads();
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, nth = gridDim.x * blockDim.x;
    unsigned start = 0;
    if (vec) {
        const unsigned L = 16 / sizeof(T), nv = n / L;
        for (unsigned i = tid; i < nv; i += nth) {
            fdnn_ewd::V16<T> a = reinterpret_cast<const fdnn_ewd::V16<T> *>(x)[i], o;
            if (beta != A(0)) o = reinterpret_cast<const fdnn_ewd::V16<T> *>(y)[i];
            /* channel of the vector's first element by division, then stepped (no division per element) */
            const unsigned e0 = i * L, q0 = nhwc ? e0 : e0 / S;
            unsigned c = q0 % C, sp = nhwc ? 0u : e0 - q0 * S;
#pragma unroll
            for (unsigned k = 0; k < L; k++) {
                if (k > 0) {
                    if (nhwc) {
                        if (++c == C) c = 0;
                    } else if (++sp == S) {
                        sp = 0;
                        if (++c == C) c = 0;
                    }
                }
                A out = alpha * (sc[c] * (to_acc<A>(a.e[k]) - mu[c]) * iv[c] + bi[c]);
                if (beta != A(0)) out += beta * to_acc<A>(o.e[k]);
                o.e[k] = conv<T>::from(out);
            }
            reinterpret_cast<fdnn_ewd::V16<T> *>(y)[i] = o;
        }
        start = nv * L;
    }
    for (unsigned e = start + tid; e < n; e += nth) {
        const unsigned c = (nhwc ? e : e / S) % C;
        A out = alpha * (sc[c] * (to_acc<A>(x[e]) - mu[c]) * iv[c] + bi[c]);
        if (beta != A(0)) out += beta * to_acc<A>(y[e]);
        y[e] = conv<T>::from(out);
    }
}

/* 1 = packed NCHW-like (channel stride S, spatial contiguous), 2 = packed NHWC-like, 0 = neither. */
int dense_kind(const DLay &L, long long C, long long S)
{
    if (!L.merged) return 0;
    if (L.sc == S && L.sst == 1 && L.sn == C * S) return 1;
    if (L.sc == 1 && L.sst == C && L.sn == S * C) return 2;
    return 0;
}


/* Element-wise pass of the dense batch-norm paths (inference, training forward, backward) over
 * the flat span of packed NCHW or NHWC data. The per-channel coefficients were computed once
 * per call into the handle's scratch (coef layout below) and every block copies the NPAR arrays
 * it needs into shared memory (a few KB, once per block of a ~2-wave grid). The channel of flat
 * element e is (e / Sc) % C with Sc = S for NCHW and 1 for NHWC, by multiply-high divisions:
 *   CM 0: the channel is constant over a 16-byte vector (NCHW with S % L == 0): once per vector;
 *   CM 1: consecutive over the vector (NHWC with C % L == 0): first channel + k;
 *   CM 2: any other shape: per element.
 * Forward:  out = alpha * (sc * (x - mean) * inv + bi) + beta * out   (norm_fwd_kernel's formula)
 * Backward: out = alpha * (sc*inv * (dy - sum(g)/M - xhat * sum(g*xhat)/M)) + beta * out. */
enum { CO_MEAN = 0, CO_VAR = 1, CO_INV = 2, CO_K1 = 3, CO_DBM = 4, CO_DSM = 5, CO_SC = 6, CO_BI = 7, CO_N = 8 };

/* q: the channel's NPAR coefficients in shared-array order (fwd mean, inv, sc, bi; bwd mean, inv,
 * k1, dbm, dsm). */
template <typename A, bool BWD> __device__ __forceinline__ A bn_apply1(const A *q, A xv, A gv)
{
    if (BWD) {
        const A xh = (xv - q[0]) * q[1];
        return q[2] * (gv - q[3] - xh * q[4]);
    }
    return q[2] * (xv - q[0]) * q[1] + q[3];
}
template <typename A, int NPAR> __device__ __forceinline__ void bn_coef_at(const A *sh, unsigned C, unsigned c, A *q)
{
#pragma unroll
    for (int j = 0; j < NPAR; j++) q[j] = sh[j * C + c];
}

template <typename T, typename A, bool BWD, int CM>
__global__ void __launch_bounds__(256) bn_apply_kernel(const T *x, const T *dy, T *out, unsigned n, FDiv fS, FDiv fC, const A *coef, A alpha,
                                                       A beta, int vec)
{
    extern __shared__ __align__(16) unsigned char smraw[];
    A *sh = reinterpret_cast<A *>(smraw);
    const unsigned C = fC.d;
    /* shared arrays: fwd mean, inv, sc, bi; bwd mean, inv, k1, dbm, dsm */
    const int src_f[4] = {CO_MEAN, CO_INV, CO_SC, CO_BI}, src_b[5] = {CO_MEAN, CO_INV, CO_K1, CO_DBM, CO_DSM};
    const int NPAR = BWD ? 5 : 4;
    fdnn_pdl_wait(); /* launched dependent on bn_fin_kernel, which writes coef */
#pragma unroll
    for (int j = 0; j < NPAR; j++) {
        const A *src = coef + (size_t)(BWD ? src_b[j] : src_f[j]) * C;
        for (unsigned c = threadIdx.x; c < C; c += blockDim.x) sh[j * C + c] = src[c];
    }
    __syncthreads();
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, nth = gridDim.x * blockDim.x;
    unsigned start = 0;
    if (vec) {
        const unsigned L = 16 / sizeof(T), nv = n / L;
        for (unsigned i = tid; i < nv; i += nth) {
            const unsigned e0 = i * L;
            fdnn_ewd::V16<T> a = reinterpret_cast<const fdnn_ewd::V16<T> *>(x)[i], g, o;
            if (BWD) g = reinterpret_cast<const fdnn_ewd::V16<T> *>(dy)[i];
            if (beta != A(0)) o = reinterpret_cast<const fdnn_ewd::V16<T> *>(out)[i];
            const unsigned c0 = CM == 2 ? 0u : fmod_(fC, fdiv(fS, e0));
            A q[NPAR], qv[CM == 1 ? NPAR : 1][CM == 1 ? L : 1];
            if (CM == 0) bn_coef_at<A, NPAR>(sh, C, c0, q);
            if (CM == 1) {
                /* channels c0 .. c0+L-1 (c0 % L == 0, C % L == 0): 16-byte shared loads, lanes 16 B
                 * apart, no bank conflicts (scalar loads 4*sizeof(A) apart would be 4-way) */
                const unsigned QA = 16 / sizeof(A); /* coefficients per 16-byte load */
#pragma unroll
                for (int j = 0; j < NPAR; j++)
#pragma unroll
                    for (unsigned b = 0; b < L / QA; b++) {
                        const fdnn_ewd::V16<A> w = *reinterpret_cast<const fdnn_ewd::V16<A> *>(sh + j * C + c0 + b * QA);
#pragma unroll
                        for (unsigned t = 0; t < QA; t++) qv[j][b * QA + t] = w.e[t];
                    }
            }
#pragma unroll
            for (unsigned k = 0; k < L; k++) {
                if (CM == 1) {
#pragma unroll
                    for (int j = 0; j < NPAR; j++) q[j] = qv[j][k];
                }
                if (CM == 2) bn_coef_at<A, NPAR>(sh, C, fmod_(fC, fdiv(fS, e0 + k)), q);
                A v = alpha * bn_apply1<A, BWD>(q, to_acc<A>(a.e[k]), BWD ? to_acc<A>(g.e[k]) : A(0));
                if (beta != A(0)) v += beta * to_acc<A>(o.e[k]);
                o.e[k] = conv<T>::from(v);
            }
            reinterpret_cast<fdnn_ewd::V16<T> *>(out)[i] = o;
        }
        start = nv * L;
    }
    for (unsigned e = start + tid; e < n; e += nth) {
        A q[NPAR];
        bn_coef_at<A, NPAR>(sh, C, fmod_(fC, fdiv(fS, e)), q);
        A v = alpha * bn_apply1<A, BWD>(q, to_acc<A>(x[e]), BWD ? to_acc<A>(dy[e]) : A(0));
        if (beta != A(0)) v += beta * to_acc<A>(out[e]);
        out[e] = conv<T>::from(v);
    }
}

/* Launches bn_apply_kernel over n elements (the caller checked n < 2^31 - 2^26 and that
 * NPAR * C * sizeof(A) fits in 48 KB of shared memory). */
template <typename T, typename A, bool BWD>
cudnnStatus_t bn_apply_launch(cudnnHandle_t h, const T *x, const T *dy, T *out, long long n, long long C, long long S, int nhwc, const A *coef,
                              A alpha, A beta, const char *name, bool after_fin = false)
{
    const unsigned L = 16 / sizeof(T);
    const int vec = fdnn_ewd::aligned16(x) && fdnn_ewd::aligned16(out) && (!BWD || fdnn_ewd::aligned16(dy));
    const unsigned Sc = nhwc ? 1u : (unsigned)S;
    const FDiv fS = mk_fdiv(Sc), fC = mk_fdiv((unsigned)C);
    const int cm = !vec ? 2 : (Sc % L == 0) ? 0 : (Sc == 1 && C % L == 0) ? 1 : 2;
    const long long items = vec ? n / L + 1 : n;
    long long grid = (items + 255) / 256, cap = (long long)fdnn_cuda_sm_count(h) * 8 * 2; /* 2 waves: the shared-memory copy is per block */
    if (grid > cap) grid = cap;
    if (grid < 1) grid = 1;
    const size_t shm = (BWD ? 5 : 4) * sizeof(A) * (size_t)C;
    cudaStream_t s = fdnn_cuda_stream(h);
    const fdnn_cuda_state *cs = (const fdnn_cuda_state *)h->cuda;
    const int dev = cs ? cs->device : -1, cc = cs ? cs->cc : 0;
    cudaError_t e;
    if (cm == 0)
        e = fdnn_launch_pdl(after_fin && fdnn_pdl_ok<bn_apply_kernel<T, A, BWD, 0>>(dev, cc), bn_apply_kernel<T, A, BWD, 0>, dim3((unsigned)grid), dim3(256),
                            shm, s, x, dy, out, (unsigned)n, fS, fC, coef, alpha, beta, vec);
    else if (cm == 1)
        e = fdnn_launch_pdl(after_fin && fdnn_pdl_ok<bn_apply_kernel<T, A, BWD, 1>>(dev, cc), bn_apply_kernel<T, A, BWD, 1>, dim3((unsigned)grid), dim3(256),
                            shm, s, x, dy, out, (unsigned)n, fS, fC, coef, alpha, beta, vec);
    else
        e = fdnn_launch_pdl(after_fin && fdnn_pdl_ok<bn_apply_kernel<T, A, BWD, 2>>(dev, cc), bn_apply_kernel<T, A, BWD, 2>, dim3((unsigned)grid), dim3(256),
                            shm, s, x, dy, out, (unsigned)n, fS, fC, coef, alpha, beta, vec);
    return fdnn_cuda_check(e, name);
}

/* Inference coefficients: mean, 1/sqrt(var+eps) (norm_fwd_kernel's double formula), scale and
 * bias of every channel into coef, once per call. */
template <typename A>
__global__ void bn_prep_infer_kernel(A *coef, unsigned C, const A *scale, const A *bias, const A *mean, const A *var, PLay lsb, PLay lmv,
                                     double eps)
{
    const unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    const long long ob = poff(lsb, c), om = poff(lmv, c);
    coef[CO_MEAN * C + c] = mean[om];
    coef[CO_INV * C + c] = (A)(1.0 / sqrt((double)var[om] + eps));
    coef[CO_SC * C + c] = scale[ob];
    coef[CO_BI * C + c] = bias[ob];
}

template <typename T, typename A> int try_infer_dense(cudnnHandle_t h, const fdnn_norm_prob *q, const NP<T, A> &p, cudnnStatus_t *st)
{
    if (q->per_activation || q->ops != FDNN_NORM_OPS_NORM || !fdnn_ewd::same_geom(q->x, q->y)) return 0;
    const long long n = (long long)p.N * p.C * p.S;
    const size_t shm = 4 * sizeof(A) * (size_t)p.C;
    if (n >= 0x7fffffffLL - (1LL << 26) || shm > 48 * 1024) return 0;
    const int k = dense_kind(p.lx, p.C, p.S);
    if (!k) return 0;
    fdnn_cuda_state *cs = (fdnn_cuda_state *)h->cuda;
    if (cs && cs->scratch && (size_t)CO_N * sizeof(A) * (size_t)p.C <= cs->scratch_bytes) {
        /* coefficients once per call, then the element-wise pass */
        A *coef = (A *)cs->scratch;
        bn_prep_infer_kernel<A><<<(unsigned)((p.C + 255) / 256), 256, 0, fdnn_cuda_stream(h)>>>(coef, (unsigned)p.C, p.scale, p.bias, p.est_mean,
                                                                                                 p.est_var, p.lsb, p.lmv, p.eps);
        *st = bn_apply_launch<T, A, false>(h, p.x, NULL, p.y, n, p.C, p.S, k == 2, coef, p.alpha, p.beta,
                                           "batch norm inference (bn_prep_infer_kernel, bn_apply_kernel)");
        return 1;
    }
    const int vec = fdnn_ewd::aligned16(q->xp) && fdnn_ewd::aligned16(q->yp);
    const long long items = vec ? n / (16 / (long long)sizeof(T)) + 1 : n;
    bn_infer_dense_kernel<T, A><<<fdnn_ewd::dense_grid(h, items), 256, shm, fdnn_cuda_stream(h)>>>(
        p.x, p.y, (unsigned)n, (unsigned)p.C, (unsigned)p.S, k == 2, p.scale, p.bias, p.est_mean, p.est_var, p.lsb, p.lmv, p.eps, p.alpha,
        p.beta, vec);
    *st = fdnn_cuda_check(cudaGetLastError(), "bn_infer_dense_kernel");
    return 1;
}

/* Training forward, SPATIAL, plain normalization, x and y with equal packed NCHW or NHWC
 * strides, beta == 0 and y not overlapping x: one cooperative kernel over all resident blocks
 * (the old one-block-per-channel-group grid left most SMs idle, e.g. 32 blocks for 256 NHWC
 * float channels). Block b takes channel group b % CG and member range b / CG of RP equal
 * parts. Phase 1: shifted sums (shift = the channel's first member, as batch_stats) of its
 * part, reduced over the block's rows in fixed order, written to scratch -- the y buffer, whose
 * contents are dead until phase 3 (beta == 0). grid.sync. Phase 2: every block adds the RP
 * partials of its channels in ascending order (deterministic, identical in every block), the
 * first part's block writes running/saved statistics. grid.sync. Phase 3: normalize the part.
 * NHWC blocks are 32 channels x 8 rows (coalesced along C); NCHW blocks one channel x 256
 * members (contiguous spatial runs). 32-bit index math (the caller checks the sizes). */
template <typename T, typename A, bool NHWC> __global__ void __launch_bounds__(256) bn_train_coop_kernel(NP<T, A> p, unsigned CG, unsigned RP)
{
    namespace cg = cooperative_groups;
    __shared__ A sh[256];
    __shared__ A s_mean[32], s_inv[32];
    const unsigned C = (unsigned)p.C, S = (unsigned)p.S, M = p.M;
    const unsigned grp = blockIdx.x % CG, rp = blockIdx.x / CG;
    const unsigned tx = threadIdx.x, ty = threadIdx.y, RY = blockDim.y;
    const unsigned c = grp * blockDim.x + tx;
    const bool on = c < C && rp < RP;
    const unsigned lo = (unsigned)((unsigned long long)M * rp / RP), hi = (unsigned)((unsigned long long)M * (rp + 1) / RP);
    A *part = reinterpret_cast<A *>(p.y);
    /* member m -> offset: NHWC m*C + c; NCHW (m / S)*C*S + c*S + m % S (cursor, no division per step) */
    A K = 0, s1 = 0, s2 = 0;
    if (on) {
        K = to_acc<A>(p.x[NHWC ? c : c * S]);
        if (NHWC) {
            for (unsigned m = lo + ty; m < hi; m += RY) {
                const A d = to_acc<A>(p.x[m * C + c]) - K;
                s1 += d, s2 += d * d;
            }
        } else {
            unsigned m = lo + ty, n = m / S, sp = m - n * S;
            const unsigned dn = RY / S, ds = RY - dn * S;
            for (; m < hi; m += RY) {
                const A d = to_acc<A>(p.x[(n * C + c) * S + sp]) - K;
                s1 += d, s2 += d * d;
                sp += ds, n += dn;
                if (sp >= S) sp -= S, n++;
            }
        }
    }
    s1 = col_sum(s1, sh);
    s2 = col_sum(s2, sh);
    if (on && ty == 0) part[2 * ((unsigned long long)rp * C + c)] = s1, part[2 * ((unsigned long long)rp * C + c) + 1] = s2;
    cg::this_grid().sync();
    if (ty == 0) {
        A mean = 0, inv = 0;
        if (on) {
            A t1 = 0, t2 = 0;
            for (unsigned r = 0; r < RP; r++) t1 += part[2 * ((unsigned long long)r * C + c)], t2 += part[2 * ((unsigned long long)r * C + c) + 1];
            A var;
            shifted_moments(K, t1, t2, (A)M, &mean, &var);
            const double invd = 1.0 / sqrt((double)var + p.eps);
            inv = (A)invd;
            if (rp == 0) store_batch_stats(p, poff(p.lmv, c), mean, var, invd);
        }
        s_mean[tx] = mean, s_inv[tx] = inv;
    }
    cg::this_grid().sync(); /* every block has read the partials before y is overwritten */
    if (!on) return;
    const long long ob = poff(p.lsb, c);
    const A sc = p.scale[ob], bi = p.bias[ob], mean = s_mean[tx], inv = s_inv[tx];
    if (NHWC) {
        for (unsigned m = lo + ty; m < hi; m += RY) {
            const unsigned o = m * C + c;
            p.y[o] = conv<T>::from(p.alpha * (sc * (to_acc<A>(p.x[o]) - mean) * inv + bi));
        }
    } else {
        unsigned m = lo + ty, n = m / S, sp = m - n * S;
        const unsigned dn = RY / S, ds = RY - dn * S;
        for (; m < hi; m += RY) {
            const unsigned o = (n * C + c) * S + sp;
            p.y[o] = conv<T>::from(p.alpha * (sc * (to_acc<A>(p.x[o]) - mean) * inv + bi));
            sp += ds, n += dn;
            if (sp >= S) sp -= S, n++;
        }
    }
}

template <typename T, typename A> int try_train_coop(cudnnHandle_t h, const fdnn_norm_prob *q, NP<T, A> &p, cudnnStatus_t *st)
{
    if (q->per_activation || q->ops != FDNN_NORM_OPS_NORM || q->beta != 0.0 || !fdnn_ewd::same_geom(q->x, q->y)) return 0;
    const long long n = (long long)p.N * p.C * p.S;
    if (n >= 0x7fffffffLL) return 0;
    const int k = dense_kind(p.lx, p.C, p.S);
    if (!k) return 0;
    const size_t esz = sizeof(T), bytes = (size_t)n * esz;
    const char *xb = (const char *)q->xp, *yb = (const char *)q->yp;
    if (xb < yb + bytes && yb < xb + bytes) return 0; /* y doubles as scratch: it must not overlap x */
    if ((uintptr_t)yb % sizeof(A) != 0) return 0;        /* ... and hold aligned A values (HALF y may be 2-byte aligned) */
    const fdnn_cuda_state *cs = (const fdnn_cuda_state *)h->cuda;
    if (!cs || !cs->prop.cooperativeLaunch) return 0;
    const bool nhwc = k == 2 && p.C > 1;
    const dim3 block = nhwc ? dim3(32, 8) : dim3(1, 256);
    void *fn = nhwc ? (void *)bn_train_coop_kernel<T, A, true> : (void *)bn_train_coop_kernel<T, A, false>;
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, 256, 0) != cudaSuccess || per_sm < 1) {
        (void)cudaGetLastError();
        return 0;
    }
    const long long maxb = (long long)per_sm * cs->prop.multiProcessorCount;
    const long long CG = nhwc ? (p.C + 31) / 32 : p.C;
    if (CG > maxb) return 0;
    long long RP = maxb / CG;
    if (RP > (long long)p.M / 16) RP = (long long)p.M / 16; /* parts of at least 16 members */
    if (RP < 1) RP = 1;
    while (RP > 1 && (size_t)RP * p.C * 2 * sizeof(A) > bytes) RP--;
    if ((size_t)RP * p.C * 2 * sizeof(A) > bytes) return 0;
    unsigned cg_ = (unsigned)CG, rp_ = (unsigned)RP;
    void *args[] = {&p, &cg_, &rp_};
    cudaError_t e = cudaLaunchCooperativeKernel(fn, dim3((unsigned)(CG * RP)), block, args, 0, fdnn_cuda_stream(h));
    if (e == cudaErrorCooperativeLaunchTooLarge) { /* e.g. fewer SMs available than reported: use the generic kernel */
        (void)cudaGetLastError();
        return 0;
    }
    *st = fdnn_cuda_check(e == cudaSuccess ? cudaGetLastError() : e, "bn_train_coop_kernel");
    return 1;
}

/* ---- Training forward and backward, SPATIAL, plain normalization, every data tensor with the
 * same packed NCHW or NHWC strides (any alpha/beta): three stream-ordered kernels and the
 * handle's device scratch (no allocation, no grid sync, graph-capturable):
 *   bn_part_kernel: RP blocks per channel group each reduce a fixed part of the members to
 *     per-channel partial sums (fixed-order tree over the block) in the scratch. Statistics:
 *     shifted sums of x-K and (x-K)^2 (K = the channel's first member, as batch_stats);
 *     backward: sums of g and g*(x-mean).
 *   bn_fin_kernel: one block per channel adds the RP partials (each thread a fixed strided
 *     subset in ascending order, then fixed shuffle trees and the warp sums in order:
 *     deterministic), writes mean/var (statistics) or the backward coefficients, updates the
 *     running/saved statistics or dscale/dbias.
 *   apply: the flat element-wise pass (bn_infer_dense_kernel with the batch mean/var for the
 *     forward; bn_bwd_dense_kernel for dx).
 * Bytes: forward reads x twice and writes y once (plus y when beta != 0); backward reads x and
 * dy twice and writes dx (plus one more read of x when no saved statistics are given).
 * NCHW blocks: 256 threads on one channel, the part a tile of images x spatial range (rows of
 * contiguous spatial positions, no division per element). NHWC blocks: bx channels x 256/bx
 * rows of the N*H*W members (bx = 32, or the next power of two >= C), loads coalesced along C.
 * Scratch layout (A values): coef[8*C] (mean, var, inv, sc*inv, sum(g)/M, sum(g*xhat)/M, scale,
 * bias; see CO_*), then partials[C][RP][2]. ---- */
struct BnPart {
    unsigned C, S, N, M;
    unsigned RP;  /* parts per channel (group) */
    unsigned bx;  /* NHWC: channel units per block row (a unit is L channels when vec) */
    unsigned vec; /* 16-byte loads: NCHW needs S % L == 0, NHWC C % L == 0, x/dy 16-byte aligned */
    FDiv fSV;     /* NCHW: divisor S / L (vec) or S: member unit -> image */
};

/* Statistics / backward sums of one part of one channel (NCHW) or of a group of channels
 * (NHWC), reduced over the block in fixed order into part[c][rp][2].
 * NCHW: block = 1 x 256 on channel c = blockIdx.x % C, part rp = blockIdx.x / C of the N*S/L
 *   member units (a unit is a 16-byte vector when vec, else one element) in a balanced range;
 *   unit v lies in image v / SV at spatial unit v % SV. Each thread sums its units in order.
 * NHWC: block = bx x 256/bx; thread column tx owns channel unit cu (L consecutive channels when
 *   vec) and walks the rows (members) of its part with stride blockDim.y. */
template <typename T, typename A, bool NHWC, bool BWD, bool VEC>
__global__ void __launch_bounds__(256) bn_part_kernel(const T *x, const T *dy, const A *coef, const A *kmean, long long ks, A *part, BnPart g)
{
    typedef fdnn_ewd::V16<T> V;
    const unsigned L = VEC ? 16 / sizeof(T) : 1;
    __shared__ A sh[256];
    const unsigned C = g.C;
    fdnn_pdl_trigger(); /* bn_fin_kernel may be scheduled once every block has started */
    if (NHWC) {
        const unsigned CU = C / L, CG = (CU + g.bx - 1) / g.bx;
        const unsigned cu = (blockIdx.x % CG) * g.bx + threadIdx.x, rp = blockIdx.x / CG;
        const bool on = cu < CU;
        A s1[L], s2[L], K[L];
#pragma unroll
        for (unsigned k = 0; k < L; k++) s1[k] = s2[k] = K[k] = A(0);
        if (on) {
#pragma unroll
            for (unsigned k = 0; k < L; k++) K[k] = BWD ? (kmean ? kmean[(cu * L + k) * ks] : coef[cu * L + k]) : to_acc<A>(x[cu * L + k]);
            const unsigned lo = (unsigned)((unsigned long long)g.M * rp / g.RP), hi = (unsigned)((unsigned long long)g.M * (rp + 1) / g.RP);
#pragma unroll 4
            for (unsigned m = lo + threadIdx.y; m < hi; m += blockDim.y) {
                const unsigned o = m * CU + cu;
                T xa[L], ga[L];
                if (VEC) {
                    const V xv = reinterpret_cast<const V *>(x)[o];
#pragma unroll
                    for (unsigned k = 0; k < L; k++) xa[k] = xv.e[k];
                    if (BWD) {
                        const V gv = reinterpret_cast<const V *>(dy)[o];
#pragma unroll
                        for (unsigned k = 0; k < L; k++) ga[k] = gv.e[k];
                    }
                } else {
                    xa[0] = x[o];
                    if (BWD) ga[0] = dy[o];
                }
#pragma unroll
                for (unsigned k = 0; k < L; k++) {
                    const A d = to_acc<A>(xa[k]) - K[k];
                    if (BWD) {
                        const A gr = to_acc<A>(ga[k]);
                        s1[k] += gr, s2[k] += gr * d;
                    } else {
                        s1[k] += d, s2[k] += d * d;
                    }
                }
            }
        }
#pragma unroll
        for (unsigned k = 0; k < L; k++) {
            const A t1 = col_sum(s1[k], sh), t2 = col_sum(s2[k], sh);
            if (on && threadIdx.y == 0) {
                const size_t o = (size_t)(cu * L + k) * g.RP + rp;
                part[2 * o] = t1, part[2 * o + 1] = t2;
            }
        }
    } else {
        const unsigned c = blockIdx.x % C, rp = blockIdx.x / C;
        const unsigned SV = g.S / L, VM = g.N * SV;
        const unsigned lo = (unsigned)((unsigned long long)VM * rp / g.RP), hi = (unsigned)((unsigned long long)VM * (rp + 1) / g.RP);
        const A K = BWD ? (kmean ? kmean[c * ks] : coef[c]) : to_acc<A>(x[(size_t)c * g.S]);
        A s1 = 0, s2 = 0;
#pragma unroll 4
        for (unsigned v = lo + threadIdx.y; v < hi; v += blockDim.y) {
            const unsigned n = fdiv(g.fSV, v), o = (n * C + c) * SV + (v - n * SV);
            T xa[L], ga[L];
            if (VEC) {
                const V xv = reinterpret_cast<const V *>(x)[o];
#pragma unroll
                for (unsigned k = 0; k < L; k++) xa[k] = xv.e[k];
                if (BWD) {
                    const V gv = reinterpret_cast<const V *>(dy)[o];
#pragma unroll
                    for (unsigned k = 0; k < L; k++) ga[k] = gv.e[k];
                }
            } else {
                xa[0] = x[o];
                if (BWD) ga[0] = dy[o];
            }
#pragma unroll
            for (unsigned k = 0; k < L; k++) {
                const A d = to_acc<A>(xa[k]) - K;
                if (BWD) {
                    const A gr = to_acc<A>(ga[k]);
                    s1 += gr, s2 += gr * d;
                } else {
                    s1 += d, s2 += d * d;
                }
            }
        }
        s1 = col_sum(s1, sh); /* NCHW blocks are 1 x 256: one column */
        s2 = col_sum(s2, sh);
        if (threadIdx.y == 0) part[2 * ((size_t)c * g.RP + rp)] = s1, part[2 * ((size_t)c * g.RP + rp) + 1] = s2;
    }
}

/* mode 0: statistics of a training forward (running/saved updates); 1: statistics only (backward
 * without saved statistics); 3: backward sums -> coefficients and dscale/dbias; 4: the same with
 * the saved statistics, which it copies into coef for bn_apply_kernel (bn_part_kernel read the
 * saved mean itself: no kernel of its own to copy them first). */
enum { BN_FIN_THREADS = 256 };
template <typename T, typename A> __global__ void __launch_bounds__(BN_FIN_THREADS) bn_fin_kernel(NP<T, A> p, A *coef, const A *part, unsigned RP, int mode)
{
    const unsigned C = (unsigned)p.C;
    const unsigned c = blockIdx.x, t = threadIdx.x, lane = t & 31, warp = t >> 5;
    A *mean_ = coef, *var_ = coef + C, *inv_ = coef + 2 * C, *k1_ = coef + 3 * C, *dbm_ = coef + 4 * C, *dsm_ = coef + 5 * C;
    const long long o = poff(p.lmv, c);
    /* a block per channel: thread t adds partials t, t+256, ... in order (all its loads issued
     * first), a fixed shuffle tree per warp, then thread 0 adds the warp sums in warp order:
     * the same result on every run. A warp per channel (lane-strided, 17 partials a lane at RP =
     * 528) took 13 us on an H100 against 43 us for bn_part_kernel. */
    __shared__ A ws1[BN_FIN_THREADS / 32], ws2[BN_FIN_THREADS / 32];
    /* Launched dependent on bn_part_kernel (pdl.cuh): what it does not write (x, the parameters,
     * the saved statistics) is read before the wait, so those loads overlap its tail. */
    const long long ob = poff(p.lsb, c);
    A K = 0, sc = 0, bi = 0, sm = 0, si = 0;
    if (t == 0) {
        if (mode < 3) K = to_acc<A>(p.x[p.lx.sc == 1 ? (long long)c : (long long)c * p.S]);
        if (mode == 0 || mode >= 3) sc = p.scale[ob];
        if (mode == 0) bi = p.bias[ob];
        if (mode == 4) sm = p.saved_mean[o], si = p.saved_inv[o];
    }
    fdnn_pdl_trigger();
    fdnn_pdl_wait();
    A t1 = 0, t2 = 0;
    const A *pc = part + 2 * (size_t)c * RP; /* the channel's RP pairs are contiguous: coalesced across threads */
#pragma unroll 4
    for (unsigned r = t; r < RP; r += BN_FIN_THREADS) t1 += pc[2 * r], t2 += pc[2 * r + 1];
#pragma unroll
    for (int k = 16; k > 0; k >>= 1) t1 += __shfl_down_sync(0xffffffffu, t1, k), t2 += __shfl_down_sync(0xffffffffu, t2, k);
    if (lane == 0) ws1[warp] = t1, ws2[warp] = t2;
    __syncthreads();
    if (t != 0) return;
    t1 = ws1[0], t2 = ws2[0];
#pragma unroll
    for (int w = 1; w < BN_FIN_THREADS / 32; w++) t1 += ws1[w], t2 += ws2[w];
    const A Mf = (A)p.M;
    if (mode >= 3) {
        A inv;
        if (mode == 4) { /* saved statistics: bn_apply_kernel reads them from coef */
            mean_[c] = sm;
            inv_[c] = inv = si;
        } else {
            inv = inv_[c];
        }
        const A db = t1, ds = t2 * inv;
        k1_[c] = sc * inv;
        dbm_[c] = db / Mf;
        dsm_[c] = ds / Mf;
        store_param_grads(p, ob, ds, db);
        return;
    }
    A mean, var;
    shifted_moments(K, t1, t2, Mf, &mean, &var);
    const double invd = 1.0 / sqrt((double)var + p.eps);
    mean_[c] = mean;
    var_[c] = var;
    inv_[c] = (A)invd;
    if (mode == 0) {
        coef[CO_SC * C + c] = sc;
        coef[CO_BI * C + c] = bi;
        store_batch_stats(p, o, mean, var, invd);
    }
}

/* Picks the partition; returns 0 when the scratch cannot hold coef + partials. At most one wave
 * of resident 256-thread blocks (bps per SM: the kernel's occupancy), so all parts of a channel
 * run at once and finish together (equal work per block, no tail wave). */
template <typename A>
int bn_part_plan(cudnnHandle_t h, int nhwc, int vec, unsigned L, long long N, long long C, long long S, size_t scratch, int bps, BnPart *g,
                 unsigned *grid)
{
    const long long target = (long long)fdnn_cuda_sm_count(h) * bps;
    const long long M = N * S;
    const size_t coef_b = CO_N * sizeof(A) * (size_t)C;
    if (coef_b >= scratch) return 0;
    const long long max_rp = (long long)((scratch - coef_b) / (2 * sizeof(A) * (size_t)C));
    if (max_rp < 1) return 0;
    memset(g, 0, sizeof *g);
    g->C = (unsigned)C, g->S = (unsigned)S, g->N = (unsigned)N, g->M = (unsigned)M, g->vec = (unsigned)vec;
    if (!vec) L = 1;
    if (nhwc) {
        const long long CU = C / L;
        unsigned bx = 1;
        while (bx < 32 && bx < CU) bx *= 2;
        const long long CG = (CU + bx - 1) / bx, by = 256 / bx;
        long long rp = target / CG;
        if (rp > M / (4 * by)) rp = M / (4 * by); /* at least 4 members per thread */
        if (rp > max_rp) rp = max_rp;
        if (rp < 1) rp = 1;
        g->bx = bx, g->RP = (unsigned)rp;
        if (CG * rp > 0x7fffffffLL) return 0;
        *grid = (unsigned)(CG * rp);
    } else {
        const long long units = M / L; /* member units per channel */
        long long rp = target / C;
        if (rp > units / 1024) rp = units / 1024; /* at least 4 units per thread */
        if (rp > max_rp) rp = max_rp;
        if (rp < 1) rp = 1;
        g->RP = (unsigned)rp;
        g->fSV = mk_fdiv((unsigned)(S / L));
        if (C * rp > 0x7fffffffLL) return 0;
        *grid = (unsigned)(C * rp);
    }
    return 1;
}

/* Resident 256-thread blocks per SM of one bn_part_kernel instance (registers decide: 8 at
 * 32 registers a thread, fewer for the 16-bit NHWC kernels), asked once per process */
template <typename T, typename A, bool NHWC, bool BWD, bool VEC> int bn_part_bps()
{
    static int bps = 0;
    if (!bps) {
        int b = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, bn_part_kernel<T, A, NHWC, BWD, VEC>, 256, 0) != cudaSuccess || b < 1) {
            (void)cudaGetLastError();
            b = 8;
        }
        /* FREEDNN_BN_PART_BPS=n plans for n blocks per SM (8 was the fixed plan: a second,
         * partial wave for kernels above 32 registers) */
        const char *e = getenv("FREEDNN_BN_PART_BPS");
        if (e && atoi(e) > 0) b = atoi(e);
        bps = b;
    }
    return bps;
}

/* Plans (with the launched kernel's occupancy) and launches bn_part_kernel; *g gets the plan,
 * whose RP bn_fin_kernel needs. try_bn_fast has checked that a plan exists (fewer blocks per
 * SM only lowers RP). */
template <typename T, typename A, bool NHWC, bool BWD>
void bn_part_launch(cudnnHandle_t h, cudaStream_t s, const NP<T, A> &p, int vec, size_t scratch, const A *coef, const A *kmean, long long ks,
                    A *part, BnPart *g)
{
    const unsigned L = 16 / sizeof(T);
    unsigned grid = 0;
    const int bps = vec ? bn_part_bps<T, A, NHWC, BWD, true>() : bn_part_bps<T, A, NHWC, BWD, false>();
    bn_part_plan<A>(h, NHWC, vec, L, p.N, p.C, p.S, scratch, bps, g, &grid);
    const dim3 blk = NHWC ? dim3(g->bx, 256 / g->bx) : dim3(1, 256);
    if (vec) bn_part_kernel<T, A, NHWC, BWD, true><<<grid, blk, 0, s>>>(p.x, p.dy, coef, kmean, ks, part, *g);
    else bn_part_kernel<T, A, NHWC, BWD, false><<<grid, blk, 0, s>>>(p.x, p.dy, coef, kmean, ks, part, *g);
}

/* What the dense batch-norm paths (try_bn_fast, try_bn_cluster) admit: spatial statistics with no
 * fused ops, y (training) or dy and dx (backward) shaped and strided like x, fewer elements than a
 * 32-bit index with headroom, and packed data. Returns dense_kind's answer (1 NCHW-like, 2
 * NHWC-like), 0 when these paths do not apply. */
template <typename T, typename A> int bn_dense_kind(const fdnn_norm_prob *q, const NP<T, A> &p, int train)
{
    if (q->per_activation || q->ops != FDNN_NORM_OPS_NORM) return 0;
    if (train ? !fdnn_ewd::same_geom(q->x, q->y) : (!fdnn_ewd::same_geom(q->x, q->dy) || !fdnn_ewd::same_geom(q->x, q->dx))) return 0;
    if ((long long)p.N * p.C * p.S >= 0x7fffffffLL - (1LL << 26)) return 0;
    return dense_kind(p.lx, p.C, p.S);
}

/* kind: K_TRAIN or K_BWD. Returns 1 when the fast path ran (status in *st). */
template <typename T, typename A> int try_bn_fast(cudnnHandle_t h, const fdnn_norm_prob *q, NP<T, A> &p, int train, cudnnStatus_t *st)
{
    const int k = bn_dense_kind(q, p, train);
    if (!k) return 0;
    const long long n = (long long)p.N * p.C * p.S;
    /* S == 1 or C == 1: NCHW and NHWC coincide (offset m*C + c); short spatial rows would leave
     * most threads of an NCHW block idle, so those go to the other kernels */
    const int nhwc = k == 2 || p.S == 1 || p.C == 1;
    if (!nhwc && p.S < 128) return 0;
    const size_t shm = (train ? 4 : 5) * sizeof(A) * (size_t)p.C;
    if (shm > 48 * 1024) return 0;
    fdnn_cuda_state *cs = (fdnn_cuda_state *)h->cuda;
    if (!cs || !cs->scratch) return 0;
    const unsigned L = 16 / sizeof(T);
    const int vec = fdnn_ewd::aligned16(q->xp) && (train || fdnn_ewd::aligned16(q->dyp)) && (nhwc ? p.C % L == 0 : p.S % L == 0);
    BnPart g;
    unsigned grid;
    if (!bn_part_plan<A>(h, nhwc, vec, L, p.N, p.C, p.S, cs->scratch_bytes, 8, &g, &grid)) return 0;
    /* backward with saved statistics: their channel stride (a descriptor whose other dims are
     * all 1, as every derived one is) */
    long long ks = 0;
    if (!train && p.saved_mean) {
        ks = -1;
        for (int d = 0; d < p.lmv.nd; d++) {
            if (p.lmv.dim[d] == p.C && ks < 0) ks = p.lmv.st[d];
            else if (p.lmv.dim[d] != 1) return 0;
        }
        if (ks < 0) return 0;
    }
    A *coef = (A *)cs->scratch, *part = coef + CO_N * (size_t)p.C;
    cudaStream_t s = fdnn_cuda_stream(h);
    const unsigned fgrid = (unsigned)p.C; /* bn_fin_kernel: a block per channel */
    /* bn_fin_kernel and bn_apply_kernel start while the kernel before them ends (pdl.cuh) */
    const bool fin_pdl = fdnn_pdl_ok<bn_fin_kernel<T, A>>(cs->device, cs->cc);
    /* statistics (forward; backward without saved statistics) */
    if (train || !p.saved_mean) {
        if (nhwc) bn_part_launch<T, A, true, false>(h, s, p, vec, cs->scratch_bytes, coef, NULL, 0, part, &g);
        else bn_part_launch<T, A, false, false>(h, s, p, vec, cs->scratch_bytes, coef, NULL, 0, part, &g);
        const cudaError_t e = fdnn_launch_pdl(fin_pdl, bn_fin_kernel<T, A>, dim3(fgrid), dim3(BN_FIN_THREADS), 0, s, p, coef, (const A *)part, g.RP,
                                              train ? 0 : 1);
        if (e != cudaSuccess) {
            *st = fdnn_cuda_check(e, "batch norm statistics (bn_part_kernel, bn_fin_kernel)");
            return 1;
        }
    }
    if (train) {
        *st = bn_apply_launch<T, A, false>(h, p.x, NULL, p.y, n, p.C, p.S, nhwc, coef, p.alpha, p.beta,
                                           "batch norm training (bn_part_kernel, bn_fin_kernel, bn_apply_kernel)", true);
        return 1;
    }
    /* backward sums around the mean: the saved one read in place (channel c at c * ks), else
     * the one just computed */
    if (nhwc) bn_part_launch<T, A, true, true>(h, s, p, vec, cs->scratch_bytes, coef, p.saved_mean, ks, part, &g);
    else bn_part_launch<T, A, false, true>(h, s, p, vec, cs->scratch_bytes, coef, p.saved_mean, ks, part, &g);
    const cudaError_t e = fdnn_launch_pdl(fin_pdl, bn_fin_kernel<T, A>, dim3(fgrid), dim3(BN_FIN_THREADS), 0, s, p, coef, (const A *)part, g.RP,
                                          p.saved_mean ? 4 : 3);
    if (e != cudaSuccess) {
        *st = fdnn_cuda_check(e, "batch norm backward (bn_part_kernel, bn_fin_kernel)");
        return 1;
    }
    *st = bn_apply_launch<T, A, true>(h, p.x, p.dy, p.dx, n, p.C, p.S, nhwc, coef, p.alpha, p.beta,
                                      "batch norm backward (bn_part_kernel, bn_fin_kernel, bn_apply_kernel)", true);
    return 1;
}

/* ---- Training forward and backward, SPATIAL, plain normalization, packed NCHW, Hopper (sm_90)
 * and newer: one kernel that reads x (and dy) from DRAM once (try_bn_fast reads them twice).
 * A thread-block cluster of cs blocks owns one channel (grid = C * cs; the hardware starts
 * clusters as SMs free up). Block rank r copies a fixed contiguous range of the channel's N*S
 * members (member m = n*S + s at offset (n*C + c)*S + s; in 16-byte units when S and the
 * pointers allow, else elements) into its shared memory with cp.async, so the statistics, the
 * backward sums and the normalization all read shared memory. Each thread handles the same
 * units in every phase (those it copied), so the data itself needs no block barrier.
 * Reductions: each thread adds its units in order, a fixed shuffle tree per warp and warp 0 over
 * the warp sums give the block's partial, left in its shared memory; after cluster.sync()
 * thread 0 of every block adds the cs partials through distributed shared memory in rank order,
 * so all blocks hold the same totals and the results are deterministic. Formulas are those of
 * bn_fin_kernel and bn_apply1. A block must not exit while the others may still read its
 * partials: each thread arrives on the cluster barrier after the last read and waits on it at the
 * end, so the normalization runs between arrive and wait. ---- */
struct BnCl {
    unsigned cs;  /* blocks per cluster (per channel) */
    unsigned SV;  /* units per image of a channel: S / (16 / sizeof(T)) with 16-byte units, else S */
    unsigned VM;  /* units per channel: N * SV */
    unsigned cap; /* units per tensor in a block's shared memory: ceil(VM / cs) */
};
/* f(j, o) for each unit of this thread in the block's range [lo, hi): j its index in the shared
 * copy, o its global unit offset (n*C + c)*SV + s; a cursor walks (n, s) without divisions. */
template <typename F> __device__ __forceinline__ void cl_units(const BnCl &g, unsigned C, unsigned c, unsigned lo, unsigned hi, F f)
{
    Cur k = cur_init(0, g.SV, lo + threadIdx.x, blockDim.x);
#pragma unroll 4
    for (unsigned j = threadIdx.x; j < hi - lo; j += blockDim.x, cur_step(k)) f(j, (k.n * C + c) * g.SV + k.s);
}

/* a and b summed over the cluster (fdnn_cl::cluster_reduce; slot: this round's pair, not reused
 * within the kernel); valid in thread 0, every thread of the cluster must call it. */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
template <typename A> __device__ __forceinline__ void cl_sum2(A &a, A &b, A *sh, A *slot)
{
    A v[2] = {a, b};
    fdnn_cl::cluster_reduce<fdnn_cl::Sum>(v, sh, slot);
    a = v[0], b = v[1];
}
#endif

template <typename T, typename A, bool BWD, bool VEC> __global__ void __launch_bounds__(512, 2) bn_cluster_kernel(NP<T, A> p, BnCl g)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    typedef typename fdnn_cl::Unit<T, VEC>::type U;
    const unsigned L = sizeof(U) / sizeof(T);
    extern __shared__ __align__(16) unsigned char smraw[];
    __shared__ A sh[64], slot[2][2], q[5]; /* q: bn_apply1's coefficients (fwd mean, inv, sc, bi; bwd mean, inv, k1, dbm, dsm) */
    U *ux = reinterpret_cast<U *>(smraw), *ug = ux + g.cap;
    const unsigned C = (unsigned)p.C, c = blockIdx.x / g.cs, r = cooperative_groups::this_cluster().block_rank(), t = threadIdx.x;
    const unsigned lo = (unsigned)((unsigned long long)g.VM * r / g.cs), hi = (unsigned)((unsigned long long)g.VM * (r + 1) / g.cs);
    const bool stats = !BWD || !p.saved_mean;
    const long long om = poff(p.lmv, c), ob = poff(p.lsb, c);
    /* per-channel inputs first, so their latency hides behind the copy */
    const A K = stats ? to_acc<A>(p.x[(size_t)c * p.S]) : A(0), sc = p.scale[ob];
    A bi = 0;
    if (!BWD) bi = p.bias[ob];
    else if (!stats && t == 0) q[0] = p.saved_mean[om], q[1] = p.saved_inv[om];
    const U *gx = reinterpret_cast<const U *>(p.x), *gg = reinterpret_cast<const U *>(p.dy);
    U *go = reinterpret_cast<U *>(BWD ? p.dx : p.y);
    cl_units(g, C, c, lo, hi, [&](unsigned j, unsigned o) {
        if (VEC) {
            fdnn_ptx::cp_async16((uint32_t)__cvta_generic_to_shared(ux + j), gx + o, 16);
            if (BWD) fdnn_ptx::cp_async16((uint32_t)__cvta_generic_to_shared(ug + j), gg + o, 16);
        } else {
            ux[j].e[0] = __ldg(p.x + o);
            if (BWD) ug[j].e[0] = __ldg(p.dy + o);
        }
    });
    if (VEC) asm volatile("cp.async.wait_all;\n" ::: "memory"); /* this thread's copies: all it reads below */
    A mean = 0, var = 0, db = 0, ds = 0; /* thread 0's, for the per-channel outputs */
    double invd = 0;
    if (stats) {
        A s1 = 0, s2 = 0;
        for (unsigned j = t; j < hi - lo; j += blockDim.x) {
            const U u = ux[j];
#pragma unroll
            for (unsigned k = 0; k < L; k++) {
                const A d = to_acc<A>(u.e[k]) - K;
                s1 += d, s2 += d * d;
            }
        }
        cl_sum2(s1, s2, sh, slot[0]);
        if (t == 0) {
            shifted_moments(K, s1, s2, (A)p.M, &mean, &var);
            invd = 1.0 / sqrt((double)var + p.eps);
            q[0] = mean, q[1] = (A)invd, q[2] = sc, q[3] = bi;
        }
    }
    __syncthreads();
    if (BWD) {
        const A m = q[0];
        A s1 = 0, s2 = 0;
        for (unsigned j = t; j < hi - lo; j += blockDim.x) {
            const U u = ux[j], v = ug[j];
#pragma unroll
            for (unsigned k = 0; k < L; k++) {
                const A gr = to_acc<A>(v.e[k]);
                s1 += gr, s2 += gr * (to_acc<A>(u.e[k]) - m);
            }
        }
        cl_sum2(s1, s2, sh, slot[1]);
        if (t == 0) {
            const A inv = q[1], Mf = (A)p.M;
            db = s1, ds = s2 * inv;
            q[2] = sc * inv, q[3] = db / Mf, q[4] = ds / Mf;
        }
        __syncthreads();
    }
    cooperative_groups::this_cluster().barrier_arrive(); /* this block's reads of other blocks are done */
    /* rank 0's per-channel outputs after the barriers: only warp 0 waits for the old values */
    if (r == 0 && t == 0) {
        if (BWD) store_param_grads(p, ob, ds, db);
        else store_batch_stats(p, om, mean, var, invd);
    }
    A qa[BWD ? 5 : 4];
#pragma unroll
    for (int j = 0; j < (BWD ? 5 : 4); j++) qa[j] = q[j];
    const A alpha = p.alpha, beta = p.beta;
    cl_units(g, C, c, lo, hi, [&](unsigned j, unsigned o) {
        const U u = ux[j];
        U v;
        if (BWD) v = ug[j];
        U out;
        if (beta != A(0)) out = go[o];
#pragma unroll
        for (unsigned k = 0; k < L; k++) {
            A w = alpha * bn_apply1<A, BWD>(qa, to_acc<A>(u.e[k]), BWD ? to_acc<A>(v.e[k]) : A(0));
            if (beta != A(0)) w += beta * to_acc<A>(out.e[k]);
            out.e[k] = conv<T>::from(w);
        }
        go[o] = out;
    });
    cooperative_groups::this_cluster().barrier_wait(); /* the other blocks' reads of this one are done */
#else
    (void)p, (void)g;
#endif
}

/* Per-block shared limit of the cluster kernel (raised once per kernel and device), the size up to
 * which two blocks share an SM (2 x (112 KB + 1 KB reserved + static) <= 228 KB on sm_90), and the
 * smallest share worth splitting a channel for. */
enum { BN_CL_MAX = 200 << 10, BN_CL_PAIR = 112 << 10, BN_CL_MIN = 32 << 10 };

/* Returns 0 when the kernel cannot be used here (nothing launched), else 1 and the launch's error. */
template <typename T, typename A, bool BWD, bool VEC> int bn_cluster_launch(const cudaLaunchConfig_t *cfg, const NP<T, A> &p, const BnCl &g, cudaError_t *err)
{
    static unsigned long long ready;
    if (fdnn_cl::ready(bn_cluster_kernel<T, A, BWD, VEC>, BN_CL_MAX, false, &ready) != cudaSuccess) return 0;
    *err = cudaLaunchKernelEx(cfg, bn_cluster_kernel<T, A, BWD, VEC>, p, g);
    return 1;
}

static inline size_t bn_cl_bytes(long long VM, long long cs, size_t unit) { return (size_t)((VM + cs - 1) / cs) * unit; }

/* kind: K_TRAIN or K_BWD. Returns 1 when the cluster kernel was launched (status in *st), 0 when it
 * does not apply (nothing launched). FREEDNN_BN_CLUSTER=0 turns it off; 1, 2, 4 or 8 force that
 * cluster size where the share fits (tests, benchmarks). */
template <typename T, typename A> int try_bn_cluster(cudnnHandle_t h, const fdnn_norm_prob *q, NP<T, A> &p, int train, cudnnStatus_t *st)
{
    if (p.S < 64 || bn_dense_kind(q, p, train) != 1) return 0;
    const long long C = p.C, n = (long long)p.N * C * p.S;
    const int want = fdnn_env_int("FREEDNN_BN_CLUSTER", -1);
    if (want == 0) return 0;
    const fdnn_cuda_state *cs = (const fdnn_cuda_state *)h->cuda;
    if (!cs || cs->cc < 90 || !cs->prop.clusterLaunch || cs->prop.sharedMemPerBlockOptin < (size_t)BN_CL_MAX + 1024) return 0;
    const unsigned L = 16 / sizeof(T);
    const bool vec = fdnn_ewd::aligned16(q->xp) && fdnn_ewd::aligned16(train ? q->yp : q->dxp) && (train || fdnn_ewd::aligned16(q->dyp)) &&
                     p.S % L == 0;
    const long long SV = vec ? p.S / L : p.S, VM = (long long)p.N * SV;
    const size_t unit = (vec ? 16 : sizeof(T)) * (train ? 1 : 2); /* shared bytes per unit (x, and dy) */
    long long k = 1;
    if (want == 1 || want == 2 || want == 4 || want == 8) {
        k = want;
    } else {
        /* the smallest cluster whose shares fit, doubled (up to 8) while the halves keep >= 32 KB and
         * the shares are too big for two blocks per SM (one block per SM leaves the SM idle between
         * its copy and its writes) or the blocks are fewer than the SMs */
        const long long sms = fdnn_cuda_sm_count(h);
        while (k < 8 && (bn_cl_bytes(VM, k, unit) > BN_CL_MAX ||
                         ((bn_cl_bytes(VM, k, unit) > BN_CL_PAIR || C * k < sms) && bn_cl_bytes(VM, 2 * k, unit) >= BN_CL_MIN)))
            k *= 2;
        /* a few large channels would stream through a few SMs; the partial-sum path spreads them */
        if (C * k * 2 < sms && (size_t)n * sizeof(T) * (train ? 1 : 2) > ((size_t)8 << 20)) return 0;
    }
    if (bn_cl_bytes(VM, k, unit) > BN_CL_MAX) return 0;
    BnCl g;
    g.cs = (unsigned)k, g.SV = (unsigned)SV, g.VM = (unsigned)VM, g.cap = (unsigned)((VM + k - 1) / k);
    cudaLaunchAttribute at;
    const cudaLaunchConfig_t cfg = fdnn_cl::config(&at, (unsigned)k, (unsigned)C, bn_cl_bytes(VM, k, unit) >= BN_CL_MIN ? 512 : 256,
                                                   bn_cl_bytes(VM, k, unit), fdnn_cuda_stream(h));
    cudaError_t e = cudaSuccess;
    int ran;
    if (train) ran = vec ? bn_cluster_launch<T, A, false, true>(&cfg, p, g, &e) : bn_cluster_launch<T, A, false, false>(&cfg, p, g, &e);
    else ran = vec ? bn_cluster_launch<T, A, true, true>(&cfg, p, g, &e) : bn_cluster_launch<T, A, true, false>(&cfg, p, g, &e);
    if (!ran || fdnn_cl::refused(e)) return 0; /* e.g. fewer SMs per GPC than the cluster needs: the older path runs */
    *st = fdnn_cuda_check(e == cudaSuccess ? cudaGetLastError() : e,
                          train ? "batch norm training (bn_cluster_kernel)" : "batch norm backward (bn_cluster_kernel)");
    return 1;
}
/* DOUBLE keeps the older paths (no double cluster kernels are built) */
template <>
int try_bn_cluster<double, double>(cudnnHandle_t, const fdnn_norm_prob *, NP<double, double> &, int, cudnnStatus_t *)
{
    return 0;
}

enum { K_INFER, K_TRAIN, K_BWD };

template <typename T, typename A> cudnnStatus_t run(cudnnHandle_t h, const fdnn_norm_prob *q, int kind)
{
    NP<T, A> p;
    memset(&p, 0, sizeof p);
    const struct cudnnTensorStruct *x = q->x;
    long long N = x->dim[0], C = x->dim[1], S = 1;
    for (int d = 2; d < x->nb_dims; d++) S *= x->dim[d];
    long long P = q->per_activation ? C * S : C, M = q->per_activation ? N : N * S;
    if (M > 0x7fffffffLL || S > 0xffffffffLL)
        return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "more than 2^31-1 elements per normalization parameter is not supported on CUDA");
    if (P == 0 || M == 0) return CUDNN_STATUS_SUCCESS;
    p.x = (const T *)q->xp, p.z = (const T *)q->zp, p.dy = (const T *)q->dyp;
    p.y = (T *)q->yp, p.dx = (T *)q->dxp, p.dz = (T *)q->dzp;
    p.scale = (const A *)q->scale, p.bias = (const A *)q->bias;
    p.est_mean = (const A *)q->est_mean, p.est_var = (const A *)q->est_var;
    if (kind == K_BWD) p.saved_mean = (const A *)q->save_mean, p.saved_inv = (const A *)q->save_invstd;
    else p.save_mean = (A *)q->save_mean, p.save_inv = (A *)q->save_invstd;
    p.run_mean = (A *)q->run_mean, p.run_var = (A *)q->run_var;
    p.dscale = (A *)q->dscale, p.dbias = (A *)q->dbias;
    p.reserve = (double *)q->reserve;
    mk_dlay(q->x, &p.lx), mk_dlay(q->y, &p.ly), mk_dlay(q->z, &p.lz);
    mk_dlay(q->dy, &p.ldy), mk_dlay(q->dx, &p.ldx), mk_dlay(q->dz, &p.ldz);
    mk_play(q->sb, &p.lsb);
    mk_play(q->mv, &p.lmv);
    p.C = C, p.S = S, p.P = P, p.M = (unsigned)M, p.N = (unsigned)N;
    p.pa = q->per_activation, p.ops = q->ops;
    if (q->act) p.act.mode = (int)q->act->mode, p.act.prop_nan = q->act->nan_opt == CUDNN_PROPAGATE_NAN, p.act.coef = q->act->coef,
                p.act.swish = q->act->swish_beta;
    p.alpha = (A)q->alpha, p.beta = (A)q->beta, p.alpha_p = (A)q->alpha_p, p.beta_p = (A)q->beta_p;
    p.eps = q->eps, p.factor = q->factor;

    if (kind == K_INFER) {
        cudnnStatus_t st;
        if (try_infer_dense<T, A>(h, q, p, &st)) return st;
    }
    if (kind == K_TRAIN || kind == K_BWD) {
        cudnnStatus_t st;
        if (try_bn_cluster<T, A>(h, q, p, kind == K_TRAIN, &st)) return st;
        if (try_bn_fast<T, A>(h, q, p, kind == K_TRAIN, &st)) return st;
        if (kind == K_TRAIN && try_train_coop<T, A>(h, q, p, &st)) return st;
    }
    /* column mode when adjacent parameters are adjacent in memory */
    int col = q->per_activation || x->stride[1] == 1;
    dim3 block;
    if (col && q->per_activation) {
        block = dim3(32, M >= 64 ? 16 : 4);
    } else if (col) {
        /* SPATIAL with channel stride 1 (NHWC): few parameters, long columns. Narrow blocks (one
         * 32-byte sector of channels per row, many rows) give C*sizeof(T)/32 blocks of up to 1024
         * threads while every warp load still uses whole sectors. */
        int bx = (int)(32 / sizeof(T)), by = 1024 / bx;
        while (by > 4 && by / 2 >= M) by /= 2;
        block = dim3(bx, by);
    } else {
        /* up to 1024 threads per parameter for long rows (one block per parameter must keep
         * enough loads in flight), fewer for short ones */
        int by = 32;
        while (by < 1024 && by * 4 < M) by *= 2;
        block = dim3(1, by);
    }
    long long nb = (P + block.x - 1) / block.x;
    dim3 grid((unsigned)(nb < (1LL << 20) ? nb : (1LL << 20)));
    size_t shm = sizeof(A) * block.x * block.y;
    cudaStream_t s = fdnn_cuda_stream(h);
    const char *name;
    if (kind == K_INFER) norm_fwd_kernel<T, A, false><<<grid, block, shm, s>>>(p), name = "norm_fwd_kernel (inference)";
    else if (kind == K_TRAIN) norm_fwd_kernel<T, A, true><<<grid, block, shm, s>>>(p), name = "norm_fwd_kernel (training)";
    else norm_bwd_kernel<T, A><<<grid, block, shm, s>>>(p), name = "norm_bwd_kernel";
    return fdnn_cuda_check(cudaGetLastError(), name);
}

cudnnStatus_t dispatch(cudnnHandle_t h, const fdnn_norm_prob *q, int kind)
{
    switch (q->x->dtype) {
    case CUDNN_DATA_FLOAT: return run<float, float>(h, q, kind);
    case CUDNN_DATA_DOUBLE: return run<double, double>(h, q, kind);
    case CUDNN_DATA_HALF: return run<__half, float>(h, q, kind);
    case CUDNN_DATA_BFLOAT16: return run<__nv_bfloat16, float>(h, q, kind);
    default: return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "data type %s is not supported", fdnn_dtype_name(q->x->dtype));
    }
}
} // namespace

extern "C" cudnnStatus_t fdnn_cuda_norm_infer(cudnnHandle_t h, const fdnn_norm_prob *p) { return dispatch(h, p, K_INFER); }
extern "C" cudnnStatus_t fdnn_cuda_norm_train(cudnnHandle_t h, const fdnn_norm_prob *p) { return dispatch(h, p, K_TRAIN); }
extern "C" cudnnStatus_t fdnn_cuda_norm_backward(cudnnHandle_t h, const fdnn_norm_prob *p) { return dispatch(h, p, K_BWD); }
