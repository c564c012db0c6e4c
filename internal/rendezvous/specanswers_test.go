package rendezvous

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Every launcher woken by the spec's publication gets the one published spec, not a copy of
// its own: at 5,000 tasks the copies were part of what took the AM over its container's memory
// (bench/results/scale-sim.md). The elastic case, where the Board replaces it, is
// TestBoardElasticSpec.
func TestSpecCallersShareThePublishedSpec(t *testing.T) {
	b := newBoard(t, 0, group(taskspec.Worker, 2))
	ctx := context.Background()
	require.NoError(t, b.Register(ctx, reg(taskspec.Worker, 0, 1000)))
	require.NoError(t, b.Register(ctx, reg(taskspec.Worker, 1, 1001)))
	first, err := b.Spec(ctx, task(taskspec.Worker, 0))
	require.NoError(t, err)
	second, err := b.Spec(ctx, task(taskspec.Worker, 1))
	require.NoError(t, err)
	require.Equal(t, reflect.ValueOf(first).UnsafePointer(), reflect.ValueOf(second).UnsafePointer(), "each caller got a copy")
}

// At most specAnswerSlots spec answers are built at once; a long-poll whose caller gives up
// while it waits for a slot leaves without one.
func TestSpecAnswersWaitForASlot(t *testing.T) {
	s := specAnswerSlots()
	ctx := context.Background()
	for i := 0; i < cap(s); i++ {
		require.True(t, s.take(ctx))
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	require.False(t, s.take(short), "a slot beyond the bound")
	s.give()
	require.True(t, s.take(ctx), "the slot given back")
}

// oldSpecAnswer is how a spec answer was made before the cluster's JSON was shared: the whole
// wireSpec encoded for each launcher. The tests below hold the new answer to its bytes, and
// BenchmarkSpecAnswers measures against it.
func oldSpecAnswer(cluster taskspec.ClusterSpec, program *wireProgram) []byte {
	return mustJSON(wireSpec{Cluster: cluster, Program: program})
}

// specAnswerSpecs are specs a launcher may be sent, one after the other as a Server sees them:
// the same map again, a replacement of it (an elastic job's new worker), specs of other
// shapes, and strings json.Marshal escapes.
func specAnswerSpecs() []taskspec.ClusterSpec {
	first := taskspec.ClusterSpec{taskspec.Chief: {"node1.example.com:1000"}, taskspec.Worker: {"node2.example.com:1001", ""}, taskspec.PS: {"node3.example.com:1002"}}
	replaced := copySpec(first)
	replaced[taskspec.Worker][1] = "node4.example.com:1003"
	odd := taskspec.ClusterSpec{taskspec.Worker: {"<a&b>:1", "\u2028\"\\\x01:2", "ünïcode:3"}}
	return []taskspec.ClusterSpec{first, first, replaced, first, {}, nil, odd, replaced, odd}
}

// The spec answer's bytes are exactly those of json.Marshal of the wireSpec they were made
// from, with and without a program, for every spec in turn: the cluster's JSON encoded once
// is encoded anew when the spec changes. Sealed and opened they are still the same.
func TestSpecAnswerIsTheJSONItWas(t *testing.T) {
	program := Program{Argv: []string{"sh\xff", "-c", "<CPS> $(id) '\"\\\n"}, Env: map[string]string{"A": "\x80<LOG_DIR>", "B": ""}}.wire()
	k, err := newKeys(ContainerKey(testSecret(t), testContainer))
	require.NoError(t, err)
	var cache clusterJSON
	for i, spec := range specAnswerSpecs() {
		for _, p := range []*wireProgram{nil, program} {
			want := oldSpecAnswer(spec, p)
			parts := specAnswerParts(cache.of(spec), p)
			require.Equal(t, string(want), string(bytes.Join(parts, nil)), "spec %d", i)
			sealed, err := k.sealParts("ad", parts...)
			require.NoError(t, err)
			opened, err := k.open(sealed, "ad")
			require.NoError(t, err)
			require.Equal(t, want, opened, "spec %d sealed", i)
			if spec == nil {
				continue // "cluster": null, which a launcher refuses, as it did
			}
			decoded, err := decodeSpec(opened)
			require.NoError(t, err)
			require.Equal(t, len(spec), len(decoded.Cluster), "spec %d decoded", i)
		}
	}
}

// Concurrent launchers' answers, while the spec changes under them, are each the JSON of the
// spec their caller was handed (go test -race checks the cache's locking).
func TestSpecAnswerConcurrentCallers(t *testing.T) {
	specs := specAnswerSpecs()
	var cache clusterJSON
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				spec := specs[(g+i)%len(specs)]
				if got, want := bytes.Join(specAnswerParts(cache.of(spec), nil), nil), oldSpecAnswer(spec, nil); !bytes.Equal(got, want) {
					errs <- fmt.Sprintf("caller %d, answer %d: %s, want %s", g, i, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// Through the server: an elastic job's launchers get the spec as it is when they ask, each
// replacement of it sent anew rather than the JSON of the one before.
func TestSpecAnswersFollowTheElasticSpec(t *testing.T) {
	secret := testSecret(t)
	b, err := NewBoard(BoardConfig{Groups: []taskspec.TaskGroup{group(taskspec.Worker, 3)}, RegistrationTimeout: time.Minute, RequireAssignment: true, MinWorkers: 2})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	srv := startServer(t, secret, b)
	ctx := ctxTimeout(t, 10*time.Second)
	w0, w1, w2 := reg(taskspec.Worker, 0, 1000), reg(taskspec.Worker, 1, 1001), reg(taskspec.Worker, 2, 1002)
	replacement := Registration{Task: w0.Task, Host: "node2.example.com", Port: 1700, ContainerID: "container_1_0001_01_000009"}
	wants := [][]string{
		{"node1.example.com:1000", "node1.example.com:1001", ""},
		{"node1.example.com:1000", "node1.example.com:1001", "node1.example.com:1002"},
		{"node2.example.com:1700", "node1.example.com:1001", "node1.example.com:1002"},
	}
	for i, r := range []Registration{w1, w2, replacement} {
		if i == 0 {
			b.Assign(w0.Task, w0.ContainerID)
			require.NoError(t, b.Register(ctx, w0))
		}
		b.Assign(r.Task, r.ContainerID)
		c := newTestClient(t, srv.addr, secret, r.ContainerID)
		require.NoError(t, c.Register(ctx, r))
		spec, err := c.WaitSpec(ctx, r.Task)
		require.NoError(t, err)
		require.Equal(t, wants[i], spec[taskspec.Worker], "after %s registered", r.Task)
	}
}

// BenchmarkSpecAnswers is the AM's work for one launcher's spec answer in a job of 5,000
// workers (a 145 KB spec, bench/results/scale-sim.md): the answer's JSON, sealed with the
// launcher's key and signed, as the server builds it (after) and as it did before the
// cluster's JSON was encoded once (before).
//
//	go test -run '^$' -bench SpecAnswers -benchmem ./internal/rendezvous/
func BenchmarkSpecAnswers(b *testing.B) {
	const tasks = 5000
	spec := taskspec.ClusterSpec{taskspec.Worker: make([]string, tasks)}
	for i := range spec[taskspec.Worker] {
		spec[taskspec.Worker][i] = fmt.Sprintf("node%03d.example.com:%d", i%100, 20000+i)
	}
	program := Program{Argv: []string{"python", "train.py", "--epochs", "10"}, Env: map[string]string{"PYTHONUNBUFFERED": "1", "DATA": "hdfs:///data/train"}}
	launchers := make([]keys, 16)
	for i := range launchers {
		k, err := newKeys(ContainerKey(testSecret(b), fmt.Sprintf("container_1_0001_01_%06d", i+2)))
		require.NoError(b, err)
		launchers[i] = k
	}
	answer := func(b *testing.B, seal func(k keys, ad string) []byte) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			k := launchers[i%len(launchers)]
			wire := seal(k, responseAD("sig", 200))
			_ = k.signResponse("sig", 200, wire)
		}
	}
	b.Run("before", func(b *testing.B) {
		answer(b, func(k keys, ad string) []byte {
			wire, err := k.seal(oldSpecAnswer(spec, program.wire()), ad)
			require.NoError(b, err)
			return wire
		})
	})
	var cache clusterJSON
	b.Run("after", func(b *testing.B) {
		answer(b, func(k keys, ad string) []byte {
			wire, err := k.sealParts(ad, specAnswerParts(cache.of(spec), program.wire())...)
			require.NoError(b, err)
			return wire
		})
	})
}
