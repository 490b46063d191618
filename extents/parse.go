package extents

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// MaxLine is the longest line of a text list, comments included: a
// longer one is not a list someone meant.
const MaxLine = 4096

// Entry is one range as read, and where.
type Entry struct {
	Range
	// Line is the 1-based line it was read from: of the text, or where
	// its JSON object starts.
	Line int
	// Element is its 1-based position in a JSON array; 0 in a text list.
	Element int
}

// where names the entry's place for errors: "line 7", or "element 3
// (line 5)".
func (e Entry) where() string {
	if e.Element > 0 {
		return fmt.Sprintf("element %d (line %d)", e.Element, e.Line)
	}
	return fmt.Sprintf("line %d", e.Line)
}

// SyntaxError is a list that cannot be read: what is wrong, and where.
type SyntaxError struct {
	Line    int
	Element int // JSON: the array element, 1-based; 0 when not inside one
	Msg     string
}

func (e *SyntaxError) Error() string {
	where := Entry{Line: e.Line, Element: e.Element}.where()
	if e.Line == 0 {
		return "extent list: " + e.Msg
	}
	return fmt.Sprintf("extent list, %s: %s", where, e.Msg)
}

// Parse reads a text or JSON list (see the package documentation),
// telling them apart by the first byte that is not white space. The
// entries come in the order of the input, unmerged.
func Parse(r io.Reader) ([]Entry, error) {
	br := bufio.NewReader(r)
	skipped := 0 // newlines consumed before the first byte that counts
	for {
		b, err := br.Peek(1)
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		switch b[0] {
		case '\n':
			skipped++
			fallthrough
		case ' ', '\t', '\r':
			br.ReadByte()
			continue
		case '[':
			return parseJSON(br, skipped)
		case '{':
			return nil, &SyntaxError{Line: skipped + 1, Msg: `a JSON list is an array: [{"offset": N, "length": N}, ...]`}
		}
		return parseText(br, skipped)
	}
}

// ParseText reads a text list: "OFFSET LENGTH" lines, comments, blanks.
func ParseText(r io.Reader) ([]Entry, error) { return parseText(r, 0) }

// parseText reads a text list whose first skipped lines were consumed.
func parseText(r io.Reader, skipped int) ([]Entry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), MaxLine+2) // the newline and a CR
	var out []Entry
	line := skipped
	for sc.Scan() {
		line++
		if b := bytes.TrimSuffix(sc.Bytes(), []byte{'\r'}); len(b) > MaxLine {
			return nil, &SyntaxError{Line: line, Msg: fmt.Sprintf("longer than %d bytes", MaxLine)}
		}
		e, ok, err := parseLine(sc.Bytes(), line)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &SyntaxError{Line: line + 1, Msg: fmt.Sprintf("longer than %d bytes", MaxLine)}
		}
		return nil, err
	}
	return out, nil
}

// parseLine reads one line; ok is false for a blank or comment line.
func parseLine(b []byte, line int) (e Entry, ok bool, err error) {
	if i := bytes.IndexByte(b, '#'); i >= 0 {
		b = b[:i]
	}
	fields := strings.Fields(string(b))
	switch len(fields) {
	case 0:
		return e, false, nil
	case 2:
	default:
		return e, false, &SyntaxError{Line: line, Msg: fmt.Sprintf("%d fields, want two: OFFSET LENGTH", len(fields))}
	}
	off, err := number(fields[0], "offset", line)
	if err != nil {
		return e, false, err
	}
	n, err := number(fields[1], "length", line)
	if err != nil {
		return e, false, err
	}
	e = Entry{Range: Range{Off: off, Len: n}, Line: line}
	return e, true, overflow(e)
}

// number reads a field: decimal digits only.
func number(s, what string, line int) (int64, error) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, &SyntaxError{Line: line, Msg: fmt.Sprintf("%s %q: want a decimal number of bytes (no sign, suffix or hexadecimal)", what, s)}
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, &SyntaxError{Line: line, Msg: fmt.Sprintf("%s %s does not fit in 63 bits", what, s)}
	}
	return v, nil
}

// overflow refuses a range whose end does not fit in an int64.
func overflow(e Entry) error {
	if e.Len > math.MaxInt64-e.Off {
		return &SyntaxError{Line: e.Line, Element: e.Element, Msg: fmt.Sprintf("offset %d + length %d overflows", e.Off, e.Len)}
	}
	return nil
}
