package amattempt

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAttemptAndListen(t *testing.T) {
	require.Equal(t, 2, AttemptOf("container_1795461424612_0003_02_000001"))
	require.Equal(t, 1, AttemptOf("container_e17_1795461424612_0003_01_000001"))
	require.Zero(t, AttemptOf("nonsense"))
	st := &State{AM: "node1:41000"}
	require.Equal(t, ":41000", st.ReuseListen("node1"), "same host: the old port")
	require.Empty(t, st.ReuseListen("node2"), "another host: any port")
	require.Empty(t, (*State)(nil).ReuseListen("node1"))
	require.Equal(t, "/user/u/.tfyarn/application_1_0001/am-tasks.json", Path("/user/u/.tfyarn/application_1_0001"))
}

// What a saved file holds is bounded: its size, and the causes taken over.
func TestDecodeBounds(t *testing.T) {
	_, err := Decode(make([]byte, maxFile+1))
	require.EqualError(t, err, "larger than 4 MiB")
	var causes []string
	for i := range maxSavedCauses + 5 {
		causes = append(causes, fmt.Sprintf("%q", fmt.Sprint("cause ", i)))
	}
	st, err := Decode([]byte(`{"am":"h:1","tasks":[{"task":"worker:0","container":"c","host":"h","port":2,"control":3}],"restarts":{"counted":2,"causes":[` + strings.Join(causes, ",") + `]}}`))
	require.NoError(t, err)
	require.Equal(t, []Task{{Task: "worker:0", ContainerID: "c", Host: "h", Port: 2, Control: 3}}, st.Tasks)
	require.Len(t, st.Restarts.Causes, maxSavedCauses)
	require.Equal(t, "cause 5", st.Restarts.Causes[0], "the latest causes are kept")
}

// The saver writes the latest state on its own goroutine, skips what is
// unchanged, and says nothing before there is something to say.
func TestSaverSavesOnlyWhatChanged(t *testing.T) {
	saved := make(chan State, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := NewSaver(ctx, func(_ context.Context, st State) error { saved <- st; return nil }, t.Logf)
	s.Offer(State{AM: "h:1", Restarts: &Restarts{}})
	table := State{AM: "h:1", Tasks: []Task{{Task: "worker:0", ContainerID: "c"}}, Restarts: &Restarts{}}
	s.Offer(table)
	require.Equal(t, table, <-saved, "nothing to save before the table: only the table is saved")
	s.Offer(table)
	dropped := State{AM: "h:1", Restarts: &Restarts{Counted: 1}}
	s.Offer(dropped)
	require.Equal(t, dropped, <-saved)
	select {
	case st := <-saved:
		t.Fatalf("saved again: %+v", st)
	case <-time.After(50 * time.Millisecond):
	}
}

// The store writes the state as JSON at its path and reads it back, asking
// its reader for at most maxFile bytes, each access under a deadline.
func TestStoreRoundTrip(t *testing.T) {
	files := map[string][]byte{}
	s := Store{
		Path: Path("/staging"),
		Read: func(ctx context.Context, p string, max int64) ([]byte, error) {
			_, ok := ctx.Deadline()
			require.True(t, ok, "a read has a deadline")
			require.EqualValues(t, maxFile, max)
			data, ok := files[p]
			if !ok {
				return nil, fmt.Errorf("%s: file does not exist", p)
			}
			return data, nil
		},
		Write: func(ctx context.Context, p string, data []byte) error {
			_, ok := ctx.Deadline()
			require.True(t, ok, "a write has a deadline")
			files[p] = data
			return nil
		},
	}
	_, err := s.Load(context.Background())
	require.EqualError(t, err, "/staging/am-tasks.json: file does not exist")
	st := State{AM: "h:1", Tasks: []Task{{Task: "worker:0", ContainerID: "c", Host: "h", Port: 2, Control: 3}}, Restarts: &Restarts{Counted: 1}}
	require.NoError(t, s.Save(context.Background(), st))
	got, err := s.Load(context.Background())
	require.NoError(t, err)
	require.Equal(t, &st, got)
	files["/staging/am-tasks.json"] = []byte("{")
	_, err = s.Load(context.Background())
	require.ErrorContains(t, err, "/staging/am-tasks.json: unexpected end of JSON input")
}
