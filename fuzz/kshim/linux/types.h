/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Userspace stand-in for the kernel's <linux/types.h>: the UAPI header
 * (for __le16 and friends, which cfs-kshim.h also relies on), then the
 * kernel-only names; see ../kshim.h.
 */
#include_next <linux/types.h>
#include "../kshim.h"
