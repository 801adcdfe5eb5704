// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Replays the committed fuzz regression inputs (tests/data/fuzz-regressions/
 * image, dump and toc, and tar, oci and registry when they hold any)
 * through the same entry points the fuzz targets use, but
 * without libFuzzer, so that make check runs them with every compiler and
 * under the sanitizer build. An input that once crashed, hung or broke a
 * property must now pass; a broken property aborts. The directories are
 * found below $CFS_TOP (the runner sets it), else below the current one.
 */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int failures;

static int read_file(const char *path, uint8_t **data, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	size_t n;

	if (!f || fstat(fileno(f), &st) < 0) {
		if (f)
			fclose(f);
		return -1;
	}
	*len = (size_t)st.st_size;
	*data = malloc(*len ? *len : 1);
	n = *data ? fread(*data, 1, *len, f) : 0;
	fclose(f);
	if (n != *len) {
		free(*data);
		return -1;
	}
	return 0;
}

/*
 * Feed each file of @dir to @fn; return how many there were. A missing
 * directory is an error unless @optional.
 */
static int replay(const char *top, const char *dir, int (*fn)(const uint8_t *, size_t),
		  bool optional)
{
	char path[4096];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/tests/data/fuzz-regressions/%s", top, dir);
	d = opendir(path);
	if (!d && optional && errno == ENOENT)
		return 0;
	if (!d) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		failures++;
		return 0;
	}
	while ((de = readdir(d))) {
		uint8_t *data;
		size_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/tests/data/fuzz-regressions/%s/%s", top, dir,
			 de->d_name);
		if (read_file(path, &data, &len) < 0) {
			fprintf(stderr, "%s: cannot read\n", path);
			failures++;
			continue;
		}
		printf("%s/%s (%zu bytes)\n", dir, de->d_name, len);
		fflush(stdout);
		fn(data, len); /* aborts on a broken property */
		free(data);
		n++;
	}
	closedir(d);
	return n;
}

int main(void)
{
	const char *top = getenv("CFS_TOP");
	int n_image, n_dump, n_toc, n_other;

	if (!top)
		top = ".";
	n_image = replay(top, "image", fuzz_image_one, false);
	n_dump = replay(top, "dump", fuzz_dump_one, false);
	n_toc = replay(top, "toc", fuzz_toc_one, false);
	n_other = replay(top, "tar", fuzz_tar_one, true);
	n_other += replay(top, "oci", fuzz_oci_one, true);
	n_other += replay(top, "registry", fuzz_registry_one, true);
	n_other += replay(top, "policy", fuzz_policy_one, true);
	n_other += replay(top, "sigpayload", fuzz_sigpayload_one, true);
	if (n_image == 0 || n_dump == 0 || n_toc == 0) {
		fprintf(stderr, "no regression inputs found (image: %d, dump: %d, toc: %d)\n",
			n_image, n_dump, n_toc);
		failures++;
	}
	printf("replayed %d image, %d dump, %d toc and %d tar, oci, registry, policy and payload inputs\n",
	       n_image, n_dump, n_toc, n_other);
	return failures ? 1 : 0;
}
