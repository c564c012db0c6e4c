package envpack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// smallSizes makes layers of a few hundred KiB, so small test envs have
// several of each kind.
func smallSizes(t *testing.T) {
	old := sizes
	sizes = layerSizes{own: 64 << 10, group: 128 << 10}
	t.Cleanup(func() { sizes = old })
}

// layeredVenv copies the shared venv (pip, setuptools) and installs fake
// distributions by hand: a namespace package two distributions share, one
// large distribution with subpackages and a library beside them, and n tiny
// ones. It returns the venv and its site-packages.
func layeredVenv(t *testing.T, tiny int) (string, string) {
	dir := filepath.Join(t.TempDir(), "venv")
	out, err := exec.Command("cp", "-a", sharedVenv(t), dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	sites, _ := filepath.Glob(filepath.Join(dir, "lib", "python*", "site-packages"))
	require.Len(t, sites, 1)
	site := sites[0]
	dist := func(name, version string, files map[string]string) {
		var record strings.Builder
		for p, content := range files {
			writeFile(t, filepath.Join(site, p), content, 0o644)
			fmt.Fprintf(&record, "%s,,\n", p)
		}
		di := fmt.Sprintf("%s-%s.dist-info", name, version)
		fmt.Fprintf(&record, "%s/RECORD,,\n../../../bin/%s-tool,,\n", di, name)
		writeFile(t, filepath.Join(site, di, "METADATA"), "Name: "+name+"\nVersion: "+version+"\n", 0o644)
		writeFile(t, filepath.Join(site, di, "RECORD"), record.String(), 0o644)
	}
	dist("nsa", "1.0", map[string]string{"ns/a/__init__.py": "A = 'a'\n"})
	dist("nsb", "2.0", map[string]string{"ns/b/__init__.py": "B = 'b'\n"})
	big := map[string]string{"big/__init__.py": "from big.core import value\n", "big/core/__init__.py": "value = 42\n"}
	for i := 0; i < 4; i++ {
		big[fmt.Sprintf("big/data%d/blob.bin", i)] = strings.Repeat(fmt.Sprintf("%d", i), 150<<10)
	}
	big["big.libs/libdep.so"] = "dep"
	dist("big", "3.1", big)
	for i := 0; i < tiny; i++ {
		dist(fmt.Sprintf("tiny%04d", i), "0.1", map[string]string{fmt.Sprintf("tiny%04d.py", i): fmt.Sprintf("N = %d\n", i)})
	}
	return dir, site
}

// assembleLayers unpacks each layer into layersDir/<i> as the NodeManager
// would, then assembles dst from them.
func assembleLayers(t *testing.T, l Layered, layersDir, dst string) {
	var dirs []string
	for i, layer := range l.Layers {
		d := filepath.Join(layersDir, fmt.Sprint(i))
		b, err := os.ReadFile(layer.Path)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(d, 0o755))
		cmd := exec.Command("tar", "-xzf", "-")
		cmd.Dir = d
		cmd.Stdin = strings.NewReader(string(b))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		dirs = append(dirs, d)
	}
	require.NoError(t, Assemble(dst, dirs))
}

// treeOf reads dir as a program inside it would: links into layersDir
// (what Assemble made) are followed, other links read as links.
func treeOf(t *testing.T, dir, layersDir string) map[string]string {
	out := map[string]string{}
	var walk func(real, rel string)
	walk = func(real, rel string) {
		entries, err := os.ReadDir(real)
		require.NoError(t, err)
		for _, e := range entries {
			p, r := filepath.Join(real, e.Name()), filepath.Join(rel, e.Name())
			if r == ManifestName {
				continue
			}
			st, err := os.Lstat(p)
			require.NoError(t, err)
			if st.Mode()&fs.ModeSymlink != 0 {
				target, err := os.Readlink(p)
				require.NoError(t, err)
				if layersDir == "" || !strings.HasPrefix(target, layersDir+"/") {
					out[r] = "link " + target
					continue
				}
				p = target
				if st, err = os.Lstat(p); err != nil {
					require.NoError(t, err)
				}
			}
			switch {
			case st.IsDir():
				out[r] = fmt.Sprintf("dir %o", st.Mode().Perm())
				walk(p, r)
			case st.Mode()&fs.ModeSymlink != 0:
				target, _ := os.Readlink(p)
				out[r] = "link " + target
			default:
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				sum := sha256.Sum256(b)
				out[r] = fmt.Sprintf("file %o %s", st.Mode().Perm(), hex.EncodeToString(sum[:8]))
			}
		}
	}
	walk(dir, "")
	return out
}

func pythonSays(t *testing.T, env, code string) string {
	out, err := exec.Command(filepath.Join(env, "bin", "python"), "-c", code).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

// TestPackLayersSameAsPack: an environment assembled from its layers is the
// tree Pack's archive unpacks to (every path, mode, content and link), and
// its Python has the same sys.path and imports the same packages, the
// namespace package two distributions share and the split one included.
func TestPackLayersSameAsPack(t *testing.T) {
	smallSizes(t)
	venv, _ := layeredVenv(t, 40)
	l, err := PackLayers(context.Background(), venv, t.TempDir(), LayerOptions{})
	require.NoError(t, err)

	names := map[string]bool{}
	for _, layer := range l.Layers {
		names[layer.Name] = true
		require.NotEmpty(t, layer.SHA256)
	}
	require.Equal(t, "base", l.Layers[0].Name)
	require.True(t, names["big+big.libs"], "a large distribution is a layer of its own, whole: %v", names)
	require.True(t, names["group-00"], "small distributions are grouped: %v", names)
	require.Greater(t, len(l.Layers), 3)

	archive, m := pack(t, venv, Options{})
	require.Equal(t, m.Files, l.Manifest.Files, "every file is in one layer")
	require.Equal(t, m.Bytes, l.Manifest.Bytes)

	// Both at the same place, one after the other: sys.path names it.
	work := t.TempDir()
	env := filepath.Join(work, "env")
	mono := unpack(t, archive)
	require.NoError(t, os.Rename(mono, env))
	wantTree := treeOf(t, env, "")
	const probe = "import sys, json, ns.a, ns.b, big, tiny0007; print(json.dumps(sys.path), ns.a.A, ns.b.B, big.value, tiny0007.N)"
	want := pythonSays(t, env, probe)
	require.NoError(t, os.RemoveAll(env))

	layersDir := filepath.Join(work, "layers")
	assembleLayers(t, l, layersDir, env)
	require.Equal(t, wantTree, treeOf(t, env, layersDir))
	require.Equal(t, want, pythonSays(t, env, probe))
	require.Contains(t, want, "a b 42 7")
}

// TestPackLayersDeterministic: the same env gives the same layers; after
// one small distribution changes, one layer's digest changes and no other,
// and given the earlier layers (the pack cache's) PackLayers packs that one
// alone.
func TestPackLayersDeterministic(t *testing.T) {
	smallSizes(t)
	venv, site := layeredVenv(t, 40)
	time.Sleep(1600 * time.Millisecond) // settled: prints are remembered
	ctx := context.Background()
	a, err := PackLayers(ctx, venv, t.TempDir(), LayerOptions{})
	require.NoError(t, err)
	b, err := PackLayers(ctx, venv, t.TempDir(), LayerOptions{})
	require.NoError(t, err)
	require.Equal(t, digests(a), digests(b))
	for _, l := range a.Layers {
		require.NotEmpty(t, l.Print, l.Name)
		require.NotEmpty(t, l.Path, l.Name)
	}

	writeFile(t, filepath.Join(site, "tiny0011.py"), "N = 'eleven'\n", 0o644)
	time.Sleep(1600 * time.Millisecond)
	c, err := PackLayers(ctx, venv, t.TempDir(), LayerOptions{})
	require.NoError(t, err)
	require.Len(t, digests(c), len(digests(a)))
	var changed []string
	for i, d := range digests(c) {
		if d != digests(a)[i] {
			changed = append(changed, c.Layers[i].Name)
		}
	}
	require.Len(t, changed, 1, "one small package changed: one layer: %v", changed)
	require.True(t, strings.HasPrefix(changed[0], "group-"), changed[0])

	d, err := PackLayers(ctx, venv, t.TempDir(), LayerOptions{Known: a.Layers})
	require.NoError(t, err)
	require.Equal(t, digests(c), digests(d))
	var packed []string
	for _, l := range d.Layers {
		if l.Path != "" {
			packed = append(packed, l.Name)
		}
	}
	require.Equal(t, changed, packed, "only the changed layer is packed again")
	require.Equal(t, c.Manifest.Files, d.Manifest.Files)
}

func digests(l Layered) []string {
	var out []string
	for _, layer := range l.Layers {
		out = append(out, layer.Name+" "+layer.SHA256)
	}
	return out
}

// TestPackLayersEdgeCases: thousands of tiny distributions end up in a
// bounded number of groups and assemble into the same tree; one huge
// distribution is one layer, whole.
func TestPackLayersEdgeCases(t *testing.T) {
	smallSizes(t)
	t.Run("thousands of tiny packages", func(t *testing.T) {
		venv, _ := layeredVenv(t, 2000)
		l, err := PackLayers(context.Background(), venv, t.TempDir(), LayerOptions{})
		require.NoError(t, err)
		groups := 0
		for _, layer := range l.Layers {
			if strings.HasPrefix(layer.Name, "group-") {
				groups++
			} else {
				require.NotContains(t, layer.Name, "tiny", "tiny packages are grouped")
			}
		}
		require.LessOrEqual(t, groups, maxGroups)
		work := t.TempDir()
		env := filepath.Join(work, "env")
		archive, _ := pack(t, venv, Options{})
		require.NoError(t, os.Rename(unpack(t, archive), env))
		want := treeOf(t, env, "")
		require.NoError(t, os.RemoveAll(env))
		assembleLayers(t, l, filepath.Join(work, "layers"), env)
		require.Equal(t, want, treeOf(t, env, filepath.Join(work, "layers")))
		require.Contains(t, pythonSays(t, env, "import tiny1999; print(tiny1999.N)"), "1999")
	})
	t.Run("one huge package", func(t *testing.T) {
		venv, site := layeredVenv(t, 0)
		writeFile(t, filepath.Join(site, "mono", "engine.so"), strings.Repeat("z", 2<<20), 0o755)
		writeFile(t, filepath.Join(site, "mono-9.0.dist-info", "RECORD"), "mono/engine.so,,\n", 0o644)
		l, err := PackLayers(context.Background(), venv, t.TempDir(), LayerOptions{})
		require.NoError(t, err)
		var found *Layer
		for i := range l.Layers {
			if l.Layers[i].Name == "mono" {
				found = &l.Layers[i]
			}
		}
		require.NotNil(t, found, "%v", digests(l))
		require.Equal(t, 2, found.Files, "engine.so and its RECORD")
		require.EqualValues(t, 2<<20+len("mono/engine.so,,\n"), found.Bytes)
	})
}

// TestPackLayersRefusesConda: a conda env ships as one archive.
func TestPackLayersRefusesConda(t *testing.T) {
	_, err := PackLayers(context.Background(), fakeConda(t), t.TempDir(), LayerOptions{})
	require.True(t, errors.Is(err, ErrLayersConda), "%v", err)
}

// TestAssembleRefuses: an existing destination, or a file in two layers.
func TestAssembleRefuses(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	writeFile(t, filepath.Join(a, "lib", "x.py"), "1", 0o644)
	writeFile(t, filepath.Join(b, "lib", "x.py"), "2", 0o644)
	require.ErrorContains(t, Assemble(dir, []string{a}), "already exists")
	err := Assemble(filepath.Join(dir, "env"), []string{a, b})
	require.ErrorContains(t, err, "x.py is in 2 layers and is not a directory")
}

// TestLayerArchiveName: a layer's cache name says what it holds, in
// characters a container link and an HDFS path take, and stays short.
func TestLayerArchiveName(t *testing.T) {
	require.Equal(t, "env-layer.numpy+numpy.libs.tar.gz", Layer{Name: "numpy+numpy.libs"}.ArchiveName())
	require.Equal(t, "env-layer.group-03.tar.gz", Layer{Name: "group-03"}.ArchiveName())
	require.Equal(t, "env-layer.a_b_c.tar.gz", Layer{Name: "a b:c"}.ArchiveName())
	long := Layer{Name: strings.Repeat("x", 300)}.ArchiveName()
	require.Len(t, long, len(LayerArchivePrefix)+maxLayerNameInArchive+len(".tar.gz"))
}

// FuzzRecordTops: any RECORD file (pip writes it; a venv may hold anything)
// gives top-level names that are single path components, never "." or
// "..", each once, or an error; it never panics.
func FuzzRecordTops(f *testing.F) {
	f.Add([]byte("numpy/__init__.py,sha256=x,12\nnumpy-1.26.4.dist-info/RECORD,,\n../../../bin/f2py,sha256=y,3\n"))
	f.Add([]byte("\"odd,name/x.py\",,\n\"unterminated\n,,\n/abs,,\n"))
	f.Fuzz(func(t *testing.T, record []byte) {
		p := filepath.Join(t.TempDir(), "RECORD")
		require.NoError(t, os.WriteFile(p, record, 0o644))
		tops, err := recordTops(p)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, top := range tops {
			require.NotContains(t, []string{"", ".", ".."}, top)
			require.NotContains(t, top, "/")
			require.False(t, seen[top], "twice: %q", top)
			seen[top] = true
		}
	})
}
