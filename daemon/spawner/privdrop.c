/* privdrop.c: drop privileges in one order and read the result back. */
#include "privdrop.h"

#include <cap-ng.h>
#include <errno.h>
#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

int
privdrop_frontend(uid_t uid, gid_t gid)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (uid == 0)
		return -EINVAL;
	/* groups, gid, uid: the order that leaves no window with a group
	 * or a uid we meant to give up. */
	if (setgroups(0, NULL) < 0)
		return -errno;
	if (setresgid(gid, gid, gid) < 0)
		return -errno;
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_change_id((int)uid, (int)gid, CAPNG_DROP_SUPP_GRP | CAPNG_CLEAR_BOUNDING) < 0)
		return -EPERM;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	/* Read it all back: a drop that did not happen is fatal. */
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return -errno;
	if (ru != uid || eu != uid || su != uid || rg != gid || eg != gid || sg != gid)
		return -EPERM;
	capng_get_caps_process();
	if (capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE)
		return -EPERM;
	if (setuid(0) == 0)
		return -EPERM;
	return 0;
}

int
privdrop_spawner(void)
{
	if (setgroups(0, NULL) < 0)
		return -errno;
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_updatev(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET,
			  CAP_SETUID, CAP_SETGID, -1) < 0)
		return -EINVAL;
	if (capng_apply(CAPNG_SELECT_BOTH) < 0)
		return -EPERM;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -errno;
	/* No core dumps, no ptrace by the (same-uid-less) frontend. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -errno;
	capng_get_caps_process();
	if (capng_have_capability(CAPNG_EFFECTIVE, CAP_SYS_ADMIN) ||
	    capng_have_capability(CAPNG_EFFECTIVE, CAP_DAC_OVERRIDE) ||
	    !capng_have_capability(CAPNG_EFFECTIVE, CAP_SETUID))
		return -EPERM;
	return 0;
}
