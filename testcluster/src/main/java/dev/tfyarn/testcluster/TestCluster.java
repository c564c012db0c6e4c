package dev.tfyarn.testcluster;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeLabel;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.api.protocolrecords.AddToClusterNodeLabelsRequest;
import org.apache.hadoop.yarn.server.api.protocolrecords.ReplaceLabelsOnNodeRequest;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.apache.kerby.KOptions;
import org.apache.kerby.kerberos.kerb.client.KrbClient;
import org.apache.kerby.kerberos.kerb.client.KrbOption;
import org.apache.kerby.kerberos.kerb.server.KdcConfigKey;
import org.apache.kerby.kerberos.kerb.server.SimpleKdcServer;
import org.apache.kerby.kerberos.kerb.type.ticket.TgtTicket;

/**
 * Starts a real single-machine Hadoop cluster: in this JVM MiniDFSCluster (1 NameNode, 1 DataNode)
 * and a ResourceManager, and N NodeManagers (default 2): MiniYARNCluster's, in this JVM, or with
 * --nm-hosts true each in a JVM and on a loopback "host" of its own ({@link NodeManagers}),
 * configured the way tfyarn's tests need (fixed ports, CapacityScheduler
 * with two queues, yarn.io/gpu, an exclusive node label "gpu", log aggregation to HDFS). Once every
 * part answers over RPC it writes the client configuration to DIR/conf and DIR/ready, then runs
 * until it is signalled.
 */
public final class TestCluster {
  private static final String GPU = "yarn.io/gpu";
  private static final String GPU_LABEL = "gpu";

  private final Options opts;
  private MiniDFSCluster dfs;
  private ResourceManager rm;
  private NodeManagerSet nms;
  private Faults faults;
  private SimpleKdcServer kdc;
  // Kerberos profile only: the service principal (all daemons) and the test user.
  private String servicePrincipal;
  private File serviceKeytab;
  private String userPrincipal;
  private File userKeytab;
  private String bobPrincipal;

  private TestCluster(Options opts) {
    this.opts = opts;
  }

  public static void main(String[] args) throws Exception {
    Options opts = Options.parse(args);
    if (opts.kerberos()) {
      // Before any JDK or Hadoop Kerberos code reads the default realm.
      System.setProperty("java.security.krb5.conf", new File(opts.dir.getAbsoluteFile(), "krb5.conf").getPath());
    }
    TestCluster cluster = new TestCluster(opts);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      cluster.stop();
      stopped.countDown();
    }, "testcluster-shutdown"));
    try {
      cluster.start();
    } catch (Throwable t) {
      System.err.println("testcluster: start failed: " + t);
      t.printStackTrace();
      writeString(new File(opts.dir, "failed"), String.valueOf(t) + "\n");
      System.exit(1);
    }
    stopped.await();
  }

  private void start() throws Exception {
    File base = opts.dir.getAbsoluteFile();
    File data = new File(base, "data");
    if (opts.kerberos()) {
      startKdc(base, data);
    }
    Configuration conf = new YarnConfiguration();
    serverKeys(conf);
    rmKeys(conf, data);
    if (opts.kerberos()) {
      UserGroupInformation.setConfiguration(conf);
      UserGroupInformation.loginUserFromKeytab(servicePrincipal, serviceKeytab.getPath());
    }

    // Resource types are a JVM-wide singleton in Hadoop; load ours before any YARN service reads them.
    ResourceUtils.resetResourceTypes(conf);

    log("starting HDFS (NameNode port " + opts.nnPort + ")");
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(data, "dfs").getPath());
    dfs = new MiniDFSCluster.Builder(conf)
        .numDataNodes(1)
        .nameNodePort(opts.nnPort)
        .nameNodeHttpPort(opts.nnHttpPort)
        .format(true)
        .build();
    dfs.waitActive();
    String defaultFs = "hdfs://localhost:" + dfs.getNameNodePort();
    conf.set("fs.defaultFS", defaultFs);
    prepareHdfs(dfs.getFileSystem());
    // The test users' homes on every profile: a test process acts as alice wherever a cluster
    // of its runs containers as their users (clustertest), whichever cluster it then submits to.
    mkdir(dfs.getFileSystem(), "/user/alice", (short) 0755);
    dfs.getFileSystem().setOwner(new Path("/user/alice"), "alice", null);
    mkdir(dfs.getFileSystem(), "/user/bob", (short) 0755);
    dfs.getFileSystem().setOwner(new Path("/user/bob"), "bob", null);

    NodeManagers hosts = null;
    if (opts.nmHosts) {
      log("starting the ResourceManager (port " + opts.rmPort + ")");
      rm = new ResourceManager();
      rm.init(conf);
      rm.start();
      log("starting " + opts.nodeManagers + " NodeManager processes");
      hosts = new NodeManagers(base, opts.nodeManagers, opts.nmPort, opts.nmLocalizerPort, opts.nmWebPort,
          c -> {
            serverKeys(c);
            c.set("fs.defaultFS", defaultFs);
          });
      nms = hosts;
      if (opts.kerberos()) {
        hosts.hostKeys(this::nodeManagerKerberos);
      }
      hosts.startAll();
    } else {
      log("starting YARN (ResourceManager port " + opts.rmPort + ")");
      miniYarnKeys(conf);
      MiniYARNCluster yarn = new MiniYARNCluster("tfyarn", 1, opts.nodeManagers, 1, 1);
      yarn.init(conf);
      yarn.start();
      if (!yarn.waitForNodeManagersToConnect(60_000)) {
        throw new IllegalStateException("NodeManagers did not register within 60s");
      }
      rm = yarn.getResourceManager();
      nms = new InJvmNodeManagers(yarn, opts.nodeManagers);
    }
    waitForRunningNodes(rm, opts.nodeManagers, 120_000);
    if (!opts.simulatedNodes()) {
      labelGpuNode();
    }
    faults = new Faults(base, rm, nms, conf);
    faults.start();

    Configuration client = clientConf(defaultFs);
    File confDir = new File(base, "conf");
    writeClientConf(client, confDir);
    verifyOverRpc(confDir);
    Map<String, String> facts = new LinkedHashMap<>();
    facts.put("profile", opts.profile);
    facts.put("hadoop.version", org.apache.hadoop.util.VersionInfo.getVersion());
    facts.put("fs.defaultFS", defaultFs);
    facts.put("rm", "localhost:" + opts.rmPort);
    facts.put("rm.web", "localhost:" + opts.rmWebPort);
    facts.put("nodemanagers", Integer.toString(opts.nodeManagers));
    facts.put("max-application-priority", Integer.toString(MAX_APP_PRIORITY));
    facts.put("executor", opts.executor);
    if (opts.executor.equals("linux")) {
      facts.put("cgroups", opts.cgroups == null ? "none" : opts.cgroups);
    }
    facts.put("nodemanager-hosts", Boolean.toString(opts.nmHosts));
    for (int i = 0; i < opts.nodeManagers; i++) {
      facts.put("nm" + i, nms.nodeId(i).toString());
      if (hosts != null) {
        facts.put("nm" + i + ".web", hosts.webAddress(i));
      }
    }
    if (opts.kerberos()) {
      File expired = new File(base, "alice-expired.ccache");
      waitUntilExpired(expired);
      facts.put("realm", REALM);
      facts.put("krb5.conf", new File(base, "krb5.conf").getPath());
      facts.put("principal", userPrincipal);
      facts.put("keytab", userKeytab.getPath());
      facts.put("password.file", new File(base, "alice.password").getPath());
      facts.put("ccache", new File(base, "alice.ccache").getPath());
      facts.put("expired.ccache", expired.getPath());
      facts.put("bob.principal", bobPrincipal);
      facts.put("bob.keytab", new File(base, "bob.keytab").getPath());
      facts.put("bob.password.file", new File(base, "bob.password").getPath());
      facts.put("bob.ccache", new File(base, "bob.ccache").getPath());
      facts.put("mapped.principal", MAPPED_USER + "@" + REALM);
      facts.put("mapped.keytab", new File(base, MAPPED_USER + ".keytab").getPath());
      facts.put("mapped.password.file", new File(base, MAPPED_USER + ".password").getPath());
      facts.put("mapped.ccache", new File(base, MAPPED_USER + ".ccache").getPath());
      facts.put("service.principal", servicePrincipal);
      facts.put("service.keytab", serviceKeytab.getPath());
      facts.put("service.ccache", new File(base, "service.ccache").getPath());
      if (hosts != null) {
        for (int i = 0; i < opts.nodeManagers; i++) {
          facts.put("nm" + i + ".principal", nodeManagerPrincipal(i));
          facts.put("nm" + i + ".keytab", nodeManagerKeytab(base, i).getPath());
        }
      }
      facts.put("kdc", "localhost:" + opts.kdcPort);
      facts.put("token.renew.ms", Long.toString(opts.tokenRenewMs));
      facts.put("token.max-lifetime.ms", Long.toString(opts.tokenMaxLifetimeMs));
    }
    StringBuilder sb = new StringBuilder();
    facts.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
    writeString(new File(base, "ready"), sb.toString());
    log("ready: " + facts);
    startHealthReporter(new File(base, "health"));
  }

  /**
   * Every two seconds, writes "ok EPOCH" or "bad REASON EPOCH" to DIR/health, so that
   * `cluster.sh status` can tell a healthy cluster from a live but broken JVM without starting one.
   */
  private void startHealthReporter(File out) {
    Thread t = new Thread(() -> {
      while (true) {
        String state;
        try {
          state = healthProblem();
        } catch (Throwable e) {
          state = e.toString();
        }
        try {
          long now = System.currentTimeMillis() / 1000;
          writeString(out, (state == null ? "ok " : "bad " + state.replace('\n', ' ') + " ") + now + "\n");
          Thread.sleep(2000);
        } catch (InterruptedException e) {
          return;
        } catch (IOException e) {
          System.err.println("testcluster: health: " + e);
        }
      }
    }, "testcluster-health");
    t.setDaemon(true);
    t.start();
  }

  private synchronized String healthProblem() throws IOException {
    if (dfs == null || rm == null) {
      return "stopping";
    }
    if (dfs.getFileSystem().isInSafeMode()) {
      return "NameNode in safe mode";
    }
    if (opts.simulatedNodes()) {
      return null; // the benchmark's simulated NodeManagers come and go with it
    }
    int running = 0;
    for (RMNode node : rm.getRMContext().getRMNodes().values()) {
      if (node.getState() == NodeState.RUNNING) {
        running++;
      }
    }
    // A NodeManager stopped or frozen on purpose (cluster.sh nm stop|freeze) is not a broken
    // cluster; a frozen one may still count as RUNNING until its liveness expires.
    int want = opts.nodeManagers - faults.stoppedCount();
    int frozen = faults.frozenCount();
    if (running > want || running < want - frozen) {
      return running + " of " + want + " NodeManagers RUNNING";
    }
    if (faults.isStopped(1)) {
      return null;
    }
    NodeId gpuNode = nms.nodeId(1);
    Set<String> labels = rm.getRMContext().getNodeLabelManager().getNodeLabels().get(gpuNode);
    if (labels == null || !labels.contains(GPU_LABEL)) {
      return "label " + GPU_LABEL + " missing on " + gpuNode;
    }
    return null;
  }

  static final String PREEMPTION_WAIT_KEY =
      "yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill";
  static final long PREEMPTION_WAIT_MS = 5000;
  /** yarn.cluster.max-application-priority: what tfyarn run --priority can get. */
  static final int MAX_APP_PRIORITY = 10;

  /**
   * The keys every server of the cluster shares, the ResourceManager's and the NodeManagers'
   * (see NodeManagers.configuration for what is a NodeManager's own).
   */
  private void serverKeys(Configuration conf) {
    conf.set("hadoop.rpc.protection", opts.rpcProtection());
    conf.set("hadoop.security.authentication", "simple");
    if (opts.kerberos()) {
      kerberosServerConf(conf);
    }
    // Lets the NameNode and our tests run as whoever started the cluster (root in CI).
    conf.set("hadoop.proxyuser." + currentUser() + ".hosts", "*");
    conf.set("hadoop.proxyuser." + currentUser() + ".groups", "*");
    conf.setInt("dfs.replication", 1);
    conf.setBoolean("dfs.permissions.enabled", true);
    conf.setInt("dfs.namenode.safemode.extension", 0);
    // Loopback only, like every other daemon of the cluster: on every interface, any machine on
    // the network could act as any user (simple authentication).
    conf.set("dfs.namenode.rpc-bind-host", "127.0.0.1");

    conf.set(YarnConfiguration.RM_HOSTNAME, "localhost");
    conf.set(YarnConfiguration.RM_ADDRESS, "localhost:" + opts.rmPort);
    conf.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, "localhost:" + opts.schedulerPort);
    conf.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, "localhost:" + opts.trackerPort);
    conf.set(YarnConfiguration.RM_ADMIN_ADDRESS, "localhost:" + opts.adminPort);
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "localhost:" + opts.rmWebPort);

    conf.set(YarnConfiguration.RM_SCHEDULER,
        "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler");
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, opts.nmMemoryMb);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES, opts.nmVcores);
    conf.setInt(YarnConfiguration.RM_AM_MAX_ATTEMPTS, 2);
    // Hadoop's default cluster-wide maximum application priority is 0, which lowers every
    // priority asked (tfyarn run --priority) to 0: allow some, as production clusters that use
    // priorities do.
    conf.setInt(YarnConfiguration.MAX_CLUSTER_LEVEL_APPLICATION_PRIORITY, MAX_APP_PRIORITY);
    // SchedulingRequests (allocation tags and placement constraints, `run --spread`) are placed by
    // the CapacityScheduler itself; the default ("disabled") refuses them. Plain ResourceRequests
    // are untouched by this.
    conf.set(YarnConfiguration.RM_PLACEMENT_CONSTRAINTS_HANDLER,
        YarnConfiguration.SCHEDULER_RM_PLACEMENT_CONSTRAINTS_HANDLER);
    // The CapacityScheduler's wait between announcing a preemption and the kill (production
    // default 15 s). Only its preemption monitor reads it, and that stays off: on its own it would
    // preempt one test's containers for another's (a job in default over its 60% while one in
    // ml-gpu waits). `cluster.sh preempt` takes it as its default wait, and clients read it from
    // their yarn-site, as from a production one, to date their preemption warnings.
    conf.setLong(PREEMPTION_WAIT_KEY, PREEMPTION_WAIT_MS);
    // A NodeManager that stops heartbeating is LOST after this long (production: 10 minutes), so
    // that tests of lost nodes end in seconds.
    conf.setLong(YarnConfiguration.RM_NM_EXPIRY_INTERVAL_MS, opts.nmExpiryMs);

    conf.set(YarnConfiguration.RESOURCE_TYPES, GPU);
    conf.setInt(YarnConfiguration.NM_RESOURCES_PREFIX + GPU, opts.nmGpus);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, opts.nmMemoryMb);
    conf.setInt(YarnConfiguration.NM_VCORES, opts.nmVcores);
    // Real memory enforcement (exit status -104) like a production cluster; virtual memory checks
    // only produce false kills for Go and TensorFlow processes that reserve large address spaces.
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, true);
    // Hadoop 3.4's yarn.nodemanager.resource.memory.enforced (default true) hands memory limits to
    // cgroups and switches the polling check above off; without cgroups nothing would be enforced.
    conf.setBoolean("yarn.nodemanager.resource.memory.enforced", false);
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setFloat("yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage", 99.0f);
    conf.setLong("yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb", 0);
    conf.setInt(YarnConfiguration.DEBUG_NM_DELETE_DELAY_SEC, 0);
    conf.setBoolean(YarnConfiguration.NODE_LABELS_ENABLED, true);

    logAggregation(conf, !opts.kerberos());
    if (opts.executor.equals("linux")) {
      LinuxExecutor.configure(conf, opts.containerExecutor, opts.cgroups);
    }
  }

  /** MiniYARNCluster's keys: the NodeManagers in this JVM, on fixed RPC ports of localhost. */
  private void miniYarnKeys(Configuration conf) {
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, true);
    conf.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, opts.nmMemoryMb);
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_CONTROL_RESOURCE_MONITORING, true);
    // As NodeManagers.configuration: permissions of localized files set in-process.
    LocalPermissions.configure(conf);
  }

  /** The ResourceManager's own keys (the node label store). */
  private static void rmKeys(Configuration conf, File data) {
    conf.set(YarnConfiguration.FS_NODE_LABELS_STORE_ROOT_DIR,
        new File(data, "node-labels").toURI().toString());
  }

  // Every container's logs land in one HDFS tree that `yarn logs` and `tfyarn logs` can read (the
  // per-controller key takes precedence over yarn.nodemanager.remote-app-log-dir).
  private static void logAggregation(Configuration conf, boolean enabled) {
    conf.setBoolean(YarnConfiguration.LOG_AGGREGATION_ENABLED, enabled);
    conf.set(YarnConfiguration.LOG_AGGREGATION_FILE_FORMATS, "TFile");
    conf.set("yarn.log-aggregation.TFile.remote-app-log-dir", "/tmp/logs");
    conf.set(YarnConfiguration.NM_REMOTE_APP_LOG_DIR, "/tmp/logs");
    conf.setLong(YarnConfiguration.NM_LOG_AGGREGATION_ROLL_MONITORING_INTERVAL_SECONDS, -1);
  }

  private Configuration clientConf(String defaultFs) {
    Configuration c = new Configuration(false);
    c.set("fs.defaultFS", defaultFs);
    c.set("hadoop.security.authentication", "simple");
    c.set("hadoop.rpc.protection", opts.rpcProtection());
    c.set("dfs.replication", "1");
    c.set(YarnConfiguration.RM_HOSTNAME, "localhost");
    c.set(YarnConfiguration.RM_ADDRESS, "localhost:" + opts.rmPort);
    c.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, "localhost:" + opts.schedulerPort);
    c.set(YarnConfiguration.RM_ADMIN_ADDRESS, "localhost:" + opts.adminPort);
    c.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, "localhost:" + opts.trackerPort);
    c.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "localhost:" + opts.rmWebPort);
    c.set(YarnConfiguration.RESOURCE_TYPES, GPU);
    c.set(YarnConfiguration.NODE_LABELS_ENABLED, "true");
    // Clients cap --am-attempts with the RM's value, as production yarn-site files state it.
    c.setInt(YarnConfiguration.RM_AM_MAX_ATTEMPTS, 2);
    c.setLong(PREEMPTION_WAIT_KEY, PREEMPTION_WAIT_MS);
    logAggregation(c, !opts.kerberos());
    if (opts.kerberos()) {
      // Written as production clusters write them: _HOST is the server's canonical host name.
      String hostPrincipal = currentUser() + "/_HOST@" + REALM;
      c.set("hadoop.security.authentication", "kerberos");
      c.set("hadoop.security.auth_to_local", AUTH_TO_LOCAL);
      c.set("hadoop.rpc.protection", "privacy");
      c.set("dfs.namenode.kerberos.principal", hostPrincipal);
      c.set("dfs.datanode.kerberos.principal", hostPrincipal);
      c.set("dfs.web.authentication.kerberos.principal", "HTTP/_HOST@" + REALM);
      c.set("dfs.block.access.token.enable", "true");
      c.set("dfs.data.transfer.protection", "authentication");
      c.set(YarnConfiguration.RM_PRINCIPAL, hostPrincipal);
      c.set(YarnConfiguration.NM_PRINCIPAL, hostPrincipal);
      c.set("hadoop.http.authentication.type", "simple");
    }
    return c;
  }

  private void prepareHdfs(DistributedFileSystem fs) throws IOException {
    mkdir(fs, "/tmp", (short) 01777);
    mkdir(fs, "/tmp/logs", (short) 01777);
    mkdir(fs, "/user", (short) 0755);
    String user = currentUser();
    Path home = new Path("/user/" + user);
    mkdir(fs, home.toString(), (short) 0755);
    fs.setOwner(home, user, null);
  }

  private static void mkdir(FileSystem fs, String path, short mode) throws IOException {
    Path p = new Path(path);
    fs.mkdirs(p);
    fs.setPermission(p, new FsPermission(mode));
  }

  private static void waitForRunningNodes(ResourceManager rm, int want, long timeoutMs)
      throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (true) {
      int running = 0;
      for (RMNode node : rm.getRMContext().getRMNodes().values()) {
        if (node.getState() == NodeState.RUNNING) {
          running++;
        }
      }
      if (running >= want) {
        return;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException(running + " of " + want + " NodeManagers RUNNING after " + timeoutMs + "ms");
      }
      Thread.sleep(200);
    }
  }

  private void labelGpuNode() throws Exception {
    rm.getRMContext().getRMAdminService().addToClusterNodeLabels(
        AddToClusterNodeLabelsRequest.newInstance(
            Collections.singletonList(NodeLabel.newInstance(GPU_LABEL, true))));
    NodeId gpuNode = nms.nodeId(1);
    Map<NodeId, Set<String>> labels = new HashMap<>();
    labels.put(gpuNode, Collections.singleton(GPU_LABEL));
    rm.getRMContext().getRMAdminService().replaceLabelsOnNode(ReplaceLabelsOnNodeRequest.newInstance(labels));
    log("labelled " + gpuNode + " with '" + GPU_LABEL + "'");
  }

  /**
   * Proves readiness the way a client sees it: over RPC, from the written client config; under
   * kerberos as the test user, logged in from its keytab (a real GSSAPI handshake with each server).
   */
  private void verifyOverRpc(File confDir) throws Exception {
    Configuration c = new YarnConfiguration(new Configuration(false));
    for (String f : new String[] {"core-site.xml", "hdfs-site.xml", "yarn-site.xml"}) {
      c.addResource(new Path(new File(confDir, f).toURI()));
    }
    if (!opts.kerberos()) {
      verifyOverRpc(c);
      return;
    }
    UserGroupInformation alice = UserGroupInformation.loginUserFromKeytabAndReturnUGI(userPrincipal, userKeytab.getPath());
    alice.doAs((java.security.PrivilegedExceptionAction<Void>) () -> {
      verifyOverRpc(c);
      try (FileSystem fs = FileSystem.newInstance(c)) {
        Path probe = new Path("/user/alice/.testcluster-probe");
        fs.create(probe, true).close(); // the block write goes over SASL data transfer
        fs.delete(probe, false);
      }
      return null;
    });
  }

  private void verifyOverRpc(Configuration c) throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    String last = "";
    while (System.currentTimeMillis() < deadline) {
      try (FileSystem fs = FileSystem.newInstance(c)) {
        if (((DistributedFileSystem) fs).isInSafeMode()) {
          last = "NameNode in safe mode";
        } else {
          YarnClient yc = YarnClient.createYarnClient();
          yc.init(c);
          yc.start();
          try {
            List<NodeReport> nodes = yc.getNodeReports(NodeState.RUNNING);
            List<String> labelled = new ArrayList<>();
            long declaredGpus = -1; // an unlabelled node's (the gpu node's may come from discovery)
            for (NodeReport n : nodes) {
              if (n.getNodeLabels().contains(GPU_LABEL)) {
                labelled.add(n.getNodeId().toString());
              } else {
                declaredGpus = n.getCapability().getResourceValue(GPU);
              }
            }
            if (opts.simulatedNodes()
                || nodes.size() == opts.nodeManagers && labelled.size() == 1 && declaredGpus == opts.nmGpus) {
              return;
            }
            last = nodes.size() + " RUNNING nodes, labelled " + labelled;
          } finally {
            yc.stop();
          }
        }
      } catch (IOException e) {
        last = e.toString();
      }
      Thread.sleep(300);
    }
    throw new IllegalStateException("cluster not ready over RPC within 60s: " + last);
  }

  private static void writeClientConf(Configuration client, File confDir) throws IOException {
    writeSiteFiles(client, confDir);
  }

  /** Writes c's keys to core-site.xml, hdfs-site.xml and yarn-site.xml in confDir. */
  static void writeSiteFiles(Configuration client, File confDir) throws IOException {
    confDir.mkdirs();
    // Hadoop's Java clients want three files; keep each file's keys where Hadoop documents them.
    Configuration core = new Configuration(false);
    Configuration hdfs = new Configuration(false);
    Configuration yarnSite = new Configuration(false);
    for (Map.Entry<String, String> e : client) {
      String k = e.getKey();
      Configuration target = k.startsWith("yarn.") ? yarnSite : k.startsWith("dfs.") ? hdfs : core;
      target.set(k, e.getValue());
    }
    writeXml(core, new File(confDir, "core-site.xml"));
    writeXml(hdfs, new File(confDir, "hdfs-site.xml"));
    writeXml(yarnSite, new File(confDir, "yarn-site.xml"));
  }

  private static void writeXml(Configuration c, File f) throws IOException {
    File tmp = new File(f.getPath() + ".tmp");
    try (OutputStream out = new FileOutputStream(tmp)) {
      c.writeXml(out);
    }
    Files.move(tmp.toPath(), f.toPath(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  static void writeString(File f, String s) throws IOException {
    File tmp = new File(f.getPath() + ".tmp");
    Files.write(tmp.toPath(), s.getBytes(StandardCharsets.UTF_8));
    Files.move(tmp.toPath(), f.toPath(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private synchronized void stop() {
    log("stopping");
    new File(opts.dir, "ready").delete();
    if (nms instanceof InJvmNodeManagers) {
      rm = null; // stopped with MiniYARNCluster's NodeManagers
    }
    if (nms != null) {
      try {
        nms.stopAll();
      } catch (Throwable t) {
        System.err.println("testcluster: stopping the NodeManagers: " + t);
      }
      nms = null;
    }
    if (rm != null) {
      try {
        rm.stop();
      } catch (Throwable t) {
        System.err.println("testcluster: stopping the ResourceManager: " + t);
      }
      rm = null;
    }
    if (dfs != null) {
      try {
        dfs.shutdown(true);
      } catch (Throwable t) {
        System.err.println("testcluster: stopping HDFS: " + t);
      }
      dfs = null;
    }
    if (kdc != null) {
      try {
        kdc.stop();
      } catch (Throwable t) {
        System.err.println("testcluster: stopping the KDC: " + t);
      }
      kdc = null;
    }
    log("stopped");
  }

  // ---- Kerberos profile --------------------------------------------------------------------

  static final String REALM = "EXAMPLE.COM";
  /**
   * A user whose principal's first component is not its user name, as on clusters with
   * hadoop.security.auth_to_local rules of their own: Alice.ML@EXAMPLE.COM is alice.
   */
  static final String MAPPED_USER = "Alice.ML";
  /** Every server's and the client's rules: Alice.ML@EXAMPLE.COM to alice, the rest DEFAULT. */
  static final String AUTH_TO_LOCAL = "\n    RULE:[1:$1@$0](.*\\.ML@EXAMPLE\\.COM)s/\\.ML@.*//L\n    DEFAULT\n  ";
  private static final String ENCTYPES = "aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96";

  /**
   * A real KDC in this JVM (Apache Kerby's SimpleKdcServer, what hadoop-minikdc's MiniKdc wraps),
   * TCP only on a fixed port, with one service principal for every daemon, HTTP/localhost for the
   * web UIs' SPNEGO filters, the test user alice (password + keytab + ticket caches) and a second user
   * bob (password + keytab + ticket cache), the other user of the attack tests.
   */
  private void startKdc(File base, File data) throws Exception {
    File krb5 = new File(base, "krb5.conf");
    writeString(krb5, krb5Conf());
    File kdcDir = new File(data, "kdc");
    kdcDir.mkdirs();
    kdc = new SimpleKdcServer(new org.apache.kerby.kerberos.kerb.client.KrbConfig());
    kdc.setWorkDir(kdcDir);
    kdc.setKdcHost("localhost");
    kdc.setKdcRealm(REALM);
    kdc.setKdcTcpPort(opts.kdcPort);
    kdc.setAllowUdp(false);
    kdc.getKdcConfig().setString(KdcConfigKey.ENCRYPTION_TYPES, ENCTYPES);
    kdc.getKdcConfig().setLong(KdcConfigKey.MINIMUM_TICKET_LIFETIME, 1L);
    kdc.getKdcConfig().setBoolean(KdcConfigKey.PA_ENC_TIMESTAMP_REQUIRED, false);
    kdc.getKrbClient().getKrbConfig().setString(
        org.apache.kerby.kerberos.kerb.client.KrbConfigKey.PERMITTED_ENCTYPES, ENCTYPES);
    kdc.getKrbClient().getKrbConfig().setString(
        org.apache.kerby.kerberos.kerb.client.KrbConfigKey.DEFAULT_TKT_ENCTYPES, ENCTYPES);
    kdc.getKrbClient().getKrbConfig().setString(
        org.apache.kerby.kerberos.kerb.client.KrbConfigKey.DEFAULT_TGS_ENCTYPES, ENCTYPES);
    kdc.init();
    kdc.start();
    // Kerby's init() points java.security.krb5.conf at a file of its own: use ours (the one Go reads).
    System.setProperty("java.security.krb5.conf", krb5.getPath());
    Class.forName("sun.security.krb5.Config").getMethod("refresh").invoke(null);
    log("KDC for " + REALM + " listening on localhost:" + opts.kdcPort + " (TCP)");

    String user = currentUser();
    servicePrincipal = user + "/localhost@" + REALM;
    serviceKeytab = new File(base, "service.keytab");
    createAndExport(serviceKeytab, user + "/localhost", "HTTP/localhost");
    // A ticket cache for the service principal too: its short name is the HDFS superuser, the
    // administrator of the attack tests (e.g. the owner of a shared cache directory).
    storeTicket(kdc.getKrbClient(), kdc.getKrbClient().requestTgt(servicePrincipal, serviceKeytab),
        new File(base, "service.ccache"));

    if (opts.nmHosts) {
      // As on a production cluster, every NodeManager host has service principals of its own
      // (<osuser>/nmI.tfyarn.test, HTTP/nmI.tfyarn.test) in a keytab of its own.
      for (int i = 0; i < opts.nodeManagers; i++) {
        File keytab = nodeManagerKeytab(base, i);
        String host = NodeManagers.hostName(i);
        createAndExport(keytab, user + "/" + host, "HTTP/" + host);
      }
    }

    userPrincipal = "alice@" + REALM;
    String password = createUser(base, "alice");
    userKeytab = new File(base, "alice.keytab");
    // A second user, bob, with his own password, keytab and ticket cache: the other user of the
    // attack tests (another principal attacking alice's job on the same cluster).
    bobPrincipal = "bob@" + REALM;
    createUser(base, "bob");
    createUser(base, MAPPED_USER);

    KrbClient client = kdc.getKrbClient();
    // A ticket with a lifetime of 2 s: expired long before the cluster is ready.
    KOptions shortLived = new KOptions();
    shortLived.add(KrbOption.CLIENT_PRINCIPAL, userPrincipal);
    shortLived.add(KrbOption.USE_PASSWD, true);
    shortLived.add(KrbOption.USER_PASSWD, password);
    shortLived.add(KrbOption.LIFE_TIME, 2);
    TgtTicket expiring = client.requestTgt(shortLived);
    expiredCCacheEnd = expiring.getEncKdcRepPart().getEndTime().getTime();
    storeTicket(client, expiring, new File(base, "alice-expired.ccache"));
  }

  private long expiredCCacheEnd;

  /**
   * Creates the principals (random keys) and writes a keytab, owner-only, with theirs alone
   * (Kerby's createAndExportPrincipals would export every principal of the realm, krbtgt too).
   */
  private void createAndExport(File keytab, String... principals) throws Exception {
    keytab.delete();
    for (String p : principals) {
      kdc.createPrincipal(p);
      kdc.exportPrincipal(p, keytab);
    }
    ownerOnly(keytab);
  }

  /** NodeManager i's own service principal (TC_NM_HOSTS=1): the cluster's user on its host. */
  private static String nodeManagerPrincipal(int i) {
    return currentUser() + "/" + NodeManagers.hostName(i) + "@" + REALM;
  }

  private static File nodeManagerKeytab(File base, int i) {
    return new File(base, "nm-" + i + ".keytab");
  }

  /**
   * NodeManager i's Kerberos identity: its host's principals and keytab, instead of the
   * cluster-wide service principal that the NameNode, DataNode and ResourceManager share.
   */
  private void nodeManagerKerberos(int i, Configuration c) {
    String keytab = nodeManagerKeytab(opts.dir.getAbsoluteFile(), i).getPath();
    c.set(YarnConfiguration.NM_PRINCIPAL, nodeManagerPrincipal(i));
    c.set(YarnConfiguration.NM_KEYTAB, keytab);
    c.set(YarnConfiguration.NM_WEBAPP_SPNEGO_USER_NAME_KEY, "HTTP/" + NodeManagers.hostName(i) + "@" + REALM);
    c.set(YarnConfiguration.NM_WEBAPP_SPNEGO_KEYTAB_FILE_KEY, keytab);
  }

  /**
   * Creates NAME@REALM with a random password and writes BASE/NAME.password, BASE/NAME.keytab and
   * BASE/NAME.ccache (a fresh TGT), each readable by the owner only; returns the password.
   */
  private String createUser(File base, String name) throws Exception {
    String principal = name + "@" + REALM;
    String password = name + "-" + java.util.UUID.randomUUID();
    kdc.createPrincipal(principal, password);
    File pw = new File(base, name + ".password");
    writeString(pw, password + "\n");
    ownerOnly(pw);
    File keytab = new File(base, name + ".keytab");
    keytab.delete();
    kdc.exportPrincipal(principal, keytab);
    ownerOnly(keytab);
    KrbClient client = kdc.getKrbClient();
    storeTicket(client, client.requestTgt(principal, password), new File(base, name + ".ccache"));
    return password;
  }

  private void waitUntilExpired(File ccache) throws InterruptedException {
    long wait = expiredCCacheEnd + 1000 - System.currentTimeMillis();
    if (wait > 0) {
      Thread.sleep(wait);
    }
    log("ticket cache " + ccache + " expired at " + new java.util.Date(expiredCCacheEnd));
  }

  private static void storeTicket(KrbClient client, TgtTicket tgt, File ccache) throws Exception {
    File tmp = new File(ccache.getPath() + ".tmp");
    tmp.delete();
    client.storeTicket(tgt, tmp);
    ownerOnly(tmp);
    Files.move(tmp.toPath(), ccache.toPath(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private static void ownerOnly(File f) throws IOException {
    Files.setPosixFilePermissions(f.toPath(), java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
  }

  /** An MIT-style krb5.conf that the JDK, Hadoop's CLIs and Go's gokrb5 all read. */
  private String krb5Conf() {
    String kdcAddr = "localhost:" + opts.kdcPort;
    return "[libdefaults]\n"
        + "  default_realm = " + REALM + "\n"
        + "  dns_lookup_kdc = false\n"
        + "  dns_lookup_realm = false\n"
        + "  udp_preference_limit = 1\n"
        + "  rdns = false\n"
        + "  forwardable = true\n"
        + "  renew_lifetime = 7d\n"
        + "  ticket_lifetime = 24h\n"
        + "  default_tkt_enctypes = " + ENCTYPES + "\n"
        + "  default_tgs_enctypes = " + ENCTYPES + "\n"
        + "  permitted_enctypes = " + ENCTYPES + "\n"
        + "\n[realms]\n"
        + "  " + REALM + " = {\n"
        + "    kdc = " + kdcAddr + "\n"
        + "    admin_server = " + kdcAddr + "\n"
        + "  }\n"
        + "\n[domain_realm]\n"
        + "  localhost = " + REALM + "\n"
        + "  .localhost = " + REALM + "\n"
        + "  ." + NodeManagers.HOST_DOMAIN + " = " + REALM + "\n";
  }

  /**
   * The server side of a kerberized cluster, after Hadoop's own secure minicluster tests
   * (SaslDataTransferTestCase, TestSecureNNWithQJM, TestContainerManagerSecurity): one service
   * principal for every daemon, SASL on data transfer instead of privileged DataNode ports,
   * short-lived HDFS delegation tokens.
   */
  private void kerberosServerConf(Configuration conf) {
    String keytab = serviceKeytab.getPath();
    String http = "HTTP/localhost@" + REALM;
    conf.set("hadoop.security.authentication", "kerberos");
    conf.set("hadoop.security.auth_to_local", AUTH_TO_LOCAL);
    conf.set("hadoop.security.authorization", "false");
    conf.set("hadoop.http.authentication.type", "simple");
    conf.set("dfs.namenode.kerberos.principal", servicePrincipal);
    conf.set("dfs.namenode.keytab.file", keytab);
    conf.set("dfs.datanode.kerberos.principal", servicePrincipal);
    conf.set("dfs.datanode.keytab.file", keytab);
    conf.set("dfs.web.authentication.kerberos.principal", http);
    conf.set("dfs.web.authentication.kerberos.keytab", keytab);
    conf.set("dfs.namenode.kerberos.internal.spnego.principal", http);
    conf.setBoolean("dfs.block.access.token.enable", true);
    conf.set("dfs.data.transfer.protection", "authentication");
    conf.setBoolean("ignore.secure.ports.for.testing", true);
    conf.setLong("dfs.namenode.delegation.token.renew-interval", opts.tokenRenewMs);
    conf.setLong("dfs.namenode.delegation.token.max-lifetime", opts.tokenMaxLifetimeMs);

    conf.set(YarnConfiguration.RM_PRINCIPAL, servicePrincipal);
    conf.set(YarnConfiguration.RM_KEYTAB, keytab);
    conf.set(YarnConfiguration.NM_PRINCIPAL, servicePrincipal);
    conf.set(YarnConfiguration.NM_KEYTAB, keytab);
    conf.set(YarnConfiguration.RM_WEBAPP_SPNEGO_USER_NAME_KEY, http);
    conf.set(YarnConfiguration.RM_WEBAPP_SPNEGO_KEYTAB_FILE_KEY, keytab);
    conf.set(YarnConfiguration.NM_WEBAPP_SPNEGO_USER_NAME_KEY, http);
    conf.set(YarnConfiguration.NM_WEBAPP_SPNEGO_KEYTAB_FILE_KEY, keytab);
    conf.set(YarnConfiguration.NM_CONTAINER_EXECUTOR,
        "org.apache.hadoop.yarn.server.nodemanager.DefaultContainerExecutor");
  }

  private static String currentUser() {
    try {
      return UserGroupInformation.getCurrentUser().getShortUserName();
    } catch (IOException e) {
      return System.getProperty("user.name");
    }
  }

  static void log(String msg) {
    System.out.println("testcluster: " + msg);
    System.out.flush();
  }

  /** Command line: every port and size has a default that the Makefile and the tests share. */
  static final class Options {
    File dir = new File(".testcluster");
    String profile = "plain";
    int rmPort = 8032;
    int schedulerPort = 8030;
    int trackerPort = 8031;
    int adminPort = 8033;
    int rmWebPort = 8088;
    int nnPort = 8020;
    int nnHttpPort = 9870;
    int nmMemoryMb = 8192;
    int nmVcores = 8;
    int nmGpus = 2;
    int nodeManagers = 2;
    /**
     * No NodeManager of Hadoop's: the ResourceManager waits for simulated ones (bench/scalesim),
     * which register and heartbeat over its ResourceTracker port; no gpu label, and the health
     * report counts no nodes.
     */
    boolean simulatedNodes() {
      return nodeManagers == 0;
    }

    /** Each NodeManager a process on a host of its own (NodeManagers), not MiniYARNCluster's. */
    boolean nmHosts = false;
    int nmPort = 8041;
    int nmLocalizerPort = 8040;
    int nmWebPort = 8042;
    long nmExpiryMs = 30_000;
    int kdcPort = 8090;
    /** "default" (DefaultContainerExecutor, containers as the cluster's user) or "linux". */
    String executor = "default";
    File containerExecutor;
    /** cgroup hierarchy for the linux executor, or null for none. */
    String cgroups;
    long tokenRenewMs = 20_000;
    long tokenMaxLifetimeMs = 90_000;

    boolean kerberos() {
      return profile.equals("kerberos");
    }

    String rpcProtection() {
      switch (profile) {
        case "privacy": return "privacy";
        // Servers accept every level so that a client may pick any of them.
        case "kerberos": return "authentication,integrity,privacy";
        default: return "authentication";
      }
    }

    static Options parse(String[] args) {
      Options o = new Options();
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("missing value for " + a);
        }
        String v = args[++i];
        switch (a) {
          case "--dir": o.dir = new File(v); break;
          case "--profile": o.profile = v; break;
          case "--rm-port": o.rmPort = Integer.parseInt(v); break;
          case "--scheduler-port": o.schedulerPort = Integer.parseInt(v); break;
          case "--tracker-port": o.trackerPort = Integer.parseInt(v); break;
          case "--admin-port": o.adminPort = Integer.parseInt(v); break;
          case "--rm-web-port": o.rmWebPort = Integer.parseInt(v); break;
          case "--nn-port": o.nnPort = Integer.parseInt(v); break;
          case "--nn-http-port": o.nnHttpPort = Integer.parseInt(v); break;
          case "--nm-memory-mb": o.nmMemoryMb = Integer.parseInt(v); break;
          case "--nm-vcores": o.nmVcores = Integer.parseInt(v); break;
          case "--nm-gpus": o.nmGpus = Integer.parseInt(v); break;
          case "--nodemanagers": o.nodeManagers = Integer.parseInt(v); break;
          case "--nm-hosts": o.nmHosts = Boolean.parseBoolean(v); break;
          case "--nm-port": o.nmPort = Integer.parseInt(v); break;
          case "--nm-localizer-port": o.nmLocalizerPort = Integer.parseInt(v); break;
          case "--nm-web-port": o.nmWebPort = Integer.parseInt(v); break;
          case "--nm-expiry-ms": o.nmExpiryMs = Long.parseLong(v); break;
          case "--kdc-port": o.kdcPort = Integer.parseInt(v); break;
          case "--token-renew-ms": o.tokenRenewMs = Long.parseLong(v); break;
          case "--token-max-lifetime-ms": o.tokenMaxLifetimeMs = Long.parseLong(v); break;
          case "--executor": o.executor = v; break;
          case "--container-executor": o.containerExecutor = new File(v); break;
          case "--cgroups": o.cgroups = v.equals("none") ? null : v; break;
          default: throw new IllegalArgumentException("unknown option " + a);
        }
      }
      switch (o.profile) {
        case "plain":
        case "privacy":
        case "kerberos":
          break;
        default:
          throw new IllegalArgumentException("unknown profile " + o.profile + "; use plain, privacy or kerberos");
      }
      if (!o.executor.equals("default") && !o.executor.equals("linux")) {
        throw new IllegalArgumentException("unknown executor " + o.executor + "; use default or linux");
      }
      if (o.executor.equals("linux") && o.containerExecutor == null) {
        throw new IllegalArgumentException("--executor linux needs --container-executor PATH");
      }
      if (o.nodeManagers < 2 && !o.simulatedNodes()) {
        // NodeManager 1 carries the gpu label; NodeManager 0 stays unlabelled for everything else.
        // 0 is the scale simulation's cluster (bench/scalesim): its NodeManagers are simulated.
        throw new IllegalArgumentException("--nodemanagers must be 0 (simulated ones) or at least 2, got " + o.nodeManagers);
      }
      if (o.simulatedNodes() && !o.nmHosts) {
        throw new IllegalArgumentException("--nodemanagers 0 needs --nm-hosts true (MiniYARNCluster starts its own)");
      }
      return o;
    }
  }
}
