//go:build amd64 && !race && !purego

#include "textflag.h"

// func storeSlots(dst []atomic.Uint64, src []Handle)
TEXT ·storeSlots(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	TESTQ CX, CX
	JZ done
loop:
	MOVQ (SI), AX
	MOVQ AX, (DI)
	ADDQ $8, SI
	ADDQ $8, DI
	DECQ CX
	JNZ loop
done:
	RET
