package envpack

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRewriteShebang(t *testing.T) {
	prefixes := []string{"/opt/envs/a-real", "/opt/envs/a"}
	for _, tc := range []struct {
		name, rel, in, want string
	}{
		{"python", "bin/pip", "#!/opt/envs/a/bin/python3.11\nimport x\n",
			"#!/bin/sh\n'''exec' \"$(dirname -- \"$0\")/python3.11\" \"$0\" \"$@\"\n' '''\nimport x\n"},
		{"resolved prefix", "bin/pip", "#!/opt/envs/a-real/bin/python\nimport x\n",
			"#!/bin/sh\n'''exec' \"$(dirname -- \"$0\")/python\" \"$0\" \"$@\"\n' '''\nimport x\n"},
		{"args and CRLF", "bin/t", "#!/opt/envs/a/bin/python -E -s\r\nimport x\r\n",
			"#!/bin/sh\n'''exec' \"$(dirname -- \"$0\")/python\" -E -s \"$0\" \"$@\"\n' '''\nimport x\r\n"},
		{"other interpreter", "bin/t", "#!/opt/envs/a/bin/perl\nprint 1\n", "#!/usr/bin/env perl\nprint 1\n"},
		{"no newline", "bin/t", "#!/opt/envs/a/bin/bash", "#!/usr/bin/env bash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := rewriteShebang([]byte(tc.in), tc.rel, prefixes)
			require.True(t, ok)
			require.Equal(t, tc.want, string(out))
		})
	}
	for _, in := range []string{
		"#!/usr/bin/env python3\n",              // already relocatable
		"#!/opt/envs/ab/bin/python\n",           // another env that shares the prefix's spelling
		"#!/usr/bin/python3\n",                  // outside
		"#!/opt/envs/a/bin/perl -w\n",           // env cannot pass the argument
		"\x7fELF\x02\x01",                       // binary
		"# comment\n#!/opt/envs/a/bin/python\n", // not a shebang
		"#!\n",                                  // empty
	} {
		_, ok := rewriteShebang([]byte(in), "bin/x", prefixes)
		require.False(t, ok, "%q", in)
	}
}

func TestRelPath(t *testing.T) {
	require.Equal(t, "python3", relPath("bin", "bin/python3"))
	require.Equal(t, "../lib/x", relPath("bin", "lib/x"))
	require.Equal(t, "../../foo", relPath("lib/python3.11/site-packages", "lib/foo"))
	require.Equal(t, "lib/x", relPath(".", "lib/x"))
	require.Equal(t, "../..", relPath("a/b", "."))
}

func TestPrefixScanner(t *testing.T) {
	s := newPrefixScanner([]string{"/opt/env"})
	data := []byte("xxxxx/opt/envyyyy")
	// Every split point, including inside the prefix.
	for i := 0; i <= len(data); i++ {
		for j := i; j <= len(data); j++ {
			s.reset()
			s.Write(data[:i])
			s.Write(data[i:j])
			s.Write(data[j:])
			require.True(t, s.found, "%d %d", i, j)
			require.False(t, s.binary)
		}
	}
	s.reset()
	s.Write([]byte("/opt/en"))
	s.Write([]byte("X/opt/e"))
	s.Write([]byte("nv"))
	require.True(t, s.found)
	s.reset()
	s.Write([]byte("/opt/en\x00v"))
	require.False(t, s.found)
	require.True(t, s.binary)
}
