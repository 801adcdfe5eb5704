// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The thorough check behind cfsctl verify. It decodes the image on its own,
 * from the raw bytes, rather than through the reader: the reader stops at
 * the first thing it cannot use, while this check reports every problem and
 * goes on wherever the rest still makes sense (an unsorted directory is
 * still listed, a chunk that crosses a page is still read). It also checks
 * what the reader has no need to: link counts, d_type, unreachable bytes of
 * the inode section, encodings a correct writer would not produce. Then,
 * given basedirs, it finds each backing object (first match wins, as the
 * kernel does) and checks its size and fs-verity digest, hashing each
 * object once, in parallel. Problems go to a callback; nothing is printed
 * and nothing is written. The directory walk is verify-walk.c's, shared
 * by both formats; this file gives it v1's inodes and entries. A composefs
 * 1.0 (EROFS) image goes to format/erofs/verify.c for its structure, and comes
 * back here for its objects.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "internal.h"
#include "libcfs.h"
#include "reader.h"
#include "verify.h"

/* The values of @m->ids are indexes into @m->info, which moves as it grows. */
struct ino_info *cfs_vmap_find(struct ino_map *m, uint64_t ino)
{
	void **slot = cfs_inomap_find(&m->ids, ino);

	return slot ? &m->info[(uintptr_t)*slot] : NULL;
}

struct ino_info *cfs_vmap_add(struct ino_map *m, uint64_t ino)
{
	if (m->n == m->info_cap) {
		size_t cap = m->info_cap ? 2 * m->info_cap : 1024;
		struct ino_info *info = realloc(m->info, cap * sizeof(*info));

		if (!info)
			return NULL;
		m->info = info;
		m->info_cap = cap;
	}
	if (cfs_inomap_add(&m->ids, ino, (void *)(uintptr_t)m->n) < 0)
		return NULL;
	memset(&m->info[m->n], 0, sizeof(m->info[m->n]));
	m->info[m->n].ino = ino;
	return &m->info[m->n++];
}

void cfs_vmap_free(struct ino_map *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->info[i].first_path);
	cfs_inomap_free(&m->ids, NULL);
	free(m->info);
}

/* Where the walk is in one v1 directory. */
struct v1_pos {
	uint64_t ino;
	const uint8_t *table; /* chunk table, or NULL */
	uint32_t n_chunks;
	uint32_t chunk, entry;
	bool chunk_loaded;
	const uint8_t *cdata; /* current chunk */
	uint32_t cn, csize;
	uint64_t coff;
};

void cfs_vreport(struct verifier *v, enum cfs_verify_severity sev, const char *kind,
		   const char *path, uint64_t offset, const char *fmt, ...)
{
	struct cfs_verify_problem p = { .severity = sev, .kind = kind, .path = path,
					.offset = offset };
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p.message = msg;
	if (sev == CFS_VERIFY_ERROR)
		v->res->errors++;
	else
		v->res->warnings++;
	if (v->fn)
		v->fn(v->fn_ctx, &p);
}

/* ---- xattr sets ---- */

static int check_xattrs(struct verifier *v, uint64_t ino, uint64_t xoff, uint32_t xlen)
{
	uint64_t abs, vsize = v->size - v->doff;
	const uint8_t *set, *data;
	uint32_t n, left;
	uint64_t hsize;

	(void)ino;
	if (xlen < sizeof(struct cfs_xattr_header) || xlen > CFS_MAX_XATTRS_SIZE) {
		ERR(v, "xattr-size", NO_OFFSET, "xattr set of %u bytes (must be 2..%u)", xlen,
		    CFS_MAX_XATTRS_SIZE);
		if (xlen < sizeof(struct cfs_xattr_header))
			return 0;
	}
	if (!fits(xoff, xlen, vsize)) {
		ERR(v, "xattr-bounds", NO_OFFSET,
		    "xattr set of %u bytes at data offset %llu runs past the end of the image", xlen,
		    ull(xoff));
		return 0;
	}
	abs = v->doff + xoff;
	for (size_t i = 0; i < v->n_xsets; i++)
		if (v->xsets[i].off == xoff && v->xsets[i].len == xlen)
			return 0;
	if (v->n_xsets == v->xsets_cap) {
		size_t cap = v->xsets_cap ? 2 * v->xsets_cap : 64;
		struct xset_seen *x = realloc(v->xsets, cap * sizeof(*x));

		if (!x)
			return -ENOMEM;
		v->xsets = x;
		v->xsets_cap = cap;
	}
	v->xsets[v->n_xsets++] = (struct xset_seen){ xoff, xlen };
	if (xlen <= CFS_PAGE_SIZE && abs % CFS_PAGE_SIZE + xlen > CFS_PAGE_SIZE)
		ERR(v, "xattr-page", abs, "xattr set of %u bytes crosses a %u-byte page boundary",
		    xlen, CFS_PAGE_SIZE);
	set = v->data + abs;
	n = get16(set);
	hsize = cfs_xattr_header_size(n);
	if (hsize > xlen) {
		ERR(v, "xattr-bounds", abs, "xattr set: %u entries do not fit in its %u bytes", n,
		    xlen);
		return 0;
	}
	left = xlen - (uint32_t)hsize;
	data = set + hsize;
	const uint8_t *prev = NULL;
	uint32_t prev_len = 0;

	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = set + sizeof(struct cfs_xattr_header) +
				   (size_t)i * sizeof(struct cfs_xattr_element);
		uint32_t klen = get16(e + offsetof(struct cfs_xattr_element, key_length));
		uint32_t vlen = get16(e + offsetof(struct cfs_xattr_element, value_length));
		int cmp;

		if (klen + vlen > left) {
			ERR(v, "xattr-bounds", abs,
			    "xattr set: entry %u (key %u bytes, value %u bytes) runs past the set", i,
			    klen, vlen);
			return 0;
		}
		if (klen == 0 || klen > CFS_MAX_NAME_LEN)
			ERR(v, "xattr-key", abs, "xattr set: entry %u has a key of %u bytes (must be 1..%u)",
			    i, klen, CFS_MAX_NAME_LEN);
		else if (memchr(data, '\0', klen))
			ERR(v, "xattr-key", abs, "xattr set: the key of entry %u holds a NUL byte", i);
		else if (!memchr(data, '.', klen))
			WARN(v, "xattr-key", abs, "xattr set: the key of entry %u has no namespace prefix", i);
		if (prev) {
			cmp = cfs_name_cmp(prev, prev_len, data, klen);
			if (cmp == 0)
				ERR(v, "xattr-duplicate", abs, "xattr set: entry %u repeats the key of entry %u",
				    i, i - 1);
			else if (cmp > 0)
				WARN(v, "noncanonical", abs,
				     "xattr set: entry %u sorts before entry %u (keys are not sorted)", i,
				     i - 1);
		}
		prev = data;
		prev_len = klen;
		data += klen + vlen;
		left -= klen + vlen;
	}
	if (left)
		WARN(v, "noncanonical", abs, "xattr set: %u bytes after its last entry", left);
	return 0;
}

/* ---- inodes ---- */

static int add_range(struct verifier *v, uint64_t start, uint64_t end)
{
	if (v->n_ranges == v->ranges_cap) {
		size_t cap = v->ranges_cap ? 2 * v->ranges_cap : 1024;
		struct range *r = realloc(v->ranges, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		v->ranges = r;
		v->ranges_cap = cap;
	}
	v->ranges[v->n_ranges++] = (struct range){ start, end };
	return 0;
}

/*
 * Decode inode @ino, reporting each problem. Return 1 with *@out when it
 * can be used (perhaps with problems), 0 when not, or -errno.
 */
static int decode_inode(struct verifier *v, uint64_t ino, struct cfs_inode *out)
{
	const uint8_t *base = v->data + CFS_INODE_SECTION_OFFSET, *p;
	uint64_t off = ino + CFS_INODE_SECTION_OFFSET;
	uint32_t flags, esize, type, raw_plen = 0;
	struct cfs_inode in;
	int ret;

	memset(&in, 0, sizeof(in));
	in.ino = ino;
	if (!fits(ino, 4, v->section)) {
		ERR(v, "inode-bounds", NO_OFFSET,
		    "inode %llu lies outside the inode section (%llu bytes)", ull(ino),
		    ull(v->section));
		return 0;
	}
	p = base + ino;
	flags = get32(p);
	if (flags & ~CFS_INODE_FLAGS_KNOWN) {
		ERR(v, "inode-flags", off, "inode %llu: unknown flags 0x%x", ull(ino),
		    flags & ~CFS_INODE_FLAGS_KNOWN);
		return 0;
	}
	esize = cfs_inode_encoded_size(flags);
	if (!fits(ino, esize, v->section)) {
		ERR(v, "inode-bounds", off, "inode %llu: its %u bytes run past the inode section",
		    ull(ino), esize);
		return 0;
	}
	in.flags = flags;
	p += 4;
	if (flags & CFS_INODE_FLAGS_PAYLOAD) {
		raw_plen = in.payload_len = get32(p);
		p += 4;
		if (raw_plen == 0)
			WARN(v, "noncanonical", off, "inode %llu: PAYLOAD flag with a length of 0", ull(ino));
	}
	in.mode = CFS_INODE_DEFAULT_MODE;
	if (flags & CFS_INODE_FLAGS_MODE) {
		in.mode = get32(p);
		p += 4;
		if (in.mode == CFS_INODE_DEFAULT_MODE)
			WARN(v, "noncanonical", off, "inode %llu: MODE flag with the default mode", ull(ino));
	}
	type = in.mode & S_IFMT;
	if (!cfs_mode_valid(in.mode & (S_IFMT | 07777))) { /* the type alone */
		ERR(v, "inode-mode", off, "inode %llu: mode 0%o has no valid file type", ull(ino),
		    in.mode);
		return 0;
	}
	if (in.mode & ~(S_IFMT | 07777U))
		ERR(v, "inode-mode", off, "inode %llu: mode 0%o has unknown bits set", ull(ino), in.mode);
	in.nlink = type == S_IFDIR ? CFS_INODE_DEFAULT_NLINK_DIR : CFS_INODE_DEFAULT_NLINK;
	if (flags & CFS_INODE_FLAGS_NLINK) {
		uint32_t def = in.nlink;

		in.nlink = get32(p);
		p += 4;
		if (in.nlink == def)
			WARN(v, "noncanonical", off, "inode %llu: NLINK flag with the default count", ull(ino));
	}
	if (flags & CFS_INODE_FLAGS_UIDGID) {
		in.uid = get32(p);
		in.gid = get32(p + 4);
		p += 8;
		if (in.uid == 0 && in.gid == 0)
			WARN(v, "noncanonical", off, "inode %llu: UIDGID flag with owner 0:0", ull(ino));
	}
	if (flags & CFS_INODE_FLAGS_RDEV) {
		in.rdev = get32(p);
		p += 4;
		if (type != S_IFCHR && type != S_IFBLK)
			WARN(v, "noncanonical", off, "inode %llu: RDEV flag on a file that is not a device",
			     ull(ino));
		else if (in.rdev == 0)
			WARN(v, "noncanonical", off, "inode %llu: RDEV flag with device 0", ull(ino));
	}
	if (flags & CFS_INODE_FLAGS_TIMES) {
		in.mtime_sec = (int64_t)get64(p);
		in.ctime_sec = (int64_t)get64(p + 8);
		p += 16;
		if (in.mtime_sec == 0 && in.ctime_sec == 0)
			WARN(v, "noncanonical", off, "inode %llu: TIMES flag with times 0", ull(ino));
	}
	if (flags & CFS_INODE_FLAGS_TIMES_NSEC) {
		in.mtime_nsec = get32(p);
		in.ctime_nsec = get32(p + 4);
		p += 8;
		if (in.mtime_nsec >= 1000000000U || in.ctime_nsec >= 1000000000U)
			ERR(v, "inode-time", off, "inode %llu: nanoseconds %u/%u out of range",
			    ull(ino), in.mtime_nsec, in.ctime_nsec);
		else if (in.mtime_nsec == 0 && in.ctime_nsec == 0)
			WARN(v, "noncanonical", off, "inode %llu: TIMES_NSEC flag with nanoseconds 0",
			     ull(ino));
	}
	if (flags & CFS_INODE_FLAGS_LOW_SIZE) {
		in.size = get32(p);
		p += 4;
	}
	if (flags & CFS_INODE_FLAGS_HIGH_SIZE) {
		uint32_t high = get32(p);

		in.size |= (uint64_t)high << 32;
		p += 4;
		if (high == 0)
			WARN(v, "noncanonical", off, "inode %llu: HIGH_SIZE flag with high bits 0",
			     ull(ino));
	}
	if ((flags & CFS_INODE_FLAGS_LOW_SIZE) && (in.size & 0xffffffffULL) == 0)
		WARN(v, "noncanonical", off, "inode %llu: LOW_SIZE flag with low bits 0", ull(ino));
	if (type != S_IFREG && in.size)
		WARN(v, "noncanonical", off, "inode %llu: a size of %llu on a file that is not regular",
		     ull(ino), ull(in.size));
	if (flags & CFS_INODE_FLAGS_XATTRS) {
		uint64_t xoff = get64(p);
		uint32_t xlen = get32(p + 8);

		p += 12;
		if (xlen == 0) {
			WARN(v, "noncanonical", off, "inode %llu: XATTRS flag with an empty set", ull(ino));
		} else {
			ret = check_xattrs(v, ino, xoff, xlen);
			if (ret < 0)
				return ret;
			in.xattrs_off = xoff;
			in.xattrs_len = xlen;
		}
	}
	if (flags & CFS_INODE_FLAGS_DIGEST) {
		memcpy(in.digest, p, CFS_DIGEST_SIZE);
		in.has_digest = true;
		p += CFS_DIGEST_SIZE;
	}
	if ((flags & (CFS_INODE_FLAGS_DIGEST | CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD)) &&
	    type != S_IFREG)
		WARN(v, "noncanonical", off, "inode %llu: a digest flag on a file that is not regular",
		     ull(ino));

	if (raw_plen > ino) {
		ERR(v, "payload-bounds", off,
		    "inode %llu: payload of %u bytes starts before the inode section", ull(ino),
		    raw_plen);
		raw_plen = in.payload_len = 0;
	}
	ret = add_range(v, ino - raw_plen, ino + esize);
	if (ret < 0)
		return ret;
	if (type == S_IFDIR && in.payload_len) {
		const uint8_t *d = base + ino - in.payload_len;
		uint32_t n = in.payload_len >= 4 ? get32(d) : 0;

		if (n == 0 || n > CFS_MAX_DIR_CHUNKS || in.payload_len != cfs_dir_header_size(n)) {
			ERR(v, "dir-table", off,
			    "directory inode %llu: payload of %u bytes does not hold a chunk table of %u chunks (at most %u)",
			    ull(ino), in.payload_len, n, CFS_MAX_DIR_CHUNKS);
			in.payload_len = 0;
		} else {
			in.n_chunks = n;
			in.payload = (const char *)d;
		}
	} else if (type == S_IFREG || type == S_IFLNK) {
		const char *what = type == S_IFLNK ? "symlink target" : "backing path";

		if (in.payload_len > CFS_MAX_PAYLOAD_PATH || (type == S_IFLNK && in.payload_len == 0)) {
			ERR(v, "payload-size", off, "inode %llu: %s of %u bytes (must be %u..%u)",
			    ull(ino), what, in.payload_len, type == S_IFLNK ? 1 : 0,
			    CFS_MAX_PAYLOAD_PATH);
		} else if (in.payload_len) {
			in.payload = (const char *)base + ino - in.payload_len;
			if (memchr(in.payload, '\0', in.payload_len))
				ERR(v, "payload-nul", off, "inode %llu: %s contains a NUL byte", ull(ino),
				    what);
		}
		if (type == S_IFREG) {
			uint8_t from[CFS_DIGEST_SIZE];
			/* No payload when its size was wrong (reported above). */
			bool spells = in.payload &&
				      cfs_digest_from_payload(in.payload, in.payload_len, from) == 0;

			if (flags & CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD) {
				if (in.has_digest) {
					WARN(v, "noncanonical", off,
					     "inode %llu: both DIGEST and DIGEST_FROM_PAYLOAD", ull(ino));
					if (spells && memcmp(from, in.digest, CFS_DIGEST_SIZE))
						ERR(v, "digest-mismatch", off,
						    "inode %llu: the DIGEST field and the backing path name different digests",
						    ull(ino));
				} else if (!spells) {
					ERR(v, "digest-payload", off,
					    "inode %llu: backing path does not encode the digest its flags promise",
					    ull(ino));
				} else {
					memcpy(in.digest, from, CFS_DIGEST_SIZE);
					in.has_digest = true;
				}
			} else if (in.has_digest && spells && memcmp(from, in.digest, CFS_DIGEST_SIZE) == 0) {
				WARN(v, "noncanonical", off,
				     "inode %llu: DIGEST stored although the backing path spells it", ull(ino));
			}
			if (in.size && !in.payload_len)
				ERR(v, "no-backing", off,
				    "inode %llu: regular file of %llu bytes without a backing path",
				    ull(ino), ull(in.size));
		}
	} else if (in.payload_len) {
		WARN(v, "noncanonical", off, "inode %llu: a payload of %u bytes on a %s", ull(ino),
		     in.payload_len, type == S_IFDIR ? "directory" : "special file");
		in.payload_len = 0;
	}
	*out = in;
	return 1;
}

/* ---- directories ---- */

int cfs_verify_met_again(struct verifier *v, struct ino_info *info, uint64_t ino,
			 uint64_t offset, unsigned int d_type, unsigned int want,
			 uint32_t want_mode, uint64_t at)
{
	int ret;

	info->names++;
	if (info->mode == 0)
		return 0; /* reported when first met */
	if (S_ISDIR(info->mode)) {
		if (info->on_stack)
			ERR(v, "cycle", at,
			    "names directory inode %llu, which contains this entry ('%s'): a cycle",
			    ull(ino), info->first_path ? info->first_path : "/");
		else
			ERR(v, "dir-hardlink", at,
			    "names directory inode %llu, already reached at '%s': a directory hardlink",
			    ull(ino), info->first_path ? info->first_path : "/");
		return 1;
	}
	if (d_type != want)
		ERR(v, "d_type", at, "entry type %u does not match the %s it names", d_type,
		    cfs_type_word(want_mode));
	if (S_ISREG(info->mode)) {
		/* a hardlink: one more user of the object */
		struct cfs_inode h = { .mode = info->mode, .ino = ino, .offset = offset,
				       .payload = info->payload,
				       .payload_len = info->payload_len,
				       .has_digest = info->has_digest, .size = info->size };

		memcpy(h.digest, info->digest, CFS_DIGEST_SIZE);
		ret = cfs_verify_add_object(v, &h, v->path);
		return ret < 0 ? ret : 0;
	}
	return 0;
}

struct ino_info *cfs_verify_met_first(struct verifier *v, uint64_t ino)
{
	struct ino_info *info = cfs_vmap_add(&v->map, ino);

	if (!info)
		return NULL;
	info->names = 1;
	info->first_path = strdup(v->path);
	return info->first_path ? info : NULL;
}

void cfs_verify_met_inode(struct ino_info *info, const struct cfs_inode *in)
{
	info->mode = in->mode;
	info->nlink = in->nlink;
	info->payload = in->payload;
	info->payload_len = in->payload_len;
	info->has_digest = in->has_digest;
	memcpy(info->digest, in->digest, CFS_DIGEST_SIZE);
	info->size = in->size;
}

/* Load chunk f->chunk of the frame's directory; false when it cannot be read. */
static bool load_chunk(struct verifier *v, struct v1_pos *f)
{
	const uint8_t *e = f->table + sizeof(struct cfs_dir_header) +
			   (size_t)f->chunk * sizeof(struct cfs_dir_chunk);
	uint32_t n = get16(e + offsetof(struct cfs_dir_chunk, n_dentries));
	uint32_t size = get16(e + offsetof(struct cfs_dir_chunk, chunk_size));
	uint64_t off = get64(e + offsetof(struct cfs_dir_chunk, chunk_offset));
	uint64_t vsize = v->size - v->doff, abs;
	uint64_t ioff = f->ino + CFS_INODE_SECTION_OFFSET;

	if (n == 0 || size < n * sizeof(struct cfs_dentry)) {
		ERR(v, "chunk-size", ioff, "chunk %u holds %u entries in %u bytes", f->chunk, n, size);
		return false;
	}
	if (!fits(off, size, vsize)) {
		ERR(v, "chunk-bounds", ioff,
		    "chunk %u of %u bytes at data offset %llu runs past the end of the image",
		    f->chunk, size, ull(off));
		return false;
	}
	abs = v->doff + off;
	if (size > CFS_MAX_DIR_CHUNK_SIZE)
		ERR(v, "chunk-oversized", abs, "chunk %u is %u bytes, more than %u", f->chunk, size,
		    CFS_MAX_DIR_CHUNK_SIZE);
	else if (abs % CFS_PAGE_SIZE + size > CFS_PAGE_SIZE)
		ERR(v, "chunk-page", abs, "chunk %u of %u bytes crosses a %u-byte page boundary",
		    f->chunk, size, CFS_PAGE_SIZE);
	f->cdata = v->data + abs;
	f->cn = n;
	f->csize = size;
	f->coff = abs;
	return true;
}

/*
 * The next entry of the directory at @pos, or 0 at its end. Entries that
 * cannot be read are reported and skipped.
 */
static int v1_next(void *ctx, void *pos, const struct cfs_inode *dir, struct vdirent *out)
{
	struct verifier *v = ctx;
	struct v1_pos *f = pos;

	(void)dir;
	for (;;) {
		const uint8_t *e;
		uint32_t names, nlen, noff;

		if (f->chunk >= f->n_chunks)
			return 0;
		if (!f->chunk_loaded) {
			if (!load_chunk(v, f)) {
				f->chunk++;
				continue;
			}
			f->chunk_loaded = true;
			f->entry = 0;
		}
		if (f->entry >= f->cn) {
			f->chunk++;
			f->chunk_loaded = false;
			continue;
		}
		e = f->cdata + (size_t)f->entry * sizeof(struct cfs_dentry);
		names = f->cn * (uint32_t)sizeof(struct cfs_dentry);
		nlen = e[offsetof(struct cfs_dentry, name_len)];
		noff = get16(e + offsetof(struct cfs_dentry, name_offset));
		out->at = f->coff + (uint64_t)f->entry * sizeof(struct cfs_dentry);
		f->entry++;
		if (!fits(noff, nlen, f->csize - names)) {
			ERR(v, "entry-bounds", out->at, "entry %u of chunk %u: name of %u bytes at %u runs past the chunk",
			    f->entry - 1, f->chunk, nlen, noff);
			continue;
		}
		out->name = f->cdata + names + noff;
		out->len = nlen;
		out->ino = get64(e + offsetof(struct cfs_dentry, inode_index));
		out->d_type = e[offsetof(struct cfs_dentry, d_type)];
		return 1;
	}
}

static void v1_open_dir(void *ctx, void *pos, const struct cfs_inode *dir)
{
	struct v1_pos *f = pos;

	(void)ctx;
	f->ino = dir->ino;
	f->table = (const uint8_t *)dir->payload;
	f->n_chunks = dir->payload ? dir->n_chunks : 0;
}

int cfs_verify_set_path(struct verifier *v, size_t at, const uint8_t *name, size_t len)
{
	size_t need = at + 1 + len + 1;

	if (need > v->path_cap) {
		size_t cap = v->path_cap;
		char *p;

		while (cap < need)
			cap *= 2;
		p = realloc(v->path, cap);
		if (!p)
			return -ENOMEM;
		v->path = p;
		v->path_cap = cap;
	}
	v->path[at] = '/';
	memcpy(v->path + at + 1, name, len);
	v->path[at + 1 + len] = '\0';
	return 0;
}

int cfs_verify_add_object(struct verifier *v, const struct cfs_inode *in, const char *path)
{
	char bpath[CFS_MAX_PAYLOAD_PATH + 1];
	int ret;

	if (!v->o || !v->o->n_basedirs || !S_ISREG(in->mode) || !in->payload || !in->payload_len ||
	    memchr(in->payload, '\0', in->payload_len))
		return 0;
	memcpy(bpath, in->payload, in->payload_len);
	bpath[in->payload_len] = '\0';
	ret = cfs_objects_add(&v->objs, bpath, in->has_digest ? in->digest : NULL, in->size, 0,
			      path);
	if (ret == -EINVAL) {
		cfs_vreport(v, CFS_VERIFY_ERROR, "object-conflict", path,
			    v->erofs ? in->offset : in->ino + CFS_INODE_SECTION_OFFSET,
		       "backing file '%s' is recorded elsewhere in the image with another size or digest",
		       bpath);
		ret = 0;
	}
	return ret;
}

static uint64_t v1_root(void *ctx, uint64_t *at)
{
	struct verifier *v = ctx;

	*at = NO_OFFSET;
	return v->data ? get64(v->data + offsetof(struct cfs_header, root_inode)) : 0;
}

static int v1_decode(void *ctx, uint64_t ino, uint64_t at, struct cfs_inode *in, uint32_t *type)
{
	int ret = decode_inode(ctx, ino, in);

	(void)at;
	if (ret > 0)
		*type = in->mode;
	return ret;
}

static unsigned int v1_d_type(uint32_t type)
{
	return IFTODT(type);
}

static uint64_t v1_offset_of(void *ctx, uint64_t ino)
{
	(void)ctx;
	return ino + CFS_INODE_SECTION_OFFSET;
}

static const struct verify_format v1_format = {
	.pos_size = sizeof(struct v1_pos),
	.bad_name = "invalid name (empty, '.', '..', or holding '/' or NUL)",
	.root = v1_root,
	.decode = v1_decode,
	.d_type = v1_d_type,
	.open_dir = v1_open_dir,
	.next = v1_next,
	.offset_of = v1_offset_of,
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Bytes of the inode section no reachable inode uses. */
static void check_coverage(struct verifier *v)
{
	uint64_t pos = 0;

	if (v->n_ranges)
		qsort(v->ranges, v->n_ranges, sizeof(*v->ranges), cmp_range);
	for (size_t i = 0; i <= v->n_ranges; i++) {
		uint64_t start = i < v->n_ranges ? v->ranges[i].start : v->section;

		if (start > pos)
			cfs_vreport(v, CFS_VERIFY_WARNING, "unreachable", NULL, pos + CFS_INODE_SECTION_OFFSET,
			       "%llu bytes of the inode section (up to offset %llu) belong to no reachable inode: an unreachable inode or padding",
			       ull(start - pos), ull(start + CFS_INODE_SECTION_OFFSET));
		if (i < v->n_ranges && v->ranges[i].end > pos)
			pos = v->ranges[i].end;
	}
}

static bool check_header(struct verifier *v)
{
	const uint8_t *h = v->data;
	uint32_t magic;
	uint64_t root;

	v->cur_path = NULL;
	if (v->size < CFS_INODE_SECTION_OFFSET + 4) {
		ERR(v, "header", 0, "image of %llu bytes is too short for a header and an inode",
		    ull(v->size));
		return false;
	}
	magic = get32(h + offsetof(struct cfs_header, magic));
	if (magic != CFS_MAGIC) {
		ERR(v, "header", offsetof(struct cfs_header, magic),
		    "not a composefs image: magic 0x%08x, expected 0x%08x", magic, CFS_MAGIC);
		return false;
	}
	if (h[offsetof(struct cfs_header, version)] != CFS_VERSION) {
		ERR(v, "header", 0, "format version %u, this check knows %u",
		    h[offsetof(struct cfs_header, version)], CFS_VERSION);
		return false;
	}
	for (size_t i = 0; i < sizeof(struct cfs_header); i++) {
		if ((i >= 1 && i < 4) || i >= offsetof(struct cfs_header, unused3)) {
			if (h[i]) {
				WARN(v, "noncanonical", i, "header: unused byte at offset %zu is not 0", i);
				break;
			}
		}
	}
	v->doff = get64(h + offsetof(struct cfs_header, data_offset));
	if (v->doff < CFS_INODE_SECTION_OFFSET || v->doff > v->size) {
		ERR(v, "header", offsetof(struct cfs_header, data_offset),
		    "data section offset %llu outside the image (%llu..%llu)", ull(v->doff),
		    ull(CFS_INODE_SECTION_OFFSET), ull(v->size));
		return false;
	}
	v->section = v->doff - CFS_INODE_SECTION_OFFSET;
	root = get64(h + offsetof(struct cfs_header, root_inode));
	if (!fits(root, 4, v->section)) {
		ERR(v, "header", offsetof(struct cfs_header, root_inode),
		    "root inode %llu lies outside the inode section (%llu bytes)", ull(root),
		    ull(v->section));
		return false;
	}
	return true;
}

/* ---- objects ---- */

enum obj_result {
	OBJ_UNCHECKED = 0, /* no digest recorded, or not found */
	OBJ_OK,
	OBJ_BAD_DIGEST,
	OBJ_NO_VERITY, /* verity off on the file; computed digest matches */
	OBJ_NO_VERITY_FS, /* the filesystem has none; computed digest matches */
	OBJ_ERROR, /* could not be read */
};

struct obj_check {
	enum obj_result result;
	bool measured;
	int err;
	uint8_t found[CFS_DIGEST_SIZE];
};

struct hasher {
	struct verifier *v;
	const int *dirfds;
	struct obj_check *checks;
	size_t *todo; /* indexes of objects to hash */
	size_t n_todo;
	pthread_mutex_t lock;
	size_t next;
	uint64_t done, done_bytes, total_bytes;
};

static void hash_one(struct hasher *h, size_t i)
{
	struct cfs_object *o = &h->v->objs.objs[i];
	struct obj_check *c = &h->checks[i];
	int fd, ret;

	fd = openat(h->dirfds[o->basedir], o->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		c->result = OBJ_ERROR;
		c->err = errno;
		return;
	}
	ret = cfs_verity_measure_fd(fd, c->found);
	if (ret == 0) {
		c->measured = true;
	} else if (ret == -ENODATA || ret == -EOPNOTSUPP || ret == -EINVAL) {
		/* no fs-verity (or not sha256/4k): read the content instead */
		c->result = ret == -EOPNOTSUPP ? OBJ_NO_VERITY_FS : OBJ_NO_VERITY;
		ret = cfs_verity_digest_fd(fd, c->found);
		if (ret < 0) {
			c->result = OBJ_ERROR;
			c->err = -ret;
			close(fd);
			return;
		}
	} else {
		c->result = OBJ_ERROR;
		c->err = -ret;
		close(fd);
		return;
	}
	close(fd);
	if (memcmp(c->found, o->digest, CFS_DIGEST_SIZE) != 0)
		c->result = OBJ_BAD_DIGEST;
	else if (c->measured)
		c->result = OBJ_OK;
}

static void *hash_worker(void *arg)
{
	struct hasher *h = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&h->lock);
		if (h->next >= h->n_todo) {
			pthread_mutex_unlock(&h->lock);
			return NULL;
		}
		i = h->todo[h->next++];
		pthread_mutex_unlock(&h->lock);

		hash_one(h, i);

		pthread_mutex_lock(&h->lock);
		h->done++;
		h->done_bytes += h->v->objs.objs[i].size;
		if (h->v->o->progress)
			h->v->o->progress(h->v->o->progress_ctx, h->done, h->n_todo, h->done_bytes,
					  h->total_bytes);
		pthread_mutex_unlock(&h->lock);
	}
}

static void report_object(struct verifier *v, const struct cfs_object *o,
			  enum cfs_verify_severity sev, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void report_object(struct verifier *v, const struct cfs_object *o,
			  enum cfs_verify_severity sev, const char *kind, const char *fmt, ...)
{
	struct cfs_verify_problem p = { .severity = sev, .kind = kind, .offset = NO_OFFSET,
					.object = o->path, .users = o->users,
					.n_users = o->n_users };
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p.message = msg;
	p.path = o->n_users ? o->users[0].path : NULL;
	if (sev == CFS_VERIFY_ERROR)
		v->res->errors++;
	else
		v->res->warnings++;
	if (v->fn)
		v->fn(v->fn_ctx, &p);
}

static unsigned int cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
}

int cfs_verify_objects(struct verifier *v)
{
	const struct cfs_verify_options *o = v->o;
	struct hasher h = { .v = v };
	struct obj_check *checks = NULL;
	pthread_t *threads = NULL;
	unsigned int jobs, started = 0;
	uint64_t *no_verity_fs = NULL;
	int *dirfds = NULL, ret;
	size_t opened = 0;

	ret = cfs_objects_locate(&v->objs, o->basedirs, o->n_basedirs);
	if (ret < 0)
		return ret;
	v->res->objects = v->objs.n;
	dirfds = calloc(o->n_basedirs, sizeof(*dirfds));
	checks = calloc(v->objs.n ? v->objs.n : 1, sizeof(*checks));
	h.todo = calloc(v->objs.n ? v->objs.n : 1, sizeof(*h.todo));
	no_verity_fs = calloc(o->n_basedirs, sizeof(*no_verity_fs));
	if (!dirfds || !checks || !h.todo || !no_verity_fs) {
		ret = -ENOMEM;
		goto out;
	}
	for (opened = 0; opened < o->n_basedirs; opened++) {
		dirfds[opened] = open(o->basedirs[opened], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfds[opened] < 0) {
			ret = -errno;
			cfs_msg("opening basedir '%s': %s", o->basedirs[opened], strerror(errno));
			goto out;
		}
	}
	for (size_t i = 0; i < v->objs.n; i++) {
		const struct cfs_object *ob = &v->objs.objs[i];

		if (ob->state == CFS_OBJECT_PRESENT && ob->has_digest) {
			h.todo[h.n_todo++] = i;
			h.total_bytes += ob->size;
		}
	}
	h.dirfds = dirfds;
	h.checks = checks;
	jobs = o->jobs ? o->jobs : cpu_count();
	if (jobs > h.n_todo)
		jobs = h.n_todo ? (unsigned int)h.n_todo : 1;
	pthread_mutex_init(&h.lock, NULL);
	threads = calloc(jobs, sizeof(*threads));
	if (!threads) {
		ret = -ENOMEM;
		goto out_lock;
	}
	for (started = 0; started < jobs; started++)
		if (pthread_create(&threads[started], NULL, hash_worker, &h) != 0)
			break;
	if (started == 0)
		hash_worker(&h);
	for (unsigned int t = 0; t < started; t++)
		pthread_join(threads[t], NULL);

	/* report in the stable order of the objects */
	for (size_t i = 0; i < v->objs.n; i++) {
		const struct cfs_object *ob = &v->objs.objs[i];
		const struct obj_check *c = &checks[i];
		const char *how = c->measured ? "measured" : "computed";
		char want[CFS_DIGEST_HEX_SIZE], got[CFS_DIGEST_HEX_SIZE];
		const char *dir = ob->basedir >= 0 ? o->basedirs[ob->basedir] : "";

		switch (ob->state) {
		case CFS_OBJECT_MISSING:
			report_object(v, ob, CFS_VERIFY_ERROR, "missing", "in none of the %zu basedirs",
				      o->n_basedirs);
			continue;
		case CFS_OBJECT_NOT_FILE:
			report_object(v, ob, CFS_VERIFY_ERROR, "not-file",
				      "in basedir '%s' is not a regular file", dir);
			continue;
		case CFS_OBJECT_WRONG_SIZE:
			report_object(v, ob, CFS_VERIFY_ERROR, "size",
				      "in basedir '%s' is %llu bytes, the image records %llu", dir,
				      ull(ob->found_size), ull(ob->size));
			continue;
		default:
			break;
		}
		if (!ob->has_digest) {
			v->res->objects_ok++;
			continue;
		}
		if (c->result == OBJ_ERROR) {
			report_object(v, ob, CFS_VERIFY_ERROR, "unreadable", "in basedir '%s': %s", dir,
				      strerror(c->err));
			continue;
		}
		if (c->measured)
			v->res->objects_measured++;
		else
			v->res->objects_computed++;
		if (!c->measured)
			v->res->bytes_hashed += ob->size;
		cfs_digest_to_hex(ob->digest, want);
		cfs_digest_to_hex(c->found, got);
		if (c->result == OBJ_BAD_DIGEST) {
			report_object(v, ob, CFS_VERIFY_ERROR, "digest",
				      "in basedir '%s' has fs-verity digest %s (%s), the image records %s",
				      dir, got, how, want);
			continue;
		}
		if (c->result == OBJ_NO_VERITY_FS && !o->require_verity) {
			/* said once per basedir below, not once per object */
			no_verity_fs[ob->basedir]++;
		} else if (c->result == OBJ_NO_VERITY || c->result == OBJ_NO_VERITY_FS) {
			report_object(v, ob, o->require_verity ? CFS_VERIFY_ERROR : CFS_VERIFY_WARNING,
				      "no-verity",
				      "in basedir '%s' has no fs-verity (%s); its content has the recorded digest (computed)",
				      dir, c->result == OBJ_NO_VERITY_FS ? "the filesystem has none" :
									   "not enabled on the file");
			if (o->require_verity)
				continue;
		}
		v->res->objects_ok++;
	}
	for (size_t b = 0; b < o->n_basedirs; b++)
		if (no_verity_fs[b]) {
			v->cur_path = NULL;
			WARN(v, "no-verity", NO_OFFSET,
			     "basedir '%s' is on a filesystem without fs-verity: the digests of %llu objects there were computed, not measured",
			     o->basedirs[b], ull(no_verity_fs[b]));
		}
	ret = 0;
out_lock:
	pthread_mutex_destroy(&h.lock);
out:
	while (opened-- > 0)
		close(dirfds[opened]);
	free(threads);
	free(dirfds);
	free(checks);
	free(h.todo);
	free(no_verity_fs);
	return ret;
}

/* ---- the image's own digest ---- */

static int check_image_digest(struct verifier *v, int fd)
{
	char want[CFS_DIGEST_HEX_SIZE], got[CFS_DIGEST_HEX_SIZE];
	int ret;

	ret = cfs_verity_measure_fd(fd, v->res->image_digest);
	if (ret == 0) {
		v->res->image_digest_measured = true;
	} else {
		ret = cfs_verity_digest_fd(fd, v->res->image_digest);
		if (ret < 0) {
			cfs_msg("computing the fs-verity digest: %s", strerror(-ret));
			return ret;
		}
	}
	if (memcmp(v->res->image_digest, v->o->image_digest, CFS_DIGEST_SIZE) != 0) {
		cfs_digest_to_hex(v->o->image_digest, want);
		cfs_digest_to_hex(v->res->image_digest, got);
		v->cur_path = NULL;
		ERR(v, "image-digest", NO_OFFSET, "the image has fs-verity digest %s (%s), expected %s",
		    got, v->res->image_digest_measured ? "measured" : "computed", want);
	}
	return 0;
}

int cfs_verify_image(const char *path, const struct cfs_verify_options *opts, cfs_verify_fn fn,
		     void *ctx, struct cfs_verify_result *res)
{
	struct verifier v = { .o = opts, .fn = fn, .fn_ctx = ctx, .res = res };
	void *map = MAP_FAILED;
	struct stat st;
	int fd, ret;

	memset(res, 0, sizeof(*res));
	cfs_objects_init(&v.objs);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		cfs_msg("not a regular file");
		ret = -EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		ret = -EFBIG;
		goto out;
	}
	v.size = (uint64_t)st.st_size;
	if (v.size) {
		map = mmap(NULL, (size_t)v.size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			ret = -errno;
			goto out;
		}
		v.data = map;
	}
	v.erofs = v.data && cfs_erofs_magic(v.data, v.size);
	if (opts && opts->image_digest) {
		ret = check_image_digest(&v, fd);
		if (ret < 0)
			goto out;
	}
	if (v.erofs) {
		ret = cfs_verify_erofs(&v);
		if (ret < 0)
			goto out;
		if (opts && opts->n_basedirs) {
			ret = cfs_verify_objects(&v);
			if (ret < 0)
				goto out;
		}
	} else if (check_header(&v)) {
		ret = cfs_verify_walk(&v, &v1_format, &v);
		if (ret < 0)
			goto out;
		check_coverage(&v);
		if (opts && opts->n_basedirs) {
			ret = cfs_verify_objects(&v);
			if (ret < 0)
				goto out;
		}
	}
	ret = 0;
out:
	if (map != MAP_FAILED)
		munmap(map, (size_t)v.size);
	close(fd);
	cfs_vmap_free(&v.map);
	free(v.ranges);
	free(v.xsets);
	free(v.path);
	cfs_objects_free(&v.objs);
	return ret;
}
