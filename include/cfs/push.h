/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Publishing to a registry (lib/remote/push.c): a directory made into one
 * layer (gzip, zstd or zstd:chunked, layer-write.c), an image config and a
 * manifest, uploaded over the OCI distribution API with the client of
 * registry.h: blobs the registry has already are not sent again, and the
 * manifest goes last, so that a push that fails leaves no tag.
 */
#ifndef CFS_PUSH_H
#define CFS_PUSH_H

#include <stdbool.h>
#include <stdint.h>

#include "cfs/oci.h"
#include "cfs/registry.h"

/*
 * The manifest annotation that seals an image (composefs-rs's sealing
 * specification, inline mode): the fs-verity sha256 digest (4 KiB blocks)
 * of the composefs 1.0 (EROFS) image of its merged tree, as cfsctl pull
 * --format=erofs makes it with its defaults, in lowercase hex.
 */
#define CFS_SEAL_ANNOTATION "composefs.merged.erofs.v1.fsverity-sha256-12"

/** enum cfs_push_compression - how the layer is compressed */
enum cfs_push_compression {
	CFS_PUSH_ZSTD_CHUNKED, /* a zstd frame per chunk of a file, TOC, tar-split, footer */
	CFS_PUSH_ZSTD,
	CFS_PUSH_GZIP,
};

/**
 * struct cfs_push_blob - one blob of the image, as the push went
 * @digest: "sha256:<hex>"
 * @diff_id: a layer's uncompressed digest ("" for the config)
 * @size: its bytes
 * @uploaded: it was sent; else the registry had it already
 * @mounted: it was mounted from another repository rather than sent
 * @reused: a layer of cfs_push_oci() not recompressed: its descriptor came
 *	from the blob cache (@cfs_push_options.blob_cache), and the registry
 *	had that blob
 */
struct cfs_push_blob {
	char digest[7 + 64 + 1];
	char diff_id[7 + 64 + 1];
	uint64_t size;
	bool uploaded, mounted, reused;
};

/**
 * struct cfs_push_result - what a push published
 * @manifest_digest: "sha256:<hex>" of the manifest written
 * @layers, @n_layers: the layers' blobs, in the manifest's order
 * @config: the config's
 * @uploaded, @skipped: bytes of blobs sent (or mounted), and of blobs the
 *	registry had already
 * @mounted: blobs mounted from @cfs_push_options.mount_from
 * @signature: the signature file written (malloc()ed), or NULL
 * @sigstore_signature: with @cfs_push_options.sign_by_sigstore, the
 *	cosign signature manifest, "REGISTRY/REPO:sha256-<hex>.sig"
 *	(malloc()ed), else NULL
 * @sigstore_added: a signature was added to it; false when the same
 *	key's signature of the same payload was there already
 * @seal: the manifest's CFS_SEAL_ANNOTATION (64 hex digits), or "" for an
 *	  unsealed image (oci: with @cfs_push_options.no_seal, or a docker v2
 *	  manifest)
 * @seal_from_cache: @seal was taken from @cfs_push_options.blob_cache,
 *	  the layers not merged again
 *
 * Free with cfs_push_result_free().
 */
struct cfs_push_result {
	char manifest_digest[7 + 64 + 1];
	struct cfs_push_blob *layers;
	size_t n_layers;
	struct cfs_push_blob config;
	uint64_t uploaded, skipped;
	unsigned int mounted;
	char *signature;
	char seal[65];
	bool seal_from_cache;
	char *sigstore_signature;
	bool sigstore_added;
};

void cfs_push_result_free(struct cfs_push_result *res);

/**
 * struct cfs_push_options - what cfs_push_dir() makes, and how it tells
 * @compression: the layer's
 * @platform: the config's os, architecture and variant; NULL: this machine's
 * @tmpdir: where the layer is written before it is uploaded (NULL: $TMPDIR,
 *	    or /tmp); nothing is left there
 * @blob: unless NULL, called as each blob (the layer, then the config) is
 *	  made (@done false), and once it is in the registry (@done true)
 * @ctx: for @blob
 * @mount_from: unless NULL, a repository of the same registry to mount
 *	  each missing blob from (?mount=&from=) before uploading it
 * @sign_by: unless NULL, the fingerprint of a GPG secret key to sign the
 *	  manifest with (containers-signature(5) simple signing, identity
 *	  HOST/REPO:TAG); the signature is made before anything is sent, and
 *	  written to the lookaside staging once the manifest is
 * @gpg_homedir: the GnuPG home of @sign_by's key; NULL: gpg's default
 * @registries_d: where containers-registries.d(5) files name the staging;
 *	  NULL: /etc/containers/registries.d
 * @sign_by_sigstore: unless NULL, a PEM file of an ECDSA P-256 private key
 *	  to sign the manifest with as cosign does (identity HOST/REPO:TAG):
 *	  made before anything is sent, and appended to the manifest tagged
 *	  sha256-<hex>.sig in the repository once the manifest is written
 * @recompress: for cfs_push_oci(): each layer recompressed into
 *	  @compression; false: the layout's blobs go as they are
 * @no_seal: for cfs_push_oci(): no seal; without @recompress the manifest
 *	  goes as it is
 * @blob_cache: for cfs_push_oci(): unless NULL, the directory of the
 *	  push blob cache, which maps a layer's diff_id and @compression to
 *	  the descriptor of its compressed blob: with @recompress, a layer
 *	  whose blob the cache names and the registry has (a HEAD, the size
 *	  checked) is not recompressed; each one recompressed is recorded
 *	  (made if missing; an unreadable entry is no entry). It maps too the
 *	  config's diff_ids (and cfs's version) to the seal: a seal found
 *	  there is taken without merging the layers, one computed recorded
 */
struct cfs_push_options {
	enum cfs_push_compression compression;
	const struct cfs_oci_platform *platform;
	const char *tmpdir;
	const char *mount_from;
	const char *sign_by, *gpg_homedir, *registries_d;
	const char *sign_by_sigstore;
	void (*blob)(void *ctx, const char *kind, const struct cfs_push_blob *b, bool done);
	void *ctx;
	bool recompress;
	bool no_seal;
	const char *blob_cache;
};

/**
 * cfs_push_dir() - publish the directory @dir as a one-layer image at @ref
 * @ref: where to, with a tag (a reference by digest is refused: -EINVAL)
 * @ropts: how to talk to the registry (@ropts->push is set by the caller)
 * @res: out
 *
 * The same tree gives the same layer, config and manifest (docs/trust.md,
 * "Publishing"). A blob the registry has already (a HEAD) is not sent; the
 * manifest is written last, so that a push that fails names nothing.
 *
 * Return: 0, or -errno with a message naming what failed.
 */
int cfs_push_dir(const char *dir, const struct cfs_registry_ref *ref,
		 const struct cfs_registry_options *ropts, const struct cfs_push_options *opts,
		 struct cfs_push_result *res);

/**
 * cfs_push_oci() - publish the image @tag names in the OCI layout @layout
 *	(NULL @tag: the layout's only image), sealed: its config and layers
 *	keep their bytes and digests; or, with @opts->recompress, each layer
 *	is recompressed into @opts->compression
 *
 * Every blob is read and checked against its descriptor's size and sha256
 * before anything is sent. The seal is that of the layers merged as a pull
 * merges them (cfs_tree_from_oci()): an OCI manifest without one gets it
 * in its annotations and is written anew (canonical JSON); one with that
 * seal goes as it is; one with another seal is refused (-EBADMSG). With
 * @opts->no_seal, or for a docker v2 manifest, there is no seal. A
 * recompressed layer keeps its tar stream byte for byte, checked against
 * the config's diff_id; the config stays as it is, and the manifest is
 * written anew (canonical JSON, each layer's new descriptor with its other
 * annotations kept). An image index is refused, and so is recompressing a
 * docker v2 manifest's layers. Return: 0, or -errno with a message.
 */
int cfs_push_oci(const char *layout, const char *tag, const struct cfs_registry_ref *ref,
		 const struct cfs_registry_options *ropts, const struct cfs_push_options *opts,
		 struct cfs_push_result *res);

/**
 * cfs_push_image() - publish the composefs image @image as a one-layer
 *	container image: its tree, with each file's content from the object
 *	its backing path names under @objects (a repository's image, with
 *	the repository's objects)
 *
 * As cfs_push_dir() otherwise. Return: 0, or -errno with a message (an
 * object missing from @objects names the file).
 */
int cfs_push_image(const char *image, const char *objects, const struct cfs_registry_ref *ref,
		   const struct cfs_registry_options *ropts, const struct cfs_push_options *opts,
		   struct cfs_push_result *res);

#endif /* CFS_PUSH_H */
