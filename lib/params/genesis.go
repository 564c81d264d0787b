package params

// Genesis nonces and hashes, found once by TestMineGenesis
// (go test ./lib/params -run TestMineGenesis -v -args -mine) and fixed here; TestGenesis
// rebuilds the blocks and compares.
const (
	mainnetGenesisNonce = 31698
	mainnetGenesisHash  = "00000294de6e2076beaeb2a82c5603964a3116f4610a3fac6cdbb9a715af25f4"
	testnetGenesisNonce = 1391663
	testnetGenesisHash  = "00000e37ba40a4af8130d7a18ace85671fdbf0c1ffb0f814000211360f9f5de2"
	regtestGenesisNonce = 0
	regtestGenesisHash  = "4940fcad1192befc425faacbdf27278cb5bef529c8b695261cec44dcb2cf00cc"
)
