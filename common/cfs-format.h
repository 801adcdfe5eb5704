/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The composefs descriptor format, version 1: the one definition of the
 * on-disk structures, included unchanged by the kernel module (kmod/) and by
 * libcfs (lib/). Userspace gets the kernel type names from cfs-kshim.h.
 *
 * Layout of a descriptor ("image"):
 *
 *   [struct cfs_header]                    at offset 0
 *   [inode section]                        from CFS_INODE_SECTION_OFFSET
 *   [variable data section]                from header.data_offset
 *
 * An inode's number ("index") is the offset of its fixed chunk from the start
 * of the inode section. The fixed chunk begins with a __le32 flags word; the
 * fields that follow are present only when their flag is set, in the order of
 * enum cfs_inode_flags. The inode's payload (backing path of a regular file,
 * target of a symlink, struct cfs_dir_header of a directory) is the
 * payload_length bytes immediately *before* the fixed chunk.
 *
 * The variable data section holds directory chunks (an array of struct
 * cfs_dentry followed by the names) and xattr sets (struct cfs_xattr_header,
 * then the keys and values). No item there is larger than CFS_PAGE_SIZE or
 * spans a CFS_PAGE_SIZE boundary of the file, so a reader can map one page
 * per item.
 */
#ifndef CFS_FORMAT_H
#define CFS_FORMAT_H

#ifdef __KERNEL__
#include <linux/build_bug.h>
#include <linux/stat.h>
#include <linux/string.h>
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "cfs-kshim.h"
#endif

#define CFS_VERSION 1
#define CFS_MAGIC 0xc078629aU

/* Items in the variable data section never cross this boundary. */
#define CFS_PAGE_SIZE 4096
#define CFS_MAX_DIR_CHUNK_SIZE 4096
#define CFS_MAX_XATTRS_SIZE 4096
#define CFS_DIGEST_SIZE 32 /* fs-verity sha256 */
#define CFS_MAX_NAME_LEN 255 /* cfs_dentry.name_len is a u8 */
#define CFS_MAX_PAYLOAD_PATH 4096 /* PATH_MAX: backing path, symlink target */
/*
 * A directory's chunk table holds at most this many chunks (a 12 MiB
 * table, room for over a million full chunks of entries). Readers refuse
 * more, so a corrupt count cannot make them allocate without bound.
 */
#define CFS_MAX_DIR_CHUNKS (1U << 20)

/**
 * struct cfs_header - the first bytes of every descriptor
 */
struct cfs_header {
	u8 version; /* CFS_VERSION */
	u8 unused1; /* written as 0, ignored */
	__le16 unused2; /* written as 0, ignored */
	__le32 magic; /* CFS_MAGIC */
	__le64 data_offset; /* file offset of the variable data section */
	__le64 root_inode; /* index of the root directory's fixed chunk */
	__le64 unused3[2]; /* written as 0, ignored */
} __packed;

/* The inode section starts right after the header. */
#define CFS_INODE_SECTION_OFFSET ((u64)sizeof(struct cfs_header))

/**
 * enum cfs_inode_flags - which optional fields a fixed inode chunk holds
 *
 * The fields are stored in this order, each only when its flag is set; an
 * absent field takes the CFS_INODE_DEFAULT_* value.
 */
enum cfs_inode_flags {
	CFS_INODE_FLAGS_NONE = 0,
	CFS_INODE_FLAGS_PAYLOAD = 1 << 0, /* __le32 payload_length */
	CFS_INODE_FLAGS_MODE = 1 << 1, /* __le32 st_mode */
	CFS_INODE_FLAGS_NLINK = 1 << 2, /* __le32 st_nlink */
	CFS_INODE_FLAGS_UIDGID = 1 << 3, /* __le32 st_uid, __le32 st_gid */
	CFS_INODE_FLAGS_RDEV = 1 << 4, /* __le32 st_rdev */
	CFS_INODE_FLAGS_TIMES = 1 << 5, /* __le64 mtime sec, __le64 ctime sec */
	CFS_INODE_FLAGS_TIMES_NSEC = 1 << 6, /* __le32 mtime nsec, ctime nsec */
	CFS_INODE_FLAGS_LOW_SIZE = 1 << 7, /* __le32 low 32 bits of st_size */
	CFS_INODE_FLAGS_HIGH_SIZE = 1 << 8, /* __le32 high 32 bits of st_size */
	CFS_INODE_FLAGS_XATTRS = 1 << 9, /* __le64 offset, __le32 length */
	CFS_INODE_FLAGS_DIGEST = 1 << 10, /* u8[32] fs-verity digest of content */
	CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD = 1 << 11, /* digest is the payload's hex */
};

#define CFS_INODE_FLAGS_KNOWN 0xfffU

#define CFS_INODE_DEFAULT_MODE 0100644U
#define CFS_INODE_DEFAULT_NLINK 1U
#define CFS_INODE_DEFAULT_NLINK_DIR 2U
#define CFS_INODE_DEFAULT_UIDGID 0U
#define CFS_INODE_DEFAULT_RDEV 0U
#define CFS_INODE_DEFAULT_TIMES 0U

/* The largest fixed chunk: every optional field present. */
#define CFS_INODE_MAX_ENCODED_SIZE (4 + 4 + 4 + 4 + 8 + 4 + 16 + 8 + 4 + 4 + 12 + 32)

/**
 * cfs_inode_encoded_size() - size of a fixed inode chunk with @flags
 * @flags: the chunk's flags word (already converted to CPU order)
 */
static inline u32 cfs_inode_encoded_size(u32 flags)
{
	u32 size = 4; /* flags */

	if (flags & CFS_INODE_FLAGS_PAYLOAD)
		size += 4;
	if (flags & CFS_INODE_FLAGS_MODE)
		size += 4;
	if (flags & CFS_INODE_FLAGS_NLINK)
		size += 4;
	if (flags & CFS_INODE_FLAGS_UIDGID)
		size += 8;
	if (flags & CFS_INODE_FLAGS_RDEV)
		size += 4;
	if (flags & CFS_INODE_FLAGS_TIMES)
		size += 16;
	if (flags & CFS_INODE_FLAGS_TIMES_NSEC)
		size += 8;
	if (flags & CFS_INODE_FLAGS_LOW_SIZE)
		size += 4;
	if (flags & CFS_INODE_FLAGS_HIGH_SIZE)
		size += 4;
	if (flags & CFS_INODE_FLAGS_XATTRS)
		size += 12;
	if (flags & CFS_INODE_FLAGS_DIGEST)
		size += CFS_DIGEST_SIZE;
	return size;
}

/**
 * struct cfs_dir_chunk - where one chunk of a directory's entries lives
 */
struct cfs_dir_chunk {
	__le16 n_dentries; /* entries in the chunk, at least 1 */
	__le16 chunk_size; /* bytes: dentries plus names, <= 4096 */
	__le64 chunk_offset; /* offset from header.data_offset */
} __packed;

/**
 * struct cfs_dir_header - the payload of a non-empty directory
 *
 * payload_length is exactly sizeof(header) + n_chunks * sizeof(chunk); an
 * empty directory has no payload at all (payload_length 0). Entries are
 * sorted by name (memcmp order, the shorter name first on a common prefix)
 * across all chunks, so lookup is a binary search over chunks, then entries.
 */
struct cfs_dir_header {
	__le32 n_chunks; /* at least 1, at most CFS_MAX_DIR_CHUNKS */
	struct cfs_dir_chunk chunks[]; /* n_chunks of them */
} __packed;

/**
 * struct cfs_dentry - one directory entry inside a chunk
 *
 * A chunk is n_dentries of these, then the names, unterminated; name_offset
 * counts from the first byte after the last dentry.
 */
struct cfs_dentry {
	__le64 inode_index; /* index of the entry's inode */
	u8 d_type; /* DT_* of the inode */
	u8 name_len; /* 1..255 */
	__le16 name_offset; /* from the start of the chunk's names */
} __packed;

/**
 * struct cfs_xattr_element - lengths of one xattr in a set
 */
struct cfs_xattr_element {
	__le16 key_length; /* full name with namespace prefix, <= 255 */
	__le16 value_length;
} __packed;

/**
 * struct cfs_xattr_header - an xattr set in the variable data section
 *
 * n_attr elements, then the keys and values, key0 value0 key1 value1 ...,
 * unterminated. A set is at most CFS_MAX_XATTRS_SIZE bytes and may be shared
 * by any number of inodes.
 */
struct cfs_xattr_header {
	__le16 n_attr;
	struct cfs_xattr_element attr[];
} __packed;

static_assert(sizeof(struct cfs_header) == 40, "cfs_header size");
static_assert(sizeof(struct cfs_dir_chunk) == 12, "cfs_dir_chunk size");
static_assert(sizeof(struct cfs_dir_header) == 4, "cfs_dir_header size");
static_assert(sizeof(struct cfs_dentry) == 12, "cfs_dentry size");
static_assert(sizeof(struct cfs_xattr_element) == 4, "cfs_xattr_element size");
static_assert(sizeof(struct cfs_xattr_header) == 2, "cfs_xattr_header size");
static_assert(CFS_INODE_MAX_ENCODED_SIZE == 104, "max inode size");

#define cfs_dir_header_size(n_chunks) \
	(sizeof(struct cfs_dir_header) + (u64)(n_chunks) * sizeof(struct cfs_dir_chunk))
#define cfs_xattr_header_size(n_attr) \
	(sizeof(struct cfs_xattr_header) + (u64)(n_attr) * sizeof(struct cfs_xattr_element))

/**
 * cfs_mode_valid() - whether @mode is a file type and permission bits only
 *
 * An image may hold regular files, directories, symlinks, character and
 * block devices, fifos and sockets; nothing else, and no bits beyond
 * S_IFMT | 07777.
 */
static inline bool cfs_mode_valid(u32 mode)
{
	if (mode & ~(u32)(S_IFMT | 07777))
		return false;
	switch (mode & S_IFMT) {
	case S_IFREG:
	case S_IFDIR:
	case S_IFLNK:
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
	case S_IFSOCK:
		return true;
	}
	return false;
}

/**
 * cfs_name_cmp() - the order of entries in a directory
 *
 * memcmp order over the common length; on a common prefix the shorter name
 * sorts first. Writers sort every directory by it across all its chunks and
 * readers binary-search by it.
 *
 * Return: <0, 0 or >0.
 */
static inline int cfs_name_cmp(const void *a, size_t a_len, const void *b, size_t b_len)
{
	int r = memcmp(a, b, a_len < b_len ? a_len : b_len);

	if (r != 0 || a_len == b_len)
		return r;
	return a_len < b_len ? -1 : 1;
}

static inline int cfs_xdigit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/**
 * cfs_digest_from_payload() - the digest a by-digest backing path encodes
 * @payload: backing path such as "ab/cdef..." (not NUL-terminated)
 * @len: its length
 * @digest: out, CFS_DIGEST_SIZE bytes
 *
 * Slashes are skipped and anything from the first '.' on is ignored; what is
 * left must be exactly 64 hex digits. Used for DIGEST_FROM_PAYLOAD inodes.
 *
 * Return: 0, or -1 when the payload does not encode a digest.
 */
static inline int cfs_digest_from_payload(const char *payload, u32 len,
					  u8 digest[CFS_DIGEST_SIZE])
{
	u32 i, nibbles = 0;

	for (i = 0; i < len; i++) {
		int v;

		if (payload[i] == '/')
			continue;
		if (payload[i] == '.')
			break;
		if (nibbles == 2 * CFS_DIGEST_SIZE)
			return -1;
		v = cfs_xdigit_value(payload[i]);
		if (v < 0)
			return -1;
		if (nibbles % 2 == 0)
			digest[nibbles / 2] = (u8)(v << 4);
		else
			digest[nibbles / 2] |= (u8)v;
		nibbles++;
	}
	return nibbles == 2 * CFS_DIGEST_SIZE ? 0 : -1;
}

#endif /* CFS_FORMAT_H */
