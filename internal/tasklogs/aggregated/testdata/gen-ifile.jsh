// ifile-none, ifile-gz: aggregated logs (IFile) written by Hadoop's
// LogAggregationIndexedFileController. Run with jshell on the test cluster's classpath
// (testcluster/jvm.sh), SEQ=9998 OUT=file COMP=none|gz, the containers' log files under
// /tmp/ifgen/logs/application_1_<SEQ>/<container>/.
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.logaggregation.AggregatedLogFormat;
import org.apache.hadoop.yarn.logaggregation.filecontroller.*;
import org.apache.hadoop.yarn.logaggregation.filecontroller.ifile.*;
import org.apache.hadoop.yarn.api.records.*;
import java.util.*;
Configuration conf = new Configuration();
conf.set("yarn.nodemanager.log-aggregation.compression-type", System.getenv("COMP"));
conf.set("yarn.log-aggregation.IFile.remote-app-log-dir", "file:///tmp/ifgen/remote");
ApplicationId app = ApplicationId.newInstance(1, Integer.parseInt(System.getenv("SEQ")));
ApplicationAttemptId att = ApplicationAttemptId.newInstance(app, 1);
LogAggregationIndexedFileController c = new LogAggregationIndexedFileController();
c.initialize(conf, "IFile");
Map<ApplicationAccessType, String> acls = new HashMap<>();
acls.put(ApplicationAccessType.VIEW_APP, "root");
LogAggregationFileControllerContext ctx = new LogAggregationFileControllerContext(new Path("file://" + System.getenv("OUT")), new Path("file://" + System.getenv("OUT") + ".tmp"), false, -1, app, acls, NodeId.newInstance("node-b", 4321), UserGroupInformation.getCurrentUser());
c.initializeWriter(ctx);
for (int i = 1; i <= 3; i++) {
  ContainerId cid = ContainerId.newContainerId(att, i);
  c.write(new AggregatedLogFormat.LogKey(cid), new AggregatedLogFormat.LogValue(Arrays.asList("/tmp/ifgen/logs"), cid, "root"));
}
c.postWrite(ctx);
c.closeWriter();
/exit
