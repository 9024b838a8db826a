/* hostile_lib.c - the code a hostile test process runs (test_hostile.py): built
 * stripped (what it maps) and with symbols (the root-only canary it points at). */

static volatile unsigned long hostile_sink;

/* The canary name: only the unstripped build's .symtab has it. */
__attribute__((noinline)) static void jflameCanarySymbolQz7xw3Spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		hostile_sink += i;
}

void hostile_spin(unsigned long n);

void hostile_spin(unsigned long n)
{
	jflameCanarySymbolQz7xw3Spin(n);
}
