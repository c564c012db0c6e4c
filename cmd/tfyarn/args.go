package main

import (
	"flag"
	"strings"

	"github.com/urfave/cli/v2"
)

// positional returns the command's positional arguments, applying any flags
// that follow them. urfave/cli stops parsing flags at the first argument
// (Go's flag package does), but `tfyarn status ID --output json` is how
// people type it.
func positional(c *cli.Context) ([]string, error) {
	var pos []string
	args := c.Args().Slice()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := lookupFlag(c, name)
		if f == nil {
			return nil, usagef("flag provided but not defined: %s; see 'tfyarn %s --help'", a, c.Command.Name)
		}
		if !hasValue {
			if isBool(f) {
				value = "true"
			} else if i+1 < len(args) {
				i++
				value = args[i]
			} else {
				return nil, usagef("flag needs an argument: %s; see 'tfyarn %s --help'", a, c.Command.Name)
			}
		}
		// Set the primary name: aliases are separate entries in the flag set.
		if err := c.Set(f.Names()[0], value); err != nil {
			return nil, usagef("invalid value %q for flag %s: %v", value, a, err)
		}
	}
	return pos, nil
}

func lookupFlag(c *cli.Context, name string) cli.Flag {
	for _, f := range c.Command.Flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func isBool(f cli.Flag) bool {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	if err := f.Apply(fs); err != nil {
		return false
	}
	fl := fs.Lookup(f.Names()[0])
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
