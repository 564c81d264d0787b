//go:build !windows

package jsonrpc

import "syscall"

func isConnRefusedErrno(errno syscall.Errno) bool {
	return errno == syscall.ECONNREFUSED
}
