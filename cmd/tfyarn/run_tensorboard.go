package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/taskspec"
)

// tensorBoardFlags are run's --tensorboard [SPEC] and --logdir PATH.
func tensorBoardFlags() []cli.Flag {
	return []cli.Flag{
		&cli.GenericFlag{Name: "tensorboard", Value: &optionalSpec{}, Usage: "run TensorBoard as a task of the job, in a container of `[=SPEC]` (default " + client.DefaultTensorBoardSpec + "): from the job's Python, on --logdir, outside TF_CONFIG's cluster, stopped once the chief succeeded; its URL is printed, shown by status and on the web UI"},
		&cli.StringFlag{Name: "logdir", Usage: "the log `PATH` TensorBoard serves (where the job writes its summaries: a path every node sees, or hdfs://...)"},
	}
}

// optionalSpec is a flag whose value is optional: Go's flag package gives
// a bare --tensorboard the value "true", as to a bool flag.
type optionalSpec struct{ value string }

func (o *optionalSpec) Set(v string) error { o.value = v; return nil }
func (o *optionalSpec) String() string     { return o.value }
func (o *optionalSpec) IsBoolFlag() bool   { return true }

// checkTensorBoardArgv refuses a spec typed as a separate argument after a
// bare --tensorboard: the flag package, seeing a bool-like flag, left it as
// the first argument and stopped reading flags there, so it would run as
// the job's command.
func checkTensorBoardArgv(c *cli.Context, argv []string) error {
	o, ok := c.Generic("tensorboard").(*optionalSpec)
	if !ok || o.value != "true" || len(argv) == 0 {
		return nil
	}
	if _, err := taskspec.ParseSpec(taskspec.TensorBoard, argv[0]); err != nil {
		return nil
	}
	return usagef("--tensorboard %s: write --tensorboard=%s (a bare --tensorboard takes the default %s)", argv[0], argv[0], client.DefaultTensorBoardSpec)
}

// applyTensorBoard adds the TensorBoard task of --tensorboard and --logdir
// to job, whose other groups are in place.
func applyTensorBoard(c *cli.Context, job *client.Job) error {
	job.TensorBoardLogDir = c.String("logdir")
	if !c.IsSet("tensorboard") {
		if job.TensorBoardLogDir != "" {
			return usagef("--logdir %q is TensorBoard's: add --tensorboard [SPEC]", job.TensorBoardLogDir)
		}
		return nil
	}
	spec := c.Generic("tensorboard").(*optionalSpec).value
	if spec == "true" {
		spec = client.DefaultTensorBoardSpec
	}
	g, err := taskspec.ParseSpec(taskspec.TensorBoard, spec)
	if err != nil {
		return err
	}
	if c.Bool("local") {
		return usagef("--tensorboard runs on YARN only; leave it out with --local")
	}
	if job.TensorBoardLogDir == "" {
		return usagef("--tensorboard needs the log directory to serve: --logdir PATH")
	}
	if job.Success == "" {
		// TensorBoard never exits by itself: the chief's rule stops it.
		job.Success = taskspec.SuccessChief
	}
	job.Tasks = append(job.Tasks, g)
	return nil
}

// printTensorBoard prints the TensorBoard task's URL once it registered.
func printTensorBoard(w io.Writer, ev client.Event) {
	if ev.TensorBoardURL == "" {
		return
	}
	fmt.Fprintf(w, "%s TensorBoard: %s\n", ev.AppID, ev.TensorBoardURL)
}
