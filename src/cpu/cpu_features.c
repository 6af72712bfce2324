/* Run-time CPU feature checks (cached after the first call). */
#include <stdlib.h>
#include "cpu_features.h"

int fdnn_cpu_has_avx512(void)
{
#if defined(FDNN_HAVE_AVX512) && (defined(__x86_64__) || defined(__i386__))
    static int cached = -1;
    if (cached < 0) {
        const char *off = getenv("FREEDNN_CPU_NO_AVX512");
        __builtin_cpu_init();
        int has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
        cached = has && !(off && off[0] == '1');
    }
    return cached;
#else
    return 0;
#endif
}

int fdnn_cpu_has_avx2(void)
{
#if defined(FDNN_HAVE_AVX2) && (defined(__x86_64__) || defined(__i386__))
    static int cached = -1;
    if (cached < 0) {
        const char *off = getenv("FREEDNN_CPU_NO_AVX2");
        __builtin_cpu_init();
        int has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
        cached = has && !(off && off[0] == '1');
    }
    return cached;
#else
    return 0;
#endif
}

int fdnn_cpu_blas_core_ok(const char *core)
{
    static const char *const good[] = {"haswell", "skylakex", "cooperlake", "sapphirerapids", "zen", "excavator"};
    if (!core) return 0;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *g = good[i], *q = core;
        while (*g && *q && (*q | 0x20) == *g) g++, q++;
        if (!*g && !*q) return 1;
    }
    return 0;
}
