package checks

import (
	"fmt"
	"os"
	"testing"
)

func TestDbg(t *testing.T) {
	path := os.Getenv("DBG")
	if path == "" {
		t.Skip()
	}
	got, _, rep := runCase(t, path)
	fmt.Println(got)
	for _, f := range rep.Findings {
		fmt.Println(f, f.Severity, f.Message)
		for _, e := range f.Evidence {
			fmt.Println("   ", e.Line, e.Message)
		}
	}
}
