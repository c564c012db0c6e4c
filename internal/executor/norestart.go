package executor

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"unicode"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
)

// noRestartFilePath is the absolute path of the task's no-restart file
// (contract.EnvNoRestartFile) in its working directory, a stale one (an
// earlier attempt's, under run --local) removed.
func noRestartFilePath(cfg *Config) (string, error) {
	return freshTaskFile(cfg.Dir, contract.NoRestartFileName(string(cfg.Task.Type), cfg.Task.Index), "no-restart file")
}

// noRestartReason is why the program, which failed on its own (not
// stopped, not killed from outside), said a restart cannot help: the
// first non-empty line of its no-restart file, control characters as
// spaces, cut to one stderr line's length. "" when it left none.
func noRestartReason(path string, log *logger) string {
	if path == "" {
		return ""
	}
	data, err := readSmallFile(path, contract.MaxNoRestartRead)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		log.printf("the no-restart file is ignored: %v", err)
		return ""
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		reason := strings.TrimSpace(strings.Map(func(r rune) rune {
			if !unicode.IsPrint(r) {
				return ' '
			}
			return r
		}, strings.ToValidUTF8(string(line), "?")))
		if reason != "" {
			return rendezvous.ClipStderr([]string{reason})[0]
		}
	}
	return ""
}
