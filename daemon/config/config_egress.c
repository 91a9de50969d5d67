/* config_egress.c: the hooks of a profile's egress keys and of [egress], and their checks. */
#include "config_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress_rules.h"

/* The profile's egress policy, made on its first egress key. */
static struct egress_policy *
config_profile_egress(struct config_profile *prof)
{
	if (prof->egress == NULL) {
		prof->egress = calloc(1, sizeof(*prof->egress));
		if (prof->egress == NULL)
			return NULL;
		prof->egress->bytes = EGRESS_BYTES_DEFAULT;
		prof->egress->connections = EGRESS_CONNECTIONS_DEFAULT;
	}
	return prof->egress;
}

/*
 * The egress keys of [profile NAME] (docs/design-egress.md, section 2):
 * whether they fit together is checked at the end (config_egress_finish()).
 * network = none|proxy.
 */
int
config_hook_network(struct config_parse *p, const struct config_key *k, const char *value,
		    void *field)
{
	struct config_profile *prof = p->prof;
	size_t idx = (size_t)(prof - p->cfg->profiles);

	if (strcmp(value, "none") && strcmp(value, "proxy"))
		return config_fail_at(p, -EINVAL, p->line, "network = %s: expected none or proxy",
				      value);
	p->lines.profile_network[idx] = p->line;
	if (!strcmp(value, "none"))
		return 0;
	if (config_profile_egress(prof) == NULL)
		return config_fail_at(p, -ENOMEM, p->line, "out of memory");
	prof->network_proxy = true;
	return 0;
}

/* allow_hosts, allow_private_hosts = entry[, ...]: the key repeated adds. */
int
config_hook_hosts(struct config_parse *p, const struct config_key *k, const char *value,
		  void *field)
{
	struct config_profile *prof = p->prof;
	size_t idx = (size_t)(prof - p->cfg->profiles);
	struct egress_policy *pol = config_profile_egress(prof);
	char why[256];

	if (pol == NULL)
		return config_fail_at(p, -ENOMEM, p->line, "out of memory");
	if (egress_list_parse(value, k->name[6] == 'p', pol, why, sizeof(why)) < 0)
		return config_fail_at(p, -EINVAL, p->line, "%s: %s", k->name, why);
	if (p->lines.profile_hosts[idx] == 0)
		p->lines.profile_hosts[idx] = p->line;
	return 0;
}

/* network_bytes = size, network_connections = n: above 0. */
int
config_hook_network_max(struct config_parse *p, const struct config_key *k, const char *value,
			void *field)
{
	struct egress_policy *pol = config_profile_egress(p->prof);
	bool bytes = !strcmp(k->name, "network_bytes");
	uint64_t v;
	int r;

	if (pol == NULL)
		return config_fail_at(p, -ENOMEM, p->line, "out of memory");
	r = bytes ? config_parse_size(value, &v) : config_parse_u64(value, &v);
	if (r < 0 || v == 0 || (!bytes && v > UINT32_MAX))
		return config_bad_number(p, r < 0 ? r : -ERANGE, k->name, value,
					 bytes ? "a size above 0 (K, M or G suffix)"
					       : "a number of 1 or more");
	if (bytes)
		pol->bytes = v;
	else
		pol->connections = (uint32_t)v;
	return 0;
}

/*
 * [egress] resolver = IP[:port][, ...]: the name servers the egress proxy
 * asks (a v6 address in brackets when it has a port). Numeric only: the
 * resolver itself is never looked up.
 */
int
config_hook_resolver(struct config_parse *p, const struct config_key *k, const char *value,
		     void *field)
{
	struct config *cfg = p->cfg;
	const char *s = value;
	size_t n = 0;

	while (*s != '\0') {
		struct sockaddr_storage ss;
		const char *e;
		char one[64];

		while (*s == ',' || *s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			break;
		for (e = s; *e != '\0' && *e != ',' && *e != ' ' && *e != '\t'; e++)
			;
		if ((size_t)(e - s) >= sizeof(one) || n == CONFIG_RESOLVERS_MAX)
			return config_fail_at(p, -EINVAL, p->line,
					      "resolver: at most %d addresses of IP[:port]",
					      CONFIG_RESOLVERS_MAX);
		memcpy(one, s, (size_t)(e - s));
		one[e - s] = '\0';
		if (egress_resolver_parse(one, &ss) < 0)
			return config_fail_at(p, -EINVAL, p->line,
					      "resolver: '%s' is not IP[:port] ([IPv6]:port)", one);
		strcpy(cfg->egress_resolvers[n++], one);
		s = e;
	}
	if (n == 0)
		return config_fail_at(p, -EINVAL, p->line, "resolver: no address");
	cfg->negress_resolvers = n;
	return 0;
}

/* [egress] port = 1 to 65535. */
int
config_hook_port(struct config_parse *p, const struct config_key *k, const char *value, void *field)
{
	uint32_t v;
	int r;

	r = config_key_u32(p, k->name, value, &v);
	if (r < 0)
		return r;
	if (v == 0 || v > 65535)
		return config_fail_at(p, -EINVAL, p->line, "port = %s: 1 to 65535", value);
	p->cfg->egress_port = (uint16_t)v;
	return 0;
}

/*
 * The egress keys once every section is read: network = proxy needs
 * allow_hosts; allow-list keys need network = proxy (a list that does
 * nothing is a mistake the administrator should hear of).
 */
int
config_egress_finish(struct config_parse *p)
{
	struct config *cfg = p->cfg;
	size_t i, k, total = 0;
	char buf[PROTO_ALLOW_ENTRY_MAX + 1];

	for (i = 0; i < cfg->nprofiles; i++) {
		struct config_profile *prof = &cfg->profiles[i];

		if (prof->network_proxy && prof->egress->nentries == 0)
			return config_fail_at(p, -EINVAL, p->lines.profile_network[i],
					      "[profile %s] network = proxy needs allow_hosts",
					      prof->name);
		if (!prof->network_proxy && prof->egress != NULL)
			return config_fail_at(
				p, -EINVAL,
				p->lines.profile_hosts[i] ? p->lines.profile_hosts[i]
							  : p->lines.profile_network[i],
				"[profile %s] has egress keys but not network = proxy", prof->name);
		for (k = 0; prof->egress != NULL && k < prof->egress->nentries; k++) {
			egress_entry_format(&prof->egress->entries[k], buf, sizeof(buf));
			total += strlen(buf) + 2;
		}
		/* airlock info lists them all in one packet (PROTO_MSG_MAX). */
		if (total > CONFIG_ALLOW_BYTES_MAX)
			return config_fail_at(p, -EINVAL, p->lines.profile_hosts[i],
					      "[profile %s]: the allow-lists of all profiles "
					      "together are longer than %d bytes",
					      prof->name, CONFIG_ALLOW_BYTES_MAX);
	}
	return 0;
}

/* Two egress policies (NULL: no network) the same, entry by entry? */
bool
config_egress_same(const struct egress_policy *a, const struct egress_policy *b)
{
	size_t i;

	if (a == NULL || b == NULL)
		return a == b;
	if (a->nentries != b->nentries || a->bytes != b->bytes || a->connections != b->connections)
		return false;
	for (i = 0; i < a->nentries && i < EGRESS_ENTRIES_MAX; i++) {
		const struct egress_entry *x = &a->entries[i], *y = &b->entries[i];

		if (x->kind != y->kind || strcmp(x->host, y->host) != 0 ||
		    memcmp(x->addr, y->addr, sizeof(x->addr)) != 0 || x->nports != y->nports ||
		    x->nports > EGRESS_PORTS_MAX ||
		    memcmp(x->ports, y->ports, x->nports * sizeof(x->ports[0])) != 0 ||
		    x->allow_private != y->allow_private)
			return false;
	}
	return true;
}
