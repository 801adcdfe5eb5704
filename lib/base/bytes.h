/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Reading (and, for tests that build images, writing) little-endian fields
 * at any alignment of an image in memory, and the overflow-safe bounds test
 * every such read is guarded by. Internal to libcfs and its unit tests.
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

static inline void put16(uint8_t *p, uint16_t v)
{
	__le16 x = cpu_to_le16(v);

	memcpy(p, &x, sizeof(x));
}

static inline void put32(uint8_t *p, uint32_t v)
{
	__le32 x = cpu_to_le32(v);

	memcpy(p, &x, sizeof(x));
}

static inline void put64(uint8_t *p, uint64_t v)
{
	__le64 x = cpu_to_le64(v);

	memcpy(p, &x, sizeof(x));
}

/* Does [off, off + len) lie inside [0, limit)? Cannot overflow. */
static inline bool fits(uint64_t off, uint64_t len, uint64_t limit)
{
	return off <= limit && len <= limit - off;
}

#endif /* CFS_BYTES_H */
