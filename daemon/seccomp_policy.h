/* seccomp_policy.h: the sandbox's and the frontend's seccomp filters (libseccomp). */
#ifndef AIRLOCKD_SECCOMP_POLICY_H
#define AIRLOCKD_SECCOMP_POLICY_H

#include <linux/filter.h>

/*
 * Compile the sandbox's default policy into a BPF program, once, before any
 * clone: the child between clone and exec loads it with
 * prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ret) and must not allocate.
 * ret->filter is malloc'd; free it with seccomp_policy_free().
 */
int seccomp_policy_sandbox(struct sock_fprog *ret);

/*
 * Compile the frontend's filter (the unprivileged, client-facing process):
 * everything the sandbox denies, plus process creation, exec, setuid and
 * friends that the frontend never needs.
 */
int seccomp_policy_frontend(struct sock_fprog *ret);

void seccomp_policy_free(struct sock_fprog *prog);

#endif
