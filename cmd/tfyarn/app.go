package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// Exit codes, as documented in --help.
const (
	exitOK        = 0
	exitJobFailed = 1 // the job failed or was killed (run, later)
	exitUsage     = 2 // usage, validation, configuration or cluster-access error
)

const defaultTimeout = 15 * time.Second

// env is what every command shares: where output goes and the global flags.
type env struct {
	stdout, stderr io.Writer
	confDir        string // --conf-dir; empty: the environment decides
	timeout        time.Duration
	confFrom       string // "HADOOP_CONF_DIR=/x" or "--conf-dir=/x", for messages; set once conf loads

	// Kerberos: --principal and --keytab (global, or run's own).
	principal, keytab string

	// events is the --output events stream of run, wait and submit; nil otherwise.
	events *eventStream
}

// run executes the CLI with args (args[0] is the program name) and returns
// the process exit code. Tests call it in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr}
	if wantsEvents(args) {
		e.events = &eventStream{w: stdout}
	}
	app := newApp(e)
	err := app.RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	msg, code := describe(err, e)
	if msg != "" {
		fmt.Fprintf(stderr, "tfyarn: %s\n", oneLine(msg))
	}
	if e.events != nil {
		e.events.fail(oneLine(msg), code) // unless the job's result ended the stream
	}
	return code
}

func newApp(e *env) *cli.App {
	return &cli.App{
		Name:  "tfyarn",
		Usage: "run distributed TensorFlow on Hadoop YARN",
		UsageText: "tfyarn [global options] command [command options] [arguments...]\n\n" +
			"   tfyarn list --all-users\n" +
			"   tfyarn status application_1700000000000_0001\n" +
			"   tfyarn --conf-dir /etc/hadoop/conf cluster --output json",
		Description: "tfyarn talks to the ResourceManager named by the Hadoop client configuration\n" +
			"(HADOOP_CONF_DIR or --conf-dir). On a Kerberized cluster (hadoop.security.authentication=\n" +
			"kerberos) it uses the ticket cache kinit wrote (KRB5CCNAME, else /tmp/krb5cc_UID; krb5.conf\n" +
			"from KRB5_CONFIG, else /etc/krb5.conf), or --principal with --keytab.\n" +
			"Exit codes: 0 success, 1 the job failed or was killed, 2 usage, validation or cluster-access error.",
		Writer:          e.stdout,
		ErrWriter:       e.stderr,
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:        "conf-dir",
				Usage:       "Hadoop client configuration directory (default: $HADOOP_CONF_DIR)",
				Destination: &e.confDir,
			},
			&cli.StringFlag{
				Name:        "principal",
				Usage:       "Kerberos `PRINCIPAL` (user@REALM): the identity of --keytab, or the one the ticket cache must hold",
				Destination: &e.principal,
			},
			&cli.StringFlag{
				Name:        "keytab",
				Usage:       "log in to a Kerberized cluster from this `KEYTAB` as --principal instead of the ticket cache (kinit)",
				Destination: &e.keytab,
			},
			&cli.DurationFlag{
				Name:        "timeout",
				Usage:       "how long to wait for the ResourceManager, failover included",
				Value:       defaultTimeout,
				Destination: &e.timeout,
			},
			versionFlag,
		},
		Commands: []*cli.Command{
			runCommand(e),
			submitCommand(e),
			waitCommand(e),
			amCommand(e),
			taskCommand(e),
			listCommand(e),
			statusCommand(e),
			resultCommand(e),
			reportCommand(e),
			killCommand(e),
			logsCommand(e),
			clusterCommand(e),
			packCommand(e), cacheCommand(e), checkpointsCommand(e), versionCommand(e),
		},
		// No os.Exit inside the library: run maps errors to exit codes.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   onUsageError,
		Action: func(c *cli.Context) error {
			if c.Bool(versionFlag.Name) {
				return printVersion(e, outputTable)
			}
			if c.NArg() > 0 {
				return usagef("unknown command %q; see 'tfyarn --help'", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
	}
}

func onUsageError(c *cli.Context, err error, _ bool) error {
	return usagef("%v; see '%s --help'", err, commandPath(c))
}

// commandPath is the command c runs as the user types it ("tfyarn cache
// init"). The library's root context names a command too, the app itself:
// naming each context's command once gave "tfyarn tfyarn".
func commandPath(c *cli.Context) string {
	var names []string
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil && ctx.Command.Name != "" && ctx.Command.Name != c.App.Name {
			names = append([]string{ctx.Command.Name}, names...)
		}
	}
	return strings.Join(append([]string{c.App.Name}, names...), " ")
}

// oneLine keeps the error to one line: the contract is one line on stderr.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
