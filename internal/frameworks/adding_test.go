package frameworks

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/success"
)

// TestAddingAFrameworkIsTrue holds docs/frameworks.md's "Adding a framework" to the seam: every
// method of framework.Framework is named there, every field of a Launch but the arguments and
// the log line, the side service's one method, the generic rules, and the registry's table.
func TestAddingAFrameworkIsTrue(t *testing.T) {
	section := strings.Join(strings.Fields(clustertest.DocSection(t, "## Adding a framework")), " ")
	named := func(name string) { t.Helper(); require.Contains(t, section, "`"+name+"`") }
	methods := func(typ reflect.Type) []string {
		var out []string
		for i := range typ.NumMethod() {
			out = append(out, typ.Method(i).Name)
		}
		return out
	}
	for _, m := range methods(reflect.TypeFor[framework.Framework]()) {
		named(m)
	}
	launch := reflect.TypeFor[framework.Launch]()
	for i := range launch.NumField() {
		if f := launch.Field(i).Name; f != "Argv" && f != "Describe" {
			named(f)
		}
	}
	require.Equal(t, []string{"Serve"}, methods(reflect.TypeFor[framework.SideService]()))
	require.Contains(t, section, "`framework.SideService`, `Serve(ctx, listener, logf)`")
	var _ success.Policy = success.AllSucceed{}
	var _ success.Policy = success.Elastic{}
	var _ success.FastPolicy = success.AllSucceed{}
	for _, n := range []string{"success.AllSucceed", "success.Elastic", "success.Policy", "success.View", "success.Verdict", "success.FastPolicy", "Task.JobService", "Task.JobServiceToken", "framework.JobServiceToken"} {
		named(n)
	}
	// The registry's table is all: every framework in it, by the name --framework takes.
	require.Contains(t, section, "(`all` in `internal/frameworks`)")
	for n, f := range all {
		require.Equal(t, n, f.Name())
	}
	require.Contains(t, section, "`internal/torchstore` is imported by `internal/framework/pytorch` alone") // held by internal/architecture's frameworkOwned
}
