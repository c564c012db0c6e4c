package rendezvous

import (
	"reflect"
	"sync"

	"github.com/tfyarn/tfyarn/taskspec"
)

// clusterJSON encodes the published cluster spec once for every launcher
// it goes to. The spec is O(tasks) bytes (145 KB at 5,000 tasks) and every
// launcher gets it: encoding it anew for each was the largest part of the
// AM's CPU when it was published (bench/results/scale-sim.md). A Handler
// hands every caller the one published spec and replaces it whole when it
// changes (Handler.Spec), so the map's identity names the spec: a new one
// (a restart, an elastic job's late worker) is a new map, encoded anew.
type clusterJSON struct {
	mu sync.Mutex
	// spec is the map last encoded. Holding it keeps it alive, so no
	// later spec can be allocated at its address while it is cached.
	spec    taskspec.ClusterSpec
	encoded []byte // its JSON; never changed once made, shared by every answer
}

// of returns spec's JSON, encoding it only when it is not the cached spec.
func (c *clusterJSON) of(spec taskspec.ClusterSpec) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.encoded == nil || !sameMap(c.spec, spec) {
		c.spec, c.encoded = spec, mustJSON(spec)
	}
	return c.encoded
}

func sameMap(a, b taskspec.ClusterSpec) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// The JSON around the parts of a spec answer: what json.Marshal writes
// for a wireSpec, whose fields are written in order without spaces.
const (
	specAnswerOpen    = `{"cluster":`
	specAnswerProgram = `,"program":`
	specAnswerClose   = `}`
)

// specAnswerParts are the pieces of the JSON of wireSpec{Cluster: spec,
// Program: program}, byte for byte, with the cluster's JSON shared: the
// launcher's sealed answer is made of them without joining them first
// (keys.sealParts).
func specAnswerParts(cluster []byte, program *wireProgram) [][]byte {
	if program == nil {
		return [][]byte{[]byte(specAnswerOpen), cluster, []byte(specAnswerClose)}
	}
	return [][]byte{[]byte(specAnswerOpen), cluster, []byte(specAnswerProgram), mustJSON(program), []byte(specAnswerClose)}
}
