package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestPlainLines(t *testing.T) {
	var b bytes.Buffer
	r := New(&b)
	clock := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return clock }
	r.Start("extract 6.12")
	r.Update("1000 files") // too soon: not printed
	clock = clock.Add(11 * time.Second)
	r.Update("5000 files")
	clock = clock.Add(time.Second)
	r.Done("86629 files")
	got := b.String()
	for _, want := range []string{"10:00:00 extract 6.12: started\n", "10:00:11 extract 6.12: 5000 files (11s)\n", "10:00:12 extract 6.12: 86629 files (12s)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "1000 files") || strings.Contains(got, "\r") {
		t.Errorf("plain mode printed a live update:\n%q", got)
	}
}
