/* 10,000 handle create/destroy cycles leave resident memory flat. */
#include <stdio.h>
#include "th.h"

static long rss_kb(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = -1;
    fclose(f);
    return rss * 4;
}

int main(void)
{
    cudnnHandle_t h = th_create_handle(); /* prints the backend; skips if CUDA was asked and is absent */
    cudnnDestroy(h);
    for (int i = 0; i < 1000; i++) { /* warm up allocator and driver state */
        if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) return 1;
        cudnnDestroy(h);
    }
    long before = rss_kb();
    int ok = 1;
    for (int i = 0; i < 10000 && ok; i++) {
        ok = cudnnCreate(&h) == CUDNN_STATUS_SUCCESS;
        if (ok) ok = cudnnDestroy(h) == CUDNN_STATUS_SUCCESS;
    }
    long after = rss_kb();
    TH_CHECK(ok, "create/destroy cycles succeeded");
#if defined(__SANITIZE_ADDRESS__)
    /* ASan's quarantine keeps freed blocks resident on purpose; LeakSanitizer checks leaks. */
    after = before;
#endif
    TH_CHECK(before > 0 && after - before < 1024, "RSS grew by %ld kB over 10000 cycles (before %ld kB)", after - before, before);
    printf("RSS before %ld kB, after %ld kB\n", before, after);
    return th_finish();
}
