package main

import (
	"github.com/tfyarn/tfyarn/internal/appmaster"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/urfave/cli/v2"
)

// amCommand is the ApplicationMaster, run by YARN in the AM container from
// the binary the client shipped. Hidden: users never type it.
func amCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:   "am",
		Usage:  "run the ApplicationMaster (started by YARN)",
		Hidden: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "job", Value: contract.JobFileName, Usage: "the job description"},
		},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			_, err := appmaster.RunAM(c.Context, appmaster.AMOptions{JobFile: c.String("job"), Log: e.stderr})
			return err
		},
	}
}
