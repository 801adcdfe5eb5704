/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The merged tree of one image manifest of an OCI layout (oci.c), for
 * push.c, which has read and checked that manifest itself: the merge is
 * the one cfs_tree_from_oci() and a registry pull make. Internal to libcfs.
 */
#ifndef CFS_LAYOUT_H
#define CFS_LAYOUT_H

#include <jansson.h>

#include "cfs/build.h"

struct cfs_node;

/**
 * cfs_oci_layout_tree() - the tree of the image manifest @manifest of the
 * OCI layout directory @layout
 * @layout: the layout's directory
 * @manifest: the image manifest, already read from the layout
 * @what: names the manifest in messages
 * @opts: the build options (their format decides which files keep their
 *	content in the tree)
 * @rootp: out: the tree, not yet finished (cfs_tree_finish())
 *
 * Each layer is read from @layout's blobs, checked against its descriptor
 * and the config's diff_id, and applied (whiteouts, opaque directories)
 * as cfs_tree_from_oci() applies it.
 *
 * Return: 0, or a negative errno after a message.
 */
int cfs_oci_layout_tree(const char *layout, const json_t *manifest, const char *what,
			const struct cfs_build_options *opts, struct cfs_node **rootp);

#endif
