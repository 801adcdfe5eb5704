// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The page cache and printk of the userspace kernel shim (kshim.h). Each
 * folio is a fresh allocation holding a copy of one page, so a folio used
 * after folio_put() or never put shows up under ASan; and a copy that
 * strays outside the folio's page aborts.
 */
#include <stdarg.h>
#include <stdio.h>

#include "kshim.h"

void kshim_printk(const char *fmt, ...)
{
	va_list ap;

	if (!getenv("CFS_FUZZ_VERBOSE"))
		return;
	/* %pD prints as a pointer and a 'D': good enough to read. */
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

struct folio *read_mapping_folio(struct address_space *mapping, pgoff_t index, struct file *file)
{
	u64 pos = (u64)index << PAGE_SHIFT;
	struct folio *folio;
	size_t n;

	(void)file;
	if (pos >= mapping->size)
		return ERR_PTR(-EIO);
	folio = malloc(sizeof(*folio));
	if (!folio)
		return ERR_PTR(-ENOMEM);
	folio->mapping = mapping;
	folio->index = index;
	n = mapping->size - pos < PAGE_SIZE ? (size_t)(mapping->size - pos) : PAGE_SIZE;
	memcpy(folio->data, mapping->data + pos, n);
	memset(folio->data + n, 0, PAGE_SIZE - n);
	return folio;
}

void page_cache_sync_readahead(struct address_space *mapping, struct file_ra_state *ra,
			       struct file *file, pgoff_t index, unsigned long req_count)
{
	u64 end = ((u64)index + req_count) << PAGE_SHIFT;
	u64 size = (u64)mapping->host->i_size;

	(void)ra;
	(void)file;
	if (req_count == 0 || end - PAGE_SIZE >= size)
		abort(); /* a page past the end of the file */
}

ssize_t kernel_read(struct file *file, void *buf, size_t count, loff_t *pos)
{
	struct address_space *mapping = file->f_mapping;
	u64 p = (u64)*pos;

	if (*pos < 0)
		return -EINVAL;
	if (p >= mapping->size)
		return 0;
	if (count > mapping->size - p)
		count = (size_t)(mapping->size - p);
	memcpy(buf, mapping->data + p, count);
	*pos += (loff_t)count;
	return (ssize_t)count;
}

void folio_put(struct folio *folio)
{
	free(folio);
}

void memcpy_from_folio(void *to, struct folio *folio, size_t offset, size_t len)
{
	if (offset > PAGE_SIZE || len > PAGE_SIZE - offset) {
		fprintf(stderr, "kshim: memcpy_from_folio(offset %zu, len %zu) leaves the page\n",
			offset, len);
		abort();
	}
	memcpy(to, folio->data + offset, len);
}
