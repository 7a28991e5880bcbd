/* aiscan stub header */
#ifndef __AISCAN_COMPLEX_H
#define __AISCAN_COMPLEX_H
double cabs(double _Complex); double _Complex cexp(double _Complex);
double _Complex csqrt(double _Complex); double creal(double _Complex);
double cimag(double _Complex); double _Complex conj(double _Complex);
#define complex _Complex
extern double _Complex __aiscan_I;
#define I __aiscan_I
#endif
