// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl pull: the image of a container image in a registry, its layers
 * streamed from the network into the tree and the digest store. The
 * fetching and the tree are lib/registry.c and lib/oci.c; the build options
 * and the writing are build's (build.c), the download options fetch's
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

enum {
	OPT_PLAIN_HTTP = CLI_OPT_BUILD_END,
	OPT_LAYERS_CACHE,
	OPT_CREDS,
	OPT_AUTHFILE,
	OPT_SPEED_LIMIT,
	OPT_SPEED_TIME,
	OPT_DOCUMENT_TIMEOUT,
	OPT_FULL_PULL,
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
	CLI_DOWNLOAD_LONG_OPTIONS,
	CLI_OPTION_JSON,
	CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

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
		.unknown = "unknown option", .vars = vars, .mirrors = &m, .build = &b,
		.take = pull_option, .ctx = &p,
	};
	struct cfs_node *root = NULL;
	const char *reference = NULL, *image = NULL;
	char *user = NULL, *password = NULL;
	int r;

	cli_mirrors_init(&m);
	r = cli_build_parse(&cp, "REFERENCE", argc, argv, &reference, &image);
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
	p.ro.stats = &p.stats;
	r = cfs_tree_from_registry(reference, &p.ro, b.have_platform ? &b.platform : NULL, &b.o,
				   &root);
	cli_progress_end(&p.progress);
	if (r) {
		cli_build_end(&b);
		r = cli_build_fail("pulling", reference, r);
		goto out;
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
	cfs_registry_ref_free(&ref);
	return r;
}
