package dev.tfyarn.testcluster;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerPreemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;

/**
 * Faults on demand for tests, driven by `cluster.sh nm stop|start|freeze|thaw I` and `cluster.sh preempt
 * CONTAINER_ID`: a request is a file DIR/control/ID.req holding one command line; the answer is
 * DIR/control/ID.done, "ok DETAIL" or "error MESSAGE".
 *
 * <ul>
 *   <li>{@code nm-stop I}: host I crashes: its NodeManager process and every process of its
 *       containers die at once (SIGKILL), nothing unregisters. The RM notices only when the node's
 *       liveness expires (yarn.nm.liveness-monitor.expiry-interval-ms, short in the test cluster)
 *       and declares it LOST; its containers complete with exit status -100.
 *   <li>{@code nm-start I}: NodeManager I's process starts again on the same node id (host:port, so
 *       node labels stay) and the call returns once the RM lists it RUNNING.
 *   <li>{@code nm-freeze I} / {@code nm-thaw I}: NodeManager I's process stops (SIGSTOP) / goes on
 *       (SIGCONT); its containers run on meanwhile. Thaw returns once the RM lists it RUNNING (a
 *       node declared LOST meanwhile resyncs and registers again).
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
  private final ResourceManager rm;
  private final NodeManagerSet nms;
  private final Configuration conf;
  private final boolean[] stopped;

  Faults(File base, ResourceManager rm, NodeManagerSet nms, Configuration conf) {
    this.dir = new File(base, "control");
    this.rm = rm;
    this.nms = nms;
    this.conf = conf;
    this.stopped = new boolean[nms.count()];
  }

  synchronized boolean isStopped(int i) {
    return stopped[i];
  }

  int frozenCount() {
    int n = 0;
    for (int i = 0; i < nms.count(); i++) {
      n += nms.isFrozen(i) ? 1 : 0;
    }
    return n;
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
      case "nm-freeze": return freezeNodeManager(index(cmd));
      case "nm-thaw": return thawNodeManager(index(cmd));
      case "preempt":
        if (cmd.length < 2) {
          throw new IllegalArgumentException("preempt needs a container id");
        }
        return preempt(ContainerId.fromString(cmd[1]), cmd.length > 2 ? Long.parseLong(cmd[2])
            : conf.getLong(TestCluster.PREEMPTION_WAIT_KEY, TestCluster.PREEMPTION_WAIT_MS));
      default: throw new IllegalArgumentException("unknown command " + cmd[0]);
    }
  }

  private int index(String[] cmd) {
    if (cmd.length < 2) {
      throw new IllegalArgumentException(cmd[0] + " needs a NodeManager index");
    }
    int i = Integer.parseInt(cmd[1]);
    if (i < 0 || i >= nms.count()) {
      throw new IllegalArgumentException("no NodeManager " + i + " (the cluster has " + nms.count() + ")");
    }
    return i;
  }

  private String stopNodeManager(int i) throws Exception {
    synchronized (this) {
      if (stopped[i]) {
        throw new IllegalStateException("NodeManager " + i + " is already stopped");
      }
      stopped[i] = true;
    }
    NodeId id = nms.nodeId(i);
    String killed;
    try {
      killed = nms.crash(i);
    } catch (Exception e) {
      synchronized (this) {
        stopped[i] = false;
      }
      throw e;
    }
    TestCluster.log("fault: NodeManager " + i + " (" + id + ") crashed; " + killed);
    return "stopped NodeManager " + i + " " + id + " " + killed;
  }

  private String startNodeManager(int i) throws Exception {
    synchronized (this) {
      if (!stopped[i]) {
        throw new IllegalStateException("NodeManager " + i + " is running");
      }
    }
    NodeId id = nms.nodeId(i);
    nms.start(i);
    waitRunning(i, id);
    synchronized (this) {
      stopped[i] = false;
    }
    TestCluster.log("fault: NodeManager " + i + " (" + id + ") started again");
    return "started NodeManager " + i + " " + id;
  }

  private String freezeNodeManager(int i) throws Exception {
    synchronized (this) {
      if (stopped[i]) {
        throw new IllegalStateException("NodeManager " + i + " is stopped");
      }
    }
    nms.freeze(i);
    TestCluster.log("fault: NodeManager " + i + " (" + nms.nodeId(i) + ") frozen (SIGSTOP)");
    return "froze NodeManager " + i + " " + nms.nodeId(i);
  }

  private String thawNodeManager(int i) throws Exception {
    NodeId id = nms.nodeId(i);
    nms.thaw(i);
    // A node the RM declared LOST meanwhile resyncs and registers again.
    waitRunning(i, id);
    TestCluster.log("fault: NodeManager " + i + " (" + id + ") thawed (SIGCONT)");
    return "thawed NodeManager " + i + " " + id;
  }

  private void waitRunning(int i, NodeId id) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 90_000;
    while (true) {
      RMNode n = rm.getRMContext().getRMNodes().get(id);
      if (n != null && n.getState() == NodeState.RUNNING) {
        return;
      }
      if (!nms.isAlive(i)) {
        throw new IllegalStateException("NodeManager " + i + " (" + id + ") exited; see logs/nm-" + i + ".log");
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("NodeManager " + i + " (" + id + ") not RUNNING in the RM within 90s (state "
            + (n == null ? "unknown" : n.getState()) + ")");
      }
      Thread.sleep(100);
    }
  }

  private String preempt(ContainerId id, long waitMs) throws Exception {
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
}
