package mailpatch

import (
	"math/rand"
	"testing"
)

// lastID is the last match of the msgIDs regexp, on random strings of
// the characters that matter.
func TestLastIDIsRegexp(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	alphabet := []byte("<>< >\t\nab@.")
	for range 20000 {
		b := make([]byte, r.Intn(24))
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		s := string(b)
		want := ""
		if all := msgIDs.FindAllString(s, -1); len(all) > 0 {
			want = all[len(all)-1]
		}
		if got := lastID(s); got != want {
			t.Fatalf("lastID(%q) = %q, regexp %q", s, got, want)
		}
	}
}
