//go:build !goexperiment.simd

#include "textflag.h"

// func sumsAVX2Asm(b []byte) (sum, moving uint64)
//
// Sums len(b)/64*64 bytes of b, 64 a step in two 32-byte vectors: VPSADBW
// against zero adds each group of eight bytes into a 64-bit lane; bytes ≥
// 64 (min(v, 64) == 64) are counted in byte counters (subtracting the
// compare's −1), folded into 64-bit lanes by VPSADBW every 255 steps,
// before they can wrap.
TEXT ·sumsAVX2Asm(SB), NOSPLIT, $0-40
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	SHRQ $6, CX
	VPXOR Y0, Y0, Y0 // zero
	VPXOR Y1, Y1, Y1 // sums of the first vector
	VPXOR Y2, Y2, Y2 // sums of the second
	VPXOR Y3, Y3, Y3 // moving counts
	MOVQ $0x4040404040404040, AX
	MOVQ AX, X4
	VPBROADCASTQ X4, Y4 // the level, 64, in every byte

outer:
	TESTQ CX, CX
	JZ    done
	MOVQ  $255, DX
	CMPQ  CX, DX
	CMOVQLT CX, DX
	SUBQ  DX, CX
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6

inner:
	VMOVDQU  (SI), Y7
	VMOVDQU  32(SI), Y8
	VPSADBW  Y0, Y7, Y9
	VPADDQ   Y9, Y1, Y1
	VPSADBW  Y0, Y8, Y10
	VPADDQ   Y10, Y2, Y2
	VPMINUB  Y4, Y7, Y11
	VPCMPEQB Y4, Y11, Y11
	VPSUBB   Y11, Y5, Y5
	VPMINUB  Y4, Y8, Y12
	VPCMPEQB Y4, Y12, Y12
	VPSUBB   Y12, Y6, Y6
	ADDQ     $64, SI
	DECQ     DX
	JNZ      inner
	VPSADBW  Y0, Y5, Y5
	VPADDQ   Y5, Y3, Y3
	VPSADBW  Y0, Y6, Y6
	VPADDQ   Y6, Y3, Y3
	JMP      outer

done:
	VPADDQ       Y2, Y1, Y1
	VEXTRACTI128 $1, Y1, X9
	VPADDQ       X9, X1, X1
	VPSHUFD      $0x4e, X1, X9
	VPADDQ       X9, X1, X1
	MOVQ         X1, AX
	VEXTRACTI128 $1, Y3, X9
	VPADDQ       X9, X3, X3
	VPSHUFD      $0x4e, X3, X9
	VPADDQ       X9, X3, X3
	MOVQ         X3, BX
	VZEROUPPER
	MOVQ         AX, sum+24(FP)
	MOVQ         BX, moving+32(FP)
	RET
