/*
 * red_fixture.c - test fixtures over the red_prog.x program (see
 * red_fixture.h): the values the red_prog.x suites build.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "red_fixture.h"

void red_fill(void *p, size_t n, unsigned seed)
{
	unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		c[i] = (unsigned char)(i * 31u + seed * 7u + 1u);
}

void *red_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(p);
	return p;
}

void red_mixed_make(struct red_mixed_store *s, size_t n)
{
	size_t nl = n > RED_NAME_MAX ? RED_NAME_MAX : n;
	unsigned i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < 6; i++) {
		s->blen[i] = n + i;
		s->bufs[i] = red_xmalloc(n + i);
		red_fill(s->bufs[i], n + i, i + 1);
	}
	s->m.before = -7;
	s->m.h = -0x123456789LL;
	s->m.blob.red_blob_len = (u_int)n;
	s->m.blob.red_blob_val = s->bufs[0];
	memset(s->name, 'a', nl);
	s->name[nl] = 0;
	s->m.name = s->name;
	memcpy(s->m.tag, "tagtag", 6);
	s->m.attr.type = 1;
	s->m.attr.mode = 0644;
	s->m.attr.nlink = 2;
	s->m.attr.uid = 1000;
	s->m.attr.gid = 100;
	s->m.attr.size = n;
	s->opt.flags = 0xf00d;
	s->opt.body.red_blob_len = (u_int)n + 1;
	s->opt.body.red_blob_val = s->bufs[1];
	s->m.opt = &s->opt;
	for (i = 0; i < 3; i++) {
		s->list[i].red_blob_len = (u_int)n + 2 + i;
		s->list[i].red_blob_val = s->bufs[2 + i];
	}
	s->m.list.list_len = 3;
	s->m.list.list_val = s->list;
	s->m.after = 0xfedcba9876543210ULL;
	s->m.last.red_blob_len = (u_int)n + 5;
	s->m.last.red_blob_val = s->bufs[5];
}

void red_mixed_free(struct red_mixed_store *s)
{
	unsigned i;

	for (i = 0; i < 6; i++)
		free(s->bufs[i]);
}

size_t red_mixed_cap(size_t n)
{
	return 6 * (n + 16) + 1024;
}

void red_two_make(red_two_args *t, char *a, char *b)
{
	unsigned i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < 15; i++)
		t->prefix[i] = 0x100 + i;
	red_fill(a, 5, 1);
	red_fill(b, 10, 2);
	t->a.a_len = 5;
	t->a.a_val = a;
	t->mid = 0xabcdef01;
	t->b.b_len = 10;
	t->b.b_val = b;
}

void red_write_make(red_write_args *w, char *fh, char *data, u_int len)
{
	memset(w, 0, sizeof(*w));
	w->file.red_fh_len = 32;
	w->file.red_fh_val = fh;
	w->count = len;
	w->stable = RED_FILE_SYNC;
	w->data.data_len = len;
	w->data.data_val = data;
}
