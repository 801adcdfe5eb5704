/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the two halves of cfsctl verify share: the state of one check, the
 * problem reporting, the map of reachable inodes and the object checks of
 * verify.c, which verify-erofs.c uses for composefs 1.0 images. Private to
 * libcfs.
 */
#ifndef CFS_VERIFY_H
#define CFS_VERIFY_H

#include "internal.h"
#include "libcfs.h"

#define NO_OFFSET UINT64_MAX

/* What the check remembers about one reachable inode. */
struct ino_info {
	uint64_t ino;
	uint32_t mode; /* 0: could not be decoded */
	uint32_t nlink;
	uint32_t names; /* entries naming it */
	bool on_stack; /* directories: being walked now */
	char *first_path;
	/* regular files: what their object is, for each further name */
	const char *payload;
	uint32_t payload_len;
	bool has_digest;
	uint8_t digest[CFS_DIGEST_SIZE];
	uint64_t size;
	uint32_t ftype; /* EROFS: the file type as stored, which d_type must match */
};

/* The reachable inodes, in the order met, and where each is by number. */
struct ino_map {
	struct cfs_inomap ids; /* inode number -> index into @info */
	struct ino_info *info;
	size_t n, info_cap;
};

/* A byte range of the inode section some reachable inode uses. */
struct range {
	uint64_t start, end;
};

/* An xattr set already checked: checked once however many inodes use it. */
struct xset_seen {
	uint64_t off;
	uint32_t len;
};

struct verifier {
	const uint8_t *data;
	uint64_t size, doff, section;
	const struct cfs_verify_options *o;
	cfs_verify_fn fn;
	void *fn_ctx;
	struct cfs_verify_result *res;
	struct ino_map map;
	struct range *ranges;
	size_t n_ranges, ranges_cap;
	struct xset_seen *xsets;
	size_t n_xsets, xsets_cap;
	struct cfs_objects objs;
	char *path;
	size_t path_cap;
	const char *cur_path; /* for problems found while decoding an inode */
	bool erofs; /* a composefs 1.0 image: offsets are file offsets of inodes */
};

void cfs_vreport(struct verifier *v, enum cfs_verify_severity sev, const char *kind,
		 const char *path, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

#define ERR(v, kind, off, ...) \
	cfs_vreport(v, CFS_VERIFY_ERROR, kind, (v)->cur_path, off, __VA_ARGS__)
#define WARN(v, kind, off, ...) \
	cfs_vreport(v, CFS_VERIFY_WARNING, kind, (v)->cur_path, off, __VA_ARGS__)

static inline unsigned long long ull(uint64_t x)
{
	return (unsigned long long)x;
}

struct ino_info *cfs_vmap_find(struct ino_map *m, uint64_t ino);
struct ino_info *cfs_vmap_add(struct ino_map *m, uint64_t ino);
void cfs_vmap_free(struct ino_map *m);

/* v->path = the first @at bytes of it, '/', @name */
int cfs_verify_set_path(struct verifier *v, size_t at, const uint8_t *name, size_t len);

/*
 * A directory entry at @at names inode @ino, which the walk met before
 * (@info): count the name, and check it as one more name of that inode
 * (directories have one; @d_type must be @want, the d_type of @want_mode,
 * the inode's type; a regular file's object gets one more user). @offset
 * is where the inode is, for an EROFS image. Return: 1 when it names a
 * directory, 0, or a negative errno.
 */
int cfs_verify_met_again(struct verifier *v, struct ino_info *info, uint64_t ino,
			 uint64_t offset, unsigned int d_type, unsigned int want,
			 uint32_t want_mode, uint64_t at);
/* An inode met for the first time, at v->path; NULL when out of memory. */
struct ino_info *cfs_verify_met_first(struct verifier *v, uint64_t ino);
/* What a decoded inode says, kept for its further names. */
void cfs_verify_met_inode(struct ino_info *info, const struct cfs_inode *in);

/* Remember @in's backing object, used at @path, for cfs_verify_objects(). */
int cfs_verify_add_object(struct verifier *v, const struct cfs_inode *in, const char *path);

/* Find and hash every remembered object in the basedirs, reporting each problem. */
int cfs_verify_objects(struct verifier *v);

/* The structural check of a composefs 1.0 image (verify-erofs.c). */
int cfs_verify_erofs(struct verifier *v);

#endif /* CFS_VERIFY_H */
