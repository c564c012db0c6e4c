package dev.tfyarn.testcluster;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.nodemanager.NodeStatusUpdater;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerPreemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;

/**
 * Faults on demand for tests, driven by `cluster.sh nm stop|start I` and `cluster.sh preempt
 * CONTAINER_ID`: a request is a file DIR/control/ID.req holding one command line; the answer is
 * DIR/control/ID.done, "ok DETAIL" or "error MESSAGE".
 *
 * <ul>
 *   <li>{@code nm-stop I}: NodeManager I crashes: it stops heartbeating without unregistering, its
 *       containers' process groups get SIGKILL, then it stops. The RM notices only when the node's
 *       liveness expires (yarn.nm.liveness-monitor.expiry-interval-ms, short in the test cluster)
 *       and declares it LOST; its containers complete with exit status -100.
 *   <li>{@code nm-start I}: a new NodeManager I starts on the same node id (host:port, so node labels
 *       stay) and the call returns once the RM lists it RUNNING.
 *   <li>{@code preempt CONTAINER_ID [WAIT_MS]}: the CapacityScheduler's own preemption of one
 *       container, the two events its ProportionalCapacityPreemptionPolicy sends: marked for
 *       preemption (the AM's next allocate response announces it in its PreemptionMessage,
 *       negotiable contract), then after WAIT_MS (default: the cluster's max_wait_before_kill,
 *       TestCluster.PREEMPTION_WAIT_MS) killed: exit status -102. The answer comes after the kill.
 *       The policy itself stays off (TestCluster.serverConf says why): only this command preempts.
 * </ul>
 */
final class Faults {
  private final File dir;
  private final MiniYARNCluster yarn;
  private final NodeManager[] nms;
  private final boolean[] stopped;

  Faults(File base, MiniYARNCluster yarn, int n) {
    this.dir = new File(base, "control");
    this.yarn = yarn;
    this.nms = new NodeManager[n];
    this.stopped = new boolean[n];
    for (int i = 0; i < n; i++) {
      nms[i] = yarn.getNodeManager(i);
    }
  }

  /** The NodeManager now serving slot i (a restarted one replaces the original). */
  synchronized NodeManager nodeManager(int i) {
    return nms[i];
  }

  synchronized boolean isStopped(int i) {
    return stopped[i];
  }

  synchronized int stoppedCount() {
    int n = 0;
    for (boolean s : stopped) {
      n += s ? 1 : 0;
    }
    return n;
  }

  void start() {
    dir.mkdirs();
    Thread t = new Thread(this::poll, "testcluster-faults");
    t.setDaemon(true);
    t.start();
  }

  private void poll() {
    while (true) {
      File[] reqs = dir.listFiles((d, name) -> name.endsWith(".req"));
      if (reqs != null) {
        Arrays.sort(reqs);
        for (File req : reqs) {
          String id = req.getName().substring(0, req.getName().length() - ".req".length());
          String answer;
          try {
            String cmd = new String(Files.readAllBytes(req.toPath()), StandardCharsets.UTF_8).trim();
            req.delete();
            answer = "ok " + run(cmd.split("\\s+"));
          } catch (Throwable e) {
            answer = "error " + String.valueOf(e.getMessage()).replace('\n', ' ');
            req.delete();
          }
          try {
            TestCluster.writeString(new File(dir, id + ".done"), answer + "\n");
          } catch (IOException e) {
            System.err.println("testcluster: faults: " + e);
          }
        }
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private String run(String[] cmd) throws Exception {
    switch (cmd[0]) {
      case "nm-stop": return stopNodeManager(index(cmd));
      case "nm-start": return startNodeManager(index(cmd));
      case "preempt":
        if (cmd.length < 2) {
          throw new IllegalArgumentException("preempt needs a container id");
        }
        return preempt(ContainerId.fromString(cmd[1]), cmd.length > 2 ? Long.parseLong(cmd[2])
            : yarn.getConfig().getLong(TestCluster.PREEMPTION_WAIT_KEY, TestCluster.PREEMPTION_WAIT_MS));
      default: throw new IllegalArgumentException("unknown command " + cmd[0]);
    }
  }

  private int index(String[] cmd) {
    if (cmd.length < 2) {
      throw new IllegalArgumentException(cmd[0] + " needs a NodeManager index");
    }
    int i = Integer.parseInt(cmd[1]);
    if (i < 0 || i >= nms.length) {
      throw new IllegalArgumentException("no NodeManager " + i + " (the cluster has " + nms.length + ")");
    }
    return i;
  }

  private String stopNodeManager(int i) throws Exception {
    NodeManager nm;
    synchronized (this) {
      if (stopped[i]) {
        throw new IllegalStateException("NodeManager " + i + " is already stopped");
      }
      stopped[i] = true;
      nm = nms[i];
    }
    NodeId id = nm.getNMContext().getNodeId();
    // A crash, not a shutdown: the heartbeat loop ends and serviceStop skips unregistering (both
    // test NodeStatusUpdaterImpl.isStopped), so the RM learns of it only through liveness expiry.
    NodeStatusUpdater updater = nm.getNodeStatusUpdater();
    Field f = findField(updater.getClass(), "isStopped");
    f.setAccessible(true);
    f.setBoolean(updater, true);
    Thread.sleep(1200); // a heartbeat already under way (1 s interval) ends
    List<String> killed = new ArrayList<>();
    for (ContainerId c : nm.getNMContext().getContainers().keySet()) {
      String pid = nm.getNMContext().getContainerExecutor().getProcessId(c);
      if (pid != null) {
        // DefaultContainerExecutor starts each container with setsid: its pid is its process group.
        new ProcessBuilder("kill", "-KILL", "--", "-" + pid).inheritIO().start().waitFor();
        killed.add(c.toString());
      }
    }
    nm.stop();
    TestCluster.log("fault: NodeManager " + i + " (" + id + ") crashed; killed " + killed);
    return "stopped NodeManager " + i + " " + id + " killed=" + String.join(",", killed);
  }

  private String startNodeManager(int i) throws Exception {
    NodeManager old;
    synchronized (this) {
      if (!stopped[i]) {
        throw new IllegalStateException("NodeManager " + i + " is running");
      }
      old = nms[i];
    }
    NodeId id = old.getNMContext().getNodeId();
    Configuration conf = new YarnConfiguration(old.getConfig());
    conf.set(YarnConfiguration.NM_ADDRESS, id.getHost() + ":" + id.getPort());
    NodeManager nm = new NodeManager() {
      @Override
      protected void doSecureLogin() {
        // As MiniYARNCluster's own NodeManagers: the JVM's login user serves every daemon.
      }
    };
    nm.init(conf);
    nm.start();
    ResourceManager rm = yarn.getResourceManager();
    long deadline = System.currentTimeMillis() + 60_000;
    while (true) {
      RMNode n = rm.getRMContext().getRMNodes().get(id);
      if (n != null && n.getState() == NodeState.RUNNING) {
        break;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("NodeManager " + i + " (" + id + ") not RUNNING in the RM within 60s");
      }
      Thread.sleep(100);
    }
    synchronized (this) {
      nms[i] = nm;
      stopped[i] = false;
    }
    TestCluster.log("fault: NodeManager " + i + " (" + id + ") started again");
    return "started NodeManager " + i + " " + id;
  }

  private String preempt(ContainerId id, long waitMs) throws Exception {
    ResourceManager rm = yarn.getResourceManager();
    AbstractYarnScheduler<?, ?> scheduler = (AbstractYarnScheduler<?, ?>) rm.getResourceScheduler();
    RMContainer c = scheduler.getRMContainer(id);
    if (c == null) {
      throw new IllegalArgumentException("no live container " + id + " in the scheduler");
    }
    if (waitMs < 0) {
      throw new IllegalArgumentException("WAIT_MS must not be negative");
    }
    scheduler.handle(new ContainerPreemptEvent(c.getApplicationAttemptId(), c,
        SchedulerEventType.MARK_CONTAINER_FOR_PREEMPTION));
    TestCluster.log("fault: marked " + id + " for preemption; the kill follows in " + waitMs + " ms");
    Thread.sleep(waitMs);
    if (scheduler.getRMContainer(id) == null) {
      // Ended meanwhile (its application finished, or released it): nothing left to kill.
      TestCluster.log("fault: " + id + " ended before its preemption");
      return "marked " + id + " for preemption; it ended before the kill";
    }
    scheduler.handle(new ContainerPreemptEvent(c.getApplicationAttemptId(), c,
        SchedulerEventType.MARK_CONTAINER_FOR_KILLABLE));
    TestCluster.log("fault: preempted " + id);
    return "preempted " + id + " " + waitMs + " ms after announcing it";
  }

  private static Field findField(Class<?> c, String name) throws NoSuchFieldException {
    for (Class<?> k = c; k != null; k = k.getSuperclass()) {
      try {
        return k.getDeclaredField(name);
      } catch (NoSuchFieldException e) {
        // look in the superclass
      }
    }
    throw new NoSuchFieldException(name + " in " + c);
  }
}
