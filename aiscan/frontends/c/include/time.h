/* aiscan stub header: C and POSIX time, prototypes only. */
#ifndef __AISCAN_TIME_H
#define __AISCAN_TIME_H
typedef long time_t;
typedef long clock_t;
typedef int clockid_t;
struct timespec { time_t tv_sec; long tv_nsec; };
time_t time(time_t *t);
clock_t clock(void);
int clock_gettime(clockid_t clock, struct timespec *t);
int nanosleep(const struct timespec *request, struct timespec *remaining);
#define CLOCKS_PER_SEC 1000000L
#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
#endif
