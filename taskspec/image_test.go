package taskspec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseImage(t *testing.T) {
	for in, want := range map[string][2]string{
		"registry.example.com/ml/tf:2.15-gpu":  {"", "registry.example.com/ml/tf:2.15-gpu"},
		"worker=registry.example.com:5000/tf":  {"worker", "registry.example.com:5000/tf"},
		"ps=tfyarn.test/tfyarn-test-image:abc": {"ps", "tfyarn.test/tfyarn-test-image:abc"},
		"ubuntu":                               {"", "ubuntu"},
		"library/python@sha256:" + hex64():     {"", "library/python@sha256:" + hex64()},
	} {
		typ, img, err := ParseImage(in)
		require.NoError(t, err, in)
		require.Equal(t, want, [2]string{string(typ), img}, in)
	}
	for _, in := range []string{"", "UPPER/case", "a b", "worker=", "gpu=x", "-x", "x:", "x@sha256:12", "registry/x:tag with space", "a//b", strings.Repeat("a", 256)} {
		_, _, err := ParseImage(in)
		require.Error(t, err, in)
		var v *ValidationError
		require.ErrorAs(t, err, &v)
	}
}

func hex64() string { return strings.Repeat("ab", 32) }

func TestParseMount(t *testing.T) {
	m, err := ParseMount("/data/sets:/data")
	require.NoError(t, err)
	require.Equal(t, Mount{Src: "/data/sets", Dst: "/data", ReadOnly: true}, m, "read-only unless rw")
	m, err = ParseMount("/scratch:/scratch:rw")
	require.NoError(t, err)
	require.Equal(t, "/scratch:/scratch:rw", m.String())
	for _, in := range []string{"/a", "a:/b", "/a:b", "/a:/b:rx", "/:/b", "/a/../etc:/b", "/a,b:/c", "/a:/b:ro:x", ""} {
		_, err := ParseMount(in)
		require.Error(t, err, in)
	}
}

func TestValidateImages(t *testing.T) {
	j := Job{Command: "true", Tasks: []TaskGroup{{Type: Worker, Instances: 2, Resources: Resources{VCores: 1, MemoryMiB: 256}}}}
	require.NoError(t, j.Validate(ClusterLimits{}))
	j.Images = map[string]string{AllTypes: "tfyarn.test/x:1"}
	j.Mounts = []Mount{{Src: "/a", Dst: "/a", ReadOnly: true}}
	require.NoError(t, j.Validate(ClusterLimits{}))
	require.Equal(t, "tfyarn.test/x:1", j.ImageFor(Worker))

	j.Images = map[string]string{"ps": "x"}
	require.ErrorContains(t, j.Validate(ClusterLimits{}), "the job has no ps tasks")
	j.Images = map[string]string{"worker": "Bad Name"}
	require.ErrorContains(t, j.Validate(ClusterLimits{}), "not a valid Docker image name")
	j.Images = nil
	require.ErrorContains(t, j.Validate(ClusterLimits{}), "--mount needs --image")
	j.Images = map[string]string{AllTypes: "x", "worker": "y"}
	require.Equal(t, "y", j.ImageFor(Worker), "a type's own image first")
	require.Equal(t, "x", j.ImageFor(PS))
	j.Mounts = []Mount{{Src: "/a", Dst: "/d"}, {Src: "/b", Dst: "/d"}}
	require.ErrorContains(t, j.Validate(ClusterLimits{}), "mounted twice")
}

func FuzzParseImage(f *testing.F) {
	f.Add("worker=registry.example.com:5000/ml/tf:2.15-gpu")
	f.Add("tfyarn.test/tfyarn-test-image:abc")
	f.Fuzz(func(t *testing.T, s string) {
		typ, img, err := ParseImage(s)
		if err != nil {
			return
		}
		// What passes is one token YARN passes on as is: no separators of the NodeManager's
		// command file, no spaces, no option.
		if !ValidImageName(img) || strings.ContainsAny(img, " ,=\n\x00") || strings.HasPrefix(img, "-") || (typ != AllTypes && !knownType(typ)) {
			t.Fatalf("accepted %q as %q %q", s, typ, img)
		}
	})
}

func FuzzParseMount(f *testing.F) {
	f.Add("/data/sets:/data:ro")
	f.Add("/a:/b")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMount(s)
		if err != nil {
			return
		}
		back, err := ParseMount(m.String())
		if err != nil || back != m {
			t.Fatalf("%q: %+v does not round-trip: %v", s, m, err)
		}
		if strings.ContainsAny(m.Src+m.Dst, ":,\n") || m.Src[0] != '/' || m.Dst[0] != '/' {
			t.Fatalf("accepted %q", s)
		}
	})
}
