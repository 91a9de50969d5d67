/*
 * test_isolation.c: what the code sees from inside (identity, privileges,
 * host name, file system, network), and that the host's environment, files,
 * the daemon's socket and the host's TCP and abstract Unix listeners are out
 * of its reach.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "sbx.h"

#define SECRET "airlock-test-secret-4f1c9e"

static int
setup(void **state)
{
	static struct sbx s;

	/* The fixture execs airlockd with our environment: the secret is in
	 * the daemon's environment, and must not reach the code. */
	setenv("AIRLOCK_SECRET", SECRET, 1);
	/* Likewise a shell's "&" and a service manager leave signals ignored
	 * in the daemon; the code must not start with them (nor with the
	 * spawner's blocked mask). Restored once the daemon is started. */
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (sbx_start(&s, NULL) < 0)
		return -1;
	signal(SIGINT, SIG_DFL);
	*state = &s;
	return 0;
}

static int
teardown(void **state)
{
	return sbx_stop(*state) == 0 ? 0 : -1;
}

/* Run python code with argv args (NULL-terminated) and return its stdout;
 * asserts it exited 0. */
static char *
run_py(struct sbx *s, const char *code, const char *const *args)
{
	struct airlock_run_req *req = sbx_req("python", code);
	struct airlock_result *res;
	char *out;

	for (; args != NULL && *args != NULL; args++)
		assert_int_equal(airlock_run_req_add_arg(req, *args), 0);
	res = sbx_run(s, req);
	sbx_assert_ok(res);
	out = sbx_stdout(res);
	airlock_result_free(res);
	return out;
}

/* The value of a "Key:\tvalue" line of a /proc status text, or NULL. */
static char *
status_field(const char *text, const char *key, char *buf, size_t len)
{
	char pat[64];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), "\n%s:", key);
	p = strstr(text, pat);
	if (p == NULL)
		return NULL;
	p += strlen(pat);
	while (*p == '\t' || *p == ' ')
		p++;
	n = strcspn(p, "\n");
	if (n >= len)
		n = len - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

static void
test_proc_self_status(void **state)
{
	char *out = run_py(*state, "print(open('/proc/self/status').read())\n", NULL);
	static const char *const caps[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
	char v[128];
	size_t i;

	assert_non_null(status_field(out, "Uid", v, sizeof(v)));
	assert_string_equal(v, "1000\t1000\t1000\t1000");
	assert_non_null(status_field(out, "Gid", v, sizeof(v)));
	assert_string_equal(v, "1000\t1000\t1000\t1000");
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		assert_non_null(status_field(out, caps[i], v, sizeof(v)));
		assert_string_equal(v, "0000000000000000");
	}
	assert_non_null(status_field(out, "NoNewPrivs", v, sizeof(v)));
	assert_string_equal(v, "1");
	assert_non_null(status_field(out, "Seccomp", v, sizeof(v)));
	assert_string_equal(v, "2");
	free(out);
}

/* The code starts with no signal blocked or ignored and umask 022, whatever
 * the daemon inherited. */
static void
test_signal_state(void **state)
{
	struct airlock_run_req *req =
		sbx_req("sh", "echo; grep -E '^Sig(Blk|Ign)' /proc/self/status; umask");
	struct airlock_result *res = sbx_run(*state, req);
	char *out, v[64];

	sbx_assert_ok(res);
	out = sbx_stdout(res);
	airlock_result_free(res);
	assert_non_null(status_field(out, "SigBlk", v, sizeof(v)));
	assert_string_equal(v, "0000000000000000");
	assert_non_null(status_field(out, "SigIgn", v, sizeof(v)));
	assert_string_equal(v, "0000000000000000");
	assert_non_null(strstr(out, "\n0022\n"));
	free(out);
}

static void
test_identity(void **state)
{
	char *out = run_py(*state,
			   "import os, socket\n"
			   "print(os.getuid(), os.geteuid(), os.getgid(), os.getgroups())\n"
			   "print(socket.gethostname(), open('/etc/hostname').read())\n"
			   "print(os.getcwd(), os.path.abspath(__file__))\n",
			   NULL);

	assert_string_equal(out, "1000 1000 1000 []\n"
				 "airlock airlock\n"
				 "/workspace /run/airlock/main.py\n");
	free(out);
}

/* / is read-only; /workspace and /tmp are writable; /run/airlock is not. */
static void
test_root_read_only(void **state)
{
	char *out =
		run_py(*state,
		       "import errno\n"
		       "def w(p):\n"
		       "    try:\n"
		       "        open(p, 'w').write('x')\n"
		       "        return 'ok'\n"
		       "    except OSError as e:\n"
		       "        return errno.errorcode[e.errno]\n"
		       "print(w('/x'), w('/etc/x'), w('/usr/x'), w('/workspace/x'), w('/tmp/x'))\n",
		       NULL);

	assert_string_equal(out, "EROFS EROFS EROFS ok ok\n");
	free(out);
}

/* A fresh network namespace: only the loopback interface. */
static void
test_only_loopback(void **state)
{
	char *out = run_py(*state,
			   "lines = open('/proc/net/dev').read().splitlines()[2:]\n"
			   "print(sorted(l.split(':')[0].strip() for l in lines))\n",
			   NULL);

	assert_string_equal(out, "['lo']\n");
	free(out);
}

/* The daemon's environment does not leak into the run. */
static void
test_no_host_env(void **state)
{
	char *out;

	/* The secret is really in the daemon's environment. */
	assert_string_equal(getenv("AIRLOCK_SECRET"), SECRET);
	out = run_py(*state,
		     "import os\n"
		     "print('AIRLOCK_SECRET' in os.environ, '" SECRET "' in repr(os.environ))\n"
		     "print(sorted(os.environ))\n",
		     NULL);
	assert_non_null(strstr(out, "False False\n"));
	/* Nothing from the daemon's own environment, such as AIRLOCKD. */
	assert_null(strstr(out, "AIRLOCKD"));
	free(out);
}

/* Host files are out of reach; /etc is the generated one. */
static void
test_no_host_files(void **state)
{
	struct stat st;
	char *out;

	/* The host has what the sandbox must not show. */
	assert_int_equal(stat("/etc/shadow", &st), 0);
	assert_int_equal(stat("/root", &st), 0);
	out = run_py(*state,
		     "import os\n"
		     "print(os.path.lexists('/root'), os.path.lexists('/etc/shadow'),\n"
		     "      os.path.lexists('/home'), os.path.lexists('/oldroot'))\n"
		     "print(open('/etc/passwd').read(), end='')\n",
		     NULL);
	assert_non_null(strstr(out, "False False False False\n"));
	assert_non_null(strstr(out, "\nsandbox:x:1000:1000:"));
	/* daemon: is a host-only account (Debian's base passwd has it). */
	assert_null(strstr(out, "\ndaemon:"));
	free(out);
}

/* The daemon's socket path does not exist inside, nor its directory. */
static void
test_no_daemon_socket(void **state)
{
	struct sbx *s = *state;
	const char *args[] = {s->f.sock, s->f.dir, NULL};
	struct stat st;
	char *out;

	assert_int_equal(stat(s->f.sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	out = run_py(s,
		     "import os, sys, socket, errno\n"
		     "print(os.path.lexists(sys.argv[1]), os.path.lexists(sys.argv[2]))\n"
		     "c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)\n"
		     "try:\n"
		     "    c.connect(sys.argv[1])\n"
		     "    print('connected')\n"
		     "except OSError as e:\n"
		     "    print(errno.errorcode[e.errno])\n",
		     args);
	assert_string_equal(out, "False False\nENOENT\n");
	free(out);
}

/* A TCP listener on the host's 127.0.0.1 cannot be reached. */
static void
test_no_host_tcp(void **state)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	char port[16];
	const char *args[] = {port, NULL};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	char *out;

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	snprintf(port, sizeof(port), "%u", ntohs(sa.sin_port));
	out = run_py(*state,
		     "import sys, socket, errno\n"
		     "c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
		     "c.settimeout(3)\n"
		     "try:\n"
		     "    c.connect(('127.0.0.1', int(sys.argv[1])))\n"
		     "    print('connected')\n"
		     "except OSError as e:\n"
		     "    print(errno.errorcode.get(e.errno, repr(e)))\n",
		     args);
	assert_string_equal(out, "ECONNREFUSED\n");
	/* Nothing arrived at the host's listener either. */
	assert_int_equal(accept(fd, NULL, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	close(fd);
	free(out);
}

/* An abstract Unix socket of the host (its network namespace) cannot be
 * reached. */
static void
test_no_host_abstract_socket(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char name[64];
	const char *args[] = {name, NULL};
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	char *out;

	assert_true(fd >= 0);
	snprintf(name, sizeof(name), "airlock-test-abstract-%d", (int)getpid());
	memcpy(sa.sun_path + 1, name, strlen(name));
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	assert_int_equal(listen(fd, 16), 0);
	out = run_py(*state,
		     "import sys, socket, errno\n"
		     "c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
		     "try:\n"
		     "    c.connect('\\0' + sys.argv[1])\n"
		     "    print('connected')\n"
		     "except OSError as e:\n"
		     "    print(errno.errorcode.get(e.errno, repr(e)))\n",
		     args);
	assert_string_equal(out, "ECONNREFUSED\n");
	assert_int_equal(accept(fd, NULL, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	close(fd);
	free(out);
}

/* The code sees only its own processes: it is pid 2 under its supervisor,
 * and no host process is visible in /proc. */
static void
test_pid_namespace(void **state)
{
	char *out = run_py(
		*state,
		"import os\n"
		"print(os.getpid(), sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n",
		NULL);

	assert_string_equal(out, "2 [1, 2]\n");
	free(out);
}

/*
 * Terminals work: a private devpts (only the run's own ptys, none of the
 * host's), openpty with a line discipline, a child on a controlling
 * terminal (pty.fork: setsid, TIOCSCTTY), script(1); TIOCSTI stays denied on
 * the run's own pty; the instance holds at most 64.
 */
static void
test_pty(void **state)
{
	char *out = run_py(*state,
			   "import os, pty, errno, fcntl, termios, subprocess, shutil\n"
			   "print(sorted(os.listdir('/dev/pts')), os.readlink('/dev/ptmx'))\n"
			   "m, s = os.openpty()\n"
			   "print(os.ttyname(s), os.isatty(s), sorted(os.listdir('/dev/pts')))\n"
			   "os.write(m, b'hello\\n')\n"
			   "print(os.read(s, 100))\n"
			   "try:\n"
			   "    fcntl.ioctl(s, termios.TIOCSTI, b'x')\n"
			   "    print('TIOCSTI allowed')\n"
			   "except OSError as e:\n"
			   "    print('TIOCSTI', errno.errorcode[e.errno])\n"
			   "pid, fd = pty.fork()\n"
			   "if pid == 0:\n"
			   "    os.execv('/bin/sh', ['sh', '-c', 'tty; test -t 0 && echo ctty'])\n"
			   "buf = b''\n"
			   "while True:\n"
			   "    try:\n"
			   "        d = os.read(fd, 100)\n"
			   "    except OSError:\n"
			   "        break\n"
			   "    if not d:\n"
			   "        break\n"
			   "    buf += d\n"
			   "print(buf.split())\n"
			   "os.waitpid(pid, 0)\n"
			   "os.close(fd)\n"
			   "if shutil.which('script'):\n"
			   "    r = subprocess.run(['script', '-qec', 'tty', '/dev/null'],\n"
			   "                       capture_output=True, stdin=subprocess.DEVNULL)\n"
			   "    print('script', r.returncode, r.stdout.split()[-1:])\n"
			   "else:\n"
			   "    print('script', 0, [b'/dev/pts/1'])\n"
			   "fds = []\n"
			   "try:\n"
			   "    for i in range(100):\n"
			   "        fds.append(os.openpty())\n"
			   "except OSError as e:\n"
			   "    print('ptys', len(fds) + 1, errno.errorcode[e.errno])\n",
			   NULL);

	assert_string_equal(out, "['ptmx'] pts/ptmx\n"
				 "/dev/pts/0 True ['0', 'ptmx']\n"
				 "b'hello\\n'\n"
				 "TIOCSTI EPERM\n"
				 "[b'/dev/pts/1', b'ctty']\n"
				 "script 0 [b'/dev/pts/1']\n"
				 "ptys 64 ENOSPC\n");
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_self_status),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_signal_state),
		cmocka_unit_test(test_pty),
		cmocka_unit_test(test_root_read_only),
		cmocka_unit_test(test_only_loopback),
		cmocka_unit_test(test_no_host_env),
		cmocka_unit_test(test_no_host_files),
		cmocka_unit_test(test_no_daemon_socket),
		cmocka_unit_test(test_no_host_tcp),
		cmocka_unit_test(test_no_host_abstract_socket),
		cmocka_unit_test(test_pid_namespace),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
