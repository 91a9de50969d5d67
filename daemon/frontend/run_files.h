/*
 * run_files.h: a run's input files, from "files" and "file_bundle" together,
 * checked as one set before the plan is built (docs/design-profiles.md §5).
 */
#ifndef AIRLOCKD_RUN_FILES_H
#define AIRLOCKD_RUN_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bundle.h"
#include "proto.h"

/* The files in request order ("files" first, then the bundle's entries);
 * the pointers are into the request and the decoded bundle. */
struct run_files {
	const char **names;
	const void **data;
	size_t *len;
	uint32_t *mode;
	size_t n;
	uint64_t bytes; /* every file's length together */
	struct bundle bundle;
};

/*
 * Collect and check req's input files: each name by the input-name rule, no
 * name twice, no name that is also another's directory, the bundle decoded
 * strictly, no bundle in a session run, and the bytes at most
 * workspace_bytes (a session run's are checked by its workspace). On a
 * request error writes the reply code and reason. Returns 0, -EINVAL,
 * -E2BIG or -ENOMEM; *ret is written only on success.
 */
int run_files_collect(const struct proto_run *req, bool session, uint64_t workspace_bytes,
		      struct run_files *ret, enum proto_error *ret_code, char *why, size_t whylen);

void run_files_free(struct run_files *f);

#endif
