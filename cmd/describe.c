// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * How cfsctl names what an inode is, the same way in every verb: the short
 * type names of text and JSON output, and the ls-style mode string.
 */
#include <sys/stat.h>

#include "cfsctl.h"

const char *cli_type_name(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "regular";
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symlink";
	case S_IFCHR: return "chardev";
	case S_IFBLK: return "blockdev";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	}
	return "unknown";
}

void cli_mode_string(uint32_t mode, char s[11])
{
	static const char types[] = "?pc?d?b?-?l?s???";
	static const char rwx[] = "rwxrwxrwx";

	s[0] = types[(mode & S_IFMT) >> 12];
	for (int i = 0; i < 9; i++)
		s[1 + i] = (mode & (0400U >> i)) ? rwx[i] : '-';
	if (mode & S_ISUID)
		s[3] = (mode & S_IXUSR) ? 's' : 'S';
	if (mode & S_ISGID)
		s[6] = (mode & S_IXGRP) ? 's' : 'S';
	if (mode & S_ISVTX)
		s[9] = (mode & S_IXOTH) ? 't' : 'T';
	s[10] = '\0';
}
