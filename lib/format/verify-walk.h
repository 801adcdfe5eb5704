/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the parts of cfsctl verify share: the state of one check, the
 * problem reporting, the map of reachable inodes and the directory walk
 * (verify-walk.c), which each format's checks (format/v1/verify.c,
 * format/erofs/verify.c) use, and the object checks of the front end
 * (verify.c). Private to libcfs.
 */
#ifndef CFS_VERIFY_WALK_H
#define CFS_VERIFY_WALK_H

#include <stdarg.h>

#include "base/internal.h"
#include "cfs/verify.h"

#define CFS_NO_OFFSET UINT64_MAX

/* What the check remembers about one reachable inode. */
struct cfs_vino {
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
	uint32_t ftype; /* the file type as its format stores it (decode), which d_type must match */
};

/* The reachable inodes, in the order met, and where each is by number. */
struct cfs_vino_map {
	struct cfs_inomap ids; /* inode number -> index into @info */
	struct cfs_vino *info;
	size_t n, info_cap;
};

struct cfs_verifier {
	const uint8_t *data;
	uint64_t size;
	const struct cfs_verify_options *o;
	cfs_verify_fn fn;
	void *fn_ctx;
	struct cfs_verify_result *res;
	struct cfs_vino_map map;
	struct cfs_objects objs;
	char *path;
	size_t path_cap;
	const char *cur_path; /* for problems found while decoding an inode */
};

/* @p with its message made of @fmt: counted and handed to the caller. */
void cfs_vdeliver(struct cfs_verifier *v, struct cfs_verify_problem *p, const char *fmt,
		  va_list ap) __attribute__((format(printf, 3, 0)));

void cfs_vreport(struct cfs_verifier *v, enum cfs_verify_severity sev, const char *kind,
		 const char *path, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

#define CFS_VERR(v, kind, off, ...) \
	cfs_vreport(v, CFS_VERIFY_ERROR, kind, (v)->cur_path, off, __VA_ARGS__)
#define CFS_VWARN(v, kind, off, ...) \
	cfs_vreport(v, CFS_VERIFY_WARNING, kind, (v)->cur_path, off, __VA_ARGS__)

static inline unsigned long long cfs_ull(uint64_t x)
{
	return (unsigned long long)x;
}

struct cfs_vino *cfs_vmap_find(struct cfs_vino_map *m, uint64_t ino);
struct cfs_vino *cfs_vmap_add(struct cfs_vino_map *m, uint64_t ino);
void cfs_vmap_free(struct cfs_vino_map *m);

/*
 * A directory entry at @at names inode @ino, which the walk met before
 * (@info): count the name, and check it as one more name of that inode
 * (directories have one; @d_type must be @want, the d_type of @want_mode,
 * the inode's type; a regular file's object gets one more user). @offset
 * is where the inode is, for an EROFS image. Return: 1 when it names a
 * directory, 0, or a negative errno.
 */
int cfs_verify_met_again(struct cfs_verifier *v, struct cfs_vino *info, uint64_t ino,
			 uint64_t offset, unsigned int d_type, unsigned int want,
			 uint32_t want_mode, uint64_t at);
/* An inode met for the first time, at v->path; NULL when out of memory. */
struct cfs_vino *cfs_verify_met_first(struct cfs_verifier *v, uint64_t ino);
/* What a decoded inode says, kept for its further names. */
void cfs_verify_met_inode(struct cfs_vino *info, const struct cfs_inode *in);

/* Remember @in's backing object, used at @path, for cfs_verify_objects(). */
int cfs_verify_add_object(struct cfs_verifier *v, const struct cfs_inode *in, const char *path);

/* Find and hash every remembered object in the basedirs, reporting each problem. */
int cfs_verify_objects(struct cfs_verifier *v);

/* ---- the directory walk (verify-walk.c) ---- */

/* One entry of a directory, as its format reads it. */
struct cfs_vdirent {
	const uint8_t *name; /* in the image, not terminated */
	size_t len;
	uint64_t ino; /* the inode it names */
	uint8_t d_type; /* its entry type, as stored */
	uint64_t at; /* file offset of the entry */
};

/*
 * What the walk asks of a format. @ctx is the format's state; @pos is the
 * room of @pos_size bytes (zeroed) the walk keeps for each directory on
 * its stack, for the format's place in it.
 */
struct cfs_vwalk_ops {
	size_t pos_size;
	bool dots; /* directories hold "." and ".." entries (handed to @dot) */
	const char *bad_name; /* the entry-name error: what the rule is */
	/* The root's inode number, and in *@at where the image names it. */
	uint64_t (*root)(void *ctx, uint64_t *at);
	/*
	 * Decode and check inode @ino, which the entry at @at names: 1 with
	 * *@in and in *@type its file type as stored (for d_type), 0 when it
	 * cannot be decoded (reported), or -errno.
	 */
	int (*decode)(void *ctx, uint64_t ino, uint64_t at, struct cfs_inode *in, uint32_t *type);
	/* The d_type an entry naming a file of @type must have. */
	unsigned int (*d_type)(uint32_t type);
	/* May be NULL: start reading directory @dir at @pos. */
	void (*open_dir)(void *ctx, void *pos, const struct cfs_inode *dir);
	/* Its next entry: 1, or 0 at the end; unreadable ones reported and skipped. */
	int (*next)(void *ctx, void *pos, const struct cfs_inode *dir, struct cfs_vdirent *e);
	/* With @dots: a "." or ".." entry of @dir, whose parent is @parent. */
	void (*dot)(void *ctx, void *pos, const struct cfs_inode *dir, uint64_t parent,
		    const struct cfs_vdirent *e);
	/* May be NULL: @dir has been read to its end. */
	void (*close_dir)(void *ctx, void *pos, const struct cfs_inode *dir);
	/* The file offset of inode @ino, for reports. */
	uint64_t (*offset_of)(void *ctx, uint64_t ino);
};

/*
 * Walk the image from its root, depth first, checking every entry and
 * every inode reachable once; problems are reported, objects remembered
 * for cfs_verify_objects(). Return: 0, or -errno when the walk could not go on.
 */
int cfs_verify_walk(struct cfs_verifier *v, const struct cfs_vwalk_ops *fmt, void *ctx);

#endif /* CFS_VERIFY_WALK_H */
