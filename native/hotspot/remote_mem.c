/* remote_mem.c - reading another process's memory through a reader function
 * (see remote_mem.h); the process_vm_readv reader for live processes. */
#include "remote_mem.h"

#include <sys/types.h>
#include <sys/uio.h>

int remote_mem_read(const struct remote_mem *m, uint64_t addr, void *buf, size_t len)
{
	if (!addr || addr + len < addr)
		return -1;
	return m->read(m->ctx, addr, buf, len);
}

uint64_t remote_mem_u64(const struct remote_mem *m, uint64_t addr)
{
	uint64_t v = 0;
	return remote_mem_read(m, addr, &v, 8) == 0 ? v : 0;
}

int remote_mem_pid_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = (pid_t)(intptr_t)ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	if (len == 0)
		return 0;
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}
