/* SPDX-License-Identifier: GPL-2.0 */
/*
 * composefs kernel module: the structures and functions shared by the files
 * of the module. The on-disk format itself is in cfs-format.h (shared with
 * userspace); this header holds the in-memory state: the per-mount cfs_fs,
 * the per-inode cfs_inode_info, and the decoded forms the reader hands out
 * after validating them.
 */
#ifndef CFS_INTERNAL_H
#define CFS_INTERNAL_H

#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/path.h>
#include <linux/rhashtable-types.h>
#include <linux/siphash.h>
#include <linux/types.h>
#include <linux/xattr.h>

#include "cfs-format.h"

#ifndef EFSCORRUPTED
#define EFSCORRUPTED EUCLEAN /* the image is corrupt */
#endif

#define CFS_FS_NAME "composefs"
#define CFS_MAX_BASEDIRS 128

/* Index of an inode in the image -> inode number the VFS shows, and back.
 * The inode number is the descriptor file offset of the fixed chunk, so it
 * is never 0 (which some userspace treats as "no entry").
 */
#define cfs_index_to_ino(index) ((index) + CFS_INODE_SECTION_OFFSET)
#define cfs_ino_to_index(ino) ((u64)(ino) - CFS_INODE_SECTION_OFFSET)

/* Descriptor readahead on a miss: streams followed at once (see reader.c). */
#define CFS_RA_STREAMS 16

/**
 * struct cfs_ra_stream - one place of the descriptor misses keep coming near
 * @start: first page of its last window
 * @end: page after its last window
 * @pages: size of its last window
 * @used: when a miss last came near (cfs_fs.ra_clock), to pick one to reuse
 */
struct cfs_ra_stream {
	pgoff_t start, end;
	unsigned int pages;
	unsigned long used;
};

/**
 * struct cfs_fs - one mounted image (sb->s_fs_info)
 */
struct cfs_fs {
	struct file *descriptor; /* the image file, kept open while mounted */
	bool descriptor_is_bdev; /* a block device rather than a file */
	u64 size; /* descriptor size, sampled once at mount */
	/*
	 * The descriptor's page cache cannot be filled by read_mapping_folio()
	 * (tmpfs has no ->read_folio): read it with kernel_read() instead.
	 */
	bool read_by_kernel_read;
	/*
	 * The descriptor is a file with fs-verity: its bytes cannot change
	 * while mounted, and its page cache only ever holds verified ones.
	 * A directory chunk checked once can then be listed in place.
	 */
	bool descriptor_sealed;
	u64 data_offset; /* file offset of the variable data section */
	u64 root_index;

	char *basedir_opt; /* basedir= as given, for show_options */
	struct vfsmount **bases; /* private clones; mnt_root is each basedir */
	unsigned int n_bases;
	unsigned int stack_depth; /* of the image's and basedirs' filesystems, plus one */
	const struct cred *creator_cred; /* used to open backing files */

	unsigned int verity_check; /* 0 never, 1 when recorded, 2 required */
	bool verity_check_set; /* verity_check= given explicitly */
	bool has_digest; /* digest= given */
	u8 digest[CFS_DIGEST_SIZE];

	spinlock_t ra_lock; /* ra, ra_clock */
	struct cfs_ra_stream ra[CFS_RA_STREAMS];
	unsigned long ra_clock;

	siphash_key_t fh_key; /* random per mount: file handles carry a MAC */
	struct rhashtable parents; /* directory index -> parent, see dir.c */
	bool parents_init;
};

/* Bytes of each chunk's first name a small directory's index keeps. */
#define CFS_CHUNK_PREFIX 19

/**
 * struct cfs_chunk - one directory chunk's descriptor, validated, in CPU order
 *
 * In a small directory's index, the first name (or its first
 * CFS_CHUNK_PREFIX bytes) too, so that a lookup finds its chunk without
 * reading the others.
 */
struct cfs_chunk {
	u64 offset; /* descriptor file offset of the chunk */
	u16 n_dentries;
	u16 size;
	u8 first_len; /* length of the whole first name; index only */
	u8 first[CFS_CHUNK_PREFIX];
};

/*
 * A directory of at most this many chunks is indexed on first use: every
 * chunk is read once, its order against the one before checked, and its
 * place and first name kept, within 4 KiB. A larger one keeps no index.
 */
#define CFS_DIR_INDEX_MAX 120

/**
 * struct cfs_dir_table - where a directory's chunks are
 *
 * Read on first use. A small directory keeps an index of its chunks
 * (@chunks); a larger one none: a lookup reads the descriptors its search
 * probes, a listing the ones it reaches. What a directory pins is within
 * 4 KiB, whatever its size.
 */
struct cfs_dir_table {
	u64 index; /* the directory's inode index, for messages */
	u64 start; /* descriptor file offset of chunk descriptor 0 */
	/* n_chunks of them, order checked, when n_chunks <= CFS_DIR_INDEX_MAX */
	struct cfs_chunk *chunks;
	u32 n_chunks;
	/*
	 * With fs->descriptor_sealed, a bit for each of the first n_checked
	 * chunks: set once cfs_load_chunk() passed it and its first name
	 * sorts after the chunk before's last, so it can be listed in place.
	 */
	u32 n_checked;
	unsigned long checked[];
};

/*
 * Chunks of one directory whose checks a sealed descriptor remembers: as
 * many as keep the table within 4 KiB (32,512). Chunks past them are
 * checked on each listing.
 */
#define CFS_DIR_CHECKED_MAX \
	((u32)(SZ_4K - sizeof(struct cfs_dir_table)) * BITS_PER_BYTE)

static inline bool cfs_chunk_checked(const struct cfs_dir_table *t, u32 i)
{
	return i < t->n_checked && test_bit(i, t->checked);
}

/**
 * struct cfs_inode_info - in-memory inode
 *
 * Everything here was decoded and validated once, when the inode was
 * instantiated; later operations do not re-read these fields.
 */
struct cfs_inode_info {
	struct inode vfs_inode;
	u64 index;
	char *payload; /* NUL-terminated: backing path or symlink target */
	u32 payload_len;
	bool has_digest;
	u8 digest[CFS_DIGEST_SIZE];
	u64 xattrs_offset; /* descriptor file offset; valid when xattrs_len */
	u32 xattrs_len;
	/* Directories: the chunk table, NULL until first needed (dir.c);
	 * payload_len is then the size of the table in the image.
	 */
	struct cfs_dir_table *dir;
	/* Regular files: the checked backing file every open starts from,
	 * opened by the first (file.c), under vfs_inode.i_lock; NULL until
	 * then, closed on eviction.
	 */
	struct file *file;
};

static inline struct cfs_inode_info *CFS_I(struct inode *inode)
{
	return container_of(inode, struct cfs_inode_info, vfs_inode);
}

static inline struct cfs_fs *CFS_FS(struct super_block *sb)
{
	return sb->s_fs_info;
}

/**
 * struct cfs_dinode - a fixed inode chunk, decoded and validated
 */
struct cfs_dinode {
	u64 index;
	u32 flags;
	u32 payload_len;
	u32 mode;
	u32 nlink;
	u32 uid;
	u32 gid;
	u32 rdev;
	s64 mtime_sec;
	u32 mtime_nsec;
	s64 ctime_sec;
	u32 ctime_nsec;
	u64 size;
	u64 xattrs_offset; /* as stored: relative to the data section */
	u32 xattrs_len;
	bool has_digest; /* CFS_INODE_FLAGS_DIGEST */
	u8 digest[CFS_DIGEST_SIZE];
};

/**
 * struct cfs_chunk_buf - a copy of one directory chunk, validated
 *
 * A private copy, so the names and indices cannot change after they were
 * checked, even if the descriptor file does.
 */
struct cfs_chunk_buf {
	u16 n_dentries;
	u16 size;
	u8 data[]; /* room for the chunk */
};

/**
 * struct cfs_entry - one directory entry inside a cfs_chunk_buf
 */
struct cfs_entry {
	const char *name;
	u8 name_len;
	u8 d_type;
	u64 index;
};

/* reader.c */
int cfs_reader_init(struct cfs_fs *fs);
int cfs_read_bytes(struct cfs_fs *fs, u64 pos, void *buf, size_t len);
int cfs_read_dinode(struct cfs_fs *fs, u64 index, struct cfs_dinode *di);
int cfs_read_payload(struct cfs_fs *fs, const struct cfs_dinode *di, char **out);
/**
 * struct cfs_map - bytes of the descriptor, mapped in place or copied
 */
struct cfs_map {
	struct folio *folio; /* mapped: the folio, NULL for a copy */
	void *copy; /* a copy (descriptor without ->read_folio) */
	const u8 *data;
};

int cfs_map(struct cfs_fs *fs, u64 pos, size_t len, struct cfs_map *m);
void cfs_unmap(struct cfs_map *m);
struct cfs_dir_table *cfs_dir_table(struct inode *dir);
int cfs_load_chunk(struct cfs_fs *fs, const struct cfs_chunk *chunk,
		   struct cfs_chunk_buf *buf);
void cfs_chunk_entry_at(const u8 *data, u16 n_dentries, unsigned int i,
			struct cfs_entry *e);
void cfs_chunk_entry(const struct cfs_chunk_buf *buf, unsigned int i,
		     struct cfs_entry *e);
int cfs_dir_chunk(struct cfs_fs *fs, const struct cfs_dir_table *t, u32 i,
		  struct cfs_chunk *ch);
int cfs_chunk_last_name(struct cfs_fs *fs, const struct cfs_dir_table *t,
			u32 i, char *buf, u8 *len);
int cfs_chunk_follows(struct cfs_fs *fs, const struct cfs_dir_table *t, u32 i,
		      const char *last, u8 last_len, const struct cfs_entry *first);
int cfs_dir_lookup(struct inode *dir, const char *name, size_t len,
		   u64 *index, u8 *d_type);

/* inode.c */
struct inode *cfs_iget(struct super_block *sb, u64 index);
extern const struct inode_operations cfs_file_inode_operations;
extern const struct inode_operations cfs_symlink_inode_operations;
extern const struct inode_operations cfs_special_inode_operations;
int cfs_inode_cache_init(void);
void cfs_inode_cache_destroy(void);
struct inode *cfs_alloc_inode(struct super_block *sb);
void cfs_free_inode(struct inode *inode);
void cfs_evict_inode(struct inode *inode);

/* dir.c */
extern const struct file_operations cfs_dir_operations;
extern const struct inode_operations cfs_dir_inode_operations;
int cfs_parents_init(struct cfs_fs *fs);
void cfs_parents_destroy(struct cfs_fs *fs);
int cfs_parent_of(struct cfs_fs *fs, u64 index, u64 *parent);
int cfs_set_parent(struct cfs_fs *fs, u64 index, u64 parent,
		   const char *name, size_t len);

/* file.c */
extern const struct file_operations cfs_file_operations;

/* xattr.c */
extern const struct xattr_handler * const cfs_xattr_handlers[];
ssize_t cfs_listxattr(struct dentry *dentry, char *names, size_t size);
struct posix_acl *cfs_get_inode_acl(struct inode *inode, int type, bool rcu);

/* export.c */
extern const struct export_operations cfs_export_operations;

#endif /* CFS_INTERNAL_H */
