/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The composefs 1.0 image format: an EROFS filesystem (the subset of it that
 * composefs writes) preceded by a small composefs header. This header holds
 * the on-disk structures and constants that libcfs's EROFS writer encodes;
 * the field layout is the kernel's fs/erofs/erofs_fs.h, fixed-width and
 * little-endian throughout. Userspace gets the kernel type names from
 * cfs-kshim.h, as for cfs-format.h.
 *
 * Layout of an image:
 *
 *   [struct cfs_erofs_header]     at offset 0, zero-padded to 1024
 *   [struct erofs_super_block]    at EROFS_SUPER_OFFSET (1024)
 *   [inodes]                      from right after the superblock, each on
 *                                 a 32-byte slot, with their xattrs and tail
 *   [shared xattrs]               from a slot boundary after the inodes
 *   [data blocks]                 from the next block boundary: directory
 *                                 blocks and inline-content file blocks
 *
 * An inode's number (nid) is its offset from the start of the metadata block
 * (meta_blkaddr, block 0 here) in 32-byte slots. Regular files whose content
 * lives outside the image are chunk-based inodes whose every chunk is a hole;
 * overlayfs finds the content through the trusted.overlay.redirect and
 * trusted.overlay.metacopy xattrs.
 */
#ifndef CFS_EROFS_FORMAT_H
#define CFS_EROFS_FORMAT_H

#ifdef __KERNEL__
#include <linux/build_bug.h>
#include <linux/types.h>
#else
#include <stddef.h>

#include "cfs-kshim.h"
#endif

/* ---- the composefs header ---- */

#define CFS_EROFS_MAGIC 0xd078629aU
#define CFS_EROFS_VERSION 1 /* version of struct cfs_erofs_header */
#define CFS_EROFS_FLAGS_HAS_ACL (1U << 0) /* some inode has a POSIX ACL */

/* composefs_version: the oldest composefs that can read the image */
#define CFS_EROFS_COMPOSEFS_VERSION_MAX 1

/**
 * struct cfs_erofs_header - what composefs writes before the EROFS superblock
 */
struct cfs_erofs_header {
	__le32 magic; /* CFS_EROFS_MAGIC */
	__le32 version; /* CFS_EROFS_VERSION */
	__le32 flags; /* CFS_EROFS_FLAGS_* */
	__le32 composefs_version; /* 0 or 1: the features the image relies on */
	__le32 unused[4]; /* written as 0 */
} __packed;

/* ---- EROFS ---- */

#define EROFS_SUPER_MAGIC_V1 0xe0f5e1e2U
#define EROFS_SUPER_OFFSET 1024
#define EROFS_BLKSIZ_BITS 12
#define EROFS_BLKSIZ (1U << EROFS_BLKSIZ_BITS)
#define EROFS_ISLOTBITS 5 /* inodes sit on 32-byte slots */
#define EROFS_SLOTSIZE (1U << EROFS_ISLOTBITS)

#define EROFS_FEATURE_COMPAT_SB_CHKSUM 0x00000001U
#define EROFS_FEATURE_COMPAT_MTIME 0x00000002U /* extended inodes have mtime */
#define EROFS_FEATURE_COMPAT_XATTR_FILTER 0x00000004U /* h_name_filter is valid */

/**
 * struct erofs_super_block - the EROFS superblock, at EROFS_SUPER_OFFSET
 */
struct erofs_super_block {
	__le32 magic; /* EROFS_SUPER_MAGIC_V1 */
	__le32 checksum; /* crc32c of the block, with SB_CHKSUM only; 0 here */
	__le32 feature_compat; /* EROFS_FEATURE_COMPAT_* */
	u8 blkszbits; /* log2 of the block size: EROFS_BLKSIZ_BITS */
	u8 sb_extslots; /* 16-byte slots the superblock extends by; 0 */
	__le16 root_nid; /* nid of the root directory */
	__le64 inos; /* number of inodes */
	__le64 build_time; /* mtime of every compact inode, seconds */
	__le32 build_time_nsec; /* and its nanoseconds */
	__le32 blocks; /* blocks in the image */
	__le32 meta_blkaddr; /* block that nids count from */
	__le32 xattr_blkaddr; /* block that shared xattr ids count from */
	u8 uuid[16]; /* volume uuid; 0 */
	u8 volume_name[16]; /* volume label; 0 */
	__le32 feature_incompat; /* features a reader must know; 0 */
	__le16 available_compr_algs; /* compression; 0 */
	__le16 extra_devices; /* multi-device images; 0 */
	__le16 devt_slotoff; /* device table; 0 */
	u8 dirblkbits; /* log2 of directory block size minus blkszbits; 0 */
	u8 xattr_prefix_count; /* long xattr name prefixes; 0 */
	__le32 xattr_prefix_start; /* where they are; 0 */
	__le64 packed_nid; /* nid of the packed inode; 0 */
	u8 xattr_filter_reserved; /* 0: the xattr name filter is in use */
	u8 reserved2[23]; /* 0 */
} __packed;

/* i_format: bit 0 the inode version, bits 1-3 the data layout */
#define EROFS_I_VERSION_BIT 0
#define EROFS_I_DATALAYOUT_BIT 1
#define EROFS_INODE_COMPACT 0 /* struct erofs_inode_compact */
#define EROFS_INODE_EXTENDED 1 /* struct erofs_inode_extended */

#define EROFS_INODE_FLAT_PLAIN 0 /* data in whole blocks from raw_blkaddr */
#define EROFS_INODE_FLAT_INLINE 2 /* whole blocks, then a tail after the inode */
#define EROFS_INODE_CHUNK_BASED 4 /* a block map of chunks after the inode */

/* i_u.c.format of a chunk-based inode: log2(chunk size) - blkszbits */
#define EROFS_CHUNK_FORMAT_BLKBITS_MASK 0x001f
#define EROFS_NULL_ADDR 0xffffffffU /* a block map entry for a hole */

/**
 * union erofs_inode_i_u - the inode word whose meaning depends on the type
 */
union erofs_inode_i_u {
	__le32 raw_blkaddr; /* flat layouts: first data block */
	__le32 rdev; /* devices: the device number, as stat(2) encodes it */
	struct {
		__le16 format; /* chunk-based: EROFS_CHUNK_FORMAT_* */
		__le16 reserved; /* 0 */
	} c;
} __packed;

/**
 * struct erofs_inode_compact - a 32-byte inode; its mtime is the build time
 */
struct erofs_inode_compact {
	__le16 i_format; /* version and data layout */
	__le16 i_xattr_icount; /* xattr area size, see erofs_xattr_icount() */
	__le16 i_mode; /* st_mode */
	__le16 i_nlink; /* st_nlink */
	__le32 i_size; /* st_size */
	__le32 i_reserved; /* 0 */
	union erofs_inode_i_u i_u; /* block address, device, or chunk format */
	__le32 i_ino; /* the inode number stat(2) reports */
	__le16 i_uid; /* st_uid */
	__le16 i_gid; /* st_gid */
	__le32 i_reserved2; /* 0 */
} __packed;

/**
 * struct erofs_inode_extended - a 64-byte inode with 32-bit ids and mtime
 */
struct erofs_inode_extended {
	__le16 i_format; /* version and data layout */
	__le16 i_xattr_icount; /* xattr area size, see erofs_xattr_icount() */
	__le16 i_mode; /* st_mode */
	__le16 i_reserved; /* 0 */
	__le64 i_size; /* st_size */
	union erofs_inode_i_u i_u; /* block address, device, or chunk format */
	__le32 i_ino; /* the inode number stat(2) reports */
	__le32 i_uid; /* st_uid */
	__le32 i_gid; /* st_gid */
	__le64 i_mtime; /* mtime seconds */
	__le32 i_mtime_nsec; /* mtime nanoseconds */
	__le32 i_nlink; /* st_nlink */
	u8 i_reserved2[16]; /* 0 */
} __packed;

/* e_name_index: the namespace prefix an xattr name is stored without */
#define EROFS_XATTR_INDEX_USER 1 /* "user." */
#define EROFS_XATTR_INDEX_POSIX_ACL_ACCESS 2 /* "system.posix_acl_access" */
#define EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT 3 /* "system.posix_acl_default" */
#define EROFS_XATTR_INDEX_TRUSTED 4 /* "trusted." */
#define EROFS_XATTR_INDEX_SECURITY 6 /* "security." */
#define EROFS_XATTR_LONG_PREFIX 0x80 /* h_shared_count limit used by writers */

/* The xattr name filter: a 32-bit Bloom filter of the inode's xattr names */
#define EROFS_XATTR_FILTER_BITS 32
#define EROFS_XATTR_FILTER_DEFAULT 0xffffffffU /* bit set: name surely absent */
#define EROFS_XATTR_FILTER_SEED 0x25bbe08fU /* xxh32 seed, plus the index */

/**
 * struct erofs_xattr_ibody_header - start of an inode's xattr area
 *
 * Followed by h_shared_count __le32 shared xattr ids (offsets from
 * xattr_blkaddr in 4-byte units), then the inline struct erofs_xattr_entry
 * items, each padded to 4 bytes.
 */
struct erofs_xattr_ibody_header {
	__le32 h_name_filter; /* bit (xxh32(name, seed + index) % 32) cleared */
	u8 h_shared_count; /* number of shared xattr ids */
	u8 h_reserved2[7]; /* 0 */
} __packed;

/**
 * struct erofs_xattr_entry - one xattr: this, the name suffix, the value
 */
struct erofs_xattr_entry {
	u8 e_name_len; /* bytes of the name after the index's prefix */
	u8 e_name_index; /* EROFS_XATTR_INDEX_*, 0 for no prefix */
	__le16 e_value_size; /* bytes of the value */
} __packed;

/* File types in struct erofs_dirent */
#define EROFS_FT_UNKNOWN 0
#define EROFS_FT_REG_FILE 1
#define EROFS_FT_DIR 2
#define EROFS_FT_CHRDEV 3
#define EROFS_FT_BLKDEV 4
#define EROFS_FT_FIFO 5
#define EROFS_FT_SOCK 6
#define EROFS_FT_SYMLINK 7

/**
 * struct erofs_dirent - one directory entry
 *
 * A directory block is an array of these followed by the names,
 * unterminated; the first entry's nameoff is thus the size of the array.
 * No entry crosses a block.
 */
struct erofs_dirent {
	__le64 nid; /* the entry's inode */
	__le16 nameoff; /* offset of the name from the start of the block */
	u8 file_type; /* EROFS_FT_* */
	u8 reserved; /* 0 */
} __packed;

static_assert(sizeof(struct cfs_erofs_header) == 32, "cfs_erofs_header size");
static_assert(sizeof(struct erofs_super_block) == 128, "erofs_super_block size");
static_assert(sizeof(union erofs_inode_i_u) == 4, "erofs_inode_i_u size");
static_assert(sizeof(struct erofs_inode_compact) == 32, "erofs_inode_compact size");
static_assert(sizeof(struct erofs_inode_extended) == 64, "erofs_inode_extended size");
static_assert(sizeof(struct erofs_xattr_ibody_header) == 12, "erofs_xattr_ibody_header size");
static_assert(sizeof(struct erofs_xattr_entry) == 4, "erofs_xattr_entry size");
static_assert(sizeof(struct erofs_dirent) == 12, "erofs_dirent size");
static_assert(offsetof(struct erofs_super_block, root_nid) == 14, "root_nid offset");
static_assert(offsetof(struct erofs_super_block, feature_incompat) == 80,
	      "feature_incompat offset");
static_assert(offsetof(struct erofs_inode_extended, i_mtime) == 32, "i_mtime offset");

/**
 * erofs_xattr_icount() - i_xattr_icount for an xattr area of @size bytes
 *
 * The area is the ibody header plus 4-byte units; an inode without xattrs
 * has none at all (icount 0).
 */
static inline u16 erofs_xattr_icount(u32 size)
{
	if (size == 0)
		return 0;
	return (u16)((size - sizeof(struct erofs_xattr_ibody_header)) / 4 + 1);
}

#endif /* CFS_EROFS_FORMAT_H */
