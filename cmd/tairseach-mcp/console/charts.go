package console

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Charts are drawn on the server, as SVG in the page: calls, errors and
// the 95th percentile of durations per minute over the last hour, one
// line per tool or client (the busiest few, the rest as "other").
const (
	chartMinutes = 60
	chartSeries  = 5 // lines besides "other"
	chartW       = 640
	chartH       = 170
	padLeft      = 52
	padRight     = 12
	padTop       = 10
	padBottom    = 22
)

// point is one call as the charts count it.
type point struct {
	at  time.Time
	key string // the tool or the client
	dur float64
	err bool
}

// chart is one chart, ready for the template.
type chart struct {
	Title, Unit         string
	W, H                int
	Left, Right, Bottom int // the plot's edges
	Series              []series
	YMax                string // the label of the top line
	Grid                []gridLine
	XLabels             []xLabel
	Empty               bool
}

type series struct {
	Name   string
	Class  string // the line's colour, s0 to s5
	Points string // the polyline's points
	Total  string // what the legend says of it
}

type gridLine struct {
	Y     int
	Label string
}

type xLabel struct {
	X             int
	Label, Anchor string
}

// charts returns the three charts of ps (any order) by key, for the hour
// before now.
func charts(ps []point, now time.Time) []chart {
	end := now.Truncate(time.Minute).Add(time.Minute)
	start := end.Add(-chartMinutes * time.Minute)
	bucket := func(t time.Time) int { return int(t.Sub(start) / time.Minute) }
	calls := map[string]int{}
	for _, p := range ps {
		if b := bucket(p.at); b >= 0 && b < chartMinutes {
			calls[p.key]++
		}
	}
	keys := slices.SortedFunc(func(yield func(string) bool) {
		for k := range calls {
			if !yield(k) {
				return
			}
		}
	}, func(a, b string) int {
		if c := cmp.Compare(calls[b], calls[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	top := keys[:min(len(keys), chartSeries)]
	index := map[string]int{}
	for i, k := range top {
		index[k] = i
	}
	names := slices.Clone(top)
	if len(keys) > len(top) {
		names = append(names, "other")
	}
	n := len(names)
	count := make([][]float64, n)
	errs := make([][]float64, n)
	durs := make([][][]float64, n)
	for i := range n {
		count[i], errs[i], durs[i] = make([]float64, chartMinutes), make([]float64, chartMinutes), make([][]float64, chartMinutes)
	}
	for _, p := range ps {
		b := bucket(p.at)
		if b < 0 || b >= chartMinutes {
			continue
		}
		i, ok := index[p.key]
		if !ok {
			i = n - 1 // other
		}
		count[i][b]++
		if p.err {
			errs[i][b]++
		}
		durs[i][b] = append(durs[i][b], p.dur)
	}
	p95 := make([][]float64, n)
	for i := range n {
		p95[i] = make([]float64, chartMinutes)
		for b, ds := range durs[i] {
			p95[i][b] = percentile(ds, 0.95)
		}
	}
	sum := func(vs []float64) string { return strconv.Itoa(int(sumOf(vs))) }
	worst := func(vs []float64) string { return formatMillis(slices.Max(vs)) }
	return []chart{
		draw("Calls per minute", "calls", names, count, start, sum, strconv.Itoa),
		draw("Errors per minute", "errors", names, errs, start, sum, strconv.Itoa),
		draw("95th percentile of durations", "ms", names, p95, start, worst, func(v int) string { return formatMillis(float64(v)) }),
	}
}

// draw lays out one chart of values[series][minute].
func draw(title, unit string, names []string, values [][]float64, start time.Time, total func([]float64) string, label func(int) string) chart {
	c := chart{Title: title, Unit: unit, W: chartW, H: chartH, Left: padLeft, Right: chartW - padRight, Bottom: chartH - 6, Empty: len(names) == 0}
	top := 0.0
	for _, vs := range values {
		top = max(top, slices.Max(vs))
	}
	yMax := niceCeil(top)
	plotW, plotH := float64(chartW-padLeft-padRight), float64(chartH-padTop-padBottom)
	y := func(v float64) float64 { return float64(padTop) + plotH*(1-v/yMax) }
	for _, f := range []float64{0, 0.5, 1} {
		if f == 0.5 && yMax < 2 {
			continue // no whole number halfway
		}
		c.Grid = append(c.Grid, gridLine{Y: int(math.Round(y(yMax * f))), Label: label(int(yMax * f))})
	}
	c.YMax = label(int(yMax))
	for _, m := range []int{0, 15, 30, 45, 59} {
		anchor := "middle"
		if m == chartMinutes-1 {
			anchor = "end" // within the picture
		}
		c.XLabels = append(c.XLabels, xLabel{X: padLeft + int(math.Round(plotW*float64(m)/(chartMinutes-1))),
			Label: start.Add(time.Duration(m) * time.Minute).Local().Format("15:04"), Anchor: anchor})
	}
	for i, name := range names {
		var b strings.Builder
		for m, v := range values[i] {
			fmt.Fprintf(&b, "%.1f,%.1f ", float64(padLeft)+plotW*float64(m)/(chartMinutes-1), y(v))
		}
		c.Series = append(c.Series, series{Name: name, Class: fmt.Sprintf("s%d", i), Points: strings.TrimSpace(b.String()), Total: total(values[i])})
	}
	return c
}

// niceCeil returns a round number at least v (1, 2 or 5 times a power of
// ten), at least 1.
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func sumOf(vs []float64) float64 {
	s := 0.0
	for _, v := range vs {
		s += v
	}
	return s
}

// percentile returns the q-th quantile of ds (nearest rank), 0 for none.
// ds is sorted in place.
func percentile(ds []float64, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	return ds[max(i, 0)]
}

// formatMillis says a duration in milliseconds for a person.
func formatMillis(ms float64) string {
	switch {
	case ms >= 10000:
		return fmt.Sprintf("%.0fs", ms/1000)
	case ms >= 1000:
		return fmt.Sprintf("%.1fs", ms/1000)
	case ms >= 10:
		return fmt.Sprintf("%.0fms", ms)
	}
	return fmt.Sprintf("%.1fms", ms)
}
