package hdfs

import (
	"context"
	"os"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
)

// ReadDir lists a directory.
func (fs *FS) ReadDir(ctx context.Context, p string) ([]os.FileInfo, error) {
	return fs.readDir(ctx, p)
}

// File is an HDFS file open for reading at any offset (io.ReaderAt), e.g.
// an aggregated container log whose index is at its end.
type File struct {
	fs  *FS
	ctx context.Context
	f   *gohdfs.FileReader
}

// Open opens p for reading; ctx bounds every read made through the File.
func (fs *FS) Open(ctx context.Context, p string) (*File, error) {
	var f *gohdfs.FileReader
	err := fs.do(ctx, func() error {
		var err error
		f, err = fs.client.Open(p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &File{fs: fs, ctx: ctx, f: f}, nil
}

// Size is the file's length.
func (f *File) Size() int64 { return f.f.Stat().Size() }

// ModTime is the file's modification time.
func (f *File) ModTime() time.Time { return f.f.Stat().ModTime() }

// ReadAt reads len(b) bytes at off (io.ReaderAt).
func (f *File) ReadAt(b []byte, off int64) (int, error) {
	var n int
	err := f.fs.do(f.ctx, func() error {
		var err error
		n, err = f.f.ReadAt(b, off)
		return err
	})
	return n, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }
