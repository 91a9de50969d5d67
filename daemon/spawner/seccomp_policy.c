/* seccomp_policy.c: the sandbox's and the frontend's seccomp filters, compiled with libseccomp. */
#include "seccomp_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
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

#include "clear.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/*
 * The architectures whose tables the policy was reviewed against, and the
 * audit value the kernel gives their native calls. Anywhere else the
 * filters are not compiled and the daemon refuses to start: the names below
 * would still resolve, but the reviewed maximum and the numbers of the
 * table would mean nothing there (mips numbers from 4000, arm has private
 * calls at 0x0f0000, and neither was reviewed).
 */
#if defined(__x86_64__) && !defined(__ILP32__)
#define SECCOMP_POLICY_AUDIT_ARCH AUDIT_ARCH_X86_64
/*
 * x32 calls arrive as AUDIT_ARCH_X86_64 with this bit in the number: they
 * are left to libseccomp's part of the filter, which kills them (see
 * seccomp_policy_build), never answered ENOSYS by the reviewed maximum.
 */
#define SECCOMP_POLICY_X32_BIT 0x40000000U
#elif defined(__aarch64__) && defined(__AARCH64EL__)
#define SECCOMP_POLICY_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/*
 * Calls that fail with EPERM in both filters. docs/security.md, section
 * "Seccomp policy" ("Denied in the sandbox"), says why each one is here.
 * Names, not numbers: every call here is older than 424, libseccomp
 * resolves them for the architecture and knows the ones that do not exist
 * there (seccomp_policy_check() refuses a name it does not know). From 424
 * on, calls are in seccomp_policy_table, by number.
 */
static const char *const seccomp_policy_denied[] = {
	/* namespaces and mounts: the sandbox's walls */
	"unshare",
	"setns",
	"mount",
	"umount2",
	"pivot_root",
	"chroot",
	/* (the new mount API: by number, seccomp_policy_table) */
	/* kernel keyrings: not namespaced */
	"add_key",
	"request_key",
	"keyctl",
	/* large kernel attack surface */
	"bpf",
	"perf_event_open",
	"userfaultfd",
	/*
	 * fanotify: since Linux 5.13 an unprivileged process may watch any
	 * inode it can read, and the shared trees (/usr, the lib dirs) are
	 * the host's own inodes: a run learnt what the host opened under
	 * /usr/bin. A sandbox has no use for it. EPERM is what an
	 * unprivileged caller got before 5.13, so programs fall back.
	 */
	"fanotify_init",
	"fanotify_mark",
	/* other processes */
	"ptrace",
	"process_vm_readv",
	"process_vm_writev",
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

/* seccomp_policy_table's err: allowed, or clone3's own rule. */
#define SECCOMP_POLICY_ALLOW 0
#define SECCOMP_POLICY_CLONE3 (-1)

/* The first number of seccomp_policy_table: pidfd_send_signal, Linux 5.1. */
#define SECCOMP_POLICY_TABLE_FIRST 424

/*
 * Every system call numbered from 424 to SECCOMP_POLICY_REVIEWED_MAX, one
 * entry per number, in order, with its decision: allowed, or the errno the
 * filters return. From 424 on, x86_64 and the generic table (aarch64)
 * number every call alike, so these numbers are ours, not libseccomp's:
 * libseccomp 2.5.4 (Debian 12) names nothing above 456, and a name it did
 * not know would be a deny rule missing. Where libseccomp knows a name,
 * seccomp_policy_check() makes sure that it numbers it the same.
 * Reviewed against Linux 6.18 (docs/security.md, "Seccomp policy", says
 * why each call is denied or allowed). To raise the maximum, add the new
 * calls here with a decision: the check refuses a table with a gap.
 *
 * ENOSYS for the calls newer than Linux 6.1 (Debian 12's kernel, the
 * oldest the project supports) and for memfd_secret (ENOSYS where secret
 * memory is off): every program that runs there already takes its fallback
 * on ENOSYS for them; EPERM for the older ones, as for the named list.
 */
static const struct seccomp_policy_call {
	int nr;
	const char *name;
	int err;
} seccomp_policy_table[] = {
	{424, "pidfd_send_signal", SECCOMP_POLICY_ALLOW},
	/* io_uring: a second system-call interface that seccomp does not see */
	{425, "io_uring_setup", EPERM},
	{426, "io_uring_enter", EPERM},
	{427, "io_uring_register", EPERM},
	/* the new mount API: the sandbox's mount tree is the daemon's */
	{428, "open_tree", EPERM},
	{429, "move_mount", EPERM},
	{430, "fsopen", EPERM},
	{431, "fsconfig", EPERM},
	{432, "fsmount", EPERM},
	{433, "fspick", EPERM},
	{434, "pidfd_open", SECCOMP_POLICY_ALLOW},
	/* ENOSYS in the sandbox (flags in memory), EPERM in the frontend */
	{435, "clone3", SECCOMP_POLICY_CLONE3},
	{436, "close_range", SECCOMP_POLICY_ALLOW},
	{437, "openat2", SECCOMP_POLICY_ALLOW},
	/* taking another process's fds */
	{438, "pidfd_getfd", EPERM},
	{439, "faccessat2", SECCOMP_POLICY_ALLOW},
	{440, "process_madvise", SECCOMP_POLICY_ALLOW},
	{441, "epoll_pwait2", SECCOMP_POLICY_ALLOW},
	{442, "mount_setattr", EPERM},
	{443, "quotactl_fd", EPERM},
	/* a program may confine itself further */
	{444, "landlock_create_ruleset", SECCOMP_POLICY_ALLOW},
	{445, "landlock_add_rule", SECCOMP_POLICY_ALLOW},
	{446, "landlock_restrict_self", SECCOMP_POLICY_ALLOW},
	/* memory taken out of the kernel's direct map: no use in a run */
	{447, "memfd_secret", ENOSYS},
	{448, "process_mrelease", SECCOMP_POLICY_ALLOW},
	{449, "futex_waitv", SECCOMP_POLICY_ALLOW},
	{450, "set_mempolicy_home_node", SECCOMP_POLICY_ALLOW},
	/*
	 * Page-cache residency of any file the run can open, the host's
	 * /usr included: which host files were used lately (the side
	 * channel mincore() was closed for, CVE-2019-5489).
	 */
	{451, "cachestat", ENOSYS},
	{452, "fchmodat2", SECCOMP_POLICY_ALLOW},
	{453, "map_shadow_stack", SECCOMP_POLICY_ALLOW},
	{454, "futex_wake", SECCOMP_POLICY_ALLOW},
	{455, "futex_wait", SECCOMP_POLICY_ALLOW},
	{456, "futex_requeue", SECCOMP_POLICY_ALLOW},
	/* mount listing and the mount API: new code, and no use in a run */
	{457, "statmount", ENOSYS},
	{458, "listmount", ENOSYS},
	{459, "lsm_get_self_attr", SECCOMP_POLICY_ALLOW},
	{460, "lsm_set_self_attr", ENOSYS},
	{461, "lsm_list_modules", SECCOMP_POLICY_ALLOW},
	{462, "mseal", SECCOMP_POLICY_ALLOW},
	/* new entry points to what the older xattr calls and ioctls do */
	{463, "setxattrat", ENOSYS},
	{464, "getxattrat", ENOSYS},
	{465, "listxattrat", ENOSYS},
	{466, "removexattrat", ENOSYS},
	{467, "open_tree_attr", ENOSYS},
	{468, "file_getattr", ENOSYS},
	{469, "file_setattr", ENOSYS},
	/* namespace ids of the whole host: what other runs exist */
	{470, "listns", ENOSYS},
};

_Static_assert(sizeof(seccomp_policy_table) / sizeof(seccomp_policy_table[0]) ==
		       SECCOMP_POLICY_REVIEWED_MAX - SECCOMP_POLICY_TABLE_FIRST + 1,
	       "seccomp_policy_table: one entry per number up to SECCOMP_POLICY_REVIEWED_MAX");

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

/* The calls that the argument rules below name in code. */
static const char *const seccomp_policy_argument_calls[] = {
	"personality", "ioctl", "clone", "execveat", "socket", "socketpair",
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
 * The number of a table entry: ours, or -EINVAL when libseccomp knows the
 * name and numbers it otherwise (one of the two is wrong: refuse).
 */
static int
seccomp_policy_table_nr(const struct seccomp_policy_call *call)
{
	int nr = seccomp_syscall_resolve_name(call->name);

	if (nr >= 0 && nr != call->nr)
		return -EINVAL;
	return call->nr;
}

/* Deny the table's calls by number; the frontend denies clone3 on its own list. */
static int
seccomp_policy_add_table(scmp_filter_ctx ctx, bool frontend)
{
	size_t i;
	int r;

	for (i = 0; i < sizeof(seccomp_policy_table) / sizeof(seccomp_policy_table[0]); i++) {
		const struct seccomp_policy_call *call = &seccomp_policy_table[i];
		int err = call->err;
		int nr;

		if (err == SECCOMP_POLICY_ALLOW)
			continue;
		if (err == SECCOMP_POLICY_CLONE3) {
			if (frontend)
				continue;
			/*
			 * clone3() passes its flags in memory that BPF cannot
			 * read: ENOSYS makes the C library fall back to clone(),
			 * whose flags the filter sees.
			 */
			err = ENOSYS;
		}
		nr = seccomp_policy_table_nr(call);
		if (nr < 0)
			return nr;
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((uint32_t)err), nr, 0, NULL);
		if (r < 0)
			return r;
	}
	return 0;
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

	r = seccomp_policy_add_table(ctx, frontend);
	if (r < 0)
		return r;

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
	 * ANDs its comparisons. (clone3() is ENOSYS: seccomp_policy_add_table.)
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
	return seccomp_policy_add_sockets(ctx);
}

#ifdef SECCOMP_POLICY_AUDIT_ARCH
/*
 * The instructions that run before libseccomp's: a native call numbered
 * above SECCOMP_POLICY_REVIEWED_MAX gets ENOSYS. libseccomp has no rule for
 * a range of numbers, and its rules name only calls it knows. A call of
 * another architecture (i386 through int 0x80) and an x32 call (the x32
 * bit) go on to libseccomp's part, whose bad-architecture action kills
 * them; so does -1 on x86_64 (the number a tracer uses to skip a call;
 * libseccomp lets it through, and the kernel answers ENOSYS). ENOSYS, not
 * EPERM: it is what the kernel says for a call it lacks, so a program that
 * probes a newer call (glibc does) takes its fallback.
 */
static const struct sock_filter seccomp_policy_prefix[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
#ifdef SECCOMP_POLICY_X32_BIT
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_POLICY_AUDIT_ARCH, 0, 4),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SECCOMP_POLICY_X32_BIT, 2, 0),
#else
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_POLICY_AUDIT_ARCH, 0, 3),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#endif
	BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, SECCOMP_POLICY_REVIEWED_MAX, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
	/* libseccomp's program follows */
};
#else
/* No reviewed table here: the filters are never compiled (seccomp_policy_build). */
static const struct sock_filter seccomp_policy_prefix[] = {
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};
#endif

/*
 * Export a filter into a malloc'd program: seccomp_policy_prefix, then what
 * libseccomp compiled (its jumps are relative, so it runs unchanged after
 * the prefix). libseccomp 2.5 only exports to an fd, so through a memfd that
 * is mapped and copied.
 */
static int
seccomp_policy_export(scmp_filter_ctx ctx, struct sock_fprog *ret)
{
	const size_t nprefix = sizeof(seccomp_policy_prefix) / sizeof(seccomp_policy_prefix[0]);
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
	    size / sizeof(struct sock_filter) + nprefix > BPF_MAXINSNS) {
		r = -E2BIG;
		goto out;
	}
	filter = malloc(sizeof(seccomp_policy_prefix) + size);
	if (filter == NULL) {
		r = -ENOMEM;
		goto out;
	}
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		goto out;
	}
	memcpy(filter, seccomp_policy_prefix, sizeof(seccomp_policy_prefix));
	memcpy(filter + nprefix, map, size);
	munmap(map, size);
	ret->len = (unsigned short)(nprefix + size / sizeof(struct sock_filter));
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
#ifndef SECCOMP_POLICY_AUDIT_ARCH
	return -ENOTSUP;
#endif
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL)
		return -ENOMEM;
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r < 0)
		goto out;
	/*
	 * A binary tree over the call numbers instead of libseccomp's list:
	 * the same rules (libseccomp orders the same decisions differently;
	 * the seccomp tests check the verdicts), most calls decided in under
	 * 48 instructions instead of 50 to 240 (seccomp-cost), and the
	 * kernel's attach of the filter, done in every run's code process,
	 * measured at 72 us instead of 158 (median of 300 here; 396
	 * instructions instead of 378): issue 33's floor. libseccomp 2.5+.
	 */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
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

/* Every name of a list resolves; else -ENOSYS and the name. */
static int
seccomp_policy_check_names(const char *const *names, size_t n, const char **bad_name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (seccomp_syscall_resolve_name(names[i]) == __NR_SCMP_ERROR) {
			*bad_name = names[i];
			return -ENOSYS;
		}
	return 0;
}

/*
 * A name libseccomp cannot resolve would make a rule that is not there
 * (and a table that does not match the kernel a rule on the wrong call):
 * refuse to start rather than run a policy that is not the reviewed one.
 */
int
seccomp_policy_check(const char **bad_name)
{
#define SECCOMP_POLICY_N(a) (sizeof(a) / sizeof((a)[0]))
	const char *const *lists[] = {seccomp_policy_denied, seccomp_policy_frontend_denied,
				      seccomp_policy_noproc_denied, seccomp_policy_argument_calls};
	const size_t counts[] = {
		SECCOMP_POLICY_N(seccomp_policy_denied),
		SECCOMP_POLICY_N(seccomp_policy_frontend_denied),
		SECCOMP_POLICY_N(seccomp_policy_noproc_denied),
		SECCOMP_POLICY_N(seccomp_policy_argument_calls),
	};
	const char *name = NULL;
	size_t i;
	int r;

#ifndef SECCOMP_POLICY_AUDIT_ARCH
	if (bad_name != NULL)
		*bad_name = NULL;
	return -ENOTSUP;
#endif
	for (i = 0; i < SECCOMP_POLICY_N(lists); i++) {
		r = seccomp_policy_check_names(lists[i], counts[i], &name);
		if (r < 0)
			goto out;
	}
	for (i = 0; i < SECCOMP_POLICY_N(seccomp_policy_table); i++) {
		const struct seccomp_policy_call *call = &seccomp_policy_table[i];

		name = call->name;
		if (call->nr != SECCOMP_POLICY_TABLE_FIRST + (int)i) {
			r = -EINVAL;
			goto out;
		}
		r = seccomp_policy_table_nr(call);
		if (r < 0)
			goto out;
	}
	return 0;
out:
	if (bad_name != NULL)
		*bad_name = name;
	return r;
#undef SECCOMP_POLICY_N
}

void
seccomp_policy_free(struct sock_fprog *prog)
{
	if (prog == NULL)
		return;
	CLEAR_FREE(prog, prog->filter);
}
