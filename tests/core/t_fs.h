/* File-system helpers of the core's unit tests: a fresh temporary directory and its removal. */
#ifndef LKC_T_FS_H
#define LKC_T_FS_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* nftw callback: removes one entry. */
static inline int t_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void) st;
	(void) flag;
	(void) ftw;
	return remove(path);
}

/* Removes path and everything under it. */
static inline void rm_rf(const char *path)
{
	nftw(path, t_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh directory /tmp/lkc-<tag>-XXXXXX, its path in buf. */
static inline int t_make_tmpdir(char buf[64], const char *tag)
{
	snprintf(buf, 64, "/tmp/lkc-%s-XXXXXX", tag);
	return mkdtemp(buf) != NULL;
}

#endif
