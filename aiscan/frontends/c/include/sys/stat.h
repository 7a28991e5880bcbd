/* aiscan stub header: POSIX file status, prototypes only. */
#ifndef __AISCAN_SYS_STAT_H
#define __AISCAN_SYS_STAT_H
#include <sys/types.h>
struct stat { off_t st_size; mode_t st_mode; time_t st_mtime; };
int stat(const char *path, struct stat *buf);
int fstat(int fd, struct stat *buf);
int mkdir(const char *path, mode_t mode);
#endif
