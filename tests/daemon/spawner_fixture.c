/* spawner_fixture.c: the spawner unit tests' fixture (spawner_fixture.h). */
#include "spawner_fixture.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

struct spawn_req
req_of(uint32_t type, uint32_t flags)
{
	struct spawn_req r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.flags = flags;
	r.run_id = 7;
	return r;
}

const char *fix_script, *fix_ext;
bool fix_owned;
static const struct sock_filter fix_allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};

void
fixture(struct spawner *sp, int sock, uint32_t nslots, struct spawner_slot *slots,
	struct spawner_slot *keepers, struct spawner_zygote_slot *zygotes)
{
	uint32_t i;

	assert_true(nslots <= 2);
	memset(sp, 0, sizeof(*sp));
	memset(slots, 0, 2 * sizeof(*slots));
	memset(keepers, 0, 2 * sizeof(*keepers));
	memset(zygotes, 0, 2 * sizeof(*zygotes));
	for (i = 0; i < 2; i++)
		slots[i].ctl = keepers[i].ctl = zygotes[i].sock = -1;
	sp->sock = sock;
	sp->uid_base = 100000;
	sp->nslots = nslots;
	sp->slots = slots;
	sp->keepers = keepers;
	sp->zygotes = zygotes;
	sp->frontend = -1;
	sp->config_path = "/nonexistent/airlock-test/airlockd.conf";
	sp->config_given = false;
	sp->zygote_script = fix_script;
	sp->zygote_ext = fix_ext;
	sp->zygote_pythons[0] = "/usr/bin/python3";
	sp->nzygote_pythons = 1;
	/* The runs' program: allow all; subprocess = no's: none (empty). */
	sp->seccomp = (struct sock_fprog){.len = 1, .filter = (struct sock_filter *)fix_allow};
}

int
serve_with(int peer, int sock, uint32_t nslots, rlim_t nofile)
{
	struct spawner_slot slots[2], keepers[2];
	struct spawner_zygote_slot zygotes[2];
	struct spawner sp;
	struct rlimit old, rl;
	sigset_t mask;
	int r;

	fixture(&sp, sock, nslots, slots, keepers, zygotes);
	assert_int_equal(shutdown(peer, SHUT_WR), 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	rl = old;
	if (nofile != 0) {
		rl.rlim_cur = nofile;
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	r = spawner_serve(&sp);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	/* spawner_serve() blocks the signals it reads; give them back. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_UNBLOCK, &mask, NULL);
	return r;
}
