/*
 * preload_unknown.c: an LD_PRELOAD shim for test_refuse.py. It stands for
 * a libseccomp that does not know the system call named by
 * $AIRLOCK_TEST_UNKNOWN_SYSCALL; every other name goes to the real one.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dlsym(RTLD_NEXT) */
#endif
#include <dlfcn.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>

int seccomp_syscall_resolve_name(const char *name);

/* libseccomp's own, but for the one name the test hides. */
int
seccomp_syscall_resolve_name(const char *name)
{
	int (*real)(const char *);
	const char *unknown = getenv("AIRLOCK_TEST_UNKNOWN_SYSCALL");

	if (unknown != NULL && strcmp(name, unknown) == 0)
		return __NR_SCMP_ERROR;
	real = (int (*)(const char *))dlsym(RTLD_NEXT, "seccomp_syscall_resolve_name");
	return real != NULL ? real(name) : __NR_SCMP_ERROR;
}
