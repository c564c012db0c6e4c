package rendezvous

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The AM's program for a task reaches its launcher with the spec, byte for
// byte; a server without programs sends none.
func TestSpecCarriesTheProgram(t *testing.T) {
	secret := testSecret(t)
	want := Program{Argv: []string{"sh\xff", "-c", "{{(touch X)}} <CPS> $(id) `id` '\"\\\n"}, Env: map[string]string{"A": "\x80<LOG_DIR>", "B": ""}}
	for _, serve := range []bool{true, false} {
		board := newBoard(t, 10*time.Second, group(taskspec.Worker, 1))
		var opts []Option
		if serve {
			opts = append(opts, WithPrograms(func(id taskspec.TaskID) (Program, bool) {
				return want, id == task(taskspec.Worker, 0)
			}))
		}
		srv := startServer(t, secret, board, opts...)
		c := newTestClient(t, srv.addr, secret, reg(taskspec.Worker, 0, 2222).ContainerID)
		ctx := ctxTimeout(t, 5*time.Second)
		require.NoError(t, c.Register(ctx, reg(taskspec.Worker, 0, 2222)))
		ts, err := c.WaitTaskSpec(ctx, task(taskspec.Worker, 0))
		require.NoError(t, err)
		require.Len(t, ts.Cluster[taskspec.Worker], 1)
		if !serve {
			require.Nil(t, ts.Program)
			continue
		}
		require.NotNil(t, ts.Program)
		require.Equal(t, want, *ts.Program)
	}
}

func TestDecodeSpecRefusesBadPrograms(t *testing.T) {
	for body, msg := range map[string]string{
		`{"cluster":{},"program":{"argv":[]}}`:                                                      "program: no command",
		`{"cluster":{},"program":{"argv":[""]}}`:                                                    "program: no command",
		`{"cluster":{},"program":{"argv":["eA==","AA=="]}}`:                                         "argument 1 holds a NUL byte",
		`{"cluster":{},"program":{"argv":["eA=="],"env":{"A B":""}}}`:                               `environment variable name "A B" is invalid`,
		`{"cluster":{},"program":{"argv":["eA=="],"env":{"A":"AA=="}}}`:                             "environment variable A holds a NUL byte",
		`{"cluster":{},"program":{"argv":["not base64"]}}`:                                          "bad JSON",
		`{"cluster":{},"program":{"argv":["` + strings.Repeat("eHh4", maxProgramBytes/3+1) + `"]}}`: "bytes, at most",
	} {
		_, err := decodeSpec([]byte(body))
		require.ErrorContains(t, err, msg, body)
	}
}

func FuzzDecodeSpec(f *testing.F) {
	f.Add(mustJSON(wireSpec{Cluster: taskspec.ClusterSpec{taskspec.Worker: {"h:1"}}, Program: Program{Argv: []string{"a\xff"}, Env: map[string]string{"A": "b"}}.wire()}))
	f.Add([]byte(`{"cluster":{},"program":{"argv":["eA=="],"env":{"1":""}}}`))
	f.Add([]byte(`{"cluster":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ts, err := decodeSpec(body)
		if err != nil || ts.Program == nil {
			return
		}
		// What decodes is a program a launcher can run, and survives a
		// round trip.
		p := *ts.Program
		if len(p.Argv) == 0 || p.Argv[0] == "" {
			t.Fatalf("decoded a program without a command: %q", p.Argv)
		}
		back, err := decodeSpec(mustJSON(wireSpec{Cluster: ts.Cluster, Program: p.wire()}))
		require.NoError(t, err)
		require.Equal(t, p, *back.Program)
	})
}
