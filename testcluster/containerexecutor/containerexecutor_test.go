package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	app  = "application_1764110000000_0007"
	cont = "container_1764110000000_0007_01_000002"
)

func codeOf(t *testing.T, err error) int {
	t.Helper()
	var f *failure
	if !errors.As(err, &f) {
		t.Fatalf("error %v carries no exit code", err)
	}
	return f.code
}

func launchArgs(local, logs, res string) []string {
	work := local + "/usercache/alice/appcache/" + app + "/" + cont
	priv := local + "/nmPrivate/" + app + "/" + cont
	return []string{"alice", "alice", "1", app, cont, work, priv + "/launch_container.sh",
		priv + "/" + cont + ".tokens", "--http", priv + "/" + cont + ".pid", local, logs, res}
}

func TestParseArgsOperations(t *testing.T) {
	r, err := parseArgs([]string{"--checksetup"})
	if err != nil || r.Op != opCheckSetup {
		t.Fatalf("--checksetup: %+v, %v", r, err)
	}
	r, err = parseArgs([]string{"alice", "alice", "0", app, cont, "/l/nmPrivate/t.tokens", "/l1%/l2", "/g1", "/usr/bin/java", "-cp", "x", "Main"})
	if err != nil || r.Op != opInitialize || len(r.LocalDirs) != 2 || r.LocalDirs[1] != "/l2" || strings.Join(r.Command, " ") != "/usr/bin/java -cp x Main" {
		t.Fatalf("initialize: %+v, %v", r, err)
	}
	r, err = parseArgs(launchArgs("/l", "/g", "cgroups=/sys/fs/cgroup/memory/y/"+cont+"/tasks%/sys/fs/cgroup/cpu/y/"+cont+"/tasks"))
	if err != nil || r.Op != opLaunch || len(r.CgroupTasks) != 2 || r.WorkDir != "/l/usercache/alice/appcache/"+app+"/"+cont {
		t.Fatalf("launch: %+v, %v", r, err)
	}
	r, err = parseArgs(launchArgs("/l", "/g", "cgroups=none"))
	if err != nil || r.CgroupTasks != nil {
		t.Fatalf("launch without cgroups: %+v, %v", r, err)
	}
	// Hadoop 3.2's NodeManagers (before AM HTTPS) send no --http.
	full := launchArgs("/l", "/g", "cgroups=none")
	r, err = parseArgs(append(append([]string{}, full[:8]...), full[9:]...))
	if err != nil || r.Op != opLaunch || r.PIDFile != full[9] || r.LogDirs[0] != "/g" {
		t.Fatalf("launch without --http (Hadoop 3.2): %+v, %v", r, err)
	}
	r, err = parseArgs([]string{"alice", "alice", "2", "4242", "15"})
	if err != nil || r.Op != opSignal || r.PID != 4242 || r.Signal != 15 {
		t.Fatalf("signal: %+v, %v", r, err)
	}
	r, err = parseArgs([]string{"alice", "alice", "3", "usercache/alice/appcache/" + app, "/l1", "/l2"})
	if err != nil || r.Op != opDelete || len(r.BaseDirs) != 2 {
		t.Fatalf("delete: %+v, %v", r, err)
	}
	r, err = parseArgs([]string{"alice", "alice", "5", "/l/usercache/alice"})
	if err != nil || r.Op != opList || r.Dir != "/l/usercache/alice" {
		t.Fatalf("list: %+v, %v", r, err)
	}
}

func TestParseArgsRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"nothing", nil, exitUsage},
		{"docker without file", []string{"--run-docker"}, exitUsage},
		{"docker two files", []string{"--run-docker", "/a.cmd", "/b.cmd"}, exitUsage},
		{"mount cgroups", []string{"--mount-cgroups", "hadoop-yarn", "cpu=/sys/fs/cgroup/cpu"}, exitUnsupported},
		{"checksetup with extra", []string{"--checksetup", "x"}, exitUnsupported},
		{"short", []string{"alice", "alice"}, exitUsage},
		{"command not a number", []string{"alice", "alice", "x"}, exitUsage},
		{"unknown command", []string{"alice", "alice", "9"}, exitUsage},
		{"docker launch short", []string{"alice", "alice", "4"}, exitUsage},
		{"sysfs", []string{"alice", "alice", "6"}, exitUnsupported},
		{"initialize short", []string{"alice", "alice", "0", app, cont, "/t", "/l", "/g"}, exitUsage},
		{"launch short", launchArgs("/l", "/g", "cgroups=none")[:11], exitUsage},
		{"launch without --http, short", append(launchArgs("/l", "/g", "cgroups=none")[:8], launchArgs("/l", "/g", "cgroups=none")[9:12]...), exitUsage},
		{"launch without --http, tc", append(append(launchArgs("/l", "/g", "cgroups=none")[:8], launchArgs("/l", "/g", "cgroups=none")[9:]...), "/tc"), exitUnsupported},
		{"launch https", append(append(launchArgs("/l", "/g", "cgroups=none")[:8], "--https", "/k", "/t"), launchArgs("/l", "/g", "cgroups=none")[9:]...), exitUnsupported},
		{"launch tc", append(launchArgs("/l", "/g", "cgroups=none"), "/tc"), exitUnsupported},
		{"launch bad resources", launchArgs("/l", "/g", "cpu=1"), exitUsage},
		{"launch empty cgroup", launchArgs("/l", "/g", "cgroups=/a,,/b"), exitUsage},
		{"launch empty cgroup %", launchArgs("/l", "/g", "cgroups=/a%%/b"), exitUsage},
		{"launch trailing %", launchArgs("/l", "/g", "cgroups=/a%"), exitUsage},
		{"launch empty dir", launchArgs("/l%", "/g", "cgroups=none"), exitUsage},
		{"signal pid 1", []string{"alice", "alice", "2", "1", "9"}, exitUsage},
		{"signal negative pid", []string{"alice", "alice", "2", "-5", "9"}, exitUsage},
		{"signal bad signal", []string{"alice", "alice", "2", "100", "65"}, exitUsage},
		{"list two", []string{"alice", "alice", "5", "/a", "/b"}, exitUsage},
		{"NUL", []string{"alice\x00root", "alice", "5", "/a"}, exitUsage},
		{"huge", []string{strings.Repeat("a", maxArgBytes+1)}, exitUsage},
		{"too many", make([]string, maxArgs+1), exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseArgs(tc.args)
			if err == nil {
				t.Fatalf("accepted %q", tc.args)
			}
			if got := codeOf(t, err); got != tc.code {
				t.Fatalf("exit code %d, want %d (%v)", got, tc.code, err)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	c, err := parseConfig([]byte("# test cluster\nyarn.nodemanager.linux-container-executor.group=tfyarnnm\nmin.user.id = 1000\nbanned.users=hdfs, yarn\n" +
		"yarn.nodemanager.local-dirs=/d/local\nyarn.nodemanager.log-dirs=/d/logs\ncgroups.dirs=/sys/fs/cgroup/memory/y,/sys/fs/cgroup/cpu/y\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Group != "tfyarnnm" || c.MinUID != 1000 || len(c.Banned) != 2 || c.Banned[1] != "yarn" || len(c.CgroupDirs) != 2 {
		t.Fatalf("parsed %+v", c)
	}
	for name, text := range map[string]string{
		"no group":     "yarn.nodemanager.local-dirs=/a\nyarn.nodemanager.log-dirs=/b\n",
		"no dirs":      "yarn.nodemanager.linux-container-executor.group=g\n",
		"relative dir": "yarn.nodemanager.linux-container-executor.group=g\nyarn.nodemanager.local-dirs=a\nyarn.nodemanager.log-dirs=/b\n",
		"root dir":     "yarn.nodemanager.linux-container-executor.group=g\nyarn.nodemanager.local-dirs=/\nyarn.nodemanager.log-dirs=/b\n",
		"unclean dir":  "yarn.nodemanager.linux-container-executor.group=g\nyarn.nodemanager.local-dirs=/a/../etc\nyarn.nodemanager.log-dirs=/b\n",
		"twice":        "yarn.nodemanager.linux-container-executor.group=g\nyarn.nodemanager.linux-container-executor.group=h\n",
		"unknown key":  "yarn.nodemanager.linux-container-executor.group=g\nfeature.docker.enabled=1\n",
		"no equals":    "yarn.nodemanager.linux-container-executor.group\n",
		"min uid 0":    "yarn.nodemanager.linux-container-executor.group=g\nmin.user.id=0\n",
		"huge":         strings.Repeat("#", maxConfigBytes+1),
	} {
		if _, err := parseConfig([]byte(text)); err == nil || codeOf(t, err) != exitInvalidConfig {
			t.Errorf("%s: got %v, want an invalid-config error", name, err)
		}
	}
}

func testConfig(local, logs string) *config {
	return &config{Group: "tfyarnnm", MinUID: 1000, Banned: []string{"hdfs"}, AllowedUsers: []string{"daemon"},
		LocalDirs: []string{local}, LogDirs: []string{logs}, CgroupDirs: []string{"/sys/fs/cgroup/memory/y"}}
}

func fakeUsers(name string) (*account, error) {
	switch name {
	case "alice":
		return &account{Name: "alice", UID: 1001, GID: 1001}, nil
	case "bob":
		return &account{Name: "bob", UID: 1002, GID: 1002}, nil
	case "hdfs":
		return &account{Name: "hdfs", UID: 1003, GID: 1003}, nil
	case "daemon":
		return &account{Name: "daemon", UID: 1, GID: 1}, nil
	case "sys":
		return &account{Name: "sys", UID: 3, GID: 3}, nil
	case "toor":
		return &account{Name: "toor", UID: 0, GID: 1005}, nil
	case "wheel":
		return &account{Name: "wheel", UID: 1006, GID: 0}, nil
	}
	return nil, errors.New("unknown user")
}

func TestCheckUser(t *testing.T) {
	c := testConfig("/l", "/g")
	for _, ok := range []string{"alice", "bob", "daemon"} {
		if _, err := checkUser(c, fakeUsers, ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"root", "hdfs", "sys", "toor", "wheel", "nobody-here", "Alice", "../alice", "alice bob", "-rf", ""} {
		_, err := checkUser(c, fakeUsers, bad)
		if err == nil || codeOf(t, err) != exitInvalidUser {
			t.Errorf("user %q: got %v, want an invalid-user error", bad, err)
		}
	}
}

// TestCheckUserOnlyTestUsers: with test.users, a local account that exists and passes
// min.user.id, yet is not one of the cluster's users, is refused, naming the list.
func TestCheckUserOnlyTestUsers(t *testing.T) {
	c := testConfig("/l", "/g")
	c.TestUsers = []string{"alice", "tfyarn-*"}
	lookup := func(name string) (*account, error) {
		if a, err := fakeUsers(name); err == nil {
			return a, nil
		}
		return &account{Name: name, UID: 2500, GID: 2500}, nil
	}
	for _, ok := range []string{"alice", "tfyarn-e2e-1f2e", "tfyarn-bob-x"} {
		if _, err := checkUser(c, lookup, ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"bob", "mallory", "tfyarn", "xtfyarn-e2e", "alice2"} {
		_, err := checkUser(c, lookup, bad)
		if err == nil || codeOf(t, err) != exitInvalidUser || !strings.Contains(err.Error(), "not one of the test cluster's users (test.users alice,tfyarn-*)") {
			t.Errorf("user %q: got %v, want refused as no test user", bad, err)
		}
	}
	base := "yarn.nodemanager.linux-container-executor.group=g\nyarn.nodemanager.local-dirs=/l\nyarn.nodemanager.log-dirs=/g\n"
	got, err := parseConfig([]byte(base + "test.users=alice, bob,tfyarn-*\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"alice", "bob", "tfyarn-*"}, got.TestUsers)
	for _, bad := range []string{"a b", "*", "Alice", "../x*"} {
		_, err := parseConfig([]byte(base + "test.users=" + bad + "\n"))
		require.Error(t, err, "test.users=%s", bad)
	}
}

func TestCheckAppContainer(t *testing.T) {
	if err := checkAppContainer(app, cont); err != nil {
		t.Fatal(err)
	}
	if err := checkAppContainer(app, "container_e17_1764110000000_0007_01_000002"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][2]string{
		{"application_1_x", ""},
		{app, "container_1764110000000_0008_01_000002"},
		{app, "container_1764110000001_0007_01_000002"},
		{app, "container_1764110000000_0007_01_000002/../../x"},
		{app, "../" + cont},
	} {
		if err := checkAppContainer(bad[0], bad[1]); err == nil {
			t.Errorf("accepted %q %q", bad[0], bad[1])
		}
	}
}

func TestCheckPathRefusesOutsideUncleanAndLinks(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "local")
	if err := os.MkdirAll(filepath.Join(local, "usercache", "alice"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(local, "usercache", "mallory")); err != nil {
		t.Fatal(err)
	}
	if _, err := checkPath(filepath.Join(local, "usercache", "alice", "appcache", "new"), []string{local}); err != nil {
		t.Fatalf("a path not created yet was refused: %v", err)
	}
	for _, bad := range []string{
		filepath.Join(local, "usercache", "mallory", "shadow"),
		filepath.Join(local, "usercache", "mallory"),
		local + "/usercache/alice/../../../etc",
		local + "/usercache//alice",
		local + "x/usercache",
		"/etc/shadow",
		"relative/path",
		"",
	} {
		_, err := checkPath(bad, []string{local})
		if err == nil || codeOf(t, err) != exitInvalidPath {
			t.Errorf("path %q: got %v, want an invalid-path error", bad, err)
		}
	}
}

func TestValidateLaunch(t *testing.T) {
	dir := t.TempDir()
	local, logs := filepath.Join(dir, "local"), filepath.Join(dir, "logs")
	c := testConfig(local, logs)
	r, err := parseArgs(launchArgs(local, logs, "cgroups=/sys/fs/cgroup/memory/y/"+cont+"/tasks"))
	if err != nil {
		t.Fatal(err)
	}
	if a, err := validate(c, fakeUsers, r); err != nil || a.UID != 1001 {
		t.Fatalf("a good launch was refused: %v", err)
	}
	for name, mutate := range map[string]func(r *request){
		"work dir of bob":      func(r *request) { r.WorkDir = local + "/usercache/bob/appcache/" + app + "/" + cont },
		"work dir elsewhere":   func(r *request) { r.WorkDir = "/tmp/x" },
		"script outside":       func(r *request) { r.ScriptPath = "/etc/shadow" },
		"pid file outside":     func(r *request) { r.PIDFile = "/etc/cron.d/x" },
		"log dir outside":      func(r *request) { r.LogDirs = []string{"/var/log"} },
		"cgroup outside":       func(r *request) { r.CgroupTasks = []string{"/sys/fs/cgroup/memory/tasks"} },
		"cgroup not tasks":     func(r *request) { r.CgroupTasks = []string{"/sys/fs/cgroup/memory/y/memory.limit_in_bytes"} },
		"run as root":          func(r *request) { r.RunAsUser, r.User = "root", "root" },
		"container of another": func(r *request) { r.ContainerID = "container_1764110000000_0009_01_000002" },
		"tokens of another": func(r *request) {
			r.TokensPath = local + "/nmPrivate/" + app + "/container_1764110000000_0007_01_000003/x.tokens"
		},
		"script not private":  func(r *request) { r.ScriptPath = local + "/usercache/alice/launch_container.sh" },
		"pid file of another": func(r *request) { r.PIDFile = local + "/nmPrivate/application_1764110000000_0008/" + cont + "/x.pid" },
	} {
		r2 := *r
		mutate(&r2)
		if _, err := validate(c, fakeUsers, &r2); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestValidateInitializeTokens(t *testing.T) {
	dir := t.TempDir()
	local, logs := filepath.Join(dir, "local"), filepath.Join(dir, "logs")
	c := testConfig(local, logs)
	args := func(tokens string) []string {
		return []string{"alice", "alice", "0", app, cont, tokens, local, logs, "/usr/bin/java", "Main"}
	}
	r, err := parseArgs(args(local + "/nmPrivate/" + cont + "1a2150e4b3c.tokens"))
	require.NoError(t, err)
	_, err = validate(c, fakeUsers, r)
	require.NoError(t, err)
	for _, bad := range []string{
		local + "/nmPrivate/container_1764110000000_0007_01_000003x.tokens",
		local + "/nmPrivate/" + app + "/" + cont + "/" + cont + ".tokens",
		local + "/usercache/alice/" + cont + ".tokens",
	} {
		r, err := parseArgs(args(bad))
		require.NoError(t, err)
		_, err = validate(c, fakeUsers, r)
		require.Error(t, err, bad)
		require.Equal(t, exitInvalidPath, codeOf(t, err), bad)
	}
}

func TestValidateDeleteAndList(t *testing.T) {
	dir := t.TempDir()
	local, logs := filepath.Join(dir, "local"), filepath.Join(dir, "logs")
	c := testConfig(local, logs)
	ok := [][]string{
		{"alice", "alice", "3", "usercache/alice/appcache/" + app, local},
		{"alice", "alice", "3", logs + "/" + app},
		{"alice", "alice", "5", local + "/usercache/alice"},
	}
	for _, args := range ok {
		r, err := parseArgs(args)
		if err == nil {
			_, err = validate(c, fakeUsers, r)
		}
		if err != nil {
			t.Errorf("%q refused: %v", args, err)
		}
	}
	bad := [][]string{
		{"alice", "alice", "3", "../../etc", local},
		{"alice", "alice", "3", "/etc", local},
		{"alice", "alice", "3", "/etc"},
		{"alice", "alice", "3", local},
		{"alice", "alice", "3", "", local},
		{"alice", "alice", "3", "x", "relative"},
		{"alice", "alice", "5", "/root"},
		{"root", "root", "5", local},
	}
	for _, args := range bad {
		r, err := parseArgs(args)
		if err == nil {
			_, err = validate(c, fakeUsers, r)
		}
		if err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

func FuzzParseArgs(f *testing.F) {
	f.Add("--checksetup")
	f.Add(strings.Join(launchArgs("/l", "/g", "cgroups=/sys/fs/cgroup/cpu/y/tasks"), "\n"))
	f.Add("alice\nalice\n0\n" + app + "\n" + cont + "\n/t\n/l%/m\n/g\n/usr/bin/java\n-cp\nx")
	f.Add("alice\nalice\n2\n4242\n9")
	f.Add("alice\nalice\n3\nsub\n/l")
	f.Add("alice\nalice\n5\n/l")
	c := testConfig("/l", "/g")
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\n")
		r, err := parseArgs(args)
		if err != nil {
			if codeOf(t, err) == exitOK {
				t.Fatalf("a refusal exits 0: %v", err)
			}
			return
		}
		switch r.Op {
		case opSignal:
			if r.PID <= 1 || r.Signal < 0 || r.Signal > 64 {
				t.Fatalf("signal request out of range: %+v", r)
			}
		case opInitialize, opLaunch:
			if len(r.LocalDirs) == 0 || len(r.LogDirs) == 0 {
				t.Fatalf("no directories: %+v", r)
			}
		}
		// Whatever parsed must not pass validation with a path outside
		// the configured roots.
		if _, err := validate(c, fakeUsers, r); err == nil {
			for _, p := range append(append([]string{r.WorkDir, r.ScriptPath, r.PIDFile, r.TokensPath, r.Dir}, r.LocalDirs...), r.LogDirs...) {
				if p != "" && !under(p, "/l") && !under(p, "/g") {
					t.Fatalf("validated a path outside the roots: %q in %+v", p, r)
				}
			}
			if r.Op == opDelete {
				ts, _ := deleteTargets(r)
				for _, p := range ts {
					if !strings.HasPrefix(p, "/l/") && !strings.HasPrefix(p, "/g/") {
						t.Fatalf("validated a deletion outside the roots: %q", p)
					}
				}
			}
		}
	})
}

func FuzzParseConfig(f *testing.F) {
	f.Add("yarn.nodemanager.linux-container-executor.group=g\nyarn.nodemanager.local-dirs=/a\nyarn.nodemanager.log-dirs=/b\n")
	f.Add("min.user.id=1000\nbanned.users=a,b\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseConfig([]byte(s))
		if err != nil {
			return
		}
		if c.Group == "" || c.MinUID < 1 {
			t.Fatalf("accepted %+v", c)
		}
		for _, d := range append(append(append([]string{}, c.LocalDirs...), c.LogDirs...), c.CgroupDirs...) {
			if !filepath.IsAbs(d) || filepath.Clean(d) != d || d == "/" {
				t.Fatalf("accepted directory %q", d)
			}
		}
	})
}

// YARN's GPU plugin asks, for a container on the host, that the node's other GPUs be denied in the
// container's devices cgroup: NVIDIA's character devices (major 195), one line each.
func TestModuleGPU(t *testing.T) {
	r, err := parseArgs([]string{"--module-gpu", "--container_id", cont, "--excluded_gpus", "0,3"})
	if err != nil || r.Op != opModuleGPU || r.ContainerID != cont || len(r.ExcludedGPUs) != 2 || r.ExcludedGPUs[1] != 3 {
		t.Fatalf("parsed %+v %v", r, err)
	}
	if r, err := parseArgs([]string{"--module-gpu", "--container_id", cont}); err != nil || len(r.ExcludedGPUs) != 0 {
		t.Fatalf("nothing to exclude: %+v %v", r, err)
	}
	for _, bad := range [][]string{
		{"--module-gpu"},
		{"--module-gpu", "--container_id"},
		{"--module-gpu", "--excluded_gpus", "0", "--container_id", cont},
		{"--module-gpu", "--container_id", cont, "--excluded_gpus", "256"},
		{"--module-gpu", "--container_id", cont, "--excluded_gpus", "-1"},
		{"--module-gpu", "--container_id", cont, "--excluded_gpus", "0,,1"},
		{"--module-gpu", "--container_id", cont, "--excluded_gpus", "0", "x"},
	} {
		if _, err := parseArgs(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
	c := testConfig("/l", "/g")
	if _, err := validate(c, fakeUsers, r); err == nil {
		t.Error("accepted without a devices cgroup in cgroups.dirs")
	}
	root := t.TempDir()
	devices := filepath.Join(root, "devices", "tfyarn-x")
	c.CgroupDirs = append(c.CgroupDirs, devices)
	if _, err := validate(c, fakeUsers, &request{Op: opModuleGPU, ContainerID: "../../etc"}); err == nil {
		t.Error("a container id that is a path was accepted")
	}
	if err := os.MkdirAll(filepath.Join(devices, cont), 0o755); err != nil {
		t.Fatal(err)
	}
	deny := filepath.Join(devices, cont, "devices.deny")
	if err := os.WriteFile(deny, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r, _ = parseArgs([]string{"--module-gpu", "--container_id", cont, "--excluded_gpus", "0,3"})
	if err := runModuleGPU(c, r); err != nil {
		t.Fatal(err)
	}
	// A real devices.deny takes each write as one rule; a plain file keeps the last.
	if b, _ := os.ReadFile(deny); string(b) != "c 195:3 rwm\n" {
		t.Errorf("devices.deny: %q", b)
	}
}
