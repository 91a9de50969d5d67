/*
 * bad_spawner.c: a privileged library made to call every kind of parser
 * (the config parser, inih, the import tokenizer, the egress head parser,
 * the JSON scanner) and the plan's build side (ipc-front), linked whole
 * into priv-link-bad: link-check-negative shows that check_links.sh
 * refuses it.
 */
#include <ini.h>
#include <string.h>

#include "advisory.h"
#include "config.h"
#include "egress_rules.h"
#include "jsonscan.h"
#include "plan.h"

int bad_spawner_reload(const char *buf, size_t len);

static int
bad_spawner_key(void *user, const char *section, const char *name, const char *value)
{
	return 1;
}

int
bad_spawner_reload(const char *buf, size_t len)
{
	struct advisory_list found;
	struct egress_head head;
	struct config cfg;
	char err[128];
	int r;

	memset(&found, 0, sizeof(found));
	r = config_load_buffer(&cfg, "bad", buf, len, err, sizeof(err));
	if (r == 0)
		config_free(&cfg);
	r += ini_parse_string(buf, bad_spawner_key, NULL);
	r += (int)advisory_scan(NULL, 0, buf, len, &found);
	r += egress_head_parse(buf, len, &head);
	r += jsonscan_value(buf, len);
	r += plan_build(NULL, &r);
	return r;
}
