//go:build !linux && !darwin

package envpack

import (
	"io/fs"
	"time"
)

// changeTime: no ctime here, so no print is ever matched (see entry).
func changeTime(fs.FileInfo) (time.Time, uint64, bool) { return time.Time{}, 0, false }
