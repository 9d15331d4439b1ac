package fsutil

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
)

// ListFolders lists the folders under dir from starts (slash paths
// relative to dir, "." for dir itself) in parallel: each folder opened
// and listed by a goroutine of its own, at most one per core (two at
// least) at once. fn gets a folder's path, its open descriptor (to stat
// its entries relative to it: a system call per entry, not a lookup
// from the root) and its entry names in byte order, or the error of
// opening or listing it; it returns the subfolders to list next. It may
// be called from several goroutines at once. open is os.Open when nil
// (a test's stand-in for a folder it cannot read). ListFolders returns
// once every folder is listed and fn has returned for each.
func ListFolders(dir string, starts []string, open func(string) (*os.File, error), fn func(rel string, fd int, names []string, err error) []string) {
	if open == nil {
		open = os.Open
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(2, runtime.NumCPU()))
	var list func(rel string)
	list = func(rel string) {
		defer wg.Done()
		sem <- struct{}{}
		var next []string
		func() {
			defer func() { <-sem }()
			f, err := open(filepath.Join(dir, filepath.FromSlash(rel)))
			if err != nil {
				next = fn(rel, -1, nil, err)
				return
			}
			defer f.Close()
			names, err := f.Readdirnames(-1)
			if err != nil {
				next = fn(rel, -1, nil, err)
				return
			}
			slices.Sort(names)
			next = fn(rel, int(f.Fd()), names, nil)
		}()
		for _, sub := range next {
			wg.Add(1)
			go list(sub)
		}
	}
	for _, s := range starts {
		wg.Add(1)
		go list(s)
	}
	wg.Wait()
}
