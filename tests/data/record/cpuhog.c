/* cpuhog.c - a native program with known functions for jflame's ELF symbolization
 * test: main -> hog_outer -> hog_inner spins until the given number of seconds. */
#include <stdlib.h>
#include <time.h>

volatile unsigned long hog_sink;

__attribute__((noinline)) void hog_inner(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		hog_sink += i * 2654435761u;
}

__attribute__((noinline)) void hog_outer(void)
{
	hog_inner(1000000);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		hog_outer();
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	return 0;
}
