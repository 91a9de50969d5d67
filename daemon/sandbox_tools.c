/*
 * sandbox_tools.c: the sandbox's end of the tool bridge (docs/design-tool-bridge.md),
 * built by the supervisor between clone and exec: no allocation, no stdio.
 *
 * For a run that declares tools: a small read-only tmpfs at /run/tools with
 * the listening socket tools.sock, the Python module py/airlock_tools.py and
 * the command airlock-tool; the module also in every /usr/lib/python3.N
 * through a read-only overlay, so `import airlock_tools` works under -I -S.
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

#include "fdio.h"
#include "fdpass.h"
#include "sandbox_tools_files.h"
#include "spawn_msg.h"

#define SB_TOOLS_DIR "/run/tools"

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
 * The module in each /usr/lib/python3.N (N < 64) the host has: a read-only
 * overlay of py/ over it. Its own mount in the run's namespace; the host's
 * directory is not touched. A kernel that refuses the overlay leaves the
 * module at /run/tools/py only (docs/design-tool-bridge.md).
 */
static void
sb_tools_python(void)
{
	char dir[64], opts[160];
	struct stat st;
	int n;

	for (n = 0; n < 64; n++) {
		SB_PATH(dir, SANDBOX_STEP_TOOLS, "/usr/lib/python3.%d", n);
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		SB_PATH(opts, SANDBOX_STEP_TOOLS, "lowerdir=" SB_TOOLS_DIR "/py:%s", dir);
		(void)mount("overlay", dir, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, opts);
	}
}

void
sandbox_tools_setup(int lifeline)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct sup_msg m;
	int fd;

	SB_CHECK(mount("airlock", SB_TOOLS_DIR, "tmpfs", MS_NOSUID | MS_NODEV,
		       "mode=0755,size=262144,nr_inodes=16"),
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
	SB_CHECK(mount(NULL, SB_TOOLS_DIR, NULL,
		       MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL),
		 SANDBOX_STEP_TOOLS);
	sb_tools_python();
	memset(&m, 0, sizeof(m));
	m.type = SUP_TOOLS;
	if (fdpass_send(lifeline, &m, sizeof(m), &fd, 1) < 0)
		sandbox_fail(SANDBOX_STEP_TOOLS, EPIPE);
	close(fd);
}
