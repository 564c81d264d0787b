package rpcserver

// SetUtxoListMax lowers the most outputs an unpaged getutxosbyaddress answers, so a test
// reaches the refusal without building 100,000 outputs; it returns the restore.
func SetUtxoListMax(n int) (restore func()) {
	old := utxoListMax
	utxoListMax = n
	return func() { utxoListMax = old }
}
