/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The in-memory tree that images are built from: struct cfs_node and the
 * helpers to make, link, sort, name and walk nodes. The directory scanner
 * (scan.c) and the dumpfile parser (dump.c) produce such a tree,
 * cfs_tree_finish() (store.c) completes it, and the writer (format/v1/writer.c) encodes
 * it. Other parts of cfsctl may walk a finished tree with the helpers below;
 * it is internal to libcfs and cfsctl, not part of the public API.
 */
#ifndef CFS_TREE_H
#define CFS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cfs/build.h"

/**
 * struct cfs_node_xattr - one extended attribute of a node
 * @key: full name with its namespace ("user.foo"), NUL-terminated
 * @key_len: strlen(@key), 1..255
 * @value: the value bytes (may hold NULs); NULL when @value_len is 0
 * @value_len: length of @value
 */
struct cfs_node_xattr {
	char *key;
	size_t key_len;
	uint8_t *value;
	size_t value_len;
};

/**
 * struct cfs_node - one directory entry and, unless it is a hardlink, its inode
 *
 * A tree is a root directory node whose @children are nodes in turn. Each
 * node is one name in its parent. A hardlink is a node whose @link_target
 * points at the node that holds the inode (never itself a hardlink, never a
 * directory); all inode fields of the hardlink node are unused. Use
 * cfs_node_inode() to get from any entry to the node holding its inode.
 *
 * After cfs_tree_finish(): @children of every directory are sorted by
 * cfs_name_cmp(), @nlink is the number of entries naming the inode (2 + the
 * number of subdirectories for a directory), and every regular file with
 * content has @payload (its backing path) and @digest set.
 */
struct cfs_node {
	/*
	 * The entry. The fields of each part are ordered by size, so that a
	 * node, the memory a build holds for every entry, has no padding.
	 */
	char *name; /* NUL-terminated; "" for the root */
	size_t name_len; /* 1..255; 0 for the root */
	struct cfs_node *parent; /* NULL for the root */
	struct cfs_node *link_target; /* hardlinks: the node holding the inode */
	struct cfs_node *next_link; /* tar: the next entry linking to this inode,
				       chained from the node that holds it */
	struct cfs_node *prev_link; /* tar: the one before it in that chain (the
				       holder for the first), to leave it at once */
	size_t pos; /* tar: where it is in its parent's @children, until sorted */

	/* Directories */
	struct cfs_node **children;
	size_t n_children;
	size_t children_alloc;

	unsigned int layer; /* tar: the last layer with an entry on this path */
	bool dying; /* tar: in a subtree being removed */
	bool indexed; /* scratch space of the writer: @inode_index is assigned */

	/*
	 * The inode, as it will be stored: from @mode up to @inode_index, the
	 * fields cfs_node_swap_inode() exchanges.
	 */
	uint32_t mode; /* st_mode: type and permission bits */
	uint32_t nlink; /* computed by cfs_tree_finish() */
	uint32_t uid;
	uint32_t gid;
	uint32_t rdev; /* devices only: st_rdev as stat(2) encodes it */
	uint32_t mtime_nsec;
	uint64_t size; /* regular files only: content size */
	int64_t mtime_sec; /* also stored as ctime */
	char *payload; /* regular: backing path; symlink: target; else NULL;
			  NULL with @payload_object too (read it with cfs_node_payload()) */
	size_t payload_len;
	struct cfs_node_xattr *xattrs;
	size_t n_xattrs;
	uint8_t digest[CFS_DIGEST_SIZE];
	bool has_digest; /* regular files: @digest is the content's digest */
	bool payload_object; /* regular files: the payload is @digest's object path
				("xx/<62 hex>"), spelled when written, not held */

	/* Where the content comes from, until cfs_tree_finish() */
	bool check_digest; /* @content must have @digest (set by the dump) */
	unsigned int n_origins;
	char *src_path; /* root: the scanned directory; files: path below it */
	char **origins; /* root of a tar tree: each archive applied, by @layer - 1 */
	uint8_t *content; /* inline content from a dumpfile, @size bytes */
	uint64_t src_dev, src_ino; /* scanned files: identity, to detect swaps */
	char *store_tmp; /* content written to the digest store already, under this
			    temporary name; @digest and @payload are set (tar) */
	unsigned long line; /* dumpfile line the node came from, for messages */

	/* What a dumpfile said as written, for the EROFS writer, which keeps it */
	uint32_t dump_nlink; /* NLINK */
	bool from_dump;
	bool payload_derived; /* @payload was made from DIGEST, not given */
	bool digest_derived; /* @digest was read from PAYLOAD, not given */

	/* Scratch space of the writer (and @indexed above) */
	uint64_t inode_index; /* index in the image, once assigned */
};

/**
 * cfs_node_new() - a zeroed node named @name (@len bytes), the name kept in
 * the node's allocation; NULL on ENOMEM. Its @name is not to be replaced
 * but through cfs_node_swap_names().
 */
struct cfs_node *cfs_node_new(const char *name, size_t len);

/**
 * cfs_node_swap_names() - give @a the name of @b and @b that of @a
 *
 * Return: 0, or -ENOMEM with both unchanged.
 */
int cfs_node_swap_names(struct cfs_node *a, struct cfs_node *b);

/**
 * cfs_node_add_child() - append @child to directory @dir's entries
 *
 * Does not check for duplicate names (the dump parser does). Return: 0 or
 * -ENOMEM.
 */
int cfs_node_add_child(struct cfs_node *dir, struct cfs_node *child);

/**
 * struct cfs_node_table - nodes in an open-addressing hash table, for the
 * builders that find a node by its inode (scan.c) or by its name (tar.c)
 * @slots: @n_slots of them (a power of two), NULL where free
 * @used: how many hold a node
 */
struct cfs_node_table {
	struct cfs_node **slots;
	size_t n_slots, used;
};

/**
 * cfs_node_table_reserve() - room for one more node in @t
 * @first: the number of slots to start with
 * @hash: where a node belongs; each is placed again by it when @t grows
 *
 * @t doubles when one more would fill it more than half. Return: 0 or -ENOMEM.
 */
int cfs_node_table_reserve(struct cfs_node_table *t, size_t first,
			   size_t (*hash)(const struct cfs_node *n));

/** cfs_node_inode() - the node that holds @n's inode (@n unless a hardlink) */
static inline struct cfs_node *cfs_node_inode(struct cfs_node *n)
{
	return n->link_target ? n->link_target : n;
}

static inline bool cfs_node_is_dir(const struct cfs_node *n)
{
	return !n->link_target && S_ISDIR(n->mode);
}

/**
 * cfs_node_swap_inode() - exchange the inodes of @a and @b (every field from
 * @mode on), leaving the entries (name, place, links) as they are
 */
void cfs_node_swap_inode(struct cfs_node *a, struct cfs_node *b);

/**
 * cfs_node_meta() - the bytes of @n's xattrs (CFS_ENTRY_META_XATTR more for
 * each) and of its symlink target, as --max-entries counts them
 */
uint64_t cfs_node_meta(const struct cfs_node *n);

/**
 * cfs_entries_check() - does a tree of @entries entries, whose xattrs and
 * symlink targets add up to @meta bytes, stay within --max-entries @max
 * (0: no limit)?
 * @fmt: names the input and the entry, printf-style, for the message
 *
 * Return: 0, or -EFBIG after saying "WHERE: the tree would hold more than
 * MAX entries (--max-entries)", or the like for @meta.
 */
int cfs_entries_check(uint64_t max, uint64_t entries, uint64_t meta, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/**
 * cfs_node_path() - "/a/b" of @n within its tree, for messages
 *
 * Return: a malloc'd string (names unescaped), or NULL on ENOMEM.
 */
char *cfs_node_path(const struct cfs_node *n);

/**
 * cfs_node_where() - @n for messages: "'/a/b'", or in a tree of tar
 * archives "'ARCHIVE', entry '/a/b'" with the archive (or the layer) that
 * last named it
 *
 * Return: a malloc'd string, or NULL on ENOMEM.
 */
char *cfs_node_where(const struct cfs_node *n);

/**
 * cfs_node_set_payload() - replace @n's payload with a copy of @len bytes
 *
 * Return: 0 or -ENOMEM.
 */
int cfs_node_set_payload(struct cfs_node *n, const void *data, size_t len);

/**
 * cfs_node_set_object_payload() - make @n's payload its digest's object
 * path ("xx/<62 hex>"), which is not stored but spelled from @n->digest
 * when asked for: a tree of a million files holds no million paths.
 * @n->digest must be set, and stay as it is while the payload is this.
 */
void cfs_node_set_object_payload(struct cfs_node *n);

/**
 * cfs_node_clear_payload() - @n has no payload
 */
void cfs_node_clear_payload(struct cfs_node *n);

/**
 * cfs_node_payload() - @n's payload, @n->payload_len bytes and a NUL: the
 * stored one, or the object path spelled into @buf; NULL if it has none
 */
const char *cfs_node_payload(const struct cfs_node *n, char buf[CFS_OBJECT_PATH_SIZE]);

/**
 * cfs_node_add_xattr() - add a copy of @key=@value to @n's xattrs
 *
 * Return: 0, -EEXIST when @n has the key already, or -ENOMEM.
 */
int cfs_node_add_xattr(struct cfs_node *n, const char *key, size_t key_len,
		       const void *value, size_t value_len);

/** cfs_node_sort_xattrs() - order @n's xattrs by key (cfs_name_cmp()) */
void cfs_node_sort_xattrs(struct cfs_node *n);

/**
 * cfs_tree_sort() - sort every directory's entries by cfs_name_cmp()
 *
 * Each directory is sorted once: O(n log n) in the directory's size. Then
 * each hardlinked inode is moved to its first name in that order (depth
 * first), unless a dumpfile said which name holds it, so that neither the
 * image nor its dump depends on the order a scan met the names in.
 * Return: 0, or -EEXIST (with a message) when a directory has two entries
 * of the same name.
 */
int cfs_tree_sort(struct cfs_node *root);

/**
 * cfs_tree_count_links() - set nlink of every inode in the tree
 *
 * Directories get 2 + their subdirectories, other inodes the number of
 * entries naming them. Return: 0, or -EMLINK when a count overflows.
 */
int cfs_tree_count_links(struct cfs_node *root);

/**
 * typedef cfs_node_fn - visitor for cfs_tree_walk(); nonzero stops the walk
 */
typedef int (*cfs_node_fn)(void *ctx, struct cfs_node *n);

/**
 * cfs_tree_walk() - call @fn for every node, parents before children
 *
 * Hardlink entries are visited as entries too. Iterative: the depth of the
 * tree does not matter. Return: 0, -ENOMEM, or what @fn returned to stop.
 */
int cfs_tree_walk(struct cfs_node *root, cfs_node_fn fn, void *ctx);

/* ---- what each format keeps (format.c, from each format's table) ---- */

/**
 * cfs_format_holds_content() - may the image of @opts->format hold file
 * content itself (a dumpfile's CONTENT without a store, a regular file with
 * no backing file)? NULL @opts: v1's rules.
 */
bool cfs_format_holds_content(const struct cfs_build_options *opts);

/**
 * cfs_format_keeps_inline() - does the image of @opts->format keep a regular
 * file of @size bytes, read from a directory or an archive, inside itself,
 * so that it needs no object in the store?
 */
bool cfs_format_keeps_inline(const struct cfs_build_options *opts, uint64_t size);

/*
 * The most bytes of a regular file any format keeps inside the image
 * (format.c checks each format against it): what a builder that does not
 * know the format yet keeps of a small file, in case it stays inline.
 */
#define CFS_FORMAT_INLINE_MAX 64

/**
 * cfs_seal_keeps_inline() - does the image a seal measures (composefs 1.0)
 * hold a regular file of @size bytes inline (seal.c)?
 */
bool cfs_seal_keeps_inline(uint64_t size);

/**
 * cfs_seal_is_image() - is the image of @format written with @wo the one
 * a seal measures (composefs 1.0 with the defaults)? (seal.c)
 */
bool cfs_seal_is_image(enum cfs_image_format format, const struct cfs_write_options *wo);

/**
 * cfs_seal_write() - write the image a seal measures of the tree @root,
 * finished with @opts, to @fd, from its start
 *
 * Return: 0; -EINVAL with a message for a tree of another format that did
 * not keep a small file's content (cfs_tar_keep_small()); or what
 * cfs_tree_write() returns.
 */
int cfs_seal_write(struct cfs_node *root, const struct cfs_build_options *opts, int fd);

/** cfs_format_max_file_size() - the largest regular file @opts->format can hold */
uint64_t cfs_format_max_file_size(const struct cfs_build_options *opts);

/* ---- trees from tar archives and image layers (tar.c) ---- */

struct archive;
struct archive_entry;
struct cfs_tar;

/**
 * cfs_tar_new() - start a tree that tar archives are applied to
 *
 * Return: 0 and *@tp, or -errno (with a message when the digest store of
 * @opts cannot be opened).
 */
int cfs_tar_new(const struct cfs_build_options *opts, struct cfs_tar **tp);

/**
 * cfs_tar_reader() - a new libarchive reader of the tar formats the tree
 * takes (ustar, pax, GNU); the caller adds filters and opens it
 */
struct archive *cfs_tar_reader(void);

/**
 * cfs_tar_apply() - apply every entry of the opened archive @a to the tree
 * @name: names the archive in messages
 * @layer: apply it as an OCI image layer: whiteouts (".wh.NAME",
 *	   ".wh..wh..opq") remove what the earlier archives made, and an entry
 *	   replaces whatever was at its path but a directory over a directory
 *
 * Return: 0, or -errno with a message naming @name and the entry; -EINVAL
 * when the archive itself (or the source behind @a) failed.
 */
int cfs_tar_apply(struct cfs_tar *t, struct archive *a, const char *name, bool layer);

/**
 * cfs_tar_record() - record the next archive applied as a fragment
 * @w: a libarchive writer of the tar format, opened; NULL stops recording
 *
 * Each entry is written to @w as it is applied: a regular file of more than
 * CFS_FORMAT_INLINE_MAX bytes without its content but with its digest and
 * size, everything else as it came. cfs_tar_apply_fragment() of what @w
 * wrote applies what the archive applied.
 */
void cfs_tar_record(struct cfs_tar *t, struct archive *w);

/** cfs_tar_record_failed() - whether writing the fragment failed (no message) */
bool cfs_tar_record_failed(const struct cfs_tar *t);

/**
 * cfs_tar_fragment_check() - read the fragment @a through: 0 when it is one
 * (and, with @objects, the digest store of @t holds every object it names),
 * 1 when not, -errno. Without @objects, a later layer may delete the files
 * whose objects are gone: cfs_tar_objects_missing() checks the end.
 */
int cfs_tar_fragment_check(struct cfs_tar *t, struct archive *a, bool objects);

/**
 * cfs_tar_objects_missing() - 1 when a file of the tree of @t has its digest
 * from a fragment but the digest store lacks its object (gc removed it),
 * else 0
 */
int cfs_tar_objects_missing(struct cfs_tar *t);

/**
 * cfs_tar_set_image() - the image (a registry reference) whose layers are
 *	applied to @t, named with the layer in messages about its entries;
 *	@image must outlive @t
 */
void cfs_tar_set_image(struct cfs_tar *t, const char *image);

/**
 * cfs_tar_keep_small() - keep in the tree the content of each regular file
 *	small enough for the composefs 1.0 image to hold inline
 *	(cfs_seal_keeps_inline()), whatever the format, so that
 *	cfs_tree_seal() can write that image of the tree: for an image
 *	with a seal. Such a file still gets its object in the store where
 *	the format wants one (cfs_tree_finish() writes it from memory).
 */
void cfs_tar_keep_small(struct cfs_tar *t);

/**
 * cfs_tar_fragment_entry() - make @e, a regular file's entry being written
 * to a fragment, one without content that names the object @digest of
 * @size bytes (more than CFS_FORMAT_INLINE_MAX): 0, or -EINVAL
 */
int cfs_tar_fragment_entry(struct archive_entry *e, const uint8_t digest[CFS_DIGEST_SIZE],
			   uint64_t size);

/** cfs_tar_fragment_xattr() - whether a fragment takes the xattr @name as its own */
bool cfs_tar_fragment_xattr(const char *name);

/** cfs_tar_apply_fragment() - cfs_tar_apply() of an OCI layer's fragment */
int cfs_tar_apply_fragment(struct cfs_tar *t, struct archive *a, const char *name);

/**
 * cfs_tar_end() - free @t; with @r == 0 hand over the tree in *@rootp
 *
 * With @r != 0 the tree and its temporaries in the store are removed and
 * *@rootp is NULL. Return: @r.
 */
int cfs_tar_end(struct cfs_tar *t, int r, struct cfs_node **rootp);

/* ---- the digest store (store.c), for readers that stream content ---- */

/**
 * typedef cfs_pull_fn - the next piece of content: *@len bytes at *@data
 *	that belong at offset *@off, after the previous piece; what lies
 *	between is a hole (a run of zeros), as does what follows the last
 *	piece (*@len 0) up to the size
 *
 * Return: 0, or -errno (the source failed).
 */
typedef int (*cfs_pull_fn)(void *ctx, const void **data, size_t *len, uint64_t *off);

/**
 * cfs_store_stream() - hash @n's content (@n->size bytes, read once from
 * @pull) and, with @store_fd >= 0, write it to a new temporary in the store
 *
 * Sets @n's digest and payload; the temporary is named in @n->store_tmp,
 * and cfs_tree_finish() publishes it like the objects it writes itself.
 * Temporaries have the store's usual names, so a dead build's are removed
 * by the next one. Return: 0 or -errno; *@store_failed tells whether the
 * store (rather than @pull) failed. No message: the caller names the source.
 */
int cfs_store_stream(int store_fd, cfs_pull_fn pull, void *ctx, struct cfs_node *n,
		     uint64_t reserve, bool *store_failed);

/** cfs_store_drop() - remove @n's temporary from the store, if it has one */
void cfs_store_drop(int store_fd, struct cfs_node *n);

#endif /* CFS_TREE_H */
