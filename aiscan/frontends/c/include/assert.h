/* aiscan stub header */
#ifndef __AISCAN_ASSERT_H
#define __AISCAN_ASSERT_H
#define assert(expr) ((void)0)
#endif
