//go:build amd64 && !purego

#include "textflag.h"

// func cpuidSHA() bool
TEXT ·cpuidSHA(SB), NOSPLIT, $0-1
	XORL AX, AX
	XORL CX, CX
	CPUID
	CMPL AX, $7
	JB   none
	MOVL $7, AX
	XORL CX, CX
	CPUID
	SHRL $29, BX
	ANDL $1, BX
	MOVB BX, ret+0(FP)
	RET

none:
	MOVB $0, ret+0(FP)
	RET
