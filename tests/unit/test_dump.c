// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit tests of the dumpfile parser (lib/source/dump.c): what each field becomes in
 * the tree (escapes, "-", SEC.NSEC times, digests derived from payloads and
 * back, hardlinks, xattrs), the options that apply while parsing, and the
 * "FILE:LINE: reason" message of a rejected line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/tree.h"

static char last_msg[1024];

static void on_msg(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

static int parse(const char *text, const struct cfs_build_options *o, struct cfs_node **root)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int r;

	if (!f)
		return -errno;
	last_msg[0] = '\0';
	r = cfs_tree_from_dump(f, "t.dump", o, root);
	fclose(f);
	return r;
}

static struct cfs_node *child(struct cfs_node *dir, const char *name, size_t len)
{
	for (size_t i = 0; i < dir->n_children; i++)
		if (dir->children[i]->name_len == len && memcmp(dir->children[i]->name, name, len) == 0)
			return dir->children[i];
	return NULL;
}

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define OBJ "01/23456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_fields(void)
{
	static const char text[] =
		"/ 4096 40755 2 0 0 0 -5.0 - - -\n"
		"\n"
		"/by-digest 10 100600 1 1 2 0 1.1 - - " D64 " user.a=x\\x3dy user.empty=- "
		"trusted.k\\x3dq=\\x2d\n"
		"/by-payload 10 100644 1 0 0 0 1.100000000 " OBJ " - -\n"
		"/by-name 10 100644 1 0 0 0 0.0 some/where - -\n"
		"/odd\\x20name\\n\\t\\\\ 0 100644 1 0 0 0 0.0 - - -\n"
		"/dash 1 120777 1 0 0 0 0.0 \\x2d - -\n"
		"/dev 0 20600 1 0 0 259 0.0 - - -\n"
		"/fifo 0 10600 1 0 0 77 0.0 - - -\n"
		"/hl 0 @100000 9 9 9 9 9.9 /by-digest - -\n";
	struct cfs_node *root = NULL, *n;
	uint8_t d[CFS_DIGEST_SIZE];
	char obj[CFS_OBJECT_PATH_SIZE];

	CHECK(parse(text, NULL, &root) == 0, "parse: %s", last_msg);
	if (!root)
		return;
	CHECK(root->mode == 040755 && root->mtime_sec == -5 && root->n_children == 8,
	      "root mode %o mtime %lld, %zu entries", root->mode, (long long)root->mtime_sec,
	      root->n_children);
	cfs_digest_from_hex(D64, d);

	n = child(root, "by-digest", 9);
	CHECK(n && n->size == 10 && n->mode == 0100600 && n->uid == 1 && n->gid == 2, "by-digest");
	CHECK(n && n->mtime_sec == 1 && n->mtime_nsec == 1, "1.1 is 1 s 1 ns");
	CHECK(n && n->has_digest && memcmp(n->digest, d, sizeof(d)) == 0, "digest");
	CHECK(n && n->payload_len == strlen(OBJ) &&
		      memcmp(cfs_node_payload(n, obj), OBJ, n->payload_len) == 0,
	      "payload from the digest");
	CHECK(n && n->n_xattrs == 3, "xattrs");
	if (n && n->n_xattrs == 3) {
		CHECK(strcmp(n->xattrs[0].key, "user.a") == 0 && n->xattrs[0].value_len == 3 &&
			      memcmp(n->xattrs[0].value, "x=y", 3) == 0,
		      "escaped '=' in a value");
		CHECK(strcmp(n->xattrs[1].key, "user.empty") == 0 && n->xattrs[1].value_len == 0,
		      "'-' is an empty value");
		CHECK(strcmp(n->xattrs[2].key, "trusted.k=q") == 0 && n->xattrs[2].value_len == 1 &&
			      n->xattrs[2].value[0] == '-',
		      "escaped '=' in a key, \\x2d value");
	}

	n = child(root, "by-payload", 10);
	CHECK(n && n->mtime_nsec == 100000000, "1.100000000 is 100 ms");
	CHECK(n && n->has_digest && memcmp(n->digest, d, sizeof(d)) == 0, "digest from payload");

	n = child(root, "by-name", 7);
	CHECK(n && !n->has_digest && n->payload_len == 10, "a by-name payload has no digest");

	n = child(root, "odd name\n\t\\", 11);
	CHECK(n != NULL, "escaped name");

	n = child(root, "dash", 4);
	CHECK(n && n->payload_len == 1 && n->payload[0] == '-', "symlink to '-'");

	n = child(root, "dev", 3);
	CHECK(n && n->rdev == 259, "rdev");
	n = child(root, "fifo", 4);
	CHECK(n && n->rdev == 0, "rdev ignored for a fifo");

	n = child(root, "hl", 2);
	CHECK(n && n->link_target == child(root, "by-digest", 9), "hardlink");
	cfs_tree_free(root);
}

static void test_options(void)
{
	static const char text[] = "/ 0 40755 2 0 0 0 7.7 - - - user.x=1\n"
				   "/dev 0 20600 1 0 0 259 0.0 - - -\n"
				   "/hl 0 @20600 1 0 0 259 0.0 /dev - -\n"
				   "/f 3 100644 1 0 0 0 0.0 - abc -\n";
	struct cfs_build_options o = { .use_epoch = true, .skip_xattrs = true,
				       .skip_devices = true, .digest_store = "unused" };
	struct cfs_node *root = NULL;

	CHECK(parse(text, &o, &root) == 0, "parse: %s", last_msg);
	if (!root)
		return;
	CHECK(root->mtime_sec == 0 && root->mtime_nsec == 0, "--use-epoch");
	CHECK(root->n_xattrs == 0, "--skip-xattrs");
	CHECK(root->n_children == 1, "--skip-devices keeps %zu entries", root->n_children);
	CHECK(root->n_children && root->children[0]->content &&
		      memcmp(root->children[0]->content, "abc", 3) == 0,
	      "inline content");
	cfs_tree_free(root);

	/* Without a store, inline content is refused. */
	o.digest_store = NULL;
	CHECK(parse(text, &o, &root) == -EINVAL, "CONTENT without a store");
	CHECK(strcmp(last_msg, "t.dump:4: inline CONTENT needs a digest store (--digest-store)") == 0,
	      "message '%s'", last_msg);
}

static void test_errors(void)
{
	struct cfs_node *root = NULL;

	CHECK(parse("/ 0 40755 2 0 0 0 0.0 - - -\n\n/a/b 0 100644 1 0 0 0 0.0 - - -\n", NULL,
		    &root) == -EINVAL,
	      "missing parent");
	CHECK(strstr(last_msg, "t.dump:3: parent directory of '/a/b' not found") == last_msg,
	      "message '%s'", last_msg);
	CHECK(parse("/ 0 40755 2 0 0 0 0.0 - - - user.x\n", NULL, &root) == -EINVAL, "no '='");
	CHECK(strcmp(last_msg, "t.dump:1: xattr 'user.x' has no '='") == 0, "message '%s'",
	      last_msg);
	CHECK(parse("", NULL, &root) == -EINVAL, "empty dump");
	CHECK(strcmp(last_msg, "t.dump:1: no root directory '/' in the dump") == 0, "message '%s'",
	      last_msg);
}

int main(void)
{
	cfs_set_message_handler(on_msg, NULL);
	test_fields();
	test_options();
	test_errors();
	return check_exit("dumpfile parser");
}
