package submit

import (
	"fmt"

	"github.com/tfyarn/tfyarn/internal/shipplan"
	"github.com/tfyarn/tfyarn/taskspec"
)

// planShipping checks the job's local inputs and decides what goes where
// (shipplan.Make).
func planShipping(j Job) (shipplan.Plan, error) {
	return shipplan.Make(shipplan.Inputs{Script: j.Script, Args: j.Args, Python: j.Python, PythonEnv: j.PythonEnv,
		SrcDir: j.SrcDir, Env: j.Env, Files: j.Files, Archives: j.Archives})
}

func invalidf(format string, args ...any) error {
	return &taskspec.ValidationError{Message: fmt.Sprintf(format, args...)}
}
