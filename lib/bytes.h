/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Reading little-endian fields at any alignment from an image in memory, and
 * the overflow-safe bounds test every such read is guarded by. Internal to
 * libcfs (reader.c and verify.c decode the same bytes with them).
 */
#ifndef CFS_BYTES_H
#define CFS_BYTES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cfs-format.h"

static inline uint16_t get16(const uint8_t *p)
{
	__le16 v;

	memcpy(&v, p, sizeof(v));
	return le16_to_cpu(v);
}

static inline uint32_t get32(const uint8_t *p)
{
	__le32 v;

	memcpy(&v, p, sizeof(v));
	return le32_to_cpu(v);
}

static inline uint64_t get64(const uint8_t *p)
{
	__le64 v;

	memcpy(&v, p, sizeof(v));
	return le64_to_cpu(v);
}

/* Does [off, off + len) lie inside [0, limit)? Cannot overflow. */
static inline bool fits(uint64_t off, uint64_t len, uint64_t limit)
{
	return off <= limit && len <= limit - off;
}

#endif /* CFS_BYTES_H */
