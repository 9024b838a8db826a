/* test_sampler.c - unit tests for the sampler's pure parts: the BPF ring's
 * size chosen from the sample rate and the number of CPUs. */
#include "check.h"
#include "sampler.h"

int main(void)
{
	/* 99 Hz on 2 CPUs: 1.6 MB of samples a second, the 2 MiB floor */
	CHECK(sampler_ring_bytes(99, 2, false) == 2u << 20);
	CHECK(sampler_ring_bytes(1, 1, false) == SAMPLER_RING_MIN);
	/* rounded up to a power of two: 499 Hz x 2 CPUs x 8 KiB = 7.8 MiB */
	CHECK(sampler_ring_bytes(499, 2, false) == 8u << 20);
	CHECK(sampler_ring_bytes(99, 8, false) == 8u << 20);
	/* capped: 5 kHz, or many CPUs */
	CHECK(sampler_ring_bytes(5000, 2, false) == SAMPLER_RING_MAX);
	CHECK(sampler_ring_bytes(99, 1024, false) == SAMPLER_RING_MAX);
	CHECK(sampler_ring_bytes(1000000, 4096, false) == SAMPLER_RING_MAX);
	/* off-CPU samples come at no fixed rate; no rate at all (off-CPU only) */
	CHECK(sampler_ring_bytes(99, 2, true) == SAMPLER_RING_MAX);
	CHECK(sampler_ring_bytes(0, 2, false) == SAMPLER_RING_MAX);
	CHECK(sampler_ring_bytes(99, 0, false) == SAMPLER_RING_MAX);
	/* always a power of two and a whole number of pages, as the kernel wants */
	for (int f = 1; f <= 20000; f += 37)
		for (int c = 1; c <= 64; c *= 2) {
			uint32_t b = sampler_ring_bytes(f, c, false);
			CHECK((b & (b - 1)) == 0 && b % 4096 == 0 && b >= SAMPLER_RING_MIN && b <= SAMPLER_RING_MAX);
			CHECK((uint64_t)b >= (uint64_t)f * (uint64_t)c * SAMPLER_RING_SAMPLE_BYTES ||
			      b == SAMPLER_RING_MAX);
		}
	return check_report("test_sampler");
}
