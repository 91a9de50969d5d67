/*
 * test_mountinfo.c: unit tests of daemon/supervisor/mountinfo.c: the first mount point
 * strictly beneath a directory, as main.c's hidden_paths warning asks it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mountinfo.h"

/* Lines as the kernel writes them (proc_pid_mountinfo(5)). */
#define ROOT "22 1 259:1 / / rw,relatime shared:1 - ext4 /dev/root rw\n"
#define USR "23 22 259:2 / /usr ro,relatime shared:2 - ext4 /dev/usr ro\n"
#define USRX "24 22 0:30 / /usrx rw shared:3 - tmpfs tmpfs rw\n"
#define MODS "25 23 0:31 / /usr/lib/modules ro,nosuid - tmpfs tmpfs ro\n"
#define SPACE "26 23 0:32 / /usr/my\\040dir rw - tmpfs tmpfs rw\n"

static void
test_none(void **state)
{
	char got[128] = "junk";

	(void)state;
	/* /usr itself and a sibling that starts with the same letters are not
	 * beneath /usr. */
	assert_int_equal(mountinfo_first_below(ROOT USR USRX, "/usr", got, sizeof(got)), 0);
	assert_string_equal(got, "");
	assert_int_equal(mountinfo_first_below("", "/usr", got, sizeof(got)), 0);
}

static void
test_found(void **state)
{
	char got[128];

	(void)state;
	/* ProtectKernelModules=yes: the case that made the VM fail. */
	assert_int_equal(mountinfo_first_below(ROOT USR USRX MODS, "/usr", got, sizeof(got)), 1);
	assert_string_equal(got, "/usr/lib/modules");
	/* The escape stays as written; the last line needs no newline. */
	assert_int_equal(mountinfo_first_below(ROOT "26 23 0:32 / /usr/my\\040dir rw - tmpfs t rw",
					       "/usr", got, sizeof(got)),
			 1);
	assert_string_equal(got, "/usr/my\\040dir");
	assert_int_equal(mountinfo_first_below(ROOT SPACE MODS, "/usr", got, sizeof(got)), 1);
	assert_string_equal(got, "/usr/my\\040dir");
}

/* A line of fewer than five fields is passed over, not read past; a long
 * mount point is cut to the buffer. */
static void
test_malformed(void **state)
{
	char got[8];

	(void)state;
	assert_int_equal(mountinfo_first_below("1 2 3 /usr/a\n" ROOT, "/usr", got, sizeof(got)), 0);
	assert_int_equal(mountinfo_first_below("1 2\n\n" MODS, "/usr", got, sizeof(got)), 1);
	assert_string_equal(got, "/usr/li");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
