package mailpatch

import (
	"strings"
	"time"
)

// parseGitDate reads a date the way git does (date.c's parse_date_basic,
// which git am uses for the author date): RFC 2822, what `git log`
// prints ("Thu Dec 4 16:00:00 2008 -0800"), ISO 8601 and the other forms
// git guesses at. ok is false where git says "invalid date format". A date
// without a zone is taken as UTC (git would use its local zone).
func parseGitDate(s string) (t time.Time, ok bool) {
	d := &gitTM{year: -1, mon: -1, mday: -1, hour: -1, min: -1, sec: -1, offset: noOffset}
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\n' {
			break
		}
		n := 0
		switch {
		case isAlpha(c):
			n = d.matchAlpha(s[i:])
		case isDigit(c):
			n = d.matchDigit(s[i:])
		case (c == '-' || c == '+') && i+1 < len(s) && isDigit(s[i+1]):
			n = d.matchTZ(s[i:])
		}
		if n == 0 {
			n = 1
		}
		i += n
	}
	if d.epoch {
		return d.epochT, true
	}
	ts, ok := d.unix()
	if !ok {
		return time.Time{}, false
	}
	off := d.offset
	if off == noOffset {
		off = 0
	}
	return time.Unix(ts-int64(off)*60, 0).In(time.FixedZone("", off*60)), true
}

const noOffset = -1 << 30

type gitTM struct {
	year, mon, mday, hour, min, sec int // year since 1900, mon 0-11
	offset                          int // minutes east of UTC
	epoch                           bool
	epochT                          time.Time
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isAlpha(c) || isDigit(c) }

var (
	gitMonths   = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	gitWeekdays = []string{"Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays"}
	gitZones    = []struct {
		name     string
		off, dst int
	}{
		{"IDLW", -12, 0}, {"NT", -11, 0}, {"CAT", -10, 0}, {"HST", -10, 0}, {"HDT", -10, 1}, {"YST", -9, 0}, {"YDT", -9, 1},
		{"PST", -8, 0}, {"PDT", -8, 1}, {"MST", -7, 0}, {"MDT", -7, 1}, {"CST", -6, 0}, {"CDT", -6, 1}, {"EST", -5, 0},
		{"EDT", -5, 1}, {"AST", -3, 0}, {"ADT", -3, 1}, {"WAT", -1, 0}, {"GMT", 0, 0}, {"UTC", 0, 0}, {"Z", 0, 0},
		{"WET", 0, 0}, {"BST", 0, 1}, {"CET", 1, 0}, {"MET", 1, 0}, {"MEWT", 1, 0}, {"MEST", 1, 1}, {"CEST", 1, 1},
		{"MESZ", 1, 1}, {"FWT", 1, 0}, {"FST", 1, 1}, {"EET", 2, 0}, {"EEST", 2, 1}, {"WAST", 7, 0}, {"WADT", 7, 1},
		{"CCT", 8, 0}, {"JST", 9, 0}, {"EAST", 10, 0}, {"EADT", 10, 1}, {"GST", 10, 0}, {"NZT", 12, 0}, {"NZST", 12, 0},
		{"NZDT", 12, 1}, {"IDLE", 12, 0},
	}
)

// matchString is git's match_string: how many leading characters of date
// equal str (ignoring case), or 0 when an alphanumeric one differs.
func matchString(date, str string) int {
	i := 0
	for ; i < len(date); i++ {
		if i < len(str) && (date[i] == str[i] || upper(date[i]) == upper(str[i])) {
			continue
		}
		if !isAlnum(date[i]) {
			break
		}
		return 0
	}
	return i
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 32
	}
	return c
}

func (d *gitTM) matchAlpha(s string) int {
	for i, m := range gitMonths {
		if n := matchString(s, m); n >= 3 {
			d.mon = i
			return n
		}
	}
	for _, w := range gitWeekdays {
		if n := matchString(s, w); n >= 3 {
			return n
		}
	}
	for _, z := range gitZones {
		if n := matchString(s, z.name); n >= 3 || n == len(z.name) {
			if d.offset == noOffset {
				d.offset = 60 * (z.off + z.dst)
			}
			return n
		}
	}
	if matchString(s, "PM") == 2 {
		d.hour = d.hour%12 + 12
		return 2
	}
	if matchString(s, "AM") == 2 {
		d.hour = d.hour % 12
		return 2
	}
	if s[0] == 'T' && len(s) > 1 && isDigit(s[1]) && d.hour == -1 {
		d.min, d.sec = 0, 0
		return 1
	}
	n := 0
	for n < len(s) && isAlpha(s[n]) {
		n++
	}
	return n
}

// number reads the decimal number at the start of s.
func number(s string) (v int64, n int) {
	for n < len(s) && isDigit(s[n]) {
		if v < 1<<40 {
			v = v*10 + int64(s[n]-'0')
		}
		n++
	}
	return v, n
}

func (d *gitTM) noDate() bool { return d.year < 0 && d.mon < 0 && d.mday < 0 }

func (d *gitTM) matchDigit(s string) int {
	num, n := number(s)
	if num >= 100000000 && d.noDate() {
		d.epoch, d.epochT = true, time.Unix(num, 0).UTC()
		return n
	}
	if n < len(s) {
		switch c := s[n]; c {
		case ':', '.', '/', '-':
			if n+1 < len(s) && isDigit(s[n+1]) {
				if m := d.matchMulti(num, c, s, n); m > 0 {
					return m
				}
			}
		}
	}
	switch {
	case n == 8:
		d.setDate(int(num/10000), int(num%10000/100), int(num%100), false)
		return n
	case n == 6:
		h, m, sec := int(num/10000), int(num%10000/100), int(num%100)
		if h < 25 && m < 60 && sec <= 60 {
			d.hour, d.min, d.sec = h, m, sec
			if n+1 < len(s) && s[n] == '.' && isDigit(s[n+1]) {
				_, k := number(s[n+1:])
				return n + 1 + k
			}
		}
		return n
	case n == 4:
		if num <= 1400 && d.offset == noOffset {
			d.offset = int(num/100)*60 + int(num%100)
		} else if num > 1900 && num < 2100 {
			d.year = int(num) - 1900
		}
		return n
	case n > 2:
		return n
	}
	if num > 0 && num < 32 && d.mday < 0 {
		d.mday = int(num)
		return n
	}
	if n == 2 && d.year < 0 {
		if num < 10 && d.mday >= 0 {
			d.year = int(num) + 100
			return n
		}
		if num >= 70 {
			d.year = int(num)
			return n
		}
	}
	if num > 0 && num < 13 && d.mon < 0 {
		d.mon = int(num) - 1
	}
	return n
}

func (d *gitTM) matchMulti(num int64, c byte, s string, end int) int {
	num2, k := number(s[end+1:])
	end += 1 + k
	num3 := int64(-1)
	if end+1 < len(s) && s[end] == c && isDigit(s[end+1]) {
		var k3 int
		num3, k3 = number(s[end+1:])
		end += 1 + k3
	}
	switch c {
	case ':':
		if num3 < 0 {
			num3 = 0
		}
		if num < 25 && num2 < 60 && num3 <= 60 {
			d.hour, d.min, d.sec = int(num), int(num2), int(num3)
			return end
		}
		return 0
	default:
		if num > 70 {
			if d.setDate(int(num), int(num2), int(num3), false) {
				return end
			}
			if d.setDate(int(num), int(num3), int(num2), false) {
				return end
			}
		}
		if c != '.' && d.setDate(int(num3), int(num), int(num2), true) {
			return end
		}
		if d.setDate(int(num3), int(num2), int(num), true) {
			return end
		}
		if c == '.' && d.setDate(int(num3), int(num), int(num2), true) {
			return end
		}
		return 0
	}
}

// setDate is git's set_date; refuseFuture refuses a date more than ten
// days ahead (git checks against now).
func (d *gitTM) setDate(year, month, day int, refuseFuture bool) bool {
	if month <= 0 || month >= 13 || day <= 0 || day >= 32 {
		return false
	}
	r := *d
	r.mon, r.mday = month-1, day
	switch {
	case year == -1:
		if !refuseFuture {
			return false
		}
		r.year = time.Now().UTC().Year() - 1900
	case year >= 1970 && year < 2100:
		r.year = year - 1900
	case year > 70 && year < 100:
		r.year = year
	case year < 38:
		r.year = year + 100
	default:
		return false
	}
	if refuseFuture {
		h := r
		h.hour, h.min, h.sec = max(h.hour, 0), max(h.min, 0), max(h.sec, 0)
		if ts, ok := h.unix(); ok && time.Now().Unix()+10*24*3600 < ts {
			return false
		}
	}
	d.mon, d.mday = r.mon, r.mday
	if year != -1 {
		d.year = r.year
	}
	return true
}

// unix is git's tm_to_time_t: only 1970-2099, and a time of day is needed.
func (d *gitTM) unix() (int64, bool) {
	mdays := []int64{0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334}
	year := int64(d.year - 70)
	if year < 0 || year > 129 || d.mon < 0 || d.mon > 11 {
		return 0, false
	}
	day := int64(d.mday)
	if d.mon < 2 || (year+2)%4 != 0 {
		day--
	}
	if d.hour < 0 || d.min < 0 || d.sec < 0 {
		return 0, false
	}
	return (year*365+(year+1)/4+mdays[d.mon]+day)*86400 + int64(d.hour)*3600 + int64(d.min)*60 + int64(d.sec), true
}

// cleanupSpace is git's cleanup_space: every run of white space becomes
// one space.
func cleanupSpace(s string) string {
	var b strings.Builder
	sp := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			if !sp {
				b.WriteByte(' ')
			}
			sp = true
			continue
		}
		sp = false
		b.WriteByte(c)
	}
	return b.String()
}

// matchTZ is git's match_tz: "+hhmm", "+hh:mm" or "+hh".
func (d *gitTM) matchTZ(s string) int {
	hour, n := number(s[1:])
	end := 1 + n
	min := int64(0)
	switch {
	case n == 4:
		min, hour = hour%100, hour/100
	case n != 2:
		min = 99
	case end < len(s) && s[end] == ':':
		var k int
		min, k = number(s[end+1:])
		end += 1 + k
		if end-1 != 5 {
			min = 99
		}
	}
	if min < 60 && hour < 24 {
		off := int(hour*60 + min)
		if s[0] == '-' {
			off = -off
		}
		d.offset = off
	}
	return end
}
