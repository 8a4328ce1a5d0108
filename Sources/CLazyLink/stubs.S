/*
 * One stub per function in symbols.h: a tail jump through the function's slot, which lazy_link.c fills when the
 * library is loaded. A jump, not a call, so every argument (registers, the stack, a variadic call's count of
 * vector registers) and the return value pass through untouched, whatever the function's signature.
 */
#include "symbols.h"

#if defined(__x86_64__)
#define VITRINE_STUB(library, name) \
    .globl name; .type name, @function; .p2align 4; \
    name: jmp *vitrine_lazy_slot_##name(%rip); \
    .size name, .-name;
#elif defined(__aarch64__)
#define VITRINE_STUB(library, name) \
    .globl name; .type name, %function; .p2align 2; \
    name: adrp x16, vitrine_lazy_slot_##name; ldr x16, [x16, :lo12:vitrine_lazy_slot_##name]; br x16; \
    .size name, .-name;
#else
#error "lazy-link stubs are written for x86_64 and aarch64"
#endif

    .text
VITRINE_LAZY_SYMBOLS(VITRINE_STUB)

    .section .note.GNU-stack, "", %progbits
