// Per-element loops over outputs (millions of values per API) are written to vectorise: no
// branches, and `#pragma omp simd` (built with -fopenmp-simd, no OpenMP runtime) on reductions
// whose order cannot change the result (maxima, counts, flags). Floating-point sums keep a fixed
// order, so the numbers do not depend on the machine.
//
// ACCCHECK_SIMD_CLONES on such a loop's function also builds it for AVX2 and for AVX-512, picked at
// load time on CPUs that have them: x86-64's baseline (SSE2) has no 64-bit lane compares or blends,
// and without them GCC leaves the loops' counts and flags scalar; AVX-512 halves the instructions
// again (a 16-lane float loop is one register). The same arithmetic in every clone: AVX2 has no
// FMA, and AVX-512's FMA is never used because the SDK target makes everything that links it build
// with -ffp-contract=off (a contracted a*b+c rounds once, and would change the numbers).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define ACCCHECK_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ACCCHECK_SIMD_CLONES
#endif
