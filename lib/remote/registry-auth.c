// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Registry credentials from an auth file: containers-auth.json(5), the
 * file podman, skopeo and buildah write, whose "auths" member is also
 * Docker's config.json. Its entries are keyed by registry, or by a
 * registry and a namespace of it; the most specific one that matches a
 * reference wins, as in containers/image.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfs/registry.h"
#include "http-parse.h"
#include "json.h"
#include "base/internal.h"

#define MAX_AUTH_FILE (1u << 20)

/* @key without a scheme and Docker's /v1/ or /v2/ suffix, in @buf. */
static const char *normal_key(const char *key, char *buf, size_t size)
{
	size_t n;

	if (strncmp(key, "https://", 8) == 0)
		key += 8;
	else if (strncmp(key, "http://", 7) == 0)
		key += 7;
	snprintf(buf, size, "%s", key);
	n = strlen(buf);
	while (n > 0 && buf[n - 1] == '/')
		buf[--n] = '\0';
	if (n > 3 && (strcmp(buf + n - 3, "/v1") == 0 || strcmp(buf + n - 3, "/v2") == 0))
		buf[n - 3] = '\0';
	/* Docker writes Docker Hub as index.docker.io */
	if (strncmp(buf, "index.docker.io", 15) == 0 && (buf[15] == '\0' || buf[15] == '/'))
		memmove(buf, buf + 6, strlen(buf + 6) + 1);
	return buf;
}

/* How well the normalised @key matches "@host/@repo": its length, or 0. */
static size_t key_match(const char *key, const char *host, const char *repo)
{
	size_t h = strlen(host), k = strlen(key);

	if (strncmp(key, host, h) != 0)
		return 0;
	if (key[h] == '\0')
		return h;
	if (key[h] != '/' || strncmp(key + h + 1, repo, k - h - 1) != 0)
		return 0;
	/* a namespace ends at a '/' of the repository, or is all of it */
	return repo[k - h - 1] == '\0' || repo[k - h - 1] == '/' ? k : 0;
}

static int read_file(const char *path, char **text, size_t *len)
{
	struct stat st;
	ssize_t n;
	char *t;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_AUTH_FILE) {
		cfs_msg("auth file '%s': %s", path,
			S_ISREG(st.st_mode) ? "larger than 1 MiB" : "not a regular file");
		r = -EINVAL;
		goto out;
	}
	t = malloc((size_t)st.st_size + 1);
	if (!t) {
		r = -ENOMEM;
		goto out;
	}
	*len = 0;
	while (*len < (size_t)st.st_size &&
	       (n = read(fd, t + *len, (size_t)st.st_size - *len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			cfs_msg("auth file '%s': %s", path, strerror(errno));
			free(t);
			goto out;
		}
		*len += (size_t)n;
	}
	t[*len] = '\0';
	*text = t;
	r = 0;
out:
	close(fd);
	return r;
}

int cfs_registry_auth_lookup(const char *path, const char *host, const char *repo, char **user,
			     char **password)
{
	const json_t *auths, *best = NULL, *item;
	json_t *doc = NULL;
	char *text = NULL, *pair = NULL, *colon;
	size_t len = 0, best_len = 0;
	const char *b64, *key;
	int r;

	*user = *password = NULL;
	r = read_file(path, &text, &len);
	if (r)
		return r;
	r = cfs_json_parse(text, len, path, &doc);
	explicit_bzero(text, len);
	free(text);
	if (r)
		return r;
	auths = json_object_get(doc, "auths");
	if (!json_is_object(doc) || (auths && !json_is_object(auths))) {
		cfs_msg("auth file '%s': not an object with an \"auths\" object", path);
		r = -EINVAL;
		goto out;
	}
	json_object_foreach((json_t *)auths, key, item) {
		char buf[512];
		size_t m = key_match(normal_key(key, buf, sizeof(buf)), host, repo);

		if (m > best_len) {
			best_len = m;
			best = item;
		}
	}
	r = -ENOENT;
	if (!best)
		goto out;
	b64 = cfs_json_str(best, "auth");
	if (!b64 || !b64[0])
		goto out; /* an entry of a credential helper: not ours to read */
	r = cfs_base64_decode(b64, &pair, &len);
	if (r == 0 && (strlen(pair) != len || !(colon = strchr(pair, ':'))))
		r = -EINVAL;
	if (r == -EINVAL) {
		cfs_msg("auth file '%s': the \"auth\" of '%s' is not base64 of USER:PASSWORD", path,
			host);
		goto out;
	}
	if (r)
		goto out;
	*colon = '\0';
	*user = strdup(pair);
	*password = strdup(colon + 1);
	if (!*user || !*password) {
		free(*user);
		free(*password);
		*user = *password = NULL;
		r = -ENOMEM;
	}
out:
	if (pair) {
		explicit_bzero(pair, len);
		free(pair);
	}
	json_decref(doc);
	return r;
}
