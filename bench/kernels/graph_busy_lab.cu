/* Host time of cudaGraphLaunch while the GPU is busy (issue #7, target 1).
 *
 * freednn bench's "host us" is the median host time of one call in a loop of back-to-back
 * calls. For most entries that is one cudaGraphLaunch (1.8-1.9 us on an idle queue,
 * bench/launch_cost), but the fp32 im2col + cuBLAS entries whose calls run 0.2-3 ms on the GPU
 * read 3.8-5.9 us. This lab separates the suspects: the node count, a memset node, cuBLAS's
 * split-K nodes, a queue of pending launches of the same executable graph (the driver must
 * order a graph after its own previous launch), and whether relaunching alternates between
 * several instantiations of one graph or uploads the graph first.
 *   graph_busy_lab [rounds]   (default 10): each round syncs, then times 20 back-to-back
 *   launches one by one; printed: median over all launches, mean, and the largest round median. */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>
#include <cublas_v2.h>
#include <cuda_runtime.h>

__global__ void k_spin(long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while ((long long)(t - t0) < ns);
}

static double now_ns()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

typedef void (*build_fn)(cudaStream_t, void *);

struct Ctx {
    cublasHandle_t cb;
    float *a, *b, *c, *mem;
    int spin_us;
    int kernels;
};

static void body_kernels(cudaStream_t s, void *p)
{
    Ctx *c = (Ctx *)p;
    for (int i = 0; i < c->kernels; i++) k_spin<<<1, 32, 0, s>>>((long long)c->spin_us * 1000 / c->kernels);
}
static void body_memset(cudaStream_t s, void *p)
{
    Ctx *c = (Ctx *)p;
    cudaMemsetAsync(c->mem, 0, 1 << 20, s);
    for (int i = 0; i < c->kernels; i++) k_spin<<<1, 32, 0, s>>>((long long)c->spin_us * 1000 / c->kernels);
}
/* im2col-like kernel, then the 6272 x 256 x 2304 SGEMM of r50_3x3_256_256_14's forward */
static void body_cublas(cudaStream_t s, void *p)
{
    Ctx *c = (Ctx *)p;
    k_spin<<<1, 32, 0, s>>>(10000);
    cublasSetStream(c->cb, s);
    const float one = 1, zero = 0;
    cublasSgemm(c->cb, CUBLAS_OP_N, CUBLAS_OP_N, 256, 6272, 2304, &one, c->b, 256, c->a, 2304, &zero, c->c, 256);
}

static int make(cudaStream_t s, build_fn f, Ctx *c, int n, cudaGraphExec_t *ex, size_t *nodes)
{
    cudaGraph_t g = nullptr;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return 0;
    f(s, c);
    if (cudaStreamEndCapture(s, &g) != cudaSuccess) return 0;
    cudaGraphGetNodes(g, nullptr, nodes);
    for (int i = 0; i < n; i++)
        if (cudaGraphInstantiate(&ex[i], g, 0) != cudaSuccess) return 0;
    cudaGraphDestroy(g);
    return 1;
}

static void run(const char *name, cudaStream_t cap, cudaStream_t s, build_fn f, Ctx *c, int nexec, int upload, int idle,
                int rounds)
{
    cudaGraphExec_t ex[4] = {};
    size_t nodes = 0;
    if (!make(cap, f, c, nexec, ex, &nodes)) {
        printf("  %-44s capture failed: %s\n", name, cudaGetErrorString(cudaGetLastError()));
        return;
    }
    if (upload)
        for (int i = 0; i < nexec; i++) cudaGraphUpload(ex[i], s);
    for (int i = 0; i < nexec; i++) cudaGraphLaunch(ex[i], s); /* first launches outside the timing */
    cudaStreamSynchronize(s);
    std::vector<double> all, rmed;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    double gpu = 0;
    for (int r = 0; r < rounds; r++) {
        cudaStreamSynchronize(s);
        std::vector<double> t;
        cudaEventRecord(e0, s);
        for (int i = 0; i < 20; i++) {
            if (idle) cudaStreamSynchronize(s);
            const double t0 = now_ns();
            cudaGraphLaunch(ex[i % nexec], s);
            t.push_back(now_ns() - t0);
        }
        cudaEventRecord(e1, s);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        gpu += ms / 20;
        all.insert(all.end(), t.begin(), t.end());
        std::sort(t.begin(), t.end());
        rmed.push_back(0.5 * (t[9] + t[10]));
    }
    std::sort(all.begin(), all.end());
    double mean = 0;
    for (double v : all) mean += v;
    mean /= (double)all.size();
    std::sort(rmed.begin(), rmed.end());
    printf("  %-44s nodes %zu  host us: median %5.2f mean %5.2f worst-round-median %5.2f  GPU ms/launch %.3f\n", name, nodes,
           all[all.size() / 2] / 1e3, mean / 1e3, rmed.back() / 1e3, gpu / rounds);
    for (int i = 0; i < nexec; i++) cudaGraphExecDestroy(ex[i]);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 10;
    cudaStream_t s, cap;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        printf("graph_busy_lab: no CUDA device\n");
        return 77;
    }
    cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking);
    Ctx c = {};
    cublasCreate(&c.cb);
    cudaMalloc(&c.a, sizeof(float) * 6272 * 2304);
    cudaMalloc(&c.b, sizeof(float) * 2304 * 256);
    cudaMalloc(&c.c, sizeof(float) * 6272 * 256);
    cudaMalloc(&c.mem, 1 << 20);
    cudaMemset(c.a, 0, sizeof(float) * 6272 * 2304);
    cudaMemset(c.b, 0, sizeof(float) * 2304 * 256);
    void *ws = nullptr;
    cudaMalloc(&ws, 32 << 20);
    cublasSetWorkspace(c.cb, ws, 32 << 20);
    printf("graph_busy_lab: %d rounds of 20 back-to-back cudaGraphLaunch\n", rounds);
    const int spins[] = {5, 200};
    for (int sp : spins) {
        c.spin_us = sp;
        char nm[96];
        for (int k : {1, 2, 5}) {
            c.kernels = k;
            snprintf(nm, sizeof nm, "%d spin kernel(s), %d us", k, sp);
            run(nm, cap, s, body_kernels, &c, 1, 0, 0, rounds);
        }
        c.kernels = 5;
        snprintf(nm, sizeof nm, "5 spin kernels, %d us, idle queue", sp);
        run(nm, cap, s, body_kernels, &c, 1, 0, 1, rounds);
        snprintf(nm, sizeof nm, "5 spin kernels, %d us, 2 execs", sp);
        run(nm, cap, s, body_kernels, &c, 2, 0, 0, rounds);
        snprintf(nm, sizeof nm, "5 spin kernels, %d us, uploaded", sp);
        run(nm, cap, s, body_kernels, &c, 1, 1, 0, rounds);
        c.kernels = 4;
        snprintf(nm, sizeof nm, "memset + 4 spin kernels, %d us", sp);
        run(nm, cap, s, body_memset, &c, 1, 0, 0, rounds);
    }
    run("spin + cuBLAS SGEMM 6272x256x2304", cap, s, body_cublas, &c, 1, 0, 0, rounds);
    run("spin + cuBLAS SGEMM, idle queue", cap, s, body_cublas, &c, 1, 0, 1, rounds);
    run("spin + cuBLAS SGEMM, 2 execs", cap, s, body_cublas, &c, 2, 0, 0, rounds);
    run("spin + cuBLAS SGEMM, 4 execs", cap, s, body_cublas, &c, 4, 0, 0, rounds);
    run("spin + cuBLAS SGEMM, uploaded", cap, s, body_cublas, &c, 1, 1, 0, rounds);
    const cudaError_t e = cudaGetLastError();
    printf("  (last error: %s)\n", cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
