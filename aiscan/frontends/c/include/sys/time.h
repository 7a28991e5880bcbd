/* aiscan stub header: POSIX gettimeofday, prototypes only. */
#ifndef __AISCAN_SYS_TIME_H
#define __AISCAN_SYS_TIME_H
#include <time.h>
struct timeval { time_t tv_sec; long tv_usec; };
struct timezone { int tz_minuteswest; int tz_dsttime; };
int gettimeofday(struct timeval *tv, void *tz);
#endif
