/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A client of the OCI distribution API (registry.c): a reference parsed,
 * and manifests and blobs read from the registry as streams, with Basic
 * and bearer-token auth (anonymous, or with credentials from the caller or
 * an auth file), retries that resume a body where it broke off, and the
 * connection handling of fetch.c. What the bytes must be is the caller's
 * business (oci.c checks each against its digest).
 */
#ifndef CFS_REGISTRY_H
#define CFS_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/**
 * struct cfs_registry_ref - REGISTRY[:PORT]/REPO[:TAG|@sha256:DIGEST]
 * @host: REGISTRY[:PORT]
 * @repo: REPO, one or more '/'-separated lowercase components
 * @tag: TAG ("latest" when neither a tag nor a digest is given), or NULL
 * @digest: "sha256:<64 hex>", or NULL
 * @default_tag: the reference named neither: @tag is "latest" for want of one
 *
 * All four strings point into one allocation; cfs_registry_ref_free() frees it.
 */
struct cfs_registry_ref {
	char *host, *repo, *tag, *digest;
	bool default_tag;
};

/**
 * cfs_registry_ref_parse() - 0, or -EINVAL (no message) for another shape
 *
 * Names are completed as podman and docker complete them: a first
 * component that is not a host (it has no '.' or ':' and is not
 * "localhost"), or no '/' at all, means Docker Hub, and Docker Hub's
 * one-component repositories are under "library/": "debian:12" is
 * "docker.io/library/debian:12", "foo/bar" "docker.io/foo/bar";
 * "index.docker.io" is "docker.io".
 */
int cfs_registry_ref_parse(const char *s, struct cfs_registry_ref *ref);
void cfs_registry_ref_free(struct cfs_registry_ref *ref);

/**
 * struct cfs_registry_options - how to talk to the registry
 * @plain_http: http:// instead of https://
 * @cainfo: a PEM file of CA certificates to trust instead of the system's
 * @retries: restarts of a request after a transient error (see
 *	     cfs_http_transient()); a body is resumed where it stopped
 * @timeout: seconds a connection attempt or a stalled transfer may take;
 *	     0: CFS_FETCH_DEFAULT_TIMEOUT
 * @retry_delay_ms: the first backoff; 0: 250
 * @speed_limit: bytes per second below which a transfer that lasts
 *	     @speed_time seconds fails (libcurl's low-speed limit; a retry
 *	     may follow); 0: no limit
 * @speed_time: see @speed_limit; 0: CFS_REGISTRY_DEFAULT_SPEED_TIME
 * @document_timeout: seconds a manifest, an image config or a token may
 *	     take in all, retries included; 0: CFS_REGISTRY_DEFAULT_DOCUMENT_TIMEOUT
 * @username: for a Basic challenge, and for a bearer token request (as
 *	     Basic credentials to the token realm); NULL: anonymous
 * @password: with @username; NULL: empty
 * @progress: called as the layers come in, with the layers done of all the
 *	      image's, and their bytes done (fetched, or applied from the
 *	      layers cache) of their total; may be NULL
 * @resolved: called with the digest of the manifest or index the reference
 *	      names once it is read ("sha256:<hex>"); may be NULL
 * @layer: called as each layer (@i of @n, from 1) is applied, with its
 *	      digest and size, and whether it came from @layers_cache; may be NULL
 * @progress_ctx: for @progress, @resolved and @layer
 * @layers_cache: a directory (made if missing) of the layers applied
 *	      before, as fragments named "sha256-<hex>" by the layer's digest
 *	      (see cfs_tar_record()): a layer found there is not fetched; or NULL
 */
struct cfs_registry_options {
	bool plain_http;
	const char *cainfo;
	unsigned int retries;
	unsigned int timeout;
	unsigned int retry_delay_ms;
	unsigned int speed_limit, speed_time, document_timeout;
	const char *username, *password;
	void (*progress)(void *ctx, unsigned int layers_done, unsigned int layers, uint64_t done,
			 uint64_t total);
	void (*resolved)(void *ctx, const char *digest);
	void (*layer)(void *ctx, unsigned int i, unsigned int n, const char *digest, uint64_t size,
		      bool cached);
	void *progress_ctx;
	const char *layers_cache;
};

#define CFS_REGISTRY_DEFAULT_SPEED_LIMIT 1024
#define CFS_REGISTRY_DEFAULT_SPEED_TIME 30
#define CFS_REGISTRY_DEFAULT_DOCUMENT_TIMEOUT 60

/**
 * cfs_registry_auth_lookup() - the credentials an auth file holds for @host
 * @path: a containers-auth.json(5) file: {"auths": {KEY: {"auth":
 *	  base64("USER:PASSWORD")}}}, which is also Docker's config.json
 * @host: REGISTRY[:PORT] of the reference
 * @repo: its repository: a KEY "HOST/NAMESPACE" that is a prefix of
 *	  "@host/@repo" at a '/' is taken before one that is just @host,
 *	  the longest first; a KEY may have an http:// or https:// prefix and
 *	  a /v1/ or /v2/ suffix (Docker writes "https://index.docker.io/v1/")
 * @user, @password: out (malloc()ed), on success
 *
 * Return: 0, -ENOENT when the file is missing or has no entry for @host
 * (no message), -EINVAL with a message for a file that is not one, -errno.
 */
int cfs_registry_auth_lookup(const char *path, const char *host, const char *repo, char **user,
			     char **password);

struct cfs_registry;
struct cfs_registry_stream;

/** cfs_registry_open() - a client for @ref's repository: 0 or -errno */
int cfs_registry_open(const struct cfs_registry_ref *ref, const struct cfs_registry_options *opts,
		      struct cfs_registry **rp);
void cfs_registry_close(struct cfs_registry *r);

/**
 * cfs_registry_get() - start reading a manifest or a blob
 * @manifest: from /v2/REPO/manifests/@name, else /v2/REPO/blobs/@name
 * @name: a tag or a digest
 * @accept: the media types asked for (an Accept header value), or NULL
 * @what: names it in messages
 *
 * Returns once the registry has answered with the content on its way. A
 * 401 with a bearer challenge is answered with a token from the
 * challenge's realm (anonymous without credentials), a Basic one with the
 * credentials, and the request made again. A manifest must come within the
 * document timeout.
 *
 * Return: 0 and *@sp, or -errno with a message naming @what and the reason:
 * -ENOENT (404), -EACCES (401, 403), -EHOSTUNREACH (no connection), -EIO.
 */
int cfs_registry_get(struct cfs_registry *r, bool manifest, const char *name, const char *accept,
		     const char *what, struct cfs_registry_stream **sp);

/**
 * cfs_registry_get_document() - cfs_registry_get() of a small document
 * (an image config), which must come within the document timeout
 */
int cfs_registry_get_document(struct cfs_registry *r, bool manifest, const char *name,
			      const char *accept, const char *what,
			      struct cfs_registry_stream **sp);

/** cfs_registry_length() - the Content-Length, or UINT64_MAX without one */
uint64_t cfs_registry_length(const struct cfs_registry_stream *s);

/** cfs_registry_type() - the Content-Type without parameters; "" without one */
const char *cfs_registry_type(const struct cfs_registry_stream *s);

/**
 * cfs_registry_read() - the next bytes of the body
 *
 * Return: their count (at most @len), 0 at the end of the body, or -EIO
 * with a message when the transfer failed beyond its retries.
 */
ssize_t cfs_registry_read(struct cfs_registry_stream *s, void *buf, size_t len);

/** cfs_registry_end() - stop reading and free @s (NULL is fine) */
void cfs_registry_end(struct cfs_registry_stream *s);

#endif /* CFS_REGISTRY_H */
