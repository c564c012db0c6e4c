package dev.tfyarn.testcluster;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * The NodeManager settings that run every container as the user who submitted it, under YARN's
 * LinuxContainerExecutor with the test cluster's own setuid helper (testcluster/containerexecutor,
 * installed by cluster.sh when TC_EXECUTOR=linux). One place for them, applied to every
 * NodeManager's configuration.
 */
final class LinuxExecutor {
  /** The NodeManager's group: the helper is executable by it alone (mode 6050). */
  static final String GROUP = "tfyarnnm";

  private LinuxExecutor() {}

  /** Set when the NodeManagers run with cgroups: YARN's GPU plugin needs the devices cgroup. */
  private static final String GPU_HIERARCHY_KEY = YarnConfiguration.NM_LINUX_CONTAINER_CGROUPS_HIERARCHY;

  /**
   * YARN's GPU plugin on the docker profile's GPU NodeManager (TC_DOCKER=1, TC_NM_HOSTS=1, cgroups):
   * it discovers the node's GPUs with nvidia-smi (testcluster/gpu/nvidia-smi prints real output of
   * one H100: $TC_GPU_DISCOVERY), declares them as yarn.io/gpu, gives each GPU container its own
   * and, for a container in a Docker image, has docker run it with the runtime nvidia and
   * NVIDIA_VISIBLE_DEVICES naming its GPUs (nvidia-docker-v2), as production GPU nodes do.
   *
   * @return whether the plugin is on
   */
  static boolean configureGpu(Configuration conf) {
    String discovery = System.getenv("TC_GPU_DISCOVERY");
    if (!"1".equals(System.getenv("TC_DOCKER")) || discovery == null || discovery.isEmpty()
        || conf.get(GPU_HIERARCHY_KEY) == null) {
      return false;
    }
    conf.set("yarn.nodemanager.resource-plugins", "yarn.io/gpu");
    conf.set("yarn.nodemanager.resource-plugins.gpu.allowed-gpu-devices", "auto");
    conf.set("yarn.nodemanager.resource-plugins.gpu.path-to-discovery-executables", discovery);
    conf.set("yarn.nodemanager.resource-plugins.gpu.docker-plugin", "nvidia-docker-v2");
    return true;
  }

  /**
   * @param executable the installed helper (root-owned, setuid)
   * @param cgroupHierarchy the NodeManagers' cgroup hierarchy below each controller's mount
   *     (e.g. "/tfyarn-abc"), or null to run without cgroups
   */
  static void configure(Configuration conf, File executable, String cgroupHierarchy) {
    conf.set(YarnConfiguration.NM_CONTAINER_EXECUTOR,
        "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor");
    conf.set(YarnConfiguration.NM_LINUX_CONTAINER_EXECUTOR_PATH, executable.getAbsolutePath());
    conf.set("yarn.nodemanager.linux-container-executor.group", GROUP);
    // Non-secure mode: containers run as the submitting user, not as one local user for all.
    conf.setBoolean(YarnConfiguration.NM_NONSECURE_MODE_LIMIT_USERS, false);
    // The localizer is a JVM of its own, started as the user: it needs the JDK 17 openings the
    // cluster's JVM was started with.
    List<String> opens = new ArrayList<>();
    // A short-lived JVM per localization: start it cheaply.
    opens.add("-Xmx256m");
    opens.add("-XX:+UseSerialGC");
    opens.add("-XX:TieredStopAtLevel=1");
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (a.startsWith("--add-opens")) {
        opens.add(a);
      }
    }
    // Under Kerberos it reads the cluster's krb5.conf (the realm), as the NodeManager does.
    String krb5 = System.getProperty("java.security.krb5.conf");
    if (krb5 != null) {
      opens.add("-Djava.security.krb5.conf=" + krb5);
    }
    conf.set("yarn.nodemanager.container-localizer.java.opts", String.join(" ", opens));
    if ("1".equals(System.getenv("TC_DOCKER"))) {
      // YARN's Docker runtime beside the default one (TC_DOCKER=1, testcluster/docker.sh): host
      // networking only, never privileged; the helper checks the rest (trusted registry, mounts).
      conf.set("yarn.nodemanager.runtime.linux.allowed-runtimes", "default,docker");
      conf.set("yarn.nodemanager.runtime.linux.docker.allowed-container-networks", "host");
      conf.set("yarn.nodemanager.runtime.linux.docker.default-container-network", "host");
      conf.setBoolean("yarn.nodemanager.runtime.linux.docker.privileged-containers.allowed", false);
    }
    if (cgroupHierarchy != null) {
      // cgroups v1 controllers the machine already mounted; the NodeManager creates one cgroup
      // per container below the hierarchy and the helper puts the container into it.
      conf.set(YarnConfiguration.NM_LINUX_CONTAINER_CGROUPS_HIERARCHY, cgroupHierarchy);
      conf.setBoolean(YarnConfiguration.NM_LINUX_CONTAINER_CGROUPS_MOUNT, false);
      conf.set(YarnConfiguration.NM_LINUX_CONTAINER_CGROUPS_MOUNT_PATH, "/sys/fs/cgroup");
      conf.setBoolean(YarnConfiguration.NM_CPU_RESOURCE_ENABLED, true);
      // Hadoop 3.1's NodeManager refuses the memory controller beside its polling memory
      // monitor (which enforces the limits here); from 3.2 on the controller only accounts.
      conf.setBoolean(YarnConfiguration.NM_MEMORY_RESOURCE_ENABLED, !before32());
    }
  }

  /** True on a Hadoop release before 3.2 (the jars this JVM runs). */
  static boolean before32() {
    String[] v = org.apache.hadoop.util.VersionInfo.getVersion().split("\\.");
    int major = Integer.parseInt(v[0]);
    int minor = v.length > 1 ? Integer.parseInt(v[1].replaceAll("[^0-9].*", "")) : 0;
    return major < 3 || (major == 3 && minor < 2);
  }
}
