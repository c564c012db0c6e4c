package main

import (
	"context"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tfyarn/tfyarn/client"
)

// connection is the global flags' client.Connection: --conf-dir (else the
// environment), --principal, --keytab and --timeout for each call. It
// remembers where the configuration comes from, for messages.
func (e *env) connection() (client.Connection, error) {
	conn := client.Connection{ConfDir: e.confDir, Principal: e.principal, Keytab: e.keytab, CallTimeout: e.timeout}
	if e.confDir != "" {
		e.confFrom = "--conf-dir=" + e.confDir
		if st, err := os.Stat(e.confDir); err != nil || !st.IsDir() {
			return conn, usagef("--conf-dir %s is not a directory; point it at the directory holding core-site.xml and yarn-site.xml", e.confDir)
		}
		return conn, nil
	}
	e.confFrom = client.EnvHadoopConfDir + "=" + os.Getenv(client.EnvHadoopConfDir)
	if os.Getenv(client.EnvHadoopConfDir) == "" {
		e.confFrom = "the environment"
	}
	return conn, nil
}

// withClient connects to the cluster (see connection), calls f with a
// context bounded by limit (--timeout for most commands; 0: only by
// parent) and closes the connections after.
func (e *env) withClient(parent context.Context, limit time.Duration, f func(ctx context.Context, c *client.Client) error) error {
	conn, err := e.connection()
	if err != nil {
		return err
	}
	c, err := client.Connect(conn)
	if err != nil {
		return &confError{err}
	}
	defer c.Close()
	ctx := parent
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, limit)
		defer cancel()
	}
	return f(ctx, c)
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
