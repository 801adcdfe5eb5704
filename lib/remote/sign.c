// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Signing at push: a GPG "simple signing" signature of the manifest
 * (containers-signature(5)), made through gpgme, and written to the
 * lookaside staging that containers-registries.d(5) configures for the
 * destination, where containers/image's tools (skopeo, podman) find it.
 *
 * The payload is {"critical": {"identity": {"docker-reference": REF},
 * "image": {"docker-manifest-digest": DIGEST}, "type": "atomic container
 * signature"}, "optional": {"creator": "cfsctl", "timestamp": T}}, signed
 * as an OpenPGP message (not detached, not armored) that holds it.
 *
 * registries.d: every *.yaml of the directory, each a mapping with
 * "default-docker" and "docker" (scopes: HOST[:PORT], HOST/NAMESPACE...,
 * HOST/REPO; the longest that matches the reference wins, else
 * default-docker), whose "lookaside-staging", "sigstore-staging",
 * "lookaside" or "sigstore" (the first given, in that order) is the
 * staging URL; only file:// can be written. Without one, containers/image's
 * default staging, file:///var/lib/containers/sigstore. The signature goes
 * to STAGING/REPO@sha256=HEX/signature-N, N the first free index.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <gpgme.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "json.h"
#include "sign.h"
#include "base/internal.h"
#include "cfs/push.h"

#define DEFAULT_STAGING "file:///var/lib/containers/sigstore"
#define MAX_CONFIG (1u << 20)

int cfs_sign_payload(const char *reference, const char *digest, char **out)
{
	json_t *p = json_pack("{s:{s:{s:s}, s:{s:s}, s:s}, s:{s:s, s:I}}", "critical", "identity",
			      "docker-reference", reference, "image", "docker-manifest-digest",
			      digest, "type", "atomic container signature", "optional", "creator",
			      "cfsctl", "timestamp", (json_int_t)time(NULL));

	*out = p ? cfs_json_dump(p, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(p);
	return *out ? 0 : -ENOMEM;
}

int cfs_sign_gpg(const char *payload, const char *fpr, const char *homedir, void **sig,
		 size_t *sig_len)
{
	gpgme_ctx_t ctx = NULL;
	gpgme_key_t key = NULL;
	gpgme_data_t in = NULL, out = NULL;
	gpgme_error_t e;
	int ret = -EIO;

	*sig = NULL;
	gpgme_check_version(NULL);
	e = gpgme_new(&ctx);
	if (!e)
		e = gpgme_set_protocol(ctx, GPGME_PROTOCOL_OpenPGP);
	if (!e && homedir)
		e = gpgme_ctx_set_engine_info(ctx, GPGME_PROTOCOL_OpenPGP, NULL, homedir);
	if (e) {
		cfs_msg("gpgme: %s", gpgme_strerror(e));
		goto out;
	}
	gpgme_set_armor(ctx, 0);
	e = gpgme_get_key(ctx, fpr, &key, 1);
	if (e || !key || !key->can_sign) {
		cfs_msg("--sign-by '%s': %s", fpr,
			e ? gpgme_strerror(e) : "no secret key that can sign");
		ret = -ENOKEY;
		goto out;
	}
	e = gpgme_signers_add(ctx, key);
	if (!e)
		e = gpgme_data_new_from_mem(&in, payload, strlen(payload), 0);
	if (!e)
		e = gpgme_data_new(&out);
	if (!e)
		e = gpgme_op_sign(ctx, in, out, GPGME_SIG_MODE_NORMAL);
	if (e) {
		cfs_msg("signing with '%s': %s", fpr, gpgme_strerror(e));
		goto out;
	}
	{
		size_t n;
		char *mem = gpgme_data_release_and_get_mem(out, &n);

		out = NULL;
		if (!mem || !n) {
			gpgme_free(mem);
			cfs_msg("signing with '%s': no signature came", fpr);
			goto out;
		}
		*sig = malloc(n);
		if (*sig)
			memcpy(*sig, mem, n);
		gpgme_free(mem);
		if (!*sig) {
			ret = -ENOMEM;
			goto out;
		}
		*sig_len = n;
	}
	ret = 0;
out:
	gpgme_data_release(in);
	gpgme_data_release(out);
	if (key)
		gpgme_key_unref(key);
	if (ctx)
		gpgme_release(ctx);
	return ret;
}

/*
 * The staging URL the registries.d file @path gives for @name (HOST/REPO),
 * into *@url if its scope is longer than *@best (0: default-docker, else
 * the scope's length + 1), which it then becomes.
 */
static int read_config(const char *path, const char *name, char **url, size_t *best)
{
	static const char *const keys[] = { "lookaside-staging", "sigstore-staging", "lookaside",
					    "sigstore" };
	yaml_parser_t parser;
	yaml_event_t ev;
	FILE *f = fopen(path, "re");
	/* path of keys: depth 1 "default-docker"/"docker", 2 scope (docker), then the key */
	char *stack[8] = { 0 }, *cand[2][4] = { { 0 } }, *scope = NULL;
	int depth = 0, ret = 0, done = 0, seq = 0;
	bool key_next[8] = { false };
	size_t scope_len = 0;
	struct stat st;

	if (!f) {
		cfs_msg("registries.d: '%s': %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fileno(f), &st) == 0 && st.st_size > MAX_CONFIG) {
		cfs_msg("registries.d: '%s': larger than %u bytes", path, MAX_CONFIG);
		fclose(f);
		return -EFBIG;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			cfs_msg("registries.d: '%s': line %zu: %s", path,
				parser.problem_mark.line + 1, parser.problem ? parser.problem : "bad YAML");
			ret = -EINVAL;
			break;
		}
		switch (ev.type) {
		case YAML_MAPPING_START_EVENT:
			if (depth >= 7 || seq) {
				cfs_msg("registries.d: '%s': nested too deeply", path);
				ret = -EINVAL;
				done = 1;
				break;
			}
			depth++;
			key_next[depth] = true;
			break;
		case YAML_MAPPING_END_EVENT:
			free(stack[depth]);
			stack[depth] = NULL;
			depth--;
			if (depth >= 1)
				key_next[depth] = true;
			break;
		case YAML_SCALAR_EVENT: {
			const char *v = (const char *)ev.data.scalar.value;

			if (depth < 1 || seq)
				break;
			if (key_next[depth]) {
				free(stack[depth]);
				stack[depth] = strdup(v);
				key_next[depth] = false;
				break;
			}
			key_next[depth] = true;
			/* a value: default-docker.KEY (depth 2) or docker.SCOPE.KEY (depth 3) */
			for (int k = 0; k < 4; k++) {
				if (!stack[depth] || strcmp(stack[depth], keys[k]) != 0)
					continue;
				if (depth == 2 && stack[1] && strcmp(stack[1], "default-docker") == 0 &&
				    !cand[0][k]) {
					cand[0][k] = strdup(v);
				} else if (depth == 3 && stack[1] && strcmp(stack[1], "docker") == 0 &&
					   stack[2]) {
					size_t l = strlen(stack[2]);

					if (strncmp(name, stack[2], l) == 0 &&
					    (name[l] == '\0' || name[l] == '/') &&
					    (!scope || l >= scope_len)) {
						if (!scope || strcmp(scope, stack[2]) != 0) {
							for (int j = 0; j < 4; j++) {
								free(cand[1][j]);
								cand[1][j] = NULL;
							}
							free(scope);
							scope = strdup(stack[2]);
							scope_len = l;
						}
						if (!cand[1][k])
							cand[1][k] = strdup(v);
					}
				}
			}
			break;
		}
		case YAML_SEQUENCE_START_EVENT:
			seq++;
			break;
		case YAML_SEQUENCE_END_EVENT:
			if (--seq == 0 && depth >= 1)
				key_next[depth] = true;
			break;
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	fclose(f);
	for (int i = 0; i < 8; i++)
		free(stack[i]);
	if (ret == 0) {
		/* a scope of this file beats what an earlier one gave, if longer */
		int which = scope ? 1 : 0;
		size_t len = scope ? scope_len + 1 : 0;

		for (int k = 0; k < 4; k++)
			if (cand[which][k] && (len > *best || !*url)) {
				free(*url);
				*url = strdup(cand[which][k]);
				*best = len;
				break;
			}
	}
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 4; k++)
			free(cand[i][k]);
	free(scope);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cfs_sign_staging(const char *dir, const char *name, char **url)
{
	const char *d = dir ? dir : "/etc/containers/registries.d";
	char **names = NULL;
	size_t n = 0, best = 0;
	struct dirent *de;
	DIR *dh;
	int ret = 0;

	*url = NULL;
	dh = opendir(d);
	if (!dh) {
		if (dir || errno != ENOENT) {
			ret = -errno;
			cfs_msg("registries.d '%s': %s", d, strerror(errno));
			return ret;
		}
	} else {
		while ((de = readdir(dh))) {
			size_t l = strlen(de->d_name);
			char **g;

			if (l < 6 || strcmp(de->d_name + l - 5, ".yaml") != 0)
				continue;
			g = realloc(names, (n + 1) * sizeof(*names));
			if (!g || !(g[n] = strdup(de->d_name))) {
				names = g ? g : names;
				ret = -ENOMEM;
				break;
			}
			names = g;
			n++;
		}
		closedir(dh);
		qsort(names, n, sizeof(*names), cmp_str);
		for (size_t i = 0; ret == 0 && i < n; i++) {
			char *path = NULL;

			if (asprintf(&path, "%s/%s", d, names[i]) < 0)
				ret = -ENOMEM;
			else
				ret = read_config(path, name, url, &best);
			free(path);
		}
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
	}
	if (ret == 0 && !*url && !(*url = strdup(DEFAULT_STAGING)))
		ret = -ENOMEM;
	if (ret) {
		free(*url);
		*url = NULL;
	}
	return ret;
}

int cfs_sign_store(const char *url, const char *repo, const char *digest, const void *sig,
		   size_t len, char **written)
{
	char *dir = NULL, *path = NULL, *tmp = NULL;
	int fd = -1, ret;

	*written = NULL;
	if (strncmp(url, "file://", 7) != 0 || url[7] != '/') {
		cfs_msg("the signature staging '%s' is not a file:// URL: only those can be written",
			url);
		return -EOPNOTSUPP;
	}
	if (asprintf(&dir, "%s/%s@sha256=%s", url + 7, repo, digest + 7) < 0)
		return -ENOMEM;
	ret = cfs_mkdir_p(dir, 0755);
	if (ret) {
		cfs_msg("the signature staging '%s': %s", dir, strerror(-ret));
		goto out;
	}
	if (asprintf(&tmp, "%s/.signature.tmp.XXXXXX", dir) < 0) {
		tmp = NULL;
		ret = -ENOMEM;
		goto out;
	}
	fd = mkstemp(tmp);
	if (fd < 0 || write(fd, sig, len) != (ssize_t)len || fsync(fd) < 0) {
		ret = -errno ? -errno : -EIO;
		cfs_msg("writing a signature in '%s': %s", dir, strerror(-ret));
		goto out;
	}
	/* the first free signature-N: link() never replaces one */
	for (unsigned int i = 1; i < 1000; i++) {
		free(path);
		if (asprintf(&path, "%s/signature-%u", dir, i) < 0) {
			path = NULL;
			ret = -ENOMEM;
			goto out;
		}
		if (link(tmp, path) == 0) {
			*written = path;
			path = NULL;
			ret = 0;
			goto out;
		}
		if (errno != EEXIST) {
			ret = -errno;
			cfs_msg("'%s': %s", path, strerror(errno));
			goto out;
		}
	}
	cfs_msg("'%s': a thousand signatures already", dir);
	ret = -EEXIST;
out:
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(path);
	free(dir);
	return ret;
}
