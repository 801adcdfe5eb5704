/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The few kernel interfaces the module's descriptor reader (kmod/reader.c)
 * uses, implemented in userspace so that the unchanged file can be fuzzed
 * under ASan and UBSan. The descriptor is a byte buffer standing in for the
 * page cache: read_mapping_folio() hands out one page of it (zero-filled
 * past the end of the file, as the page cache does), and copying from a
 * folio beyond its page aborts, since in the kernel that would read another
 * page's memory. Allocations are plain malloc(), so leaks and overruns of
 * the reader's buffers show up too. The headers in linux/ next to this one
 * only include it.
 */
#ifndef CFS_FUZZ_KSHIM_H
#define CFS_FUZZ_KSHIM_H

#include <dirent.h> /* DT_* */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h> /* loff_t */

#include "cfs-kshim.h" /* u8..u64, le*_to_cpu, as libcfs has them */

typedef int64_t s64;
typedef unsigned long pgoff_t;

#define U64_MAX UINT64_MAX
#define PAGE_SHIFT 12
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#define offset_in_page(p) ((unsigned long)(p) & (PAGE_SIZE - 1))
#define NSEC_PER_SEC 1000000000L
#define MAX_LFS_FILESIZE ((loff_t)INT64_MAX)
#define GFP_KERNEL 0
#define __GFP_ACCOUNT 0
#define __GFP_NOWARN 0
#define GFP_KERNEL_ACCOUNT 0

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define min_t(t, a, b) ((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define min3(a, b, c) min(min(a, b), c)
#define SZ_4K 0x1000
#define SZ_16K 0x4000
#define SZ_128K 0x20000
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
/* One thread: a lock that is always free. */
typedef struct {
	int locked;
} spinlock_t;
#define spin_lock_init(l) ((l)->locked = 0)
#define spin_lock(l) ((l)->locked++)
#define spin_unlock(l) ((l)->locked--)
#define REPEAT_BYTE(x) ((~0ul / 0xff) * (x))
#define BITS_PER_BYTE 8
#define BITS_PER_LONG (8 * sizeof(long))
#define BITS_TO_LONGS(n) (((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define bitmap_zero(map, n) memset((map), 0, BITS_TO_LONGS(n) * sizeof(long))
#define test_bit(nr, map) (((map)[(nr) / BITS_PER_LONG] >> ((nr) % BITS_PER_LONG)) & 1)
#define set_bit(nr, map) ((map)[(nr) / BITS_PER_LONG] |= 1ul << ((nr) % BITS_PER_LONG))
#define struct_size(p, member, n) (sizeof(*(p)) + (size_t)(n) * sizeof((p)->member[0]))
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
/* One thread: plain loads and a compare-and-swap. */
#define smp_load_acquire(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define cmpxchg_release(p, old, new)                                           \
	({                                                                     \
		__typeof__(*(p)) __o = (old);                                  \
		__atomic_compare_exchange_n(p, &__o, new, false,               \
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED); \
		__o;                                                           \
	})
static inline void cond_resched(void) {}
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#define fallthrough __attribute__((__fallthrough__))

/* ---- errors in pointers ---- */
#define MAX_ERRNO 4095
#define IS_ERR_VALUE(x) ((unsigned long)(void *)(x) >= (unsigned long)-MAX_ERRNO)
static inline void *ERR_PTR(long error) { return (void *)error; }
static inline long PTR_ERR(const void *ptr) { return (long)ptr; }
static inline bool IS_ERR(const void *ptr) { return IS_ERR_VALUE(ptr); }

/* ---- byte access ---- */
static inline u16 get_unaligned_le16(const void *p)
{
	__le16 v;

	memcpy(&v, p, sizeof(v));
	return le16_to_cpu(v);
}

static inline u32 get_unaligned_le32(const void *p)
{
	__le32 v;

	memcpy(&v, p, sizeof(v));
	return le32_to_cpu(v);
}

static inline u64 get_unaligned_le64(const void *p)
{
	__le64 v;

	memcpy(&v, p, sizeof(v));
	return le64_to_cpu(v);
}

#define get_unaligned(p)                                                       \
	({                                                                     \
		__typeof__(+*(p)) __v;                                         \
		memcpy(&__v, (p), sizeof(__v));                                \
		__v;                                                           \
	})

/* ---- memory ---- */
static inline void *kmalloc(size_t size, int flags)
{
	(void)flags;
	return malloc(size ? size : 1);
}

static inline void *kzalloc(size_t size, int flags)
{
	(void)flags;
	return calloc(1, size ? size : 1);
}

static inline void *kvmalloc_array(size_t n, size_t size, int flags)
{
	(void)flags;
	if (size && n > SIZE_MAX / size)
		return NULL;
	return malloc(n * size != 0 ? n * size : 1);
}

static inline void *kvmalloc(size_t size, int flags)
{
	(void)flags;
	return malloc(size ? size : 1);
}

static inline void kfree(const void *p) { free((void *)p); }
static inline void kvfree(const void *p) { free((void *)p); }

/* ---- messages: %pD and friends are kernel formats; drop them ---- */
void kshim_printk(const char *fmt, ...);
#define pr_warn_ratelimited(fmt, ...) kshim_printk(fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...) kshim_printk(fmt, ##__VA_ARGS__)

/* ---- the descriptor file and its page cache ---- */
struct address_space {
	const u8 *data; /* the file's bytes */
	u64 size;
	struct inode *host; /* the file's inode, holding its size */
};

struct super_block {
	void *s_fs_info;
};

struct inode {
	loff_t i_size;
	struct super_block *i_sb;
};

struct file_ra_state {
	int unused;
};

struct file {
	struct address_space *f_mapping;
	struct inode *f_inode;
	struct file_ra_state f_ra;
};

static inline struct inode *file_inode(const struct file *f) { return f->f_inode; }
static inline loff_t i_size_read(const struct inode *inode) { return inode->i_size; }

struct folio {
	struct address_space *mapping;
	pgoff_t index;
	u8 data[PAGE_SIZE];
};

/* One page of the file, or -EIO past its end (as a read there fails). */
struct folio *read_mapping_folio(struct address_space *mapping, pgoff_t index, struct file *file);
void folio_put(struct folio *folio);
/* Nothing is ever cached: every read goes through readahead and
 * read_mapping_folio().
 */
static inline struct folio *filemap_get_folio(struct address_space *mapping, pgoff_t index)
{
	(void)mapping;
	(void)index;
	return ERR_PTR(-ENOENT);
}
static inline bool folio_test_uptodate(const struct folio *folio)
{
	(void)folio;
	return true;
}
static inline void folio_mark_accessed(struct folio *folio) { (void)folio; }
static inline loff_t folio_pos(const struct folio *folio)
{
	return (loff_t)folio->index << PAGE_SHIFT;
}
void memcpy_from_folio(void *to, struct folio *folio, size_t offset, size_t len);
static inline size_t offset_in_folio(const struct folio *folio, u64 pos)
{
	(void)folio;
	return pos & (PAGE_SIZE - 1);
}
/* The folio's page, from @offset; what is read through it must stay in the
 * page, which ASan sees since each folio is its own allocation.
 */
static inline void *kmap_local_folio(struct folio *folio, size_t offset)
{
	return folio->data + offset;
}
static inline void kunmap_local(const void *addr) { (void)addr; }

/* Readahead: nothing to read ahead of a buffer, but the reader must never
 * ask for a page at or past the end of the file (abort()s).
 */
void page_cache_sync_readahead(struct address_space *mapping, struct file_ra_state *ra,
			       struct file *file, pgoff_t index, unsigned long req_count);
/* Whether a page of the range is cached: never, in a buffer. */
static inline bool filemap_range_has_page(struct address_space *mapping, loff_t start,
					  loff_t end)
{
	(void)mapping;
	(void)start;
	(void)end;
	return false;
}

/* read(2) of the file: a short count at its end. */
ssize_t kernel_read(struct file *file, void *buf, size_t count, loff_t *pos);

/* Types cfs-internal.h embeds but the reader never looks into. */
typedef struct { u64 key[2]; } siphash_key_t;
struct rhashtable { void *tbl; };
struct path { struct vfsmount *mnt; struct dentry *dentry; };

/* Types the module's headers name but the reader never looks into. */
struct dentry;
struct vfsmount;
struct cred;
struct posix_acl;
struct xattr_handler;
struct export_operations;
struct file_operations;
struct inode_operations;
struct address_space_operations;

#endif /* CFS_FUZZ_KSHIM_H */
