/* memfd.h: sealed memfds, the carrier of every large payload. */
#ifndef AIRLOCK_MEMFD_H
#define AIRLOCK_MEMFD_H

#include <stddef.h>
#include <stdint.h>

/* The seals every payload memfd must carry before its receiver trusts it. */
#define MEMFD_PAYLOAD_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* Create a close-on-exec memfd holding len bytes of data, sealed. */
int memfd_sealed_create(const char *name, const void *data, size_t len, int *ret_fd);

/* Create an empty, unsealed, close-on-exec memfd that allows sealing. */
int memfd_new(const char *name, int *ret_fd);

/* Seal a memfd written by memfd_new(). */
int memfd_seal(int fd);

/*
 * Check that fd is a memfd carrying MEMFD_PAYLOAD_SEALS and that its size is
 * at most max. Returns 0 and the size, -EPERM when a seal is missing, -E2BIG
 * when larger than max, or another -errno.
 */
int memfd_check_sealed(int fd, uint64_t max, uint64_t *ret_size);

/*
 * Copy at most max bytes of the file fd (from its start) into a new sealed
 * memfd. *ret_len gets the bytes copied, *ret_size the file's size.
 */
int memfd_sealed_copy(int fd, uint64_t max, int *ret_fd, uint64_t *ret_len, uint64_t *ret_size);

/*
 * The same, keeping holes as holes (SEEK_DATA/SEEK_HOLE), and copying at
 * most max_data bytes of data: the copy then ends where that ran out
 * (*ret_len < the file's size: truncated). Holes cost nothing.
 */
int memfd_sealed_copy_sparse(int fd, uint64_t max, uint64_t max_data, int *ret_fd,
			     uint64_t *ret_len, uint64_t *ret_size);

/*
 * Make the description of a sealed payload memfd that a peer is given, so
 * that the sender can tell when the peer let go of it (memfd_released()).
 * fd stays the sender's own probe. *ret_give is a new open file description
 * of the same memfd, read-write, which the kernel counts as a writer of the
 * file (memfd_create's own does not count); then fd's mode becomes 0, so
 * that nobody but root can open the memfd again through /proc and so keep
 * its pages without that description.
 */
int memfd_give(int fd, int *ret_give);

/*
 * 1 when no description made by memfd_give() for the memfd of probe is
 * open anywhere (the peer closed it, unmapped it, or never received it),
 * 0 while one is, -errno when it cannot be told.
 */
int memfd_released(int probe);

#endif
