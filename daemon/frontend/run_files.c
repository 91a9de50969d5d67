/* run_files.c: a run's input files checked as one set (run_files.h). */
#include "run_files.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clear.h"
#include "plan.h"
#include "rules.h"

void
run_files_free(struct run_files *f)
{
	if (f == NULL)
		return;
	bundle_free(&f->bundle);
	CLEAR_FREE(f, f->names, f->data, f->len, f->mode);
}

/*
 * Order names component by component: '/' below every other byte, so that
 * every name below "a/" comes right after "a" itself, and a name that is
 * also a directory of another is next to it.
 */
static int
run_files_cmp(const void *a, const void *b)
{
	const unsigned char *x = *(const unsigned char *const *)a;
	const unsigned char *y = *(const unsigned char *const *)b;

	for (; *x != '\0' && *x == *y; x++, y++)
		;
	if (*x == *y)
		return 0;
	if (*x == '\0' || *y == '\0')
		return *x == '\0' ? -1 : 1;
	if (*x == '/' || *y == '/')
		return *x == '/' ? -1 : 1;
	return *x < *y ? -1 : 1;
}

/* Say what is wrong with one file's name (which of "files" or the bundle). */
static void
run_files_bad_name(size_t i, size_t nfiles, const char *name, char *why, size_t whylen)
{
	bool ctl = rules_workspace_name_check(name) == 0;
	char where[64];

	if (i < nfiles)
		snprintf(where, sizeof(where), "files[%zu]", i);
	else
		snprintf(where, sizeof(where), "file_bundle: entry %zu", i - nfiles);
	if (ctl)
		snprintf(why, whylen, "%s: the name holds a control character", where);
	else
		snprintf(why, whylen, "%s: \"%s\" is not a relative path inside the workspace",
			 where, name);
}

/* Refuse a name given twice, or a name that another uses as its directory. */
static int
run_files_clashes(struct run_files *f, char *why, size_t whylen)
{
	const char **sorted;
	size_t i, l;
	int r = 0;

	if (f->n < 2)
		return 0;
	sorted = malloc(f->n * sizeof(*sorted));
	if (sorted == NULL)
		return -ENOMEM;
	memcpy(sorted, f->names, f->n * sizeof(*sorted));
	qsort(sorted, f->n, sizeof(*sorted), run_files_cmp);
	for (i = 0; i + 1 < f->n && r == 0; i++) {
		l = strlen(sorted[i]);
		if (strcmp(sorted[i], sorted[i + 1]) == 0) {
			snprintf(why, whylen, "input file \"%s\" given twice", sorted[i]);
			r = -EINVAL;
		} else if (strncmp(sorted[i], sorted[i + 1], l) == 0 && sorted[i + 1][l] == '/') {
			snprintf(why, whylen, "input file \"%s\" is also the directory of \"%s\"",
				 sorted[i], sorted[i + 1]);
			r = -EINVAL;
		}
	}
	free(sorted);
	return r;
}

int
run_files_collect(const struct proto_run *req, bool session, uint64_t workspace_bytes,
		  struct run_files *ret, enum proto_error *ret_code, char *why, size_t whylen)
{
	struct run_files f = {0};
	char bwhy[256];
	size_t i, n;
	int r;

	*ret_code = PROTO_ERR_BAD_REQUEST;
	if (req->nfiles > PROTO_FILES_MAX)
		return -EINVAL; /* the decoder's bound */
	if (req->file_bundle.present) {
		if (session) {
			snprintf(why, whylen,
				 "file_bundle: not for a run in a session; write the files "
				 "with file_write");
			return -EINVAL;
		}
		r = bundle_decode(req->file_bundle.data, req->file_bundle.len, PROTO_RUN_FILES_MAX,
				  &f.bundle, bwhy, sizeof(bwhy));
		if (r < 0) {
			*ret_code = r == -E2BIG	   ? PROTO_ERR_TOO_LARGE
				    : r == -ENOMEM ? PROTO_ERR_INTERNAL
						   : PROTO_ERR_BAD_REQUEST;
			snprintf(why, whylen, "file_bundle: %s", bwhy);
			return r;
		}
	}
	n = req->nfiles + f.bundle.n;
	if (n > PROTO_RUN_FILES_MAX) {
		*ret_code = PROTO_ERR_TOO_LARGE;
		snprintf(why, whylen, "%zu input files (files and file_bundle); at most %d", n,
			 PROTO_RUN_FILES_MAX);
		bundle_free(&f.bundle);
		return -E2BIG;
	}
	r = -ENOMEM;
	if (n > 0) {
		f.names = calloc(n, sizeof(*f.names));
		f.data = calloc(n, sizeof(*f.data));
		f.len = calloc(n, sizeof(*f.len));
		f.mode = calloc(n, sizeof(*f.mode));
		if (f.names == NULL || f.data == NULL || f.len == NULL || f.mode == NULL)
			goto fail;
	}
	for (i = 0; i < n; i++) {
		const struct bundle_file *b =
			i >= req->nfiles ? &f.bundle.files[i - req->nfiles] : NULL;

		f.names[i] = b != NULL ? b->name : req->files[i].name;
		f.data[i] = b != NULL ? (const void *)b->data : req->files[i].data.data;
		f.len[i] = b != NULL ? (size_t)b->len : req->files[i].data.len;
		f.mode[i] = b != NULL ? b->mode : 0644;
		f.bytes += f.len[i];
		if (rules_input_name_check(f.names[i]) < 0) {
			run_files_bad_name(i, req->nfiles, f.names[i], why, whylen);
			r = -EINVAL;
			goto fail;
		}
	}
	f.n = n;
	r = run_files_clashes(&f, why, whylen);
	if (r < 0)
		goto fail;
	if (!session && f.bytes > workspace_bytes) {
		*ret_code = PROTO_ERR_TOO_LARGE;
		snprintf(why, whylen,
			 "input files hold %" PRIu64 " bytes; workspace_bytes is %" PRIu64, f.bytes,
			 workspace_bytes);
		r = -E2BIG;
		goto fail;
	}
	*ret = f;
	return 0;
fail:
	if (r == -ENOMEM) {
		*ret_code = PROTO_ERR_INTERNAL;
		snprintf(why, whylen, "out of memory");
	}
	run_files_free(&f);
	return r;
}
