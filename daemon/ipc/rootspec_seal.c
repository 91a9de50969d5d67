/* rootspec_seal.c: the frontend's side of the root spec (rootspec.h): the
 * [mount] table sealed into a memfd for the spawner, which reads it with
 * rootspec_read.c. */
#include "rootspec.h"

#include "memfd.h"

int
rootspec_seal(const struct rootspec *rs, int *ret_fd)
{
	return memfd_sealed_create("airlock-rootspec", rs, sizeof(*rs), ret_fd);
}
