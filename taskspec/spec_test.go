package taskspec

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSpecAccepts(t *testing.T) {
	tests := []struct {
		spec      string
		instances int
		res       Resources
	}{
		{"4c,2g", 1, Resources{VCores: 4, MemoryMiB: 2048}},
		{"8x4c", 8, Resources{VCores: 4, MemoryMiB: DefaultMemoryMiB}},
		{"2x4c,16g,1gpu", 2, Resources{VCores: 4, MemoryMiB: 16384, GPUs: 1}},
		{"3x1c,256m", 3, Resources{VCores: 1, MemoryMiB: 256}},
		{"1c", 1, Resources{VCores: 1, MemoryMiB: DefaultMemoryMiB}},
		{" 2 x 4c , 16g , 1gpu ", 2, Resources{VCores: 4, MemoryMiB: 16384, GPUs: 1}},
		{"2X4C,16G,1GPU", 2, Resources{VCores: 4, MemoryMiB: 16384, GPUs: 1}},
		{"4c,1gpu,8g", 1, Resources{VCores: 4, MemoryMiB: 8192, GPUs: 1}},
		{"4c,2gb", 1, Resources{VCores: 4, MemoryMiB: 2048}},
		{"4c,2GiB", 1, Resources{VCores: 4, MemoryMiB: 2048}},
		{"4c,512mb", 1, Resources{VCores: 4, MemoryMiB: 512}},
		{"4c,512MiB", 1, Resources{VCores: 4, MemoryMiB: 512}},
		{"4c,1.5g", 1, Resources{VCores: 4, MemoryMiB: 1536}},
		{"4c,.5g", 1, Resources{VCores: 4, MemoryMiB: 512}},
		{"4c,0.001g", 1, Resources{VCores: 4, MemoryMiB: 2}}, // 1.024 MiB rounds up
		{"4c,2gpus", 1, Resources{VCores: 4, MemoryMiB: DefaultMemoryMiB, GPUs: 2}},
		{"4c,0gpu", 1, Resources{VCores: 4, MemoryMiB: DefaultMemoryMiB}},
		{"1000x1c", 1000, Resources{VCores: 1, MemoryMiB: DefaultMemoryMiB}},
		{"08x1c", 8, Resources{VCores: 1, MemoryMiB: DefaultMemoryMiB}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			g, err := ParseSpec(Worker, tt.spec)
			require.NoError(t, err)
			require.Equal(t, TaskGroup{Type: Worker, Instances: tt.instances, Resources: tt.res}, g)

			again, err := ParseSpec(Worker, g.Spec())
			require.NoError(t, err, "canonical form %q", g.Spec())
			require.Equal(t, g, again)
		})
	}
}

func TestParseSpecRejects(t *testing.T) {
	tests := []struct {
		spec string
		part string
		want string // the whole error text; empty: only check it is a *SpecError
	}{
		{"8x4c,2q", "2q", `worker spec "8x4c,2q": unknown size "2q"; expected <N>g, <N>m or <N>gpu`},
		{"", "", `worker spec "": empty spec; expected [N x] <vcores>c [, <mem>g|<mem>m] [, <k>gpu], e.g. 4c,2g`},
		{"   ", "", ""},
		{"2g", "2g", `worker spec "2g": "2g" comes before the vcores; expected [N x] <vcores>c [, <mem>g|<mem>m] [, <k>gpu], vcores first, e.g. 4c,2g`},
		{"4", "4", `worker spec "4": bad vcores "4"; expected <N>c, e.g. 4c`},
		{"0c", "0c", `worker spec "0c": vcores "0c" must be at least 1`},
		{"0x4c", "0x4c", `worker spec "0x4c": instance count "0" must be at least 1`},
		{"10001x1c", "10001x1c", `worker spec "10001x1c": instance count "10001" is more than the maximum of 10000`},
		{"x4c", "x4c", `worker spec "x4c": bad instance count "" in "x4c"; expected <N>x<vcores>c, e.g. 8x4c`},
		{"-2x4c", "-2x4c", ""},
		{"2x-4c", "2x-4c", ""},
		{"1.5c", "1.5c", `worker spec "1.5c": bad vcores "1.5c"; expected <N>c with a whole number, e.g. 4c`},
		{"4c,", "", `worker spec "4c,": empty part after a comma; expected <N>g, <N>m or <N>gpu`},
		{"4c,,2g", "", ""},
		{"4c,2g,3g", "3g", `worker spec "4c,2g,3g": memory given twice ("2g" and "3g")`},
		{"4c,1gpu,2gpu", "2gpu", ""},
		{"4c,2c", "2c", `worker spec "4c,2c": vcores given twice ("4c" and "2c")`},
		{"4c,0g", "0g", `worker spec "4c,0g": memory "0g" must be at least 1 MiB`},
		{"4c,1.5m", "1.5m", `worker spec "4c,1.5m": memory "1.5m" is not a whole number of MiB; expected e.g. 512m`},
		{"4c,1.2.3g", "1.2.3g", ""},
		{"4c,g", "g", `worker spec "4c,g": unknown size "g"; expected <N>g, <N>m or <N>gpu`},
		{"4c,1.5gpu", "1.5gpu", `worker spec "4c,1.5gpu": bad GPU count "1.5gpu"; expected a whole number, e.g. 1gpu`},
		{"4c,2 g", "2 g", ""},
		{"4c;2g", "4c;2g", ""},
		{"99999999999999999999c", "99999999999999999999c", ""},
		{"4294967296c", "4294967296c", `worker spec "4294967296c": vcores "4294967296c" is too large`},
		{"4c,1e3g", "1e3g", ""},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := ParseSpec(Worker, tt.spec)
			require.Error(t, err)
			var se *SpecError
			require.True(t, errors.As(err, &se), "want *SpecError, got %T", err)
			require.Equal(t, Worker, se.TaskType)
			require.Equal(t, tt.spec, se.Spec)
			require.Equal(t, tt.part, se.Part)
			require.NotContains(t, err.Error(), "\n")
			if tt.want != "" {
				require.Equal(t, tt.want, err.Error())
			}
		})
	}
}

func TestSpecErrorWithoutType(t *testing.T) {
	_, err := ParseSpec("", "4c,2q")
	require.EqualError(t, err, `spec "4c,2q": unknown size "2q"; expected <N>g, <N>m or <N>gpu`)
}

func TestGroupSpecIsCanonical(t *testing.T) {
	tests := []struct {
		group TaskGroup
		want  string
	}{
		{TaskGroup{Instances: 1, Resources: Resources{VCores: 4, MemoryMiB: 2048}}, "4c,2g"},
		{TaskGroup{Instances: 8, Resources: Resources{VCores: 4, MemoryMiB: 1536, GPUs: 2}}, "8x4c,1536m,2gpu"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.group.Spec())
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"4c,2g", "8x4c", "2x4c,16g,1gpu", "3x1c,256m", "4c,1.5g", "x", ",", "1x1c,.g", "4c,0.0000000001g"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		g, err := ParseSpec(Worker, spec)
		if err != nil {
			var se *SpecError
			require.True(t, errors.As(err, &se))
			return
		}
		require.GreaterOrEqual(t, g.Instances, 1)
		require.LessOrEqual(t, g.Instances, MaxInstances)
		require.GreaterOrEqual(t, g.Resources.VCores, int32(1))
		require.GreaterOrEqual(t, g.Resources.MemoryMiB, int64(1))
		require.GreaterOrEqual(t, g.Resources.GPUs, int64(0))
		again, err := ParseSpec(Worker, g.Spec())
		require.NoError(t, err)
		require.Equal(t, g, again)
	})
}
