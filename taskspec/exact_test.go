package taskspec

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// A job's program survives its JSON byte for byte, bytes that are not
// UTF-8 included (encoding/json alone would turn them into U+FFFD).
func TestJobJSONKeepsTheProgramsBytes(t *testing.T) {
	job := Job{
		Name: "n", Command: "prog\xff", Args: []string{"a\xfe\x00b", "{{(touch X)}}", "<CPS>", "", "é"},
		Env:   map[string]string{"A": "\x80$(x)`y`", "B": "plain"},
		Tasks: []TaskGroup{{Type: Worker, Instances: 2, Resources: Resources{VCores: 1, MemoryMiB: 256}}},
	}
	b, err := json.Marshal(job)
	require.NoError(t, err)
	require.Contains(t, string(b), `"Args":[{"base64":"Yf4AYg=="},"{{(touch X)}}","\u003cCPS\u003e","","é"]`, "valid UTF-8 stays readable")
	var back Job
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, job, back)

	var none Job
	require.NoError(t, json.Unmarshal([]byte(`{"Command":"x"}`), &none))
	require.Nil(t, none.Args)
	require.Nil(t, none.Env)
	require.Error(t, json.Unmarshal([]byte(`{"Args":[{"b64":"eA=="}]}`), &none))
	require.Error(t, json.Unmarshal([]byte(`{"Args":[7]}`), &none))
}

func FuzzExactString(f *testing.F) {
	f.Add([]byte("plain"))
	f.Add([]byte("a\xff\x00"))
	f.Add([]byte(`{"base64":"eA=="}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := json.Marshal(ExactString(data))
		require.NoError(t, err)
		var back ExactString
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, string(data), string(back))
		// Arbitrary input decodes or fails, never panics.
		_ = json.Unmarshal(data, &back)
	})
}
