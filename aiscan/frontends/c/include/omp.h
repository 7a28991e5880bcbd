/* aiscan stub header */
#ifndef __AISCAN_OMP_H
#define __AISCAN_OMP_H
int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
double omp_get_wtime(void);
void omp_set_num_threads(int count);
typedef struct __aiscan_omp_lock { int __opaque; } omp_lock_t;
void omp_set_lock(omp_lock_t *lock);
void omp_unset_lock(omp_lock_t *lock);
#endif
