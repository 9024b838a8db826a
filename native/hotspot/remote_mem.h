/* remote_mem.h - reading another process's memory (a JVM's, or a test's image of
 * one) through a reader function: bounds-checked reads and 8-byte words. */
#ifndef JFLAME_REMOTE_MEM_H
#define JFLAME_REMOTE_MEM_H

#include <stddef.h>
#include <stdint.h>

/* Reads len bytes at addr: 0 when all were read, else -1. */
typedef int (*remote_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct remote_mem {
	remote_read_fn read;
	void *ctx;
};

/* len bytes at addr through m: -1 for address 0 or a range that wraps. */
int remote_mem_read(const struct remote_mem *m, uint64_t addr, void *buf, size_t len);

/* The 8-byte word at addr; 0 when it cannot be read. */
uint64_t remote_mem_u64(const struct remote_mem *m, uint64_t addr);

/* A remote_read_fn for a live process: ctx is its pid cast to a pointer
 * ((void *)(intptr_t)pid); reads with process_vm_readv. */
int remote_mem_pid_read(void *ctx, uint64_t addr, void *buf, size_t len);

#endif
