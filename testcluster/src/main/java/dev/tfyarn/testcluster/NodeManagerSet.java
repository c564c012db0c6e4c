package dev.tfyarn.testcluster;

import org.apache.hadoop.yarn.api.records.NodeId;

/**
 * The cluster's NodeManagers as {@link Faults} drives them: {@link NodeManagers} (each a process on
 * a host of its own, TC_NM_HOSTS=1) or {@link InJvmNodeManagers} (MiniYARNCluster's, in the
 * launcher's JVM, the default).
 */
interface NodeManagerSet {
  int count();

  NodeId nodeId(int i);

  /** Host i crashes: its NodeManager and its containers die, nothing unregisters; returns what died. */
  String crash(int i) throws Exception;

  /** NodeManager i starts again on the same node id (the caller waits for the RM). */
  void start(int i) throws Exception;

  /** NodeManager i's process stops (SIGSTOP) / goes on (SIGCONT). */
  void freeze(int i) throws Exception;

  void thaw(int i) throws Exception;

  boolean isFrozen(int i);

  /** False once NodeManager i's process is gone. */
  boolean isAlive(int i);

  void stopAll();
}
