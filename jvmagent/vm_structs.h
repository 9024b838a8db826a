/* vm_structs.h - reads HotSpot's exported gHotSpotVMStructs tables (the ones the
 * serviceability agent uses) to find a -XX flag's real value and a thread's tid. */
#ifndef JFLAME_VM_STRUCTS_H
#define JFLAME_VM_STRUCTS_H

#include <stdint.h>
#include <sys/types.h>

/* Looks the tables up in the process's libjvm. 0 on success, -1 if missing. */
int vm_structs_init(void);

/* A boolean -XX flag: 1 on, 0 off, -1 unknown (no tables, no such flag). */
int vm_structs_bool_flag(const char *name);

/* Turns a boolean -XX flag on in place, as async-profiler does for
 * DebugNonSafepoints (code compiled from then on sees it). 0, or -1 when the
 * flag is not in the table. */
int vm_structs_set_bool_flag(const char *name);

/* Native tid of a JavaThread* (java.lang.Thread.eetop), or -1. */
pid_t vm_structs_thread_tid(uintptr_t java_thread);

#endif
