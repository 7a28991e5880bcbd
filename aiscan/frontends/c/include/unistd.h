/* aiscan stub header: POSIX unistd, prototypes only (nothing here matters for counting). */
#ifndef __AISCAN_UNISTD_H
#define __AISCAN_UNISTD_H
#include <sys/types.h>
int usleep(unsigned int usec);
unsigned int sleep(unsigned int seconds);
int close(int fd);
ssize_t read(int fd, void *buf, size_t count);
ssize_t write(int fd, const void *buf, size_t count);
long sysconf(int name);
pid_t getpid(void);
int getopt(int argc, char *const argv[], const char *optstring);
extern char *optarg;
extern int optind;
#define _SC_NPROCESSORS_ONLN 84
#endif
