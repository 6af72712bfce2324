/* Host cost of the CUDA calls a FreeDNN call is built from, on this machine: a kernel launch
 * through the runtime (<<<>>>) with no argument and with 256-byte / 1-KiB argument structs, the
 * same kernel through the driver's cuLaunchKernel, cudaGetLastError and cudaGetDevice. Each is
 * issued in batches of 256 with an untimed synchronisation between batches (the launch queue
 * never fills), and the host time per call is printed in nanoseconds. This is the floor under
 * issue #7's "host time per call" target: a call that launches k kernels costs at least k
 * launches. It also times a captured CUDA graph of 1, 2 and 4 such kernels relaunched with
 * cudaGraphLaunch, and one node's argument update before the launch.
 *   launch_cost [calls]   (default 100000) */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda.h>
#include <cuda_runtime.h>

struct A256 {
    long long v[32];
};
struct A1K {
    long long v[128];
};
__global__ void k_empty() {}
__global__ void k_256(A256 a)
{
    if (a.v[0] == 12345) a.v[1] = 0;
}
__global__ void k_1k(A1K a)
{
    if (a.v[0] == 12345) a.v[1] = 0;
}

static double now_ns()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

template <typename F> static double per_call(long calls, cudaStream_t s, F f)
{
    double tot = 0;
    for (long done = 0; done < calls;) {
        const long b = calls - done < 256 ? calls - done : 256;
        cudaStreamSynchronize(s);
        const double t0 = now_ns();
        for (long i = 0; i < b; i++) f();
        tot += now_ns() - t0;
        done += b;
    }
    cudaStreamSynchronize(s);
    return tot / (double)calls;
}

int main(int argc, char **argv)
{
    const long calls = argc > 1 ? atol(argv[1]) : 100000;
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        printf("launch_cost: no CUDA device\n");
        return 77;
    }
    A256 a256 = {};
    A1K a1k = {};
    k_empty<<<1, 32, 0, s>>>();
    cudaStreamSynchronize(s);
    printf("launch_cost: %ld calls each, host ns per call\n", calls);
    printf("  <<<>>> no argument              %8.0f\n", per_call(calls, s, [&] { k_empty<<<1, 32, 0, s>>>(); }));
    printf("  <<<>>> 256-byte argument        %8.0f\n", per_call(calls, s, [&] { k_256<<<1, 32, 0, s>>>(a256); }));
    printf("  <<<>>> 1-KiB argument           %8.0f\n", per_call(calls, s, [&] { k_1k<<<1, 32, 0, s>>>(a1k); }));
    printf("  <<<>>> 256 B + cudaGetLastError %8.0f\n", per_call(calls, s, [&] {
               k_256<<<1, 32, 0, s>>>(a256);
               (void)cudaGetLastError();
           }));
    cudaFunction_t fn = nullptr;
    if (cudaGetFuncBySymbol(&fn, (const void *)k_256) == cudaSuccess && fn) {
        void *args[] = {&a256};
        printf("  cuLaunchKernel 256-byte arg     %8.0f\n", per_call(calls, s, [&] {
                   cuLaunchKernel((CUfunction)fn, 1, 1, 1, 32, 1, 1, 0, (CUstream)s, args, nullptr);
               }));
    }
    printf("  two <<<>>> 256-byte launches    %8.0f\n", per_call(calls, s, [&] {
               k_256<<<1, 32, 0, s>>>(a256);
               k_256<<<1, 32, 0, s>>>(a256);
           }));
    /* A CUDA graph of n such kernels, captured once and relaunched: what replaying a
     * multi-kernel call from a cache would cost instead of n launches. */
    for (int n = 1; n <= 4; n *= 2) {
        cudaGraph_t g = nullptr;
        cudaGraphExec_t ge = nullptr;
        cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
        for (int i = 0; i < n; i++) k_256<<<1, 32, 0, s>>>(a256);
        if (cudaStreamEndCapture(s, &g) != cudaSuccess || cudaGraphInstantiate(&ge, g, 0) != cudaSuccess) {
            printf("  graph of %d kernels: capture failed\n", n);
            continue;
        }
        printf("  cudaGraphLaunch, %d kernel(s)    %8.0f\n", n, per_call(calls, s, [&] { cudaGraphLaunch(ge, s); }));
        if (n == 2) {
            /* a changed pointer: update one node's arguments, then launch */
            size_t cnt = 0;
            cudaGraphGetNodes(g, nullptr, &cnt);
            cudaGraphNode_t nodes[4];
            cudaGraphGetNodes(g, nodes, &cnt);
            cudaKernelNodeParams kp;
            cudaGraphKernelNodeGetParams(nodes[0], &kp);
            A256 b = a256;
            void *args[] = {&b};
            kp.kernelParams = args;
            printf("  SetParams(1 node) + GraphLaunch %8.0f\n", per_call(calls, s, [&] {
                       b.v[2]++;
                       cudaGraphExecKernelNodeSetParams(ge, nodes[0], &kp);
                       cudaGraphLaunch(ge, s);
                   }));
        }
        cudaGraphExecDestroy(ge);
        cudaGraphDestroy(g);
    }
    int dev = 0;
    printf("  cudaGetLastError                %8.0f\n", per_call(calls, s, [&] { (void)cudaGetLastError(); }));
    printf("  cudaGetDevice                   %8.0f\n", per_call(calls, s, [&] { (void)cudaGetDevice(&dev); }));
    printf("  cudaStreamGetCaptureInfo        %8.0f\n", per_call(calls, s, [&] {
               cudaStreamCaptureStatus cs;
               (void)cudaStreamGetCaptureInfo(s, &cs, nullptr);
           }));
    const cudaError_t e = cudaGetLastError();
    printf("  (last error: %s)\n", cudaGetErrorString(e));
    cudaStreamDestroy(s);
    return e == cudaSuccess ? 0 : 1;
}
