/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cfsctl tui: the model behind the browser, kept apart from the drawing. An
 * image is a tree of nodes that is filled in lazily: a directory's entries
 * are read only when it is expanded, searched or walked through, so opening
 * an image costs one directory. What cannot be read becomes an error node in
 * place of the entries it hides. The tree also keeps the flat list of rows
 * that are visible (the expanded part), which the screen shows a window of.
 */
#ifndef CFS_TUI_H
#define CFS_TUI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfs/image.h"

/**
 * struct tnode - one row of the tree: an entry, the root, or an error
 *
 * @name points into the image (for an error node: @error holds the text).
 * @kids is an array that never moves once filled, so children may keep
 * pointers to their parent.
 */
struct tnode {
	const char *name;
	size_t name_len;
	uint64_t ino;
	struct tnode *parent;
	struct tnode *kids;
	size_t n_kids;
	char *error; /* error node: what could not be read */
	char *verify; /* result of the last verity check, or NULL */
	unsigned int depth;
	uint8_t d_type; /* as the directory entry says; DT_DIR for the root */
	bool loaded; /* directories: @kids is filled */
	bool expanded;
};

/**
 * struct tree - the image, its lazily read tree, and the visible rows
 */
struct tree {
	struct cfs_image *img;
	struct tnode root;
	struct tnode **rows; /* visible rows, depth first */
	size_t n_rows;
	size_t cap_rows;
	uint64_t *dirs_seen; /* open-addressing set of loaded directory inodes */
	size_t seen_cap;
	size_t seen_n;
	size_t n_nodes; /* nodes loaded so far */
};

/** tree_open() - the tree of @img with the root read and expanded */
int tree_open(struct tree *t, struct cfs_image *img);
void tree_free(struct tree *t);

/** tree_is_dir() - whether @n is shown (and loaded) as a directory */
bool tree_is_dir(const struct tnode *n);

/** tree_load() - read @n's entries if not done yet; errors become error nodes */
int tree_load(struct tree *t, struct tnode *n);

/** tree_rebuild_rows() - recompute the visible rows after expanding/collapsing */
int tree_rebuild_rows(struct tree *t);

/** tree_row_of() - the row index of @n, or -1 when it is not visible */
long tree_row_of(const struct tree *t, const struct tnode *n);

/** tree_reveal() - expand every ancestor of @n so that it becomes visible */
int tree_reveal(struct tree *t, struct tnode *n);

/**
 * tree_search() - the next (@forward) or previous node, in depth-first order
 * over the whole tree and wrapping around, whose name contains @pat
 * @from: where to start; it is itself checked last
 * @pat: raw bytes; matched case-insensitively (ASCII) unless it holds an
 *	 uppercase letter
 *
 * Directories are loaded as the search reaches them. Return: the node, or
 * NULL when nothing matches.
 */
struct tnode *tree_search(struct tree *t, struct tnode *from, const char *pat, size_t pat_len,
			  bool forward);

/**
 * tree_find_path() - the node at @path (raw bytes, '/'-separated)
 * @found: set to the node, or to the deepest existing ancestor on failure
 *
 * Return: 0, -ENOENT or -ENOTDIR.
 */
int tree_find_path(struct tree *t, const char *path, size_t len, struct tnode **found);

/** tree_catch_messages() - keep the library's messages for tree_error_text() */
void tree_catch_messages(void);

/** tree_error_text() - the library's last message (then forgotten), or strerror(-@err) */
const char *tree_error_text(int err);

#endif /* CFS_TUI_H */
