//go:build unix

package cliutil

import (
	"os"
	"syscall"
)

// fileOwner is the owner and group of a file.
func fileOwner(st os.FileInfo) (uid, gid int, known bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(s.Uid), int(s.Gid), true
}

// processIDs is our effective user and every group we are in (the effective group and the
// supplementary ones).
func processIDs() (int, []int) {
	groups, _ := os.Getgroups()
	return os.Geteuid(), append(groups, os.Getegid())
}
