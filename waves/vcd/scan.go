package vcd

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// scanner splits its input into white-space separated tokens, tracking line
// numbers. A token is a slice of the read buffer, valid until the next call
// of next (unread keeps it for one more call).
type scanner struct {
	r        io.Reader
	buf      []byte
	pos, end int // buf[pos:end] is unread input
	line     int // line at pos
	eof      bool
	rerr     error

	tok     []byte
	tokLine int
	unread  bool // next returns tok again

	// capture makes next append everything it consumes (white space and
	// tokens) to capBuf.
	capture bool
	capBuf  []byte

	// fatal is set when the input is not text or cannot be read; next then
	// returns false for good.
	fatal     string
	fatalLine int
}

func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, 64<<10), line: 1}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// next reads the next token into s.tok and s.tokLine. It returns false at
// the end of the input or on a fatal error.
func (s *scanner) next() bool {
	if s.unread {
		s.unread = false
		return true
	}
	if s.fatal != "" {
		return false
	}
	for {
		if s.pos == s.end && !s.fill(s.pos) {
			s.tok = nil
			if s.rerr != nil {
				return s.fail(fmt.Sprintf("read error: %v", s.rerr))
			}
			return false
		}
		c := s.buf[s.pos]
		if !isSpace(c) {
			break
		}
		if c == '\n' {
			s.line++
		}
		if s.capture {
			s.capBuf = append(s.capBuf, c)
		}
		s.pos++
	}
	s.tokLine = s.line
	start, i := s.pos, s.pos
	high := false
	for {
		if i == s.end {
			n := i - start
			more := s.fill(start) // moves buf[start:] to the front
			start, i = 0, n
			if !more {
				break
			}
			continue
		}
		c := s.buf[i]
		if c <= ' ' || c == 0x7f {
			if isSpace(c) {
				break
			}
			return s.fail(fmt.Sprintf("control character %#02x: binary data, not a VCD text file", c))
		}
		if c >= 0x80 {
			high = true
		}
		i++
	}
	s.tok = s.buf[start:i]
	s.pos = i
	if high && !utf8.Valid(s.tok) {
		return s.fail("invalid UTF-8: not a VCD text file")
	}
	if s.capture {
		s.capBuf = append(s.capBuf, s.tok...)
	}
	return true
}

func (s *scanner) fail(msg string) bool {
	s.fatal, s.fatalLine = msg, s.line
	s.tok = nil
	return false
}

// fill discards buf[:keep], moves the rest to the front and reads more
// input, growing the buffer if it is full. It returns false if nothing more
// could be read.
func (s *scanner) fill(keep int) bool {
	if keep > 0 {
		s.end = copy(s.buf, s.buf[keep:s.end])
		s.pos -= keep
	}
	if s.eof {
		return false
	}
	if s.end == len(s.buf) {
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	for range 100 {
		m, err := s.r.Read(s.buf[s.end:])
		if m < 0 || m > len(s.buf)-s.end {
			m, err = 0, fmt.Errorf("reader returned an invalid count %d", m)
		}
		s.end += m
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.rerr = err
			}
			return m > 0
		}
		if m > 0 {
			return true
		}
	}
	s.eof, s.rerr = true, io.ErrNoProgress
	return false
}
