/* Environment variables read by the library (FREEDNN_BACKEND, FREEDNN_NUM_THREADS, ...). */
#include <stdlib.h>
#include "fdnn.h"

const char *fdnn_getenv(const char *name)
{
    const char *v = getenv(name);
    return (v && *v) ? v : NULL;
}

int fdnn_env_int(const char *name, int dflt)
{
    const char *v = fdnn_getenv(name);
    if (!v) return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end != '\0') return dflt;
    return (int)x;
}
