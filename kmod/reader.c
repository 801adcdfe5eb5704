// SPDX-License-Identifier: GPL-2.0
/*
 * composefs descriptor reader: everything that touches the bytes of the
 * image. The image is untrusted: it is read through the page cache of the
 * descriptor file into private copies, every value is read once into a
 * local, and every offset, length and count is checked against the image
 * with overflow-safe arithmetic before it is used. Corruption returns
 * -EFSCORRUPTED and logs (rate-limited) what and where.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/stat.h>
#include <linux/string.h>
#include <linux/swap.h>
#include <linux/time64.h>
#include <linux/unaligned.h>
#include <linux/wordpart.h>

#include "cfs-internal.h"

#define corrupt(fs, fmt, ...)                                                  \
	({                                                                     \
		pr_warn_ratelimited(CFS_FS_NAME ": %pD: corrupt image: " fmt   \
				    "\n",                                      \
				    (fs)->descriptor, ##__VA_ARGS__);          \
		-EFSCORRUPTED;                                                 \
	})

/* The most one readahead request asks of the descriptor. */
#define CFS_RA_MAX_BYTES (1024 * 1024)

/**
 * cfs_readahead() - start reading the descriptor's bytes [@pos, @pos + @len)
 * @fs: the mount
 * @pos: descriptor file offset
 * @len: bytes, at most CFS_RA_MAX_BYTES are asked for
 *
 * read_mapping_folio() reads one folio at a time and waits for it. Where
 * the reader knows it is about to read a range (the window around a page
 * a read misses: cfs_get_folio()), this asks for the whole range in as few
 * requests as the block layer makes of it, through the readahead API on
 * the descriptor's file. Folios already cached are skipped. Only a hint: the
 * reads that follow go through read_mapping_folio() and check everything
 * as before. Nothing is asked past the descriptor's current end, so a file
 * that shrank under the mount gets no cached folios beyond it.
 */
static void cfs_readahead(struct cfs_fs *fs, u64 pos, u64 len)
{
	struct address_space *mapping = fs->descriptor->f_mapping;
	loff_t isize = i_size_read(mapping->host);
	pgoff_t first, last;

	if (fs->read_by_kernel_read || !len || pos >= isize)
		return;
	len = min3(len, (u64)(isize - pos), (u64)CFS_RA_MAX_BYTES);
	first = pos >> PAGE_SHIFT;
	last = (pos + len - 1) >> PAGE_SHIFT;
	/* Both ends cached: the rest most likely is too. */
	if (filemap_range_has_page(mapping, (loff_t)first << PAGE_SHIFT,
				   ((loff_t)first << PAGE_SHIFT) + PAGE_SIZE - 1) &&
	    filemap_range_has_page(mapping, (loff_t)last << PAGE_SHIFT,
				   ((loff_t)last << PAGE_SHIFT) + PAGE_SIZE - 1))
		return;
	/* The descriptor is FMODE_RANDOM (cfs_open_descriptor()): the
	 * readahead API reads this window as asked, bounded by the
	 * device's readahead size, rather than guess a sequential stream
	 * from the mount's interleaved lookups.
	 */
	page_cache_sync_readahead(mapping, &fs->descriptor->f_ra, fs->descriptor,
				  first, last - first + 1);
}

/*
 * What a read of a descriptor page that is not cached reads ahead. A miss
 * far from the last few (a lookup's inode, a small directory) reads the
 * aligned 16 KiB around it (a whole page where pages are larger): a few pages, not the 128 KiB that a cold
 * listing of one directory would mostly not use, and that a sealed
 * descriptor would have to hash too. A miss within 128 KiB of an earlier
 * window is part of a sweep (a walk goes through the inodes and names in
 * about the order they are laid out, jumping back and forth between them):
 * the window there doubles, up to the aligned 128 KiB, as ext4 reads its
 * inode tables (inode_readahead_blks). A walk sweeps a few places at once,
 * so the mount follows CFS_RA_STREAMS of them; a miss near none replaces
 * the one least recently used. A place whose last window has left the
 * page cache (drop_caches, memory pressure) is no sweep any more: it is
 * forgotten, and a cold listing after a walk reads as little as the first.
 * Only a hint, updated under a spinlock: a race at worst reads a window
 * twice or one too small.
 */
#define CFS_RA_MIN_PAGES DIV_ROUND_UP(SZ_16K, PAGE_SIZE) /* 1 with 64K pages */
#define CFS_RA_META_PAGES DIV_ROUND_UP(SZ_128K, PAGE_SIZE)

static void cfs_ra_window(struct cfs_fs *fs, pgoff_t index, pgoff_t *first, unsigned int *pages)
{
	struct address_space *mapping = fs->descriptor->f_mapping;
	/* Windows stop at the descriptor's end (cfs_readahead()). */
	pgoff_t last, end = (i_size_read(mapping->host) + PAGE_SIZE - 1) >> PAGE_SHIFT;
	struct cfs_ra_stream *s, *lru = &fs->ra[0];
	unsigned int i;

	spin_lock(&fs->ra_lock);
	fs->ra_clock++;
	for (i = 0; i < CFS_RA_STREAMS; i++) {
		s = &fs->ra[i];
		if (s->used < lru->used)
			lru = s;
		if (!s->pages || index + CFS_RA_META_PAGES < s->start ||
		    index >= s->end + CFS_RA_META_PAGES)
			continue;
		/* Its window evicted (drop_caches, memory pressure): no sweep. */
		last = min_t(pgoff_t, s->end, end);
		if (!last || !filemap_range_has_page(mapping, (loff_t)(last - 1) << PAGE_SHIFT,
						     ((loff_t)last << PAGE_SHIFT) - 1)) {
			s->pages = 0;
			s->used = 0;
			lru = s;
			continue;
		}
		s->pages = min_t(unsigned int, s->pages * 2, CFS_RA_META_PAGES);
		goto found;
	}
	s = lru;
	s->pages = CFS_RA_MIN_PAGES;
found:
	s->start = index & ~(pgoff_t)(s->pages - 1);
	s->end = s->start + s->pages;
	s->used = fs->ra_clock;
	*first = s->start;
	*pages = s->pages;
	spin_unlock(&fs->ra_lock);
}

/*
 * The folio of the descriptor at @index, uptodate, referenced: from the
 * page cache, or read after asking for a window around it.
 */
static struct folio *cfs_get_folio(struct cfs_fs *fs, pgoff_t index)
{
	struct address_space *mapping = fs->descriptor->f_mapping;
	struct folio *folio = filemap_get_folio(mapping, index);

	if (!IS_ERR(folio)) {
		if (folio_test_uptodate(folio)) {
			folio_mark_accessed(folio);
			return folio;
		}
		folio_put(folio); /* being read: read_mapping_folio() waits */
	} else if (!fs->read_by_kernel_read) {
		pgoff_t first;
		unsigned int pages;

		cfs_ra_window(fs, index, &first, &pages);
		cfs_readahead(fs, (u64)first << PAGE_SHIFT, (u64)pages << PAGE_SHIFT);
	}
	return read_mapping_folio(mapping, index, fs->descriptor);
}

/**
 * cfs_read_bytes() - copy @len bytes at file offset @pos of the descriptor
 * @fs: the mount
 * @pos: descriptor file offset
 * @buf: destination
 * @len: bytes to copy
 *
 * Return: 0, -EFSCORRUPTED when the range lies outside the image, or the
 * error reading the page cache gave (-EIO, including fs-verity failures).
 * A descriptor whose filesystem has no ->read_folio (tmpfs) is read with
 * kernel_read(), which gives holes as zeros.
 */
int cfs_read_bytes(struct cfs_fs *fs, u64 pos, void *buf, size_t len)
{
	char *dst = buf;

	if (len > fs->size || pos > fs->size - len)
		return corrupt(fs, "%zu bytes at %llu extend past the end (%llu)",
			       len, pos, fs->size);

	if (fs->read_by_kernel_read) {
		const struct cred *old_cred;
		loff_t off = pos;
		ssize_t n;

		/* The image is the mounter's: read it as the mounter, not as
		 * whoever's lookup this is (kernel_read() makes the LSM check
		 * the current credentials).
		 */
		old_cred = override_creds(fs->creator_cred);
		n = kernel_read(fs->descriptor, buf, len, &off);
		revert_creds(old_cred);
		if (n < 0)
			return n;
		if (n != len) /* the file shrank since the mount */
			return corrupt(fs, "%zu bytes at %llu: the image ends early",
				       len, pos);
		return 0;
	}

	while (len) {
		size_t in_page = PAGE_SIZE - offset_in_page(pos);
		size_t n = min(len, in_page);
		struct folio *folio;

		folio = cfs_get_folio(fs, pos >> PAGE_SHIFT);
		if (IS_ERR(folio))
			return PTR_ERR(folio);
		memcpy_from_folio(dst, folio, pos - folio_pos(folio), n);
		folio_put(folio);
		dst += n;
		pos += n;
		len -= n;
	}
	return 0;
}

/**
 * cfs_map() - the @len bytes at @pos, in place in the descriptor's page cache
 * @fs: the mount
 * @pos: descriptor file offset
 * @len: at most 4096
 * @m: out; cfs_unmap() it
 *
 * The range must lie in the image and, by the format's page rule, inside
 * one 4096-byte block of the file, so one folio holds it. A descriptor
 * whose filesystem has no ->read_folio (tmpfs) gives a private copy.
 * The bytes may change under the caller: read each field once.
 *
 * Return: 0 or -errno.
 */
int cfs_map(struct cfs_fs *fs, u64 pos, size_t len, struct cfs_map *m)
{
	struct folio *folio;
	int err;

	if (len > fs->size || pos > fs->size - len)
		return corrupt(fs, "%zu bytes at %llu extend past the end (%llu)",
			       len, pos, fs->size);
	if (len > 4096 || (pos & 4095) + len > 4096)
		return corrupt(fs, "%zu bytes at %llu cross a 4096-byte boundary",
			       len, pos);
	m->folio = NULL;
	m->copy = NULL;
	if (fs->read_by_kernel_read) {
		m->copy = kmalloc(len ?: 1, GFP_KERNEL);
		if (!m->copy)
			return -ENOMEM;
		err = cfs_read_bytes(fs, pos, m->copy, len);
		if (err) {
			kfree(m->copy);
			return err;
		}
		m->data = m->copy;
		return 0;
	}
	folio = cfs_get_folio(fs, pos >> PAGE_SHIFT);
	if (IS_ERR(folio))
		return PTR_ERR(folio);
	m->folio = folio;
	m->data = kmap_local_folio(folio, offset_in_folio(folio, pos));
	return 0;
}

/**
 * cfs_unmap() - release what cfs_map() gave
 * @m: the mapping
 */
void cfs_unmap(struct cfs_map *m)
{
	if (m->folio) {
		kunmap_local(m->data);
		folio_put(m->folio);
	} else {
		kfree(m->copy);
	}
}

/**
 * cfs_reader_init() - read and check the header of fs->descriptor
 * @fs: the mount, with descriptor set
 *
 * Samples the descriptor size once; all later range checks use that value.
 *
 * Return: 0 or -errno (-EFSCORRUPTED for a bad header).
 */
int cfs_reader_init(struct cfs_fs *fs)
{
	struct cfs_header hdr;
	u64 data_offset, root;
	loff_t size;
	int err;

	/* The mapping's host: for a block device, the device, not its node. */
	size = i_size_read(fs->descriptor->f_mapping->host);
	if (size < (loff_t)(CFS_INODE_SECTION_OFFSET + sizeof(__le32))) {
		pr_warn_ratelimited(CFS_FS_NAME ": %pD: image too small (%lld bytes)\n",
				    fs->descriptor, size);
		return -EFSCORRUPTED;
	}
	fs->size = size;

	err = cfs_read_bytes(fs, 0, &hdr, sizeof(hdr));
	if (err)
		return err;
	if (le32_to_cpu(hdr.magic) != CFS_MAGIC)
		return corrupt(fs, "bad magic 0x%08x", le32_to_cpu(hdr.magic));
	if (hdr.version != CFS_VERSION)
		return corrupt(fs, "unsupported version %u", hdr.version);

	data_offset = le64_to_cpu(hdr.data_offset);
	root = le64_to_cpu(hdr.root_inode);
	if (data_offset < CFS_INODE_SECTION_OFFSET || data_offset > fs->size)
		return corrupt(fs, "data section offset %llu out of range",
			       data_offset);
	fs->data_offset = data_offset;
	if (root >= data_offset - CFS_INODE_SECTION_OFFSET)
		return corrupt(fs, "root inode %llu outside the inode section",
			       root);
	fs->root_index = root;
	return 0;
}

/**
 * cfs_read_dinode() - decode and validate the fixed chunk of inode @index
 * @fs: the mount
 * @index: offset of the chunk in the inode section
 * @di: out
 *
 * Checks that the chunk and its payload lie in the inode section and that
 * each field is sane for the inode's type. Payload and directory chunk table
 * are read separately (cfs_read_payload(), cfs_dir_table()).
 *
 * Return: 0 or -errno.
 */
int cfs_read_dinode(struct cfs_fs *fs, u64 index, struct cfs_dinode *di)
{
	u64 section = fs->data_offset - CFS_INODE_SECTION_OFFSET;
	u8 buf[CFS_INODE_MAX_ENCODED_SIZE];
	u32 flags, encoded;
	const u8 *p = buf;
	int err;

	if (index > section || section - index < sizeof(__le32))
		return corrupt(fs, "inode %llu outside the inode section", index);
	err = cfs_read_bytes(fs, CFS_INODE_SECTION_OFFSET + index, buf,
			     sizeof(__le32));
	if (err)
		return err;
	flags = get_unaligned_le32(buf);
	if (flags & ~CFS_INODE_FLAGS_KNOWN)
		return corrupt(fs, "inode %llu: unknown flags 0x%x", index, flags);
	encoded = cfs_inode_encoded_size(flags);
	if (section - index < encoded)
		return corrupt(fs, "inode %llu: %u bytes do not fit the section",
			       index, encoded);
	err = cfs_read_bytes(fs, CFS_INODE_SECTION_OFFSET + index, buf, encoded);
	if (err)
		return err;
	/* The re-read flags word must be the one the size was computed for. */
	if (get_unaligned_le32(buf) != flags)
		return corrupt(fs, "inode %llu changed while being read", index);
	p += 4;

	memset(di, 0, sizeof(*di));
	di->index = index;
	di->flags = flags;
	di->mode = CFS_INODE_DEFAULT_MODE;
	di->uid = CFS_INODE_DEFAULT_UIDGID;
	di->gid = CFS_INODE_DEFAULT_UIDGID;
	di->rdev = CFS_INODE_DEFAULT_RDEV;
	di->mtime_sec = CFS_INODE_DEFAULT_TIMES;
	di->ctime_sec = CFS_INODE_DEFAULT_TIMES;

	if (flags & CFS_INODE_FLAGS_PAYLOAD) {
		di->payload_len = get_unaligned_le32(p);
		p += 4;
	}
	if (flags & CFS_INODE_FLAGS_MODE) {
		di->mode = get_unaligned_le32(p);
		p += 4;
	}
	if (flags & CFS_INODE_FLAGS_NLINK) {
		di->nlink = get_unaligned_le32(p);
		p += 4;
	} else {
		di->nlink = S_ISDIR(di->mode) ? CFS_INODE_DEFAULT_NLINK_DIR :
						CFS_INODE_DEFAULT_NLINK;
	}
	if (flags & CFS_INODE_FLAGS_UIDGID) {
		di->uid = get_unaligned_le32(p);
		di->gid = get_unaligned_le32(p + 4);
		p += 8;
	}
	if (flags & CFS_INODE_FLAGS_RDEV) {
		di->rdev = get_unaligned_le32(p);
		p += 4;
	}
	if (flags & CFS_INODE_FLAGS_TIMES) {
		di->mtime_sec = (s64)get_unaligned_le64(p);
		di->ctime_sec = (s64)get_unaligned_le64(p + 8);
		p += 16;
	}
	if (flags & CFS_INODE_FLAGS_TIMES_NSEC) {
		di->mtime_nsec = get_unaligned_le32(p);
		di->ctime_nsec = get_unaligned_le32(p + 4);
		p += 8;
	}
	if (flags & CFS_INODE_FLAGS_LOW_SIZE) {
		di->size = get_unaligned_le32(p);
		p += 4;
	}
	if (flags & CFS_INODE_FLAGS_HIGH_SIZE) {
		di->size |= (u64)get_unaligned_le32(p) << 32;
		p += 4;
	}
	if (flags & CFS_INODE_FLAGS_XATTRS) {
		di->xattrs_offset = get_unaligned_le64(p);
		di->xattrs_len = get_unaligned_le32(p + 8);
		p += 12;
	}
	if (flags & CFS_INODE_FLAGS_DIGEST) {
		memcpy(di->digest, p, CFS_DIGEST_SIZE);
		di->has_digest = true;
		p += CFS_DIGEST_SIZE;
	}

	if (!cfs_mode_valid(di->mode))
		return corrupt(fs, "inode %llu: bad mode 0%o", index, di->mode);
	if (di->nlink == 0)
		return corrupt(fs, "inode %llu: link count 0", index);
	if (di->mtime_nsec >= NSEC_PER_SEC || di->ctime_nsec >= NSEC_PER_SEC)
		return corrupt(fs, "inode %llu: nanoseconds out of range", index);
	if (di->size > MAX_LFS_FILESIZE)
		return corrupt(fs, "inode %llu: size %llu too large", index,
			       di->size);
	/* The payload is the bytes right before the fixed chunk. */
	if (di->payload_len > index)
		return corrupt(fs, "inode %llu: payload of %u bytes starts before the section",
			       index, di->payload_len);
	if (di->xattrs_len) {
		u64 data_len = fs->size - fs->data_offset;

		if (di->xattrs_len < sizeof(struct cfs_xattr_header) ||
		    di->xattrs_len > CFS_MAX_XATTRS_SIZE ||
		    di->xattrs_offset > data_len ||
		    data_len - di->xattrs_offset < di->xattrs_len)
			return corrupt(fs, "inode %llu: xattrs (%llu, %u) out of range",
				       index, di->xattrs_offset, di->xattrs_len);
	}

	switch (di->mode & S_IFMT) {
	case S_IFREG:
		if (di->payload_len > CFS_MAX_PAYLOAD_PATH)
			return corrupt(fs, "inode %llu: backing path too long", index);
		if (di->payload_len == 0 && di->size != 0)
			return corrupt(fs, "inode %llu: %llu bytes but no backing file",
				       index, di->size);
		break;
	case S_IFLNK:
		if (di->payload_len == 0 || di->payload_len > CFS_MAX_PAYLOAD_PATH)
			return corrupt(fs, "inode %llu: bad symlink target length %u",
				       index, di->payload_len);
		break;
	case S_IFDIR:
		if (di->payload_len != 0 &&
		    (di->payload_len < cfs_dir_header_size(1) ||
		     (di->payload_len - sizeof(struct cfs_dir_header)) %
			     sizeof(struct cfs_dir_chunk)))
			return corrupt(fs, "inode %llu: bad directory payload length %u",
				       index, di->payload_len);
		/* The table is read on first use; its size is bounded now. */
		if (di->payload_len > cfs_dir_header_size(CFS_MAX_DIR_CHUNKS))
			return corrupt(fs, "directory %llu: a %u-byte chunk table is more than %u chunks",
				       index, di->payload_len, CFS_MAX_DIR_CHUNKS);
		break;
	default:
		break;
	}
	return 0;
}

/**
 * cfs_read_payload() - the payload of a file or symlink, NUL-terminated
 * @fs: the mount
 * @di: the inode (validated by cfs_read_dinode())
 * @out: a kmalloc'ed copy, to kfree(); NULL for an empty payload
 *
 * Return: 0 or -errno. A payload holding a NUL byte is corrupt.
 */
int cfs_read_payload(struct cfs_fs *fs, const struct cfs_dinode *di, char **out)
{
	char *buf;
	int err;

	*out = NULL;
	if (di->payload_len == 0)
		return 0;
	buf = kmalloc(di->payload_len + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	err = cfs_read_bytes(fs, CFS_INODE_SECTION_OFFSET + di->index -
					 di->payload_len,
			     buf, di->payload_len);
	if (err)
		goto err;
	if (memchr(buf, 0, di->payload_len)) {
		err = corrupt(fs, "inode %llu: NUL byte in path", di->index);
		goto err;
	}
	buf[di->payload_len] = 0;
	*out = buf;
	return 0;
err:
	kfree(buf);
	return err;
}

/* Whether word @v holds a zero byte (exact, not a hint). */
static inline bool word_has_zero(unsigned long v)
{
	return (v - REPEAT_BYTE(0x01)) & ~v & REPEAT_BYTE(0x80);
}

/*
 * A name is not empty, "." or "..", and holds no '/' and no NUL. Every
 * name of a directory is checked again on each readdir (the chunk is a
 * fresh copy of bytes that may have changed), so this looks at a word at
 * a time: two memchr() calls a byte at a time were a tenth of a warm
 * readdir's samples.
 */
static bool valid_name(const char *name, size_t len)
{
	size_t i = 0;

	if (len == 0)
		return false;
	if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
		return false;
	for (; len - i >= sizeof(unsigned long); i += sizeof(unsigned long)) {
		unsigned long v = get_unaligned((const unsigned long *)(name + i));

		if (word_has_zero(v) || word_has_zero(v ^ REPEAT_BYTE('/')))
			return false;
	}
	for (; i < len; i++)
		if (name[i] == '/' || name[i] == 0)
			return false;
	return true;
}

static bool valid_dtype(u8 t)
{
	switch (t) {
	case DT_UNKNOWN:
	case DT_FIFO:
	case DT_CHR:
	case DT_DIR:
	case DT_BLK:
	case DT_REG:
	case DT_LNK:
	case DT_SOCK:
		return true;
	}
	return false;
}

/**
 * cfs_chunk_entry() - entry @i of a chunk loaded by cfs_load_chunk()
 * @buf: the loaded chunk
 * @i: entry number, below buf->n_dentries
 * @e: out
 *
 * Only valid on a loaded buffer: the bounds were checked there.
 */
void cfs_chunk_entry(const struct cfs_chunk_buf *buf, unsigned int i,
		     struct cfs_entry *e)
{
	cfs_chunk_entry_at(buf->data, buf->n_dentries, i, e);
}

/**
 * cfs_chunk_entry_at() - cfs_chunk_entry() on a chunk's bytes
 * @data: a chunk that cfs_load_chunk() checked before, in a sealed
 *	descriptor (fs->descriptor_sealed), whose bytes are what it checked
 * @n_dentries: its number of entries
 * @i: entry number, below @n_dentries
 * @e: out
 */
void cfs_chunk_entry_at(const u8 *data, u16 n_dentries, unsigned int i,
			struct cfs_entry *e)
{
	const struct cfs_dentry *d = (const void *)(data + (size_t)i * sizeof(*d));
	const char *names = (const char *)data + (size_t)n_dentries * sizeof(*d);

	e->index = get_unaligned_le64(&d->inode_index);
	e->d_type = d->d_type;
	e->name_len = d->name_len;
	e->name = names + get_unaligned_le16(&d->name_offset);
}

/**
 * cfs_load_chunk() - copy a directory chunk and validate every entry
 * @fs: the mount
 * @chunk: its descriptor, from cfs_dir_chunk()
 * @buf: out, with room for @chunk->size bytes of data
 *
 * Every name must lie in the chunk, be a valid file name, and sort strictly
 * after the one before it (no duplicates); every type must be a known one
 * and every inode index one an inode number can hold.
 *
 * Return: 0 or -errno.
 */
int cfs_load_chunk(struct cfs_fs *fs, const struct cfs_chunk *chunk,
		   struct cfs_chunk_buf *buf)
{
	size_t names_len;
	struct cfs_entry prev = {}, e;
	unsigned int i;
	int err;

	err = cfs_read_bytes(fs, chunk->offset, buf->data, chunk->size);
	if (err)
		return err;
	buf->n_dentries = chunk->n_dentries;
	buf->size = chunk->size;
	names_len = chunk->size - (size_t)chunk->n_dentries *
					  sizeof(struct cfs_dentry);

	for (i = 0; i < buf->n_dentries; i++) {
		const struct cfs_dentry *d =
			(const void *)(buf->data + (size_t)i * sizeof(*d));
		size_t off = get_unaligned_le16(&d->name_offset);

		if (off > names_len || names_len - off < d->name_len)
			return corrupt(fs, "directory chunk at %llu: entry %u name out of bounds",
				       chunk->offset, i);
		cfs_chunk_entry(buf, i, &e);
		if (!valid_name(e.name, e.name_len))
			return corrupt(fs, "directory chunk at %llu: entry %u has an invalid name",
				       chunk->offset, i);
		if (!valid_dtype(e.d_type))
			return corrupt(fs, "directory chunk at %llu: entry %u has type %u",
				       chunk->offset, i, e.d_type);
		/* As lookup refuses it: readdir must not list what lookup
		 * cannot find.
		 */
		if (e.index > U64_MAX - CFS_INODE_SECTION_OFFSET)
			return corrupt(fs, "directory chunk at %llu: entry %u: inode %llu out of range",
				       chunk->offset, i, e.index);
		if (i > 0 &&
		    cfs_name_cmp(prev.name, prev.name_len, e.name, e.name_len) >= 0)
			return corrupt(fs, "directory chunk at %llu: entry %u unsorted or duplicate",
				       chunk->offset, i);
		prev = e;
	}
	return 0;
}

/*
 * Entry @i of chunk @c mapped at @data: the fixed fields read once into @e,
 * the name checked to lie inside the chunk. The name's bytes stay in place.
 */
static int map_entry(struct cfs_fs *fs, const struct cfs_chunk *c,
		     const u8 *data, unsigned int i, struct cfs_entry *e)
{
	const struct cfs_dentry *d = (const void *)(data + (size_t)i * sizeof(*d));
	size_t names = (size_t)c->n_dentries * sizeof(*d);
	size_t names_len = c->size - names;
	size_t off = get_unaligned_le16(&d->name_offset);
	u8 len = READ_ONCE(d->name_len);

	if (off > names_len || names_len - off < len)
		return corrupt(fs, "directory chunk at %llu: entry %u name out of bounds",
			       c->offset, i);
	e->index = get_unaligned_le64(&d->inode_index);
	e->d_type = READ_ONCE(d->d_type);
	e->name_len = len;
	e->name = (const char *)data + names + off;
	return 0;
}

/* Copy entry @i's name to @buf (CFS_MAX_NAME_LEN bytes) and check the copy. */
static int copy_name(struct cfs_fs *fs, const struct cfs_chunk *c,
		     const u8 *data, unsigned int i, char *buf, u8 *len)
{
	struct cfs_entry e;
	int err;

	err = map_entry(fs, c, data, i, &e);
	if (err)
		return err;
	memcpy(buf, e.name, e.name_len);
	*len = e.name_len;
	if (!valid_name(buf, *len))
		return corrupt(fs, "directory chunk at %llu: entry %u has an invalid name",
			       c->offset, i);
	return 0;
}

/**
 * cfs_dir_chunk() - read and check descriptor @i of a directory's chunk table
 * @fs: the mount
 * @t: the directory's table
 * @i: chunk number, below t->n_chunks
 * @ch: out
 *
 * From a small directory's index, or read each time it is needed: the
 * chunk must hold at least one entry and lie in the data section, inside
 * one 4096-byte block of the file (the format's page rule, which cfs_map()
 * relies on).
 *
 * Return: 0 or -errno.
 */
int cfs_dir_chunk(struct cfs_fs *fs, const struct cfs_dir_table *t, u32 i,
		  struct cfs_chunk *ch)
{
	u64 data_len = fs->size - fs->data_offset;
	struct cfs_dir_chunk raw;
	u16 nd, size;
	u64 off;
	int err;

	if (t->chunks) {
		*ch = t->chunks[i];
		return 0;
	}
	err = cfs_read_bytes(fs, t->start + (u64)i * sizeof(raw), &raw,
			     sizeof(raw));
	if (err)
		return err;
	nd = get_unaligned_le16(&raw.n_dentries);
	size = get_unaligned_le16(&raw.chunk_size);
	off = get_unaligned_le64(&raw.chunk_offset);
	if (nd == 0 || size > CFS_MAX_DIR_CHUNK_SIZE ||
	    size < (u32)nd * sizeof(struct cfs_dentry) ||
	    off > data_len || data_len - off < size ||
	    ((fs->data_offset + off) & 4095) + size > 4096)
		return corrupt(fs, "directory %llu: chunk %u (%u entries, %u bytes at %llu) invalid",
			       t->index, i, nd, size, off);
	ch->offset = fs->data_offset + off;
	ch->n_dentries = nd;
	ch->size = size;
	return 0;
}

/* Chunk @i's descriptor in @ch and its bytes mapped in @m; cfs_unmap() it. */
static int map_chunk(struct cfs_fs *fs, const struct cfs_dir_table *t, u32 i,
		     struct cfs_chunk *ch, struct cfs_map *m)
{
	int err = cfs_dir_chunk(fs, t, i, ch);

	return err ?: cfs_map(fs, ch->offset, ch->size, m);
}

/* Copy the first (@last false) or last name of chunk @i to @buf and check it. */
static int chunk_name(struct cfs_fs *fs, const struct cfs_dir_table *t, u32 i,
		      bool last, char *buf, u8 *len)
{
	struct cfs_chunk ch;
	struct cfs_map m;
	int err;

	err = map_chunk(fs, t, i, &ch, &m);
	if (err)
		return err;
	err = copy_name(fs, &ch, m.data, last ? ch.n_dentries - 1 : 0, buf, len);
	cfs_unmap(&m);
	return err;
}

/**
 * cfs_chunk_last_name() - copy the last name of chunk @i, checked
 * @fs: the mount
 * @t: the directory's table
 * @i: chunk number
 * @buf: out, CFS_MAX_NAME_LEN bytes
 * @len: out, the name's length
 *
 * Return: 0 or -errno.
 */
int cfs_chunk_last_name(struct cfs_fs *fs, const struct cfs_dir_table *t,
			u32 i, char *buf, u8 *len)
{
	return chunk_name(fs, t, i, true, buf, len);
}

/**
 * cfs_chunk_follows() - whether chunk @i's first name sorts after chunk @i-1's last
 * @fs: the mount
 * @t: the directory's table
 * @i: chunk number, at least 1
 * @last: chunk @i - 1's last name
 * @last_len: its length
 * @first: chunk @i's first entry
 *
 * Across a directory, names are sorted with no duplicate, as inside a
 * chunk: a listing must not show a name twice, nor a lookup find a name
 * in one chunk that sorts into another.
 *
 * Return: 0, or -EFSCORRUPTED.
 */
int cfs_chunk_follows(struct cfs_fs *fs, const struct cfs_dir_table *t, u32 i,
		      const char *last, u8 last_len, const struct cfs_entry *first)
{
	if (cfs_name_cmp(last, last_len, first->name, first->name_len) < 0)
		return 0;
	return corrupt(fs, "directory %llu: chunk %u does not sort after chunk %u",
		       t->index, i, i - 1);
}

/*
 * The answer of a lookup stands only if chunk @c, mapped at @data, sorts
 * between its neighbours: its first name after chunk @c - 1's last, its
 * last before chunk @c + 1's first. A boundary a sealed descriptor's
 * listing checked is not read again.
 */
static int check_neighbours(struct cfs_fs *fs, const struct cfs_dir_table *t,
			    u32 c, const struct cfs_chunk *ch, const u8 *data)
{
	char mine[CFS_MAX_NAME_LEN], other[CFS_MAX_NAME_LEN];
	struct cfs_entry e = { .name = mine };
	u8 other_len;
	int err;

	if (c > 0 && !cfs_chunk_checked(t, c)) {
		err = copy_name(fs, ch, data, 0, mine, &e.name_len);
		if (!err)
			err = chunk_name(fs, t, c - 1, true, other, &other_len);
		if (!err)
			err = cfs_chunk_follows(fs, t, c, other, other_len, &e);
		if (err)
			return err;
	}
	if (c + 1 < t->n_chunks && !cfs_chunk_checked(t, c + 1)) {
		struct cfs_entry next = { .name = other };

		err = copy_name(fs, ch, data, ch->n_dentries - 1, mine, &e.name_len);
		if (!err)
			err = chunk_name(fs, t, c + 1, false, other, &next.name_len);
		if (!err)
			err = cfs_chunk_follows(fs, t, c + 1, mine, e.name_len, &next);
		if (err)
			return err;
	}
	return 0;
}

/*
 * A directory's first use: when its chunks lie within CFS_RA_MAX_BYTES
 * (the writer lays them out one after another), ask for all of them in
 * one readahead request, as for a run of inodes, rather than a window at
 * each probe of a cold lookup. Larger directories are read where probed.
 * Only a hint: a descriptor that does not check is refused where it is
 * read.
 */
static void dir_readahead(struct cfs_fs *fs, const struct cfs_dir_table *t)
{
	struct cfs_chunk first, last;

	if (fs->read_by_kernel_read || cfs_dir_chunk(fs, t, 0, &first) ||
	    cfs_dir_chunk(fs, t, t->n_chunks - 1, &last))
		return;
	if (last.offset >= first.offset &&
	    last.offset + last.size - first.offset <= CFS_RA_MAX_BYTES)
		cfs_readahead(fs, first.offset, last.offset + last.size - first.offset);
}

/*
 * Index the n_chunks <= CFS_DIR_INDEX_MAX chunks of a small directory into
 * @c: each chunk's descriptor, checked, and its first name, which must
 * sort after the previous chunk's last, so that across the whole
 * directory names are sorted with no duplicate, as inside a chunk.
 */
static int index_dir(struct cfs_fs *fs, const struct cfs_dir_table *t,
		     struct cfs_chunk *c)
{
	char first[CFS_MAX_NAME_LEN], last[CFS_MAX_NAME_LEN];
	u8 first_len, last_len = 0;
	struct cfs_map m;
	u32 i;
	int err;

	for (i = 0; i < t->n_chunks; i++, c++) {
		err = cfs_dir_chunk(fs, t, i, c);
		if (err)
			return err;
		err = cfs_map(fs, c->offset, c->size, &m);
		if (err)
			return err;
		err = copy_name(fs, c, m.data, 0, first, &first_len);
		if (!err && i > 0 &&
		    cfs_name_cmp(last, last_len, first, first_len) >= 0)
			err = corrupt(fs, "directory %llu: chunk %u does not sort after chunk %u",
				      t->index, i, i - 1);
		if (!err)
			err = copy_name(fs, c, m.data, c->n_dentries - 1, last,
					&last_len);
		if (!err && c->n_dentries > 1 &&
		    cfs_name_cmp(first, first_len, last, last_len) >= 0)
			err = corrupt(fs, "directory %llu: chunk %u unsorted",
				      t->index, i);
		cfs_unmap(&m);
		if (err)
			return err;
		c->first_len = first_len;
		memcpy(c->first, first, min_t(size_t, first_len, CFS_CHUNK_PREFIX));
		if (i % 16 == 15)
			cond_resched();
	}
	return 0;
}

/*
 * Check the header of directory @index's chunk table (a payload of
 * @payload_len bytes) and make the table that says where its chunks are,
 * with a small directory's index.
 */
static int read_dir_table(struct cfs_fs *fs, u64 index, u32 payload_len,
			  struct cfs_dir_table **out)
{
	u64 start = CFS_INODE_SECTION_OFFSET + index - payload_len;
	struct cfs_dir_table *t;
	u32 n = 0, n_checked, n_index;
	__le32 n_le;
	int err;

	if (payload_len) {
		err = cfs_read_bytes(fs, start, &n_le, sizeof(n_le));
		if (err)
			return err;
		n = le32_to_cpu(n_le);
		if (n == 0 || n > CFS_MAX_DIR_CHUNKS ||
		    cfs_dir_header_size(n) != payload_len)
			return corrupt(fs, "directory %llu: %u chunks in a %u-byte payload (at most %u chunks)",
				       index, n, payload_len, CFS_MAX_DIR_CHUNKS);
		/* cfs_read_dinode() checked that the payload is in the image. */
	}
	n_checked = fs->descriptor_sealed ? min_t(u32, n, CFS_DIR_CHECKED_MAX) : 0;
	n_index = n <= CFS_DIR_INDEX_MAX ? n : 0;
	t = kzalloc(struct_size(t, checked, BITS_TO_LONGS(n_checked)) +
			    n_index * sizeof(struct cfs_chunk),
		    GFP_KERNEL_ACCOUNT);
	if (!t)
		return -ENOMEM;
	t->index = index;
	t->start = start + sizeof(struct cfs_dir_header);
	t->chunks = NULL;
	t->n_chunks = n;
	t->n_checked = n_checked;
	if (n)
		dir_readahead(fs, t);
	if (n_index) {
		struct cfs_chunk *c = (void *)&t->checked[BITS_TO_LONGS(n_checked)];

		err = index_dir(fs, t, c);
		if (err) {
			kfree(t);
			return err;
		}
		t->chunks = c;
	}
	*out = t;
	return 0;
}

/**
 * cfs_dir_table() - where directory @inode's chunks are, read on first use
 * @inode: a directory
 *
 * stat() and a cached path walk never need it; the first lookup or readdir
 * reads it, and it stays with the inode until the inode is freed.
 *
 * Return: the table, or ERR_PTR(-errno).
 */
struct cfs_dir_table *cfs_dir_table(struct inode *inode)
{
	struct cfs_inode_info *ci = CFS_I(inode);
	struct cfs_dir_table *t, *old;
	int err;

	/* Pairs with the cmpxchg_release() below: a table seen here was
	 * filled before it was published.
	 */
	t = smp_load_acquire(&ci->dir);
	if (t)
		return t;
	err = read_dir_table(CFS_FS(inode->i_sb), ci->index, ci->payload_len, &t);
	if (err)
		return ERR_PTR(err);
	/* Two first users may race: one table wins, the other is freed. */
	old = cmpxchg_release(&ci->dir, NULL, t);
	if (old) {
		kfree(t);
		return old;
	}
	return t;
}

/*
 * Compare @name with the first name of chunk @i: from a small directory's
 * index when the prefix it keeps decides, else read in place.
 */
static int cmp_first(struct cfs_fs *fs, const struct cfs_dir_table *t, u32 i,
		     const char *name, size_t len, int *cmp)
{
	struct cfs_chunk ch;
	struct cfs_entry e;
	struct cfs_map m;
	int r, err;

	if (t->chunks) {
		const struct cfs_chunk *c = &t->chunks[i];

		if (c->first_len <= CFS_CHUNK_PREFIX) {
			*cmp = cfs_name_cmp(name, len, c->first, c->first_len);
			return 0;
		}
		r = memcmp(name, c->first, min_t(size_t, len, CFS_CHUNK_PREFIX));
		if (r || len <= CFS_CHUNK_PREFIX) {
			*cmp = r ?: -1; /* a prefix of a longer name sorts first */
			return 0;
		}
	}
	err = map_chunk(fs, t, i, &ch, &m);
	if (err)
		return err;
	err = map_entry(fs, &ch, m.data, 0, &e);
	if (!err)
		*cmp = cfs_name_cmp(name, len, e.name, e.name_len);
	cfs_unmap(&m);
	return err;
}

/**
 * cfs_dir_lookup() - find @name in directory @dir
 * @dir: the directory
 * @name: the name (not NUL-terminated)
 * @len: its length
 * @index: out, the entry's inode index
 * @d_type: out, the entry's type (DT_*)
 *
 * Binary search over the chunks by their first names, then over the
 * entries of the one chunk that can hold @name, in place in the page
 * cache. A small directory's index holds its chunks' places and first
 * names, checked in order once; in a larger directory only the
 * descriptors, chunks and entries probed are read, each field once, so a
 * lookup costs O(log n) of its chunks, however large it is, and the
 * answer, found or not, stands only if that chunk sorts between its
 * neighbours: a lookup never answers from a chunk that a listing would
 * refuse for its order (cfs_chunk_follows()).
 *
 * Return: 0, -ENOENT, or -errno.
 */
int cfs_dir_lookup(struct inode *dir, const char *name, size_t len,
		   u64 *index, u8 *d_type)
{
	struct cfs_fs *fs = CFS_FS(dir->i_sb);
	struct cfs_dir_table *t = cfs_dir_table(dir);
	struct cfs_chunk ch;
	unsigned int elo, ehi;
	u32 lo = 0, hi, c;
	struct cfs_map m;
	int cmp, err, r;

	if (IS_ERR(t))
		return PTR_ERR(t);
	hi = t->n_chunks;
	/* The last chunk whose first name is not after @name. */
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		err = cmp_first(fs, t, mid, name, len, &cmp);
		if (err)
			return err;
		if (cmp < 0)
			hi = mid;
		else
			lo = mid + 1;
		cond_resched();
	}
	if (lo == 0)
		return -ENOENT;
	c = lo - 1;
	err = cfs_dir_chunk(fs, t, c, &ch);
	if (err)
		return err;

	err = cfs_map(fs, ch.offset, ch.size, &m);
	if (err)
		return err;
	err = -ENOENT;
	elo = 0;
	ehi = ch.n_dentries;
	while (elo < ehi) {
		unsigned int emid = elo + (ehi - elo) / 2;
		struct cfs_entry e;

		r = map_entry(fs, &ch, m.data, emid, &e);
		if (r) {
			err = r;
			break;
		}
		cmp = cfs_name_cmp(name, len, e.name, e.name_len);
		if (cmp == 0) {
			if (!valid_dtype(e.d_type))
				err = corrupt(fs, "directory chunk at %llu: entry %u has type %u",
					      ch.offset, emid, e.d_type);
			else if (e.index > U64_MAX - CFS_INODE_SECTION_OFFSET)
				err = corrupt(fs, "directory chunk at %llu: entry %u: inode %llu out of range",
					      ch.offset, emid, e.index);
			else {
				*index = e.index;
				*d_type = e.d_type;
				err = 0;
			}
			break;
		}
		if (cmp < 0)
			ehi = emid;
		else
			elo = emid + 1;
	}
	/* Found or not, the answer stands only if the chunk is in order: a
	 * small directory's index checked every chunk's order.
	 */
	if (!t->chunks && (!err || err == -ENOENT)) {
		r = check_neighbours(fs, t, c, &ch, m.data);
		if (r)
			err = r;
	}
	cfs_unmap(&m);
	return err;
}
