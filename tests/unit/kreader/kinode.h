/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The kernel module's decoder of a v1 inode (kmod/reader.c, built for
 * userspace on fuzz/kshim/), behind standard C types, for the unit tests
 * that hold the library's rules equal to the module's.
 */
#ifndef CFS_TEST_KINODE_H
#define CFS_TEST_KINODE_H

#include <stddef.h>
#include <stdint.h>

/*
 * What the module makes of inode @index of the image in @data: 0 when it
 * would use it, or its -errno. Like a lookup in the module it reads the
 * header, the inode, a file's or symlink's payload (and a digest its
 * backing path must spell, as kmod/inode.c checks it), and a directory's
 * chunk table.
 */
int kreader_inode(const uint8_t *data, size_t size, uint64_t index);

#endif /* CFS_TEST_KINODE_H */
