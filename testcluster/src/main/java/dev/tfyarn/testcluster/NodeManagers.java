package dev.tfyarn.testcluster;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * The cluster's NodeManagers with TC_NM_HOSTS=1, each Hadoop's own NodeManager main class in a JVM of its own (a
 * child of the launcher JVM, same jars), each on a "host" of its own: a loopback address of its
 * own (127.0.1.(10+i)) with a host name that resolves to it (nm<i>.tfyarn.test, mapped in
 * /etc/hosts by cluster.sh; the bare address when that mapping is missing). Every NodeManager
 * listens on the same three ports (RPC, localizer, web) on its own address, so that NodeManager
 * i's node id, web address and containers' NM_HOST differ from every other's, as on a real
 * cluster; and a restarted NodeManager gets the same node id again.
 *
 * <p>{@link #configuration} is the one place that builds a NodeManager's configuration.
 */
final class NodeManagers implements NodeManagerSet {
  static final String HOST_DOMAIN = "tfyarn.test";

  private final File base;
  private final int count;
  private final int rpcPort;
  private final int localizerPort;
  private final int webPort;
  private final Consumer<Configuration> serverKeys;
  private BiConsumer<Integer, Configuration> hostKeys = (i, c) -> { };
  private final String[] hosts;
  private final Process[] procs;
  private final boolean[] frozen;

  /**
   * @param serverKeys sets the keys every server of the cluster shares (security, resource types,
   *     memory enforcement, log aggregation, the ResourceManager's addresses) on a configuration
   */
  NodeManagers(File base, int count, int rpcPort, int localizerPort, int webPort,
      Consumer<Configuration> serverKeys) {
    this.base = base;
    this.count = count;
    this.rpcPort = rpcPort;
    this.localizerPort = localizerPort;
    this.webPort = webPort;
    this.serverKeys = serverKeys;
    this.hosts = new String[count];
    this.procs = new Process[count];
    this.frozen = new boolean[count];
    for (int i = 0; i < count; i++) {
      hosts[i] = hostName(i);
    }
  }

  /**
   * Sets what only host i's NodeManager has (under Kerberos: its own service principal and
   * keytab), applied after everything else in {@link #configuration}.
   */
  void hostKeys(BiConsumer<Integer, Configuration> keys) {
    this.hostKeys = keys;
  }

  @Override
  public int count() {
    return count;
  }

  /** NodeManager i's loopback address, its "host". */
  static String address(int i) {
    // From .10: Debian maps the machine's own name to 127.0.1.1.
    return "127.0.1." + (i + 10);
  }

  /**
   * NodeManager i's host name: nm<i>.tfyarn.test when it resolves to its address (cluster.sh maps
   * it in /etc/hosts when it may), its bare address otherwise.
   */
  static String hostName(int i) {
    String name = "nm" + i + "." + HOST_DOMAIN;
    try {
      if (InetAddress.getByName(name).getHostAddress().equals(address(i))) {
        return name;
      }
    } catch (UnknownHostException e) {
      // not mapped: use the address itself
    }
    return address(i);
  }

  @Override
  public NodeId nodeId(int i) {
    return NodeId.newInstance(hosts[i], rpcPort);
  }

  String webAddress(int i) {
    return hosts[i] + ":" + webPort;
  }

  /** NodeManager i's own directory: configuration, local and log dirs (containers' work dirs). */
  File dir(int i) {
    return new File(new File(base, "data"), "nm-" + i);
  }

  /**
   * NodeManager i's whole configuration: the cluster's server keys, then what makes it host i.
   * Container executors and their settings belong here.
   */
  Configuration configuration(int i) {
    Configuration c = new Configuration(false);
    serverKeys.accept(c);
    String host = hosts[i];
    c.set("yarn.nodemanager.hostname", host);
    c.set(YarnConfiguration.NM_BIND_HOST, address(i));
    c.set(YarnConfiguration.NM_ADDRESS, host + ":" + rpcPort);
    c.set(YarnConfiguration.NM_LOCALIZER_ADDRESS, host + ":" + localizerPort);
    c.set(YarnConfiguration.NM_WEBAPP_ADDRESS, host + ":" + webPort);
    c.set(YarnConfiguration.NM_LOCAL_DIRS, new File(dir(i), "local").getAbsolutePath());
    c.set(YarnConfiguration.NM_LOG_DIRS, new File(dir(i), "logs").getAbsolutePath());
    c.setBoolean(YarnConfiguration.NM_RECOVERY_ENABLED, false);
    // Permissions of localized files set in-process, as with production's native library.
    LocalPermissions.configure(c);
    hostKeys.accept(i, c);
    if (i == 1) {
      LinuxExecutor.configureGpu(c); // the gpu-labelled node (docker profile only)
    }
    return c;
  }

  /** Starts every NodeManager process; {@link TestCluster} waits for them in the RM. */
  synchronized void startAll() throws IOException {
    for (int i = 0; i < count; i++) {
      start(i);
    }
  }

  /** Starts NodeManager i's process (again: same configuration, same node id). */
  @Override
  public synchronized void start(int i) throws IOException {
    if (procs[i] != null && procs[i].isAlive()) {
      throw new IllegalStateException("NodeManager " + i + " is running");
    }
    File conf = new File(dir(i), "conf");
    TestCluster.writeSiteFiles(configuration(i), conf);
    File logs = new File(base, "logs");
    logs.mkdirs();
    List<String> cmd = new ArrayList<>();
    cmd.add(new File(System.getProperty("java.home"), "bin/java").getPath());
    cmd.add("-Xmx512m");
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-XX:TieredStopAtLevel=1");
    // The launcher's own module openings, IPv4 preference, log4j and Kerberos settings.
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (a.startsWith("--add-opens") || a.startsWith("-Djava.net.preferIPv4Stack")
          || a.startsWith("-Dlog4j.configuration")) {
        cmd.add(a);
      }
    }
    String krb5 = System.getProperty("java.security.krb5.conf");
    if (krb5 != null) {
      cmd.add("-Djava.security.krb5.conf=" + krb5);
    }
    cmd.add("-Dhadoop.log.dir=" + new File(dir(i), "logs").getAbsolutePath());
    cmd.add("-Dyarn.log.dir=" + new File(dir(i), "logs").getAbsolutePath());
    cmd.add("-Dtfyarn.testcluster.nm=" + i);
    cmd.add("-cp");
    cmd.add(conf.getAbsolutePath() + File.pathSeparator + System.getProperty("java.class.path"));
    cmd.add("org.apache.hadoop.yarn.server.nodemanager.NodeManager");
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.directory(dir(i));
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(new File(logs, "nm-" + i + ".log")));
    pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    procs[i] = pb.start();
    frozen[i] = false;
    TestCluster.log("NodeManager " + i + " (" + nodeId(i) + ", web " + webAddress(i) + ") started, pid " + procs[i].pid());
  }

  @Override
  public synchronized boolean isAlive(int i) {
    return procs[i] != null && procs[i].isAlive();
  }

  @Override
  public synchronized boolean isFrozen(int i) {
    return frozen[i];
  }

  synchronized long pid(int i) {
    return procs[i] == null ? -1 : procs[i].pid();
  }

  /**
   * Host i crashes: its NodeManager and every process of its containers stop at once (SIGSTOP to
   * all, so none sees another go), then die (SIGKILL). Nothing unregisters: the RM learns of it
   * only when the node's liveness expires. Returns how many processes it killed.
   */
  @Override
  public synchronized String crash(int i) throws IOException, InterruptedException {
    Process p = procs[i];
    if (p == null || !p.isAlive()) {
      throw new IllegalStateException("NodeManager " + i + " is already stopped");
    }
    Set<Long> victims = hostProcesses(i);
    signal("STOP", victims);
    signal("KILL", victims);
    // Containers whose processes left the NodeManager's tree (setsid and a double fork) still
    // name the host's directory in their command line or working directory.
    for (int round = 0; round < 20; round++) {
      Set<Long> left = hostProcesses(i);
      if (left.isEmpty()) {
        break;
      }
      victims.addAll(left);
      signal("KILL", left);
      Thread.sleep(100);
    }
    p.waitFor(10, TimeUnit.SECONDS);
    frozen[i] = false;
    return "killed " + victims.size() + " processes";
  }

  /** Every live process of host i: the NodeManager, its descendants, and strays in its directory. */
  private Set<Long> hostProcesses(int i) throws IOException {
    Set<Long> pids = new LinkedHashSet<>();
    Process p = procs[i];
    if (p != null && p.isAlive()) {
      pids.add(p.pid());
      p.descendants().forEach(h -> pids.add(h.pid()));
    }
    String mark = dir(i).getAbsolutePath() + "/";
    File[] entries = new File("/proc").listFiles();
    if (entries != null) {
      for (File e : entries) {
        if (!e.getName().matches("\\d+")) {
          continue;
        }
        long pid = Long.parseLong(e.getName());
        if (pid == ProcessHandle.current().pid()) {
          continue;
        }
        try {
          String cwd = java.nio.file.Files.readSymbolicLink(new File(e, "cwd").toPath()).toString() + "/";
          String cmdline = new String(java.nio.file.Files.readAllBytes(new File(e, "cmdline").toPath()),
              java.nio.charset.StandardCharsets.UTF_8).replace('\0', ' ');
          if (cwd.startsWith(mark) || cmdline.contains(mark)) {
            pids.add(pid);
          }
        } catch (IOException | RuntimeException ignored) {
          // gone meanwhile, or not ours to read
        }
      }
    }
    return pids;
  }

  /** NodeManager i's process stops (SIGSTOP): no heartbeats, no container management. */
  @Override
  public synchronized void freeze(int i) throws IOException, InterruptedException {
    if (!isAlive(i)) {
      throw new IllegalStateException("NodeManager " + i + " is stopped");
    }
    if (frozen[i]) {
      throw new IllegalStateException("NodeManager " + i + " is already frozen");
    }
    signal("STOP", Set.of(procs[i].pid()));
    frozen[i] = true;
  }

  /** NodeManager i's process goes on (SIGCONT). */
  @Override
  public synchronized void thaw(int i) throws IOException, InterruptedException {
    if (!frozen[i]) {
      throw new IllegalStateException("NodeManager " + i + " is not frozen");
    }
    signal("CONT", Set.of(procs[i].pid()));
    frozen[i] = false;
  }

  /** Stops every NodeManager (SIGTERM: they unregister), then kills what is left. */
  @Override
  public synchronized void stopAll() {
    for (Process p : procs) {
      if (p != null && p.isAlive()) {
        try {
          signal("CONT", Set.of(p.pid()));
        } catch (IOException | InterruptedException ignored) {
          // best effort
        }
        p.destroy();
      }
    }
    for (Process p : procs) {
      if (p == null) {
        continue;
      }
      try {
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
      }
    }
  }

  private static void signal(String sig, Set<Long> pids) throws IOException, InterruptedException {
    if (pids.isEmpty()) {
      return;
    }
    List<String> cmd = new ArrayList<>();
    cmd.add("kill");
    cmd.add("-" + sig);
    cmd.add("--");
    for (long pid : pids) {
      cmd.add(Long.toString(pid));
    }
    // Some may be gone already: kill's exit status says nothing useful here.
    new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start().waitFor(10, TimeUnit.SECONDS);
  }
}
