package main

import (
	"fmt"
	"image/color"
	"os"
	"slices"
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
	img := vgimg.New(vg.Points(900), vg.Points(1050))
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
