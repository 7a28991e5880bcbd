/* aiscan stub header: x86 SIMD vector types, opaque. Intrinsic calls are not declared:
   each is reported as an unknown call, its work and traffic not counted. */
#ifndef __AISCAN_IMMINTRIN_H
#define __AISCAN_IMMINTRIN_H
typedef struct __aiscan_m128 __m128;
typedef struct __aiscan_m128d __m128d;
typedef struct __aiscan_m128i __m128i;
typedef struct __aiscan_m256 __m256;
typedef struct __aiscan_m256d __m256d;
typedef struct __aiscan_m256i __m256i;
typedef struct __aiscan_m512 __m512;
typedef struct __aiscan_m512d __m512d;
typedef struct __aiscan_m512i __m512i;
typedef unsigned char __mmask8;
typedef unsigned short __mmask16;
typedef unsigned int __mmask32;
typedef unsigned long __mmask64;
#endif
