// Package buildinfo says which tfyarn this binary is: its version, the
// commit it was built from and that commit's time (not the build's, so that
// two builds of one commit are the same bytes), the Go toolchain and the
// platform. The CLI prints it (tfyarn version), the AM and the launcher log
// it, and the AM's report carries it so a client can tell when it talks to
// an AM of another version.
package buildinfo

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// version is set by a release build (make release VERSION=X.Y.Z):
//
//	-ldflags "-X github.com/tfyarn/tfyarn/internal/buildinfo.version=X.Y.Z"
//
// Empty otherwise: go install ...@vX.Y.Z then stamps the module version,
// and a build from a checkout is "devel".
var version string

// Module is tfyarn's module path.
const Module = "github.com/tfyarn/tfyarn"

// Devel is the version of a build that is no release.
const Devel = "devel"

// Info is what one binary knows about its own build.
type Info struct {
	Version    string    `json:"version"`              // "v1.2.0", "devel"; "-dirty" appended when built from a modified tree
	Commit     string    `json:"commit,omitempty"`     // the full revision, when the build recorded one
	CommitTime time.Time `json:"commit_time,omitzero"` // when that commit was made: the build's date
	Dirty      bool      `json:"dirty"`                // built from a tree with uncommitted changes
	GoVersion  string    `json:"go_version"`           // the toolchain, "go1.26.11"
	Platform   string    `json:"platform"`             // GOOS/GOARCH, "linux/amd64"
}

// Current is this binary's build.
func Current() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuild(bi, version)
}

// pseudoVersion matches the versions Go makes up for an untagged commit
// (v0.0.0-20261129105443-2b88b1a1234a): no release, so "devel".
var pseudoVersion = regexp.MustCompile(`\d{14}-[0-9a-f]{12}$`)

// fromBuild reads bi (nil when the binary has none) and a version set by
// the linker (empty when none).
func fromBuild(bi *debug.BuildInfo, linked string) Info {
	info := Info{Version: Devel, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return withVersion(info, linked)
	}
	info.GoVersion = bi.GoVersion
	if bi.Main.Path != Module {
		// A Go program using tfyarn as a library: the build settings are
		// that program's; tfyarn is the version it required.
		for _, dep := range bi.Deps {
			if dep.Path == Module {
				return withVersion(info, orLinked(linked, dep.Version))
			}
		}
		return withVersion(info, linked)
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.time":
			info.CommitTime, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			info.Dirty = s.Value == "true"
		}
	}
	// Go 1.24 and later stamp a checkout's build too; "+dirty" is its own
	// mark of a modified tree, which Dirty says already.
	return withVersion(info, orLinked(linked, strings.TrimSuffix(bi.Main.Version, "+dirty")))
}

// orLinked is the linker's version, else a module version that names a
// release.
func orLinked(linked, module string) string {
	if linked != "" || module == "(devel)" || pseudoVersion.MatchString(module) {
		return linked
	}
	return module
}

// withVersion sets the version from v, "v"-prefixed as Go's tags are, and
// marks a dirty build.
func withVersion(info Info, v string) Info {
	if v != "" {
		info.Version = "v" + strings.TrimPrefix(v, "v")
	}
	if info.Dirty {
		info.Version += "-dirty"
	}
	return info
}

// Label names the build in one word, as the AM's report carries it and a
// client compares it: the version, and for a devel build the commit too,
// since two devel builds of different commits are different programs.
func (i Info) Label() string {
	if !strings.HasPrefix(i.Version, Devel) || i.Commit == "" {
		return i.Version
	}
	return Devel + "-" + shortCommit(i.Commit) + strings.TrimPrefix(i.Version, Devel)
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// String is the one line tfyarn version prints and the AM and the
// launcher log: "tfyarn v1.2.0 (commit 2b88b1a1234a, 2026-11-29T10:00:00Z; go1.26.11 linux/amd64)".
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tfyarn %s (", i.Version)
	if i.Commit != "" {
		fmt.Fprintf(&b, "commit %s", shortCommit(i.Commit))
		if !i.CommitTime.IsZero() {
			fmt.Fprintf(&b, ", %s", i.CommitTime.UTC().Format(time.RFC3339))
		}
		b.WriteString("; ")
	}
	fmt.Fprintf(&b, "%s %s)", i.GoVersion, i.Platform)
	return b.String()
}

// Mismatch is the one line a client prints when the job's AM, whose report
// says it is amLabel (Label), is another tfyarn than the client; "" when
// they are the same or either does not know: an AM older than the report's
// field, or a devel build without a commit (a test binary, a build with
// -buildvcs=false), which cannot tell whether it differs.
func Mismatch(amLabel, clientLabel string) string {
	if !known(amLabel) || !known(clientLabel) || amLabel == clientLabel {
		return ""
	}
	return fmt.Sprintf("the job's ApplicationMaster is tfyarn %s (this client is %s): the job runs the binary it was submitted with; "+
		"what this client shows of it may differ (docs/versions.md)", amLabel, clientLabel)
}

// known says whether a label names one build: not empty, and not devel
// without a commit.
func known(label string) bool {
	return label != "" && label != Devel && label != Devel+"-dirty"
}
