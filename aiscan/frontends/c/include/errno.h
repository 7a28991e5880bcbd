/* aiscan stub header: errno and the usual codes. */
#ifndef __AISCAN_ERRNO_H
#define __AISCAN_ERRNO_H
extern int errno;
#define EPERM 1
#define ENOENT 2
#define EINTR 4
#define EIO 5
#define ENOMEM 12
#define EACCES 13
#define EEXIST 17
#define EINVAL 22
#define ERANGE 34
#endif
