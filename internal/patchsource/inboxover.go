package patchsource

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/mailpatch"
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
	metaKey := func(st *epochState) string { return fmt.Sprintf("last_xap%d-%d", overSchema, epochNum(st.dir)) }
	var keys []string
	for _, st := range sts {
		if filepath.Dir(st.dir) != filepath.Join(dir, "git") {
			return skip("%s is not an epoch of the inbox", st.dir)
		}
		keys = append(keys, sqlString(metaKey(st)))
	}
	indexed := map[string]string{}
	if len(keys) > 0 {
		rows, err := sqliteQuery(ctx, mmPath, "SELECT key, val FROM meta WHERE key IN ("+strings.Join(keys, ", ")+")")
		if err != nil {
			return skip("reading %s: %v", mmPath, err)
		}
		for _, r := range rows {
			indexed[r.str("key")] = r.str("val")
		}
	}
	for _, st := range sts {
		if len(st.tips) > 0 && (len(st.tips) != 1 || st.tips[0] != indexed[metaKey(st)]) {
			return skip("epoch %d was not indexed up to its tip %s (public-inbox-index has not run since the last fetch)", epochNum(st.dir), strings.Join(st.tips, " "))
		}
	}
	// The count reads the whole table: a damaged file fails here, and
	// the thread comes from patchctl's index.
	rows, err := sqliteQuery(ctx, overPath, "SELECT COUNT(*) AS n FROM over WHERE num > 0")
	if err != nil || len(rows) != 1 {
		return skip("reading %s: %v", overPath, err)
	}
	total := rows[0].int("n")
	rows, err = sqliteQuery(ctx, overPath, `SELECT over.tid AS tid FROM msgid JOIN id2num ON id2num.id = msgid.id JOIN over ON over.num = id2num.num
		WHERE msgid.mid = `+sqlString(id)+` AND id2num.num > 0 ORDER BY id2num.num LIMIT 1`)
	if err != nil {
		return skip("reading %s: %v", overPath, err)
	}
	if len(rows) == 0 {
		return in, true, fmt.Errorf("Message-ID <%s> is not in the archive at %s (%d messages in %s): %w", id, dir, total, overPath, errs.ErrInput)
	}
	rows, err = sqliteQuery(ctx, overPath, fmt.Sprintf("SELECT num, hex(ddd) AS ddd FROM over WHERE tid = %d AND num > 0 ORDER BY num", rows[0].int("tid")))
	if err != nil {
		return skip("reading %s: %v", overPath, err)
	}
	var blobs []string
	for _, r := range rows {
		ddd, err := hex.DecodeString(r.str("ddd"))
		if err != nil {
			return skip("article %d: ddd: %v", r.int("num"), err)
		}
		blob, err := overBlob(ddd)
		if err != nil {
			return skip("article %d: %v", r.int("num"), err)
		}
		blobs = append(blobs, blob)
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

// sqlRow is a row as sqlite3's JSON mode gives it: column to value.
type sqlRow map[string]json.RawMessage

func (r sqlRow) str(col string) string {
	var s string
	if json.Unmarshal(r[col], &s) != nil {
		return ""
	}
	return s
}

func (r sqlRow) int(col string) int64 {
	var n int64
	if json.Unmarshal(r[col], &n) != nil {
		return 0
	}
	return n
}

// sqlString quotes s as an SQL string literal (a quote doubled).
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// sqliteQuery runs one query on the SQLite file at path, opened read-only
// and waiting up to 5 s for a writer's lock (public-inbox-index may be
// running), with the sqlite3 program (Debian's sqlite3; its JSON mode is
// in 3.33 and later), and returns the rows. Public-inbox's files are read
// this way rather than through a Go SQLite library: the pure-Go one is
// SQLite's C translated (modernc.org/sqlite and its libc, 61 CPU-s of a
// cold Go build of patchctl, which every fresh machine pays in `make
// run`) for four queries of an optional shortcut.
func sqliteQuery(ctx context.Context, path, query string) ([]sqlRow, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("sqlite3"); err != nil {
		return nil, fmt.Errorf("sqlite3 is not installed (Debian: apt-get install sqlite3)")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "sqlite3", "-readonly", "-batch", "-bail", "-json", "-cmd", ".timeout 5000", abs, query)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("sqlite3: %s", msg)
		}
		return nil, fmt.Errorf("sqlite3: %w", err)
	}
	if len(bytes.TrimSpace(stdout.Bytes())) == 0 {
		return nil, nil // no rows: JSON mode prints nothing
	}
	var rows []sqlRow
	if err := json.Unmarshal(stdout.Bytes(), &rows); err != nil {
		return nil, fmt.Errorf("sqlite3's answer: %w", err)
	}
	return rows, nil
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
