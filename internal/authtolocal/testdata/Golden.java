// Golden runs Hadoop's own KerberosName over the cases on stdin, one per
// line: realm, mechanism, rules, principal, tab-separated, each with \\, \t,
// \n and \r escaped. It prints one line per case: "OK\t<short name>",
// "MAPERR\t<exception class>" or "PARSEERR\t<exception class>".
// golden_test.go compiles and runs it (TFYARN_AUTHTOLOCAL_GOLDEN=1).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.security.authentication.util.KerberosName;

public class Golden {
  public static void main(String[] args) throws Exception {
    // The default realm is cached in a private static; set it per case
    // rather than through krb5.conf, which the JVM reads once.
    Field realm = KerberosName.class.getDeclaredField("defaultRealm");
    realm.setAccessible(true);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    StringBuilder out = new StringBuilder();
    String line;
    while ((line = in.readLine()) != null) {
      String[] f = line.split("\t", -1);
      realm.set(null, unescape(f[0]));
      KerberosName.setRuleMechanism(unescape(f[1]));
      try {
        KerberosName.setRules(unescape(f[2]));
      } catch (Exception e) {
        out.append("PARSEERR\t").append(e.getClass().getSimpleName()).append('\n');
        continue;
      }
      try {
        String name = new KerberosName(unescape(f[3])).getShortName();
        out.append("OK\t").append(escape(name)).append('\n');
      } catch (Exception e) {
        out.append("MAPERR\t").append(e.getClass().getSimpleName()).append('\n');
      }
    }
    System.out.write(out.toString().getBytes(StandardCharsets.UTF_8));
    System.out.flush();
  }

  static String unescape(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        char e = s.charAt(++i);
        b.append(e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e);
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  static String escape(String s) {
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r");
  }
}
