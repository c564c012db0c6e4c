package hdfs

import (
	"context"
	"errors"
	"os"
	"path"
	"regexp"
	"sort"
	"time"
)

// StagingEntry is one application's staging directory.
type StagingEntry struct {
	AppID   string
	Path    string
	ModTime time.Time
}

var stagingAppRE = regexp.MustCompile(`^application_\d+_\d+$`)

// ListStaging lists the user's staging directories
// (/user/<u>/.tfyarn/application_*), by application id. Whether their
// applications have ended is the RM's to say: see client.CleanStaging.
func (fs *FS) ListStaging(ctx context.Context) ([]StagingEntry, error) {
	root := BaseDir(fs.user)
	infos, err := fs.readDir(ctx, root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, pathErr("list staging", root, err)
	}
	var out []StagingEntry
	for _, fi := range infos {
		if !fi.IsDir() || !stagingAppRE.MatchString(fi.Name()) {
			continue
		}
		out = append(out, StagingEntry{AppID: fi.Name(), Path: path.Join(root, fi.Name()), ModTime: fi.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AppID < out[j].AppID })
	return out, nil
}
