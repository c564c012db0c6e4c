// Command runonyarn runs examples/mwms_keras.py on YARN from Go: a chief and
// two workers under Keras' MultiWorkerMirroredStrategy, through
// client.RunOnYarn, the call `tfyarn run` is a thin layer over.
//
// From the repository root, with the test cluster up (make cluster-up), the
// tfyarn binary built (make build: the ApplicationMaster and every task's
// launcher are this static binary, shipped with the job) and the examples'
// Python environment made (bash scripts/tfenv.sh):
//
//	source .testcluster/env.sh   # HADOOP_CONF_DIR
//	go run ./examples/go/runonyarn -python $PWD/.venv/bin/python -- --epochs 1 --steps-per-epoch 5
//
// Flags: -python (the interpreter on the nodes: the test cluster's
// NodeManagers run on this machine, so the repository's venv works by
// absolute path; on a real cluster give a path every node has), -script (the
// script to ship, examples/mwms_keras.py), -queue (default), -tfyarn (the
// tfyarn binary to ship, bin/tfyarn), -name. Arguments after the flags go to
// the script. Ctrl-C kills the application. It prints the application id,
// how it ended and each task, and exits 0 when the job succeeded, 1 when it
// did not (or could not be submitted), 2 on bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/taskspec"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first Ctrl-C cancels ctx: RunOnYarn kills the application
		// and returns. A second one ends this program at once.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program, minus the process: flags in args, the result on
// stdout, errors on stderr; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("runonyarn", flag.ContinueOnError)
	fs.SetOutput(stderr)
	python := fs.String("python", client.DefaultPython, "Python `interpreter` on the nodes that runs the script")
	script := fs.String("script", "examples/mwms_keras.py", "the TensorFlow `script` to ship and run")
	queue := fs.String("queue", client.DefaultQueue, "YARN `queue`")
	tfyarn := fs.String("tfyarn", "bin/tfyarn", "the static tfyarn `binary` shipped as the ApplicationMaster and task launcher (make build)")
	name := fs.String("name", "runonyarn-mwms", "YARN application `name`")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: runonyarn [flags] [-- SCRIPT ARGS...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}

	job := client.Job{
		Job: taskspec.Job{
			Name:  *name,
			Queue: *queue,
			// One group per task type: a chief and two workers, 1 vcore and
			// 1 GiB each (the spec grammar's "1c,1g" and "2x1c,1g",
			// taskspec.ParseSpec, gives the same groups).
			Tasks: []taskspec.TaskGroup{
				{Type: taskspec.Chief, Instances: 1, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 1024}},
				{Type: taskspec.Worker, Instances: 2, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 1024}},
			},
			// A Script is shipped with the job (through the HDFS cache) and
			// run by Python in every task, with TF_CONFIG set; Args follow it.
			Script: *script,
			Args:   fs.Args(),
		},
		Python: *python,
		// The ApplicationMaster is tfyarn itself; without Binary the client
		// would ship this program's own executable.
		Binary: *tfyarn,
		// Success is left empty: a script job is decided by the chief
		// (taskspec.SuccessChief), as TensorFlow does.
	}

	// Where the job runs and as whom: the zero Connection reads
	// HADOOP_CONF_DIR and acts as HADOOP_USER_NAME (else the OS user), or
	// as the Kerberos ticket cache's principal on a Kerberized cluster.
	res, err := client.RunOnYarn(ctx, client.Connection{}, job)
	var jobErr *client.JobError
	if err != nil && !errors.As(err, &jobErr) && (res == nil || res.AppID == "") {
		// Not submitted: a validation, shipping or cluster error.
		fmt.Fprintf(stderr, "runonyarn: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "application: %s\n", res.AppID)
	fmt.Fprintf(stdout, "final status: %s (%s)\n", res.FinalStatus, res.State)
	if res.Diagnostics != "" {
		fmt.Fprintf(stdout, "diagnostics: %s\n", res.Diagnostics)
	}
	for _, task := range res.Tasks {
		exit := "-"
		if task.ExitCode != nil {
			exit = fmt.Sprint(*task.ExitCode)
		}
		fmt.Fprintf(stdout, "task %-9s %-10s %s:%d exit %s\n", task.Task, task.State, task.Host, task.Port, exit)
	}
	if err != nil && jobErr == nil {
		// Interrupted (the application was killed) or the RM stopped answering.
		fmt.Fprintf(stderr, "runonyarn: %v\n", err)
	}
	if err != nil || !res.Succeeded() {
		return 1
	}
	return 0
}
