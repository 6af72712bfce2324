/* Throwaway copy of examples/hello.c for the install-tree consumer test: creates a handle
 * and prints the version. */
#include <stdio.h>
#include <cudnn.h>

int main(void)
{
    cudnnHandle_t h;
    cudnnStatus_t st = cudnnCreate(&h);
    if (st != CUDNN_STATUS_SUCCESS) {
        fprintf(stderr, "cudnnCreate failed: %s\n", cudnnGetErrorString(st));
        return 1;
    }
    size_t v = cudnnGetVersion();
    printf("cuDNN v%d.%d.%d initialized successfully.\n", (int)(v / 1000), (int)(v % 1000 / 100), (int)(v % 100));
    cudnnDestroy(h);
    return 0;
}
