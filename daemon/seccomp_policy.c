/* seccomp_policy.c: the sandbox's and the frontend's seccomp filters, compiled with libseccomp. */
#include "seccomp_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/*
 * Calls that fail with EPERM in both filters. docs/security.md, section
 * "Seccomp policy" ("Denied in the sandbox"), says why each one is here.
 * Names, not numbers: libseccomp resolves them for the architecture and
 * knows the ones that do not exist there.
 */
static const char *const seccomp_policy_denied[] = {
	/* namespaces and mounts: the sandbox's walls */
	"unshare",
	"setns",
	"mount",
	"umount2",
	"pivot_root",
	"chroot",
	"open_tree",
	"move_mount",
	"fsopen",
	"fsconfig",
	"fsmount",
	"fspick",
	"mount_setattr",
	/* kernel keyrings: not namespaced */
	"add_key",
	"request_key",
	"keyctl",
	/* large kernel attack surface */
	"bpf",
	"perf_event_open",
	"userfaultfd",
	"io_uring_setup",
	"io_uring_enter",
	"io_uring_register",
	/* other processes */
	"ptrace",
	"process_vm_readv",
	"process_vm_writev",
	"pidfd_getfd",
	"kcmp",
	/* the host itself */
	"kexec_load",
	"kexec_file_load",
	"init_module",
	"finit_module",
	"delete_module",
	"reboot",
	"swapon",
	"swapoff",
	"acct",
	"quotactl",
	"quotactl_fd",
	"open_by_handle_at",
	"name_to_handle_at",
	"syslog",
	"lookup_dcookie",
	"nfsservctl",
	"uselib",
	"vhangup",
	/* the clock is not namespaced */
	"settimeofday",
	"clock_settime",
	"clock_adjtime",
	"adjtimex",
	/*
	 * Per-process segment descriptors: only 16-bit and Wine-style code
	 * uses them, and the LDT code has been a source of kernel bugs
	 * (CVE-2015-5157, CVE-2017-17053) and of gadgets for exploits.
	 */
	"modify_ldt",
};

/* Calls the frontend never makes: it neither runs programs nor changes its ids. */
static const char *const seccomp_policy_frontend_denied[] = {
	"execve",    "execveat",  "fork",      "vfork",	   "clone",
	"clone3",    "setuid",	  "setgid",    "setreuid", "setregid",
	"setresuid", "setresgid", "setgroups", "setfsuid", "setfsgid",
};

/*
 * subprocess = false (docs/security.md, "Profiles"): the calls that make a
 * process or a thread, or run another program, fail with EPERM. clone is
 * denied whatever its flags (threads too); clone3 stays ENOSYS, as in the
 * sandbox's filter, so the C library falls back to clone and gets EPERM
 * there. execveat is allowed only as the code's own first exec (below).
 */
static const char *const seccomp_policy_noproc_denied[] = {
	"fork",
	"vfork",
	"clone",
	"execve",
};

/* The namespace flags that clone() must not carry in the sandbox. */
static const uint64_t seccomp_policy_clone_ns[] = {
	CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
	CLONE_NEWUSER, CLONE_NEWPID,	CLONE_NEWNET, CLONE_NEWTIME,
};

/*
 * The socket families sandboxed code may create, sorted. Everything else
 * fails with EAFNOSUPPORT, what a kernel without the family says, so programs
 * that probe take their fallback. Why not the rest: the network namespace
 * isolates only these families' addresses. AF_VSOCK is VM-wide (a run could
 * bind a port of the whole VM or talk to the hypervisor), AF_PACKET and
 * AF_XDP reach devices, AF_ALG the kernel's crypto code, and an unknown
 * family makes the kernel load its module on demand (net-pf-N): DCCP, RDS,
 * TIPC and others had unprivileged exploits that way.
 * AF_NETLINK is here for NETLINK_ROUTE only (see below).
 */
static const uint64_t seccomp_policy_families[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};

/*
 * The protocols of AF_INET and AF_INET6 sockets the code may name, sorted:
 * the default for the type (0), ICMP and ICMPv6 (unprivileged ping sockets),
 * TCP and UDP. Any other makes the kernel load the protocol's module on
 * demand (net-pf-N-proto-M: SCTP, DCCP, L2TP had unprivileged exploits that
 * way) or reach code no run needs; it gets EPROTONOSUPPORT, what a kernel
 * without it says (MPTCP users fall back to TCP on it).
 */
static const uint64_t seccomp_policy_inet_protocols[] = {0, IPPROTO_ICMP, IPPROTO_TCP, IPPROTO_UDP,
							 IPPROTO_ICMPV6};

/* Add one rule by syscall name; -ENOSYS when libseccomp does not know the name. */
static int
seccomp_policy_add(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned nargs,
		   const struct scmp_arg_cmp *args)
{
	int nr = seccomp_syscall_resolve_name(name);

	if (nr == __NR_SCMP_ERROR)
		return -ENOSYS;
	return seccomp_rule_add_array(ctx, action, nr, nargs, args);
}

/*
 * personality(): allow only PER_LINUX (0) and the query 0xffffffff; other
 * values turn off ASLR (ADDR_NO_RANDOMIZE) or change the ABI. libseccomp
 * refuses two comparisons of one argument in a rule, and rules are ORed, so
 * "neither 0 nor 0xffffffff" is written as a union of aligned blocks, each
 * one MASKED_EQ on all 64 bits: [2^k, 2^(k+1)) for k < 31, then
 * [0x80000000, 0xfffffffe] as blocks whose top bits are ones and then a zero,
 * and everything above 0xffffffff. Upper garbage is denied although the
 * kernel would truncate it: that fails safe.
 */
static int
seccomp_policy_add_personality(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp arg;
	unsigned k;
	int r;

	for (k = 0; k < 31; k++) {
		arg = SCMP_A0(SCMP_CMP_MASKED_EQ, ~0ULL << k, 1ULL << k);
		r = seccomp_policy_add(ctx, SCMP_ACT_ERRNO(EPERM), "personality", 1, &arg);
		if (r < 0)
			return r;
	}
	for (k = 0; k < 31; k++) {
		uint64_t value = (0xffffffffULL >> (k + 1)) << (k + 1);

		arg = SCMP_A0(SCMP_CMP_MASKED_EQ, ~0ULL << k, value);
		r = seccomp_policy_add(ctx, SCMP_ACT_ERRNO(EPERM), "personality", 1, &arg);
		if (r < 0)
			return r;
	}
	arg = SCMP_A0(SCMP_CMP_GT, 0xffffffffULL);
	return seccomp_policy_add(ctx, SCMP_ACT_ERRNO(EPERM), "personality", 1, &arg);
}

/*
 * Deny `call` with err when argument `idx` is outside the sorted list
 * allowed[n] (and, with `also`, only when that comparison holds too). Rules
 * are ORed and libseccomp takes one comparison per argument in a rule, so
 * the gaps between allowed values are covered by aligned power-of-two blocks
 * (a masked compare each) and the rest by one "greater than the last".
 */
static int
seccomp_policy_deny_outside(scmp_filter_ctx ctx, int err, const char *call, unsigned idx,
			    const uint64_t *allowed, size_t n, const struct scmp_arg_cmp *also)
{
	struct scmp_arg_cmp args[2];
	uint64_t lo = 0;
	size_t i;
	int r;

	if (also != NULL)
		args[1] = *also;
	for (i = 0; i <= n; i++) {
		uint64_t hi = i < n ? allowed[i] : lo; /* exclusive */

		while (lo < hi) {
			uint64_t size = 1;

			while (lo % (size * 2) == 0 && lo + size * 2 <= hi)
				size *= 2;
			args[0] = (struct scmp_arg_cmp){.arg = idx,
							.op = SCMP_CMP_MASKED_EQ,
							.datum_a = ~(size - 1),
							.datum_b = lo};
			r = seccomp_policy_add(ctx, SCMP_ACT_ERRNO(err), call, also ? 2 : 1, args);
			if (r < 0)
				return r;
			lo += size;
		}
		if (i < n)
			lo = allowed[i] + 1;
	}
	args[0] = (struct scmp_arg_cmp){.arg = idx, .op = SCMP_CMP_GT, .datum_a = allowed[n - 1]};
	return seccomp_policy_add(ctx, SCMP_ACT_ERRNO(err), call, also ? 2 : 1, args);
}

/* socket() and socketpair() of a family not in seccomp_policy_families. */
static int
seccomp_policy_add_families(scmp_filter_ctx ctx, const char *call)
{
	return seccomp_policy_deny_outside(
		ctx, EAFNOSUPPORT, call, 0, seccomp_policy_families,
		sizeof(seccomp_policy_families) / sizeof(seccomp_policy_families[0]), NULL);
}

/*
 * socket() and socketpair() of the allowed families only. AF_NETLINK only
 * with NETLINK_ROUTE: getifaddrs() and if_nameindex() need it (node's
 * os.networkInterfaces(), Python's socket.if_nameindex(), `ip addr`, Go's
 * net.Interfaces()), and in the run's own network namespace, without
 * capabilities, it can only read that namespace's lo. Other netlink
 * protocols reach host-wide or large kernel code (uevents, audit, generic
 * netlink families, netfilter); they get EPROTONOSUPPORT, what the kernel
 * says for a protocol it does not have. A protocol with upper bits set is
 * denied although the kernel would truncate it (fails safe).
 */
static int
seccomp_policy_add_sockets(scmp_filter_ctx ctx)
{
	static const char *const calls[] = {"socket", "socketpair"};
	static const uint64_t inet[2] = {AF_INET, AF_INET6};
	size_t i, f;
	int r;

	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		struct scmp_arg_cmp args[2] = {
			SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
			SCMP_A2(SCMP_CMP_NE, NETLINK_ROUTE),
		};

		r = seccomp_policy_add_families(ctx, calls[i]);
		if (r < 0)
			return r;
		r = seccomp_policy_add(ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT), calls[i], 2, args);
		if (r < 0)
			return r;
		for (f = 0; f < 2; f++) {
			struct scmp_arg_cmp fam = SCMP_A0(SCMP_CMP_EQ, inet[f]);

			r = seccomp_policy_deny_outside(
				ctx, EPROTONOSUPPORT, calls[i], 2, seccomp_policy_inet_protocols,
				sizeof(seccomp_policy_inet_protocols) /
					sizeof(seccomp_policy_inet_protocols[0]),
				&fam);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/*
 * subprocess = false: deny process creation and exec, except execveat of
 * SECCOMP_POLICY_EXEC_FD with AT_EMPTY_PATH, which is how the code's child
 * execs the code (sandbox_code.c). That fd is close-on-exec, and the code's
 * RLIMIT_NOFILE (hard = soft, at most SECCOMP_POLICY_EXEC_FD) keeps it from
 * ever making an fd of that number again (dup2 gives EBADF, F_DUPFD EINVAL,
 * raising the hard limit needs CAP_SYS_RESOURCE): so the one exec the
 * filter allows is the first. A dirfd with upper bits set is denied,
 * although the kernel would truncate it (fails safe).
 */
static int
seccomp_policy_add_noproc(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp fd = SCMP_A0(SCMP_CMP_NE, SECCOMP_POLICY_EXEC_FD);
	struct scmp_arg_cmp flags = SCMP_A4(SCMP_CMP_NE, AT_EMPTY_PATH);
	size_t i;
	int r;

	for (i = 0;
	     i < sizeof(seccomp_policy_noproc_denied) / sizeof(seccomp_policy_noproc_denied[0]);
	     i++) {
		r = seccomp_policy_add(ctx, SCMP_ACT_ERRNO(EPERM), seccomp_policy_noproc_denied[i],
				       0, NULL);
		if (r < 0)
			return r;
	}
	/* Rules are ORed: denied when either comparison holds. */
	r = seccomp_policy_add(ctx, SCMP_ACT_ERRNO(EPERM), "execveat", 1, &fd);
	if (r < 0)
		return r;
	return seccomp_policy_add(ctx, SCMP_ACT_ERRNO(EPERM), "execveat", 1, &flags);
}

/* Add every deny rule of the sandbox; frontend adds its own on top and skips clone's;
 * noproc (subprocess = false) denies every clone instead of clone's namespace flags. */
static int
seccomp_policy_add_common(scmp_filter_ctx ctx, bool frontend, bool noproc)
{
	size_t i;
	int r;

	for (i = 0; i < sizeof(seccomp_policy_denied) / sizeof(seccomp_policy_denied[0]); i++) {
		r = seccomp_policy_add(ctx, SCMP_ACT_ERRNO(EPERM), seccomp_policy_denied[i], 0,
				       NULL);
		if (r < 0)
			return r;
	}

	r = seccomp_policy_add_personality(ctx);
	if (r < 0)
		return r;

	/*
	 * ioctl(TIOCSTI) pushes bytes into a terminal's input, TIOCLINUX can do
	 * the same on a virtual console. The kernel truncates the request to
	 * 32 bits, so only the low 32 bits are compared: TIOCSTI | 1 << 32 is
	 * TIOCSTI to the kernel.
	 */
	{
		static const unsigned long reqs[] = {TIOCSTI, TIOCLINUX};

		for (i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
			struct scmp_arg_cmp arg =
				SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, (uint64_t)reqs[i]);

			r = seccomp_policy_add(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &arg);
			if (r < 0)
				return r;
		}
	}

	if (frontend)
		return 0;

	/*
	 * clone() with any namespace flag: one rule per flag because a rule
	 * ANDs its comparisons. clone3() passes its flags in memory that BPF
	 * cannot read, so it reports ENOSYS and the C library falls back to
	 * clone(), whose flags we can see.
	 */
	for (i = 0;
	     !noproc && i < sizeof(seccomp_policy_clone_ns) / sizeof(seccomp_policy_clone_ns[0]);
	     i++) {
		struct scmp_arg_cmp arg = SCMP_A0(SCMP_CMP_MASKED_EQ, seccomp_policy_clone_ns[i],
						  seccomp_policy_clone_ns[i]);

		r = seccomp_policy_add(ctx, SCMP_ACT_ERRNO(EPERM), "clone", 1, &arg);
		if (r < 0)
			return r;
	}
	if (noproc) {
		r = seccomp_policy_add_noproc(ctx);
		if (r < 0)
			return r;
	}
	r = seccomp_policy_add_sockets(ctx);
	if (r < 0)
		return r;
	return seccomp_policy_add(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL);
}

/*
 * Export a filter into a malloc'd program. libseccomp 2.5 only exports to an
 * fd, so through a memfd that is mapped and copied.
 */
static int
seccomp_policy_export(scmp_filter_ctx ctx, struct sock_fprog *ret)
{
	struct sock_filter *filter = NULL;
	struct stat st;
	size_t size;
	void *map;
	int fd, r;

	fd = memfd_create("airlock-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		goto out;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	size = (size_t)st.st_size;
	if (size == 0 || size % sizeof(struct sock_filter) != 0 ||
	    size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		r = -E2BIG;
		goto out;
	}
	filter = malloc(size);
	if (filter == NULL) {
		r = -ENOMEM;
		goto out;
	}
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		goto out;
	}
	memcpy(filter, map, size);
	munmap(map, size);
	ret->len = (unsigned short)(size / sizeof(struct sock_filter));
	ret->filter = filter;
	filter = NULL;
	r = 0;
out:
	free(filter);
	close(fd);
	return r;
}

/*
 * Build a filter: allow by default, deny the listed calls with an errno. A
 * call from another architecture (i386 via int 0x80, x32 numbers with bit
 * 30 set) kills the process: our rules are written for native numbers only,
 * and nothing legitimate in the sandbox or the frontend uses them.
 */
static int
seccomp_policy_build(bool frontend, bool noproc, struct sock_fprog *ret)
{
	scmp_filter_ctx ctx;
	size_t i;
	int r;

	if (ret == NULL)
		return -EINVAL;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL)
		return -ENOMEM;
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r < 0)
		goto out;
	r = seccomp_policy_add_common(ctx, frontend, noproc);
	if (r < 0)
		goto out;
	if (frontend)
		for (i = 0; i < sizeof(seccomp_policy_frontend_denied) /
					sizeof(seccomp_policy_frontend_denied[0]);
		     i++) {
			r = seccomp_policy_add(ctx, SCMP_ACT_ERRNO(EPERM),
					       seccomp_policy_frontend_denied[i], 0, NULL);
			if (r < 0)
				goto out;
		}
	r = seccomp_policy_export(ctx, ret);
out:
	seccomp_release(ctx);
	return r;
}

int
seccomp_policy_sandbox(struct sock_fprog *ret)
{
	return seccomp_policy_build(false, false, ret);
}

int
seccomp_policy_sandbox_noproc(struct sock_fprog *ret)
{
	return seccomp_policy_build(false, true, ret);
}

int
seccomp_policy_frontend(struct sock_fprog *ret)
{
	return seccomp_policy_build(true, false, ret);
}

void
seccomp_policy_free(struct sock_fprog *prog)
{
	if (prog == NULL)
		return;
	free(prog->filter);
	prog->filter = NULL;
	prog->len = 0;
}
