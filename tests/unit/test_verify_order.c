// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Both formats' verify walk the same way and so judge a directory's order
 * alike: an image of each format, with one name of a sorted directory
 * changed so that it sorts after those behind it, has exactly one
 * "unsorted" error, at the same path, whichever format it is. (v1 once
 * compared each name with the highest so far and reported every entry
 * behind a misplaced one.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "dump-image.h"
#include "cfs/verify.h"

/* Empty files only, so that a name is the only place its bytes are. */
static const char dump[] =
	"/ 4096 40755 2 0 0 0 0.0 - - -\n"
	"/f-0 0 100644 1 0 0 0 0.0 - - -\n"
	"/f-1 0 100644 1 0 0 0 0.0 - - -\n"
	"/f-2 0 100644 1 0 0 0 0.0 - - -\n"
	"/f-3 0 100644 1 0 0 0 0.0 - - -\n";

struct seen {
	unsigned int unsorted, other;
	char path[64];
};

static void on_problem(void *ctx, const struct cfs_verify_problem *p)
{
	struct seen *s = ctx;

	if (strcmp(p->kind, "unsorted") == 0) {
		s->unsorted++;
		snprintf(s->path, sizeof(s->path), "%s", p->path ? p->path : "");
	} else {
		s->other++;
		fprintf(stderr, "  %s: %s: %s\n", p->kind, p->path ? p->path : "-", p->message);
	}
}

/* Rename "f-1" to "f-9" where the image stores it; false unless it is there once. */
static bool misplace(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t *d;
	uint8_t *hit, *again;

	if (size <= 0)
		return false;
	d = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (d == MAP_FAILED)
		return false;
	hit = memmem(d, (size_t)size, "f-1", 3);
	again = hit ? memmem(hit + 1, (size_t)(d + size - hit - 1), "f-1", 3) : NULL;
	if (hit && !again)
		hit[2] = '9';
	munmap(d, (size_t)size);
	return hit && !again;
}

static void check_format(enum cfs_image_format format, const char *name)
{
	struct cfs_verify_result r;
	struct seen s = { 0 };
	char path[64];
	int fd = memfd_create("img", 0), ret;

	CHECK(fd >= 0, "%s: memfd_create: %s", name, strerror(errno));
	if (fd < 0)
		return;
	ret = dump_image(dump, sizeof(dump) - 1, format, fd);
	CHECK(ret == 0, "%s: building the image: %s", name, strerror(-ret));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (ret == 0) {
		ret = cfs_verify_image(path, NULL, on_problem, &s, &r);
		CHECK(ret == 0 && r.errors == 0 && r.warnings == 0,
		      "%s: the intact image has problems (%d, %llu errors)", name, ret,
		      (unsigned long long)r.errors);
	}
	CHECK(ret == 0 && misplace(fd), "%s: the name 'f-1' is not stored exactly once", name);
	if (ret == 0) {
		memset(&s, 0, sizeof(s));
		ret = cfs_verify_image(path, NULL, on_problem, &s, &r);
		CHECK(ret == 0, "%s: the check did not run: %s", name, strerror(-ret));
		CHECK(s.unsorted == 1, "%s: %u unsorted errors, not 1", name, s.unsorted);
		CHECK(strcmp(s.path, "/f-2") == 0, "%s: the unsorted entry is '%s', not '/f-2'", name,
		      s.path);
		CHECK(s.other == 0, "%s: %u other problems", name, s.other);
	}
	close(fd);
}

int main(void)
{
	check_format(CFS_FORMAT_V1, "v1");
	check_format(CFS_FORMAT_EROFS, "composefs 1.0");
	return check_exit("verify order");
}
