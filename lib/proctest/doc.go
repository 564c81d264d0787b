// Package proctest runs the toolkit's executables from end-to-end tests: it builds them,
// starts them with their output captured, stops them, and starts regtest coin-node
// processes that a test can stop and start again on the same data directory. It is an
// ordinary package so that the tests of several executables can share it; only tests
// import it.
//
// # Overview
//
// [Build] compiles packages of the module (paths relative to the module root, such as
// "./cmd/coin-node") into a temporary directory, once per test process for each set of
// packages; [Cleanup], called from TestMain after m.Run, removes those directories:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		proctest.Cleanup()
//		os.Exit(code)
//	}
//
// [Start] runs an executable as a [Proc] whose stdout and stderr go to Out (its stdout
// alone also to Stdout), both [Buffer]s that the test may read while the process writes.
// The process is killed when the test ends; [Proc.Stop] (SIGTERM), [Proc.Wait] and
// [Proc.Kill] end it earlier and give its exit code.
//
// [StartNode] runs coin-node on regtest with a fresh data directory, an RPC port and a P2P
// port on loopback ([FreePort]), and returns once the node answers getblockcount. A [Node]
// keeps its directory, ports and extra arguments, so [Node.Start] runs it again on the same
// state after a stop or a kill; [NewNode] prepares one without starting it, and
// [Node.Args] gives its command line for a test that starts it some other way.
//
// # Errors
//
// Nothing here returns an error. A failure (a package that does not build, an executable
// that cannot start, a node that does not answer within 20 s, a process that does not exit
// in time) ends the test through t.Fatal, with the process's output in the message. So,
// like t.Fatal, these functions must be called from the goroutine running the test. Kill
// and Cleanup never fail.
package proctest
