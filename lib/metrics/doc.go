// Package metrics is the daemons' Prometheus exposition (github.com/prometheus/client_golang):
// the node's metrics (Node) and the HTTP server that serves a registry at /metrics (Listen),
// on the address of --metrics-bind (a bare port binds 127.0.0.1; other addresses are served
// with a warning). coin-faucetd's own metrics are lib/faucet's (metrics.go), served by the
// same Listen.
//
// # Overview
//
// The node's gauges are read from a NodeSource at each scrape, so they cannot drift from the
// node: coin_node_height, coin_node_peers, coin_node_mempool_transactions,
// coin_node_mempool_bytes, coin_node_syncing (0 or 1) and coin_node_sync_target_height. The
// node feeds the rest through two hooks: ObserveRPC (coin_node_rpc_duration_seconds, a
// histogram by method) and Reject (coin_node_rejects_total by type, block or transaction,
// and by the lib/reason reason of the refusal, "other" for an error without one). The Go
// runtime's and the process's standard collectors are registered too. The hooks are no-ops
// on a nil *Node, so a node without --metrics-bind pays nothing.
//
// # Errors
//
// Listen fails when the address cannot be bound; Serve returns the listener's error, nil
// after Shutdown or Close.
package metrics
