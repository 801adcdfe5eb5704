// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Fuzz target for the documents of container images: an OCI layout's
 * index.json, an image manifest, an image config, and a docker-archive's
 * manifest.json. The first byte of the input chooses which one the rest
 * is; the others are written valid around it (named by its digest where a
 * descriptor names it), with one small layer, into a scratch directory,
 * and the image is read as build --from-oci reads it. Nothing may crash or
 * leak, whatever the document says.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfs/oci.h"
#include "fuzz.h"

static const struct cfs_build_options opts = { .threads = 1 };
static char dir[] = "/tmp/cfs-fuzz-oci.XXXXXX";
static bool ready;

/* A tar of one file "f" holding "hi\n": the image's only layer. */
static uint8_t layer[4 * 512];
static char layer_digest[65], config_digest[65], manifest_digest[65];
static char *config, *manifest;

static void hex_sha256(const void *data, size_t len, char hex[65])
{
	unsigned char md[32];
	unsigned int n;

	if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32)
		fuzz_fail("sha256");
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
}

static void put(const char *name, const void *data, size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd) < 0)
		fuzz_fail("writing '%s': %s", path, strerror(errno));
}

/* Write @data as a blob; its hex digest in @hex. */
static void put_blob(const void *data, size_t len, char hex[65])
{
	char name[128];

	hex_sha256(data, len, hex);
	snprintf(name, sizeof(name), "blobs/sha256/%s", hex);
	put(name, data, len);
}

static void unlink_blob(const char *hex)
{
	char path[256];

	if (strcmp(hex, layer_digest) == 0 || strcmp(hex, config_digest) == 0 ||
	    strcmp(hex, manifest_digest) == 0)
		return;
	snprintf(path, sizeof(path), "%s/blobs/sha256/%s", dir, hex);
	unlink(path);
}

static void tar_header(uint8_t *h, const char *name, size_t size)
{
	unsigned int sum = 0;

	memset(h, 0, 512);
	snprintf((char *)h, 100, "%s", name);
	memcpy(h + 100, "0000644", 7);
	memcpy(h + 108, "0000000", 7);
	memcpy(h + 116, "0000000", 7);
	snprintf((char *)h + 124, 12, "%011zo", size);
	memcpy(h + 136, "00000000000", 11);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

static char *manifest_of(const char *cdigest, size_t clen)
{
	char *s;

	if (asprintf(&s,
		     "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
		     "\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\","
		     "\"digest\":\"sha256:%s\",\"size\":%zu},"
		     "\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\","
		     "\"digest\":\"sha256:%s\",\"size\":%zu}]}",
		     cdigest, clen, layer_digest, sizeof(layer)) < 0)
		fuzz_fail("asprintf");
	return s;
}

static void put_index(const char *mdigest, size_t mlen)
{
	char *s;

	if (asprintf(&s,
		     "{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":"
		     "\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"sha256:%s\","
		     "\"size\":%zu,\"platform\":{\"architecture\":\"amd64\",\"os\":\"linux\"}}]}",
		     mdigest, mlen) < 0)
		fuzz_fail("asprintf");
	put("index.json", s, strlen(s));
	free(s);
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_oci: could not remove %s\n", dir);
}

static void setup(void)
{
	char path[256];

	if (!mkdtemp(dir))
		fuzz_fail("mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	snprintf(path, sizeof(path), "%s/blobs", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/blobs/sha256", dir);
	if (mkdir(path, 0755) < 0)
		fuzz_fail("mkdir '%s': %s", path, strerror(errno));
	put("oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}", 30);
	tar_header(layer, "f", 3);
	memcpy(layer + 512, "hi\n", 3);
	/* and two zero blocks end it */
	put_blob(layer, sizeof(layer), layer_digest);
	if (asprintf(&config,
		     "{\"architecture\":\"amd64\",\"os\":\"linux\",\"rootfs\":{\"type\":\"layers\","
		     "\"diff_ids\":[\"sha256:%s\"]}}",
		     layer_digest) < 0)
		fuzz_fail("asprintf");
	put_blob(config, strlen(config), config_digest);
	manifest = manifest_of(config_digest, strlen(config));
	put_blob(manifest, strlen(manifest), manifest_digest);
	ready = true;
}

static void build(const char *source)
{
	static const struct cfs_oci_platform amd64 = { .os = "linux", .arch = "amd64" };
	struct cfs_node *root = NULL;

	if (cfs_tree_from_oci(source, &amd64, &opts, &root) == 0)
		cfs_tree_finish(root, &opts);
	cfs_tree_free(root);
}

/* A docker-archive of @mj as manifest.json, with config.json and layer.tar. */
static void docker_archive(const uint8_t *mj, size_t len)
{
	const struct {
		const char *name;
		const void *data;
		size_t len;
	} m[] = { { "manifest.json", mj, len },
		  { "config.json", config, strlen(config) },
		  { "layer.tar", layer, sizeof(layer) } };
	size_t total = 1024;
	uint8_t *tar, *p;
	char source[256];

	for (size_t i = 0; i < 3; i++)
		total += 512 + (m[i].len + 511) / 512 * 512;
	tar = calloc(1, total);
	if (!tar)
		fuzz_fail("calloc");
	p = tar;
	for (size_t i = 0; i < 3; i++) {
		tar_header(p, m[i].name, m[i].len);
		memcpy(p + 512, m[i].data, m[i].len);
		p += 512 + (m[i].len + 511) / 512 * 512;
	}
	put("archive.tar", tar, total);
	free(tar);
	snprintf(source, sizeof(source), "docker-archive:%s/archive.tar", dir);
	build(source);
}

int fuzz_oci_one(const uint8_t *data, size_t size)
{
	char source[256], hex[65], chex[65];
	char *m;

	if (!ready)
		setup();
	if (size == 0)
		return 0;
	snprintf(source, sizeof(source), "oci:%s", dir);
	switch (data[0] % 4) {
	case 0: /* index.json */
		put("index.json", data + 1, size - 1);
		build(source);
		break;
	case 1: /* the image manifest */
		put_blob(data + 1, size - 1, hex);
		put_index(hex, size - 1);
		build(source);
		unlink_blob(hex);
		break;
	case 2: /* the image config */
		put_blob(data + 1, size - 1, chex);
		m = manifest_of(chex, size - 1);
		put_blob(m, strlen(m), hex);
		put_index(hex, strlen(m));
		build(source);
		unlink_blob(hex);
		unlink_blob(chex);
		free(m);
		break;
	default: /* a docker-archive's manifest.json */
		docker_archive(data + 1, size - 1);
		break;
	}
	return 0;
}

#ifndef CFS_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_oci_one(data, size);
}
#endif
