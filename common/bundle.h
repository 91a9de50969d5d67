/*
 * bundle.h: the file bundle, many input files in one blob (run.file_bundle).
 *
 *   "ALFB" | u32 count | count x { u16 name_len | name | u32 mode | u64 len | data }
 *
 * Little-endian, no padding, no compression, nothing after the last entry.
 * A name follows rules_input_name_check(); a mode is 0644 or 0755. The format
 * has no way to say link, device, owner or setuid. docs/protocol.md,
 * "File bundles"; docs/design-profiles.md, section 5.
 */
#ifndef AIRLOCK_BUNDLE_H
#define AIRLOCK_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#define BUNDLE_MAGIC "ALFB"
#define BUNDLE_HDR_LEN 8u	   /* magic, count */
#define BUNDLE_ENTRY_FIXED_LEN 14u /* name_len, mode, len: an entry without name and data */

/* One file, as the encoder takes it and the decoder gives it. */
struct bundle_file {
	const char *name; /* NUL-terminated */
	uint32_t mode;	  /* 0644 or 0755 */
	const uint8_t *data;
	uint64_t len;
};

/* A decoded bundle: the entries point into the decoded buffer (data) and
 * into names_ (name). Free with bundle_free(). */
struct bundle {
	struct bundle_file *files;
	size_t n;
	uint64_t bytes; /* the entries' lengths together */
	char *names_;
};

/* Is mode one a bundle entry may have? */
int bundle_mode_check(uint32_t mode);

/*
 * Decode len bytes at buf, strictly: the magic, at most max entries, every
 * name (rules_input_name_check), mode and length, and nothing left over.
 * Duplicate names are the caller's to find (they may clash with other
 * files too). Returns 0, -E2BIG (more than max entries) or -EBADMSG with a
 * reason in why, or -ENOMEM. *ret is written only on success.
 */
int bundle_decode(const void *buf, size_t len, size_t max, struct bundle *ret, char *why,
		  size_t whylen);

void bundle_free(struct bundle *b);

/*
 * Encode n files into a new sealed, close-on-exec memfd of *ret_len bytes.
 * Checks what the decoder checks (names, modes, n <= max) and the size
 * against max_bytes. Returns 0, -EINVAL, -E2BIG or another -errno.
 */
int bundle_encode_memfd(const struct bundle_file *files, size_t n, size_t max, uint64_t max_bytes,
			int *ret_fd, uint64_t *ret_len);

#endif
