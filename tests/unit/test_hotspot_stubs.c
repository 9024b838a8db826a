/* test_hotspot_stubs.c - the stub list read from a made-up JVM image
 * (StubCodeDesc descriptors, names, code; C1's blobs): names by pc, the
 * walker's rows, and the bounds a hostile list meets (huge stubs, too many rows). */
#include "check.h"
#include "hotspot_stubs.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define LIST	 0x1000ULL
#define NAMES	 0x2000ULL
#define DESCS	 0x100000ULL
#define CODE	 0x7f0000000000ULL
#define DESC_LEN 40

/* The image: a descriptor per stub, one name for all, code bytes where given
 * (int3 elsewhere); bytes read are counted. */
struct image {
	size_t nstubs;
	uint64_t stub_len;
	const uint8_t *code; /* the first stub's code (code_len bytes), each stub the same */
	size_t code_len;
	uint64_t read_bytes;
};

static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *im = ctx;
	uint8_t *out = buf;
	im->read_bytes += len;
	for (size_t i = 0; i < len; i++) {
		uint64_t a = addr + i;
		uint8_t v = 0;
		if (a >= LIST && a < LIST + 8) {
			uint64_t first = DESCS;
			v = ((uint8_t *)&first)[a - LIST];
		} else if (a >= NAMES && a < NAMES + 0x100) {
			v = a < NAMES + 8 ? (uint8_t) "stub_ab"[a - NAMES] : 0;
		} else if (a >= DESCS && a < DESCS + im->nstubs * DESC_LEN) {
			uint64_t k = (a - DESCS) / DESC_LEN, f = (a - DESCS) % DESC_LEN;
			uint64_t w[5] = { k + 1 < im->nstubs ? DESCS + (k + 1) * DESC_LEN : 0, 0, NAMES,
					  CODE + k * im->stub_len, CODE + (k + 1) * im->stub_len };
			v = ((uint8_t *)w)[f];
		} else if (a >= CODE) {
			uint64_t off = (a - CODE) % im->stub_len;
			v = off < im->code_len ? im->code[off] : 0xcc;
		} else {
			return -1;
		}
		out[i] = v;
	}
	return 0;
}

/* push rbp; mov rbp, rsp; sub rsp, 0x20; leave; ret */
static const uint8_t frame_code[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x20, 0xc9, 0xc3 };

static void test_rows(void)
{
	struct image im = { .nstubs = 3, .stub_len = 16, .code = frame_code, .code_len = sizeof(frame_code) };
	struct remote_mem m = { image_read, &im };
	struct str_intern *si = str_intern_new();
	struct hotspot_stubs *s = hotspot_stubs_new(&m, LIST, si);
	struct stub_row *rows = NULL;
	size_t n = 0;
	char err[256] = "";
	CHECK(s && si);
	CHECK(hotspot_stubs_name(s, CODE + 17, 1) && strcmp(hotspot_stubs_name(s, CODE + 17, 1), "stub_ab") == 0);
	CHECK_MSG(hotspot_stubs_rows(s, 1, &rows, &n, err, sizeof(err)) == 0, "%s", err);
	/* per stub: rsp+8 at 0, rsp+16 at 1, the frame at 4 (rsp+16, rbp saved),
	 * rsp+48 at 8, rsp+8 at 9 (ret); the int3 padding after it is not reached */
	CHECK(n >= 3 * 4);
	if (n < 3 * 4)
		return;
	for (size_t i = 1; i < n; i++)
		CHECK_MSG(rows[i].pc > rows[i - 1].pc, "row %zu", i);
	CHECK(rows[0].pc == CODE && rows[0].base == PROFILE_STUB_SP && rows[0].off == 8);
	const struct stub_row *r = NULL;
	for (size_t i = 0; i < n; i++)
		if (rows[i].pc <= CODE + 16 + 8)
			r = &rows[i];
	CHECK(r && r->base == PROFILE_STUB_SP && r->off == 48 && r->fp == PROFILE_STUB_FP_SAVED && r->fp_off == 16);
	free(rows);
	hotspot_stubs_free(s);
	str_intern_free(si);
}

/* A list of 8192 stubs of 16 MiB each: none is read whole, 2 MiB of code at most. */
static void test_huge_stubs_not_read(void)
{
	struct image im = {
		.nstubs = HOTSPOT_STUBS_MAX, .stub_len = 16u << 20, .code = frame_code, .code_len = sizeof(frame_code)
	};
	struct remote_mem m = { image_read, &im };
	struct str_intern *si = str_intern_new();
	struct hotspot_stubs *s = hotspot_stubs_new(&m, LIST, si);
	struct stub_row *rows = NULL;
	size_t n = 0;
	char err[256] = "";
	hotspot_stubs_rows(s, 1, &rows, &n, err, sizeof(err));
	CHECK_MSG(im.read_bytes < (4u << 20), "%llu bytes read", (unsigned long long)im.read_bytes);
	CHECK(n == 0);
	free(rows);
	hotspot_stubs_free(s);
	str_intern_free(si);
}

/* Many stubs whose code makes many rows: refused past 8192, not handed out. */
static void test_too_many_rows(void)
{
	struct image im = { .nstubs = 4000, .stub_len = 16, .code = frame_code, .code_len = sizeof(frame_code) };
	struct remote_mem m = { image_read, &im };
	struct str_intern *si = str_intern_new();
	struct hotspot_stubs *s = hotspot_stubs_new(&m, LIST, si);
	struct stub_row *rows = NULL;
	size_t n = 0;
	char err[256] = "";
	CHECK(hotspot_stubs_rows(s, 1, &rows, &n, err, sizeof(err)) == -1);
	CHECK(rows == NULL && n == 0);
	CHECK_MSG(strstr(err, "more than 8192 rows") != NULL, "%s", err);
	hotspot_stubs_free(s);
	str_intern_free(si);
}

/* C1's blobs (Runtime1::_blobs): four pointers, one null, a blob without a
 * frame size (its callers push two words), one with a frame size, one whose
 * code ends before it begins; a made-up CodeBlob layout. */
#define BLOBS	   0x3000ULL
#define BLOB_AT	   0x4000ULL /* blob k at BLOB_AT + k * 0x100 */
#define C1_CODE	   0x7e0000000000ULL
#define BF_NAME	   8
#define BF_FRAME   16
#define BF_BEGIN   24
#define BF_END	   32
#define C1_NAME_AT 0x5000ULL

/* push rax; pop rax; ret */
static const uint8_t c1_code[] = { 0x50, 0x58, 0xc3 };

static int blobs_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	static const char name[] = "C1 Runtime slow_subtype_check_blob";
	uint8_t *out = buf;
	for (size_t i = 0; i < len; i++) {
		uint64_t a = addr + i;
		uint8_t v = 0;
		if (a >= BLOBS && a < BLOBS + 4 * 8) {
			uint64_t k = (a - BLOBS) / 8, p = k ? BLOB_AT + k * 0x100 : 0;
			v = ((uint8_t *)&p)[(a - BLOBS) % 8];
		} else if (a >= BLOB_AT + 0x100 && a < BLOB_AT + 0x400) {
			uint64_t k = (a - BLOB_AT) / 0x100, f = (a - BLOB_AT) % 0x100, w[5] = { 0 };
			int32_t frame = k == 2 ? 5 : -1;
			w[BF_NAME / 8] = C1_NAME_AT;
			memcpy(&w[BF_FRAME / 8], &frame, 4);
			w[BF_BEGIN / 8] = C1_CODE + k * 0x100;
			w[BF_END / 8] = k == 3 ? C1_CODE : C1_CODE + k * 0x100 + 0x80;
			v = f < sizeof(w) ? ((uint8_t *)w)[f] : 0;
		} else if (a >= C1_NAME_AT && a < C1_NAME_AT + 0x100) {
			v = a - C1_NAME_AT < sizeof(name) ? (uint8_t)name[a - C1_NAME_AT] : 0;
		} else if (a >= C1_CODE && a < C1_CODE + 0x1000) {
			uint64_t off = (a - C1_CODE) % 0x100;
			v = off < sizeof(c1_code) ? c1_code[off] : 0xcc;
		} else if (image_read(ctx, a, &v, 1) != 0) {
			return -1;
		}
		out[i] = v;
	}
	return 0;
}

static void test_c1_blobs(void)
{
	struct image im = { .nstubs = 1, .stub_len = 16, .code = frame_code, .code_len = sizeof(frame_code) };
	struct remote_mem m = { blobs_read, &im };
	struct str_intern *si = str_intern_new();
	struct hotspot_stubs *s = hotspot_stubs_new(&m, LIST, si);
	const struct hotspot_blob_fields bf = { BF_NAME, BF_FRAME, BF_BEGIN, BF_END, false };
	struct stub_row *rows = NULL;
	size_t n = 0;
	char err[256] = "";
	const char *name;
	CHECK(s && si);
	hotspot_stubs_set_blobs(s, BLOBS, 4, &bf);
	name = hotspot_stubs_name(s, C1_CODE + 0x100 + 1, 1);
	CHECK_MSG(name && strcmp(name, "C1 Runtime slow_subtype_check_blob") == 0, "%s", name ? name : "(none)");
	CHECK(hotspot_stubs_name(s, C1_CODE + 0x200 + 1, 2) == NULL); /* a frame size: no rows needed */
	CHECK(hotspot_stubs_name(s, C1_CODE + 1, 3) == NULL);	      /* a code range that ends before it begins */
	CHECK(hotspot_stubs_count(s) == 2);
	CHECK_MSG(hotspot_stubs_rows(s, 4, &rows, &n, err, sizeof(err)) == 0, "%s", err);
	/* the blob's rows: rsp+8 at 0, rsp+16 after the push, rsp+8 after the pop;
	 * each says its callers pushed two words */
	size_t mine = 0;
	for (size_t i = 0; i < n; i++) {
		if (rows[i].pc < C1_CODE + 0x100 || rows[i].pc >= C1_CODE + 0x180 ||
		    rows[i].base == PROFILE_STUB_UNKNOWN)
			continue; /* the int3s after the ret are not reached */
		mine++;
		CHECK_MSG(rows[i].base == PROFILE_STUB_SP && rows[i].args == 2, "row at %#llx",
			  (unsigned long long)rows[i].pc);
		CHECK(rows[i].off == (rows[i].pc == C1_CODE + 0x101 ? 16 : 8));
	}
	CHECK_MSG(mine == 3, "%zu rows", mine);
	/* the StubCodeDesc stub's rows do not say so */
	bool seen = false;
	for (size_t i = 0; i < n; i++)
		if (rows[i].pc == CODE)
			seen = rows[i].args == 0 && rows[i].base == PROFILE_STUB_SP;
	CHECK(seen);
	free(rows);
	/* a layout with a field past the blob's first 256 bytes: no blobs */
	const struct hotspot_blob_fields far = { BF_NAME, 4096, BF_BEGIN, BF_END, false };
	struct hotspot_stubs *s2 = hotspot_stubs_new(&m, LIST, si);
	hotspot_stubs_set_blobs(s2, BLOBS, 4, &far);
	CHECK(hotspot_stubs_name(s2, C1_CODE + 0x100 + 1, 1) == NULL);
	hotspot_stubs_free(s2);
	hotspot_stubs_free(s);
	str_intern_free(si);
}

int main(void)
{
	test_rows();
	test_c1_blobs();
	test_huge_stubs_not_read();
	test_too_many_rows();
	return check_report("hotspot_stubs");
}
