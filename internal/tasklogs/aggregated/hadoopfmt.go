package aggregated

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Where a log was read from, as `yarn logs` labels it.
const (
	Aggregated = "AGGREGATED" // from the aggregated files on HDFS
	Local      = "LOCAL"      // from the NodeManager, while the container's application runs
)

// TimeLayout is Hadoop's Times.format ("EEE MMM dd HH:mm:ss Z yyyy").
const TimeLayout = "Mon Jan 02 15:04:05 -0700 2006"

// WriteHeader writes what `yarn logs` prints before a log file's content
// (Hadoop's LogToolUtils): node is the NodeId as in the aggregated file's
// name (host_port), modified formatted with TimeLayout.
func WriteHeader(w io.Writer, container, node, kind, name, modified string, length int64) error {
	c := "Container: " + container + " on " + node
	_, err := fmt.Fprintf(w, "%s\nLogAggregationType: %s\n%s\nLogType:%s\nLogLastModifiedTime:%s\nLogLength:%d\nLogContents:\n",
		c, kind, strings.Repeat("=", len(c)), name, modified, length)
	return err
}

// WriteFooter writes what `yarn logs` prints after a log file's content.
func WriteFooter(w io.Writer, name string) error {
	end := "End of LogType:" + name
	_, err := fmt.Fprintf(w, "\n%s\n%s\n\n", end, strings.Repeat("*", len(end)+50))
	return err
}

// Print writes every log file of one node's aggregated file (TFile) that
// keep accepts (nil: all) as `yarn logs -applicationId` does: node is the
// file's name (host_port) and modified its modification time. body copies
// the content (nil: io.Copy), e.g. to keep only its last lines.
func Print(w io.Writer, r io.ReaderAt, size int64, node string, modified time.Time,
	keep func(File) bool, body func(io.Writer, io.Reader) error) error {
	return printFiles(w, node, func(fn func(File) error) error { return ReadTFile(r, size, fn) },
		func(File) time.Time { return modified }, keep, body)
}

// PrintIFile is Print for the IFile format, whose index keeps each log
// file's own modification time.
func PrintIFile(w io.Writer, r io.ReaderAt, size int64, node string,
	keep func(File) bool, body func(io.Writer, io.Reader) error) error {
	return printFiles(w, node, func(fn func(File) error) error { return ReadIFile(r, size, fn) },
		func(f File) time.Time { return f.Modified }, keep, body)
}

func printFiles(w io.Writer, node string, each func(func(File) error) error, modified func(File) time.Time,
	keep func(File) bool, body func(io.Writer, io.Reader) error) error {
	if body == nil {
		body = func(w io.Writer, r io.Reader) error { _, err := io.Copy(w, r); return err }
	}
	return each(func(f File) error {
		if keep != nil && !keep(f) {
			return nil
		}
		if err := WriteHeader(w, f.Container, node, Aggregated, f.Name, modified(f).Format(TimeLayout), f.Length); err != nil {
			return err
		}
		if err := body(w, f.Content); err != nil {
			return err
		}
		return WriteFooter(w, f.Name)
	})
}
