/* test_stub_cfa.c - hand-assembled x86-64 stubs (GNU as, checked with
 * objdump -d -M intel) -> their rows: where the caller's frame is at each instruction. */
#include "check.h"
#include "stub_cfa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cfa_case {
	const char *name, *hex;
	const char *want; /* the rows: "offset rule; ..." */
};

static const struct cfa_case cases[] = {
	/* a leaf without a frame: mov rax, rdi; ret */
	{ "leaf", "48 89 f8 c3", "0 rsp+8 fp=same" },
	/* push rbp; mov rbp, rsp; sub rsp, 0x20; call; leave; ret (the JVM's enter()/leave()) */
	{ "enter-leave", "55 48 89 e5 48 83 ec 20 e8 00 00 00 00 c9 c3",
	  "0 rsp+8 fp=same; 1 rsp+16 fp=same; 4 rsp+16 fp=cfa-16; 8 rsp+48 fp=cfa-16; 14 rsp+8 fp=same" },
	/* sha256_AVX2's shape: callee-saved pushes, rsp kept in rax, aligned, saved
	 * on the stack; rbp a data register; then restored:
	 * push rbx; push r12; mov rax, rsp; sub rsp, 0x40; and rsp, -32;
	 * mov [rsp+0x30], rax; mov ebp, 1; add ebp, ebx; mov rsp, [rsp+0x30];
	 * pop r12; pop rbx; ret */
	{ "aligned",
	  "53 41 54 48 89 e0 48 83 ec 40 48 83 e4 e0 48 89 44 24 30 bd 01 00 00 00 01 dd 48 8b 64 24 30 41 5c 5b c3",
	  "0 rsp+8 fp=same; 1 rsp+16 fp=same; 3 rsp+24 fp=same; 10 rsp+88 fp=same; 14 unknown fp=same; "
	  "19 [rsp+48]+24 fp=same; 24 [rsp+48]+24 fp=lost; 31 rsp+24 fp=lost; 33 rsp+16 fp=lost; 34 rsp+8 fp=lost" },
	/* two exits, the second after a branch:
	 * push rbp; mov rbp, rsp; cmp rdi, 0; jne 1f; leave; ret;
	 * 1: and rsp, -16; push rbx; mov rbx, rdi; pop rbx; leave; ret */
	{ "two-exits", "55 48 89 e5 48 83 ff 00 75 02 c9 c3 48 83 e4 f0 53 48 89 fb 5b c9 c3",
	  "0 rsp+8 fp=same; 1 rsp+16 fp=same; 4 rsp+16 fp=cfa-16; 11 rsp+8 fp=same; 12 rsp+16 fp=cfa-16; "
	  "16 rbp+16 fp=cfa-16; 22 rsp+8 fp=same" },
	/* enter 0x10, 0; test rdi, rdi; je 2f; push rsi; pop rsi; 2: leave; ret */
	{ "enter", "c8 10 00 00 48 85 ff 74 02 56 5e c9 c3",
	  "0 rsp+8 fp=same; 4 rsp+32 fp=cfa-16; 10 rsp+40 fp=cfa-16; 11 rsp+32 fp=cfa-16; 12 rsp+8 fp=same" },
	/* generic_arraycopy's shape: a shared failure exit bound before the entry:
	 * jmp 1f; push rbp; mov rbp, rsp; test rdi, rdi; je 0 (the exit); leave; ret;
	 * 1: xor rax, rax; leave; ret */
	{ "exit-first", "eb 0b 55 48 8b ec 48 85 ff 74 f5 c9 c3 48 33 c0 c9 c3",
	  "0 rsp+16 fp=cfa-16; 2 rsp+8 fp=same; 3 rsp+16 fp=same; 6 rsp+16 fp=cfa-16; 12 rsp+8 fp=same; "
	  "13 rsp+16 fp=cfa-16; 17 rsp+8 fp=same" },
	/* code after a ret that nothing jumps to (a second entry, data): unknown
	 * ret; then push rbx; pop rbx; ret */
	{ "unreached", "c3 53 5b c3", "0 rsp+8 fp=same; 1 unknown fp=same" },
};

static size_t unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	while (*hex && n < max) {
		if (*hex == ' ') {
			hex++;
			continue;
		}
		char two[3] = { hex[0], hex[1], '\0' };
		out[n++] = (uint8_t)strtoul(two, NULL, 16);
		hex += 2;
	}
	return n;
}

static void rows_format(const struct stub_cfa_row *rows, size_t n, char *out, size_t len)
{
	size_t pos = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && pos < len; i++) {
		char rule[64];
		stub_cfa_row_format(&rows[i], rule, sizeof(rule));
		pos += (size_t)snprintf(out + pos, len - pos, "%s%u %s", i ? "; " : "", rows[i].at, rule);
	}
}

static void test_table(struct stub_cfa *sc)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t code[256];
		size_t len = unhex(cases[i].hex, code, sizeof(code)), n = 0;
		struct stub_cfa_row *rows = NULL;
		struct stub_cfa_stats st;
		char got[1024];
		CHECK_MSG(stub_cfa_analyze(sc, code, len, 0x7f0000001000ULL, &rows, &n, &st) == 0, "%s", cases[i].name);
		rows_format(rows, n, got, sizeof(got));
		CHECK_MSG(strcmp(got, cases[i].want) == 0, "%s:\n\tgot  %s\n\twant %s", cases[i].name, got,
			  cases[i].want);
		free(rows);
	}
}

/* The row found for each offset is the last at or before it. */
static void test_find(struct stub_cfa *sc)
{
	uint8_t code[64];
	size_t len = unhex(cases[1].hex, code, sizeof(code)), n = 0;
	struct stub_cfa_row *rows = NULL;
	CHECK(stub_cfa_analyze(sc, code, len, 0x1000, &rows, &n, NULL) == 0);
	const struct stub_cfa_row *r = stub_cfa_find(rows, n, 9); /* inside sub rsp's row (the call) */
	CHECK(r && r->base == STUB_CFA_SP && r->off == 48);
	r = stub_cfa_find(rows, n, 13); /* leave: after the call returns */
	CHECK(r && r->base == STUB_CFA_SP && r->off == 48 && r->fp == STUB_FP_SAVED && r->fp_off == 16);
	r = stub_cfa_find(rows, n, 14); /* ret */
	CHECK(r && r->base == STUB_CFA_SP && r->off == 8 && r->fp == STUB_FP_SAME);
	CHECK(stub_cfa_find(rows, 0, 3) == NULL);
	free(rows);
}

/* Garbage, a truncated instruction, nothing at all: rows, never a crash. */
static void test_garbage(struct stub_cfa *sc)
{
	uint8_t junk[4096];
	unsigned x = 12345;
	for (size_t i = 0; i < sizeof(junk); i++) {
		x = x * 1103515245u + 12345u;
		junk[i] = (uint8_t)(x >> 16);
	}
	struct stub_cfa_row *rows = NULL;
	struct stub_cfa_stats st;
	size_t n = 0;
	CHECK(stub_cfa_analyze(sc, junk, sizeof(junk), 0x1000, &rows, &n, &st) == 0);
	CHECK(n >= 1 && rows[0].at == 0);
	for (size_t i = 1; i < n; i++)
		CHECK(rows[i].at > rows[i - 1].at);
	free(rows);
	const uint8_t cut[] = { 0x48, 0x83 }; /* sub rsp, imm8 without its bytes */
	CHECK(stub_cfa_analyze(sc, cut, sizeof(cut), 0x1000, &rows, &n, &st) == 0);
	CHECK(n == 1 && rows[0].base == STUB_CFA_UNKNOWN);
	free(rows);
	CHECK(stub_cfa_analyze(sc, cut, 0, 0x1000, &rows, &n, &st) == 0);
	CHECK(n == 1 && rows[0].base == STUB_CFA_UNKNOWN);
	free(rows);
}

int main(void)
{
	char err[256] = "";
	struct stub_cfa *sc = stub_cfa_new(err, sizeof(err));
	CHECK_MSG(sc != NULL, "stub_cfa_new: %s", err);
	if (!sc)
		return check_report("stub_cfa");
	test_table(sc);
	test_find(sc);
	test_garbage(sc);
	stub_cfa_free(sc);
	return check_report("stub_cfa");
}
