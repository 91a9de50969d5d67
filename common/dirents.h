/*
 * dirents.h: the entries of an open directory, read with getdents64 into a
 * buffer of the caller's, allocation-free: for the processes cloned from
 * the spawner (the supervisor, a keeper), which may not call malloc and so
 * not opendir(3).
 */
#ifndef AIRLOCKD_DIRENTS_H
#define AIRLOCKD_DIRENTS_H

#include <dirent.h>

struct dirents {
	int fd;	  /* the directory; not owned */
	long len; /* bytes of buf that getdents64 filled */
	long off; /* the next entry's offset in buf */
	int err;  /* 0, or getdents64's -errno once it failed */
	char buf[4096] __attribute__((aligned(8)));
};

/* Start reading the entries of the directory fd at its current offset. */
void dirents_init(struct dirents *it, int fd);

/*
 * The next entry ("." and ".." included), valid until the next call; NULL
 * at the end, or when getdents64 failed (it->err says so).
 */
const struct dirent64 *dirents_next(struct dirents *it);

#endif
