/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The strict JSON reader for the documents of OCI image layouts, registries
 * and zstd:chunked TOCs: jansson's parser, with the limits cfs sets. The
 * callers look into the jansson tree it gives. It is internal to libcfs.
 */
#ifndef CFS_JSON_H
#define CFS_JSON_H

#include <stddef.h>

#include <jansson.h>

/**
 * cfs_json_parse() - parse the JSON text of @len bytes at @text
 * @what: names the text in messages
 *
 * Strict: UTF-8 only, no duplicate keys, no trailing commas or other
 * extensions, integers that fit in a json_int_t (int64), nesting at most 64
 * deep, at most CFS_JSON_MAX_VALUES values. A string value may hold
 * "\u0000" (see cfs_json_str()), a member name may not. Return: 0 and
 * *@out (free it with json_decref()), -EINVAL with a message naming @what
 * and the byte offset, -EFBIG (with a message) for too many values, or
 * -ENOMEM.
 */
int cfs_json_parse(const char *text, size_t len, const char *what, json_t **out);

/*
 * The values cfs_json_parse() takes in one document: jansson spends about
 * 170 bytes on each of a TOC's (measured), so that no document takes much
 * more than 180 MiB; the documents of an image hold thousands.
 */
#define CFS_JSON_MAX_VALUES ((size_t)1 << 20)

/* And the memory jansson may take for one document's tree. */
#define CFS_JSON_MAX_MEMORY ((size_t)128 << 20)

/**
 * cfs_json_parse_max() - cfs_json_parse() of a document of at most
 * @max_values values (0: no limit); one of more, or one whose tree would
 * take more than CFS_JSON_MAX_MEMORY, is -EFBIG, without a message: the
 * caller says why, or does without the document
 */
int cfs_json_parse_max(const char *text, size_t len, const char *what, size_t max_values,
		       json_t **out);

struct cfs_json_arena;

/**
 * cfs_json_parse_arena() - cfs_json_parse_max(), with the tree's memory
 * taken from an arena, *@arena, freed at once by cfs_json_arena_free()
 *
 * For a large document read once (a TOC): its many small blocks cost no
 * malloc() and free() each. The tree lives until the arena is freed: do
 * not json_decref() it after that (before, it is harmless and useless),
 * nor keep any of its values; nor give the values to jansson functions
 * that allocate (json_object_set() and the like) while it lives. The
 * arena's blocks, freed or not, count against CFS_JSON_MAX_MEMORY.
 * Return: as cfs_json_parse_max(); on failure *@arena is NULL.
 */
int cfs_json_parse_arena(const char *text, size_t len, const char *what, size_t max_values,
			 json_t **out, struct cfs_json_arena **arena);

/** cfs_json_arena_free() - free an arena and the tree in it; NULL is ignored */
void cfs_json_arena_free(struct cfs_json_arena *arena);

/**
 * cfs_json_str() - the member @key of object @v when it is a string without
 * NULs; else NULL (also when @v is NULL or no object)
 */
const char *cfs_json_str(const json_t *v, const char *key);

/** cfs_json_cstr() - @v's text when it is a string without NULs; else NULL */
const char *cfs_json_cstr(const json_t *v);

/**
 * cfs_json_dump() - @v as JSON text (json_dumpb() with @flags), malloc()ed
 * and NUL-terminated, to be freed with free(); NULL on ENOMEM
 */
char *cfs_json_dump(const json_t *v, size_t flags);

#endif /* CFS_JSON_H */
