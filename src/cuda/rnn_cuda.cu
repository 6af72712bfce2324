/* CUDA RNN engine: the same semantics, weight-space layout and dropout masks as the CPU engine
 * (src/cpu/rnn_cpu.c), in the compute type T = double for DOUBLE data and float for FLOAT and
 * HALF data. GEMMs read the weights straight from the weight space: DOUBLE with
 * CUBLAS_COMPUTE_64F; FLOAT with CUBLAS_COMPUTE_32F (CUBLAS_COMPUTE_32F_FAST_TF32 only when the
 * descriptor's mathType is CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION); HALF on FP16 tensor cores
 * with FP32 accumulation (CUBLAS_COMPUTE_32F), the FP32 activations being given FP16 copies by
 * the kernels that produce them (see Eng), outputs (gates, dh, dX, gradients) in FP32.
 *
 * Per layer and direction: the input-side products of all time steps in one GEMM
 * (gates[TN x G*H] = X[TN x in] * Wcat^T, the G input matrices being contiguous in the weight
 * space), then per step one recurrent GEMM (Rh[N x G*H] = h[N x P] * Rcat^T) and one fused
 * pointwise kernel computing gates, c, h (biases added there) and writing what backward needs
 * into the reserve space; ragged lengths are masks inside the kernels. Backward data runs the
 * same steps in reverse (one pointwise kernel and one GEMM dh += dpre * Rcat per step) and
 * dX = dpre * Wcat in one GEMM; backward weights is a handful of GEMMs over all steps plus
 * deterministic column sums for the biases.
 *
 * Workspace and reserve hold the same element counts as on the CPU (in T instead of double, so
 * the sizes the queries report are always enough). The sequence lengths (and the packed
 * layout's row offsets) are copied from the host seqLengthArray into the end of the
 * workspace's fixed part with cudaMemcpyAsync on the handle's stream. No allocation, no host
 * synchronisation. */
#include <stdint.h>
#include <string.h>
#include <cuda_runtime.h>
#include "cuda_dev.h"
#include "cuda_adv.h"
#include "cublas_loader.h"
extern "C" {
#include "cuda_backend.h"
}
#include "../core/philox.h"

using fdnn_dev::grid_for;

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
/* stores in the compute type: one hardware conversion (no trip through double) */
__device__ __forceinline__ void stF(float *p, float v) { *p = v; }
__device__ __forceinline__ void stF(double *p, double v) { *p = v; }
__device__ __forceinline__ void stF(__half *p, float v) { *p = __float2half_rn(v); }
/* optional shadow store: the GEMM-operand copy (HALF data) of a value kept in FP32 */
template <typename G, typename V> __device__ __forceinline__ void shT(G *p, long long i, V v)
{
    if (p) stF(p + i, v);
}

__device__ __forceinline__ float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }
__device__ __forceinline__ float tanhT(float x) { return tanhf(x); }
__device__ __forceinline__ double tanhT(double x) { return tanh(x); }

struct IoDev {
    int layout, T, N, V;
    const long long *pack;
    const int *len;
    int has_fill;
    double fill;
};

__device__ __forceinline__ long long io_off(const IoDev &io, int t, int n)
{
    if (io.layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED) return ((long long)t * io.N + n) * io.V;
    if (io.layout == CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED) return ((long long)n * io.T + t) * io.V;
    return (io.pack[t] + n) * io.V;
}

__device__ __forceinline__ int tidx(int d, int s, int len) { return s < len ? (d == 0 ? s : len - 1 - s) : -1; }

#define GRID_LOOP(i, total) for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (total); i += (long long)gridDim.x * blockDim.x)

template <typename DT, typename T> __global__ void k_convert(const DT *src, T *dst, long long n)
{
    GRID_LOOP(i, n) dst[i] = (T)ldT(src + i);
}

template <typename T, typename G> __global__ void k_to(const T *src, G *dst, long long n)
{
    GRID_LOOP(i, n) stF(dst + i, src[i]);
}

/* one block per (t, n) row at a time, threads over the vector (launch: grid_rows(T*N), RBLK) */
#define ROW_LOOP(row, total) for (long long row = blockIdx.x; row < (total); row += gridDim.x)
const int RBLK = 128;
inline unsigned grid_rows(long long rows) { return (unsigned)(rows < 1 ? 1 : rows > (1LL << 30) ? (1LL << 30) : rows); }

/* dense[(t*N+n)*V + v] = x(t, n, v) for t < len[n], else 0 */
template <typename DT, typename T> __global__ void k_gather(IoDev io, const DT *x, T *dense)
{
    ROW_LOOP(row, (long long)io.T * io.N)
    {
        int n = (int)(row % io.N), t = (int)(row / io.N);
        T *d = dense + row * io.V;
        if (t < io.len[n]) {
            const DT *src = x + io_off(io, t, n);
            for (int v = threadIdx.x; v < io.V; v += blockDim.x) d[v] = (T)ldT(src + v);
        } else {
            for (int v = threadIdx.x; v < io.V; v += blockDim.x) d[v] = (T)0;
        }
    }
}

template <typename DT, typename T> __global__ void k_scatter(IoDev io, const T *dense, DT *y)
{
    ROW_LOOP(row, (long long)io.T * io.N)
    {
        int n = (int)(row % io.N), t = (int)(row / io.N);
        const T *d = dense + row * io.V;
        if (t < io.len[n]) {
            DT *dst = y + io_off(io, t, n);
            for (int v = threadIdx.x; v < io.V; v += blockDim.x) stF(dst + v, d[v]);
        } else if (io.has_fill && io.layout != CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED) {
            DT *dst = y + io_off(io, t, n);
            for (int v = threadIdx.x; v < io.V; v += blockDim.x) stT(dst + v, io.fill);
        }
    }
}

template <typename DT, typename T, typename G> __global__ void k_load_state(const DT *src, T *dst, long long n, G *dsth)
{
    GRID_LOOP(i, n)
    {
        T v = src ? (T)ldT(src + i) : (T)0;
        dst[i] = v;
        shT(dsth, i, v);
    }
}

template <typename DT, typename T> __global__ void k_store_state(const T *src, DT *dst, long long n)
{
    GRID_LOOP(i, n) stF(dst + i, src[i]);
}

template <typename DT, typename T> __global__ void k_acc_store(const T *g, DT *dw, long long n, int add)
{
    GRID_LOOP(i, n) stT(dw + i, add ? (double)ldT(dw + i) + (double)g[i] : (double)g[i]);
}

template <typename T> __global__ void k_skip_fwd(const T *X, T *gates, long long TN, int G, int H, int in)
{
    long long GH = (long long)G * H;
    GRID_LOOP(i, TN * GH)
    {
        long long r = i / GH;
        int j = (int)(i % GH) % H;
        gates[i] = X[r * in + j];
    }
}

template <typename T> __global__ void k_skip_bwd(const T *dpre, T *dX, long long TN, int G, int H, int in)
{
    GRID_LOOP(i, TN * H)
    {
        long long r = i / H;
        int j = (int)(i % H);
        T s = 0;
        for (int k = 0; k < G; k++) s += dpre[r * G * H + k * H + j];
        dX[r * in + j] += s;
    }
}

/* element idx of a layer output (T*N*D*P): scaled by the Philox mask of layer l */
template <typename T> __global__ void k_dropout(T *Y, long long n, unsigned long long seed, int l, float p)
{
    GRID_LOOP(i, n)
    {
        double sc = p >= 1.0f ? 0.0 : (fdnn_dropout_keep(seed, (uint64_t)l, (uint64_t)i, p) ? 1.0 / (1.0 - p) : 0.0);
        Y[i] = (T)((double)Y[i] * sc);
    }
}

struct StepArgs {
    int mode, G, H, P, N, D, d, s, has_proj, clip;
    double lclip, rclip;
    const int *len;
};

template <typename T, typename G>
__global__ void k_fwd_step(StepArgs a, T *gates, const T *Rh, const T *bw, const T *br, T *cc, T *craw, T *hh, T *hp, T *ghr, T *hs, T *cs,
                           T *Y, T *hcur_out, G *hsh, G *hcur_outh)
{
    const int H = a.H, P = a.P, GH = a.G * H;
    GRID_LOOP(e, (long long)a.N * H)
    {
        int n = (int)(e / H), i = (int)(e % H);
        int t = tidx(a.d, a.s, a.len[n]);
        if (t < 0) continue;
        long long row = (long long)t * a.N + n;
        T *gt = gates + row * GH;
        const T *rh = Rh + (long long)n * GH;
        T hcur;
        if (a.mode == CUDNN_LSTM) {
            T p[4];
            for (int k = 0; k < 4; k++) p[k] = gt[k * H + i] + (bw ? bw[k * H + i] : (T)0) + rh[k * H + i] + (br ? br[k * H + i] : (T)0);
            T ig = sigm(p[0]), fg = sigm(p[1]), gg = tanhT(p[2]), og = sigm(p[3]);
            T cn = fg * cs[(long long)n * H + i] + ig * gg;
            craw[row * H + i] = cn;
            if (a.clip) {
                if (cn < (T)a.lclip) cn = (T)a.lclip;
                else if (cn > (T)a.rclip) cn = (T)a.rclip;
            }
            gt[i] = ig; gt[H + i] = fg; gt[2 * H + i] = gg; gt[3 * H + i] = og;
            cc[row * H + i] = cn;
            cs[(long long)n * H + i] = cn;
            hcur = og * tanhT(cn);
        } else if (a.mode == CUDNN_GRU) {
            T pr = gt[i] + (bw ? bw[i] : (T)0) + rh[i] + (br ? br[i] : (T)0);
            T pz = gt[H + i] + (bw ? bw[H + i] : (T)0) + rh[H + i] + (br ? br[H + i] : (T)0);
            T rr = rh[2 * H + i] + (br ? br[2 * H + i] : (T)0);
            T rg = sigm(pr), zg = sigm(pz);
            T hn = tanhT(gt[2 * H + i] + (bw ? bw[2 * H + i] : (T)0) + rg * rr);
            ghr[row * H + i] = rr;
            gt[i] = rg; gt[H + i] = zg; gt[2 * H + i] = hn;
            hcur = (1 - zg) * hn + zg * hs[(long long)n * P + i];
        } else {
            T p = gt[i] + (bw ? bw[i] : (T)0) + rh[i] + (br ? br[i] : (T)0);
            T v = a.mode == CUDNN_RNN_RELU ? (p > 0 ? p : (T)0) : tanhT(p);
            gt[i] = v;
            hcur = v;
        }
        hh[row * H + i] = hcur;
        if (a.has_proj) {
            hcur_out[(long long)n * H + i] = hcur;
            shT(hcur_outh, (long long)n * H + i, hcur);
        } else {
            hp[row * P + i] = hcur;
            hs[(long long)n * P + i] = hcur;
            shT(hsh, (long long)n * P + i, hcur);
            Y[row * a.D * P + a.d * P + i] = hcur;
        }
    }
}

template <typename T, typename G> __global__ void k_proj_copy(StepArgs a, const T *pout, T *hp, T *hs, T *Y, G *hsh)
{
    const int P = a.P;
    GRID_LOOP(e, (long long)a.N * P)
    {
        int n = (int)(e / P), j = (int)(e % P);
        int t = tidx(a.d, a.s, a.len[n]);
        if (t < 0) continue;
        long long row = (long long)t * a.N + n;
        T v = pout[e];
        hp[row * P + j] = v;
        hs[e] = v;
        shT(hsh, e, v);
        Y[row * a.D * P + a.d * P + j] = v;
    }
}

/* projection case: dproj[row] = dY + dh; S[n] = the same (0 for finished sequences) */
template <typename T, typename G> __global__ void k_bwd_pre(StepArgs a, const T *dY, const T *dh, T *dproj, T *S, G *Sh)
{
    const int P = a.P;
    GRID_LOOP(e, (long long)a.N * P)
    {
        int n = (int)(e / P), j = (int)(e % P);
        int t = tidx(a.d, a.s, a.len[n]);
        if (t < 0) { S[e] = 0; shT(Sh, e, (T)0); continue; }
        long long row = (long long)t * a.N + n;
        T v = dY[row * a.D * P + a.d * P + j] + dh[e];
        dproj[row * P + j] = v;
        S[e] = v;
        shT(Sh, e, v);
    }
}

/* hprev0: the initial h of this direction (GRU), cprev0: the initial c (LSTM), both N x (P|H) */
/* drh, dph: the GEMM-operand copies of tmp (dr) and dpre (NULL when the GEMMs read the FP32 buffers) */
template <typename T, typename G>
__global__ void k_bwd_step(StepArgs a, const T *gates, const T *cc, const T *craw, const T *hp, const T *ghr, const T *dY, T *dh, T *dc,
                           const T *dhh_proj, T *dpre, T *dproj, T *tmp, const T *hprev0, const T *cprev0, G *drh, G *dph)
{
    const int H = a.H, P = a.P, GH = a.G * H;
    GRID_LOOP(e, (long long)a.N * H)
    {
        int n = (int)(e / H), i = (int)(e % H);
        int t = tidx(a.d, a.s, a.len[n]);
        T *dr = tmp + (long long)n * GH;
        G *drg = drh ? drh + (long long)n * GH : NULL;
        if (t < 0) {
            for (int k = 0; k < a.G; k++) {
                dr[k * H + i] = 0;
                shT(drg, k * H + i, (T)0);
            }
            continue;
        }
        int tp = a.d == 0 ? t - 1 : t + 1;
        int first = a.s == 0;
        long long row = (long long)t * a.N + n, prow = (long long)tp * a.N + n;
        const T *gt = gates + row * GH;
        T *dp = dpre + row * GH;
        G *dpg = dph ? dph + row * GH : NULL;
        T dhh;
        if (a.has_proj) {
            dhh = dhh_proj[e];
        } else {
            dhh = dY[row * a.D * P + a.d * P + i] + dh[(long long)n * P + i];
            dproj[row * P + i] = dhh;
        }
        if (a.mode == CUDNN_LSTM) {
            T ig = gt[i], fg = gt[H + i], gg = gt[2 * H + i], og = gt[3 * H + i];
            T ct = cc[row * H + i], th = tanhT(ct);
            T cprev = first ? cprev0[(long long)n * H + i] : cc[prow * H + i];
            T dct = dc[(long long)n * H + i] + dhh * og * (1 - th * th);
            if (a.clip) {
                T cr = craw[row * H + i];
                if (cr < (T)a.lclip || cr > (T)a.rclip) dct = 0;
            }
            T d0 = dct * gg * ig * (1 - ig), d1 = dct * cprev * fg * (1 - fg);
            T d2 = dct * ig * (1 - gg * gg), d3 = dhh * th * og * (1 - og);
            dp[i] = dr[i] = d0;
            dp[H + i] = dr[H + i] = d1;
            dp[2 * H + i] = dr[2 * H + i] = d2;
            dp[3 * H + i] = dr[3 * H + i] = d3;
            shT(dpg, i, d0); shT(dpg, H + i, d1); shT(dpg, 2 * H + i, d2); shT(dpg, 3 * H + i, d3);
            shT(drg, i, d0); shT(drg, H + i, d1); shT(drg, 2 * H + i, d2); shT(drg, 3 * H + i, d3);
            dc[(long long)n * H + i] = dct * fg;
            if (i < P) dh[(long long)n * P + i] = 0;
        } else if (a.mode == CUDNN_GRU) {
            T rg = gt[i], zg = gt[H + i], hn = gt[2 * H + i];
            T hprev = first ? hprev0[(long long)n * P + i] : hp[prow * P + i];
            T dhn = dhh * (1 - zg), dz = dhh * (hprev - hn);
            T dph = dhn * (1 - hn * hn);
            T dnr = dph * rg;
            dp[2 * H + i] = dph;
            dr[2 * H + i] = dnr;
            T drr = dph * ghr[row * H + i];
            T d0 = drr * rg * (1 - rg), d1 = dz * zg * (1 - zg);
            dp[i] = dr[i] = d0;
            dp[H + i] = dr[H + i] = d1;
            shT(dpg, i, d0); shT(dpg, H + i, d1); shT(dpg, 2 * H + i, dph);
            shT(drg, i, d0); shT(drg, H + i, d1); shT(drg, 2 * H + i, dnr);
            dh[(long long)n * P + i] = dhh * zg;
        } else {
            T v = gt[i];
            T der = a.mode == CUDNN_RNN_RELU ? (v > 0 ? (T)1 : (T)0) : 1 - v * v;
            T d0 = dhh * der;
            dp[i] = dr[i] = d0;
            shT(dpg, i, d0);
            shT(drg, i, d0);
            dh[(long long)n * P + i] = 0;
        }
    }
}

/* hprev[(t*N+n)*P + j]: the state before step t of direction d (0 on padding rows) */
template <typename T, typename G> __global__ void k_hprev(int d, int T_, int N, int P, const int *len, const T *hx0, const T *hp, G *hprev)
{
    GRID_LOOP(e, (long long)T_ * N * P)
    {
        int j = (int)(e % P);
        long long tn = e / P;
        int n = (int)(tn % N), t = (int)(tn / N);
        int L = len[n];
        T v = 0;
        if (t < L) {
            int first = d == 0 ? t == 0 : t == L - 1;
            int tp = d == 0 ? t - 1 : t + 1;
            v = first ? hx0[(long long)n * P + j] : hp[((long long)tp * N + n) * P + j];
        }
        stF(hprev + e, v);
    }
}

template <typename T, typename G> __global__ void k_gru_dr(const T *dpre, const T *gates, T *out, long long TN, int H, G *outh)
{
    GRID_LOOP(e, TN * H)
    {
        long long r = e / H;
        int i = (int)(e % H);
        T v = dpre[r * 3 * H + 2 * H + i] * gates[r * 3 * H + i];
        out[e] = v;
        shT(outh, e, v);
    }
}

/* dst[j] += sum over rows of src[r*lds + j] (and dst2[j] += the same when dst2), j < cols.
 * Blocks of 32 x 32 threads: 32 columns, each summed by 32 threads over interleaved rows, then
 * combined in a fixed order (deterministic). Launch with colsum_grid(cols), dim3(32, 32). */
template <typename T> __global__ void k_colsum(const T *src, long long lds, long long rows, int cols, T *dst, T *dst2)
{
    __shared__ T part[32][33];
    int j = blockIdx.x * 32 + threadIdx.x;
    T s = 0;
    if (j < cols)
        for (long long r = threadIdx.y; r < rows; r += 32) s += src[r * lds + j];
    part[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && j < cols) {
        T t = 0;
        for (int k = 0; k < 32; k++) t += part[k][threadIdx.x];
        dst[j] += t;
        if (dst2) dst2[j] += t;
    }
}
inline unsigned colsum_grid(long long cols) { return (unsigned)((cols + 31) / 32); }
#define COLSUM_LAUNCH(cols) <<<colsum_grid(cols), dim3(32, 32), 0, st>>>

/* ------------------------------------------------------------------ host side */
struct Layout {
    long long X[64], gates[128], c[128], craw[128], hh[128], hp[128], ghr[128], dpre[128], dproj[128];
    long long total;
};

void res_build(const fdnn_rnn_geom *g, int T, int N, Layout *rl)
{
    long long o = 0, TN = (long long)T * N;
    for (int l = 0; l < g->L; l++) {
        rl->X[l] = o;
        o += TN * fdnn_rnn_layer_in(g, l);
        for (int d = 0; d < g->D; d++) {
            int pl = l * g->D + d;
            rl->gates[pl] = o; o += TN * g->G * g->H;
            rl->c[pl] = o; o += TN * g->H;
            rl->craw[pl] = o; o += TN * g->H;
            rl->hh[pl] = o; o += TN * g->H;
            rl->hp[pl] = o; o += TN * g->P;
            rl->ghr[pl] = o; o += TN * g->H;
            rl->dpre[pl] = o; o += TN * g->G * g->H;
            rl->dproj[pl] = o; o += TN * g->P;
        }
    }
    rl->total = o;
}

/* T: the compute and storage type of the engine's buffers (double for DOUBLE, float for FLOAT
 * and HALF); G: the GEMM operand type, equal to the data type (the weights are read straight
 * from the weight space). For HALF (G = __half) every GEMM operand that the engine keeps in
 * FP32 also has an FP16 copy, written by the kernel that produces it: the reserve space's copies
 * lie after its FP32 part at the same element offsets (resG), the per-step state's copies after
 * the workspace's FP32 part; the products then run on tensor cores with FP32 accumulation
 * (CUBLAS_COMPUTE_32F) into FP32 outputs. */
template <typename T, typename G = T> struct Eng {
    const fdnn_rnn_run *r;
    const fdnn_rnn_geom *g;
    cudaStream_t st;
    const fdnn_cublas_api *cb;
    cublasHandle_t ch;
    Layout rl;
    T *res, *W, *dY, *dX, *Rh, *hs, *cs, *dh, *dc, *tmp;
    G *resG, *hsG, *tmpG; /* HALF: the FP16 copies (NULL otherwise) */
    cublasComputeType_t ctype;
    int *len;
    long long *pack;
    int T_, N;
    long long TN;

    cudnnStatus_t init(const fdnn_rnn_run *run, const fdnn_rnn_io *io)
    {
        r = run;
        g = &run->g;
        T_ = run->T;
        N = run->N;
        TN = (long long)T_ * N;
        st = (cudaStream_t)run->handle->stream;
        FDNN_CHECK(fdnn_cublas_handle(run->handle, &cb, &ch));
        res_build(g, T_, N, &rl);
        int maxin = g->in0 > g->D * g->P ? g->in0 : g->D * g->P;
        long long GH = (long long)g->G * g->H, o = 0;
        T *w = (T *)run->work;
        W = w + o; o += fdnn_rnn_weight_count(g);
        dY = w + o; o += TN * g->D * g->P;
        dX = w + o; o += TN * maxin;
        Rh = w + o; o += N * GH;
        hs = w + o; o += (long long)N * g->P;
        cs = w + o; o += (long long)N * g->H;
        dh = w + o; o += (long long)N * g->P;
        dc = w + o; o += (long long)N * g->H;
        tmp = w + o; o += N * GH;
        const int shadow = sizeof(G) != sizeof(T);
        /* the FP16 copies of hs and tmp: after the FP32 part (o floats <= the fixed part less the
         * int area, so 4o + 2(N*P + N*GH) bytes fit in its 8 bytes per double) */
        hsG = shadow ? (G *)(w + o) : NULL;
        tmpG = shadow ? (G *)(w + o) + (long long)N * g->P : NULL;
        long long wd = fdnn_rnn_work_doubles(g, T_, N);
        char *ints = (char *)run->work + (size_t)(wd - (N + T_ + 2)) * sizeof(double);
        pack = (long long *)ints;
        len = (int *)(ints + (size_t)(T_ + 1) * sizeof(long long));
        res = run->training ? (T *)run->reserve : (T *)((char *)run->work + (size_t)wd * sizeof(double));
        /* reserve: rl.total elements of 8 bytes; T uses 4 per element, the FP16 copies 2 (from a
         * 16-byte aligned start when that still fits) */
        long long rt = rl.total, ra = (rt + 7) & ~7LL;
        if (4 * ra + 2 * rt > 8 * rt) ra = rt;
        resG = shadow ? (G *)(res + ra) : NULL;
        if (sizeof(T) == sizeof(double)) ctype = CUBLAS_COMPUTE_64F;
        else if (shadow) ctype = CUBLAS_COMPUTE_32F; /* FP16 inputs, FP32 accumulation on tensor cores */
        else ctype = run->desc->math_type == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        cudaError_t e = cudaMemcpyAsync(len, run->len, sizeof(int) * (size_t)N, cudaMemcpyHostToDevice, st);
        if (e == cudaSuccess && io->layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED)
            e = cudaMemcpyAsync(pack, io->pack_off, sizeof(long long) * (size_t)(T_ + 1), cudaMemcpyHostToDevice, st);
        return fdnn_cuda_check(e, "RNN: copying the sequence lengths");
    }

    IoDev iodev(const fdnn_rnn_io *io) const
    {
        IoDev d;
        d.layout = io->layout; d.T = io->T; d.N = io->N; d.V = io->V;
        d.pack = pack; d.len = len; d.has_fill = io->has_fill; d.fill = io->fill;
        return d;
    }

    const T *param(int pl, int id, int is_bias) const
    {
        int rows, cols;
        int64_t o = fdnn_rnn_param(g, pl, id, is_bias, &rows, &cols);
        return o < 0 ? NULL : W + o;
    }

    /* a weight matrix as a GEMM operand: straight from the weight space (data type == G) */
    const G *wmat(int pl, int id) const
    {
        int rows, cols;
        int64_t o = fdnn_rnn_param(g, pl, id, 0, &rows, &cols);
        return o < 0 ? NULL : (const G *)r->w + o;
    }

    /* the GEMM operand view of an FP32 reserve buffer at element offset off */
    G *resop(long long off) const { return resG ? resG + off : (G *)(res + off); }
    G *hsop() const { return hsG ? hsG : (G *)hs; }
    G *tmpop() const { return tmpG ? tmpG : (G *)tmp; }
    /* makes the FP16 copy of an FP32 reserve buffer (HALF only); returns its operand view */
    G *to_op(long long off, long long n)
    {
        if (resG && n > 0) k_to<T, G><<<grid_for(n, BLK), BLK, 0, st>>>(res + off, resG + off, n);
        return resop(off);
    }

    /* row-major C[M x Nc] = alpha op(A) op(B) + beta C; A and B of type G, C of type T */
    cudnnStatus_t gemm(int ta, int tb, long long M, long long Nc, long long K, T alpha, const G *A, long long lda, const G *B, long long ldb,
                       T beta, T *C, long long ldc)
    {
        if (M <= 0 || Nc <= 0) return CUDNN_STATUS_SUCCESS;
        cublasStatus_t s = cb->gemm_ex(ch, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)Nc, (int)M, (int)K, &alpha, B,
                                       CT<G>::dt, (int)ldb, A, CT<G>::dt, (int)lda, &beta, C, CT<T>::dt, (int)ldc, ctype, CUBLAS_GEMM_DEFAULT);
        return fdnn_cublas_check(s, "RNN: cublasGemmEx");
    }

    cudnnStatus_t launched(const char *what) { return fdnn_cuda_check(cudaGetLastError(), what); }

    template <typename DT> void load_weights(const void *w)
    {
        long long nw = fdnn_rnn_weight_count(g);
        k_convert<DT, T><<<grid_for(nw, BLK), BLK, 0, st>>>((const DT *)w, W, nw);
    }

    int dropout_on() const
    {
        const struct cudnnDropoutStruct *dd = r->desc->dropout;
        return r->training && dd && dd->magic == FDNN_MAGIC_DROPOUT && dd->is_set && dd->dropout > 0 && g->L > 1;
    }

    StepArgs step_args(int d, int s) const
    {
        StepArgs a;
        a.mode = g->mode; a.G = g->G; a.H = g->H; a.P = g->P; a.N = N; a.D = g->D; a.d = d; a.s = s; a.has_proj = g->has_proj;
        a.clip = g->mode == CUDNN_LSTM && r->desc->clip_mode == CUDNN_RNN_CLIP_MINMAX;
        a.lclip = r->desc->lclip; a.rclip = r->desc->rclip; a.len = len;
        return a;
    }

    template <typename DT>
    cudnnStatus_t forward(const fdnn_rnn_io *xio, const DT *x, const fdnn_rnn_io *yio, DT *y, const DT *hx, DT *hy, const DT *cx, DT *cy)
    {
        FDNN_CHECK(init(r, xio));
        load_weights<DT>(r->w);
        const int G_ = g->G, H = g->H, P = g->P, D = g->D, GH = G_ * H;
        int lstm = g->mode == CUDNN_LSTM;
        IoDev xi = iodev(xio), yi = iodev(yio);
        k_gather<DT, T><<<grid_rows(TN), RBLK, 0, st>>>(xi, x, res + rl.X[0]);
        for (int l = 0; l < g->L; l++) {
            int in = fdnn_rnn_layer_in(g, l);
            const T *X = res + rl.X[l];
            T *Y = l + 1 < g->L ? res + rl.X[l + 1] : dY;
            cudaMemsetAsync(Y, 0, sizeof(T) * (size_t)(TN * D * P), st);
            /* the layer input as a GEMM operand (one conversion per layer for HALF) */
            const G *Xop = g->skip && l == 0 ? NULL : to_op(rl.X[l], TN * in);
            for (int d = 0; d < D; d++) {
                int pl = l * D + d;
                T *gates = res + rl.gates[pl], *cc = res + rl.c[pl], *craw = res + rl.craw[pl];
                T *hh = res + rl.hh[pl], *hp = res + rl.hp[pl], *ghr = res + rl.ghr[pl];
                cudaMemsetAsync(hh, 0, sizeof(T) * (size_t)(TN * H), st);
                if (g->skip && l == 0) k_skip_fwd<T><<<grid_for(TN * GH, BLK), BLK, 0, st>>>(X, gates, TN, G_, H, in);
                else FDNN_CHECK(gemm(0, 1, TN, GH, in, 1, Xop, in, wmat(pl, 0), in, 0, gates, GH));
                k_load_state<DT, T, G><<<grid_for((long long)N * P, BLK), BLK, 0, st>>>(hx ? hx + (long long)pl * N * P : NULL, hs,
                                                                                        (long long)N * P, hsG);
                k_load_state<DT, T, G><<<grid_for((long long)N * H, BLK), BLK, 0, st>>>(lstm && cx ? cx + (long long)pl * N * H : NULL, cs,
                                                                                        (long long)N * H, (G *)NULL);
                const T *bw = param(pl, 0, 1), *br = param(pl, G_, 1);
                const G *Rcat = wmat(pl, G_), *Proj = g->has_proj ? wmat(pl, 8) : NULL;
                /* per step: one GEMM for all gates, one fused pointwise kernel (+ GEMM and copy with a projection) */
                for (int s = 0; s < T_; s++) {
                    FDNN_CHECK(gemm(0, 1, N, GH, P, 1, hsop(), P, Rcat, P, 0, Rh, GH));
                    StepArgs a = step_args(d, s);
                    k_fwd_step<T, G><<<grid_for((long long)N * H, BLK), BLK, 0, st>>>(a, gates, Rh, bw, br, cc, craw, hh, hp, ghr, hs, cs, Y, tmp,
                                                                                      hsG, tmpG);
                    if (g->has_proj) {
                        FDNN_CHECK(gemm(0, 1, N, P, H, 1, tmpop(), H, Proj, H, 0, dc, P));
                        k_proj_copy<T, G><<<grid_for((long long)N * P, BLK), BLK, 0, st>>>(a, dc, hp, hs, Y, hsG);
                    }
                }
                if (hy) k_store_state<DT, T><<<grid_for((long long)N * P, BLK), BLK, 0, st>>>(hs, hy + (long long)pl * N * P, (long long)N * P);
                if (lstm && cy)
                    k_store_state<DT, T><<<grid_for((long long)N * H, BLK), BLK, 0, st>>>(cs, cy + (long long)pl * N * H, (long long)N * H);
            }
            if (l + 1 < g->L && dropout_on())
                k_dropout<T><<<grid_for(TN * D * P, BLK), BLK, 0, st>>>(Y, TN * D * P, r->desc->dropout->seed, l, r->desc->dropout->dropout);
            FDNN_CHECK(launched("RNN forward"));
        }
        k_scatter<DT, T><<<grid_rows(TN), RBLK, 0, st>>>(yi, dY, y);
        return launched("RNN forward");
    }

    template <typename DT>
    cudnnStatus_t backward_data(const fdnn_rnn_io *yio, const DT *dy, const fdnn_rnn_io *xio, DT *dx, const DT *hx, const DT *dhy, DT *dhx,
                                const DT *cx, const DT *dcy, DT *dcx)
    {
        FDNN_CHECK(init(r, xio));
        load_weights<DT>(r->w);
        const int G_ = g->G, H = g->H, P = g->P, D = g->D, GH = G_ * H;
        int lstm = g->mode == CUDNN_LSTM;
        IoDev xi = iodev(xio), yi = iodev(yio);
        k_gather<DT, T><<<grid_rows(TN), RBLK, 0, st>>>(yi, dy, dY);
        for (int l = g->L - 1; l >= 0; l--) {
            int in = fdnn_rnn_layer_in(g, l);
            cudaMemsetAsync(dX, 0, sizeof(T) * (size_t)(TN * in), st);
            for (int d = 0; d < D; d++) {
                int pl = l * D + d;
                T *gates = res + rl.gates[pl], *cc = res + rl.c[pl], *craw = res + rl.craw[pl];
                T *hp = res + rl.hp[pl], *ghr = res + rl.ghr[pl], *dpre = res + rl.dpre[pl], *dproj = res + rl.dproj[pl];
                cudaMemsetAsync(dpre, 0, sizeof(T) * (size_t)(TN * GH), st);
                if (resG) cudaMemsetAsync(resG + rl.dpre[pl], 0, sizeof(G) * (size_t)(TN * GH), st);
                cudaMemsetAsync(dproj, 0, sizeof(T) * (size_t)(TN * P), st);
                long long NP = (long long)N * P, NH = (long long)N * H;
                G *nog = NULL;
                k_load_state<DT, T, G><<<grid_for(NP, BLK), BLK, 0, st>>>(dhy ? dhy + pl * NP : NULL, dh, NP, nog);
                k_load_state<DT, T, G><<<grid_for(NH, BLK), BLK, 0, st>>>(lstm && dcy ? dcy + pl * NH : NULL, dc, NH, nog);
                /* initial states: hx (GRU) in hs, cx (LSTM) in cs; the projection case uses hs as scratch */
                k_load_state<DT, T, G><<<grid_for(NP, BLK), BLK, 0, st>>>(hx ? hx + pl * NP : NULL, hs, NP, nog);
                k_load_state<DT, T, G><<<grid_for(NH, BLK), BLK, 0, st>>>(lstm && cx ? cx + pl * NH : NULL, cs, NH, nog);
                const G *Rcat = wmat(pl, G_), *Proj = g->has_proj ? wmat(pl, 8) : NULL;
                G *dpreG = resG ? resG + rl.dpre[pl] : NULL;
                /* per step: one fused pointwise kernel, one GEMM dh += dpre * Rcat for all gates */
                for (int s = T_ - 1; s >= 0; s--) {
                    StepArgs a = step_args(d, s);
                    if (g->has_proj) {
                        k_bwd_pre<T, G><<<grid_for(NP, BLK), BLK, 0, st>>>(a, dY, dh, dproj, hs, hsG);
                        FDNN_CHECK(gemm(0, 0, N, H, P, 1, hsop(), P, Proj, H, 0, Rh, H));
                    }
                    k_bwd_step<T, G><<<grid_for(NH, BLK), BLK, 0, st>>>(a, gates, cc, craw, hp, ghr, dY, dh, dc, Rh, dpre, dproj, tmp, hs, cs, tmpG,
                                                                        dpreG);
                    FDNN_CHECK(gemm(0, 0, N, P, GH, 1, tmpop(), GH, Rcat, P, 1, dh, P));
                }
                if (dhx) k_store_state<DT, T><<<grid_for(NP, BLK), BLK, 0, st>>>(dh, dhx + pl * NP, NP);
                if (lstm && dcx) k_store_state<DT, T><<<grid_for(NH, BLK), BLK, 0, st>>>(dc, dcx + pl * NH, NH);
                if (g->skip && l == 0) k_skip_bwd<T><<<grid_for(TN * H, BLK), BLK, 0, st>>>(dpre, dX, TN, G_, H, in);
                else FDNN_CHECK(gemm(0, 0, TN, in, GH, 1, resop(rl.dpre[pl]), GH, wmat(pl, 0), in, 1, dX, in));
            }
            if (l > 0) {
                cudaMemcpyAsync(dY, dX, sizeof(T) * (size_t)(TN * in), cudaMemcpyDeviceToDevice, st);
                if (dropout_on())
                    k_dropout<T><<<grid_for(TN * in, BLK), BLK, 0, st>>>(dY, TN * in, r->desc->dropout->seed, l - 1, r->desc->dropout->dropout);
            }
            FDNN_CHECK(launched("RNN backward data"));
        }
        k_scatter<DT, T><<<grid_rows(TN), RBLK, 0, st>>>(xi, dX, dx);
        return launched("RNN backward data");
    }

    template <typename DT> cudnnStatus_t backward_weights(const fdnn_rnn_io *xio, int add, const DT *hx, DT *dw)
    {
        FDNN_CHECK(init(r, xio));
        const int G_ = g->G, H = g->H, P = g->P, D = g->D, GH = G_ * H;
        long long nw = fdnn_rnn_weight_count(g);
        T *grad = W;
        cudaMemsetAsync(grad, 0, sizeof(T) * (size_t)nw, st);
        G *hprev = (G *)dY; /* T*N*P elements of G fit in dY's T*N*D*P of T */
        for (int l = 0; l < g->L; l++) {
            int in = fdnn_rnn_layer_in(g, l);
            const G *Xop = resop(rl.X[l]); /* its FP16 copy was made by the forward pass */
            for (int d = 0; d < D; d++) {
                int pl = l * D + d, rows, cols;
                T *gates = res + rl.gates[pl];
                T *dpre = res + rl.dpre[pl];
                const G *dpreop = resop(rl.dpre[pl]); /* its FP16 copy was made by backward data */
                long long NP = (long long)N * P;
                k_load_state<DT, T, G><<<grid_for(NP, BLK), BLK, 0, st>>>(hx ? hx + pl * NP : NULL, hs, NP, (G *)NULL);
                k_hprev<T, G><<<grid_for(TN * P, BLK), BLK, 0, st>>>(d, T_, N, P, len, hs, res + rl.hp[pl], hprev);
                /* dW (all gates, all steps) = dpre^T X: one GEMM */
                int64_t o = fdnn_rnn_param(g, pl, 0, 0, &rows, &cols);
                if (o >= 0) FDNN_CHECK(gemm(1, 0, GH, in, TN, 1, dpreop, GH, Xop, in, 0, grad + o, in));
                int64_t ob = fdnn_rnn_param(g, pl, 0, 1, &rows, &cols);
                int64_t oR = fdnn_rnn_param(g, pl, G_, 0, &rows, &cols), obR = fdnn_rnn_param(g, pl, G_, 1, &rows, &cols);
                if (g->mode == CUDNN_GRU) {
                    if (ob >= 0) k_colsum<T> COLSUM_LAUNCH(GH)(dpre, GH, TN, GH, grad + ob, (T *)NULL);
                    T *gdr = dX; /* TN*H <= TN*maxin */
                    G *gdrG = resG ? resG + rl.ghr[pl] : NULL; /* ghr's copy area is free here */
                    k_gru_dr<T, G><<<grid_for(TN * H, BLK), BLK, 0, st>>>(dpre, gates, gdr, TN, H, gdrG);
                    FDNN_CHECK(gemm(1, 0, 2 * H, P, TN, 1, dpreop, GH, hprev, P, 0, grad + oR, P));
                    FDNN_CHECK(gemm(1, 0, H, P, TN, 1, gdrG ? gdrG : (G *)gdr, H, hprev, P, 0, grad + oR + 2LL * H * P, P));
                    if (obR >= 0) {
                        k_colsum<T> COLSUM_LAUNCH(2 * H)(dpre, GH, TN, 2 * H, grad + obR, (T *)NULL);
                        k_colsum<T> COLSUM_LAUNCH(H)(gdr, H, TN, H, grad + obR + 2 * H, (T *)NULL);
                    }
                } else {
                    /* dR (all gates, all steps) = dpre^T hprev: one GEMM; both bias vectors get dpre's column sums: one kernel */
                    FDNN_CHECK(gemm(1, 0, GH, P, TN, 1, dpreop, GH, hprev, P, 0, grad + oR, P));
                    T *b1 = ob >= 0 ? grad + ob : NULL, *b2 = obR >= 0 ? grad + obR : NULL;
                    if (!b1) { b1 = b2; b2 = NULL; }
                    if (b1) k_colsum<T> COLSUM_LAUNCH(GH)(dpre, GH, TN, GH, b1, b2);
                }
                if (g->has_proj) {
                    o = fdnn_rnn_param(g, pl, 8, 0, &rows, &cols);
                    const G *dprojop = to_op(rl.dproj[pl], TN * P), *hhop = to_op(rl.hh[pl], TN * H);
                    FDNN_CHECK(gemm(1, 0, P, H, TN, 1, dprojop, P, hhop, H, 0, grad + o, H));
                }
                FDNN_CHECK(launched("RNN backward weights"));
            }
        }
        k_acc_store<DT, T><<<grid_for(nw, BLK), BLK, 0, st>>>(grad, dw, nw, add);
        return launched("RNN backward weights");
    }
};

} // namespace

extern "C" cudnnStatus_t fdnn_rnn_cuda_forward(const fdnn_rnn_run *r, const fdnn_rnn_io *xio, const void *x, const fdnn_rnn_io *yio, void *y,
                                               const void *hx, void *hy, const void *cx, void *cy)
{
    switch (r->dtype) {
    case CUDNN_DATA_DOUBLE: {
        Eng<double> e; e.r = r;
        return e.forward<double>(xio, (const double *)x, yio, (double *)y, (const double *)hx, (double *)hy, (const double *)cx, (double *)cy);
    }
    case CUDNN_DATA_FLOAT: {
        Eng<float> e; e.r = r;
        return e.forward<float>(xio, (const float *)x, yio, (float *)y, (const float *)hx, (float *)hy, (const float *)cx, (float *)cy);
    }
    case CUDNN_DATA_HALF: {
        Eng<float, __half> e; e.r = r;
        return e.forward<__half>(xio, (const __half *)x, yio, (__half *)y, (const __half *)hx, (__half *)hy, (const __half *)cx, (__half *)cy);
    }
    default: return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "RNN data type %s is not supported on the CUDA backend", fdnn_dtype_name(r->dtype));
    }
}

extern "C" cudnnStatus_t fdnn_rnn_cuda_backward_data(const fdnn_rnn_run *r, const fdnn_rnn_io *yio, const void *dy, const fdnn_rnn_io *xio,
                                                     void *dx, const void *hx, const void *dhy, void *dhx, const void *cx, const void *dcy,
                                                     void *dcx)
{
#define BWD_ARGS(DT) yio, (const DT *)dy, xio, (DT *)dx, (const DT *)hx, (const DT *)dhy, (DT *)dhx, (const DT *)cx, (const DT *)dcy, (DT *)dcx
    switch (r->dtype) {
    case CUDNN_DATA_DOUBLE: { Eng<double> e; e.r = r; return e.backward_data<double>(BWD_ARGS(double)); }
    case CUDNN_DATA_FLOAT: { Eng<float> e; e.r = r; return e.backward_data<float>(BWD_ARGS(float)); }
    case CUDNN_DATA_HALF: { Eng<float, __half> e; e.r = r; return e.backward_data<__half>(BWD_ARGS(__half)); }
    default: return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "RNN data type %s is not supported on the CUDA backend", fdnn_dtype_name(r->dtype));
    }
#undef BWD_ARGS
}

extern "C" cudnnStatus_t fdnn_rnn_cuda_backward_weights(const fdnn_rnn_run *r, int add, const void *hx, void *dw)
{
    /* the lengths are copied from r->len; the packed offsets are not needed here */
    fdnn_rnn_io io;
    memset(&io, 0, sizeof io);
    io.layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED;
    switch (r->dtype) {
    case CUDNN_DATA_DOUBLE: { Eng<double> e; e.r = r; return e.backward_weights<double>(&io, add, (const double *)hx, (double *)dw); }
    case CUDNN_DATA_FLOAT: { Eng<float> e; e.r = r; return e.backward_weights<float>(&io, add, (const float *)hx, (float *)dw); }
    case CUDNN_DATA_HALF: { Eng<float, __half> e; e.r = r; return e.backward_weights<__half>(&io, add, (const __half *)hx, (__half *)dw); }
    default: return FDNN_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "RNN data type %s is not supported on the CUDA backend", fdnn_dtype_name(r->dtype));
    }
}
