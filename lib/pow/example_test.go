package pow_test

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/cointoolkit/coin/lib/pow"
)

func ExampleCheckProofOfWork() {
	limit, _ := new(big.Int).SetString("00000000ffffffffffffffffffffffffffffffffffffffffffffffffffffffff", 16)
	target, _ := pow.TargetFromCompact(0x1d00ffff, limit)

	good := pow.TargetBytes(target) // hash == target passes
	fmt.Println(pow.CheckProofOfWork(good, 0x1d00ffff, limit))

	bad := pow.TargetBytes(new(big.Int).Add(target, big.NewInt(1)))
	err := pow.CheckProofOfWork(bad, 0x1d00ffff, limit)
	fmt.Println(errors.Is(err, pow.ErrHighHash))
	// Output:
	// <nil>
	// true
}

func ExampleNextCompact() {
	limit, _ := new(big.Int).SetString("00000000ffffffffffffffffffffffffffffffffffffffffffffffffffffffff", 16)
	// Blocks came twice as fast as intended: the target halves.
	h := uint64(120)
	fmt.Printf("0x%08x\n", pow.NextCompact(h, 0x1c0ffff0, 1800, 0, limit, true))
	// Not a retarget height: the parent's target.
	fmt.Printf("0x%08x\n", pow.NextCompact(h+1, 0x1c0ffff0, 1800, 0, limit, true))
	// Output:
	// 0x1c07fff8
	// 0x1c0ffff0
}

func ExampleWork() {
	fmt.Printf("%#x\n", pow.Work(0x1d00ffff))
	// Output: 0x100010001
}
