// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl push: a directory published as a container image in a registry.
 * The layer, the config, the manifest and the uploads are
 * lib/remote/push.c's; this file parses the options, finds the
 * credentials (creds.c), says how each blob went, and writes the digest
 * of the manifest: on stderr, to --digestfile, in --json.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/push.h"

enum {
	OPT_PLAIN_HTTP = 256,
	OPT_CREDS,
	OPT_AUTHFILE,
	OPT_COMPRESSION,
	OPT_DIGESTFILE,
	OPT_PLATFORM,
	OPT_MOUNT_FROM,
	OPT_SIGN_BY,
	OPT_GPG_HOMEDIR,
	OPT_REGISTRIES_D,
	OPT_SIGN_BY_SIGSTORE,
	OPT_NO_SEAL,
};

static const struct option long_options[] = {
	{ "plain-http", no_argument, NULL, OPT_PLAIN_HTTP },
	{ "creds", required_argument, NULL, OPT_CREDS },
	{ "authfile", required_argument, NULL, OPT_AUTHFILE },
	{ "compression", required_argument, NULL, OPT_COMPRESSION },
	{ "digestfile", required_argument, NULL, OPT_DIGESTFILE },
	{ "platform", required_argument, NULL, OPT_PLATFORM },
	{ "mount-from", required_argument, NULL, OPT_MOUNT_FROM },
	{ "sign-by", required_argument, NULL, OPT_SIGN_BY },
	{ "gpg-homedir", required_argument, NULL, OPT_GPG_HOMEDIR },
	{ "registries.d", required_argument, NULL, OPT_REGISTRIES_D },
	{ "sign-by-sigstore-private-key", required_argument, NULL, OPT_SIGN_BY_SIGSTORE },
	{ "no-seal", no_argument, NULL, OPT_NO_SEAL },
	CLI_OPTION_REPO,
	CLI_DOWNLOAD_LONG_OPTIONS,
	CLI_OPTION_JSON,
	CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

/* cfsctl push --help, and its man page (docs/mkman.py) */
const char cmd_push_usage[] =
	  "Usage: cfsctl push [OPTIONS] DIR REFERENCE\n"
	  "       cfsctl push [OPTIONS] oci:LAYOUT[:TAG] REFERENCE\n"
	  "       cfsctl push [OPTIONS] --repo DIR NAME REFERENCE\n"
	  "\n"
	  "Publish the directory DIR as a container image of one layer at\n"
	  "REFERENCE, [REGISTRY[:PORT]/]REPO[:TAG] (TAG 'latest' when none is\n"
	  "given, completed as for pull), over the OCI distribution API: by https,\n"
	  "or by http with --plain-http. With --repo, the image NAME (or digest)\n"
	  "of the repository DIR is the tree, each file's content read from the\n"
	  "repository's objects. With oci:LAYOUT[:TAG], the image TAG (without\n"
	  "one, the layout's only image) of an OCI image layout is published: its\n"
	  "config and layers keep their bytes and digests, each checked against\n"
	  "its descriptor before anything is sent (an image index is refused),\n"
	  "and its manifest gets the seal (below): it is written anew (canonical\n"
	  "JSON, its other annotations kept), unless it holds that seal already\n"
	  "(then it goes as it is; another seal is refused before anything is\n"
	  "sent). With --no-seal, or for a docker v2 manifest, the manifest goes\n"
	  "as it is, unsealed. Only with --compression given is each layer recompressed:\n"
	  "its tar stream (read plain, gzip or zstd) is kept byte for byte and\n"
	  "checked against the config's diff_id, so the config goes unchanged;\n"
	  "the manifest is written anew (canonical JSON, the layers' other\n"
	  "annotations kept), and the same layout gives the same digests. A\n"
	  "docker v2 manifest's layers are not recompressed. A layer is not\n"
	  "recompressed either when the push blob cache,\n"
	  "$XDG_CACHE_HOME/cfs/push-blobs (else ~/.cache/cfs/push-blobs), knows\n"
	  "the blob its tar stream (its diff_id) became in that compression, and\n"
	  "the registry has that blob, of that size (a HEAD): its descriptor is\n"
	  "then the cache's. Each layer recompressed is recorded there, one file\n"
	  "each, written to a temporary name and renamed; an entry that cannot be\n"
	  "read or names a blob the registry lacks only costs its recompression.\n"
	  "The same cache keeps the seal of oci:LAYOUT's layers, keyed by the\n"
	  "config's diff_ids in order and cfs's version: a seal found there is\n"
	  "taken without merging the layers again (a line on stderr says so, and\n"
	  "seal_from_cache in --json); an entry that is not 64 lowercase hex\n"
	  "digits is no entry, and the seal computed is written in its place.\n"
	  "\n"
	  "The layer holds the tree as build reads a directory:\n"
	  "names, types, modes, uids and gids, mtimes with nanoseconds, xattrs,\n"
	  "symlink targets, device numbers, and hardlinks (a second name of an\n"
	  "inode links to the first in name order); nothing else (no user or group\n"
	  "names, no atime or ctime). The same tree gives the same layer, config\n"
	  "and manifest digests. The config names no creation time; its os and\n"
	  "architecture are this machine's, or --platform's.\n"
	  "\n"
	  "The layer is written to a temporary file first. Each blob (the layer,\n"
	  "then the config) is uploaded only when a HEAD request finds it missing\n"
	  "from the repository; the manifest is written last, so a push that\n"
	  "fails changes no tag. An upload Location on another host than the\n"
	  "registry's, a 202 answer without a Location, or an answer with more\n"
	  "than 64 KiB of headers is refused; no redirect is followed. A\n"
	  "registry that answers 401 with a bearer challenge is asked for a token\n"
	  "with the scope push,pull.\n"
	  "\n"
	  "Options:\n"
	  "  --compression=zstd:chunked|zstd|gzip\n"
	  "                      the layer's compression (default zstd:chunked:\n"
	  "                      a zstd frame per chunk of a file, cut by the\n"
	  "                      rolling checksum, runs of zeros as zeros chunks,\n"
	  "                      with a table of contents holding each file's\n"
	  "                      and chunk's sha256, a tar-split\n"
	  "                      whose digest the TOC holds, and the footer, as\n"
	  "                      containers/storage writes them, for partial pulls;\n"
	  "                      for oci:LAYOUT, none unless given: the layout's\n"
	  "                      blobs as they are)\n"
	  "  --plain-http        talk http:// to the registry, and accept an http://\n"
	  "                      token realm (default: https:// only)\n"
	  "  --platform=OS/ARCH[/VARIANT]\n"
	  "                      the platform the config names (default: this\n"
	  "                      machine's)\n"
	  "  --mount-from=REPO   a blob the repository lacks is first asked to be\n"
	  "                      mounted from the repository REPO of the same\n"
	  "                      registry (?mount=&from=), and uploaded only when\n"
	  "                      the registry does not\n"
	  "  --repo=DIR          the repository whose image NAME is pushed\n"
	  "  --sign-by=FINGERPRINT\n"
	  "                      sign the manifest with that GPG secret key\n"
	  "                      (containers-signature(5) simple signing, the\n"
	  "                      identity REGISTRY/REPO:TAG), made before anything\n"
	  "                      is sent, and written once the manifest is to the\n"
	  "                      lookaside staging (file:// only) that\n"
	  "                      containers-registries.d(5) names for REFERENCE:\n"
	  "                      lookaside-staging, sigstore-staging, lookaside or\n"
	  "                      sigstore, of the longest matching docker scope,\n"
	  "                      else default-docker, else\n"
	  "                      file:///var/lib/containers/sigstore; as\n"
	  "                      STAGING/REPO@sha256=HEX/signature-N\n"
	  "  --gpg-homedir=DIR   the GnuPG home of --sign-by's key\n"
	  "  --sign-by-sigstore-private-key=FILE\n"
	  "                      sign the manifest as cosign does with the ECDSA\n"
	  "                      P-256 private key of the PEM file FILE\n"
	  "                      (unencrypted; cosign's encrypted format is\n"
	  "                      refused): a simple-signing payload (type 'cosign\n"
	  "                      container image signature', the identity\n"
	  "                      REGISTRY/REPO:TAG), made before anything is sent,\n"
	  "                      and once the manifest is written appended as a\n"
	  "                      layer, its signature in the annotation\n"
	  "                      dev.cosignproject.cosign/signature, to the\n"
	  "                      manifest tagged sha256-<hex>.sig in REPO (made if\n"
	  "                      missing; the other signatures kept; nothing added\n"
	  "                      when this key's signature of the same payload is\n"
	  "                      there)\n"
	  "  --no-seal           oci:LAYOUT only: no seal; the layout's manifest\n"
	  "                      goes as it is (unless --compression is given)\n"
	  "  --registries.d=DIR  the registries.d directory (default\n"
	  "                      /etc/containers/registries.d)\n"
	  "  --creds=USER[:PASSWORD]\n"
	  "                      log in as USER: the password is asked for on the\n"
	  "                      terminal, or read as one line of stdin, when it is\n"
	  "                      not given\n"
	  "  --authfile=FILE     the credentials for the registry in FILE, in\n"
	  "                      containers-auth.json(5) format; without --creds or\n"
	  "                      --authfile, the files pull reads\n"
	  "  --retries=N         make a request again up to N times after a\n"
	  "                      transient error (default 3); an upload cut off\n"
	  "                      goes on from where the registry says it got\n"
	  "  --timeout=SECONDS   give up on a connection attempt, or a transfer that\n"
	  "                      moves nothing, after SECONDS (default 30)\n"
	  "  --cacert=FILE       trust the CA certificates in FILE (PEM) for https\n"
	  "  --digestfile=FILE   write the manifest's digest to FILE (written to a\n"
	  "                      temporary name and renamed into place)\n"
	  "  --json              print what was pushed as JSON on stdout: the\n"
	  "                      reference, its full name, the manifest digest,\n"
	  "                      the layers and the config (digest, size, diff_id,\n"
	  "                      uploaded, mounted, and for a layer\n"
	  "                      from_blob_cache: not recompressed), the seal,\n"
	  "                      seal_from_cache (the seal taken from the push\n"
	  "                      blob cache),\n"
	  "                      the signature file\n"
	  "                      (--sign-by) and the sigstore signature manifest\n"
	  "                      (--sign-by-sigstore-private-key), or null,\n"
	  "                      bytes_uploaded and bytes_skipped\n"
	  "  -h, --help          show this help\n"
	  "\n"
	  "The manifest is sealed: its annotation\n"
	  "composefs.merged.erofs.v1.fsverity-sha256-12 is the fs-verity digest\n"
	  "of the composefs 1.0 (EROFS) image of the tree, as build\n"
	  "--format=erofs and pull --format=erofs make it with their defaults;\n"
	  "for oci:LAYOUT, the tree of its layers merged as pull and build\n"
	  "--from-oci merge them (whiteouts, opaque directories), read from the\n"
	  "layout. pull checks it, whatever its --format.\n"
	  "\n"
	  "A line for each blob on stderr says whether it was uploaded or the\n"
	  "registry had it; at the end 'Digest: sha256:...' on stderr names the\n"
	  "manifest written, and 'Seal: <hex>' its seal. Credentials and tokens go\n"
	  "to the registry's host and the token realm only.\n"
	  "\n"
	  "Examples:\n"
	  "  cfsctl push --plain-http rootfs/ localhost:5000/app:1.0\n"
	  "  cfsctl push --repo /var/lib/cfs app registry.example.org/team/app:1.2\n"
	  "  cfsctl push --compression=zstd:chunked oci:layout:1.2 registry.example.org/team/app:1.2\n"
	  "  cfsctl push --sign-by FPR rootfs/ registry.example.org/team/app:2\n"
	  "  cfsctl push --sign-by-sigstore-private-key cosign.pem rootfs/ registry.example.org/team/app:2\n"
	  "\n"
	  "Exit status: 0 success, 1 failure, 2 usage error.\n";

struct push {
	const char *creds, *authfile, *digestfile, *mount_from;
	const char *sign_by, *gpg_homedir, *registries_d, *sign_by_sigstore;
	enum cfs_push_compression comp;
	bool comp_given, no_seal;
	struct cfs_oci_platform platform;
	bool have_platform;
};

static int push_option(void *ctx, int c, const char *arg)
{
	struct push *p = ctx;

	switch (c) {
	case OPT_CREDS:
		if (!arg[0] || arg[0] == ':')
			return cli_usage("push", "--creds wants USER[:PASSWORD]");
		p->creds = arg;
		return EXIT_OK;
	case OPT_AUTHFILE:
		if (!arg[0])
			return cli_usage("push", "--authfile needs a file");
		p->authfile = arg;
		return EXIT_OK;
	case OPT_DIGESTFILE:
		if (!arg[0])
			return cli_usage("push", "--digestfile needs a file");
		p->digestfile = arg;
		return EXIT_OK;
	case OPT_COMPRESSION:
		if (strcmp(arg, "zstd:chunked") == 0)
			p->comp = CFS_PUSH_ZSTD_CHUNKED;
		else if (strcmp(arg, "zstd") == 0)
			p->comp = CFS_PUSH_ZSTD;
		else if (strcmp(arg, "gzip") == 0)
			p->comp = CFS_PUSH_GZIP;
		else
			return cli_usage("push", "--compression wants zstd:chunked, zstd or gzip, not '%s'",
					 arg);
		p->comp_given = true;
		return EXIT_OK;
	case OPT_SIGN_BY:
	case OPT_GPG_HOMEDIR:
	case OPT_REGISTRIES_D:
		if (!arg[0])
			return cli_usage("push", "--%s needs a value",
					 c == OPT_SIGN_BY      ? "sign-by" :
					 c == OPT_GPG_HOMEDIR ? "gpg-homedir" :
								"registries.d");
		*(c == OPT_SIGN_BY ? &p->sign_by : c == OPT_GPG_HOMEDIR ? &p->gpg_homedir :
								 &p->registries_d) = arg;
		return EXIT_OK;
	case OPT_SIGN_BY_SIGSTORE:
		if (!arg[0])
			return cli_usage("push", "--sign-by-sigstore-private-key needs a file");
		p->sign_by_sigstore = arg;
		return EXIT_OK;
	case OPT_NO_SEAL:
		p->no_seal = true;
		return EXIT_OK;
	case OPT_MOUNT_FROM:
		if (!arg[0])
			return cli_usage("push", "--mount-from needs a repository");
		p->mount_from = arg;
		return EXIT_OK;
	case OPT_PLATFORM:
		if (cfs_oci_platform_parse(arg, &p->platform))
			return cli_usage("push", "--platform wants OS/ARCH[/VARIANT], not '%s'", arg);
		p->have_platform = true;
		return EXIT_OK;
	default:
		return -1;
	}
}

static void on_blob(void *ctx, const char *kind, const struct cfs_push_blob *b, bool done)
{
	(void)ctx;
	if (done)
		fprintf(stderr, "push: %s %s: %llu bytes, %s\n", kind, b->digest,
			(unsigned long long)b->size,
			b->mounted  ? "mounted from --mount-from" :
			b->uploaded ? "uploaded" :
			b->reused   ? "the registry has it already (not recompressed: the blob cache knew it)" :
				      "the registry has it already");
	else if (isatty(STDERR_FILENO))
		fprintf(stderr, "push: %s %s: %llu bytes, made\n", kind, b->digest,
			(unsigned long long)b->size);
}

/* @digest and a newline into @path, through a temporary name. */
static int write_digestfile(const char *path, const char *digest)
{
	char *tmp = NULL;
	FILE *f = NULL;
	int fd, e = 0;

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkstemp(tmp);
	if (fd < 0) {
		e = errno;
		goto out;
	}
	f = fdopen(fd, "w");
	if (!f) {
		e = errno;
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (fprintf(f, "%s\n", digest) < 0 || fflush(f) || fsync(fileno(f)))
		e = errno ? errno : EIO;
	if (fclose(f) && !e)
		e = errno;
	if (!e && rename(tmp, path))
		e = errno;
	if (e)
		unlink(tmp);
out:
	if (e)
		cli_error("push: --digestfile '%s': %s", path, strerror(e));
	free(tmp);
	return e ? -e : 0;
}

static json_t *blob_json(const struct cfs_push_blob *b)
{
	json_t *j = json_pack("{s:s, s:I, s:b, s:b}", "digest", b->digest, "size",
			      (json_int_t)b->size, "uploaded", b->uploaded, "mounted", b->mounted);

	if (j && b->diff_id[0])
		cli_json_set(j, "diff_id", cli_json_text(b->diff_id));
	if (j && b->diff_id[0])
		cli_json_set(j, "from_blob_cache", json_boolean(b->reused));
	return j;
}

/*
 * The push blob cache's directory: $XDG_CACHE_HOME/cfs/push-blobs, else
 * $HOME/.cache/cfs/push-blobs (malloc()ed); NULL without either.
 */
static char *blob_cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir = NULL;

	if (xdg && xdg[0] == '/') {
		if (asprintf(&dir, "%s/cfs/push-blobs", xdg) < 0)
			dir = NULL;
	} else if (home && home[0] == '/') {
		if (asprintf(&dir, "%s/.cache/cfs/push-blobs", home) < 0)
			dir = NULL;
	}
	return dir;
}

static int print_json(const char *reference, const struct cfs_registry_ref *ref,
		      const struct cfs_push_result *res)
{
	json_t *doc = json_object();
	char *name = NULL;
	int r;

	if (asprintf(&name, "%s/%s:%s", ref->host, ref->repo, ref->tag) < 0)
		name = NULL;
	cli_json_set(doc, "reference", cli_json_text(reference));
	cli_json_set(doc, "name", name ? cli_json_text(name) : NULL);
	cli_json_set(doc, "digest", cli_json_text(res->manifest_digest));
	json_t *layers = json_array();

	for (size_t i = 0; i < res->n_layers; i++)
		cli_json_push(layers, blob_json(&res->layers[i]));
	cli_json_set(doc, "layers", layers);
	cli_json_set(doc, "config", blob_json(&res->config));
	cli_json_set(doc, "seal", res->seal[0] ? cli_json_text(res->seal) : json_null());
	cli_json_set(doc, "seal_from_cache", json_boolean(res->seal_from_cache));
	cli_json_set(doc, "signature", res->signature ? cli_json_text(res->signature) : json_null());
	cli_json_set(doc, "sigstore_signature", res->sigstore_signature ?
			     cli_json_text(res->sigstore_signature) : json_null());
	cli_json_set(doc, "bytes_uploaded", json_integer((json_int_t)res->uploaded));
	cli_json_set(doc, "bytes_skipped", json_integer((json_int_t)res->skipped));
	free(name);
	r = cli_json_print(doc, CLI_JSON_COMPACT);
	if (r < 0)
		cli_error("push: '%s': the JSON summary: %s", reference, strerror(-r));
	return r;
}

int cmd_push(int argc, char **argv)
{
	struct push p = { .comp = CFS_PUSH_ZSTD_CHUNKED };
	struct cfs_registry_options ro = { .speed_limit = 0, .push = true };
	struct cfs_push_options po = { 0 };
	struct cfs_push_result res = { 0 };
	struct cfs_registry_ref ref = { 0 };
	struct cli_mirrors m;
	bool json = false;
	const char *repo = NULL;
	const struct cli_var vars[] = {
		{ OPT_PLAIN_HTTP, .flag = &ro.plain_http },
		{ CLI_OPT_JSON, .flag = &json },
		{ 0 },
	};
	const struct cli_parse cp = {
		.verb = "push", .shortopts = "h", .longopts = long_options,
		.help = cmd_push_usage, .vars = vars,
		.mirrors = &m, .take = push_option, .ctx = &p, .repo = &repo,
	};
	const char *dir, *reference;
	char *image = NULL, *objects = NULL, *layout = NULL, *cache = NULL;
	char *user = NULL, *password = NULL;
	int r;

	cli_mirrors_init(&m);
	r = cli_parse(&cp, argc, argv);
	if (r >= 0)
		return r;
	if (argc - optind != 2)
		return cli_usage("push", repo ? "need NAME and REFERENCE" :
						"need DIR (or oci:LAYOUT[:TAG]) and REFERENCE");
	dir = argv[optind];
	reference = argv[optind + 1];
	if (p.creds && p.authfile)
		return cli_usage("push", "--creds and --authfile: choose one");
	if ((p.gpg_homedir || p.registries_d) && !p.sign_by)
		return cli_usage("push", "--gpg-homedir and --registries.d go with --sign-by");
	if (p.no_seal && (repo || strncmp(dir, "oci:", 4) != 0))
		return cli_usage("push", "--no-seal goes with oci:LAYOUT: a directory's or a repository's image is always sealed");
	if (cfs_registry_ref_parse(reference, &ref))
		return cli_usage("push", "'%s' is not [REGISTRY[:PORT]/]REPO[:TAG]", reference);
	if (ref.digest) {
		cfs_registry_ref_free(&ref);
		return cli_usage("push", "'%s': a push names a tag, not a digest", reference);
	}
	r = cli_mirrors_check_cacert(&m, "push");
	if (r)
		goto out;
	r = cli_find_creds(p.creds, p.authfile, &ref, &user, &password);
	if (r) {
		r = EXIT_FAIL;
		goto out;
	}
	ro.username = user;
	ro.password = password;
	ro.cainfo = m.cacert;
	ro.retries = m.retries;
	ro.timeout = m.timeout;
	po.compression = p.comp;
	po.recompress = p.comp_given;
	po.no_seal = p.no_seal;
	if (p.comp_given || (!repo && strncmp(dir, "oci:", 4) == 0))
		po.blob_cache = cache = blob_cache_dir();
	po.platform = p.have_platform ? &p.platform : NULL;
	po.blob = on_blob;
	po.mount_from = p.mount_from;
	po.sign_by = p.sign_by;
	po.gpg_homedir = p.gpg_homedir;
	po.registries_d = p.registries_d;
	po.sign_by_sigstore = p.sign_by_sigstore;
	if (repo) {
		r = cli_repo_image("push", repo, dir, &image, NULL, NULL);
		if (r != EXIT_OK)
			goto out;
		if (asprintf(&objects, "%s/objects", repo) < 0) {
			objects = NULL;
			r = -ENOMEM;
		} else {
			r = cfs_push_image(image, objects, &ref, &ro, &po, &res);
		}
	} else if (strncmp(dir, "oci:", 4) == 0) {
		char *colon, *tag = NULL;

		layout = strdup(dir + 4);
		if (!layout) {
			r = -ENOMEM;
		} else {
			colon = strrchr(layout, ':');
			if (colon && !strchr(colon, '/')) {
				*colon = '\0';
				tag = colon + 1;
			}
			r = cfs_push_oci(layout, tag, &ref, &ro, &po, &res);
		}
	} else {
		r = cfs_push_dir(dir, &ref, &ro, &po, &res);
	}
	if (r) {
		cli_error("push: '%s' to '%s': %s", dir, reference, strerror(-r));
		cfs_push_result_free(&res);
		r = EXIT_FAIL;
		goto out;
	}
	if (res.seal_from_cache)
		fprintf(stderr, "push: the seal %s from the push blob cache (the layers not merged again)\n",
			res.seal);
	fprintf(stderr, "Digest: %s\n", res.manifest_digest);
	if (res.seal[0])
		fprintf(stderr, "Seal: %s\n", res.seal);
	if (res.signature)
		fprintf(stderr, "push: signature written to %s\n", res.signature);
	if (res.sigstore_signature)
		fprintf(stderr, "push: sigstore signature %s %s\n",
			res.sigstore_added ? "attached in" : "already in", res.sigstore_signature);
	r = EXIT_OK;
	if (p.digestfile && write_digestfile(p.digestfile, res.manifest_digest))
		r = EXIT_FAIL;
	if (r == EXIT_OK && json)
		r = print_json(reference, &ref, &res) ? EXIT_FAIL : cli_close_stdout();
	cfs_push_result_free(&res);
out:
	free(image);
	free(objects);
	free(layout);
	free(cache);
	cli_forget(user);
	cli_forget(password);
	cfs_registry_ref_free(&ref);
	return r;
}
