/* aiscan stub header: declarations the analyzer needs, no system compiler required. */
#ifndef __AISCAN_STDDEF_H
#define __AISCAN_STDDEF_H
typedef unsigned long size_t;
typedef long ptrdiff_t;
typedef int wchar_t;
typedef long double max_align_t;
#define NULL ((void *)0)
#define offsetof(type, member) ((size_t)0)
#endif
