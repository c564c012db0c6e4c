// tfile-gz: an aggregated log (TFile) written by Hadoop's AggregatedLogFormat.LogWriter.
// Run with jshell on the test cluster's classpath (testcluster/jvm.sh), OUT=file COMP=gz|none, the
// containers' log files under /tmp/gzgen/logs/application_1_9999/<container>/.
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.logaggregation.AggregatedLogFormat;
import org.apache.hadoop.yarn.api.records.*;
import java.util.*;
Configuration conf = new Configuration();
conf.set("yarn.nodemanager.log-aggregation.compression-type", System.getenv("COMP"));
ApplicationId app = ApplicationId.newInstance(1, 9999);
ApplicationAttemptId att = ApplicationAttemptId.newInstance(app, 1);
AggregatedLogFormat.LogWriter w = new AggregatedLogFormat.LogWriter();
w.initialize(conf, new Path("file://" + System.getenv("OUT")), UserGroupInformation.getCurrentUser());
w.writeApplicationOwner("root");
w.writeApplicationACLs(new HashMap<ApplicationAccessType, String>());
for (int i = 1; i <= 2; i++) {
  ContainerId c = ContainerId.newContainerId(att, i);
  w.append(new AggregatedLogFormat.LogKey(c), new AggregatedLogFormat.LogValue(Arrays.asList("/tmp/gzgen/logs"), c, "root"));
}
w.close();
/exit
