package clustertest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// treeGoFiles walks the repository's Go files, skipping what is not the
// project's own code (the venv, generated protobuf code, build output).
func treeGoFiles(t *testing.T, each func(rel string, src []byte)) {
	root := RepoRoot()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || rel == "yarnpb" || rel == "bin" || rel == filepath.Join("testcluster", "target") || d.Name() == "work") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			each(filepath.ToSlash(rel), src)
		}
		return nil
	})
	require.NoError(t, err)
}

// TestClaimsNoTestSkips: README "End-to-end tests ... fail loudly when it
// cannot: no test skips quietly". No test in the tree calls Skip.
func TestClaimsNoTestSkips(t *testing.T) {
	skip := regexp.MustCompile(`\.(Skip|Skipf|SkipNow)\(`)
	var found []string
	treeGoFiles(t, func(rel string, src []byte) {
		if strings.HasSuffix(rel, "_test.go") && rel != "internal/clustertest/claims_tree_test.go" && skip.Match(src) {
			found = append(found, rel)
		}
	})
	require.Empty(t, found, "tests that skip")
}

// TestClaimsWireDecodersAreFuzzed: README's Development section lists the
// packages whose decoders have fuzz targets. The list must be exactly the
// packages that have `func Fuzz...` targets, and every package holding a
// hand-written binary decoder (byte-order reads) must be on it.
func TestClaimsWireDecodersAreFuzzed(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(RepoRoot(), "docs", "development.md"))
	require.NoError(t, err)
	sentence := regexp.MustCompile(`(?s)has a fuzz target \((.*?)\); a test`).FindSubmatch(readme)
	require.NotNil(t, sentence, "README's Development section no longer has the fuzz sentence this test reads")
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("`(?:go test -fuzz=Fuzz\\.\\.\\. )?\\./([a-z/]+)/`").FindAllSubmatch(sentence[1], -1) {
		listed[string(m[1])] = true
	}
	require.NotEmpty(t, listed)

	fuzzTarget := regexp.MustCompile(`(?m)^func Fuzz\w+\(f \*testing\.F\)`)
	binaryDecoder := regexp.MustCompile(`binary\.(BigEndian|LittleEndian|NativeEndian)\.Uint|binary\.Read\(|binary\.ReadU?varint|binary\.ByteOrder`)
	fuzzed, decoding := map[string]bool{}, map[string]bool{}
	treeGoFiles(t, func(rel string, src []byte) {
		dir := filepath.ToSlash(filepath.Dir(rel))
		if strings.HasPrefix(dir, "bench") {
			return // measurements, nothing read from the wire in production
		}
		if strings.HasSuffix(rel, "_test.go") {
			if fuzzTarget.Match(src) {
				fuzzed[dir] = true
			}
		} else if binaryDecoder.Match(src) {
			decoding[dir] = true
		}
	})
	require.Equal(t, sorted(fuzzed), sorted(listed), "README's list of fuzzed packages vs the packages with fuzz targets")
	for dir := range decoding {
		require.True(t, fuzzed[dir], "%s decodes binary data but has no fuzz target", dir)
	}
}

func sorted(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
