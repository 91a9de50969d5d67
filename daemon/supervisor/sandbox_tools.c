/*
 * sandbox_tools.c: the sandbox's end of the tool bridge (docs/design-tool-bridge.md),
 * built by the supervisor between clone and exec: no allocation, no stdio.
 *
 * For a run that declares tools: a small read-only tmpfs at /run/tools with
 * the listening socket tools.sock, the Python module py/airlock_tools.py and
 * the command airlock-tool; the module also linked from every
 * /usr/lib/python3.N/lib-dynload (sb_tools_python), so `import airlock_tools`
 * works under -I -S.
 * The listening socket goes to the frontend on the lifeline (SUP_TOOLS):
 * the supervisor never reads a byte of a call.
 */
#include "sandbox_child.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "dirents.h"
#include "fdio.h"
#include "fdpass.h"
#include "sandbox_tools_files.h"
#include "spawn_msg.h"

#define SB_TOOLS_DIR "/run/tools"
#define SB_TOOLS_LIB SB_TOOLS_DIR "/lib"

/* Create path holding the NUL-terminated text, mode, root's. */
static void
sb_tools_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode), r;

	if (fd < 0)
		sandbox_fail(SANDBOX_STEP_TOOLS, errno);
	r = fd_write_all(fd, text, strlen(text));
	if (r < 0)
		sandbox_fail(SANDBOX_STEP_TOOLS, -r);
	SB_CHECK(fchmod(fd, mode), SANDBOX_STEP_TOOLS);
	close(fd);
}

/*
 * The module importable under -I -S, where neither PYTHONPATH nor
 * site-packages is read: in each /usr/lib/python3.N/lib-dynload (N < 64)
 * the host has, a directory on that interpreter's sys.path. No overlay:
 * the read-only overlay of /run/tools/py over the standard library that
 * stood here needs overlayfs, a module in Debian's kernels; a host that
 * cannot load it (Debian 13's 6.12 kernel booted on Debian 12's root
 * without its modules, seen in the VM) refused the mount (ENODEV), the
 * failure was ignored and `import airlock_tools` failed (issue 28). What it
 * does instead needs nothing but a bind, a tmpfs and symlinks, which every
 * kernel with user namespaces allows their root:
 *   - the directory is bound at /run/tools/lib/3.N (a bind of a read-only
 *     mount is read-only: nothing new is visible or writable, it is the
 *     host's directory the code already saw);
 *   - a small tmpfs covers the directory, holding a link to each of its
 *     entries there, and one to the module, then becomes read-only (its
 *     size is a cap: a link target longer than 127 bytes takes a page).
 * An entry named like the module fails the step (EEXIST) rather than let the
 * host's file or ours win silently. Its own mounts in the run's namespace;
 * the host's directory is not touched. Called while /run/tools is writable.
 */
static void
sb_tools_python(void)
{
	static struct dirents it; /* 4 KiB: not on the supervisor's stack */
	char dyn[64], orig[64], from[64 + 256], to[64 + 256];
	const struct dirent64 *e;
	struct stat st;
	int n, fd;

	SB_CHECK(mkdir(SB_TOOLS_LIB, 0755), SANDBOX_STEP_TOOLS);
	for (n = 0; n < 64; n++) {
		SB_PATH(dyn, SANDBOX_STEP_TOOLS, "/usr/lib/python3.%d/lib-dynload", n);
		if (stat(dyn, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		SB_PATH(orig, SANDBOX_STEP_TOOLS, SB_TOOLS_LIB "/3.%d", n);
		SB_CHECK(mkdir(orig, 0755), SANDBOX_STEP_TOOLS);
		SB_CHECK(mount(dyn, orig, NULL, MS_BIND | MS_REC, NULL), SANDBOX_STEP_TOOLS);
		fd = open(orig, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			sandbox_fail(SANDBOX_STEP_TOOLS, errno);
		SB_CHECK(mount("airlock", dyn, "tmpfs", MS_NOSUID | MS_NODEV,
			       "mode=0755,size=1048576,nr_inodes=4096"),
			 SANDBOX_STEP_TOOLS);
		dirents_init(&it, fd);
		while ((e = dirents_next(&it)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			SB_PATH(from, SANDBOX_STEP_TOOLS, "%s/%s", orig, e->d_name);
			SB_PATH(to, SANDBOX_STEP_TOOLS, "%s/%s", dyn, e->d_name);
			SB_CHECK(symlink(from, to), SANDBOX_STEP_TOOLS);
		}
		if (it.err != 0)
			sandbox_fail(SANDBOX_STEP_TOOLS, -it.err);
		close(fd);
		SB_PATH(to, SANDBOX_STEP_TOOLS, "%s/airlock_tools.py", dyn);
		SB_CHECK(symlink(SB_TOOLS_DIR "/py/airlock_tools.py", to), SANDBOX_STEP_TOOLS);
		SB_CHECK(mount(NULL, dyn, NULL,
			       MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL),
			 SANDBOX_STEP_TOOLS);
	}
}

void
sandbox_tools_setup(int lifeline)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct sup_msg m;
	int fd;

	SB_CHECK(mount("airlock", SB_TOOLS_DIR, "tmpfs", MS_NOSUID | MS_NODEV,
		       "mode=0755,size=262144,nr_inodes=80"),
		 SANDBOX_STEP_TOOLS);
	SB_CHECK(mkdir(SB_TOOLS_DIR "/py", 0755), SANDBOX_STEP_TOOLS);
	sb_tools_file(SB_TOOLS_DIR "/py/airlock_tools.py", sandbox_tools_module, 0444);
	sb_tools_file(SB_TOOLS_DIR "/airlock-tool", sandbox_tools_command, 0555);
	/*
	 * The socket's inode is made here, by the run's root, 0666: the code
	 * (uid 1000) may connect; connect() needs no write access to the
	 * filesystem, so the mount becomes read-only after.
	 */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		sandbox_fail(SANDBOX_STEP_TOOLS, errno);
	memcpy(sa.sun_path, SB_TOOLS_DIR "/tools.sock", sizeof(SB_TOOLS_DIR "/tools.sock"));
	SB_CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), SANDBOX_STEP_TOOLS);
	SB_CHECK(chmod(SB_TOOLS_DIR "/tools.sock", 0666), SANDBOX_STEP_TOOLS);
	SB_CHECK(listen(fd, 8), SANDBOX_STEP_TOOLS);
	sb_tools_python();
	SB_CHECK(mount(NULL, SB_TOOLS_DIR, NULL,
		       MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL),
		 SANDBOX_STEP_TOOLS);
	memset(&m, 0, sizeof(m));
	m.type = SUP_TOOLS;
	if (fdpass_send(lifeline, &m, sizeof(m), &fd, 1) < 0)
		sandbox_fail(SANDBOX_STEP_TOOLS, EPIPE);
	close(fd);
}
