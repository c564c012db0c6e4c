package client

import (
	"fmt"

	"github.com/tfyarn/tfyarn/internal/shipplan"
	"github.com/tfyarn/tfyarn/taskspec"
)

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

// shipInputs is what the job ships, in the shipping plan's terms.
func (j Job) shipInputs() shipplan.Inputs {
	in := shipplan.Inputs{Script: j.Script, Args: j.Args, Python: j.Python, PythonEnv: j.PythonEnv, SrcDir: j.SrcDir, Env: j.Env}
	for _, f := range j.Files {
		in.Files = append(in.Files, shipplan.LocalFile(f))
	}
	for _, a := range j.Archives {
		in.Archives = append(in.Archives, shipplan.LocalFile(a))
	}
	return in
}

// planShipping checks the job's local inputs and decides what goes where
// (shipplan.Make).
func planShipping(job Job) (shipplan.Plan, error) {
	return shipplan.Make(job.shipInputs())
}

func invalidf(format string, args ...any) error {
	return &taskspec.ValidationError{Message: fmt.Sprintf(format, args...)}
}
