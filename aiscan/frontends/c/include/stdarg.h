/* aiscan stub header: variadic arguments, as no-op macros. */
#ifndef __AISCAN_STDARG_H
#define __AISCAN_STDARG_H
typedef __builtin_va_list va_list;
#define va_start(ap, last) ((void)0)
#define va_arg(ap, type) ((type)0)
#define va_end(ap) ((void)0)
#define va_copy(dest, src) ((void)0)
#endif
