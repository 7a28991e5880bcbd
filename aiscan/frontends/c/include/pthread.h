/* aiscan stub header: POSIX threads, types opaque and prototypes only. */
#ifndef __AISCAN_PTHREAD_H
#define __AISCAN_PTHREAD_H
typedef unsigned long pthread_t;
typedef struct __aiscan_pthread_attr { int __opaque; } pthread_attr_t;
typedef struct __aiscan_pthread_mutex { int __opaque; } pthread_mutex_t;
typedef struct __aiscan_pthread_cond { int __opaque; } pthread_cond_t;
typedef struct __aiscan_pthread_barrier { int __opaque; } pthread_barrier_t;
int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg);
int pthread_join(pthread_t thread, void **value);
int pthread_mutex_lock(pthread_mutex_t *mutex);
int pthread_mutex_unlock(pthread_mutex_t *mutex);
int pthread_barrier_wait(pthread_barrier_t *barrier);
#define PTHREAD_MUTEX_INITIALIZER {0}
#endif
