/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cfsctl mount --fuse's operations, apart from libfuse (fuse-ops.c): each
 * FUSE request's answer computed from the image and the backing files,
 * which fuse.c hands to libfuse's reply calls and fuzz/fuzz_fuse.c checks
 * without a kernel. Node ids are FUSE's: 1 is the root.
 */
#ifndef CFS_CMD_FUSE_H
#define CFS_CMD_FUSE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cfsctl.h"
#include "cfs/image.h"
#include "cfs/util.h"

#define CFSFUSE_ROOT 1

#define BLOCK 4096
/* The kernel may cache what an immutable image shows for the mount's life. */
#define FOREVER (365.0 * 24 * 3600)
/*
 * The memory the hashes of verified files may take (with their records):
 * 16 MiB holds the hashes of 2 GiB of content, or of some 130000 files
 * of 8 KiB (a record takes 64 bytes beside its hashes). Past it the least
 * recently opened file's are forgotten, and its next open computes its
 * digest again; a file whose hashes alone exceed it keeps them only while
 * it is open.
 */
#define VERIFIED_BUDGET (16u << 20)
#define VERIFIED_BUCKETS 65536 /* 512 KiB, allocated at the first */

/* What was verified of one backing file, the file known by its inode. */
struct verified {
	uint64_t ino;
	struct cfs_verity_leaves leaves;
	unsigned int opens; /* the open files that check reads against it */
	bool kept; /* in the table; else freed at the last close */
	bool said; /* a changed block was said once */
	struct verified *hnext; /* the bucket's chain */
	struct verified *older, *newer; /* the order of last use */
};

/* Where a readdir stopped, for the next one (resume_take()). */
#define RESUME_SLOTS 64
struct resume {
	uint64_t node; /* 0: unused */
	off_t pos;
	struct cfs_dir_iter it;
};

/* The files kept open by node, for reads without an open (cfsfuse_node_get()). */
#define NODE_FILES 256

/* What a mount serves: set up by cfsfuse_init() and cfsfuse_start(). */
struct cfsfuse {
	struct cfs_image *img;
	uint64_t root;
	int *dirfds; /* the basedirs, opened once */
	size_t n_dirs;
	int verity_check;
	bool trusted_listed; /* root's requests may list trusted.* (the first user namespace) */
	pthread_mutex_t say_lock; /* one path search at a time, for messages */
	const struct cli_mirrors *mirrors; /* --lazy-url, or NULL */
	const char *store; /* the first basedir, which fetches fill */
	pthread_mutex_t fetch_lock;
	pthread_cond_t fetch_done;
	struct inflight *fetching; /* the objects being fetched */
	char *image_esc; /* IMAGE, escaped for messages */
	pthread_mutex_t verified_lock;
	struct verified **vtab; /* VERIFIED_BUCKETS chains, or NULL before the first */
	struct verified *oldest, *newest;
	size_t vbytes; /* what the kept ones take */
	bool no_opendir; /* the kernel opens directories without asking */
	pthread_mutex_t resume_lock;
	struct resume resume[RESUME_SLOTS];
	unsigned int resume_next;
	/*
	 * Every backing file was there at cfsfuse_start() (a regular file of
	 * the size recorded): the kernel may open files without asking
	 * (fuse.c), each checked at its first read instead (cfsfuse_node_get()).
	 */
	bool objects_there;
	bool no_open; /* the kernel opens files without asking */
	pthread_mutex_t node_lock;
	pthread_cond_t node_done;
	struct ofile *node_files[NODE_FILES];
};

/* An object being fetched, and how many wait for it (its fetcher too). */
struct inflight {
	uint8_t digest[CFS_DIGEST_SIZE];
	bool done;
	int err;
	unsigned int waiters;
	struct inflight *next;
};

/* An open regular file. */
struct ofile {
	uint64_t ino;
	uint64_t size;
	int fd; /* the backing file, or -1 (content in the image, or empty) */
	bool in_image;
	struct verified *v; /* each read checked against it (no fs-verity on the file), or NULL */
	char *rel; /* the backing path, for messages */
	/* kept by node (cfsfuse_node_get()): */
	uint64_t node;
	unsigned int refs; /* the slot, and each read that holds it */
	bool ready; /* opened, or failed with @err */
	int err;
};


/**
 * struct cfsfuse_dirent - one entry of a listing, for a cfsfuse_add_fn
 * @name: NUL-terminated
 * @node: its node id; 0 for "." and ".." in a listing with attributes
 * @attr: in a listing with attributes, all of them; else st_ino and the
 *	type bits of st_mode
 * @pos: the offset of the entry after it
 */
struct cfsfuse_dirent {
	const char *name;
	uint64_t node;
	struct stat attr;
	off_t pos;
};

/* Add @e to @buf (@room bytes): the room it takes, more than @room where it does not fit. */
typedef size_t (*cfsfuse_add_fn)(void *ctx, char *buf, size_t room, const struct cfsfuse_dirent *e);

/**
 * struct cfsfuse_data - what a read answers: @len bytes at @data, or, with
 *	@fd >= 0, @len bytes of that file at @pos (spliced); free @buf after
 */
struct cfsfuse_data {
	const char *data;
	size_t len;
	int fd;
	uint64_t pos;
	char *buf;
};

void cfsfuse_init(struct cfsfuse *fs);
/** cfsfuse_escaped() - @s escaped for the terminal, in memory of its own (NULL: out of memory) */
char *cfsfuse_escaped(const char *s);
void cfsfuse_fini(struct cfsfuse *fs);

/**
 * cfsfuse_start() - serve @img (held by @fs from now on) in its mounted
 *	view: 0, or -errno where its root is no directory or a path of it
 *	does not read
 */
int cfsfuse_start(struct cfsfuse *fs, struct cfs_image *img);

/** cfsfuse_lookup() - @name in @parent: 0 and its node and attributes, or -errno */
int cfsfuse_lookup(struct cfsfuse *fs, uint64_t parent, const char *name, uint64_t *node,
		   struct stat *st);
int cfsfuse_getattr(struct cfsfuse *fs, uint64_t node, struct stat *st);
/** cfsfuse_readlink() - the target of the symlink @node into @buf (PATH_MAX), NUL-ended */
int cfsfuse_readlink(struct cfsfuse *fs, uint64_t node, char *buf, size_t size);

/** cfsfuse_open() - open the regular file @node for reading: 0 and *@out, or -errno */
int cfsfuse_open(struct cfsfuse *fs, uint64_t node, int flags, struct ofile **out);
void cfsfuse_release(struct cfsfuse *fs, struct ofile *f);
/**
 * cfsfuse_node_get() - the regular file @node for a read without an open:
 *	opened and checked at its first read, as cfsfuse_open() does, and kept
 *	open; 0 and *@out (cfsfuse_node_put() it after the read), or -errno
 *	(-EIO where it cannot be served: said once)
 */
int cfsfuse_node_get(struct cfsfuse *fs, uint64_t node, struct ofile **out);
void cfsfuse_node_put(struct cfsfuse *fs, struct ofile *f);
/** cfsfuse_read() - up to @size bytes of @f at @off: 0 and *@d, or -errno */
int cfsfuse_read(struct cfsfuse *fs, struct ofile *f, size_t size, off_t off,
		 struct cfsfuse_data *d);

/**
 * cfsfuse_readdir() - the entries of the directory @node from offset @off
 *	into @buf (@size bytes), with their attributes if @plus, through @add
 *
 * Return: 0 and *@used, or -errno.
 */
int cfsfuse_readdir(struct cfsfuse *fs, uint64_t node, char *buf, size_t size, off_t off,
		    bool plus, cfsfuse_add_fn add, void *ctx, size_t *used);

/**
 * cfsfuse_getxattr() - the value of the xattr @name of @node: 0 and
 *	*@value (in the image) and *@len, -ENODATA, or -errno; -ERANGE where
 *	@size is not 0 and less than *@len
 */
int cfsfuse_getxattr(struct cfsfuse *fs, uint64_t node, const char *name, size_t size,
		     const void **value, size_t *len);

/**
 * cfsfuse_listxattr() - the names of @node's xattrs, each NUL-ended, into
 *	@buf (@size bytes; 0: only their length), trusted.* only if @trusted:
 *	0 and *@len, or -errno (-ERANGE: @size is too small)
 */
int cfsfuse_listxattr(struct cfsfuse *fs, uint64_t node, bool trusted, char *buf, size_t size,
		      size_t *len);

#endif
