package traffic

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Record is one packet of a traffic trace.
type Record struct {
	Cycle    uint64
	Src, Dst int
	Size     int // flits
}

// ReadTrace reads a traffic trace: one packet per line as four whitespace
// separated decimal fields
//
//	<cycle> <source> <destination> <size in flits>
//
// with blank lines and '#' comments allowed. Cycles must not decrease;
// nodes must be in 0..nodes-1 and sizes positive. Errors name the line.
func ReadTrace(r io.Reader, nodes int) ([]Record, error) {
	if nodes < 1 {
		// uint64(nodes) below would let every node number through.
		return nil, fmt.Errorf("traffic trace for %d nodes: need at least one node", nodes)
	}
	sc := bufio.NewScanner(r)
	var out []Record
	line := 0
	var last uint64
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 {
			return nil, fmt.Errorf("line %d: want <cycle> <source> <destination> <size>, got %d fields", line, len(f))
		}
		var v [4]uint64
		for i, s := range f {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: field %d %q is not a non-negative integer", line, i+1, s)
			}
			v[i] = n
		}
		rec := Record{Cycle: v[0], Src: int(v[1]), Dst: int(v[2]), Size: int(v[3])}
		switch {
		case rec.Cycle < last:
			return nil, fmt.Errorf("line %d: cycle %d is before the previous record's %d", line, rec.Cycle, last)
		case v[1] >= uint64(nodes) || v[2] >= uint64(nodes):
			return nil, fmt.Errorf("line %d: nodes must be in 0..%d", line, nodes-1)
		case rec.Size < 1 || v[3] > 1<<20:
			return nil, fmt.Errorf("line %d: size %d flits must be 1..%d", line, v[3], 1<<20)
		}
		last = rec.Cycle
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return out, nil
}

// ReadTraceFile reads a trace file; errors name the file.
func ReadTraceFile(path string, nodes int) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := ReadTrace(f, nodes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}
