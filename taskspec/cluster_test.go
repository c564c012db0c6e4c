package taskspec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClusterSpecFromAddresses(t *testing.T) {
	groups := []TaskGroup{group(Chief, 1, 1, 1, 0), group(Worker, 2, 1, 1, 0), group(Evaluator, 1, 1, 1, 0)}
	complete := map[TaskID]string{
		{Worker, 1}: "w1:2", {Chief, 0}: "c:1", {Worker, 0}: "w0:3", {Evaluator, 0}: "e:4",
	}
	tests := []struct {
		name    string
		addrs   map[TaskID]string
		want    ClusterSpec
		wantErr string
	}{
		{"complete", complete, ClusterSpec{Chief: {"c:1"}, Worker: {"w0:3", "w1:2"}}, ""},
		{"evaluator address optional", map[TaskID]string{{Chief, 0}: "c:1", {Worker, 0}: "w0:3", {Worker, 1}: "w1:2"},
			ClusterSpec{Chief: {"c:1"}, Worker: {"w0:3", "w1:2"}}, ""},
		{"missing worker", map[TaskID]string{{Chief, 0}: "c:1", {Worker, 1}: "w1:2"}, nil, "cluster spec: no address for worker:0"},
		{"index beyond group", map[TaskID]string{{Worker, 2}: "w2:1"}, nil, `cluster spec: address "w2:1" is for worker:2, which is not a task of the job`},
		{"type not in job", map[TaskID]string{{PS, 0}: "p:1"}, nil, `cluster spec: address "p:1" is for ps:0, which is not a task of the job`},
		{"not host:port", map[TaskID]string{{Chief, 0}: "c"}, nil, `cluster spec: chief:0: address "c" is not host:port`},
		{"bad port", map[TaskID]string{{Chief, 0}: "c:0"}, nil, `cluster spec: chief:0: address "c:0" is not host:port with a port in 1-65535`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ClusterSpecFromAddresses(groups, tt.addrs)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}
