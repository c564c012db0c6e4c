package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Task results: what a task's program wrote to its result file (contract.EnvResultFile), which
// the AM keeps at /user/<u>/.tfyarn/results/<app>/<type>-<index> for `tfyarn result`. A result is
// anything the program chose to return: the directories are 0700 and each result 0600, the
// user's alone. An application's results stay until `tfyarn result --delete` or `tfyarn cache
// clean` removes them (ResultsKeepDays after the last was saved).

// ResultsKeepDays is how long `tfyarn cache clean` keeps an ended application's results.
const ResultsKeepDays = 7

// ResultsDir is where the user's results live, one directory per application.
func ResultsDir(user string) string { return path.Join(BaseDir(user), "results") }

// AppResultsDir is the directory of appID's results.
func AppResultsDir(user, appID string) string { return path.Join(ResultsDir(user), appID) }

// resultName is a task's file name: HDFS names cannot hold worker:0's ':'.
func resultName(taskType string, index int) string { return taskType + "-" + strconv.Itoa(index) }

var resultNameRE = regexp.MustCompile(`^([a-z][a-z0-9_]*)-(0|[1-9][0-9]{0,5})$`)

// ResultEntry is one task's saved result.
type ResultEntry struct {
	Task  string // worker:0
	Bytes int64
}

// WriteResult stores the result of appID's task from r, replacing an
// earlier one (a restarted task's). r is read from its start again when the write is retried.
func (fs *FS) WriteResult(ctx context.Context, appID, taskType string, index int, r io.ReadSeeker) error {
	dir := AppResultsDir(fs.user, appID)
	p := path.Join(dir, resultName(taskType, index))
	if err := checkAppID(appID); err != nil {
		return pathErr("write result", p, err)
	}
	if !resultNameRE.MatchString(resultName(taskType, index)) {
		return pathErr("write result", p, fmt.Errorf("invalid task %s:%d", taskType, index))
	}
	if err := fs.ensureDir(ctx, BaseDir(fs.user), cacheDirPerm); err != nil {
		return pathErr("write result", p, err)
	}
	for _, d := range []string{ResultsDir(fs.user), dir} {
		if err := fs.ensureDir(ctx, d, historyDirPerm); err != nil {
			return pathErr("write result", p, err)
		}
	}
	if err := fs.removeAll(ctx, p); err != nil {
		return pathErr("write result", p, err)
	}
	err := fs.do(ctx, func() error {
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := fs.writeFileSync(ctx, p, privateFilePerm, r)
		return err
	})
	return pathErr("write result", p, err)
}

// ListResults lists the results of user's application appID by task; none is an empty list.
func (fs *FS) ListResults(ctx context.Context, user, appID string) ([]ResultEntry, error) {
	dir := AppResultsDir(user, appID)
	if err := checkAppID(appID); err != nil {
		return nil, pathErr("list results", dir, err)
	}
	infos, err := fs.readDir(ctx, dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, pathErr("list results", dir, err)
	}
	var out []ResultEntry
	for _, fi := range infos {
		m := resultNameRE.FindStringSubmatch(fi.Name())
		if m == nil || !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, ResultEntry{Task: m[1] + ":" + m[2], Bytes: fi.Size()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Task < out[j].Task })
	return out, nil
}

// ReadResult copies the result of user's application appID's task (worker:0) to w;
// os.ErrNotExist (wrapped) when the task saved none.
func (fs *FS) ReadResult(ctx context.Context, user, appID, task string, w io.Writer) (int64, error) {
	typ, idx, ok := strings.Cut(task, ":")
	name := typ + "-" + idx
	p := path.Join(AppResultsDir(user, appID), name)
	if err := checkAppID(appID); err != nil || !ok || !resultNameRE.MatchString(name) {
		return 0, pathErr("read result", p, fmt.Errorf("invalid application id %q or task %q", appID, task))
	}
	f, err := fs.client.Open(p)
	if err != nil {
		return 0, pathErr("read result", p, err)
	}
	defer f.Close()
	n, err := io.Copy(w, f)
	return n, pathErr("read result", p, err)
}

// RemoveResults removes the results of the user's application appID (none: nothing to do).
func (fs *FS) RemoveResults(ctx context.Context, appID string) error {
	dir := AppResultsDir(fs.user, appID)
	if err := checkAppID(appID); err != nil {
		return pathErr("remove results", dir, err)
	}
	return pathErr("remove results", dir, fs.removeAll(ctx, dir))
}

// OldResults lists the user's application result directories not modified since before (a
// directory's time is its last result's), by application id; with remove it also removes them.
func (fs *FS) OldResults(ctx context.Context, before time.Time, remove bool) ([]string, error) {
	root := ResultsDir(fs.user)
	infos, err := fs.readDir(ctx, root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, pathErr("list results", root, err)
	}
	var out []string
	for _, fi := range infos {
		if !fi.IsDir() || checkAppID(fi.Name()) != nil || !fi.ModTime().Before(before) {
			continue
		}
		if remove {
			if err := fs.RemoveResults(ctx, fi.Name()); err != nil {
				return out, err
			}
		}
		out = append(out, fi.Name())
	}
	sort.Strings(out)
	return out, nil
}
