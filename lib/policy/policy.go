package policy

// Relay and standardness policy (protocol §5).
const (
	// MinRelayFeePerByte is the mempool's minimum relay fee in subunits per serialized byte.
	MinRelayFeePerByte = 1
	// DustLimit is the smallest standard output in subunits; smaller outputs are not relayed.
	DustLimit = 1_000
)
