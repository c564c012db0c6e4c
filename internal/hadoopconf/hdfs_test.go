package hadoopconf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDefaultHDFS(t *testing.T) {
	haProps := []string{
		KeyNameservices, "ns1,ns2",
		"dfs.ha.namenodes.ns1", "nn1, nn2",
		"dfs.namenode.rpc-address.ns1.nn1", "a.example:8020",
		"dfs.namenode.rpc-address.ns1.nn2", "b.example",
		"dfs.namenode.rpc-address.ns2", "fed.example:9000",
	}
	tests := []struct {
		name    string
		props   []string
		want    HDFSTarget
		wantErr string
	}{
		{name: "host and port", props: []string{KeyDefaultFS, "hdfs://nn.example:9000"},
			want: HDFSTarget{URI: "hdfs://nn.example:9000", Addresses: []string{"nn.example:9000"}}},
		{name: "host without port", props: []string{KeyDefaultFS, "hdfs://nn.example"},
			want: HDFSTarget{URI: "hdfs://nn.example", Addresses: []string{"nn.example:8020"}}},
		{name: "trailing slash", props: []string{KeyDefaultFS, "hdfs://localhost:9000/"},
			want: HDFSTarget{URI: "hdfs://localhost:9000/", Addresses: []string{"localhost:9000"}}},
		{name: "HA nameservice", props: append([]string{KeyDefaultFS, "hdfs://ns1"}, haProps...),
			want: HDFSTarget{URI: "hdfs://ns1", Nameservice: "ns1", NameNodeIDs: []string{"nn1", "nn2"},
				Addresses: []string{"a.example:8020", "b.example:8020"}}},
		{name: "federated non-HA nameservice", props: append([]string{KeyDefaultFS, "hdfs://ns2"}, haProps...),
			want: HDFSTarget{URI: "hdfs://ns2", Nameservice: "ns2", Addresses: []string{"fed.example:9000"}}},
		{name: "HA namenodes without dfs.nameservices", props: []string{KeyDefaultFS, "hdfs://solo",
			"dfs.ha.namenodes.solo", "x", "dfs.namenode.rpc-address.solo.x", "x.example:8020"},
			want: HDFSTarget{URI: "hdfs://solo", Nameservice: "solo", NameNodeIDs: []string{"x"}, Addresses: []string{"x.example:8020"}}},
		{name: "HA missing rpc address", props: []string{KeyDefaultFS, "hdfs://ns1", KeyNameservices, "ns1", "dfs.ha.namenodes.ns1", "nn1"},
			wantErr: "set dfs.namenode.rpc-address.ns1.nn1"},
		{name: "nameservice without namenodes", props: []string{KeyDefaultFS, "hdfs://ns9", KeyNameservices, "ns9"},
			wantErr: "nameservice \"ns9\" has no NameNodes"},
		{name: "default is file", wantErr: `fs.defaultFS is "file:///", not an hdfs:// URI`},
		{name: "not a URI", props: []string{KeyDefaultFS, "hdfs://%zz"}, wantErr: "fs.defaultFS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := confOf(t, envOf(), tt.props...)
			got, err := c.DefaultHDFS()
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestHDFSBadURI(t *testing.T) {
	c := New(envOf())
	_, err := c.HDFS("webhdfs://x")
	require.ErrorContains(t, err, "not an hdfs://host[:port] URI")
}
