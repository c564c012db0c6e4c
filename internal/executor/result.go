package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
)

// resultFilePath is the absolute path of the task's result file in its working directory, a
// stale one (an earlier attempt's, under run --local) removed.
func resultFilePath(cfg *Config) (string, error) {
	dir := cfg.Dir
	if cfg.ResultDir != "" {
		dir = cfg.ResultDir
	}
	return freshTaskFile(dir, contract.ResultFileName(string(cfg.Task.Type), cfg.Task.Index), "result file")
}

// freshTaskFile is the absolute path of the file name in dir ("" for the working directory),
// one left there by an earlier run (`run --local` reuses the directory) removed: the file's
// appearing then means this run wrote it. what names the file in errors.
func freshTaskFile(dir, name, what string) (string, error) {
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	path := filepath.Join(dir, name)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s: removing a stale one: %w", what, err)
	}
	return path, nil
}

// readResultFile reads the result file: its bytes, or, for one over contract.MaxResultBytes,
// only its size. Missing is os.ErrNotExist; a FIFO or device there must not block the launcher
// (opened non-blocking, refused).
func readResultFile(path string) (data []byte, size int64, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > contract.MaxResultBytes {
		return nil, st.Size(), nil
	}
	data, err = io.ReadAll(io.LimitReader(f, contract.MaxResultBytes+1))
	if err == nil && len(data) > contract.MaxResultBytes { // grew since the Stat
		return nil, int64(len(data)), nil
	}
	return data, int64(len(data)), err
}

// resultTimePerMiB is the time a result's sending gets per MiB, beyond ReportTimeout: 64 MiB is
// some 1600 messages.
const resultTimePerMiB = time.Second

// sendResult sends the program's result file to the AM, if the program wrote one, within
// ReportTimeout; one over contract.MaxResultBytes is not sent: the task's log and the AM (and so
// run's output) say so. Best effort: a result the AM does not get is missing for `tfyarn result`.
func sendResult(cfg *Config, client *rendezvous.Client, path string, log *logger) {
	if cfg.KeepResult || path == "" {
		return
	}
	data, size, err := readResultFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		log.printf("the result file is not saved: %v", err)
		return
	}
	var tooLarge int64
	if size > contract.MaxResultBytes {
		log.printf("the result file is not saved: %d bytes, over the limit of %d (64 MiB)", size, contract.MaxResultBytes)
		tooLarge = size
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ReportTimeout+resultTimePerMiB*time.Duration(len(data)>>20))
	defer cancel()
	if err := client.SendResult(ctx, cfg.Task, cfg.ContainerID, data, tooLarge); err != nil {
		log.printf("could not send the result to the AM: %v", err)
	}
}
