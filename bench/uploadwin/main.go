// Command uploadwin measures one HDFS upload of a file as the DataNode saw
// it (the summed duration(ns) of its clienttrace HDFS_WRITE lines): with
// colinmarc/hdfs as linked in (-client go), or with Hadoop's `hdfs dfs -put`
// (-client java, through testcluster/hadoop.sh). bench/uploadwin.sh builds
// it twice, once against colinmarc/hdfs as released and once with its
// packets-in-flight window (5) raised to Hadoop's 80, and runs the three
// interleaved: the measured explanation of tfyarn's upload rate.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
)

var traceRE = regexp.MustCompile(`bytes: (\d+), op: HDFS_WRITE, cliID: ([^,]+),.*duration\(ns\): (\d+)`)

func main() {
	client := flag.String("client", "go", "go or java")
	file := flag.String("file", "", "local file to upload")
	logPath := flag.String("log", ".testcluster/logs/cluster.log", "the test cluster's log (DataNode clienttrace)")
	hadoop := flag.String("hadoop", "testcluster/hadoop.sh", "Hadoop's CLI for -client java")
	flag.Parse()
	if err := run(*client, *file, *logPath, *hadoop); err != nil {
		fmt.Fprintln(os.Stderr, "uploadwin:", err)
		os.Exit(1)
	}
}

func run(client, file, logPath, hadoop string) error {
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	lst, err := os.Stat(logPath)
	if err != nil {
		return err
	}
	offset := lst.Size()
	dst := fmt.Sprintf("/tmp/uploadwin-%d", time.Now().UnixNano())
	start := time.Now()
	prefix := "go-hdfs"
	switch client {
	case "go":
		if err := goPut(file, dst); err != nil {
			return err
		}
	case "java":
		prefix = "DFSClient_"
		out, err := exec.Command(hadoop, "hdfs", "dfs", "-put", file, dst).CombinedOutput()
		if err != nil {
			return fmt.Errorf("hdfs dfs -put: %v: %s", err, out)
		}
	default:
		return fmt.Errorf("-client %q: want go or java", client)
	}
	wall := time.Since(start)
	defer exec.Command(hadoop, "hdfs", "dfs", "-rm", "-skipTrash", dst).Run()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		b, err := os.ReadFile(logPath)
		if err != nil {
			return err
		}
		n, secs := map[string]int64{}, map[string]float64{}
		for _, m := range traceRE.FindAllSubmatch(b[min(offset, int64(len(b))):], -1) {
			if !bytes.HasPrefix(m[2], []byte(prefix)) {
				continue
			}
			k, _ := strconv.ParseInt(string(m[1]), 10, 64)
			ns, _ := strconv.ParseInt(string(m[3]), 10, 64)
			n[string(m[2])] += k
			secs[string(m[2])] += float64(ns) / 1e9
		}
		for cli, k := range n {
			if k == st.Size() {
				fmt.Printf("%s %.3f %.3f %.1f\n", client, secs[cli], wall.Seconds(), float64(k)/1e6/secs[cli])
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s* client wrote %d bytes in %s", prefix, st.Size(), logPath)
		}
	}
}

func goPut(file, dst string) error {
	conf, err := hadoopconf.Load()
	if err != nil {
		return err
	}
	target, err := conf.DefaultHDFS()
	if err != nil {
		return err
	}
	c, err := gohdfs.NewClient(gohdfs.ClientOptions{Addresses: target.Addresses, User: user()})
	if err != nil {
		return err
	}
	defer c.Close()
	in, err := os.Open(file)
	if err != nil {
		return err
	}
	defer in.Close()
	w, err := c.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.CopyBuffer(w, in, make([]byte, 1<<20)); err != nil {
		return err
	}
	for i := 0; ; i++ {
		err := w.Close()
		if err == nil || !gohdfs.IsErrReplicating(err) || i == 5 {
			return err
		}
		time.Sleep(400 * time.Millisecond)
	}
}

func user() string {
	if u := os.Getenv("HADOOP_USER_NAME"); u != "" {
		return u
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}
