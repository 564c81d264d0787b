//go:build !unix

package cliutil

import "os"

// fileOwner is not known off unix: only the owner-only modes pass.
func fileOwner(os.FileInfo) (uid, gid int, known bool) { return 0, 0, false }

func processIDs() (int, []int) { return -1, nil }
