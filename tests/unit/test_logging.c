/* cuDNN's logging variables: CUDNN_LOGINFO_DBG / CUDNN_LOGERR_DBG / CUDNN_LOGLEVEL_DBG with
 * CUDNN_LOGDEST_DBG=<file>. The library reads them when it loads, so the test re-runs itself
 * as a child with the variables set and inspects the file the child wrote. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "th.h"

static int child_calls(void)
{
    cudnnHandle_t h;
    if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) return 1;
    cudnnTensorDescriptor_t t;
    cudnnCreateTensorDescriptor(&t);
    cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 5);
    cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, -3, 4, 5); /* an error */
    cudnnDestroyTensorDescriptor(t);
    cudnnDestroy(h);
    return 0;
}

static char *run_child(const char *self, const char *var, const char *val, const char *path)
{
    unlink(path);
    pid_t pid = fork();
    if (pid == 0) {
        unsetenv("CUDNN_LOGINFO_DBG");
        unsetenv("CUDNN_LOGERR_DBG");
        unsetenv("CUDNN_LOGLEVEL_DBG");
        setenv(var, val, 1);
        setenv("CUDNN_LOGDEST_DBG", path, 1);
        execl(self, self, "--child", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    TH_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child with %s=%s exited cleanly", var, val);
    FILE *f = fopen(path, "r");
    if (!f) return strdup("");
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--child") == 0) return child_calls();
    char path[] = "/tmp/fdnn_logXXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    char *info = run_child("/proc/self/exe", "CUDNN_LOGINFO_DBG", "1", path);
    TH_CHECK(strstr(info, "I! FreeDNN (v8907) function cudnnCreate() called") != NULL, "info log has the cudnnCreate call:\n%s", info);
    TH_CHECK(strstr(info, "function cudnnSetTensor4dDescriptor() called") != NULL, "info log has the descriptor call");
    TH_CHECK(strstr(info, "function cudnnDestroy() called") != NULL, "info log has cudnnDestroy");
    TH_CHECK(strstr(info, "E! ") == NULL, "no error lines without CUDNN_LOGERR_DBG");
    char *err = run_child("/proc/self/exe", "CUDNN_LOGERR_DBG", "1", path);
    TH_CHECK(strstr(err, "E! FreeDNN") != NULL && strstr(err, "dimA[1]=-3") != NULL, "error log names the bad argument:\n%s", err);
    TH_CHECK(strstr(err, "I! ") == NULL, "no info lines with errors only");
    char *lvl = run_child("/proc/self/exe", "CUDNN_LOGLEVEL_DBG", "3", path);
    TH_CHECK(strstr(lvl, "I! ") != NULL && strstr(lvl, "E! ") != NULL, "CUDNN_LOGLEVEL_DBG=3 enables info and errors");
    char *lvl1 = run_child("/proc/self/exe", "CUDNN_LOGLEVEL_DBG", "1", path);
    TH_CHECK(strstr(lvl1, "I! ") == NULL && strstr(lvl1, "E! ") != NULL, "CUDNN_LOGLEVEL_DBG=1 enables errors only");
    free(info); free(err); free(lvl); free(lvl1);
    unlink(path);
    return th_finish();
}
