//go:build unix

package testdevice

import (
	"os"
	"syscall"
)

// ownedByUs reports whether the file is the process's user's.
func ownedByUs(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
