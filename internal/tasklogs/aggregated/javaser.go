package aggregated

import (
	"encoding/binary"
	"fmt"
	"math"
)

// A minimal reader of Java's object serialization stream protocol, enough
// for the index the IFile format keeps at its end (a serialized
// IndexedLogsMeta: objects, strings, enums, HashMap, ArrayList, longs).
// Every count and length is bounded by what is left of the stream.

const (
	tcNull           = 0x70
	tcReference      = 0x71
	tcClassDesc      = 0x72
	tcObject         = 0x73
	tcString         = 0x74
	tcArray          = 0x75
	tcBlockData      = 0x77
	tcEndBlockData   = 0x78
	tcReset          = 0x79
	tcBlockDataLong  = 0x7a
	tcLongString     = 0x7c
	tcEnum           = 0x7e
	baseWireHandle   = 0x7e0000
	scWriteMethod    = 0x01
	scSerializable   = 0x02
	scExternalizable = 0x04
	maxDepth         = 32
	maxFields        = 1024
)

// jclass is a class descriptor.
type jclass struct {
	name   string
	flags  byte
	fields []jfield
	super  *jclass
}

type jfield struct {
	typ  byte // B C D F I J S Z, L or [
	name string
}

// jobject is a deserialized object: its fields by name (of every class in
// its hierarchy) and, for classes with their own writeObject, what that
// wrote after the fields (blockdata as []byte, objects as themselves).
type jobject struct {
	class  string
	fields map[string]any
	extra  map[string][]any // class name -> annotation contents
}

// jenum is an enum constant.
type jenum struct{ class, name string }

type jreader struct {
	b       []byte
	off     int
	handles []any
	depth   int
}

func jerr(format string, args ...any) error {
	return &FormatError{"IFile index", fmt.Sprintf(format, args...)}
}

func (r *jreader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, jerr("%d bytes wanted at %d, %d left", n, r.off, len(r.b)-r.off)
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p, nil
}

func (r *jreader) u8() (byte, error) {
	p, err := r.take(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

func (r *jreader) u16() (int, error) {
	p, err := r.take(2)
	if err != nil {
		return 0, err
	}
	return int(binary.BigEndian.Uint16(p)), nil
}

func (r *jreader) i32() (int32, error) {
	p, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(p)), nil
}

func (r *jreader) i64() (int64, error) {
	p, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(p)), nil
}

func (r *jreader) utf() (string, error) {
	n, err := r.u16()
	if err != nil {
		return "", err
	}
	p, err := r.take(n)
	return string(p), err
}

func (r *jreader) newHandle(v any) int {
	r.handles = append(r.handles, v)
	return len(r.handles) - 1
}

func (r *jreader) handle() (any, error) {
	h, err := r.i32()
	if err != nil {
		return nil, err
	}
	i := int(h) - baseWireHandle
	if i < 0 || i >= len(r.handles) {
		return nil, jerr("reference to unknown handle %#x", h)
	}
	return r.handles[i], nil
}

// readJava decodes one serialized object (after the 0xACED 0005 header).
func readJava(b []byte) (any, error) {
	if len(b) < 4 || b[0] != 0xac || b[1] != 0xed || b[2] != 0 || b[3] != 5 {
		return nil, jerr("no Java serialization header")
	}
	r := &jreader{b: b, off: 4}
	return r.content()
}

// content reads one object, string, enum, array, class descriptor, null or
// reference.
func (r *jreader) content() (any, error) {
	if r.depth++; r.depth > maxDepth {
		return nil, jerr("nested deeper than %d", maxDepth)
	}
	defer func() { r.depth-- }()
	tc, err := r.u8()
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcNull:
		return nil, nil
	case tcReference:
		return r.handle()
	case tcString:
		s, err := r.utf()
		if err != nil {
			return nil, err
		}
		r.newHandle(s)
		return s, nil
	case tcLongString:
		n, err := r.i64()
		if err != nil {
			return nil, err
		}
		if n < 0 || n > int64(len(r.b)-r.off) {
			return nil, jerr("string of %d bytes", n)
		}
		p, _ := r.take(int(n))
		r.newHandle(string(p))
		return string(p), nil
	case tcClassDesc:
		r.off--
		return r.classDesc()
	case tcEnum:
		cd, err := r.classDesc()
		if err != nil {
			return nil, err
		}
		if cd == nil {
			return nil, jerr("enum without class")
		}
		e := &jenum{class: cd.name}
		r.newHandle(e)
		v, err := r.content()
		if err != nil {
			return nil, err
		}
		name, ok := v.(string)
		if !ok {
			return nil, jerr("enum constant is not a string")
		}
		e.name = name
		return e, nil
	case tcObject:
		return r.object()
	case tcArray:
		return r.array()
	case tcReset:
		r.handles = r.handles[:0]
		return r.content()
	}
	return nil, jerr("unsupported type code %#x at %d", tc, r.off-1)
}

// classDesc reads a class descriptor: TC_CLASSDESC ..., TC_NULL or a reference.
func (r *jreader) classDesc() (*jclass, error) {
	tc, err := r.u8()
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcNull:
		return nil, nil
	case tcReference:
		v, err := r.handle()
		if err != nil {
			return nil, err
		}
		c, ok := v.(*jclass)
		if !ok {
			return nil, jerr("reference to a non-class where a class was expected")
		}
		return c, nil
	case tcClassDesc:
	default:
		return nil, jerr("class descriptor expected, got %#x", tc)
	}
	c := &jclass{}
	if c.name, err = r.utf(); err != nil {
		return nil, err
	}
	if _, err := r.i64(); err != nil { // serialVersionUID
		return nil, err
	}
	r.newHandle(c)
	if c.flags, err = r.u8(); err != nil {
		return nil, err
	}
	n, err := r.u16()
	if err != nil {
		return nil, err
	}
	if n > maxFields || n*2 > len(r.b)-r.off {
		return nil, jerr("%d fields", n)
	}
	for i := 0; i < n; i++ {
		var f jfield
		if f.typ, err = r.u8(); err != nil {
			return nil, err
		}
		if f.name, err = r.utf(); err != nil {
			return nil, err
		}
		if f.typ == 'L' || f.typ == '[' {
			if _, err := r.content(); err != nil { // the field's class name
				return nil, err
			}
		} else if primSize(f.typ) == 0 {
			return nil, jerr("field %s of unknown type %q", f.name, f.typ)
		}
		c.fields = append(c.fields, f)
	}
	if _, err := r.annotation(); err != nil { // classAnnotation
		return nil, err
	}
	if c.super, err = r.classDesc(); err != nil {
		return nil, err
	}
	return c, nil
}

func primSize(t byte) int {
	switch t {
	case 'B', 'Z':
		return 1
	case 'C', 'S':
		return 2
	case 'I', 'F':
		return 4
	case 'J', 'D':
		return 8
	}
	return 0
}

// annotation reads contents until TC_ENDBLOCKDATA: blockdata as []byte.
func (r *jreader) annotation() ([]any, error) {
	var out []any
	for {
		if r.off >= len(r.b) {
			return nil, jerr("annotation without end")
		}
		switch r.b[r.off] {
		case tcEndBlockData:
			r.off++
			return out, nil
		case tcBlockData, tcBlockDataLong:
			p, err := r.blockData()
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		default:
			v, err := r.content()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
}

// blockData reads one block of data: TC_BLOCKDATA with a one-byte length,
// or TC_BLOCKDATALONG with a four-byte signed one (take bounds both).
func (r *jreader) blockData() ([]byte, error) {
	size := 1
	if r.b[r.off] == tcBlockDataLong {
		size = 4
	}
	r.off++
	p, err := r.take(size)
	if err != nil {
		return nil, err
	}
	n := int(p[0])
	if size == 4 {
		n = int(int32(binary.BigEndian.Uint32(p)))
	}
	return r.take(n)
}

func (r *jreader) object() (*jobject, error) {
	cd, err := r.classDesc()
	if err != nil {
		return nil, err
	}
	if cd == nil {
		return nil, jerr("object without class")
	}
	o := &jobject{class: cd.name, fields: map[string]any{}, extra: map[string][]any{}}
	r.newHandle(o)
	var chain []*jclass
	for c := cd; c != nil; c = c.super {
		if len(chain) >= maxDepth {
			return nil, jerr("class hierarchy deeper than %d", maxDepth)
		}
		chain = append(chain, c)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		if c.flags&scExternalizable != 0 {
			return nil, jerr("externalizable class %s", c.name)
		}
		if c.flags&scSerializable == 0 {
			continue
		}
		for _, f := range c.fields {
			v, err := r.field(f.typ)
			if err != nil {
				return nil, err
			}
			o.fields[f.name] = v
		}
		if c.flags&scWriteMethod != 0 {
			a, err := r.annotation()
			if err != nil {
				return nil, err
			}
			o.extra[c.name] = a
		}
	}
	return o, nil
}

func (r *jreader) field(t byte) (any, error) {
	switch t {
	case 'L', '[':
		return r.content()
	case 'J':
		return r.i64()
	case 'I':
		v, err := r.i32()
		return int64(v), err
	case 'F':
		v, err := r.i32()
		return float64(math.Float32frombits(uint32(v))), err
	case 'D':
		v, err := r.i64()
		return math.Float64frombits(uint64(v)), err
	}
	p, err := r.take(primSize(t))
	if err != nil {
		return nil, err
	}
	var v int64
	for _, c := range p {
		v = v<<8 | int64(c)
	}
	return v, nil
}

// array reads TC_ARRAY: only arrays of primitives and objects of modest
// size appear in practice; each element costs at least a byte.
func (r *jreader) array() (any, error) {
	cd, err := r.classDesc()
	if err != nil {
		return nil, err
	}
	if cd == nil || len(cd.name) < 2 {
		return nil, jerr("array without class")
	}
	var out []any
	r.newHandle(&out)
	n, err := r.i32()
	if err != nil {
		return nil, err
	}
	if n < 0 || int(n) > len(r.b)-r.off {
		return nil, jerr("array of %d elements", n)
	}
	et := cd.name[1]
	for i := 0; i < int(n); i++ {
		v, err := r.field(et)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
