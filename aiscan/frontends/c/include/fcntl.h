/* aiscan stub header: POSIX open, prototypes only. */
#ifndef __AISCAN_FCNTL_H
#define __AISCAN_FCNTL_H
#include <sys/types.h>
int open(const char *path, int flags, ...);
int fcntl(int fd, int command, ...);
#define O_RDONLY 0
#define O_WRONLY 1
#define O_RDWR 2
#define O_CREAT 64
#define O_TRUNC 512
#endif
