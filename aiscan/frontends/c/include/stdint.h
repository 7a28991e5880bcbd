/* aiscan stub header */
#ifndef __AISCAN_STDINT_H
#define __AISCAN_STDINT_H
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef long intmax_t;
typedef unsigned long uintmax_t;
typedef long ssize_t;
typedef int int_fast32_t;
typedef long int_fast64_t;
typedef unsigned int uint_fast32_t;
typedef unsigned long uint_fast64_t;
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807L
#define SIZE_MAX 18446744073709551615UL
#endif
