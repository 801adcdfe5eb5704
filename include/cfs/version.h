/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The version of libcfs's API. A program built against headers of one
 * major version runs with any library of that major version and at least
 * its minor: the minor grows when functions are added, the major (the
 * library's SONAME, libcfs.so.MAJOR) only when an existing one changes.
 */
#ifndef CFS_VERSION_H
#define CFS_VERSION_H

#define CFS_VERSION_MAJOR 0
#define CFS_VERSION_MINOR 1

#endif /* CFS_VERSION_H */
