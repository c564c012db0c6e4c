package release

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"
)

// cdxComponent is a CycloneDX 1.5 component: a Go module, its version and package URL.
type cdxComponent struct {
	Type       string        `json:"type"`
	BOMRef     string        `json:"bom-ref"`
	Name       string        `json:"name"`
	Version    string        `json:"version"`
	PURL       string        `json:"purl"`
	Properties []cdxProperty `json:"properties,omitempty"`
}

type cdxProperty struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type cdxDependency struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn"`
}

type cdxBOM struct {
	BOMFormat    string          `json:"bomFormat"`
	SpecVersion  string          `json:"specVersion"`
	SerialNumber string          `json:"serialNumber"`
	Version      int             `json:"version"`
	Metadata     cdxMetadata     `json:"metadata"`
	Components   []cdxComponent  `json:"components"`
	Dependencies []cdxDependency `json:"dependencies"`
}

type cdxMetadata struct {
	Timestamp string `json:"timestamp"`
	Tools     struct {
		Components []cdxComponent `json:"components"`
	} `json:"tools"`
	Component cdxComponent `json:"component"`
}

func goPURL(path, version string) string { return "pkg:golang/" + path + "@" + version }

// SBOM is the CycloneDX 1.5 JSON bill of materials of the Go binary at path, from the build
// information the Go linker embedded: the main module at version, every module linked in with its
// go.sum hash (h1, which is no standard hash algorithm, as a property), the Go version and target.
// Its time is created (the commit's) and its serial number is derived from its content.
func SBOM(path, version string, created time.Time) ([]byte, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the build information of %s: %w", path, err)
	}
	return sbomOf(info, version, created)
}

func sbomOf(info *debug.BuildInfo, version string, created time.Time) ([]byte, error) {
	bom := cdxBOM{BOMFormat: "CycloneDX", SpecVersion: "1.5", Version: 1}
	mainRef := goPURL(info.Main.Path, "v"+version)
	bom.Metadata.Timestamp = created.UTC().Format(time.RFC3339)
	bom.Metadata.Tools.Components = []cdxComponent{{Type: "application", BOMRef: "tfyarn-release", Name: "tfyarn-release (internal/release)", Version: "v" + version, PURL: mainRef}}
	bom.Metadata.Component = cdxComponent{Type: "application", BOMRef: mainRef, Name: info.Main.Path, Version: "v" + version, PURL: mainRef,
		Properties: append([]cdxProperty{{Name: "go:version", Value: info.GoVersion}}, buildSettings(info)...)}
	deps := cdxDependency{Ref: mainRef, DependsOn: []string{}}
	for _, m := range info.Deps {
		if m.Replace != nil {
			m = m.Replace
		}
		ref := goPURL(m.Path, m.Version)
		c := cdxComponent{Type: "library", BOMRef: ref, Name: m.Path, Version: m.Version, PURL: ref}
		if m.Sum != "" {
			c.Properties = []cdxProperty{{Name: "go:module:sum", Value: m.Sum}}
		}
		bom.Components = append(bom.Components, c)
		deps.DependsOn = append(deps.DependsOn, ref)
	}
	bom.Dependencies = []cdxDependency{deps}
	body, err := json.Marshal(bom)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	sum[6], sum[8] = sum[6]&0x0f|0x50, sum[8]&0x3f|0x80 // a name-based UUID (version 5 layout) of the content
	bom.SerialNumber = fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
	out, err := json.MarshalIndent(bom, "", "  ")
	return append(out, '\n'), err
}

// buildSettings are the target and flags the binary was built with (GOOS, GOARCH, CGO_ENABLED,
// -trimpath, the commit), as properties of the main component.
func buildSettings(info *debug.BuildInfo) []cdxProperty {
	var props []cdxProperty
	for _, s := range info.Settings {
		switch s.Key {
		case "GOOS", "GOARCH", "CGO_ENABLED", "-trimpath", "vcs.revision", "vcs.time", "vcs.modified":
			props = append(props, cdxProperty{Name: "go:build:" + s.Key, Value: s.Value})
		}
	}
	return props
}
