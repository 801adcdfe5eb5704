// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl pull: the image of a container image in a registry, its layers
 * streamed from the network into the tree and the digest store. The
 * fetching and the tree are lib/remote/registry.c and lib/remote/oci.c; the build options
 * and the writing are the builder's (builder.c), the download options fetch's
 * (mirrors.c). This file parses the options, finds the credentials, and
 * draws the progress: a line that redraws itself on a terminal, else one
 * line per layer, and the digest of what the reference names at the end.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/oci.h"
#include "cfs/policy.h"

enum {
	OPT_PLAIN_HTTP = CLI_OPT_BUILD_END,
	OPT_LAYERS_CACHE,
	OPT_CREDS,
	OPT_AUTHFILE,
	OPT_SPEED_LIMIT,
	OPT_SPEED_TIME,
	OPT_DOCUMENT_TIMEOUT,
	OPT_FULL_PULL,
	OPT_REQUIRE_SEAL,
	OPT_POLICY,
	OPT_REGISTRIES_D,
};

static const struct option long_options[] = {
	CLI_BUILD_LONG_OPTIONS,
	{ "plain-http", no_argument, NULL, OPT_PLAIN_HTTP },
	{ "layers-cache", required_argument, NULL, OPT_LAYERS_CACHE },
	{ "creds", required_argument, NULL, OPT_CREDS },
	{ "authfile", required_argument, NULL, OPT_AUTHFILE },
	{ "speed-limit", required_argument, NULL, OPT_SPEED_LIMIT },
	{ "speed-time", required_argument, NULL, OPT_SPEED_TIME },
	{ "document-timeout", required_argument, NULL, OPT_DOCUMENT_TIMEOUT },
	{ "full-pull", no_argument, NULL, OPT_FULL_PULL },
	{ "require-seal", no_argument, NULL, OPT_REQUIRE_SEAL },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "registries.d", required_argument, NULL, OPT_REGISTRIES_D },
	CLI_DOWNLOAD_LONG_OPTIONS,
	CLI_OPTION_JSON,
	CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

/* cfsctl pull --help, and its man page (docs/mkman.py) */
const char cmd_pull_usage[] =
	  "Usage: cfsctl pull [OPTIONS] REFERENCE IMAGE\n"
	  "       cfsctl pull [OPTIONS] --repo DIR REFERENCE NAME\n"
	  "\n"
	  "Build the composefs image IMAGE from the container image REFERENCE,\n"
	  "[REGISTRY[:PORT]/]REPO[:TAG|@sha256:DIGEST] (TAG 'latest' when neither is\n"
	  "given), fetched from the registry over the OCI distribution API: by\n"
	  "https, or by http with --plain-http. The manifest (OCI or Docker v2;\n"
	  "from an image index or manifest list, the one for --platform) names a\n"
	  "config and layers, each fetched by its digest and checked against its\n"
	  "size and sha256 digest as it streams; with @sha256:DIGEST the manifest\n"
	  "itself must hash to DIGEST; each layer uncompressed must hash to its\n"
	  "diff_id in the config. The gzip, zstd or plain layers stream from the\n"
	  "network into the tree and the digest store, never written out whole, and\n"
	  "are applied as build --from-oci applies them: IMAGE is the image build\n"
	  "--from-oci makes of the same container image in a layout. A registry\n"
	  "that answers 401 with a bearer challenge is asked for a token at the\n"
	  "challenge's realm (see credentials below). IMAGE is written to a\n"
	  "temporary file and renamed into place: on any error (registry unreachable, HTTP 401, 403 or\n"
	  "404, a digest or diff_id mismatch, an unsupported media type, a\n"
	  "truncated blob, an entry the format cannot hold) nothing is left at\n"
	  "IMAGE, and no new object in the digest store. With --repo, a failed\n"
	  "or killed pull changes no name.\n"
	  "A 404 says what is missing by the registry's error code: the\n"
	  "repository (NAME_UNKNOWN; asked of its tag list when the manifest's\n"
	  "404 does not say) or the tag (MANIFEST_UNKNOWN, with five of the\n"
	  "repository's tags at most). A REFERENCE that does not parse is said by\n"
	  "the part that is wrong (a 'docker://' to drop, capitals in REPO, ...).\n"
	  "Without --repo or --digest-store the files' contents are hashed and\n"
	  "dropped, kept nowhere: a line on stderr says so at the end, and IMAGE\n"
	  "cannot be mounted until they are in a basedir. Pull with --repo DIR to\n"
	  "mount it.\n"
	  "\n"
	  "A zstd:chunked layer (the annotations io.github.containers.zstd-chunked.*\n"
	  "or io.containers.zstd-chunked.* give its table of contents) is pulled in\n"
	  "part: its TOC is fetched with a range request and must hash to the\n"
	  "manifest's checksum annotation; the files the digest store already holds\n"
	  "are found by their sha256 through the index of a repository\n"
	  "(REPO/index, next to REPO/objects), each read and checked against its\n"
	  "sha256 unless the index vouches for it (both directions agree and the\n"
	  "object's inode is the one indexed); only the others' frames are fetched,\n"
	  "neighbours coalesced, many ranges to a request, and each file must\n"
	  "decompress to its TOC size and sha256 before anything is stored. The\n"
	  "image is the one a full pull of the same tree makes. A layer with a\n"
	  "tar-split has it checked against the TOC's tarSplitDigest and the\n"
	  "tarsplit-checksum annotation, where given, and the tar stream it\n"
	  "rebuilds checked against its diff_id;\n"
	  "one without (skopeo 1.9's) cannot have its diff_id checked (see\n"
	  "--full-pull). A layer that is not zstd:chunked, or a registry that\n"
	  "ignores Range requests, is pulled whole, and a line on stderr says so.\n"
	  "\n"
	  "Signatures: the image must pass a containers-policy.json(5) policy,\n"
	  "--policy FILE, or else the first of ~/.config/containers/policy.json\n"
	  "and /etc/containers/policy.json that exists; with none of them no\n"
	  "signature is asked for and the image is not checked (install a\n"
	  "policy file to have every pull checked). The requirements of the most\n"
	  "specific scope of transport \"docker\" that names the image\n"
	  "(REGISTRY/REPO:TAG, REGISTRY/REPO, its namespaces, REGISTRY,\n"
	  "*.DOMAIN), else \"default\", must all accept it: insecureAcceptAnything,\n"
	  "reject, signedBy (GPGKeys: keyPath, keyPaths or keyData) with the\n"
	  "signatures of the lookaside that containers-registries.d(5) gives\n"
	  "(file://, http://, https://; a redirect to another host is refused),\n"
	  "and sigstoreSigned (keyPath or keyData, no fulcio or rekor) with the\n"
	  "cosign signatures of the registry's sha256-<hex>.sig tag when\n"
	  "use-sigstore-attachments is on; any signedIdentity. The check is made\n"
	  "on the manifest (or index) the reference names, before its config or\n"
	  "any layer is fetched; a signature is verified before its payload is\n"
	  "read, and the payload must name that manifest's digest and an identity\n"
	  "the requirement accepts. A refused image: exit status 1, a message\n"
	  "naming the reference and the reason (no signature, an unknown key,\n"
	  "another identity, another manifest), and nothing written or named.\n"
	  "With --repo, the reference, the digest it resolved to, the\n"
	  "requirements passed and the seal are recorded for NAME (images --json\n"
	  "shows them).\n"
	  "\n"
	  "Options:\n"
	  "  --policy=FILE       the containers-policy.json(5) the image must pass\n"
	  "  --registries.d=DIR  the containers-registries.d(5) directory of\n"
	  "                      lookaside settings (default:\n"
	  "                      ~/.config/containers/registries.d if it exists,\n"
	  "                      else /etc/containers/registries.d)\n"
	  "  --full-pull         fetch every layer whole, check its digest and its\n"
	  "                      diff_id, even a zstd:chunked one (skopeo 1.9's\n"
	  "                      zstd:chunked layers fail the diff_id check: their\n"
	  "                      config keeps the diff_id of the layer before it\n"
	  "                      was recompressed)\n"
	  "  --require-seal      refuse an image whose manifest has no seal\n"
	  "  --plain-http        talk http:// to the registry, and accept an http://\n"
	  "                      token realm (default: https:// only)\n"
	  "  --retries=N         make a request again up to N times after a\n"
	  "                      transient error: reset, timeout, HTTP 5xx/408/429,\n"
	  "                      short body (default 3), with exponential backoff; a\n"
	  "                      blob resumes at the byte it reached\n"
	  "  --timeout=SECONDS   give up on a connection attempt, or a transfer that\n"
	  "                      receives nothing, after SECONDS (default 30)\n"
	  "  --speed-limit=BYTES\n"
	  "                      a transfer slower than BYTES a second for\n"
	  "                      --speed-time fails, and is retried as after a\n"
	  "                      reset (default 1024; 0: no limit)\n"
	  "  --speed-time=SECONDS\n"
	  "                      how long a transfer may be below --speed-limit\n"
	  "                      (default 30)\n"
	  "  --document-timeout=SECONDS\n"
	  "                      a manifest, an image config or a token must come\n"
	  "                      within SECONDS, retries included (default 60)\n"
	  "  --cacert=FILE       trust the CA certificates in FILE (PEM) for https\n"
	  "                      instead of the system CA store\n"
	  "  --creds=USER[:PASSWORD]\n"
	  "                      log in as USER: the password is asked for on the\n"
	  "                      terminal, or read as one line of stdin, when it is\n"
	  "                      not given\n"
	  "  --authfile=FILE     the credentials for the registry in FILE, in\n"
	  "                      containers-auth.json(5) format (Docker's\n"
	  "                      config.json is one); an entry for REGISTRY/NAMESPACE\n"
	  "                      is taken before one for REGISTRY. Without --creds\n"
	  "                      or --authfile: $REGISTRY_AUTH_FILE, or else the\n"
	  "                      first of $XDG_RUNTIME_DIR/containers/auth.json and\n"
	  "                      ~/.docker/config.json with an entry for the\n"
	  "                      registry (credential helpers are not asked)\n"
	  "  --json              print what was pulled as JSON on stdout: the\n"
	  "                      reference, its full name, the digest of what it\n"
	  "                      names, IMAGE, the policy requirements it passed\n"
	  "                      (null without a policy), and each layer's\n"
	  "                      digest, size and\n"
	  "                      whether it came from --layers-cache; then\n"
	  "                      layers_partial, layers_full, layers_cached,\n"
	  "                      bytes_fetched (received for the layers),\n"
	  "                      bytes_reused (of files found in the store) and\n"
	  "                      bytes_skipped (of blobs not fetched)\n"
	  "  --layers-cache=DIR  keep each layer applied in DIR (made if missing),\n"
	  "                      as a tar of its entries with the digests and sizes\n"
	  "                      of files over 64 bytes instead of their content,\n"
	  "                      named sha256-<hex>-<hex> by the layer's digest\n"
	  "                      and diff_id; a layer found there is applied from\n"
	  "                      it, neither fetched nor hashed, unless\n"
	  "                      --digest-store lacks an object it names (cfsctl\n"
	  "                      gc does not know the cache: such a layer is\n"
	  "                      fetched again). DIR may be removed at any time;\n"
	  "                      it is trusted as the store is\n"
	  BUILD_OPTIONS_HELP
	  "  -h, --help          show this help\n"
	  "\n"
	  "A progress line of the layers' bytes fetched, of their size, is drawn\n"
	  "on stderr when it is a terminal; otherwise a line for each layer as it\n"
	  "is applied: its size, and for a layer pulled in part the bytes fetched\n"
	  "of it. At the end\n"
	  "'Digest: sha256:...' on stderr names what the reference resolved to (the\n"
	  "manifest or the index), to pull the very same image again by digest.\n"
	  "\n"
	  "An image whose manifest has the annotation\n"
	  "composefs.merged.erofs.v1.fsverity-sha256-12 (its seal, as cfsctl push\n"
	  "writes it) must have a tree whose composefs 1.0 image, with the\n"
	  "defaults, has that fs-verity digest, whatever --format: the check is\n"
	  "made once the tree is complete, before IMAGE is written or any object or\n"
	  "name published (a pull of another format keeps the content of the files\n"
	  "of at most 64 bytes, which that image holds inline, to write it too). A\n"
	  "seal that is not 64 hex digits fails the pull before anything is\n"
	  "fetched; another digest fails it (exit 1). --require-seal refuses an\n"
	  "image without a seal before its config or any layer is fetched. With\n"
	  "--repo, the sealed form (that composefs 1.0 image) is stored too, as\n"
	  "DIR/images/<seal>, so that composefs=<seal> boots what the seal\n"
	  "covers; gc keeps it while NAME points at the image pulled with it.\n"
	  "\n"
	  "Credentials answer a Basic challenge, or go to the token realm of a\n"
	  "bearer challenge to get a token (without them the token is anonymous).\n"
	  "They and the token are sent to the registry's host and port and the\n"
	  "realm's only: not after a redirect to another host (as registries\n"
	  "redirect blobs to a storage service). An https registry may not\n"
	  "redirect to http:// unless --plain-http is given. REFERENCE may be a\n"
	  "short name, completed as podman does: 'debian:12' is\n"
	  "docker.io/library/debian:12, 'foo/bar' docker.io/foo/bar, and a first\n"
	  "component with a '.' or ':', or 'localhost', names the registry.\n"
	  "\n"
	  "Examples:\n"
	  "  cfsctl pull --repo /var/lib/cfs registry.example.org/team/app:1.2 app\n"
	  "  cfsctl pull --plain-http --repo repo localhost:5000/app:1 app\n"
	  "  cfsctl pull --json --digest-store=objects debian:12 debian.cfs\n"
	  "\n"
	  "Exit status: 0 success, 1 failure, 2 usage error. SIGINT, SIGTERM or\n"
	  "SIGHUP removes its temporaries, then it dies of that signal (a shell\n"
	  "says 130, 143 or 129, and a loop stops).\n";

#define MAX_LAYER_LINES 4096 /* --json lists at most this many layers */

struct layer_line {
	char digest[7 + 64 + 1];
	uint64_t size;
	bool cached;
};

struct pull {
	struct cfs_registry_options ro;
	struct cli_progress progress;
	const char *creds, *authfile;
	const char *policy_file, *registries_d;
	char *passed; /* what in the policy accepted the image */
	bool json, lines;
	char digest[7 + 64 + 1]; /* of what the reference names */
	struct layer_line *layers;
	unsigned int n_layers;
	struct cfs_pull_stats stats; /* what partial pulls fetched and reused */
	uint64_t fetched_before; /* stats.fetched at the end of the layer before */
	unsigned int layers_done; /* the progress last reported, to draw it again */
	uint64_t bytes_done;
	char seal[65]; /* the manifest's, or "" */
	bool seal_at_commit; /* checked by cfs_tree_commit() as it stores the sealed form */
	const char *reference;
	const struct cfs_build_options *build_opts; /* the tree's, for its seal */
};

static void on_progress(void *ctx, unsigned int layers_done, unsigned int layers, uint64_t done,
			uint64_t total)
{
	struct pull *p = ctx;

	p->progress.total = layers;
	p->progress.total_bytes = total;
	p->layers_done = layers_done;
	p->bytes_done = done;
	cli_progress_update(&p->progress, layers_done, done);
}

/* The seal, against the composefs 1.0 image of the finished tree: before anything is written. */
static int check_seal(void *ctx, struct cfs_node *root)
{
	struct pull *p = ctx;
	uint8_t md[CFS_DIGEST_SIZE];
	char hex[CFS_DIGEST_HEX_SIZE];
	int r;

	/* with --repo, the sealed form is checked as it is stored, written once */
	if (!p->seal[0] || p->seal_at_commit)
		return 0;
	r = cfs_tree_seal(root, p->build_opts, NULL, md);
	if (r) {
		cli_build_said();
		return r;
	}
	cfs_digest_to_hex(md, hex);
	if (strcmp(hex, p->seal) != 0) {
		cli_error("pull: '%s': the tree's composefs 1.0 image has the digest %s, not the image's seal %s: refused",
			  p->reference, hex, p->seal);
		cli_build_said();
		return -EBADMSG;
	}
	return 0;
}

static void on_resolved(void *ctx, const char *digest)
{
	struct pull *p = ctx;

	snprintf(p->digest, sizeof(p->digest), "%s", digest);
}

static void on_layer(void *ctx, unsigned int i, unsigned int n, const char *digest, uint64_t size,
		     bool cached)
{
	struct pull *p = ctx;
	uint64_t fetched = p->stats.fetched - p->fetched_before;

	p->fetched_before = p->stats.fetched;
	/* a layer pulled in part: what was fetched of it, too */
	if (p->lines && !cached && fetched != size)
		fprintf(stderr, "pull: layer %u/%u %s: %llu bytes, %llu fetched\n", i, n, digest,
			(unsigned long long)size, (unsigned long long)fetched);
	else if (p->lines)
		fprintf(stderr, "pull: layer %u/%u %s: %llu bytes%s\n", i, n, digest,
			(unsigned long long)size, cached ? ", from the layers cache" : "");
	if (p->json && p->n_layers < MAX_LAYER_LINES) {
		struct layer_line *l;

		if (!p->layers)
			p->layers = calloc(MAX_LAYER_LINES, sizeof(*p->layers));
		if (!p->layers)
			return;
		l = &p->layers[p->n_layers++];
		snprintf(l->digest, sizeof(l->digest), "%s", digest);
		l->size = size;
		l->cached = cached;
	}
}

static void on_accepted(void *ctx, const char *requirement)
{
	struct pull *p = ctx;

	free(p->passed);
	p->passed = strdup(requirement);
}

/*
 * Why a layer is pulled whole: a notice, not an error, said as the layer
 * lines are; on a terminal the progress line is cleared first and drawn
 * again after.
 */
static void on_notice(void *ctx, const char *msg)
{
	struct pull *p = ctx;

	if (p->progress.enabled) {
		fputs("\r\033[K", stderr);
		cli_progress_open = 0;
	}
	fprintf(stderr, "pull: %s\n", msg);
	if (p->progress.enabled) {
		p->progress.last.tv_sec = 0; /* drawn again now, not at the next tenth */
		p->progress.last.tv_nsec = 0;
		cli_progress_update(&p->progress, p->layers_done, p->bytes_done);
	}
}

static int pull_option(void *ctx, int c, const char *arg)
{
	struct pull *p = ctx;
	unsigned int v;

	switch (c) {
	case OPT_LAYERS_CACHE:
		if (!arg[0])
			return cli_usage("pull", "--layers-cache needs a directory");
		p->ro.layers_cache = arg;
		return EXIT_OK;
	case OPT_POLICY:
	case OPT_REGISTRIES_D:
		if (!arg[0])
			return cli_usage("pull", "--%s needs a %s",
					 c == OPT_POLICY ? "policy" : "registries.d",
					 c == OPT_POLICY ? "file" : "directory");
		*(c == OPT_POLICY ? &p->policy_file : &p->registries_d) = arg;
		return EXIT_OK;
	case OPT_CREDS:
		if (!arg[0] || arg[0] == ':')
			return cli_usage("pull", "--creds wants USER[:PASSWORD]");
		p->creds = arg;
		return EXIT_OK;
	case OPT_AUTHFILE:
		if (!arg[0])
			return cli_usage("pull", "--authfile needs a file");
		p->authfile = arg;
		return EXIT_OK;
	case OPT_SPEED_LIMIT:
		if (cli_parse_uint(arg, 1u << 30, &p->ro.speed_limit) < 0)
			return cli_usage("pull", "--speed-limit wants bytes per second, not '%s'",
					 arg);
		return EXIT_OK;
	case OPT_SPEED_TIME:
	case OPT_DOCUMENT_TIMEOUT:
		if (cli_parse_uint(arg, 86400, &v) < 0 || v == 0)
			return cli_usage("pull", "--%s wants seconds from 1 to 86400, not '%s'",
					 c == OPT_SPEED_TIME ? "speed-time" : "document-timeout", arg);
		if (c == OPT_SPEED_TIME)
			p->ro.speed_time = v;
		else
			p->ro.document_timeout = v;
		return EXIT_OK;
	default:
		return -1;
	}
}

static int print_json(const struct pull *p, const char *reference,
		      const struct cfs_registry_ref *ref, const char *image)
{
	json_t *doc = json_object(), *layers = json_array();
	char *name = NULL;
	int r;

	if (asprintf(&name, "%s/%s%s%s", ref->host, ref->repo, ref->digest ? "@" : ":",
		     ref->digest ? ref->digest : ref->tag) < 0)
		name = NULL;
	cli_json_set(doc, "reference", cli_json_text(reference));
	cli_json_set(doc, "name", name ? cli_json_text(name) : NULL);
	cli_json_set(doc, "digest", cli_json_text(p->digest[0] ? p->digest : NULL));
	cli_json_set(doc, "image", cli_json_text(image));
	cli_json_set(doc, "policy", cli_json_text(p->passed));
	for (unsigned int i = 0; i < p->n_layers; i++)
		cli_json_push(layers, json_pack("{s:s, s:I, s:b}", "digest", p->layers[i].digest,
						"size", (json_int_t)p->layers[i].size, "cached",
						p->layers[i].cached));
	cli_json_set(doc, "layers", layers);
	cli_json_set(doc, "layers_partial", json_integer(p->stats.partial));
	cli_json_set(doc, "layers_full", json_integer(p->stats.full));
	cli_json_set(doc, "layers_cached", json_integer(p->stats.cached));
	cli_json_set(doc, "bytes_fetched", json_integer((json_int_t)p->stats.fetched));
	cli_json_set(doc, "bytes_reused", json_integer((json_int_t)p->stats.reused));
	cli_json_set(doc, "bytes_skipped", json_integer((json_int_t)p->stats.skipped));
	free(name);
	r = cli_json_print(doc, CLI_JSON_COMPACT);
	if (r < 0)
		cli_error("pull: '%s': the JSON summary: %s", reference, strerror(-r));
	return r;
}

/*
 * What is wrong with the reference @s that cfs_registry_ref_parse()
 * refused, in @buf, or NULL when it cannot tell: the part, not the grammar.
 */
static const char *ref_problem(const char *s, char *buf, size_t size)
{
	const char *scheme = strstr(s, "://"), *slash = strchr(s, '/'), *repo = s, *at, *colon;
	size_t host_len = slash ? (size_t)(slash - s) : 0, n;

	if (scheme) {
		snprintf(buf, size, "drop the '%.*s://': a reference names no transport",
			 (int)(scheme - s), s);
		return buf;
	}
	if (!*s)
		return "it is empty";
	/* the first component is the registry when it looks like a host */
	if (slash && (memchr(s, '.', host_len) || memchr(s, ':', host_len) ||
		      (host_len == 9 && strncmp(s, "localhost", 9) == 0))) {
		if (strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") <
		    host_len) {
			snprintf(buf, size, "the registry '%.*s' is no host[:port]", (int)host_len, s);
			return buf;
		}
		repo = slash + 1;
	}
	at = strchr(repo, '@');
	if (at) {
		if (!cfs_is_sha256_digest(at + 1))
			return "after '@' comes sha256: and 64 lowercase hex digits";
		n = (size_t)(at - repo);
	} else {
		colon = strrchr(repo, ':');
		n = colon ? (size_t)(colon - repo) : strlen(repo);
		if (colon) {
			const char *tag = colon + 1;
			size_t len = strlen(tag);

			if (len == 0 || len > 128 || strspn(tag, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != len ||
			    tag[0] == '.' || tag[0] == '-') {
				snprintf(buf, size,
					 "the tag '%s' is not 1 to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'",
					 tag);
				return buf;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		if (repo[i] >= 'A' && repo[i] <= 'Z') {
			snprintf(buf, size, "the repository '%.*s' has capitals: its name is lowercase",
				 (int)n, repo);
			return buf;
		}
	if (n == 0 || repo[0] == '/' || repo[n - 1] == '/' || memmem(repo, n, "//", 2)) {
		snprintf(buf, size, "the repository '%.*s' has an empty component", (int)n, repo);
		return buf;
	}
	if (strspn(repo, "abcdefghijklmnopqrstuvwxyz0123456789._-/") < n) {
		snprintf(buf, size,
			 "the repository '%.*s' holds a character other than a-z, 0-9, '.', '_', '-' and '/'",
			 (int)n, repo);
		return buf;
	}
	return NULL;
}

int cmd_pull(int argc, char **argv)
{
	struct pull p = { .ro = { .speed_limit = CFS_REGISTRY_DEFAULT_SPEED_LIMIT } };
	struct cfs_registry_ref ref;
	struct cli_mirrors m;
	struct cli_build b;
	const struct cli_var vars[] = {
		{ OPT_PLAIN_HTTP, .flag = &p.ro.plain_http },
		{ OPT_FULL_PULL, .flag = &p.ro.full_pull },
		{ OPT_REQUIRE_SEAL, .flag = &p.ro.require_seal },
		{ CLI_OPT_JSON, .flag = &p.json },
		{ 0 },
	};
	const struct cli_parse cp = {
		.verb = "pull", .shortopts = "h", .longopts = long_options,
		.help = cmd_pull_usage, .vars = vars, .mirrors = &m,
		.take = pull_option, .ctx = &p,
	};
	struct cfs_node *root = NULL;
	struct cfs_policy *policy = NULL;
	char *origin = NULL;
	const char *reference = NULL, *image = NULL;
	char *user = NULL, *password = NULL;
	int r;

	cli_mirrors_init(&m);
	r = cli_build_parse(&b, &cp, "REFERENCE", argc, argv, &reference, &image);
	if (r >= 0)
		return r;
	if (p.json && b.print_digest)
		return cli_usage("pull", "--json and --print-digest: choose one");
	if (p.creds && p.authfile)
		return cli_usage("pull", "--creds and --authfile: choose one");
	if (cfs_registry_ref_parse(reference, &ref)) {
		char why[512];
		const char *problem = ref_problem(reference, why, sizeof(why));

		if (problem)
			return cli_usage("pull", "'%s' is not a reference: %s", reference, problem);
		return cli_usage("pull", "'%s' is not [REGISTRY[:PORT]/]REPO[:TAG|@sha256:DIGEST]",
				 reference);
	}
	r = cli_build_check(&b, "pull");
	if (r)
		goto out;
	r = cli_mirrors_check_cacert(&m, "pull");
	if (r)
		goto out;
	r = cli_find_creds(p.creds, p.authfile, &ref, &user, &password);
	if (r) {
		r = EXIT_FAIL; /* after saying why */
		goto out;
	}
	r = cfs_policy_load(p.policy_file, &policy);
	if (r == 0)
		r = cfs_policy_registries_d(policy, p.registries_d);
	if (r && !(r == -ENOENT && !p.policy_file)) {
		if (r == -ENOMEM) /* the library said why for anything else */
			cli_error("pull: the policy: %s", strerror(-r));
		r = EXIT_FAIL;
		goto out;
	}
	p.ro.policy = policy;
	p.ro.username = user;
	p.ro.password = password;
	p.ro.cainfo = m.cacert;
	p.ro.retries = m.retries;
	p.ro.timeout = m.timeout;

	r = cli_build_start(&b, "pull");
	if (r)
		goto out;
	cli_progress_start(&p.progress, "pull: layers", 0, 0);
	p.lines = !p.progress.enabled;
	p.ro.progress = on_progress;
	p.ro.resolved = on_resolved;
	p.ro.layer = on_layer;
	p.ro.progress_ctx = &p;
	p.ro.notice = on_notice;
	p.ro.notice_ctx = &p;
	p.ro.accepted = on_accepted;
	p.ro.stats = &p.stats;
	p.ro.seal = p.seal;
	p.reference = reference;
	p.build_opts = &b.o;
	b.check = check_seal;
	b.check_ctx = &p;
	r = cfs_tree_from_registry(reference, &p.ro, b.have_platform ? &b.platform : NULL, &b.o,
				   &root);
	cli_progress_end(&p.progress);
	if (r) {
		cli_build_end(&b);
		r = cli_build_fail("pulling", reference, r);
		goto out;
	}
	if (b.repo_dir) {
		json_t *rec = json_object();
		char *name = NULL;

		if (asprintf(&name, "%s/%s%s%s", ref.host, ref.repo, ref.digest ? "@" : ":",
			     ref.digest ? ref.digest : ref.tag) < 0)
			name = NULL;
		cli_json_set(rec, "reference", cli_json_text(name));
		cli_json_set(rec, "manifest", cli_json_text(p.digest[0] ? p.digest : NULL));
		cli_json_set(rec, "policy", cli_json_text(p.passed));
		cli_json_set(rec, "seal", cli_json_text(p.seal[0] ? p.seal : NULL));
		json_malloc_t jmalloc;
		json_free_t jfree;
		char *text = json_dumps(rec, JSON_COMPACT);

		/* jansson's memory is its allocator's */
		json_get_alloc_funcs(&jmalloc, &jfree);
		origin = text ? strdup(text) : NULL;
		if (text)
			jfree(text);
		json_decref(rec);
		free(name);
		b.origin = origin;
		/* composefs=<seal> boots what the seal (and a signature) covers */
		b.store_seal = p.seal[0] != '\0';
		b.seal = p.seal[0] ? p.seal : NULL;
		p.seal_at_commit = b.store_seal;
	}
	r = cli_build_write(&b, root, reference, image);
	/* The layers' file contents were hashed and dropped: the image alone is no mount. */
	if (r == EXIT_OK && !b.repo_dir && !b.o.digest_store)
		cli_error("pull: no --repo or --digest-store: the files' contents were kept nowhere, and '%s' cannot be mounted until they are in a basedir; pull with --repo DIR to keep them",
			  image);
	if (r == EXIT_OK && p.digest[0])
		fprintf(stderr, "Digest: %s\n", p.digest);
	if (r == EXIT_OK && p.json)
		r = print_json(&p, reference, &ref, image) ? EXIT_FAIL : cli_close_stdout();
out:
	cli_forget(user);
	cli_forget(password);
	free(p.layers);
	free(p.passed);
	free(origin);
	cfs_policy_free(policy);
	cfs_registry_ref_free(&ref);
	return r;
}
