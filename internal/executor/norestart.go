package executor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"time"
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
	reason, err := readNoRestart(path)
	if err != nil {
		log.printf("the no-restart file is ignored: %v", err)
	}
	return reason
}

// noRestartPoll is how often the launcher reads the no-restart file of a
// program that starts its processes again (RestartsProcesses).
const noRestartPoll = 500 * time.Millisecond

// watchNoRestart reports, once, the first reason a process of the program
// leaves in the no-restart file at path while ctx lasts.
func watchNoRestart(ctx context.Context, path string, every time.Duration) <-chan string {
	asked := make(chan string, 1)
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if reason, _ := readNoRestart(path); reason != "" { // a bad file is said at the end
				asked <- reason
				return
			}
		}
	}()
	return asked
}

// readNoRestart is noRestartReason's reading: "" and no error when there
// is no file.
func readNoRestart(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	data, err := readSmallFile(path, contract.MaxNoRestartRead)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		reason := strings.TrimSpace(strings.Map(func(r rune) rune {
			if !unicode.IsPrint(r) {
				return ' '
			}
			return r
		}, strings.ToValidUTF8(string(line), "?")))
		if reason != "" {
			return rendezvous.ClipStderr([]string{reason})[0], nil
		}
	}
	return "", nil
}
