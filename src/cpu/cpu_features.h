/* Run-time CPU feature checks for the vectorised CPU kernels. */
#ifndef FDNN_CPU_FEATURES_H
#define FDNN_CPU_FEATURES_H
/* 1 when the AVX-512 kernels were compiled in (FDNN_HAVE_AVX512) and this CPU has
 * AVX-512 F/BW/DQ/VL; FREEDNN_CPU_NO_AVX512=1 in the environment turns them off. */
int fdnn_cpu_has_avx512(void);
#endif
