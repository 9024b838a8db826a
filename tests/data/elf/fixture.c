/* fixture.c - a small program with known functions for test_elf_syms: global,
 * static, C++-mangled (asm labels), an IFUNC and a hand-written one without a size. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, used))

/* C++ names without C++: each function's symbol is the g++ mangling. */
NOINLINE int cxx_delta(const char *s, int n) __asm__("_ZN6jflame7Fixture5deltaEPKci");
NOINLINE int cxx_holder_get(void) __asm__("_ZN6jflame6HolderIiE3getEv");
NOINLINE int cxx_call_op(void) __asm__("_ZN6jflame7FunctorclEv");

/* An assembler function with no .size: its size is the distance to the next symbol. */
__asm__(".text\n"
	".globl fixture_nosize\n"
	".type fixture_nosize, @function\n"
	"fixture_nosize:\n"
#if defined(__aarch64__)
	"\tmov w0, #42\n"
#else
	"\tmovl $42, %eax\n"
#endif
	"\tret\n"
	"\t.p2align 4\n");
int fixture_nosize(void);

volatile int fixture_sink;

NOINLINE int fixture_alpha(int x)
{
	for (int i = 0; i < x; i++)
		fixture_sink += i * 3;
	return fixture_sink;
}

NOINLINE static int fixture_gamma(int x)
{
	fixture_sink ^= x;
	return fixture_sink + 7;
}

NOINLINE int fixture_beta(int x)
{
	return fixture_gamma(x) + fixture_alpha(x / 2);
}

NOINLINE int cxx_delta(const char *s, int n)
{
	return s[0] + n + fixture_sink;
}

NOINLINE int cxx_holder_get(void)
{
	return fixture_sink * 5;
}

NOINLINE int cxx_call_op(void)
{
	return fixture_sink - 11;
}

static int impl_fast(void)
{
	return 1;
}

static int (*resolve_fixture_ifunc(void))(void)
{
	return impl_fast;
}

int fixture_ifunc(void) __attribute__((ifunc("resolve_fixture_ifunc")));

int main(int argc, char **argv)
{
	(void)argv;
	int r = fixture_beta(argc) + cxx_delta("x", argc) + cxx_holder_get() + cxx_call_op() + fixture_nosize() +
		fixture_ifunc();
	printf("%d\n", r);
	return 0;
}
