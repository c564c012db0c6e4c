package submit

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tfyarn/tfyarn/internal/envpack"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/shipplan"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// PackInfo describes an environment or source directory packed for a job
// (client.PackInfo, which documents its fields).
type PackInfo struct {
	Dir  string
	Link string // name in the containers: env or src
	// Kind is the environment's, venv or conda, and PythonVersion its
	// Python's (when known); both are empty for a source directory.
	Kind, PythonVersion string
	Bytes               int64 // the archive's size
	SHA256              string
	Took                time.Duration
	// Cached: the directory had not changed since it was packed for an
	// earlier job (same fingerprint) and the HDFS cache still holds that
	// archive, so nothing was packed, read or uploaded; Took is the check.
	Cached bool
	// Layers is how many layers a venv was shipped in (envpack.PackLayers;
	// 0: one archive), LayersPacked how many of them were packed this time
	// (the others were unchanged since an earlier job). SHA256 is then
	// envpack.LayersDigest's and Bytes the layers' total.
	Layers, LayersPacked int
}

// withManifest is p describing the environment m (nil: a source directory).
func (p PackInfo) withManifest(m *envpack.Manifest) PackInfo {
	if m != nil {
		p.Kind, p.PythonVersion = string(m.Kind), m.PythonVersion
	}
	return p
}

// packed notes what was packed (or found packed): the environment's base
// interpreter goes into the job file, for the ApplicationMaster's words
// when a node's user cannot reach it; the callback hears of it.
func (s *Submission) packed(info PackInfo, m *envpack.Manifest) {
	if m != nil && m.BaseInterpreter != "" {
		s.envBase = m.BaseInterpreter
	}
	if s.cb.OnPacked != nil {
		s.cb.OnPacked(info)
	}
}

// upload puts one local file into the cache, with the job's progress hook.
func (s *Submission) upload(ctx context.Context, local, name, digest string, access hdfs.Access) (hdfs.Resource, int64, error) {
	opts := hdfs.UploadOptions{SHA256: digest, Access: access}
	if s.cb.OnUpload != nil {
		var size int64
		if st, err := os.Stat(local); err == nil {
			size = st.Size()
		}
		progress, done := s.cb.OnUpload(name, size)
		if done != nil {
			defer done()
		}
		opts.Progress = progress
	}
	return s.store().UploadOptions(ctx, local, name, opts)
}

// ship packs what must be packed and puts every item of the plan into the
// content-addressed cache, returning the resources by link name and the
// bytes uploaded (0 when the cache had everything). A directory or file
// unchanged since an earlier submission (same fingerprint in the local pack
// cache) whose archive the HDFS cache still holds is neither packed nor read.
func (s *Submission) ship(ctx context.Context, plan shipplan.Plan) (map[string]hdfs.Resource, int64, error) {
	out := map[string]hdfs.Resource{}
	var uploaded int64
	for _, it := range plan.Items {
		if it.Kind == shipplan.EnvLayers {
			rs, n, err := s.shipLayers(ctx, it)
			uploaded += n
			if err != nil {
				return nil, uploaded, err
			}
			s.envLayers = nil
			for i, r := range rs {
				r.Type = hadoopyarn.LocalResourceTypeProto_ARCHIVE
				out[shipplan.LayerLinkName(i)] = r
				s.envLayers = append(s.envLayers, shipplan.LayerLinkName(i))
			}
			continue
		}
		r, n, err := s.shipItem(ctx, &it)
		uploaded += n
		if err != nil {
			return nil, uploaded, err
		}
		if it.OwnCopy {
			r.Visibility = hadoopyarn.LocalResourceVisibilityProto_PRIVATE
		}
		if it.Kind == shipplan.File {
			// A .zip shipped with --files stays a .zip.
			r.Type = hadoopyarn.LocalResourceTypeProto_FILE
		} else {
			r.Type = hadoopyarn.LocalResourceTypeProto_ARCHIVE
		}
		out[it.Link] = r
	}
	return out, uploaded, nil
}

func (s *Submission) shipItem(ctx context.Context, it *shipplan.Item) (hdfs.Resource, int64, error) {
	if it.Kind != shipplan.EnvDir && it.Kind != shipplan.SrcDir {
		return s.uploadKnown(ctx, it.Local, it.Cache, it.Access)
	}
	start := time.Now()
	known := s.recall(ctx, it.Local, packTarget(it.Kind))
	if known.hit {
		r, ok, err := s.store().Lookup(ctx, known.entry.SHA256, it.Cache, known.entry.ArchiveBytes, it.Access)
		if err != nil {
			return hdfs.Resource{}, 0, err
		}
		if ok {
			it.OwnCopy = shipplan.NeedsOwnCopy(known.entry.Manifest)
			s.packed(PackInfo{Dir: it.Local, Link: it.Link,
				Bytes: known.entry.ArchiveBytes, SHA256: known.entry.SHA256, Took: time.Since(start), Cached: true}.withManifest(known.entry.Manifest), known.entry.Manifest)
			return r, 0, nil
		}
	}
	tmp, info, m, err := s.pack(ctx, *it)
	if err != nil {
		return hdfs.Resource{}, 0, err
	}
	defer os.Remove(tmp)
	it.OwnCopy = shipplan.NeedsOwnCopy(m)
	r, n, err := s.upload(ctx, tmp, it.Cache, info.SHA256, it.Access)
	if err == nil {
		known.remember(envpack.Packed{SHA256: info.SHA256, ArchiveBytes: info.Bytes, Manifest: m})
	}
	return r, n, err
}

// pack writes an environment (envpack.Pack) or a source directory
// (envpack.PackDir) to a temporary file, the caller removes it; the
// manifest is the environment's (nil for a source directory).
func (s *Submission) pack(ctx context.Context, it shipplan.Item) (string, PackInfo, *envpack.Manifest, error) {
	f, err := os.CreateTemp("", "tfyarn-"+it.Link+"-*.tar.gz")
	if err != nil {
		return "", PackInfo{}, nil, fmt.Errorf("client: packing %s: %w", it.Local, err)
	}
	start := time.Now()
	info := PackInfo{Dir: it.Local, Link: it.Link}
	var manifest *envpack.Manifest
	if it.Kind == shipplan.EnvDir {
		var m envpack.Manifest
		m, err = envpack.Pack(ctx, it.Local, f, envpack.Options{})
		manifest = &m
		info, info.SHA256 = info.withManifest(manifest), m.SHA256
	} else {
		info.SHA256, err = envpack.PackDir(ctx, it.Local, f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", PackInfo{}, nil, err
	}
	if st, err := os.Stat(f.Name()); err == nil {
		info.Bytes = st.Size()
	}
	info.Took = time.Since(start)
	s.packed(info, manifest)
	return f.Name(), info, manifest, nil
}

// shipLayers ships a venv in layers (envpack.PackLayers), each its own
// PUBLIC cache entry, and returns their resources, base first. A venv
// unchanged since it was packed, whose layers the cache holds, is not read;
// after a change, only the layers whose files changed are packed again
// (the pack cache remembers each layer's print) and only layers the cache
// lacks are uploaded.
func (s *Submission) shipLayers(ctx context.Context, it shipplan.Item) ([]hdfs.Resource, int64, error) {
	start := time.Now()
	known := s.recall(ctx, it.Local, envpack.TargetEnvLayers)
	if known.hit {
		rs, ok, err := s.lookupLayers(ctx, known.entry.Layers, it.Access)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			s.packed(PackInfo{Dir: it.Local, Link: it.Link, Bytes: known.entry.ArchiveBytes,
				SHA256: known.entry.SHA256, Took: time.Since(start), Cached: true, Layers: len(rs)}.withManifest(known.entry.Manifest), known.entry.Manifest)
			return rs, 0, nil
		}
	}
	tmp, err := os.MkdirTemp("", "tfyarn-env-layers-")
	if err != nil {
		return nil, 0, fmt.Errorf("client: packing %s: %w", it.Local, err)
	}
	defer os.RemoveAll(tmp)
	var previous []envpack.Layer
	if known.cache != nil {
		if e, ok := known.cache.Previous(it.Local, envpack.TargetEnvLayers); ok {
			previous = e.Layers
		}
	}
	l, err := envpack.PackLayers(ctx, it.Local, tmp, envpack.LayerOptions{Known: previous})
	if err == nil && len(previous) > 0 {
		// Layers taken from the pack cache must still be in the HDFS
		// cache; if one is gone, pack them all again.
		var reused []envpack.Layer
		for _, layer := range l.Layers {
			if layer.Path == "" {
				reused = append(reused, layer)
			}
		}
		if _, ok, lerr := s.lookupLayers(ctx, reused, it.Access); lerr != nil {
			return nil, 0, lerr
		} else if !ok {
			l, err = envpack.PackLayers(ctx, it.Local, tmp, envpack.LayerOptions{})
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("client: packing %s: %w", it.Local, err)
	}
	digest := envpack.LayersDigest(l.Layers)
	packed := 0
	for _, layer := range l.Layers {
		if layer.Path != "" {
			packed++
		}
	}
	shipped := l.Manifest
	s.packed(PackInfo{Dir: it.Local, Link: it.Link, Bytes: l.Manifest.ArchiveBytes, SHA256: digest,
		Took: time.Since(start), Layers: len(l.Layers), LayersPacked: packed}.withManifest(&shipped), &shipped)
	var rs []hdfs.Resource
	var uploaded int64
	for _, layer := range l.Layers {
		var r hdfs.Resource
		var n int64
		if layer.Path == "" {
			var ok bool
			r, ok, err = s.store().Lookup(ctx, layer.SHA256, layer.ArchiveName(), layer.ArchiveBytes, it.Access)
			if err == nil && !ok {
				err = fmt.Errorf("client: layer %s of %s left the HDFS cache while submitting; submit again", layer.Name, it.Local)
			}
		} else {
			r, n, err = s.upload(ctx, layer.Path, layer.ArchiveName(), layer.SHA256, it.Access)
		}
		uploaded += n
		if err != nil {
			return nil, uploaded, err
		}
		rs = append(rs, r)
	}
	m := l.Manifest
	known.remember(envpack.Packed{SHA256: digest, ArchiveBytes: l.Manifest.ArchiveBytes, Manifest: &m, Layers: l.Layers})
	return rs, uploaded, nil
}

// lookupLayers finds every layer in the cache; ok is false if one is not.
func (s *Submission) lookupLayers(ctx context.Context, layers []envpack.Layer, access hdfs.Access) ([]hdfs.Resource, bool, error) {
	var rs []hdfs.Resource
	for _, layer := range layers {
		r, ok, err := s.store().Lookup(ctx, layer.SHA256, layer.ArchiveName(), layer.ArchiveBytes, access)
		if err != nil || !ok {
			return nil, false, err
		}
		rs = append(rs, r)
	}
	return rs, true, nil
}
