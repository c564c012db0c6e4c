package contract

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAMLocatorRoundTrip(t *testing.T) {
	l := AMLocator{Path: "/user/u/.tfyarn/staging/app_1/am-tasks.json", User: "u", Conf: LocatorConf(map[string]string{
		"fs.defaultFS": "hdfs://nn:8020", "dfs.nameservices": "ns", "hadoop.rpc.protection": "privacy",
		"yarn.resourcemanager.address": "rm:8032",
	})}
	require.Equal(t, map[string]string{"fs.defaultFS": "hdfs://nn:8020", "dfs.nameservices": "ns", "hadoop.rpc.protection": "privacy"}, l.Conf)
	got, err := ParseAMLocator(l.Encode())
	require.NoError(t, err)
	require.Equal(t, l, got)

	require.NotContains(t, l.Encode(), `"`, "pasted between double quotes by the NodeManager")
	_, err = ParseAMLocator(AMLocator{User: "u"}.Encode())
	require.EqualError(t, err, "TFYARN_AM_LOCATOR: no path or no user")
	_, err = ParseAMLocator(strings.Repeat(" ", 70<<10))
	require.EqualError(t, err, "TFYARN_AM_LOCATOR: longer than 65536 bytes")
}

// Whatever the environment holds, the parse ends with a locator naming a
// path and a user, or an error naming the variable.
func FuzzParseAMLocator(f *testing.F) {
	f.Add(AMLocator{Path: "/p", User: "u", Conf: map[string]string{"fs.defaultFS": "hdfs://nn:8020"}}.Encode())
	f.Add(AMLocator{Path: "/p"}.Encode())
	f.Add(`{"path":"/p"}`)
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseAMLocator(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), EnvAMLocator+": ") {
				t.Fatalf("error does not name %s: %v", EnvAMLocator, err)
			}
			return
		}
		if l.Path == "" || l.User == "" {
			t.Fatalf("accepted without a path or user: %+v", l)
		}
	})
}
