/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Trees from OCI container images (oci.c): an image layout directory or a
 * tar of one, its manifest chosen by tag and platform, its layers applied
 * in order as one stream each.
 */
#ifndef CFS_OCI_H
#define CFS_OCI_H

#include "cfs/build.h"
#include "cfs/registry.h"

/**
 * cfs_tree_from_tar() - read a tar archive (any compression libarchive
 * detects) from @fd as one stream
 * @name: what messages call the archive ("-" is "stdin"); errors name it and
 *	  the entry
 *
 * Regular files are hashed as they are read, and with @opts->digest_store
 * written to temporaries in the store that cfs_tree_finish() publishes.
 * Return: 0, -EINVAL for a bad archive or entry, or another -errno.
 */
int cfs_tree_from_tar(int fd, const char *name, const struct cfs_build_options *opts,
		      struct cfs_node **root);

/**
 * struct cfs_oci_platform - the platform an image is chosen for
 * @os: as in an image index, e.g. "linux"
 * @arch: its "architecture", e.g. "amd64"
 * @variant: its "variant", e.g. "v7"; "" for any
 */
struct cfs_oci_platform {
	char os[32];
	char arch[32];
	char variant[32];
};

/**
 * cfs_oci_platform_parse() - read "OS/ARCH[/VARIANT]" into @p
 *
 * Return: 0, or -EINVAL (no message) when @s has another shape.
 */
int cfs_oci_platform_parse(const char *s, struct cfs_oci_platform *p);

/**
 * cfs_oci_platform_host() - the platform of this program into @p: 0, or
 * -EOPNOTSUPP with a message for a machine that has no OCI name
 */
int cfs_oci_platform_host(struct cfs_oci_platform *p);

/**
 * cfs_tree_from_oci() - the merged root filesystem of a container image
 * @source: "oci:DIR[:TAG]" (an OCI image layout directory),
 *	    "oci-archive:FILE[:TAG]" (a tar of one) or
 *	    "docker-archive:FILE[:TAG]" (what docker save writes); the first
 *	    ':' after the prefix starts the tag
 * @platform: what to choose from an image index; NULL for this host's
 * @opts: as for cfs_tree_from_tar(); the layers' file contents go into
 *	  the digest store as they are read
 * @root: the tree, for cfs_tree_finish()
 *
 * The manifest is the one whose org.opencontainers.image.ref.name is TAG;
 * without TAG the only one, else the one tagged "latest", else the one for
 * @platform. An image index is resolved by @platform. Each blob is checked
 * against its descriptor's size and sha256 digest as it is read, each layer
 * uncompressed against its diff_id. The layers are applied in order with
 * the OCI whiteouts (see cfs_tar_apply()). A docker-archive's image is the
 * one manifest.json lists with TAG among its RepoTags, without TAG the only
 * one; its blobs have no descriptors: the diff_ids are the check, and
 * @platform is not asked.
 *
 * Return: 0, or -errno with a message naming the file and the reason; on
 * failure nothing is left in the digest store but objects already there.
 */
int cfs_tree_from_oci(const char *source, const struct cfs_oci_platform *platform,
		      const struct cfs_build_options *opts, struct cfs_node **root);

/**
 * cfs_tree_from_registry() - the merged root filesystem of a container
 * image in a registry
 * @reference: REGISTRY[:PORT]/REPO[:TAG|@sha256:DIGEST], TAG "latest" when
 *	       neither is given
 * @ropts: how to talk to the registry (registry.h)
 * @platform, @opts, @root: as for cfs_tree_from_oci()
 *
 * As cfs_tree_from_oci(), with the blobs read over the OCI distribution
 * API: the manifest or image index the reference names (with a digest,
 * its bytes must hash to it), then the config and the layers by their
 * digests. A layer streams from the network into the tree and the digest
 * store; it is never written out whole.
 *
 * Return: 0, or -errno with a message naming the reference or the blob and
 * the reason; on failure nothing is left in the digest store but objects
 * already there.
 */
int cfs_tree_from_registry(const char *reference, const struct cfs_registry_options *ropts,
			   const struct cfs_oci_platform *platform,
			   const struct cfs_build_options *opts, struct cfs_node **root);

#endif /* CFS_OCI_H */
