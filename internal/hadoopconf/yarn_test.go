package hadoopconf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRMAddresses(t *testing.T) {
	tests := []struct {
		name    string
		props   []string
		svc     RMService
		want    []string
		wantErr string
	}{
		{name: "default wildcard maps to localhost", svc: RMClient, want: []string{"localhost:8032"}},
		{name: "default scheduler", svc: RMScheduler, want: []string{"localhost:8030"}},
		{name: "default https webapp", svc: RMWebappHTTPS, want: []string{"localhost:8090"}},
		{name: "hostname", props: []string{KeyRMHostname, "rm"}, svc: RMWebapp, want: []string{"rm:8088"}},
		{name: "explicit address", props: []string{"yarn.resourcemanager.address", "rm:1234"}, svc: RMClient, want: []string{"rm:1234"}},
		{name: "address without port", props: []string{"yarn.resourcemanager.address", "rm"}, svc: RMClient, want: []string{"rm:8032"}},
		{name: "ipv6", props: []string{"yarn.resourcemanager.address", "[::1]:8032"}, svc: RMClient, want: []string{"[::1]:8032"}},
		{name: "bad port", props: []string{"yarn.resourcemanager.address", "rm:http"}, svc: RMClient, wantErr: `yarn.resourcemanager.address = "rm:http" has bad port`},
		{name: "HA address per id", svc: RMScheduler, props: []string{
			KeyRMHAEnabled, "true", KeyRMHAIDs, "rm2, rm1",
			"yarn.resourcemanager.scheduler.address.rm1", "host1:9030",
			"yarn.resourcemanager.scheduler.address.rm2", "host2:9030",
		}, want: []string{"host2:9030", "host1:9030"}},
		{name: "HA hostname fallback", svc: RMClient, props: []string{
			KeyRMHAEnabled, "true", KeyRMHAIDs, "rm1,rm2",
			"yarn.resourcemanager.hostname.rm1", "host1",
			"yarn.resourcemanager.hostname.rm2", "0.0.0.0",
			"yarn.resourcemanager.address", "ignored-under-ha:1",
		}, want: []string{"host1:8032", "localhost:8032"}},
		{name: "HA mixed", svc: RMWebapp, props: []string{
			KeyRMHAEnabled, "true", KeyRMHAIDs, "a,b",
			"yarn.resourcemanager.webapp.address.a", "${yarn.resourcemanager.hostname.a}:18088",
			"yarn.resourcemanager.hostname.a", "ha",
			"yarn.resourcemanager.hostname.b", "hb",
		}, want: []string{"ha:18088", "hb:8088"}},
		{name: "HA missing address", svc: RMClient, props: []string{
			KeyRMHAEnabled, "true", KeyRMHAIDs, "rm1,rm2", "yarn.resourcemanager.hostname.rm1", "host1",
		}, wantErr: "set yarn.resourcemanager.address.rm2 or yarn.resourcemanager.hostname.rm2"},
		{name: "HA no ids", svc: RMClient, props: []string{KeyRMHAEnabled, "true"}, wantErr: "yarn.resourcemanager.ha.rm-ids is empty"},
		{name: "HA flag garbage", svc: RMClient, props: []string{KeyRMHAEnabled, "maybe"}, wantErr: "yarn.resourcemanager.ha.enabled"},
		{name: "unknown service", svc: RMService(99), wantErr: "unknown RM service"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := confOf(t, envOf(), tt.props...)
			got, err := c.RMAddresses(tt.svc)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestRMServiceKeys(t *testing.T) {
	require.Equal(t, "yarn.resourcemanager.scheduler.address", RMScheduler.Key())
	require.Equal(t, 8030, RMScheduler.DefaultPort())
	require.Equal(t, 8031, RMResourceTracker.DefaultPort())
	require.Equal(t, 8033, RMAdmin.DefaultPort())
	require.Equal(t, "yarn.resourcemanager.address", RMClient.String())
}
