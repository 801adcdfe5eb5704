/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Userspace stand-in for the kernel's <linux/swap.h>: see ../kshim.h. */
#include "../kshim.h"
