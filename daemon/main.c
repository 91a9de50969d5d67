/*
 * main.c: airlockd start-up. As root: read the config, take the socket,
 * read the host layout, compile the seccomp filters, prepare the cgroup.
 * Then split: the parent becomes the spawner (CAP_SETUID/CAP_SETGID only),
 * the child the frontend (service user, no capabilities, seccomp).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <event2/event.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "config.h"
#include "fdio.h"
#include "frontend.h"
#include "landlock.h"
#include "log.h"
#include "privdrop.h"
#include "sandbox.h"
#include "seccomp_policy.h"
#include "spawner.h"
#include "startcheck.h"
#include "xalloc.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: airlockd [--foreground] [--debug] [--config FILE] [--socket PATH]\n"
		   "                [--user NAME] [--zygote-dir DIR]\n");
}

/* Make the socket's directory if it is missing (root-owned, 0755); refuse
 * to start, saying so, if the socket cannot be made in it. */
static void
main_socket_dir(const char *path)
{
	char dir[512], why[512];
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		fatalx("socket path too long");
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST && errno != EROFS)
		fatal("mkdir %s", dir);
	if (startcheck_socket_dir(dir, why, sizeof(why)) < 0)
		fatalx("%s", why);
}

/* --user overrides the config's service user. */
static void
main_set_user(struct config *cfg, const char *name)
{
	struct passwd *pw = getpwnam(name);
	char *p;

	if (pw == NULL)
		fatalx("--user %s: no such user", name);
	if (pw->pw_uid == 0)
		fatalx("--user %s: the frontend may not run as root", name);
	p = xstrdup(name);
	free(cfg->service_user);
	cfg->service_user = p;
	cfg->service_uid = pw->pw_uid;
	cfg->service_gid = pw->pw_gid;
}

/*
 * The soft RLIMIT_NOFILE up to the hard limit, in the frontend and in the
 * spawner. The frontend's bounds the fds it may hold open and, through the
 * kernel's per-user count of fds in flight in sockets, the fds its replies
 * may carry unread: systemd's default soft limit of 1024 was 19 unread
 * replies away from a stop (issue 13). The spawner's bounds the fds of the
 * requests it receives (up to five each) beside those it holds per
 * sandbox: at 1024 a busy spawner loses a request's fds sooner (that
 * request then fails alone: spawner_fds_lost). A run's code gets its own
 * limit, hard = soft (seccomp_policy.c), whatever the spawner's.
 */
static void
main_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		log_warn("setrlimit(RLIMIT_NOFILE)");
}

/* The child side of the split. Never returns. */
__attribute__((noreturn)) static void
main_frontend(struct config *cfg, int listen_fd, int spawner_fd, const struct sock_fprog *filter,
	      enum cgroup_kind resource_control, const char *config_path, bool config_given,
	      pid_t spawner, const char *usr_submount)
{
	struct daemon d;
	int r;

	log_set_ident("airlockd[frontend]");
	main_raise_nofile();
	r = privdrop_frontend(cfg->service_uid, cfg->service_gid);
	if (r < 0)
		fatalx("cannot drop privileges to %s (uid %u): %s", cfg->service_user,
		       (unsigned)cfg->service_uid, strerror(-r));
	/* The spawner is our parent: if it dies, we go too. Set after the
	 * drop, which would clear it; a spawner gone before is caught here. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		fatal("prctl(PR_SET_PDEATHSIG)");
	if (getppid() != spawner)
		fatalx("spawner died during start-up");
	if (prctl(PR_SET_SECCOMP, 2 /* SECCOMP_MODE_FILTER */, filter, 0, 0) < 0)
		fatal("cannot load the frontend's seccomp filter");
	d = (struct daemon){
		.cfg = cfg,
		.listen_fd = listen_fd,
		.spawner_fd = spawner_fd,
		.resource_control = resource_control,
		.config_path = config_path,
		.config_given = config_given,
		.journal = getenv("JOURNAL_STREAM") != NULL,
		.reserve_fd = -1,
		.rootspec_fd = -1,
		.store_fd = -1,
	};
	snprintf(d.usr_submount, sizeof(d.usr_submount), "%s", usr_submount);
	for (size_t i = 0; i < CONFIG_RUNTIMES_MAX; i++)
		d.prestart_plan[i] = -1;
	d.base = event_base_new();
	if (d.base == NULL)
		fatalx("event_base_new failed");
	if (uidpool_init(&d.uids, cfg->uid_count / 2) < 0)
		fatalx("out of memory");
	r = frontend_main(&d);
	if (r < 0)
		fatalx("frontend: %s", strerror(-r));
	_exit(0);
}

/* The start-up checks (startcheck.h), with the config read and before
 * the socket is made: capabilities, user namespaces for the run range's
 * uid. A socket taken from systemd is not chowned here. */
static void
main_start_checks(const struct config *cfg, bool socket_chown)
{
	char why[512];

	if (startcheck_caps(socket_chown && (cfg->socket_uid != 0 || cfg->socket_gid != 0), why,
			    sizeof(why)) < 0)
		fatalx("%s", why);
	if (startcheck_userns(cfg->uid_base, why, sizeof(why)) < 0)
		fatalx("%s", why);
}

/* The command line. */
struct main_opts {
	const char *config_path, *socket_path, *user, *zygote_dir;
	bool debug, config_given;
};

/* Parse the command line into o; -1 to go on, else the exit status. */
static int
main_options(int argc, char **argv, struct main_opts *o)
{
	static const struct option opts[] = {{"foreground", no_argument, NULL, 'f'},
					     {"debug", no_argument, NULL, 'd'},
					     {"config", required_argument, NULL, 'c'},
					     {"socket", required_argument, NULL, 's'},
					     {"user", required_argument, NULL, 'u'},
					     {"help", no_argument, NULL, 'h'},
					     {"version", no_argument, NULL, 'V'},
					     {"zygote-dir", required_argument, NULL, 'z'},
					     {NULL, 0, NULL, 0}};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "fdc:s:u:hVz:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			break; /* airlockd never forks into the background itself */
		case 'd':
			o->debug = true;
			break;
		case 'c':
			o->config_path = optarg;
			o->config_given = true;
			break;
		case 's':
			o->socket_path = optarg;
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'z':
			o->zygote_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("airlockd %s (protocol %d)\n", AIRLOCK_VERSION, PROTO_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	return -1;
}

/*
 * First, before anything is made: a listed call that libseccomp cannot
 * name would be a rule missing from every filter. Refuse to start,
 * naming it (the filters are compiled below).
 */
static void
main_seccomp_check(void)
{
	const char *call = NULL;
	int r;

	r = seccomp_policy_check(&call);
	if (r == -ENOTSUP)
		fatalx("seccomp: no reviewed system call table for this architecture "
		       "(daemon/spawner/seccomp_policy.c): refusing to start");
	if (r == -ENOSYS)
		fatalx("seccomp: system call %s is known neither to libseccomp nor to "
		       "the policy's own table: refusing to start without its rule",
		       call);
	if (r < 0)
		fatalx("seccomp: system call %s: the policy's table and libseccomp "
		       "number it differently (or the table has a gap): refusing to start",
		       call ? call : "?");
}

/* The config file, the command line over it, and the listening socket
 * (systemd's, or made here) into *ret_listen_fd. */
static void
main_config(const struct main_opts *o, struct config *cfg, int *ret_listen_fd)
{
	char err[512];
	int r;

	memset(cfg, 0, sizeof(*cfg));
	r = config_load(cfg, o->config_given ? o->config_path : CONFIG_DEFAULT_PATH,
			o->config_given, err, sizeof(err));
	if (r < 0)
		fatalx("%s", err);
	if (o->socket_path != NULL) {
		free(cfg->socket_path);
		cfg->socket_path = xstrdup(o->socket_path);
	}
	if (o->user != NULL)
		main_set_user(cfg, o->user);

	r = listener_from_systemd(ret_listen_fd);
	if (r < 0)
		fatalx("socket activation: %s", strerror(-r));
	main_start_checks(cfg, r == 0);
	if (r == 0) {
		main_socket_dir(cfg->socket_path);
		r = listener_create(cfg->socket_path, cfg->socket_uid, cfg->socket_gid,
				    cfg->socket_mode, ret_listen_fd);
		if (r < 0)
			fatalx("cannot listen on %s: %s", cfg->socket_path, strerror(-r));
	}
}

/* The host's layout (sandbox.h), and what it means for landlock and the
 * tool bridge, said once in the log. */
static void
main_layout(struct spawner *sp)
{
	if (sandbox_layout_init(&sp->layout) < 0)
		fatalx("cannot read the host layout");
	if (sp->layout.landlock_abi > 0)
		log_info("landlock: ABI %d (%s)", sp->layout.landlock_abi,
			 sp->layout.landlock_abi >= 6 ? "files, signals, abstract sockets"
						      : "files");
	else if (landlock_abi() == 1)
		log_info("landlock: ABI 1 only, whose rules refuse renames between "
			 "directories: not used; the code is held by its mount namespace and "
			 "seccomp alone");
	else
		log_info("landlock: not available in this kernel; the code is held by its "
			 "mount namespace and seccomp alone");
	/* Where the tool bridge makes airlock_tools importable, said once: a
	 * host without any lib-dynload gets the module at /run/tools/py only,
	 * which -I -S does not search (issue 28: no silent set-up failure). */
	if (sp->layout.py_dynload == 0) {
		log_warnx("tool bridge: no /usr/lib/python3.N/lib-dynload on this host: the python "
			  "code of a run with tools cannot import airlock_tools (airlock-tool "
			  "works)");
	} else {
		char vs[256] = "";
		size_t off = 0;

		for (int n = 0; n < 64 && off < sizeof(vs) - 8; n++)
			if (sp->layout.py_dynload & (UINT64_C(1) << n))
				off += (size_t)snprintf(vs + off, sizeof(vs) - off, "%s3.%d",
							off > 0 ? " " : "", n);
		log_info("tool bridge: airlock_tools importable by python %s (linked from its "
			 "lib-dynload)",
			 vs);
	}
}

/*
 * The sessions' state directory (state_directory, else systemd's
 * $STATE_DIRECTORY; none: cfg->session_state_dir stays NULL), made as root
 * before the split and given to the service user, mode 0700: the frontend
 * opens it after its drop (session_store_open()) and alone writes it.
 * Root here holds no CAP_DAC_OVERRIDE or CAP_FOWNER under the unit: it can
 * make, chmod (while it owns it) and chown the directory, never open one
 * the service user owns, so the frontend does that itself.
 */
/*
 * Give back to the service user what systemd took: at each start it chowns
 * a StateDirectory it finds owned by another user, recursively, to User=
 * (root here). Root owns them then, so it may open them without
 * CAP_DAC_OVERRIDE: dir (relative to at) and its entries, and one level of
 * subdirectories (lost/), nothing followed; left as they are when it does
 * not own them (already the service user's).
 */
static void
main_state_give(int at, const char *dir, const struct config *cfg, int depth)
{
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd;

	fd = openat(at, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || st.st_uid != 0 || (d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (depth > 0 && e->d_type == DT_DIR)
			main_state_give(dirfd(d), e->d_name, cfg, depth - 1);
		(void)fchownat(dirfd(d), e->d_name, cfg->service_uid, cfg->service_gid,
			       AT_SYMLINK_NOFOLLOW);
	}
	closedir(d);
}

static void
main_state_dir(struct config *cfg)
{
	char env[258];

	if (cfg->session_state_dir == NULL && getenv("STATE_DIRECTORY") != NULL) {
		/* systemd's list is ':'-separated: the first is ours. */
		snprintf(env, sizeof(env), "%s", getenv("STATE_DIRECTORY"));
		env[strcspn(env, ":")] = '\0';
		if (env[0] == '/')
			cfg->session_state_dir = xstrdup(env);
	}
	if (cfg->session_state_dir == NULL)
		return;
	if (mkdir(cfg->session_state_dir, 0700) < 0 && errno != EEXIST)
		fatal("state_directory %s", cfg->session_state_dir);
	/* EPERM: the service user owns it already (it sets the mode itself). */
	if (chmod(cfg->session_state_dir, 0700) < 0 && errno != EPERM)
		fatal("state_directory %s", cfg->session_state_dir);
	main_state_give(AT_FDCWD, cfg->session_state_dir, cfg, 2);
	/* A link in its place is given, not its target, and then refused by
	 * the frontend's O_NOFOLLOW open. */
	if (fchownat(AT_FDCWD, cfg->session_state_dir, cfg->service_uid, cfg->service_gid,
		     AT_SYMLINK_NOFOLLOW) < 0)
		fatal("state_directory %s", cfg->session_state_dir);
	log_info("sessions are kept in %s/sessions", cfg->session_state_dir);
}

/*
 * The pythons a zygote may exec (spawner_zygote_cmd.c): the python
 * runtimes' argv[0] of the configuration read now, as root, before the
 * split. The frontend names a zygote's python, and the zygote runs
 * outside any sandbox: any other root-owned program in its place is
 * refused. Pointers into cfg, which the spawner keeps until it exits.
 */
static void
main_zygote_pythons(struct spawner *sp, const struct config *cfg)
{
	size_t i;

	_Static_assert(SPAWNER_ZYGOTE_PYTHONS_MAX >= CONFIG_RUNTIMES_MAX, "one per runtime");
	sp->nzygote_pythons = 0;
	for (i = 0; i < cfg->nruntimes; i++)
		if (cfg->runtimes[i].language == RULES_LANG_PYTHON &&
		    cfg->runtimes[i].argv[0] != NULL && cfg->runtimes[i].argv[0][0] == '/')
			sp->zygote_pythons[sp->nzygote_pythons++] = cfg->runtimes[i].argv[0];
}

/* path, lstat'd: owned by root, writable by no one else, of the given type
 * (no symlink); else a message in why. */
static bool
main_root_only(const char *path, mode_t type, char *why, size_t len)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		snprintf(why, len, "%s: %s", path, strerror(errno));
	else if ((st.st_mode & S_IFMT) != type)
		snprintf(why, len, "%s: not a %s", path,
			 type == S_IFDIR ? "directory" : "regular file");
	else if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
		snprintf(why, len, "%s: not root's alone (owner %u, mode %04o)", path,
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	else
		return true;
	return false;
}

/*
 * zygote.py and the extension: the spawner's own, never the frontend's
 * (docs/design-bursts.md §3.3), from where the build installed them or,
 * with --zygote-dir (the tests' build tree), from that directory. Both run
 * in the zygote outside any sandbox as the owner of the caller's runs'
 * user namespaces: the directory and both files must be root's alone (a
 * file another user could change would put their code there), checked
 * here and zygote.py again by the spawner at each start. A --zygote-dir
 * that fails the check stops the start (it was asked for); the built-in
 * one not installed leaves zygote runs failing at their start, so runs go
 * the ordinary way.
 */
static void
main_zygote_files(struct spawner *sp, const char *dir)
{
#if defined(AIRLOCK_ZYGOTE_DIR) && defined(AIRLOCK_ZYGOTE_EXT_NAME)
	static char script[PATH_MAX], ext[PATH_MAX];
	char why[PATH_MAX + 64];
	bool given = dir != NULL;

	if (!given)
		dir = AIRLOCK_ZYGOTE_DIR;
	if (snprintf(script, sizeof(script), "%s/zygote.py", dir) >= (int)sizeof(script) ||
	    snprintf(ext, sizeof(ext), "%s/%s", dir, AIRLOCK_ZYGOTE_EXT_NAME) >= (int)sizeof(ext))
		fatalx("--zygote-dir: path too long");
	if (given && (!main_root_only(dir, S_IFDIR, why, sizeof(why)) ||
		      !main_root_only(script, S_IFREG, why, sizeof(why)) ||
		      !main_root_only(ext, S_IFREG, why, sizeof(why))))
		fatalx("--zygote-dir: %s", why);
	sp->zygote_script = script;
	sp->zygote_ext = ext;
#else
	if (dir != NULL)
		fatalx("--zygote-dir: this airlockd was built without the zygote (no Python "
		       "headers)");
#endif
}

/* The spawner's resources, made as root before the split: the cgroup, the
 * seccomp filters (the frontend's too), the uid slots. */
static void
main_resources(struct spawner *sp, const struct config *cfg, const struct main_opts *o,
	       struct sock_fprog *frontend_filter)
{
	uint32_t i;
	int r;

	/*
	 * Before the split and before any privilege is dropped: on cgroup v2
	 * this moves us into our subtree's leaf, so the spawner and the
	 * frontend forked below are both in it (the frontend, as the service
	 * user, could not write cgroup.procs itself).
	 */
	if ((r = cgroup_init(&sp->cg, CGROUP_ROOT, CGROUP_SELF,
			     (enum cgroup_kind)cfg->resource_control)) < 0)
		fatalx("cgroup: %s", strerror(-r));
	/* Asked for by name (the container image asks for it): no silent
	 * fallback to rlimits when the hierarchy is not delegated to us. */
	if (cfg->resource_control == CGROUP_V2 && sp->cg.kind != CGROUP_V2)
		fatalx("cgroup: resource_control = cgroup2, but the cgroup v2 hierarchy is not "
		       "delegated to airlockd (a writable /sys/fs/cgroup of its own cgroup "
		       "namespace, or Delegate=yes): %s",
		       sp->cg.why);
	log_info("resource control: %s", sp->cg.why);
	cgroup_sweep(&sp->cg, cfg->uid_base, cfg->uid_base + cfg->uid_count);
	sp->layout.memory_cgroup = sp->cg.kind != CGROUP_NONE;
	sp->layout.cgroup2 = sp->cg.kind == CGROUP_V2;
	if ((r = seccomp_policy_sandbox(&sp->seccomp)) < 0)
		fatalx("cannot compile the sandbox seccomp policy: %s", strerror(-r));
	if ((r = seccomp_policy_sandbox_noproc(&sp->seccomp_noproc)) < 0)
		fatalx("cannot compile the sandbox seccomp policy for subprocess = false: %s",
		       strerror(-r));
	if ((r = seccomp_policy_frontend(frontend_filter)) < 0)
		fatalx("cannot compile the frontend seccomp policy: %s", strerror(-r));
	sp->config_path = o->config_given ? o->config_path : CONFIG_DEFAULT_PATH;
	sp->config_given = o->config_given;
	sp->uid_base = cfg->uid_base;
	sp->nslots = cfg->uid_count / 2;
	for (i = 0; i < ROOTSPEC_MOUNTS_MAX; i++)
		sp->mount_warn[i] = (struct log_repeat)LOG_REPEAT_INIT(SPAWNER_MOUNT_WARN_MS);
	sp->fds_warn = (struct log_repeat)LOG_REPEAT_INIT(SPAWNER_MOUNT_WARN_MS);
	sp->slots = xcalloc(sp->nslots, sizeof(*sp->slots));
	sp->keepers = xcalloc(sp->nslots, sizeof(*sp->keepers));
	sp->zygotes = xcalloc(sp->nslots, sizeof(*sp->zygotes));
	main_zygote_pythons(sp, cfg);
	for (i = 0; i < sp->nslots; i++) {
		sp->zygotes[i].sock = -1;
		sp->slots[i].ctl = -1;
		sp->slots[i].cg_base.peak_fd = -1;
	}
}

/*
 * The split: the child becomes the frontend (main_frontend, never returns);
 * the parent, which returns the child's pid, keeps the spawner's end of the
 * channel in sp->sock.
 */
static pid_t
main_split(struct spawner *sp, const struct config *cfg, int listen_fd,
	   struct sock_fprog *frontend_filter, const struct main_opts *o)
{
	struct config *cfgp;
	sigset_t oldmask;
	pid_t spawner_pid, fe;
	int pair[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
		fatal("socketpair");
	/* The spawner takes its signals from a signalfd: block them before
	 * the split, so a SIGTERM that comes early is not lost or fatal. */
	{
		sigset_t mask;

		spawner_signals(&mask);
		if (sigprocmask(SIG_BLOCK, &mask, &oldmask) < 0)
			fatal("sigprocmask");
	}
	/* The frontend owns its config on the heap: a reload replaces it. */
	cfgp = xmalloc(sizeof(*cfgp));
	*cfgp = *cfg;
	/* The spawner's own, before the split: in force by the time the
	 * frontend serves anything. */
	main_raise_nofile();
	spawner_pid = getpid();
	fe = fork();
	if (fe < 0)
		fatal("fork");
	if (fe == 0) {
		/* The frontend takes its signals through libevent. */
		if (sigprocmask(SIG_SETMASK, &oldmask, NULL) < 0)
			fatal("sigprocmask");
		close(pair[0]);
		main_frontend(cfgp, listen_fd, pair[1], frontend_filter, sp->cg.kind,
			      o->config_path, o->config_given, spawner_pid,
			      sp->layout.usr_submount);
	}
	close(pair[1]);
	close(listen_fd);
	seccomp_policy_free(frontend_filter);
	free(cfgp); /* the spawner's copy of the pointer block; cfg owns the strings */
	sp->sock = pair[0];
	return fe;
}

/* The parent side of the split: drop to the spawner's privileges, serve
 * until the frontend is gone, then its status as ours (0 or -EPIPE, or the
 * spawner's own error). */
static int
main_spawner(struct spawner *sp, pid_t fe)
{
	int r;

	log_set_ident("airlockd[spawner]");
	r = privdrop_spawner();
	if (r < 0) {
		kill(fe, SIGKILL);
		fatalx("cannot drop the spawner's privileges: %s", strerror(-r));
	}
	sp->frontend = fe;
	r = spawner_serve(sp);
	if (r < 0)
		log_warnx("spawner: %s", strerror(-r));
	/* The frontend ended (or will, now that its channel is closed). */
	close(sp->sock);
	if (!sp->frontend_reaped) {
		while (waitpid(fe, &sp->frontend_status, 0) < 0 && errno == EINTR)
			;
		sp->frontend_reaped = true;
	}
	/*
	 * A frontend that did not exit 0 (a fatal error, a signal) is the
	 * service failing: say so with our status, so that systemd's
	 * Restart=on-failure applies. It used to be 0 (issue 13, finding 1).
	 */
	if (!WIFEXITED(sp->frontend_status) || WEXITSTATUS(sp->frontend_status) != 0) {
		if (WIFSIGNALED(sp->frontend_status))
			log_warnx("the frontend was killed by signal %d",
				  WTERMSIG(sp->frontend_status));
		else
			log_warnx("the frontend exited with status %d",
				  WEXITSTATUS(sp->frontend_status));
		r = -EPIPE;
	}
	return r;
}

int
main(int argc, char **argv)
{
	struct main_opts o;
	struct config cfg;
	struct spawner sp;
	struct sock_fprog frontend_filter;
	int r, listen_fd = -1;
	pid_t fe;

	r = main_options(argc, argv, &o);
	if (r >= 0)
		return r;
	log_init("airlockd", o.debug ? LOG_LVL_DEBUG : LOG_LVL_INFO,
		 getenv("JOURNAL_STREAM") != NULL);
	if (geteuid() != 0)
		fatalx("airlockd must be started as root (it drops privileges itself)");
	main_seccomp_check();
	main_config(&o, &cfg, &listen_fd);
	memset(&sp, 0, sizeof(sp));
	main_layout(&sp);
	/* Before anything is made: a --zygote-dir refused stops the start. */
	main_zygote_files(&sp, o.zygote_dir);
	main_resources(&sp, &cfg, &o, &frontend_filter);
	main_state_dir(&cfg);
	fe = main_split(&sp, &cfg, listen_fd, &frontend_filter, &o);
	r = main_spawner(&sp, fe);
	seccomp_policy_free(&sp.seccomp);
	seccomp_policy_free(&sp.seccomp_noproc);
	free(sp.slots);
	free(sp.keepers);
	free(sp.zygotes);
	config_free(&cfg);
	log_info("stopped");
	return r < 0 ? 1 : 0;
}
