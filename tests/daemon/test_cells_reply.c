/* test_cells_reply.c: unit tests of daemon/frontend/cells_reply.c: the
 * driver's done message is the code's (the driver runs in its process), so
 * every field of it is checked; here the exception's fields
 * (design-jupyter.md §6.2), good and hostile, against a real memfd. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "cells_reply.h"

/* A reply memfd holding value "42" (when there is no error), then the
 * error's bytes; dn to match. */
static int
reply(struct cells_done *dn, uint32_t status, const char *ename, size_t elen, const char *evalue,
      const char *tb)
{
	int fd = memfd_create("reply", MFD_CLOEXEC);

	assert_true(fd >= 0);
	memset(dn, 0, sizeof(*dn));
	dn->magic = CELLS_MAGIC;
	dn->status = status;
	dn->cell = 7;
	dn->has_value = elen == 0;
	dn->value_len = elen == 0 ? 2 : 0;
	dn->ename_len = (uint32_t)elen;
	dn->evalue_len = (uint32_t)strlen(evalue);
	dn->tb_len = (uint32_t)strlen(tb);
	if (dn->has_value)
		assert_int_equal(write(fd, "42", 2), 2);
	assert_int_equal(write(fd, ename, elen), (ssize_t)elen);
	assert_int_equal(write(fd, evalue, strlen(evalue)), (ssize_t)strlen(evalue));
	assert_int_equal(write(fd, tb, strlen(tb)), (ssize_t)strlen(tb));
	return fd;
}

/* Check and read dn; NULL or the reason, and the fields into *ret. */
static const char *
check(const struct cells_done *dn, int fd, char **ret)
{
	const char *bad = cells_check_done(7, 1 << 20, fd, dn);

	*ret = NULL;
	return bad != NULL ? bad : cells_read_error(dn, fd, ret);
}

static void
test_error_fields_read(void **state)
{
	struct cells_done dn;
	char *err;
	int fd;

	(void)state;
	fd = reply(&dn, CELLS_EXCEPTION, "ValueError", 10, "x", "Traceback\nValueError: x\n");
	assert_null(check(&dn, fd, &err));
	assert_non_null(err);
	assert_string_equal(err, "ValueError");
	assert_string_equal(err + 11, "x");
	assert_string_equal(err + 13, "Traceback\nValueError: x\n");
	free(err);
	close(fd);
	/* none: no buffer */
	fd = reply(&dn, CELLS_OK, "", 0, "", "");
	assert_null(check(&dn, fd, &err));
	assert_null(err);
	close(fd);
	/* a name and nothing else; an interrupt's */
	fd = reply(&dn, CELLS_INTERRUPTED, "KeyboardInterrupt", 17, "", "");
	assert_null(check(&dn, fd, &err));
	assert_string_equal(err, "KeyboardInterrupt");
	assert_string_equal(err + 18, "");
	free(err);
	close(fd);
}

/* What a broken or hostile driver may send: each refused with its reason. */
static void
test_error_fields_refused(void **state)
{
	static char huge[PROTO_TRACEBACK_MAX + 2];
	struct cells_done dn;
	char *err;
	int fd;

	(void)state;
	memset(huge, 'E', sizeof(huge) - 1);
	fd = reply(&dn, CELLS_EXCEPTION, huge, PROTO_ENAME_MAX + 1, "", "");
	assert_string_equal(check(&dn, fd, &err), "error fields larger than their bounds");
	close(fd);
	fd = reply(&dn, CELLS_EXCEPTION, "E", 1, "", huge);
	assert_string_equal(check(&dn, fd, &err), "error fields larger than their bounds");
	close(fd);
	fd = reply(&dn, CELLS_EXCEPTION, "Bad Name", 8, "", "");
	assert_string_equal(check(&dn, fd, &err),
			    "an error name with a space or a control character");
	close(fd);
	fd = reply(&dn, CELLS_EXCEPTION, "E\x01", 2, "", "");
	assert_string_equal(check(&dn, fd, &err),
			    "an error name with a space or a control character");
	close(fd);
	fd = reply(&dn, CELLS_EXCEPTION, "E\xff", 2, "", "");
	assert_string_equal(check(&dn, fd, &err), "error fields that are not UTF-8");
	close(fd);
	fd = reply(&dn, CELLS_EXCEPTION, "E\0x", 3, "", "");
	assert_string_equal(check(&dn, fd, &err),
			    "an error name with a space or a control character");
	close(fd);
	fd = reply(&dn, CELLS_EXCEPTION, "E", 1, "bad \xc3(", "");
	assert_string_equal(check(&dn, fd, &err), "error fields that are not UTF-8");
	close(fd);
	fd = reply(&dn, CELLS_OK, "E", 1, "", "");
	assert_string_equal(check(&dn, fd, &err), "error fields for a cell that raised nothing");
	close(fd);
	fd = reply(&dn, CELLS_EXCEPTION, "", 0, "value", "");
	assert_string_equal(check(&dn, fd, &err), "an error without a name");
	close(fd);
	fd = reply(&dn, CELLS_EXCEPTION, "E", 1, "", "");
	dn.err_reserved = 1;
	assert_string_equal(check(&dn, fd, &err), "error fields larger than their bounds");
	close(fd);
	/* an error and a value together */
	fd = reply(&dn, CELLS_EXCEPTION, "E", 1, "", "");
	dn.has_value = 1;
	assert_int_equal(write(fd, "42", 2), 2);
	dn.value_len = 2;
	assert_string_equal(check(&dn, fd, &err), "an error with a value");
	close(fd);
	/* lengths past what the reply holds */
	fd = reply(&dn, CELLS_EXCEPTION, "E", 1, "", "tb");
	dn.tb_len = 3;
	assert_string_equal(check(&dn, fd, &err), "lengths past the reply");
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_fields_read),
		cmocka_unit_test(test_error_fields_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
