/* stack_fold.c - folded-stack naming: frames joined by ';' with the annotations
 * of the brief (_[j] JIT, _[i] inlined, _[0] interpreted, _[k] kernel), Java
 * names as pkg/Class.method. */
#include "stack_fold.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

#include "folded_char.h"
#include "frame_mark.h"
#include "grow.h"
#include "stack_table.h"
#include "text_escape.h"

/* What a character that would break a folded line becomes: folded_char's rule (';'
 * is ':', line breaks ' '), and the line mark ' ' too (target text holds none of
 * them: text_escape). */
static char fold_char(char c)
{
	return c == STACK_LINE_MARK ? ' ' : folded_char(c);
}

static size_t put(char *out, size_t len, size_t pos, char c)
{
	c = fold_char(c);
	if (pos + 1 < len)
		out[pos] = c;
	return pos + 1;
}

size_t fold_java_name(const char *raw, char *out, size_t len)
{
	size_t pos = 0;
	const char *sep = NULL;
	if (raw[0] == 'L')
		sep = strstr(raw, ";::");
	if (sep) {
		for (const char *p = raw + 1; p < sep; p++)
			pos = put(out, len, pos, *p);
		pos = put(out, len, pos, '.');
		raw = sep + 3;
	}
	for (const char *p = raw; *p; p++)
		pos = put(out, len, pos, *p);
	if (len == 0)
		return 0;
	out[pos < len ? pos : len - 1] = '\0';
	return pos < len ? pos : len - 1;
}

static void grow(struct fold_buf *b, size_t more)
{
	if (!b->oom && ARRAY_GROW(b->p, b->cap, b->len + more + 1) != 0)
		b->oom = 1;
}

void fold_add(struct fold_buf *b, const char *frame)
{
	size_t n = strlen(frame);
	grow(b, n + 1);
	if (b->oom)
		return;
	if (b->len)
		b->p[b->len++] = ';';
	for (size_t i = 0; i < n; i++)
		b->p[b->len++] = fold_char(frame[i]);
	b->p[b->len] = '\0';
}

void fold_add_raw(struct fold_buf *b, const char *text, size_t n)
{
	grow(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->len, text, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void fold_add_text(struct fold_buf *b, const char *text)
{
	size_t n = strlen(text);
	if (!text_needs_escape(text, n)) {
		fold_add(b, text);
		return;
	}
	size_t need = text_escape(NULL, 0, text, n);
	grow(b, need + 1);
	if (b->oom)
		return;
	if (b->len)
		b->p[b->len++] = ';';
	text_escape(b->p + b->len, need + 1, text, n);
	for (size_t i = 0; i < need; i++)
		b->p[b->len + i] = fold_char(b->p[b->len + i]);
	b->len += need;
}

static void add_java(struct fold_buf *b, const char *raw, size_t n, const char *annot)
{
	char part[2048], name[2100];
	if (n >= sizeof(part))
		n = sizeof(part) - 1;
	memcpy(part, raw, n);
	part[n] = '\0';
	size_t l = fold_java_name(part, name, sizeof(name) - 8);
	memcpy(name + l, annot, strlen(annot) + 1);
	fold_add(b, name);
}

/* The last frame's source line: its mark, the file (unknown: "?"), ':', the
 * line (0: not known, in a known file). */
static void add_line(struct fold_buf *b, const char *file, int line)
{
	char num[16];
	if (!file || !*file)
		file = "?";
	size_t fn = strlen(file), nn = (size_t)snprintf(num, sizeof(num), ":%d", line);
	grow(b, fn + nn + 1);
	if (b->oom || !b->len)
		return;
	b->p[b->len++] = STACK_LINE_MARK;
	for (size_t i = 0; i < fn; i++)
		b->p[b->len++] = fold_char(file[i]);
	memcpy(b->p + b->len, num, nn + 1);
	b->len += nn;
	b->nlines++;
}

/* The line mark of the inline chain member at where ("File.java:12", up to a
 * line break); returns the next member's, NULL after the last. */
static const char *add_member_line(struct fold_buf *b, const char *where)
{
	char file[512];
	const char *end = strchr(where, '\n'), *colon;
	size_t n = end ? (size_t)(end - where) : strlen(where);
	for (colon = where + n; colon > where && colon[-1] != ':'; colon--)
		;
	if (colon > where) {
		size_t fn = (size_t)(colon - 1 - where) < sizeof(file) - 1 ? (size_t)(colon - 1 - where) :
									     sizeof(file) - 1;
		memcpy(file, where, fn);
		file[fn] = '\0';
		add_line(b, file, atoi(colon));
	}
	return end ? end + 1 : NULL;
}

void fold_add_frame(struct fold_buf *b, const struct frame *f)
{
	char name[2100];
	switch (f->kind) {
	case FRAME_JAVA_INTERP:
		add_java(b, f->name, strlen(f->name), FRAME_MARK_INTERP);
		if (b->lines && (f->file || f->line > 0))
			add_line(b, f->file, f->line);
		break;
	case FRAME_JAVA: {
		const char *p = f->name, *arrow;
		const char *annot = FRAME_MARK_JIT, *where = b->lines ? f->inline_lines : NULL;
		for (;;) {
			arrow = strstr(p, "->");
			add_java(b, p, arrow ? (size_t)(arrow - p) : strlen(p), annot);
			if (where) /* this member's "File.java:LINE" */
				where = add_member_line(b, where);
			if (!arrow || b->no_inline) /* no_inline: the compiled method itself */
				break;
			annot = FRAME_MARK_INLINED;
			p = arrow + 2;
		}
		break;
	}
	case FRAME_KERNEL: {
		size_t n = strlen(f->name);
		if (n > sizeof(name) - 8)
			n = sizeof(name) - 8;
		memcpy(name, f->name, n);
		memcpy(name + n, FRAME_MARK_KERNEL, sizeof(FRAME_MARK_KERNEL));
		fold_add(b, name);
		break;
	}
	default:
		fold_add(b, f->name);
		break;
	}
}

void fold_strip_lines(struct fold_buf *b, const char *in, size_t n)
{
	grow(b, n);
	if (b->oom)
		return;
	b->len += stack_strip_lines(in, n, b->p + b->len);
	b->p[b->len] = '\0';
}

void fold_reset(struct fold_buf *b)
{
	b->len = 0;
	b->nlines = 0;
	if (b->p)
		b->p[0] = '\0';
}

void fold_free(struct fold_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
