//go:build bench

package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
)

// krbRow is one command timed on the Kerberized cluster.
type krbRow struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	// Login is where the CLI's Kerberos credentials come from.
	Login string `json:"login"`
	Stats stats  `json:"stats"`
}

// krbPair is tfyarn and Hadoop's Java CLI doing the same thing.
type krbPair struct {
	What   string `json:"what"`
	Tfyarn krbRow `json:"tfyarn"`
	Java   krbRow `json:"java"`
	// SpeedupMedian is Java's median over tfyarn's: how many times faster tfyarn is.
	SpeedupMedian float64 `json:"speedup_median"`
	SpeedupP90    float64 `json:"speedup_p90"`
}

type krbResult struct {
	machine
	Realm         string    `json:"realm"`
	Principal     string    `json:"principal"`
	KDC           string    `json:"kdc"`
	RPCProtection string    `json:"hadoop_rpc_protection"`
	Application   string    `json:"application"`
	AppCommand    string    `json:"application_command"`
	Pairs         []krbPair `json:"pairs"`
	// Keytab is `tfyarn --principal P --keytab K status ID`: a fresh AS exchange with the KDC
	// on every run, no ticket cache.
	Keytab krbRow `json:"keytab"`
	// KeytabOverCCacheMedian is the keytab row's median over the ticket-cache status median.
	KeytabOverCCacheMedian float64 `json:"keytab_over_ccache_median"`
	// KeytabSpeedupMedian is Java's status median (ticket cache) over the keytab row's.
	KeytabSpeedupMedian float64 `json:"keytab_speedup_median"`
}

var krbSubmitted = regexp.MustCompile(`(application_\d+_\d+) submitted`)

// TestBenchKerberos times tfyarn against Hadoop's Java CLI on the Kerberized test cluster
// (GSSAPI, hadoop.rpc.protection=privacy): `status ID` and `list`, both from alice's ticket
// cache, plus `tfyarn --principal --keytab status ID`, which logs in from the keytab (an AS
// exchange with the KDC) on every run. One application submitted with `tfyarn run` is RUNNING
// throughout; the commands alternate so all see the same load.
func TestBenchKerberos(t *testing.T) {
	c := clustertest.RequireKerberos(t)
	require.Equal(t, "kerberos", c.Profile)
	k := c.Kerberos
	require.NotNil(t, k)
	bin := tfyarnBin(t, c)
	runs := benchRuns(t)
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	protection := conf.GetDefault("hadoop.rpc.protection", "authentication")
	require.Equal(t, "kerberos", conf.GetDefault("hadoop.security.authentication", "simple"))

	id := krbSubmitSleeper(t, c, bin)
	hadoop := filepath.Join(c.Root, "testcluster", "hadoop.sh")
	ccache := c.Env()
	// The keytab row has no ticket cache at all: the keytab is its only credential.
	noTicket := c.Env("KRB5CCNAME=FILE:/nonexistent/tfyarn-bench-ccache")

	type cmd struct {
		row  krbRow
		argv []string
		env  []string
		want string
		ms   []float64
	}
	tfStatus := &cmd{row: krbRow{Name: "tfyarn status", Command: "bin/tfyarn status " + id, Login: "ticket cache (KRB5CCNAME)"},
		argv: []string{bin, "status", id}, env: ccache, want: "RUNNING"}
	jvStatus := &cmd{row: krbRow{Name: "yarn application -status", Command: "testcluster/hadoop.sh yarn application -status " + id, Login: "ticket cache (KRB5CCNAME)"},
		argv: []string{hadoop, "yarn", "application", "-status", id}, env: ccache, want: "RUNNING"}
	ktStatus := &cmd{row: krbRow{Name: "tfyarn status (keytab)", Command: fmt.Sprintf("bin/tfyarn --principal %s --keytab %s status %s", k.Principal, k.Keytab, id),
		Login: "keytab (AS exchange with the KDC each run; KRB5CCNAME points nowhere)"},
		argv: []string{bin, "--principal", k.Principal, "--keytab", k.Keytab, "status", id}, env: noTicket, want: "RUNNING"}
	tfList := &cmd{row: krbRow{Name: "tfyarn list", Command: "bin/tfyarn list", Login: "ticket cache (KRB5CCNAME)"},
		argv: []string{bin, "list"}, env: ccache, want: id}
	jvList := &cmd{row: krbRow{Name: "yarn application -list", Command: "testcluster/hadoop.sh yarn application -list", Login: "ticket cache (KRB5CCNAME)"},
		argv: []string{hadoop, "yarn", "application", "-list"}, env: ccache, want: id}
	all := []*cmd{tfStatus, jvStatus, ktStatus, tfList, jvList}

	// One unmeasured run each: page cache, the JVM's class data, the RM's and KDC's first-call paths.
	for _, x := range all {
		krbTimeRun(t, x.env, x.argv, x.want)
	}
	for i := 0; i < runs; i++ {
		for _, x := range all {
			x.ms = append(x.ms, krbTimeRun(t, x.env, x.argv, x.want))
		}
	}
	for _, x := range all {
		x.row.Stats = summarize(x.ms)
	}
	pair := func(what string, tf, jv *cmd) krbPair {
		return krbPair{What: what, Tfyarn: tf.row, Java: jv.row,
			SpeedupMedian: round2(jv.row.Stats.MedianMS / tf.row.Stats.MedianMS),
			SpeedupP90:    round2(jv.row.Stats.P90MS / tf.row.Stats.P90MS)}
	}
	r := krbResult{
		machine:       newMachine(t, c.Root, "kerberos"),
		Realm:         k.Realm,
		Principal:     k.Principal,
		KDC:           k.KDC,
		RPCProtection: protection,
		Application:   id,
		AppCommand:    "bin/tfyarn run --worker 1c,256m --name bench-krb -- sleep 600",
		Pairs:         []krbPair{pair("status", tfStatus, jvStatus), pair("list", tfList, jvList)},
		Keytab:        ktStatus.row,
	}
	r.KeytabOverCCacheMedian = round2(ktStatus.row.Stats.MedianMS / tfStatus.row.Stats.MedianMS)
	r.KeytabSpeedupMedian = round2(jvStatus.row.Stats.MedianMS / ktStatus.row.Stats.MedianMS)
	writeResults(t, c, "kerberos", r, krbMarkdown(r))
	for _, p := range r.Pairs {
		t.Logf("%s: tfyarn median %.1f ms p90 %.1f ms; Java median %.1f ms p90 %.1f ms; %.1fx faster (median)",
			p.What, p.Tfyarn.Stats.MedianMS, p.Tfyarn.Stats.P90MS, p.Java.Stats.MedianMS, p.Java.Stats.P90MS, p.SpeedupMedian)
	}
	t.Logf("status from the keytab: median %.1f ms p90 %.1f ms (%.2fx the ticket cache's median; Java/keytab %.1fx)",
		r.Keytab.Stats.MedianMS, r.Keytab.Stats.P90MS, r.KeytabOverCCacheMedian, r.KeytabSpeedupMedian)
}

// krbSubmitSleeper starts `bin/tfyarn run ... -- sleep 600` as alice (ticket cache) in the
// background and returns its application id once the application is RUNNING. Cleanup kills it
// with `tfyarn kill` and waits for `tfyarn run` to end.
func krbSubmitSleeper(t *testing.T, c *clustertest.Cluster, bin string) string {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "run", "--worker", "1c,256m", "--name", "bench-krb", "--", "sleep", "600")
	cmd.Env = c.Env()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout // the same pipe: the log has both
	require.NoError(t, cmd.Start())

	var (
		logMu sync.Mutex
		log   bytes.Buffer // what `tfyarn run` printed, for failure messages
	)
	idc := make(chan string, 1)
	running := make(chan struct{})
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stdout)
		id, isRunning := "", false
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			log.WriteString(line + "\n")
			logMu.Unlock()
			if m := krbSubmitted.FindStringSubmatch(line); m != nil && id == "" {
				id = m[1]
				idc <- id
			}
			if id != "" && !isRunning && line == id+" RUNNING" {
				isRunning = true
				close(running)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	exited := make(chan error, 1)
	go func() {
		<-scanned
		exited <- cmd.Wait()
	}()

	var id string
	t.Cleanup(func() {
		defer cancel()
		if id == "" {
			cancel() // nothing submitted: no application to kill
		} else {
			kctx, kcancel := context.WithTimeout(context.Background(), time.Minute)
			defer kcancel()
			kill := exec.CommandContext(kctx, bin, "kill", id)
			kill.Env = c.Env()
			if out, err := kill.CombinedOutput(); err != nil {
				t.Errorf("tfyarn kill %s: %v\n%s", id, err, out)
			}
		}
		select {
		case <-exited:
		case <-time.After(time.Minute):
			t.Errorf("tfyarn run did not end within 1m of tfyarn kill")
		}
	})
	fail := func(what string) {
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("tfyarn run: %s\nstdout:\n%s", what, log.String())
	}
	select {
	case id = <-idc:
	case err := <-exited:
		fail(fmt.Sprintf("ended before submitting: %v", err))
	case <-time.After(2 * time.Minute):
		fail("not submitted within 2m")
	}
	select {
	case <-running:
	case err := <-exited:
		fail(fmt.Sprintf("ended before RUNNING: %v", err))
	case <-time.After(2 * time.Minute):
		fail("not RUNNING within 2m")
	}
	return id
}

// krbTimeRun is timeRun with an explicit environment.
func krbTimeRun(t *testing.T, env, argv []string, want string) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	require.NoError(t, err, "%s\n%s", strings.Join(argv, " "), out.String())
	require.Contains(t, out.String(), want, strings.Join(argv, " "))
	return float64(took.Microseconds()) / 1000
}

func krbMarkdown(r krbResult) string {
	var b strings.Builder
	row := func(x krbRow) {
		s := x.Stats
		fmt.Fprintf(&b, "| `%s` | %s | %.1f | %.1f | %.1f | %.1f |\n", x.Command, x.Login, s.MedianMS, s.P90MS, s.MinMS, s.MaxMS)
	}
	fmt.Fprintf(&b, "# tfyarn vs Hadoop's Java CLI on the Kerberized cluster\n\n")
	fmt.Fprintf(&b, "Wall time of one CLI invocation, %d runs each, the five commands alternating in the order below,\n", r.Pairs[0].Tfyarn.Stats.Runs)
	fmt.Fprintf(&b, "after one unmeasured warm-up run each. Produced by `make bench` (bench/run.sh → bench/kerberos_bench_test.go):\n")
	fmt.Fprintf(&b, "`go test -tags bench -run '^TestBenchKerberos$' -count=1 -v ./bench/`.\n\n")
	fmt.Fprintf(&b, "%s", r.markdown(fmt.Sprintf(" with Kerberos: in-JVM KDC at %s, realm %s", r.KDC, r.Realm)))
	fmt.Fprintf(&b, "- Security: hadoop.security.authentication=kerberos, hadoop.rpc.protection=%s (SASL GSSAPI, auth-conf)\n", r.RPCProtection)
	fmt.Fprintf(&b, "- User: %s; the ticket cache is the cluster's (KRB5CCNAME=FILE:…, KRB5_CONFIG=its krb5.conf)\n", r.Principal)
	fmt.Fprintf(&b, "- Application: %s, RUNNING throughout, submitted as the user with `%s`\n\n", r.Application, r.AppCommand)
	fmt.Fprintf(&b, "| command | credentials | median (ms) | p90 (ms) | min (ms) | max (ms) |\n|---|---|---:|---:|---:|---:|\n")
	for _, p := range r.Pairs {
		row(p.Tfyarn)
		row(p.Java)
		if p.What == "status" {
			row(r.Keytab)
		}
	}
	fmt.Fprintf(&b, "\n")
	for _, p := range r.Pairs {
		fmt.Fprintf(&b, "Ratio Java / tfyarn, `%s`: **%.1fx** at the median, %.1fx at p90.\n", p.What, p.SpeedupMedian, p.SpeedupP90)
	}
	fmt.Fprintf(&b, "`status` from the keytab takes %.2fx the ticket cache's median; Java (ticket cache) / tfyarn (keytab): **%.1fx** at the median.\n\n",
		r.KeytabOverCCacheMedian, r.KeytabSpeedupMedian)
	fmt.Fprintf(&b, "The Java side is Hadoop's own ApplicationCLI started by testcluster/hadoop.sh, the equivalent of\n"+
		"bin/yarn (a shell wrapper starting a fresh JVM with -Xmx512m); its UGI logs in from the same ticket cache.\n"+
		"All read the same HADOOP_CONF_DIR and ask the same RM. Each process authenticates afresh: a service\n"+
		"ticket for the RM from the KDC (TGS exchange), then the SASL GSSAPI handshake; the keytab row first gets\n"+
		"a TGT (AS exchange) as well. `tfyarn list` shows the user's active applications, `yarn application -list`\n"+
		"every user's SUBMITTED/ACCEPTED/RUNNING ones; here both print the same single application.\n")
	return b.String()
}
