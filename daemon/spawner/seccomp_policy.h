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
 * The fd the code's child execs the code from under subprocess = false
 * (execveat(fd, "", ..., AT_EMPTY_PATH)): the only exec that filter allows.
 * It must be at least the code's RLIMIT_NOFILE, so the code can never make
 * an fd of this number (a profile with subprocess = false and open_files
 * above it is a config error).
 */
#define SECCOMP_POLICY_EXEC_FD 4095

/*
 * The sandbox's policy for subprocess = false: the default one, plus EPERM
 * for fork, vfork, clone (threads too), execve, and execveat other than of
 * SECCOMP_POLICY_EXEC_FD with AT_EMPTY_PATH (the code's first exec).
 */
int seccomp_policy_sandbox_noproc(struct sock_fprog *ret);

/*
 * Compile the frontend's filter (the unprivileged, client-facing process):
 * everything the sandbox denies, plus process creation, exec, setuid and
 * friends that the frontend never needs.
 */
int seccomp_policy_frontend(struct sock_fprog *ret);

void seccomp_policy_free(struct sock_fprog *prog);

/*
 * The newest system call number the policy was reviewed for: 470, listns,
 * the last entry of Linux 6.18's tables (arch/x86/entry/syscalls/
 * syscall_64.tbl and include/uapi/asm-generic/unistd.h, which number every
 * call from 424 on alike). Every filter answers a native call above it
 * with ENOSYS, what a kernel without the call says, so a call that a newer
 * kernel adds never reaches the kernel until someone has reviewed it,
 * added its decision to seccomp_policy.c's table and raised this number.
 */
#define SECCOMP_POLICY_REVIEWED_MAX 470

/*
 * Check, before anything is compiled, that every call the policy names is
 * known (to libseccomp, or by number to the policy's own table) and that
 * the table agrees with libseccomp where both know a call. 0, or -ENOSYS
 * (a name neither knows), -EINVAL (a disagreement or a gap in the table)
 * or -ENOTSUP (no reviewed table for this architecture). On failure only,
 * *bad_name is the call at fault (NULL for the architecture): it names
 * what failed, as a step does, rather than being a result.
 */
int seccomp_policy_check(const char **bad_name);

#endif
