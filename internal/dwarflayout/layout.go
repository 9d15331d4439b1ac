// Package dwarflayout reads C struct layouts and enum values from the DWARF of
// built objects (stdlib debug/elf and debug/dwarf; relocations of .o files
// are applied by debug/elf). The boot test takes ib_send_wr's member
// offsets from here, and the checks take sizeof(struct nvme_command).
package dwarflayout

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"strings"
)

// Struct is a struct's size and member offsets.
type Struct struct {
	Name    string
	Size    int64
	Members map[string]int64
}

// ErrNotFound is returned when the object has no such type or enumerator.
var ErrNotFound = errors.New("not in the object's DWARF")

// Reader reads one object's DWARF.
type Reader struct {
	path string
	d    *dwarf.Data
}

// Open opens an ELF object built with debug info.
func Open(path string) (*Reader, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	return fromELF(path, f)
}

// FromBytes reads the DWARF of an ELF object already read into memory
// (b, read from path: named in errors), for a caller that must see the
// very bytes it read, such as one that records them by digest.
func FromBytes(path string, b []byte) (*Reader, error) {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return fromELF(path, f)
}

func fromELF(path string, f *elf.File) (*Reader, error) {
	d, err := f.DWARF()
	if err != nil {
		return nil, fmt.Errorf("%s has no usable DWARF (compile it with -g: patchctl builds modules with CFLAGS_MODULE=-g, CONFIG_DEBUG_INFO gives all objects DWARF): %w", path, err)
	}
	return &Reader{path: path, d: d}, nil
}

// Struct finds the complete definition of struct name.
func (r *Reader) Struct(name string) (*Struct, error) {
	rd := r.d.Reader()
	for {
		e, err := rd.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			return nil, fmt.Errorf("struct %s: %w (%s)", name, ErrNotFound, r.path)
		}
		if e.Tag != dwarf.TagStructType || e.Val(dwarf.AttrName) != name || e.Val(dwarf.AttrDeclaration) == true {
			if e.Children && e.Tag != dwarf.TagCompileUnit {
				rd.SkipChildren()
			}
			continue
		}
		s := &Struct{Name: name, Members: map[string]int64{}}
		if sz, ok := e.Val(dwarf.AttrByteSize).(int64); ok {
			s.Size = sz
		}
		if !e.Children {
			return s, nil
		}
		for {
			m, err := rd.Next()
			if err != nil {
				return nil, err
			}
			if m == nil || m.Tag == 0 {
				return s, nil
			}
			if m.Tag == dwarf.TagMember {
				if n, ok := m.Val(dwarf.AttrName).(string); ok {
					if off, ok := m.Val(dwarf.AttrDataMemberLoc).(int64); ok {
						s.Members[n] = off
					}
				}
			}
			if m.Children {
				rd.SkipChildren()
			}
		}
	}
}

// EnumeratorsWithPrefix returns every enumerator whose name starts with
// prefix (of any enum), by name.
func (r *Reader) EnumeratorsWithPrefix(prefix string) (map[string]int64, error) {
	out := map[string]int64{}
	rd := r.d.Reader()
	for {
		e, err := rd.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			return out, nil
		}
		if e.Tag != dwarf.TagEnumerator {
			continue
		}
		n, _ := e.Val(dwarf.AttrName).(string)
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		if _, seen := out[n]; seen {
			continue
		}
		switch v := e.Val(dwarf.AttrConstValue).(type) {
		case int64:
			out[n] = v
		case uint64:
			out[n] = int64(v)
		}
	}
}

// Enumerators returns the values of the named enumerators (of any enum).
func (r *Reader) Enumerators(names ...string) (map[string]int64, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]int64{}
	rd := r.d.Reader()
	for len(out) < len(want) {
		e, err := rd.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagEnumerator {
			continue
		}
		n, _ := e.Val(dwarf.AttrName).(string)
		if !want[n] {
			continue
		}
		switch v := e.Val(dwarf.AttrConstValue).(type) {
		case int64:
			out[n] = v
		case uint64:
			out[n] = int64(v)
		}
	}
	for n := range want {
		if _, ok := out[n]; !ok {
			return out, fmt.Errorf("enumerator %s: %w (%s)", n, ErrNotFound, r.path)
		}
	}
	return out, nil
}
