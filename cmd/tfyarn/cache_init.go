package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tfyarn/tfyarn/client"
)

// cacheInitCommand makes a shared cache directory: what an administrator
// would do with hdfs dfs -mkdir and -chmod 1777, checked the way run
// checks --cache-dir.
func cacheInitCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "make an HDFS directory a cache shared by all users (mode 1777, like /tmp), for run --cache-dir",
		UsageText: "tfyarn cache init DIR",
		Description: "Creates DIR (and missing parents) and sets mode 1777: everyone may add entries, only an\n" +
			"entry's owner may remove it. Run it as the directory's future owner (an administrator); a\n" +
			"directory that is already one is left as it is. Users then pass --cache-dir DIR to run, or the\n" +
			"administrator sets " + client.ConfCacheDir + "=DIR in the client configuration (core-site.xml).",
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			args, err := positional(c)
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return usagef("cache init needs one HDFS directory, e.g. tfyarn cache init /shared/tfyarn-cache")
			}
			dir := args[0]
			return e.withClient(c.Context, 0, func(ctx context.Context, cl *client.Client) error {
				if err := cl.MakeSharedCache(ctx, dir); err != nil {
					return err
				}
				_, err := fmt.Fprintf(e.stdout, "%s is a shared cache directory (mode 1777): use it with tfyarn run --cache-dir %s, or set %s=%s in the client configuration\n",
					dir, dir, client.ConfCacheDir, dir)
				return err
			})
		},
	}
}
