/* freednn bench --vs-onednn: the same convolution through oneDNN (built only with
 * FREEDNN_HAVE_ONEDNN), and the measured AVX-512 FMA peak. */
#ifndef FREEDNN_ONEDNN_H
#define FREEDNN_ONEDNN_H
#include <stddef.h>
#include "freednn_ref.h"

/* Times dir (0 fwd, 1 bwd-data, 2 bwd-filter) of c through oneDNN on the caller's host FLOAT
 * buffers in plain layouts (nhwc: x/y NHWC and the filter KRSC, else NCHW / KCRS), with
 * warmup untimed and iters timed calls. 0 and tmin/tmed in seconds, or -1 and a message. */
int fdt_onednn_time(int dir, const fdt_conv *c, int nhwc, void *x, void *w, void *y, int warmup, int iters, double *tmin,
                    double *tmed, char *err, size_t err_n);
/* oneDNN's version string ("2.6.0"), for the banner */
const char *fdt_onednn_version(void);
/* Peak fp32 FMA rate in GFLOP/s over nthreads threads (AVX-512 when the CPU has it, else AVX2
 * FMA, else 0), best of a few short runs. */
double fdt_fma_peak(int nthreads, const char **isa);
/* GFLOP/s of a 48x8 AVX-512 GEMM register tile fed from L1 on nthreads threads (0 without
 * AVX-512): the practical ceiling of a convolution inner loop, printed beside fdt_fma_peak. */
double fdt_l1_tile_peak(int nthreads);
#endif
