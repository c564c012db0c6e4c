package release

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	pythonsdk "github.com/tfyarn/tfyarn/python"
)

// wheelArch maps a Go architecture to its manylinux platform tag (glibc 2.17, which the static
// binary does not even need).
var wheelArch = map[string]string{
	"amd64": "manylinux_2_17_x86_64.manylinux2014_x86_64",
	"arm64": "manylinux_2_17_aarch64.manylinux2014_aarch64",
}

// WheelVersion is v as PEP 440 writes it: 1.2.0-rc1 is 1.2.0rc1, 1.2.0-alpha.2 is 1.2.0a2.
func WheelVersion(v string) string {
	return pythonsdk.PEP440(v)
}

// WheelName is the file name of the wheel for goarch.
func WheelName(version, goarch string) string {
	return fmt.Sprintf("tfyarn-%s-py3-none-%s.whl", WheelVersion(version), wheelArch[goarch])
}

// WriteWheel writes the wheel for goarch that carries binary: pip installs the binary from the
// wheel's .data/scripts/ into the environment's bin directory, executable and as it is (a file
// that does not start with #!python gets no Python shim).
func WriteWheel(w io.Writer, version, goarch string, binary, license []byte, mtime time.Time) error {
	tag, ok := wheelArch[goarch]
	if !ok {
		return fmt.Errorf("no wheel platform for GOARCH %q", goarch)
	}
	wv := WheelVersion(version)
	distInfo := "tfyarn-" + wv + ".dist-info/"
	// The Python package is the one the binary carries (python/tfyarn/), with its version.
	var files []File
	for _, f := range pythonsdk.Files() {
		files = append(files, File{Name: f.Name, Mode: 0o644, Data: f.Data})
	}
	files = append(files, File{Name: path.Join(pythonsdk.Package, pythonsdk.VersionFile), Mode: 0o644, Data: pythonsdk.VersionSource(version)})
	files = append(files, []File{
		{Name: "tfyarn-" + wv + ".data/scripts/tfyarn", Mode: 0o755, Data: binary},
		{Name: distInfo + "METADATA", Mode: 0o644, Data: []byte(metadata(wv))},
		{Name: distInfo + "WHEEL", Mode: 0o644, Data: []byte("Wheel-Version: 1.0\nGenerator: tfyarn-release\nRoot-Is-Purelib: false\nTag: py3-none-" + strings.ReplaceAll(tag, ".", "\nTag: py3-none-") + "\n")},
		{Name: distInfo + "licenses/LICENSE", Mode: 0o644, Data: license},
	}...)
	files = append(files, File{Name: distInfo + "RECORD", Mode: 0o644, Data: record(files, distInfo+"RECORD")})
	return writeZip(w, files, mtime)
}

// CloudpickleVersion is the cloudpickle the SDK ships function jobs with: the wheel requires
// exactly it because the caller's pickle must load in the tasks' copy (the pin of
// examples/requirements-notebook.txt; a test holds them equal).
const CloudpickleVersion = "3.1.2"

func metadata(wheelVersion string) string {
	return "Metadata-Version: 2.1\nName: tfyarn\nVersion: " + wheelVersion + "\n" +
		"Summary: Distributed training (TensorFlow, PyTorch, JAX) on Hadoop YARN from one static binary\n" +
		"License: Apache-2.0\nRequires-Python: >=3.8\n" +
		"Requires-Dist: cloudpickle==" + CloudpickleVersion + "\n"
}

// record is the wheel's RECORD: every file's urlsafe-base64 sha256 and size, RECORD itself last
// without either.
func record(files []File, self string) []byte {
	var b bytes.Buffer
	for _, f := range files {
		sum := sha256.Sum256(f.Data)
		fmt.Fprintf(&b, "%s,sha256=%s,%d\n", f.Name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.Data))
	}
	fmt.Fprintf(&b, "%s,,\n", self)
	return b.Bytes()
}

// writeZip writes files in the given order (a wheel's RECORD comes last) with mode bits and one
// time, no earlier than zip's 1980.
func writeZip(w io.Writer, files []File, mtime time.Time) error {
	if floor := time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC); mtime.Before(floor) {
		mtime = floor
	}
	zw := zip.NewWriter(w)
	for _, f := range files {
		hdr := &zip.FileHeader{Name: f.Name, Method: zip.Deflate}
		hdr.SetMode(os.FileMode(f.Mode))
		hdr.Modified = mtime.UTC()
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.Data); err != nil {
			return err
		}
	}
	return zw.Close()
}
