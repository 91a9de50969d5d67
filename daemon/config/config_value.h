/*
 * config_value.h: the value parsers and error helpers of config/
 * (config_value.c, a leaf: it calls no other config/ file). Private to
 * config/, through config_parse.h.
 */
#ifndef AIRLOCKD_CONFIG_VALUE_H
#define AIRLOCKD_CONFIG_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

struct config_parse;

/* Record the first error of a parse, at a given line; returns the error. */
int __attribute__((format(printf, 4, 5)))
config_fail_at(struct config_parse *p, int error, unsigned line, const char *fmt, ...);

/* Where a [KIND NAME] section's entries are: n of at most max, stride bytes
 * apart from base, each named at name_off; from_file marks the ones the file
 * gave. */
struct config_slots {
	const char *kind;
	void *base;
	size_t stride, name_off;
	size_t *n, max;
	bool *from_file;
};

/* The entry a [KIND NAME] header opens: the one named name (a built-in the
 * file replaces), or a new one, zeroed but for its name, at the end. A bad
 * name (valid false; at most namemax bytes), a name the file gave already,
 * or one more than max are failures. Returns 0 or the failure. */
int config_section_slot(struct config_parse *p, const struct config_slots *s, const char *name,
			bool valid, int namemax, size_t *ret);

/* Split a value into whitespace-separated words; the result is owned by the caller. */
int config_split_words(const char *s, char **ret, size_t max, size_t *ret_n);
/* Parse a decimal unsigned integer: digits only, no sign, no space, no overflow. */
int config_parse_u64(const char *s, uint64_t *ret);
/* Parse a byte count with an optional binary suffix K, M or G. */
int config_parse_size(const char *s, uint64_t *ret);
/* Parse an octal file mode up to 0777. */
int config_parse_mode(const char *s, mode_t *ret);
/* Parse a boolean: true/false, yes/no, on/off, 1/0. */
int config_parse_bool(const char *s, bool *ret);
/* Is s all decimal digits (a numeric uid or gid)? */
bool config_is_number(const char *s);
/* Parse a numeric id; (uid_t)-1 is "no id" for the kernel and is refused. */
int config_parse_id(const char *s, uint32_t *ret);
/* Resolve a user (group: a group) name or number to its id; a name must exist. */
int config_resolve_id(const char *s, bool group, uint32_t *ret);
/* Report a bad number for a key, naming what was expected. */
int config_bad_number(struct config_parse *p, int r, const char *name, const char *value,
		      const char *expected);
/* Parse a non-zero 32-bit count. */
int config_key_u32(struct config_parse *p, const char *name, const char *value, uint32_t *ret);
/*
 * The next item of a comma-separated list at *s (blanks around it dropped)
 * into item; *s moves past it and its comma. Returns 1, 0 at the end, or
 * -errno for an empty or too long item (the error at line of p names key).
 */
int config_list_next(struct config_parse *p, unsigned line, const char *key, const char **s,
		     char *item, size_t itemlen);
/* Parse a comma-separated list of users or groups into ids. */
int config_key_list(struct config_parse *p, const char *name, const char *value, bool groups,
		    uint32_t *ids, size_t *ret_n);
/* Replace a string option with a copy of value. */
int config_set_string(char **slot, const char *value);
/* Parse the value of limit l (named name in the file) by its kind and bound. */
int config_limit_value(struct config_parse *p, enum proto_limit l, const char *name,
		       const char *value, uint64_t *ret);

#endif
