/* The minimal cuDNN program from every installation guide: create a handle, report the
 * version the headers describe, destroy the handle. Builds unmodified against FreeDNN:
 *   cc hello.c -Iinclude -Llib -lcudnn */
#include <stdio.h>
#include <cudnn.h>

int main(void)
{
    cudnnHandle_t handle;
    cudnnStatus_t status = cudnnCreate(&handle);
    if (status != CUDNN_STATUS_SUCCESS) {
        printf("cudnnCreate failed: %s\n", cudnnGetErrorString(status));
        return 1;
    }
    printf("cuDNN v%d.%d.%d initialized successfully.\n", CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
    cudnnDestroy(handle);
    return 0;
}
