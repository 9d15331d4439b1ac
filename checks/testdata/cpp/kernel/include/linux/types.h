/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_TYPES_H
#define _LINUX_TYPES_H
typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef u64 dma_addr_t;
typedef unsigned long uintptr_t;
#define NULL ((void *)0)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define min(a, b) ((a) < (b) ? (a) : (b))
#endif
