/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Userspace stand-in for the kernel's <linux/cred.h>: see ../kshim.h. The
 * fuzzer has one process and no credentials to switch: override_creds()
 * hands back what revert_creds() is given, and neither does anything.
 */
#include "../kshim.h"

static inline const struct cred *override_creds(const struct cred *new)
{
	return new;
}

static inline void revert_creds(const struct cred *old)
{
	(void)old;
}
