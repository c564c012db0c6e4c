package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func dockerTestConfig(local, logs string) *config {
	c := testConfig(local, logs)
	c.DockerBinary, c.DockerHost = "/usr/bin/docker", "unix:///d/docker.sock"
	c.DockerTrustedRegistries = []string{"tfyarn.test"}
	c.DockerNetworks = []string{"host"}
	c.DockerRWMounts = []string{local, logs}
	c.DockerROMounts = []string{"/data/ro"}
	c.DockerCapabilities = []string{"CHOWN", "SETUID", "SETGID", "KILL"}
	return c
}

func dockerLaunchArgs(local, logs string) []string {
	a := launchArgs(local, logs, "")
	a[2] = "4"
	return append(a[:len(a)-1], local+"/nmPrivate/"+app+"/"+cont+"/docker."+cont+"123.cmd")
}

// goodRun is a docker run command file as the NodeManager writes it.
func goodRun(local, logs string) string {
	work := local + "/usercache/alice/appcache/" + app + "/" + cont
	return "[docker-command-execution]\n" +
		"  docker-command=run\n  name=" + cont + "\n  user=1001:1001\n  group-add=1001,2000\n" +
		"  image=tfyarn.test/tfyarn-test-image:abc\n  net=host\n  workdir=" + work + "\n  hostname=node-1\n" +
		"  detach=true\n  cap-drop=ALL\n  cap-add=CHOWN,SETUID\n  privileged=false\n" +
		"  mounts=" + work + ":" + work + ":rw," + logs + "/" + app + "/" + cont + ":" + logs + "/" + app + "/" + cont + ":rw,/data/ro/x:/x:ro+rprivate\n" +
		"  environ=" + local + "/nmPrivate/" + app + "/" + cont + "/docker." + cont + "1.env\n" +
		"  cgroup-parent=/y/" + cont + "\n" +
		"  launch-command=bash," + work + "/launch_container.sh\n"
}

func noLinks(p string) (string, error) { return p, nil }

func aliceWithGroups() *account {
	return &account{Name: "alice", UID: 1001, GID: 1001, Groups: []int{2000}}
}

func TestParseDockerCommand(t *testing.T) {
	d, err := parseDockerCommand([]byte(goodRun("/l", "/g")))
	if err != nil {
		t.Fatal(err)
	}
	if d.Command != "run" || len(d.Args["mounts"]) != 3 || d.Args["net"][0] != "host" {
		t.Fatalf("parsed %+v", d)
	}
	for name, tc := range map[string]struct {
		text string
		code int
	}{
		"empty":           {"", exitInvalidDocker},
		"no header":       {"docker-command=inspect\nname=" + cont + "\n", exitInvalidDocker},
		"no command":      {"[docker-command-execution]\n  name=x\n", exitInvalidDocker},
		"no equals":       {"[docker-command-execution]\n  docker-command=rm\n  name\n", exitInvalidDocker},
		"key twice":       {"[docker-command-execution]\n  docker-command=rm\n  name=a\n  name=b\n", exitInvalidDocker},
		"command twice":   {"[docker-command-execution]\n  docker-command=rm\n  docker-command=run\n", exitInvalidDocker},
		"odd key":         {"[docker-command-execution]\n  docker-command=rm\n  Na$me=a\n", exitInvalidDocker},
		"NUL":             {"[docker-command-execution]\n  docker-command=rm\x00\n", exitInvalidDocker},
		"pull":            {"[docker-command-execution]\n  docker-command=pull\n  image=x\n", exitUnsupported},
		"volume":          {"[docker-command-execution]\n  docker-command=volume\n", exitUnsupported},
		"exec":            {"[docker-command-execution]\n  docker-command=exec\n", exitUnsupported},
		"too many lines":  {"[docker-command-execution]\n  docker-command=rm\n" + strings.Repeat("\n", maxDockerLines), exitInvalidDocker},
		"too many values": {"[docker-command-execution]\n  docker-command=run\n  mounts=" + strings.Repeat("a,", maxDockerValues) + "\n", exitInvalidDocker},
		"huge":            {"[docker-command-execution]\n  docker-command=rm\n  x=" + strings.Repeat("a", maxDockerFileBytes), exitInvalidDocker},
	} {
		if _, err := parseDockerCommand([]byte(tc.text)); err == nil || codeOf(t, err) != tc.code {
			t.Errorf("%s: got %v, want exit code %d", name, err, tc.code)
		}
	}
}

func TestCheckRun(t *testing.T) {
	local, logs := "/l", "/g"
	c := dockerTestConfig(local, logs)
	r, err := parseArgs(dockerLaunchArgs(local, logs))
	if err != nil || r.Op != opLaunchDocker {
		t.Fatalf("docker launch args: %+v %v", r, err)
	}
	d, err := parseDockerCommand([]byte(goodRun(local, logs)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := checkRun(c, d, r, aliceWithGroups(), noLinks)
	if err != nil {
		t.Fatalf("a good run was refused: %v", err)
	}
	argv := strings.Join(s.argv(), " ")
	for _, want := range []string{"run --detach --pull=never --name " + cont, "--user 1001:1001", "--network host",
		"--cap-drop ALL", "--security-opt no-new-privileges", "--group-add 2000", "--cap-add SETUID",
		"--volume /data/ro/x:/x:ro,rprivate", "--env-file /l/nmPrivate/", "--cgroup-parent /y/" + cont,
		"-- tfyarn.test/tfyarn-test-image:abc bash " + r.WorkDir + "/launch_container.sh"} {
		if !strings.Contains(argv, want) {
			t.Errorf("docker %s lacks %q", argv, want)
		}
	}
	set := func(text, key, value string) string {
		var out []string
		found := false
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), key+"=") {
				found = true
				if value == "" {
					continue
				}
				l = "  " + key + "=" + value
			}
			out = append(out, l)
		}
		if !found {
			out = append(out, "  "+key+"="+value)
		}
		return strings.Join(out, "\n")
	}
	work := r.WorkDir
	for name, text := range map[string]string{
		"untrusted registry":     set(goodRun(local, logs), "image", "evil.example.com/x:1"),
		"docker hub image":       set(goodRun(local, logs), "image", "ubuntu:22.04"),
		"hub user image":         set(goodRun(local, logs), "image", "tfyarn.test2/x"),
		"malformed image":        set(goodRun(local, logs), "image", "tfyarn.test/X Y"),
		"image option":           set(goodRun(local, logs), "image", "--privileged"),
		"bridge network":         set(goodRun(local, logs), "net", "bridge"),
		"container network":      set(goodRun(local, logs), "net", "container:"+cont),
		"another uid":            set(goodRun(local, logs), "user", "0:0"),
		"bob's uid":              set(goodRun(local, logs), "user", "1002:1002"),
		"foreign group":          set(goodRun(local, logs), "group-add", "0"),
		"privileged":             set(goodRun(local, logs), "privileged", "true"),
		"capability":             set(goodRun(local, logs), "cap-add", "SYS_ADMIN"),
		"cap-drop some":          set(goodRun(local, logs), "cap-drop", "NET_RAW"),
		"mount /etc":             set(goodRun(local, logs), "mounts", "/etc:/etc:ro"),
		"mount docker socket":    set(goodRun(local, logs), "mounts", "/d/docker.sock:/var/run/docker.sock:rw"),
		"rw from read-only root": set(goodRun(local, logs), "mounts", "/data/ro/x:/x:rw"),
		"mount onto /proc":       set(goodRun(local, logs), "mounts", work+":/proc/x:rw"),
		"mount unclean":          set(goodRun(local, logs), "mounts", "/l/../etc:/x:ro"),
		"mount bad mode":         set(goodRun(local, logs), "mounts", work+":/x:shared"),
		"mount two parts":        set(goodRun(local, logs), "mounts", work+":/x"),
		"devices":                set(goodRun(local, logs), "devices", "/dev/sda:/dev/sda"),
		"pid host":               set(goodRun(local, logs), "pid", "host"),
		"runtime":                set(goodRun(local, logs), "runtime", "nvidia"),
		"runtime runc":           set(goodRun(local, logs), "runtime", "runc"),
		"runtime option":         set(goodRun(local, logs), "runtime", "--privileged"),
		"entry point":            set(goodRun(local, logs), "use-entry-point", "true"),
		"other name":             set(goodRun(local, logs), "name", "container_1764110000000_0007_01_000003"),
		"other workdir":          set(goodRun(local, logs), "workdir", "/"),
		"other command":          set(goodRun(local, logs), "launch-command", "sh,-c,id"),
		"env file elsewhere":     set(goodRun(local, logs), "environ", "/etc/environment"),
		"env of another":         set(goodRun(local, logs), "environ", local+"/nmPrivate/"+app+"/container_1764110000000_0007_01_000003/x.env"),
		"cgroup parent":          set(goodRun(local, logs), "cgroup-parent", "/"),
		"not detached":           set(goodRun(local, logs), "detach", "false"),
		"bad hostname":           set(goodRun(local, logs), "hostname", "-x"),
		"no image":               set(goodRun(local, logs), "image", ""),
		"no user":                set(goodRun(local, logs), "user", ""),
	} {
		d, err := parseDockerCommand([]byte(text))
		if err == nil {
			_, err = checkRun(c, d, r, aliceWithGroups(), noLinks)
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The runtime the NodeManager's GPU plugin (nvidia-docker-v2) asks for, once the cluster allows
	// it (docker.allowed.runtimes), and no other.
	gpu := *c
	gpu.DockerRuntimes = []string{"nvidia"}
	d, err = parseDockerCommand([]byte(set(goodRun(local, logs), "runtime", "nvidia")))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := checkRun(&gpu, d, r, aliceWithGroups(), noLinks); err != nil || !strings.Contains(strings.Join(s.argv(), " "), "--runtime nvidia -- tfyarn.test/") {
		t.Errorf("a run with the allowed runtime nvidia: %v", err)
	}
	d, _ = parseDockerCommand([]byte(set(goodRun(local, logs), "runtime", "runc")))
	if _, err := checkRun(&gpu, d, r, aliceWithGroups(), noLinks); err == nil {
		t.Error("a run with runtime runc, not among docker.allowed.runtimes, was accepted")
	}
	// A link planted in a mounted directory is followed before the check.
	d, _ = parseDockerCommand([]byte(set(goodRun(local, logs), "mounts", work+"/link:/x:rw")))
	if _, err := checkRun(c, d, r, aliceWithGroups(), func(p string) (string, error) { return "/etc", nil }); err == nil {
		t.Error("a mount through a link to /etc was accepted")
	}
	if _, err := checkRun(c, d, r, aliceWithGroups(), func(p string) (string, error) { return "", errors.New("gone") }); err == nil {
		t.Error("a mount whose source cannot be resolved was accepted")
	}
}

func TestCheckControl(t *testing.T) {
	head := "[docker-command-execution]\n"
	for text, want := range map[string]string{
		"docker-command=inspect\nformat={{.State.Status}}\nname=" + cont:                                                              "inspect --format={{.State.Status}} -- " + cont,
		"docker-command=inspect\nformat={{range(.NetworkSettings.Networks)}}{{.IPAddress}},{{end}}{{.Config.Hostname}}\nname=" + cont: "inspect --format={{range(.NetworkSettings.Networks)}}{{.IPAddress}},{{end}}{{.Config.Hostname}} -- " + cont,
		"docker-command=inspect\nformat={{.State.Status}},{{.Config.StopSignal}}\nname=" + cont:                                       "inspect --format={{.State.Status}},{{.Config.StopSignal}} -- " + cont,
		"docker-command=stop\nname=" + cont + "\ntime=10":                                                                             "stop --time 10 -- " + cont,
		"docker-command=kill\nname=" + cont + "\nsignal=KILL":                                                                         "kill --signal KILL -- " + cont,
		"docker-command=rm\nname=" + cont + "\nhierarchy=y":                                                                           "rm --force -- " + cont,
		"docker-command=start\nname=" + cont:                                                                                          "start -- " + cont,
	} {
		d, err := parseDockerCommand([]byte(head + text))
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		argv, err := checkControl(d)
		if err != nil || strings.Join(argv, " ") != want {
			t.Errorf("%q: %q %v, want %q", text, argv, err, want)
		}
	}
	for _, text := range []string{
		"docker-command=inspect\nformat={{.HostConfig.Binds}}\nname=" + cont,
		"docker-command=inspect\nname=dockerd",
		"docker-command=inspect\nname=--all",
		"docker-command=stop\nname=" + cont + "\ntime=-1",
		"docker-command=kill\nname=" + cont + "\nsignal=9; rm -rf /",
		"docker-command=rm\nname=" + cont + "\nforce=true\nvolumes=true",
		"docker-command=start\nname=" + cont + "\nattach=true",
		"docker-command=stop",
	} {
		d, err := parseDockerCommand([]byte(head + text))
		if err == nil {
			_, err = checkControl(d)
		}
		if err == nil {
			t.Errorf("%q: accepted", text)
		}
	}
}

func TestValidateDockerFiles(t *testing.T) {
	dir := t.TempDir()
	local, logs := filepath.Join(dir, "local"), filepath.Join(dir, "logs")
	c := dockerTestConfig(local, logs)
	priv := local + "/nmPrivate/" + app + "/" + cont
	r, err := parseArgs([]string{"--run-docker", priv + "/docker." + cont + "42.cmd"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := validate(c, fakeUsers, r); err != nil {
		t.Fatalf("a command file in the container's private directory was refused: %v", err)
	}
	for _, p := range []string{"/tmp/x.cmd", local + "/usercache/alice/x.cmd", priv + "/x.env",
		local + "/nmPrivate/x.cmd", local + "/nmPrivate/" + app + "/not-a-container/x.cmd", priv + "/../../" + app + "/" + cont + "/x.cmd"} {
		if _, err := validate(c, fakeUsers, &request{Op: opRunDocker, DockerFile: p}); err == nil {
			t.Errorf("command file %s accepted", p)
		}
	}
	lr, err := parseArgs(dockerLaunchArgs(local, logs))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := validate(c, fakeUsers, lr); err != nil {
		t.Fatalf("a good docker launch was refused: %v", err)
	}
	other := *lr
	other.DockerFile = local + "/nmPrivate/" + app + "/container_1764110000000_0007_01_000003/docker.x.cmd"
	if _, err := validate(c, fakeUsers, &other); err == nil {
		t.Error("a docker launch with another container's command file was accepted")
	}
	// Without docker.binary the helper does no docker operation at all.
	c.DockerBinary = ""
	for _, req := range []*request{r, lr} {
		if _, err := validate(c, fakeUsers, req); err == nil || codeOf(t, err) != exitUnsupported {
			t.Errorf("%v without docker.binary: %v, want exit %d", req.Op, err, exitUnsupported)
		}
	}
}

func TestParseEnvFile(t *testing.T) {
	if err := parseEnvFile([]byte("A=1\nPATH=/usr/bin:/bin\nEMPTY=\n")); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"NAME\n", "=x\n", "A=1\nmulti line\n", "A B=1\n", "A=\x00\n"} {
		if err := parseEnvFile([]byte(text)); err == nil {
			t.Errorf("%q accepted", text)
		}
	}
}

func TestParseConfigDocker(t *testing.T) {
	base := "yarn.nodemanager.linux-container-executor.group=g\nyarn.nodemanager.local-dirs=/a\nyarn.nodemanager.log-dirs=/b\n"
	c, err := parseConfig([]byte(base + "docker.binary=/usr/bin/docker\ndocker.host=unix:///d/docker.sock\ndocker.trusted.registries=tfyarn.test\n" +
		"docker.allowed.networks=host,none\ndocker.allowed.ro-mounts=/ro\ndocker.allowed.rw-mounts=/a,/b\ndocker.allowed.capabilities=CHOWN\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.DockerHost != "unix:///d/docker.sock" || !slices.Equal(c.DockerNetworks, []string{"host", "none"}) || len(c.DockerRWMounts) != 2 {
		t.Fatalf("parsed %+v", c)
	}
	for name, extra := range map[string]string{
		"bridge":          "docker.binary=/usr/bin/docker\ndocker.host=unix:///s\ndocker.allowed.networks=host,bridge\n",
		"tcp daemon":      "docker.binary=/usr/bin/docker\ndocker.host=tcp://1.2.3.4:2375\n",
		"relative binary": "docker.binary=docker\ndocker.host=unix:///s\n",
		"relative mount":  "docker.allowed.rw-mounts=tmp\n",
	} {
		if _, err := parseConfig([]byte(base + extra)); err == nil || codeOf(t, err) != exitInvalidConfig {
			t.Errorf("%s: %v, want an invalid-config error", name, err)
		}
	}
}

func FuzzParseDockerCommand(f *testing.F) {
	f.Add(goodRun("/l", "/g"))
	f.Add("[docker-command-execution]\n  docker-command=inspect\n  format={{.State.Status}}\n  name=" + cont + "\n")
	f.Add("[docker-command-execution]\n  docker-command=kill\n  signal=TERM\n  name=" + cont + "\n")
	c := dockerTestConfig("/l", "/g")
	r, err := parseArgs(dockerLaunchArgs("/l", "/g"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDockerCommand([]byte(s))
		if err != nil {
			if codeOf(t, err) == exitOK {
				t.Fatalf("a refusal exits 0: %v", err)
			}
			return
		}
		if d.Command == "run" {
			spec, err := checkRun(c, d, r, aliceWithGroups(), noLinks)
			if err != nil {
				return
			}
			// Whatever passes runs as alice, on the host network, from the trusted registry,
			// with mounts from the allowed roots only.
			if spec.User != "1001:1001" || spec.Net != "host" || !strings.HasPrefix(spec.Image, "tfyarn.test/") {
				t.Fatalf("accepted %+v", spec)
			}
			for _, m := range spec.Mounts {
				if !under(m.Src, "/l") && !under(m.Src, "/g") && !(m.ReadOnly && under(m.Src, "/data/ro")) {
					t.Fatalf("accepted mount %+v", m)
				}
			}
			for _, a := range spec.argv() {
				if strings.ContainsAny(a, "\n\x00") {
					t.Fatalf("argument %q", a)
				}
			}
			return
		}
		argv, err := checkControl(d)
		if err != nil {
			return
		}
		if n := argv[len(argv)-1]; !containerIDPattern.MatchString(n) || argv[len(argv)-2] != "--" {
			t.Fatalf("accepted %q", argv)
		}
	})
}

// A control command names the container whose private directory holds its file, no other.
func TestCheckControlFileNamesItsOwnContainer(t *testing.T) {
	d, err := parseDockerCommand([]byte("[docker-command-execution]\n  docker-command=kill\n  signal=KILL\n  name=" + cont + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkControlFile(d, "/l/nmPrivate/"+app+"/"+cont+"/docker.x.cmd"); err != nil {
		t.Fatalf("refused: %v", err)
	}
	other := "/l/nmPrivate/" + app + "/container_1764110000000_0007_01_000003/docker.x.cmd"
	if _, err := checkControlFile(d, other); err == nil || codeOf(t, err) != exitInvalidDocker {
		t.Fatalf("a kill of %s from another container's directory: %v", cont, err)
	}
}

// Mount sources the launch creates resolve through the links of the part that exists.
func TestResolveExisting(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	got, err := resolveExisting(filepath.Join(dir, "link", "not", "yet"))
	if err != nil || got != filepath.Join(real, "not", "yet") {
		t.Fatalf("got %q, %v", got, err)
	}
}

// Docker's reason is its error, not its advice to read the help.
func TestDockerReason(t *testing.T) {
	for in, want := range map[string]string{
		"docker: Error response from daemon: No such image: tfyarn.test/x:1\n\nSee 'docker run --help'.\n": "Error response from daemon: No such image: tfyarn.test/x:1",
		"Error: No such container: c1\n":                            "Error: No such container: c1",
		"unknown flag: --bogus\nRun 'docker run --help' for more\n": "unknown flag: --bogus",
		"See 'docker run --help'.\n":                                "",
		"":                                                          "",
	} {
		if got := dockerReason(in); got != want {
			t.Errorf("dockerReason(%q) = %q, want %q", in, got, want)
		}
	}
	if got := dockerReason(strings.Repeat("x", 400)); len(got) != 303 {
		t.Errorf("a long reason is not shortened: %d bytes", len(got))
	}
}
