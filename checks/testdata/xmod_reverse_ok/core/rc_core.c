// SPDX-License-Identifier: GPL-2.0
/* The core posts its users' requests; nothing here is inline. */
#include "rc_core.h"

int rc_post(struct rc_conn *c, struct ib_send_wr *wr)
{
	return ib_post_send(c->qp, wr, NULL);
}
EXPORT_SYMBOL(rc_post);
