/* sample_ring.h - /tmp/jflame-<pid>.samples: the agent's allocation and lock
 * samples for jflame, a fixed-size ring file; the writer (agent) and reader (jflame). */
#ifndef JFLAME_SAMPLE_RING_H
#define JFLAME_SAMPLE_RING_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SAMPLE_RING_MAGIC		   "JFLSMP1" /* 8 bytes with its NUL */
#define SAMPLE_RING_VERSION		   1
#define SAMPLE_RING_HEADER		   4096		/* the header page; records follow */
#define SAMPLE_RING_MAX_DATA		   (1ULL << 30) /* no ring is larger */
#define SAMPLE_RING_MAX_FILE		   (SAMPLE_RING_HEADER + SAMPLE_RING_MAX_DATA)
#define SAMPLE_RING_DEFAULT_DATA	   (4u << 20) /* bytes of records (a power of two) */
#define SAMPLE_RING_MAX_RECORD		   32768      /* a record's size limit, header included */
#define SAMPLE_RING_MAX_FRAMES		   2048
#define SAMPLE_RING_BEAT_NS		   5000000000ULL /* the agent turns events off this long after the reader's last visit */
#define SAMPLE_RING_DEFAULT_ALLOC_INTERVAL (512u * 1024u) /* JVMTI's own default heap sampling interval */

enum sample_kind {
	SAMPLE_PAD = 0,	  /* filler up to the end of the data area: skipped */
	SAMPLE_ALLOC = 1, /* a sampled allocation: value its size, weight the bytes it stands for */
	SAMPLE_LOCK = 2,  /* a contended monitor enter: value and weight the nanoseconds blocked */
};

/* bits of want/active */
#define SAMPLE_WANT_ALLOC 1u
#define SAMPLE_WANT_LOCK  2u

/* The first bytes of the file. Fields are naturally aligned; the agent's
 * fields are written by the agent only, the reader's by jflame only. */
struct sample_ring_header {
	char magic[8];
	uint32_t version, header_size;
	uint64_t data_size;	/* bytes of records after the header page, a power of two */
	uint64_t process_start; /* /proc/self/stat starttime: an earlier process's ring is not read */
	int32_t pid;		/* as the JVM sees itself */
	uint32_t reserved0;
	/* the agent's */
	uint64_t head;	     /* bytes committed since creation (release-stored after the record) */
	uint64_t dropped;    /* samples dropped: no room (the reader is behind) or too big */
	uint64_t written[3]; /* samples written, by kind */
	uint32_t active;     /* SAMPLE_WANT_ bits: the events the agent has on */
	uint32_t alloc_interval_active;
	char agent_error[256]; /* why an event could not be turned on, "" when none */
	/* the reader's */
	uint64_t tail;		 /* bytes consumed */
	uint64_t reader_beat_ns; /* CLOCK_MONOTONIC of the reader's last visit */
	uint32_t want;		 /* SAMPLE_WANT_ bits */
	uint32_t alloc_interval; /* bytes between allocation samples; 0: the default */
	uint64_t lock_min_ns;	 /* contended enters blocked for less are counted in lock_short, not sent */
	uint64_t reserved1[8];
	/* the agent's again */
	uint64_t lock_short;
};

/* One record: this header, then the class name and the frames, each
 * NUL-terminated, frames leaf first ("pkg/Class.method"), then zero padding
 * to a multiple of 8. A record never wraps: a SAMPLE_PAD record fills the end
 * of the data area when the next one does not fit there. */
struct sample_record {
	uint32_t size; /* the whole record, a multiple of 8 */
	uint16_t kind; /* enum sample_kind */
	uint16_t nframes;
	int32_t tid;	 /* the thread's id in the JVM's pid namespace */
	uint32_t flags;	 /* SAMPLE_TRUNCATED */
	uint64_t ts_ns;	 /* CLOCK_MONOTONIC when taken (lock: when the wait ended) */
	uint64_t value;	 /* alloc: the object's size in bytes; lock: ns blocked */
	uint64_t weight; /* alloc: the bytes it stands for (see sample_ring_alloc_weight); lock: ns blocked */
};

#define SAMPLE_TRUNCATED 1u /* the stack was deeper than its frames */

/* ---- the writer (the agent) --------------------------------------------- */

struct sample_ring_writer {
	struct sample_ring_header *h; /* the mapped file */
	unsigned char *data;
	size_t map_len;
	int fd;
	pthread_mutex_t lock;
};

/* Creates path (refusing symlinks and other users' files, as tmp_file does),
 * sized for data_size bytes of records (a power of two, at least 128 KiB), and
 * maps it. 0, or -1 with a one-line reason in err. */
int sample_ring_create(struct sample_ring_writer *w, const char *path, size_t data_size, pid_t pid,
		       uint64_t process_start, char *err, size_t errlen);
void sample_ring_destroy(struct sample_ring_writer *w);

/* Appends one record (thread-safe). 0, or -1 when it was dropped and counted. */
int sample_ring_put(struct sample_ring_writer *w, enum sample_kind kind, int32_t tid, uint64_t ts_ns, uint64_t value,
		    uint64_t weight, uint32_t flags, const char *cls, const char *const *frames, size_t nframes);

/* What the reader asks for: want bits (0 when the reader's beat is older than
 * SAMPLE_RING_BEAT_NS at now_ns, or it never came), the allocation interval
 * and the lock threshold. */
uint32_t sample_ring_wanted(const struct sample_ring_writer *w, uint64_t now_ns, uint32_t *alloc_interval,
			    uint64_t *lock_min_ns);

/* The bytes an allocation sample of size bytes stands for when the JVM samples
 * once every interval bytes on average: size / (1 - exp(-size / interval)), as
 * pprof's heap profiles unbias it (about interval for small objects). */
uint64_t sample_ring_alloc_weight(uint64_t size, uint64_t interval);

/* ---- the reader (jflame) ------------------------------------------------ */

struct sample_view;

struct sample_ring_reader {
	int fd;
	bool accepted; /* the header was checked: jflame may write its fields */
	uint64_t data_size, tail;
	uint64_t bad;	    /* records that failed validation (the rest of what was there skipped) */
	unsigned char *buf; /* one record */
	struct sample_view *view;
};

/* A record read and checked: cls and frames point into the reader's buffer,
 * valid until the next read. */
struct sample_view {
	enum sample_kind kind;
	int32_t tid;
	uint32_t flags;
	uint64_t ts_ns, value, weight;
	const char *cls;
	const char *frames[SAMPLE_RING_MAX_FRAMES]; /* leaf first */
	size_t nframes;
};

/* Opens a JVM's ring (e.g. /proc/PID/root/tmp/jflame-NSPID.samples) without
 * following symlinks and checks its header (magic, version, sizes, and
 * process_start when nonzero). Starts reading at the current head: what was
 * there before is not this recording's. 0, 1 when there is no such file, or
 * -1 with a one-line reason in err. */
int sample_ring_open(struct sample_ring_reader *r, const char *path, uint64_t process_start, char *err, size_t errlen);
/* The same on a file already opened read-write (jflame opens a target's
 * ring through target_file); takes fd, closed on failure. 0, 1 (left by an
 * earlier process: closed) or -1 with a one-line reason. */
int sample_ring_open_fd(struct sample_ring_reader *r, int fd, const char *path, uint64_t process_start, char *err,
			size_t errlen);
/* Also clears want, in a ring that was accepted (never in a refused file). */
void sample_ring_close(struct sample_ring_reader *r);

/* Asks the agent for events (want 0: none) and says the reader is here. */
int sample_ring_ask(struct sample_ring_reader *r, uint32_t want, uint32_t alloc_interval, uint64_t lock_min_ns,
		    uint64_t now_ns);

/* Calls fn for every record committed since the last read, then moves the
 * tail past them. Returns the number read, or -1 on a read error. A record
 * that fails validation is counted in bad and the rest up to head skipped. */
int sample_ring_read(struct sample_ring_reader *r, int (*fn)(void *ctx, const struct sample_view *s), void *ctx);

/* The agent's counters and state, read fresh. */
struct sample_ring_stats {
	uint64_t dropped, written[3], lock_short;
	uint32_t active, alloc_interval_active;
	char agent_error[256];
};
int sample_ring_stats(struct sample_ring_reader *r, struct sample_ring_stats *st);

/* Parses one record from bytes (size len) into v; for the reader and fuzzing.
 * 0, or -1 when it is malformed. */
int sample_record_parse(const unsigned char *bytes, size_t len, struct sample_view *v);

#endif
