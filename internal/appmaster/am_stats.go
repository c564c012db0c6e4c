package appmaster

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
)

// MemoryStats are the figures of /proc/self/status the AM logs as it exits.
// RSS counts the pages of the tfyarn binary the process has mapped as well
// as its heap: on a kernel that maps a binary's page-cache folios whole,
// nearly all of the binary's text and read-only data is resident however
// little of it runs, so FileKiB follows the binary's size and AnonKiB
// (heap, stacks) what the AM itself holds.
type MemoryStats struct {
	PeakKiB int64 // VmHWM: the peak resident set
	AnonKiB int64 // RssAnon now
	FileKiB int64 // RssFile now: mapped files, the binary's pages
}

// ReadMemoryStats reads the process's memory figures from
// /proc/self/status; zeros when unavailable (not Linux).
func ReadMemoryStats() MemoryStats {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return MemoryStats{}
	}
	defer f.Close()
	return parseMemoryStats(f)
}

func parseMemoryStats(r io.Reader) MemoryStats {
	var m MemoryStats
	fields := map[string]*int64{"VmHWM:": &m.PeakKiB, "RssAnon:": &m.AnonKiB, "RssFile:": &m.FileKiB}
	s := bufio.NewScanner(r)
	for s.Scan() {
		name, rest, ok := bytes.Cut(s.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		if p := fields[string(name)+":"]; p != nil {
			*p, _ = strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
		}
	}
	return m
}
