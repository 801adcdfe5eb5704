// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl images: the names and images of a repository (lib/store/repo.c), with
 * each image's size and the objects it references; a name set to an image
 * already there, or removed. What the verbs' --repo shares is in
 * repo-option.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfsctl.h"
#include "cfs/image.h"
#include "cfs/repo.h"
#include "cfs/store.h"
#include "cfs/util.h"

/* The verb's messages, whatever handler it has installed for its own work. */
static void verb_message(void *ctx, const char *msg)
{
	cli_error("%s: %s", (const char *)ctx, msg);
}

/* What an image references: its objects and their bytes, once read. */
struct image_info {
	bool read;
	size_t objects;
	uint64_t object_bytes;
};

static int read_image(const char *repo_dir, const struct cfs_repo_image *img,
		      struct image_info *info)
{
	char hex[CFS_DIGEST_HEX_SIZE], *path;
	struct cfs_objects set;
	struct cfs_image *ci;
	int r;

	cfs_digest_to_hex(img->digest, hex);
	if (asprintf(&path, "%s/images/%s", repo_dir, hex) < 0)
		return -ENOMEM;
	cfs_objects_init(&set);
	r = cfs_image_open(path, &ci);
	if (r == 0) {
		r = cfs_objects_add_image(&set, ci);
		cfs_image_close(ci);
	}
	if (r == 0) {
		info->read = true;
		info->objects = set.n;
		for (size_t i = 0; i < set.n; i++)
			info->object_bytes += set.objs[i].size;
	} else {
		cli_error("images: reading image: '%s': %s", path, strerror(-r));
	}
	cfs_objects_free(&set);
	free(path);
	return r;
}

static void print_text(const struct cfs_repo_list *l, const struct image_info *info)
{
	char hex[CFS_DIGEST_HEX_SIZE];
	int width = 1;

	for (size_t i = 0; i < l->n_names; i++)
		if (l->names[i].ok && (int)strlen(l->names[i].name) > width)
			width = (int)strlen(l->names[i].name);
	for (size_t pass = 0; pass < 2; pass++) {
		size_t n = pass == 0 ? l->n_names : l->n_images;

		for (size_t i = 0; i < n; i++) {
			const struct cfs_repo_image *img;
			const char *name = "-";

			if (pass == 0) {
				if (!l->names[i].ok)
					continue;
				name = l->names[i].name;
				img = cfs_repo_list_find(l, l->names[i].digest);
			} else {
				img = &l->images[i];
				if (img->n_names)
					continue;
			}
			cfs_digest_to_hex(img->digest, hex);
			printf("%-*s  %s  %12llu  ", width, name, hex, (unsigned long long)img->size);
			if (info[img - l->images].read)
				printf("%zu\n", info[img - l->images].objects);
			else
				printf("?\n");
		}
	}
}

/*
 * What a pull recorded of where the image of @n came from: its manifest
 * (or index) digest, the policy requirements it passed and its seal (the
 * digest of its sealed form, stored in the repository too); nulls when
 * nothing was recorded for the image the name points at now.
 */
static void add_origin(struct cfs_repo *repo, const struct cfs_repo_name *n, json_t *o)
{
	json_t *rec = NULL;
	char *text = NULL;

	if (cfs_repo_get_origin(repo, n->name, n->digest, &text) == 0)
		rec = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	free(text);
	cli_json_set(o, "source", cli_json_text(json_is_object(rec) ?
						       json_string_value(json_object_get(rec, "reference")) :
						       NULL));
	cli_json_set(o, "manifest", cli_json_text(json_is_object(rec) ?
							 json_string_value(json_object_get(rec, "manifest")) :
							 NULL));
	cli_json_set(o, "policy", cli_json_text(json_is_object(rec) ?
						       json_string_value(json_object_get(rec, "policy")) :
						       NULL));
	cli_json_set(o, "seal", cli_json_text(json_is_object(rec) ?
						     json_string_value(json_object_get(rec, "seal")) :
						     NULL));
	json_decref(rec);
}

static int print_json(struct cfs_repo *repo, const char *repo_dir, const struct cfs_repo_list *l,
		      const struct image_info *info)
{
	json_t *doc = json_object(), *names = json_array(), *images = json_array();
	json_t *broken = json_array();
	char hex[CFS_DIGEST_HEX_SIZE];
	int r;

	cli_json_set(doc, "repository", cli_json_text(repo_dir));
	for (size_t i = 0; i < l->n_names; i++) {
		if (!l->names[i].ok) {
			cli_json_push(broken, json_pack("{s:o, s:o}", "name",
							cli_json_text(l->names[i].name), "problem",
							cli_json_text(l->names[i].problem)));
			continue;
		}
		cfs_digest_to_hex(l->names[i].digest, hex);
		json_t *o = json_pack("{s:o, s:s}", "name", cli_json_text(l->names[i].name),
				      "digest", hex);
		if (o)
			add_origin(repo, &l->names[i], o);
		cli_json_push(names, o);
	}
	for (size_t i = 0; i < l->n_images; i++) {
		const struct cfs_repo_image *img = &l->images[i];
		json_t *o = json_object(), *its = json_array();

		cfs_digest_to_hex(img->digest, hex);
		cli_json_set(o, "digest", json_string(hex));
		cli_json_set(o, "size", json_integer((json_int_t)img->size));
		cli_json_set(o, "objects", info[i].read ? json_integer((json_int_t)info[i].objects) :
							  json_null());
		cli_json_set(o, "object_bytes",
			     info[i].read ? json_integer((json_int_t)info[i].object_bytes) :
					    json_null());
		for (size_t k = 0; k < l->n_names; k++)
			if (l->names[k].ok &&
			    memcmp(l->names[k].digest, img->digest, CFS_DIGEST_SIZE) == 0)
				cli_json_push(its, cli_json_text(l->names[k].name));
		cli_json_set(o, "names", its);
		cli_json_push(images, o);
	}
	cli_json_set(doc, "names", names);
	cli_json_set(doc, "images", images);
	cli_json_set(doc, "broken_names", broken);
	r = cli_json_print(doc, CLI_JSON_LINE);
	if (r < 0)
		cli_error("images: '%s': the JSON list: %s", repo_dir, strerror(-r));
	return r;
}

static int list(const char *repo_dir, bool json)
{
	struct cfs_repo_list l = { 0 };
	struct image_info *info = NULL;
	struct cfs_repo *repo;
	int rc = EXIT_FAIL, r, lock = -1;

	if (cli_repo_open("images", repo_dir, false, &repo) != EXIT_OK)
		return EXIT_FAIL;
	/* Shared: a gc does not remove an image while it is read here. */
	lock = cfs_repo_lock(repo, false, true);
	if (lock < 0) {
		cli_error("images: locking the repository: '%s': %s", repo_dir, strerror(-lock));
		goto out;
	}
	if (cfs_repo_list(repo, &l) < 0)
		goto out;
	info = calloc(l.n_images + 1, sizeof(*info));
	if (!info) {
		cli_error("images: %s", strerror(ENOMEM));
		goto out;
	}
	rc = EXIT_OK;
	for (size_t i = 0; i < l.n_images; i++) {
		r = read_image(repo_dir, &l.images[i], &info[i]);
		if (r == -ENOMEM) {
			cli_error("images: %s", strerror(ENOMEM));
			rc = EXIT_FAIL;
			goto out;
		}
		if (r)
			rc = EXIT_FAIL;
	}
	for (size_t i = 0; i < l.n_names; i++) {
		if (l.names[i].ok)
			continue;
		cli_error("images: the name '%s' in '%s/images/refs': %s", l.names[i].name,
			  repo_dir, l.names[i].problem);
		rc = EXIT_FAIL;
	}
	if (json) {
		if (print_json(repo, repo_dir, &l, info))
			rc = EXIT_FAIL;
	} else {
		print_text(&l, info);
	}
out:
	cfs_store_unlock(lock);
	free(info);
	cfs_repo_list_free(&l);
	cfs_repo_close(repo);
	if (cli_close_stdout() != EXIT_OK)
		rc = EXIT_FAIL;
	return rc;
}

/* --tag NAME IMAGE: point NAME at the image IMAGE (a name or digest) names. */
static int tag(const char *repo_dir, const char *name, const char *what)
{
	uint8_t digest[CFS_DIGEST_SIZE];
	struct cfs_repo *repo;
	int lock, r;

	if (cfs_repo_name_check(name) < 0)
		return EXIT_USAGE;
	if (cli_repo_open("images", repo_dir, false, &repo) != EXIT_OK)
		return EXIT_FAIL;
	/* Shared: a gc cannot remove the image between finding and naming it. */
	lock = cfs_repo_lock(repo, false, true);
	if (lock < 0) {
		cli_error("images: locking the repository: '%s': %s", repo_dir, strerror(-lock));
		cfs_repo_close(repo);
		return EXIT_FAIL;
	}
	r = cfs_repo_resolve(repo, what, digest, NULL);
	if (r == 0)
		r = cfs_repo_set_name(repo, name, digest);
	cfs_store_unlock(lock);
	cfs_repo_close(repo);
	return r ? EXIT_FAIL : EXIT_OK;
}

static int remove_names(const char *repo_dir, char **names, int n)
{
	struct cfs_repo *repo;
	int rc = EXIT_OK;

	if (cli_repo_open("images", repo_dir, false, &repo) != EXIT_OK)
		return EXIT_FAIL;
	for (int i = 0; i < n; i++)
		if (cfs_repo_remove_name(repo, names[i]) < 0)
			rc = EXIT_FAIL;
	cfs_repo_close(repo);
	return rc;
}

/* cfsctl images --help, and its man page (docs/mkman.py) */
const char cmd_images_usage[] =
	  "Usage: cfsctl images --repo DIR [--json]\n"
	  "       cfsctl images --repo DIR --tag NAME IMAGE\n"
	  "       cfsctl images --repo DIR --remove NAME...\n"
	  "\n"
	  "A repository is a directory holding a digest store and the images that\n"
	  "use it, with names (docs/repository.md):\n"
	  "  DIR/objects/xx/<62 hex>   the digest store, a basedir as it is\n"
	  "  DIR/images/<64 hex>       an image, named by its own fs-verity digest\n"
	  "  DIR/images/refs/NAME      a name: a symlink to ../<64 hex> (one more\n"
	  "                            ../ for each '/' in NAME)\n"
	  "cfsctl build --repo and cfsctl pull --repo store images and set names;\n"
	  "inspect, verify, diff, mount and tui take --repo and a name or a digest;\n"
	  "gc --repo keeps what the names reach and removes the rest.\n"
	  "\n"
	  "A NAME is components of letters, digits and ._-+@:=,~ separated by\n"
	  "single '/' (os/debian:12), none starting with '.', not starting with\n"
	  "'-', and not 64 hex digits, which name an image by its digest.\n"
	  "\n"
	  "With no other option, list the names, one line each: NAME, the image's\n"
	  "digest, its size in bytes and the number of objects it references; then\n"
	  "the images no name reaches, with '-' for NAME (the next gc removes them).\n"
	  "A name that is not a symlink to an image of the repository is reported\n"
	  "on stderr (exit 1).\n"
	  "\n"
	  "Options:\n"
	  "  --repo DIR          the repository\n"
	  "  --json              the listing as one JSON document: repository,\n"
	  "                      names: [{name, digest, source, manifest,\n"
	  "                      policy, seal}] (source: the reference a pull\n"
	  "                      --repo named it from, manifest: the digest of the\n"
	  "                      manifest or index it resolved to, policy: the\n"
	  "                      policy requirements it passed (null: no policy),\n"
	  "                      seal: the manifest's seal, checked, and the\n"
	  "                      digest of the image's sealed form, stored in the\n"
	  "                      repository too (null: unsealed);\n"
	  "                      all null when not pulled, or named otherwise\n"
	  "                      since), images: [{digest, size,\n"
	  "                      objects, object_bytes, names: [NAME...]}] (every\n"
	  "                      image, named or not) and broken_names: [{name,\n"
	  "                      problem}]\n"
	  "  --tag NAME IMAGE    point NAME at the image IMAGE (a name or a digest)\n"
	  "                      names, replacing NAME atomically if it exists\n"
	  "  --remove NAME...    remove the names; their images stay until gc\n"
	  "  -h, --help          show this help\n"
	  "\n"
	  "Examples:\n"
	  "  cfsctl images --repo /var/lib/cfs\n"
	  "  cfsctl images --repo /var/lib/cfs --tag os/stable os/1\n"
	  "  cfsctl images --repo /var/lib/cfs --remove os/0\n"
	  "\n"
	  "Exit status: 0 success, 1 failure, 2 usage error.\n";

int cmd_images(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_OPTION_REPO,
		{ "tag", no_argument, NULL, 't' },
		{ "remove", no_argument, NULL, 'r' },
		CLI_OPTION_JSON,
		CLI_OPTION_HELP,
		{ NULL, 0, NULL, 0 },
	};
	const char *repo = NULL;
	bool json = false, do_tag = false, do_remove = false;
	const struct cli_var vars[] = {
		{ CLI_OPT_JSON, .flag = &json },
		{ 't', .flag = &do_tag },
		{ 'r', .flag = &do_remove },
		{ 0 },
	};
	const struct cli_parse p = {
		.verb = "images", .shortopts = "h", .longopts = longopts,
		.help = cmd_images_usage, .vars = vars, .repo = &repo,
	};
	int rc, n;

	cfs_set_message_handler(verb_message, (void *)"images");
	rc = cli_parse(&p, argc, argv);
	if (rc >= 0)
		return rc;
	n = argc - optind;
	if (!repo)
		return cli_usage("images", "--repo DIR is required");
	if (do_tag && do_remove)
		return cli_usage("images", "--tag and --remove exclude each other");
	if (json && (do_tag || do_remove))
		return cli_usage("images", "--json goes with the listing only");
	if (do_tag) {
		if (n != 2)
			return cli_usage("images", "--tag: expected NAME and IMAGE, got %d argument%s",
					 n, n == 1 ? "" : "s");
		return tag(repo, argv[optind], argv[optind + 1]);
	}
	if (do_remove) {
		if (n == 0)
			return cli_usage("images", "--remove: no NAME given");
		return remove_names(repo, argv + optind, n);
	}
	if (n)
		return cli_usage("images", "unexpected argument '%s'", argv[optind]);
	return list(repo, json);
}
