/*
 * rootspec.h: the root spec, the config-wide part of a sandbox's root
 * (docs/design-profiles.md, section 3): the [mount] table (source, target,
 * package). The frontend builds it from its config at start-up and at each
 * reload into a sealed memfd of one fixed struct, bumping the generation when
 * it changes; it travels with every SPAWN_PREPARE. The spawner reads it with
 * rootspec_read(), which checks every field and walks every source again
 * (the frontend is less trusted than the spawner), and the supervisor it
 * clones inherits the checked copy. A run's plan names entries by index
 * (plan_hdr.mounts, a bitmask) under the spec's generation: no host path
 * ever comes from a request.
 */
#ifndef AIRLOCKD_ROOTSPEC_H
#define AIRLOCKD_ROOTSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROOTSPEC_MAGIC 0x53524c41U /* "ALRS" */
#define ROOTSPEC_MOUNTS_MAX 32	   /* [mount] sections; plan_hdr.mounts is a uint32_t */
#define ROOTSPEC_PATH_MAX 256	   /* a source or target, bytes with the NUL */
#define ROOTSPEC_WHY_MAX 512	   /* a source check's reason, bytes with the NUL */

/* rootspec_mount.flags */
#define ROOTSPEC_F_PACKAGE 0x1u /* a package tree: exec allowed (not noexec) */

struct rootspec_mount {
	char source[ROOTSPEC_PATH_MAX]; /* host path, absolute, checked (rootspec_source_check) */
	char target[ROOTSPEC_PATH_MAX]; /* path in the sandbox (rootspec_target_check) */
	uint32_t flags;			/* ROOTSPEC_F_* */
	/* 0 from the frontend. In the spawner's checked copy: the errno of a
	 * source that failed its check (gone, renamed, unmounted): that
	 * mount alone is unavailable, and only a run that names it fails. */
	uint32_t missing;
};

struct rootspec {
	uint32_t magic;
	uint32_t generation; /* the frontend's; a plan names the one it was built for */
	uint32_t nmounts;
	uint32_t reserved; /* 0 */
	struct rootspec_mount mounts[ROOTSPEC_MOUNTS_MAX];
};

/*
 * Is path a safe source for a read-only mount: absolute and normalised (no
 * "//", ".", ".." or trailing '/'), not "/", shorter than ROOTSPEC_PATH_MAX,
 * and, walked from "/" with lstat(), every component (the source too) not a
 * symbolic link, owned by root, not writable by group or others (sshd's
 * StrictModes walk), the parents directories, the source a directory or a
 * regular file. A component the caller cannot search fails ("cannot
 * check"): a reload, made by the unprivileged frontend, accepts no less
 * than start-up, as root, did. Returns 0 or -errno, with the reason in why.
 */
int rootspec_source_check(const char *path, char *why, size_t whylen);

/*
 * Is path a valid target: absolute, normalised, not "/", shorter than
 * ROOTSPEC_PATH_MAX, not "/etc" itself and not in or under what the root
 * makes for itself (/usr, /bin, /sbin, /lib*, /proc, /dev, /tmp,
 * /workspace, /run). Returns 0 or -EINVAL, with the reason in why.
 */
int rootspec_target_check(const char *path, char *why, size_t whylen);

/* Is path absolute, normalised (no "//", ".", ".." or trailing '/'), not
 * "/", and shorter than ROOTSPEC_PATH_MAX? */
bool rootspec_path_normal(const char *path);

/* Whether one of two normalised absolute paths is the other or beneath it. */
bool rootspec_paths_overlap(const char *a, const char *b);

/* Seal rs into a new memfd. Returns 0 or -errno. */
int rootspec_seal(const struct rootspec *rs, int *ret_fd);

/*
 * The spawner's read of the frontend's root spec: a sealed memfd of exactly
 * one struct rootspec, the magic, nmounts in bounds, reserved and missing
 * fields 0, every string NUL-terminated, every target valid. Every source
 * is checked with rootspec_source_check() now: one that fails is marked
 * (missing = its errno, the reason in why[i] when why is not NULL) and is
 * never opened; the rest of the spec stands, so that a vanished source
 * fails only the runs that name it (issue 28). Returns 0 or -errno
 * (-EPROTO: malformed).
 */
int rootspec_read(int fd, struct rootspec *ret, char (*why)[ROOTSPEC_WHY_MAX]);

#endif
