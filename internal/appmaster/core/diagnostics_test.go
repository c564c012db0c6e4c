package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestContainerDiagnostics(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{
			// Hadoop 3.4.2's public localizer (a PUBLIC LocalResource),
			// whose diagnostics carry no cause.
			name: "public localizer: the file and the exception's message",
			in:   "[2026-11-23 18:55:09.601]Failed to download resource { { hdfs://localhost:8020/user/root/.tfyarn/cache/40b5/data-df2f18ca.tar.gz, 1795460107760, ARCHIVE, null },pending,[(container_1795458681784_0073_01_000002)],10887412355320,DOWNLOADING} org.apache.hadoop.yarn.exceptions.YarnException: Download and unpack failed\n",
			want: "Download and unpack failed: data-df2f18ca.tar.gz (ARCHIVE) could not be localized by the NodeManager",
		},
		{
			// Hadoop 3.4.2's LinuxContainerExecutor, our helper refusing a Docker launch (it writes
			// its reason to both outputs).
			name: "a launch the helper refused: its own words only",
			in: "[2026-11-26 06:52:23.390]Exception from container-launch.\nContainer id: container_1795675320121_0010_01_000002\nExit code: 40\nException message: Launch container failed\n" +
				"Shell error output: container-executor: docker image r.example/x:1 is from registry r.example, which is not among the cluster's trusted registries (tfyarn.test)\n" +
				"Shell output: container-executor: docker image r.example/x:1 is from registry r.example, which is not among the cluster's trusted registries (tfyarn.test)\n\n" +
				"[2026-11-26 06:52:23.391]Container exited with a non-zero exit code 40. \n",
			want: "container-executor: docker image r.example/x:1 is from registry r.example, which is not among the cluster's trusted registries (tfyarn.test) | Container exited with a non-zero exit code 40.",
		},
		{
			name: "a launch failure with no output: the exception's message unless it is the generic one",
			in:   "Exception from container-launch.\nContainer id: c\nExit code: 7\nException message: Launch container failed\n",
			want: "",
		},
		{
			name: "a launch failure with standard output only",
			in:   "Exception from container-launch.\nContainer id: c\nExit code: 7\nException message: Launch container failed\nShell output: docker: image not found\n",
			want: "docker: image not found",
		},
		{"blank lines and timestamps only", "\n[2026-11-23 09:19:10.852]\n  \n[2026-11-23 09:19:10.853]\n", ""},
		{
			// Hadoop 3.4 NodeManager, a container over its physical memory.
			name: "physical memory kill: the figures stay, the process tree goes",
			in: "[2026-11-23 09:19:10.852]Container [pid=31337,containerID=container_1700000000000_0001_01_000002] is running 480247808B beyond the 'PHYSICAL' memory limit. Current usage: 714.0 MB of 256 MB physical memory used; 2.9 GB of 537.6 MB virtual memory used. Killing container.\n" +
				"Dump of the process-tree for container_1700000000000_0001_01_000002 :\n" +
				"\t|- PID PPID PGRPID SESSID CMD_NAME USER_MODE_TIME(MILLIS) SYSTEM_TIME(MILLIS) VMEM_USAGE(BYTES) RSSMEM_USAGE(PAGES) FULL_CMD_LINE\n" +
				"\t|- 31337 31330 31337 31337 (python3) 120 40 3100000000 182000 python3 -c ...\n\n" +
				"[2026-11-23 09:19:10.900]Container killed on request. Exit code is 143\n" +
				"[2026-11-23 09:19:10.901]Container exited with a non-zero exit code 143. \n",
			want: "Container [pid=31337,containerID=container_1700000000000_0001_01_000002] is running 480247808B beyond the 'PHYSICAL' memory limit. Current usage: 714.0 MB of 256 MB physical memory used; 2.9 GB of 537.6 MB virtual memory used. Killing container. | Container killed on request. Exit code is 143 | Container exited with a non-zero exit code 143.",
		},
		{
			name: "an exception chain: the bare timestamp line goes, the messages stay, frames and local paths go",
			in: "[2026-11-23 09:19:10.852]\n" +
				"java.io.IOException: Error untarring file /tmp/nm-local-dir/filecache/10/env.tar.gz. Tar process exited with exit code 2 from command [bash, -c, gzip -dc '/tmp/nm-local-dir/filecache/10/env.tar.gz' | (cd '/tmp/nm-local-dir/filecache/10/env.tar.gz' && tar -xf -)]\n" +
				"\tat org.apache.hadoop.fs.FileUtil.unTarUsingTar(FileUtil.java:1021)\n" +
				"\tat org.apache.hadoop.fs.FileUtil.unTar(FileUtil.java:975)\n" +
				"\tat java.base/java.util.concurrent.FutureTask.run(FutureTask.java:264)\n" +
				"Caused by: org.apache.hadoop.util.Shell$ExitCodeException: gzip: stdin: not in gzip format\n" +
				"tar: Child returned status 1\n" +
				"\tat org.apache.hadoop.util.Shell.runCommand(Shell.java:1024)\n" +
				"\t... 12 more\n\n" +
				"For more detailed output, check the application tracking page",
			want: "Error untarring file env.tar.gz. Tar process exited with exit code 2 from command [bash, -c, gzip -dc 'env.tar.gz' | (cd 'env.tar.gz' && tar -xf -)]: gzip: stdin: not in gzip format | tar: Child returned status 1 | For more detailed output, check the application tracking page",
		},
		{
			// Hadoop 3.4.2's NodeManager on the test cluster, an ARCHIVE that
			// is not a .tar.gz (frames abridged).
			name: "localization failure, real",
			in: "[2026-11-23 16:40:19.742]\n" +
				"java.lang.reflect.UndeclaredThrowableException\n" +
				"\tat org.apache.hadoop.security.UserGroupInformation.doAs(UserGroupInformation.java:1969)\n" +
				"\tat java.base/java.lang.Thread.run(Thread.java:840)\n" +
				"Caused by: org.apache.hadoop.yarn.exceptions.YarnException: Download and unpack failed\n" +
				"\tat org.apache.hadoop.yarn.util.FSDownload.downloadAndUnpack(FSDownload.java:325)\n" +
				"\t... 10 more\n" +
				"Caused by: java.io.IOException: Error executing command. gzip -dc | (cd '/work/main/.testcluster/data/yarn/tfyarn/yarn-2751876/tfyarn-localDir-nm-0_0/usercache/root/filecache/11_tmp/data-1e232ad6.tar.gz' && tar -x ) Process exited with exit code 2.\n" +
				"\tat org.apache.hadoop.fs.FileUtil.runCommandOnStream(FileUtil.java:964)\n" +
				"\t... 17 more\n" +
				"Caused by: Download and unpack failed\n" +
				"org.apache.hadoop.yarn.exceptions.YarnException: Download and unpack failed\n" +
				"\tat org.apache.hadoop.yarn.util.FSDownload.downloadAndUnpack(FSDownload.java:325)\n" +
				"Caused by: java.io.IOException: Error executing command. gzip -dc | (cd '/work/main/.testcluster/data/yarn/tfyarn/yarn-2751876/tfyarn-localDir-nm-0_0/usercache/root/filecache/11_tmp/data-1e232ad6.tar.gz' && tar -x ) Process exited with exit code 2.\n" +
				"\tat org.apache.hadoop.fs.FileUtil.runCommandOnStream(FileUtil.java:964)\n" +
				"Caused by: Error executing command. gzip -dc | (cd '/work/main/.testcluster/data/yarn/tfyarn/yarn-2751876/tfyarn-localDir-nm-0_0/usercache/root/filecache/11_tmp/data-1e232ad6.tar.gz' && tar -x ) Process exited with exit code 2.\n" +
				"java.io.IOException: Error executing command. gzip -dc | (cd '/work/main/.testcluster/data/yarn/tfyarn/yarn-2751876/tfyarn-localDir-nm-0_0/usercache/root/filecache/11_tmp/data-1e232ad6.tar.gz' && tar -x ) Process exited with exit code 2.\n" +
				"\tat org.apache.hadoop.fs.FileUtil.unTar(FileUtil.java:1001)\n",
			want: "Download and unpack failed: data-1e232ad6.tar.gz could not be unpacked (gzip -dc | tar -x exited with code 2: not a gzip-compressed tar archive?)",
		},
		{"a class alone is kept when nothing else is said", "[2026-11-23 16:40:19.742]\njava.lang.reflect.UndeclaredThrowableException\n\tat x.y(Z.java:1)\n", "java.lang.reflect.UndeclaredThrowableException"},
		{
			name: "repeats are said once, whitespace collapsed",
			in:   "[2026-11-23 09:19:10.852]Container released on a *lost* node\n[2026-11-23 09:19:11.000]Container   released on a *lost*\tnode  \n",
			want: "Container released on a *lost* node",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, ContainerDiagnostics(tc.in))
		})
	}
	long := ContainerDiagnostics("[2026-11-23 09:19:10.852]\n" + strings.Repeat("é", 400))
	require.LessOrEqual(t, len(long), maxContainerDiagnostics+len("…"))
	require.True(t, strings.HasSuffix(long, "…"))
	require.True(t, strings.HasPrefix(long, "éé"))
}

func TestCompletedDiagnosticsInTheFailure(t *testing.T) {
	m := newMachine(t, nil, grp("worker", 1, small))
	step(m, Registered{})
	step(m, Allocated{Containers: []Container{ctr(1, 1)}}, ContainerStarted{ID: cid(1)})
	rd := step(m, ContainerCompleted{ID: cid(1), ExitStatus: ExitInvalid, Diagnostics: "[2026-11-23 09:19:10.852]\njava.io.IOException: not in gzip format\n\tat x.y(Z.java:1)\n"})
	require.Equal(t, Failed, rd.Finish.Status)
	require.Contains(t, rd.Finish.Diagnostics, "(exit status -1000): not in gzip format")
}

// A task whose launcher never registered failed before its program could run (the NodeManager's
// helper refused the launch, its Docker image could not start): the NodeManager's reason is the
// only one, and the failure carries it; once registered, a program's exit code says enough.
func TestUnregisteredExitCarriesTheNodeManagersReason(t *testing.T) {
	diag := "Exception from container-launch.\nContainer id: " + cid(1) + "\nExit code: 40\nException message: Launch container failed\n" +
		"Shell output: container-executor: docker image registry.example.com/x:1 is from registry registry.example.com, which is not among the cluster's trusted registries (tfyarn.test)\n"
	m := newMachine(t, nil, grp("worker", 1, small))
	step(m, Registered{})
	step(m, Allocated{Containers: []Container{ctr(1, 1)}}, ContainerStarted{ID: cid(1)})
	rd := step(m, ContainerCompleted{ID: cid(1), ExitStatus: 40, Diagnostics: diag})
	require.Equal(t, Failed, rd.Finish.Status)
	require.Contains(t, rd.Finish.Diagnostics, "exit code 40: container-executor: docker image registry.example.com/x:1 is from registry registry.example.com, which is not among the cluster's trusted registries")
	require.NotContains(t, rd.Finish.Diagnostics, "Exception from container-launch", "the helper's words, not YARN's wrapping")
	require.NotContains(t, rd.Finish.Diagnostics, "Container id")

	m = newMachine(t, nil, grp("worker", 1, small))
	step(m, Registered{})
	step(m, Allocated{Containers: []Container{ctr(1, 1)}}, ContainerStarted{ID: cid(1)}, TaskRegistered{Task: worker(0), Host: "h", Port: 1})
	rd = step(m, ContainerCompleted{ID: cid(1), ExitStatus: 3, Diagnostics: "Exception from container-launch.\nExit code: 3\n"})
	require.Equal(t, Failed, rd.Finish.Status)
	require.NotContains(t, rd.Finish.Diagnostics, "Exception from container-launch")
}
