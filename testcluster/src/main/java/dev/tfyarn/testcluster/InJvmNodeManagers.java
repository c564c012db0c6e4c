package dev.tfyarn.testcluster;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.nodemanager.NodeStatusUpdater;

/**
 * MiniYARNCluster's NodeManagers, all in the launcher's JVM and all named localhost (the default
 * shape; TC_NM_HOSTS=1 gives each its own process and host instead, see {@link NodeManagers}).
 */
final class InJvmNodeManagers implements NodeManagerSet {
  private final MiniYARNCluster yarn;
  private final NodeManager[] nms;

  InJvmNodeManagers(MiniYARNCluster yarn, int n) {
    this.yarn = yarn;
    this.nms = new NodeManager[n];
    for (int i = 0; i < n; i++) {
      nms[i] = yarn.getNodeManager(i);
    }
  }

  @Override
  public int count() {
    return nms.length;
  }

  @Override
  public synchronized NodeId nodeId(int i) {
    return nms[i].getNMContext().getNodeId();
  }

  @Override
  public String crash(int i) throws Exception {
    NodeManager nm;
    synchronized (this) {
      nm = nms[i];
    }
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
    return "killed=" + String.join(",", killed);
  }

  @Override
  public void start(int i) throws Exception {
    NodeManager old;
    synchronized (this) {
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
    synchronized (this) {
      nms[i] = nm;
    }
  }

  @Override
  public void freeze(int i) {
    throw new UnsupportedOperationException("NodeManagers in the cluster's JVM cannot be frozen; start the cluster with TC_NM_HOSTS=1");
  }

  @Override
  public void thaw(int i) {
    throw new UnsupportedOperationException("NodeManagers in the cluster's JVM cannot be frozen; start the cluster with TC_NM_HOSTS=1");
  }

  @Override
  public boolean isFrozen(int i) {
    return false;
  }

  @Override
  public boolean isAlive(int i) {
    return true;
  }

  @Override
  public void stopAll() {
    yarn.stop();
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
