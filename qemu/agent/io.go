package main

import (
	"bytes"
	"fmt"
	"math/rand"

	"golang.org/x/sys/unix"
)

// ioTest writes iterations blocks of size bytes at distinct random
// offsets with O_DIRECT, each with its own random pattern, then reads every
// block back and compares every byte.
func ioTest(dev string, size, iterations int, rng *rand.Rand) error {
	fd, err := unix.Open(dev, unix.O_RDWR|unix.O_DIRECT|unix.O_SYNC, 0)
	if err != nil {
		return fmt.Errorf("open %s O_DIRECT: %w", dev, err)
	}
	defer unix.Close(fd)
	// mmap gives page-aligned buffers, as O_DIRECT wants.
	buf, err := unix.Mmap(-1, 0, size*2+4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return err
	}
	defer unix.Munmap(buf)
	wbuf, rbuf := buf[:size], buf[size+(4096-size%4096)%4096:][:size]
	const span = 256 << 20 // offsets within the first 256 MiB
	used := map[int64]bool{}
	type block struct {
		off  int64
		data []byte
	}
	var blocks []block
	for len(blocks) < iterations {
		off := int64(rng.Intn(span/size)) * int64(size)
		if used[off] {
			continue
		}
		used[off] = true
		rng.Read(wbuf)
		if n, err := unix.Pwrite(fd, wbuf, off); err != nil || n != size {
			return fmt.Errorf("write %d bytes at %d: n=%d %v", size, off, n, err)
		}
		blocks = append(blocks, block{off, append([]byte(nil), wbuf...)})
	}
	for _, b := range blocks {
		for i := range rbuf {
			rbuf[i] = 0
		}
		if n, err := unix.Pread(fd, rbuf, b.off); err != nil || n != size {
			return fmt.Errorf("read %d bytes at %d: n=%d %v", size, b.off, n, err)
		}
		if !bytes.Equal(rbuf, b.data) {
			i := 0
			for i < size && rbuf[i] == b.data[i] {
				i++
			}
			return fmt.Errorf("data mismatch reading %d bytes at %d: first difference at byte %d (wrote 0x%02x, read 0x%02x)", size, b.off, i, b.data[i], rbuf[i])
		}
	}
	return nil
}

func sizeName(n int) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%dk", n/1024)
	}
	return fmt.Sprint(n)
}
