/* freednn: the FreeDNN command (bench, doctor, verify, version). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cudnn.h"
#include "freednn_tools.h"

int fdt_self_prefix(char *buf, size_t n)
{
    char exe[PATH_MAX];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (l <= 0) return -1;
    exe[l] = 0;
    for (int i = 0; i < 2; i++) {   /* strip /freednn, then /bin */
        char *s = strrchr(exe, '/');
        if (!s) return -1;
        *s = 0;
    }
    if (!exe[0]) snprintf(exe, sizeof exe, "/");
    snprintf(buf, n, "%s", exe);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: freednn COMMAND [ARGS]\n"
            "  bench    time convolutions (classic cuDNN flags, benchdnn descriptors, layer files)\n"
            "  doctor   diagnose the cuDNN setup of this machine (libraries, headers, driver, devices)\n"
            "  verify   check an installed tree or unpacked archive against its SHA256SUMS\n"
            "  version  print the FreeDNN / cuDNN API version\n"
            "Run 'freednn COMMAND --help' for the options of a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "bench")) return fdt_bench_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "doctor")) return fdt_doctor_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "verify")) return fdt_verify_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        size_t v = cudnnGetVersion();
        printf("freednn %s (cuDNN API %zu.%zu.%zu)\n", FREEDNN_TOOLS_VERSION, v / 1000, v % 1000 / 100, v % 100);
        return 0;
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "freednn: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
