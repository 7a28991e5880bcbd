/* aiscan stub header: <stdint.h> and the printf format macros. */
#ifndef __AISCAN_INTTYPES_H
#define __AISCAN_INTTYPES_H
#include <stdint.h>
#define PRId32 "d"
#define PRId64 "ld"
#define PRIu32 "u"
#define PRIu64 "lu"
#define PRIx64 "lx"
#define PRIdMAX "ld"
#define PRIuMAX "lu"
#endif
