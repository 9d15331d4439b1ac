/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TC_HELPERS_H
#define TC_HELPERS_H
#define TC_SGE_FILL(sge, a, len, key) \
	do { \
		(sge)->addr = (a); \
		(sge)->length = (len); \
		(sge)->lkey = (key); \
	} while (0)
#endif
