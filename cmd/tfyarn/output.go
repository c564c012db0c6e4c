package main

import "github.com/urfave/cli/v2"

const (
	outputTable = "table"
	outputJSON  = "json"
)

func outputFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: outputTable, Usage: "table or json"}
}

func outputFormat(c *cli.Context) (string, error) {
	switch o := c.String("output"); o {
	case outputTable, outputJSON:
		return o, nil
	default:
		return "", usagef("--output %q: expected table or json", o)
	}
}
