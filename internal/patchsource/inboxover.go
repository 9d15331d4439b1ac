package patchsource

import (
	"bytes"
	"compress/zlib"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/mailpatch"
	_ "modernc.org/sqlite" // pure Go: no cgo, no libsqlite3
)

// A full public-inbox v2 install keeps, beside its epochs, msgmap.sqlite3
// (which records, per epoch i, the last commit indexed as the meta key
// "last_xap15-i") and xap15/over.sqlite3: msgid(id, mid) and id2num(id,
// num) map a Message-ID to article numbers, over(num, tid, ddd) gives an
// article's thread id and, in ddd, its zlib-compressed fields, the sixth
// of which is the blob's name. all.git reaches every epoch's objects.
// When every epoch's only branch tip is the commit msgmap says was
// indexed, the thread is read from there and the blobs from all.git, and
// patchctl's own index is neither read nor built.

const overSchema = 15

// overThread returns the thread of id (without <>) from dir's
// over.sqlite3; used is false when dir has none or it is behind an
// epoch's tips (a note says so), and the caller uses patchctl's index.
func overThread(ctx context.Context, dir string, sts []*epochState, id string, opts InboxOptions) (in mailpatch.Input, used bool, err error) {
	overPath := filepath.Join(dir, fmt.Sprintf("xap%d", overSchema), "over.sqlite3")
	mmPath := filepath.Join(dir, "msgmap.sqlite3")
	all := filepath.Join(dir, "all.git")
	for _, p := range []string{overPath, mmPath, all} {
		if _, err := os.Stat(p); err != nil {
			return in, false, nil
		}
	}
	skip := func(format string, args ...any) (mailpatch.Input, bool, error) {
		opts.Progress.Note("not using %s: %s: using patchctl's index", overPath, fmt.Sprintf(format, args...))
		return mailpatch.Input{}, false, nil
	}
	mm, err := openRO(mmPath)
	if err != nil {
		return skip("%v", err)
	}
	defer mm.Close()
	for _, st := range sts {
		if filepath.Dir(st.dir) != filepath.Join(dir, "git") {
			return skip("%s is not an epoch of the inbox", st.dir)
		}
		n := epochNum(st.dir)
		var last string
		err := mm.QueryRowContext(ctx, "SELECT val FROM meta WHERE key = ? LIMIT 1", fmt.Sprintf("last_xap%d-%d", overSchema, n)).Scan(&last)
		if err != nil && err != sql.ErrNoRows {
			return skip("reading %s: %v", mmPath, err)
		}
		if len(st.tips) > 0 && (len(st.tips) != 1 || st.tips[0] != last) {
			return skip("epoch %d was not indexed up to its tip %s (public-inbox-index has not run since the last fetch)", n, strings.Join(st.tips, " "))
		}
	}
	db, err := openRO(overPath)
	if err != nil {
		return skip("%v", err)
	}
	defer db.Close()
	var total int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM over WHERE num > 0").Scan(&total); err != nil {
		return skip("%v", err)
	}
	var tid int64
	err = db.QueryRowContext(ctx, `SELECT over.tid FROM msgid JOIN id2num ON id2num.id = msgid.id JOIN over ON over.num = id2num.num
		WHERE msgid.mid = ? AND id2num.num > 0 ORDER BY id2num.num LIMIT 1`, id).Scan(&tid)
	if errors.Is(err, sql.ErrNoRows) {
		return in, true, fmt.Errorf("Message-ID <%s> is not in the archive at %s (%d messages in %s): %w", id, dir, total, overPath, errs.ErrInput)
	}
	if err != nil {
		return skip("%v", err)
	}
	rows, err := db.QueryContext(ctx, "SELECT num, ddd FROM over WHERE tid = ? AND num > 0 ORDER BY num", tid)
	if err != nil {
		return skip("%v", err)
	}
	defer rows.Close()
	var blobs []string
	for rows.Next() {
		var num int64
		var ddd []byte
		if err := rows.Scan(&num, &ddd); err != nil {
			return skip("%v", err)
		}
		blob, err := overBlob(ddd)
		if err != nil {
			return skip("article %d: %v", num, err)
		}
		blobs = append(blobs, blob)
	}
	if err := rows.Err(); err != nil {
		return skip("%v", err)
	}
	var b bytes.Buffer
	err = gitRepo{all}.catBlobs(ctx, blobs, func(_ int, data []byte) error {
		writeMboxrd(&b, data)
		if b.Len() > MaxInput {
			return fmt.Errorf("the thread of <%s> in %s is over %d bytes (%d messages): give the patches as files instead: %w", id, dir, MaxInput, len(blobs), errs.ErrInput)
		}
		return nil
	}, nil)
	if err != nil {
		return in, true, err
	}
	return mailpatch.Input{Name: fmt.Sprintf("%s/<%s> (%d messages, over.sqlite3)", filepath.Base(filepath.Clean(dir)), id, len(blobs)), Data: b.Bytes()}, true, nil
}

// openRO opens an SQLite file read-only.
func openRO(path string) (*sql.DB, error) {
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(5000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// overBlob reads the blob's name from an over row's ddd: zlib-compressed
// lines subject, from, references, to, cc, blob, mid, bytes, lines.
func overBlob(ddd []byte) (string, error) {
	r, err := zlib.NewReader(bytes.NewReader(ddd))
	if err != nil {
		return "", fmt.Errorf("ddd: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return "", fmt.Errorf("ddd: %w", err)
	}
	f := strings.Split(string(data), "\n")
	if len(f) < 6 || !isHex(f[5]) {
		return "", fmt.Errorf("ddd: no blob name in field 6 of %s", strconv.Quote(string(data[:min(len(data), 200)])))
	}
	return f[5], nil
}
