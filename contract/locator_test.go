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

	_, err = ParseAMLocator(`{"user":"u"}`)
	require.EqualError(t, err, "TFYARN_AM_LOCATOR: no path or no user")
	_, err = ParseAMLocator(strings.Repeat(" ", 70<<10))
	require.EqualError(t, err, "TFYARN_AM_LOCATOR: longer than 65536 bytes")
}
