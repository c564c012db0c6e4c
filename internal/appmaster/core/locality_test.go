package core

import (
	"reflect"
	"testing"
)

// An ask for any node is "*" with relaxed locality; an in-place
// replacement's is its node, then its rack and "*" with relaxed locality
// off. The rack is the one the RM reported for the node, YARN's default
// one when it reported none: a scheduler places a node-local container
// only while the node's own rack is asked for.
func TestAskLocalities(t *testing.T) {
	for _, tc := range []struct {
		name string
		ask  Ask
		want []Locality
	}{
		{"any node", Ask{Count: 3}, []Locality{{"*", true}}},
		{"any node, a rack known is no constraint", Ask{Rack: "/r1", Count: 3}, []Locality{{"*", true}}},
		{"in place, rack reported", Ask{Node: "n7", Rack: "/dc1/r4", Count: 1},
			[]Locality{{"n7", true}, {"/dc1/r4", false}, {"*", false}}},
		{"in place, no rack reported: YARN's default", Ask{Node: "n7", Count: 1},
			[]Locality{{"n7", true}, {"/default-rack", false}, {"*", false}}},
	} {
		if got := tc.ask.Localities(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
