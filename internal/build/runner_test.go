package build

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/command/runtest"
)

// TestMakeRunsThroughTheRunner: the build's make is started by the
// Runner the build was given (Options.Runner), never the real one: a
// stubbed make that fails becomes a CompileError naming its first error.
func TestMakeRunsThroughTheRunner(t *testing.T) {
	stub := runtest.Stub(t)
	stub.Register(`^make -C .* -j3 .*bzImage$`, 2, "drivers/x.c:6:1: error: expected ';'\nmake[1]: *** [x] Error 1\n")
	m := &maker{src: t.TempDir(), dir: t.TempDir(), jobs: 3, runner: stub}
	res, err := m.make(context.Background(), "bzImage")
	var ce *CompileError
	if !errors.As(err, &ce) || res.errors == 0 || !strings.Contains(strings.Join(ce.First, "\n"), "x.c:6:1") {
		t.Errorf("result %+v, error %v", res, err)
	}
}

// TestMakeGivesModulesDWARF: every make of a build passes
// CFLAGS_MODULE=-g (module objects carry DWARF; the configuration has no
// CONFIG_DEBUG_INFO), and the build key covers it.
func TestMakeGivesModulesDWARF(t *testing.T) {
	stub := runtest.Stub(t)
	stub.Register(`^make -C .* 'CFLAGS_MODULE=-g' modules$`, 0, "")
	m := &maker{src: t.TempDir(), dir: t.TempDir(), jobs: 1, runner: stub}
	if _, err := m.make(context.Background(), "modules"); err != nil {
		t.Fatalf("make without CFLAGS_MODULE=-g: %v", err)
	}
	o, _ := fakeKernel(t)
	k1, err := Key(o)
	if err != nil {
		t.Fatal(err)
	}
	saved := makeFlags
	t.Cleanup(func() { makeFlags = saved })
	makeFlags = nil
	if k2, _ := Key(o); k2 == k1 {
		t.Error("the build key does not cover make's variables")
	}
}
