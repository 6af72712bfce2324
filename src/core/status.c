/* Status strings, the thread-local last-error message (cudnnGetLastErrorString) and the
 * "not implemented" path every unfinished API entry takes. */
#include <stdio.h>
#include <string.h>
#include "fdnn.h"

static _Thread_local char tls_last_error[1024];
static _Thread_local const char *tls_api = "";

const char *fdnn_current_api(void) { return tls_api; }
void fdnn_set_current_api(const char *name) { tls_api = name ? name : ""; }

cudnnStatus_t fdnn_error(cudnnStatus_t status, const char *fmt, ...)
{
    char msg[896];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(tls_last_error, sizeof tls_last_error, "%s: %s: %s", tls_api[0] ? tls_api : "FreeDNN",
             cudnnGetErrorString(status), msg);
    if (fdnn_log_on(CUDNN_SEV_ERROR)) fdnn_log(CUDNN_SEV_ERROR, NULL, "%s", tls_last_error);
    return status;
}

cudnnStatus_t fdnn_not_implemented(const char *func)
{
    fdnn_set_current_api(func);
    return fdnn_error(CUDNN_STATUS_NOT_SUPPORTED, "%s is not implemented in FreeDNN %s", func,
                      FREEDNN_VERSION_STRING);
}

/* api: any */
FDNN_EXPORT void CUDNNWINAPI cudnnGetLastErrorString(char *message, size_t max_size)
{
    if (message && max_size > 0) {
        size_t len = strlen(tls_last_error);
        if (len >= max_size) len = max_size - 1;
        memcpy(message, tls_last_error, len);
        message[len] = '\0';
    }
    tls_last_error[0] = '\0';
}

/* api: any */
FDNN_EXPORT const char *CUDNNWINAPI cudnnGetErrorString(cudnnStatus_t status)
{
    switch (status) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_ALLOC_FAILED: return "CUDNN_STATUS_ALLOC_FAILED";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_INVALID_VALUE: return "CUDNN_STATUS_INVALID_VALUE";
    case CUDNN_STATUS_ARCH_MISMATCH: return "CUDNN_STATUS_ARCH_MISMATCH";
    case CUDNN_STATUS_MAPPING_ERROR: return "CUDNN_STATUS_MAPPING_ERROR";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_LICENSE_ERROR: return "CUDNN_STATUS_LICENSE_ERROR";
    case CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING: return "CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING";
    case CUDNN_STATUS_RUNTIME_IN_PROGRESS: return "CUDNN_STATUS_RUNTIME_IN_PROGRESS";
    case CUDNN_STATUS_RUNTIME_FP_OVERFLOW: return "CUDNN_STATUS_RUNTIME_FP_OVERFLOW";
    case CUDNN_STATUS_VERSION_MISMATCH: return "CUDNN_STATUS_VERSION_MISMATCH";
    }
    return "CUDNN_UNKNOWN_STATUS_FOUND";
}
