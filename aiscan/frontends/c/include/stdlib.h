/* aiscan stub header */
#ifndef __AISCAN_STDLIB_H
#define __AISCAN_STDLIB_H
typedef unsigned long size_t;
void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void *realloc(void *ptr, size_t size);
void *aligned_alloc(size_t alignment, size_t size);
int posix_memalign(void **ptr, size_t alignment, size_t size);
void free(void *ptr);
void exit(int status);
void abort(void);
int abs(int x);
long labs(long x);
int rand(void);
void srand(unsigned int seed);
double atof(const char *s);
int atoi(const char *s);
long atol(const char *s);
#define NULL ((void *)0)
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 2147483647
#endif
