package extents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// jsonRange is one element of a JSON list. Pointers tell a missing key
// from a zero.
type jsonRange struct {
	Offset *int64 `json:"offset"`
	Length *int64 `json:"length"`
}

// ParseJSON reads a JSON list: [{"offset": N, "length": N}, ...].
func ParseJSON(r io.Reader) ([]Entry, error) { return parseJSON(r, 0) }

// parseJSON reads a JSON list whose first skipped lines were consumed.
func parseJSON(r io.Reader, skipped int) ([]Entry, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	lines := lineCounter{data: data, first: 1 + skipped}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, &SyntaxError{Line: lines.at(0), Msg: "want a JSON array of {\"offset\": N, \"length\": N}"}
	}
	var out []Entry
	for dec.More() {
		start := elementStart(data, dec.InputOffset())
		e := Entry{Line: lines.at(start), Element: len(out) + 1}
		var jr jsonRange
		if err := dec.Decode(&jr); err != nil {
			return nil, &SyntaxError{Line: e.Line, Element: e.Element, Msg: jsonMsg(err)}
		}
		if err := e.fill(jr); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if _, err := dec.Token(); err != nil {
		return nil, &SyntaxError{Line: lines.at(dec.InputOffset()), Msg: jsonMsg(err)}
	}
	if rest := bytes.TrimSpace(data[dec.InputOffset():]); len(rest) > 0 {
		return nil, &SyntaxError{Line: lines.at(dec.InputOffset()), Msg: "more after the array"}
	}
	return out, nil
}

// fill checks an element's values and sets e's range.
func (e *Entry) fill(jr jsonRange) error {
	bad := func(msg string) error { return &SyntaxError{Line: e.Line, Element: e.Element, Msg: msg} }
	switch {
	case jr.Offset == nil:
		return bad(`no "offset"`)
	case jr.Length == nil:
		return bad(`no "length"`)
	case *jr.Offset < 0 || *jr.Length < 0:
		return bad(fmt.Sprintf("negative offset %d or length %d", *jr.Offset, *jr.Length))
	}
	e.Range = Range{Off: *jr.Offset, Len: *jr.Length}
	return overflow(*e)
}

// jsonMsg says what encoding/json found wrong, in our words where its
// are obscure.
func jsonMsg(err error) string {
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("%q must be a whole number of bytes that fits in 63 bits, not a JSON %s", te.Field, te.Value)
	case errors.As(err, &te):
		return fmt.Sprintf("want an object {\"offset\": N, \"length\": N}, not a JSON %s", te.Value)
	case strings.Contains(err.Error(), "unknown field"):
		return strings.TrimPrefix(err.Error(), "json: ") + ` (want only "offset" and "length")`
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the array is not closed"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// elementStart skips the white space and comma between the decoder's
// offset and the next element.
func elementStart(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
		off++
	}
	return off
}

// lineCounter gives the 1-based line of a byte offset, counting forward
// from where it last was, so a whole array costs one pass.
type lineCounter struct {
	data  []byte
	first int // the line data starts on
	pos   int64
	line  int
}

func (c *lineCounter) at(off int64) int {
	if c.line == 0 || off < c.pos {
		c.pos, c.line = 0, c.first
	}
	off = min(off, int64(len(c.data)))
	c.line += bytes.Count(c.data[c.pos:off], []byte{'\n'})
	c.pos = off
	return c.line
}
