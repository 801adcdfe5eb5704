/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What every file of libcfs includes: the public headers of every area
 * (include/cfs/), the on-disk format the kernel module shares
 * (cfs-format.h), and the helpers private to the library (internal.h).
 * Nothing outside lib/ includes it; cfsctl's verbs include the public
 * headers of the areas they use.
 */
#ifndef LIBCFS_H
#define LIBCFS_H

#include "cfs-format.h"
#include "cfs/build.h"
#include "cfs/diff.h"
#include "cfs/image.h"
#include "cfs/mount.h"
#include "cfs/repo.h"
#include "cfs/store.h"
#include "cfs/util.h"
#include "cfs/verify.h"
#include "internal.h"

#endif /* LIBCFS_H */
