/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TC_HELPERS_H
#define TC_HELPERS_H
#define TC_WR_INLINE(wr, len) \
	do { \
		(wr)->send_flags |= IB_SEND_INLINE; \
	} while (0)
#endif
