package scenario

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// PlotOptions choose what WriteSVG draws.
type PlotOptions struct {
	// Title heads the plot (the scenario's name if empty).
	Title string
	// Y are the metrics plotted against the first grid key, one series
	// each (per combination of the other keys); they share a unit
	// (CheckY).
	Y []string
	// LogY draws the y axis on a log scale (points at or below zero are
	// left out and counted in the caption).
	LogY bool
}

// The plot's colours: a series' own colour, and saturated points' red.
var (
	seriesColors = []color.Color{
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
		color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
		color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
		color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
	}
	// seriesGlyphs tell apart series that share a colour (more series
	// than colours).
	seriesGlyphs   = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.RingGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}
	saturatedColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	refColor       = color.Gray{Y: 0x60}
)

// series is one line of the plot: a metric at one combination of the grid
// keys after the first, its points in increasing x.
type series struct {
	name  string
	stats []Stat
}

// plotSeries returns the plot's lines: for each metric of ys, one per
// combination of the grid keys after the first, in the grid's order; the
// name is the combination ("k=3, vc=2"), led by the metric when there are
// several. dropped counts the values a log axis cannot show.
func plotSeries(res *SweepResult, ys []string, logY bool) (out []series, dropped int) {
	for _, y := range ys {
		stats, d := res.MetricStats(y, logY)
		dropped += d
		var combos []string
		byCombo := map[string][]Stat{} // lookup only; combos keep the grid's order
		for _, g := range res.Groups() {
			k := res.comboText(g.Grid)
			if _, ok := byCombo[k]; !ok {
				combos = append(combos, k)
				byCombo[k] = nil
			}
		}
		for _, st := range stats {
			k := res.comboText(st.Grid)
			byCombo[k] = append(byCombo[k], st)
		}
		for _, k := range combos {
			st := byCombo[k]
			sort.SliceStable(st, func(i, j int) bool { return st[i].Grid[0] < st[j].Grid[0] })
			name := k
			switch {
			case name == "":
				name = y
			case len(ys) > 1:
				name = y + ", " + k
			}
			out = append(out, series{name: name, stats: st})
		}
	}
	return out, dropped
}

// comboText names the values of the grid keys after the first.
func (r *SweepResult) comboText(grid []float64) string {
	if len(grid) < 2 {
		return ""
	}
	t := (&SweepResult{Grid: r.Grid[min(1, len(r.Grid)):]}).GridText(grid[1:])
	return t
}

// WriteSVG plots the sweep as an SVG figure: each metric of o.Y against
// the first grid key, one line per combination of the other keys' values
// (and per metric when there are several), both axes labelled with their
// units, the y axis on the left, ticks at round steps labelled with as
// few decimals as the step needs. A point is the mean over its seeds; with
// several seeds its bar is the 95% confidence interval of the mean
// (Student t, n-1 degrees of freedom), as the caption says. Saturated
// points are drawn with their own marker and named in the legend; a
// metric's reference (the zero-load latency) is a dashed horizontal line;
// failed and missing runs are not drawn but listed under the title. A
// sweep with nothing to draw still gives a figure that says so.
func WriteSVG(w io.Writer, res *SweepResult, o PlotOptions) error {
	if len(o.Y) == 0 {
		return fmt.Errorf("plot: no metric to plot")
	}
	if len(res.Grid) == 0 {
		return fmt.Errorf("plot: no grid key")
	}
	sans := font.Font{Typeface: "Liberation", Variant: "Sans"}
	p := plot.New()
	p.Title.TextStyle.Font = font.From(sans, 11)
	p.Legend.TextStyle.Font = font.From(sans, 9)
	p.X.Tick.Label.Font = font.From(sans, 9)
	p.Y.Tick.Label.Font = font.From(sans, 9)
	p.X.Label.TextStyle.Font = font.From(sans, 10)
	p.Y.Label.TextStyle.Font = font.From(sans, 10)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), vg.Points(-6)
	p.Legend.ThumbnailWidth = vg.Points(18)

	unit := ""
	if d, ok := res.Def(o.Y[0]); ok {
		unit = d.Unit
	}
	xKey := res.Grid[0]
	p.X.Label.Text = axisLabel(xKey.Key, xKey.Unit)
	p.Y.Label.Text = axisLabel(strings.Join(o.Y, ", "), unit)

	var xs, ys []float64 // everything drawn, for the axis ranges
	var satThumb plot.Thumbnailer
	lines, nonPositive := plotSeries(res, o.Y, o.LogY)
	var bars []*errBars
	for i, sr := range lines {
		if len(sr.stats) == 0 {
			continue
		}
		col := seriesColors[i%len(seriesColors)]
		shape := seriesGlyphs[(i/len(seriesColors))%len(seriesGlyphs)]
		var line, okPts, satPts plotter.XYs
		eb := &errBars{}
		for _, s := range sr.stats {
			x := s.Grid[0]
			line = append(line, plotter.XY{X: x, Y: s.Mean})
			if s.Saturated {
				satPts = append(satPts, plotter.XY{X: x, Y: s.Mean})
			} else {
				okPts = append(okPts, plotter.XY{X: x, Y: s.Mean})
			}
			if s.N > 1 {
				eb.stats = append(eb.stats, s)
			}
			xs = append(xs, x)
			ys = append(ys, s.Hi())
			if s.Lo() > 0 || !o.LogY {
				ys = append(ys, s.Lo())
			} else {
				ys = append(ys, s.Mean)
			}
		}
		l, err := plotter.NewLine(line)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		l.Color, l.Width = col, vg.Points(1.5)
		p.Add(l)
		thumbs := []plot.Thumbnailer{l}
		if len(okPts) > 0 {
			sc, err := plotter.NewScatter(okPts)
			if err != nil {
				return fmt.Errorf("plot: %w", err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: shape}
			p.Add(sc)
			thumbs = append(thumbs, sc)
		}
		if len(eb.stats) > 0 {
			// Drawn once the y axis is known (NewYErrorBars copies the
			// bars, and a log axis clips them).
			eb.color = col
			bars = append(bars, eb)
		}
		p.Legend.Add(sr.name, thumbs...)
		if len(satPts) > 0 {
			sc, err := plotter.NewScatter(satPts)
			if err != nil {
				return fmt.Errorf("plot: %w", err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: saturatedColor, Radius: vg.Points(4.5), Shape: draw.PyramidGlyph{}}
			p.Add(sc)
			if satThumb == nil {
				satThumb = sc
			}
		}
	}
	// Reference lines: the first drawable value of each metric's
	// reference (the zero-load latency does not depend on the load), one
	// per combination of the other grid keys (it depends on them: a
	// larger mesh has a longer zero-load latency), in its series' colour
	// when there are several.
	comboColor := map[string]color.Color{} // lookup only
	for i, sr := range lines {
		if len(sr.stats) > 0 {
			if k := res.comboText(sr.stats[0].Grid); comboColor[k] == nil {
				comboColor[k] = seriesColors[i%len(seriesColors)]
			}
		}
	}
	for _, y := range o.Y {
		d, _ := res.Def(y)
		if d.Ref == "" {
			continue
		}
		rd, _ := res.Def(d.Ref)
		if rd.Unit != unit {
			continue
		}
		stats, _ := res.MetricStats(d.Ref, o.LogY)
		done := map[string]bool{} // lookup only; the order is the stats'
		for _, st := range stats {
			k := res.comboText(st.Grid)
			if done[k] {
				continue
			}
			done[k] = true
			v := st.Mean
			col, name := color.Color(refColor), fmt.Sprintf("%s = %s %s", d.Ref, formatMin(v), rd.Unit)
			if k != "" {
				name += " (" + k + ")"
				if c := comboColor[k]; c != nil {
					col = c
				}
			}
			ref := &hline{y: v, LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}}
			p.Add(ref)
			ys = append(ys, v)
			p.Legend.Add(name, ref)
		}
	}
	// A metric counted in the swept key's unit (accepted against offered
	// load) gets the identity line: where every offered unit is accepted.
	if unit != "" && unit == xKey.Unit && len(xs) > 0 && !o.LogY {
		id := plotter.NewFunction(func(x float64) float64 { return x })
		id.LineStyle = draw.LineStyle{Color: refColor, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
		p.Add(id)
		lo, hi := bounds(xs)
		ys = append(ys, lo, hi)
		p.Legend.Add(fmt.Sprintf("%s = %s", o.Y[0], xKey.Key), id)
	}
	if satThumb != nil {
		p.Legend.Add("saturated (did not drain)", satThumb)
	}

	// Axis ranges and ticks.
	xmin, xmax := bounds(xs)
	if len(xs) == 0 {
		xmin, xmax = bounds(xKey.Values)
	}
	p.X.Min, p.X.Max, p.X.Tick.Marker = linearAxis(xmin, xmax, false)
	ymin, ymax := bounds(ys)
	if o.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Min, p.Y.Max, p.Y.Tick.Marker = logAxis(ymin, ymax)
		for _, b := range bars {
			b.floor = p.Y.Min
		}
	} else {
		p.Y.Min, p.Y.Max, p.Y.Tick.Marker = linearAxis(ymin, ymax, true)
	}
	for _, b := range bars {
		e, err := plotter.NewYErrorBars(b)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		e.Color, e.CapWidth = b.color, vg.Points(5)
		p.Add(e)
	}

	title := o.Title
	if title == "" {
		title = res.Scenario
	}
	lines2 := []string{title}
	if res.Seeds > 1 {
		what := fmt.Sprintf("points: mean over %d seeds", res.Seeds)
		if len(bars) > 0 {
			what += "; bars: 95% confidence interval of the mean (Student t, n-1 dof)"
		}
		lines2 = append(lines2, what)
	}
	if len(xs) == 0 {
		lines2 = append(lines2, "no point to draw")
	}
	if fails := res.Failed(); len(fails) > 0 {
		const shown = 3
		for i, f := range fails {
			if i == shown {
				lines2 = append(lines2, fmt.Sprintf("and %d more failed runs (see the CSV)", len(fails)-shown))
				break
			}
			seed := ""
			if res.Seeds > 1 {
				seed = fmt.Sprintf(" seed %d", f.Seed)
			}
			lines2 = append(lines2, clip(fmt.Sprintf("failed, not drawn: %s%s: %s", res.GridText(f.Grid), seed, f.Reason), 110))
		}
	}
	if miss := res.Missing(); len(miss) > 0 {
		lines2 = append(lines2, fmt.Sprintf("%d of %d runs missing (jobs not run or not merged)", len(miss), len(res.Points)))
	}
	if nonPositive > 0 {
		lines2 = append(lines2, fmt.Sprintf("%d values at or below zero left out of the log axis", nonPositive))
	}
	p.Title.Text = strings.Join(lines2, "\n")
	p.Title.Padding = vg.Points(6)

	c := vgsvg.New(vg.Points(576), vg.Points(360))
	p.Draw(draw.New(c))
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

func axisLabel(name, unit string) string {
	if unit == "" {
		return name
	}
	return name + " (" + unit + ")"
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// errBars are confidence-interval bars around the means
// (plotter.YErrorer). On a log axis a bar whose low end is at or below
// zero stops at the axis' bottom, floor (set once the axis is known).
type errBars struct {
	stats []Stat
	floor float64
	color color.Color
}

func (b *errBars) Len() int                    { return len(b.stats) }
func (b *errBars) XY(i int) (float64, float64) { return b.stats[i].Grid[0], b.stats[i].Mean }
func (b *errBars) YError(i int) (float64, float64) {
	s := b.stats[i]
	lo := s.HalfWidth
	if b.floor > 0 && s.Lo() < b.floor {
		lo = s.Mean - b.floor
	}
	return lo, s.HalfWidth
}

// hline is a horizontal line across the data area at y.
type hline struct {
	y float64
	draw.LineStyle
}

// Plot draws the line.
func (h *hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, ty := p.Transforms(&c)
	y := ty(h.y)
	c.StrokeLine2(h.LineStyle, c.Min.X, y, c.Max.X, y)
}

// Thumbnail draws the line's legend icon.
func (h *hline) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(h.LineStyle, c.Min.X, y, c.Max.X, y)
}

func bounds(vs []float64) (lo, hi float64) {
	if len(vs) == 0 {
		return 0, 0
	}
	lo, hi = vs[0], vs[0]
	for _, v := range vs {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi
}

// niceStep is the 1, 2 or 5 times a power of ten nearest above span/n.
func niceStep(span float64, n int) float64 {
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// linearAxis widens [lo, hi] to whole steps of a round tick step (from
// zero if fromZero and the data are not negative) and returns the ticks,
// each labelled with the decimals the step needs: 0.05 steps give "0.05",
// 100 steps give "500", never "500.00".
func linearAxis(lo, hi float64, fromZero bool) (float64, float64, plot.Ticker) {
	if fromZero && lo >= 0 {
		lo = 0
	}
	if hi <= lo {
		// One value (or none): a unit-wide window around it.
		half := math.Max(math.Abs(lo)/2, 0.5)
		if fromZero && lo >= 0 {
			lo, hi = 0, math.Max(2*lo, 1)
		} else {
			lo, hi = lo-half, hi+half
		}
	}
	step := niceStep(hi-lo, 6)
	lo = math.Floor(lo/step+1e-9) * step
	hi = math.Ceil(hi/step-1e-9) * step
	dec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ticks plot.ConstantTicks
	n := int(math.Round((hi - lo) / step))
	for i := 0; i <= n; i++ {
		v := lo + float64(i)*step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', dec, 64)})
		if i < n {
			// One unlabelled minor tick between labels.
			ticks = append(ticks, plot.Tick{Value: v + step/2})
		}
	}
	return lo, hi, ticks
}

// logAxis widens [lo, hi] (both positive) to whole decades and labels
// each decade, and the 2 and 5 between them when the axis spans at most
// two decades.
func logAxis(lo, hi float64) (float64, float64, plot.Ticker) {
	if lo <= 0 || hi <= 0 {
		lo, hi = 1, 10
	}
	d0 := int(math.Floor(math.Log10(lo) + 1e-9))
	d1 := int(math.Ceil(math.Log10(hi) - 1e-9))
	if d1 <= d0 {
		d1 = d0 + 1
	}
	var ticks plot.ConstantTicks
	for d := d0; d <= d1; d++ {
		dec := math.Pow10(d)
		for m := 1; m <= 9; m++ {
			if d == d1 && m > 1 {
				break
			}
			v := float64(m) * dec
			t := plot.Tick{Value: v}
			if m == 1 || (d1-d0 <= 2 && (m == 2 || m == 5)) {
				t.Label = formatMin(v)
			}
			ticks = append(ticks, t)
		}
	}
	return math.Pow10(d0), math.Pow10(d1), ticks
}

// formatMin formats v as an integer when it is one, else with four
// significant digits and no trailing zeros.
func formatMin(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
