/* aiscan stub header */
#ifndef __AISCAN_STDIO_H
#define __AISCAN_STDIO_H
typedef unsigned long size_t;
typedef struct __aiscan_FILE FILE;
extern FILE *stdin;
extern FILE *stdout;
extern FILE *stderr;
int printf(const char *format, ...);
int fprintf(FILE *stream, const char *format, ...);
int sprintf(char *s, const char *format, ...);
int snprintf(char *s, size_t n, const char *format, ...);
int puts(const char *s);
#define NULL ((void *)0)
#define EOF (-1)
#endif
