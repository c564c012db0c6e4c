package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/tfyarn/tfyarn/internal/progressbar"
)

func cacheCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "cache",
		Usage: "list or clean your content-addressed HDFS cache (/user/<you>/.tfyarn/cache), or make a shared one (init, adopt)",
		UsageText: "tfyarn cache list [--output table|json]\n" +
			"   tfyarn cache clean --older-than 30d [--dry-run] [--output table|json]\n" +
			"   tfyarn cache init DIR\n" +
			"   tfyarn cache adopt DIR|DIR/<sha256>-<name>",
		Subcommands:  []*cli.Command{cacheListCommand(e), cacheCleanCommand(e), cacheInitCommand(e), cacheAdoptCommand(e)},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("unknown cache command %q: expected list, clean, init or adopt", c.Args().First())
			}
			return usagef("cache needs a command: list, clean, init or adopt; see 'tfyarn cache --help'")
		},
	}
}

func cacheListCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "list",
		Usage:        "list cached files with their size, upload time and last use",
		UsageText:    "tfyarn cache list [--output table|json]",
		Flags:        []cli.Flag{outputFlag()},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			format, err := outputNoArgs(c, "cache list")
			if err != nil {
				return err
			}
			return e.withClient(c.Context, 0, func(ctx context.Context, cl *client.Client) error {
				entries, err := cl.Cache(ctx)
				if err != nil {
					return err
				}
				return printCache(e, format, cacheView(entries, false, false))
			})
		},
	}
}

func cacheCleanCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "clean",
		Usage: "remove cached files not used for a while (and abandoned partial uploads)",
		UsageText: "tfyarn cache clean --older-than AGE [--dry-run] [--output table|json]\n\n" +
			"   tfyarn cache clean --older-than 30d --dry-run\n" +
			"   tfyarn cache clean --older-than 12h",
		Description: "Also removes the staging directories (/user/<you>/.tfyarn/application_*) of applications\n" +
			"that have ended, which a crashed client and ApplicationMaster leave behind, asking the\n" +
			"ResourceManager about each (one it does not know counts as ended once 10 minutes old); never\n" +
			"one of a running or accepted application. They are listed as \"staging\" (JSON: staging).\n" +
			"AGE is a number of days (30d) or a Go duration (12h, 90m). A file's age counts from its\n" +
			"last use: the later of its upload and the NameNode's last read (access times are coarse,\n" +
			"1 h by default). Removing a file an application is still localizing fails that application:\n" +
			"keep AGE well beyond your jobs' run time.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "older-than", Usage: "remove files last used longer ago than this (30d, 12h)"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "only list what would be removed"},
			outputFlag(),
		},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			format, err := outputNoArgs(c, "cache clean")
			if err != nil {
				return err
			}
			if !c.IsSet("older-than") {
				return usagef("cache clean needs --older-than (e.g. --older-than 30d)")
			}
			age, err := parseCacheAge(c.String("older-than"))
			if err != nil {
				return err
			}
			dry := c.Bool("dry-run")
			return e.withClient(c.Context, 0, func(ctx context.Context, cl *client.Client) error {
				entries, err := cl.CleanCache(ctx, age, dry)
				if err != nil {
					return err
				}
				l := cacheView(entries, true, dry)
				l.Staging = []client.OrphanedStaging{}
				if orphans, err := cl.CleanStaging(ctx, dry); err != nil {
					msg, _ := describe(err, e)
					fmt.Fprintf(e.stderr, "tfyarn: staging directories not checked: %s\n", msg)
				} else if orphans != nil {
					l.Staging = orphans
				}
				return printCache(e, format, l)
			})
		},
	}
}

// parseCacheAge reads "30d" (days, which Go durations lack) or a Go duration.
func parseCacheAge(s string) (time.Duration, error) {
	bad := usagef("--older-than %q: expected days like 30d or a duration like 12h", s)
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseFloat(n, 64)
		if err != nil || days < 0 || days > 100*365 {
			return 0, bad
		}
		return time.Duration(days * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, bad
	}
	return d, nil
}

type cacheEntryView struct {
	Digest   string `json:"digest"`
	Name     string `json:"name"`
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	Uploaded string `json:"uploaded"`
	LastUsed string `json:"last_used"`
}

type cacheListing struct {
	Entries []cacheEntryView `json:"entries"`
	Files   int              `json:"files"`
	Bytes   int64            `json:"bytes"`
	// Staging are the orphaned staging directories clean removed (or
	// would remove); absent from list.
	Staging []client.OrphanedStaging `json:"staging,omitempty"`
	// For clean: Removed is true when the files are gone, false on --dry-run.
	Clean   bool  `json:"-"`
	Removed *bool `json:"removed,omitempty"`
}

func cacheView(entries []client.CacheEntry, clean, dry bool) cacheListing {
	l := cacheListing{Entries: []cacheEntryView{}, Clean: clean}
	if clean {
		removed := !dry
		l.Removed = &removed
	}
	for _, en := range entries {
		l.Entries = append(l.Entries, cacheEntryView{
			Digest:   en.Digest,
			Name:     en.Name,
			Path:     en.Path,
			Size:     en.Size,
			Uploaded: en.Uploaded.UTC().Format(time.RFC3339),
			LastUsed: en.LastUsed.UTC().Format(time.RFC3339),
		})
		l.Files++
		l.Bytes += en.Size
	}
	return l
}

func printCache(e *env, format string, l cacheListing) error {
	if format == outputJSON {
		return cliout.JSON(e.stdout, l)
	}
	if len(l.Entries) > 0 {
		t := cliout.NewTable("DIGEST", "NAME", "SIZE", "UPLOADED", "LAST-USED")
		for _, v := range l.Entries {
			t.Row(v.Digest[:12], v.Name, progressbar.Bytes(v.Size), v.Uploaded, v.LastUsed)
		}
		if _, err := t.WriteTo(e.stdout); err != nil {
			return err
		}
	}
	for _, o := range l.Staging {
		what := "removed"
		if !*l.Removed {
			what = "would remove"
		}
		fmt.Fprintf(e.stdout, "%s staging %s of %s (%s)\n", what, o.Path, o.AppID, o.State)
	}
	verb := "cached"
	switch {
	case l.Clean && *l.Removed:
		verb = "removed"
	case l.Clean:
		verb = "would remove"
	}
	_, err := fmt.Fprintf(e.stdout, "%s %d %s, %s\n", verb, l.Files, cacheNoun(l.Files, "file", "files"), progressbar.Bytes(l.Bytes))
	return err
}

func cacheNoun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
