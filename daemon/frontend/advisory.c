/*
 * advisory.c: the blocked_imports pre-check (docs/design-profiles.md, section 4).
 *
 * A small tokenizer for Python source, enough to tell an import statement from
 * the same words in a comment or a string, and a parser of the four import
 * forms over its tokens. It runs in the frontend on the client's code, so it
 * must be safe on any bytes: every read is bounded by the length, each byte is
 * looked at a bounded number of times, nothing is allocated and nothing
 * recurses. It is advisory: what it cannot see (a name built at run time, exec
 * of a string, getattr on a module, a string with an escape) it does not
 * report, and the run goes ahead either way (docs/security.md).
 */
#include <stdio.h>
#include <string.h>

#include "advisory.h"
#include "rules.h"

enum adv_kind {
	ADV_END,
	ADV_NEWLINE, /* the end of a logical line (not inside brackets) */
	ADV_NAME,    /* an identifier or keyword */
	ADV_STRING,  /* a string literal: p, len is its content */
	ADV_OP,	     /* one other byte: p[0] */
	ADV_NUMBER,
};

struct adv_tok {
	enum adv_kind kind;
	const unsigned char *p;
	size_t len;
	size_t line; /* where it starts, from 1 */
	bool plain;  /* ADV_STRING: no prefix but r/u and no backslash: its content is its value */
};

struct adv_lex {
	const unsigned char *s;
	size_t len, pos;
	size_t line;
	size_t depth; /* open (, [ and { */
	struct adv_tok back;
	bool has_back;
};

/* One scan: the names looked for and what was found. */
struct adv_scan {
	const char *const *blocked;
	size_t nblocked;
	struct advisory_list *ret;
	size_t found;
};

static bool
adv_ident_start(unsigned char c)
{
	/* Bytes >= 0x80 are part of a non-ASCII identifier (or of invalid
	 * text, which Python refuses): either way not a keyword boundary. */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool
adv_ident_char(unsigned char c)
{
	return adv_ident_start(c) || (c >= '0' && c <= '9');
}

/* Consume one line end at pos (\n, \r\n or a lone \r, as Python reads them). */
static bool
adv_eol(struct adv_lex *lx, size_t *pos)
{
	if (*pos >= lx->len || (lx->s[*pos] != '\n' && lx->s[*pos] != '\r'))
		return false;
	if (lx->s[*pos] == '\r' && *pos + 1 < lx->len && lx->s[*pos + 1] == '\n')
		(*pos)++;
	(*pos)++;
	lx->line++;
	return true;
}

/* A string literal whose opening quote is at lx->pos; prefix is its letters. */
static void
adv_string(struct adv_lex *lx, const unsigned char *prefix, size_t nprefix, struct adv_tok *t)
{
	unsigned char q = lx->s[lx->pos];
	bool triple = lx->pos + 2 < lx->len && lx->s[lx->pos + 1] == q && lx->s[lx->pos + 2] == q;
	size_t i = lx->pos + (triple ? 3 : 1), start = i, k;
	bool bs = false, plain = true;

	for (k = 0; k < nprefix; k++)
		if (prefix[k] != 'r' && prefix[k] != 'R' && prefix[k] != 'u' && prefix[k] != 'U')
			plain = false; /* b, f: not a module name as written */
	t->kind = ADV_STRING;
	t->line = lx->line;
	for (;;) {
		if (i >= lx->len) { /* not closed: Python refuses the file */
			t->len = i - start;
			break;
		}
		if (lx->s[i] == '\\') {
			bs = true;
			i++;
			if (!adv_eol(lx, &i) && i < lx->len)
				i++;
			continue;
		}
		if (lx->s[i] == '\n' || lx->s[i] == '\r') {
			if (!triple) { /* not closed on its line: ends here */
				t->len = i - start;
				break;
			}
			adv_eol(lx, &i);
			continue;
		}
		if (lx->s[i] == q &&
		    (!triple || (i + 2 < lx->len && lx->s[i + 1] == q && lx->s[i + 2] == q))) {
			t->len = i - start;
			i += triple ? 3 : 1;
			break;
		}
		i++;
	}
	t->p = lx->s + start;
	t->plain = plain && !bs;
	lx->pos = i;
}

/* The next token; comments, blanks and line continuations are skipped. */
static void
adv_next(struct adv_lex *lx, struct adv_tok *t)
{
	unsigned char c;
	size_t start;

	if (lx->has_back) {
		*t = lx->back;
		lx->has_back = false;
		return;
	}
	for (;;) {
		t->plain = false;
		t->line = lx->line;
		t->p = lx->s + lx->pos;
		t->len = 0;
		if (lx->pos >= lx->len) {
			t->kind = ADV_END;
			return;
		}
		c = lx->s[lx->pos];
		if (c == '\n' || c == '\r') {
			adv_eol(lx, &lx->pos);
			if (lx->depth == 0) {
				t->kind = ADV_NEWLINE;
				return;
			}
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\f') {
			lx->pos++;
			continue;
		}
		if (c == '\\') { /* a continuation joins the next line; else a stray byte */
			start = lx->pos + 1;
			if (adv_eol(lx, &start)) {
				lx->pos = start;
				continue;
			}
		}
		if (c == '#') {
			while (lx->pos < lx->len && lx->s[lx->pos] != '\n' &&
			       lx->s[lx->pos] != '\r')
				lx->pos++;
			continue;
		}
		if (c == '"' || c == '\'') {
			adv_string(lx, NULL, 0, t);
			return;
		}
		start = lx->pos;
		if (adv_ident_start(c)) {
			while (lx->pos < lx->len && adv_ident_char(lx->s[lx->pos]))
				lx->pos++;
			/* rb"...", f'...': a prefix of at most two letters, then a quote */
			if (lx->pos - start <= 2 && lx->pos < lx->len &&
			    (lx->s[lx->pos] == '"' || lx->s[lx->pos] == '\'') &&
			    strspn((const char *)lx->s + start, "rRbBuUfF") >= lx->pos - start) {
				adv_string(lx, lx->s + start, lx->pos - start, t);
				return;
			}
			t->kind = ADV_NAME;
			t->len = lx->pos - start;
			return;
		}
		if (c >= '0' && c <= '9') {
			while (lx->pos < lx->len &&
			       (adv_ident_char(lx->s[lx->pos]) || lx->s[lx->pos] == '.'))
				lx->pos++;
			t->kind = ADV_NUMBER;
			t->len = lx->pos - start;
			return;
		}
		if (c == '(' || c == '[' || c == '{')
			lx->depth++;
		else if ((c == ')' || c == ']' || c == '}') && lx->depth > 0)
			lx->depth--;
		lx->pos++;
		t->kind = ADV_OP;
		t->len = 1;
		return;
	}
}

static void
adv_push_back(struct adv_lex *lx, const struct adv_tok *t)
{
	lx->back = *t;
	lx->has_back = true;
}

static bool
adv_is(const struct adv_tok *t, enum adv_kind kind, const char *word)
{
	size_t n = strlen(word);

	return t->kind == kind && t->len == n && memcmp(t->p, word, n) == 0;
}

/* A dotted name being built: its first ADVISORY_IMPORT_MAX bytes. */
struct adv_name {
	char buf[ADVISORY_IMPORT_MAX + 1];
	size_t len;
	bool cut; /* longer than buf */
	size_t line;
};

static void
adv_name_add(struct adv_name *n, const unsigned char *p, size_t len)
{
	size_t room = ADVISORY_IMPORT_MAX - n->len;

	if (len > room) {
		len = room;
		n->cut = true;
	}
	memcpy(n->buf + n->len, p, len);
	n->len += len;
	n->buf[n->len] = '\0';
}

/* NAME ('.' NAME)* into *n; false (and nothing consumed) without a NAME first. */
static bool
adv_dotted(struct adv_lex *lx, struct adv_name *n)
{
	struct adv_tok t, dot;

	adv_next(lx, &t);
	if (t.kind != ADV_NAME) {
		adv_push_back(lx, &t);
		return false;
	}
	n->len = 0;
	n->cut = false;
	n->line = t.line;
	adv_name_add(n, t.p, t.len);
	for (;;) {
		adv_next(lx, &dot);
		if (!adv_is(&dot, ADV_OP, ".")) {
			adv_push_back(lx, &dot);
			return true;
		}
		adv_next(lx, &t);
		if (t.kind != ADV_NAME) { /* "a." then something else: Python refuses it */
			adv_push_back(lx, &t);
			return true;
		}
		adv_name_add(n, (const unsigned char *)".", 1);
		adv_name_add(n, t.p, t.len);
	}
}

/* Is the imported name n one of the blocked names or below one of them? */
static bool
adv_blocked(const struct adv_scan *sc, const struct adv_name *n)
{
	size_t i, blen;

	for (i = 0; i < sc->nblocked; i++) {
		blen = strlen(sc->blocked[i]);
		if (n->len >= blen && memcmp(n->buf, sc->blocked[i], blen) == 0 &&
		    (n->len == blen || n->buf[blen] == '.'))
			return true;
	}
	return false;
}

/* Record n if it is blocked: counted always, listed while there is room. */
static bool
adv_check(struct adv_scan *sc, const struct adv_name *n)
{
	char shown[ADVISORY_IMPORT_MAX + 1];
	size_t i;

	if (!adv_blocked(sc, n))
		return false;
	sc->found++;
	if (sc->ret->n == PROTO_ADVISORIES_MAX)
		return true;
	/* Only printable ASCII reaches the result: a non-ASCII identifier
	 * after a blocked prefix is shown with '?'. */
	for (i = 0; i < n->len; i++)
		shown[i] = n->buf[i] >= 0x20 && n->buf[i] < 0x7f ? n->buf[i] : '?';
	shown[i] = '\0';
	snprintf(sc->ret->text[sc->ret->n++], PROTO_ADVISORY_MAX + 1,
		 "blocked import: %s%s (line %zu)", shown, n->cut ? "..." : "", n->line);
	return true;
}

/* After "import": a.b [as x] {, c.d [as y]}. */
static void
adv_import(struct adv_lex *lx, struct adv_scan *sc)
{
	struct adv_name n;
	struct adv_tok t;

	while (adv_dotted(lx, &n)) {
		adv_check(sc, &n);
		adv_next(lx, &t);
		if (adv_is(&t, ADV_NAME, "as")) {
			adv_next(lx, &t); /* the alias */
			adv_next(lx, &t);
		}
		if (!adv_is(&t, ADV_OP, ",")) {
			adv_push_back(lx, &t);
			return;
		}
	}
}

/* After "from": a.b import c [as x], ... or ( ... ); a relative import is not looked at. */
static void
adv_from(struct adv_lex *lx, struct adv_scan *sc)
{
	struct adv_name mod, sub;
	struct adv_tok t;
	bool found;

	if (!adv_dotted(lx, &mod))
		return; /* "from ." or "from .x": the code's own package */
	adv_next(lx, &t);
	if (!adv_is(&t, ADV_NAME, "import")) {
		adv_push_back(lx, &t);
		return;
	}
	found = adv_check(sc, &mod);
	adv_next(lx, &t);
	if (!adv_is(&t, ADV_OP, "("))
		adv_push_back(lx, &t);
	for (;;) {
		adv_next(lx, &t);
		if (t.kind != ADV_NAME) {
			adv_push_back(lx, &t);
			return;
		}
		/* from a import b: b may be the submodule a.b */
		if (!found) {
			sub = mod;
			sub.line = t.line;
			adv_name_add(&sub, (const unsigned char *)".", 1);
			adv_name_add(&sub, t.p, t.len);
			adv_check(sc, &sub);
		}
		adv_next(lx, &t);
		if (adv_is(&t, ADV_NAME, "as")) {
			adv_next(lx, &t);
			adv_next(lx, &t);
		}
		if (!adv_is(&t, ADV_OP, ",")) {
			adv_push_back(lx, &t);
			return;
		}
	}
}

/* Is s (len bytes) a dotted name of ASCII identifiers? */
static bool
adv_dotted_text(const unsigned char *s, size_t len)
{
	size_t i;
	bool start = true;

	if (len == 0)
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] == '.' && !start) {
			start = true;
			continue;
		}
		if (s[i] >= 0x80 || !(start ? adv_ident_start(s[i]) : adv_ident_char(s[i])))
			return false;
		start = false;
	}
	return !start;
}

/* After __import__ or import_module: ("a.b" ...) with a plain literal. */
static void
adv_call(struct adv_lex *lx, struct adv_scan *sc)
{
	struct adv_name n;
	struct adv_tok t;

	adv_next(lx, &t);
	if (!adv_is(&t, ADV_OP, "(")) {
		adv_push_back(lx, &t);
		return;
	}
	adv_next(lx, &t);
	if (t.kind != ADV_STRING || !t.plain || !adv_dotted_text(t.p, t.len)) {
		adv_push_back(lx, &t);
		return;
	}
	n.len = 0;
	n.cut = false;
	n.line = t.line;
	adv_name_add(&n, t.p, t.len);
	adv_check(sc, &n);
}

size_t
advisory_scan(const char *const *blocked, size_t n, const void *code, size_t len,
	      struct advisory_list *ret)
{
	struct adv_scan sc = {.blocked = blocked, .nblocked = n, .ret = ret};
	struct adv_lex lx = {
		.s = code, .len = len < ADVISORY_SCAN_MAX ? len : ADVISORY_SCAN_MAX, .line = 1};
	size_t room = PROTO_ADVISORIES_MAX - (len > ADVISORY_SCAN_MAX);
	struct adv_tok t;
	bool stmt = true; /* at the start of a statement */

	ret->n = 0;
	if (n == 0 || blocked == NULL || (code == NULL && len > 0))
		return 0;
	for (;;) {
		adv_next(&lx, &t);
		if (t.kind == ADV_END)
			break;
		if (t.kind == ADV_NEWLINE || adv_is(&t, ADV_OP, ";") ||
		    (adv_is(&t, ADV_OP, ":") && lx.depth == 0)) {
			stmt = true; /* "if x: import os" too */
			continue;
		}
		if (stmt && adv_is(&t, ADV_NAME, "import"))
			adv_import(&lx, &sc);
		else if (stmt && adv_is(&t, ADV_NAME, "from"))
			adv_from(&lx, &sc);
		else if (adv_is(&t, ADV_NAME, "__import__") ||
			 adv_is(&t, ADV_NAME, "import_module"))
			adv_call(&lx, &sc);
		stmt = false;
	}
	/* More than fit: the last line that fits counts the rest. */
	if (sc.found > room) {
		ret->n = room;
		snprintf(ret->text[room - 1], PROTO_ADVISORY_MAX + 1,
			 "blocked import: %zu more not listed", sc.found - (room - 1));
	}
	if (len > ADVISORY_SCAN_MAX)
		snprintf(ret->text[ret->n++], PROTO_ADVISORY_MAX + 1,
			 "blocked imports: only the first %u bytes of the code were read",
			 ADVISORY_SCAN_MAX);
	return sc.found;
}
