// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * How cfsctl shows an inode's mode the same way in every verb: the ls-style
 * mode string (the names of file types are libcfs's cfs_type_name()).
 */
#include <sys/stat.h>

#include "cfsctl.h"

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
