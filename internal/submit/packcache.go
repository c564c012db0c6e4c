package submit

import (
	"context"
	"time"

	"github.com/tfyarn/tfyarn/internal/envpack"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/shipplan"
)

// recalled is what the local pack cache knows of a directory or file about
// to be shipped: its fingerprint, taken before packing, and the archive
// remembered for it (hit).
type recalled struct {
	cache   *envpack.PackCache // nil: no cache on this machine
	local   string
	target  envpack.Target
	print   envpack.Print
	takenAt time.Time
	entry   envpack.Packed
	hit     bool
}

func packTarget(k shipplan.Kind) envpack.Target {
	switch k {
	case shipplan.EnvDir:
		return envpack.TargetEnv
	case shipplan.EnvLayers:
		return envpack.TargetEnvLayers
	case shipplan.SrcDir:
		return envpack.TargetDir
	}
	return envpack.TargetFile
}

// recall fingerprints local (metadata only) and looks it up. Any failure
// (no home directory, an unreadable entry) only means packing as before.
func (s *Submission) recall(ctx context.Context, local string, t envpack.Target) recalled {
	rc := recalled{local: local, target: t, takenAt: time.Now()}
	cache, err := envpack.DefaultPackCache()
	if err != nil {
		return rc
	}
	if t == envpack.TargetFile {
		rc.print, err = envpack.FilePrint(local)
	} else {
		rc.print, err = envpack.Fingerprint(ctx, local, t, envpack.Options{})
	}
	if err != nil {
		return rc
	}
	rc.cache = cache
	rc.entry, rc.hit = cache.Lookup(local, t, rc.print)
	return rc
}

// remember stores what was packed (or hashed) from the fingerprinted
// state, unless something changed so recently that a further change could
// share its timestamps (envpack.Print.Settled). Best effort: a cache that
// cannot be written costs the next submission a pack, nothing else.
func (rc recalled) remember(e envpack.Packed) {
	if rc.cache == nil || !rc.print.Settled(rc.takenAt) {
		return
	}
	if rc.hit && rc.entry.SHA256 == e.SHA256 && rc.entry.ArchiveBytes == e.ArchiveBytes {
		return
	}
	e.Print = rc.print.Sum
	_ = rc.cache.Store(rc.local, rc.target, e)
}

// uploadKnown uploads a file as is, taking its digest from the pack cache
// when the file is unchanged since an earlier upload, so an unchanged file
// the HDFS cache holds is not read at all.
func (s *Submission) uploadKnown(ctx context.Context, local, name string, access hdfs.Access) (hdfs.Resource, int64, error) {
	known := s.recall(ctx, local, envpack.TargetFile)
	digest := ""
	if known.hit {
		r, ok, err := s.store().Lookup(ctx, known.entry.SHA256, name, known.entry.ArchiveBytes, access)
		if err != nil {
			return hdfs.Resource{}, 0, err
		}
		if ok {
			return r, 0, nil
		}
		digest = known.entry.SHA256
	}
	r, n, err := s.upload(ctx, local, name, digest, access)
	if err == nil {
		if digest, ok := s.cachedDigest(r.Path); ok {
			known.remember(envpack.Packed{SHA256: digest, ArchiveBytes: r.Size})
		}
	}
	return r, n, err
}
