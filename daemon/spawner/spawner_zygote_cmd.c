/*
 * spawner_zygote_cmd.c: SPAWN_ZYGOTE_START in the spawner's table and the
 * zygotes' lives (docs/design-bursts.md §3.3): the frontend's spec split
 * and checked, zygote.py and the extension from the spawner's own paths,
 * the order socket made here, spawner_zygote_start(); at the reap
 * SPAWN_ZYGOTE_GONE; with the frontend gone, every zygote killed.
 */
#include "spawner_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "fdio.h"
#include "fdpass.h"
#include "log.h"
#include "memfd.h"
#include "spawn_msg.h"
#include "spawner_zygote.h"

/* A spec split in place: python, then the environment, NULL-terminated. */
struct spawner_zygote_spec {
	char buf[SPAWN_ZYGOTE_SPEC_MAX];
	const char *python;
	char *envp[SPAWN_ZYGOTE_ENV_MAX + 1];
};

/*
 * Whether the environment entry e (NAME=value) would have the dynamic
 * loader or glibc load code or act on files the frontend names: the
 * LD_ variables and glibc's other unsecure ones (those it drops for a
 * setuid program, AT_SECURE). The zygote runs outside any sandbox as the
 * owner of its caller's runs' namespaces, and no AT_SECURE protects it:
 * the frontend names its python and environment, never code it loads
 * (as it never names zygote.py). A runtime that needs one of these for
 * its runs takes no zygote.
 */
static bool
spawner_zygote_env_loads(const char *e)
{
	static const char *const names[] = {"GCONV_PATH",	"GETCONF_DIR", "GLIBC_TUNABLES",
					    "HOSTALIASES",	"LOCALDOMAIN", "LOCPATH",
					    "MALLOC_TRACE",	"NIS_PATH",    "NLSPATH",
					    "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR"};
	size_t i, k = (size_t)(strchr(e, '=') - e);

	if (strncmp(e, "LD_", 3) == 0)
		return true;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == k && strncmp(e, names[i], k) == 0)
			return true;
	return false;
}

/*
 * Read and split the frontend's spec (spawn_msg.h). The frontend is less
 * trusted than we are: sealed (it cannot change under us), bounded, every
 * string NUL-terminated and none empty, python absolute, each environment
 * entry NAME=value. Splitting at NULs is all: the spawner parses nothing
 * (link-check). 0, -EPERM (not sealed, or an entry that loads code:
 * spawner_zygote_env_loads), -E2BIG, -EINVAL or read's -errno.
 */
static int
spawner_zygote_spec(int fd, struct spawner_zygote_spec *spec)
{
	uint64_t size;
	size_t off, n = 0;
	ssize_t got;
	int r = memfd_check_sealed(fd, SPAWN_ZYGOTE_SPEC_MAX, &size);

	if (r < 0)
		return r;
	if (size == 0)
		return -EINVAL;
	for (off = 0; off < size; off += (size_t)got) {
		got = pread(fd, spec->buf + off, (size_t)size - off, (off_t)off);
		if (got < 0 && errno == EINTR) {
			got = 0;
			continue;
		}
		if (got <= 0)
			return got < 0 ? -errno : -EIO;
	}
	if (spec->buf[size - 1] != '\0')
		return -EINVAL;
	spec->python = spec->buf;
	if (spec->python[0] != '/' || spec->python[1] == '\0')
		return -EINVAL;
	for (off = strlen(spec->buf) + 1; off < size; off += strlen(spec->buf + off) + 1) {
		char *e = spec->buf + off;

		if (e[0] == '\0' || e[0] == '=' || strchr(e, '=') == NULL)
			return -EINVAL;
		if (spawner_zygote_env_loads(e))
			return -EPERM;
		if (n == SPAWN_ZYGOTE_ENV_MAX)
			return -E2BIG;
		spec->envp[n++] = e;
	}
	spec->envp[n] = NULL;
	return 0;
}

/*
 * zygote.py: python runs it outside any sandbox as U_z, the owner of the
 * caller's runs' user namespaces, so only a regular file that only root
 * can change, and not through a symlink; the open file is what the
 * zygote reads (/proc/self/fd/5), not what the path names later.
 */
static int
spawner_zygote_script(const char *path)
{
	return spawner_zygote_open_root(path, O_NOFOLLOW, 0);
}

/*
 * python is one the start-up configuration runs (struct spawner's
 * zygote_pythons): any root-owned program would pass the file check, and
 * the zygote runs it outside any sandbox as U_z.
 */
static bool
spawner_zygote_python_known(const struct spawner *sp, const char *python)
{
	size_t i;

	for (i = 0; i < sp->nzygote_pythons; i++)
		if (strcmp(sp->zygote_pythons[i], python) == 0)
			return true;
	return false;
}

/* The runs' seccomp program in a sealed memfd (the zygote copies it). */
static int
spawner_zygote_bpf(const struct sock_fprog *prog, int *ret_fd)
{
	/* An empty program would leave the runs with none at all. */
	if (prog->len == 0 || prog->filter == NULL)
		return -EINVAL;
	int r = memfd_sealed_create("airlock-zygote-bpf", prog->filter,
				    (size_t)prog->len * sizeof(prog->filter[0]), ret_fd);

	/* zygote.py reads it from the file offset, which the write left at
	 * the end (the zygote would see an empty program). */
	if (r == 0 && lseek(*ret_fd, 0, SEEK_SET) < 0) {
		r = -errno;
		*ret_fd = fd_close(*ret_fd);
	}
	return r;
}

/*
 * The slot may take a zygote: ours, with no sandbox, keeper or zygote in
 * it. A slot's uids are one run's or one zygote's, never both: the zygote
 * owns the user namespaces its uid creates.
 */
static bool
spawner_zygote_slot_free(const struct spawner *sp, uint32_t slot)
{
	return slot < sp->nslots && sp->slots[slot].pid == 0 && sp->keepers[slot].pid == 0 &&
	       sp->zygotes[slot].pid == 0;
}

/* Start the zygote of req's slot; its pid in *ret_pid, our socket end in *ret_sock. */
static int
spawner_zygote_launch(struct spawner *sp, const struct spawn_req *req, int spec_fd, pid_t *ret_pid,
		      int *ret_sock, const char **ret_step)
{
	static struct spawner_zygote_spec spec; /* 64 KiB: not on the stack */
	struct spawner_zygote z;
	int script = -1, bpf = -1, sv[2] = {-1, -1}, r;

	*ret_step = "spec";
	r = spawner_zygote_spec(spec_fd, &spec);
	if (r < 0)
		return r;
	*ret_step = "python";
	r = spawner_zygote_python_known(sp, spec.python) ? 0 : -EPERM;
	if (r < 0)
		return r;
	*ret_step = "bpf";
	r = spawner_zygote_bpf((req->flags & SPAWN_F_NOPROC) ? &sp->seccomp_noproc : &sp->seccomp,
			       &bpf);
	if (r < 0)
		goto out;
	*ret_step = "script";
	r = script = spawner_zygote_script(sp->zygote_script);
	if (r < 0)
		goto out;
	*ret_step = "socket";
	/* Ours non-blocking: a zygote that does not read its orders costs a
	 * run -EAGAIN (it goes the ordinary way), never the spawner a wait. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0) {
		r = -errno;
		goto out;
	}
	z = (struct spawner_zygote){.python = spec.python,
				    .ext = sp->zygote_ext,
				    .script_fd = script,
				    .sock_fd = sv[1],
				    .bpf_fd = bpf,
				    .envp = spec.envp,
				    .uid = spawner_uid(sp, req->uid_slot),
				    .gid = spawner_uid(sp, req->uid_slot)};
	r = spawner_zygote_start(&z, ret_pid, ret_step);
	if (r < 0)
		goto out;
	*ret_sock = sv[0];
	sv[0] = -1;
out:
	fd_close_pair(sv);
	fd_close(script);
	fd_close(bpf);
	return r;
}

void
spawner_zygote_cmd(struct spawner *sp, const struct spawn_req *req, int *fds, size_t nfds)
{
	struct spawn_ev ev = {.type = SPAWN_FAILED, .run_id = req->run_id};
	const char *step = "uid_slot";
	pid_t pid = 0;
	int sock = -1, r = -EINVAL;

	if (!spawner_zygote_slot_free(sp, req->uid_slot))
		goto fail;
	/* A sandbox an earlier zygote of the slot owns is alive: a new
	 * zygote there (maybe another caller's) would own it too. */
	step = "owned";
	r = -EBUSY;
	if (sp->zygotes[req->uid_slot].owned != 0)
		goto fail;
	/* Never the frontend's files: the zygote runs them outside a sandbox. */
	step = "zygote";
	r = -EOPNOTSUPP;
	if (sp->zygote_script == NULL || sp->zygote_ext == NULL)
		goto fail;
	r = spawner_zygote_launch(sp, req, fds[0], &pid, &sock, &step);
	if (r < 0)
		goto fail;
	sp->zygotes[req->uid_slot] =
		(struct spawner_zygote_slot){.pid = pid, .run_id = req->run_id, .sock = sock};
	ev.type = SPAWN_STARTED;
	ev.pid = (int32_t)pid;
	r = fdpass_send(sp->sock, &ev, sizeof(ev), NULL, 0);
	if (r < 0)
		log_warnx("spawner: send to frontend: %s", strerror(-r));
	goto out;
fail:
	ev.err = r;
	snprintf(ev.step, sizeof(ev.step), "%s", step);
	log_warnx("spawner: zygote %" PRIu32 ": %s: %s", req->run_id, step, strerror(-r));
	r = fdpass_send(sp->sock, &ev, sizeof(ev), NULL, 0);
	if (r < 0)
		log_warnx("spawner: send to frontend: %s", strerror(-r));
out:
	fdpass_close_all(fds, nfds);
}

int
spawner_zygote_run_fds(struct spawner *sp, const struct spawn_req *req, const int *fds, size_t nfds,
		       int run_fds[SB_START_NFDS_ZYGOTE])
{
	const struct spawner_slot *slot = &sp->slots[req->uid_slot];
	const struct spawner_zygote_slot *z;
	int fd;

	if (nfds > SB_START_NFDS_ZYGOTE ||
	    ((req->flags & SPAWN_F_ZYGOTE_RUN) && nfds >= SB_START_NFDS_ZYGOTE))
		return -EINVAL;
	memcpy(run_fds, fds, nfds * sizeof(*fds));
	if (!(req->flags & SPAWN_F_ZYGOTE_RUN))
		return (int)nfds;
	/* Only the zygote that owns the sandbox's user namespace can enter
	 * it (its uid is that namespace's owner); a sandbox owned by none,
	 * or whose zygote was reaped (its socket closed), gets no order. */
	if (slot->owner == 0 || slot->owner > sp->nslots)
		return -ESRCH;
	z = &sp->zygotes[slot->owner - 1];
	if (z->pid <= 0 || z->sock < 0)
		return -ESRCH;
	/*
	 * The supervisor gets a copy of our end (the lead's decision,
	 * docs/design-bursts.md §3.5): it sends the order itself, so we wait
	 * for nothing. What that gives a supervisor the code subverted:
	 * orders to its own caller's zygote carrying only fds it holds, and
	 * nothing to read (the zygote sends nothing on this socket: its
	 * reports go on each order's own pipe). Close-on-exec: the code the
	 * supervisor clones never holds it. Non-blocking, as ours (one open
	 * file): a full queue is the supervisor's EAGAIN, not a wait.
	 */
	fd = fcntl(z->sock, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	run_fds[nfds] = fd;
	return (int)nfds + 1;
}

bool
spawner_zygote_reaped(struct spawner *sp, pid_t pid, int status)
{
	struct spawn_ev ev = {.type = SPAWN_ZYGOTE_GONE, .pid = pid, .status = status};
	uint32_t i;
	int r;

	for (i = 0; i < sp->nslots; i++)
		if (sp->zygotes[i].pid == pid)
			break;
	if (i == sp->nslots)
		return false;
	ev.run_id = sp->zygotes[i].run_id;
	/* Its sandboxes (owned) outlive it: the count stays. */
	sp->zygotes[i].sock = fd_close(sp->zygotes[i].sock);
	sp->zygotes[i].pid = 0;
	r = fdpass_send(sp->sock, &ev, sizeof(ev), NULL, 0);
	if (r < 0)
		log_warnx("spawner: send to frontend: %s", strerror(-r));
	return true;
}

void
spawner_zygote_stop(struct spawner *sp, const struct spawn_req *req)
{
	/*
	 * Only the zygote started under that key: one the frontend asks to
	 * stop may have died and its slot taken a new zygote (another
	 * caller's, maybe) before the request was read. Nothing is answered
	 * but the reap, which the frontend waits for before it frees the
	 * slot.
	 */
	if (req->uid_slot >= sp->nslots || sp->zygotes[req->uid_slot].pid <= 0 ||
	    sp->zygotes[req->uid_slot].run_id != req->run_id) {
		log_debug("spawner: zygote %" PRIu32 ": stop of no live zygote", req->run_id);
		return;
	}
	/* As its uid, like a sandbox's kill (spawner_kill). */
	spawner_kill(sp, req->uid_slot, sp->zygotes[req->uid_slot].pid);
}

void
spawner_zygote_stop_all(struct spawner *sp)
{
	uint32_t i;

	for (i = 0; i < sp->nslots; i++) {
		if (sp->zygotes[i].pid <= 0)
			continue;
		/* As its uid, like a sandbox's kill (spawner_kill). */
		spawner_kill(sp, i, sp->zygotes[i].pid);
		while (waitpid(sp->zygotes[i].pid, NULL, __WALL) < 0 && errno == EINTR)
			;
		sp->zygotes[i].sock = fd_close(sp->zygotes[i].sock);
		sp->zygotes[i].pid = 0;
	}
}
