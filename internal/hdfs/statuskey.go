package hdfs

import (
	"bytes"
	"context"
	"path"
)

// The job's status key (see contract.StatusKeyName) lives in the staging
// directory, readable by its owner only: the owner's later `tfyarn status`
// reads it back, another user cannot.

// maxStatusKeyBytes bounds a status key read back.
const maxStatusKeyBytes = 1 << 10

// WriteStatusKey stores key as name in appID's staging directory, mode
// 0600 (the directory is 0700).
func (fs *FS) WriteStatusKey(ctx context.Context, appID, name string, key []byte) error {
	p := path.Join(StagingDir(fs.user, appID), name)
	if err := checkAppID(appID); err != nil {
		return pathErr("write status key", p, err)
	}
	if _, err := fs.writeFile(ctx, p, privateFilePerm, bytes.NewReader(key)); err != nil {
		return pathErr("write status key", p, err)
	}
	return nil
}

// ReadStatusKey reads the key name from user's staging directory of appID;
// a user other than its owner gets a permission error.
func (fs *FS) ReadStatusKey(ctx context.Context, user, appID, name string) ([]byte, error) {
	p := path.Join(StagingDir(user, appID), name)
	if err := checkAppID(appID); err != nil {
		return nil, pathErr("read status key", p, err)
	}
	data, err := fs.readSmall(ctx, p, maxStatusKeyBytes)
	if err != nil {
		return nil, pathErr("read status key", p, err)
	}
	return data, nil
}
