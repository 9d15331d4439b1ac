/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TC_HELPERS_H
#define TC_HELPERS_H
#ifdef CONFIG_TC_FAST
#define TC_WR_FLAGS (IB_SEND_SIGNALED | IB_SEND_INLINE)
#else
#define TC_WR_FLAGS IB_SEND_SIGNALED
#endif
#endif
