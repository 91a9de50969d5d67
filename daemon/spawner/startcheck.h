/*
 * startcheck.h: what airlockd checks at start-up, as root before anything
 * is made, so that a host or a container missing something it needs says
 * which, in its own words, and exits non-zero (issue 34): a capability, a
 * writable socket directory, user namespaces for an unprivileged uid.
 */
#ifndef AIRLOCK_STARTCHECK_H
#define AIRLOCK_STARTCHECK_H

#include <stddef.h>
#include <sys/types.h>

#include <stdbool.h>

/*
 * 0 if this process holds, effective and in its bounding set, every
 * capability the start-up and the split need (CAP_CHOWN too when
 * socket_chown: the socket is to be given an owner or group not root's);
 * else -EPERM with a message naming the first one missing and why it is
 * needed in why.
 */
int startcheck_caps(bool socket_chown, char *why, size_t whylen);

/*
 * 0 if dir (the socket's directory) is a directory this process may create
 * the socket in; else -errno with a message in why.
 */
int startcheck_socket_dir(const char *dir, char *why, size_t whylen);

/*
 * 0 if a process of uid (the first uid of the run range, as the spawner
 * acts when it clones) may create a user namespace and, in it, what a
 * sandbox makes first (mount, uts and pid namespaces, its hostname, a
 * private mount tree, its own /proc); else -errno with a message in why
 * naming the step refused and what grants it. Forks a child that tries.
 */
int startcheck_userns(uid_t uid, char *why, size_t whylen);

#endif
