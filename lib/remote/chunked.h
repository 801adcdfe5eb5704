/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Partial pulls of zstd:chunked layers (chunked.c): only the files the
 * digest store lacks are fetched, and the layer becomes a fragment
 * (see cfs_tar_record()) that oci.c applies. It is internal to libcfs.
 */
#ifndef CFS_CHUNKED_H
#define CFS_CHUNKED_H

#include <stdbool.h>
#include <stdint.h>

#include "cfs/registry.h"
#include "toc.h"

/**
 * struct cfs_chunked - one zstd:chunked layer to pull in part
 * @reg: the registry
 * @digest: the layer's "sha256:<hex>"
 * @size: the blob's size, from its descriptor
 * @pos: where its TOC is (cfs_toc_find())
 * @what: names the layer in messages
 * @digest_store: where the objects are found and go, or NULL
 * @max_entries: the most entries the TOC may list (--max-entries); 0: no limit
 * @progress: called with the bytes received so far; may be NULL
 * @fetched, @reused, @skipped: out: the bytes received from the registry;
 *	of the files' content found in the store; of the blob not fetched
 * @fallback: out, when cfs_chunked_fragment() returns 1: why a full pull
 *	is needed, for a message
 * @diff_id: the layer's "sha256:<hex>" from the config, or NULL: checked
 *	when the layer has a tar-split
 * @diff_id_checked: out: it was
 */
struct cfs_chunked {
	struct cfs_registry *reg;
	const char *digest;
	uint64_t size;
	struct cfs_toc_pos pos;
	const char *what;
	const char *digest_store;
	uint64_t max_entries;
	void (*progress)(void *ctx, uint64_t fetched);
	void *progress_ctx;
	uint64_t fetched, reused, skipped;
	const char *fallback;
	const char *diff_id;
	bool diff_id_checked;
};

/**
 * cfs_chunked_fragment() - fetch the TOC and the files the store lacks,
 * and write the layer as a fragment
 *
 * The TOC is checked against its checksum; each fetched file against its
 * TOC sha256, and each object found through the repository's sha256 index
 * too, before the fragment names it; when the layer has a tar-split and
 * @c->diff_id is given, the tar stream it rebuilds against the diff_id.
 * Nothing is written to the store.
 * Return: 0 and *@fd, the fragment (a tar, at its start) to apply with
 * cfs_tar_apply_fragment(); 1 when the registry ignores Range requests
 * or the TOC holds more JSON values than are read at once (@c->fallback
 * says which), nothing applied; or -errno with a message.
 */
int cfs_chunked_fragment(struct cfs_chunked *c, int *fd);

#endif /* CFS_CHUNKED_H */
