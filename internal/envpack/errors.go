package envpack

// Error is a failed envpack operation on a path, like os.PathError but
// saying which step failed: "envpack: pack /x/venv: <cause>".
type Error struct {
	Op   string // "pack", "check", "relocate"
	Path string
	Err  error
}

func (e *Error) Error() string { return "envpack: " + e.Op + " " + e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// RuntimeError says the unpacked environment cannot run on this node. Its
// message is the whole line a task shows (it starts with "env: ").
type RuntimeError struct {
	Msg string
	Err error // the underlying cause, if any
}

func (e *RuntimeError) Error() string { return e.Msg }
func (e *RuntimeError) Unwrap() error { return e.Err }
