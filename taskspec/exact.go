package taskspec

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// ExactString is a string that keeps its bytes through JSON. A program's
// arguments and environment are bytes, not text, and encoding/json would
// replace bytes that are not UTF-8 by U+FFFD: ExactString encodes valid
// UTF-8 as a JSON string (so job files stay readable) and anything else as
// {"base64": "..."}.
type ExactString string

// MarshalJSON implements json.Marshaler.
func (s ExactString) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(s)) {
		return json.Marshal(string(s))
	}
	return json.Marshal(exactBytes{Base64: []byte(s)})
}

// UnmarshalJSON implements json.Unmarshaler: a JSON string, or the
// {"base64": "..."} object MarshalJSON writes for other bytes.
func (s *ExactString) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err == nil {
		*s = ExactString(str)
		return nil
	}
	var v exactBytes
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v.Base64 == nil {
		return errors.New(`expected a string or {"base64": "..."}`)
	}
	*s = ExactString(v.Base64)
	return nil
}

type exactBytes struct {
	Base64 []byte `json:"base64"`
}

// ExactStrings converts a list for JSON (nil stays nil).
func ExactStrings(list []string) []ExactString {
	if list == nil {
		return nil
	}
	out := make([]ExactString, len(list))
	for i, s := range list {
		out[i] = ExactString(s)
	}
	return out
}

// PlainStrings is the inverse of ExactStrings.
func PlainStrings(list []ExactString) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}

// jobFields is Job without its JSON methods; jobJSON shadows the fields
// that hold a program's bytes with exact forms (encoding/json takes the
// shallower of two fields of the same name).
type jobFields Job

type jobJSON struct {
	jobFields
	Command ExactString
	Script  ExactString
	Args    []ExactString
	Env     map[string]ExactString
}

// MarshalJSON writes the job with its command, script, arguments and
// environment byte for byte (see ExactString).
func (j Job) MarshalJSON() ([]byte, error) {
	w := jobJSON{jobFields: jobFields(j), Command: ExactString(j.Command), Script: ExactString(j.Script), Args: ExactStrings(j.Args)}
	if j.Env != nil {
		w.Env = make(map[string]ExactString, len(j.Env))
		for k, v := range j.Env {
			w.Env[k] = ExactString(v)
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (j *Job) UnmarshalJSON(b []byte) error {
	var w jobJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*j = Job(w.jobFields)
	j.Command, j.Script, j.Args = string(w.Command), string(w.Script), PlainStrings(w.Args)
	j.Env = nil
	if w.Env != nil {
		j.Env = make(map[string]string, len(w.Env))
		for k, v := range w.Env {
			j.Env[k] = string(v)
		}
	}
	return nil
}
