package client

import "github.com/tfyarn/tfyarn/internal/shipplan"

// LocalFile is a local file shipped into every task's working directory
// under Name (a FILE resource for Job.Files, an ARCHIVE YARN unpacks into
// ./Name/ for Job.Archives).
type LocalFile struct {
	Path string
	// Name is the link name in the container; empty means the default:
	// the base name for files, the base name without its archive suffix
	// for archives (x.zip → x, data.tar.gz → data).
	Name string
}

// ParseLocalFile reads the CLI's PATH[#NAME] form of --files and
// --archives: NAME, after the last '#', is the link name in the container.
func ParseLocalFile(spec string) (LocalFile, error) {
	f, err := shipplan.ParseLocalFile(spec)
	return LocalFile(f), err
}
