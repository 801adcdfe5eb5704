/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The kernel type names and byte-order helpers that cfs-format.h uses,
 * supplied for userspace, so that the format header compiles unchanged in
 * the kernel module and in libcfs.
 */
#ifndef CFS_KSHIM_H
#define CFS_KSHIM_H

#include <assert.h>
#include <endian.h>
#include <linux/types.h> /* __le16, __le32, __le64 */
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#ifndef __packed
#define __packed __attribute__((packed))
#endif

#define cpu_to_le16(x) htole16(x)
#define cpu_to_le32(x) htole32(x)
#define cpu_to_le64(x) htole64(x)
#define le16_to_cpu(x) le16toh(x)
#define le32_to_cpu(x) le32toh(x)
#define le64_to_cpu(x) le64toh(x)

#endif /* CFS_KSHIM_H */
