package envpack

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime is fi's ctime and inode number.
func changeTime(fi fs.FileInfo) (time.Time, uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, 0, false
	}
	return time.Unix(st.Ctimespec.Unix()), st.Ino, true
}
