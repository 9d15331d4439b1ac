/* SPDX-License-Identifier: GPL-2.0 */
/* The module's SGE filler. */
#define TC_SGE_FILL(s, a, l, k) do { (s)->addr = (a); (s)->length = (l); (s)->lkey = (k); } while (0)
#define TC_HDR_LEN 24
