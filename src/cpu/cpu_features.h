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
#endif
