// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl verify of composefs 1.0 (EROFS) images. Each reachable inode is
 * decoded by the EROFS reader, whose bounds checks (inode, xattr area,
 * shared xattrs, data blocks, symlink target, metacopy encoding) are the
 * ones the reader applies to any input; a failure there becomes a problem
 * report naming the path, and the walk goes on with the next entry. On top
 * of that this file checks, from the raw bytes, what the reader does not
 * need to: every directory block and entry (names, order, duplicates, "."
 * and "..", d_type, targets in bounds), cycles and directory hardlinks,
 * link counts, the overlay xattrs overlayfs will act on (a redirect must
 * spell the digest its metacopy holds; no overlay xattr where overlayfs
 * would misread it), the chunk map of a file kept outside the image, and
 * the superblock's counts. The objects then go to verify.c's checks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bytes.h"
#include "erofs-format.h"
#include "reader.h"
#include "verify.h"

#define OVL "trusted.overlay."
#define OVL_LEN (sizeof(OVL) - 1)

/* One directory being walked. */
struct eframe {
	struct cfs_inode in; /* the directory */
	uint64_t parent; /* nid ".." must name */
	uint64_t pos; /* logical offset of the current block */
	uint32_t entry; /* next entry in it */
	const uint8_t *prev; /* previous name, for the order */
	size_t prev_len;
	size_t path_len;
	uint32_t subdirs;
	bool dot, dotdot;
};

struct ewalk {
	struct verifier *v;
	struct cfs_image img;
	char msg[1024];
};

static uint8_t ft_of(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return EROFS_FT_REG_FILE;
	case S_IFDIR: return EROFS_FT_DIR;
	case S_IFCHR: return EROFS_FT_CHRDEV;
	case S_IFBLK: return EROFS_FT_BLKDEV;
	case S_IFIFO: return EROFS_FT_FIFO;
	case S_IFSOCK: return EROFS_FT_SOCK;
	case S_IFLNK: return EROFS_FT_SYMLINK;
	}
	return EROFS_FT_UNKNOWN;
}

static uint64_t slot_offset(const struct ewalk *w, uint64_t nid)
{
	if (nid > (UINT64_MAX - w->img.meta_base) / EROFS_SLOTSIZE)
		return NO_OFFSET;
	return w->img.meta_base + nid * EROFS_SLOTSIZE;
}

/* ---- the header and superblock ---- */

static bool check_super(struct ewalk *w)
{
	struct verifier *v = w->v;
	const uint8_t *h = v->data, *sb;
	uint32_t flags, cver, compat;
	int ret;

	v->cur_path = NULL;
	cfs_msg_capture(w->msg, sizeof(w->msg));
	ret = cfs_erofs_open(&w->img);
	cfs_msg_capture(NULL, 0);
	if (ret < 0) {
		ERR(v, "superblock", ret == -EFSCORRUPTED ? EROFS_SUPER_OFFSET : NO_OFFSET, "%s",
		    ret == -EFSCORRUPTED ? w->msg : strerror(-ret));
		return false;
	}
	flags = get32(h + offsetof(struct cfs_erofs_header, flags));
	if (flags & ~CFS_EROFS_FLAGS_HAS_ACL)
		WARN(v, "noncanonical", offsetof(struct cfs_erofs_header, flags),
		     "composefs header: unknown flags 0x%x", flags & ~CFS_EROFS_FLAGS_HAS_ACL);
	cver = get32(h + offsetof(struct cfs_erofs_header, composefs_version));
	if (cver > CFS_EROFS_COMPOSEFS_VERSION_MAX)
		ERR(v, "header", offsetof(struct cfs_erofs_header, composefs_version),
		    "composefs_version %u, this check knows up to %u", cver,
		    CFS_EROFS_COMPOSEFS_VERSION_MAX);
	for (size_t i = offsetof(struct cfs_erofs_header, unused); i < EROFS_SUPER_OFFSET; i++)
		if (h[i]) {
			WARN(v, "noncanonical", i,
			     "composefs header: byte at offset %zu before the superblock is not 0", i);
			break;
		}
	sb = h + EROFS_SUPER_OFFSET;
	if (get32(sb + offsetof(struct erofs_super_block, checksum)))
		WARN(v, "noncanonical", EROFS_SUPER_OFFSET + offsetof(struct erofs_super_block, checksum),
		     "superblock: a checksum, which composefs does not write (and the kernel does not check without SB_CHKSUM)");
	compat = get32(sb + offsetof(struct erofs_super_block, feature_compat));
	if (compat & ~(EROFS_FEATURE_COMPAT_MTIME | EROFS_FEATURE_COMPAT_XATTR_FILTER))
		WARN(v, "noncanonical",
		     EROFS_SUPER_OFFSET + offsetof(struct erofs_super_block, feature_compat),
		     "superblock: compatible features 0x%x that composefs does not write", compat);
	if (get64(sb + offsetof(struct erofs_super_block, packed_nid)) ||
	    get16(sb + offsetof(struct erofs_super_block, available_compr_algs)))
		ERR(v, "superblock", EROFS_SUPER_OFFSET,
		    "superblock: a packed inode or compression, which composefs images do not use");
	return true;
}

/* ---- inodes ---- */

struct xcheck {
	struct ewalk *w;
	uint64_t off; /* the inode's file offset, for reports */
	uint32_t raw_type;
	bool root;
	const char *prev[64]; /* keys seen, for duplicates (copies) */
	size_t n_prev;
	char keys[64][CFS_MAX_NAME_LEN + 32];
	bool dup_reported, many;
};

/*
 * The overlay xattrs overlayfs acts on in an image layer: redirect and
 * metacopy on regular files, opaque on directories. Anything else in the
 * raw trusted.overlay. namespace (not escaped as trusted.overlay.overlay.)
 * would change what the mount shows.
 */
static int check_raw_xattr(void *ctx, const char *key, size_t len, const uint8_t *value,
			   size_t vlen)
{
	struct xcheck *x = ctx;
	struct verifier *v = x->w->v;

	for (size_t i = 0; i < x->n_prev; i++)
		if (strlen(x->keys[i]) == len && memcmp(x->keys[i], key, len) == 0 &&
		    !x->dup_reported) {
			ERR(v, "xattr-duplicate", x->off, "xattr '%.*s' is stored twice", (int)len, key);
			x->dup_reported = true;
		}
	if (x->n_prev < 64 && len < sizeof(x->keys[0])) {
		memcpy(x->keys[x->n_prev], key, len);
		x->keys[x->n_prev++][len] = '\0';
	}
	if (len <= OVL_LEN || memcmp(key, OVL, OVL_LEN) != 0 ||
	    (len > OVL_LEN + 8 && memcmp(key + OVL_LEN, "overlay.", 8) == 0))
		return 0;
	key += OVL_LEN;
	len -= OVL_LEN;
	if ((len == 8 && memcmp(key, "redirect", 8) == 0) ||
	    (len == 8 && memcmp(key, "metacopy", 8) == 0)) {
		if (x->raw_type != S_IFREG)
			ERR(v, "overlay-xattr", x->off,
			    "trusted.overlay.%.*s on a %s: overlayfs would follow it", (int)len, key,
			    cfs_type_word(x->raw_type));
		return 0;
	}
	if (len == 6 && memcmp(key, "opaque", 6) == 0) {
		if (x->raw_type != S_IFDIR || vlen != 1 || (value[0] != 'y' && value[0] != 'x'))
			ERR(v, "overlay-xattr", x->off,
			    "trusted.overlay.opaque of %zu bytes on a %s", vlen,
			    cfs_type_word(x->raw_type));
		return 0;
	}
	ERR(v, "overlay-xattr", x->off,
	    "unescaped trusted.overlay.%.*s, which overlayfs would act on", (int)len, key);
	return 0;
}

/* The chunk map of a file whose content is elsewhere: in the image, and all holes. */
static void check_chunks(struct ewalk *w, const struct cfs_inode *in, uint32_t fmt_word)
{
	struct verifier *v = w->v;
	const uint8_t *p = v->data + in->offset;
	uint32_t isize, icount, bits, xsize;
	uint64_t n, at;

	isize = ((get16(p) >> EROFS_I_VERSION_BIT) & 1) == EROFS_INODE_COMPACT ?
			sizeof(struct erofs_inode_compact) :
			sizeof(struct erofs_inode_extended);
	icount = get16(p + 2);
	xsize = icount ? sizeof(struct erofs_xattr_ibody_header) + (icount - 1) * 4 : 0;
	if (fmt_word & ~EROFS_CHUNK_FORMAT_BLKBITS_MASK) {
		ERR(v, "chunk-format", in->offset,
		    "chunk-based inode with chunk format 0x%x (composefs uses plain block maps)",
		    fmt_word);
		return;
	}
	bits = EROFS_BLKSIZ_BITS + (fmt_word & EROFS_CHUNK_FORMAT_BLKBITS_MASK);
	n = (in->size + (1ULL << bits) - 1) >> bits;
	at = in->offset + isize + xsize;
	if (n > (EROFS_BLKSIZ - at % EROFS_BLKSIZ) / 4)
		return; /* composefs 1.0 keeps no map that would leave the block: nothing to check */
	if (!fits(at, n * 4, v->size)) {
		ERR(v, "chunk-bounds", in->offset,
		    "block map of %llu chunks at offset %llu runs past the end of the image",
		    ull(n), ull(at));
		return;
	}
	for (uint64_t i = 0; i < n; i++)
		if (get32(v->data + at + i * 4) != EROFS_NULL_ADDR) {
			WARN(v, "noncanonical", at + i * 4,
			     "chunk %llu of a file kept outside the image is not a hole", ull(i));
			break;
		}
}

/*
 * Decode inode @nid at the current path, named by the entry at @at. Return 1 with *@out (and the raw
 * file type in *@raw_type) when it can be used, 0 when not, or -errno.
 */
static int decode(struct ewalk *w, uint64_t nid, uint64_t at, struct cfs_inode *out,
		  uint32_t *raw_type)
{
	struct verifier *v = w->v;
	struct xcheck *x;
	uint64_t off = slot_offset(w, nid);
	const uint8_t *p;
	uint32_t fmt;
	int ret;

	cfs_msg_capture(w->msg, sizeof(w->msg));
	ret = cfs_erofs_inode(&w->img, nid, out);
	cfs_msg_capture(NULL, 0);
	if (ret == -EFSCORRUPTED) {
		/* at the inode, or at the entry when the inode is not in the image */
		ERR(v, "inode", off != NO_OFFSET && off < v->size ? off : at, "%s", w->msg);
		return 0;
	}
	if (ret < 0)
		return ret;
	p = v->data + out->offset;
	fmt = get16(p);
	*raw_type = get16(p + 4) & S_IFMT;

	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->w = w;
	x->off = out->offset;
	x->raw_type = *raw_type;
	cfs_msg_capture(w->msg, sizeof(w->msg));
	ret = cfs_erofs_raw_xattrs(&w->img, nid, check_raw_xattr, x);
	cfs_msg_capture(NULL, 0);
	free(x);
	if (ret < 0)
		return ret; /* the reader decoded these a moment ago */

	if (((fmt >> EROFS_I_VERSION_BIT) & 1) == EROFS_INODE_COMPACT ?
		    get32(p + offsetof(struct erofs_inode_compact, i_reserved)) ||
			    get32(p + offsetof(struct erofs_inode_compact, i_reserved2)) :
		    get16(p + offsetof(struct erofs_inode_extended, i_reserved)) != 0)
		WARN(v, "noncanonical", out->offset, "inode %llu: reserved bytes are not 0", ull(nid));

	if (*raw_type == S_IFREG && !out->has_content && out->size > 0) {
		uint8_t from[CFS_DIGEST_SIZE];

		if (((fmt >> EROFS_I_DATALAYOUT_BIT) & 7) != EROFS_INODE_CHUNK_BASED)
			ERR(v, "no-backing", out->offset,
			    "inode %llu: regular file of %llu bytes neither in the image nor chunk-based",
			    ull(nid), ull(out->size));
		else
			check_chunks(w, out, get16(p + 16));
		if (out->payload && out->has_digest &&
		    (cfs_digest_from_payload(out->payload, out->payload_len, from) != 0 ||
		     memcmp(from, out->digest, CFS_DIGEST_SIZE) != 0 ||
		     out->payload_len != CFS_OBJECT_PATH_SIZE - 1 || out->payload[2] != '/'))
			ERR(v, "redirect-digest", out->offset,
			    "inode %llu: trusted.overlay.redirect '/%.*s' is not the object path of the digest in trusted.overlay.metacopy",
			    ull(nid), (int)out->payload_len, out->payload);
	}
	if (*raw_type != S_IFREG && *raw_type != S_IFDIR && *raw_type != S_IFLNK && out->size)
		WARN(v, "noncanonical", out->offset, "inode %llu: a size of %llu on a %s", ull(nid),
		     ull(out->size), cfs_type_word(*raw_type));
	return 1;
}

/* ---- directories ---- */

/*
 * The next raw entry of the directory in @f, or 0 at its end. A block that
 * cannot be read is reported and skipped; so is an entry.
 */
static int next_entry(struct ewalk *w, struct eframe *f, const uint8_t **name, size_t *len,
		      uint64_t *nid, uint8_t *ft, uint64_t *at)
{
	struct verifier *v = w->v;
	const struct cfs_inode *d = &f->in;

	while (f->pos < d->size) {
		uint64_t blen = d->size - f->pos, boff, first, n;
		const uint8_t *b, *e;
		uint32_t nameoff, end;

		if (blen > EROFS_BLKSIZ)
			blen = EROFS_BLKSIZ;
		boff = f->pos < d->tail_start ? d->data_blocks + f->pos
					      : d->data_tail + (f->pos - d->tail_start);
		if (!fits(boff, blen, v->size)) {
			ERR(v, "dir-bounds", d->offset,
			    "directory block at offset %llu runs past the end of the image", ull(boff));
			f->pos = d->size;
			return 0;
		}
		b = v->data + boff;
		first = blen >= sizeof(struct erofs_dirent) ? get16(b + 8) : 0;
		if (first < sizeof(struct erofs_dirent) || first % sizeof(struct erofs_dirent) ||
		    first > blen) {
			if (f->entry == 0)
				ERR(v, "dir-block", boff,
				    "directory block: first name at %llu of %llu bytes (not after a whole number of entries)",
				    ull(first), ull(blen));
			f->pos += blen;
			f->entry = 0;
			continue;
		}
		n = first / sizeof(struct erofs_dirent);
		if (f->entry >= n) {
			f->pos += blen;
			f->entry = 0;
			continue;
		}
		e = b + (size_t)f->entry * sizeof(struct erofs_dirent);
		*at = boff + (uint64_t)f->entry * sizeof(struct erofs_dirent);
		nameoff = get16(e + 8);
		end = f->entry + 1 < n ? get16(e + sizeof(struct erofs_dirent) + 8) : (uint32_t)blen;
		f->entry++;
		if (nameoff < first || end < nameoff || end > blen) {
			ERR(v, "entry-bounds", *at, "entry %u: name at %u..%u outside its %llu-byte block",
			    f->entry - 1, nameoff, end, ull(blen));
			continue;
		}
		*name = b + nameoff;
		*len = end - nameoff;
		if (f->entry == n) /* the last name may be followed by padding */
			*len = strnlen((const char *)*name, *len);
		*nid = get64(e);
		*ft = e[10];
		if (e[11])
			WARN(v, "noncanonical", *at, "directory entry: reserved byte is not 0");
		return 1;
	}
	return 0;
}

static int push(struct eframe **stack, size_t *depth, size_t *cap, const struct cfs_inode *in,
		uint64_t parent, size_t path_len)
{
	struct eframe *f;

	if (*depth == *cap) {
		size_t c = *cap ? 2 * *cap : 64;

		f = realloc(*stack, c * sizeof(*f));
		if (!f)
			return -ENOMEM;
		*stack = f;
		*cap = c;
	}
	f = &(*stack)[(*depth)++];
	memset(f, 0, sizeof(*f));
	f->in = *in;
	f->parent = parent;
	f->path_len = path_len;
	return 0;
}

/* "." and "..": no inode of their own, but they must name the right ones. */
static void dot_entry(struct ewalk *w, struct eframe *f, size_t len, uint64_t nid, uint8_t ft,
		      uint64_t at)
{
	struct verifier *v = w->v;
	uint64_t want = len == 1 ? f->in.ino : f->parent;
	bool *seen = len == 1 ? &f->dot : &f->dotdot;

	if (*seen)
		ERR(v, "duplicate", at, "a second '%.*s' entry", (int)len, "..");
	*seen = true;
	if (nid != want)
		ERR(v, "dot", at, "'%.*s' names inode %llu, not %llu", (int)len, "..", ull(nid),
		    ull(want));
	if (ft != EROFS_FT_DIR)
		ERR(v, "d_type", at, "'%.*s' has entry type %u, not a directory's", (int)len, "..", ft);
}

static bool is_dot(const uint8_t *name, size_t len)
{
	return (len == 1 || len == 2) && name[0] == '.' && (len == 1 || name[1] == '.');
}

static int walk(struct ewalk *w)
{
	struct verifier *v = w->v;
	struct eframe *stack = NULL;
	size_t depth = 0, cap = 0;
	struct ino_info *info;
	struct cfs_inode in;
	uint32_t raw_type;
	int ret;

	v->path_cap = 256;
	v->path = malloc(v->path_cap);
	if (!v->path)
		return -ENOMEM;
	strcpy(v->path, "/");
	v->cur_path = v->path;
	info = cfs_vmap_add(&v->map, w->img.root);
	if (!info)
		return -ENOMEM;
	ret = decode(w, w->img.root, EROFS_SUPER_OFFSET, &in, &raw_type);
	if (ret <= 0)
		goto out;
	info->mode = in.mode;
	info->nlink = in.nlink;
	info->names = 1;
	v->res->inodes++;
	if (!S_ISDIR(in.mode)) {
		ERR(v, "root", in.offset, "the root inode is a %s, not a directory",
		    cfs_type_word(in.mode));
		ret = 0;
		goto out;
	}
	v->res->directories++;
	info->on_stack = true;
	ret = push(&stack, &depth, &cap, &in, in.ino, 0);
	if (ret < 0)
		goto out;

	while (depth > 0) {
		struct eframe *f = &stack[depth - 1];
		const uint8_t *name;
		size_t len;
		uint64_t nid, at;
		uint8_t ft;
		int cmp;

		v->path[f->path_len ? f->path_len : 1] = '\0';
		v->cur_path = v->path;
		ret = next_entry(w, f, &name, &len, &nid, &ft, &at);
		if (ret == 0) {
			info = cfs_vmap_find(&v->map, f->in.ino);
			info->on_stack = false;
			if (!f->dot || !f->dotdot)
				ERR(v, "dot", f->in.offset, "the directory has no '%s' entry",
				    f->dot ? ".." : ".");
			if (f->in.nlink != 2 + f->subdirs)
				WARN(v, "nlink", f->in.offset,
				     "directory with %u subdirectories records nlink %u, not %u",
				     f->subdirs, f->in.nlink, 2 + f->subdirs);
			depth--;
			continue;
		}
		ret = cfs_verify_set_path(v, f->path_len, name, len);
		if (ret < 0)
			goto out;
		v->cur_path = v->path;
		if (len == 0 || len > CFS_MAX_NAME_LEN || memchr(name, '/', len) ||
		    memchr(name, '\0', len))
			ERR(v, "entry-name", at, "invalid name (empty, too long, or holding '/' or NUL)");
		if (f->prev) {
			cmp = cfs_name_cmp(f->prev, f->prev_len, name, len);
			if (cmp == 0)
				ERR(v, "duplicate", at, "a second entry of this name in the directory");
			else if (cmp > 0)
				ERR(v, "unsorted", at,
				    "entry sorts before the one stored ahead of it (the directory is not sorted; lookups will miss entries)");
		}
		/* against the one before: one misplaced name is one problem */
		f->prev = name;
		f->prev_len = len;
		if (is_dot(name, len)) {
			v->path[f->path_len ? f->path_len : 1] = '\0';
			dot_entry(w, f, len, nid, ft, at);
			continue;
		}
		v->res->entries++;

		info = cfs_vmap_find(&v->map, nid);
		if (info) {
			ret = cfs_verify_met_again(v, info, nid, slot_offset(w, nid), ft,
						   ft_of(info->ftype), info->ftype, at);
			if (ret < 0)
				goto out;
			f->subdirs += ret;
			continue;
		}
		info = cfs_verify_met_first(v, nid);
		if (!info) {
			ret = -ENOMEM;
			goto out;
		}
		ret = decode(w, nid, at, &in, &raw_type);
		if (ret < 0)
			goto out;
		if (ret == 0)
			continue;
		info = cfs_vmap_find(&v->map, nid);
		cfs_verify_met_inode(info, &in);
		info->ftype = raw_type;
		v->res->inodes++;
		if (ft != ft_of(raw_type))
			ERR(v, "d_type", at, "entry type %u does not match the %s it names", ft,
			    cfs_type_word(raw_type));
		ret = cfs_verify_add_object(v, &in, v->path);
		if (ret < 0)
			goto out;
		if (S_ISDIR(in.mode)) {
			f->subdirs++;
			v->res->directories++;
			if (depth >= CFS_MAX_DEPTH) {
				ERR(v, "depth", at, "directories nested deeper than %d levels", CFS_MAX_DEPTH);
				continue;
			}
			info->on_stack = true;
			ret = push(&stack, &depth, &cap, &in, f->in.ino, strlen(v->path));
			if (ret < 0)
				goto out;
		}
	}

	for (size_t i = 0; i < v->map.n; i++) {
		struct ino_info *x = &v->map.info[i];

		if (x->mode == 0 || S_ISDIR(x->mode) || x->nlink == x->names)
			continue;
		cfs_vreport(v, CFS_VERIFY_WARNING, "nlink", x->first_path, slot_offset(w, x->ino),
			    "%s with %u names records nlink %u", cfs_type_word(x->mode), x->names,
			    x->nlink);
	}
	ret = 0;
out:
	free(stack);
	return ret;
}

int cfs_verify_erofs(struct verifier *v)
{
	struct ewalk *w = calloc(1, sizeof(*w));
	uint64_t inos;
	int ret = 0;

	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->img.keys_lock, NULL);
	w->v = v;
	w->img.data = v->data;
	w->img.size = v->size;
	w->img.format = CFS_FORMAT_EROFS;
	if (!check_super(w))
		goto out;
	ret = walk(w);
	if (ret < 0)
		goto out;
	inos = get64(v->data + EROFS_SUPER_OFFSET + offsetof(struct erofs_super_block, inos));
	v->cur_path = NULL;
	if (inos != v->res->inodes)
		WARN(v, "inodes", EROFS_SUPER_OFFSET + offsetof(struct erofs_super_block, inos),
		     "superblock counts %llu inodes, %llu are reachable", ull(inos),
		     ull(v->res->inodes));
out:
	cfs_erofs_close(&w->img);
	free(w);
	return ret;
}
