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

/**
 * Starts a real single-machine Hadoop cluster in this JVM: MiniDFSCluster (1 NameNode, 1 DataNode)
 * and MiniYARNCluster (1 ResourceManager, 2 NodeManagers), configured the way tfyarn's tests need
 * (fixed ports, CapacityScheduler with two queues, yarn.io/gpu, an exclusive node label "gpu",
 * log aggregation to HDFS). Once every part answers over RPC it writes the client configuration to
 * DIR/conf and DIR/ready, then runs until it is signalled.
 */
public final class TestCluster {
  private static final String GPU = "yarn.io/gpu";
  private static final String GPU_LABEL = "gpu";

  private final Options opts;
  private MiniDFSCluster dfs;
  private MiniYARNCluster yarn;

  private TestCluster(Options opts) {
    this.opts = opts;
  }

  public static void main(String[] args) throws Exception {
    Options opts = Options.parse(args);
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
    Configuration conf = serverConf(data);

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

    log("starting YARN (ResourceManager port " + opts.rmPort + ")");
    yarn = new MiniYARNCluster("tfyarn", 1, 2, 1, 1);
    yarn.init(conf);
    yarn.start();
    if (!yarn.waitForNodeManagersToConnect(60_000)) {
      throw new IllegalStateException("NodeManagers did not register within 60s");
    }
    waitForRunningNodes(yarn.getResourceManager(), 2, 60_000);
    labelGpuNode();

    Configuration client = clientConf(defaultFs);
    File confDir = new File(base, "conf");
    writeClientConf(client, confDir);
    verifyOverRpc(confDir);
    Map<String, String> facts = new LinkedHashMap<>();
    facts.put("profile", opts.profile);
    facts.put("fs.defaultFS", defaultFs);
    facts.put("rm", "localhost:" + opts.rmPort);
    facts.put("rm.web", "localhost:" + opts.rmWebPort);
    for (int i = 0; i < 2; i++) {
      facts.put("nm" + i, yarn.getNodeManager(i).getNMContext().getNodeId().toString());
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
    if (dfs == null || yarn == null) {
      return "stopping";
    }
    if (dfs.getFileSystem().isInSafeMode()) {
      return "NameNode in safe mode";
    }
    ResourceManager rm = yarn.getResourceManager();
    int running = 0;
    for (RMNode node : rm.getRMContext().getRMNodes().values()) {
      if (node.getState() == NodeState.RUNNING) {
        running++;
      }
    }
    if (running != 2) {
      return running + " of 2 NodeManagers RUNNING";
    }
    NodeId gpuNode = yarn.getNodeManager(1).getNMContext().getNodeId();
    Set<String> labels = rm.getRMContext().getNodeLabelManager().getNodeLabels().get(gpuNode);
    if (labels == null || !labels.contains(GPU_LABEL)) {
      return "label " + GPU_LABEL + " missing on " + gpuNode;
    }
    return null;
  }

  private Configuration serverConf(File data) {
    Configuration conf = new YarnConfiguration();
    conf.set("hadoop.rpc.protection", opts.rpcProtection());
    conf.set("hadoop.security.authentication", "simple");
    // Lets the NameNode and our tests run as whoever started the cluster (root in CI).
    conf.set("hadoop.proxyuser." + currentUser() + ".hosts", "*");
    conf.set("hadoop.proxyuser." + currentUser() + ".groups", "*");
    conf.setInt("dfs.replication", 1);
    conf.setBoolean("dfs.permissions.enabled", true);
    conf.setInt("dfs.namenode.safemode.extension", 0);
    conf.set("dfs.namenode.rpc-bind-host", "0.0.0.0");

    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, true);
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

    conf.set(YarnConfiguration.RESOURCE_TYPES, GPU);
    conf.setInt(YarnConfiguration.NM_RESOURCES_PREFIX + GPU, opts.nmGpus);
    conf.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, opts.nmMemoryMb);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, opts.nmMemoryMb);
    conf.setInt(YarnConfiguration.NM_VCORES, opts.nmVcores);
    // Real memory enforcement (exit status -104) like a production cluster; virtual memory checks
    // only produce false kills for Go and TensorFlow processes that reserve large address spaces.
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_CONTROL_RESOURCE_MONITORING, true);
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, true);
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setFloat("yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage", 99.0f);
    conf.setLong("yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb", 0);
    conf.setInt(YarnConfiguration.DEBUG_NM_DELETE_DELAY_SEC, 0);

    conf.setBoolean(YarnConfiguration.NODE_LABELS_ENABLED, true);
    conf.set(YarnConfiguration.FS_NODE_LABELS_STORE_ROOT_DIR,
        new File(data, "node-labels").toURI().toString());

    logAggregation(conf);
    return conf;
  }

  // MiniYARNCluster points each NodeManager's yarn.nodemanager.remote-app-log-dir at its own
  // local directory; the per-controller key takes precedence, so every container's logs land in
  // one HDFS tree that `yarn logs` and `tfyarn logs` can read.
  private static void logAggregation(Configuration conf) {
    conf.setBoolean(YarnConfiguration.LOG_AGGREGATION_ENABLED, true);
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
    logAggregation(c);
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
    ResourceManager rm = yarn.getResourceManager();
    rm.getRMContext().getRMAdminService().addToClusterNodeLabels(
        AddToClusterNodeLabelsRequest.newInstance(
            Collections.singletonList(NodeLabel.newInstance(GPU_LABEL, true))));
    NodeId gpuNode = yarn.getNodeManager(1).getNMContext().getNodeId();
    Map<NodeId, Set<String>> labels = new HashMap<>();
    labels.put(gpuNode, Collections.singleton(GPU_LABEL));
    rm.getRMContext().getRMAdminService().replaceLabelsOnNode(ReplaceLabelsOnNodeRequest.newInstance(labels));
    log("labelled " + gpuNode + " with '" + GPU_LABEL + "'");
  }

  /** Proves readiness the way a client sees it: over RPC, from the written client config. */
  private void verifyOverRpc(File confDir) throws Exception {
    Configuration c = new YarnConfiguration(new Configuration(false));
    for (String f : new String[] {"core-site.xml", "hdfs-site.xml", "yarn-site.xml"}) {
      c.addResource(new Path(new File(confDir, f).toURI()));
    }
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
            for (NodeReport n : nodes) {
              if (n.getNodeLabels().contains(GPU_LABEL)) {
                labelled.add(n.getNodeId().toString());
              }
            }
            if (nodes.size() == 2 && labelled.size() == 1
                && nodes.get(0).getCapability().getResourceValue(GPU) == opts.nmGpus) {
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

  private static void writeString(File f, String s) throws IOException {
    File tmp = new File(f.getPath() + ".tmp");
    Files.write(tmp.toPath(), s.getBytes(StandardCharsets.UTF_8));
    Files.move(tmp.toPath(), f.toPath(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private synchronized void stop() {
    log("stopping");
    new File(opts.dir, "ready").delete();
    if (yarn != null) {
      try {
        yarn.stop();
      } catch (Throwable t) {
        System.err.println("testcluster: stopping YARN: " + t);
      }
      yarn = null;
    }
    if (dfs != null) {
      try {
        dfs.shutdown(true);
      } catch (Throwable t) {
        System.err.println("testcluster: stopping HDFS: " + t);
      }
      dfs = null;
    }
    log("stopped");
  }

  private static String currentUser() {
    try {
      return UserGroupInformation.getCurrentUser().getShortUserName();
    } catch (IOException e) {
      return System.getProperty("user.name");
    }
  }

  private static void log(String msg) {
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

    String rpcProtection() {
      return profile.equals("privacy") ? "privacy" : "authentication";
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
          default: throw new IllegalArgumentException("unknown option " + a);
        }
      }
      switch (o.profile) {
        case "plain":
        case "privacy":
          break;
        case "kerberos":
          throw new IllegalArgumentException("profile kerberos is not implemented yet; use plain or privacy");
        default:
          throw new IllegalArgumentException("unknown profile " + o.profile + "; use plain or privacy");
      }
      return o;
    }
  }
}
