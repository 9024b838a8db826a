/* stack_fold.h - turns symbolized frames into folded-stack frames: Java names as
 * pkg/Class.method with _[j]/_[i] annotations, _[k] for the kernel, roots first. */
#ifndef JFLAME_STACK_FOLD_H
#define JFLAME_STACK_FOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "symbolize.h"

/* "Lpkg/Class;::method" -> "pkg/Class.method" (a suffix such as a signature is
 * kept); other names are copied. Characters that would break a folded line
 * become others: ';' ':' as stackcollapse does, a line break '_'. Returns the
 * length written (output always NUL-terminated, truncated to len). */
size_t fold_java_name(const char *raw, char *out, size_t len);

struct fold_buf {
	char *p;
	size_t len, cap;
	int oom;
	bool no_inline; /* a compiled frame's inline chain folds to its outermost method */
	bool lines;	/* frames with a source line end in STACK_LINE_MARK "File.java:LINE" */
	size_t nlines;	/* frames given a line since fold_reset */
};

/* Appends one frame (with its ';' separator unless first) to b. */
void fold_add(struct fold_buf *b, const char *frame);
/* Appends n bytes of folded text as they are (separators included). */
void fold_add_raw(struct fold_buf *b, const char *text, size_t n);
/* fold_add of text a target wrote that was not escaped when read (a sample's
 * own frames): escaped here (text_escape), at no cost when it needs none. */
void fold_add_text(struct fold_buf *b, const char *text);
/* Appends the folded frames of one symbolized frame: a Java inline chain
 * "A->B->C" gives A_[j];B_[i];C_[i] (A_[j] alone with no_inline); an
 * interpreted method name_[0]; a kernel frame name_[k]; others as named.
 * With b->lines, a frame with a source line is followed by its mark. */
void fold_add_frame(struct fold_buf *b, const struct frame *f);
void fold_reset(struct fold_buf *b);
/* Appends in[0..n), a fold with lines, to b without them. */
void fold_strip_lines(struct fold_buf *b, const char *in, size_t n);
void fold_free(struct fold_buf *b);

#endif
