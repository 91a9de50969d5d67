/* rules.h: the rules a request must meet, one function per rule.
 *
 * Every layer that checks a rule calls the function here (the library
 * before it sends, the encoder, the decoder, the command and the MCP server
 * on their operands, the daemon on the plan and the config), so that no
 * layer accepts what another refuses. Pure functions: no allocation, no
 * I/O, no locale; safe in the supervisor before it execs the code. */
#ifndef AIRLOCK_RULES_H
#define AIRLOCK_RULES_H

#include "proto.h"

#include <stdbool.h>
#include <stddef.h>

/* An environment variable name (len bytes): [A-Za-z_][A-Za-z0-9_]*, at most
 * PROTO_ENV_KEY_MAX bytes. Returns 0, -EINVAL (empty or a bad character)
 * or -E2BIG (too long). */
int rules_env_name_check(const char *s, size_t len);

/* A session id (len bytes): exactly PROTO_SESSION_ID_LEN of [0-9a-f]. */
bool rules_session_id_valid(const char *s, size_t len);

/* The same for a NUL-terminated string (NULL is not an id). */
bool rules_session_id_str_valid(const char *s);

/* A path in the workspace as an input file or an artifact is named: 1 to
 * PROTO_NAME_MAX bytes, relative, no empty, "." or ".." component (so no
 * leading, trailing or doubled '/'). Returns 0 or -EINVAL. */
int rules_workspace_name_check(const char *s);

/* An input file's name (files and file_bundle entries): the workspace-name
 * rule, and no control byte (below 0x20, or 0x7f), which a terminal, a log
 * line or a shell loop would take for something else. Returns 0 or -EINVAL. */
int rules_input_name_check(const char *s);

/* A runtime's name: 1 to PROTO_RUNTIME_MAX of [a-z0-9_-]. */
bool rules_runtime_name_valid(const char *s);

/* A profile's name: 1 to PROTO_PROFILE_MAX of [a-z0-9_-]; _check takes a
 * counted string (len bytes, as the decoder has it). */
bool rules_profile_name_valid(const char *s);
bool rules_profile_name_check(const char *s, size_t len);

/* A [mount] section's name: 1 to PROTO_MOUNT_MAX of [a-z0-9_-]; _check takes
 * a counted string. */
bool rules_mount_name_valid(const char *s);
bool rules_mount_name_check(const char *s, size_t len);

/* A code file's name (one component, what a runtime calls its code): 1 to
 * PROTO_NAME_MAX printable ASCII bytes without '/' or blanks, not "." or "..". */
bool rules_code_name_valid(const char *s);

/* A tool's name (len bytes): [A-Za-z_][A-Za-z0-9_]*, 1 to PROTO_TOOL_NAME_MAX
 * bytes. */
bool rules_tool_name_check(const char *s, size_t len);

/* A dotted Python module name (len bytes): identifiers of
 * [A-Za-z_][A-Za-z0-9_]* joined by single dots, 1 to PROTO_MODULE_NAME_MAX
 * bytes ("subprocess", "os.path"; ASCII only: a blocked_imports entry). */
bool rules_module_name_check(const char *s, size_t len);

/* What reads a runtime's code: [runtime] language =, or its program's. */
enum rules_language {
	RULES_LANG_OTHER = 0,
	RULES_LANG_PYTHON = 1,
	RULES_LANG_SHELL = 2,
};

/*
 * The language of a program by its file's base name: python, python3 or
 * python3.N is a Python (not pypy3, python3-config); sh, bash, dash a
 * shell; anything else (NULL too) other. The config asks it of argv[0]
 * and of the file argv[0] resolves to (a venv's bin/python).
 */
enum rules_language rules_program_language(const char *path);
/* "other", "python", "shell"; and back (-EINVAL for another word). */
const char *rules_language_name(enum rules_language lang);
int rules_language_from_name(const char *name, enum rules_language *ret);

/* Whether every limit asked is at most its ceiling (0, "the default",
 * always is). If not, *ret_bad names the first one above. */
bool rules_limits_within(const struct proto_limits *asked, const struct proto_limits *ceilings,
			 enum proto_limit *ret_bad);

#endif
