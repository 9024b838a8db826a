# tiny.s - the tiny ELF seeds of tests/fuzz/corpus/elf_syms: functions with and
# without sizes, a weak alias, a C++ name; see tests/fuzz/fuzz_elf_syms.c for the commands.
	.text
	.globl _start
	.type _start, @function
_start:
	call helper
	call _ZN3foo3barEv
	mov $60, %eax
	syscall
	.size _start, .-_start
	.type helper, @function
helper:
	ret
	.size helper, .-helper
	.globl _ZN3foo3barEv
	.type _ZN3foo3barEv, @function
_ZN3foo3barEv:
	nop
	ret
	.globl nosize
	.type nosize, @function
nosize:
	ret
	.globl weak_alias
	.weak weak_alias
	.set weak_alias, helper
