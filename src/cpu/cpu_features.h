/* Run-time CPU feature checks for the vectorised CPU kernels. */
#ifndef FDNN_CPU_FEATURES_H
#define FDNN_CPU_FEATURES_H
/* 1 when the AVX-512 kernels were compiled in (FDNN_HAVE_AVX512) and this CPU has
 * AVX-512 F/BW/DQ/VL; FREEDNN_CPU_NO_AVX512=1 in the environment turns them off. */
int fdnn_cpu_has_avx512(void);
/* 1 when the AVX2 kernels were compiled in (FDNN_HAVE_AVX2) and this CPU has AVX2, FMA and F16C;
 * FREEDNN_CPU_NO_AVX2=1 turns them off. An AVX-512 CPU passes both checks (callers try AVX-512
 * first); FREEDNN_CPU_NO_AVX512=1 then runs the AVX2 kernels there, which is how the tests cover
 * both on one machine. */
int fdnn_cpu_has_avx2(void);
/* 1 when an OpenBLAS core name (openblas_get_corename()) is one whose SGEMM uses AVX2 or
 * AVX-512 (Haswell, SkylakeX, Cooperlake, SapphireRapids, Zen, Excavator; any case), 0 for
 * the older fallbacks (Prescott, Core2, Nehalem, Sandybridge, ...) and NULL. */
int fdnn_cpu_blas_core_ok(const char *core);
#endif
