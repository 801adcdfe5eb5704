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
 * @full_pull: fetch every layer whole and check its digest and diff_id,
 *	      even a zstd:chunked one (otherwise pulled in part: only the
 *	      files the digest store lacks are fetched)
 * @notice: told (may be NULL) why a layer is pulled whole when a partial
 *	      pull was possible in principle: not zstd:chunked, or a
 *	      registry that ignores Range requests
 * @stats: unless NULL, what the pull fetched (struct cfs_pull_stats)
 * @push: a push: a bearer token is asked for the scope "push,pull" when
 *	  the challenge names none
 * @require_seal: refuse an image whose manifest has no seal (the
 *	  annotation composefs.merged.erofs.v1.fsverity-sha256-12), before
 *	  its config or any layer is fetched
 * @seal: unless NULL, 65 bytes: the manifest's seal, 64 lowercase hex
 *	  digits, once it is read, or "" for an image without one. A seal
 *	  that is not 64 hex digits fails the pull. That the tree has it is
 *	  the caller's to check (cfsctl pull does, before anything is named).
 * @policy: unless NULL, the policy the image must pass (cfs/policy.h),
 *	    checked once the reference's manifest or index is read and
 *	    before anything else is fetched
 * @accepted: called (may be NULL) with what in @policy accepted the image
 */
struct cfs_policy;

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
	bool full_pull;
	void (*notice)(void *ctx, const char *msg);
	void *notice_ctx;
	struct cfs_pull_stats *stats;
	bool push;
	bool require_seal;
	char *seal;
	const struct cfs_policy *policy;
	void (*accepted)(void *ctx, const char *requirement);
};

/**
 * struct cfs_pull_stats - what a pull fetched
 * @fetched: bytes received from the registry for the layers (blobs,
 *	     TOCs and ranges)
 * @reused: bytes of the files of partially pulled layers that the store
 *	     had already (uncompressed)
 * @skipped: bytes of the layer blobs not fetched (left out by partial
 *	     pulls, or found in the layers cache)
 * @partial, @full, @cached: layers pulled in part, whole, from the cache
 */
struct cfs_pull_stats {
	uint64_t fetched, reused, skipped;
	unsigned int partial, full, cached;
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

/** struct cfs_registry_range - the bytes [@start, @end) of a blob */
struct cfs_registry_range {
	uint64_t start, end;
};

/**
 * typedef cfs_registry_range_fn - takes the bytes of range @i as they come
 * @off: where @data is in the blob; each range's bytes come in order
 * Return: 0, or -errno to stop the transfer with that error
 */
typedef int (*cfs_registry_range_fn)(void *ctx, size_t i, uint64_t off, const void *data,
				     size_t len);

/**
 * cfs_registry_get_ranges() - read ranges of the blob @digest (HTTP Range)
 * @blob_size: the blob's size, from its descriptor
 * @ranges: @n ranges in increasing order, none overlapping
 * @multi: ask for up to 512 ranges in one request (multipart/byteranges);
 *	   otherwise one request per range
 * @what: names the blob in messages
 * @received: unless NULL, the bytes of the answers' bodies are added to it
 *
 * An answer that is not exactly the ranges asked for (another range, more
 * or fewer bytes, a malformed multipart body) is an error. A transfer cut
 * short is resumed from the byte it reached, @retries times.
 * Return: 0 once every byte went to @fn; 1 when the registry ignored the
 * Range and began sending the whole blob (nothing went to @fn from that
 * answer); -EPROTO for a wrong answer; the error @fn returned; or another
 * -errno, with a message.
 */
int cfs_registry_get_ranges(struct cfs_registry *r, const char *digest, uint64_t blob_size,
			    const struct cfs_registry_range *ranges, size_t n, bool multi,
			    const char *what, cfs_registry_range_fn fn, void *ctx,
			    uint64_t *received);

/**
 * cfs_registry_has_blob() - whether the repository has the blob @digest
 * (a HEAD request), named @what in messages
 *
 * Return: 1 (HTTP 200, or a 302 or 307 redirect to where it is stored,
 * which is not followed), 0 (HTTP 404), or -errno with a message.
 */
int cfs_registry_has_blob(struct cfs_registry *r, const char *digest, const char *what);

/**
 * cfs_registry_blob_size() - cfs_registry_has_blob(), and the blob's size
 * @size: out: the Content-Length of the registry's 200 answer, or
 *	  UINT64_MAX when it gave none (or answered with a redirect)
 */
int cfs_registry_blob_size(struct cfs_registry *r, const char *digest, const char *what,
			   uint64_t *size);

/**
 * cfs_registry_put_blob() - upload the blob @digest: the @size bytes of @fd
 * from offset 0
 * @from: unless NULL, another repository of the same registry to mount the
 *	  blob from (POST ?mount=&from=); a registry that does not mount it
 *	  gets it uploaded
 *
 * A streamed upload: a POST to the uploads endpoint, a PATCH of the body
 * (with its Content-Range) to the Location it answered with, and a PUT
 * with the digest to the Location the PATCH answered with. Each Location
 * must be on the registry itself (a path, or a URL of the same scheme,
 * host and port): one elsewhere is refused, as the credentials would go
 * with it. No redirect is followed; a response with more than 64 KiB of
 * headers is refused. A PATCH that fails transiently (cut off, a 5xx) is
 * followed by a GET of the upload's Location, whose Range says how much
 * the registry has, and the rest is sent from there; an upload the
 * registry lost (404, 416, no Range) starts again with a new POST. Both
 * count against the options' retries.
 *
 * Return: 0 uploaded, 1 mounted from @from, or -errno with a message:
 * -EPROTO for an answer that breaks the protocol (a 202 without Location,
 * a Location elsewhere, huge headers), -EACCES, -ENOENT, -EIO.
 */
int cfs_registry_put_blob(struct cfs_registry *r, const char *digest, int fd, uint64_t size,
			  const char *from, const char *what);

/**
 * cfs_registry_put_manifest() - PUT the manifest @data (@len bytes, of the
 * media type @type) under @tag
 *
 * Return: 0, or -errno with a message.
 */
int cfs_registry_put_manifest(struct cfs_registry *r, const char *tag, const char *type,
			      const void *data, size_t len, const char *what);

#endif /* CFS_REGISTRY_H */
