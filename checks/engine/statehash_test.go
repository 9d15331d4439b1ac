package engine

import (
	"fmt"
	"hash/fnv"
	"io"
	"math/rand"
	"strconv"
	"testing"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// fnvOfWrite is the state's hash as it was first written: hash/fnv's
// FNV-1a over each map's name and its "key=value;" entries, keys in
// order. State.hash must give the same number without the copies.
func fnvOfWrite(s *State) uint64 {
	h := fnv.New64a()
	write := func(name string, keys []string, get func(string) string) {
		io.WriteString(h, name)
		for _, k := range keys {
			io.WriteString(h, k+"="+get(k)+";")
		}
	}
	write("A", SortedKeys(s.Addr), func(k string) string { return s.Addr[k].key() })
	write("F", SortedKeys(s.Flags), func(k string) string { return s.Flags[k].key() + "@" + strconv.Itoa(s.FlagLine[k]) })
	write("S", SortedKeys(s.Sgl), func(k string) string { return s.Sgl[k] })
	write("N", SortedKeys(s.Nsge), func(k string) string { return s.Nsge[k] })
	write("O", SortedKeys(s.Opc), func(k string) string { return s.Opc[k] })
	write("X", SortedKeys(s.next), func(k string) string { return s.next[k] })
	write("P", SortedKeys(s.alias), func(k string) string { return s.alias[k] })
	write("L", SortedKeys(s.locals), func(k string) string { return s.locals[k].key() })
	write("E", SortedKeys(s.localExpr), func(k string) string { return s.localExpr[k] })
	write("C", SortedKeys(s.Facts), func(k string) string { return strconv.FormatBool(s.Facts[k]) })
	write("M", SortedKeys(s.Nums), func(k string) string { return strconv.FormatInt(s.Nums[k], 10) })
	write("H", SortedKeys(s.Hi), func(k string) string { return strconv.FormatInt(s.Hi[k], 10) })
	write("Q", SortedKeys(s.created), func(k string) string { return s.created[k] })
	write("G", SortedKeys(s.grant), func(k string) string { return strconv.Itoa(s.grant[k]) })
	return h.Sum64()
}

// TestStateHashIsFNVOfItsEntries: random states, every map filled or
// left empty, negative and large numbers, empty and non-ASCII strings.
func TestStateHashIsFNVOfItsEntries(t *testing.T) {
	r := rand.New(rand.NewSource(29))
	word := func() string {
		return []string{"", "sge.addr", "wr->send_flags", "x", "ü=;", "a@b", strconv.Itoa(r.Intn(1000))}[r.Intn(7)]
	}
	val := func() *Val {
		if r.Intn(5) == 0 {
			return nil
		}
		v := &Val{kind: Kind(r.Intn(3)), Why: word(), File: word(), Line: r.Intn(5000)}
		if r.Intn(3) == 0 {
			v = &Val{Cond: word(), t: v, f: &Val{kind: Kind(r.Intn(3))}}
		}
		return v
	}
	num := func() int64 {
		return []int64{0, -1, 7, -9223372036854775808, 9223372036854775807, r.Int63n(1 << 40)}[r.Intn(6)]
	}
	seen := map[uint64]string{}
	for i := 0; i < 2000; i++ {
		s := newState()
		for j, n := 0, r.Intn(4); j < n; j++ {
			s.Addr[word()] = val()
			k := word()
			s.Flags[k], s.FlagLine[k] = val(), r.Intn(3000)-5
			s.Sgl[word()], s.Nsge[word()], s.Opc[word()] = word(), word(), word()
			s.next[word()], s.alias[word()], s.localExpr[word()] = word(), word(), word()
			s.locals[word()] = val()
			s.Facts[word()] = r.Intn(2) == 0
			s.Nums[word()], s.Hi[word()] = num(), num()
			s.created[word()], s.grant[word()] = word(), r.Intn(3)-1
		}
		want := fnvOfWrite(s)
		if got := s.hash(); got != want {
			t.Fatalf("state %d: hash %x, FNV-1a of its entries %x", i, got, want)
		}
		seen[want] = fmt.Sprint(i)
	}
	if len(seen) < 1000 {
		t.Errorf("%d distinct hashes of 2000 random states", len(seen))
	}
}

// TestKindOfIsKind: the kind by symbol number is tree-sitter's own kind
// for every node, named or not, aliased (field_identifier,
// type_identifier, statement_identifier), missing or in error.
func TestKindOfIsKind(t *testing.T) {
	srcs := []string{
		"struct s { int a; } x; int f(struct s *p) { lbl: p->a = sizeof(*p); goto lbl; return p->a ? 1 : -1; }",
		"int f(void) { if (x { return 1 }",                       // ERROR and MISSING
		"#define M(a) ((a) + 1)\n#if X\nint y = M(2);\n#endif\n", // preprocessor
		"@@@ !!! \x00\xff int",                                   // nothing C
		"",
	}
	kinds := map[string]bool{}
	for _, src := range srcs {
		f := Parse("x.c", []byte(src))
		Walk(f.Tree.RootNode(), func(n *sitter.Node) bool {
			for i := uint(0); i < n.ChildCount(); i++ {
				if c := n.Child(i); c != nil && KindOf(c) != c.Kind() {
					t.Errorf("%q: KindOf %q, Kind %q", src, KindOf(c), c.Kind())
				}
			}
			if KindOf(n) != n.Kind() {
				t.Errorf("%q: KindOf %q, Kind %q", src, KindOf(n), n.Kind())
			}
			kinds[n.Kind()] = true
			return true
		})
	}
	for _, k := range []string{"ERROR", "field_identifier", "type_identifier", "statement_identifier", "preproc_function_def"} {
		if !kinds[k] {
			t.Errorf("no %s node among the sources: the test misses a case", k)
		}
	}
}
