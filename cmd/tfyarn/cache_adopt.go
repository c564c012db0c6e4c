package main

import (
	"context"
	"fmt"
	"path"

	"github.com/urfave/cli/v2"

	"github.com/tfyarn/tfyarn/client"
)

// cacheAdoptCommand makes other users' uploads to a shared cache directory
// usable by everyone: run uses only the entries of the user, of the
// directory's owner and of the superuser (client.Client.AdoptCache), so another
// user's upload is shared only once an administrator vouched for it.
func cacheAdoptCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "adopt",
		Usage: "make other users' uploads to a shared cache directory usable by everyone (its owner or the superuser)",
		UsageText: "tfyarn cache adopt DIR\n" +
			"   tfyarn cache adopt DIR/<sha256>-<name>",
		Description: "run --cache-dir uses only your own entries and those of the directory's owner and of the\n" +
			"HDFS superuser: another user could rewrite theirs at any time. Adopting reads another user's\n" +
			"entry into a copy in your name, checks its sha256 against the entry's name and renames the copy\n" +
			"over the entry (atomically), so that only you can change it from then on. Run it as the\n" +
			"directory's owner or the superuser; with DIR, every entry of another user is adopted. An entry\n" +
			"whose content is not its name's is left as it is and said (exit code 1). NodeManagers download an\n" +
			"adopted entry again once; a job of its former owner still localizing it then fails (resubmit).",
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			args, err := positional(c)
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return usagef("cache adopt needs a shared cache directory or one entry of it, e.g. tfyarn cache adopt /shared/tfyarn-cache")
			}
			var adopted, trusted, failed int
			var trustedOne client.CacheAdoption // told only when adopting one entry
			report := func(a client.CacheAdoption, err error) {
				switch {
				case err != nil:
					failed++
					msg, _ := describe(err, e)
					fmt.Fprintf(e.stderr, "tfyarn: %s\n", msg)
				case a.Trusted:
					trusted++
					trustedOne = a
				default:
					adopted++
					fmt.Fprintf(e.stdout, "adopted %s (was %s's, %d bytes): now %s's, used by everyone\n", a.Path, a.Owner, a.Size, a.Adopter)
				}
			}
			target := path.Clean(args[0])
			return e.withClient(c.Context, 0, func(ctx context.Context, cl *client.Client) error {
				one, err := cl.AdoptCache(ctx, target, report)
				if err != nil {
					return err
				}
				dir := target
				if one {
					dir = path.Dir(target)
					if trusted > 0 {
						fmt.Fprintf(e.stdout, "%s is %s's already: used by everyone\n", trustedOne.Path, trustedOne.Owner)
					}
				} else {
					fmt.Fprintf(e.stdout, "adopted %d %s; %d already the administrator's\n", adopted, cacheNoun(adopted, "entry", "entries"), trusted)
				}
				if failed > 0 {
					return &exitCodeError{code: exitJobFailed, err: fmt.Errorf("%d %s of %s not adopted", failed, cacheNoun(failed, "entry", "entries"), dir)}
				}
				return nil
			})
		},
	}
}
