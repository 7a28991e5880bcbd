/* aiscan stub header: the C99 math library as prototypes (calls are "special" operations). */
#ifndef __AISCAN_MATH_H
#define __AISCAN_MATH_H
double sqrt(double); float sqrtf(float); double cbrt(double); float cbrtf(float);
double exp(double); float expf(float); double exp2(double); float exp2f(float);
double expm1(double); float expm1f(float);
double log(double); float logf(float); double log2(double); float log2f(float);
double log10(double); float log10f(float); double log1p(double); float log1pf(float);
double pow(double, double); float powf(float, float);
double sin(double); float sinf(float); double cos(double); float cosf(float);
double tan(double); float tanf(float); double asin(double); float asinf(float);
double acos(double); float acosf(float); double atan(double); float atanf(float);
double atan2(double, double); float atan2f(float, float);
double sinh(double); float sinhf(float); double cosh(double); float coshf(float);
double tanh(double); float tanhf(float); double asinh(double); double acosh(double);
double atanh(double); double erf(double); float erff(float); double erfc(double);
double tgamma(double); double lgamma(double); double hypot(double, double);
double fabs(double); float fabsf(float); double fmin(double, double); double fmax(double, double);
float fminf(float, float); float fmaxf(float, float);
double fma(double, double, double); float fmaf(float, float, float);
double floor(double); double ceil(double); double round(double); double trunc(double);
float floorf(float); float ceilf(float); float roundf(float); float truncf(float);
double fmod(double, double); double copysign(double, double);
#define M_PI 3.14159265358979323846
#define M_E 2.7182818284590452354
#define M_SQRT2 1.41421356237309504880
#define INFINITY (1.0f / 0.0f)
#define NAN (0.0f / 0.0f)
#define HUGE_VAL (1.0 / 0.0)
#endif
