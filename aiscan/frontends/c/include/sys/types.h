/* aiscan stub header: POSIX system types. */
#ifndef __AISCAN_SYS_TYPES_H
#define __AISCAN_SYS_TYPES_H
typedef unsigned long size_t;
typedef long ssize_t;
typedef long off_t;
typedef int pid_t;
typedef unsigned int uid_t;
typedef unsigned int gid_t;
typedef unsigned int mode_t;
typedef long time_t;
#endif
