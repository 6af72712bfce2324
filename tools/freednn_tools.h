/* Entry points of the freednn command's subcommands and helpers shared between them. */
#ifndef FREEDNN_TOOLS_H
#define FREEDNN_TOOLS_H
#include <stddef.h>
#include "freednn_ref.h"

int fdt_bench_main(int argc, char **argv);
int fdt_doctor_main(int argc, char **argv);
int fdt_verify_main(int argc, char **argv);

/* benchdnn-style descriptor (mb32ic64ih224oc64kh3ph1) -> problem; 0 or -1 with err */
int fdt_parse_descriptor(const char *str, char *name, size_t name_n, fdt_conv *cv, char *err, size_t err_n);
/* 0 if the problem is well-formed, else -1 with err */
int fdt_check_conv(const fdt_conv *c, char *err, size_t err_n);
/* the installation prefix of the running freednn (/proc/self/exe/../..) */
int fdt_self_prefix(char *buf, size_t n);

#endif
