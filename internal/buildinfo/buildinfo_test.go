package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func build(mainVersion string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{GoVersion: "go1.26.11", Main: debug.Module{Path: "github.com/tfyarn/tfyarn", Version: mainVersion}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

const commit = "2b88b1a1234a5678901234567890123456789012"

// TestVersionSources: the linker's version wins (a release build), then
// the module version go install stamps, else devel; a modified tree is
// named in the version.
func TestVersionSources(t *testing.T) {
	clean := []string{"vcs.revision", commit, "vcs.time", "2026-11-29T10:00:00Z", "vcs.modified", "false"}
	dirty := []string{"vcs.revision", commit, "vcs.time", "2026-11-29T10:00:00Z", "vcs.modified", "true"}
	cases := []struct {
		name, linked, main string
		settings           []string
		version, label     string
	}{
		{"release build (ldflags)", "1.2.0", "(devel)", clean, "v1.2.0", "v1.2.0"},
		{"release build with a v", "v1.2.0", "(devel)", clean, "v1.2.0", "v1.2.0"},
		{"go install @v1.2.0", "", "v1.2.0", nil, "v1.2.0", "v1.2.0"},
		{"checkout at a tag", "", "v1.2.0", clean, "v1.2.0", "v1.2.0"},
		{"checkout, untagged", "", "v0.0.0-20261129100000-2b88b1a1234a", clean, "devel", "devel-2b88b1a1234a"},
		{"checkout, modified", "", "v0.0.0-20261129100000-2b88b1a1234a+dirty", dirty, "devel-dirty", "devel-2b88b1a1234a-dirty"},
		{"release build, modified", "1.2.0", "(devel)", dirty, "v1.2.0-dirty", "v1.2.0-dirty"},
		{"no vcs, no version", "", "(devel)", nil, "devel", "devel"},
	}
	for _, c := range cases {
		info := fromBuild(build(c.main, c.settings...), c.linked)
		if info.Version != c.version || info.Label() != c.label {
			t.Errorf("%s: version %q label %q, want %q and %q", c.name, info.Version, info.Label(), c.version, c.label)
		}
	}
}

// TestCommitAndDate: the build's date is the commit's, so two builds of
// one commit print the same.
func TestCommitAndDate(t *testing.T) {
	info := fromBuild(build("(devel)", "vcs.revision", commit, "vcs.time", "2026-11-29T10:00:00Z", "vcs.modified", "true"), "")
	want := "tfyarn devel-dirty (commit 2b88b1a1234a, 2026-11-29T10:00:00Z; go1.26.11 " + info.Platform + ")"
	if got := info.String(); got != want || !info.Dirty || info.Commit != commit {
		t.Errorf("String() = %q, want %q (dirty %v, commit %q)", got, want, info.Dirty, info.Commit)
	}
	if got := fromBuild(nil, "").String(); !strings.HasPrefix(got, "tfyarn devel (go") {
		t.Errorf("without build info: %q", got)
	}
}

// TestMismatch: one line when the AM is another tfyarn; nothing when it is
// the same, or either side cannot tell (no version, devel without a commit).
func TestMismatch(t *testing.T) {
	if m := Mismatch("v1.1.0", "v1.2.0"); !strings.HasPrefix(m, "the job's ApplicationMaster is tfyarn v1.1.0 (this client is v1.2.0): ") || strings.Contains(m, "\n") {
		t.Errorf("Mismatch = %q", m)
	}
	if m := Mismatch("devel-2b88b1a1234a", "v1.2.0"); !strings.HasPrefix(m, "the job's ApplicationMaster is tfyarn devel-2b88b1a1234a (this client is v1.2.0)") {
		t.Errorf("Mismatch = %q", m)
	}
	if m := Mismatch("v1.2.0", "v1.2.0") + Mismatch("", "v1.2.0") + Mismatch("devel-2b88b1a1234a", "devel") + Mismatch("devel-dirty", "v1.2.0"); m != "" {
		t.Errorf("same or unknown version: %q", m)
	}
}

// TestAsALibrary: in a Go program that uses tfyarn's client, the version
// is the tfyarn module it requires, not the program's.
func TestAsALibrary(t *testing.T) {
	bi := build("v0.3.0", "vcs.revision", commit, "vcs.modified", "true")
	bi.Main.Path = "example.com/trainer"
	bi.Deps = []*debug.Module{{Path: "github.com/stretchr/testify", Version: "v1.9.0"}, {Path: Module, Version: "v1.2.0"}}
	if info := fromBuild(bi, ""); info.Version != "v1.2.0" || info.Commit != "" || info.Dirty {
		t.Errorf("as a library: %+v", info)
	}
	bi.Deps[1].Version = "v0.0.0-20261129100000-2b88b1a1234a"
	if info := fromBuild(bi, ""); info.Label() != "devel" {
		t.Errorf("as a library at a commit: %+v", info)
	}
}
