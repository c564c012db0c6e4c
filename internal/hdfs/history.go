package hdfs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
)

// Job history: the AM leaves each application's record (its task table,
// as JSON) at /user/<u>/.tfyarn/history/<app>.json, outside the staging
// directory it removes, for `tfyarn status` of an ended application. A
// record holds the command line and the tasks' stderr tails: the directory
// is 0700 and each record 0600, the user's alone (a directory made wider
// by an earlier version is closed at the next write).

// MaxHistoryBytes bounds a history record read back: a thousand tasks
// take well under a megabyte.
const MaxHistoryBytes = 16 << 20

// HistoryDir is where the user's history records live.
func HistoryDir(user string) string { return path.Join(BaseDir(user), "history") }

// HistoryPath is the record of appID.
func HistoryPath(user, appID string) string {
	return path.Join(HistoryDir(user), appID+".json")
}

// WriteHistory stores the record of appID, replacing an earlier one (an AM
// attempt that ran before).
func (fs *FS) WriteHistory(ctx context.Context, appID string, data []byte) error {
	p := HistoryPath(fs.user, appID)
	if err := checkAppID(appID); err != nil {
		return pathErr("write history", p, err)
	}
	if err := fs.ensureDir(ctx, BaseDir(fs.user), cacheDirPerm); err != nil {
		return pathErr("write history", p, err)
	}
	if err := fs.ensureDir(ctx, HistoryDir(fs.user), historyDirPerm); err != nil {
		return pathErr("write history", p, err)
	}
	if err := fs.removeAll(ctx, p); err != nil {
		return pathErr("write history", p, err)
	}
	if _, err := fs.writeFile(ctx, p, privateFilePerm, bytes.NewReader(data)); err != nil {
		return pathErr("write history", p, err)
	}
	return nil
}

// ReadHistory returns the record of user's application appID;
// os.ErrNotExist (wrapped) when there is none.
func (fs *FS) ReadHistory(ctx context.Context, user, appID string) ([]byte, error) {
	p := HistoryPath(user, appID)
	if err := checkAppID(appID); err != nil {
		return nil, pathErr("read history", p, err)
	}
	data, err := fs.readSmall(ctx, p, MaxHistoryBytes)
	if err != nil {
		return nil, pathErr("read history", p, err)
	}
	return data, nil
}

// readSmall reads the whole file at p, refusing one larger than limit
// bytes without reading past it; retried like every NameNode call.
func (fs *FS) readSmall(ctx context.Context, p string, limit int) ([]byte, error) {
	var data []byte
	err := fs.do(ctx, func() error {
		f, err := fs.client.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		data, err = io.ReadAll(io.LimitReader(f, int64(limit)+1))
		if err == nil && len(data) > limit {
			err = fmt.Errorf("larger than %d bytes", limit)
		}
		return err
	})
	return data, err
}
