package checks

import "github.com/patchctl/patchctl/checks/engine"

import "testing"

// TestDefinesAny: a definition is found where kernel style puts it (the
// name at the start of a line or after the return type on it), never at
// an indented call.
func TestDefinesAny(t *testing.T) {
	names := map[string]bool{"rx_post": true}
	for src, want := range map[string]bool{
		"int rx_post(struct rx_conn *c)\n{\n}\n":            true,
		"static int\nrx_post(struct rx_conn *c)\n{\n}\n":    true,
		"int *rx_post (void)\n":                             true,
		"void f(void)\n{\n\trx_post(c);\n}\n":               false,
		"int rx_post_all(struct rx_conn *c)\n":              false,
		"#define rx_post(c) other(c)\n":                     false,
		"int x = rx_post(c);\n":                             false,
		"EXPORT_SYMBOL(rx_post);\n":                         false,
		"int not_it(void)\n{\n\treturn rx_post(NULL);\n}\n": false,
		"int rx_post(struct rx_conn *c);\nint y(void);\n":   true, // a prototype counts: the file is read, no harm
	} {
		if got := engine.DefinesAny([]byte(src), names); got != want {
			t.Errorf("definesAny(%q) = %v, want %v", src, got, want)
		}
	}
}
