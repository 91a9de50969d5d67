/*
 * check_limit_docs.c: the docs name every limit of the table of limits
 * (common/limit.c). Usage: check_limit_docs PROTOCOL_MD AIRLOCKD_CONF_5 AIRLOCK_1
 *
 * - docs/protocol.md names each limit (`NAME`);
 * - airlockd.conf(5) has a row "NAME<tab>DEFAULT<tab>CEILING<tab>" in its
 *   [limits] table, with the table's default and ceiling written as the page
 *   writes them (sizes with the largest exact K, M or G suffix);
 * - airlock(1) describes each limit's own option (\-\-OPTION) and names
 *   each limit that has none (for --limit NAME=VALUE).
 * Prints one line per missing entry; exits 1 if any.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limit.h"

/* The whole file at path as a string; exits on failure. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) < 0) {
		perror(path);
		exit(2);
	}
	buf = malloc((size_t)n + 1);
	if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		exit(2);
	}
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* v as airlockd.conf(5) writes it: 64M, 1G, or a plain number. */
static void
fmt_value(const struct limit_row *r, uint64_t v, char *buf, size_t len)
{
	static const char suffix[] = "KMG";
	int i;

	if (r->kind == LIMIT_KIND_BYTES)
		for (i = 3; i >= 1; i--)
			if (v % (1ULL << (10 * i)) == 0) {
				snprintf(buf, len, "%" PRIu64 "%c", v >> (10 * i), suffix[i - 1]);
				return;
			}
	snprintf(buf, len, "%" PRIu64, v);
}

/* Report when needle is not in hay. */
static int
need(const char *hay, const char *needle, const char *doc)
{
	if (strstr(hay, needle) != NULL)
		return 0;
	printf("%s: missing \"%s\"\n", doc, needle);
	return 1;
}

int
main(int argc, char **argv)
{
	char *proto, *conf, *cli, want[256], def[32], ceil[32];
	int bad = 0;
	size_t i;

	if (argc != 4) {
		fprintf(stderr, "usage: %s PROTOCOL_MD AIRLOCKD_CONF_5 AIRLOCK_1\n", argv[0]);
		return 2;
	}
	proto = slurp(argv[1]);
	conf = slurp(argv[2]);
	cli = slurp(argv[3]);
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		const struct limit_row *r = &limit_table[i];

		if (r->name == NULL) {
			printf("limit %zu: no row in the table\n", i);
			bad = 1;
			continue;
		}
		snprintf(want, sizeof(want), "`%s`", r->name);
		bad |= need(proto, want, argv[1]);
		fmt_value(r, r->def, def, sizeof(def));
		fmt_value(r, r->ceiling, ceil, sizeof(ceil));
		snprintf(want, sizeof(want), "\n%s\t%s\t%s\t", r->name, def, ceil);
		bad |= need(conf, want, argv[2]);
		if (r->option != NULL)
			snprintf(want, sizeof(want), ".BI \\-\\-%s ", r->option);
		else
			snprintf(want, sizeof(want), "%s", r->name);
		bad |= need(cli, want, argv[3]);
	}
	free(proto);
	free(conf);
	free(cli);
	if (!bad)
		printf("%d limits named in the three docs\n", PROTO_LIMIT_COUNT_);
	return bad;
}
