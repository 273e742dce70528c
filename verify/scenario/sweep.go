package scenario

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/wcharczuk/go-chart/v2"
	"github.com/wcharczuk/go-chart/v2/drawing"
)

// Point is one run of a sweep: the swept value and the run's metrics.
type Point struct {
	Value   float64
	Metrics []Metric
	Failed  bool // a check or checker failed
}

// Get returns a metric of the point.
func (p Point) Get(name string) (float64, bool) {
	for _, m := range p.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

// Sweep runs s once per value of key, on its defaults overridden by the
// config file and sets, then key=value. Each run is independent and
// deterministic for its seed.
func Sweep(s *Scenario, file string, sets []string, key string, values []float64, seed uint64) ([]Point, error) {
	var out []Point
	for _, v := range values {
		p := s.Defaults()
		all := append(append([]string(nil), sets...), key+"="+strconv.FormatFloat(v, 'g', -1, 64))
		if err := Configure(p, file, all); err != nil {
			return nil, err
		}
		rep, _, violations, err := Exec(s, p, Options{Seed: seed})
		if err != nil {
			return nil, err
		}
		out = append(out, Point{Value: v, Metrics: rep.Metrics, Failed: violations != nil || rep.Failed()})
	}
	return out, nil
}

// WriteCSV writes the sweep as CSV: the swept key, then every metric of the
// first point in its order, then "failed".
func WriteCSV(w io.Writer, key string, pts []Point) error {
	cw := csv.NewWriter(w)
	if len(pts) == 0 {
		cw.Flush()
		return cw.Error()
	}
	head := []string{key}
	for _, m := range pts[0].Metrics {
		name := m.Name
		if m.Unit != "" {
			name += " (" + m.Unit + ")"
		}
		head = append(head, name)
	}
	_ = cw.Write(append(head, "failed"))
	for _, p := range pts {
		row := []string{strconv.FormatFloat(p.Value, 'g', -1, 64)}
		for _, m := range pts[0].Metrics {
			v, _ := p.Get(m.Name)
			row = append(row, strconv.FormatFloat(v, 'f', 4, 64))
		}
		_ = cw.Write(append(row, strconv.FormatBool(p.Failed)))
	}
	cw.Flush()
	return cw.Error()
}

// WriteSVG plots metric y against the swept value as an SVG line chart
// (latency versus offered load, say); runs that failed their checks are
// left out of the line.
func WriteSVG(w io.Writer, title, key, y string, pts []Point) error {
	var xs, ys []float64
	unit := ""
	for _, p := range pts {
		v, ok := p.Get(y)
		if !ok || p.Failed || math.IsNaN(v) {
			continue
		}
		xs = append(xs, p.Value)
		ys = append(ys, v)
	}
	if len(pts) > 0 {
		for _, m := range pts[0].Metrics {
			if m.Name == y {
				unit = m.Unit
			}
		}
	}
	if len(xs) < 2 {
		return fmt.Errorf("plot: need at least two successful points with metric %q, have %d", y, len(xs))
	}
	ylabel := y
	if unit != "" {
		ylabel += " (" + unit + ")"
	}
	g := chart.Chart{
		Title:      title,
		Width:      800,
		Height:     500,
		Background: chart.Style{Padding: chart.Box{Top: 50, Left: 20, Right: 20, Bottom: 20}},
		XAxis:      chart.XAxis{Name: key},
		YAxis:      chart.YAxis{Name: ylabel},
		Series: []chart.Series{chart.ContinuousSeries{
			Name: y, XValues: xs, YValues: ys,
			Style: chart.Style{StrokeColor: drawing.ColorBlue, StrokeWidth: 2, DotWidth: 4, DotColor: drawing.ColorBlue},
		}},
	}
	var b bytes.Buffer
	if err := g.Render(chart.SVG, &b); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}
