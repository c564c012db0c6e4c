package main

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// jsonFields are the JSON names of a struct's fields, an embedded eventHeader's excluded.
func jsonFields(v any) []string {
	var out []string
	rt := reflect.TypeOf(v)
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		if f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}

// TestClaimsEventTypes: docs/events.md's table of types lists each event's fields, in order, as
// they are written.
func TestClaimsEventTypes(t *testing.T) {
	section := clustertest.DocSection(t, "## Types")
	row := regexp.MustCompile("(?m)^\\| `([a-z]+)` \\| (.+) \\|$")
	got := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		got[m[1]] = strings.Split(strings.ReplaceAll(strings.ReplaceAll(m[2], "`", ""), " ", ""), ",")
	}
	want := map[string][]string{
		"submitted": jsonFields(submittedEvent{}), "state": jsonFields(stateEvent{}), "task": jsonFields(taskEvent{}),
		"progress": jsonFields(progressEvent{}), "log": jsonFields(logEvent{}), "warning": jsonFields(warningEvent{}),
		"result": jsonFields(resultEvent{}), "error": jsonFields(errorEvent{}),
	}
	require.Equal(t, want, got)
	require.Equal(t, []string{"v", "type", "time"}, jsonFields(eventHeader{}))
	require.Contains(t, clustertest.DocSection(t, "## The stream"), "Every object has `v` (the contract's version, 1)")
	require.Equal(t, 1, eventsVersion)
}

// TestClaimsTaskResults: running-jobs.md's Task results name the limit, the place, the
// permissions, the retention and the variable the code uses.
func TestClaimsTaskResults(t *testing.T) {
	section := clustertest.DocSection(t, "## Task results")
	require.Equal(t, 64<<20, contract.MaxResultBytes)
	require.Contains(t, section, "at most 64 MiB")
	require.Contains(t, section, "`"+hdfs.AppResultsDir("<user>", "<app>")+"/`, 0700")
	require.Equal(t, 7, hdfs.ResultsKeepDays)
	require.Contains(t, section, "once 7 days old")
	require.Contains(t, section, "`"+contract.EnvResultFile+"`")
	require.Contains(t, section, "`result_not_saved`")
	require.Contains(t, section, "`result_bytes`")
	require.Contains(t, section, "`result_files`")
	require.Contains(t, clustertest.DocSection(t, "## What each task sees"), "| `"+contract.EnvResultFile+"` |")
}

// TestClaimsSubmitJSON: submit's JSON fields as running-jobs.md lists them.
func TestClaimsSubmitJSON(t *testing.T) {
	section := clustertest.DocSection(t, "## Submit now, wait later")
	m := regexp.MustCompile("`\\{([a-z_, ]+)\\}`").FindStringSubmatch(section)
	require.NotNil(t, m)
	fields := strings.Split(strings.ReplaceAll(m[1], " ", ""), ",")
	require.Equal(t, jsonFields(submitted{}), fields)
	require.True(t, slices.Contains(fields, "app_id"))
}
