/*
 * test_log_escape.c: a string a client chose cannot forge a log line. A
 * session file name holding "\n" and a fake audit record is used in a file
 * operation (logged with the error reply) and as a session run's input file
 * that the keeper refuses (its name ends up in that run's audit line). The
 * daemon's log must show the name escaped (\x0a) on one line, and no line
 * may start with the forged record.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "front_util.h"
#include "proto.h"

#define CFG "[sandbox]\nuid_base = 1400000\nuid_count = 64\n"
#define FORGED "audit run=999 uid=0 pid=1 runtime=forged"

static uint32_t next_id = 100;

/* A file operation on the session; returns the reply's type. */
static enum proto_type
file_op(int fd, enum proto_type type, const char *sid, const char *path, const char *data)
{
	struct proto_msg m;
	enum proto_type t;

	assert_int_equal(front_file_op(fd, next_id++, type, sid, path, data, &m), 0);
	t = m.type;
	proto_msg_free(&m);
	return t;
}

/* The whole log of the daemon (static buffer). */
static const char *
read_log(const struct fixture *f)
{
	static char buf[1 << 20];
	FILE *fp = fopen(f->log, "re");
	size_t n;

	assert_non_null(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

/* Does some line of text start with what (after an optional "<N>")? */
static bool
line_starts_with(const char *text, const char *what)
{
	const char *p = text;

	while (p != NULL && *p != '\0') {
		const char *q = p;

		if (q[0] == '<' && q[1] != '\0' && q[2] == '>')
			q += 3;
		if (strncmp(q, what, strlen(what)) == 0)
			return true;
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return false;
}

/* Is there a line holding what that starts with start (after "<N>")? */
static bool
line_has(const char *text, const char *what, const char *start)
{
	const char *hit = strstr(text, what);

	while (hit != NULL) {
		const char *bol = hit;

		while (bol > text && bol[-1] != '\n')
			bol--;
		if (bol[0] == '<' && bol[1] != '\0' && bol[2] == '>')
			bol += 3;
		if (strncmp(bol, start, strlen(start)) == 0)
			return true;
		hit = strstr(hit + 1, what);
	}
	return false;
}

static void
test_forged_lines(void **state)
{
	struct fixture f;
	struct proto_session_open o = {0};
	struct proto_out out;
	struct proto_msg m;
	struct proto_run run;
	struct proto_file in;
	const char *name = "x\n" FORGED;
	const char *blocker = "b\n" FORGED " kind=blocker";
	char path[512], sid[64];
	const char *log;
	uint32_t id;
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG), 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	id = next_id++;
	assert_int_equal(proto_encode_session_open(id, &o, &out), 0);
	assert_int_equal(front_call(fd, &out, id, &m), 0);
	assert_int_equal(m.type, PROTO_SESSION_OK);
	snprintf(sid, sizeof(sid), "%s", m.u.session.session);
	proto_msg_free(&m);

	/* A file operation that fails: the error reply is logged (--debug). */
	assert_int_equal(file_op(fd, PROTO_FILE_READ, sid, name, NULL), PROTO_ERROR);

	/* An input file whose name carries the forged record: input names may
	 * not hold control characters (rules_input_name_check), so the run is
	 * refused before it starts (the refusal names its index, not the name). */
	assert_int_equal(file_op(fd, PROTO_FILE_WRITE, sid, blocker, "x"), PROTO_OK);
	snprintf(path, sizeof(path), "%s/f", blocker);
	in = (struct proto_file){
		.name = path,
		.data = {.data = (const uint8_t *)"y", .len = 1, .fd = -1, .present = true}};
	front_run_init(&run, "sh", "true");
	run.session = sid;
	run.files = &in;
	run.nfiles = 1;
	id = next_id++;
	assert_int_equal(proto_encode_run(id, &run, &out), 0);
	assert_int_equal(front_call(fd, &out, id, &m), 0);
	assert_int_equal(m.type, PROTO_ERROR);
	proto_msg_free(&m);

	/* Both lines are written before the replies are sent. */
	log = read_log(&f);
	/* The names reached the log, escaped, on lines of their own ... */
	assert_true(line_has(log, "x\\x0a" FORGED, "airlockd[frontend]: client "));
	if (!line_has(log, "bad_request: files[0]: the name holds a control character",
		      "airlockd[frontend]: client "))
		fail_msg("the refused run is not in the log:\n%s", log);
	/* ... and no forged record starts a line. */
	if (line_starts_with(log, FORGED))
		fail_msg("a forged line in the log:\n%s", log);
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forged_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
