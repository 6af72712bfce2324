/* cuDNN-compatible logging: CUDNN_LOGERR_DBG / CUDNN_LOGWARN_DBG / CUDNN_LOGINFO_DBG (v8),
 * CUDNN_LOGLEVEL_DBG (v9: 0 off .. 3 info), CUDNN_LOGDEST_DBG (stdout, stderr or a file
 * name), and the cudnnSetCallback / cudnnGetCallback hook that receives the same messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "fdnn.h"

int fdnn_log_mask = 0;
static unsigned env_mask = 0;            /* levels enabled by environment */
static unsigned cb_mask = 0;             /* levels delivered to the callback */
static cudnnCallback_t cb_fn = NULL;
static void *cb_udata = NULL;
static FILE *log_dest = NULL;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct timeval log_t0;

static void recompute_mask(void)
{
    fdnn_log_mask = (int)(env_mask | (cb_fn ? cb_mask : 0));
}

static void log_init_once(void)
{
    gettimeofday(&log_t0, NULL);
    const char *lvl = getenv("CUDNN_LOGLEVEL_DBG");
    if (lvl && *lvl) {
        int l = atoi(lvl);
        if (l >= 1) env_mask |= 1u << CUDNN_SEV_ERROR;
        if (l >= 2) env_mask |= 1u << CUDNN_SEV_WARNING;
        if (l >= 3) env_mask |= 1u << CUDNN_SEV_INFO;
    }
    const char *e;
    if ((e = getenv("CUDNN_LOGERR_DBG")) && atoi(e) == 1) env_mask |= 1u << CUDNN_SEV_ERROR;
    if ((e = getenv("CUDNN_LOGWARN_DBG")) && atoi(e) == 1) env_mask |= 1u << CUDNN_SEV_WARNING;
    if ((e = getenv("CUDNN_LOGINFO_DBG")) && atoi(e) == 1) env_mask |= 1u << CUDNN_SEV_INFO;
    const char *dest = getenv("CUDNN_LOGDEST_DBG");
    if (env_mask) {
        if (!dest || !*dest) {
            /* cuDNN logs nowhere without a destination; we do likewise */
            env_mask = 0;
        } else if (strcmp(dest, "stdout") == 0) {
            log_dest = stdout;
        } else if (strcmp(dest, "stderr") == 0) {
            log_dest = stderr;
        } else {
            log_dest = fopen(dest, "a");
            if (!log_dest) env_mask = 0;
        }
    }
    recompute_mask();
}

void fdnn_log_init(void) { pthread_once(&log_once, log_init_once); }

__attribute__((constructor)) static void fdnn_log_ctor(void) { fdnn_log_init(); }

static const char *sev_name(cudnnSeverity_t s)
{
    switch (s) {
    case CUDNN_SEV_FATAL: return "F";
    case CUDNN_SEV_ERROR: return "E";
    case CUDNN_SEV_WARNING: return "W";
    default: return "I";
    }
}

/* One message to the destination and the callback. A call line (detail == 0) reads
 * "I! FreeDNN (v8907) function X() called:"; details are indented lines below it; errors and
 * warnings name the function they come from. */
static void emit(cudnnSeverity_t sev, cudnnHandle_t handle, int detail, const char *msg)
{
    struct timeval now;
    gettimeofday(&now, NULL);
    char line[2400];
    if (detail)
        snprintf(line, sizeof line, "i!     %s", msg);
    else if (msg[0])
        snprintf(line, sizeof line, "%s! FreeDNN (v%d) function %s() called: %s", sev_name(sev), CUDNN_VERSION, fdnn_current_api(), msg);
    else
        snprintf(line, sizeof line, "%s! FreeDNN (v%d) function %s() called: time=%ld.%06ld pid=%d", sev_name(sev), CUDNN_VERSION,
                 fdnn_current_api(), (long)now.tv_sec, (long)now.tv_usec, (int)getpid());
    pthread_mutex_lock(&log_lock);
    if ((env_mask >> sev) & 1 && log_dest) {
        fprintf(log_dest, "%s\n", line);
        fflush(log_dest);
    }
    cudnnCallback_t fn = cb_fn;
    void *ud = cb_udata;
    unsigned cm = cb_mask;
    pthread_mutex_unlock(&log_lock);
    if (fn && ((cm >> sev) & 1)) {
        cudnnDebug_t dbg;
        memset(&dbg, 0, sizeof dbg);
        dbg.cudnn_version = CUDNN_VERSION;
        dbg.cudnnStatus = CUDNN_STATUS_SUCCESS;
        dbg.time_sec = (unsigned)now.tv_sec;
        dbg.time_usec = (unsigned)now.tv_usec;
        dbg.time_delta = (unsigned)(now.tv_sec - log_t0.tv_sec);
        dbg.handle = handle;
        dbg.stream = handle ? handle->stream : NULL;
        dbg.pid = (unsigned long long)getpid();
        dbg.tid = (unsigned long long)syscall(SYS_gettid);
        dbg.cudaDeviceId = handle ? handle->device : -1;
        fn(sev, ud, &dbg, line);
    }
}

void fdnn_log_call(const char *func)
{
    (void)func; /* the current API name is already set */
    emit(CUDNN_SEV_INFO, NULL, 0, "");
}

void fdnn_log(cudnnSeverity_t sev, cudnnHandle_t handle, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    emit(sev, handle, sev == CUDNN_SEV_INFO, msg);
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnSetCallback(unsigned mask, void *udata, cudnnCallback_t fptr)
{
    FDNN_API_ENTER();
    fdnn_log_init();
    pthread_mutex_lock(&log_lock);
    cb_mask = mask & ((1u << CUDNN_SEV_ERROR) | (1u << CUDNN_SEV_WARNING) | (1u << CUDNN_SEV_INFO));
    cb_udata = udata;
    cb_fn = fptr;
    recompute_mask();
    pthread_mutex_unlock(&log_lock);
    return CUDNN_STATUS_SUCCESS;
}

/* api: any */
FDNN_EXPORT cudnnStatus_t CUDNNWINAPI cudnnGetCallback(unsigned *mask, void **udata, cudnnCallback_t *fptr)
{
    FDNN_API_ENTER();
    if (!mask && !udata && !fptr) return FDNN_FAIL(CUDNN_STATUS_BAD_PARAM, "mask, udata and fptr are all NULL");
    pthread_mutex_lock(&log_lock);
    if (mask) *mask = cb_mask;
    if (udata) *udata = cb_udata;
    if (fptr) *fptr = cb_fn;
    pthread_mutex_unlock(&log_lock);
    return CUDNN_STATUS_SUCCESS;
}
