/* aiscan stub header */
#ifndef __AISCAN_STRING_H
#define __AISCAN_STRING_H
typedef unsigned long size_t;
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
#define NULL ((void *)0)
#endif
