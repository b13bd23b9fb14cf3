// The AVX2 kernel table with AVX-VNNI (Alder Lake, Sierra Forest and later cores without
// AVX-512): kernels_avx2.cpp compiled again with -mavxvnni (CMakeLists.txt, by file name), its
// quantized dots on vpdpbusd instead of maddubs + madd. Only called after cpu_features.cpp has
// seen AVX2, FMA, F16C and AVX-VNNI; everything in it is internal to this translation unit, like
// the plain AVX2 table's copy.
#define HARK_KERNELS_AVX_VNNI 1
#include "simd/kernels_avx2.cpp"  // NOLINT(bugprone-suspicious-include): one source, two ISA builds
