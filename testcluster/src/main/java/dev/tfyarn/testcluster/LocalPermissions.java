package dev.tfyarn.testcluster;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import javax.management.JMException;
import javax.management.ObjectName;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFs;
import org.apache.hadoop.fs.DelegateToFileSystem;
import org.apache.hadoop.fs.FsConstants;
import org.apache.hadoop.fs.FsServerDefaults;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.local.LocalConfigKeys;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * The NodeManagers' local file system: Hadoop's own (checksummed, over RawLocalFileSystem) with one
 * difference, setPermission is an in-process call (java.nio) where Hadoop would fork {@code chmod}.
 *
 * <p>Why: the NodeManager's localizer (FSDownload.changePermissions) sets the permissions of every
 * file and directory it unpacks from an archive resource, one call each. RawLocalFileSystem makes
 * that call through Hadoop's native library (libhadoop.so) when it is loaded, as on production
 * NodeManagers, and otherwise forks {@code chmod} per file. Maven Central's Hadoop ships no native
 * library, so without this a TensorFlow environment of 14,228 files cost 14,228 forks of the
 * NodeManager's JVM (76 s of its localization on this machine). With it, the test cluster
 * localizes at the production speed it would otherwise misrepresent.
 *
 * <p>Modes with bits beyond rwx (setuid, setgid, sticky), which java.nio cannot set, go to Hadoop's
 * own code. {@link #BEAN} counts both kinds of calls in the JVM (the NodeManager's web server shows
 * them at /jmx?qry=dev.tfyarn.testcluster:type=LocalPermissions), so that a test can tell this is in
 * effect.
 */
public final class LocalPermissions {
  /** The JMX name of the counters. */
  public static final String BEAN = "dev.tfyarn.testcluster:type=LocalPermissions";

  private static final AtomicLong IN_PROCESS = new AtomicLong();
  private static final AtomicLong BY_HADOOP = new AtomicLong();

  static {
    try {
      ManagementFactory.getPlatformMBeanServer().registerMBean(new Counters(), new ObjectName(BEAN));
    } catch (JMException e) {
      // Only a second class loader of this class gets here; its counts are not shown.
    }
  }

  private LocalPermissions() {}

  /** Loads this class, which registers the counters with JMX. */
  static void register() {}

  /** Makes c's local file system (FileSystem and FileContext) this one. */
  static void configure(Configuration c) {
    c.set("fs.file.impl", FileSystem.class.getName());
    c.set("fs.AbstractFileSystem.file.impl", Fs.class.getName());
  }

  /** The counters as JMX shows them. */
  public interface CountersMBean {
    /** setPermission calls made in this process (java.nio). */
    long getInProcess();

    /** setPermission calls handed to Hadoop (a mode beyond rwx): a forked chmod without libhadoop. */
    long getByHadoop();
  }

  static final class Counters implements CountersMBean {
    @Override
    public long getInProcess() {
      return IN_PROCESS.get();
    }

    @Override
    public long getByHadoop() {
      return BY_HADOOP.get();
    }
  }

  /** RawLocalFileSystem whose setPermission is a java.nio call. */
  public static class Raw extends RawLocalFileSystem {
    private static final PosixFilePermission[] BITS = PosixFilePermission.values(); // owner r, w, x, group ..., others ...

    static {
      register(); // the counters show from the file system's creation on, before its first call
    }

    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
      int mode = permission.toShort();
      if ((mode & ~0777) != 0) {
        BY_HADOOP.incrementAndGet();
        super.setPermission(p, permission);
        return;
      }
      Set<PosixFilePermission> perms = EnumSet.noneOf(PosixFilePermission.class);
      for (int i = 0; i < BITS.length; i++) {
        if ((mode & (0400 >> i)) != 0) {
          perms.add(BITS[i]);
        }
      }
      java.io.File f = pathToFile(p);
      try {
        Files.setPosixFilePermissions(f.toPath(), perms);
      } catch (NoSuchFileException e) {
        throw new FileNotFoundException("cannot set the permissions of " + f + ": no such file");
      }
      IN_PROCESS.incrementAndGet();
    }
  }

  /** fs.file.impl: LocalFileSystem (checksums, FileSystem.getLocal's type) over {@link Raw}. */
  public static class FileSystem extends LocalFileSystem {
    public FileSystem() {
      super(new Raw());
    }
  }

  /** fs.AbstractFileSystem.file.impl, FileContext's: Hadoop's LocalFs, but over {@link Raw}. */
  public static class Fs extends ChecksumFs {
    public Fs(URI uri, Configuration conf) throws IOException, URISyntaxException {
      super(new RawFs(uri, conf));
    }
  }

  /** Hadoop's RawLocalFs (whose constructors are not public), over {@link Raw}. */
  static final class RawFs extends DelegateToFileSystem {
    RawFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
      super(uri, new Raw(), conf, FsConstants.LOCAL_FS_URI.getScheme(), false);
    }

    @Override
    public int getUriDefaultPort() {
      return -1; // file: URIs have no port
    }

    @Override
    @SuppressWarnings("deprecation")
    public FsServerDefaults getServerDefaults() throws IOException {
      return LocalConfigKeys.getServerDefaults();
    }

    @Override
    public FsServerDefaults getServerDefaults(Path f) throws IOException {
      return LocalConfigKeys.getServerDefaults();
    }

    @Override
    public boolean isValidName(String src) {
      return true; // any local path name
    }
  }
}
