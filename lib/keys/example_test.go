package keys_test

import (
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/keys"
)

func ExampleAddressOfMnemonic() {
	const m = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
	addr, err := keys.AddressOfMnemonic(m, "", keys.HRPTestnet, keys.CoinTypeTestnet)
	if err != nil {
		panic(err)
	}
	fmt.Println(addr)
	fmt.Println(keys.AccountPath(keys.CoinTypeTestnet, 0, 0))
	// Output:
	// tcoin1q96nxnn43whppxdyguxp3tj8nztpu7l6lvphxrvp7r840zvt4lwuq0f0fzx
	// m/44'/1'/0'/0'/0'
}

func ExampleDecodeAddress() {
	_, err := keys.DecodeAddress("tcoin1q96nxnn43whppxdyguxp3tj8nztpu7l6lvphxrvp7r840zvt4lwuq0f0fzx", keys.HRPMainnet)
	fmt.Println(errors.Is(err, keys.ErrWrongNetwork), errors.Is(err, keys.ErrBadAddress))
	fmt.Println(err)
	// Output:
	// true true
	// decode address: invalid address: wrong network: HRP "tcoin", want "coin"
}
