package chainstate

import (
	"strings"
	"syscall"
)

var errLockBusy = syscall.EAGAIN

func containsLockText(s string) bool {
	return strings.Contains(s, "resource temporarily unavailable") || strings.Contains(s, "lock")
}
