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
#include <termios.h>
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
	  "tar-split has the tar stream it rebuilds checked against its diff_id;\n"
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
	  "With --repo, the reference, the digest it resolved to and the\n"
	  "requirements passed are recorded for NAME (images --json shows them).\n"
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
	  "on stderr when it is a terminal; otherwise a line for each layer as it is applied. At the end\n"
	  "'Digest: sha256:...' on stderr names what the reference resolved to (the\n"
	  "manifest or the index), to pull the very same image again by digest.\n"
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
	  "Exit status: 0 success, 1 failure, 2 usage error; after SIGINT,\n"
	  "SIGTERM or SIGHUP, which remove its temporaries, 130, 143 or 129.\n";

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
};

static void on_progress(void *ctx, unsigned int layers_done, unsigned int layers, uint64_t done,
			uint64_t total)
{
	struct pull *p = ctx;

	p->progress.total = layers;
	p->progress.total_bytes = total;
	cli_progress_update(&p->progress, layers_done, done);
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

	if (p->lines)
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

/* Why a layer is pulled whole: said, as the pull goes on. */
static void on_notice(void *ctx, const char *msg)
{
	(void)ctx;
	cli_error("pull: %s", msg);
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

/* One line of @in without its newline into *@line (malloc()ed); 0 or -errno. */
static int read_secret_line(FILE *in, char **line)
{
	size_t cap = 0;
	ssize_t n;

	*line = NULL;
	n = getline(line, &cap, in);
	if (n < 0) {
		free(*line);
		*line = NULL;
		return ferror(in) ? -EIO : -ENODATA;
	}
	while (n > 0 && ((*line)[n - 1] == '\n' || (*line)[n - 1] == '\r'))
		(*line)[--n] = '\0';
	return 0;
}

/* The password for @user at @host: asked on the terminal, else one line of stdin. */
static int read_password(const char *user, const char *host, char **password)
{
	struct termios old, quiet;
	FILE *tty, *out;
	bool echo_off;
	int r;

	if (!isatty(STDIN_FILENO)) {
		r = read_secret_line(stdin, password);
		if (r)
			cli_error("--creds %s: no password on standard input", user);
		return r;
	}
	tty = fopen("/dev/tty", "r+e");
	out = tty ? tty : stderr;
	if (!tty)
		tty = stdin;
	/* echo goes off before the prompt shows, so nothing typed is echoed */
	echo_off = tcgetattr(fileno(tty), &old) == 0;
	if (echo_off) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		tcsetattr(fileno(tty), TCSAFLUSH, &quiet);
	}
	fprintf(out, "Password for %s at %s: ", user, host);
	fflush(out);
	r = read_secret_line(tty, password);
	if (echo_off)
		tcsetattr(fileno(tty), TCSAFLUSH, &old);
	fputc('\n', out);
	if (tty != stdin)
		fclose(tty);
	if (r)
		cli_error("--creds %s: no password given", user);
	return r;
}

/*
 * The credentials for @ref: --creds, else --authfile, else the first of
 * $REGISTRY_AUTH_FILE, or $XDG_RUNTIME_DIR/containers/auth.json then
 * ~/.docker/config.json, that has an entry for the registry. 0 (*@user
 * NULL for none), or -errno after a message.
 */
static int find_creds(struct pull *p, const struct cfs_registry_ref *ref, char **user,
		      char **password)
{
	const char *env, *colon;
	char *defaults[2] = { NULL, NULL };
	int r = -ENOENT;

	*user = *password = NULL;
	if (p->creds) {
		colon = strchr(p->creds, ':');
		*user = colon ? strndup(p->creds, (size_t)(colon - p->creds)) : strdup(p->creds);
		if (colon)
			*password = strdup(colon + 1);
		if (!*user || (colon && !*password)) {
			cli_error("--creds: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
		if (colon)
			return 0;
		return read_password(*user, ref->host, password);
	}
	if (p->authfile) {
		r = cfs_registry_auth_lookup(p->authfile, ref->host, ref->repo, user, password);
		if (r == -ENOENT && access(p->authfile, F_OK) == 0)
			return 0; /* no entry for this registry */
		/* the library said why, but not when the file would not open */
		if (r && r != -EINVAL)
			cli_error("auth file '%s': %s", p->authfile, strerror(-r));
		return r;
	}
	env = getenv("REGISTRY_AUTH_FILE");
	if (env && env[0]) {
		defaults[0] = strdup(env);
	} else {
		env = getenv("XDG_RUNTIME_DIR");
		if (env && env[0] && asprintf(&defaults[0], "%s/containers/auth.json", env) < 0)
			defaults[0] = NULL;
		env = getenv("HOME");
		if (env && env[0] && asprintf(&defaults[1], "%s/.docker/config.json", env) < 0)
			defaults[1] = NULL;
	}
	for (int i = 0; i < 2 && r == -ENOENT; i++)
		if (defaults[i])
			r = cfs_registry_auth_lookup(defaults[i], ref->host, ref->repo, user,
						     password);
	free(defaults[0]);
	free(defaults[1]);
	/* a file that cannot be read at all is as good as none */
	if (r == -ENOENT || r == -EACCES || r == -ENOTDIR || r == -EISDIR)
		return 0;
	if (r && r != -EINVAL)
		cli_error("auth file: %s", strerror(-r));
	return r;
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

static void forget(char *secret)
{
	if (secret) {
		explicit_bzero(secret, strlen(secret));
		free(secret);
	}
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
		{ CLI_OPT_JSON, .flag = &p.json },
		{ 0 },
	};
	const struct cli_parse cp = {
		.verb = "pull", .shortopts = "h", .longopts = long_options,
		.help = cmd_pull_usage,
		.unknown = "unknown option", .vars = vars, .mirrors = &m,
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
	if (cfs_registry_ref_parse(reference, &ref))
		return cli_usage("pull", "'%s' is not [REGISTRY[:PORT]/]REPO[:TAG|@sha256:DIGEST]",
				 reference);
	r = cli_build_check(&b, "pull");
	if (r)
		goto out;
	r = cli_mirrors_check_cacert(&m, "pull");
	if (r)
		goto out;
	r = find_creds(&p, &ref, &user, &password);
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
	p.ro.accepted = on_accepted;
	p.ro.stats = &p.stats;
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
	}
	r = cli_build_write(&b, root, reference, image);
	if (r == EXIT_OK && p.digest[0])
		fprintf(stderr, "Digest: %s\n", p.digest);
	if (r == EXIT_OK && p.json)
		r = print_json(&p, reference, &ref, image) ? EXIT_FAIL : cli_close_stdout();
out:
	forget(user);
	forget(password);
	free(p.layers);
	free(p.passed);
	free(origin);
	cfs_policy_free(policy);
	cfs_registry_ref_free(&ref);
	return r;
}
