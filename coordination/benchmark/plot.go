package benchmark

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot writes a PNG of accuracy against cost per item, one labelled point
// per protocol, with the oracle as a dashed line: the frontier a reader
// chooses a setting from.
func (r *QualityReport) Plot(w io.Writer) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Accuracy against cost (%d %s items, seed %d)", r.Items, r.Data, r.Seed)
	p.X.Label.Text = "cost per item (USD, sim-length texts)"
	p.Y.Label.Text = "accuracy (%)"
	p.Add(plotter.NewGrid())

	pts := make(plotter.XYs, 0, len(r.Rows))
	labels := make([]string, 0, len(r.Rows))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range r.Rows {
		pts = append(pts, plotter.XY{X: row.Cost, Y: 100 * row.Accuracy})
		labels = append(labels, row.Title)
		lo, hi = min(lo, 100*row.AccLo), max(hi, 100*row.AccHi)
	}
	// Error bars: each protocol's 95 % interval.
	bars := make(plotter.XYs, len(pts))
	copy(bars, pts)
	errs := make(plotter.YErrors, len(r.Rows))
	for i, row := range r.Rows {
		errs[i].Low, errs[i].High = 100*(row.Accuracy-row.AccLo), 100*(row.AccHi-row.Accuracy)
	}
	eb, err := plotter.NewYErrorBars(struct {
		plotter.XYer
		plotter.YErrorer
	}{bars, errs})
	if err != nil {
		return fmt.Errorf("plotting the intervals: %w", err)
	}
	eb.Color = color.Gray{Y: 140}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("plotting the protocols: %w", err)
	}
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Radius = vg.Points(3.5)
	sc.GlyphStyle.Color = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	p.Add(eb, sc)
	// One label per point, moved down a line while it would sit on a label
	// already placed near it (protocols of similar cost and accuracy).
	span := 0.0
	for _, pt := range pts {
		span = max(span, pt.X)
	}
	var placed []plotter.XY
	for i, pt := range pts {
		shift := 0
		for _, q := range placed {
			if math.Abs(q.X-pt.X) < 0.12*span && math.Abs(q.Y-(pt.Y-float64(shift)*0.5)) < 0.5 {
				shift++
			}
		}
		placed = append(placed, plotter.XY{X: pt.X, Y: pt.Y - float64(shift)*0.5})
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{pt}, Labels: []string{labels[i]}})
		if err != nil {
			return fmt.Errorf("labelling the protocols: %w", err)
		}
		lb.TextStyle[0].Font.Size = vg.Points(8)
		lb.TextStyle[0].XAlign = draw.XLeft
		lb.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(-3 - 10*float64(shift))}
		p.Add(lb)
	}

	maxX := 0.0
	for _, pt := range pts {
		maxX = max(maxX, pt.X)
	}
	// Room on the right for the labels of the costliest protocols.
	maxX *= 1.5
	if r.Oracle > 0 {
		line, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 100 * r.Oracle}, {X: maxX, Y: 100 * r.Oracle}})
		if err == nil {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			line.Color = color.RGBA{R: 200, G: 80, B: 60, A: 255}
			p.Add(line)
			p.Legend.Add(fmt.Sprintf("oracle %.1f %%", 100*r.Oracle), line)
			p.Legend.Top = false
			p.Legend.Left = false
		}
		hi = max(hi, 100*r.Oracle)
	}
	p.X.Min, p.X.Max = 0, maxX
	p.Y.Min, p.Y.Max = math.Floor(lo-1), math.Ceil(hi+1)

	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(8*vg.Inch, 5*vg.Inch), vgimg.UseDPI(96))}
	p.Draw(draw.New(c))
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("writing the plot: %w", err)
	}
	return nil
}
