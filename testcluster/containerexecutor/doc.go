// Command container-executor is the test cluster's stand-in for Hadoop's
// setuid container-executor: the privileged helper YARN's
// LinuxContainerExecutor runs to localize, launch, signal and delete as the
// user who submitted an application.
//
// It exists only for tfyarn's single-machine test cluster (testcluster/),
// because no package registry this project reaches ships Hadoop's native
// helper. It is not a production component: production clusters use the
// container-executor their Hadoop distribution builds. It was written from
// the NodeManager's Java side of the protocol (LinuxContainerExecutor,
// PrivilegedOperation, DefaultLinuxContainerRuntime, ContainerLocalizer)
// and Hadoop's documentation, not from the native sources.
//
// It is installed root-owned and setuid (mode 6050, group: the
// NodeManager's group), so it treats its command line as hostile: users
// are checked against a minimum uid and a banned list (root always banned),
// every path must lie below the NodeManager's local or log directories
// named in its configuration file (no "..", no symbolic link on the way),
// files in a user's directories are written with that user's filesystem
// identity, and the configuration file and every directory above it must be
// root-owned and writable by root alone. The configuration file's path is
// fixed when the binary is built (-ldflags "-X main.configFile=...").
//
// Operations (argv after the program name; lists are '%'-separated):
//
//	--checksetup
//	RUNAS USER 0 APPID LOCID TOKENS LOCALDIRS LOGDIRS JAVA ARGS...   initialize: run the localizer
//	RUNAS USER 1 APPID CONTAINERID WORKDIR SCRIPT TOKENS --http PIDFILE LOCALDIRS LOGDIRS RESOURCES
//	RUNAS USER 2 PID SIGNAL                                          signal a container's process group
//	RUNAS USER 3 SUBDIR [BASEDIR...]                                 delete as user
//	RUNAS USER 5 DIR                                                 list as user
//	RUNAS USER 4 APPID CONTAINERID WORKDIR SCRIPT TOKENS --http PIDFILE LOCALDIRS LOGDIRS DOCKERFILE
//	                                                                 launch in a Docker image (docker run)
//	(NodeManagers before Hadoop 3.3 send both launches without --http.)
//	--run-docker DOCKERFILE                                          docker inspect, stop, kill, rm, start
//
// The Docker operations (dockercmd.go) need docker.binary and docker.host in
// the configuration and do only what it allows (trusted registries, networks,
// mount roots, capabilities). Anything else (traffic control, --https
// keystores, mounting cgroups, device modules) is refused with exit code 3.
package main
