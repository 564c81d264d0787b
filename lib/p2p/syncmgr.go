package p2p

import (
	"sync/atomic"
)

// syncCounters counts the sync's requests, for tests and the bound they check.
type syncCounters struct {
	headersRequests atomic.Int64 // getheaders sent
}
