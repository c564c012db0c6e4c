package main

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// withRM connects to the ResourceManager, calls f with a context bounded by
// limit (--timeout for most commands) and closes the connection after.
// conf is the loaded client configuration, for commands that read it too.
func (e *env) withRM(parent context.Context, limit time.Duration, f func(ctx context.Context, rm *yarn.ApplicationClient, conf *hadoopconf.Config) error) error {
	rm, conf, err := e.rmClient()
	if err != nil {
		return err
	}
	defer rm.Close()
	ctx, cancel := context.WithTimeout(parent, limit)
	defer cancel()
	return f(ctx, rm, conf)
}

// withHDFS connects to the default filesystem (see cacheFS), calls f and
// closes the connection after. Only the connection is bounded by --timeout:
// what f does may take as long as it takes.
func (e *env) withHDFS(ctx context.Context, f func(fs *hdfs.FS) error) error {
	fs, err := e.cacheFS(ctx)
	if err != nil {
		return err
	}
	defer fs.Close()
	return f(fs)
}

// outputNoArgs is the start of a command that takes no positional
// arguments and has --output: it applies flags typed after arguments
// (positional), refuses any argument and returns the output format.
func outputNoArgs(c *cli.Context, name string) (string, error) {
	args, err := positional(c)
	if err != nil {
		return "", err
	}
	if len(args) > 0 {
		return "", usagef("%s takes no arguments, got %q; see 'tfyarn %s --help'", name, args[0], name)
	}
	return outputFormat(c)
}
