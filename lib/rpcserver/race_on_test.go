//go:build race

package rpcserver_test

// raceEnabled: the race detector is on (TestChainReadsRaceConnectsAndReorgs runs more rounds).
const raceEnabled = true
