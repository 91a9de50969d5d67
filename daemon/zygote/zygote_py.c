/*
 * zygote_py.c: the zygote's extension module, _airlock_zygote
 * (docs/design-bursts.md §3.3). The zygote, a started `python3 -I -S -B`
 * that never runs user code, keeps one run's order (prepare()) and forks a
 * child that enters the run's sandbox (fork_enter()): everything from the
 * fork to seccomp is zygote_enter() in C, no Python runs in between. An
 * order comes from the spawner's socket (recv_order(): ipc/zygote_msg.h,
 * decoded by zygote_order.c) or, for tests, from prepare()'s arguments.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <linux/filter.h>

#include "fdpass.h"
#include "landlock.h"
#include "zygote_enter.h"
#include "zygote_order.h"

/* The largest seccomp program taken (BPF_MAXINSNS). */
#define ZYGOTE_PY_BPF_MAX 4096

/* One run's order and what it points to, the module's state. */
struct zygote_py_state {
	struct zygote_order order;
	struct landlock_rules landlock;
	struct sock_filter filter[ZYGOTE_PY_BPF_MAX];
	struct sock_fprog prog;
	char cwd[ZYGOTE_MSG_CWD_MAX];
	int fds[ZYGOTE_MSG_FDS_MAX]; /* a received order's fds, closed after its fork */
	size_t nfds;
	bool ready;
};

/* Close a received order's fds (the zygote keeps none of a run's). */
static void
zygote_py_drop(struct zygote_py_state *st)
{
	size_t i;

	for (i = 0; i < st->nfds; i++)
		(void)close(st->fds[i]);
	st->nfds = 0;
	st->ready = false;
}

/* Keep order o, its Landlock ruleset fd ll (-1: none), for fork_enter(). */
static void
zygote_py_keep(struct zygote_py_state *st, const struct zygote_order *o, int ll)
{
	st->order = *o;
	st->order.seccomp = &st->prog;
	st->landlock.fd = ll;
	st->order.landlock = ll >= 0 ? &st->landlock : NULL;
	st->ready = true;
}

/* The seccomp program from bytes: whole instructions, at most BPF_MAXINSNS. */
static int
zygote_py_bpf(struct zygote_py_state *st, const Py_buffer *bpf)
{
	if (bpf->len <= 0 || bpf->len % (Py_ssize_t)sizeof(struct sock_filter) != 0 ||
	    bpf->len > (Py_ssize_t)sizeof(st->filter)) {
		PyErr_SetString(PyExc_ValueError, "seccomp: whole sock_filter instructions");
		return -1;
	}
	memcpy(st->filter, bpf->buf, (size_t)bpf->len);
	st->prog.len = (unsigned short)(bpf->len / (Py_ssize_t)sizeof(struct sock_filter));
	st->prog.filter = st->filter;
	return 0;
}

static struct zygote_py_state *
zygote_py_state(PyObject *m)
{
	return (struct zygote_py_state *)PyModule_GetState(m);
}

/* n ints of a sequence into out; -1 with an exception set if not. */
static int
zygote_py_ints(PyObject *seq, int *out, Py_ssize_t n, const char *what)
{
	Py_ssize_t i;

	if (!PySequence_Check(seq) || PySequence_Size(seq) != n) {
		PyErr_Format(PyExc_ValueError, "%s: a sequence of %zd ints", what, n);
		return -1;
	}
	for (i = 0; i < n; i++) {
		PyObject *o = PySequence_GetItem(seq, i);
		long v = o != NULL ? PyLong_AsLong(o) : -1;

		Py_XDECREF(o);
		if (PyErr_Occurred())
			return -1;
		if (v < -1 || v > INT32_MAX) {
			PyErr_Format(PyExc_ValueError, "%s: %ld out of range", what, v);
			return -1;
		}
		out[i] = (int)v;
	}
	return 0;
}

/* The rlimits: a sequence of at most ZYGOTE_RLIMITS_MAX (resource, soft, hard). */
static int
zygote_py_rlimits(PyObject *seq, struct zygote_order *o)
{
	Py_ssize_t i, n = PySequence_Check(seq) ? PySequence_Size(seq) : -1;

	if (n < 0 || n > ZYGOTE_RLIMITS_MAX) {
		PyErr_SetString(PyExc_ValueError, "rlimits: at most 8 (resource, soft, hard)");
		return -1;
	}
	for (i = 0; i < n; i++) {
		PyObject *t = PySequence_GetItem(seq, i);
		unsigned long long cur, max;
		int res;
		int ok = t != NULL && PyArg_ParseTuple(t, "iKK", &res, &cur, &max);

		Py_XDECREF(t);
		if (!ok)
			return -1;
		o->rlimit_res[i] = res;
		o->rlimit[i].rlim_cur = (rlim_t)cur;
		o->rlimit[i].rlim_max = (rlim_t)max;
	}
	o->nrlimits = (unsigned)n;
	return 0;
}

PyDoc_STRVAR(zygote_py_prepare_doc,
	     "prepare(ns, cgroup_procs, stdio, report, uid, gid, rlimits, seccomp, landlock=-1,\n"
	     "        code=-1, cwd='/workspace')\n"
	     "Keep one run's order: ns is 7 fds (user, mnt, net, ipc, uts, cgroup or -1, pid),\n"
	     "stdio 3 fds, seccomp the compiled program's bytes, code an fd the child finds\n"
	     "on fd 5.");

static PyObject *
zygote_py_prepare(PyObject *m, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"ns",	    "cgroup_procs", "stdio",	"report", "uid", "gid",
				 "rlimits", "seccomp",	    "landlock", "code",	  "cwd", NULL};
	struct zygote_py_state *st = zygote_py_state(m);
	struct zygote_order ord, *o = &ord;
	PyObject *ns, *stdio, *rlimits;
	Py_buffer bpf;
	unsigned int uid, gid;
	const char *cwd = "/workspace";
	int cg, report, ll = -1, code = -1;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OiOiIIOy*|iis", kwlist, &ns, &cg, &stdio,
					 &report, &uid, &gid, &rlimits, &bpf, &ll, &code, &cwd))
		return NULL;
	if (strlen(cwd) >= sizeof(st->cwd) || cwd[0] != '/') {
		PyBuffer_Release(&bpf);
		PyErr_SetString(PyExc_ValueError, "cwd: an absolute path, shorter than 128");
		return NULL;
	}
	zygote_py_drop(st);
	memset(o, 0, sizeof(*o));
	if (zygote_py_bpf(st, &bpf) < 0) {
		PyBuffer_Release(&bpf);
		return NULL;
	}
	PyBuffer_Release(&bpf);
	if (zygote_py_ints(ns, o->ns_fd, ZYGOTE_NS_COUNT_, "ns") < 0 ||
	    zygote_py_ints(stdio, o->stdio_fd, 3, "stdio") < 0 || zygote_py_rlimits(rlimits, o) < 0)
		return NULL;
	o->cgroup_procs_fd = cg;
	o->report_fd = report;
	o->code_fd = code;
	o->uid = (uid_t)uid;
	o->gid = (gid_t)gid;
	memcpy(st->cwd, cwd, strlen(cwd) + 1);
	o->cwd = st->cwd;
	zygote_py_keep(st, o, ll);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(zygote_py_set_seccomp_doc,
	     "set_seccomp(program)\n"
	     "The compiled seccomp program (bytes of struct sock_filter) for the orders\n"
	     "recv_order() takes.");

static PyObject *
zygote_py_set_seccomp(PyObject *m, PyObject *args)
{
	struct zygote_py_state *st = zygote_py_state(m);
	Py_buffer bpf;
	int r;

	if (!PyArg_ParseTuple(args, "y*", &bpf))
		return NULL;
	r = zygote_py_bpf(st, &bpf);
	PyBuffer_Release(&bpf);
	if (r < 0)
		return NULL;
	Py_RETURN_NONE;
}

PyDoc_STRVAR(zygote_py_recv_order_doc,
	     "recv_order(sock) -> bool\n"
	     "Receive and check one order (ipc/zygote_msg.h) on the socket fd; False at EOF.\n"
	     "A bad order raises ValueError, its fds closed.");

static PyObject *
zygote_py_recv_order(PyObject *m, PyObject *args)
{
	struct zygote_py_state *st = zygote_py_state(m);
	struct zygote_msg_order msg;
	struct zygote_order o;
	ssize_t n;
	int sock, ll, r;

	if (!PyArg_ParseTuple(args, "i", &sock))
		return NULL;
	if (st->prog.len == 0) {
		PyErr_SetString(PyExc_RuntimeError, "no seccomp program set");
		return NULL;
	}
	zygote_py_drop(st);
	/* A packet longer than an order, or with more fds, is -EMSGSIZE
	 * (its fds closed): a bad order. */
	do
		n = fdpass_recv(sock, &msg, sizeof(msg), st->fds, ZYGOTE_MSG_FDS_MAX, &st->nfds);
	while (n == -EINTR);
	if (n < 0) {
		st->nfds = 0;
		errno = (int)-n;
		return PyErr_SetFromErrno(n == -EMSGSIZE ? PyExc_ValueError : PyExc_OSError);
	}
	if (n == 0 && st->nfds == 0)
		Py_RETURN_FALSE;
	r = zygote_order_decode(&msg, (size_t)n, st->fds, st->nfds, &o, &ll, st->cwd,
				sizeof(st->cwd));
	if (r < 0) {
		zygote_py_drop(st);
		PyErr_SetString(PyExc_ValueError, "a bad order");
		return NULL;
	}
	zygote_py_keep(st, &o, ll);
	Py_RETURN_TRUE;
}

PyDoc_STRVAR(zygote_py_fork_enter_doc,
	     "fork_enter() -> int\n"
	     "Fork; the child enters the prepared run's sandbox (zygote_enter) and gets 0\n"
	     "as the run's code; the zygote gets the child's pid. The order is used once.");

static PyObject *
zygote_py_fork_enter(PyObject *m, PyObject *unused)
{
	struct zygote_py_state *st = zygote_py_state(m);
	pid_t pid;

	(void)unused;
	if (!st->ready) {
		PyErr_SetString(PyExc_RuntimeError, "no order prepared");
		return NULL;
	}
	/* An order serves one run: a second fork_enter() needs a new one. */
	st->ready = false;
	PyOS_BeforeFork();
	pid = fork();
	if (pid < 0) {
		int err = errno;

		PyOS_AfterFork_Parent();
		zygote_py_drop(st);
		errno = err;
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	if (pid > 0) {
		PyOS_AfterFork_Parent();
		zygote_py_drop(st);
		return PyLong_FromLong((long)pid);
	}
	/* The child: no Python until the sandbox is entered; a failure
	 * never comes back here (zygote_enter _exit()s). */
	zygote_enter(&st->order);
	PyOS_AfterFork_Child();
	return PyLong_FromLong(0);
}

static PyMethodDef zygote_py_methods[] = {
	{"prepare", (PyCFunction)(void (*)(void))zygote_py_prepare, METH_VARARGS | METH_KEYWORDS,
	 zygote_py_prepare_doc},
	{"set_seccomp", zygote_py_set_seccomp, METH_VARARGS, zygote_py_set_seccomp_doc},
	{"recv_order", zygote_py_recv_order, METH_VARARGS, zygote_py_recv_order_doc},
	{"fork_enter", zygote_py_fork_enter, METH_NOARGS, zygote_py_fork_enter_doc},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef zygote_py_module = {
	PyModuleDef_HEAD_INIT,
	"_airlock_zygote",
	"A zygote child's entry into a run's sandbox.",
	sizeof(struct zygote_py_state),
	zygote_py_methods,
	NULL,
	NULL,
	NULL,
	NULL,
};

PyMODINIT_FUNC PyInit__airlock_zygote(void);

PyMODINIT_FUNC
PyInit__airlock_zygote(void)
{
	return PyModule_Create(&zygote_py_module);
}
