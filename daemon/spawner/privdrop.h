/* privdrop.h: the one privilege-drop function per process role, verified after. */
#ifndef AIRLOCKD_PRIVDROP_H
#define AIRLOCKD_PRIVDROP_H

#include <sys/types.h>

/*
 * The frontend: become uid/gid with no supplementary groups, no capability
 * in any set (bounding and ambient included), no_new_privs; then verify with
 * getresuid/getresgid and libcap-ng. Returns 0 or -errno.
 */
int privdrop_frontend(uid_t uid, gid_t gid);

/*
 * The spawner: stays uid 0 but keeps only CAP_SETUID and CAP_SETGID (to write
 * a sandbox's uid and gid maps), with the bounding set reduced to them.
 */
int privdrop_spawner(void);

#endif
