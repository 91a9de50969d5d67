/*
 * test_zygote_order.c: the zygote's decoder of the spawner's order
 * (zygote_order.c, ipc/zygote_msg.h): a good order and each way one is
 * refused, with the result untouched.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "zygote_order.h"

static struct zygote_msg_order m;
static char cwd[ZYGOTE_MSG_CWD_MAX];
static int fds[ZYGOTE_MSG_FDS_MAX];

static int
good(void **state)
{
	size_t i;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.magic = ZYGOTE_MSG_MAGIC;
	m.uid = 1000;
	m.gid = 1000;
	m.nrlimits = 2;
	m.rlimit[0].resource = RLIMIT_NOFILE;
	m.rlimit[0].cur = m.rlimit[0].max = 64;
	m.rlimit[1].resource = RLIMIT_CPU;
	m.rlimit[1].cur = 5;
	m.rlimit[1].max = 6;
	strcpy(m.cwd, "/workspace");
	for (i = 0; i < ZYGOTE_MSG_FDS_MAX; i++)
		fds[i] = 30 + (int)i;
	return 0;
}

/* Every field where zygote_enter() reads it. */
static void
test_good_order(void **state)
{
	struct zygote_order o;
	int ll = 99;

	(void)state;
	assert_int_equal(zygote_order_decode(&m, sizeof(m), fds, ZYGOTE_MSG_FDS_FIXED_, &o, &ll,
					     cwd, sizeof(cwd)),
			 0);
	assert_int_equal(o.ns_fd[ZYGOTE_NS_USER], 30);
	assert_int_equal(o.ns_fd[ZYGOTE_NS_MNT], 31);
	assert_int_equal(o.ns_fd[ZYGOTE_NS_NET], 32);
	assert_int_equal(o.ns_fd[ZYGOTE_NS_IPC], 33);
	assert_int_equal(o.ns_fd[ZYGOTE_NS_UTS], 34);
	assert_int_equal(o.ns_fd[ZYGOTE_NS_CGROUP], -1);
	assert_int_equal(o.ns_fd[ZYGOTE_NS_PID], 35);
	assert_int_equal(o.stdio_fd[0], 36);
	assert_int_equal(o.stdio_fd[2], 38);
	assert_int_equal(o.report_fd, 39);
	assert_int_equal(o.code_fd, 40);
	assert_int_equal(o.cgroup_procs_fd, -1);
	assert_int_equal(ll, -1);
	assert_int_equal(o.uid, 1000);
	assert_int_equal(o.nrlimits, 2);
	assert_int_equal(o.rlimit_res[1], RLIMIT_CPU);
	assert_int_equal(o.rlimit[1].rlim_cur, 5);
	assert_int_equal(o.rlimit[1].rlim_max, 6);
	assert_null(o.seccomp);
	assert_ptr_equal(o.cwd, cwd);
	assert_string_equal(o.cwd, "/workspace");
}

/* The optional fds follow the fixed ones in flag order. */
static void
test_optional_fds(void **state)
{
	struct zygote_order o;
	int ll;

	(void)state;
	m.flags = ZYGOTE_MSG_F_CGROUP_NS | ZYGOTE_MSG_F_CGROUP_PROCS | ZYGOTE_MSG_F_LANDLOCK;
	assert_int_equal(zygote_order_decode(&m, sizeof(m), fds, ZYGOTE_MSG_FDS_MAX, &o, &ll, cwd,
					     sizeof(cwd)),
			 0);
	assert_int_equal(o.ns_fd[ZYGOTE_NS_CGROUP], 41);
	assert_int_equal(o.cgroup_procs_fd, 42);
	assert_int_equal(ll, 43);

	m.flags = ZYGOTE_MSG_F_LANDLOCK;
	assert_int_equal(zygote_order_decode(&m, sizeof(m), fds, ZYGOTE_MSG_FDS_FIXED_ + 1, &o, &ll,
					     cwd, sizeof(cwd)),
			 0);
	assert_int_equal(o.ns_fd[ZYGOTE_NS_CGROUP], -1);
	assert_int_equal(o.cgroup_procs_fd, -1);
	assert_int_equal(ll, 41);
}

/* Each bad order: -EBADMSG, the result and the ruleset fd untouched. */
static void
test_bad_orders(void **state)
{
	struct zygote_order o;
	int k, ll;

	for (k = 0; k < 16; k++) {
		size_t len = sizeof(m), n = ZYGOTE_MSG_FDS_FIXED_;

		good(state);
		switch (k) {
		case 0:
			len--;
			break;
		case 1:
			m.magic++;
			break;
		case 2:
			m.flags = 8;
			break;
		case 3:
			m.pad = 1;
			break;
		case 4:
			m.nrlimits = ZYGOTE_MSG_RLIMITS + 1;
			break;
		case 5:
			m.uid = 0;
			break;
		case 6:
			m.gid = 0;
			break;
		case 7:
			n--;
			break;
		case 8:
			m.flags = ZYGOTE_MSG_F_LANDLOCK;
			break; /* its fd missing */
		case 9:
			fds[ZYGOTE_MSG_FD_CODE] = -1;
			break;
		case 10:
			m.rlimit[0].pad = 1;
			break;
		case 11:
			m.rlimit[1].cur = 7;
			break; /* above its max */
		default:
			m.rlimit[0].resource = -1;
			break;
		}
		memset(&o, 0xa5, sizeof(o));
		ll = 77;
		if (zygote_order_decode(&m, len, fds, n, &o, &ll, cwd, sizeof(cwd)) != -EBADMSG)
			fail_msg("bad order %d accepted", k);
		assert_int_equal(ll, 77);
		assert_int_equal(o.uid, 0xa5a5a5a5);
	}
	assert_int_equal(zygote_order_decode(NULL, sizeof(m), fds, 11, &o, &ll, cwd, sizeof(cwd)),
			 -EBADMSG);
	assert_int_equal(zygote_order_decode(&m, sizeof(m), NULL, 11, &o, &ll, cwd, sizeof(cwd)),
			 -EBADMSG);
	/* a cwd longer than the caller's buffer */
	good(state);
	assert_int_equal(zygote_order_decode(&m, sizeof(m), fds, 11, &o, &ll, cwd, 4), -EBADMSG);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_good_order, good),
		cmocka_unit_test_setup(test_optional_fds, good),
		cmocka_unit_test_setup(test_bad_orders, good),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
