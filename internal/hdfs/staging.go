package hdfs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// CreateStaging creates (or keeps) the application's staging directory
// /user/<user>/.tfyarn/<appID>, readable by the user only, and returns its path.
func (fs *FS) CreateStaging(ctx context.Context, appID string) (string, error) {
	dir := StagingDir(fs.user, appID)
	if err := checkAppID(appID); err != nil {
		return "", pathErr("create staging", dir, err)
	}
	if err := fs.ensureDir(ctx, BaseDir(fs.user), cacheDirPerm); err != nil {
		return "", pathErr("create staging", dir, err)
	}
	if err := fs.mkdirAll(ctx, dir, stagingDirPerm); err != nil {
		return "", pathErr("create staging", dir, err)
	}
	// The directory may predate us with other permissions (or a umask may
	// have widened them): what lands here can include credentials.
	if err := fs.do(ctx, func() error { return fs.client.Chmod(dir, stagingDirPerm) }); err != nil {
		return "", pathErr("create staging", dir, err)
	}
	return dir, nil
}

// Upload copies the local file to hdfsPath (absolute, not existing yet,
// normally inside a staging directory) and describes it as an APPLICATION
// resource. On failure nothing is left at hdfsPath.
func (fs *FS) Upload(ctx context.Context, localPath, hdfsPath string) (Resource, error) {
	f, err := os.Open(localPath)
	if err != nil {
		return Resource{}, pathErr("upload", hdfsPath, err)
	}
	defer f.Close()
	return fs.upload(ctx, f, hdfsPath)
}

// UploadBytes is Upload for generated content (e.g. the job description).
func (fs *FS) UploadBytes(ctx context.Context, data []byte, hdfsPath string) (Resource, error) {
	return fs.upload(ctx, bytes.NewReader(data), hdfsPath)
}

// UploadPrivateBytes is UploadBytes for a secret (the sealed keytab):
// the file is readable by its owner only (0600).
func (fs *FS) UploadPrivateBytes(ctx context.Context, data []byte, hdfsPath string) (Resource, error) {
	return fs.uploadPerm(ctx, bytes.NewReader(data), hdfsPath, privateFilePerm)
}

func (fs *FS) upload(ctx context.Context, r io.Reader, p string) (Resource, error) {
	return fs.uploadPerm(ctx, r, p, stagingFilePerm)
}

func (fs *FS) uploadPerm(ctx context.Context, r io.Reader, p string, perm os.FileMode) (Resource, error) {
	if !path.IsAbs(p) || path.Clean(p) != p {
		return Resource{}, pathErr("upload", p, errors.New("not a clean absolute path"))
	}
	if _, err := fs.writeFile(ctx, p, perm, r); err != nil {
		return Resource{}, pathErr("upload", p, err)
	}
	return fs.Stat(ctx, p, hadoopyarn.LocalResourceVisibilityProto_APPLICATION)
}

// Stat describes an existing HDFS file as a resource of the given visibility.
func (fs *FS) Stat(ctx context.Context, p string, vis hadoopyarn.LocalResourceVisibilityProto) (Resource, error) {
	fi, err := fs.stat(ctx, p)
	if err != nil {
		return Resource{}, pathErr("stat", p, err)
	}
	if fi.IsDir() {
		return Resource{}, pathErr("stat", p, errors.New("is a directory"))
	}
	return fs.resource(p, fi, vis), nil
}

// RemoveStaging deletes the application's staging directory; one already gone
// is fine (cleanup may run twice: after the application, and on a retry).
func (fs *FS) RemoveStaging(ctx context.Context, appID string) error {
	dir := StagingDir(fs.user, appID)
	if err := checkAppID(appID); err != nil {
		return pathErr("remove staging", dir, err)
	}
	return pathErr("remove staging", dir, fs.removeAll(ctx, dir))
}

// RemoveAll deletes p recursively, for cleanup after a failed submission; a
// missing p is fine.
func (fs *FS) RemoveAll(ctx context.Context, p string) error {
	if !path.IsAbs(p) || path.Clean(p) == "/" {
		return pathErr("remove", p, errors.New("refusing to remove a relative path or /"))
	}
	return pathErr("remove", p, fs.removeAll(ctx, p))
}

// Exists reports whether p exists.
func (fs *FS) Exists(ctx context.Context, p string) (bool, error) {
	_, err := fs.stat(ctx, p)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return false, pathErr("stat", p, err)
}
