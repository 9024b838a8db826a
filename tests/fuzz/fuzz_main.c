/* fuzz_main.c - runs a libFuzzer target without libFuzzer (any compiler): every
 * file of a seed corpus, then deterministic random and mutated inputs. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SEEDS      1024
#define FUZZ_MAX_INPUT 4096

struct seed {
	uint8_t *p;
	size_t n;
};

static uint64_t rng = 0x6a666c616d65ULL; /* fixed: runs are reproducible */

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Runs the target on an exact-size heap copy, so a read past the end is caught. */
static void run(const uint8_t *data, size_t n)
{
	uint8_t *copy = malloc(n ? n : 1);
	if (!copy) {
		perror("malloc");
		exit(2);
	}
	memcpy(copy, data, n);
	LLVMFuzzerTestOneInput(copy, n);
	free(copy);
}

static int load(const char *dir, struct seed *seeds, size_t *nseeds)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d) {
		perror(dir);
		return -1;
	}
	while ((e = readdir(d)) && *nseeds < MAX_SEEDS) {
		char path[4096];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		uint8_t *p = malloc(FUZZ_MAX_INPUT);
		size_t n = p ? fread(p, 1, FUZZ_MAX_INPUT, f) : 0;
		fclose(f);
		if (!p)
			continue;
		seeds[(*nseeds)++] = (struct seed){ p, n };
	}
	closedir(d);
	return 0;
}

/* A few byte-level mutations of a seed, like libFuzzer's simplest ones. */
static size_t mutate(uint8_t *buf, size_t n)
{
	static const uint8_t interesting[] = { 0, 1, ',', '=', '\n', '\\', 0x7f, 0x80, 0xff, ' ', 'a' };
	int rounds = 1 + (int)(next() % 4);

	for (int r = 0; r < rounds; r++) {
		size_t at = n ? (size_t)(next() % n) : 0;
		switch (next() % 5) {
		case 0: /* flip a bit */
			if (n)
				buf[at] ^= (uint8_t)(1u << (next() % 8));
			break;
		case 1: /* overwrite with an interesting byte */
			if (n)
				buf[at] = interesting[next() % sizeof(interesting)];
			break;
		case 2: /* insert a byte */
			if (n < FUZZ_MAX_INPUT) {
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = (uint8_t)next();
				n++;
			}
			break;
		case 3: /* delete a byte */
			if (n) {
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
			}
			break;
		default: /* duplicate a chunk */
			if (n) {
				size_t len = 1 + (size_t)(next() % (n - at));
				if (n + len <= FUZZ_MAX_INPUT) {
					memmove(buf + at + len, buf + at, n - at);
					n += len;
				}
			}
			break;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	static struct seed seeds[MAX_SEEDS];
	static uint8_t buf[FUZZ_MAX_INPUT];
	size_t nseeds = 0;
	long iterations = argc > 2 ? atol(argv[2]) : 5000;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR [ITERATIONS]\n", argv[0]);
		return 2;
	}
	if (load(argv[1], seeds, &nseeds) != 0)
		return 1;
	for (size_t i = 0; i < nseeds; i++)
		run(seeds[i].p, seeds[i].n);
	for (long i = 0; i < iterations; i++) {
		size_t n;
		if (nseeds && next() % 4 != 0) {
			const struct seed *s = &seeds[next() % nseeds];
			memcpy(buf, s->p, s->n);
			n = mutate(buf, s->n);
		} else {
			n = (size_t)(next() % 300);
			for (size_t j = 0; j < n; j++)
				buf[j] = (uint8_t)next();
		}
		run(buf, n);
	}
	printf("%s: %zu corpus files, %ld generated inputs, no failure\n", argv[0], nseeds, iterations);
	for (size_t i = 0; i < nseeds; i++)
		free(seeds[i].p);
	return 0;
}
