package main

import (
	"fmt"

	"github.com/tfyarn/tfyarn/internal/buildinfo"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/urfave/cli/v2"
)

// versionFlag is the global --version, which prints what tfyarn version
// does.
var versionFlag = &cli.BoolFlag{Name: "version", Usage: "print tfyarn's version and exit (as 'tfyarn version')"}

func versionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print tfyarn's version, commit, commit date, Go version and platform",
		UsageText: "tfyarn version [--output json]\n\n" +
			"   tfyarn version\n" +
			"   tfyarn --version\n" +
			"   tfyarn version --output json | jq -r .version",
		Description: "The version is a release's (v1.2.0) or devel for a build from a checkout, with -dirty\n" +
			"when the tree had uncommitted changes; the date is the commit's, so builds are reproducible.\n" +
			"JSON keys: version, commit, commit_time, dirty, go_version, platform.",
		Flags:        []cli.Flag{outputFlag()},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			out, err := outputNoArgs(c, "version")
			if err != nil {
				return err
			}
			return printVersion(e, out)
		},
	}
}

func printVersion(e *env, out string) error {
	info := buildinfo.Current()
	if out == outputJSON {
		return cliout.JSON(e.stdout, info)
	}
	_, err := fmt.Fprintln(e.stdout, info)
	return err
}
