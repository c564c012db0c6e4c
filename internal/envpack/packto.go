package envpack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// PackFile packs the environment in dir (Pack) into the archive out,
// written aside and renamed into place, so that a failed or interrupted
// pack never leaves a partial archive under that name (`tfyarn pack`).
func PackFile(ctx context.Context, dir, out string, opts Options) (Manifest, error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return Manifest{}, err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	m, err := Pack(ctx, dir, tmp, opts)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	return m, err
}

// PackLayersDir packs the venv in dir in layers (PackLayers) into the new
// directory out, each layer under its name in the HDFS cache
// (Layer.ArchiveName, which its Path then names), written aside and
// renamed into place (`tfyarn pack --layers`).
func PackLayersDir(ctx context.Context, dir, out string, opts Options) (Layered, error) {
	if !IsVenv(dir) {
		return Layered{}, fmt.Errorf("%s is not a venv (pyvenv.cfg): only a venv ships in layers", dir)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return Layered{}, err
	}
	defer os.RemoveAll(tmp) // nothing left after the rename
	l, err := PackLayers(ctx, dir, tmp, LayerOptions{Options: opts})
	for i := range l.Layers {
		if err != nil {
			break
		}
		named := filepath.Join(tmp, l.Layers[i].ArchiveName())
		if err = os.Rename(l.Layers[i].Path, named); err == nil {
			err = os.Chmod(named, 0o644)
		}
		l.Layers[i].Path = filepath.Join(out, l.Layers[i].ArchiveName())
	}
	if err == nil {
		err = os.Chmod(tmp, 0o755)
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	return l, err
}
