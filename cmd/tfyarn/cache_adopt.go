package main

import (
	"errors"
	"fmt"
	"path"

	"github.com/urfave/cli/v2"

	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// cacheAdoptCommand makes other users' uploads to a shared cache directory
// usable by everyone: run uses only the entries of the user, of the
// directory's owner and of the superuser (hdfs.SharedCache), so another
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
			target := path.Clean(args[0])
			dir, one := target, false
			if _, ok := hdfs.SharedDigest(path.Dir(target), target); ok {
				dir, one = path.Dir(target), true
			}
			return e.withHDFS(c.Context, func(fs *hdfs.FS) error {
				sc, err := fs.OpenSharedCache(c.Context, dir, hdfs.SharedCacheOptions{})
				if err != nil {
					return err
				}
				var adopted, trusted, failed int
				report := func(a hdfs.Adopted, err error) {
					var ae *hdfs.AdoptError
					switch {
					case errors.As(err, &ae):
						failed++
						fmt.Fprintf(e.stderr, "tfyarn: %s\n", ae.Error())
					case err != nil:
						failed++
						msg, _ := describe(err, e)
						fmt.Fprintf(e.stderr, "tfyarn: %s\n", msg)
					case a.Trusted:
						trusted++
						if one {
							fmt.Fprintf(e.stdout, "%s is %s's already: used by everyone\n", a.Path, a.Owner)
						}
					default:
						adopted++
						fmt.Fprintf(e.stdout, "adopted %s (was %s's, %d bytes): now %s's, used by everyone\n", a.Path, a.Owner, a.Size, fs.User())
					}
				}
				if one {
					a, err := sc.Adopt(c.Context, target)
					var na *hdfs.NotAdminError
					if errors.As(err, &na) {
						return err
					}
					report(a, err)
				} else {
					if err := sc.AdoptAll(c.Context, report); err != nil {
						return err
					}
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
