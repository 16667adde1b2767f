package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tairseach/tairseach-mcp/protocol/safetext"
	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// statsOptions are the flags of stats.
type statsOptions struct {
	since, until string
	tool         string
	by           string // client or principal: what the second table groups by
	asJSON       bool
	now          func() time.Time
}

func newStatsCmd(e *env, opts *options) *cobra.Command {
	so := statsOptions{now: time.Now}
	cmd := &cobra.Command{
		Use:   "stats [PATH]",
		Short: "Summarise the audit log: calls, errors and durations per tool and per client",
		Long: `stats reads the audit log (PATH, else the one --audit-log names, else
~/.tairseach/audit.log) with its rotated files, and shows for each tool its calls, its
errors by kind, the median, 95th percentile and longest duration, the bytes in and out
and its last use; then the same per client (what each calls itself; --by principal:
per named client, token or process, whom each call was for), and the confirmations
asked and refused.
Lines that are not entries (the end of a line being written, one left by a killed
bridge) are counted and skipped. See docs/audit.md.`,
		Example: `  tairseach-mcp stats
  tairseach-mcp stats --since 24h --tool 'tairseach_mail_*'
  tairseach-mcp stats --since 2025-06-01 --until 2025-06-08 --json`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			logPath := opts.audit.path
			if len(args) == 1 {
				logPath = args[0]
			} else if logPath == "" {
				home, _ := os.UserHomeDir()
				logPath = defaultAuditLog(home)
			}
			return runStats(cmd.Context(), e.stdout, logPath, so)
		},
	}
	opts.register(cmd.Flags(), 0, "audit-log")
	cmd.Flags().Lookup("audit-log").Usage = "the audit log to read when no PATH is given (default ~/.tairseach/audit.log) (env TAIRSEACH_AUDIT_LOG)"
	cmd.Flags().StringVar(&so.since, "since", "", "only calls at or after this time: a duration ago (24h, 7d) or a date and time (2025-06-01, 2025-06-01T15:04)")
	cmd.Flags().StringVar(&so.until, "until", "", "only calls before this time, written as for --since")
	cmd.Flags().StringVar(&so.tool, "tool", "", "only the tools whose client or manifest name matches this glob")
	cmd.Flags().StringVar(&so.by, "by", "client", "group the second table by client (what each client calls itself) or by principal (the named client, token or process each call was for)")
	cmd.Flags().BoolVar(&so.asJSON, "json", false, "print the summary as JSON")
	return cmd
}

func runStats(ctx context.Context, w io.Writer, logPath string, so statsOptions) error {
	f := audit.Filter{Tool: so.tool}
	if so.by != "" && so.by != "client" && so.by != "principal" {
		return usageError{fmt.Errorf("--by is client or principal, not %q", so.by)}
	}
	if _, err := path.Match(so.tool, ""); err != nil {
		return usageError{fmt.Errorf("--tool %q: %w", so.tool, err)}
	}
	now := so.now()
	var err error
	if f.Since, err = parseWhen(so.since, now); err != nil {
		return usageError{fmt.Errorf("--since: %w", err)}
	}
	if f.Until, err = parseWhen(so.until, now); err != nil {
		return usageError{fmt.Errorf("--until: %w", err)}
	}
	s, err := audit.Summarize(ctx, logPath, f)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w; calls are recorded with --audit-log (see docs/audit.md)", err)
	}
	if err != nil {
		return err
	}
	if so.asJSON {
		return writeJSON(w, s)
	}
	printStats(w, s, so.by, now.Location(), isTerminal(w))
	return nil
}

// parseWhen reads a time as --since and --until take it: a duration
// before now (90m, 24h, 7d), an RFC 3339 time, or a local date with an
// optional time of day.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration ago (24h, 7d) nor a time (2025-06-01, 2025-06-01T15:04, or RFC 3339)", s)
}

// printStats writes the summary as tables, the second by client or by
// principal, times in loc, with bars when w is a terminal.
func printStats(w io.Writer, s *audit.Summary, by string, loc *time.Location, bars bool) {
	rotated := ""
	if n := len(s.Files) - 1; n > 0 {
		rotated = fmt.Sprintf(" (and %s)", plural(n, "rotated file"))
	}
	fmt.Fprintf(w, "%s%s\n", safetext.Line(s.Files[len(s.Files)-1]), rotated)
	if s.Calls == 0 {
		fmt.Fprintln(w, "No calls recorded.")
	} else {
		fmt.Fprintf(w, "%s, %s, from %s to %s\n\n", plural(s.Calls, "call"), errorShare(s.Errors, s.Calls), localTime(s.First, loc), localTime(s.Last, loc))
		printRows(w, "TOOL", s.Tools, loc, bars)
		fmt.Fprintln(w)
		if by == "principal" {
			printRows(w, "PRINCIPAL", s.Principals, loc, bars)
		} else {
			printRows(w, "CLIENT", s.Clients, loc, bars)
		}
	}
	if c := s.Confirmations; c.Asked > 0 {
		var answers []string
		for _, a := range slices.Sorted(maps.Keys(c.Answers)) {
			answers = append(answers, fmt.Sprintf("%d %s", c.Answers[a], safetext.Line(a)))
		}
		fmt.Fprintf(w, "\nConfirmations asked: %d (%s)\n", c.Asked, strings.Join(answers, ", "))
	}
	if c := s.Confirmations; len(c.Refusals) > 0 {
		n, why := 0, []string(nil)
		for _, r := range slices.Sorted(maps.Keys(c.Refusals)) {
			n += c.Refusals[r]
			why = append(why, fmt.Sprintf("%d %s", c.Refusals[r], safetext.Line(r)))
		}
		fmt.Fprintf(w, "Answers to confirmations refused unread: %d (%s)\n", n, strings.Join(why, ", "))
	}
	if t := s.Tasks; t.Created > 0 || len(t.Ended) > 0 {
		var ended []string
		for _, how := range slices.Sorted(maps.Keys(t.Ended)) {
			ended = append(ended, fmt.Sprintf("%d %s", t.Ended[how], safetext.Line(how)))
		}
		line := fmt.Sprintf("\nTasks created: %d", t.Created)
		if len(ended) > 0 {
			line += fmt.Sprintf("; ended: %s", strings.Join(ended, ", "))
		}
		fmt.Fprintln(w, line)
	}
	var notes []string
	if s.Dropped > 0 {
		notes = append(notes, fmt.Sprintf("%d entries were lost by bridges that could not write them (not counted above)", s.Dropped))
	}
	if s.Truncated > 0 {
		notes = append(notes, plural(s.Truncated, "truncated line")+" skipped")
	}
	if s.Foreign > 0 {
		notes = append(notes, plural(s.Foreign, "line")+" that are not entries skipped")
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\nNote: %s.\n", strings.Join(notes, "; "))
	}
}

func errorShare(errs, calls int) string {
	if errs == 0 {
		return "no errors"
	}
	return fmt.Sprintf("%s (%.1f%%)", plural(errs, "error"), 100*float64(errs)/float64(calls))
}

// printRows writes one table row per tool or client: the errors count,
// then at the end of the line their kinds, and the confirmations refused.
func printRows(w io.Writer, title string, rows []audit.Row, loc *time.Location, bars bool) {
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	cols := []string{title, "CALLS", "ERRORS", "P50", "P95", "MAX", "IN", "OUT", "LAST USE", "ERRORS BY KIND"}
	if bars {
		cols = slices.Insert(cols, 2, "")
	}
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	for _, r := range rows {
		name := r.Name
		if len(r.Versions) > 0 {
			name += " " + strings.Join(r.Versions, ", ")
		}
		errs := 0
		for _, e := range r.Errors {
			errs += e.Count
		}
		cells := []string{safetext.Line(name), strconv.Itoa(r.Calls), strconv.Itoa(errs), duration(r.P50), duration(r.P95), duration(r.Max),
			byteSize(r.BytesIn), byteSize(r.BytesOut), localTime(r.LastUse, loc), errorKinds(r)}
		if bars {
			cells = slices.Insert(cells, 2, drawBar(r.Calls, rows[0].Calls, 12))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	for line := range strings.Lines(table.String()) {
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}
}

// errorKinds names a row's errors by kind, the most frequent first, and
// the confirmations refused.
func errorKinds(r audit.Row) string {
	var kinds []string
	for _, e := range r.Errors {
		k := fmt.Sprintf("%d %s", e.Count, safetext.Line(e.Outcome))
		if e.Code != nil {
			k += fmt.Sprintf(" (%d)", *e.Code)
		}
		kinds = append(kinds, k)
	}
	if r.Asked > 0 {
		kinds = append(kinds, fmt.Sprintf("%d of %d confirmations refused", r.Refused, r.Asked))
	}
	return strings.Join(kinds, ", ")
}

// drawBar draws n of most as a bar of up to width cells, in eighths; at
// least one for any n.
func drawBar(n, most, width int) string {
	eighths := max((2*n*width*8+most)/(2*most), 1)
	return strings.Repeat("█", eighths/8) + []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}[eighths%8]
}

// duration shows milliseconds the way a person reads them.
func duration(ms float64) string {
	switch {
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + "ms"
	case ms < 60_000:
		return strconv.FormatFloat(ms/1000, 'f', 1, 64) + "s"
	}
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}

// localTime shows an entry's time in loc, to the minute.
func localTime(ts string, loc *time.Location) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return safetext.Line(ts)
	}
	return t.In(loc).Format("2006-01-02 15:04")
}
