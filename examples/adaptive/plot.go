package main

import (
	"fmt"
	"image/color"
	"os"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotStep is how far apart the picture's p99 windows end.
const plotStep = 100 * time.Millisecond

// drawPlot writes into path a PNG of three charts over the run, one line per
// strategy: the limit (for the strategies that have one), the requests in
// the server (waiting for a worker or served), and the p99 of each window
// of requests sent, as settle takes it. The last two have a log scale, as
// the strategy without a limit is a hundred times above the others.
func drawPlot(path string, results []result) error {
	charts := []*plot.Plot{
		chart(fmt.Sprintf("limit (none has none; static's is %d)", staticLimit), "requests", false),
		chart("in flight", "requests", true),
		chart(fmt.Sprintf("p99 over the last %v of requests sent (objective %v)", window, objective), "ms", true),
	}
	for i, r := range results {
		series := []plotter.XYs{limits(r.samples), inFlight(r.samples), windowP99(r.out)}
		for j, xy := range series {
			if len(xy) == 0 {
				continue
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return err
			}
			l.Color = palette[i%len(palette)]
			l.Dashes = plotutil.Dashes(i % 3)
			l.Width = vg.Points(1.2)
			charts[j].Add(l)
			if j == 1 {
				charts[0].Legend.Add(r.name, l)
			}
		}
	}
	return writeCharts(path, charts, vg.Points(900), vg.Points(1050))
}

// writeCharts writes charts, one above the other, into a PNG of width w
// and height h at path.
func writeCharts(path string, charts []*plot.Plot, w, h vg.Length) error {
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(charts), Cols: 1, PadX: vg.Millimeter * 3, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	grid := make([][]*plot.Plot, len(charts))
	for i, c := range charts {
		grid[i] = []*plot.Plot{c}
	}
	canvases := plot.Align(grid, tiles, dc)
	for i, c := range charts {
		c.Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// palette is the strategies' colours, in their order: grey for none, black
// for static, then ours, then the peer.
var palette = []color.Color{
	color.RGBA{150, 150, 150, 255},
	color.Black,
	color.RGBA{31, 119, 180, 255},
	color.RGBA{44, 160, 44, 255},
	color.RGBA{148, 103, 189, 255},
	color.RGBA{214, 39, 40, 255},
	color.RGBA{255, 127, 14, 255},
}

// chart returns an empty chart over the run's time, with a grid and a
// mark at each change of capacity.
func chart(title, unit string, logScale bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "s (capacity: " + capacities() + ")"
	p.Y.Label.Text = unit
	p.X.Min, p.X.Max = 0, runLength().Seconds()
	p.Add(plotter.NewGrid())
	if logScale {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	return p
}

// capacities describes the phases for the charts' axis.
func capacities() string {
	s := ""
	var at time.Duration
	for i, ph := range phases {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d/s from %gs", capacity(ph.workers), at.Seconds())
		at += ph.length
	}
	return s
}

// limits is the limit over time, empty for a strategy without one.
func limits(samples []sample) plotter.XYs {
	var xy plotter.XYs
	for _, s := range samples {
		if s.limit >= 0 {
			xy = append(xy, plotter.XY{X: s.at.Seconds(), Y: float64(s.limit)})
		}
	}
	return xy
}

// inFlight is the requests in the server over time, at least 1 for the
// log scale.
func inFlight(samples []sample) plotter.XYs {
	xy := make(plotter.XYs, len(samples))
	for i, s := range samples {
		xy[i] = plotter.XY{X: s.at.Seconds(), Y: float64(max(s.inFlight, 1))}
	}
	return xy
}

// windowP99 is the p99 of the requests not shed among those sent in each
// window that ends at a multiple of plotStep, in ms, at least 1 for the
// log scale.
func windowP99(out []outcome) plotter.XYs {
	var xy plotter.XYs
	for end := window; end <= runLength(); end += plotStep {
		var lat []time.Duration
		for _, o := range sentBetween(out, end-window, end) {
			if o.kind != shed {
				lat = append(lat, o.latency)
			}
		}
		slices.Sort(lat)
		ms := float64(rank(lat, 99)) / float64(time.Millisecond)
		xy = append(xy, plotter.XY{X: end.Seconds(), Y: max(ms, 1)})
	}
	return xy
}

// drawScenarios writes into path a PNG of a chart per scenario: the limit
// of each strategy over the scenario's run, ours probes apart (see
// tracked), with a mark at each change of the server or the load.
func drawScenarios(path string, scs []scenario, results [][]result) error {
	var charts []*plot.Plot
	for i, sc := range scs {
		c := plot.New()
		c.Title.Text = strings.SplitN(sc.title, ":", 2)[0]
		c.X.Label.Text = "s (dashed: a change of the server or the load)"
		if len(sc.changes) == 0 {
			c.X.Label.Text = "s"
		}
		c.Y.Label.Text = "limit"
		c.X.Min, c.X.Max = 0, sc.length.Seconds()
		c.Add(plotter.NewGrid())
		top := 0
		for _, r := range results[i] {
			_, hi := limitSpread(r.samples, 0, sc.length+sampleEvery)
			top = max(top, hi)
		}
		// Room above the lines for the legend.
		c.Y.Min, c.Y.Max = 0, 1.5*float64(top)
		c.Y.Tick.Marker = wholeTicks{}
		c.Legend.Top = true
		for _, at := range sc.changes {
			mark, err := plotter.NewLine(plotter.XYs{{X: at.Seconds(), Y: 0}, {X: at.Seconds(), Y: float64(top)}})
			if err != nil {
				return err
			}
			mark.Color = color.Gray{Y: 160}
			mark.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
			c.Add(mark)
		}
		for j, r := range results[i] {
			l, err := plotter.NewLine(limits(r.samples))
			if err != nil {
				return err
			}
			l.Color = strategyColor(r.name)
			l.Dashes = plotutil.Dashes(j % 3)
			l.Width = vg.Points(1.2)
			c.Add(l)
			c.Legend.Add(r.name, l)
		}
		charts = append(charts, c)
	}
	return writeCharts(path, charts, vg.Points(900), vg.Points(300*float64(len(charts))))
}

// wholeTicks are gonum's default ticks, labelled as whole numbers.
type wholeTicks struct{}

func (wholeTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = fmt.Sprint(int(t.Value))
		}
	}
	return ticks
}

// strategyColor is a strategy's colour in the scenarios' charts, the
// same as in the comparison's where it is there too.
func strategyColor(name string) color.Color {
	switch name {
	case "static20":
		return color.Black
	case "gradient2":
		return palette[2]
	case "vegas":
		return palette[3]
	case "aimd":
		return palette[4]
	case "failsafe":
		return palette[5]
	case "failsafe0":
		return palette[6]
	}
	return palette[0]
}
