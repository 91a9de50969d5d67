/* rules.c: the rules a request must meet (rules.h). */
#include "rules.h"

#include <errno.h>
#include <string.h>

/* The length of s when it is 1 to max bytes; 0 when NULL, empty or longer. */
static size_t
rules_len(const char *s, size_t max)
{
	size_t len = s != NULL ? strnlen(s, max + 1) : 0;

	return len <= max ? len : 0;
}

int
rules_env_name_check(const char *s, size_t len)
{
	size_t i;

	if (s == NULL || len == 0)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		char c = s[i];
		bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';

		if (!alpha && (i == 0 || c < '0' || c > '9'))
			return -EINVAL;
	}
	return len > PROTO_ENV_KEY_MAX ? -E2BIG : 0;
}

enum rules_language
rules_program_language(const char *path)
{
	static const char *const shells[] = {"sh", "bash", "dash"};
	const char *base, *p;
	size_t i;

	if (path == NULL)
		return RULES_LANG_OTHER;
	base = strrchr(path, '/');
	base = base != NULL ? base + 1 : path;
	/* python, python3, python3.12: not python3-config, pythonista, pypy3 */
	if (strncmp(base, "python", 6) == 0) {
		for (p = base + 6; *p != '\0'; p++)
			if ((*p < '0' || *p > '9') && *p != '.')
				return RULES_LANG_OTHER;
		return RULES_LANG_PYTHON;
	}
	for (i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		if (strcmp(base, shells[i]) == 0)
			return RULES_LANG_SHELL;
	return RULES_LANG_OTHER;
}

const char *
rules_language_name(enum rules_language lang)
{
	static const char *const names[] = {"other", "python", "shell"};

	return (unsigned)lang < sizeof(names) / sizeof(names[0]) ? names[lang] : "other";
}

int
rules_language_from_name(const char *name, enum rules_language *ret)
{
	enum rules_language l;

	for (l = RULES_LANG_OTHER; l <= RULES_LANG_SHELL; l++)
		if (name != NULL && strcmp(name, rules_language_name(l)) == 0) {
			*ret = l;
			return 0;
		}
	return -EINVAL;
}

bool
rules_tool_name_check(const char *s, size_t len)
{
	/* The grammar of an environment name (an identifier in every language
	 * the code may be in), with a shorter bound. */
	int r = rules_env_name_check(s, len);

	return (r == 0 || r == -E2BIG) && len <= PROTO_TOOL_NAME_MAX;
}

bool
rules_module_name_check(const char *s, size_t len)
{
	size_t i, start = 0;

	if (s == NULL || len == 0 || len > PROTO_MODULE_NAME_MAX)
		return false;
	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		/* One identifier, s[start..i). */
		if (i == start || rules_env_name_check(s + start, i - start) < 0)
			return false;
		start = i + 1;
	}
	return true;
}

bool
rules_session_id_valid(const char *s, size_t len)
{
	size_t i;

	if (s == NULL || len != PROTO_SESSION_ID_LEN)
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool
rules_session_id_str_valid(const char *s)
{
	return s != NULL && rules_session_id_valid(s, strnlen(s, PROTO_SESSION_ID_LEN + 1));
}

int
rules_workspace_name_check(const char *s)
{
	const char *p, *slash;
	size_t len;

	if (rules_len(s, PROTO_NAME_MAX) == 0)
		return -EINVAL;
	for (p = s;; p = slash + 1) {
		slash = strchr(p, '/');
		len = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (slash == NULL)
			return 0;
	}
}

int
rules_input_name_check(const char *s)
{
	const unsigned char *p;

	if (rules_workspace_name_check(s) < 0)
		return -EINVAL;
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return -EINVAL;
	return 0;
}

/* 1 to max of [a-z0-9_-] (len bytes; s need not be NUL-terminated at len). */
static bool
rules_lower_name_valid(const char *s, size_t len, size_t max)
{
	size_t i;

	if (s == NULL || len == 0 || len > max)
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      s[i] == '_'))
			return false;
	return true;
}

bool
rules_runtime_name_valid(const char *s)
{
	return rules_lower_name_valid(s, rules_len(s, PROTO_RUNTIME_MAX), PROTO_RUNTIME_MAX);
}

bool
rules_profile_name_check(const char *s, size_t len)
{
	return rules_lower_name_valid(s, len, PROTO_PROFILE_MAX);
}

bool
rules_mount_name_check(const char *s, size_t len)
{
	return rules_lower_name_valid(s, len, PROTO_MOUNT_MAX);
}

bool
rules_mount_name_valid(const char *s)
{
	return rules_lower_name_valid(s, rules_len(s, PROTO_MOUNT_MAX), PROTO_MOUNT_MAX);
}

bool
rules_profile_name_valid(const char *s)
{
	return rules_lower_name_valid(s, rules_len(s, PROTO_PROFILE_MAX), PROTO_PROFILE_MAX);
}

bool
rules_code_name_valid(const char *s)
{
	size_t i, len = rules_len(s, PROTO_NAME_MAX);

	if (len == 0 || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (i = 0; i < len; i++)
		if (s[i] == '/' || s[i] <= ' ' || s[i] > '~')
			return false;
	return true;
}

bool
rules_limits_within(const struct proto_limits *asked, const struct proto_limits *ceilings,
		    enum proto_limit *ret_bad)
{
	size_t i;

	for (i = 0; i < PROTO_LIMIT_COUNT_; i++)
		if (asked->v[i] > ceilings->v[i]) {
			if (ret_bad != NULL)
				*ret_bad = (enum proto_limit)i;
			return false;
		}
	return true;
}
