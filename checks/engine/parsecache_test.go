package engine

import "testing"

// A file whose module's macros were expanded is parsed once per content
// and uses (a warm check re-reads the whole scope), and a change of
// either parses it anew with its own uses.
func TestParseCachedMacroUses(t *testing.T) {
	src := []byte("void f(struct ib_send_wr *wr) { wr->send_flags = 1; }\n")
	uses := map[int]macroUse{32: {Name: "SET_FLAGS", File: "drivers/x/x.h", Line: 3}}
	a := parseCached("drivers/x/a.c", src, uses)
	b := parseCached("drivers/x/a.c", src, map[int]macroUse{32: {Name: "SET_FLAGS", File: "drivers/x/x.h", Line: 3}})
	if a != b {
		t.Fatal("the same content and macro uses were parsed twice")
	}
	c := parseCached("drivers/x/a.c", src, map[int]macroUse{32: {Name: "SET_FLAGS", File: "drivers/x/x.h", Line: 4}})
	if c == a || c.Macros[32].Line != 4 || a.Macros[32].Line != 3 {
		t.Fatalf("another definition's use was served from the cache: %+v", c.Macros)
	}
	d := parseCached("drivers/x/a.c", src, nil)
	if d == a || len(d.Macros) != 0 {
		t.Fatalf("a file without macro uses was served one with uses: %+v", d.Macros)
	}
}
