#include "go_asm.h"
#include "textflag.h"

// func Bytes(hdr unsafe.Pointer)
// One PREFETCHT0 per 64-byte line of the header's data, up to MaxBytes.
TEXT ·Bytes(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ hdr+0(FP), AX
	MOVQ 0(AX), BX // data
	MOVQ 8(AX), CX // length
	CMPQ CX, $const_MaxBytes
	JLE  start
	MOVQ $const_MaxBytes, CX

start:
	XORQ DX, DX

loop:
	CMPQ DX, CX
	JGE  done
	PREFETCHT0 (BX)(DX*1)
	ADDQ $64, DX
	JMP  loop

done:
	RET
