package dev.tfyarn.testcluster;

import java.io.File;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.security.token.TokenIdentifier;

/**
 * Writes and dumps Hadoop credentials (HDTS) files with Hadoop's own code, so
 * tfyarn's Go reader/writer can be checked byte for byte against the real
 * thing (security/hadoop_interop_test.go).
 *
 * <pre>
 *   CredentialsTool write FILE v0|v1   fixed tokens and secret, WRITABLE or PROTOBUF
 *   CredentialsTool dump FILE          one sorted line per token/secret, bytes in hex
 * </pre>
 *
 * The fixed values must match fixtureCredentials() in the Go test.
 */
public final class CredentialsTool {
  private CredentialsTool() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 3 && args[0].equals("write")) {
      write(args[1], args[2]);
    } else if (args.length == 2 && args[0].equals("dump")) {
      dump(args[1]);
    } else {
      System.err.println("usage: CredentialsTool write FILE v0|v1 | dump FILE");
      System.exit(2);
    }
  }

  private static void write(String file, String version) throws Exception {
    Credentials.SerializedFormat format;
    switch (version) {
      case "v0": format = Credentials.SerializedFormat.WRITABLE; break;
      case "v1": format = Credentials.SerializedFormat.PROTOBUF; break;
      default: throw new IllegalArgumentException("version must be v0 or v1, not " + version);
    }
    Credentials creds = new Credentials();
    creds.addToken(new Text("amrm-alias"), new Token<TokenIdentifier>(
        pattern(200, 37, 11), range(0x80, 20), new Text("YARN_AM_RM_TOKEN"), new Text("127.0.0.1:8030")));
    creds.addToken(new Text("hdfs-alias"), new Token<TokenIdentifier>(
        descending(16), new byte[] {0x00, 0x7f, (byte) 0x80, (byte) 0xff},
        new Text("HDFS_DELEGATION_TOKEN"), new Text("ha-hdfs:ns1")));
    creds.addSecretKey(new Text("secret-key"), pattern(300, 1, 0));
    creds.writeTokenStorageFile(new Path(new File(file).getAbsoluteFile().toURI()), new Configuration(false), format);
  }

  private static void dump(String file) throws Exception {
    Credentials creds = Credentials.readTokenStorageFile(new File(file), new Configuration(false));
    List<String> lines = new ArrayList<>();
    for (Map.Entry<Text, Token<? extends TokenIdentifier>> e : tokenMap(creds).entrySet()) {
      Token<? extends TokenIdentifier> t = e.getValue();
      lines.add(String.join("\t", "token", e.getKey().toString(), t.getKind().toString(),
          t.getService().toString(), hex(t.getIdentifier()), hex(t.getPassword())));
    }
    for (Text alias : creds.getAllSecretKeys()) {
      lines.add(String.join("\t", "secret", alias.toString(), hex(creds.getSecretKey(alias))));
    }
    Collections.sort(lines);
    for (String l : lines) {
      System.out.println(l);
    }
  }

  // tokenMap: the tokens by alias. Hadoop before 3.2 has no getTokenMap (the test cluster builds
  // against older releases too), only the private field every release has.
  @SuppressWarnings("unchecked")
  private static Map<Text, Token<? extends TokenIdentifier>> tokenMap(Credentials creds) throws Exception {
    java.lang.reflect.Field f = Credentials.class.getDeclaredField("tokenMap");
    f.setAccessible(true);
    return (Map<Text, Token<? extends TokenIdentifier>>) f.get(creds);
  }

  // pattern(n, mul, add)[i] = (i*mul + add) & 0xff: covers bytes >= 0x80.
  private static byte[] pattern(int n, int mul, int add) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) ((i * mul + add) & 0xff);
    }
    return b;
  }

  private static byte[] range(int start, int n) {
    return pattern(n, 1, start);
  }

  private static byte[] descending(int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (0xff - i);
    }
    return b;
  }

  private static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder(b.length * 2);
    for (byte x : b) {
      sb.append(String.format("%02x", x & 0xff));
    }
    return sb.toString();
  }
}
