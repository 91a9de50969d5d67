/*
 * ustar.h: the one archive format of a session's workspace (POSIX ustar,
 * docs/design-sessions.md "Sessions outlive the daemon"): the header's
 * layout and its checksum. The keeper writes it (keeper_tar.c), the
 * frontend reads it (session_archive.c); nothing privileged parses it.
 */
#ifndef AIRLOCKD_USTAR_H
#define AIRLOCKD_USTAR_H

#include <stddef.h>
#include <stdint.h>

#define USTAR_BLOCK 512

/* The fields of a header block, by offset (POSIX.1-1988 ustar). */
struct ustar_header {
	char name[100];
	char mode[8];
	char uid[8];
	char gid[8];
	char size[12];
	char mtime[12];
	char chksum[8];
	char typeflag;
	char linkname[100];
	char magic[6];
	char version[2];
	char uname[32];
	char gname[32];
	char devmajor[8];
	char devminor[8];
	char prefix[155];
	char pad[12];
};

_Static_assert(sizeof(struct ustar_header) == USTAR_BLOCK, "a ustar header is one block");

#define USTAR_TYPE_FILE '0'
#define USTAR_TYPE_FILE_OLD '\0'
#define USTAR_TYPE_DIR '5'

/* The header's checksum: the sum of its bytes as unsigned, the checksum
 * field itself counted as eight spaces. */
static inline uint32_t
ustar_checksum(const struct ustar_header *h)
{
	const unsigned char *p = (const unsigned char *)h;
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i < USTAR_BLOCK; i++)
		sum += (i >= offsetof(struct ustar_header, chksum) &&
			i < offsetof(struct ustar_header, chksum) + sizeof(h->chksum))
			       ? (uint32_t)' '
			       : p[i];
	return sum;
}

#endif
