/*
 * check_config_docs.c: airlockd.conf(5) describes every key of the key
 * table (daemon/config/config_keys.c), and no other. Usage:
 * check_config_docs AIRLOCKD_CONF_5
 *
 * - Under its section's heading (.SH "SECTION [daemon]", "SECTION [profile
 *   NAME]", ...) each row has an entry: a .TP, then .BI "NAME = " ...;
 * - a row with a default has it, as the page writes it, after the word
 *   "default" in its entry (font requests and escapes dropped);
 * - every such entry under a section is a row of that section.
 * [limits] is the limit table's, checked by limit-docs. Prints one line per
 * missing or extra key; exits 1 if any.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_parse.h"

#define ENTRIES_MAX 256

/* One ".BI "NAME = "" entry of the page: its section, name and words. */
struct entry {
	int section; /* enum config_section, or -1 for one the table does not hold */
	char name[64];
	char text[4096]; /* the entry's lines, requests and escapes dropped, lower case */
	bool row;	 /* a row of the table matched it */
};

static const char *const section_names[] = {
	[CONFIG_SEC_DAEMON] = "[daemon]",	 [CONFIG_SEC_ACCESS] = "[access]",
	[CONFIG_SEC_SANDBOX] = "[sandbox]",	 [CONFIG_SEC_SESSIONS] = "[sessions]",
	[CONFIG_SEC_EGRESS] = "[egress]",	 [CONFIG_SEC_PROFILE] = "[profile NAME]",
	[CONFIG_SEC_RUNTIME] = "[runtime NAME]", [CONFIG_SEC_MOUNT] = "[mount NAME]",
};

/* The section of a heading line (.SH "SECTION [x]"); -1 for any other. */
static int
section_of(const char *line)
{
	size_t i;

	for (i = 0; i < sizeof(section_names) / sizeof(section_names[0]); i++)
		if (section_names[i] != NULL && strstr(line, section_names[i]) != NULL &&
		    strncmp(line, ".SH \"SECTION ", 13) == 0)
			return (int)i;
	return -1;
}

/* Append a page line to an entry's text: no request, no \fX, \- as -, lower case. */
static void
text_add(struct entry *e, const char *line)
{
	size_t len = strlen(e->text);
	const char *s = line;

	if (s[0] == '.') {
		while (*s != '\0' && *s != ' ')
			s++;
	}
	for (; *s != '\0' && *s != '\n' && len + 2 < sizeof(e->text); s++) {
		if (s[0] == '\\' && s[1] == 'f' && s[2] != '\0') {
			s += 2;
			continue;
		}
		if (s[0] == '\\' && s[1] == '-') {
			s++;
			e->text[len++] = '-';
			continue;
		}
		if (*s == '"')
			continue;
		e->text[len++] = (char)tolower((unsigned char)*s);
	}
	e->text[len++] = ' ';
	e->text[len] = '\0';
}

/* Read the page's entries; exits on failure. */
static size_t
read_entries(const char *path, struct entry *ents)
{
	FILE *f = fopen(path, "re");
	char line[1024];
	bool after_tp = false;
	int section = -1;
	size_t n = 0;
	struct entry *cur = NULL;

	if (f == NULL) {
		perror(path);
		exit(2);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (!strncmp(line, ".SH", 3)) {
			section = section_of(line);
			cur = NULL;
		} else if (after_tp && !strncmp(line, ".BI \"", 5) && strstr(line, " = ") != NULL) {
			const char *name = line + 5;
			size_t len = strcspn(name, " ");

			if (n == ENTRIES_MAX || len >= sizeof(ents[n].name)) {
				fprintf(stderr, "%s: too many entries or a long name\n", path);
				exit(2);
			}
			/* NULL under [limits], or a heading that is no section */
			cur = section < 0 ? NULL : &ents[n++];
			if (cur != NULL) {
				memset(cur, 0, sizeof(*cur));
				cur->section = section;
				memcpy(cur->name, name, len);
			}
		} else if (cur != NULL) {
			text_add(cur, line);
		}
		after_tp = !strncmp(line, ".TP", 3);
	}
	fclose(f);
	return n;
}

/* Is def (lower-cased) a word within the 80 bytes after a "default" of text? */
static bool
has_default(const char *text, const char *def)
{
	char want[128];
	const char *s = text;
	size_t i, len = strlen(def);

	if (len >= sizeof(want))
		return false;
	for (i = 0; i <= len; i++)
		want[i] = (char)tolower((unsigned char)def[i]);
	while ((s = strstr(s, "default")) != NULL) {
		const char *hit = s;

		while ((hit = strstr(hit, want)) != NULL && hit - s < 80) {
			bool before = hit == text || !isalnum((unsigned char)hit[-1]);
			bool after = !isalnum((unsigned char)hit[len]);

			if (before && after)
				return true;
			hit++;
		}
		s++;
	}
	return false;
}

int
main(int argc, char **argv)
{
	static struct entry ents[ENTRIES_MAX];
	size_t n, i, j;
	int bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s AIRLOCKD_CONF_5\n", argv[0]);
		return 2;
	}
	n = read_entries(argv[1], ents);
	for (i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];
		struct entry *e = NULL;

		for (j = 0; j < n && e == NULL; j++)
			if (ents[j].section == (int)k->section && !strcmp(ents[j].name, k->name))
				e = &ents[j];
		if (e == NULL) {
			printf("%s: missing key %s %s\n", argv[1], section_names[k->section],
			       k->name);
			bad = 1;
			continue;
		}
		e->row = true;
		if (k->def != NULL && !has_default(e->text, k->def)) {
			printf("%s: %s %s: missing its default \"%s\"\n", argv[1],
			       section_names[k->section], k->name, k->def);
			bad = 1;
		}
	}
	for (j = 0; j < n; j++)
		if (!ents[j].row) {
			printf("%s: extra key %s %s: no row in config_keys.c\n", argv[1],
			       section_names[ents[j].section], ents[j].name);
			bad = 1;
		}
	return bad;
}
