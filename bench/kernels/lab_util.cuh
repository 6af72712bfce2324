/* Pieces the CUDA kernel labs under bench/kernels/ share. */
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

/* a failed CUDA runtime call ends the lab with exit status 2 */
#define CK(x)                                                                                                   \
    do {                                                                                                        \
        cudaError_t e_ = (x);                                                                                   \
        if (e_ != cudaSuccess) {                                                                                \
            fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorString(e_), __FILE__, __LINE__, #x);   \
            exit(2);                                                                                            \
        }                                                                                                       \
    } while (0)

/* deterministic pseudo-random floats in [-1, 1], multiples of 1/1000 (the FP32 labs' inputs); a
 * template only so that the labs that do not launch it do not compile it */
template <int = 0> __global__ void fill_float_kernel(float *p, long long n, unsigned seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned v = (unsigned)(i * 2654435761u) ^ seed;
        v ^= v >> 13; v *= 0x5bd1e995u; v ^= v >> 15;
        p[i] = (int)(v % 2001) / 1000.0f - 1.0f;
    }
}
