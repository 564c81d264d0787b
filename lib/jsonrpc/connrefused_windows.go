//go:build windows

package jsonrpc

import "syscall"

// wsaeconnrefused is WSAECONNREFUSED, which Windows returns for a refused
// connection; syscall.ECONNREFUSED is a different, invented value there.
const wsaeconnrefused = syscall.Errno(10061)

func isConnRefusedErrno(errno syscall.Errno) bool {
	return errno == wsaeconnrefused || errno == syscall.ECONNREFUSED
}
