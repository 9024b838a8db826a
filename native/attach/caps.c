/* caps.c - checks jflame's effective capabilities with libcap before it
 * starts, so a sidecar without them gets one line instead of a late EPERM. */
#include "caps.h"

#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <unistd.h>

#include "proc_info.h"

#define CAPS_HINT                                                                              \
	"run jflame as root, or grant it in the container's securityContext.capabilities.add " \
	"(see docs/always-on.md, 'Containers and sidecars')"

static bool have(cap_t c, cap_value_t v)
{
	cap_flag_value_t f = CAP_CLEAR;
	if (!CAP_IS_SUPPORTED(v))
		return false;
	return cap_get_flag(c, v, CAP_EFFECTIVE, &f) == 0 && f == CAP_SET;
}

/* Appends the names of the missing capabilities of list to out; true when all are there. */
static bool need(cap_t c, const cap_value_t *list, size_t n, char *out, size_t len)
{
	bool ok = true;
	for (size_t i = 0; i < n; i++) {
		if (have(c, list[i]))
			continue;
		char *name = cap_to_name(list[i]);
		size_t pos = strlen(out);
		snprintf(out + pos, len - pos, "%s%s", pos ? ", " : "", name ? name : "?");
		if (name)
			cap_free(name);
		ok = false;
	}
	return ok;
}

static void upper(char *s)
{
	for (; *s; s++)
		if (*s >= 'a' && *s <= 'z')
			*s = (char)(*s - 'a' + 'A');
}

int caps_check_record(const pid_t *pids, size_t npids, bool all, char *err, size_t errlen)
{
	static const cap_value_t bpf[] = { CAP_BPF, CAP_PERFMON };
	static const cap_value_t ptrace[] = { CAP_SYS_PTRACE };
	char missing[256] = "";
	int rc = -1;
	bool others = all;
	cap_t c = cap_get_proc();
	if (!c) {
		snprintf(err, errlen, "cannot read its own capabilities");
		return -1;
	}
	if (!need(c, bpf, 2, missing, sizeof(missing)) && !have(c, CAP_SYS_ADMIN)) {
		upper(missing);
		snprintf(err, errlen, "missing %s %s (or CAP_SYS_ADMIN) to load its eBPF sampler; %s",
			 strchr(missing, ',') ? "capabilities" : "capability", missing, CAPS_HINT);
		goto out;
	}
	for (size_t i = 0; i < npids && !others; i++) {
		struct proc_info pi;
		others = proc_info_read(pids[i], &pi) == 0 && pi.euid != geteuid();
	}
	missing[0] = '\0';
	if (others && !need(c, ptrace, 1, missing, sizeof(missing))) {
		upper(missing);
		snprintf(err, errlen, "missing capability %s to read the memory maps and /tmp of %s; %s", missing,
			 all ? "other processes (-a)" : "a process of another user", CAPS_HINT);
		goto out;
	}
	rc = 0;
out:
	cap_free(c);
	return rc;
}

int caps_check_attach(pid_t pid, char *err, size_t errlen)
{
	static const cap_value_t list[] = { CAP_SETUID, CAP_SETGID, CAP_KILL, CAP_SYS_PTRACE };
	struct proc_info pi;
	char missing[256] = "";
	int rc = 0;
	/* attach reports a missing pid; one's own JVM needs nothing; a non-root user
	 * is told plainly that it may not attach to another user's JVM */
	if (geteuid() != 0 || proc_info_read(pid, &pi) != 0 || pi.euid == geteuid())
		return 0;
	cap_t c = cap_get_proc();
	if (!c) {
		snprintf(err, errlen, "cannot read its own capabilities");
		return -1;
	}
	if (!need(c, list, 4, missing, sizeof(missing))) {
		upper(missing);
		snprintf(err, errlen, "missing %s %s to attach to pid %d, which runs as uid %u; %s",
			 strchr(missing, ',') ? "capabilities" : "capability", missing, (int)pid, (unsigned)pi.euid,
			 CAPS_HINT);
		rc = -1;
	}
	cap_free(c);
	return rc;
}
