/* aiscan stub header */
#ifndef __AISCAN_LIMITS_H
#define __AISCAN_LIMITS_H
#define INT_MAX 2147483647
#define INT_MIN (-2147483647 - 1)
#define LONG_MAX 9223372036854775807L
#define CHAR_BIT 8
#endif
