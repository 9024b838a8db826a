/* fake_libjvm.c - the libjvm.so of fake_jvm.c: HotSpot's VMStructs table variables
 * (exported, for jflame to find) and the spin its threads' stub stacks end in. */
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

/* Filled in by fake_jvm.c, as HotSpot's vmStructs.cpp fills them. */
EXPORT void *gHotSpotVMStructs;
EXPORT uint64_t gHotSpotVMStructEntryArrayStride;
EXPORT uint64_t gHotSpotVMStructEntryTypeNameOffset;
EXPORT uint64_t gHotSpotVMStructEntryFieldNameOffset;
EXPORT uint64_t gHotSpotVMStructEntryTypeStringOffset;
EXPORT uint64_t gHotSpotVMStructEntryIsStaticOffset;
EXPORT uint64_t gHotSpotVMStructEntryOffsetOffset;
EXPORT uint64_t gHotSpotVMStructEntryAddressOffset;
EXPORT void *gHotSpotVMTypes;
EXPORT uint64_t gHotSpotVMTypeEntryArrayStride;
EXPORT uint64_t gHotSpotVMTypeEntryTypeNameOffset;
EXPORT uint64_t gHotSpotVMTypeEntrySizeOffset;

EXPORT volatile uint64_t fake_jvm_spins;

/* fake_jvm.c sets the variables through this: a program's own references to
 * a library's data are copy relocations (the program's copy, not the one in
 * libjvm's .dynsym that jflame reads). which: their order above. */
EXPORT void fake_jvm_set(int which, uint64_t v)
{
	uint64_t *const vars[] = { (uint64_t *)&gHotSpotVMStructs,	   &gHotSpotVMStructEntryArrayStride,
				   &gHotSpotVMStructEntryTypeNameOffset,   &gHotSpotVMStructEntryFieldNameOffset,
				   &gHotSpotVMStructEntryTypeStringOffset, &gHotSpotVMStructEntryIsStaticOffset,
				   &gHotSpotVMStructEntryOffsetOffset,	   &gHotSpotVMStructEntryAddressOffset,
				   (uint64_t *)&gHotSpotVMTypes,	   &gHotSpotVMTypeEntryArrayStride,
				   &gHotSpotVMTypeEntryTypeNameOffset,	   &gHotSpotVMTypeEntrySizeOffset };
	if (which >= 0 && which < (int)(sizeof(vars) / sizeof(vars[0])))
		*(volatile uint64_t *)vars[which] = v;
}

/* Entered by a jmp with a return address pushed (a pc in a stub of the fake
 * code cache) and rbp at the first frame record of the stub chain; spins for
 * ever in libjvm's text, with a frame pointer, so a walk goes through the
 * chain. */
EXPORT __attribute__((noinline, noreturn)) void fake_jvm_spin(void)
{
	for (;;)
		fake_jvm_spins++;
}

/* The spin's address in libjvm's text (not a PLT entry of the program). */
EXPORT void *fake_jvm_spin_addr(void)
{
	return (void *)fake_jvm_spin;
}
