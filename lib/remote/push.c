// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl push: a directory published as a one-layer container image. The
 * tree is scanned as build scans it (scan.c), written as one layer
 * (layer-write.c) to an unnamed temporary file, and described by an OCI
 * image config and manifest, both canonical JSON (keys sorted, no spaces,
 * no creation time), so that the same tree gives the same digests. The
 * blobs go first, each only when a HEAD says the registry lacks it; the
 * manifest last.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "layer-write.h"
#include "base/internal.h"
#include "base/tree.h"
#include "cfs/build.h"
#include "cfs/push.h"
#include "cfs/util.h"

#define OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define OCI_CONFIG "application/vnd.oci.image.config.v1+json"

static void hexdigest(const uint8_t md[32], char out[7 + 64 + 1])
{
	memcpy(out, "sha256:", 7);
	cfs_digest_to_hex(md, out + 7);
}

/* An unnamed file in @dir for the layer, or -errno after a message. */
static int temp_file(const char *dir)
{
	const char *d = dir ? dir : getenv("TMPDIR");
	int fd;

	if (!d || !d[0])
		d = "/tmp";
	fd = open(d, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;

		cfs_msg("cannot make a temporary file in '%s': %s", d, strerror(e));
		return -e;
	}
	return fd;
}

/* Put the blob @b (the @size bytes of @fd, or @mem) unless the registry has it. */
static int send_blob(struct cfs_registry *r, struct cfs_push_blob *b, int fd, const char *what,
		     struct cfs_push_result *res)
{
	int ret = cfs_registry_has_blob(r, b->digest, what);

	if (ret < 0)
		return ret;
	if (ret == 1) {
		res->skipped += b->size;
		return 0;
	}
	ret = cfs_registry_put_blob(r, b->digest, fd, b->size, NULL, what);
	if (ret < 0)
		return ret;
	b->uploaded = true;
	res->uploaded += b->size;
	return 0;
}

int cfs_push_dir(const char *dir, const struct cfs_registry_ref *ref,
		 const struct cfs_registry_options *ropts, const struct cfs_push_options *opts,
		 struct cfs_push_result *res)
{
	struct cfs_build_options bo = { 0 };
	struct cfs_oci_platform host;
	const struct cfs_oci_platform *pl = opts->platform;
	struct cfs_layer_out lo = { 0 };
	struct cfs_registry *r = NULL;
	struct cfs_node *root = NULL;
	json_t *config = NULL, *manifest = NULL, *layer = NULL;
	char *cdata = NULL, *mdata = NULL;
	uint8_t md[32];
	int fd = -1, cfd = -1, ret;
	static const char *const types[] = {
		[CFS_PUSH_ZSTD_CHUNKED] = "application/vnd.oci.image.layer.v1.tar+zstd",
		[CFS_PUSH_ZSTD] = "application/vnd.oci.image.layer.v1.tar+zstd",
		[CFS_PUSH_GZIP] = "application/vnd.oci.image.layer.v1.tar+gzip",
	};

	memset(res, 0, sizeof(*res));
	if (!ref->tag) {
		cfs_msg("a push names a tag, not a digest");
		return -EINVAL;
	}
	if (!pl) {
		ret = cfs_oci_platform_host(&host);
		if (ret)
			return ret;
		pl = &host;
	}
	ret = cfs_tree_from_dir(dir, &bo, &root);
	if (ret)
		return ret;
	ret = cfs_tree_sort(root);
	if (ret)
		goto out;
	fd = temp_file(opts->tmpdir);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	ret = cfs_layer_write(root, opts->compression, fd, dir, &lo);
	if (ret)
		goto out;
	hexdigest(lo.digest, res->layer.digest);
	hexdigest(lo.diff_id, res->layer.diff_id);
	res->layer.size = lo.size;
	if (opts->blob)
		opts->blob(opts->ctx, "layer", &res->layer, false);

	ret = -ENOMEM;
	config = json_pack("{s:s, s:s, s:{}, s:{s:s, s:[s]}}", "architecture", pl->arch, "os",
			   pl->os, "config", "rootfs", "type", "layers", "diff_ids",
			   res->layer.diff_id);
	if (!config || (pl->variant[0] &&
			json_object_set_new(config, "variant", json_string(pl->variant))))
		goto out;
	cdata = cfs_json_dump(config, JSON_COMPACT | JSON_SORT_KEYS);
	if (!cdata)
		goto out;
	EVP_Digest(cdata, strlen(cdata), md, NULL, EVP_sha256(), NULL);
	hexdigest(md, res->config.digest);
	res->config.size = strlen(cdata);
	if (opts->blob)
		opts->blob(opts->ctx, "config", &res->config, false);

	layer = json_pack("{s:s, s:s, s:I}", "mediaType", types[opts->compression], "digest",
			  res->layer.digest, "size", (json_int_t)res->layer.size);
	if (!layer || (lo.annotations && json_object_set(layer, "annotations", lo.annotations)))
		goto out;
	manifest = json_pack("{s:i, s:s, s:{s:s, s:s, s:I}, s:[O]}", "schemaVersion", 2,
			     "mediaType", OCI_MANIFEST, "config", "mediaType", OCI_CONFIG, "digest",
			     res->config.digest, "size", (json_int_t)res->config.size, "layers",
			     layer);
	if (!manifest)
		goto out;
	mdata = cfs_json_dump(manifest, JSON_COMPACT | JSON_SORT_KEYS);
	if (!mdata)
		goto out;
	EVP_Digest(mdata, strlen(mdata), md, NULL, EVP_sha256(), NULL);
	hexdigest(md, res->manifest_digest);

	/* the config from a file too: one way of uploading */
	cfd = temp_file(opts->tmpdir);
	if (cfd < 0) {
		ret = cfd;
		goto out;
	}
	if (write(cfd, cdata, res->config.size) != (ssize_t)res->config.size) {
		ret = -EIO;
		cfs_msg("writing the image config to a temporary file: %s", strerror(errno));
		goto out;
	}

	ret = cfs_registry_open(ref, ropts, &r);
	if (ret)
		goto out;
	ret = send_blob(r, &res->layer, fd, "layer", res);
	if (ret)
		goto out;
	if (opts->blob)
		opts->blob(opts->ctx, "layer", &res->layer, true);
	ret = send_blob(r, &res->config, cfd, "config", res);
	if (ret)
		goto out;
	if (opts->blob)
		opts->blob(opts->ctx, "config", &res->config, true);
	ret = cfs_registry_put_manifest(r, ref->tag, OCI_MANIFEST, mdata, strlen(mdata),
					"manifest");
out:
	if (ret == -ENOMEM)
		cfs_msg("pushing '%s': %s", dir, strerror(ENOMEM));
	cfs_registry_close(r);
	json_decref(lo.annotations);
	json_decref(layer);
	json_decref(config);
	json_decref(manifest);
	free(cdata);
	free(mdata);
	if (fd >= 0)
		close(fd);
	if (cfd >= 0)
		close(cfd);
	cfs_tree_free(root);
	return ret;
}
