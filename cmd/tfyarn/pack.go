package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/tfyarn/tfyarn/internal/progressbar"
)

func packCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "pack",
		Usage: "pack a venv or conda env into a relocatable, reproducible .tar.gz",
		UsageText: "tfyarn pack DIR [-o env.tar.gz] [--level N] [--output table|json]\n" +
			"   tfyarn pack VENV --layers -o DIR [--level N] [--output table|json]\n\n" +
			"   tfyarn pack ./venv -o env.tar.gz\n" +
			"   tfyarn pack ./venv --layers -o env-layers/   # the layers run --env ./venv ships\n" +
			"   tfyarn pack /opt/conda/envs/tf --output json | jq -r .sha256",
		Description: "The same environment always gives the same bytes (so the HDFS cache, keyed by sha256,\n" +
			"uploads it once). Scripts in bin/ get relative shebangs; __pycache__ and *.pyc are left out.\n" +
			"A venv links to its base interpreter: every node needs that interpreter at the same path\n" +
			"(tasks check it and say so). A conda env carries its own interpreter.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "env.tar.gz", Usage: "archive to write (replaced atomically)"},
			&cli.IntFlag{Name: "level", Value: client.DefaultPackLevel, Usage: "gzip level, 1 (fastest) to 9 (smallest)"},
			&cli.BoolFlag{Name: "layers", Usage: "write the layers `run --env VENV` ships (one archive per large distribution, the rest in groups) into the directory -o names"},
			// No -o alias here: -o is the archive, as in tar and the design's examples.
			&cli.StringFlag{Name: "output", Value: outputTable, Usage: "table or json"},
		},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			args, err := positional(c)
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return usagef("pack needs exactly one environment directory; see 'tfyarn pack --help'")
			}
			format, err := outputFormat(c)
			if err != nil {
				return err
			}
			out := c.String("out")
			if out == outputJSON || out == outputTable {
				return usagef("-o %s names the archive to write; for the report format use --output %s", out, out)
			}
			if l := c.Int("level"); l < 1 || l > 9 {
				return usagef("--level %d: expected 1 to 9", l)
			}
			start := time.Now()
			layers := c.Bool("layers")
			if layers && !c.IsSet("out") {
				return usagef("--layers writes several archives: name a new directory with -o DIR")
			}
			if err := checkPackPaths(args[0], out, layers); err != nil {
				return err
			}
			packed, err := client.Pack(c.Context, client.PackRequest{Dir: args[0], Out: out, Level: c.Int("level"), Layers: layers})
			if err != nil {
				return err
			}
			abs, _ := filepath.Abs(args[0])
			if layers {
				return printLayers(e, format, abs, out, packed, time.Since(start))
			}
			return printPack(e, format, abs, out, packed, time.Since(start))
		},
	}
}

// isVenv: a venv is a directory with a pyvenv.cfg file (PEP 405), as the
// --layers message says. client.Pack refuses other directories too, but the
// CLI names its flag and checks it first, before -o's checks, as it always did.
func isVenv(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "pyvenv.cfg"))
	return err == nil && st.Mode().IsRegular()
}

// checkPackPaths refuses, before anything is written, what the flags got
// wrong: a DIR that is not a directory (or, with --layers, not a venv),
// an existing -o for --layers, and an -o inside the environment (it would
// pack itself).
func checkPackPaths(dir, out string, layers bool) error {
	st, err := os.Stat(dir)
	switch {
	case layers && (err != nil || !st.IsDir() || !isVenv(dir)):
		return usagef("--layers: %s is not a venv (pyvenv.cfg): only a venv ships in layers", dir)
	case err != nil || !st.IsDir():
		return usagef("%s is not a directory: expected a venv (pyvenv.cfg) or a conda env (conda-meta/)", dir)
	}
	what := "the archive"
	if layers {
		if _, err := os.Lstat(out); err == nil {
			return usagef("-o %s exists: --layers writes a new directory", out)
		}
		what = "the layers"
	}
	absDir, err1 := filepath.Abs(dir)
	absOut, err2 := filepath.Abs(out)
	if err1 == nil && err2 == nil && strings.HasPrefix(absOut, absDir+string(filepath.Separator)) {
		return usagef("-o %s is inside the environment being packed; write %s elsewhere", out, what)
	}
	return nil
}

func printPack(e *env, format, dir, out string, m client.PackResult, took time.Duration) error {
	if format == outputJSON {
		return cliout.JSON(e.stdout, struct {
			Archive string `json:"archive"`
			client.PackResult
			Seconds float64 `json:"seconds"`
		}{out, m, took.Round(time.Millisecond).Seconds()})
	}
	var kv cliout.KeyValues
	py := ""
	if m.PythonVersion != "" {
		py = " (Python " + m.PythonVersion + ")"
	}
	kv.Add("Environment", fmt.Sprintf("%s %s%s", m.Kind, dir, py))
	kv.Add("Archive", fmt.Sprintf("%s, %s from %s in %d files, %d symlinks, %d dirs",
		out, progressbar.Bytes(m.ArchiveBytes), progressbar.Bytes(m.Bytes), m.Files, m.Symlinks, m.Dirs))
	kv.Add("SHA-256", m.SHA256)
	if m.BaseInterpreter != "" {
		kv.Add("Base interpreter", m.BaseInterpreter+" (every node needs it at this path)")
	}
	kv.Add("Shebangs rewritten", len(m.ShebangsRewritten))
	if n := len(m.PrefixTextFiles); n > 0 {
		kv.Add("Text files with prefix", fmt.Sprintf("%d (rewritten on the node at run time)", n))
	}
	if n := len(m.PrefixBinaryFiles); n > 0 {
		kv.Add("Binaries with prefix", fmt.Sprintf("%d, not rewritten: they work only where %s exists (e.g. %s)", n, m.Prefixes[0], m.PrefixBinaryFiles[0]))
	}
	if n := len(m.ExternalSymlinks); n > 0 {
		kv.Add("External symlinks", fmt.Sprintf("%d (e.g. %s -> %s)", n, m.ExternalSymlinks[0].Path, m.ExternalSymlinks[0].Target))
	}
	kv.Add("Skipped", fmt.Sprintf("%d __pycache__ dirs, %d .pyc files, %d special files",
		m.Skipped.PycacheDirs, m.Skipped.PycFiles, m.Skipped.Special))
	kv.Add("Time", took.Round(10*time.Millisecond))
	_, err := kv.WriteTo(e.stdout)
	return err
}

func printLayers(e *env, format, dir, out string, m client.PackResult, took time.Duration) error {
	if format == outputJSON {
		layers := m.Layers
		if layers == nil {
			layers = []client.PackLayer{}
		}
		return cliout.JSON(e.stdout, struct {
			Dir      string             `json:"dir"`
			Manifest client.PackResult  `json:"manifest"`
			Layers   []client.PackLayer `json:"layers"`
			SHA256   string             `json:"sha256"`
			Seconds  float64            `json:"seconds"`
		}{out, m, layers, m.LayersSHA256, took.Round(time.Millisecond).Seconds()})
	}
	fmt.Fprintf(e.stdout, "%s %s (Python %s): %d layers in %s, %s from %s in %d files, in %s\n\n", m.Kind, dir, m.PythonVersion,
		len(m.Layers), out, progressbar.Bytes(m.ArchiveBytes), progressbar.Bytes(m.Bytes), m.Files, took.Round(10*time.Millisecond))
	fmt.Fprintf(e.stdout, "%-40s %8s %10s %10s  %s\n", "LAYER", "FILES", "SIZE", "ARCHIVE", "SHA-256")
	for _, x := range m.Layers {
		name := x.Name
		if len(name) > 40 {
			name = name[:37] + "..."
		}
		fmt.Fprintf(e.stdout, "%-40s %8d %10s %10s  %s\n", name, x.Files, progressbar.Bytes(x.Bytes), progressbar.Bytes(x.ArchiveBytes), x.SHA256[:12])
	}
	return nil
}
