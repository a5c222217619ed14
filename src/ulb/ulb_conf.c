/*
 * ulb_conf.c - the Upper-Layer Binding configuration file (rpcrdma-ulb.conf
 * (5)): one entry per line,
 *
 *	PROG VERS PROC call|reply [ddp=LIST] [min=N] [chunks=N]
 *	                          [room=SIZE] [max=SIZE]
 *
 * with '#' comments.  Every line is checked completely before it is
 * registered; a bad line is reported as "FILE:LINE: reason" and skipped, so
 * one typo costs one binding (which then falls back to no reduction, always
 * safe, RFC 8166 §6) rather than every binding in the file.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "log/rl_log.h"
#include "ulb/ulb.h"

#define ULB_LINE_MAX 1024

/* Keywords, as bits, to refuse one given twice. */
enum {
	ULB_KW_DDP = 1 << 0,
	ULB_KW_MIN = 1 << 1,
	ULB_KW_CHUNKS = 1 << 2,
	ULB_KW_ROOM = 1 << 3,
	ULB_KW_MAX = 1 << 4,
};

struct ulb_parse {
	char *why;
	size_t whylen;
};

static int conf_fail(struct ulb_parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int conf_fail(struct ulb_parse *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->why, p->whylen, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---------------------------------------------------------------------- */
/* numbers                                                                 */

/*
 * Decimal, or hexadecimal after "0x".  No octal: "010" meaning 8 in a
 * program number would be a nasty surprise.  Stops at *end.
 */
static bool num(const char *s, const char **end, uint64_t max, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;
	const char *q = s;

	if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
		base = 16;
		q += 2;
	}
	if (!isxdigit((unsigned char)*q) ||
	    (base == 10 && !isdigit((unsigned char)*q)))
		return false;
	for (; *q; q++) {
		unsigned d;

		if (isdigit((unsigned char)*q))
			d = (unsigned)(*q - '0');
		else if (base == 16 && isxdigit((unsigned char)*q))
			d = (unsigned)(tolower((unsigned char)*q) - 'a' + 10);
		else
			break;
		if (v > (max - d) / base)
			return false;
		v = v * base + d;
	}
	*end = q;
	*out = v;
	return true;
}

/* A whole word that is a number <= max. */
static bool word_num(const char *s, uint64_t max, uint64_t *out)
{
	const char *end;

	return num(s, &end, max, out) && *end == '\0';
}

/* An octet count with an optional k or m suffix (1024, 1048576). */
bool ulb_octets(const char *s, const char **end, uint32_t *out)
{
	uint64_t v, mul = 1;

	if (!num(s, end, UINT32_MAX, &v))
		return false;
	if (**end == 'k' || **end == 'K')
		mul = 1024;
	else if (**end == 'm' || **end == 'M')
		mul = 1024 * 1024;
	if (mul != 1)
		(*end)++;
	if (v > UINT32_MAX / mul)
		return false;
	*out = (uint32_t)(v * mul);
	return true;
}

/* ---------------------------------------------------------------------- */
/* keyword values                                                          */

/* ddp=all | none | K[,K...] with 0 <= K < 64 */
static int parse_ddp(struct ulb_parse *p, const char *v, uint64_t *mask)
{
	const char *q = v;
	uint64_t k;

	*mask = 0;
	if (!strcmp(v, "all")) {
		*mask = ~(uint64_t)0;
		return 0;
	}
	if (!strcmp(v, "none"))
		return 0;
	for (;;) {
		if (!num(q, &q, UINT64_MAX, &k))
			return conf_fail(
				p, "ddp: '%s' is not a list of item ordinals",
				v);
		if (k >= RW_DDP_MAX_ORDINAL)
			return conf_fail(
				p,
				"ddp: item ordinal %llu is out of range 0..%u",
				(unsigned long long)k, RW_DDP_MAX_ORDINAL - 1);
		if (*mask & RW_DDP_ITEM(k))
			return conf_fail(
				p, "ddp: item ordinal %llu is listed twice",
				(unsigned long long)k);
		*mask |= RW_DDP_ITEM(k);
		if (*q == '\0')
			return 0;
		if (*q++ != ',')
			return conf_fail(
				p, "ddp: '%s' is not a list of item ordinals",
				v);
	}
}

/* SIZE = N[k|m] | arg[OFF] | arg[OFF]+N[k|m], OFF = [-]N, multiple of 4 */
static int parse_size(struct ulb_parse *p, const char *kw, const char *v,
		      struct rpcrdma_ulb_size *sz)
{
	const char *q = v;
	bool neg = false;
	uint64_t off;

	memset(sz, 0, sizeof(*sz));
	if (strncmp(q, "arg[", 4)) {
		sz->kind = RPCRDMA_ULB_SIZE_FIXED;
		if (!ulb_octets(q, &q, &sz->value) || *q)
			return conf_fail(
				p,
				"%s: '%s' is not a size (N, Nk, Nm or arg[OFFSET][+N])",
				kw, v);
		return 0;
	}
	sz->kind = RPCRDMA_ULB_SIZE_ARG;
	q += 4;
	if (*q == '-') {
		neg = true;
		q++;
	}
	if (!num(q, &q, (uint64_t)INT32_MAX + 1, &off) || *q != ']')
		return conf_fail(p, "%s: '%s': expected arg[OFFSET]", kw, v);
	if (off % 4)
		return conf_fail(
			p, "%s: argument offset %s%llu is not a multiple of 4",
			kw, neg ? "-" : "", (unsigned long long)off);
	if (neg && off == 0)
		return conf_fail(
			p,
			"%s: argument offset -0 names no word; the last word is -4",
			kw);
	if (!neg && off > INT32_MAX)
		return conf_fail(p, "%s: argument offset %llu is too large", kw,
				 (unsigned long long)off);
	sz->offset = neg ? (int32_t) - (int64_t)off : (int32_t)off;
	q++;
	if (*q == '\0')
		return 0;
	if (*q != '+' || !ulb_octets(q + 1, &q, &sz->value) || *q)
		return conf_fail(p,
				 "%s: '%s': only '+N' may follow arg[OFFSET]",
				 kw, v);
	return 0;
}

/* One KEY=VALUE word. */
static int parse_kw(struct ulb_parse *p, char *w, unsigned *seen,
		    struct rpcrdma_ulb_entry *e)
{
	char *v = strchr(w, '=');
	unsigned bit;
	uint64_t n;

	if (!v)
		return conf_fail(p, "'%s' is not KEYWORD=VALUE", w);
	*v++ = '\0';
	if (!strcmp(w, "ddp"))
		bit = ULB_KW_DDP;
	else if (!strcmp(w, "min"))
		bit = ULB_KW_MIN;
	else if (!strcmp(w, "chunks"))
		bit = ULB_KW_CHUNKS;
	else if (!strcmp(w, "room"))
		bit = ULB_KW_ROOM;
	else if (!strcmp(w, "max"))
		bit = ULB_KW_MAX;
	else
		return conf_fail(
			p,
			"unknown keyword '%s' (expected ddp, min, chunks, room or max)",
			w);
	if (*seen & bit)
		return conf_fail(p, "keyword '%s' is given twice", w);
	*seen |= bit;
	if (*v == '\0')
		return conf_fail(p, "%s: empty value", w);

	switch (bit) {
	case ULB_KW_DDP:
		return parse_ddp(p, v, &e->items);
	case ULB_KW_MIN: {
		const char *end;

		if (!ulb_octets(v, &end, &e->min_len) || *end)
			return conf_fail(p,
					 "min: '%s' is not a size (N, Nk or Nm)",
					 v);
		return 0;
	}
	case ULB_KW_CHUNKS:
		if (!word_num(v, RW_DDP_MAX_ORDINAL, &n))
			return conf_fail(p,
					 "chunks: '%s' is not a number 0..%u",
					 v, RW_DDP_MAX_ORDINAL);
		e->max_chunks = (uint32_t)n;
		return 0;
	case ULB_KW_ROOM:
		return parse_size(p, "room", v, &e->room);
	default:
		return parse_size(p, "max", v, &e->reply_max);
	}
}

/* ---------------------------------------------------------------------- */
/* lines                                                                   */

static int parse_key(struct ulb_parse *p, char **w, int nw,
		     struct rpcrdma_ulb_entry *e)
{
	static const char *const name[] = { "program", "version", "procedure" };
	uint64_t v[3];
	int i;

	if (nw < 4)
		return conf_fail(
			p,
			"expected PROGRAM VERSION PROCEDURE call|reply, got %d field%s",
			nw, nw == 1 ? "" : "s");
	for (i = 0; i < 3; i++)
		if (!word_num(w[i], UINT32_MAX, &v[i]))
			return conf_fail(p,
					 "%s '%s' is not a number 0..4294967295",
					 name[i], w[i]);
	e->prog = (rpcprog_t)v[0];
	e->vers = (rpcvers_t)v[1];
	e->proc = (rpcproc_t)v[2];
	if (!strcmp(w[3], "call"))
		e->dir = RPCRDMA_ULB_CALL;
	else if (!strcmp(w[3], "reply"))
		e->dir = RPCRDMA_ULB_REPLY;
	else
		return conf_fail(p, "direction '%s' is neither call nor reply",
				 w[3]);
	return 0;
}

int ulb_conf_parse_line(const char *line, struct rpcrdma_ulb_entry *e,
			char *why, size_t whylen)
{
	struct ulb_parse p = { why, whylen };
	char buf[ULB_LINE_MAX + 1], *w[ULB_LINE_MAX / 2 + 1], *s, *save;
	const char *msg;
	unsigned seen = 0;
	int nw = 0, i;
	size_t len;

	memset(e, 0, sizeof(*e));
	len = strcspn(line, "\n");
	if (len > ULB_LINE_MAX)
		return conf_fail(&p, "line longer than %d characters",
				 ULB_LINE_MAX);
	memcpy(buf, line, len);
	buf[len] = '\0';
	s = strchr(buf, '#');
	if (s)
		*s = '\0';
	for (s = strtok_r(buf, " \t\r\n", &save); s;
	     s = strtok_r(NULL, " \t\r\n", &save))
		w[nw++] = s;
	if (nw == 0)
		return 0;
	if (parse_key(&p, w, nw, e))
		return -1;
	for (i = 4; i < nw; i++)
		if (parse_kw(&p, w[i], &seen, e))
			return -1;
	msg = ulb_entry_check(e);
	if (msg)
		return conf_fail(&p, "%s", msg);
	return 1;
}

/* ---------------------------------------------------------------------- */
/* files                                                                   */

struct ulb_seen {
	struct rpcrdma_ulb_entry e;
	unsigned line;
};

/* Line number of an earlier entry of this file with the same key, or 0. */
static unsigned dup_line(const struct ulb_seen *s, size_t n,
			 const struct rpcrdma_ulb_entry *e)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i].e.prog == e->prog && s[i].e.vers == e->vers &&
		    s[i].e.proc == e->proc && s[i].e.dir == e->dir)
			return s[i].line;
	return 0;
}

/* One bad line: to errs as "FILE:LINE: reason", or without errs as a
 * warning of the library's log (rl_log.h). */
static void conf_report(FILE *errs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void conf_report(FILE *errs, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (errs) {
		vfprintf(errs, fmt, ap);
		fputc('\n', errs);
	} else {
		rl_vlog(RL_WARN, fmt, ap);
	}
	va_end(ap);
}

int ulb_conf_load(const char *path, FILE *errs)
{
	char line[ULB_LINE_MAX + 2], why[160];
	struct ulb_seen *seen = NULL, *ns;
	size_t nseen = 0, cap = 0;
	struct rpcrdma_ulb_entry e;
	unsigned lineno = 0, dup;
	int bad = 0, r;
	bool skip = false;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		bool whole = len && line[len - 1] == '\n';

		/* the tail of an over-long line is not a line of its own */
		if (skip) {
			skip = !whole && !feof(f);
			continue;
		}
		lineno++;
		if (!whole && !feof(f)) {
			skip = true;
			snprintf(why, sizeof(why),
				 "line longer than %d characters",
				 ULB_LINE_MAX);
			r = -1;
		} else {
			r = ulb_conf_parse_line(line, &e, why, sizeof(why));
		}
		if (r > 0) {
			dup = dup_line(seen, nseen, &e);
			if (dup) {
				snprintf(why, sizeof(why),
					 "duplicates the entry at line %u",
					 dup);
				r = -1;
			}
		}
		if (r < 0) {
			conf_report(errs, "%s:%u: %s", path, lineno, why);
			bad++;
			continue;
		}
		if (r == 0)
			continue;
		if (nseen == cap) {
			cap = cap ? cap * 2 : 16;
			ns = realloc(seen, cap * sizeof(*seen));
			if (!ns) {
				free(seen);
				fclose(f);
				errno = ENOMEM;
				return -1;
			}
			seen = ns;
		}
		seen[nseen].e = e;
		seen[nseen++].line = lineno;
		if (ulb_table_add(&e, ULB_SRC_CONF)) {
			conf_report(errs,
				    "%s:%u: cannot register: out of memory",
				    path, lineno);
			bad++;
		}
	}
	free(seen);
	if (ferror(f)) {
		fclose(f);
		errno = EIO;
		return -1;
	}
	fclose(f);
	return bad;
}
