/* landlock.c: the code's Landlock ruleset (see landlock.h). */
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Debian 12's kernel headers stop at ABI 2: what later ABIs add is spelled
 * here, by value, from the kernel's uapi. */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)     /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */

#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)		  /* ABI 6 */

/* The ruleset attribute as of ABI 6; older kernels are given a prefix. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4; left 0: loopback TCP stays usable */
	uint64_t scoped;	     /* ABI 6 */
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

int
landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	/* ENOSYS: not built; EOPNOTSUPP: built but not enabled at boot. */
	return v > 0 ? (int)v : 0;
}

int
landlock_usable_abi(int abi)
{
	/* ABI 1 refuses every rename or link into another directory (EXDEV):
	 * git, pip and os.rename() would break on Ubuntu 22.04's 5.15. */
	return abi >= 2 ? abi : 0;
}

/* Every filesystem right ABI abi knows. */
static uint64_t
ll_fs_rights(int abi)
{
	uint64_t r = LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR |
		     LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR |
		     LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK |
		     LL_FS_MAKE_SYM;

	if (abi >= 2)
		r |= LL_FS_REFER;
	if (abi >= 3)
		r |= LL_FS_TRUNCATE;
	if (abi >= 5)
		r |= LL_FS_IOCTL_DEV;
	return r;
}

/* Allow `access` beneath path (opened O_PATH, never following a link). */
static int
ll_allow(int ruleset, const char *path, uint64_t access)
{
	struct ll_path_beneath_attr pb = {.allowed_access = access};
	int r = 0;

	pb.parent_fd = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (pb.parent_fd < 0)
		return -errno;
	if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
		r = -errno;
	close(pb.parent_fd);
	return r;
}

int
landlock_prepare(int abi, const char *root, const char *const *writable,
		 const char *const *write_only, struct landlock_rules *ret)
{
	struct ll_ruleset_attr attr = {0};
	size_t size;
	uint64_t read = LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE;
	int fd, r, i;

	ret->fd = -1;
	ret->abi = abi;
	ret->fs = 0;
	if (abi <= 0)
		return 0;
	attr.handled_access_fs = ll_fs_rights(abi);
	size = offsetof(struct ll_ruleset_attr, handled_access_net);
	if (abi >= 4)
		size = offsetof(struct ll_ruleset_attr, scoped);
	if (abi >= 6) {
		/* No signal to, and no abstract socket of, anything outside
		 * the code's own domain (the supervisor above all). */
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (fd < 0)
		return -errno;
	r = ll_allow(fd, root, read);
	for (i = 0; r == 0 && writable != NULL && i < LANDLOCK_RW_MAX && writable[i] != NULL; i++)
		r = ll_allow(fd, writable[i], attr.handled_access_fs);
	/* Device and proc files are written (/dev/null, /proc/self/...), never
	 * created; ioctls on devices (ABI 5) are those of a terminal or null. */
	for (i = 0; r == 0 && write_only != NULL && i < LANDLOCK_RW_MAX && write_only[i] != NULL;
	     i++)
		r = ll_allow(fd, write_only[i],
			     read | LL_FS_WRITE_FILE | (abi >= 3 ? LL_FS_TRUNCATE : 0) |
				     (abi >= 5 ? LL_FS_IOCTL_DEV : 0));
	if (r < 0) {
		close(fd);
		return r;
	}
	ret->fd = fd;
	ret->fs = attr.handled_access_fs;
	return 0;
}

int
landlock_enforce(struct landlock_rules *rules)
{
	int r = 0;

	if (rules->fd < 0)
		return 0;
	if (syscall(SYS_landlock_restrict_self, rules->fd, 0) < 0)
		r = -errno;
	close(rules->fd);
	rules->fd = -1;
	return r;
}
