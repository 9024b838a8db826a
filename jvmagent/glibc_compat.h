/* glibc_compat.h - keeps the agent loadable by JVMs on glibc 2.17 and later though it is built on a newer glibc:
 * force-included into every agent source (jvmagent/CMakeLists.txt); tests/unit/check_glibc_versions.py checks. */
#ifndef JFLAME_GLIBC_COMPAT_H
#define JFLAME_GLIBC_COMPAT_H

/* glibc 2.34 moved libpthread's and libdl's functions into libc.so.6 under a new version, GLIBC_2.34, which
 * a library linked against it then needs: the dynamic linker refuses it on an older glibc (Debian 11, RHEL 8,
 * Amazon Linux 2). The agent binds them to their oldest version instead (objdump -T libc.so.6), which every
 * glibc still exports, at the same address. On glibc < 2.34 those live in libpthread.so.0 and libdl.so.2,
 * which every JVM process has loaded (libjvm.so links both); glibc's versioned lookup matches version names,
 * not the file named in the agent's version needs (libc.so.6), so it finds them there. */
#if defined(__x86_64__)
__asm__(".symver dlopen,dlopen@GLIBC_2.2.5");
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
__asm__(".symver dlclose,dlclose@GLIBC_2.2.5");
__asm__(".symver dlerror,dlerror@GLIBC_2.2.5");
__asm__(".symver pthread_create,pthread_create@GLIBC_2.2.5");
__asm__(".symver pthread_join,pthread_join@GLIBC_2.2.5");
__asm__(".symver pthread_setname_np,pthread_setname_np@GLIBC_2.12");
__asm__(".symver pthread_condattr_setclock,pthread_condattr_setclock@GLIBC_2.3.3");
#elif defined(__aarch64__)
/* aarch64's glibc starts at 2.17: its base version is every function's oldest */
__asm__(".symver dlopen,dlopen@GLIBC_2.17");
__asm__(".symver dlsym,dlsym@GLIBC_2.17");
__asm__(".symver dlclose,dlclose@GLIBC_2.17");
__asm__(".symver dlerror,dlerror@GLIBC_2.17");
__asm__(".symver pthread_create,pthread_create@GLIBC_2.17");
__asm__(".symver pthread_join,pthread_join@GLIBC_2.17");
__asm__(".symver pthread_setname_np,pthread_setname_np@GLIBC_2.17");
__asm__(".symver pthread_condattr_setclock,pthread_condattr_setclock@GLIBC_2.17");
#else
#error "glibc_compat.h: add this architecture's oldest versions of the functions above (objdump -T libc.so.6)"
#endif

/* stat(), fstat() and lstat() are symbols only since glibc 2.33 (GLIBC_2.33); before, <sys/stat.h> made them
 * inline calls of __xstat(). The agent asks the kernel itself: glibc's struct stat is the kernel's on x86-64
 * and aarch64. 0, or -1 with errno set, as syscall() returns. No libc header here: this one comes before a
 * source's own #define _GNU_SOURCE, and <features.h> would fix the feature macros without it;
 * <sys/syscall.h> only names the kernel's numbers (x86-64 and aarch64 both have newfstatat and fstat). */
#include <sys/syscall.h>

struct stat;
long syscall(long number, ...); /* as <unistd.h> declares it */

#define COMPAT_AT_FDCWD		   (-100L) /* <fcntl.h>'s AT_FDCWD and AT_SYMLINK_NOFOLLOW, the same on every Linux */
#define COMPAT_AT_SYMLINK_NOFOLLOW 0x100L

static inline int compat_stat(const char *path, struct stat *st)
{
	return (int)syscall(SYS_newfstatat, COMPAT_AT_FDCWD, path, st, 0L);
}

static inline int compat_lstat(const char *path, struct stat *st)
{
	return (int)syscall(SYS_newfstatat, COMPAT_AT_FDCWD, path, st, COMPAT_AT_SYMLINK_NOFOLLOW);
}

static inline int compat_fstat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, (long)fd, st);
}

#endif
