// Per-element loops over outputs (millions of values per API) are written to vectorise: no
// branches, and `#pragma omp simd` (built with -fopenmp-simd, no OpenMP runtime) on reductions
// whose order cannot change the result (maxima, counts, flags). Floating-point sums keep a fixed
// order, so the numbers do not depend on the machine.
//
// ACCCHECK_SIMD_CLONES on such a loop's function also builds it for AVX2, picked at load time on
// CPUs that have it: x86-64's baseline (SSE2) has no 64-bit lane compares or blends, and without
// them GCC leaves the loops' counts and flags scalar. AVX2 without FMA: the same arithmetic.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define ACCCHECK_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ACCCHECK_SIMD_CLONES
#endif
